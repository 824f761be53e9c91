"""Retired exercises of notebook 02, "The feed-forward network: widen, bend, narrow": ffn-sublayer
(replaced by one-matrix), block-count (by ffn-width) and top2-weights (by top2-routing, which asks
for the softmax over the kept scores and over all of them). Kept so that notebooks saved from earlier
releases still check them (see :mod:`exercises.retired`); what they share with the live exercises is
imported from :mod:`exercises.definitions.ffn` and :mod:`exercises.definitions.mixture`."""

from __future__ import annotations

import numpy as np

from lib.ffn import ffn as _ffn, worked_example
from lib.params import ModelConfig, block_parameters as _block_parameters

from engine.core.definition import Case, Exercise, Mistake, in_float32, three_of
from exercises.definitions.ffn import NOTEBOOK, _random_weights
from exercises.definitions.mixture import _top2_reference, top2_case, top2_fixed


def _example_args():
    e = worked_example()
    return (e.X, e.W_up, e.b_up, e.W_down, e.b_down)


def _random_ffn_args(rng, lead=None, d=None, d_ff=None):
    """Tokens x, shape lead + (d,), then an FFN's weights for them, all drawn from ``rng``."""
    d = int(rng.integers(2, 7)) if d is None else d
    d_ff = int(rng.integers(3, 13)) if d_ff is None else d_ff
    lead = (int(rng.integers(1, 6)),) if lead is None else lead
    return (rng.normal(0.0, 1.0, lead + (d,)), *_random_weights(rng, d, d_ff, d))


# ---------------------------------------------------------------- the FFN sublayer with its residual

def _sublayer_reference(x, W_up, b_up, W_down, b_down):
    return x + _ffn(x, W_up, b_up, W_down, b_down, activation="relu")


def _sublayer_fixed() -> list[Case]:
    fixed = np.random.default_rng(202)
    e = worked_example()
    return [
        Case(_example_args(), "the example", visible=True),
        Case((e.X[:1].copy(), e.W_up, e.b_up, e.W_down, e.b_down), "cat alone, one token"),
        Case(_random_ffn_args(fixed, (4,), 3, 12), "an output bias b_down that is not zero"),
        Case(_random_ffn_args(fixed, (2, 3), 4, 16), "a batch of 2 texts of 3 tokens"),
        Case((-np.abs(fixed.normal(0.0, 1.0, (3, 2))) - 0.5, np.abs(e.W_up), -np.ones(4), e.W_down,
              np.array([0.25, -0.75])), "every hidden unit off"),
        Case((np.array([[0.5, 1.5, -0.25]]), np.array([[1.0], [0.5], [2.0]]), np.array([0.25]),
              np.array([[0.5, -1.0, 2.0]]), np.array([0.1, 0.2, -0.3])),
             "one token and a hidden layer of one unit"),
        Case(_random_ffn_args(fixed, (3,), 5, 5), "a hidden layer as wide as the tokens"),
        in_float32(Case(_random_ffn_args(fixed, (5,), 2, 6), "float32 tokens and weights")),
    ]


def _sublayer_case(rng) -> Case:
    args = _random_ffn_args(rng)
    return Case(args, f"random weights, x of shape {args[0].shape}, d_ff {args[1].shape[1]}")


