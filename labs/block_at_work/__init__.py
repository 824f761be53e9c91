"""The labs of notebook 06, the trained model at work, one per module:

- ``generation``: the model continues a prompt, greedily or by drawing, each token's probability;
- ``training_scrub``: the model at any checkpoint of its training, and its two named heads;
- ``logit_lens``: each block's stream read through the output layer;
- ``live_training``: a tiny model trained in the page, a few steps per frame.

The names the notebook imports are re-exported here, so ``from labs.block_at_work import
generation_lab`` works in notebooks old and new.
"""

from .generation import generation_lab
from .live_training import WINDOW, live_training_lab, live_training_model
from .logit_lens import TEXTS as LENS_TEXTS, lens_lab, lens_model
from .training_scrub import COPY_FROM, INDUCTION_FROM, PREVIOUS_FROM, named_heads, scrub_lab

__all__ = ["COPY_FROM", "INDUCTION_FROM", "LENS_TEXTS", "PREVIOUS_FROM", "WINDOW", "generation_lab", "lens_lab",
           "lens_model", "live_training_lab", "live_training_model", "named_heads", "scrub_lab"]
