"""Exercises and questions of notebook 05, "Inside a trained model"."""

from __future__ import annotations

import numpy as np

from typing import Callable, NamedTuple

from exercises.core.definition import (FLOAT32_ATOL, FLOAT32_RTOL, Case, Contract, Exercise, Mistake, Question,
                                       Variant, in_float32)

NOTEBOOK = "05_trained_model"


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


PERPLEXITY_CONTRACT = Contract(
    args={"probs": "probabilities, shape (n, V): n >= 1 predictions over V >= 2 words, each row "
                   "summing to 1, the right word's probability above 0",
          "targets": "whole numbers, shape (n,): the right word of each row, 0 <= targets[i] < V"},
    returns="the perplexity, one number >= 1 (or infinite)",
    ndims=(2,),
    dtypes=("float64", "float32"),
    edges={"tiny": "tiny probabilities on the right word (1e-30)",
           "near 1": "probabilities within 1e-9 of 1",
           "one prediction": "a single prediction",
           "square": "as many predictions as words (n = V), where row and column numbers fit both ways",
           "more rows": "more predictions than words (n > V)",
           "int32": "targets as 32-bit integers (the browser's default)",
           "trained": "the trained model's own probabilities"},
)


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
        Case((np.array([[0.2, 0.7, 0.1]]), np.array([2])), "a single prediction", covers=("one prediction",)),
        Case(_trained_probs(), "the trained model on the held-out text", covers=("trained",)),
        Case((_with_right(spread.dirichlet(np.ones(5), size=3), np.array([4, 1, 0]), [1e-30, 0.4, 1e-12]),
              np.array([4, 1, 0])), "tiny probabilities on the right word", covers=("tiny",)),
        Case((_with_right(spread.dirichlet(np.ones(5), size=3), np.array([2, 2, 3]),
                          [1 - 1e-9, 1 - 1e-12, 0.5]), np.array([2, 2, 3])),
             "probabilities within a billionth of 1", covers=("near 1",)),
        Case((square, np.array([3, 1, 0, 2])), "4 predictions over 4 words", covers=("square",)),
        Case((spread.dirichlet(np.ones(3), size=7), tall_targets), "7 predictions over 3 words",
             covers=("more rows",)),
        Case((spread.dirichlet(np.ones(8), size=5), np.array([7, 0, 3, 3, 6], dtype=np.int32)),
             "targets as 32-bit integers", covers=("int32",)),
        in_float32(Case((spread.dirichlet(np.full(6, 2.0), size=4), np.array([5, 2, 0, 4])),
                        "float32 probabilities")),
    ]


def _perplexity_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        n, v = int(rng.integers(2, 30)), int(rng.integers(3, 60))
        cases.append(Case((_random_probs(rng, n, v), rng.integers(0, v, size=n)),
                          f"random probabilities, {n} predictions over {v} words"))
    return cases


def _mean_loss(probs, targets):
    return float(-np.mean(np.log(probs[np.arange(len(targets)), targets])))


def _inverted(probs, targets):
    return 1.0 / _perplexity_reference(probs, targets)


def _summed(probs, targets):
    return float(np.exp(-np.sum(np.log(probs[np.arange(len(targets)), targets]))))


def _arithmetic(probs, targets):
    return float(1.0 / np.mean(probs[np.arange(len(targets)), targets]))


def _whole_columns(probs, targets):
    return float(np.exp(-np.mean(np.log(probs[:, targets]))))


def _whole_rows(probs, targets):
    return float(np.exp(-np.mean(np.log(probs[targets]))))


def _swapped(probs, targets):
    return float(np.exp(-np.mean(np.log(probs[targets, np.arange(len(targets))]))))


def _clipped(probs, targets):
    right = probs[np.arange(len(targets)), targets]
    return float(np.exp(-np.mean(np.log(np.clip(right, 1e-10, 1.0)))))


