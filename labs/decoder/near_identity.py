"""Blocks that start near the identity (notebook 04): with every matrix drawn small, as a model's
weights start, a stack of pre-norm blocks passes its input through almost unchanged. Models
without a view: the notebook prints their numbers.

- ``near_identity_model``: the flow lab's width (8 tokens of 16 numbers), NumPy's random weights;
- ``rand_demonstration``: another small setup (4 tokens of 8 numbers), its weights drawn
  uniformly between -0.1 and 0.1 by a C library's ``rand()``, reproduced here number for number;
  the notebook no longer shows it, and it is kept for notebooks saved from earlier releases;
- ``start_of_training``: ``lib.initialisation``'s, with the notebook's run at GPT-2 Small's size
  computed when the course is built and looked up (``labs.decoder.precomputed``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.kit.result import Result
from lib import initialisation
from lib.block import decoder, random_block_weights
from lib.initialisation import RULES
from lib.weights import random_weights

from .layer_flow import FLOW_D, FLOW_FF, FLOW_HEADS
from .precomputed import precomputed


def relative_changes(streams) -> np.ndarray:
    """How much each block changed the stream, as a share of the stream it read: the root mean
    square of (after - before) over that of before, one number per block."""
    streams = [np.asarray(s, dtype=float) for s in streams]
    return np.array([np.sqrt(np.mean((b - a) ** 2) / np.mean(a ** 2)) for a, b in zip(streams, streams[1:])])


@dataclass(frozen=True)
class NearIdentityResult(Result):
    """Tokens through blocks whose matrices start small. lengths: (n_blocks + 1,) a token's
    average length before the first block and after each; changes, relative: (n_blocks,) the
    largest change of any number in each block and its change as a share of the stream."""
    lengths: np.ndarray
    changes: np.ndarray
    relative: np.ndarray
    largest_number: float       # the largest number of the input


def near_identity_model(n_blocks: int = 4, scale: float = 0.02, seed: int = 2) -> NearIdentityResult:
    """8 tokens of 16 numbers (drawn at scale 0.35 from ``seed``) through ``n_blocks`` pre-norm blocks
    whose matrices are all drawn at ``scale`` (0.02 is GPT-2's starting scale), no final norm.
    Returns the average length of a token before and after each block, the largest change of
    any number per block, and each block's change as a share of the stream (``relative``)."""
    x, = random_weights([(8, FLOW_D)], seed=seed, scale=0.35)
    blocks = [random_block_weights(FLOW_D, FLOW_FF, FLOW_HEADS, seed=seed + 1 + i, scale=scale)
              for i in range(int(n_blocks))]
    streams = decoder(x, blocks, final_norm=False).streams
    lengths = np.array([np.linalg.norm(s, axis=-1).mean() for s in streams])
    changes = np.array([np.abs(b - a).max() for a, b in zip(streams, streams[1:])])
    return NearIdentityResult(lengths=lengths, changes=changes, relative=relative_changes(streams),
                              largest_number=float(np.abs(x).max()))


# ---------------------------------------------------------------- another setup: weights from C's rand()

RAND_MAX = 32767
RAND_TOKENS = np.array([[1.0, 0.2, -0.3, 0.5, -0.1, 0.8, 0.3, -0.2], [0.3, 0.9, 0.1, -0.2, 0.6, 0.4, -0.1, 0.5],
                        [-0.1, 0.4, 0.8, 0.2, -0.5, 0.3, 0.7, 0.1], [0.6, -0.2, 0.5, 0.7, 0.3, -0.4, 0.2, 0.8]])
RAND_BOUND = 0.1                   # every weight uniform between -0.1 and 0.1


def c_rand(seed: int):
    """The numbers a common C library's ``rand()`` gives after ``srand(seed)``: a linear
    congruential generator, state × 214013 + 2531011 modulo 2³², returning bits 16 to 30 of the
    state (0 to RAND_MAX = 32767). After srand(42) it starts 175, 400, 17869."""
    state = int(seed)
    while True:
        state = (state * 214013 + 2531011) % 2 ** 32
        yield (state >> 16) & RAND_MAX


def _rand_weights(numbers, shape):
    """(rand() / RAND_MAX × 2 − 1) × 0.1 in float32, in C's order, as an array of ``shape``."""
    n = int(np.prod(shape))
    values = np.array([next(numbers) for _ in range(n)], dtype=np.float32) / np.float32(RAND_MAX)
    return ((values * np.float32(2) - np.float32(1)) * np.float32(RAND_BOUND)).reshape(shape)


def _rms_norm32(h):
    """RMSNorm without a gain, ε = 1e-5, in float32 (the mean square summed in float64, as C does)."""
    mean_square = ((h.astype(np.float64) ** 2).sum(axis=-1, keepdims=True) / h.shape[-1]).astype(np.float32)
    return (h * (np.float32(1) / np.sqrt(mean_square + np.float32(1e-5)))).astype(np.float32)


def _rand_block(x, numbers):
    """One pre-norm block of the C setup: 2 heads of 4 numbers, no mask, an FFN of width 32 with
    the tanh GELU; its weights drawn in the order Wq, Wk, Wv (2 heads × 4 × 8 each), Wo (8 × 8),
    W_up (32 × 8), W_down (8 × 32), each applied as ``h @ W.T`` as the C program stores them."""
    f32 = np.float32
    wq, wk, wv = (_rand_weights(numbers, (2, 4, 8)) for _ in range(3))
    wo, w_up, w_down = (_rand_weights(numbers, shape) for shape in ((8, 8), (32, 8), (8, 32)))
    h = _rms_norm32(x)
    heads = []
    for i in range(2):
        q, k, v = h @ wq[i].T, h @ wk[i].T, h @ wv[i].T                   # (4, 4) each
        s = (q @ k.T) * (f32(1) / np.sqrt(f32(4)))
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        heads.append((e / e.sum(axis=-1, keepdims=True)) @ v)
    x = (x + np.concatenate(heads, axis=-1) @ wo.T).astype(f32)
    up = _rms_norm32(x) @ w_up.T                                           # (4, 32)
    hidden = f32(0.5) * up * (f32(1) + np.tanh(f32(0.7978846) * (up + f32(0.044715) * up * up * up)))
    return (x + hidden.astype(f32) @ w_down.T).astype(f32)


@dataclass(frozen=True)
class RandResult(Result):
    """Tokens through blocks whose weights come from C's rand(). lengths: (n_blocks + 1,) a
    token's average length before the first block and after each; relative: (n_blocks,) each
    block's change as a share of the stream."""
    lengths: np.ndarray
    relative: np.ndarray
    sigma: float                # the weights' standard deviation, 0.1 / √3


def rand_demonstration(n_blocks: int = 4, seed: int = 42) -> RandResult:
    """4 tokens of 8 numbers (``RAND_TOKENS``) through ``n_blocks`` pre-norm blocks whose weights
    are drawn uniformly between -0.1 and 0.1 by ``c_rand(seed)``, in float32. Returns the average
    length of a token before and after each block (1.3809 -> 1.4256 after 4 blocks), each
    block's change as a share of the stream (``relative``), and the weights' standard deviation
    (``sigma``, 0.1 / √3)."""
    numbers = c_rand(seed)
    streams = [RAND_TOKENS.astype(np.float32)]
    for _ in range(int(n_blocks)):
        streams.append(_rand_block(streams[-1], numbers))
    lengths = np.array([np.linalg.norm(s, axis=-1).mean() for s in streams], dtype=float)
    return RandResult(lengths=lengths, relative=relative_changes(streams), sigma=RAND_BOUND / np.sqrt(3.0))


# ---------------------------------------------------------------- GPT-2 Small's size, computed ahead

def _gpt2_small_start() -> list:
    """The one call notebook 04 makes, as plain arguments (see ``start_of_training``)."""
    return [_plain(layers=12, d_model=768, d_ff=3072, heads=12, length=8, stream_rms=1.0, std=0.02,
                   rules=tuple(RULES), seed=0, dtype=np.float32)]


def _plain(*, layers, d_model, d_ff, heads, length, stream_rms, std, rules, seed, dtype) -> dict:
    """The arguments of ``lib.initialisation.start_of_training`` written one way only (plain
    numbers, the rules a tuple, the dtype its name), so that equal calls find the same result."""
    return {"layers": int(layers), "d_model": int(d_model), "d_ff": int(d_ff), "heads": int(heads),
            "length": int(length), "stream_rms": float(stream_rms), "std": float(std),
            "rules": tuple(str(rule) for rule in rules), "seed": int(seed), "dtype": np.dtype(dtype).name}


@precomputed(_gpt2_small_start)
def _start_of_training(rules, dtype, **options) -> dict:
    runs = initialisation.start_of_training(rules=rules, dtype=np.dtype(dtype).type, **options)
    return {f"{field}_{rule}": value for rule, run in runs.items() for field, value in run._asdict().items()}


def start_of_training(layers=12, d_model=768, d_ff=3072, heads=12, *, length=16, stream_rms=1.0, std=0.02,
                      rules=tuple(RULES), seed=0, dtype=np.float64):
    """``lib.initialisation.start_of_training``, the same arguments and the same {rule: StartTrace},
    its result for notebook 04's call (GPT-2 Small's size, 8 tokens, float32) computed when the
    course was built and looked up (``labs.decoder.precomputed``); any other call runs live."""
    found = _start_of_training(**_plain(layers=layers, d_model=d_model, d_ff=d_ff, heads=heads, length=length,
                                        stream_rms=stream_rms, std=std, rules=rules, seed=seed, dtype=dtype))
    return {rule: initialisation.StartTrace(*(found[f"{field}_{rule}"] for field in initialisation.StartTrace._fields))
            for rule in rules}
