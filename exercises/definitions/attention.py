"""Exercises of notebook 01, "Attention: how each token reads the others".

Each asks for a decision rather than a formula copied out: how a projection is cut into heads and
which scale each head's scores take; over which axis the weights of a batch of heads run, and the
mask of its layout; how each head's weighted mean is taken and the heads put side by side again.
Its questions are in :mod:`exercises.definitions.questions.attention`; the answers only the tests
try are in tests/data/answers/01_attention.toml."""

from __future__ import annotations

import numpy as np

from lib.attention import causal_weights as _causal_weights

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.questions import attention as questions

NOTEBOOK = "01_attention"


def _grid(shape, seed, scale=1.0):
    """Numbers of a fixed case: normal(0, scale) from ``default_rng(seed)``, rounded to 2 decimals."""
    return np.round(np.random.default_rng(seed).normal(0.0, scale, shape), 2)


# ---------------------------------------------------------------- every head's scores

def _head_scores_reference(x, Wq, Wk, heads):
    q, k = x @ Wq, x @ Wk                                            # (n, width) each
    size = q.shape[-1] // heads
    cut = [slice(h * size, (h + 1) * size) for h in range(heads)]
    return np.stack([q[:, c] @ k[:, c].T for c in cut]) / np.sqrt(size)


SCORES_X = np.array([[1.0, 0.0, 2.0, -1.0],
                     [0.5, 1.0, -1.0, 0.0],
                     [0.0, -2.0, 1.0, 1.0]])
SCORES_WQ = np.array([[1.0, 0.0, 0.5, -1.0],
                      [0.0, 1.0, 1.0, 0.0],
                      [-0.5, 0.0, 0.0, 1.0],
                      [1.0, 1.0, 0.0, 0.5]])
SCORES_WK = np.array([[0.0, 1.0, -1.0, 0.0],
                      [1.0, 0.5, 0.0, 1.0],
                      [0.5, 0.0, 1.0, -0.5],
                      [0.0, -1.0, 0.5, 1.0]])

SCORES_CONTRACT = Contract(
    args={"x": "the tokens, shape (n, d_model), n >= 1",
          "Wq": "the query weights, shape (d_model, width), width = heads * size",
          "Wk": "the key weights, shape (d_model, width), like Wq",
          "heads": "a whole number >= 1 that divides width: head h uses columns h*size ... (h+1)*size - 1"},
    returns="every head's scores, shape (heads, n, n): [h, i, j] is q_i . k_j / sqrt(size) in head h",
    ndims=(2,), dtypes=("float64", "float32"),
    edges={"one token": "a text of one token (n = 1)",
           "one head": "a single head as wide as the projection",
           "size one": "heads of a single number each (heads = width)",
           "wider": "a projection wider than d_model, so the head size is not d_model / heads",
           "as many": "as many heads as tokens and numbers per head",
           "large": "numbers in the tens, so the scale shows"},
)


def _scores_fixed() -> list[Case]:
    return [
        Case((SCORES_X.copy(), SCORES_WQ.copy(), SCORES_WK.copy(), 2), "the example", visible=True),
        Case((_grid((4, 6), 1), _grid((6, 6), 2), _grid((6, 6), 3), 3), "4 tokens, 3 heads of 2 numbers"),
        Case((_grid((5, 8), 4), _grid((8, 12), 5), _grid((8, 12), 6), 3),
             "d_model 8, a projection of 12 numbers: 3 heads of 4", covers=("wider",)),
        Case((_grid((1, 4), 7), _grid((4, 6), 8), _grid((4, 6), 9), 2), "one token, 2 heads of 3",
             covers=("one token",)),
        Case((_grid((3, 5), 10), _grid((5, 4), 11), _grid((5, 4), 12), 1), "one head of 4 numbers",
             covers=("one head",)),
        Case((_grid((4, 3), 13), _grid((3, 6), 14), _grid((3, 6), 15), 6), "6 heads of a single number",
             covers=("size one",)),
        Case((_grid((2, 3), 16), _grid((3, 4), 17), _grid((3, 4), 18), 2), "2 tokens, 2 heads of 2 numbers",
             covers=("as many",)),
        Case((_grid((3, 8), 19, 10.0), _grid((8, 8), 20, 3.0), _grid((8, 8), 21, 3.0), 2),
             "numbers in the tens, 2 heads of 4", covers=("large",)),
        in_float32(Case((_grid((4, 6), 22), _grid((6, 6), 23), _grid((6, 6), 24), 2), "4 tokens, 2 heads of 3")),
    ]