PERPLEXITY = Exercise(
    id="perplexity",
    notebook=NOTEBOOK,
    title="Perplexity from probabilities",
    name="perplexity",
    template='''def perplexity(probs, targets):
    """How surprised a model is, on average. probs has one row per prediction (each row sums
    to 1 over the words); targets[i] is the number of the word that really came next in row i."""
    right = ____      # the probability each row gave to its right word: one number per row
    return ____       # e to the power of the average of -log(right)
''',
    solution=["probs[np.arange(len(targets)), targets]", "np.exp(-np.mean(np.log(right)))"],
    reference=_perplexity_reference,
    contract=PERPLEXITY_CONTRACT,
    fixed=_perplexity_fixed,
    draw=_perplexity_draw,
    hints=[
        "First pick one number from each row: in row i, the column targets[i]. Indexing with two "
        "arrays of the same length, one of row numbers and one of column numbers, does exactly "
        "that.",
        "The row numbers are 0, 1, 2, ... up to the number of predictions; `np.arange` makes them.",
        "Then the loss of each prediction is -log of its probability. Average the losses, and undo "
        "the log with `np.exp`: a model that gives every right word probability 1/k has "
        "perplexity k.",
    ],
    mistakes=[
        Mistake("no exp",
                "You returned the average loss, -log(p) averaged. Perplexity is e to the power of "
                "it, which turns it back into a number of words.",
                impl=_mean_loss),
        Mistake("sign",
                "Your result is 1 / perplexity: the minus sign is missing. log(p) is negative, so "
                "the loss -log(p) is the positive one.",
                impl=_inverted),
        Mistake("sum",
                "You added up the losses instead of averaging them, so the result grows with the "
                "length of the text. Take the mean.",
                impl=_summed),
        Mistake("arithmetic mean",
                "You divided 1 by the plain average of the probabilities. Perplexity averages the "
                "logs (a geometric mean), so one very unlikely right word weighs much more.",
                impl=_arithmetic),
        Mistake("whole columns",
                "`probs[:, targets]` takes whole columns, a probability for every row and every "
                "target. Pair row i with targets[i] only, using row numbers beside the targets.",
                impl=_whole_columns),
        Mistake("whole rows",
                "`probs[targets]` picks whole rows, one per target, as if the targets were row "
                "numbers. Give two indices: the row numbers, and the targets as column numbers.",
                impl=_whole_rows),
        Mistake("swapped indices",
                "Your code works only when there are as many predictions as words, and then gives "
                "the wrong numbers: the row numbers and the targets are swapped. The first index "
                "picks the row (the prediction, 0, 1, 2, ...), the second the column (the target "
                "word of that row).",
                impl=_swapped),
        Mistake("clipped",
                "You clipped the probabilities (to avoid log 0, perhaps). That changes a tiny "
                "probability on the right word, and the perplexity with it: a model that gave the "
                "right word 1e-30 was that surprised. The right word's probability is above 0 "
                "here, so its log is finite.",
                impl=_clipped),
    ],
    wrong=[
        Variant({1: "-np.mean(np.log(right))"}, ["expected", "e to the power"], "values"),
        Variant({1: "np.exp(np.mean(np.log(right)))"}, ["expected", "1 / perplexity"], "values"),
        Variant({1: "np.exp(-np.sum(np.log(right)))"}, ["expected", "mean"], "values"),
        Variant({1: "1 / np.mean(right)"}, ["geometric mean"], "values"),
        Variant({0: "probs[:, targets]"}, ["whole columns"], "nan"),
        Variant({0: "probs[targets]"}, ["IndexError", "whole rows"], "error"),
        Variant({0: "probs[targets, np.arange(len(targets))]"}, ["IndexError", "swapped",
                                                                "as many predictions as words"], "error"),
        Variant({1: "np.exp(-np.mean(np.log(np.clip(right, 1e-10, 1))))"}, ["hidden test", "clipped",
                                                                           "1e-30"], "values"),
        Variant({1: "np.exp(-np.mean(np.log(right + 1e-12)))"}, ["hidden test", "tiny probabilities"],
                "values"),
        Variant(source='''def perplexity(probs, targets):
    right = probs[np.arange(len(targets)), targets]
    np.log(right, out=right)
    probs[np.arange(len(targets)), targets] = right
    return np.exp(-np.mean(right))
''', expect=["changed its argument `probs`", "caller"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "probs[range(len(targets)), targets]"}),
        Variant({0: "np.take_along_axis(probs, np.asarray(targets)[:, None], axis=1)[:, 0]"}),
        Variant({1: "np.exp(np.mean(-np.log(right)))"}),
        Variant({1: "np.prod(right) ** (-1 / len(right))"}),
    ],
    rtol=1e-6,
    skills="compute perplexity from a model's probabilities and the words that came next",
)


# ---------------------------------------------------------------- leave a block out

def _run_blocks_reference(x, blocks, skip):
    for number, block in enumerate(blocks):
        if number not in skip:
            x = block(x)
    return x


def _toy_blocks(rng, d, n):
    """n small residual blocks on d numbers: x -> x + tanh(x @ W) @ V."""
    blocks = []
    for _ in range(n):
        W, V = rng.normal(0, 1 / np.sqrt(d), (d, d)), rng.normal(0, 0.5 / np.sqrt(d), (d, d))
        blocks.append(lambda x, W=W, V=V: x + np.tanh(x @ W) @ V)
    return blocks


RUN_BLOCKS_CONTRACT = Contract(
    args={"x": "the stream, shape (n, d)", "blocks": "a list of functions of the stream",
          "skip": "a set or a list of block numbers (0, 1, 2, ...) to leave out"},
    returns="the stream after the blocks that are not left out, shape (n, d)",
    ndims=(2,),
    dtypes=("float64",),
    edges={"nothing": "nothing left out", "everything": "every block left out",
           "first": "the first block left out", "last": "the last block left out",
           "list": "skip given as a list"},
)


def _run_blocks_fixed() -> list[Case]:
    from lib import model
    ids = model.heldout().ids[:12]
    x = model.embed(ids).astype(np.float64)
    trained = model.blocks()
    fixed = np.random.default_rng(5)
    return [
        Case((x.copy(), trained, {1}), "the example", visible=True),
        Case((x.copy(), trained, set()), "nothing left out", covers=("nothing",)),
        Case((x.copy(), trained, {0, 1, 2, 3}), "every block left out", covers=("everything",)),
        Case((x.copy(), trained, {0}), "the first block left out", covers=("first",)),
        Case((x.copy(), trained, {3}), "the last block left out", covers=("last",)),
        Case((fixed.normal(size=(3, 5)), _toy_blocks(fixed, 5, 6), [2, 5]),
             "six small blocks, skip given as a list", covers=("list",)),
    ]


def _run_blocks_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d, n = int(rng.integers(2, 9)), int(rng.integers(1, 7))
        skip = {int(i) for i in rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)}
        cases.append(Case((rng.normal(size=(int(rng.integers(1, 6)), d)), _toy_blocks(rng, d, n), skip),
                          f"random blocks: {n} blocks, leave out {sorted(skip)}"))
    return cases


