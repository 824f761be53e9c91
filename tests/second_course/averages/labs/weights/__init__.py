"""The lab of notebook 01: ``weights`` (how far one weight pulls a weighted mean).

The names the notebook imports are re-exported here."""

from .weights import weights_lab, weights_model

__all__ = ["weights_lab", "weights_model"]
