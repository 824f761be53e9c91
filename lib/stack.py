"""A stack of random layers: what repeated layers do to a vector's length, with and without the
residual add and normalisation.

Each layer is f(x) = gain · Q x, with Q a random orthogonal matrix (a rotation, possibly combined
with a reflection: either way it keeps lengths), so a layer on its own multiplies the length of a
vector by exactly ``gain``. The modes wrap f the ways a deep
network can:

    plain       x ← f(x)                    the length is multiplied by gain at every layer
    residual    x ← x + f(x)                the add keeps x, but the length can still grow
    post-layer  x ← LayerNorm(x + f(x))     post-norm: the stream itself is rescaled every layer
    pre-layer   x ← x + f(LayerNorm(x))     pre-norm: only the copy that f reads is rescaled
    post-rms    x ← RMSNorm(x + f(x))
    pre-rms     x ← x + f(RMSNorm(x))

``residual_stream`` follows a pre-norm stack block by block: how large each addition is, how
large the stream becomes, and what share of the stream each block's addition is.
"""

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_choice, check_positive_int
from .norm import layer_norm, rms_norm, root_mean_square

MODES = {
    "plain": "x \u2190 f(x)",
    "residual": "x \u2190 x + f(x)",
    "post-layer": "x \u2190 LayerNorm(x + f(x))",
    "pre-layer": "x \u2190 x + f(LayerNorm(x))",
    "post-rms": "x \u2190 RMSNorm(x + f(x))",
    "pre-rms": "x \u2190 x + f(RMSNorm(x))",
}


def random_rotations(n, d=8, *, seed):
    """``n`` random orthogonal d × d matrices, uniformly drawn, from ``default_rng(seed)``: each keeps
    lengths and angles (a rotation, or a rotation and a reflection, about half of each).

    Each is the Q of a QR decomposition of a normal(0, 1) matrix, with the signs of its columns
    fixed so that the draw is uniform. Returns an array of shape (n, d, d).
    """
    n, d = check_positive_int(n, "n"), check_positive_int(d, "d")
    generator = np.random.default_rng(seed)
    out = np.empty((n, d, d))
    for i in range(n):
        q, r = np.linalg.qr(generator.normal(size=(d, d)))
        out[i] = q * np.sign(np.diag(r))
    return out


def start_vector(d=8, *, seed):
    """The vector that enters the stack: d numbers drawn from normal(0, 1) with ``default_rng(seed)``."""
    return np.random.default_rng(seed).normal(size=check_positive_int(d, "d"))


class StackRun(NamedTuple):
    """lengths: (n + 1,) the vector's length before the first layer and after each layer;
    after an overflow the remaining entries are NaN.
    steps: (n,) the length of what each layer changed, |x_after - x_before| (NaN after an overflow).
    overflow_at: the first layer whose result held an infinity or NaN, or None.
    zero_at: the first layer whose result was exactly zero (an underflow), or None."""
    lengths: np.ndarray
    steps: np.ndarray
    overflow_at: int | None
    zero_at: int | None


def run_stack(x, rotations, gain, mode="plain", *, dtype=np.float64, eps=1e-5, norm=None):
    """Push ``x`` (d,) through the layers f_i(x) = gain · rotations[i] @ x in the given mode.

    mode:  one of MODES' keys. gain: any non-negative number (large ones overflow, which is a
    result, not an error). dtype: the float type the vector is stored in after every layer
    (np.float16 overflows above 65,504 and rounds to zero below about 6e-8).
    Never raises for an overflow: the layer where it happened is returned in ``overflow_at``.
    norm: the normalising function ``norm(x, eps=eps)`` of the norm modes (default: LayerNorm
    for the "-layer" modes, RMSNorm without a gain for the "-rms" ones).
    Returns a StackRun.
    """
    check_choice(mode, "mode", tuple(MODES))
    x = as_float_array(x, "x").astype(dtype)
    rotations = as_float_array(rotations, "rotations")
    gain = float(gain)
    if norm is None:
        norm = layer_norm if mode.endswith("layer") else rms_norm
    lengths = np.full(len(rotations) + 1, np.nan)
    steps = np.full(len(rotations), np.nan)
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        lengths[0] = np.linalg.norm(x.astype(np.float64))
        overflow_at = zero_at = None
        for i, q in enumerate(rotations, start=1):
            stream = x.astype(np.float64)
            if mode == "plain":
                new = gain * (q @ stream)
            elif mode == "residual":
                new = stream + gain * (q @ stream)
            elif mode.startswith("post"):
                new = norm(stream + gain * (q @ stream), eps=eps)
            else:
                new = stream + gain * (q @ norm(stream, eps=eps))
            x = new.astype(dtype)
            if not np.all(np.isfinite(x)):
                overflow_at = i
                break
            length = np.linalg.norm(x.astype(np.float64))
            if not np.isfinite(length):        # the numbers are finite but their squares are not
                overflow_at = i
                break
            lengths[i] = length
            steps[i - 1] = np.linalg.norm(x.astype(np.float64) - stream)
            if zero_at is None and not np.any(x):
                zero_at = i
    return StackRun(lengths, steps, overflow_at, zero_at)


class ResidualStream(NamedTuple):
    """sizes: (n + 1,) RMS of the stream at the start and after each block.
    additions: (n,) RMS of what each block added.
    aligned: (n + 1,) the size if every addition pointed the same way as the stream
    (start + the sum of the additions so far), the worst case.
    right_angles: (n + 1,) sqrt(start² + the sum of the squared additions so far), the size if
    every addition were at right angles to the stream (close to start × sqrt(n + 1) when the
    additions are about as large as the start).
    shares: (n,) each block's addition divided by the size of the stream it produced."""
    sizes: np.ndarray
    additions: np.ndarray
    aligned: np.ndarray
    right_angles: np.ndarray
    shares: np.ndarray


def residual_stream(n_blocks=12, d=64, *, start_size=0.9, addition_size=1.0, alignment=0.0,
                    seed=0, eps=1e-5):
    """A pre-norm stack: x ← x + f(RMSNorm(x)), where every f adds a vector of RMS ``addition_size``.

    Block i reads RMSNorm(x) and rotates it at random (rotations from ``default_rng(seed)``),
    so its addition points in a direction unrelated to the stream. ``alignment`` (0 to 1) mixes
    in the stream's own direction: 0 gives independent directions, 1 makes every addition point
    exactly along the stream (the aligned worst case). The start is d numbers from the same
    generator, rescaled to RMS ``start_size``. Returns a ResidualStream.
    """
    n_blocks, d = check_positive_int(n_blocks, "n_blocks"), check_positive_int(d, "d")
    alignment = float(np.clip(alignment, 0.0, 1.0))
    rotations = random_rotations(n_blocks, d, seed=seed)
    x = start_vector(d, seed=seed + 10_000)
    x = x / root_mean_square(x) * start_size
    sizes, additions = [root_mean_square(x)], []
    for q in rotations:
        read = rms_norm(x, eps=eps)
        change = (1.0 - alignment) * (q @ read) + alignment * read
        change = change / root_mean_square(change) * addition_size
        x = x + change
        sizes.append(root_mean_square(x))
        additions.append(root_mean_square(change))
    sizes, additions = np.array(sizes), np.array(additions)
    cumulative = np.concatenate([[0.0], np.cumsum(additions)])
    squares = np.concatenate([[0.0], np.cumsum(additions ** 2)])
    return ResidualStream(sizes, additions, sizes[0] + cumulative,
                          np.sqrt(sizes[0] ** 2 + squares), additions / sizes[1:])