def _only_skipped(x, blocks, skip):
    for number, block in enumerate(blocks):
        if number in skip:
            x = block(x)
    return x


def _counted_from_one(x, blocks, skip):
    for number, block in enumerate(blocks):
        if number + 1 not in skip:
            x = block(x)
    return x


def _added_twice(x, blocks, skip):
    for number, block in enumerate(blocks):
        if number not in skip:
            x = x + block(x)
    return x


def _from_the_start(x, blocks, skip):
    out = x
    for number, block in enumerate(blocks):
        if number not in skip:
            out = block(x)
    return out


RUN_BLOCKS = Exercise(
    id="leave-out-blocks",
    notebook=NOTEBOOK,
    title="Leave blocks out",
    name="run_blocks",
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
    contract=RUN_BLOCKS_CONTRACT,
    fixed=_run_blocks_fixed,
    draw=_run_blocks_draw,
    hints=[
        "A block that is left out does nothing at all: the stream goes on to the next block as "
        "it is. So the loop only has to decide, block by block, whether to run it.",
        "`skip` holds the numbers of the blocks to leave out, counted from 0 like `enumerate`. "
        "Python's `in` tests whether a number is among them; `continue` then jumps to the next "
        "block.",
        "Each block already adds its result to the stream it reads (its residual connection is "
        "inside), so running it means replacing x by what the block returns.",
    ],
    mistakes=[
        Mistake("inverted test",
                "Your loop runs only the blocks that are in `skip`, the ones to leave out. Run the "
                "others.",
                impl=_only_skipped),
        Mistake("counted from one",
                "You counted the blocks from 1. `enumerate` and `skip` both count from 0: block 0 "
                "is the first.",
                impl=_counted_from_one),
        Mistake("added twice",
                "A block already returns the stream with its own result added (x + attention, then "
                "+ FFN). Adding x again counts the stream twice.",
                impl=_added_twice),
        Mistake("from the start",
                "Each block must read the stream as the previous block left it. Your loop reads "
                "the original x every time, so only the last block counts.",
                impl=_from_the_start),
    ],
    wrong=[
        Variant({0: "number not in skip"}, ["leave out", "run the others"], "values"),
        Variant({0: "number + 1 in skip"}, ["counted the blocks from 1"], "values"),
        Variant({1: "x + block(x)"}, ["twice"], "values"),
        Variant({1: "block(x) - x"}, ["expected"], "values"),
        Variant(source='''def run_blocks(x, blocks, skip):
    for number in sorted(skip, reverse=True):
        blocks.pop(number)
    for block in blocks:
        x = block(x)
    return x
''', expect=["changed its argument `blocks`", "caller"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "number in set(skip)"}),
        Variant({0: "any(number == s for s in skip)"}),
        Variant({1: "blocks[number](x)"}),
    ],
    rtol=1e-9,
    atol=1e-9,
    skills="run a model with some of its blocks left out",
    retired=True,      # replaced by leave-one-out; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- leave each block out in turn

def example_score(stream):
    """The score of the check's example: the perplexity of the trained model on the first 12
    tokens of the held-out text, given the stream that leaves the blocks."""
    from lib import model
    return model.perplexity(model.output_logits(stream), model.heldout().ids[:12])


def _stream_size(stream):
    return float(np.sqrt(np.mean(np.asarray(stream) ** 2)))


def _leave_one_out_reference(x, blocks, score):
    scores = []
    for left_out in range(len(blocks)):
        stream = x
        for block in list(blocks)[:left_out] + list(blocks)[left_out + 1:]:
            stream = block(stream)
        scores.append(score(stream))
    return np.array(scores, dtype=float)


def _stream_mean(stream):
    return float(np.mean(stream))


LEAVE_ONE_OUT_CONTRACT = Contract(
    args={"x": "the stream entering the first block, shape (n, d), n >= 1 tokens",
          "blocks": "a list of blocks, each a function block(stream) that returns the new stream, "
                    "its residual included (the list may be empty)",
          "score": "a function of a stream that returns one number"},
    returns="one score per block left out, in the blocks' order: len(blocks) numbers (a list)",
    ndims=(2,),
    dtypes=("float64", "float32"),
    edges={"trained": "the trained model's blocks, scored by the perplexity (in float32, as it runs)",
           "no blocks": "no blocks at all (no scores)",
           "one block": "a single block (leaving it out leaves nothing to run)",
           "order": "six blocks whose order matters (running them in another order changes the stream)",
           "one token": "a text of one token",
           "signed score": "a score that can be negative",
           "repeated": "the same block more than once in the list (as `[layer] * 3` builds it)"},
)


def _leave_one_out_fixed() -> list[Case]:
    from lib import model
    ids = model.heldout().ids
    x = np.array(model.embed(ids[:12]))                         # float32, as the model runs
    fixed = np.random.default_rng(6)
    repeat = np.random.default_rng(61)
    same, other = _toy_blocks(repeat, 5, 2)
    float32_tolerance = dict(rtol=FLOAT32_RTOL, atol=FLOAT32_ATOL)     # an answer may compute in float64
    return [
        Case((x.copy(), model.blocks(), example_score), "the example", visible=True, covers=("trained", "float32"),
             **float32_tolerance),
        Case((fixed.normal(size=(3, 5)), _toy_blocks(fixed, 5, 6), _stream_size),
             "six small blocks, scored by the stream's size", covers=("order",)),
        Case((fixed.normal(size=(2, 4)), _toy_blocks(fixed, 4, 1), _stream_size),
             "a single block (leaving it out leaves nothing to run)", covers=("one block",)),
        Case((fixed.normal(size=(2, 4)), [], _stream_size), "no blocks at all (no score)",
             covers=("no blocks",)),
        Case((fixed.normal(size=(1, 6)), _toy_blocks(fixed, 6, 4), _stream_mean),
             "a text of one token, four small blocks, scored by the stream's mean",
             covers=("one token", "signed score")),
        Case((np.array(model.embed(ids[40:60])), model.blocks(), lambda s: float(np.abs(s).max())),
             "the trained blocks on 20 other tokens, scored by the largest number", covers=("trained", "float32"),
             **float32_tolerance),
        Case((repeat.normal(size=(3, 5)), [same] * 3 + [other], _stream_size),
             "the same block three times in the list, then another", covers=("repeated",)),
    ]


def _leave_one_out_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d, n = int(rng.integers(2, 9)), int(rng.integers(2, 7))
        cases.append(Case((rng.normal(size=(int(rng.integers(1, 6)), d)), _toy_blocks(rng, d, n), _stream_size),
                          f"random blocks: {n} blocks of {d} numbers"))
    return cases


def _kept_with(choose, measure=None):
    def run(x, blocks, score):
        scores = []
        for left_out in range(len(blocks)):
            stream = x
            for block in choose(list(blocks), left_out):
                stream = block(stream)
            scores.append(score(stream) if measure is None else measure(score, x, stream))
        return np.array(scores, dtype=float)
    return run


LEAVE_ONE_OUT = Exercise(
    id="leave-one-out",
    notebook=NOTEBOOK,
    title="Leave each block out in turn",
    name="leave_one_out",
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
    contract=LEAVE_ONE_OUT_CONTRACT,
    fixed=_leave_one_out_fixed,
    draw=_leave_one_out_draw,
    hints=[
        "Leaving a block out means the stream skips it: the block before it hands its stream "
        "straight to the block after it. So the blocks to run are those before `left_out` and "
        "those after it, in that order.",
        "Slices pick runs of a list: `blocks[:k]` stops just before number k, `blocks[k:]` starts "
        "at number k. Adding two lists joins them.",
        "Every run starts again from x (the line after the blank), and what gets scored is where "
        "that run ended.",
    ],
    mistakes=[
        Mistake("kept every block",
                "Your list of kept blocks still holds the block that should be left out, so every "
                "score is the whole model's. The second slice must start one block later.",
                impl=_kept_with(lambda b, k: b[:k] + b[k:])),
        Mistake("only the later blocks",
                "Your list drops the blocks before the one left out as well: keep those before it "
                "and those after it.",
                impl=_kept_with(lambda b, k: b[k + 1:])),
        Mistake("stopped at the gap",
                "Your list stops at the block left out and drops everything after it: the blocks "
                "after it run too, on the stream the earlier ones left.",
                impl=_kept_with(lambda b, k: b[:k])),
        Mistake("only the left-out block",
                "Your list holds only the block that should be left out. Keep the others instead.",
                impl=_kept_with(lambda b, k: b[k:k + 1])),
        Mistake("counted from one",
                "You left out the block before the intended one: `left_out` counts from 0, like "
                "the positions in a list.",
                impl=_kept_with(lambda b, k: b[:k - 1] + b[k:])),
        Mistake("dropped two",
                "Your second slice starts two blocks after the one left out, so the block right "
                "after it is dropped as well. It starts one block later.",
                impl=_kept_with(lambda b, k: b[:k] + b[k + 2:])),
        Mistake("out of order",
                "Your kept blocks run in another order: the blocks after the one left out come "
                "first. Each block must read the stream the blocks before it left, so keep their "
                "order: those before, then those after.",
                impl=_kept_with(lambda b, k: b[k + 1:] + b[:k])),
        Mistake("scored the input",
                "You scored x, the stream before any block ran. Score the stream that the kept "
                "blocks produced.",
                impl=_kept_with(lambda b, k: b[:k] + b[k + 1:], lambda score, x, stream: score(x))),
    ],
    wrong=[
        Variant({0: "blocks[:left_out] + blocks[left_out:]"}, ["expected", "whole model"], "values"),
        Variant({0: "blocks[left_out + 1:]"}, ["expected", "before it"], "values"),
        Variant({0: "blocks[:left_out]"}, ["expected", "after it"], "values"),
        Variant({0: "blocks[:left_out - 1] + blocks[left_out:]"}, ["expected", "counts from 0"], "values"),
        Variant({0: "blocks[:left_out] + blocks[left_out + 2:]"}, ["expected", "right after it"], "values"),
        Variant({0: "blocks[left_out + 1:] + blocks[:left_out]"}, ["expected", "keep their order"], "values"),
        Variant({1: "score(x)"}, ["expected", "before any block ran"], "values"),
        Variant(source='''def leave_one_out(x, blocks, score):
    scores = []
    for left_out in range(len(blocks)):
        kept = blocks
        kept[left_out] = lambda stream: stream      # the block left out passes the stream on
        stream = x
        for block in kept:
            stream = block(stream)
        scores.append(score(stream))
    return scores
''', expect=["changed its argument `blocks`", "caller", "list of blocks", "new list"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "[b for number, b in enumerate(blocks) if number != left_out]"}),
        Variant({0: "list(blocks[:left_out]) + list(blocks[left_out + 1:])", 1: "float(score(stream))"}),
        Variant(source='''def leave_one_out(x, blocks, score):
    out = []
    for left_out in range(len(blocks)):
        stream = x
        for number, block in enumerate(blocks):
            if number != left_out:
                stream = block(stream)
        out.append(score(stream))
    return np.array(out)
'''),
    ],
    rtol=1e-9,
    atol=1e-9,
    skills="leave each block of a model out in turn and score what the others produce",
)


# ---------------------------------------------------------------- the capstone: one trained block, from your parts

# The four parts the capstone's block is built from: (exercise id, notebook, name in the notebook).
PARTS = (("rms-norm", "03_norms_and_residuals", "rms_norm"),
         ("rope-rotation", "01_positional_encoding", "rope_one"),
         ("causal-weights", "04_decoder_block", "causal_weights"),
         ("swiglu", "02_feed_forward", "swiglu"))


class Parts(NamedTuple):
    """The functions the capstone's block uses, and where each came from (one line per part)."""
    rms_norm: Callable
    rope_one: Callable
    causal_weights: Callable
    swiglu: Callable
    report: str


def course_parts() -> tuple:
    """The course's own rms_norm, rope_one, causal_weights and swiglu, with the signatures of the
    exercises that define them (the checks' reference functions)."""
    from exercises.core.registry import get_exercise
    return tuple(get_exercise(ex_id).reference for ex_id, _stem, _name in PARTS)


def _notebook_path(stem: str, root):
    direct = root / f"{stem}.ipynb"
    if direct.is_file():
        return direct
    found = sorted(p for p in root.glob(f"*/{stem}.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return found[0] if found else None


def _own_part(ex_id: str, stem: str, name: str, root):
    """The learner's function for one part, read from their saved notebook and checked again, or
    (None, why not)."""
    from exercises.core.cell import run_cell
    from exercises.core.checker import evaluate
    from exercises.core.notebooks import exercise_id, read
    from exercises.core.registry import get_exercise

    path = _notebook_path(stem, root)
    if path is None:
        return None, f"{stem}.ipynb is not in your workspace"
    try:
        cells = read(path)["cells"]
    except (OSError, ValueError):
        return None, f"{path.name} could not be read"
    sources = ["".join(c.get("source", "")) for c in cells if exercise_id(c) == ex_id]
    if not sources:
        return None, f"{path.name} has no {name} exercise cell"
    ex = get_exercise(ex_id)
    try:
        namespace = run_cell(sources[0], ex.context, ex_id)
        feedback = evaluate(ex, namespace)
    except Exception as exc:  # noqa: BLE001 - the learner's saved code may raise anything
        return None, f"your saved cell raised {type(exc).__name__}"
    if feedback.kind == "blank":
        return None, f"the {name} cell of {path.name} still has its blanks"
    if not feedback.passed:
        return None, f"your saved {name} does not pass its check: {feedback.headline.lower()}"
    return namespace[name], ""


def your_parts(root=None) -> Parts:
    """The four parts for the capstone: for each, the learner's own function if their saved
    notebook holds one that passes its check again now, else the course's. ``root``: the folder of
    the learner's notebooks (default: the workspace)."""
    from pathlib import Path

    from exercises.core.workspace import workspace_root

    root = workspace_root() if root is None else Path(root)
    chosen, lines = [], []
    for (ex_id, stem, name), course in zip(PARTS, course_parts()):
        own, why = _own_part(ex_id, stem, name, root)
        chosen.append(own if own is not None else course)
        lines.append(f"{name:<15} " + (f"yours, from {stem}.ipynb (it passes its check again)" if own is not None
                                       else f"the course's ({why})"))
    return Parts(*chosen, report="\n".join(lines))


CAPSTONE_CONTEXT = ("import numpy as np\nfrom exercises.core.blank import ____\n"
                    "from exercises.definitions.trained import course_parts\n"
                    "rms_norm, rope_one, causal_weights, swiglu = course_parts()\n")


def _block_reference(x, w):
    from functools import partial

    from lib.block import block
    from lib.positional import rope
    return block(x, w, placement="pre", norm="rms", eps=1e-5, causal=True,
                 positions=partial(rope, base=10000.0, pairing="halves"))


def _small_block(rng, d, heads, d_ff):
    from lib.block import BlockWeights
    square = [rng.normal(0.0, d ** -0.5, (d, d)) for _ in range(4)]
    return BlockWeights(*square, W1=rng.normal(0.0, d ** -0.5, (d, d_ff)), W2=rng.normal(0.0, d_ff ** -0.5, (d_ff, d)),
                        W_gate=rng.normal(0.0, d ** -0.5, (d, d_ff)), attention_norm=rng.uniform(0.5, 1.5, d),
                        ffn_norm=rng.uniform(0.5, 1.5, d), heads=heads)


def _in_float64(w):
    """A block of the trained model (float32, as trained) with the same numbers in float64."""
    from dataclasses import replace
    return replace(w, **{name: value.astype(np.float64) for name, value in vars(w).items()
                         if isinstance(value, np.ndarray)})


def example_block():
    """The capstone check's example: (x, w), 5 tokens of 8 numbers and a small block of the trained
    model's kind (2 heads of 4 numbers, SwiGLU width 12, RMSNorm gains), drawn from default_rng(44)."""
    generator = np.random.default_rng(44)
    x = generator.normal(size=(5, 8))
    return x, _small_block(generator, 8, 2, 12)


CAPSTONE_CONTRACT = Contract(
    args={"x": "a text, shape (n, d): n >= 1 tokens of d numbers, d = heads * size with size even",
          "w": "one block's weights (lib.block.BlockWeights, float64): the gains attention_norm and "
               "ffn_norm (d,), Wq, Wk, Wv, Wo (d, d), W_gate and W1 (d, d_ff), W2 (d_ff, d), heads"},
    returns="the stream after the block, shape (n, d)",
    ndims=(2,),
    dtypes=("float64",),
    edges={"trained": "blocks of the trained model on the held-out text",
           "its own stream": "the last block on the stream it reads in the model, numbers far "
                             "larger than the embedding's",
           "one token": "a text of one token",
           "one head": "a block of a single head, with more tokens than numbers per token",
           "three heads": "a block of 3 heads"},
)


def _capstone_fixed() -> list[Case]:
    from lib import model
    ids = model.heldout().ids
    w = [_in_float64(b) for b in model.weights().blocks]
    streams = model.forward(ids[:12], trace=True).streams.astype(np.float64)
    fixed = np.random.default_rng(45)
    return [
        Case(example_block(), "the example", visible=True),
        Case((model.embed(ids[:6]).astype(np.float64), w[0]), "block 1 of the trained model on 6 tokens of the held-out text",
             covers=("trained",)),
        Case((np.array(streams[3]), w[3]), "block 4 of the trained model on the stream it reads (12 tokens)",
             covers=("trained", "its own stream")),
        Case((np.array(streams[1][:1]), w[1]), "block 2 on a text of one token", covers=("one token",)),
        Case((fixed.normal(size=(7, 12)), _small_block(fixed, 12, 3, 20)), "a small block: 3 heads of 4 numbers",
             covers=("three heads",)),
        Case((fixed.normal(size=(7, 4)), _small_block(fixed, 4, 1, 6)),
             "a small block of one head of 4 numbers, on 7 tokens", covers=("one head",)),
    ]


def _capstone_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        heads, size = int(rng.integers(1, 4)), 2 * int(rng.integers(1, 4))
        d, length = heads * size, int(rng.integers(1, 9))
        cases.append(Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (length, d)), _small_block(rng, d, heads, 2 * d)),
                          f"random block: {heads} heads of {size} numbers, {length} tokens"))
    return cases


