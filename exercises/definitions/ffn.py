"""Exercises and questions of notebook 02, "The feed-forward network: widen, bend, narrow"."""

from __future__ import annotations

import numpy as np

from lib.ffn import ffn as _ffn, swiglu as _swiglu, worked_example
from lib.moe import route as _route
from lib.params import ModelConfig, block_parameters as _block_parameters
from lib.params import equal_count_gated_width as _equal_width, ffn_parameters as _ffn_parameters

from exercises.core.definition import Case, Contract, Exercise, Mistake, Question, Variant, in_float32

NOTEBOOK = "02_feed_forward"


def _example_args():
    e = worked_example()
    return (e.X, e.W1, e.b1, e.W2, e.b2)


def _random_ffn_args(rng, lead=None, d=None, d_ff=None):
    d = int(rng.integers(2, 7)) if d is None else d
    d_ff = int(rng.integers(3, 13)) if d_ff is None else d_ff
    lead = (int(rng.integers(1, 6)),) if lead is None else lead
    return (rng.normal(0.0, 1.0, lead + (d,)), rng.normal(0.0, 1.0, (d, d_ff)),
            rng.normal(0.0, 1.0, d_ff), rng.normal(0.0, 1.0, (d_ff, d)), rng.normal(0.0, 1.0, d))


# ---------------------------------------------------------------- the FFN sublayer with its residual

def _sublayer_reference(x, W1, b1, W2, b2):
    return x + _ffn(x, W1, b1, W2, b2, activation="relu")


SUBLAYER_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d_model)",
          "W1": "the widening matrix, shape (d_model, d_ff)", "b1": "its bias, shape (d_ff,)",
          "W2": "the narrowing matrix, shape (d_ff, d_model)", "b2": "its bias, shape (d_model,)"},
    returns="x plus the FFN's output, shape (..., d_model)",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
    edges={"one token": "a single token",
           "b2": "an output bias that is not zero",
           "all off": "every hidden unit switched off (negative before ReLU)",
           "one unit": "a hidden layer of a single unit",
           "d_ff = d_model": "a hidden layer as wide as the tokens",
           "batch": "a batch of texts"},
)


def _sublayer_fixed() -> list[Case]:
    fixed = np.random.default_rng(202)
    e = worked_example()
    return [
        Case(_example_args(), "the example", visible=True),
        Case((e.X[:1].copy(), e.W1, e.b1, e.W2, e.b2), "cat alone, one token", covers=("one token",)),
        Case(_random_ffn_args(fixed, (4,), 3, 12), "an output bias b2 that is not zero", covers=("b2",)),
        Case(_random_ffn_args(fixed, (2, 3), 4, 16), "a batch of 2 texts of 3 tokens", covers=("batch",)),
        Case((-np.abs(fixed.normal(0.0, 1.0, (3, 2))) - 0.5, np.abs(e.W1), -np.ones(4), e.W2,
              np.array([0.25, -0.75])), "every hidden unit off", covers=("all off",)),
        Case((np.array([[0.5, 1.5, -0.25]]), np.array([[1.0], [0.5], [2.0]]), np.array([0.25]),
              np.array([[0.5, -1.0, 2.0]]), np.array([0.1, 0.2, -0.3])),
             "one token and a hidden layer of one unit", covers=("one unit", "one token")),
        Case(_random_ffn_args(fixed, (3,), 5, 5), "a hidden layer as wide as the tokens",
             covers=("d_ff = d_model",)),
        in_float32(Case(_random_ffn_args(fixed, (5,), 2, 6), "float32 tokens and weights")),
    ]


def _sublayer_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        args = _random_ffn_args(rng)
        cases.append(Case(args, f"random weights, x of shape {args[0].shape}, d_ff {args[1].shape[1]}"))
    return cases


def _relu(z):
    return np.maximum(0.0, z)


