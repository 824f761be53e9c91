"""Notebook 02's exercises on a mixture of experts: top-2 routing, and a mixture's stored and used
parameters. Kept apart from :mod:`exercises.definitions.ffn`, which lists them among the
notebook's exercises (``DEFINITIONS``) in the order the notebook asks them."""

from __future__ import annotations

import numpy as np

from lib.moe import route as _route
from lib.params import ModelConfig, block_parameters as _block_parameters

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of

NOTEBOOK = "02_feed_forward"


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
