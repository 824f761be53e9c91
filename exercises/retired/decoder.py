"""Retired exercises of notebook 04, "The decoder block and the stack": causal-weights (replaced by
cached-causal-weights), decoder-stack (by future-leak), future-leak (by future-leak-nudge) and
model-parameters (by grouped-parameters). Kept so that
notebooks saved from earlier releases still check them (see :mod:`exercises.retired`); what they
share with the live exercises is imported from :mod:`exercises.definitions.decoder`."""

from __future__ import annotations

import numpy as np

from lib.attention import attention as _attention, causal_mask as _causal_mask, softmax as _softmax
from lib.ffn import ffn as _ffn, worked_example as _worked_example
from lib.norm import layer_norm as _layer_norm, rms_norm as _rms_norm

from engine.core.definition import Case, Exercise, Mistake, in_float32, three_of
from exercises.definitions.decoder import (NO_BLOCK_NORMS, NOTEBOOK, ONE_FFN_MATRIX, SQUARE_SCORES, _FILL_MISTAKES,
                                           _grouped_reference, _leak, _leak_mistakes, _nudge_case, _nudge_fixed)


def _leak_reference(run, x):
    return _leak(run, x, np.ones(np.shape(x)))


def _causal_reference(scores):
    length = scores.shape[-1]
    return _softmax(np.where(_causal_mask(length), scores, -np.inf), axis=-1)


def _causal_fixed() -> list[Case]:
    return [
        Case((SQUARE_SCORES.copy(),), "the example", visible=True),
        Case((np.array([[3.7]]),), "a single token (L = 1)"),
        Case((np.arange(75.0).reshape(3, 5, 5) * 0.37 - 4.0,), "a batch of 3 grids of 5 tokens"),
        Case((np.array([[-3.0, 8.0, 9.0], [2.0, -1.0, 40.0], [0.5, 0.2, -0.1]]),),
             "large scores in the future of rows 1 and 2"),
        Case((np.array([[-5000.0, 3000.0, -2000.0], [-1200.0, 900.0, 4000.0], [2500.0, -2500.0, 10.0]]),),
             "scores in the thousands"),
        Case((np.sin(np.arange(2 * 3 * 6 * 6.0)).reshape(2, 3, 6, 6) * 5.0,),
             "a batch of 2 texts, 3 heads, 6 tokens"),
        in_float32(Case((np.cos(np.arange(16.0)).reshape(4, 4) * 3.0,), "float32 scores")),
    ]


def _causal_case(rng) -> Case:
    length = int(rng.integers(2, 9))
    lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    shape = lead + (length, length)
    return Case((rng.normal(0.0, rng.uniform(0.5, 4.0), shape),), f"random scores, shape {shape}")


CAUSAL_WEIGHTS = Exercise(
    id="causal-weights", notebook=NOTEBOOK, title="Attention weights with the causal mask", name="causal_weights",
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
    fixed=_causal_fixed,
    draw=three_of(_causal_case),
    hints=[
        "Draw the grid: rows are queries i, columns keys j. The allowed pairs, j <= i, are the "
        "diagonal and everything below it: a lower triangle.",
        "NumPy builds triangles from a full grid: `np.tril` keeps the lower triangle of an array "
        "(diagonal included), `np.triu` the upper one. Start from a grid of True values.",
        "A forbidden pair must end with weight exactly 0 after the softmax. Which score gives e^score = 0?",
    ],
    mistakes=[
        Mistake("upper triangle", {0: "np.triu(np.ones((L, L), dtype=bool))"},
                "Your mask keeps the upper triangle: each query reads itself and the FUTURE, the "
                "opposite of the causal mask. Row i may use the columns j <= i."),
        *_FILL_MISTAKES,
        Mistake("no mask", {0: "np.ones((L, L), dtype=bool)"},
                "Every row still uses every column: the mask changed nothing. Check `allowed`: it "
                "must be False above the diagonal."),
        Mistake("diagonal masked", {0: "np.tril(np.ones((L, L), dtype=bool), -1)"},
                "Your mask hides the diagonal too, so the first query may use no key at all "
                "(0 / 0 = NaN). A query may use the keys j <= i: itself included."),
        Mistake("weights zeroed after the softmax", '''def causal_weights(scores):
    L = scores.shape[-1]
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * np.tril(np.ones((L, L)))
''',
                "You set the future's weights to 0 after the softmax, so the rows no longer add up "
                "to 1. Mask the scores before the softmax, so the past shares all the weight."),
    ],
    rtol=1e-6, atol=1e-9,
    retired=True,
)


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
    """Notebook 02's worked FFN (W_up, b_up, ReLU, W_down, b_down) on every token of h (..., 2)."""
    e = _worked_example()
    return _ffn(h, e.W_up, e.b_up, e.W_down, e.b_down, activation="relu")