SUBLAYER = Exercise(
    id="ffn-sublayer",
    notebook=NOTEBOOK,
    title="The FFN sublayer with its residual",
    name="ffn_sublayer",
    template='''def ffn_sublayer(x, W1, b1, W2, b2):
    """A ReLU feed-forward network on every token of x, added back to x (the residual)."""
    hidden = ____     # widen and switch: shape (..., d_ff)
    return ____       # narrow back, then add the input
''',
    solution=["np.maximum(0, x @ W1 + b1)", "x + hidden @ W2 + b2"],
    reference=_sublayer_reference,
    contract=SUBLAYER_CONTRACT,
    fixed=_sublayer_fixed,
    draw=_sublayer_draw,
    hints=[
        "The first line is the hidden layer: multiply by the widening matrix, add its bias, and "
        "then let the activation set every negative number to 0. NumPy's element-by-element "
        "maximum does that last step.",
        "The second line narrows the hidden layer back to d_model numbers per token with the "
        "second matrix and its bias. The FFN's result is a change; the sublayer returns the "
        "input plus that change.",
        "The bias b1 belongs inside the activation (it moves the point where a unit switches on); "
        "b2 is added after the second matrix.",
    ],
    mistakes=[
        Mistake("no residual",
                "You returned the FFN's output alone. A sublayer adds its result to the stream: "
                "return `x` plus the narrowed hidden layer (the residual).",
                impl=lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, b2)),
        Mistake("no activation",
                "Your hidden layer keeps its negative numbers. Without the ReLU the two matrices "
                "collapse into one; set every negative hidden number to 0.",
                impl=lambda x, W1, b1, W2, b2: x + (x @ W1 + b1) @ W2 + b2),
        Mistake("bias after ReLU",
                "b1 was added after the ReLU. The bias belongs inside: it decides where each unit "
                "switches on.",
                impl=lambda x, W1, b1, W2, b2: x + (_relu(x @ W1) + b1) @ W2 + b2),
        Mistake("no hidden bias",
                "The hidden bias b1 is missing: add it to `x @ W1` before the ReLU.",
                impl=lambda x, W1, b1, W2, b2: x + _relu(x @ W1) @ W2 + b2),
        Mistake("no output bias",
                "The output bias b2 is missing: the example's b2 is zero, so it looked right there.",
                impl=lambda x, W1, b1, W2, b2: x + _relu(x @ W1 + b1) @ W2),
        Mistake("ReLU at the end",
                "The ReLU belongs to the hidden layer, between the two matrices, not to the output.",
                impl=lambda x, W1, b1, W2, b2: x + _relu(_relu(x @ W1 + b1) @ W2 + b2)),
        Mistake("Python max",
                "Your code works only when the hidden layer holds a single number: Python's `max` "
                "compares whole arrays and cannot decide between them. Use NumPy's "
                "element-by-element maximum of 0 and the hidden numbers.",
                impl=lambda x, W1, b1, W2, b2: x + max(0, x @ W1 + b1) @ W2 + b2),
        Mistake("not narrowed",
                "Your code works only when d_ff equals d_model: the hidden layer has d_ff numbers "
                "per token and x has d_model, so it must be narrowed back by the second matrix "
                "before it is added to x.",
                impl=lambda x, W1, b1, W2, b2: x + _relu(x @ W1 + b1) + b2),
    ],
    wrong=[
        Variant({1: "hidden @ W2 + b2"}, ["row 0", "residual"], "values"),
        Variant({0: "x @ W1 + b1"}, ["row 0", "collapse"], "values"),
        Variant({0: "np.maximum(0, x @ W1) + b1"}, ["row 1", "bias"], "values"),
        Variant({1: "x + hidden @ W2"}, ["hidden test", "b2"], "values"),
        Variant({0: "max(0, x @ W1 + b1)"}, ["ValueError", "maximum", "line 3"], "error"),
        Variant({1: "x + hidden + b2"}, ["ValueError", "narrowed back"], "error"),
        Variant(source="def ffn_sublayer(x, W1, b1, W2, b2):\n    hidden = np.maximum(0, x @ W1 + b1)\n"
                       "    out = x + hidden @ W2 + b2\n", expect=["None", "return"], kind="none"),
        Variant(source="def ffn_sublayer(x, W1, b1, W2, b2):\n    hidden = np.maximum(0, x @ W1 + b1)\n"
                       "    x += hidden @ W2 + b2\n    return x\n",
                expect=["changed its argument `x`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "(x @ W1 + b1).clip(min=0)"}),
        Variant({0: "np.where(x @ W1 + b1 > 0, x @ W1 + b1, 0.0)"}),
        Variant({1: "x + (np.matmul(hidden, W2) + b2)"}),
        Variant({0: "np.maximum(x.dot(W1) + b1, 0.0)", 1: "np.add(x, hidden.dot(W2) + b2)"}),
        Variant(source="def ffn_sublayer(x, W1, b1, W2, b2):\n    hidden = x @ W1\n"
                       "    hidden += b1\n    np.maximum(hidden, 0, out=hidden)\n"
                       "    return x + hidden @ W2 + b2\n"),
    ],
    skills="write the FFN sublayer: widen, ReLU, narrow back, add the residual",
)


# ---------------------------------------------------------------- SwiGLU

SWIGLU_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d_model)",
          "W_gate": "shape (d_model, d_ff)", "W_up": "shape (d_model, d_ff)",
          "W_down": "shape (d_ff, d_model)"},
    returns="shape (..., d_model)",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
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


