"""Exercises of notebook 02, "The feed-forward network: widen, bend, narrow".

Its questions are in :mod:`exercises.definitions.questions.ffn`; its two exercises on a mixture of
experts in :mod:`exercises.definitions.mixture`."""

from __future__ import annotations

import numpy as np

from lib.ffn import collapse as _collapse, swiglu as _swiglu, worked_example
from lib.params import ffn_width as _ffn_width

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.mixture import MOE_COUNTS, TOP2_ROUTING
from exercises.definitions.questions import ffn as questions

NOTEBOOK = "02_feed_forward"


def _random_weights(rng, d, d_ff, d_out):
    """W_up, b_up, W_down, b_down of standard normal numbers."""
    return (rng.normal(0.0, 1.0, (d, d_ff)), rng.normal(0.0, 1.0, d_ff), rng.normal(0.0, 1.0, (d_ff, d_out)),
            rng.normal(0.0, 1.0, d_out))


# ---------------------------------------------------------------- the FFN without its activation, as one matrix

def _one_matrix_reference(W_up, b_up, W_down, b_down):
    W, b = _collapse(W_up, b_up, W_down, b_down)
    return np.vstack([W, b])


ONE_MATRIX_CONTRACT = Contract(
    args={"W_up": "the widening matrix, shape (d_model, d_ff)", "b_up": "its bias, shape (d_ff,)",
          "W_down": "the narrowing matrix, shape (d_ff, d_out)", "b_down": "its bias, shape (d_out,)"},
    returns="W with b below it as one more row, shape (d_model + 1, d_out), such that "
            "x @ W + b == (x @ W_up + b_up) @ W_down + b_down for every x",
    ndims=(2,), dtypes=("float64", "float32"),
    edges={"square": "d_model = d_ff = d_out, where matrices and biases in the wrong order still run",
           "b_down": "an output bias that is not zero",
           "one unit": "a hidden layer of a single unit",
           "one output": "a single output number (d_out = 1)",
           "sizes apart": "d_model, d_ff and d_out all different"},
)


def _one_matrix_fixed() -> list[Case]:
    fixed = np.random.default_rng(2020)
    e = worked_example()
    return [
        Case((e.W_up, e.b_up, e.W_down, e.b_down), "the example", visible=True),
        Case(_random_weights(fixed, 3, 3, 3), "d_model = d_ff = d_out = 3", covers=("square", "b_down")),
        Case(_random_weights(fixed, 2, 5, 3), "d_model 2, d_ff 5, d_out 3", covers=("sizes apart", "b_down")),
        Case(_random_weights(fixed, 3, 1, 2), "a hidden layer of one unit", covers=("one unit",)),
        Case(_random_weights(fixed, 4, 6, 1), "a single output number", covers=("one output",)),
        Case((fixed.normal(0.0, 1.0, (2, 4)), np.zeros(4), fixed.normal(0.0, 1.0, (4, 2)), np.array([0.5, -1.5])),
             "b_up zero, b_down not"),
        in_float32(Case(_random_weights(fixed, 3, 7, 2), "d_model 3, d_ff 7, d_out 2")),
    ]


def _one_matrix_case(rng) -> Case:
    d, d_ff, d_out = (int(v) for v in rng.integers(1, 8, 3))
    return Case(_random_weights(rng, d, d_ff, d_out),
                f"random weights: d_model {d}, d_ff {d_ff}, d_out {d_out}")


