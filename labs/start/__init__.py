"""The lab of the start page (notebook 00): ``temperature`` (softmax temperature).

The names the notebook imports are re-exported here, so ``from labs.start import
temperature_lab`` works in notebooks old and new.
"""

from .temperature import WORDS, temperature_lab, temperature_model

__all__ = ["WORDS", "temperature_lab", "temperature_model"]