def _swiglu_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        n, d, f = (int(v) for v in rng.integers(1, 7, 3))
        cases.append(Case((rng.normal(0.0, 1.0, (n, d)), rng.normal(0.0, 1.0, (d, f)),
                           rng.normal(0.0, 1.0, (d, f)), rng.normal(0.0, 1.0, (f, d))),
                          f"random: {n} tokens, d_model {d}, d_ff {f}"))
    return cases


def _sigmoid(z):
    return np.exp(-np.logaddexp(0.0, -z))


def _silu(z):
    return z * _sigmoid(z)


SWIGLU = Exercise(
    id="swiglu",
    notebook=NOTEBOOK,
    title="The gated feed-forward network (SwiGLU)",
    name="swiglu",
    template='''def silu(z):
    """SiLU, element by element: z times the sigmoid of z."""
    return ____


def swiglu(x, W_gate, W_up, W_down):
    """The gated FFN: SiLU of the gate projection times the up projection, then down."""
    hidden = ____     # shape (..., d_ff)
    return hidden @ W_down
''',
    solution=["z / (1 + np.exp(-z))", "silu(x @ W_gate) * (x @ W_up)"],
    reference=_swiglu,
    contract=SWIGLU_CONTRACT,
    fixed=_swiglu_fixed,
    draw=_swiglu_draw,
    hints=[
        "sigmoid(z) = 1 / (1 + e^(\u2212z)), and SiLU multiplies it by z itself; `np.exp` works on "
        "every number of an array at once.",
        "Project x twice, with W_gate and with W_up, both (d_model, d_ff). Only the gate "
        "projection goes through SiLU.",
        "The two projections are combined number by number (the gate scales each hidden unit), "
        "which in NumPy is `*`, not `@`.",
    ],
    mistakes=[
        Mistake("sigmoid only",
                "Your `silu` returns the sigmoid alone, which stays between 0 and 1. SiLU "
                "multiplies it by z.",
                impl=lambda x, Wg, Wu, Wd: ((_sigmoid(x @ Wg)) * (x @ Wu)) @ Wd),
        Mistake("sign of the exponent",
                "Check the sign in the exponent: sigmoid uses e to the power minus z, so that "
                "large positive z gives nearly 1.",
                impl=lambda x, Wg, Wu, Wd: ((x @ Wg) / (1 + np.exp(x @ Wg)) * (x @ Wu)) @ Wd),
        Mistake("overflowing sigmoid",
                "Your SiLU is right for moderate numbers but gives NaN for large ones: e^z "
                "overflows to infinity above z = 709, and infinity / infinity is NaN. Write the "
                "sigmoid as 1 / (1 + e^(\u2212z)): for a large z, e^(\u2212z) only becomes 0.",
                impl=lambda x, Wg, Wu, Wd: ((x @ Wg) * np.exp(x @ Wg) / (1 + np.exp(x @ Wg)) * (x @ Wu)) @ Wd),
        Mistake("no SiLU",
                "The gate projection went in without SiLU. Pass it through `silu` before it "
                "multiplies the up projection.",
                impl=lambda x, Wg, Wu, Wd: ((x @ Wg) * (x @ Wu)) @ Wd),
        Mistake("gate swapped",
                "SiLU went on the up projection. It is the gate projection (W_gate) that goes "
                "through SiLU.",
                impl=lambda x, Wg, Wu, Wd: (_silu(x @ Wu) * (x @ Wg)) @ Wd),
        Mistake("SiLU of the product",
                "SiLU went on the product of the two projections. Only the gate projection goes "
                "through SiLU; the up projection is multiplied in afterwards, as it is.",
                impl=lambda x, Wg, Wu, Wd: _silu((x @ Wg) * (x @ Wu)) @ Wd),
        Mistake("matrix product",
                "Your code runs only when every size is equal: the gate multiplies the up "
                "projection number by number (`*`). `@` is a matrix product, which needs other "
                "shapes and means something else.",
                impl=lambda x, Wg, Wu, Wd: (_silu(x @ Wg) @ (x @ Wu)) @ Wd),
    ],
    wrong=[
        Variant({0: "1 / (1 + np.exp(-z))"}, ["row 0", "sigmoid alone"], "values"),
        Variant({0: "z / (1 + np.exp(z))"}, ["row 0", "sign"], "values"),
        Variant({1: "(x @ W_gate) * (x @ W_up)"}, ["row 0", "without SiLU"], "values"),
        Variant({1: "silu(x @ W_up) * (x @ W_gate)"}, ["row 0", "gate projection"], "values"),
        Variant({1: "silu(x @ W_gate) @ (x @ W_up)"}, ["ValueError", "number by number", "line 8"],
                "error"),
        Variant({1: "silu((x @ W_gate) * (x @ W_up))"}, ["row 0", "product"], "values"),
        Variant({0: "z * np.exp(z) / (1 + np.exp(z))"}, ["NaN", "hidden test", "709"], "nan"),
        Variant({0: "z * np.sigmoid(z)"}, ["AttributeError", "line 3"], "error"),
    ],
    alternatives=[
        Variant({0: "z * (1 / (1 + np.exp(-z)))"}),
        Variant({0: "z * 0.5 * (1 + np.tanh(z / 2))"}),
        Variant({1: "(x @ W_up) * silu(x @ W_gate)"}),
        Variant({1: "np.multiply(silu(x.dot(W_gate)), x.dot(W_up))"}),
    ],
    skills="write SiLU and the gated feed-forward network",
)