def _random_attention(seed: int, d: int, heads: int = 1):
    w = np.random.default_rng(seed).normal(0.0, d ** -0.5, (4, d, d))
    return lambda h: _attention(h, *w, heads=heads, causal=True)


def _random_ffn(seed: int, d: int):
    g = np.random.default_rng(seed)
    W_up, W_down = g.normal(0.0, d ** -0.5, (d, 4 * d)), g.normal(0.0, (4 * d) ** -0.5, (4 * d, d))
    return lambda h: _ffn(h, W_up, None, W_down, None, activation="gelu")


def _rms(h):
    return _rms_norm(h)


def _ln(h):
    return _layer_norm(h)


def _decoder_fixed() -> list[Case]:
    return [
        Case((np.array([[0.0, 4.0]]), 1, hand_attention, worked_ffn, _ln), "the example", visible=True),
        Case((np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0], [2.5, 0.5, 0.0, -1.5]]), 2,
              _random_attention(11, 4), _random_ffn(12, 4), _rms), "3 tokens, 2 blocks, RMSNorm"),
        Case((np.array([[3.0, -1.0, 2.0, 0.0]]), 0, _random_attention(13, 4), _random_ffn(14, 4), _rms),
             "no blocks at all (only the final norm)"),
        Case((np.cos(np.arange(2 * 5 * 6.0)).reshape(2, 5, 6) * 2.0, 3, _random_attention(15, 6, 2),
              _random_ffn(16, 6), _ln), "a batch of 2 texts, 3 blocks, LayerNorm"),
        Case((np.array([[10.0, 20.0, 30.0, 44.0], [5.0, -5.0, 0.0, 12.0]]), 1, _random_attention(17, 4),
              _random_ffn(18, 4), _ln), "a large stream (the norms must not replace it)"),
    ]


def _decoder_case(rng) -> Case:
    d = int(rng.choice([4, 6, 8]))
    length = int(rng.integers(1, 6))
    n = int(rng.integers(1, 4))
    norm = _rms if rng.random() < 0.5 else _ln
    seed = int(rng.integers(1_000_000))
    return Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (length, d)), n,
                 _random_attention(seed, d), _random_ffn(seed + 1, d), norm),
                f"random tokens, {length} of {d} numbers, {n} blocks")


DECODER = Exercise(
    id="decoder-stack", notebook=NOTEBOOK, title="The decoder: n pre-norm blocks, then the final norm", name="decoder",
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
    fixed=_decoder_fixed,
    draw=three_of(_decoder_case),
    hints=[
        "Each half of a pre-norm block is one line of the form: stream = stream + part(normalised "
        "copy of the stream). Notebook 03's `pre_norm_update` is exactly one such line.",
        "The FFN half reads the stream as the attention half left it, so both lines start from the current `x`.",
        "After the loop, the stream has grown with every block; one last norm rescales it for "
        "the layer that reads the model's output. With n_blocks = 0 the result is only that norm.",
    ],
    mistakes=[
        Mistake("no final norm", {2: "x"},
                "The blocks are right, but the final norm is missing: return the normalised stream, "
                "not the stream itself."),
        Mistake("post-norm", {0: "norm(x + attention(x))", 1: "norm(x + ffn(x))"},
                "That is post-norm: you added first and normalised the sum, so the stream itself was "
                "rescaled. In a pre-norm block only the copy a part reads is normalised."),
        Mistake("raw reads", {0: "x + attention(x)", 1: "x + ffn(x)"},
                "The parts read the raw stream. Each part should read a normalised copy of the "
                "stream, while its result is added to the plain stream."),
        Mistake("FFN replaces", {1: "ffn(norm(x))"},
                "The FFN's result replaced the stream instead of being added to it: keep `x +` in "
                "the FFN line too."),
        Mistake("parallel", {0: "x + attention(norm(x)) + ffn(norm(x))", 1: "x"},
                "Both parts read the same copy, made before attention's result was added (a "
                "parallel block). In the sequential block, the FFN reads the stream after attention."),
    ],
    rtol=1e-5, atol=1e-5,
    retired=True,
)


