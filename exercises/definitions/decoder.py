"""Exercises of notebook 04, "The decoder block and the stack".

Its questions are in :mod:`exercises.definitions.questions.decoder`."""

from __future__ import annotations

import numpy as np

from lib.attention import causal_mask as _causal_mask, softmax as _softmax
from lib.params import ModelConfig, count_parameters

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.questions import decoder as questions

NOTEBOOK = "04_decoder_block"


# ---------------------------------------------------------------- the causal mask for queries after a cache

def _cached_causal_reference(scores):
    return _softmax(np.where(_causal_mask(*scores.shape[-2:]), scores, -np.inf), axis=-1)


CACHED_EXAMPLE = np.array([[1.0, 2.0, 0.5, -1.0, 0.3],
                           [0.3, 1.2, 2.0, 0.0, 1.5]])
SQUARE_SCORES = np.array([[1.0, 2.0, 0.5, -1.0],      # the whole text at once; the retired check's example
                          [0.3, 1.2, 2.0, 0.0],
                          [-0.5, 0.8, 1.5, 2.5],
                          [1.0, 1.0, 1.0, 1.0]])

CACHED_CONTRACT = Contract(
    args={"scores": "finite scores, shape (..., Lq, Lk) with 1 <= Lq <= Lk: row i a query, column j "
                    "a key; the queries are the last Lq of the Lk tokens of the text"},
    returns="the weights, same shape: each row sums to 1 over the keys of its own token and the "
            "tokens before it, the future gets 0",
    ndims=(2, 3, 4), dtypes=("float64", "float32"),
    edges={"one token": "a text of a single token (Lq = Lk = 1)",
           "one new token": "one new token after a cache (Lq = 1): it reads every key",
           "square": "the whole text at once (Lq = Lk): the lower triangle",
           "large future": "the largest scores of a row in its future",
           "huge": "scores in the thousands, far beyond what exp can hold",
           "batch": "a batch of grids, and of heads"},
)


def _cached_fixed() -> list[Case]:
    return [
        Case((CACHED_EXAMPLE.copy(),), "the example", visible=True),
        Case((np.array([[3.7]]),), "a text of a single token", covers=("one token", "square")),
        Case((np.array([[0.5, -1.0, 2.0, 0.25, 1.0, -0.5]]),), "one new token after 5 cached ones",
             covers=("one new token",)),
        Case((SQUARE_SCORES.copy(),), "the whole text at once: 4 queries, 4 keys", covers=("square",)),
        Case((np.arange(90.0).reshape(3, 5, 6) * 0.37 - 4.0,), "a batch of 3 grids: 5 new tokens after 1",
             covers=("batch",)),
        Case((np.array([[-3.0, 2.0, 8.0, 9.0], [2.0, -1.0, 0.5, 40.0], [0.5, 0.2, -0.1, 0.3]]),),
             "large scores in the future of the first two queries", covers=("large future",)),
        Case((np.array([[-5000.0, -3000.0, -2000.0, 4000.0], [-1200.0, 900.0, 4000.0, -3000.0]]),),
             "scores in the thousands", covers=("huge",)),
        Case((np.sin(np.arange(2 * 3 * 4 * 7.0)).reshape(2, 3, 4, 7) * 5.0,),
             "a batch of 2 texts, 3 heads, 4 new tokens after 3", covers=("batch",)),
        in_float32(Case((np.cos(np.arange(15.0)).reshape(3, 5) * 3.0,), "float32 scores")),
    ]


def _cached_case(rng) -> Case:
    keys = int(rng.integers(2, 9))
    queries = int(rng.integers(1, keys + 1))
    lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    shape = lead + (queries, keys)
    return Case((rng.normal(0.0, rng.uniform(0.5, 4.0), shape),), f"random scores, shape {shape}")


_FILL_MISTAKES = [      # the fill of the masked scores, in either causal check
    Mistake("masked to zero", {1: "0"},
            "A masked score of 0 is not removed: e^0 = 1, so the future still gets weight. "
            "Fill the forbidden scores with minus infinity, whose exponential is exactly 0."),
    Mistake("finite fill", {1: "-1000"},
            "A large negative fill is not always enough: when a query's own scores are far "
            "below it (scores in the thousands), the masked future gets the weight after all. "
            "Minus infinity gives the future exactly 0, whatever the scores."),
]

