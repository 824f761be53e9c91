"""Exercises of notebook 00, "Start here".

Its questions are in :mod:`exercises.definitions.questions.start`."""

from __future__ import annotations

import numpy as np

from lib.attention import softmax as _softmax_reference

from engine.core.definition import Case, Contract, Exercise, Hint, Mistake, in_float32, three_of
from exercises.definitions.questions import start as questions

NOTEBOOK = "00_start_here"


def _random_shape(rng, min_last: int = 1) -> tuple[int, ...]:
    lead = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    return lead + (int(rng.integers(min_last, 8)),)


# ---------------------------------------------------------------- row mean

def _row_mean_reference(x):
    return np.mean(x, axis=-1, keepdims=True)


ROW_MEAN_CONTRACT = Contract(
    args={"x": "an array of numbers, shape (..., n): rows of n >= 1 numbers along the last axis, "
               "with one or more leading axes"},
    returns="the mean of each row, shape (..., 1)",
    ndims=(2, 3, 4), dtypes=("float64", "float32"),
    edges={"one number": "rows of a single number (n = 1)",
           "one row": "a single row",
           "large": "numbers in the millions, whose total is far larger than any one of them",
           "batch": "a batch: a leading axis before the rows"},
)


def _row_mean_fixed() -> list[Case]:
    batch = np.arange(30.0).reshape(2, 3, 5) ** 1.3 - 7.0
    return [
        Case((np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]]),), "the example", visible=True),
        Case((np.full((1, 4), 5.0),), "a constant row", covers=("one row",)),
        Case((np.array([[2.5, -1.0, 0.5, 7.0, 3.0, -4.0, 1.0]]),), "one row of odd length",
             covers=("one row",)),
        Case((np.arange(9.0).reshape(3, 3) ** 1.5,), "a square array"),
        Case((np.array([[3.0], [-2.0], [0.5]]),), "rows of a single number", covers=("one number",)),
        Case((batch,), "a batch of 2 arrays of 3 rows", covers=("batch",)),
        Case((np.sin(np.arange(48.0)).reshape(2, 2, 3, 4) * 3.0,), "a batch of batches",
             covers=("batch",)),
        Case((np.array([[2.0e6, 4.0e6 + 1.0, 3.5e6], [-1.0e6, 1.0e6, 5.0]]),), "numbers in the millions",
             covers=("large",)),
        in_float32(Case((np.cos(np.arange(15.0)).reshape(5, 3) * 4.0,), "float32 numbers")),
    ]


def _row_mean_case(rng) -> Case:
    shape = _random_shape(rng)
    return Case((rng.normal(0.0, 3.0, shape),), f"random numbers, shape {shape}")


ROW_MEAN = Exercise(
    id="row-mean", notebook=NOTEBOOK, title="The average of each row", name="row_mean",
    template='''def row_mean(x):
    """The average of each row of x (its last axis), kept as a column."""
    return ____ / x.shape[-1]
''',
    solution=["x.sum(axis=-1, keepdims=True)"],
    reference=_row_mean_reference,
    contract=ROW_MEAN_CONTRACT,
    fixed=_row_mean_fixed,
    draw=three_of(_row_mean_case),
    hints=[   # all about the result's shape: not offered by a check that saw the shape right
        Hint("A row's numbers lie along the last axis of `x`. Reductions such as `x.sum(...)` "
             "take an `axis` argument that says which axis to add along.", about="shape"),
        Hint("Count axes from the end with negative numbers: `axis=-1` is the last axis of a (2, 3) array "
             "and of a (4, 2, 3) batch alike.", about="shape"),
        Hint("Adding along an axis removes it: a (2, 3) array summed along its last axis has shape (2,). "
             "`keepdims=True` keeps the summed axis with length 1, so the totals come out as a column of "
             "shape (2, 1).", about="shape"),
    ],
    mistakes=[
        Mistake("whole array", {0: "x.sum()"},
                "You added up every number in the array at once. Tell `sum` which axis "
                "to add along, so that each row gets its own total."),
        Mistake("wrong axis", {0: "x.sum(axis=0, keepdims=True)"},
                "You added down the columns (axis 0). A row's numbers lie along the last axis."),
        Mistake("missing keepdims", {0: "x.sum(axis=-1)"},
                "The totals lost their axis, so you got one flat list instead of a column. "
                "`keepdims=True` keeps the summed axis with length 1."),
        Mistake("axis 1", {0: "x.sum(axis=1, keepdims=True)"},
                "`axis=1` is the last axis only for a 2-D array; for a batch of shape "
                "(2, 3, 4) it is the middle one. Use `axis=-1`, which always means the last."),
        Mistake("largest", {0: "x.max(axis=-1, keepdims=True)"},
                "You took each row's largest number. The average adds up all the numbers of "
                "the row (and the code then divides by how many there are)."),
    ],
)