# ---------------------------------------------------------------- top-2 routing

EXAMPLE_SCORES = np.array([2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28])


def _top2_reference(scores):
    scores = np.asarray(scores, dtype=float)
    routing = _route(scores, top_k=2)
    weights = np.zeros_like(scores)
    weights[routing.experts] = routing.shares
    return weights


TOP2_CONTRACT = Contract(
    args={"scores": "one token's router scores, shape (E,), E >= 2 experts, all different "
                    "(ties are not promised), of any size"},
    returns="the weight of each expert, shape (E,): two positive weights summing to 1, zeros elsewhere",
    ndims=(1,),
    dtypes=("float64", "float32"),
    edges={"two experts": "only two experts",
           "negative": "every score negative",
           "large": "scores in the hundreds",
           "far ahead": "one expert ahead of the second by more than exp can hold",
           "best last": "the best expert the last one"},
)


def _top2_fixed() -> list[Case]:
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


def _top2_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        n = int(rng.integers(3, 17))
        cases.append(Case((rng.normal(0.0, 2.0, n),), f"random scores for {n} experts"))
    return cases


def _softmax_all(scores):
    kept = np.argsort(scores)[-2:]
    weights = np.zeros_like(scores)
    e = np.exp(scores - scores.max())
    weights[kept] = e[kept] / e.sum()
    return weights


def _two_smallest(scores):
    kept = np.argsort(scores)[:2]
    weights = np.zeros_like(scores)
    e = np.exp(scores[kept] - scores[kept].max())
    weights[kept] = e / e.sum()
    return weights


def _not_normalised(scores):
    kept = np.argsort(scores)[-2:]
    weights = np.zeros_like(scores)
    weights[kept] = np.exp(scores[kept] - scores[kept].max())
    return weights


def _top1(scores):
    weights = np.zeros_like(scores)
    weights[np.argmax(scores)] = 1.0
    return weights


def _shares_of_scores(scores):
    kept = np.argsort(scores)[-2:]
    weights = np.zeros_like(scores)
    weights[kept] = scores[kept] / scores[kept].sum()
    return weights


