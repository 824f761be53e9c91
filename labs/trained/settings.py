"""The settings notebook 05's mismatched-details lab offers: the range of its RoPE base and ε
sliders (powers of ten), and every value they give, rounded as the lab keeps them. The lab builds
its sliders from these, and ``held_out`` lists from them the settings whose results are computed
when the course is built (``precomputed``)."""

from __future__ import annotations

import math

import numpy as np

BASE_MIN, BASE_MAX = 100.0, 1e6
EPS_MIN, EPS_MAX = 1e-8, 1.0
BASE_POWERS = (2.0, 6.0, 0.25)         # the RoPE base slider: 10^2 .. 10^6, in steps of 10^0.25
EPS_POWERS = (-8, 0, 1)                # the ε slider: 10^-8 .. 1, in steps of 10^1


def round_log(value: float, lo: float, hi: float) -> float:
    """Clip to [lo, hi] and keep 6 significant digits (so the cache sees repeated values)."""
    value = float(value) if np.isfinite(value) else lo
    value = float(np.clip(value, lo, hi))
    return round(value, 5 - math.floor(math.log10(value)))


def _powers(low, high, step) -> list:
    return [low + i * step for i in range(round((high - low) / step) + 1)]


BASES = tuple(round_log(10.0 ** p, BASE_MIN, BASE_MAX) for p in _powers(*BASE_POWERS))
EPSILONS = tuple(round_log(10.0 ** p, EPS_MIN, EPS_MAX) for p in _powers(*EPS_POWERS))
