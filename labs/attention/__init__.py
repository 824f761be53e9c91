"""The labs of notebook 01, attention, one per module:

- ``scale``: the spread of the scores q·k grows like √d, and what softmax makes of it, divided by √d or not;
- ``several_heads``: one head's weights sum to 1, so two places share them; two heads of half the
  width each have their own, at the same number of parameters;
- ``circuits``: one head of the trained model read as two circuits, QK (its attention map on a
  text) and OV (what it raises when it reads a token, through the tied embedding).

The names the notebook imports are re-exported here, so ``from labs.attention import scale_lab``
works in notebooks old and new.
"""

from .circuits import circuits_lab, raises_by_chance, raises_itself
from .scale import raw_scores, scale_lab, scale_model
from .several_heads import several_heads_lab, several_heads_model

__all__ = ["circuits_lab", "raises_by_chance", "raises_itself", "raw_scores", "scale_lab", "scale_model", "several_heads_lab",
           "several_heads_model"]