TOP2 = Exercise(
    id="top2-weights",
    notebook=NOTEBOOK,
    title="Top-2 routing: which experts, and how much each counts",
    name="top2_weights",
    template='''def top2_weights(scores):
    """One token's router scores (one per expert) -> weight of each expert.

    The two best-scored experts share the token by a softmax over their two scores;
    every other expert gets 0.
    """
    best = ____                              # the numbers of the two largest scores
    e = np.exp(scores[best] - scores[best].max())
    weights = np.zeros_like(scores)
    weights[best] = ____                     # softmax over the two kept scores
    return weights
''',
    solution=["np.argsort(scores)[-2:]", "e / e.sum()"],
    reference=_top2_reference,
    contract=TOP2_CONTRACT,
    fixed=_top2_fixed,
    draw=_top2_draw,
    hints=[
        "`np.argsort(scores)` lists the experts' numbers from the lowest score to the highest. "
        "Which end of that list holds the two best?",
        "A softmax divides each exponential by their total. Here only the two kept scores take "
        "part, so the total is over `e`, the two exponentials already computed.",
        "The two weights must add up to 1, and the other experts stay at 0.",
    ],
    mistakes=[
        Mistake("softmax over all experts",
                "You divided by the total over all the experts. After keeping the top 2, the "
                "softmax runs over just those two scores, so their weights add up to 1.",
                impl=_softmax_all),
        Mistake("two smallest",
                "You kept the two lowest scores: `np.argsort` sorts from lowest to highest, so the "
                "best two are at the end of its list.",
                impl=_two_smallest),
        Mistake("not normalised",
                "The two weights do not add up to 1: divide the exponentials by their total.",
                impl=_not_normalised),
        Mistake("top 1",
                "Only one expert got weight: `np.argmax` finds the single best. Keep the two "
                "best scores.",
                impl=_top1),
        Mistake("scores as shares",
                "You shared the token in proportion to the scores themselves. A softmax shares it "
                "by the exponentials of the scores, which also works for negative scores.",
                impl=_shares_of_scores),
    ],
    wrong=[
        Variant({0: "np.argsort(scores)[:2]"}, ["position 0", "lowest"], "values"),
        Variant({1: "e / np.exp(scores - scores[best].max()).sum()"}, ["position 0", "all the experts"],
                "values"),
        Variant({1: "e"}, ["position 0", "add up to 1"], "values"),
        Variant({0: "np.argmax(scores)"}, ["position 0", "two best"], "values"),
        Variant({1: "scores[best] / scores[best].sum()"}, ["position 0", "exponentials"], "values"),
        Variant({0: "scores.sort()[-2:]"}, ["TypeError", "line 7"], "error"),
        Variant(source='''def top2_weights(scores):
    best = np.argsort(scores)[-2:]
    e = np.exp(scores[best] - scores[best].max())
    weights = scores
    weights[:] = 0
    weights[best] = e / e.sum()
    return weights
''', expect=["changed its argument `scores`", "caller", "new array"], kind="inplace"),
        Variant(source='''def top2_weights(scores):
    best = np.argsort(scores)[-2:]
    e = np.exp(scores[best] - scores[best].min())
    weights = np.zeros_like(scores)
    weights[best] = e / e.sum()
    return weights
''', expect=["NaN", "hidden test", "far ahead"], kind="nan"),
    ],
    alternatives=[
        Variant({0: "np.argsort(-scores)[:2]"}),
        Variant({0: "np.argpartition(scores, -2)[-2:]"}),
        Variant({1: "1 / (1 + np.exp(scores[best][::-1] - scores[best]))"}),
        Variant({0: "scores.argsort()[::-1][:2]", 1: "e / np.sum(e)"}),
    ],
    skills="route a token to its top-2 experts and share it by a softmax over their scores",
)


# ---------------------------------------------------------------- a mixture's stored and used parameters

def _moe_reference(d, d_ff, experts, top_k):
    config = ModelConfig(d_model=int(d), layers=1, d_ff=int(d_ff), vocab=1, experts=int(experts),
                         top_k=int(top_k))
    count = _block_parameters(config)
    return np.array([count.total, count.active], dtype=np.int64)


def _moe_counts(d, d_ff, experts, top_k, router=None, used_experts=None, stored_experts=None, norms=True):
    """Counts made with one of the usual mistakes (the router left out or the wrong size, the wrong
    number of experts, the norms forgotten)."""
    d, d_ff, experts, top_k = (int(n) for n in (d, d_ff, experts, top_k))
    router = d * experts if router is None else router
    shared = 4 * d * d + (2 * d if norms else 0)
    stored = shared + router + (experts if stored_experts is None else stored_experts) * 2 * d * d_ff
    used = shared + router + (top_k if used_experts is None else used_experts) * 2 * d * d_ff
    return np.array([stored, used], dtype=np.int64)


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


def _moe_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d = int(rng.integers(1, 17)) * 64
        experts = int(rng.integers(2, 65))
        top_k = int(rng.integers(1, experts))
        d_ff = int(rng.integers(1, 9)) * d // 2
        cases.append(Case((d, d_ff, experts, top_k),
                          f"random: d = {d}, d_ff = {d_ff}, top {top_k} of {experts} experts"))
    return cases


