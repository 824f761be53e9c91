"""Exercises and questions of notebook 04, "The decoder block and the stack"."""

from __future__ import annotations

import numpy as np

from lib.attention import attention as _attention, causal_mask as _causal_mask, softmax as _softmax
from lib.ffn import ffn as _ffn, worked_example as _worked_example
from lib.norm import layer_norm as _layer_norm, rms_norm as _rms_norm
from lib.params import ModelConfig, block_parameters as _block_parameters, count_parameters

from exercises.core.definition import Case, Contract, Exercise, Mistake, Question, Variant, in_float32

NOTEBOOK = "04_decoder_block"


# ---------------------------------------------------------------- causal weights

def _causal_reference(scores):
    length = scores.shape[-1]
    return _softmax(np.where(_causal_mask(length), scores, -np.inf), axis=-1)


def _masked_softmax(scores, allowed, fill=-np.inf):
    masked = np.where(allowed, scores, fill)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


CAUSAL_CONTRACT = Contract(
    args={"scores": "finite scores, shape (..., L, L): row i a query, column j a key, L >= 1"},
    returns="the weights, same shape: each row sums to 1 over the keys j <= i, the future gets 0",
    ndims=(2, 3, 4),
    dtypes=("float64", "float32"),
    square=(-2, -1),
    edges={"one token": "a single token (L = 1)",
           "large future": "the largest scores of a row in its future",
           "huge": "scores in the thousands, far beyond what exp can hold",
           "batch": "a batch of grids, and of heads"},
)


def _causal_fixed() -> list[Case]:
    example = np.array([[1.0, 2.0, 0.5, -1.0],
                        [0.3, 1.2, 2.0, 0.0],
                        [-0.5, 0.8, 1.5, 2.5],
                        [1.0, 1.0, 1.0, 1.0]])
    return [
        Case((example,), "the example", visible=True),
        Case((np.array([[3.7]]),), "a single token (L = 1)", covers=("one token",)),
        Case((np.arange(75.0).reshape(3, 5, 5) * 0.37 - 4.0,), "a batch of 3 grids of 5 tokens",
             covers=("batch",)),
        Case((np.array([[-3.0, 8.0, 9.0], [2.0, -1.0, 40.0], [0.5, 0.2, -0.1]]),),
             "large scores in the future of rows 1 and 2", covers=("large future",)),
        Case((np.array([[-5000.0, 3000.0, -2000.0], [-1200.0, 900.0, 4000.0], [2500.0, -2500.0, 10.0]]),),
             "scores in the thousands", covers=("huge",)),
        Case((np.sin(np.arange(2 * 3 * 6 * 6.0)).reshape(2, 3, 6, 6) * 5.0,),
             "a batch of 2 texts, 3 heads, 6 tokens", covers=("batch",)),
        in_float32(Case((np.cos(np.arange(16.0)).reshape(4, 4) * 3.0,), "float32 scores")),
    ]


def _causal_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        length = int(rng.integers(2, 9))
        lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
        shape = lead + (length, length)
        cases.append(Case((rng.normal(0.0, rng.uniform(0.5, 4.0), shape),), f"random scores, shape {shape}"))
    return cases


def _future(scores):
    length = scores.shape[-1]
    return _masked_softmax(scores, np.triu(np.ones((length, length), dtype=bool)))


def _zero_fill(scores):
    length = scores.shape[-1]
    return _masked_softmax(scores, np.tril(np.ones((length, length), dtype=bool)), 0.0)


def _no_mask(scores):
    return _softmax(scores, axis=-1)


def _strict(scores):
    length = scores.shape[-1]
    return _masked_softmax(scores, np.tril(np.ones((length, length), dtype=bool), -1))


def _masked_to_zero_weight(scores):
    length = scores.shape[-1]
    return _softmax(scores, axis=-1) * np.tril(np.ones((length, length)))