ONE_MATRIX = Exercise(
    id="one-matrix", notebook=NOTEBOOK, title="One matrix for an FFN without its activation", name="one_matrix",
    template='''def one_matrix(W_up, b_up, W_down, b_down):
    """The FFN without its activation, (x @ W_up + b_up) @ W_down + b_down, as one matrix W and
    one bias b: x @ W + b gives the same numbers for every x.
    Returns W with b below it as one more row: shape (d_model + 1, d_out)."""
    W = ____          # shape (d_model, d_out)
    b = ____          # shape (d_out,)
    return np.vstack([W, b])
''',
    solution=["W_up @ W_down", "b_up @ W_down + b_down"],
    reference=_one_matrix_reference,
    contract=ONE_MATRIX_CONTRACT,
    fixed=_one_matrix_fixed,
    draw=three_of(_one_matrix_case),
    hints=[
        "Multiply the bracket out, as (a + b)·c = a·c + b·c: one part of the result still contains "
        "x, the other does not. The part with x gives W, the part without gives b.",
        "A token meets W_up first and W_down second; a product of matrices keeps that order. Check "
        "the shapes: W must turn d_model numbers into d_out.",
        "b_up is added before the second matrix, so it goes through W_down as well; b_down is "
        "added after it, as it is.",
    ],
    mistakes=[
        Mistake("wrong order", {0: "W_down @ W_up"},
                "W_down @ W_up has the two matrices in the wrong order: a token meets W_up first. "
                "The product that turns d_model numbers into d_out starts with W_up."),
        Mistake("number by number", {0: "W_up * W_down"},
                "`*` multiplies number by number. Two maps one after the other are one matrix product, `@`."),
        Mistake("transposed", {0: "W_down.T @ W_up.T"},
                "Your W is the transpose of the one asked for: its rows must match x's d_model "
                "numbers, its columns the d_out outputs."),
        Mistake("biases added", {1: "b_up + b_down"},
                "b_up is added before W_down, so W_down acts on it too: it reaches the output "
                "only through W_down. Adding the two biases as they are leaves that out."),
        Mistake("no output bias", {1: "b_up @ W_down"},
                "b_down is missing from your bias: the example's b_down is zero, so it looked right there."),
        Mistake("only the output bias", {1: "b_down"},
                "b_up disappeared from your bias. It is added before W_down, and what W_down makes "
                "of it is part of the bias too."),
        Mistake("bias through W_up", {1: "b_up @ W_up + b_down"},
                "b_up is added after W_up, so it never meets W_up: it goes through W_down only."),
        Mistake("output bias subtracted", {1: "b_up @ W_down - b_down"},
                "b_down is added at the end of the FFN, so it is added to the bias too, not "
                "subtracted. The example's b_down is zero, so the sign did not show there."),
        Mistake("ReLU on the bias", {1: "np.maximum(b_up, 0) @ W_down + b_down"},
                "This FFN has no activation, but your bias puts b_up through a ReLU (`np.maximum(..., 0)`) "
                "first, so its negative numbers became 0. b_up goes through W_down as it is."),
        Mistake("bias on top", '''def one_matrix(W_up, b_up, W_down, b_down):
    return np.vstack([b_up @ W_down + b_down, W_up @ W_down])
''',
                "Your rows are in the wrong order: b came first. `np.vstack` stacks its list in "
                "order, and the result has W's rows first and b below them, as its last row."),
        Mistake("bias number by number", {1: "b_up * W_down + b_down"},
                "`b_up * W_down` multiplies number by number and makes a matrix. b_up goes through "
                "W_down as a token's numbers do, by a matrix product, `@`, which gives d_out numbers."),
    ],
)


# ---------------------------------------------------------------- SwiGLU

def _earlier_swiglu(hidden: str) -> str:
    """A cell as learners wrote it for an earlier release of this exercise (the hidden layer in
    one line), whose slips the check still recognises in notebooks saved from that release."""
    return ("def silu(z):\n    return z / (1 + np.exp(-z))\n\n\n"
            "def swiglu(x, W_gate, W_up, W_down):\n"
            f"    hidden = {hidden}\n    return hidden @ W_down\n")


SWIGLU_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d_model)",
          "W_gate": "shape (d_model, d_ff)", "W_up": "shape (d_model, d_ff)",
          "W_down": "shape (d_ff, d_model)"},
    returns="shape (..., d_model)",
    ndims=(2, 3), dtypes=("float64", "float32"),
    edges={"one token": "a single token",
           "square": "d_ff = d_model = the number of tokens, where `@` and `*` both run",
           "large gates": "gate numbers in the hundreds, where e^z overflows",
           "batch": "a batch of texts"},
)