def _scores_case(rng) -> Case:
    n, d = int(rng.integers(1, 7)), int(rng.integers(1, 9))
    heads, size = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    width = heads * size
    return Case((rng.normal(0, 1, (n, d)), rng.normal(0, 1, (d, width)), rng.normal(0, 1, (d, width)), heads),
                f"random: {n} tokens, d_model {d}, {heads} heads of {size}")


_SCALE = ("The scores of one head are dot products of that head's queries and keys, each `size` numbers "
          "long, so their spread grows like the square root of the head's size, not of d_model.")

HEAD_SCORES = Exercise(
    id="head-scores", notebook=NOTEBOOK, name="head_scores", title="Every head's scores, scaled",
    template='''def split_heads(projected, heads):
    """(n, width) -> (heads, n, size), size = width // heads: head h gets the columns
    h*size ... (h+1)*size - 1, a slice of its own."""
    n, width = projected.shape
    return ____

def head_scores(x, Wq, Wk, heads):
    """Every head's scaled scores. x: (n, d_model); Wq, Wk: (d_model, width), width a multiple
    of heads. Returns (heads, n, n): [h, i, j] is query i's score against key j in head h."""
    q, k = split_heads(x @ Wq, heads), split_heads(x @ Wk, heads)    # (heads, n, size) each
    return q @ ____ / ____
''',
    solution=["projected.reshape(n, heads, width // heads).swapaxes(0, 1)", "k.swapaxes(-1, -2)",
              "np.sqrt(q.shape[-1])"],
    reference=_head_scores_reference,
    contract=SCORES_CONTRACT,
    fixed=_scores_fixed,
    draw=three_of(_scores_case),
    hints=[
        "`reshape` reads the numbers of an array in order, the last axis fastest, and lays them out "
        "again in the same order. Which shape keeps each token's row together and cuts it into "
        "`heads` pieces of `width // heads`? The heads axis can be moved to the front afterwards.",
        "In `q @ something`, the product runs over the last axis of q and the second-to-last of "
        "the other array, head by head. The keys must be turned so that their `size` axis comes "
        "second to last, and only their last two axes swapped: `.T` reverses every axis.",
        "The scale is the square root of the number of numbers each dot product adds up: the "
        "head's size, read off `q` itself.",
    ],
    mistakes=[
        Mistake("heads first", {0: "projected.reshape(heads, n, width // heads)"},
                "Your reshape cuts the array into heads straight away, so head 0 gets the first numbers in "
                "reading order: the first rows of every column, not the first columns of every row. Cut "
                "each token's row into its pieces first (the heads next to the token axis), then move the "
                "heads axis to the front."),
        Mistake("heads left in the middle", {0: "projected.reshape(n, heads, width // heads)"},
                "Your pieces are right, but the heads stay in the middle: (n, heads, size). Then the "
                "product pairs heads with heads instead of tokens with tokens. Move the heads axis to the "
                "front, (heads, n, size)."),
        Mistake("every other column", {0: "projected.reshape(n, width // heads, heads).transpose(2, 0, 1)"},
                "Your head h gets every heads-th column (h, h + heads, h + 2*heads, ...), not a slice of "
                "columns side by side. Cut each row into `heads` pieces of `size` numbers: the pieces' "
                "axis comes before the size axis."),
        Mistake("T of three axes", {1: "k.T"},
                "On an array of three axes, `.T` reverses all three: (heads, n, size) becomes "
                "(size, n, heads), which mixes the heads up. Swap only the last two axes."),
        Mistake("d_model", {2: "np.sqrt(x.shape[-1])"},
                "You divided by the square root of d_model. " + _SCALE),
        Mistake("heads", {2: "np.sqrt(heads)"}, "You divided by the square root of the number of heads. A head's "
                "scores sum `size` products: their spread grows like the root of the head's size (q's shape holds it)."),
        Mistake("whole width", {2: "np.sqrt(Wq.shape[1])"},
                "You divided by the square root of the whole projection's width, every head together. "
                + _SCALE),
        Mistake("size, no root", {2: "q.shape[-1]"},
                "You divided by the head's size itself. The spread of a sum of `size` products grows like "
                "its square root: divide by that."),
        Mistake("size squared", {2: "q.shape[-1] ** 2"},
                "You divided by the square of the head's size. The spread of a sum of `size` products "
                "grows like the square root of `size`: divide by that root."),
        Mistake("not divided", {2: "1"},
                "Your scores are not scaled. Divide them by the square root of the head's size, so that "
                "their spread stays near 1 however wide the head is."),
    ],
)


