"""Position information: the sinusoidal table added to the tokens, and rotary positions (RoPE).

Attention with no causal mask and no positions ignores order. The sinusoidal table gives each
position its own vector to add to the token's vector; RoPE instead turns each query and key by an
angle that grows with position, so that a score depends on the two positions only through how far
apart they are (with its sign).
"""

from functools import lru_cache

import numpy as np

from ._checks import as_float_array, check_choice, check_positive_int

PAIRINGS = ("halves", "neighbours")


def sinusoidal(length, d_model, base=10000.0):
    """The sinusoidal position table, shape (length, d_model).

    Column pair i turns at speed base^(-2i/d_model) per position:
    PE[p, 2i] = sin(p / base^(2i/d_model)) and PE[p, 2i+1] = cos(p / base^(2i/d_model)).
    So the left columns change fast and the right columns slowly. d_model must be even.
    """
    length = check_positive_int(length, "length")
    d_model = check_positive_int(d_model, "d_model", even=True)
    speeds = base ** (-np.arange(0, d_model, 2) / d_model)        # (d_model/2,)
    angles = np.arange(length)[:, None] * speeds[None, :]           # (length, d_model/2)
    table = np.empty((length, d_model))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def rope_angles(positions, d, base=10000.0):
    """The rotation angle of every pair at every position, shape (len(positions), d/2).

    Pair i turns by position · theta_i with theta_i = base^(-i/(d/2)): the first pair one radian
    per position, the last pair slowest.
    """
    d = check_positive_int(d, "the last axis (head size)", even=True)
    thetas = base ** (-np.arange(d // 2) / (d // 2))                # (d/2,)
    return np.asarray(positions, dtype=float)[:, None] * thetas[None, :]


@lru_cache(maxsize=32)
def _cos_sin(length, d, base, offset, dtype):
    """cos and sin of ``rope_angles`` at positions offset ... offset + length - 1, each (length, d/2)
    in the number type ``dtype``. Kept (read-only): every query and key of a text turns alike."""
    angles = rope_angles(offset + np.arange(length), d, base)
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    cos.setflags(write=False)
    sin.setflags(write=False)
    return cos, sin


def rope(x, base=10000.0, pairing="halves", offset=0):
    """Rotary positions: turn every pair of numbers in each row of x by its position's angle.

    x:       shape (..., length, d) with d even; row i is at position offset + i.
             A single vector of shape (d,) is treated as one row at position ``offset``.
    pairing: "halves" pairs number i with number i + d/2 (LLaMA style);
             "neighbours" pairs number 2i with number 2i+1.
    Each pair (a, b) becomes (a cos t - b sin t, a sin t + b cos t), t = position · theta_i.
    Returns an array of the same shape as x. Lengths are kept; no parameters are learned.
    """
    x = as_float_array(x, "x")
    check_choice(pairing, "pairing", PAIRINGS)
    if x.ndim == 0:
        raise ValueError(f"x should have shape (..., length, d), got a single number {x!r}")
    if x.ndim == 1:
        return rope(x[None, :], base, pairing, offset)[0]
    length, d = x.shape[-2:]
    cos, sin = _cos_sin(length, d, base, offset, x.dtype)          # (length, d/2) each
    if pairing == "halves":
        first, second = x[..., : d // 2], x[..., d // 2:]
    else:
        first, second = x[..., 0::2], x[..., 1::2]
    turned_first = first * cos - second * sin
    turned_second = first * sin + second * cos
    out = np.empty_like(x)
    if pairing == "halves":
        out[..., : d // 2], out[..., d // 2:] = turned_first, turned_second
    else:
        out[..., 0::2], out[..., 1::2] = turned_first, turned_second
    return out


def add_positions(words, table, scale=True):
    """Word vectors with their positions added: words · sqrt(d_model) + table[:length].

    words: shape (..., length, d_model), the word vectors of a text, in order.
    table: a position table built once for the longest text, shape (max_length, d_model), e.g.
           ``sinusoidal(16, d_model)``; a text of ``length`` tokens takes its first ``length`` rows.
    scale: multiply the words by sqrt(d_model) first (True), or add them as they are (False).
    Returns an array of the same shape as words.
    """
    words = as_float_array(words, "words")
    table = as_float_array(table, "table")
    if words.ndim < 2:
        raise ValueError(f"words should have shape (..., length, d_model), got shape {words.shape}")
    length, d_model = words.shape[-2:]
    if table.ndim != 2 or table.shape[1] != d_model:
        raise ValueError(f"table should have shape (max_length, {d_model}) to match the words' "
                         f"{d_model} numbers, got shape {table.shape}")
    if table.shape[0] < length:
        raise ValueError(f"the table has {table.shape[0]} rows, too few for a text of {length} tokens")
    factor = np.sqrt(d_model) if scale else 1.0
    return words * factor + table[:length]
