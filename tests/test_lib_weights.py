"""lib.weights: one seeded helper gives the same draws in the same order."""

import numpy as np
import pytest

from lib.weights import random_weights


def test_draws_follow_one_generator_in_order():
    a, b = random_weights([(2, 3), (3,)], seed=28, scale=[0.9, 0.6])
    rng = np.random.default_rng(28)
    assert np.array_equal(a, rng.normal(0, 0.9, (2, 3))) and np.array_equal(b, rng.normal(0, 0.6, (3,)))
    rounded, = random_weights([(4, 4)], seed=28, scale=0.9, decimals=1)
    assert np.array_equal(rounded, np.round(np.random.default_rng(28).normal(0, 0.9, (4, 4)), 1))


@pytest.mark.parametrize("scale, expected", [([0.1, 0.2, 0.3], "scale should be one number or 2 numbers"),
                                             (-1.0, "scale should be a number of at least 0")])
def test_bad_scale_is_rejected(scale, expected):
    with pytest.raises(ValueError, match=expected):
        random_weights([(2, 2), (2, 2)], seed=0, scale=scale)


def test_shapes_may_come_from_any_iterable():
    listed = random_weights([(2, 3), (3,)], seed=5, scale=0.5)
    iterated = random_weights(iter([(2, 3), (3,)]), seed=5, scale=0.5)
    assert all(np.array_equal(a, b) for a, b in zip(listed, iterated)) and len(iterated) == 2
