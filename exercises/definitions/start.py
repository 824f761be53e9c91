"""Exercises and questions of notebook 00, "Start here"."""

from __future__ import annotations

import numpy as np

from lib.attention import softmax as _softmax_reference

from exercises.core.definition import Case, Exercise, Mistake, Question, Variant

NOTEBOOK = "00_start_here"


def _random_shape(rng, min_last: int = 1) -> tuple[int, ...]:
    lead = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    return lead + (int(rng.integers(min_last, 8)),)


# ---------------------------------------------------------------- row mean

def _row_mean_reference(x):
    return np.mean(x, axis=-1, keepdims=True)


def _row_mean_cases(rng) -> list[Case]:
    cases = [
        Case((np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]]),), "the example", visible=True),
        Case((np.full((1, 4), 5.0),), "a constant row"),
        Case((np.array([[2.5, -1.0, 0.5, 7.0, 3.0, -4.0, 1.0]]),), "one row of odd length"),
        Case((np.arange(9.0).reshape(3, 3) ** 1.5,), "a square array"),
        Case((np.arange(24.0).reshape(2, 3, 4) - 7.0,), "a batch of 2 arrays of 3 rows"),
        Case((np.array([[3.0], [-2.0]]),), "rows of a single number"),
    ]
    for _ in range(3):
        shape = _random_shape(rng)
        cases.append(Case((rng.normal(0.0, 3.0, shape),), f"random numbers, shape {shape}"))
    return cases


ROW_MEAN = Exercise(
    id="row-mean",
    notebook=NOTEBOOK,
    title="The average of each row",
    name="row_mean",
    template='''def row_mean(x):
    """The average of each row of x (its last axis), kept as a column."""
    return ____ / x.shape[-1]
''',
    solution=["x.sum(axis=-1, keepdims=True)"],
    reference=_row_mean_reference,
    cases=_row_mean_cases,
    hints=[
        "A row's numbers lie along the last axis of `x`. Reductions such as `x.sum(...)` "
        "take an `axis` argument that says which axis to add along.",
        "Adding along an axis removes it: a (2, 3) array summed per row has shape (2,). "
        "The answer should keep it as a column of shape (2, 1); one more argument of "
        "`sum` does that.",
        "Count axes from the end with negative numbers, so the same code works for a "
        "(2, 3) array and for a (4, 2, 3) batch.",
    ],
    mistakes=[
        Mistake("whole array",
                "You added up every number in the array at once. Tell `sum` which axis "
                "to add along, so that each row gets its own total.",
                impl=lambda x: x.sum() / x.shape[-1]),
        Mistake("wrong axis",
                "You added down the columns (axis 0). A row's numbers lie along the "
                "last axis.",
                impl=lambda x: x.sum(axis=0, keepdims=True) / x.shape[-1]),
        Mistake("missing keepdims",
                "The totals lost their axis, so you got one flat list instead of a column. "
                "`keepdims=True` keeps the summed axis with length 1.",
                impl=lambda x: x.sum(axis=-1) / x.shape[-1]),
        Mistake("axis 1",
                "`axis=1` is the last axis only for a 2-D array; for a batch of shape "
                "(2, 3, 4) it is the middle one. Use `axis=-1`, which always means the last.",
                impl=lambda x: x.sum(axis=1, keepdims=True) / x.shape[-1]),
    ],
    wrong=[
        Variant({0: "x.sum()"}, ["shape", "every number"], "shape"),
        Variant({0: "x.sum(axis=0, keepdims=True)"}, ["expected shape (2, 1)", "columns"], "shape"),
        Variant({0: "x.sum(axis=-1)"}, ["got shape (2,)", "keepdims"], "shape"),
        Variant({0: "x.sum(axis=1, keepdims=True)"}, ["hidden test", "axis=-1"], "shape"),
        Variant({0: "x.max(axis=-1, keepdims=True)"}, ["row 0", "expected"], "values"),
        Variant({0: "x.totl(axis=-1, keepdims=True)"}, ["AttributeError", "line 3"], "error"),
        Variant(source="def row_mean(x):\n    total = x.sum(axis=-1, keepdims=True)\n", expect=["None", "return"], kind="none"),
        Variant(source="def row_mean(x):\n    return 'the mean'\n", expect=["str", "array"], kind="type"),
        Variant(source="row_mean = 2.0\n", expect=["should be a function"], kind="type"),
    ],
    alternatives=[
        Variant({0: "np.sum(x, axis=-1, keepdims=True)"}),
        Variant({0: "x.sum(-1)[..., None]"}),
        Variant({0: "x.mean(axis=-1, keepdims=True) * x.shape[-1]"}),
        Variant({0: "np.add.reduce(x, axis=x.ndim - 1, keepdims=True)"}),
    ],
    skills="average over the right axis and keep it with keepdims",
)