def _swiglu_fixed() -> list[Case]:
    fixed = np.random.default_rng(2048)
    return [
        Case((np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]),
              np.array([[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -1.0], [0.0, -1.0, 1.0, 0.5]]),
              np.array([[0.5, 1.0, 0.0, -0.5], [1.0, 0.0, 0.5, 0.0], [-1.0, 0.5, 1.0, 1.0]]),
              np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, -0.5, 1.0], [1.0, 1.0, -1.0]])),
             "the example", visible=True),
        Case((fixed.normal(0.0, 1.0, (1, 4)), fixed.normal(0.0, 1.0, (4, 6)),
              fixed.normal(0.0, 1.0, (4, 6)), fixed.normal(0.0, 1.0, (6, 4))), "one token",
             covers=("one token",)),
        Case((fixed.normal(0.0, 1.0, (5, 5)), fixed.normal(0.0, 1.0, (5, 5)),
              fixed.normal(0.0, 1.0, (5, 5)), fixed.normal(0.0, 1.0, (5, 5))),
             "square matrices: d_ff = d_model = tokens", covers=("square",)),
        Case((fixed.normal(0.0, 1.0, (2, 3, 4)), fixed.normal(0.0, 1.0, (4, 8)),
              fixed.normal(0.0, 1.0, (4, 8)), fixed.normal(0.0, 1.0, (8, 4))), "a batch of 2 texts",
             covers=("batch",)),
        Case((fixed.normal(0.0, 3.0, (3, 2)), fixed.normal(0.0, 3.0, (2, 4)),
              fixed.normal(0.0, 1.0, (2, 4)), fixed.normal(0.0, 1.0, (4, 2))), "large gate numbers"),
        Case((np.array([[1.0, -1.0], [-2.0, 0.5]]), np.array([[400.0, -300.0, 5.0], [-350.0, 420.0, 1.0]]),
              np.array([[1.0, 0.5, -1.0], [0.25, -0.5, 2.0]]), np.array([[0.5, 1.0], [-1.0, 0.5], [1.0, 1.0]])),
             "gate numbers in the hundreds", covers=("large gates",)),
        in_float32(Case((fixed.normal(0.0, 1.0, (4, 3)), fixed.normal(0.0, 1.0, (3, 5)),
                         fixed.normal(0.0, 1.0, (3, 5)), fixed.normal(0.0, 1.0, (5, 3))),
                        "float32 tokens and weights")),
    ]


def _swiglu_case(rng) -> Case:
    n, d, f = (int(v) for v in rng.integers(1, 7, 3))
    return Case((rng.normal(0.0, 1.0, (n, d)), rng.normal(0.0, 1.0, (d, f)),
                 rng.normal(0.0, 1.0, (d, f)), rng.normal(0.0, 1.0, (f, d))),
                f"random: {n} tokens, d_model {d}, d_ff {f}")


SWIGLU = Exercise(
    id="swiglu", notebook=NOTEBOOK, title="The gated feed-forward network (SwiGLU)", name="swiglu",
    template='''def silu(z):
    """SiLU, element by element: z times the sigmoid of z."""
    return ____


def swiglu_fused(x, W_both, W_down):
    """The gated FFN with W_gate and W_up side by side in one matrix, W_both (d_model, 2 * d_ff):
    its first d_ff columns are W_gate's, the other d_ff W_up's, so one product makes both
    projections. x: (..., d_model), any number of leading axes."""
    both = x @ W_both                  # (..., 2 * d_ff)
    gate = ____                        # every token's gate projection, (..., d_ff)
    up = ____                          # every token's up projection, (..., d_ff)
    return (silu(gate) * up) @ W_down


def swiglu(x, W_gate, W_up, W_down):
    """The gated FFN, from W_gate and W_up as the course keeps them, apart."""
    return swiglu_fused(x, np.concatenate([W_gate, W_up], axis=1), W_down)
''',
    solution=["z / (1 + np.exp(-z))", "both[..., :W_down.shape[0]]", "both[..., W_down.shape[0]:]"],
    reference=_swiglu,
    contract=SWIGLU_CONTRACT,
    fixed=_swiglu_fixed,
    draw=three_of(_swiglu_case),
    hints=[
        "sigmoid(z) = 1 / (1 + e^(\u2212z)), and SiLU multiplies it by z itself; `np.exp` works on "
        "every number of an array at once.",
        "`both` holds, for every token, its 2 \u00d7 d_ff projection numbers in its last axis: the "
        "gate's d_ff first, then the up projection's. Whatever axes come before (tokens, texts) "
        "stay as they are. How wide is d_ff? W_down has one row per hidden unit.",
        "Slice the last axis only: `...` stands for all the axes before it, so `a[..., :k]` keeps "
        "the first k numbers of every token, whatever the number of axes.",
    ],
    mistakes=[
        Mistake("second axis", {1: "both[:, :W_down.shape[0]]", 2: "both[:, W_down.shape[0]:]"},
                "Your split works on a grid of tokens (2 axes) only: in a batch of texts (3 axes) the second "
                "axis holds the tokens. Split the last axis; `...` stands for all the axes before it."),
        Mistake("split at d_model", {1: "both[..., :x.shape[-1]]", 2: "both[..., x.shape[-1]:]"},
                "You split at d_model, x's width. Each projection is d_ff wide: W_down has one row "
                "per hidden unit, and `both` holds 2 \u00d7 d_ff numbers per token."),
        Mistake("halves swapped", {1: "both[..., W_down.shape[0]:]", 2: "both[..., :W_down.shape[0]]"},
                "Your gate and up projections are swapped: SiLU goes on the gate projection "
                "(W_gate's), which in W_both is the first d_ff numbers of every token."),
        Mistake("every other number", {1: "both[..., ::2]", 2: "both[..., 1::2]"},
                "W_both holds W_gate's columns side by side with W_up's, not interleaved: the gate is "
                "the first d_ff numbers of every token, the up projection the last d_ff."),
        Mistake("ReLU for SiLU", {0: "np.maximum(z, 0)"},
                "Your `silu` is a ReLU: a negative gate gives exactly 0, where SiLU gives z times the "
                "sigmoid of z, a small negative number."),
        Mistake("brackets of the sigmoid", {0: "z * (1 / 1 + np.exp(-z))"},
                "`1 / 1 + np.exp(-z)` divides first: it is 1 + e^(\u2212z), not the sigmoid "
                "1 / (1 + e^(\u2212z)). Put brackets around the whole denominator."),
        Mistake("sigmoid only", {0: "1 / (1 + np.exp(-z))"},
                "Your `silu` returns the sigmoid alone, which stays between 0 and 1. SiLU multiplies it by z."),
        Mistake("sign of the exponent", {0: "z / (1 + np.exp(z))"},
                "Check the sign in the exponent: sigmoid uses e to the power minus z, so that "
                "large positive z gives nearly 1."),
        Mistake("overflowing sigmoid", {0: "z * np.exp(z) / (1 + np.exp(z))"},
                "Your SiLU is right for moderate numbers but gives NaN for large ones: e^z "
                "overflows to infinity above z = 709, and infinity / infinity is NaN. Write the "
                "sigmoid as 1 / (1 + e^(\u2212z)): for a large z, e^(\u2212z) only becomes 0."),
        Mistake("no SiLU", _earlier_swiglu("(x @ W_gate) * (x @ W_up)"),
                "The gate projection went in without SiLU. Pass it through `silu` before it "
                "multiplies the up projection."),
        Mistake("SiLU of the product", _earlier_swiglu("silu((x @ W_gate) * (x @ W_up))"),
                "SiLU went on the product of the two projections. Only the gate projection goes "
                "through SiLU; the up projection is multiplied in afterwards, as it is."),
        Mistake("matrix product", _earlier_swiglu("silu(x @ W_gate) @ (x @ W_up)"),
                "Your code runs only when d_ff equals the number of tokens: the gate multiplies the up "
                "projection number by number (`*`). `@` is a matrix product, which needs other shapes and "
                "means something else."),
    ],
)


