"""Seeded random weights for the toy examples: one generator, an explicit seed, an explicit scale."""

import numpy as np

from ._checks import check_non_negative


def random_weights(shapes, *, seed, scale, decimals=None):
    """Draw one array per shape from a normal distribution, in order, from ``default_rng(seed)``.

    shapes:   a list of shapes, e.g. ``[(4, 4), (4, 16)]``; the draws happen in that order,
              so the same seed and the same list always give the same arrays.
    scale:    the standard deviation, one number for all arrays or one per shape.
    decimals: round every number to this many decimals (the course's hand-sized examples).
    Returns a list of float arrays, one per shape, of exactly those shapes.

    Example (the six-step block of notebook 04): ``random_weights([(4, 4)] * 5, seed=28,
    scale=[0.9, 0.6, 0.6, 0.6, 0.6], decimals=1)`` gives X, Wq, Wk, Wv, Wo.
    """
    shapes = [tuple(shape) for shape in shapes]
    scales = list(scale) if np.ndim(scale) == 1 else [scale] * len(shapes)
    if len(scales) != len(shapes):
        raise ValueError(f"scale should be one number or {len(shapes)} numbers (one per shape), "
                         f"got {len(scales)}")
    generator = np.random.default_rng(seed)
    arrays = []
    for shape, one_scale in zip(shapes, scales):
        drawn = generator.normal(0.0, check_non_negative(one_scale, "scale"), shape)
        arrays.append(drawn if decimals is None else np.round(drawn, decimals))
    return arrays