# ---------------------------------------------------------------- stable softmax

def _softmax_cases(rng) -> list[Case]:
    cases = [
        Case((np.array([[2.0, 1.0, 0.1], [1.0, 3.0, 0.0]]),), "the example", visible=True),
        Case((np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -999.0]]),),
             "very large and very small scores"),
        Case((np.full((2, 5), 0.7),), "constant rows"),
        Case((np.array([[0.3, -1.2, 2.2, 0.0, 1.1]]),), "one token"),
        Case((np.array([[4.2]]),), "a single score"),
        Case((np.linspace(-3.0, 3.0, 21).reshape(3, 7),), "odd length"),
        Case((np.arange(16.0).reshape(4, 4) % 5 - 2.0,), "a square array"),
        Case((np.sin(np.arange(30.0)).reshape(2, 3, 5) * 4.0,), "a batch of 2 x 3 rows"),
    ]
    for _ in range(3):
        shape = _random_shape(rng)
        cases.append(Case((rng.normal(0.0, 4.0, shape),), f"random scores, shape {shape}"))
    return cases


def _softmax_no_shift(s):
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_global_max(s):
    e = np.exp(s - s.max())
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_whole_sum(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum()


def _softmax_axis0(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


_KEEPDIMS_HINT = ("A row's maximum or total has one number per row. Without "
                  "`keepdims=True` it loses its axis and no longer lines up with the rows, "
                  "so NumPy cannot combine it with the scores (or combines it the wrong way).")

STABLE_SOFTMAX = Exercise(
    id="stable-softmax",
    notebook=NOTEBOOK,
    title="A softmax that does not overflow",
    name="softmax",
    template='''def softmax(scores):
    """Weights from scores: positive, summing to 1 along the last axis."""
    shifted = scores - ____    # each row's largest score, as a column
    e = np.exp(shifted)
    return e / ____            # each row's total, as a column
''',
    solution=["scores.max(axis=-1, keepdims=True)", "e.sum(axis=-1, keepdims=True)"],
    reference=_softmax_reference,
    cases=_softmax_cases,
    hints=[
        "Softmax gives the same weights if you subtract the same number from every score "
        "of a row. Subtracting the row's largest score makes the biggest exponent exp(0) = 1, "
        "so nothing overflows.",
        "Both blanks are a reduction over the last axis, one number per row: the first "
        "takes the largest score, the second adds up the exponentials.",
        "Each of those per-row numbers must stay a column (shape (rows, 1)) to line up "
        "with the rows when you subtract or divide; `row_mean` above did the same.",
    ],
    mistakes=[
        Mistake("no shift",
                "Without subtracting, `np.exp(1000)` overflows to infinity and inf / inf "
                "is NaN. Subtract each row's largest score first.",
                impl=_softmax_no_shift),
        Mistake("global max",
                "`scores.max()` is the largest score of the whole array. A row far below "
                "it becomes exp(-2000) = 0 everywhere, and 0 / 0 is NaN. Subtract each "
                "row's own largest score.",
                impl=_softmax_global_max),
        Mistake("whole sum",
                "You divided by the total of the whole array, so a row's weights do not "
                "add up to 1. Divide each row by its own total.",
                impl=_softmax_whole_sum),
        Mistake("wrong axis",
                "You added down the columns (axis 0), so each column sums to 1 instead of "
                "each row. A row's scores lie along the last axis.",
                impl=_softmax_axis0),
        Mistake("missing keepdims", _KEEPDIMS_HINT, error=r"broadcast"),
        Mistake("missing keepdims (square)", _KEEPDIMS_HINT,
                impl=lambda s: np.exp(s - s.max(axis=-1, keepdims=True))
                / np.exp(s - s.max(axis=-1, keepdims=True)).sum(axis=-1)),
    ],
    wrong=[
        Variant({0: "0"}, ["NaN", "overflow"], "nan"),
        Variant({0: "scores.max()"}, ["NaN", "own largest"], "nan"),
        Variant({1: "e.sum()"}, ["row 0", "whole array"], "values"),
        Variant({1: "e.sum(axis=0, keepdims=True)"}, ["row 0", "columns"], "values"),
        Variant({1: "e.sum(axis=-1)"}, ["ValueError", "keepdims", "line 5"], "error"),
        Variant({0: "scores.max(axis=-1)"}, ["ValueError", "keepdims", "line 3"], "error"),
        Variant({0: "scores.max(axis=1, keepdims=True)", 1: "e.sum(axis=1, keepdims=True)"},
                ["hidden test", "batch"], "values"),
    ],
    alternatives=[
        Variant({0: "np.max(scores, axis=-1, keepdims=True)", 1: "np.sum(e, axis=-1, keepdims=True)"}),
        Variant({0: "scores.max(-1)[..., None]", 1: "e.sum(-1)[..., np.newaxis]"}),
        Variant({0: "np.amax(scores, axis=scores.ndim - 1, keepdims=True)",
                 1: "np.expand_dims(e.sum(axis=-1), -1)"}),
    ],
    skills="write a softmax that stays finite for large scores",
)


# ---------------------------------------------------------------- questions

SOFTMAX_SCORES = np.array([2.0, 1.0, 0.1])


def _two_decimals(values) -> str:
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


PREDICT_SOFTMAX = Question(
    id="start-predict-softmax",
    notebook=NOTEBOOK,
    kind="predict",
    prompt=f"Three words have the scores {[float(v) for v in SOFTMAX_SCORES]}. "
           "What does softmax make of them?",
    choices=[
        f"The scores divided by their total, {SOFTMAX_SCORES.sum():g}: "
        f"{_two_decimals(SOFTMAX_SCORES / SOFTMAX_SCORES.sum())}",
        "Weights that add up to 1, largest for the first word, none of them zero",
        "All the weight on the first word: [1, 0, 0]",
        "Equal weights, a third each",
    ],
    answer=1,
    explanation="Softmax takes exp of each score and divides by the total of those. "
                "exp is always positive and grows fast, so every word keeps some weight and "
                "the highest score gets the most: here about "
                + ", ".join(f"{w:.2f}" for w in _softmax_reference(SOFTMAX_SCORES)[:-1])
                + f" and {_softmax_reference(SOFTMAX_SCORES)[-1]:.2f}. Dividing "
                "the raw scores would break for negative scores, and a hard pick is what "
                "softmax approaches only when the scores are far apart.",
)

NUMBER_EQUAL = Question(
    id="start-number-equal-scores",
    notebook=NOTEBOOK,
    kind="number",
    prompt="Five scores are all equal. Which weight does softmax give each of them?",
    answer=0.2,
    tol=1e-3,
    explanation="Equal scores give equal exponentials, so each gets 1/5 = 0.2 whatever the "
                "common score is, which is why a constant row was one of the hidden tests.",
)

SHAPE_ROW_MEAN = Question(
    id="start-shape-row-mean",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="`x` has shape (4, 2, 3). Which shape does `row_mean(x)` give?",
    answer=(4, 2, 1),
    explanation="The last axis is averaged, and keepdims leaves it in place with length 1: "
                "(4, 2, 3) becomes (4, 2, 1), one average for each of the 4 x 2 rows.",
)

DEFINITIONS = [ROW_MEAN, STABLE_SOFTMAX, PREDICT_SOFTMAX, NUMBER_EQUAL, SHAPE_ROW_MEAN]