# ---------------------------------------------------------------- the FFN's width from a parameter budget

def _width_reference(d, times, gated, multiple):
    return np.int64(_ffn_width(int(d), int(times), bool(gated), int(multiple)))


WIDTH_CONTRACT = Contract(
    args={"d": "the width d_model, a whole number from 1 to 8,192 (a Python int or a NumPy integer)",
          "times": "how many times attention's parameters the FFN must hold at least, a whole "
                   "number from 1 to 4",
          "gated": "True for a gated FFN (three matrices), False for a plain one (two)",
          "multiple": "the hidden width must be a multiple of this whole number, from 1 to 1,024"},
    returns="the narrowest such hidden width, a whole number",
    dtypes=(),
    edges={"plain": "a plain FFN", "gated": "a gated FFN",
           "exact": "a budget that whole multiples hold exactly, with nothing to round",
           "rounded up": "a budget that needs one more multiple than the division gives",
           "below a half": "a division whose fraction is below a half, where rounding to the "
                           "nearest rounds down",
           "one group": "a multiple wider than the width the budget needs",
           "times 1": "an FFN as large as attention",
           "sizes apart": "small sizes that all differ, so no argument can stand in for another",
           "numpy ints": "sizes given as NumPy integers"},
)


def _width_fixed() -> list[Case]:
    return [
        Case((960, 2, True, 256), "the example", visible=True, covers=("gated", "exact")),
        Case((4096, 2, True, 256), "d = 4,096, twice attention, gated, a multiple of 256",
             covers=("rounded up",)),
        Case((768, 1, False, 1), "d = 768, as large as attention, plain", covers=("plain", "times 1")),
        Case((768, 2, False, 32), "d = 768, twice attention, plain, a multiple of 32"),
        Case((100, 1, True, 1), "d = 100, as large as attention, gated: 133.33 units",
             covers=("below a half",)),
        Case((64, 1, True, 256), "d = 64 with a multiple of 256", covers=("one group",)),
        Case((7, 3, True, 5), "d = 7, three times attention, gated, a multiple of 5", covers=("sizes apart",)),
        Case((np.int64(96), np.int64(2), True, np.int64(8)), "sizes given as NumPy integers",
             covers=("numpy ints",)),
        Case((128, 4, False, 64), "d = 128, four times attention, plain, a multiple of 64"),
    ]