CAUSAL_WEIGHTS = Exercise(
    id="causal-weights",
    notebook=NOTEBOOK,
    title="Attention weights with the causal mask",
    name="causal_weights",
    template='''def causal_weights(scores):
    """Attention weights with the causal mask: row i (a query) may use the keys j <= i only.
    scores has shape (..., L, L), one score per pair (query i, key j)."""
    L = scores.shape[-1]
    allowed = ____                          # (L, L): True where j <= i
    masked = np.where(allowed, scores, ____)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    solution=["np.tril(np.ones((L, L), dtype=bool))", "-np.inf"],
    reference=_causal_reference,
    contract=CAUSAL_CONTRACT,
    fixed=_causal_fixed,
    draw=_causal_draw,
    hints=[
        "Draw the grid: rows are queries i, columns keys j. The allowed pairs, j <= i, are the "
        "diagonal and everything below it: a lower triangle.",
        "NumPy builds triangles from a full grid: `np.tril` keeps the lower triangle of an array "
        "(diagonal included), `np.triu` the upper one. Start from a grid of True values.",
        "A forbidden pair must end with weight exactly 0 after the softmax. Which score gives "
        "e^score = 0?",
    ],
    mistakes=[
        Mistake("upper triangle",
                "Your mask keeps the upper triangle: each query reads itself and the FUTURE, the "
                "opposite of the causal mask. Row i may use the columns j <= i.",
                impl=_future),
        Mistake("masked to zero",
                "A masked score of 0 is not removed: e^0 = 1, so the future still gets weight. "
                "Fill the forbidden scores with minus infinity, whose exponential is exactly 0.",
                impl=_zero_fill),
        Mistake("no mask",
                "Every row still uses every column: the mask changed nothing. Check `allowed`: it "
                "must be False above the diagonal.",
                impl=_no_mask),
        Mistake("finite fill",
                "A large negative fill is not always enough: when a query's own scores are far "
                "below it (scores in the thousands), the masked future gets the weight after all. "
                "Minus infinity gives the future exactly 0, whatever the scores.",
                impl=lambda scores: _masked_softmax(
                    scores, np.tril(np.ones((scores.shape[-1],) * 2, dtype=bool)), -1000.0)),
        Mistake("diagonal masked",
                "Your mask hides the diagonal too, so the first query may use no key at all "
                "(0 / 0 = NaN). A query may use the keys j <= i: itself included.",
                impl=_strict),
        Mistake("weights zeroed after the softmax",
                "You set the future's weights to 0 after the softmax, so the rows no longer add up "
                "to 1. Mask the scores before the softmax, so the past shares all the weight.",
                impl=_masked_to_zero_weight),
    ],
    wrong=[
        Variant({0: "np.triu(np.ones((L, L), dtype=bool))"}, ["row 0", "future"], "values"),
        Variant({1: "0"}, ["row 0", "e^0 = 1"], "values"),
        Variant({0: "np.ones((L, L), dtype=bool)"}, ["row 0", "False above the diagonal"], "values"),
        Variant({0: "np.tril(np.ones((L, L), dtype=bool), -1)"}, ["NaN", "diagonal"], "nan"),
        Variant({0: "np.tril(np.ones((L, L), dtype=bool)).T"}, ["row 0", "future"], "values"),
        Variant({1: "-1000"}, ["hidden test", "thousands", "minus infinity"], "values"),
        Variant({1: "-100"}, ["hidden test", "scores in the thousands"], "values"),
        Variant(source='''def causal_weights(scores):
    L = scores.shape[-1]
    scores[..., ~np.tril(np.ones((L, L), dtype=bool))] = -np.inf
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''', expect=["changed its argument `scores`", "caller", "new array"], kind="inplace"),
        Variant(source='''def causal_weights(scores):
    L = scores.shape[-1]
    masked = np.where(np.tril(np.ones((L, L), dtype=bool)), scores, -np.inf)
    e = np.exp(masked)
    return e / e.sum(axis=-1, keepdims=True)
''', expect=["NaN", "hidden test", "thousands"], kind="nan"),
        Variant({0: "np.tril(np.ones((L, L), dtype=bool))", 1: "-np.infinity"}, ["AttributeError"], "error"),
    ],
    alternatives=[
        Variant({0: "np.arange(L)[:, None] >= np.arange(L)"}),
        Variant({1: "float('-inf')"}),
        Variant({0: "~np.triu(np.ones((L, L), dtype=bool), 1)", 1: "-1e9"}),
        Variant({0: "np.tril(np.ones((L, L))) == 1"}),
    ],
    rtol=1e-6,
    atol=1e-9,
    skills="apply the causal mask: position i attends to j <= i",
)


# ---------------------------------------------------------------- the decoder stack

def _decoder_reference(x, n_blocks, attention, ffn, norm):
    for _ in range(n_blocks):
        x = x + attention(norm(x))
        x = x + ffn(norm(x))
    return norm(x)


def hand_attention(h):
    """The hand example's attention: Q = K = V = the token's numbers (identity projections),
    causal, one head."""
    eye = np.eye(h.shape[-1])
    return _attention(h, eye, eye, eye, eye, heads=1, causal=True)


def worked_ffn(h):
    """Notebook 02's worked FFN (W1, b1, ReLU, W2, b2) on every token of h (..., 2)."""
    e = _worked_example()
    return _ffn(h, e.W1, e.b1, e.W2, e.b2, activation="relu")


def _random_attention(seed: int, d: int, heads: int = 1):
    w = np.random.default_rng(seed).normal(0.0, d ** -0.5, (4, d, d))
    return lambda h: _attention(h, *w, heads=heads, causal=True)


def _random_ffn(seed: int, d: int):
    g = np.random.default_rng(seed)
    W1, W2 = g.normal(0.0, d ** -0.5, (d, 4 * d)), g.normal(0.0, (4 * d) ** -0.5, (4 * d, d))
    return lambda h: _ffn(h, W1, None, W2, None, activation="gelu")


def _rms(h):
    return _rms_norm(h)


def _ln(h):
    return _layer_norm(h)


DECODER_CONTRACT = Contract(
    args={"x": "the stream, shape (L, d)", "n_blocks": "a whole number >= 0",
          "attention": "a function of a grid of tokens", "ffn": "a function of a grid of tokens",
          "norm": "a function of a grid of tokens"},
    returns="the final stream, shape (L, d)",
    ndims=(2, 3),
    dtypes=("float64",),
    edges={"no blocks": "no blocks at all", "several blocks": "several blocks",
           "large": "a large stream", "batch": "a batch of texts", "one token": "a single token"},
)


def _decoder_fixed() -> list[Case]:
    return [
        Case((np.array([[0.0, 4.0]]), 1, hand_attention, worked_ffn, _ln), "the example", visible=True,
             covers=("one token",)),
        Case((np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0], [2.5, 0.5, 0.0, -1.5]]), 2,
              _random_attention(11, 4), _random_ffn(12, 4), _rms), "3 tokens, 2 blocks, RMSNorm",
             covers=("several blocks",)),
        Case((np.array([[3.0, -1.0, 2.0, 0.0]]), 0, _random_attention(13, 4), _random_ffn(14, 4), _rms),
             "no blocks at all (only the final norm)", covers=("no blocks",)),
        Case((np.cos(np.arange(2 * 5 * 6.0)).reshape(2, 5, 6) * 2.0, 3, _random_attention(15, 6, 2),
              _random_ffn(16, 6), _ln), "a batch of 2 texts, 3 blocks, LayerNorm", covers=("batch",)),
        Case((np.array([[10.0, 20.0, 30.0, 44.0], [5.0, -5.0, 0.0, 12.0]]), 1, _random_attention(17, 4),
              _random_ffn(18, 4), _ln), "a large stream (the norms must not replace it)", covers=("large",)),
    ]


def _decoder_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d = int(rng.choice([4, 6, 8]))
        length = int(rng.integers(1, 6))
        n = int(rng.integers(1, 4))
        norm = _rms if rng.random() < 0.5 else _ln
        seed = int(rng.integers(1_000_000))
        cases.append(Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (length, d)), n,
                           _random_attention(seed, d), _random_ffn(seed + 1, d), norm),
                          f"random tokens, {length} of {d} numbers, {n} blocks"))
    return cases


def _no_final_norm(x, n, attention, ffn, norm):
    for _ in range(n):
        x = x + attention(norm(x))
        x = x + ffn(norm(x))
    return x


def _post_norm(x, n, attention, ffn, norm):
    for _ in range(n):
        x = norm(x + attention(x))
        x = norm(x + ffn(x))
    return norm(x)


def _raw_reads(x, n, attention, ffn, norm):
    for _ in range(n):
        x = x + attention(x)
        x = x + ffn(x)
    return norm(x)


def _ffn_replaces(x, n, attention, ffn, norm):
    for _ in range(n):
        x = x + attention(norm(x))
        x = ffn(norm(x))
    return norm(x)


def _parallel(x, n, attention, ffn, norm):
    for _ in range(n):
        h = norm(x)
        x = x + attention(h) + ffn(h)
    return norm(x)


DECODER = Exercise(
    id="decoder-stack",
    notebook=NOTEBOOK,
    title="The decoder: n pre-norm blocks, then the final norm",
    name="decoder",
    template='''def decoder(x, n_blocks, attention, ffn, norm):
    """n_blocks pre-norm blocks, one after the other, then the final norm.
    attention(h), ffn(h) and norm(h) are functions of a grid of tokens h."""
    for _ in range(n_blocks):
        x = ____          # the attention half: it reads a normalised copy; its result is added
        x = ____          # the FFN half, the same way
    return ____           # the final norm
''',
    solution=["x + attention(norm(x))", "x + ffn(norm(x))", "norm(x)"],
    reference=_decoder_reference,
    contract=DECODER_CONTRACT,
    fixed=_decoder_fixed,
    draw=_decoder_draw,
    hints=[
        "Each half of a pre-norm block is one line of the form: stream = stream + part(normalised "
        "copy of the stream). Notebook 03's `pre_norm_update` is exactly one such line.",
        "The FFN half reads the stream as the attention half left it, so both lines start from "
        "the current `x`.",
        "After the loop, the stream has grown with every block; one last norm rescales it for "
        "the layer that reads the model's output. With n_blocks = 0 the result is only that norm.",
    ],
    mistakes=[
        Mistake("no final norm",
                "The blocks are right, but the final norm is missing: return the normalised stream, "
                "not the stream itself.",
                impl=_no_final_norm),
        Mistake("post-norm",
                "That is post-norm: you added first and normalised the sum, so the stream itself was "
                "rescaled. In a pre-norm block only the copy a part reads is normalised.",
                impl=_post_norm),
        Mistake("raw reads",
                "The parts read the raw stream. Each part should read a normalised copy of the "
                "stream, while its result is added to the plain stream.",
                impl=_raw_reads),
        Mistake("FFN replaces",
                "The FFN's result replaced the stream instead of being added to it: keep `x +` in "
                "the FFN line too.",
                impl=_ffn_replaces),
        Mistake("parallel",
                "Both parts read the same copy, made before attention's result was added (a "
                "parallel block). In the sequential block, the FFN reads the stream after attention.",
                impl=_parallel),
    ],
    wrong=[
        Variant({2: "x"}, ["row 0", "final norm is missing"], "values"),
        Variant({0: "norm(x + attention(x))", 1: "norm(x + ffn(x))"}, ["hidden test", "post-norm"], "values"),
        Variant({0: "x + attention(x)", 1: "x + ffn(x)"}, ["hidden test", "raw stream"], "values"),
        Variant({1: "ffn(norm(x))"}, ["hidden test", "replaced the stream"], "values"),
        Variant({0: "x + atention(norm(x))"}, ["NameError", "line 5"], "error"),
    ],
    alternatives=[
        Variant({0: "attention(norm(x)) + x", 1: "ffn(norm(x)) + x"}),
        Variant(source='''def decoder(x, n_blocks, attention, ffn, norm):
    for _ in range(n_blocks):
        h = norm(x)
        x = x + attention(h)
        h = norm(x)
        x = x + ffn(h)
    return norm(x)
'''),
        Variant(source='''def decoder(x, n_blocks, attention, ffn, norm):
    if n_blocks == 0:
        return norm(x)
    x = x + attention(norm(x))
    x = x + ffn(norm(x))
    return decoder(x, n_blocks - 1, attention, ffn, norm)
'''),
    ],
    rtol=1e-5,
    atol=1e-5,
    skills="stack n pre-norm blocks and finish with the final norm",
    retired=True,      # replaced by future-leak; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- a test for reading the future

def whole_text_mean(x):
    """The check's example "model": adds the average of ALL tokens to every token, so each
    position reads the tokens after it. x: (length, d) -> (length, d)."""
    return x + x.mean(axis=0)


EXAMPLE_TOKENS = np.arange(12.0).reshape(4, 3)


def _leak_reference(run, x):
    x = np.asarray(x, dtype=float)
    base = run(x)
    leak = np.zeros(len(x))
    for i in range(len(x)):
        changed = x.copy()
        changed[i + 1:] += 1.0
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


LEAK_CONTRACT = Contract(
    args={"run": "a model: a function from a grid of tokens (length, d) to an output grid of the "
                 "same shape",
          "x": "the tokens, shape (length, d), length >= 1 and d >= 1"},
    returns="one number >= 0 per position, length numbers (a list)",
    ndims=(2,),
    dtypes=("float64",),
    edges={"one token": "a text of one token (nothing comes after it)",
           "causal": "a model that never reads ahead (0 everywhere)",
           "one ahead": "a model that reads exactly one token ahead",
           "pushed down": "a model whose outputs go down when later tokens go up",
           "decoders": "decoders with the causal mask and without it, where adding 1 and "
                       "subtracting 1 give changes of different sizes",
           "one number": "tokens of a single number",
           "more numbers than tokens": "tokens of more numbers than there are tokens"},
)


def _leak_fixed() -> list[Case]:
    fixed = np.random.default_rng(23)
    return [
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
        Case((whole_text_mean, np.array([[2.0, -1.0, 0.5]])), "a text of one token (nothing comes after it)",
             covers=("one token",)),
        Case((_minus_the_rest, np.array([[0.5], [-1.0], [2.0], [0.25], [1.5]])),
             "tokens of a single number", covers=("one number", "pushed down")),
    ]


def _leak_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d, length = int(rng.choice([4, 6, 8])), int(rng.integers(2, 8))
        causal = bool(rng.random() < 0.5)
        cases.append(Case((_random_decoder(int(rng.integers(1_000_000)), d, causal=causal),
                           rng.normal(size=(length, d))),
                          f"random decoder, {length} tokens of {d} numbers, {'with' if causal else 'without'} the mask"))
    return cases


def _leak_with(change, measure):
    def leak(run, x):
        x = np.asarray(x, dtype=float)
        base = run(x)
        out = np.zeros(len(x))
        for i in range(len(x)):
            changed = x.copy()
            change(changed, i)
            out[i] = measure(run(changed), base, i)
        return out
    return leak


def _after(changed, i):
    changed[i + 1:] += 1.0


def _largest_change(new, base, i):
    return np.abs(new[i] - base[i]).max()


def _changed_rows(rows):
    """A change of the rows ``rows(i)`` picks (a slice or an index), by +1."""
    def change(changed, i):
        changed[rows(i)] += 1.0
    return change


def _changed_columns(changed, i):
    changed[:, i + 1:] += 1.0


FUTURE_LEAK = Exercise(
    id="future-leak",
    notebook=NOTEBOOK,
    title="A test for reading the future",
    name="future_leak",
    template='''def future_leak(run, x):
    """How much each position's output depends on the tokens after it.

    run(x) maps a grid of tokens x (length, d) to an output grid of the same shape. For each
    position i: add 1 to every number of the tokens after i, run again, and measure the largest
    absolute change of the output at position i. Returns one number per position, in a list;
    a causal model gives 0 everywhere."""
    base = run(x)
    leak = []
    for i in range(len(x)):
        changed = x.copy()
        ____                      # add 1 to every number of the tokens after position i
        leak.append(____)         # the largest absolute change of position i's output
    return leak
''',
    solution=["changed[i + 1:] += 1.0", "np.abs(run(changed)[i] - base[i]).max()"],
    reference=_leak_reference,
    contract=LEAK_CONTRACT,
    fixed=_leak_fixed,
    draw=_leak_draw,
    hints=[
        "Position i may read itself and the tokens before it. Only the tokens strictly after it are "
        "the future, so the change must leave token i itself alone.",
        "Rows of x are tokens. A slice that starts one row after i and runs to the end picks every "
        "later token; `+=` changes them in place in the copy.",
        "Run the model on the changed grid, take row i of its output, subtract row i of the output "
        "you had before, and keep the largest size of a difference (`np.abs`, then `.max()`).",
    ],
    mistakes=[
        Mistake("included itself",
                "Your change also moved token i itself, so even a causal model shows a change at i. "
                "Change only the tokens after i: the slice starts one row later.",
                impl=_leak_with(_changed_rows(lambda i: slice(i, None)), _largest_change)),
        Mistake("changed the past",
                "You changed the tokens before i, the ones position i is allowed to read. The test "
                "is about the tokens after i.",
                impl=_leak_with(_changed_rows(lambda i: slice(0, i)), _largest_change)),
        Mistake("skipped the next token",
                "Your change starts two rows after i, so the token right after i is never changed, "
                "and a model that reads one token ahead passes unseen. The tokens after i start "
                "one row after it.",
                impl=_leak_with(_changed_rows(lambda i: slice(i + 2, None)), _largest_change)),
        Mistake("columns",
                "You changed columns, not tokens: rows of x are tokens, and the numbers of a token "
                "are its columns. Change the rows after i, every number of each.",
                impl=_leak_with(_changed_columns, _largest_change)),
        Mistake("whole output",
                "You measured the change of the whole output, later positions included, and those "
                "may read the changed tokens. Compare row i only.",
                impl=_leak_with(_after, lambda new, base, i: np.abs(new - base).max())),
        Mistake("no abs",
                "A change can be negative: take the absolute value before the largest one, or a "
                "leak that pushes numbers down reads as 0.",
                impl=_leak_with(_after, lambda new, base, i: (new[i] - base[i]).max())),
        Mistake("summed",
                "You added up the changes of position i's numbers; the test asks for the largest "
                "one (`.max()`).",
                impl=_leak_with(_after, lambda new, base, i: np.abs(new[i] - base[i]).sum())),
    ],
    wrong=[
        Variant({0: "changed[i:] += 1.0"}, ["expected", "token i itself"], "values"),
        Variant({0: "changed[:i] += 1.0"}, ["expected", "before i"], "values"),
        Variant({0: "changed[i + 2:] += 1.0"}, ["expected", "two rows after i"], "values"),
        Variant({0: "changed[i + 1] += 1.0"}, ["IndexError", "out of bounds", "line 12"], "error"),
        Variant({0: "changed[:, i + 1:] += 1.0"}, ["expected", "changed columns"], "values"),
        Variant({1: "np.abs(run(changed) - base).max()"}, ["expected", "row i only"], "values"),
        Variant({1: "np.abs(run(changed)[i] - base[i]).sum()"}, ["expected", "largest"], "values"),
        Variant({1: "(run(changed)[i] - base[i]).max()"}, ["hidden test", "absolute value"], "values"),
        Variant(source='''def future_leak(run, x):
    base = run(x)
    leak = []
    for i in range(len(x)):
        changed = x
        changed[i + 1:] += 1.0
        leak.append(np.abs(run(changed)[i] - base[i]).max())
    return leak
''', expect=["changed its argument `x`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "changed[i + 1:] = changed[i + 1:] + 1", 1: "np.max(np.abs(run(changed)[i] - base[i]))"}),
        Variant({1: "abs(run(changed)[i] - base[i]).max()"}),
        Variant(source='''def future_leak(run, x):
    base = run(x)
    out = []
    for i in range(len(x)):
        later = np.arange(len(x))[:, None] > i
        out.append(np.abs(run(x + later)[i] - base[i]).max())
    return np.array(out)
'''),
    ],
    rtol=1e-9,
    atol=1e-12,
    skills="test a model for reading the future: change later tokens, watch earlier outputs",
)


# ---------------------------------------------------------------- counting parameters

def _count_reference(d, layers, d_ff, vocab):
    return np.int64(count_parameters(ModelConfig(d_model=int(d), layers=int(layers), d_ff=int(d_ff),
                                                 vocab=int(vocab))).total)


COUNT_CONTRACT = Contract(
    args={"d": "a whole number >= 1", "layers": "a whole number >= 1", "d_ff": "a whole number >= 1",
          "vocab": "a whole number >= 1"},
    returns="a whole number",
    dtypes=(),
    edges={"tiny": "a tiny model", "one block": "a single block", "d_ff not 4d": "d_ff other than 4 d",
           "large": "a model of hundreds of millions of parameters",
           "numpy ints": "sizes given as NumPy integers"},
)


def _count_fixed() -> list[Case]:
    return [
        Case((768, 12, 3072, 32000), "the course's example", visible=True),
        Case((2, 1, 4, 3), "a tiny model: d = 2, one block, d_ff = 4, 3 words", covers=("tiny", "one block")),
        Case((64, 4, 176, 500), "a small model whose d_ff is not 4·d", covers=("d_ff not 4d",)),
        Case((1024, 24, 4096, 50257), "GPT-2 Medium's sizes", covers=("large",)),
        Case((96, 3, 200, 1000), "sizes whose roles cannot be swapped unnoticed"),
        Case((np.int64(32), np.int64(5), np.int64(90), np.int64(777)), "sizes given as NumPy integers",
             covers=("numpy ints",)),
    ]


def _count_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d = int(rng.integers(1, 65)) * 16
        layers, vocab = int(rng.integers(1, 49)), int(rng.integers(100, 100_000))
        d_ff = int(d * rng.choice([2, 3, 4]))
        cases.append(Case((d, layers, d_ff, vocab), f"random sizes d={d}, layers={layers}"))
    return cases


MODEL_PARAMETERS = Exercise(
    id="model-parameters",
    notebook=NOTEBOOK,
    title="Counting a whole model",
    name="model_parameters",
    template='''def model_parameters(d, layers, d_ff, vocab):
    """Parameters of a decoder: a tied embedding table, `layers` pre-norm blocks (four d x d
    attention matrices, a plain FFN without biases, two RMSNorm gains) and the final norm."""
    embedding = ____         # one row of d numbers per word of the vocabulary
    per_block = ____         # attention + FFN + the block's two norms
    return embedding + layers * per_block + ____    # ... + the final norm
''',
    solution=["vocab * d", "4 * d * d + 2 * d * d_ff + 2 * d", "d"],
    reference=_count_reference,
    contract=COUNT_CONTRACT,
    fixed=_count_fixed,
    draw=_count_draw,
    hints=[
        "Count matrices as rows times columns: the embedding table has one row per word, the "
        "attention matrices are d x d, the FFN's two matrices d x d_ff and d_ff x d.",
        "An RMSNorm has one gain per number of the token: d parameters. A pre-norm block has two "
        "norms; the model adds one more at the top.",
        "Tied means the output layer reuses the embedding table, so the table is counted once.",
    ],
    mistakes=[
        Mistake("no final norm",
                "Everything is there except the final norm after the last block: d more numbers.",
                impl=lambda d, n, f, v: v * d + n * (4 * d * d + 2 * d * f + 2 * d)),
        Mistake("untied",
                "You counted the embedding table twice. Tied, the output layer reuses it: one "
                "table of vocab x d numbers.",
                impl=lambda d, n, f, v: 2 * v * d + n * (4 * d * d + 2 * d * f + 2 * d) + d),
        Mistake("no block norms",
                "The block's two norms are missing: each has d gains, so 2·d per block.",
                impl=lambda d, n, f, v: v * d + n * (4 * d * d + 2 * d * f) + d),
        Mistake("one norm per block",
                "A pre-norm block has two norms, one before attention and one before the FFN.",
                impl=lambda d, n, f, v: v * d + n * (4 * d * d + 2 * d * f + d) + d),
        Mistake("three attention matrices",
                "Attention has four d x d matrices: queries, keys, values and the output Wo.",
                impl=lambda d, n, f, v: v * d + n * (3 * d * d + 2 * d * f + 2 * d) + d),
        Mistake("one FFN matrix",
                "The FFN has two matrices, W1 (d x d_ff) and W2 (d_ff x d).",
                impl=lambda d, n, f, v: v * d + n * (4 * d * d + d * f + 2 * d) + d),
    ],
    wrong=[
        Variant({2: "0"}, ["expected 109,529,856", "final norm"], "values"),
        Variant({0: "2 * vocab * d"}, ["expected 109,529,856", "twice"], "values"),
        Variant({1: "4 * d * d + 2 * d * d_ff"}, ["expected 109,529,856", "two norms are missing"], "values"),
        Variant({1: "3 * d * d + 2 * d * d_ff + 2 * d"}, ["expected 109,529,856", "four d x d"], "values"),
        Variant({1: "4 * d * d + d * d_ff + 2 * d"}, ["expected 109,529,856", "two matrices"], "values"),
    ],
    alternatives=[
        Variant({0: "d * vocab", 1: "4 * d ** 2 + 2 * d * d_ff + 2 * d"}),
        Variant({1: "2 * d * (2 * d + d_ff + 1)"}),
        Variant(source='''def model_parameters(d, layers, d_ff, vocab):
    attention = 4 * d * d
    ffn = 2 * d * d_ff
    norms = 2 * d
    return vocab * d + layers * (attention + ffn + norms) + d
'''),
    ],
    atol=0.5,
    rtol=0.0,
    skills="count a whole model: embedding, blocks and the final norm",
)


# ---------------------------------------------------------------- questions

def _gpt2_gap_explanation() -> str:
    from lib.params import REAL_MODELS, simple_version

    gpt2 = REAL_MODELS["GPT-2 Small"].config
    simple = count_parameters(simple_version(gpt2))
    rest = count_parameters(gpt2).total - simple.blocks - simple.embedding
    return (f"{gpt2.vocab:,} × {gpt2.d_model} is about {simple.embedding / 1e6:.1f} M numbers, almost the "
            f"whole gap. The position table ({gpt2.context:,} × {gpt2.d_model}), the biases and "
            f"LayerNorm's shifts add the remaining {rest:,}.")


PREDICT_SIZE = Question(
    id="decoder-predict-size",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Four tokens of four numbers go through one pre-norm block: norm, attention, add; norm, "
           "FFN, add. Each norm rescales the copy it makes to size 1 (root mean square). The tokens "
           "enter with a typical size below 1. Their size when they leave the block is...",
    choices=["the same as when they entered: the norms keep it", "exactly 1: the norms set it",
             "larger than when they entered", "close to 0"],
    answer=2,
    explanation="The norms only rescale the copies that attention and the FFN read. The stream "
                "itself is never normalised inside the block: each half adds its result to it, "
                "so it almost always leaves larger than it came in (the cell after the lab counts "
                "how often over many random draws). The lab below shows every step's size.",
    reveals=[
        r"\bstream itself is never normali[sz]ed\b",
        r"\bnorms? only rescales? the cop(y|ies)\b",
        r"\badd (almost |nearly )?always makes the stream larger\b",
        r"\b(output|it) (is )?(nearly|almost) always larger\b",
    ],
)

SHAPE_SCORES = Question(
    id="decoder-shape-scores",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="A batch of B = 2 texts of L = 8 tokens, d_model = 16, split into 2 heads. What is the "
           "shape of the attention scores, one score per pair of positions in every head?",
    answer=(2, 2, 8, 8),
    explanation="Each head compares its 8 queries with its 8 keys: an 8 × 8 grid per head, per "
                "text, so (B, heads, L, L) = (2, 2, 8, 8). The causal mask is one 8 × 8 grid that "
                "every head of every text shares.",
)

PREDICT_COLLAPSE = Question(
    id="decoder-predict-collapse",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A sentence of 8 words goes through 48 attention layers with nothing else: no residual "
           "add, no norms, no FFN. At the top, the 8 words' vectors are...",
    choices=["as different from each other as at the start", "all nearly the same vector",
             "exactly zero", "each still equal to its own input"],
    answer=1,
    explanation="Every attention layer replaces each word by an average of the words it sees. "
                "Averages of averages become more and more alike, so after many layers every "
                "position holds nearly the same vector and the sentence is lost. The residual add "
                "and the FFN are what stop this in a real block; try it in the lab.",
    reveals=[
        r"\baverages? of averages\b",
        r"\b(all )?(nearly |almost )?the same vector\b",
        r"\baverages? the (sentence|words) (away|into one)\b",
        r"\bsentence is lost\b",
    ],
)

# No longer asked in the notebook (notebook 03 asks the same thing); kept for saved notebooks.
PREDICT_ZERO_FFN = Question(
    id="decoder-predict-zero-ffn",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the hand example the token [0, 4] leaves the attention half as [-1, 5]. Suppose "
           "the FFN returned [0, 0] whatever it read. What would leave the block?",
    choices=["[-1, 5]", "[0, 0]", "[-1, 1], the normalised copy", "[0, 4], the input"],
    answer=0,
    explanation="The FFN's result is added to the stream: [-1, 5] + [0, 0] = [-1, 5]. A part that "
                "returns zeros leaves the stream untouched, which is why a block whose weights are "
                "still small barely changes its input.",
    reveals=[
        r"\[-1, 5\] \+ \[0, 0\]",
        r"\breturns zeros leaves the stream untouched\b",
    ],
)

PREDICT_FINAL_NORM = Question(
    id="decoder-predict-final-norm",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the hand example the token [0, 4] leaves its block as [-1, 7]. The decoder's final "
           "norm (LayerNorm, ε aside) comes next. What leaves the decoder?",
    choices=["[-1, 7]: a norm only rescales the copy a part reads", "[-1, 1]",
             "[-0.14, 1]: each number divided by the largest", "[0, 0]"],
    answer=1,
    explanation="Unlike the norms inside a block, the final norm rescales the stream itself. "
                "[-1, 7] has mean 3 and standard deviation 4, so it becomes [-1, 1]. Any token of "
                "two different numbers does: minus its mean it is [-s, s], and divided by its "
                "standard deviation s it is [-1, 1]. So with two numbers the final norm hides what "
                "the blocks did; the cell below prints the stream before it.",
    reveals=[
        r"\[-1, 7\][^.]{0,80}\[-1, 1\]",
        r"\bany token of two (different )?numbers\b",
        r"\bafter the final norm:? -1\.00 \+1\.00\b",
    ],
)

NUMBER_NORMS = Question(
    id="decoder-number-norms",
    notebook=NOTEBOOK,
    kind="number",
    prompt="How many norms does a model with 3 pre-norm blocks have, counting the final norm?",
    answer=7,
    tol=0.0,
    explanation="Two per block (one before attention, one before the FFN) make 6, and the final "
                "norm after the last block makes 7.",
    reveals=[
        r"\+\s*1\s*final\s*=\s*7\b",
        r"\bmakes? 7\b",
    ],
)

NUMBER_WIDTH = Question(
    id="decoder-number-width",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A block has 4·d² attention parameters and 2·d·d_ff in its FFN, with d_ff = 4·d. If d "
           "doubles (and d_ff with it), by how much is the block's count multiplied? Ignore the norms.",
    answer=4,
    tol=0.01,
    explanation="Every term is a product of two widths: 4·d² + 8·d² = 12·d². Doubling d multiplies "
                "d² by 4. Doubling the number of blocks only multiplies the blocks' count by 2: "
                "depth is cheap, width is quadratic.",
    reveals=[
        r"\bd² by 4\b",
        r"\bwidth is quadratic\b",
        r"\bmultiplies every d\s*[×x]\s*d matrix by 4\b",
        r"\b12\s*·\s*d²",
    ],
)

PREDICT_GPT2 = Question(
    id="decoder-predict-gpt2-gap",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Counted the simple way (four d × d attention matrices, two FFN matrices, two norms per "
           "block), GPT-2 Small's 12 blocks hold only about two thirds of its published 124 M "
           "parameters. What holds most of the rest?",
    choices=["the embedding table: one row of 768 numbers for each of its 50,257 tokens",
             "the biases of attention and the FFN", "the table of learned positions",
             "nothing: the published figure is rounded up"],
    answer=0,
    explanation=_gpt2_gap_explanation(),
    reveals=[
        r"\bembedding table closes\b",
        r"(?<![\d.,])38,?597,?376(?!\d)",
        r"(?<![\d.])38\.6\s?M\b",
        r"\b50,?257\s*[×x]\s*768\b",
    ],
)

DEFINITIONS = [CAUSAL_WEIGHTS, DECODER, FUTURE_LEAK, MODEL_PARAMETERS, PREDICT_SIZE, SHAPE_SCORES,
               PREDICT_COLLAPSE, PREDICT_ZERO_FFN, PREDICT_FINAL_NORM, NUMBER_NORMS, NUMBER_WIDTH, PREDICT_GPT2]


# ---------------------------------------------------------------- skip-ahead set (exercises/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("decoder-out-scores-shape", NOTEBOOK, "shape",
             "Attention with 4 heads over a batch of 2 texts of 10 tokens: what is the shape of "
             "the score array (one score per head, query and key)?",
             answer=(2, 4, 10, 10),
             explanation="Batch, heads, then a 10 \u00d7 10 grid of query-key pairs."),
    Question("decoder-out-causal", NOTEBOOK, "predict",
             "With the causal mask, which tokens may the token at position 3 (counting from 0) "
             "attend to?",
             choices=["Positions 0, 1, 2 and 3", "Positions 0, 1 and 2 only",
                      "Every position", "Position 3 only"],
             answer=0,
             explanation="A query sees its own key and every earlier one, never a later one.",
             reveals=[r"\bj\s*(≤|<=)\s*i\b",
                      r"\bpositions 0, 1, 2 and 3\b"]),
    Question("decoder-out-block-count", NOTEBOOK, "number",
             "One pre-norm block at d_model = 256 with a plain FFN of width 1024, no biases and "
             "two RMSNorm gains: how many parameters?",
             answer=float(_block_parameters(ModelConfig(d_model=256, layers=1, d_ff=1024, vocab=1)).total),
             rtol=1e-9,
             explanation="Four 256 \u00d7 256 attention matrices, two FFN matrices, two gains."),
    Question("decoder-out-final", NOTEBOOK, "predict",
             "In a pre-norm decoder, what happens to the stream after the last block, before the "
             "output layer turns it into scores for the vocabulary?",
             choices=["One final norm", "Nothing", "Another residual add", "A causal mask"],
             answer=0,
             explanation="Pre-norm blocks never normalise the stream itself, so a final norm does.",
             reveals=[r"\bone (\*\*)?final norm\b",
                      r"\bfinal norm\b[^.]{0,30}\brescales\b"]),
]