# ---------------------------------------------------------------- stable softmax

SOFTMAX_CONTRACT = Contract(
    args={"scores": "an array of finite numbers, shape (..., n): rows of n >= 1 scores along the "
                    "last axis, of any size"},
    returns="the softmax of each row, same shape: positive weights that sum to 1 along the last axis",
    ndims=(2, 3), dtypes=("float64", "float32"),
    edges={"beyond exp": "rows spanning far more than exp can hold (rows [0, 1000] and [1500, \u22121500])",
           "huge": "rows of very large or very negative scores only",
           "constant": "constant rows",
           "one score": "rows of a single score",
           "one token": "a single row",
           "batch": "a batch: a leading axis before the rows"},
)


def _softmax_fixed() -> list[Case]:
    return [
        Case((np.array([[2.0, 1.0, 0.1], [1.0, 3.0, 0.0]]),), "the example", visible=True),
        Case((np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -999.0]]),),
             "very large and very small scores", covers=("huge",)),
        Case((np.array([[0.0, 1000.0], [1500.0, -1500.0], [-800.0, 900.0]]),),
             "rows spanning far more than exp can hold", covers=("beyond exp",)),
        Case((np.array([[3.0, 2000.0, -40.0, 5.0], [-3000.0, 0.5, 1.5, 0.0]]),),
             "one score far above or below the others", covers=("beyond exp",)),
        Case((np.full((2, 5), 0.7),), "constant rows", covers=("constant",)),
        Case((np.array([[0.3, -1.2, 2.2, 0.0, 1.1]]),), "one token", covers=("one token",)),
        Case((np.array([[4.2], [-3.0], [0.0]]),), "rows of a single score", covers=("one score",)),
        Case((np.linspace(-3.0, 3.0, 21).reshape(3, 7),), "odd length"),
        Case((np.arange(16.0).reshape(4, 4) % 5 - 2.0,), "a square array"),
        Case((np.sin(np.arange(30.0)).reshape(2, 3, 5) * 4.0,), "a batch of 2 x 3 rows",
             covers=("batch",)),
        in_float32(Case((np.array([[0.5, -2.0, 3.0, 1.0], [800.0, 790.0, 805.0, -20.0]]),),
                        "float32 scores, some of them large")),
    ]


def _softmax_case(rng) -> Case:
    shape = _random_shape(rng)
    return Case((rng.normal(0.0, 4.0, shape),), f"random scores, shape {shape}")


_KEEPDIMS_HINT = ("A row's maximum or total has one number per row. Without "
                  "`keepdims=True` it loses its axis and no longer lines up with the rows, "
                  "so NumPy cannot combine it with the scores (or combines it the wrong way).")
_SHIFT_HINT = ("Subtracting the same number from a whole row leaves the weights unchanged, but only the row's "
               "largest score keeps every exponent at or below exp(0) = 1.")
_OVERFLOWS = ("which overflows to infinity (in float64, exp overflows above about 709), and inf / inf is NaN.")

