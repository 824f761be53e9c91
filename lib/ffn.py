"""The position-wise feed-forward network: widen, apply a non-linearity, narrow back.

The same weights act on every token separately: W_up (d_model, d_ff) widens each token into
d_ff hidden units, W_down (d_ff, d_model) narrows them back (other texts call them W1 and W2).
Without the activation the two matrices would collapse into one (x W_up W_down), so the
activation is what the extra width pays for. The gated form, SwiGLU, adds a third matrix of the
same shape as W_up: (SiLU(x W_gate) ⊙ x W_up) W_down.
"""

import math
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_matrix, check_vector
from .deprecated.names import earlier_names

_erfc = np.frompyfunc(math.erfc, 1, 1)   # math.erfc on every element: exact to float64


def relu(x):
    """ReLU, element by element: max(0, x). Any shape in, same shape out."""
    return np.maximum(0.0, as_float_array(x, "x"))


def gelu(x):
    """Exact GELU, element by element: x · Φ(x), Φ the standard normal's cumulative probability.

    Φ(x) = erfc(-x/√2) / 2, computed with math.erfc (exact to float64; erfc rather than 1 + erf
    keeps the precision for large negative x). Any shape in, same shape out.
    """
    x = as_float_array(x, "x")
    phi = np.asarray(_erfc(-x / math.sqrt(2.0)), dtype=x.dtype) / 2
    return x * phi


def gelu_tanh(x):
    """GELU's tanh approximation: x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))). Same shape out."""
    x = as_float_array(x, "x")
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    """The logistic function 1 / (1 + e^(-x)). Same shape out.

    Written as e^(min(x, 0)) / (1 + e^(-|x|)), where no power of e can overflow: for x >= 0 it
    is 1 / (1 + e^(-x)), and for x < 0 it is e^x / (1 + e^x), the same number with e^x on top, so
    tiny results keep their precision.
    """
    x = as_float_array(x, "x")
    return np.exp(np.minimum(x, 0)) / (1 + np.exp(-np.abs(x)))


def silu(x):
    """SiLU (also called swish): x · sigmoid(x). silu(-3), silu(0), silu(3) = -0.14, 0.00, 2.86."""
    x = as_float_array(x, "x")
    return x * sigmoid(x)


def identity(x):
    """No activation at all: x unchanged (the FFN then collapses to one matrix)."""
    return as_float_array(x, "x")


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu, "none": identity}


def activation_function(activation):
    """Turn an activation given by name ("relu", "gelu", "gelu_tanh", "silu", "none" or None)
    into its function; a callable is returned as it is."""
    if activation is None:
        return identity
    if callable(activation):
        return activation
    if activation not in ACTIVATIONS:
        names = ", ".join(repr(name) for name in ACTIVATIONS)
        raise ValueError(f"activation should be one of {names}, None or a function, got {activation!r}")
    return ACTIVATIONS[activation]


def _check_tokens(x):
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x should have shape (..., d_model), got a single number")
    return x


def hidden_units(x, W_up, b_up=None):
    """The hidden units before the activation: x @ W_up + b_up.

    x: (..., d_model); W_up: (d_model, d_ff); b_up: (d_ff,) or None. Returns (..., d_ff).
    """
    x = _check_tokens(x)
    W_up = check_matrix(W_up, "W_up", rows=x.shape[-1],
                        rows_reason=f" to match x's last axis ({x.shape[-1]} numbers per token)")
    hidden = x @ W_up                                                   # (..., d_ff)
    if b_up is not None:
        hidden = hidden + check_vector(b_up, "b_up", W_up.shape[1], f" to match W_up's {W_up.shape[1]} columns")
    return hidden


