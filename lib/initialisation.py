"""How a model's weights start, and how much its blocks change the stream at step 0.

A matrix whose numbers are drawn with standard deviation ``std`` multiplies a vector's size by
about std · √(fan-in), its number of rows: the same ``std`` is a small factor in a narrow model and
a large one in a wide model. GPT-2 draws every matrix at std = 0.02, and the two matrices whose
output is added to the stream (attention's output projection Wo and the FFN's narrowing W_down)
at 0.02 / √(2 · layers), so that all the blocks' additions together stay small next to the
stream. Some models start those two matrices at exactly zero: every block is then the identity.

    gain_per_matrix(0.02, 768)                    # about 0.55
    runs = start_of_training(layers=12, d_model=768, d_ff=3072, heads=12)
    runs["gpt2"].changes                          # how much each block changed the stream

The three ways of starting, ``RULES``, differ only in the scale of Wo and W_down. The same
damping also keeps a stack with no norm at all usable: ``norm_free_flow``.
"""

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ._checks import check_choice, check_non_negative, check_positive_int
from .block import BlockWeights, block, decoder
from .norm import root_mean_square

RULES = {
    "all": "every matrix at 0.02",
    "gpt2": "GPT-2: Wo and W_down at 0.02/sqrt(2 x blocks)",
    "zero": "Wo and W_down at zero",
}


def gain_per_matrix(std, fan_in):
    """About how many times larger a vector of RMS 1 comes out of a random matrix with ``fan_in``
    rows whose numbers have standard deviation ``std``: std · √fan_in."""
    return float(check_non_negative(std, "std")) * math.sqrt(check_positive_int(fan_in, "fan_in"))


def output_std(rule, std, layers):
    """The standard deviation of Wo and W_down under ``rule`` (a key of RULES): ``std`` ("all"),
    std / √(2 · layers) ("gpt2") or 0 ("zero")."""
    check_choice(rule, "rule", tuple(RULES))
    layers = check_positive_int(layers, "layers")
    return {"all": float(std), "gpt2": float(std) / math.sqrt(2 * layers), "zero": 0.0}[rule]


def _drawn(layers, d, f, seed, dtype=np.float64):
    """Per block, the standard normal numbers of Wq, Wk, Wv, Wo (d, d), W_up (d, f) and W_down (f, d),
    drawn in that order from ``default_rng(seed + i)`` for block i, as numbers of ``dtype``
    (float64 or float32). Each matrix is drawn with its shape reversed and transposed: a view whose
    columns are contiguous (Fortran order), at no cost. Without BLAS, as in the browser, NumPy
    computes ``x @ W`` as one dot product per row of x and column of W, and a column of a
    row-ordered W_up (768, 3072) steps 24 kB at a time in float64: GPT-2 Small's wide products run
    about five times faster with the columns contiguous, with the same result."""
    dtype = _float_type(dtype)
    for i in range(layers):
        generator = np.random.default_rng(seed + i)
        shapes = [(d, d)] * 4 + [(d, f), (f, d)]
        yield [generator.standard_normal(shape[::-1], dtype=dtype).T for shape in shapes]


def _float_type(dtype):
    """np.float64 or np.float32 (what ``Generator.standard_normal`` can draw), or a clear error."""
    if dtype not in (np.float64, np.float32, "float64", "float32"):
        raise ValueError(f"dtype should be np.float64 or np.float32, got {dtype!r}")
    return np.dtype(dtype).type


def _blocks_by_rule(drawn, std, outs, heads):
    """(rule, BlockWeights) for each rule of ``outs``, one at a time, from one block's drawn numbers:
    Wq, Wk, Wv and W_up scaled by ``std`` once for every rule, Wo and W_down by the rule's own
    scale ``outs[rule]``."""
    Wq, Wk, Wv, Wo, W_up, W_down = drawn
    Wq, Wk, Wv, W_up = (W * std for W in (Wq, Wk, Wv, W_up))
    for rule, out in outs.items():
        yield rule, BlockWeights(Wq, Wk, Wv, Wo * out, W_up=W_up, W_down=W_down * out, heads=heads)


def initial_blocks(layers, d_model, d_ff, heads=1, *, rule="gpt2", std=0.02, seed=0, dtype=np.float64):
    """The blocks of a stack at the start of training, one at a time (a generator, so that only
    one block's matrices are in memory).

    Block i draws Wq, Wk, Wv, Wo (d_model, d_model), W_up (d_model, d_ff) and W_down (d_ff, d_model),
    in that order, as standard normal numbers of ``dtype`` (float64 or float32) from
    ``default_rng(seed + i)``, each drawn with its shape reversed and transposed; Wq, Wk, Wv and
    W_up are scaled by ``std``, Wo and W_down by ``output_std(rule, std, layers)``. Every rule
    therefore gets the same random numbers, scaled differently. Yields BlockWeights (no biases, no
    norm gains).
    """
    layers = check_positive_int(layers, "layers")
    d, f = check_positive_int(d_model, "d_model"), check_positive_int(d_ff, "d_ff")
    out = output_std(rule, std, layers)
    for drawn in _drawn(layers, d, f, seed, dtype):
        ((_rule, weights),) = _blocks_by_rule(drawn, std, {rule: out}, heads)
        yield weights


