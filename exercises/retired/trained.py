"""Retired exercises of notebook 05, "Inside a trained model": perplexity (replaced by
perplexity-logits), leave-out-blocks (by leave-one-out) and leave-one-out (by ablate-three-ways). Kept so that notebooks saved from
earlier releases still check them (see :mod:`exercises.retired`); what they share with the live
exercises is imported from :mod:`exercises.definitions.trained`."""

from __future__ import annotations

import numpy as np

from engine.core.definition import Case, Exercise, Mistake, in_float32, three_of
from exercises.definitions.trained import (NOTEBOOK, _leave_one_out_case, _leave_one_out_fixed,
                                           _leave_one_out_reference, _run_blocks_reference, _toy_blocks)


# ---------------------------------------------------------------- perplexity

EXAMPLE_PROBS = np.array([[0.5, 0.25, 0.25, 0.0],
                          [0.1, 0.8, 0.05, 0.05],
                          [0.25, 0.25, 0.25, 0.25]])
EXAMPLE_TARGETS = np.array([0, 1, 3])


def _perplexity_reference(probs, targets):
    right = np.asarray(probs, dtype=float)[np.arange(len(targets)), np.asarray(targets)]
    return np.exp(-np.mean(np.log(right)))


def _random_probs(rng, n, vocab):
    return rng.dirichlet(np.full(vocab, rng.uniform(0.3, 3.0)), size=n)


def _trained_probs(n=40):
    """The trained model's probabilities on the first n + 1 tokens of the held-out text."""
    from lib import model
    ids = model.heldout().ids[: n + 1]
    return model.probabilities(model.forward(ids))[:-1], ids[1:].copy()


def _with_right(probs, targets, right):
    """Rows of ``probs`` changed so that row i gives its target the probability right[i] (the
    rest of the row shared in proportion, so each row still sums to 1)."""
    probs = np.array(probs, dtype=float)
    rows = np.arange(len(targets))
    others = probs.copy()
    others[rows, targets] = 0.0
    others *= ((1.0 - np.asarray(right)) / others.sum(axis=1))[:, None]
    others[rows, targets] = right
    return others


def _perplexity_fixed() -> list[Case]:
    vocab = 6
    sure = np.eye(vocab)[[2, 0, 5, 1]]
    spread = np.random.default_rng(55)
    square = spread.dirichlet(np.ones(4), size=4)
    tall_targets = np.array([0, 2, 1, 1, 0, 2, 2])
    return [
        Case((EXAMPLE_PROBS.copy(), EXAMPLE_TARGETS.copy()), "the example", visible=True),
        Case((np.full((5, 11), 1 / 11), np.array([0, 3, 10, 7, 7])),
             "a model that spreads its probability evenly over 11 words"),
        Case((sure * 0.97 + 0.005, np.array([2, 0, 5, 1])), "a model that is nearly always sure and right"),
        Case((np.array([[0.2, 0.7, 0.1]]), np.array([2])), "a single prediction"),
        Case(_trained_probs(), "the trained model on the held-out text"),
        Case((_with_right(spread.dirichlet(np.ones(5), size=3), np.array([4, 1, 0]), [1e-30, 0.4, 1e-12]),
              np.array([4, 1, 0])), "tiny probabilities on the right word"),
        Case((_with_right(spread.dirichlet(np.ones(5), size=3), np.array([2, 2, 3]),
                          [1 - 1e-9, 1 - 1e-12, 0.5]), np.array([2, 2, 3])),
             "probabilities within a billionth of 1"),
        Case((square, np.array([3, 1, 0, 2])), "4 predictions over 4 words"),
        Case((spread.dirichlet(np.ones(3), size=7), tall_targets), "7 predictions over 3 words"),
        Case((spread.dirichlet(np.ones(8), size=5), np.array([7, 0, 3, 3, 6], dtype=np.int32)),
             "targets as 32-bit integers"),
        in_float32(Case((spread.dirichlet(np.full(6, 2.0), size=4), np.array([5, 2, 0, 4])),
                        "float32 probabilities")),
    ]


def _perplexity_case(rng) -> Case:
    n, v = int(rng.integers(2, 30)), int(rng.integers(3, 60))
    return Case((_random_probs(rng, n, v), rng.integers(0, v, size=n)),
                f"random probabilities, {n} predictions over {v} words")


