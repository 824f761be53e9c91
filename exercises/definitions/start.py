"""Exercises and questions of notebook 00, "Start here"."""

from __future__ import annotations

import numpy as np

from lib.attention import softmax as _softmax_reference

from exercises.core.definition import Case, Contract, Exercise, Mistake, Question, Variant, in_float32

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
    ndims=(2, 3, 4),
    dtypes=("float64", "float32"),
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


def _row_mean_draw(rng) -> list[Case]:
    cases = []
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
    contract=ROW_MEAN_CONTRACT,
    fixed=_row_mean_fixed,
    draw=_row_mean_draw,
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
        Mistake("largest",
                "You took each row's largest number. The average adds up all the numbers of "
                "the row (and the code then divides by how many there are).",
                impl=lambda x: x.max(axis=-1, keepdims=True) / x.shape[-1]),
    ],
    wrong=[
        Variant({0: "x.sum()"}, ["shape", "every number"], "shape"),
        Variant({0: "x.sum(axis=0, keepdims=True)"}, ["expected shape (2, 1)", "columns"], "shape"),
        Variant({0: "x.sum(axis=-1)"}, ["got shape (2,)", "keepdims"], "shape"),
        Variant({0: "x.sum(axis=1, keepdims=True)"}, ["hidden test", "axis=-1"], "shape"),
        Variant({0: "x.max(axis=-1, keepdims=True)"}, ["row 0", "expected", "largest"], "values"),
        Variant({0: "x.totl(axis=-1, keepdims=True)"}, ["AttributeError", "line 3"], "error"),
        Variant(source="def row_mean(x):\n    total = x.sum(axis=-1, keepdims=True)\n", expect=["None", "return"], kind="none"),
        Variant(source="def row_mean(x):\n    return 'the mean'\n", expect=["str", "array"], kind="type"),
        Variant(source="row_mean = 2.0\n", expect=["should be a function"], kind="type"),
        # the running total written into x itself: right numbers, but the caller's x is changed
        Variant({0: "np.cumsum(x, axis=-1, out=x)[..., -1:]"},
                ["changed its argument `x`", "caller", "new array"], "inplace"),
        Variant(source="def row_mean(x):\n    x /= x.shape[-1]\n    return x.sum(axis=-1, keepdims=True)\n",
                expect=["changed its argument `x`", "caller"], kind="inplace"),
        Variant(source="def row_mean(x):\n    while True:\n        pass\n",
                expect=["did not finish in", "on the example above", "loop that never ends", "line 2: while True:"],
                kind="timeout"),
        Variant(source="def row_mean(x):\n    return row_mean(x)\n",
                expect=["called itself", "RecursionError"], kind="recursion"),
        Variant(source="def row_mean(x):\n    return np.ones((10 ** 7, 10 ** 7)).sum(axis=-1)\n",
                expect=["memory", "shape (10000000, 10000000)"], kind="memory"),
        Variant(source="_out = {}\n\ndef row_mean(x):\n"
                       "    out = _out.setdefault(x.shape, np.zeros(x.shape[:-1] + (1,)))\n"
                       "    out[...] = x.sum(axis=-1, keepdims=True) / x.shape[-1]\n    return out\n",
                expect=["changed the result", "the example above"], kind="state"),
        Variant(source="seen = 0\n\ndef row_mean(x):\n    global seen\n"
                       "    seen = seen + x.sum(axis=-1, keepdims=True)\n    return seen / x.shape[-1]\n",
                expect=["second time", "different result"], kind="state"),
    ],
    alternatives=[
        Variant({0: "np.sum(x, axis=-1, keepdims=True)"}),
        Variant({0: "x.sum(-1)[..., None]"}),
        Variant({0: "x.mean(axis=-1, keepdims=True) * x.shape[-1]"}),
        Variant({0: "np.add.reduce(x, axis=x.ndim - 1, keepdims=True)"}),
        Variant({0: "np.cumsum(x, axis=-1)[..., -1:]"}),
        Variant(source="def row_mean(x):\n    total = 0\n    for i in range(x.shape[-1]):\n"
                       "        total = total + x[..., i:i + 1]\n    return total / x.shape[-1]\n"),
    ],
    skills="average over the right axis and keep it with keepdims",
)


# ---------------------------------------------------------------- stable softmax