FUTURE_LEAK = Exercise(
    id="future-leak", notebook=NOTEBOOK, title="A test for reading the future", name="future_leak",
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
    fixed=_nudge_fixed,
    draw=three_of(_nudge_case),
    hints=[
        "Position i may read itself and the tokens before it. Only the tokens strictly after it are "
        "the future, so the change must leave token i itself alone.",
        "Rows of x are tokens. A slice that starts one row after i and runs to the end picks every "
        "later token; `+=` changes them in place in the copy.",
        "Run the model on the changed grid, take row i of its output, subtract row i of the output "
        "you had before, and keep the largest size of a difference (`np.abs`, then `.max()`).",
    ],
    mistakes=[
        *_leak_mistakes(lambda rows: "1.0"),
    ],
    rtol=1e-9, atol=1e-12,
    retired=True,
)


def _count_reference(d, layers, d_ff, vocab):
    return _grouped_reference(d, layers, d_ff, vocab, heads=1, kv_heads=1)


def _count_fixed() -> list[Case]:
    return [
        Case((768, 12, 3072, 32000), "the course's example", visible=True),
        Case((2, 1, 4, 3), "a tiny model: d = 2, one block, d_ff = 4, 3 words"),
        Case((64, 4, 176, 500), "a small model whose d_ff is not 4·d"),
        Case((1024, 24, 4096, 50257), "GPT-2 Medium's sizes"),
        Case((96, 3, 200, 1000), "sizes whose roles cannot be swapped unnoticed"),
        Case((np.int64(32), np.int64(5), np.int64(90), np.int64(777)), "sizes given as NumPy integers"),
    ]


def _count_case(rng) -> Case:
    d = int(rng.integers(1, 65)) * 16
    layers, vocab = int(rng.integers(1, 49)), int(rng.integers(100, 100_000))
    d_ff = int(d * rng.choice([2, 3, 4]))
    return Case((d, layers, d_ff, vocab), f"random sizes d={d}, layers={layers}")


MODEL_PARAMETERS = Exercise(
    id="model-parameters", notebook=NOTEBOOK, title="Counting a whole model", name="model_parameters",
    template='''def model_parameters(d, layers, d_ff, vocab):
    """Parameters of a decoder: a tied embedding table, `layers` pre-norm blocks (four d x d
    attention matrices, a plain FFN without biases, two RMSNorm gains) and the final norm."""
    embedding = ____         # one row of d numbers per word of the vocabulary
    per_block = ____         # attention + FFN + the block's two norms
    return embedding + layers * per_block + ____    # ... + the final norm
''',
    solution=["vocab * d", "4 * d * d + 2 * d * d_ff + 2 * d", "d"],
    reference=_count_reference,
    fixed=_count_fixed,
    draw=three_of(_count_case),
    hints=[
        "Count matrices as rows times columns: the embedding table has one row per word, the "
        "attention matrices are d x d, the FFN's two matrices d x d_ff and d_ff x d.",
        "An RMSNorm has one gain per number of the token: d parameters. A pre-norm block has two "
        "norms; the model adds one more at the top.",
        "Tied means the output layer reuses the embedding table, so the table is counted once.",
    ],
    mistakes=[
        Mistake("no final norm", {2: "0"},
                "Everything is there except the final norm after the last block: d more numbers."),
        Mistake("untied", {0: "2 * vocab * d"},
                "You counted the embedding table twice. Tied, the output layer reuses it: one "
                "table of vocab x d numbers."),
        Mistake("no block norms", {1: "4 * d * d + 2 * d * d_ff"},
                NO_BLOCK_NORMS),
        Mistake("one norm per block", {1: "4 * d * d + 2 * d * d_ff + d"},
                "A pre-norm block has two norms, one before attention and one before the FFN."),
        Mistake("three attention matrices", {1: "3 * d * d + 2 * d * d_ff + 2 * d"},
                "Attention has four d x d matrices: queries, keys, values and the output Wo."),
        Mistake("one FFN matrix", {1: "4 * d * d + d * d_ff + 2 * d"},
                ONE_FFN_MATRIX),
    ],
    rtol=0.0, atol=0.5,
    retired=True,
)


DEFINITIONS = [CAUSAL_WEIGHTS, DECODER, FUTURE_LEAK, MODEL_PARAMETERS]
