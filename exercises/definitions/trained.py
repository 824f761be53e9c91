"""Exercises of notebook 05, "Inside a trained model".

Its questions are in :mod:`exercises.definitions.questions.trained`."""

from __future__ import annotations

import numpy as np

from engine.core import parts
from engine.core.definition import (FLOAT32_ATOL, FLOAT32_RTOL, Case, Contract, Exercise, Mistake, in_float32,
                                       three_of)
from exercises.definitions.questions import trained as questions

NOTEBOOK = "05_trained_model"


# ---------------------------------------------------------------- perplexity from the model's scores

EXAMPLE_LOGITS = np.array([[0.5, 2.5, 0.0, 1.0, -1.0],
                           [2.0, 0.5, 0.0, 0.5, -0.5],
                           [0.0, 1.0, 1.5, 0.5, 0.0],
                           [0.5, -0.5, 1.0, 0.0, 0.5]])
EXAMPLE_IDS = np.array([3, 1, 0, 2])


def _logits_reference(logits, ids):
    from lib import model
    return np.float64(model.perplexity(logits, ids))


def _far_below():
    """Scores of a text of 4 tokens over 6 words where one right word scores 800 below its row's
    top: its probability, e^-800, rounds to 0 in float64."""
    logits = np.array([[0.0, 2.0, 1.0, -1.0, 0.5, 0.0],
                       [0.0, 1.0, -800.0, 2.0, 0.0, 1.0],
                       [1.0, 0.0, 0.0, 3.0, -2.0, 0.5],
                       [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    return logits, np.array([4, 0, 2, 5])


def _large():
    """Scores around 1,000 (e^1000 overflows float64), a text of 5 tokens over 3 words."""
    rng = np.random.default_rng(61)
    return 1000.0 + rng.normal(0.0, 3.0, (5, 3)), np.array([0, 2, 2, 1, 0])


def _levels():
    """Scores of a text of 4 tokens over 5 words whose rows lie at different levels: one around
    1,000, one around -1,000. Only a shift by each row's own top keeps every row's exponentials
    in range: one shift for the whole table leaves the low row's all 0."""
    rng = np.random.default_rng(63)
    logits = rng.normal(0.0, 2.0, (4, 5)) + np.array([[1000.0], [-1000.0], [0.0], [0.0]])
    return logits, np.array([2, 4, 0, 1])


def _trained_logits(n=41):
    """The trained model's logits (float32, as it runs) on the first n tokens of the held-out text."""
    from lib import model
    ids = model.heldout().ids[:n].copy()
    return model.forward(ids), ids


PERPLEXITY_LOGITS_CONTRACT = Contract(
    args={"logits": "scores, shape (n, V): the model's scores at each of the n >= 2 positions of a text, "
                    "over V >= 2 words; row t scores the word after token t",
          "ids": "whole numbers, shape (n,): the text's tokens, 0 <= ids[t] < V"},
    returns="the perplexity on the text's n - 1 predictions, one number >= 1",
    ndims=(2,), dtypes=("float64", "float32"),
    edges={"far below": "a right word scored 800 below its row's top: its probability rounds to 0 in float64",
           "large": "scores around 1,000, whose exponentials overflow",
           "levels": "rows at different levels, one around 1,000 and one around -1,000",
           "two tokens": "a text of two tokens, a single prediction",
           "square": "as many predictions as words (n - 1 = V), where row and column numbers fit both ways",
           "uniform": "equal scores everywhere: perplexity V",
           "int32": "tokens as 32-bit integers (the browser's default)",
           "trained": "the trained model's own logits, in float32"},
)


def _perplexity_logits_fixed() -> list[Case]:
    rng = np.random.default_rng(62)
    float32_tolerance = {"rtol": FLOAT32_RTOL, "atol": FLOAT32_ATOL}
    return [
        Case((EXAMPLE_LOGITS.copy(), EXAMPLE_IDS.copy()), "the example", visible=True),
        Case(_trained_logits(), "the trained model on the first 41 tokens of the held-out text",
             covers=("trained", "float32"), **float32_tolerance),
        Case(_far_below(), "a right word scored 800 below the top of its row", covers=("far below",)),
        Case(_large(), "scores around 1,000", covers=("large",)),
        Case(_levels(), "rows around 1,000 and around -1,000", covers=("levels",)),
        Case((np.array([[0.2, 1.0, -0.5], [0.0, 0.0, 0.0]]), np.array([1, 2])), "a text of two tokens",
             covers=("two tokens",)),
        Case((rng.normal(0.0, 2.0, (5, 4)), np.array([2, 0, 3, 3, 1])), "a text of 5 tokens over 4 words",
             covers=("square",)),
        Case((np.zeros((6, 7)), np.array([0, 6, 2, 2, 5, 1])), "equal scores for every word",
             covers=("uniform",)),
        Case((rng.normal(0.0, 1.5, (7, 9)), np.array([8, 0, 4, 4, 1, 7, 3], dtype=np.int32)),
             "tokens as 32-bit integers", covers=("int32",)),
        in_float32(Case((rng.normal(0.0, 3.0, (6, 8)), np.array([1, 7, 0, 5, 5, 2])), "a text of 6 tokens over 8 words")),
    ]


def _perplexity_logits_case(rng) -> Case:
    n, v = int(rng.integers(2, 30)), int(rng.integers(2, 60))
    return Case((rng.normal(0.0, rng.uniform(0.5, 6.0), (n, v)), rng.integers(0, v, size=n)),
                f"random scores, a text of {n} tokens over {v} words")


PERPLEXITY_LOGITS = Exercise(
    id="perplexity-logits", notebook=NOTEBOOK, title="Perplexity from the model's scores", name="perplexity",
    template='''def perplexity(logits, ids):
    """The model's perplexity on a text. ids holds the text's n tokens; logits (n, V) the model's
    scores at each of its n positions: row t scores every word as the one after token t."""
    scores = ____          # the rows whose next word is in the text
    targets = ____         # for each of those rows, the word that came next
    shifted = scores - scores.max(axis=-1, keepdims=True)        # each row's top score is now 0
    log_p = ____           # the log of each row's softmax, with no probability that can round to 0
    rows = np.arange(len(scores))
    return np.exp(-log_p[rows, targets].mean())
''',
    solution=["logits[:-1]", "ids[1:]", "shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))"],
    reference=_logits_reference,
    contract=PERPLEXITY_LOGITS_CONTRACT,
    fixed=_perplexity_logits_fixed,
    draw=three_of(_perplexity_logits_case),
    hints=[
        "Row t scores the word after token t. The last row scores a word the text does not have, "
        "and the first token is a word no row predicts: of n rows and n tokens, n - 1 pairs are "
        "left, each row with the token one place after it.",
        "A slice that ends at -1 drops the last item; a slice that starts at 1 drops the first.",
        "log(e^s / sum of e^s) = s - log(sum of e^s): no division, and no probability to take the log of. "
        "Write it with the shifted scores: their largest e^s is e^0 = 1, so the sum is at least 1 and nothing "
        "overflows. Sum along each row, keeping the axis so that it lines up with the row's scores.",
    ],
    mistakes=[
        Mistake("own token", {0: "logits", 1: "ids"},
                "You scored each row against the token at its own position. Row t scores the word "
                "that comes after token t: pair it with the next token, and leave out the last row "
                "(the text has no word after it) and the first token (no row predicts it)."),
        Mistake("own position, last row left out", {1: "ids[:-1]"},
                "You paired each row with the token at its own position: row t with token t. Row t scores the "
                "word after token t, so its target is token t + 1: the targets start at the second token."),
        Mistake("own position, first row left out", {0: "logits[1:]"},
                "You paired each row with the token at its own position: row t with token t, from "
                "the second row on. Row t scores the word after token t: keep the rows from the "
                "first to the one before last, each with the token after it."),
        Mistake("the token before", {0: "logits[1:]", 1: "ids[:-1]"},
                "You paired each row with the token before it. Row t scores the word after token t: the rows "
                "are the first to the one before last, their targets the second token to the last."),
        Mistake("lengths differ", {0: "logits"},
                "Your scores and your targets are not as many: a text of n tokens has n rows of "
                "scores but only n - 1 predictions. The last row scores a word the text does not "
                "have, and the first token has no row before it: leave out both."),
        Mistake("log of the softmax", {2: "np.log(np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True))"},
                "You took the log of the probabilities. Where a right word scores 800 below the top "
                "of its row (a hidden test), its probability e^-800 rounds to 0, its log is -inf and "
                "the perplexity infinite: the model was very surprised, but not infinitely. Write the "
                "log of the softmax without computing the probability: s - log(sum of e^s)."),
        Mistake("unshifted", {2: "scores - np.log(np.exp(scores).sum(axis=-1, keepdims=True))"},
                "You took the exponentials of the raw scores: for scores around 1,000 (a hidden "
                "test) e^1000 overflows to infinity. Use the shifted scores, whose largest is 0: "
                "the row's top cancels out of s - log(sum of e^s)."),
        Mistake("not normalised", {2: "shifted"},
                "The shifted scores are log probabilities only up to a number per row: their "
                "exponentials do not add up to 1. Subtract the log of that sum, row by row."),
        Mistake("sum without keepdims", {2: "shifted - np.log(np.exp(shifted).sum(axis=-1))"},
                "Your sum over each row lost its axis: one number per row, shape (n - 1,), which lines up with "
                "the columns of the scores instead of their rows. Keep the axis (keepdims=True)."),
        Mistake("down the columns", {2: "shifted - np.log(np.exp(shifted).sum(axis=0, keepdims=True))"},
                "You added the exponentials down the columns (axis 0), over the predictions. The "
                "softmax of a row adds up that row, over the words: the last axis."),
    ],
    rtol=1e-6,
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


# ---------------------------------------------------------------- leave each block out in turn

def example_score(stream):
    """The score of the check's example: the perplexity of the trained model on the first 12
    tokens of the held-out text, given the stream that leaves the blocks."""
    from lib import model
    return model.perplexity(model.output_logits(stream), model.heldout().ids[:12])


def _stream_size(stream):
    return float(np.sqrt(np.mean(np.asarray(stream) ** 2)))


def _leave_one_out_reference(x, blocks, score):
    return np.array([score(_run_blocks_reference(x, blocks, {i})) for i in range(len(blocks))], dtype=float)


def _stream_mean(stream):
    return float(np.mean(stream))


LEAVE_ONE_OUT_CONTRACT = Contract(
    args={"x": "the stream entering the first block, shape (n, d), n >= 1 tokens",
          "blocks": "a list of blocks, each a function block(stream) that returns the new stream, "
                    "its residual included (the list may be empty)",
          "score": "a function of a stream that returns one number"},
    returns="one score per block left out, in the blocks' order: len(blocks) numbers (a list)",
    ndims=(2,), dtypes=("float64", "float32"),
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


def _leave_one_out_case(rng) -> Case:
    d, n = int(rng.integers(2, 9)), int(rng.integers(2, 7))
    return Case((rng.normal(size=(int(rng.integers(1, 6)), d)), _toy_blocks(rng, d, n), _stream_size),
                f"random blocks: {n} blocks of {d} numbers")


# ---------------------------------------------------------------- a block taken out three ways

def _ablated_reference(x, blocks, k, how):
    stream = x
    for i, block in enumerate(blocks):
        if i == k and how == "skip":
            continue
        new = block(stream)
        if i == k and how == "zero":
            new = np.zeros_like(new)
        elif i == k and how == "mean":
            new = stream + (new - stream).mean(axis=0, keepdims=True)
        stream = new
    return stream


ABLATE_CONTRACT = Contract(
    args={"x": "the stream entering the first block, shape (n, d): n >= 1 tokens of d >= 1 numbers",
          "blocks": "a list of at least one block, each a function block(stream) that returns the new stream, "
                    "its residual included",
          "k": "the block taken out, counted from 0: a whole number (Python or NumPy), 0 <= k < len(blocks)",
          "how": "\"skip\", \"zero\" or \"mean\""},
    returns="the stream that leaves the last block, shape (n, d)",
    ndims=(2,), dtypes=("float64", "float32"),
    edges={"trained": "the trained model's blocks (in float32, as it runs)",
           "first": "the first block taken out", "last": "the last block taken out",
           "one block": "a single block", "one token": "a text of one token (its mean is the token itself)",
           "repeated": "the same block more than once in the list (as `[layer] * 3` builds it)",
           "numpy k": "k given as a NumPy integer", "square": "as many tokens as numbers per token",
           "biased": "blocks with a bias, which turn a stream of zeros into one that is not"},
)


def _biased_blocks(rng, d, n):
    """n small residual blocks with a bias, x -> x + tanh(x @ W + b) @ V: unlike the others, they
    turn a stream of zeros into one that is not."""
    blocks = []
    for _ in range(n):
        W, V, b = rng.normal(0, 1 / np.sqrt(d), (d, d)), rng.normal(0, 0.5 / np.sqrt(d), (d, d)), rng.normal(0, 1, d)
        blocks.append(lambda x, W=W, V=V, b=b: x + np.tanh(x @ W + b) @ V)
    return blocks


def _ablate_fixed() -> list[Case]:
    from lib import model
    ids = model.heldout().ids
    x = np.array(model.embed(ids[:12]))                                  # float32, as the model runs
    fixed = np.random.default_rng(8)
    repeat = np.random.default_rng(81)
    same, other = _toy_blocks(repeat, 5, 2)
    float32_tolerance = dict(rtol=FLOAT32_RTOL, atol=FLOAT32_ATOL)     # an answer may compute in float64
    six = _toy_blocks(fixed, 5, 6)
    return [
        Case((x.copy(), model.blocks(), 0, "mean"), "the example", visible=True, covers=("trained", "first", "float32"),
             **float32_tolerance),
        Case((fixed.normal(size=(3, 5)), six, 2, "mean"), "six small blocks, block 2 replaced by its mean"),
        Case((fixed.normal(size=(3, 5)), six, 5, "zero"), "six small blocks, the last one zeroed", covers=("last",)),
        Case((fixed.normal(size=(4, 5)), six, 0, "skip"), "six small blocks, the first one skipped"),
        Case((fixed.normal(size=(4, 5)), six, 3, "zero"), "six small blocks, block 3 zeroed"),
        Case((fixed.normal(size=(1, 6)), _toy_blocks(fixed, 6, 3), 1, "mean"),
             "a text of one token (its mean is the token itself)", covers=("one token",)),
        Case((fixed.normal(size=(4, 4)), _toy_blocks(fixed, 4, 1), np.int64(0), "mean"),
             "a single block, 4 tokens of 4 numbers, k a NumPy integer", covers=("one block", "numpy k", "square")),
        Case((np.array(model.embed(ids[40:60])), model.blocks(), 3, "zero"),
             "the trained blocks on 20 other tokens, the last one zeroed", covers=("trained", "last", "float32"),
             **float32_tolerance),
        Case((np.array(model.embed(ids[40:60])), model.blocks(), 1, "skip"),
             "the trained blocks on 20 other tokens, block 1 skipped", covers=("trained", "float32"),
             **float32_tolerance),
        Case((repeat.normal(size=(3, 5)), [same] * 3 + [other], 1, "mean"),
             "the same block three times in the list, then another", covers=("repeated",)),
        Case((fixed.normal(size=(2, 3)), _toy_blocks(fixed, 3, 1), 0, "skip"),
             "a single block, skipped (the stream leaves as it came)", covers=("one block", "first", "last")),
        Case((fixed.normal(size=(3, 4)), _biased_blocks(fixed, 4, 4), 1, "zero"),
             "four blocks with biases (a stream of zeros does not stay zeros), block 1 zeroed",
             covers=("biased",)),
    ]


def _ablate_case(rng) -> Case:
    d, n = int(rng.integers(2, 9)), int(rng.integers(2, 7))
    k, how = int(rng.integers(0, n)), str(rng.choice(["skip", "zero", "mean"]))
    return Case((rng.normal(size=(int(rng.integers(1, 6)), d)), _toy_blocks(rng, d, n), k, how),
                f"random blocks: {n} blocks of {d} numbers, block {k} taken out ({how})")


ABLATE = Exercise(
    id="ablate-three-ways", notebook=NOTEBOOK, title="A block taken out three ways", name="ablated",
    template='''def ablated(x, blocks, k, how):
    """The stream that leaves the blocks when block k (counted from 0) is taken out, one of three
    ways: "skip" (the stream passes block k unchanged), "zero" (block k hands on a stream of zeros)
    or "mean" (block k adds the same vector to every token: the average, over the tokens, of what
    it adds to each). Each block is a function, block(stream), that returns the new stream, its
    residual already added; x and every stream have shape (tokens, d)."""
    stream = x
    for i, block in enumerate(blocks):
        if i == k and how == "skip":
            continue
        new = block(stream)
        if i == k and how == "zero":
            new = ____
        elif i == k and how == "mean":
            new = ____
        stream = new
    return stream
''',
    solution=["np.zeros_like(new)", "stream + (new - stream).mean(axis=0, keepdims=True)"],
    reference=_ablated_reference,
    contract=ABLATE_CONTRACT,
    fixed=_ablate_fixed,
    draw=three_of(_ablate_case),
    hints=[
        "A block returns the stream with its addition already in it. What it adds to each token is what "
        "separates the stream it returns from the stream it read.",
        "Average that addition over the tokens, the rows: one vector of d numbers, which every token then "
        "gets in place of its own addition. The tokens are the first axis of a (tokens, d) grid.",
        "A stream of zeros has the shape of the stream it replaces; NumPy makes one from any array.",
    ],
    mistakes=[
        Mistake("mean of the stream", {1: "new.mean(axis=0, keepdims=True)"},
                "You replaced the whole stream by its average over the tokens, so every token leaves block k "
                "with the same vector and what the earlier blocks wrote into each is lost. Keep each token's "
                "stream and replace only what block k adds by its average."),
        Mistake("mean over each token's numbers", {1: "stream + (new - stream).mean(axis=-1, keepdims=True)"},
                "You averaged each token's addition over its own d numbers (the last axis). The average is "
                "over the tokens, the first axis: one vector of d numbers that every token gets."),
        Mistake("one number for everything", {1: "stream + (new - stream).mean()"},
                "You averaged the addition over the whole grid, one number added to every number of the "
                "stream. The average is over the tokens only: a vector of d numbers, one per column."),
        Mistake("mean added twice", {1: "new + (new - stream).mean(axis=0, keepdims=True)"},
                "You added the average to the stream block k returned, which already holds each token's own "
                "addition. Start from the stream block k read, `stream`, and add the average to that."),
        Mistake("the stream's mean added", {1: "stream + stream.mean(axis=0, keepdims=True)"},
                "You added the average of the stream block k read, not of what block k adds to it: that "
                "is `new - stream`."),
        Mistake("zero is skipping", {0: "stream"},
                "Handing on the stream block k read is skipping it. Zeroing its output hands on a stream of "
                "zeros instead, and what the earlier blocks wrote goes with it."),
        Mistake("zero as one number", {0: "0"},
                "A stream of zeros must keep the stream's shape (tokens, d), so that the next block can read "
                "it; `np.zeros_like` makes one from any array."),
    ],
    rtol=1e-9, atol=1e-9,
)


# ---------------------------------------------------------------- the capstone: one trained block, from your parts

# The exercises whose functions the capstone's block is built from, in the order its context
# names them; engine.core.parts reads the learner's own from their saved notebooks.
PARTS = ("rms-norm-16bit", "rope-rotation", "cached-causal-weights", "swiglu")


def your_parts(root=None):
    """The capstone's four parts, each the learner's own if their saved notebook holds one that
    passes its check again, else the course's (:func:`engine.core.parts.your_parts`)."""
    return parts.your_parts(PARTS, root)


CAPSTONE_CONTEXT = ("import numpy as np\nfrom engine.core.blank import ____\n"
                    "from engine.core.parts import course_parts\n"
                    f"rms_norm, rope_one, causal_weights, swiglu = course_parts({PARTS!r})\n")


def _block_reference(x, w):
    from functools import partial

    from lib.block import block
    from lib.positional import rope
    return block(x, w, placement="pre", norm="rms", eps=1e-5, causal=True,
                 positions=partial(rope, base=10000.0, pairing="halves"))


def _small_block(rng, d, heads, d_ff):
    from lib.block import BlockWeights
    square = [rng.normal(0.0, d ** -0.5, (d, d)) for _ in range(4)]
    return BlockWeights(*square, W_up=rng.normal(0.0, d ** -0.5, (d, d_ff)), W_down=rng.normal(0.0, d_ff ** -0.5, (d_ff, d)),
                        W_gate=rng.normal(0.0, d ** -0.5, (d, d_ff)), attention_norm_gain=rng.uniform(0.5, 1.5, d),
                        ffn_norm_gain=rng.uniform(0.5, 1.5, d), heads=heads)


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
          "w": "one block's weights (lib.block.BlockWeights, float64): the gains attention_norm_gain and "
               "ffn_norm_gain (d,), Wq, Wk, Wv, Wo (d, d), W_gate and W_up (d, d_ff), W_down (d_ff, d), heads"},
    returns="the stream after the block, shape (n, d)",
    ndims=(2,), dtypes=("float64",),
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


def _capstone_case(rng) -> Case:
    heads, size = int(rng.integers(1, 4)), 2 * int(rng.integers(1, 4))
    d, length = heads * size, int(rng.integers(1, 9))
    return Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (length, d)), _small_block(rng, d, heads, 2 * d)),
                f"random block: {heads} heads of {size} numbers, {length} tokens")


CAPSTONE = Exercise(
    id="capstone-block", notebook=NOTEBOOK, name="trained_block",
    title="Capstone: one block of the trained model, from your parts",
    template='''def trained_block(x, w):
    """One block of the trained model on a text x (n tokens of d numbers), built from the parts
    rms_norm, rope_one, causal_weights and swiglu. w holds the block's weights: the norms' gains
    w.attention_norm_gain and w.ffn_norm_gain (d,), w.Wq, w.Wk, w.Wv, w.Wo (d, d), w.W_gate and
    w.W_up (d, d_ff), w.W_down (d_ff, d) and the number of heads, w.heads."""
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
    solution=["rms_norm(x, w.attention_norm_gain)",
              "np.array([rope_one(k[t, cols], t) for t in range(n)])",
              "qj @ kj.T / np.sqrt(size)",
              "causal_weights(scores) @ v[:, cols]",
              "x + swiglu(rms_norm(x, w.ffn_norm_gain), w.W_gate, w.W_up, w.W_down)"],
    reference=_block_reference,
    contract=CAPSTONE_CONTRACT,
    fixed=_capstone_fixed,
    draw=three_of(_capstone_case),
    context=CAPSTONE_CONTEXT,
    hints=[
        "Pre-norm: each half reads a normalised copy of the stream, with its own gain (attention_norm_gain for "
        "the attention half, ffn_norm_gain for the FFN half), and adds its result to the plain stream.",
        "Keys are turned exactly like queries: token t by position t. A score compares a query "
        "with a key (a dot product of two rows), and attention divides it by the square root of "
        "the number of numbers each head has.",
        "`causal_weights` turns a grid of scores into weights with the future masked; the head's "
        "output is those weights times its values (the head's columns of v). The FFN half: the "
        "gated FFN of notebook 02 on the normalised copy, added to x.",
    ],
    mistakes=[
        Mistake("scores not scaled", {2: "qj @ kj.T"},
                "Your scores are not divided by the square root of the head size, so the softmax is "
                "far too sharp. Divide by the square root of the number of numbers per head."),
        Mistake("scaled by the model width", {2: "qj @ kj.T / np.sqrt(d)"},
                "You divided the scores by the square root of d, the model's width. Each head "
                "compares vectors of `size` numbers: divide by the square root of that."),
        Mistake("keys not turned", {1: "k[:, cols]"},
                "The keys were not turned by their positions. RoPE turns queries and keys alike; a "
                "score then depends on how far apart the two tokens are."),
        Mistake("keys against queries", {2: "kj @ qj.T / np.sqrt(size)"},
                "Your score grid has keys as rows and queries as columns, so the causal mask hides "
                "the wrong triangle. Put query t in row t: queries times the transposed keys."),
        Mistake("attention's gain for the FFN",
                {4: "x + swiglu(rms_norm(x, w.attention_norm_gain), w.W_gate, w.W_up, w.W_down)"},
                "The FFN half read its copy through attention's gain. Each half has its own: "
                "w.ffn_norm_gain for the FFN."),
        Mistake("FFN not added", {4: "swiglu(rms_norm(x, w.ffn_norm_gain), w.W_gate, w.W_up, w.W_down)"},
                "The FFN's result replaced the stream. Add it to x, as attention's was."),
        Mistake("FFN reads the raw stream", {4: "x + swiglu(x, w.W_gate, w.W_up, w.W_down)"},
                "The FFN read the raw stream. Like attention, it reads a normalised copy."),
        Mistake("attention reads the raw stream", {0: "x"},
                "Attention read the raw stream: its queries, keys and values must come from the "
                "normalised copy."),
        Mistake("values of every head", {3: "causal_weights(scores) @ v"},
                "Each head mixed the values of all the heads: with one head that is right, with "
                "several the heads' outputs come out too wide to join. Head j mixes only its own "
                "columns of v, the same columns its queries and keys use."),
    ],
    rtol=1e-3, atol=1e-4,
)

DEFINITIONS = [PERPLEXITY_LOGITS, ABLATE, CAPSTONE, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