SOFTMAX_CONTRACT = Contract(
    args={"scores": "an array of finite numbers, shape (..., n): rows of n >= 1 scores along the "
                    "last axis, of any size"},
    returns="the softmax of each row, same shape: positive weights that sum to 1 along the last axis",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
    edges={"beyond exp": "rows spanning far more than exp can hold (a row [0, 1000])",
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


def _softmax_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        shape = _random_shape(rng)
        cases.append(Case((rng.normal(0.0, 4.0, shape),), f"random scores, shape {shape}"))
    return cases


def _softmax_no_shift(s):
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def _shifted_by(shift):
    def softmax(s):
        e = np.exp(s - shift(s))
        return e / e.sum(axis=-1, keepdims=True)
    return softmax


def _softmax_whole_sum(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum()


def _softmax_axis0(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _softmax_clipped(s):
    e = np.exp(np.clip(s, -500.0, 500.0))
    return e / e.sum(axis=-1, keepdims=True)


_KEEPDIMS_HINT = ("A row's maximum or total has one number per row. Without "
                  "`keepdims=True` it loses its axis and no longer lines up with the rows, "
                  "so NumPy cannot combine it with the scores (or combines it the wrong way).")
_SHIFT_HINT = ("Subtracting the same number from a whole row leaves the weights unchanged, but "
               "only the row's largest score keeps every exponent at or below exp(0) = 1. A row "
               "such as [0, 1000] shows it: shifted by its smallest score or its mean, exp still "
               "overflows to infinity.")

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
    contract=SOFTMAX_CONTRACT,
    fixed=_softmax_fixed,
    draw=_softmax_draw,
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
        Mistake("smallest score", _SHIFT_HINT + " You subtracted the smallest.",
                impl=_shifted_by(lambda s: s.min(axis=-1, keepdims=True))),
        Mistake("mean score", _SHIFT_HINT + " You subtracted the mean.",
                impl=_shifted_by(lambda s: s.mean(axis=-1, keepdims=True))),
        Mistake("first score", _SHIFT_HINT + " You subtracted the first score of the row.",
                impl=_shifted_by(lambda s: s[..., :1])),
        Mistake("global max",
                "`scores.max()` is the largest score of the whole array. A row far below "
                "it becomes exp(-2000) = 0 everywhere, and 0 / 0 is NaN. Subtract each "
                "row's own largest score.",
                impl=_shifted_by(lambda s: s.max())),
        Mistake("column max",
                "You subtracted the largest score of each column (axis 0). The number "
                "subtracted must be the same for every score of a row: the row's own largest.",
                impl=_shifted_by(lambda s: s.max(axis=0, keepdims=True))),
        Mistake("clipped",
                "Clipping the scores changes them: every score above the limit becomes the "
                "same, so their weights come out equal. Subtract each row's largest score "
                "instead; that keeps every exponent at most 1 and changes no weight.",
                impl=_softmax_clipped),
        Mistake("whole sum",
                "You divided by the total of the whole array, so a row's weights do not "
                "add up to 1. Divide each row by its own total.",
                impl=_softmax_whole_sum),
        Mistake("wrong axis",
                "You added down the columns (axis 0), so each column sums to 1 instead of "
                "each row. A row's scores lie along the last axis.",
                impl=_softmax_axis0),
        Mistake("missing keepdims (total)", _KEEPDIMS_HINT,
                impl=lambda s: np.exp(s - s.max(axis=-1, keepdims=True))
                / np.exp(s - s.max(axis=-1, keepdims=True)).sum(axis=-1)),
        Mistake("missing keepdims (max)", _KEEPDIMS_HINT,
                impl=lambda s: np.exp(s - s.max(axis=-1))
                / np.exp(s - s.max(axis=-1)).sum(axis=-1, keepdims=True)),
    ],
    wrong=[
        Variant({0: "0"}, ["NaN", "overflow"], "nan"),
        Variant({0: "scores.max()"}, ["NaN", "own largest"], "nan"),
        Variant({0: "scores.min(axis=-1, keepdims=True)"}, ["NaN", "hidden test", "smallest"], "nan"),
        Variant({0: "scores.mean(axis=-1, keepdims=True)"}, ["NaN", "[0, 1000]", "mean"], "nan"),
        Variant({0: "scores[..., :1]"}, ["NaN", "first score"], "nan"),
        Variant({0: "scores.max(axis=0, keepdims=True)"}, ["row 0", "each column"], "values"),
        Variant(source="def softmax(scores):\n    e = np.exp(np.clip(scores, -500, 500))\n"
                       "    return e / e.sum(axis=-1, keepdims=True)\n",
                expect=["hidden test", "clipping"], kind="values"),
        Variant({1: "e.sum()"}, ["row 0", "whole array"], "values"),
        Variant({1: "e.sum(axis=0, keepdims=True)"}, ["row 0", "columns"], "values"),
        Variant({1: "e.sum(axis=-1)"}, ["ValueError", "keepdims", "line 5"], "error"),
        Variant({0: "scores.max(axis=-1)"}, ["ValueError", "keepdims", "line 3"], "error"),
        Variant({0: "scores.max(axis=1, keepdims=True)", 1: "e.sum(axis=1, keepdims=True)"},
                ["hidden test", "batch"], "values"),
        Variant(source="def softmax(scores):\n    scores -= scores.max(axis=-1, keepdims=True)\n"
                       "    np.exp(scores, out=scores)\n    scores /= scores.sum(axis=-1, keepdims=True)\n"
                       "    return scores\n",
                expect=["changed its argument `scores`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "np.max(scores, axis=-1, keepdims=True)", 1: "np.sum(e, axis=-1, keepdims=True)"}),
        Variant({0: "scores.max(-1)[..., None]", 1: "e.sum(-1)[..., np.newaxis]"}),
        Variant({0: "np.amax(scores, axis=scores.ndim - 1, keepdims=True)",
                 1: "np.expand_dims(e.sum(axis=-1), -1)"}),
        Variant({0: "np.sort(scores, axis=-1)[..., -1:]"}),
        Variant(source="def softmax(scores):\n    scores = scores - scores.max(axis=-1, keepdims=True)\n"
                       "    e = np.exp(scores)\n    e /= e.sum(axis=-1, keepdims=True)\n    return e\n"),
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
    reveals=[
        r"\b(add|adds|adding) up to (1|one)\b",
        r"\bsum(s|ming)? to (1|one)\b",
        r"\bnone of them (is )?zero\b",
        r"\bkeeps? some weight\b",
    ],
)

NUMBER_EQUAL = Question(
    id="start-number-equal-scores",
    notebook=NOTEBOOK,
    kind="number",
    prompt="Five scores are all equal. Which weight does softmax give each of them?",
    answer=0.2,
    tol=1e-3,
    explanation="Equal scores give equal exponentials, so each gets 1/5 = 0.2 whatever the "
                "common score is. The softmax you write below is checked on rows like that too.",
    reveals=[
        r"\bequal scores (give|get) equal\b",
        r"(?<![\d.])1\s*/\s*5(?![\d.])",
    ],
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
