"""Timing helpers: medians and 95th percentiles in milliseconds."""

from __future__ import annotations

import time

import numpy as np


def summary(seconds) -> dict:
    """{"median_ms", "p95_ms", "n"} of a list of durations in seconds."""
    ms = np.asarray(list(seconds), dtype=float) * 1000.0
    if ms.size == 0:
        return {"median_ms": None, "p95_ms": None, "n": 0}
    return {"median_ms": round(float(np.median(ms)), 2),
            "p95_ms": round(float(np.percentile(ms, 95)), 2), "n": int(ms.size)}


def ratio(slow: dict, fast: dict):
    """slow median / fast median, or None."""
    if not slow.get("median_ms") or not fast.get("median_ms"):
        return None
    return round(slow["median_ms"] / fast["median_ms"], 2)


def timed(function, *args, **kwargs):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result
