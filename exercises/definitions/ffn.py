"""Exercises of notebook 02, "The feed-forward network: widen, bend, narrow".

Its questions are in :mod:`exercises.definitions.questions.ffn`."""

from __future__ import annotations

import numpy as np

from lib.ffn import collapse as _collapse, swiglu as _swiglu, worked_example
from lib.moe import route as _route
from lib.params import ModelConfig, block_parameters as _block_parameters, ffn_width as _ffn_width

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
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


# ---------------------------------------------------------------- top-2 routing

EXAMPLE_SCORES = np.array([2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28])
OVER_RULES = {"kept": "topk_softmax", "all": "softmax_topk"}      # the exercise's words, lib.moe's rules


def _top2_reference(scores, over="kept"):
    scores = np.asarray(scores, dtype=float)
    routing = _route(scores, top_k=2, rule=OVER_RULES.get(over, "softmax_topk"))
    weights = np.zeros_like(scores)
    weights[routing.experts] = routing.shares
    return weights


TOP2_CONTRACT = Contract(
    args={"scores": "one token's router scores, shape (E,), E >= 2 experts, all different "
                    "(ties are not promised), of any size",
          "over": "\"kept\" (a softmax over the two kept scores) or \"all\" (each kept expert's part of a "
                  "softmax over every score); \"kept\" unless given"},
    returns="the weight of each expert, shape (E,): two positive weights, summing to 1 for \"kept\" and "
            "to less than 1 for \"all\", zeros elsewhere",
    ndims=(1,), dtypes=("float64", "float32"),
    defaults={"over": "kept"},
    edges={"two experts": "only two experts",
           "negative": "every score negative",
           "large": "scores in the hundreds",
           "far ahead": "one expert ahead of the second by more than exp can hold",
           "best last": "the best expert the last one",
           "all": "weights from a softmax over every score"},
)


def top2_fixed() -> list[Case]:
    """The fixed cases of the top-2 exercises (this one and the one it replaced), with the default
    rule."""
    return [
        Case((EXAMPLE_SCORES.copy(),), "the example", visible=True),
        Case((np.array([-4.0, -1.5, -2.25, -7.0, -3.5, -1.75]),), "every score negative",
             covers=("negative",)),
        Case((np.array([0.3, 4.1, -0.2, 3.6]),), "4 experts"),
        Case((np.array([1.2, 1.0]),), "only 2 experts: both kept", covers=("two experts",)),
        Case((np.array([11.0, 9.5, 10.25, -3.0, 8.0, 12.5, 0.0, 7.75]),), "large scores"),
        Case((np.array([480.0, 520.0, -30.0, 505.0, 12.0]),), "scores in the hundreds", covers=("large",)),
        Case((np.array([2.0, -1.0, 900.0, 0.5, 3.0]),), "one expert far ahead of all the others",
             covers=("far ahead",)),
        Case((np.array([0.1, -0.4, 0.9, 0.3, 1.6]),), "the best expert last", covers=("best last",)),
        Case((np.linspace(-2.0, 1.3, 16)[::-1] * np.where(np.arange(16) % 2, 1.0, -1.0),),
             "16 experts"),
        in_float32(Case((np.array([0.75, -1.25, 2.5, 0.0, 1.5, -0.5]),), "float32 scores")),
    ]