def _capstone_variant(*, scale="head", rotate_keys=True, ffn_gain="ffn", residual=True, ffn_reads="norm",
                      transpose=False, attention_reads="norm", values="head"):
    """The capstone's block with one thing done differently (for the known mistakes)."""
    def run(x, w):
        rms_norm, rope_one, causal_weights, swiglu = course_parts()
        n, d = x.shape
        size = d // w.heads
        h = rms_norm(x, w.attention_norm) if attention_reads == "norm" else x
        q, k, v = h @ w.Wq, h @ w.Wk, h @ w.Wv
        heads = []
        for j in range(w.heads):
            cols = slice(j * size, (j + 1) * size)
            qj = np.array([rope_one(q[t, cols], t) for t in range(n)])
            kj = np.array([rope_one(k[t, cols], t) for t in range(n)]) if rotate_keys else k[:, cols]
            divide = {"head": np.sqrt(size), "model": np.sqrt(d), "none": 1.0}[scale]
            scores = (kj @ qj.T if transpose else qj @ kj.T) / divide
            heads.append(causal_weights(scores) @ (v[:, cols] if values == "head" else v))
        x = x + np.concatenate(heads, axis=-1) @ w.Wo
        gain = w.ffn_norm if ffn_gain == "ffn" else w.attention_norm
        read = rms_norm(x, gain) if ffn_reads == "norm" else x
        out = swiglu(read, w.W_gate, w.W1, w.W2)
        return x + out if residual else out
    return run