CACHED_CAUSAL_WEIGHTS = Exercise(
    id="cached-causal-weights", notebook=NOTEBOOK, name="causal_weights",
    title="The causal mask for the last tokens of a text",
    template='''def causal_weights(scores):
    """Attention weights with the causal mask. scores has shape (..., Lq, Lk): one score per
    pair (query i, key j). The Lk keys are every token of the text so far; the Lq queries are
    its LAST Lq tokens (all of them when Lq = Lk). A query may use the key of its own token and
    the keys of the tokens before it, never a later one."""
    Lq, Lk = scores.shape[-2:]
    allowed = ____                          # (Lq, Lk): True where query i may use key j
    masked = np.where(allowed, scores, ____)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    solution=["np.tril(np.ones((Lq, Lk), dtype=bool), Lk - Lq)", "-np.inf"],
    reference=_cached_causal_reference,
    contract=CACHED_CONTRACT,
    fixed=_cached_fixed,
    draw=three_of(_cached_case),
    hints=[
        "Find where each query sits in the text. The queries are the last Lq of the Lk tokens, so query 0 is "
        "token Lk - Lq, and query i is token i + Lk - Lq. It may use every key up to that position.",
        "With Lq = Lk the allowed pairs are the lower triangle, diagonal included. Here the grid is "
        "Lq x Lk and its diagonal is shifted: `np.tril(grid, k)` keeps the entries with "
        "j <= i + k. Start from a grid of True values.",
        "A forbidden pair must end with weight exactly 0 after the softmax. A score of 0 does not do it: "
        "e^0 = 1, so the key would still be read. Which score gives e^score = 0?",
    ],
    mistakes=[
        Mistake("no shift", {0: "np.tril(np.ones((Lq, Lk), dtype=bool))"},
                "Your mask puts query 0 at the start of the text, so a new token may read only as "
                "many keys as its row number. The queries are the LAST Lq tokens: query i is token "
                "i + Lk - Lq of the text, and may read every key up to it."),
        Mistake("shifted the wrong way", {0: "np.tril(np.ones((Lq, Lk), dtype=bool), Lq - Lk)"},
                "Your diagonal moved the wrong way: it lets the queries read fewer keys than with "
                "no shift, and the first new tokens none at all (0 / 0 = NaN). Query i is token "
                "i + Lk - Lq: the diagonal moves right by Lk - Lq."),
        Mistake("one too far", {0: "np.tril(np.ones((Lq, Lk), dtype=bool), Lk - Lq + 1)"},
                "Your shift is one too large: each query may also read the key of the token right after it, "
                "the future. Query i is token i + Lk - Lq, and the last key it may read is its own."),
        Mistake("square mask", {0: "np.tril(np.ones((Lk, Lk), dtype=bool))"},
                "Your mask is Lk x Lk, one row per token of the text, but the scores have one row per query, "
                "Lq of them: the mask must be (Lq, Lk). Which rows of the square belong to the last Lq tokens?"),
        Mistake("upper triangle", {0: "np.triu(np.ones((Lq, Lk), dtype=bool), Lk - Lq)"},
                "Your mask keeps the upper side of the diagonal: each query reads itself and the "
                "FUTURE, the opposite of the causal mask."),
        Mistake("itself masked", {0: "np.tril(np.ones((Lq, Lk), dtype=bool), Lk - Lq - 1)"},
                "Your mask hides each query's own key too, so a text read whole gives its first "
                "token no key at all (0 / 0 = NaN). A query may use the key of its own token."),
        *_FILL_MISTAKES,
        Mistake("weights zeroed after the softmax", '''def causal_weights(scores):
    Lq, Lk = scores.shape[-2:]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * np.tril(np.ones((Lq, Lk)), Lk - Lq)
''',
                "You set the future's weights to 0 after the softmax, so the rows no longer add up "
                "to 1. Mask the scores before the softmax, so the past shares all the weight."),
    ],
    rtol=1e-6, atol=1e-9,
)


# ---------------------------------------------------------------- a test for reading the future

def whole_text_mean(x):
    """The check's example "model": adds the average of ALL tokens to every token, so each
    position reads the tokens after it. x: (length, d) -> (length, d)."""
    return x + x.mean(axis=0)


EXAMPLE_TOKENS = np.arange(12.0).reshape(4, 3)


def _leak(run, x, change):
    """The largest absolute change of each position's output when every later token gets its row
    of ``change``."""
    x = np.asarray(x, dtype=float)
    base = run(x)
    leak = np.zeros(len(x))
    for i in range(len(x)):
        changed = x.copy()
        changed[i + 1:] += change[i + 1:]
        leak[i] = np.abs(run(changed)[i] - base[i]).max()
    return leak


def _peek_next(x):
    """Each token plus the next one (the last token has none): reads exactly one step ahead."""
    out = x.copy()
    out[:-1] += x[1:]
    return out


def _running_mean(x):
    """Each token replaced by the mean of itself and the tokens before it: causal."""
    return np.cumsum(x, axis=0) / np.arange(1, len(x) + 1)[:, None]


def _minus_the_rest(x):
    """Each token minus the sum of every token after it."""
    return x - (np.cumsum(x[::-1], axis=0)[::-1] - x)


def _random_decoder(seed, d, causal, n_blocks=2):
    blocks = [_random_weights_block(seed + i, d) for i in range(n_blocks)]
    return lambda x: _lib_decoder(x, blocks, causal=causal).output


def _random_weights_block(seed, d):
    from lib.block import random_stack
    return random_stack(1, d, 4 * d, 1, seed=seed)[0]


def _lib_decoder(x, blocks, **options):
    from lib.block import decoder
    return decoder(x, blocks, **options)


def _leak_fixed(layer_norm: bool = False) -> list[Case]:
    """The fixed cases of the leak checks; ``layer_norm`` adds a LayerNorm decoder without the mask
    (a shift of every number of a token leaves it unmoved, a nudge does not)."""
    fixed = np.random.default_rng(23)
    cases = [
        Case((whole_text_mean, EXAMPLE_TOKENS.copy()), "the example", visible=True),
        Case((_peek_next, fixed.normal(size=(5, 3))), "a model that reads exactly one token ahead",
             covers=("one ahead",)),
        Case((_running_mean, fixed.normal(size=(6, 2))), "a causal running mean (it never reads ahead)",
             covers=("causal",)),
        Case((_minus_the_rest, fixed.normal(size=(4, 7))), "a model that subtracts every later token",
             covers=("pushed down", "more numbers than tokens")),
        Case((_random_decoder(7, 8, causal=True), fixed.normal(size=(6, 8))),
             "a decoder of 2 blocks with the causal mask", covers=("decoders", "causal")),
        Case((_random_decoder(9, 8, causal=False), fixed.normal(size=(6, 8))),
             "the same kind of decoder without the mask", covers=("decoders",)),
    ]
    if layer_norm:
        cases.append(Case((_layer_norm_decoder(13, 8, causal=False), fixed.normal(size=(6, 8))),
                          "a decoder of 2 blocks with LayerNorm and without the mask (it reads the future)",
                          covers=("layer norm",)))
    return cases + [
        Case((whole_text_mean, np.array([[2.0, -1.0, 0.5]])), "a text of one token (nothing comes after it)",
             covers=("one token",)),
        Case((_minus_the_rest, np.array([[0.5], [-1.0], [2.0], [0.25], [1.5]])),
             "tokens of a single number", covers=("one number", "pushed down")),
    ]


def _leak_mistakes(added) -> list[Mistake]:
    """The mistakes both leak checks know; ``added(rows)`` is what the tokens ``rows`` get (the
    retired check adds 1.0, the live one their rows of nudge)."""
    return [
        Mistake("included itself", {0: f"changed[i:] += {added('i:')}"},
                "Your change also moved token i itself, so even a causal model shows a change at i. "
                "Change only the tokens after i: the slice starts one row later."),
        Mistake("changed the past", {0: f"changed[:i] += {added(':i')}"},
                "You changed the tokens before i, the ones position i is allowed to read. The test "
                "is about the tokens after i."),
        Mistake("skipped the next token", {0: f"changed[i + 2:] += {added('i + 2:')}"},
                "Your change starts two rows after i, so the token right after i is never changed, and a model "
                "that reads one token ahead passes unseen. The tokens after i start one row after it."),
        Mistake("columns", {0: f"changed[:, i + 1:] += {added(':, i + 1:')}"},
                "You changed columns, not tokens: rows of x are tokens, and the numbers of a token "
                "are its columns. Change the rows after i, every number of each."),
        Mistake("whole output", {1: "np.abs(run(changed) - base).max()"},
                "You measured the change of the whole output, later positions included, and those "
                "may read the changed tokens. Compare row i only."),
        Mistake("no abs", {1: "(run(changed)[i] - base[i]).max()"},
                "A change can be negative: take the absolute value before the largest one, or a "
                "leak that pushes numbers down reads as 0."),
        Mistake("summed", {1: "np.abs(run(changed)[i] - base[i]).sum()"},
                "You added up the changes of position i's numbers; the test asks for the largest "
                "one (`.max()`)."),
    ]


# ---------------------------------------------------------------- the same test, with a change LayerNorm cannot erase

NUDGE_SEED = 0


def _nudge_reference(run, x):
    return _leak(run, x, np.random.default_rng(NUDGE_SEED).normal(size=np.shape(x)))


def _layer_norm_decoder(seed, d, causal, n_blocks=2):
    blocks = [_random_weights_block(seed + i, d) for i in range(n_blocks)]
    return lambda x: _lib_decoder(x, blocks, causal=causal, norm="layer").output


NUDGE_CONTRACT = Contract(
    args={"run": "a model: a function from a grid of tokens (length, d) to an output grid of the same shape",
          "x": "the tokens, shape (length, d), length >= 1 and d >= 1"},
    returns="one number >= 0 per position, length numbers (a list): the largest absolute change of "
            "position i's output when every token after i gets its own row of the fixed draw `nudge`",
    ndims=(2,), dtypes=("float64",),
    edges={"one token": "a text of one token (nothing comes after it)",
           "causal": "a model that never reads ahead (0 everywhere)",
           "one ahead": "a model that reads exactly one token ahead",
           "pushed down": "a model whose outputs go down when later tokens go up",
           "one number": "tokens of a single number",
           "more numbers than tokens": "tokens of more numbers than there are tokens",
           "decoders": "decoders with the causal mask and without it, with RMSNorm",
           "layer norm": "a decoder with LayerNorm and no mask: it reads the future, but a change of "
                         "the same size in every number of a token leaves it unmoved"},
)


def _nudge_fixed() -> list[Case]:
    return _leak_fixed(layer_norm=True)


def _nudge_case(rng) -> Case:
    d, length = int(rng.choice([4, 6, 8])), int(rng.integers(2, 8))
    causal, layer = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
    make = _layer_norm_decoder if layer else _random_decoder
    return Case((make(int(rng.integers(1_000_000)), d, causal=causal), rng.normal(size=(length, d))),
                f"random decoder with {'LayerNorm' if layer else 'RMSNorm'}, {length} tokens of "
                f"{d} numbers, {'with' if causal else 'without'} the mask")


FUTURE_LEAK_NUDGE = Exercise(
    id="future-leak-nudge", notebook=NOTEBOOK, title="A test for reading the future", name="future_leak",
    template='''def future_leak(run, x):
    """How much each position's output depends on the tokens after it.

    run(x) maps a grid of tokens x (length, d) to an output grid of the same shape. nudge is a
    fixed random draw of x's shape, a different amount for every number. For each position i: add
    to every token after i its own row of nudge, run again, and measure the largest absolute
    change of the output at position i. Returns one number per position, in a list; a causal
    model gives 0 everywhere."""
    nudge = np.random.default_rng(0).normal(size=x.shape)
    base = run(x)
    leak = []
    for i in range(len(x)):
        changed = x.copy()
        ____                      # every token after position i gets its own row of nudge
        leak.append(____)         # the largest absolute change of position i's output
    return leak
''',
    solution=["changed[i + 1:] += nudge[i + 1:]", "np.abs(run(changed)[i] - base[i]).max()"],
    reference=_nudge_reference,
    contract=NUDGE_CONTRACT,
    fixed=_nudge_fixed,
    draw=three_of(_nudge_case),
    hints=[
        "Position i may read itself and the tokens before it. Only the tokens strictly after it are "
        "the future, so the change must leave token i itself alone.",
        "Rows of x are tokens. A slice that starts one row after i and runs to the end picks every "
        "later token; the same slice of nudge gives each of them its own row, and `+=` adds them "
        "in place in the copy.",
        "Run the model on the changed grid, take row i of its output, subtract row i of the output "
        "you had before, and keep the largest size of a difference (`np.abs`, then `.max()`).",
    ],
    mistakes=[
        Mistake("same shift", {0: "changed[i + 1:] += 1.0"},
                "You added the same 1 to every number of the later tokens. A LayerNorm subtracts "
                "each token's mean, so it erases a shift of the same size in every number: a model "
                "with LayerNorm that reads the future then shows 0. Add each later token's own row "
                "of nudge, a different amount for every number."),
        Mistake("replaced", {0: "changed[i + 1:] = nudge[i + 1:]"},
                "You replaced the later tokens by their rows of nudge instead of adding them: the "
                "change is then the nudge minus the tokens. Add with `+=`."),
        *_leak_mistakes(lambda rows: f"nudge[{rows}]"),
    ],
    rtol=1e-9, atol=1e-12,
)


# ---------------------------------------------------------------- counting a model with grouped-query attention

def _grouped_reference(d, layers, d_ff, vocab, heads, kv_heads):
    return np.int64(count_parameters(ModelConfig(d_model=int(d), layers=int(layers), d_ff=int(d_ff),
                                                 vocab=int(vocab), heads=int(heads),
                                                 kv_heads=int(kv_heads))).total)


GROUPED_CONTRACT = Contract(
    args={"d": "a whole number >= 1", "layers": "a whole number >= 1", "d_ff": "a whole number >= 1",
          "vocab": "a whole number >= 1", "heads": "a whole number >= 1 that divides d",
          "kv_heads": "a whole number >= 1 that divides heads"},
    returns="a whole number",
    dtypes=(),
    edges={"tiny": "a tiny model", "one block": "a single block",
           "every head its own": "as many sets of keys and values as heads (kv_heads = heads)",
           "one set": "one set of keys and values for every head (kv_heads = 1)",
           "d_ff not 4d": "d_ff other than 4 d",
           "large": "a model of hundreds of millions of parameters",
           "numpy ints": "sizes given as NumPy integers"},
)


def _grouped_fixed() -> list[Case]:
    return [
        Case((768, 12, 3072, 32000, 12, 4), "the example", visible=True),
        Case((768, 12, 3072, 32000, 12, 12), "every head with its own keys and values",
             covers=("every head its own",)),
        Case((512, 6, 2048, 1000, 8, 1), "one set of keys and values for all 8 heads", covers=("one set",)),
        Case((4, 1, 8, 3, 2, 1), "a tiny model: d = 4, one block, 2 heads, 3 words", covers=("tiny", "one block")),
        Case((960, 32, 2560, 49152, 15, 5), "SmolLM2's sizes with a plain FFN: 15 heads, 5 sets",
             covers=("d_ff not 4d",)),
        Case((1024, 24, 4096, 50257, 16, 4), "GPT-2 Medium's sizes with 4 sets of keys and values",
             covers=("large",)),
        Case((96, 3, 200, 1000, 6, 2), "sizes whose roles cannot be swapped unnoticed"),
        Case((np.int64(64), np.int64(5), np.int64(90), np.int64(777), np.int64(4), np.int64(2)),
             "sizes given as NumPy integers", covers=("numpy ints",)),
    ]


def _grouped_case(rng) -> Case:
    heads = int(rng.choice([1, 2, 4, 6, 8, 12, 16]))
    kv_heads = int(rng.choice([k for k in range(1, heads + 1) if heads % k == 0]))
    d = heads * int(rng.integers(1, 17)) * 8
    layers, vocab = int(rng.integers(1, 49)), int(rng.integers(100, 100_000))
    d_ff = int(d * rng.choice([2, 3, 4]))
    return Case((d, layers, d_ff, vocab, heads, kv_heads),
                f"random sizes d={d}, {heads} heads, {kv_heads} sets of keys and values")


# Two mistakes of counting a block, met in every exercise that counts one.
NO_BLOCK_NORMS = "The block's two norms are missing: each has d gains, so 2·d per block."
ONE_FFN_MATRIX = "The FFN has two matrices, W_up (d x d_ff) and W_down (d_ff x d)."


GROUPED_PARAMETERS = Exercise(
    id="grouped-parameters", notebook=NOTEBOOK, name="model_parameters",
    title="Counting a model whose heads share keys and values",
    template='''def model_parameters(d, layers, d_ff, vocab, heads, kv_heads):
    """Parameters of a decoder with grouped-query attention: a tied embedding table, `layers`
    pre-norm blocks and the final norm. In each block, `heads` query heads share `kv_heads` sets
    of keys and values; a plain FFN without biases; two RMSNorm gains."""
    kv_width = ____          # how many numbers one token's keys take in one block
    per_block = ____         # Wq, Wk, Wv, Wo + the FFN + the block's two norms
    return vocab * d + layers * per_block + d
''',
    solution=["d // heads * kv_heads", "2 * d * d + 2 * d * kv_width + 2 * d * d_ff + 2 * d"],
    reference=_grouped_reference,
    contract=GROUPED_CONTRACT,
    fixed=_grouped_fixed,
    draw=three_of(_grouped_case),
    hints=[
        "A head works on a slice of d / heads numbers of each query, key and value. A set of keys "
        "is one head's slice, so kv_heads sets take kv_heads slices of that size.",
        "Wk and Wv turn a token's d numbers into its keys and its values: each is a d x kv_width "
        "matrix. Wq and Wo still map d numbers to d numbers: every head has its own queries.",
        "The rest of a block is counted as before: the FFN's two matrices, d x d_ff and d_ff x d, "
        "and two norms of d gains each.",
    ],
    mistakes=[
        Mistake("keys as wide as queries", {0: "d"},
                "Your keys are d numbers wide, one set per head: that is the count without sharing. "
                "With kv_heads sets of keys, one head's slice each, Wk and Wv are narrower."),
        Mistake("a set as wide as d", {0: "kv_heads * d"},
                "Each set of keys is one head's slice of d / heads numbers, not d numbers: "
                "kv_heads sets take kv_heads · d / heads."),
        Mistake("one set only", {0: "d // heads"},
                "That is the width of a single set of keys, as if every head shared one (kv_heads "
                "= 1). There are kv_heads sets, each d / heads wide."),
        Mistake("grouped the wrong way", {0: "d // kv_heads * heads"},
                "You divided by kv_heads and multiplied by heads: the width of one head is d / heads, "
                "and there are kv_heads sets of that width."),
        Mistake("queries narrowed too", {1: "d * d + 3 * d * kv_width + 2 * d * d_ff + 2 * d"},
                "Only keys and values are shared. Every head keeps its own queries, so Wq is still "
                "d x d, like Wo."),
        Mistake("one of Wk, Wv narrowed", {1: "3 * d * d + d * kv_width + 2 * d * d_ff + 2 * d"},
                "Keys and values are shared alike: both Wk and Wv are d x kv_width, and only Wq and "
                "Wo are d x d."),
        Mistake("no block norms", {1: "2 * d * d + 2 * d * kv_width + 2 * d * d_ff"},
                NO_BLOCK_NORMS),
        Mistake("one FFN matrix", {1: "2 * d * d + 2 * d * kv_width + d * d_ff + 2 * d"},
                ONE_FFN_MATRIX),
    ],
    rtol=0.0, atol=0.5,
)


DEFINITIONS = [CACHED_CAUSAL_WEIGHTS, FUTURE_LEAK_NUDGE, GROUPED_PARAMETERS, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
