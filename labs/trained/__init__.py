"""The labs of notebook 05, inside the course's small trained model (``lib.model``), one per module:

- ``ablation``: leave out any of the four blocks or the positions and watch the perplexity;
- ``heads``: where each head looks while the model copies or reverses letters, and one head left out;
- ``mismatch``: run the same weights with a detail changed and see which mistakes are quiet;
- ``stream``: one token's residual stream, block by block.

``held_out`` holds what they share (the cached runs on the held-out text), ``precomputed`` the
results of those runs computed when the course is built (looked up rather than run in the
browser), ``settings`` the values the mismatch lab's sliders give, and ``kind_bars`` the chart of
perplexity per kind of prediction. The names the notebook imports are re-exported here,
so ``from labs.trained import ablation_lab`` works in notebooks old and new; so are the
published models (``labs.decoder.models``) and the capstone's parts and example
(``exercises.definitions.trained``), which the notebook uses in its own cells.
"""

from exercises.definitions.trained import example_block, your_parts

from ..decoder.models import REAL_MODELS
from .ablation import ablation_lab, ablation_model
from .heads import head_summary, heads_lab, pooled_perplexities
from .held_out import pooled_run, trace
from .mismatch import LOUD, QUIET, mismatch_lab, mismatch_model
from .stream import stream_lab

__all__ = ["LOUD", "QUIET", "REAL_MODELS", "ablation_lab", "ablation_model", "example_block", "head_summary",
           "heads_lab", "mismatch_lab", "mismatch_model", "pooled_perplexities", "pooled_run", "stream_lab", "trace",
           "your_parts"]