MOE_COUNTS = Exercise(
    id="moe-counts",
    notebook=NOTEBOOK,
    title="A mixture of experts: stored and used",
    name="moe_block_counts",
    template='''def moe_block_counts(d, d_ff, experts, top_k):
    """One block with a mixture of experts: (parameters stored, parameters one token uses).
    Attention: four d x d matrices. Each expert: a plain FFN of width d_ff, no biases.
    The router: one score per expert, computed from the token's d numbers. Two RMSNorm gains."""
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
    draw=_moe_draw,
    hints=[
        "The router turns a token's d numbers into one score per expert: it is a matrix, like "
        "the others. How many rows and columns does it need?",
        "Any token may be sent to any expert, so every expert has to be in memory. A single token "
        "runs only the experts it is sent to.",
        "Every token goes through attention, the norms and the router before it reaches its "
        "experts: those parts count in both numbers.",
    ],
    mistakes=[
        Mistake("router not used",
                "Your count of what a token uses leaves out the router. Every token is scored by "
                "the router before it is sent anywhere, so the router's weights are used too.",
                impl=lambda d, f, e, k: np.array([_moe_counts(d, f, e, k)[0],
                                                  _moe_counts(d, f, e, k, router=0)[1]])),
        Mistake("no router",
                "The router is missing from both counts: it is a matrix of its own, one column of "
                "d weights per expert.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, router=0)),
        Mistake("every expert used",
                "A token runs only the top_k experts it is sent to, not all of them: the used "
                "count has top_k experts.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, used_experts=e)),
        Mistake("only the chosen stored",
                "Every expert must be stored, because any token may be sent to any of them: the "
                "stored count has all the experts.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, stored_experts=k)),
        Mistake("square router",
                "The router is not d x d: it gives one score per expert, so it has d rows and one "
                "column per expert.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, router=int(d) * int(d))),
        Mistake("router for the chosen experts",
                "Your router has a column only for the top_k experts a token is sent to. It scores "
                "every expert, to find the best ones: one column per expert.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, router=int(d) * int(k))),
        Mistake("no norms",
                "The two RMSNorm gains are missing: they hold d numbers each, stored and used by "
                "every token.",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k, norms=False)),
        Mistake("in the wrong order",
                "Your two numbers are the right ones in the wrong order: the function returns "
                "(stored, used).",
                impl=lambda d, f, e, k: _moe_counts(d, f, e, k)[::-1]),
    ],
    wrong=[
        Variant({2: "attention + top_k * expert + norms"}, ["position 1", "leaves out the router"],
                "values"),
        Variant({2: "stored"}, ["position 1", "only the top_k"], "values"),
        Variant({1: "attention + top_k * expert + router + norms"}, ["position 0", "every expert must be stored"],
                "values"),
        Variant({0: "d * d"}, ["position 0", "one column per expert"], "values"),
        Variant({0: "0"}, ["position 0", "missing from both"], "values"),
        Variant({0: "d * top_k"}, ["position 0", "scores every expert"], "values"),
        Variant({1: "attention + experts * expert + router", 2: "attention + top_k * expert + router"},
                ["position 0", "RMSNorm gains"], "values"),
        Variant(source='''def moe_block_counts(d, d_ff, experts, top_k):
    shared = 4 * d * d + 2 * d + d * experts
    return shared + top_k * 2 * d * d_ff, shared + experts * 2 * d * d_ff
''', expect=["position 0", "wrong order"], kind="values"),
        Variant({0: "d * n_experts"}, ["NameError", "line 8"], "error"),
    ],
    alternatives=[
        Variant({0: "experts * d"}),
        Variant({1: "norms + router + attention + expert * experts",
                 2: "stored - (experts - top_k) * expert"}),
        Variant({1: "4 * d * d + 2 * d * d_ff * experts + d * experts + 2 * d"}),
    ],
    atol=0.5,
    rtol=0.0,
    skills="count what a mixture of experts stores and what one token uses",
)


# ---------------------------------------------------------------- a parameter count

def _block_reference(d, d_ff, gated):
    config = ModelConfig(d_model=int(d), layers=1, d_ff=int(d_ff), vocab=1, gated=bool(gated))
    return np.int64(_block_parameters(config).total)


BLOCK_CONTRACT = Contract(
    args={"d": "a whole number >= 1 (a Python int or a NumPy integer)",
          "d_ff": "a whole number >= 1", "gated": "True or False"},
    returns="a whole number",
    dtypes=(),
    edges={"gated": "a gated block", "plain": "a plain block", "d_ff = d": "d_ff equal to d",
           "tiny": "a tiny block", "numpy ints": "sizes given as NumPy integers"},
)


def _block_fixed() -> list[Case]:
    return [
        Case((128, 512, False), "the example", visible=True, covers=("plain",)),
        Case((768, 3072, False), "d = 768, d_ff = 3,072"),
        Case((768, 2048, True), "gated at d = 768", covers=("gated",)),
        Case((128, 352, True), "gated at d = 128"),
        Case((6, 12, False), "a tiny block", covers=("tiny",)),
        Case((1024, 1024, False), "d_ff equal to d", covers=("d_ff = d",)),
        Case((np.int64(96), np.int64(200), True), "sizes given as NumPy integers",
             covers=("numpy ints",)),
    ]


def _block_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d = int(rng.integers(1, 33)) * 32
        f = int(rng.integers(1, 9)) * d // 2
        gated = bool(rng.integers(0, 2))
        cases.append(Case((d, f, gated), f"random: d = {d}, d_ff = {f}, gated = {gated}"))
    return cases


BLOCK_COUNT = Exercise(
    id="block-count",
    notebook=NOTEBOOK,
    title="Counting one block's parameters",
    name="block_count",
    template='''def block_count(d, d_ff, gated):
    """Parameters of one block: attention, the FFN (no biases), two RMSNorm gains."""
    attention = ____          # Wq, Wk, Wv and Wo, each d x d
    ffn = ____                # 2 matrices d x d_ff, or 3 when gated
    norms = 2 * d
    return attention + ffn + norms
''',
    solution=["4 * d * d", "(3 if gated else 2) * d * d_ff"],
    reference=_block_reference,
    contract=BLOCK_CONTRACT,
    fixed=_block_fixed,
    draw=_block_draw,
    hints=[
        "A d x d matrix holds d times d numbers; attention has four of them.",
        "Each FFN matrix is d x d_ff. How many matrices there are depends on `gated`: a Python "
        "conditional expression `a if condition else b` chooses between two numbers.",
    ],
    mistakes=[
        Mistake("attention 4d",
                "Attention's four matrices are d x d each: d times d numbers per matrix, not d.",
                impl=lambda d, f, g: 4 * d + (3 if g else 2) * d * f + 2 * d),
        Mistake("one attention matrix",
                "Attention holds four d x d matrices (queries, keys, values and output), not one.",
                impl=lambda d, f, g: d * d + (3 if g else 2) * d * f + 2 * d),
        Mistake("gate ignored",
                "A gated FFN has a third matrix, W_gate, of the same size as the others: count "
                "three matrices when `gated` is True.",
                impl=lambda d, f, g: 4 * d * d + 2 * d * f + 2 * d),
        Mistake("always three",
                "A plain FFN has two matrices; only the gated one has three.",
                impl=lambda d, f, g: 4 * d * d + 3 * d * f + 2 * d),
        Mistake("gated backwards",
                "Your count has three FFN matrices for a plain block and two for a gated one: "
                "the other way round.",
                impl=lambda d, f, g: 4 * d * d + (2 if g else 3) * d * f + 2 * d),
    ],
    wrong=[
        Variant({0: "4 * d"}, ["expected 196,864", "d times d"], "values"),
        Variant({0: "d * d"}, ["expected 196,864", "four"], "values"),
        Variant({1: "2 * d * d_ff"}, ["hidden test", "third matrix"], "values"),
        Variant({1: "3 * d * d_ff"}, ["expected 196,864", "two matrices"], "values"),
        Variant({1: "(2 if gated else 3) * d * d_ff"}, ["expected 196,864", "other way round"], "values"),
        Variant({1: "(3 if gated else 2) * d * dff"}, ["NameError", "line 4"], "error"),
    ],
    alternatives=[
        Variant({0: "4 * d ** 2"}),
        Variant({1: "2 * d * d_ff + gated * d * d_ff"}),
        Variant({0: "d * d * 4", 1: "d * d_ff * (2 + int(gated))"}),
    ],
    atol=0.5,
    rtol=0.0,
    skills="count a block's parameters, plain or gated",
)


# ---------------------------------------------------------------- questions

PREDICT_ALONE = Question(
    id="ffn-predict-alone",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="The FFN computes ReLU(X @ W1 + b1) @ W2 + b2, where X holds three tokens, cat, dog "
           "and car, one per row. Then you run it on cat alone. Compared with cat's row when all "
           "three went through together, cat's result is...",
    choices=["exactly the same", "slightly different", "completely different"],
    answer=0,
    explanation="Every step works on one row at a time: `X @ W1` gives each row its own hidden "
                "units, the bias and ReLU act number by number, and `@ W2` again works row by row. "
                "Nothing ever mixes rows, so cat's result cannot depend on dog or car. That is "
                "what position-wise means; mixing the tokens is attention's job.",
    reveals=[
        r"\b(each|every) (position|token|row)\b[^.]{0,40}\b(its|their) own\b",
        r"\bposition-?wise\b",
        r"\bone (row|token|position) at a time\b",
        r"\bnothing (ever )?mixes (the )?(rows|tokens)\b",
        r"\bno token ever sees another\b",
    ],
)

SHAPE_HIDDEN = Question(
    id="ffn-shape-hidden",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="X is (3, 2): three tokens of two numbers. W1 is (2, 4). What shape is the hidden "
           "layer X @ W1 + b1?",
    answer=(3, 4),
    explanation="(3, 2) @ (2, 4) gives (3, 4): one row per token, as before, and now 4 numbers "
                "in each row, one per hidden unit. The bias b1 (4 numbers) is added to every row.",
)

NUMBER_ON = Question(
    id="ffn-number-cat-on",
    notebook=NOTEBOOK,
    kind="number",
    prompt="cat = [2, 0]. With W1 = [[1, -1, 0, 1], [0, 1, -1, 1]] and b1 = [0, 0, 1, -2], cat's "
           "four hidden units before ReLU are cat @ W1 + b1. How many are on (above 0) after ReLU?",
    answer=2,
    tol=0.0,
    explanation="cat @ W1 takes 2 times W1's first row: [2, -2, 0, 2]. Adding b1 gives "
                "[2, -2, 1, 0]. ReLU keeps 2 and 1 and turns -2 into 0; the last unit is exactly "
                "0, which is not above 0. So two units are on.",
    reveals=[
        r"\[\s*2(\.0)?,\s*-2(\.0)?,\s*1(\.0)?,\s*0(\.0)?\s*\]",
        r"\b(2|two)( of 4)? units (are )?on\b",
        r"\bunits on:? 2 of 4\b",
    ],
)

PREDICT_NO_ACTIVATION = Question(
    id="ffn-predict-no-activation",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Take the ReLU out, so the FFN is (x @ W1 + b1) @ W2 + b2, and make it 64 hidden units "
           "wide instead of 4. Tokens still have 2 numbers. Compared with a single 2 x 2 matrix "
           "plus a bias, the 64-wide layer can compute...",
    choices=["nothing more: it is a 2 x 2 matrix plus a bias",
             "a little more, because it has more parameters",
             "much more: 64 units can draw 64 bends"],
    answer=0,
    explanation="Multiplying by W1 and then by W2 is the same as multiplying once by W1 @ W2, a "
                "2 x 2 matrix, and the biases add up to one bias. Extra width without an activation "
                "adds parameters but no new behaviour; the bends come only from the activation.",
    reveals=[
        r"\bcollapses? into one\b",
        r"\bsame as multiplying once\b",
        r"\bbuys exactly what a \S+ × \S+ matrix buys\b",
    ],
)

NUMBER_FAIR = Question(
    id="ffn-number-fair-share",
    notebook=NOTEBOOK,
    kind="number",
    prompt="4,096 tokens are each sent to their top 2 of 8 experts. If the router were perfectly "
           "fair, how many tokens would each expert receive?",
    answer=1024,
    tol=0.5,
    explanation="Each token makes 2 visits, so there are 4,096 × 2 = 8,192 visits to share among "
                "8 experts: 1,024 each.",
    reveals=[
        r"\b4,?096\s*[×x]\s*2\s*/\s*8\b",
    ],
)

DEFINITIONS = [SUBLAYER, SWIGLU, TOP2, MOE_COUNTS, BLOCK_COUNT, PREDICT_ALONE, SHAPE_HIDDEN, NUMBER_ON,
               PREDICT_NO_ACTIVATION, NUMBER_FAIR]


# ---------------------------------------------------------------- skip-ahead set (exercises/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("ffn-out-hidden-shape", NOTEBOOK, "shape",
             "x has shape (3, 5, 64) and the FFN's first matrix W1 has shape (64, 256). What is "
             "the shape of the hidden layer, before W2?",
             answer=(3, 5, 256),
             explanation="Every token's 64 numbers become 256; the batch and token axes stay."),
    Question("ffn-out-count", NOTEBOOK, "number",
             "How many parameters has a plain FFN without biases at d_model = 512 and d_ff = 2048?",
             answer=float(_ffn_parameters(512, 2048)), rtol=1e-9,
             explanation="Two matrices, 512 \u00d7 2048 and 2048 \u00d7 512."),
    Question("ffn-out-linear", NOTEBOOK, "predict",
             "Take the activation out of an FFN (x @ W1 + b1, then @ W2 + b2). What is left?",
             choices=["One linear map: a single matrix and a bias would do the same",
                      "A network that can still bend, only more gently",
                      "Nothing: the output is zero",
                      "The same FFN, just faster"],
             answer=0,
             explanation="Two linear maps in a row are one linear map.",
             reveals=[r"\bcollapses? into one\b",
                      r"\bsame as multiplying once\b",
                      r"\b(one|a single) linear map\b",
                      r"\bsingle matrix and a bias would do the same\b"]),
    Question("ffn-out-gated-width", NOTEBOOK, "number",
             "A gated FFN (SwiGLU) has three matrices. At d_model = 768, what hidden width keeps "
             "the parameter count of a plain FFN with d_ff = 3072?",
             answer=float(_equal_width(3072)), rtol=1e-9,
             explanation="Three matrices instead of two: two thirds of the width."),
]