# ---------------------------------------------------------------- the weights of every head at once

CAUSAL_EXAMPLE = np.array([[[1.0, 3.0, -1.0],
                            [2.0, 0.0, 4.0],
                            [0.5, 1.5, 1.0]],
                           [[0.0, 2.0, 2.0],
                            [-1.0, 1.0, 3.0],
                            [2.0, -2.0, 0.0]]])

CAUSAL_CONTRACT = Contract(
    args={"scores": "finite scores, shape (heads, n, n): [h, i, j] query i's score against key j in head h"},
    returns="the weights, same shape: 0 on every later key, each query's weights summing to 1 in each head",
    ndims=(3,), dtypes=("float64", "float32"), square=(-2, -1),
    edges={"one token": "a text of one token (n = 1)",
           "one head": "a single head",
           "more heads than tokens": "more heads than tokens",
           "large future": "the largest scores of a row in its future",
           "huge": "scores in the thousands, far beyond what exp can hold"},
)


def _causal_fixed() -> list[Case]:
    future = np.array([[[0.0, 9.0, 12.0, 8.0], [1.0, -1.0, 20.0, 7.0], [0.5, 0.2, -0.1, 30.0],
                        [1.0, 2.0, 3.0, 4.0]]])
    return [
        Case((CAUSAL_EXAMPLE.copy(),), "the example", visible=True),
        Case((np.array([[[2.0]], [[-1.0]], [[0.5]]]),), "one token, 3 heads", covers=("one token",)),
        Case((_grid((1, 4, 4), 30),), "one head, 4 tokens", covers=("one head",)),
        Case((_grid((2, 5, 5), 31, 2.0),), "2 heads, 5 tokens"),
        Case((_grid((6, 3, 3), 32, 2.0),), "6 heads, 3 tokens", covers=("more heads than tokens",)),
        Case((future,), "the largest scores in the future", covers=("large future",)),
        Case((np.array([[[-5000.0, 4000.0, 1.0], [-1200.0, 900.0, 4000.0], [3000.0, -3000.0, 2500.0]],
                        [[100.0, 200.0, 300.0], [2000.0, -2000.0, 0.0], [0.0, 0.0, 0.0]]]),),
             "scores in the thousands", covers=("huge",)),
        in_float32(Case((_grid((3, 4, 4), 33, 3.0),), "3 heads, 4 tokens")),
    ]


def _causal_case(rng) -> Case:
    heads, n = int(rng.integers(1, 5)), int(rng.integers(1, 7))
    return Case((rng.normal(0.0, rng.uniform(0.5, 4.0), (heads, n, n)),), f"random scores, {heads} heads, {n} tokens")