PERPLEXITY = Exercise(
    id="perplexity", notebook=NOTEBOOK, title="Perplexity from probabilities", name="perplexity",
    template='''def perplexity(probs, targets):
    """How surprised a model is, on average. probs has one row per prediction (each row sums
    to 1 over the words); targets[i] is the number of the word that really came next in row i."""
    right = ____      # the probability each row gave to its right word: one number per row
    return ____       # e to the power of the average of -log(right)
''',
    solution=["probs[np.arange(len(targets)), targets]", "np.exp(-np.mean(np.log(right)))"],
    reference=_perplexity_reference,
    fixed=_perplexity_fixed,
    draw=three_of(_perplexity_case),
    hints=[
        "First pick one number from each row: in row i, the column targets[i]. Indexing with two arrays of the "
        "same length, one of row numbers and one of column numbers, does exactly that.",
        "The row numbers are 0, 1, 2, ... up to the number of predictions; `np.arange` makes them.",
        "Then the loss of each prediction is -log of its probability. Average the losses, and undo the log "
        "with `np.exp`: a model that gives every right word probability 1/k has perplexity k.",
    ],
    mistakes=[
        Mistake("sum", {1: "np.exp(-np.sum(np.log(right)))"},
                "You added up the losses instead of averaging them, so the result grows with the "
                "length of the text. Take the mean."),
        Mistake("arithmetic mean", {1: "1 / np.mean(right)"},
                "You divided 1 by the plain average of the probabilities. Perplexity averages the "
                "logs (a geometric mean), so one very unlikely right word weighs much more."),
        Mistake("whole columns", {0: "probs[:, targets]"},
                "`probs[:, targets]` takes whole columns, a probability for every row and every "
                "target. Pair row i with targets[i] only, using row numbers beside the targets."),
        Mistake("whole rows", {0: "probs[targets]"},
                "`probs[targets]` picks whole rows, one per target, as if the targets were row "
                "numbers. Give two indices: the row numbers, and the targets as column numbers."),
        Mistake("swapped indices", {0: "probs[targets, np.arange(len(targets))]"},
                "Your code works only when there are as many predictions as words, and then gives the wrong "
                "numbers: the row numbers and the targets are swapped. The first index picks the row (the "
                "prediction, 0, 1, 2, ...), the second the column (the target word of that row)."),
        Mistake("clipped", {1: "np.exp(-np.mean(np.log(np.clip(right, 1e-10, 1))))"},
                "You clipped the probabilities (to avoid log 0, perhaps). That changes a tiny probability on "
                "the right word, and the perplexity with it: a model that gave the right word 1e-30 was that "
                "surprised. The right word's probability is above 0 here, so its log is finite."),
    ],
    rtol=1e-6,
    retired=True,      # replaced by perplexity-logits; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- leave a block out

def _run_blocks_fixed() -> list[Case]:
    from lib import model
    ids = model.heldout().ids[:12]
    x = model.embed(ids).astype(np.float64)
    trained = model.blocks()
    fixed = np.random.default_rng(5)
    return [
        Case((x.copy(), trained, {1}), "the example", visible=True),
        Case((x.copy(), trained, set()), "nothing left out"),
        Case((x.copy(), trained, {0, 1, 2, 3}), "every block left out"),
        Case((x.copy(), trained, {0}), "the first block left out"),
        Case((x.copy(), trained, {3}), "the last block left out"),
        Case((fixed.normal(size=(3, 5)), _toy_blocks(fixed, 5, 6), [2, 5]),
             "six small blocks, skip given as a list"),
    ]


def _run_blocks_case(rng) -> Case:
    d, n = int(rng.integers(2, 9)), int(rng.integers(1, 7))
    skip = {int(i) for i in rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)}
    return Case((rng.normal(size=(int(rng.integers(1, 6)), d)), _toy_blocks(rng, d, n), skip),
                f"random blocks: {n} blocks, leave out {sorted(skip)}")