def _width_case(rng) -> Case:
    d, times = int(rng.integers(1, 129)) * 32, int(rng.integers(1, 5))
    gated, multiple = bool(rng.integers(0, 2)), int(rng.choice([1, 8, 32, 64, 128, 256]))
    return Case((d, times, gated, multiple),
                f"random: d = {d}, {times} times attention, gated = {gated}, a multiple of {multiple}")


FFN_WIDTH = Exercise(
    id="ffn-width", notebook=NOTEBOOK, title="How wide an FFN? Its width from a parameter budget", name="ffn_width",
    template='''def ffn_width(d, times, gated, multiple):
    """The narrowest hidden width, a multiple of `multiple`, at which the FFN holds at least
    `times` times as many parameters as attention's four d x d matrices.
    No biases: a plain FFN has two matrices of d x width numbers, a gated one three."""
    budget = ____              # the parameters the FFN must hold, at least
    per_unit = ____            # what one more hidden unit adds to the FFN
    groups = ____              # the fewest groups of `multiple` units that hold the budget
    return groups * multiple
''',
    solution=["times * 4 * d * d", "(3 if gated else 2) * d", "-(-budget // (per_unit * multiple))"],
    reference=_width_reference,
    contract=WIDTH_CONTRACT,
    fixed=_width_fixed,
    draw=three_of(_width_case),
    hints=[
        "The budget is `times` times what attention holds: four matrices of d rows and d columns.",
        "One hidden unit is one column of W_up and one row of W_down (and one column of W_gate in a "
        "gated FFN); each of them holds d numbers.",
        "A group of `multiple` units holds per_unit \u00d7 multiple numbers. Dividing the budget by "
        "that gives how many groups it takes, usually not a whole number: take the next whole "
        "number up. `a // b` rounds down; -(-a // b) rounds up.",
    ],
    mistakes=[
        Mistake("not rounded", {2: "budget / per_unit / multiple"},
                "Your number of groups is not always a whole number: `/` divides exactly, so the width "
                "is a whole multiple only when the budget divides evenly. Take the next whole number up."),
        Mistake("rounded down", {2: "budget // (per_unit * multiple)"},
                "You rounded the number of groups down, so the FFN holds less than the budget: "
                "take the next whole number up instead."),
        Mistake("rounded down, plus one", {2: "budget // (per_unit * multiple) + 1"},
                "Rounding down and adding one gives one group too many whenever the budget fills a whole "
                "number of groups exactly. Round up instead: that adds nothing when the division is exact."),
        Mistake("rounded to the nearest", {2: "round(budget / (per_unit * multiple))"},
                "`round` goes to the nearest whole number, which is sometimes below what the budget needs (133.33 "
                "groups become 133). The narrowest width that holds the budget needs the next whole number up."),
        Mistake("multiple left out", {2: "-(-budget // per_unit)"},
                "You counted single units, then multiplied by `multiple` again: `groups` counts "
                "groups of `multiple` units, each holding per_unit \u00d7 multiple numbers."),
        Mistake("gate ignored", {1: "2 * d"},
                "A gated FFN has three matrices, so each of its hidden units adds three columns or "
                "rows of d numbers, not two."),
        Mistake("gated backwards", {1: "(2 if gated else 3) * d"},
                "Your count has three matrices for a plain FFN and two for a gated one: the other way round."),
        Mistake("unit without d", {1: "3 if gated else 2"},
                "A hidden unit adds a whole column or row to each matrix, d numbers each, not one "
                "number per matrix."),
        Mistake("attention 4d", {0: "times * 4 * d"},
                "Attention's four matrices are d x d each: d times d numbers per matrix, not d."),
        Mistake("times left out", {0: "4 * d * d"},
                "Your budget is attention's count once, whatever `times` says: multiply by `times`."),
        Mistake("a bias per unit", {1: "(3 if gated else 2) * d + 1"},
                "No biases here: a hidden unit adds d numbers to each matrix, and nothing more."),
        Mistake("brackets", {2: "-(-budget // per_unit * multiple)"},
                "`a // b * c` divides by b first, then multiplies by c. A group holds per_unit "
                "\u00d7 multiple numbers: put brackets around that product."),
    ],
    rtol=0.0, atol=0.5,
)

DEFINITIONS = [ONE_MATRIX, FFN_WIDTH, SWIGLU, TOP2_ROUTING, MOE_COUNTS, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
