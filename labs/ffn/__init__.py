"""The labs of notebook 02, the feed-forward network, one per module:

- ``hidden_units``: one token through the worked example, each hidden unit before and after the
  activation, and the same token run alone (position-wise);
- ``remove_activation``: without the activation the two matrices collapse into one;
- ``parameters``: where a block's parameters sit, plain or gated;
- ``router``: top-2 routing over 8 experts, 4,096 tokens and load balancing.

The names the notebook imports are re-exported here, so ``from labs.ffn import router_lab``
works in notebooks old and new; ``REAL_MODELS`` is the parameter calculator's published models
(``labs.decoder.models``), which the notebook counts.
"""

from ..decoder.models import REAL_MODELS
from .hidden_units import hidden_units_lab
from .parameters import parameters_lab
from .remove_activation import remove_activation_lab
from .router import router_lab, router_model, router_scores

__all__ = ["REAL_MODELS", "hidden_units_lab", "parameters_lab", "remove_activation_lab", "router_lab", "router_model",
           "router_scores"]