HEADS_CAUSAL_SOFTMAX = Exercise(
    id="heads-causal-softmax", notebook=NOTEBOOK, name="causal_softmax",
    title="The weights of every head at once",
    template='''def causal_softmax(scores):
    """The weights of every head at once. scores: (heads, n, n), [h, i, j] query i's score
    against key j in head h. A query may look at its own key and earlier ones, never a later one.
    Returns the same shape: 0 on later keys, each query's weights summing to 1."""
    n = scores.shape[-1]
    allowed = ____                 # (n, n): True where query i may look at key j
    masked = np.where(allowed, scores, -np.inf)
    axis = ____                    # the axis along which one query's weights run
    e = np.exp(masked - masked.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    solution=["np.tril(np.ones((n, n), dtype=bool))", "-1"],
    reference=_causal_weights,
    contract=CAUSAL_CONTRACT,
    fixed=_causal_fixed,
    draw=three_of(_causal_case),
    hints=[
        "Row i of the grid is query i, column j is key j. Query i may use the keys j <= i: draw that "
        "region of an (n, n) grid of True values. NumPy keeps or clears a triangle of a grid with "
        "`np.tril` and `np.triu`.",
        "`allowed` has shape (n, n) and the scores (heads, n, n): NumPy lines the two up from the "
        "right, so the same mask applies to every head.",
        "One query's weights are the numbers of one row of one head: they share h and i and differ in "
        "j. Which axis of (heads, n, n) holds j?",
    ],
    mistakes=[
        Mistake("the future allowed", {0: "np.triu(np.ones((n, n), dtype=bool))"},
                "Your mask keeps the upper triangle: each query looks at itself and the LATER keys, the "
                "opposite of the causal mask. Row i is query i; it may use columns j <= i."),
        Mistake("itself hidden", {0: "np.tril(np.ones((n, n), dtype=bool), -1)"},
                "Your mask hides each query's own key too, so the first query has no key at all and gets "
                "0 / 0 = NaN. A query may look at its own key."),
        Mistake("no mask", {0: "np.ones((n, n), dtype=bool)"},
                "Your mask allows every key, so each query also looks at the later keys, the future. The "
                "causal mask keeps, in row i, only the columns j <= i."),
        Mistake("itself only", {0: "np.eye(n, dtype=bool)"},
                "Your mask allows each query its own key only, so every weight is 1 on the diagonal and "
                "the earlier keys get nothing. A query may look at its own key and every earlier one."),
        Mistake("one key ahead", {0: "np.tril(np.ones((n, n), dtype=bool), 1)"},
                "Your mask keeps one diagonal too many: each query also sees the next key, one step in "
                "the future. Keep the diagonal and what lies below it, nothing above."),
        Mistake("over the heads", {1: "0"},
                "Axis 0 runs over the heads: your weights sum to 1 across the heads for each pair (i, j). "
                "One query's weights are spread over the keys, within one head."),
        Mistake("over the queries", {1: "1"},
                "Axis 1 (here the same as -2) runs down a column: your weights sum to 1 over the queries "
                "that look at one key. "
                "One query's weights run along its row, over the keys."),
        Mistake("over the whole grid", {1: "(1, 2)"},
                "Your weights sum to 1 over each head's whole grid, every query together. One query's "
                "weights run along its own row, over the keys: one axis, the last."),
    ],
    rtol=1e-6, atol=1e-9,
)


# ---------------------------------------------------------------- from the weights to the output

def _heads_output_reference(weights, v, Wo):
    heads = weights.shape[0]
    size = v.shape[1] // heads
    mixed = [weights[h] @ v[:, h * size:(h + 1) * size] for h in range(heads)]     # each (n, size)
    return np.concatenate(mixed, axis=1) @ Wo


def _weights(heads, n, seed, scale=1.5):
    """Rows that sum to 1 (a softmax of drawn scores, the future masked): a fixed case's weights."""
    return _causal_weights(_grid((heads, n, n), seed, scale))


OUTPUT_WEIGHTS = np.array([[[1.0, 0.0, 0.0],
                            [0.25, 0.75, 0.0],
                            [0.5, 0.25, 0.25]],
                           [[1.0, 0.0, 0.0],
                            [0.5, 0.5, 0.0],
                            [0.1, 0.3, 0.6]]])
OUTPUT_V = np.array([[1.0, 0.0, 2.0, -1.0],
                     [0.0, 1.0, 1.0, 3.0],
                     [-2.0, 1.0, 0.0, 1.0]])
OUTPUT_WO = np.array([[1.0, 0.0, 0.5],
                      [0.0, 1.0, -1.0],
                      [1.0, 1.0, 0.0],
                      [0.5, -0.5, 1.0]])

OUTPUT_CONTRACT = Contract(
    args={"weights": "each head's weights, shape (heads, n, n), each row summing to 1",
          "v": "the values of every head side by side, shape (n, width), width = heads * size",
          "Wo": "the output weights, shape (width, d_out)"},
    returns="the layer's output, shape (n, d_out)",
    ndims=(3,), dtypes=("float64", "float32"), square=(-2, -1),
    edges={"one token": "a text of one token (n = 1)",
           "one head": "a single head as wide as the values",
           "size one": "heads of a single number each",
           "size as tokens": "as many numbers per head as tokens",
           "one key": "weights that put everything on one key",
           "wider": "d_out differs from width"},
)


def _output_fixed() -> list[Case]:
    one_key = np.zeros((2, 4, 4))
    one_key[0, np.arange(4), [0, 0, 1, 2]] = 1.0                 # head 1: each token on the one before
    one_key[1, np.arange(4), 0] = 1.0                            # head 2: every token on the first
    return [
        Case((OUTPUT_WEIGHTS.copy(), OUTPUT_V.copy(), OUTPUT_WO.copy()), "the example", visible=True),
        Case((_weights(3, 4, 41), _grid((4, 6), 42), _grid((6, 5), 43)), "3 heads of 2, 4 tokens",
             covers=("wider",)),
        Case((_weights(1, 4, 44), _grid((4, 3), 45), _grid((3, 2), 46)), "one head of 3", covers=("one head",)),
        Case((_weights(3, 2, 47), _grid((2, 3), 48), _grid((3, 4), 49)), "3 heads of a single number",
             covers=("size one",)),
        Case((_weights(2, 1, 50), _grid((1, 4), 51), _grid((4, 3), 52)), "one token, 2 heads",
             covers=("one token",)),
        Case((_weights(2, 3, 53), _grid((3, 6), 54), _grid((6, 2), 55)), "2 heads of 3 numbers, 3 tokens",
             covers=("size as tokens",)),
        Case((one_key, _grid((4, 4), 56), _grid((4, 3), 57)), "weights all on one key", covers=("one key",)),
        in_float32(Case((_weights(2, 5, 58), _grid((5, 4), 59), _grid((4, 3), 60)), "2 heads, 5 tokens")),
    ]


def _output_case(rng) -> Case:
    heads, n, size, d_out = (int(rng.integers(1, k)) for k in (5, 7, 5, 7))
    weights = _causal_weights(rng.normal(0.0, 2.0, (heads, n, n)))
    return Case((weights, rng.normal(0, 1, (n, heads * size)), rng.normal(0, 1, (heads * size, d_out))),
                f"random: {heads} heads of {size}, {n} tokens")


HEADS_OUTPUT = Exercise(
    id="heads-output", notebook=NOTEBOOK, name="heads_output", title="From the weights to the output",
    template='''def heads_output(weights, v, Wo):
    """The layer's output. weights: (heads, n, n), row i of head h is query i's weights on the
    keys j, summing to 1; v: (n, width), the values of every head side by side (head h: the
    columns h*size ... (h+1)*size - 1); Wo: (width, d_out). Returns (n, d_out)."""
    heads, n = weights.shape[:2]
    per_head = v.reshape(n, heads, -1).swapaxes(0, 1)      # (heads, n, size): head h's values
    mixed = ____      # (heads, n, size): each query's weighted mean of its head's values
    joined = ____     # (n, width): each token's results of every head, side by side again
    return joined @ Wo
''',
    solution=["weights @ per_head", "mixed.swapaxes(0, 1).reshape(n, -1)"],
    reference=_heads_output_reference,
    contract=OUTPUT_CONTRACT,
    fixed=_output_fixed,
    draw=three_of(_output_case),
    hints=[
        "Query i's output in head h is the sum over j of weights[h, i, j] times the values of key j in "
        "that head: a matrix product of one head's (n, n) weights by its (n, size) values, done for "
        "every head at once.",
        "`mixed` is (heads, n, size). `reshape` reads it in order, the last axis fastest: for each "
        "token's row to hold its heads' results one after another, the token axis must come first.",
    ],
    mistakes=[
        Mistake("weights transposed", {0: "weights.swapaxes(-1, -2) @ per_head"},
                "You turned the weights round, so column j, the weights that every query gives key j, "
                "mixes the values. Row i is query i's weights: multiply the weights as they are by the "
                "values."),
        Mistake("values first", {0: "per_head @ weights"},
                "The product runs over the last axis of the left array and the second-to-last of the "
                "right one: values (n, size) times weights (n, n) pairs numbers of the values with "
                "queries. Put the weights first: (n, n) times (n, size)."),
        Mistake("no mixing", {0: "weights.sum(axis=-1, keepdims=True) * per_head"},
                "Each row of weights sums to 1, so your result is each query's own value, unchanged: no "
                "token reads another. Mix the values with the weights, a matrix product of each head's "
                "(n, n) weights by its (n, size) values."),
        Mistake("reshaped without moving", {1: "mixed.reshape(n, -1)"},
                "`mixed` is (heads, n, size), and `reshape` reads it head by head: your first rows hold "
                "head 1's results for several tokens. Bring the token axis to the front first, then "
                "reshape."),
        Mistake("heads added", {1: "mixed.sum(axis=0)"},
                "Your result is one head wide, `size` numbers per token, where W_O reads every head side by "
                "side, heads * size numbers. The heads' results are neither added nor stacked below one "
                "another: each token's row holds head 1's numbers, then head 2's, and so on."),
        Mistake("heads in reverse order", {1: "np.hstack(mixed[::-1])"},
                "Your rows hold the heads in reverse order, the last head first. W_O reads head 1's "
                "numbers first, then head 2's, and so on: keep the heads in their order."),
        Mistake("every other number", {1: "mixed.transpose(1, 2, 0).reshape(n, -1)"},
                "Your rows interleave the heads, one number of each head in turn. Each head's `size` "
                "numbers stay together: the heads axis comes before the size axis."),
    ],
)

DEFINITIONS = [HEAD_SCORES, HEADS_CAUSAL_SOFTMAX, HEADS_OUTPUT, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