def _top2_routing_fixed() -> list[Case]:
    over_all = {"over": "all"}
    return top2_fixed() + [
        Case((EXAMPLE_SCORES.copy(),), "the example's scores, over all", kwargs=over_all, covers=("all",)),
        Case((np.array([0.3, 4.1, -0.2, 3.6]),), "4 experts, over all", kwargs=over_all, covers=("all",)),
        Case((np.array([-4.0, -1.5, -2.25, -7.0, -3.5, -1.75]),), "every score negative, over all",
             kwargs=over_all, covers=("all", "negative")),
        Case((np.array([480.0, 520.0, -30.0, 505.0, 12.0]),), "scores in the hundreds, over all",
             kwargs=over_all, covers=("all", "large")),
        Case((np.array([0.1, -0.4, 0.9, 0.3, 1.6]),), "the best expert last, over all", kwargs=over_all,
             covers=("all", "best last")),
        Case((np.array([2.0, -1.0, 900.0, 0.5, 3.0]),), "one expert far ahead, over all", kwargs=over_all,
             covers=("all", "far ahead")),
        Case((np.array([1.2, 1.0]),), "only 2 experts, over all", kwargs=over_all, covers=("all", "two experts")),
        in_float32(Case((np.array([0.75, -1.25, 2.5, 0.0, 1.5, -0.5]),), "float32 scores, over all",
                        kwargs=over_all)),
    ]


def top2_case(rng) -> Case:
    n = int(rng.integers(3, 17))
    return Case((rng.normal(0.0, 2.0, n),), f"random scores for {n} experts")


def _top2_routing_case(rng) -> Case:
    case = top2_case(rng)
    if rng.integers(0, 2):
        return Case(case.args, case.label + ", over all", kwargs={"over": "all"})
    return case


TOP2_ROUTING = Exercise(
    id="top2-routing", notebook=NOTEBOOK, name="top2_weights",
    title="Top-2 routing: which experts, and a softmax over which scores",
    template='''def top2_weights(scores, over="kept"):
    """One token's router scores (one per expert) -> the weight of each expert.

    The two best-scored experts get a weight and every other expert 0. The weights come from a
    softmax: over the two kept scores (over="kept"), or over all the scores (over="all"), of
    which the two kept experts keep their parts as they are.
    """
    best = ____                              # the numbers of the two largest scores
    e = np.exp(scores - scores.max())        # every expert's exponential; the largest is exp(0) = 1
    weights = np.zeros_like(scores)
    if over == "kept":
        weights[best] = ____
    else:
        weights[best] = ____
    return weights
''',
    solution=["np.argsort(scores)[-2:]", "e[best] / e[best].sum()", "e[best] / e.sum()"],
    reference=_top2_reference,
    contract=TOP2_CONTRACT,
    fixed=_top2_routing_fixed,
    draw=three_of(_top2_routing_case),
    hints=[
        "`np.argsort(scores)` lists the experts' numbers from the lowest score to the highest. "
        "Which end of that list holds the two best?",
        "A softmax divides each exponential by a total. The two rules differ only in that total: "
        "which experts' exponentials does each one add up?",
        "Over the kept scores, the two weights add up to 1. Over all the scores, the other experts "
        "hold their parts too, so the two kept weights add up to less than 1.",
    ],
    mistakes=[
        Mistake("kept, divided by all", {1: "e[best] / e.sum()"},
                "With over=\"kept\", your two weights do not add up to 1: you divided by the total over all "
                "the experts. A softmax over the two kept scores divides by the total of those two."),
        Mistake("all, divided by the kept", {2: "e[best] / e[best].sum()"},
                "With over=\"all\", your two weights add up to 1: you divided by the total of the two kept "
                "exponentials. Over all the scores, every expert's exponential is in the total, and the "
                "kept experts keep their parts as they are."),
        Mistake("rules swapped", {1: "e[best] / e.sum()", 2: "e[best] / e[best].sum()"},
                "Your two rules are swapped: over=\"kept\" divides by the total of the two kept "
                "exponentials, over=\"all\" by the total over every expert."),
        Mistake("two smallest", {0: "np.argsort(scores)[:2]"},
                "You kept the two lowest scores: `np.argsort` sorts from lowest to highest, so the "
                "best two are at the end of its list."),
        Mistake("an index for a slice", {0: "np.argsort(scores)[-2]"},
                "`[-2]` picks one number of `np.argsort`'s list, the second-best expert alone; the "
                "slice `[-2:]` keeps the last two, the two best."),
        Mistake("runner-up counted without the best",
                {0: "[np.argmax(scores), np.argmax(np.delete(scores, np.argmax(scores)))]"},
                "Your runner-up is numbered in the scores with the best removed: after `np.delete`, "
                "every expert after the best has moved one place down, so its number is one too small."),
        Mistake("sigmoid for the share", {2: "1 / (1 + np.exp(-scores[best]))"},
                "With over=\"all\", each kept expert got the sigmoid of its own score. The rule is its "
                "share of a softmax over every expert: its exponential divided by the total of all of them."),
        Mistake("top 1", {0: "np.argmax(scores)"},
                "Only one expert got weight: `np.argmax` finds the single best. Keep the two best scores."),
        Mistake("second and third", {0: "np.argsort(scores)[-3:-1]"},
                "You kept the second- and the third-best experts: the best is the very last number of "
                "`np.argsort`'s list, and your slice stops before it."),
        Mistake("upside down", {1: "e[best].sum() / e[best]"},
                "Your weights are the softmax upside down: each exponential goes on top, divided by the total."),
        Mistake("not normalised", {1: "e[best]"},
                "With over=\"kept\", your weights are the exponentials themselves: divide them by their total."),
        Mistake("scores as shares", {1: "scores[best] / scores[best].sum()"},
                "You shared the token in proportion to the scores themselves. A softmax shares it "
                "by the exponentials of the scores, which also works for negative scores."),
    ],
)