class StartTrace(NamedTuple):
    """sizes: (layers + 1,) RMS of the stream before the first block and after each block.
    changes: (layers,) RMS of what each block changed, divided by the RMS of the stream it read."""
    sizes: np.ndarray
    changes: np.ndarray


def start_of_training(layers=12, d_model=768, d_ff=3072, heads=12, *, length=16, stream_rms=1.0,
                      std=0.02, rules=tuple(RULES), seed=0, dtype=np.float64):
    """One stream of ``length`` tokens (normal numbers from ``default_rng(seed)``, rescaled to RMS
    ``stream_rms``) through ``layers`` pre-norm blocks as they start training (the blocks of
    ``initial_blocks(..., seed=seed + 1, dtype=dtype)``), under each rule: LayerNorm without gain
    or shift, GELU, causal attention, no final norm, as in GPT-2. Everything is computed in
    ``dtype``, float64 or float32 (the stream too, once drawn). Returns {rule: StartTrace}.

    The default sizes are GPT-2 Small's (12 blocks, width 768, 12 heads, FFN width 3,072). Each
    block's numbers are drawn once, and the matrices every rule scales alike (Wq, Wk, Wv, W_up)
    are scaled once for all the rules.
    """
    layers = check_positive_int(layers, "layers")
    dtype = _float_type(dtype)
    stream = np.random.default_rng(seed).standard_normal((check_positive_int(length, "length"), d_model))
    stream = (stream * (check_non_negative(stream_rms, "stream_rms") / root_mean_square(stream))).astype(dtype)
    streams = {rule: stream for rule in rules}
    sizes = {rule: [root_mean_square(stream)] for rule in rules}
    changes = {rule: [] for rule in rules}
    outs = {rule: output_std(rule, std, layers) for rule in rules}
    for drawn in _drawn(layers, check_positive_int(d_model, "d_model"), check_positive_int(d_ff, "d_ff"), seed + 1,
                        dtype):
        for rule, weights in _blocks_by_rule(drawn, std, outs, heads):
            x = streams[rule]
            new = block(x, weights, norm="layer", activation="gelu", causal=True)
            changes[rule].append(root_mean_square(new - x) / root_mean_square(x))
            sizes[rule].append(root_mean_square(new))
            streams[rule] = new
    return {rule: StartTrace(np.array(sizes[rule]), np.array(changes[rule])) for rule in rules}


# ---------------------------------------------------------------- no norm at all, the branches damped

def damped(blocks, scale):
    """The same blocks with Wo and W_down, the two matrices whose output is added to the stream,
    multiplied by ``scale``: GPT-2's rule is scale = 1/√(2 · blocks) (``output_std("gpt2", 1,
    blocks)``, 0.102 for 48 blocks); ReZero's start is scale 0 (every block the identity)."""
    scale = check_non_negative(scale, "scale")
    return [replace(b, Wo=b.Wo * scale, W_down=b.W_down * scale) for b in blocks]


def similarity(stream):
    """How alike the tokens of a stream (length, d) are: the mean cosine similarity over every
    pair of rows (1: all point the same way; about 0 for unrelated directions)."""
    unit = stream / np.linalg.norm(stream, axis=-1, keepdims=True)
    cos = unit @ unit.T
    n = len(stream)
    return float((cos.sum() - np.trace(cos)) / (n * (n - 1)))


class Flow(NamedTuple):
    """sizes: (depth + 1,) RMS of the stream before the first block and after each block.
    similarity: (depth + 1,) the tokens' mean cosine similarity (``similarity``) at the same points."""
    sizes: np.ndarray
    similarity: np.ndarray


def norm_free_flow(x, blocks, scale, **options):
    """A text x (length, d) through the blocks with no norm anywhere (``placement="none"``, no
    final norm) and Wo and W_down multiplied by ``scale`` (``damped``). ``options`` go to every
    block (causal, use_ffn, activation, positions). Returns a Flow.

    Nothing stops an undamped stack from growing: each block adds about as much as the stream
    holds, and what the tokens share grows fastest. Notebook 04's 48 random blocks of width 16
    (its sentence of 8 words, causal, GELU FFN) leave the words with similarity 1.000 at scale 1
    (stream RMS 8.5e9); at scale 0.3, 0.949; at GPT-2's 0.102, 0.541; at 0.02, 0.279 (RMS 1.2).
    The same blocks with every part on (pre-norm) leave them at 0.818.
    """
    streams = decoder(x, damped(blocks, scale), placement="none", final_norm=False, **options).streams
    with np.errstate(over="ignore", invalid="ignore"):
        return Flow(np.array([root_mean_square(s) for s in streams]), np.array([similarity(s) for s in streams]))