STABLE_SOFTMAX = Exercise(
    id="stable-softmax", notebook=NOTEBOOK, title="A softmax that does not overflow", name="softmax",
    template='''def softmax(scores):
    """Weights from scores: positive, summing to 1 along the last axis."""
    shifted = scores - ____    # each row's largest score, as a column
    e = np.exp(shifted)
    return e / ____            # each row's total, as a column
''',
    solution=["scores.max(axis=-1, keepdims=True)", "e.sum(axis=-1, keepdims=True)"],
    reference=_softmax_reference,
    contract=SOFTMAX_CONTRACT,
    fixed=_softmax_fixed,
    draw=three_of(_softmax_case),
    hints=[
        "Softmax gives the same weights if you subtract the same number from every score of a row. Subtracting "
        "the row's largest score makes the biggest exponent exp(0) = 1, so nothing overflows.",
        "Both blanks are a reduction over the last axis, one number per row: the first "
        "takes the largest score, the second adds up the exponentials.",
        Hint("Each of those per-row numbers must stay a column (shape (rows, 1)) to line up "
             "with the rows when you subtract or divide; `row_mean` above did the same.", about="shape"),
    ],
    mistakes=[
        Mistake("no shift", {0: "0"},
                "Without subtracting, `np.exp(1000)` overflows to infinity and inf / inf "
                "is NaN. Subtract each row's largest score first."),
        Mistake("smallest score", {0: "scores.min(axis=-1, keepdims=True)"},
                _SHIFT_HINT + " You subtracted the smallest: a row such as [0, 1000] then keeps exp(1000), " + _OVERFLOWS),
        Mistake("mean score", {0: "scores.mean(axis=-1, keepdims=True)"},
                _SHIFT_HINT + " You subtracted the mean: a row such as [1500, \u22121500] has mean 0 and keeps "
                "exp(1500), " + _OVERFLOWS),
        Mistake("first score", {0: "scores[..., :1]"},
                _SHIFT_HINT + " You subtracted the first score of the row: a row such as [0, 1000] then keeps "
                "exp(1000), " + _OVERFLOWS),
        Mistake("global max", {0: "scores.max()"},
                "`scores.max()` is the largest score of the whole array. A row far below it becomes exp(-2000) "
                "= 0 everywhere, and 0 / 0 is NaN. Subtract each row's own largest score."),
        Mistake("column max", {0: "scores.max(axis=0, keepdims=True)"},
                "You subtracted the largest score of each column (axis 0). The number "
                "subtracted must be the same for every score of a row: the row's own largest."),
        Mistake("clipped", '''def softmax(scores):
    e = np.exp(np.clip(scores, -500, 500))
    return e / e.sum(axis=-1, keepdims=True)
''',
                "Clipping the scores changes them: every score above the limit becomes the "
                "same, so their weights come out equal. Subtract each row's largest score "
                "instead; that keeps every exponent at most 1 and changes no weight."),
        Mistake("whole sum", {1: "e.sum()"},
                "You divided by the total of the whole array, so a row's weights do not "
                "add up to 1. Divide each row by its own total."),
        Mistake("wrong axis", {1: "e.sum(axis=0, keepdims=True)"},
                "You added down the columns (axis 0), so each column sums to 1 instead of "
                "each row. A row's scores lie along the last axis."),
        Mistake("total of the shifted scores", {1: "shifted.sum(axis=-1, keepdims=True)"},
                "You divided by the total of the shifted scores, not of their exponentials: the "
                "shifted scores are at most 0, so that total is negative and so are your weights. "
                "Divide `e` by the total of `e`."),
        Mistake("total of the unshifted exponentials", {1: "np.exp(scores).sum(axis=-1, keepdims=True)"},
                "You divided the shifted exponentials `e` by the total of the unshifted ones, "
                "`np.exp(scores)`: every row comes out divided by e to the power of its largest score "
                "as well, and a large score still overflows. Divide `e` by the total of `e`."),
        Mistake("missing keepdims (total)", {1: "e.sum(axis=-1)"}, _KEEPDIMS_HINT),
        Mistake("missing keepdims (max)", {0: "scores.max(axis=-1)"}, _KEEPDIMS_HINT),
        Mistake("missing keepdims (both)", {0: "scores.max(axis=-1)", 1: "e.sum(axis=-1)"},
                "Both per-row numbers lost their axis: without `keepdims=True` the largest score "
                "and the total have shape (rows,) instead of (rows, 1), so NumPy cannot line them "
                "up with the rows of the scores (or lines them up with the columns)."),
        Mistake("wrong axis (both)", {0: "scores.max(axis=0, keepdims=True)", 1: "e.sum(axis=0, keepdims=True)"},
                "Both reductions run down the columns (axis 0), so each column's weights sum to 1 "
                "instead of each row's. A row's scores lie along the last axis, `axis=-1`, which "
                "stays right for a batch too."),
    ],
)

DEFINITIONS = [ROW_MEAN, STABLE_SOFTMAX, *questions.QUESTIONS]