# ---------------------------------------------------------------- a mixture's stored and used parameters

def _moe_reference(d, d_ff, experts, top_k):
    config = ModelConfig(d_model=int(d), layers=1, d_ff=int(d_ff), vocab=1, experts=int(experts),
                         top_k=int(top_k))
    count = _block_parameters(config)
    return np.array([count.total, count.active], dtype=np.int64)


MOE_CONTRACT = Contract(
    args={"d": "the width, a whole number >= 1 (a Python int or a NumPy integer)",
          "d_ff": "each expert's hidden width, a whole number >= 1",
          "experts": "the number of experts, a whole number >= 1",
          "top_k": "how many experts each token is sent to, a whole number, 1 <= top_k <= experts"},
    returns="(stored, used): two whole numbers, in that order",
    dtypes=(),
    edges={"every expert used": "top_k = experts: every token runs every expert",
           "one expert": "a single expert",
           "top 1": "each token sent to one expert of several",
           "narrow experts": "hundreds of experts, each narrower than the width (d_ff < d)",
           "sizes apart": "small sizes that all differ and share no factor, so no role can be "
                          "swapped for another unnoticed",
           "numpy ints": "sizes given as NumPy integers"},
)


def _moe_fixed() -> list[Case]:
    return [
        Case((768, 3072, 8, 2), "the example", visible=True),
        Case((768, 3072, 8, 8), "every expert used: top_k = experts", covers=("every expert used",)),
        Case((64, 256, 1, 1), "a single expert", covers=("one expert",)),
        Case((7168, 2048, 256, 8), "256 narrow experts, top 8", covers=("narrow experts",)),
        Case((128, 512, 4, 1), "top 1 of 4", covers=("top 1",)),
        Case((11, 7, 5, 3), "d = 11, d_ff = 7, top 3 of 5 experts", covers=("sizes apart",)),
        Case((np.int64(96), np.int64(200), np.int64(6), np.int64(3)), "sizes given as NumPy integers",
             covers=("numpy ints",)),
    ]


def _moe_case(rng) -> Case:
    d = int(rng.integers(1, 17)) * 64
    experts = int(rng.integers(2, 65))
    top_k = int(rng.integers(1, experts))
    d_ff = int(rng.integers(1, 9)) * d // 2
    return Case((d, d_ff, experts, top_k),
                f"random: d = {d}, d_ff = {d_ff}, top {top_k} of {experts} experts")


