"""The backward pass: the gradient of a loss with respect to every weight of a stack of blocks.

Training moves each weight a little against its gradient, the derivative of the loss with
respect to that weight, so a weight whose gradient is small learns slowly. The chain rule gives
the gradients from the top down: the gradient with respect to a step's output gives the gradient
with respect to its input and its weights, step by step, in the reverse order of the forward
pass. Each function below is that reverse step for one part of the course's random stacks
(``lib.block.random_stack``): RMSNorm without a gain, one-head attention, the plain FFN with
exact GELU and no biases.

The forward values are read from ``lib.block.block_trace``, so the block is still written once:
this module only walks it backwards. tests/test_lib_backward.py checks every gradient against
PyTorch's automatic differentiation.
"""

import math
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_choice
from .attention import attention
from .block import ATTENTION_HALF, FFN_HALF, Step, block_trace, decoder, random_stack
from .ffn import gelu
from .norm import rms_norm, root_mean_square
from .weights import random_weights

_erfc = np.frompyfunc(math.erfc, 1, 1)


def rms_norm_backward(x, d_out, eps=1e-5):
    """The gradient with respect to x of RMSNorm without a gain, given d_out, the gradient with
    respect to its output. x, d_out: (..., d); returns (..., d).

    Each token is y = x / r with r = sqrt(mean(x²) + eps); so dx = (d_out - y · mean(d_out · y)) / r:
    the part of d_out along y itself is removed, since scaling x up or down leaves y as it is.
    """
    x, d_out = as_float_array(x, "x"), as_float_array(d_out, "d_out")
    r = np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)          # (..., 1)
    y = x / r
    return (d_out - y * (d_out * y).mean(axis=-1, keepdims=True)) / r


def gelu_derivative(u):
    """The slope of exact GELU, Φ(u) + u · φ(u) (Φ, φ: the standard normal's cumulative
    probability and density), element by element."""
    u = as_float_array(u, "u")
    cdf = np.asarray(_erfc(-u / math.sqrt(2.0)), dtype=u.dtype) / 2
    return cdf + u * np.exp(-u ** 2 / 2) / math.sqrt(2 * math.pi)


def attention_backward(a, weights, d_out, causal=True):
    """One head of attention, backwards. a: (length, d) what attention read; weights: a
    BlockWeights with heads=1; d_out: (length, d) the gradient with respect to its output.
    Returns (d_a, {"Wq", "Wk", "Wv", "Wo": gradients of the weights' shapes})."""
    w = weights
    q, k, v = a @ w.Wq, a @ w.Wk, a @ w.Wv                            # (length, d) each
    _out, p = attention(a, w.Wq, w.Wk, w.Wv, w.Wo, causal=causal, return_weights=True)
    p = p[0]                                                          # (length, length), the one head
    scale = 1 / math.sqrt(q.shape[-1])
    mixed = p @ v                                                     # what Wo reads
    d_mixed = d_out @ w.Wo.T
    d_p, d_v = d_mixed @ v.T, p.T @ d_mixed
    d_scores = p * (d_p - (d_p * p).sum(axis=-1, keepdims=True))      # softmax backwards; masked: 0
    d_q, d_k = d_scores @ k * scale, d_scores.T @ q * scale
    grads = {"Wq": a.T @ d_q, "Wk": a.T @ d_k, "Wv": a.T @ d_v, "Wo": mixed.T @ d_out}
    return d_q @ w.Wq.T + d_k @ w.Wk.T + d_v @ w.Wv.T, grads


def ffn_backward(a, weights, d_out):
    """The plain FFN gelu(a W_up) W_down, backwards. a: (length, d) what it read; d_out:
    (length, d). Returns (d_a, {"W_up", "W_down": gradients of the weights' shapes})."""
    w = weights
    u = a @ w.W_up                                                    # (length, d_ff)
    d_u = (d_out @ w.W_down.T) * gelu_derivative(u)
    return d_u @ w.W_up.T, {"W_up": a.T @ d_u, "W_down": gelu(u).T @ d_out}


def _check_supported(weights, x):
    """The backward pass is written for the course's random stacks only: say so for anything else."""
    if weights.heads != 1 or weights.gated or any(
            getattr(weights, name) is not None for name in ("b_up", "b_down", "attention_norm_gain",
                                                            "attention_norm_bias", "ffn_norm_gain", "ffn_norm_bias")):
        raise ValueError("the backward pass is written for the course's random stacks: one head, a plain "
                         "FFN without biases, norms without gains (lib.block.random_stack), got "
                         f"heads={weights.heads}, gated={weights.gated} or a bias or gain")
    if x.ndim != 2:
        raise ValueError(f"x should have shape (length, d), one text, got shape {x.shape}")