def ffn(x, W_up, b_up, W_down, b_down, activation="relu"):
    """The feed-forward network: activation(x @ W_up + b_up) @ W_down + b_down, every token on its own.

    x:      (..., d_model)         W_up: (d_model, d_ff)   b_up: (d_ff,) or None
    W_down: (d_ff, d_model_out)    b_down: (d_model_out,) or None
    activation: "relu", "gelu", "gelu_tanh", "silu", "none"/None, or a function.
    Returns (..., d_model_out); usually d_model_out = d_model, so it can be added to x.
    """
    act = activation_function(activation)
    hidden = act(hidden_units(x, W_up, b_up))                           # (..., d_ff)
    W_down = check_matrix(W_down, "W_down", rows=hidden.shape[-1],
                          rows_reason=f" to match W_up's {hidden.shape[-1]} columns (the hidden width)")
    out = hidden @ W_down                                               # (..., d_model_out)
    if b_down is not None:
        out = out + check_vector(b_down, "b_down", W_down.shape[1], f" to match W_down's {W_down.shape[1]} columns")
    return out


def swiglu(x, W_gate, W_up, W_down):
    """The gated feed-forward network: (silu(x @ W_gate) * (x @ W_up)) @ W_down.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model). Returns (..., d_model).
    The gate decides, number by number, how much of each hidden unit of x @ W_up gets through.
    """
    x = _check_tokens(x)
    reason = f" to match x's last axis ({x.shape[-1]} numbers per token)"
    W_gate = check_matrix(W_gate, "W_gate", rows=x.shape[-1], rows_reason=reason)
    W_up = check_matrix(W_up, "W_up", rows=x.shape[-1], columns=W_gate.shape[1], rows_reason=reason,
                        columns_reason=f" like W_gate (the hidden width {W_gate.shape[1]})")
    W_down = check_matrix(W_down, "W_down", rows=W_gate.shape[1],
                          rows_reason=f" to match the hidden width {W_gate.shape[1]} of W_gate and W_up")
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down          # gate and hidden units (..., d_ff) -> (..., d_model)


@earlier_names
class WorkedExample(NamedTuple):
    """The course's small feed-forward network and its three tokens (notebook 02).

    tokens: the words; X: (3, 2), one row per word; W_up: (2, 4); b_up: (4,); W_down: (4, 2);
    b_down: (2,).
    """
    tokens: tuple
    X: np.ndarray
    W_up: np.ndarray
    b_up: np.ndarray
    W_down: np.ndarray
    b_down: np.ndarray


def worked_example():
    """The worked example, fresh arrays every call: cat [2, 0], dog [1, 1], car [0, 2] through
    W_up = [[1, -1, 0, 1], [0, 1, -1, 1]], b_up = [0, 0, 1, -2], W_down = [[1, 0], [0, 1], [-1, 1],
    [0.5, 0.5]], b_down = 0. Cat's hidden units before ReLU are [2, -2, 1, 0]: two of them are on."""
    return WorkedExample(
        tokens=("cat", "dog", "car"),
        X=np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 2.0]]),
        W_up=np.array([[1.0, -1.0, 0.0, 1.0], [0.0, 1.0, -1.0, 1.0]]),
        b_up=np.array([0.0, 0.0, 1.0, -2.0]),
        W_down=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0], [0.5, 0.5]]),
        b_down=np.zeros(2),
    )


def collapse(W_up, b_up, W_down, b_down):
    """Without an activation an FFN is one affine map: x @ W_up @ W_down + (b_up @ W_down + b_down).

    Returns (W, b) with W = W_up @ W_down of shape (d_model, d_model_out) and b = b_up @ W_down +
    b_down (None biases count as zero), so that ffn(x, W_up, b_up, W_down, b_down, activation=None)
    == x @ W + b.
    """
    W_up = check_matrix(W_up, "W_up")
    W_down = check_matrix(W_down, "W_down", rows=W_up.shape[1],
                          rows_reason=f" to match W_up's {W_up.shape[1]} columns (the hidden width)")
    b_up = np.zeros(W_up.shape[1]) if b_up is None else check_vector(b_up, "b_up", W_up.shape[1])
    b_down = np.zeros(W_down.shape[1]) if b_down is None else check_vector(b_down, "b_down", W_down.shape[1])
    return W_up @ W_down, b_up @ W_down + b_down
