"""Exercises and questions of notebook 05, "Inside a trained model"."""

from __future__ import annotations

import numpy as np

from exercises.core.definition import Case, Contract, Exercise, Mistake, Question, Variant, in_float32

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
    x = np.array(model.embed(ids))
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
)

DEFINITIONS = [PERPLEXITY, RUN_BLOCKS, NUMBER_UNIFORM, PREDICT_BLOCK, PREDICT_MISMATCH]


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
                         "two additions."),
    Question("trained-out-float16", NOTEBOOK, "number",
             "What is the largest finite number float16 can hold?",
             answer=float(np.finfo(np.float16).max), tol=0.5,
             explanation="65,504: a stream value beyond it becomes infinity in float16."),
]
