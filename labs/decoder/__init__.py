"""The labs of notebook 04, the decoder block and the stack, one per module:

- ``six_steps``: 4 tokens of 4 numbers through one pre-norm block, one step at a time;
- ``layer_flow``: a sentence through a stack of random blocks with any part removed, and the
  shape of every tensor in a block;
- ``calculator``: a model's parameters by part, its memory (the weights, the KV cache, training
  with AdamW), and real models' published sizes; ``models`` holds the models it offers (the
  course's example, published models, the trained one);
- ``near_identity``: blocks whose weights start small pass their input almost unchanged, at the
  flow lab's width and in another small setup whose weights come from C's ``rand()`` (models
  whose numbers the notebook prints, without a view).

The names the notebook imports are re-exported here, so ``from labs.decoder import flow_lab``
works in notebooks old and new. ``REAL_MODELS`` are the calculator's published models
(``models``); ``size_of`` is ``engine.presentation.numbers.size`` (kept for notebooks saved from
earlier releases, which import it from here).
"""

from engine.presentation.numbers import size as size_of

from .calculator import calculator_lab
from .layer_flow import FLOW_D, FLOW_FF, FLOW_HEADS, flow_inputs, flow_lab, flow_model
from .models import REAL_MODELS
from .near_identity import near_identity_model, rand_demonstration, start_of_training
from .six_steps import six_steps_lab

__all__ = ["FLOW_D", "FLOW_FF", "FLOW_HEADS", "REAL_MODELS", "calculator_lab", "flow_inputs", "flow_lab", "flow_model",
           "near_identity_model", "rand_demonstration", "six_steps_lab", "size_of", "start_of_training"]