CAPSTONE = Exercise(
    id="capstone-block",
    notebook=NOTEBOOK,
    title="Capstone: one block of the trained model, from your parts",
    name="trained_block",
    template='''def trained_block(x, w):
    """One block of the trained model on a text x (n tokens of d numbers), built from the parts
    rms_norm, rope_one, causal_weights and swiglu. w holds the block's weights: the gains
    w.attention_norm and w.ffn_norm (d,), w.Wq, w.Wk, w.Wv, w.Wo (d, d), w.W_gate and w.W1
    (d, d_ff; W1 is the up projection), w.W2 (d_ff, d) and the number of heads, w.heads."""
    n, d = x.shape
    size = d // w.heads                                   # numbers per head
    # the attention half
    h = ____                                              # the copy that attention reads
    q, k, v = h @ w.Wq, h @ w.Wk, h @ w.Wv                # (n, d) each
    heads = []
    for j in range(w.heads):
        cols = slice(j * size, (j + 1) * size)            # head j's numbers
        qj = np.array([rope_one(q[t, cols], t) for t in range(n)])   # each query turned by its position
        kj = ____                                         # each key, the same way
        scores = ____                                     # (n, n): query t against key u
        heads.append(____)                                # head j's mix of values, (n, size)
    x = x + np.concatenate(heads, axis=-1) @ w.Wo
    # the FFN half
    return ____
''',
    solution=["rms_norm(x, w.attention_norm)",
              "np.array([rope_one(k[t, cols], t) for t in range(n)])",
              "qj @ kj.T / np.sqrt(size)",
              "causal_weights(scores) @ v[:, cols]",
              "x + swiglu(rms_norm(x, w.ffn_norm), w.W_gate, w.W1, w.W2)"],
    reference=_block_reference,
    contract=CAPSTONE_CONTRACT,
    fixed=_capstone_fixed,
    draw=_capstone_draw,
    context=CAPSTONE_CONTEXT,
    hints=[
        "Pre-norm: each half reads a normalised copy of the stream, with its own gain "
        "(attention_norm for the attention half, ffn_norm for the FFN half), and adds its result "
        "to the plain stream.",
        "Keys are turned exactly like queries: token t by position t. A score compares a query "
        "with a key (a dot product of two rows), and attention divides it by the square root of "
        "the number of numbers each head has.",
        "`causal_weights` turns a grid of scores into weights with the future masked; the head's "
        "output is those weights times its values (the head's columns of v). The FFN half: the "
        "gated FFN of notebook 02 on the normalised copy, added to x.",
    ],
    mistakes=[
        Mistake("scores not scaled",
                "Your scores are not divided by the square root of the head size, so the softmax is "
                "far too sharp. Divide by the square root of the number of numbers per head.",
                impl=_capstone_variant(scale="none")),
        Mistake("scaled by the model width",
                "You divided the scores by the square root of d, the model's width. Each head "
                "compares vectors of `size` numbers: divide by the square root of that.",
                impl=_capstone_variant(scale="model")),
        Mistake("keys not turned",
                "The keys were not turned by their positions. RoPE turns queries and keys alike; a "
                "score then depends on how far apart the two tokens are.",
                impl=_capstone_variant(rotate_keys=False)),
        Mistake("keys against queries",
                "Your score grid has keys as rows and queries as columns, so the causal mask hides "
                "the wrong triangle. Put query t in row t: queries times the transposed keys.",
                impl=_capstone_variant(transpose=True)),
        Mistake("attention's gain for the FFN",
                "The FFN half read its copy through attention's gain. Each half has its own: "
                "w.ffn_norm for the FFN.",
                impl=_capstone_variant(ffn_gain="attention")),
        Mistake("FFN not added",
                "The FFN's result replaced the stream. Add it to x, as attention's was.",
                impl=_capstone_variant(residual=False)),
        Mistake("FFN reads the raw stream",
                "The FFN read the raw stream. Like attention, it reads a normalised copy.",
                impl=_capstone_variant(ffn_reads="raw")),
        Mistake("attention reads the raw stream",
                "Attention read the raw stream: its queries, keys and values must come from the "
                "normalised copy.",
                impl=_capstone_variant(attention_reads="raw")),
        Mistake("values of every head",
                "Each head mixed the values of all the heads: with one head that is right, with "
                "several the heads' outputs come out too wide to join. Head j mixes only its own "
                "columns of v, the same columns its queries and keys use.",
                impl=_capstone_variant(values="all")),
    ],
    wrong=[
        Variant({2: "qj @ kj.T"}, ["expected", "square root of the head size"], "values"),
        Variant({2: "qj @ kj.T / np.sqrt(d)"}, ["expected", "width"], "values"),
        Variant({1: "k[:, cols]"}, ["expected", "turned"], "values"),
        Variant({2: "kj @ qj.T / np.sqrt(size)"}, ["expected", "wrong triangle"], "values"),
        Variant({4: "x + swiglu(rms_norm(x, w.attention_norm), w.W_gate, w.W1, w.W2)"}, ["expected", "own"], "values"),
        Variant({4: "swiglu(rms_norm(x, w.ffn_norm), w.W_gate, w.W1, w.W2)"}, ["expected", "replaced"], "values"),
        Variant({0: "x"}, ["expected", "normalised copy"], "values"),
        Variant({3: "causal_weights(scores) @ v"}, ["ValueError", "own columns of v"], "error"),
        Variant(source='''def trained_block(x, w):
    n, d = x.shape
    size = d // w.heads
    h = rms_norm(x, w.attention_norm)
    q, k, v = h @ w.Wq, h @ w.Wk, h @ w.Wv
    heads = []
    for j in range(w.heads):
        cols = slice(j * size, (j + 1) * size)
        qj = np.array([rope_one(q[t, cols], t) for t in range(n)])
        kj = np.array([rope_one(k[t, cols], t) for t in range(n)])
        heads.append(causal_weights(qj @ kj.T / np.sqrt(size)) @ v[:, cols])
    x += np.concatenate(heads, axis=-1) @ w.Wo
    return x + swiglu(rms_norm(x, w.ffn_norm), w.W_gate, w.W1, w.W2)
''', expect=["changed its argument `x`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({2: "(qj / np.sqrt(size)) @ kj.T", 3: "causal_weights(scores) @ v[:, j * size:(j + 1) * size]"}),
        Variant({1: "np.stack([rope_one(k[t, cols], t) for t in range(n)])",
                 4: "x + swiglu(rms_norm(x, w.ffn_norm, eps=1e-5), w.W_gate, w.W1, w.W2)"}),
        Variant({2: "np.einsum('ti,ui->tu', qj, kj) / size ** 0.5"}),
    ],
    rtol=1e-3,
    atol=1e-4,
    skills="build one trained block from RMSNorm, multi-head attention with RoPE and SwiGLU",
)

# ---------------------------------------------------------------- questions

NUMBER_UNIFORM = Question(
    id="trained-number-uniform",
    notebook=NOTEBOOK,
    kind="number",
    prompt="The model's vocabulary has 55 words. A model that knows nothing gives each of them "
           "the same probability, 1/55, at every step. What is its perplexity?",
    answer=55,
    tol=0.5,
    explanation="Every right word gets probability 1/55, so every loss is -log(1/55) = log 55, "
                "and e to the power of log 55 is 55. Perplexity counts how many words the model "
                "is, on average, as unsure between as if it picked uniformly among them: a "
                "know-nothing model is unsure between all 55.",
    reveals=[
        r"\bas unsure between as if\b",
        r"\bunsure between all 55\b",
        r"\blog\s*\(?\s*55\b",
        r"\b(is|equals|counts) (the number of|how many) words\b",
    ],
)

PREDICT_BLOCK = Question(
    id="trained-predict-block",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Leave out one block of the four (the stream passes it unchanged) and keep the rest. "
           "Which block, left out on its own, raises the perplexity on the held-out text the most?",
    choices=["block 1, the first", "block 2", "block 3", "block 4, the last",
             "about the same for every block"],
    answer=0,
    explanation="Block 1 sees the raw embeddings, and every later block was trained on a stream "
                "that block 1 had already shaped. Leave it out and every later block reads a "
                "stream it never saw in training. Later blocks add refinements that the rest of "
                "the model can partly do without. The cell after the lab prints the numbers.",
    reveals=[
        r"\bfirst block matters most\b",
        r"\bblock 1 sees the raw embeddings\b",
        r"\bblock whose absence hurts most\b",
    ],
)

PREDICT_STREAM = Question(
    id="trained-predict-stream",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Each token's stream starts as its row of the embedding table, whose numbers are small. "
           "Four blocks each add what their attention and FFN computed, and every part reads the "
           "stream through an RMSNorm. After the last block, the stream is...",
    choices=["about as small as the embedding: the norms keep it there",
             "about 1 in size: the norms set it",
             "many times larger than the embedding: it is mostly what the blocks wrote",
             "close to 0: the blocks cancel each other"],
    answer=2,
    explanation="The norms only rescale the copies the parts read; the stream itself is a running "
                "sum that nothing rescales until the final norm. The first block already adds "
                "vectors many times larger than the embedding row it started from, so at the top "
                "the stream is mostly what the blocks wrote into it. The cell after the lab prints "
                "each block's addition next to the stream it received.",
    reveals=[
        r"\bmostly what the blocks wrote\b",
        r"\bnothing rescales\b",
        r"\bstream itself is a running sum\b",
        r"\bmany times larger than the embedding\b",
    ],
)

PREDICT_MISMATCH = Question(
    id="trained-predict-mismatch",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="You load the trained weights into code that differs from the training code in one "
           "detail about RoPE. Which mistake is the hardest to notice?",
    choices=["RoPE pairs neighbours (2i, 2i + 1) instead of halves (i, i + d/2)",
             "RoPE base 100,000 instead of 10,000",
             "no RoPE at all"],
    answer=1,
    explanation="Changing the base leaves the fastest pair turning as before and only slows the "
                "others, so part of every score is still right. Nothing raises, most answers stay "
                "the same, and the model is only a little worse. Pairing the wrong numbers or "
                "dropping RoPE scrambles or removes what every head learned to read, and any "
                "evaluation shows it at once.",
    reveals=[
        r"\bchanging the base leaves\b",
        r"\bquiet\b[^.]{0,60}\bthe base\b",
        r"\bonly slows the others\b",
    ],
)

DEFINITIONS = [PERPLEXITY, RUN_BLOCKS, LEAVE_ONE_OUT, CAPSTONE, NUMBER_UNIFORM, PREDICT_STREAM, PREDICT_BLOCK,
               PREDICT_MISMATCH]


# ---------------------------------------------------------------- skip-ahead set (exercises/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("trained-out-perplexity", NOTEBOOK, "number",
             "A model gives the right next token the probabilities 0.5, 0.25 and 0.5 on three "
             "tokens. What is its perplexity on them? Two decimals are enough.",
             answer=float(np.exp(-np.mean(np.log([0.5, 0.25, 0.5])))), tol=0.005,
             explanation="The exponential of the average negative log probability: "
                         "exp(-(ln 0.5 + ln 0.25 + ln 0.5) / 3), the geometric mean of 2, 4 and 2."),
    Question("trained-out-uniform", NOTEBOOK, "number",
             "A model that spreads its probability evenly over a vocabulary of 1,000 tokens: what "
             "is its perplexity?",
             answer=1000.0, tol=0.5,
             explanation="Every token gets 1/1000, so the perplexity is 1000: as unsure as a "
                         "choice among a thousand."),
    Question("trained-out-skip", NOTEBOOK, "predict",
             "In a pre-norm model, what does leaving block k out mean?",
             choices=["the stream passes block k unchanged and goes on to block k + 1",
                      "block k's output is set to zero, stream included",
                      "the model stops after block k - 1",
                      "block k's weights are replaced by random ones"],
             answer=0,
             explanation="Each block only adds to the stream, so leaving one out is skipping its "
                         "two additions.",
             reveals=[r"\bstream passes (it|block k|the block|each block) unchanged\b",
                      r"\bskipping its (two )?additions\b"]),
    Question("trained-out-float16", NOTEBOOK, "number",
             "What is the largest finite number float16 can hold?",
             answer=float(np.finfo(np.float16).max), tol=0.5,
             explanation="65,504: a stream value beyond it becomes infinity in float16."),
]