SUBLAYER = Exercise(
    id="ffn-sublayer", notebook=NOTEBOOK, title="The FFN sublayer with its residual", name="ffn_sublayer",
    template='''def ffn_sublayer(x, W_up, b_up, W_down, b_down):
    """A ReLU feed-forward network on every token of x, added back to x (the residual)."""
    hidden = ____     # widen and switch: shape (..., d_ff)
    return ____       # narrow back, then add the input
''',
    solution=["np.maximum(0, x @ W_up + b_up)", "x + hidden @ W_down + b_down"],
    reference=_sublayer_reference,
    fixed=_sublayer_fixed,
    draw=three_of(_sublayer_case),
    hints=[
        "The first line is the hidden layer: multiply by the widening matrix, add its bias, and then let the "
        "activation set every negative number to 0. NumPy's element-by-element maximum does that last step.",
        "The second line narrows the hidden layer back to d_model numbers per token with the second matrix and "
        "its bias. The FFN's result is a change; the sublayer returns the input plus that change.",
        "The bias b_up belongs inside the activation (it moves the point where a unit switches on); "
        "b_down is added after the second matrix.",
    ],
    mistakes=[
        Mistake("no residual", {1: "hidden @ W_down + b_down"},
                "You returned the FFN's output alone. A sublayer adds its result to the stream: "
                "return `x` plus the narrowed hidden layer (the residual)."),
        Mistake("no activation", {0: "x @ W_up + b_up"},
                "Your hidden layer keeps its negative numbers. Without the ReLU the two matrices "
                "collapse into one; set every negative hidden number to 0."),
        Mistake("bias after ReLU", {0: "np.maximum(0, x @ W_up) + b_up"},
                "b_up was added after the ReLU. The bias belongs inside: it decides where each unit "
                "switches on."),
        Mistake("ReLU at the end", {1: "x + np.maximum(0, hidden @ W_down + b_down)"},
                "The ReLU belongs to the hidden layer, between the two matrices, not to the output."),
        Mistake("Python max", {0: "max(0, x @ W_up + b_up)"},
                "Your code works only when the hidden layer holds a single number: Python's `max` "
                "compares whole arrays and cannot decide between them. Use NumPy's "
                "element-by-element maximum of 0 and the hidden numbers."),
        Mistake("np.max for the ReLU", {0: "np.max(x @ W_up + b_up, 0)"},
                "`np.max(h, 0)` reads the 0 as an axis: it gives the largest number of each "
                "column of h, not the larger of each number and 0. NumPy's element-by-element "
                "larger of two things is `np.maximum`, a different function from `np.max`."),
        Mistake("not narrowed", {1: "x + hidden + b_down"},
                "Your code works only when d_ff equals d_model: the hidden layer has d_ff numbers per token "
                "and x has d_model, so it must be narrowed back by the second matrix before it is added to x."),
    ],
    retired=True,      # replaced by one-matrix; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- a parameter count

def _block_reference(d, d_ff, gated):
    config = ModelConfig(d_model=int(d), layers=1, d_ff=int(d_ff), vocab=1, gated=bool(gated))
    return np.int64(_block_parameters(config).total)


def _block_fixed() -> list[Case]:
    return [
        Case((128, 512, False), "the example", visible=True),
        Case((768, 3072, False), "d = 768, d_ff = 3,072"),
        Case((768, 2048, True), "gated at d = 768"),
        Case((128, 352, True), "gated at d = 128"),
        Case((6, 12, False), "a tiny block"),
        Case((1024, 1024, False), "d_ff equal to d"),
        Case((np.int64(96), np.int64(200), True), "sizes given as NumPy integers"),
    ]


def _block_case(rng) -> Case:
    d = int(rng.integers(1, 33)) * 32
    f = int(rng.integers(1, 9)) * d // 2
    gated = bool(rng.integers(0, 2))
    return Case((d, f, gated), f"random: d = {d}, d_ff = {f}, gated = {gated}")


BLOCK_COUNT = Exercise(
    id="block-count", notebook=NOTEBOOK, title="Counting one block's parameters", name="block_count",
    template='''def block_count(d, d_ff, gated):
    """Parameters of one block: attention, the FFN (no biases), two RMSNorm gains."""
    attention = ____          # Wq, Wk, Wv and Wo, each d x d
    ffn = ____                # 2 matrices d x d_ff, or 3 when gated
    norms = 2 * d
    return attention + ffn + norms
''',
    solution=["4 * d * d", "(3 if gated else 2) * d * d_ff"],
    reference=_block_reference,
    fixed=_block_fixed,
    draw=three_of(_block_case),
    hints=[
        "A d x d matrix holds d times d numbers; attention has four of them.",
        "Each FFN matrix is d x d_ff. How many matrices there are depends on `gated`: a Python "
        "conditional expression `a if condition else b` chooses between two numbers.",
    ],
    mistakes=[
        Mistake("attention 4d", {0: "4 * d"},
                "Attention's four matrices are d x d each: d times d numbers per matrix, not d."),
        Mistake("one attention matrix", {0: "d * d"},
                "Attention holds four d x d matrices (queries, keys, values and output), not one."),
        Mistake("gate ignored", {1: "2 * d * d_ff"},
                "A gated FFN has a third matrix, W_gate, of the same size as the others: count "
                "three matrices when `gated` is True."),
        Mistake("always three", {1: "3 * d * d_ff"},
                "A plain FFN has two matrices; only the gated one has three."),
    ],
    rtol=0.0, atol=0.5,
    retired=True,      # replaced by ffn-width; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- top-2 routing, the softmax over the kept scores given

TOP2 = Exercise(
    id="top2-weights", notebook=NOTEBOOK, name="top2_weights",
    title="Top-2 routing: which experts, and how much each counts",
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
    fixed=top2_fixed,
    draw=three_of(top2_case),
    hints=[
        "`np.argsort(scores)` lists the experts' numbers from the lowest score to the highest. "
        "Which end of that list holds the two best?",
        "A softmax divides each exponential by their total. Here only the two kept scores take "
        "part, so the total is over `e`, the two exponentials already computed.",
        "The two weights must add up to 1, and the other experts stay at 0.",
    ],
    mistakes=[
        Mistake("softmax over all experts", {1: "e / np.exp(scores - scores[best].max()).sum()"},
                "You divided by the total over all the experts. After keeping the top 2, the "
                "softmax runs over just those two scores, so their weights add up to 1."),
        Mistake("two smallest", {0: "np.argsort(scores)[:2]"},
                "You kept the two lowest scores: `np.argsort` sorts from lowest to highest, so the "
                "best two are at the end of its list."),
        Mistake("not normalised", {1: "e"},
                "The two weights do not add up to 1: divide the exponentials by their total."),
        Mistake("top 1", {0: "np.argmax(scores)"},
                "Only one expert got weight: `np.argmax` finds the single best. Keep the two best scores."),
        Mistake("scores as shares", {1: "scores[best] / scores[best].sum()"},
                "You shared the token in proportion to the scores themselves. A softmax shares it "
                "by the exponentials of the scores, which also works for negative scores."),
    ],
    retired=True,      # replaced by top2-routing; kept so that saved notebooks still check it
)


DEFINITIONS = [SUBLAYER, BLOCK_COUNT, TOP2]
