"""The labs of notebook 01, positional encoding, one per module:

- ``shuffle``: reorder a sentence and compare attention's outputs, with and without positions;
- ``scaling``: the factor the words are multiplied by before the positions are added, and what
  attention's outputs then follow;
- ``table``: the sinusoidal position table and the clock of its fast and slow pairs;
- ``rotary``: a query and a key turned by RoPE; their score depends on the positions only through
  the distance between them.

The names the notebook imports are re-exported here, so ``from labs.positional import
shuffle_lab`` works in notebooks old and new.
"""

from .rotary import rope_model, rotary_lab
from .scaling import scaling_lab, scaling_model
from .shuffle import WORDS, X, shuffle_lab, shuffle_model
from .table import position_table_lab

__all__ = ["WORDS", "X", "position_table_lab", "rope_model", "rotary_lab", "scaling_lab", "scaling_model", "shuffle_lab",
           "shuffle_model"]