RUN_BLOCKS = Exercise(
    id="leave-out-blocks", notebook=NOTEBOOK, title="Leave blocks out", name="run_blocks",
    template='''def run_blocks(x, blocks, skip):
    """Run the stream x through the blocks in order, leaving out those whose number (0, 1, 2, ...)
    is in skip. Each block is a function: block(x) returns the new stream, residual included."""
    for number, block in enumerate(blocks):
        if ____:          # this block is left out
            continue
        x = ____
    return x
''',
    solution=["number in skip", "block(x)"],
    reference=_run_blocks_reference,
    fixed=_run_blocks_fixed,
    draw=three_of(_run_blocks_case),
    hints=[
        "A block that is left out does nothing at all: the stream goes on to the next block as "
        "it is. So the loop only has to decide, block by block, whether to run it.",
        "`skip` holds the numbers of the blocks to leave out, counted from 0 like `enumerate`. Python's `in` "
        "tests whether a number is among them; `continue` then jumps to the next block.",
        "Each block already adds its result to the stream it reads (its residual connection is "
        "inside), so running it means replacing x by what the block returns.",
    ],
    mistakes=[
        Mistake("inverted test", {0: "number not in skip"},
                "Your loop runs only the blocks that are in `skip`, the ones to leave out. Run the others."),
        Mistake("counted from one", {0: "number + 1 in skip"},
                "You counted the blocks from 1. `enumerate` and `skip` both count from 0: block 0 is the first."),
        Mistake("added twice", {1: "x + block(x)"},
                "A block already returns the stream with its own result added (x + attention, then "
                "+ FFN). Adding x again counts the stream twice."),
        Mistake("from the start", '''def run_blocks(x, blocks, skip):
    out = x
    for number, block in enumerate(blocks):
        if number in skip:
            continue
        out = block(x)
    return out
''',
                "Each block must read the stream as the previous block left it. Your loop reads "
                "the original x every time, so only the last block counts."),
    ],
    rtol=1e-9, atol=1e-9,
    retired=True,      # replaced by leave-one-out; kept so that saved notebooks still check it
)


LEAVE_ONE_OUT = Exercise(
    id="leave-one-out", notebook=NOTEBOOK, title="Leave each block out in turn", name="leave_one_out",
    template='''def leave_one_out(x, blocks, score):
    """For each block in turn, leave it out: run the stream x through the OTHER blocks, in their
    order, and score the stream that comes out with score(stream). Each block is a function,
    block(stream), that returns the new stream with its residual already added. Returns one
    score per block left out, in a list."""
    scores = []
    for left_out in range(len(blocks)):
        kept = ____               # every block but block number `left_out`, in their order
        stream = x
        for block in kept:
            stream = block(stream)
        scores.append(____)       # the score of the stream the kept blocks produced
    return scores
''',
    solution=["blocks[:left_out] + blocks[left_out + 1:]", "score(stream)"],
    reference=_leave_one_out_reference,
    fixed=_leave_one_out_fixed,
    draw=three_of(_leave_one_out_case),
    hints=[
        "Leaving a block out means the stream skips it: the block before it hands its stream straight to the "
        "block after it. So the blocks to run are those before `left_out` and those after it, in that order.",
        "Slices pick runs of a list: `blocks[:k]` stops just before number k, `blocks[k:]` starts "
        "at number k. Adding two lists joins them.",
        "Every run starts again from x (the line after the blank), and what gets scored is where "
        "that run ended.",
    ],
    mistakes=[
        Mistake("kept every block", {0: "blocks[:left_out] + blocks[left_out:]"},
                "Your list of kept blocks still holds the block that should be left out, so every "
                "score is the whole model's. The second slice must start one block later."),
        Mistake("only the later blocks", {0: "blocks[left_out + 1:]"},
                "Your list drops the blocks before the one left out as well: keep those before it "
                "and those after it."),
        Mistake("stopped at the gap", {0: "blocks[:left_out]"},
                "Your list stops at the block left out and drops everything after it: the blocks "
                "after it run too, on the stream the earlier ones left."),
        Mistake("only the left-out block", {0: "blocks[left_out:left_out + 1]"},
                "Your list holds only the block that should be left out. Keep the others instead."),
        Mistake("counted from one", {0: "blocks[:left_out - 1] + blocks[left_out:]"},
                "You left out the block before the intended one: `left_out` counts from 0, like "
                "the positions in a list."),
        Mistake("dropped two", {0: "blocks[:left_out] + blocks[left_out + 2:]"},
                "Your second slice starts two blocks after the one left out, so the block right "
                "after it is dropped as well. It starts one block later."),
        Mistake("out of order", {0: "blocks[left_out + 1:] + blocks[:left_out]"},
                "Your kept blocks run in another order: the blocks after the one left out come "
                "first. Each block must read the stream the blocks before it left, so keep their "
                "order: those before, then those after."),
        Mistake("scored the input", {1: "score(x)"},
                "You scored x, the stream before any block ran. Score the stream that the kept blocks produced."),
    ],
    rtol=1e-9, atol=1e-9,
    retired=True,
)


DEFINITIONS = [PERPLEXITY, RUN_BLOCKS, LEAVE_ONE_OUT]