def block_backward(x, weights, d_out, placement="pre", eps=1e-5):
    """One block (RMSNorm, causal attention, GELU FFN), backwards.

    x: (length, d) the block's input; d_out: (length, d) the gradient with respect to its
    output; placement "pre" or "post". Each half was x + part(norm(x)) or norm(x + part(x)):
    backwards, the gradient goes through the norm after the add (post), then splits at the add,
    one copy straight down the residual path, one through the part (and the norm before it, pre).
    Returns (d_x, {weight name: gradient}).
    """
    x = as_float_array(x, "x")
    _check_supported(weights, x)
    check_choice(placement, "placement", ("pre", "post"))
    trace = block_trace(x, weights, placement=placement, norm="rms", eps=eps, causal=True, activation="gelu")
    middle = trace[Step.ATTENTION_POST_NORM if placement == "post" else Step.ATTENTION_ADD]
    grads = {}
    d = as_float_array(d_out, "d_out")
    for half, before, backward in ((FFN_HALF, middle, ffn_backward), (ATTENTION_HALF, x, attention_backward)):
        if placement == "post":
            d = rms_norm_backward(trace[half.add], d, eps)               # the norm after the add
        read = trace[half.norm] if placement == "pre" else before
        d_read, part_grads = backward(read, weights, d)
        if placement == "pre":
            d_read = rms_norm_backward(before, d_read, eps)              # the norm before the part
        d = d + d_read                                                   # the add: both paths
        grads.update(part_grads)
    return d, grads


class Gradients(NamedTuple):
    """loss: ½ · mean((RMSNorm(top) - target)²), one number.
    weights: one dict per block, weight name -> the gradient of the loss (the weight's shape).
    streams: the gradient with respect to the stream before the first block and after each
    block, depth + 1 arrays of x's shape (the last one: with respect to the top)."""
    loss: float
    weights: list
    streams: list


def stack_gradients(x, blocks, target, placement="pre", eps=1e-5):
    """The loss of a stack of blocks and its gradients, by the backward pass.

    x: (length, d) the input; blocks: BlockWeights of ``random_stack``; target: (length, d).
    The stack runs forward (``lib.block.decoder``, RMSNorm, causal attention, GELU), a final
    RMSNorm reads the top, and the loss is ½ · mean((RMSNorm(top) - target)²). Returns Gradients.
    """
    target = as_float_array(target, "target")
    streams = decoder(x, blocks, placement=placement, final_norm=False, eps=eps, causal=True,
                      activation="gelu").streams
    out = rms_norm(streams[-1], eps=eps)
    if target.shape != out.shape:
        raise ValueError(f"target should have x's shape {out.shape}, got shape {target.shape}")
    loss = 0.5 * float(((out - target) ** 2).mean())
    d = rms_norm_backward(streams[-1], (out - target) / out.size, eps)   # through the final norm
    d_streams, d_weights = [d], []
    for before, weights in zip(reversed(streams[:-1]), reversed(blocks)):
        d, grads = block_backward(before, weights, d, placement, eps)
        d_streams.append(d)
        d_weights.append(grads)
    return Gradients(loss, d_weights[::-1], d_streams[::-1])


class GradientTrace(NamedTuple):
    """loss: the loss at the top.
    blocks: (depth,) the size (RMS) of the gradient of each block's weights, its six matrices together.
    streams: (depth + 1,) the size (RMS) of the gradient with respect to the stream before the
    first block and after each block."""
    loss: float
    blocks: np.ndarray
    streams: np.ndarray


def placement_gradients(depth=48, d_model=16, d_ff=64, length=8, *, seed=1):
    """The stack and input of ``lib.block.norm_placement_experiment`` (the same seed gives the
    same blocks and input), with pre-norm and with post-norm, run backwards from the loss
    ½ · mean((RMSNorm(top) - target)²), the target drawn from ``default_rng(seed + depth + 2)``.

    Returns {"pre": GradientTrace, "post": GradientTrace}: how large the gradient is for each
    block's weights and at each point of the stream.
    """
    blocks = random_stack(depth, d_model, d_ff, seed=seed)
    x, = random_weights([(length, d_model)], seed=seed, scale=1.0)
    target, = random_weights([(length, d_model)], seed=seed + depth + 2, scale=1.0)
    traces = {}
    for placement in ("pre", "post"):
        g = stack_gradients(x, blocks, target, placement)
        sizes = [np.sqrt(np.mean(np.concatenate([grad.ravel() for grad in grads.values()]) ** 2))
                 for grads in g.weights]
        traces[placement] = GradientTrace(g.loss, np.array(sizes),
                                          np.array([root_mean_square(d) for d in g.streams]))
    return traces