MOE_COUNTS = Exercise(
    id="moe-counts", notebook=NOTEBOOK, title="A mixture of experts: stored and used", name="moe_block_counts",
    template='''def moe_block_counts(d, d_ff, experts, top_k):
    """One block with a mixture of experts: (parameters stored, parameters one token uses).
    Attention: four d x d matrices. Each expert: a plain FFN of width d_ff, no biases.
    The router: one score per expert, computed from the token's d numbers, no bias. Two RMSNorm
    gains. Every token uses the router and both gains."""
    attention = 4 * d * d
    expert = 2 * d * d_ff              # one expert's two matrices
    norms = 2 * d
    router = ____
    stored = ____                      # everything that must be in memory
    used = ____                        # what one token is multiplied by
    return stored, used
''',
    solution=["d * experts", "attention + experts * expert + router + norms",
              "attention + top_k * expert + router + norms"],
    reference=_moe_reference,
    contract=MOE_CONTRACT,
    fixed=_moe_fixed,
    draw=three_of(_moe_case),
    hints=[
        "The router turns a token's d numbers into one score per expert: it is a matrix, like "
        "the others. How many rows and columns does it need?",
        "Any token may be sent to any expert, so every expert has to be in memory. A single token "
        "runs only the experts it is sent to.",
        "Every token goes through attention, the norms and the router before it reaches its "
        "experts: those parts count in both numbers.",
    ],
    mistakes=[
        Mistake("router not used", {2: "attention + top_k * expert + norms"},
                "Your count of what a token uses leaves out the router. Every token is scored by "
                "the router before it is sent anywhere, so the router's weights are used too."),
        Mistake("no router", {0: "0"},
                "The router is missing from both counts: it is a matrix of its own, one column of "
                "d weights per expert."),
        Mistake("stored scaled down", {2: "stored * top_k // experts"},
                "Your used count scales the whole stored count by top_k / experts, as if attention, the "
                "router and the norms were shared out among the experts too. Only the experts are "
                "chosen: a token uses all of the rest and top_k experts."),
        Mistake("every expert used", {2: "stored"},
                "A token runs only the top_k experts it is sent to, not all of them: the used "
                "count has top_k experts."),
        Mistake("only the chosen stored", {1: "attention + top_k * expert + router + norms"},
                "Every expert must be stored, because any token may be sent to any of them: the "
                "stored count has all the experts."),
        Mistake("square router", {0: "d * d"},
                "The router is not d x d: it gives one score per expert, so it has d rows and one "
                "column per expert."),
        Mistake("router for the chosen experts", {0: "d * top_k"},
                "Your router has a column only for the top_k experts a token is sent to. It scores "
                "every expert, to find the best ones: one column per expert."),
        Mistake("no norms", {1: "attention + experts * expert + router",
                             2: "attention + top_k * expert + router"},
                "The two RMSNorm gains are missing: they hold d numbers each, stored and used by every token."),
        Mistake("one expert stored", {1: "attention + expert + router + norms"},
                "Your stored count holds one expert. Every expert must be in memory, because any token "
                "may be sent to any of them: `experts` of them, each `expert` parameters."),
        Mistake("router of one number per expert", {0: "experts"},
                "Your router holds one number per expert. It computes every expert's score from the "
                "token's d numbers, so it has d weights for each expert: d \u00d7 experts."),
        Mistake("in the wrong order", {1: "attention + top_k * expert + router + norms",
                                       2: "attention + experts * expert + router + norms"},
                "Your two numbers are the right ones in the wrong order: the function returns (stored, used)."),
    ],
    rtol=0.0, atol=0.5,
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
        Mistake("rounded to the nearest", {2: "round(budget / (per_unit * multiple))"},
                "`round` goes to the nearest whole number, which is sometimes below what the budget "
                "needs (133.33 groups become 133). The narrowest width that holds the budget needs "
                "the next whole number up."),
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
