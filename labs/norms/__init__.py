"""The labs of notebook 03, normalisation and residual connections, one per module:

- ``stack``: a vector of 8 numbers through N random layers, in six ways of wrapping a layer;
- ``which_axis``: normalise each token (right) or each column of a batch (wrong);
- ``placement``: pre-norm vs post-norm through a deep stack of random blocks;
- ``residual_stream``: the residual stream of 12 pre-norm blocks, block by block;
- ``training_curves``: the loss curves of small decoders trained with each placement.

The names the notebook imports are re-exported here, so ``from labs.norms import stack_lab``
works in notebooks old and new.
"""

from .placement import many_stacks, placement_lab, placement_model
from .residual_stream import stream_lab
from .stack import stack_lab, stack_model
from .training_curves import curves_lab
from .which_axis import BATCH, axis_lab, axis_model, normalise

__all__ = ["BATCH", "axis_lab", "axis_model", "curves_lab", "many_stacks", "normalise", "placement_lab",
           "placement_model", "stack_lab", "stack_model", "stream_lab"]
