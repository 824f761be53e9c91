"""The exercise of notebook 01, "Averages": a weighted mean."""

from __future__ import annotations

import numpy as np

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of

NOTEBOOK = "01_averages"


def _reference(x, w):
    return np.average(x, weights=w)


CONTRACT = Contract(
    args={"x": "the numbers, a 1-D array of n >= 1 numbers",
          "w": "their weights, a 1-D array of n numbers >= 0, not all 0"},
    returns="the weighted mean: the sum of each number times its weight, over the sum of the weights",
    ndims=(1,), dtypes=("float64", "float32"),
    edges={"one number": "a single number, whatever its weight",
           "zero weight": "numbers of weight 0, which count for nothing",
           "large weights": "weights in the millions"},
)


def _fixed() -> list[Case]:
    return [
        Case((np.array([2.0, 4.0, 9.0]), np.array([1.0, 1.0, 2.0])), "the example", visible=True),
        Case((np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4)), "equal weights"),
        Case((np.array([5.0]), np.array([3.0])), "a single number", covers=("one number",)),
        Case((np.array([1.0, 100.0, 3.0]), np.array([2.0, 0.0, 1.0])), "a number of weight 0",
             covers=("zero weight",)),
        Case((np.array([-2.0, 0.5, 7.0]), np.array([4.0e6, 1.0e6, 2.5e6])), "weights in the millions",
             covers=("large weights",)),
        in_float32(Case((np.array([0.25, -1.5, 3.0, 2.0]), np.array([0.5, 2.0, 1.0, 1.5])), "float32")),
    ]


def _case(rng) -> Case:
    n = int(rng.integers(1, 9))
    return Case((rng.normal(0.0, 5.0, n), rng.uniform(0.1, 4.0, n)), f"{n} random numbers and weights")


WEIGHTED_MEAN = Exercise(
    id="weighted-mean", notebook=NOTEBOOK, title="A weighted mean", name="weighted_mean",
    template='''def weighted_mean(x, w):
    """The mean of the numbers x, each counted w times as much."""
    return ____ / w.sum()
''',
    solution=["(x * w).sum()"],
    reference=_reference,
    contract=CONTRACT,
    fixed=_fixed,
    draw=three_of(_case),
    hints=[
        "Each number counts as many times as its weight: multiply the numbers by their weights "
        "before adding them up.",
        "`x * w` multiplies each number by its own weight; `.sum()` adds the products.",
    ],
    mistakes=[
        Mistake("weights left out", {0: "x.sum()"},
                "You added the numbers without their weights. Multiply each number by its weight "
                "first, then add."),
        Mistake("mean of the products", {0: "(x * w).mean()"},
                "You took the mean of the products, which divides by the count of numbers as well "
                "as by the total weight. Add the products up instead."),
    ],
)

DEFINITIONS = [WEIGHTED_MEAN]
