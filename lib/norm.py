"""Normalisation over the last axis: each token's numbers are rescaled on their own.

LayerNorm centres and scales each token (mean 0, standard deviation 1, then a gain and a bias);
RMSNorm only divides by the root mean square (then a gain). Nothing is shared between tokens,
so a token's result never depends on the other tokens in the batch.
"""

import numpy as np

from ._checks import as_float_array, check_choice, check_non_negative, check_vector


def _tokens(x):
    """x as a float array with at least one axis (the numbers of each token)."""
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x should have shape (..., d) with the token's numbers on the last axis, "
                         "got a single number")
    return x


def _learned_vector(vector, name, x):
    """Check an optional per-column vector (a gain or a bias) against x's last axis."""
    if vector is None:
        return None
    reason = f" to match x's last axis ({x.shape[-1]} numbers per token)"
    return check_vector(vector, name, x.shape[-1], reason)


def layer_norm(x, gain=None, bias=None, eps=1e-5):
    """LayerNorm of every token: (x - mean) / sqrt(variance + eps) · gain + bias.

    x:    shape (..., d); mean and variance are taken over the last axis only.
    gain: shape (d,) or None (no scaling); bias: shape (d,) or None (no shift). (Other texts
          call them γ and β.)
    eps:  a small number (>= 0; 0 is allowed) that keeps the division safe.
    Returns shape (..., d). Example: [1, 1, 5, 5] becomes [-1, -1, 1, 1] (eps aside).
    """
    x = _tokens(x)
    eps = check_non_negative(eps, "eps")
    gain, bias = _learned_vector(gain, "gain", x), _learned_vector(bias, "bias", x)
    mean = x.mean(axis=-1, keepdims=True)                               # (..., 1)
    variance = x.var(axis=-1, keepdims=True)                            # (..., 1)
    out = (x - mean) / np.sqrt(variance + eps)                          # (..., d)
    if gain is not None:
        out = out * gain
    if bias is not None:
        out = out + bias
    return out


def rms_norm(x, gain=None, eps=1e-5):
    """RMSNorm of every token: x / sqrt(mean(x²) + eps) · gain, with no centring.

    x:    shape (..., d); the mean of the squares is taken over the last axis only.
    gain: shape (d,) or None (no scaling). eps: >= 0 (0 is allowed).
    Returns shape (..., d). Example: [-1.1, 0.1, -0.2, -0.5] (RMS 0.6144) becomes
    [-1.790, 0.163, -0.326, -0.814].
    """
    x = _tokens(x)
    eps = check_non_negative(eps, "eps")
    gain = _learned_vector(gain, "gain", x)
    out = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)     # (..., d) / (..., 1)
    return out if gain is None else out * gain


def root_mean_square(x, axis=None):
    """The typical size of the numbers in x: sqrt(mean(x²)).

    axis=None gives one number for the whole grid (the size printed under each step of a block);
    axis=-1 gives one size per token, shape (...,).
    """
    x = as_float_array(x, "x")
    return np.sqrt((x ** 2).mean(axis=axis))


NORMS = {"rms": rms_norm, "layer": layer_norm}


def normaliser(kind, eps=1e-5):
    """The norm named ``kind`` ("rms" or "layer") as a function of (x, gain=None, bias=None).

    RMSNorm has no shift, so a bias with kind "rms" raises a ValueError.
    """
    check_choice(kind, "norm", tuple(NORMS))
    if kind == "layer":
        return lambda x, gain=None, bias=None: layer_norm(x, gain, bias, eps)

    def rms(x, gain=None, bias=None):
        if bias is not None:
            raise ValueError("a norm bias needs norm='layer' (RMSNorm has no shift), got a bias with norm='rms'")
        return rms_norm(x, gain, eps)
    return rms
