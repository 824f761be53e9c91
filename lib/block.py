"""One decoder block, written once, and a stack of blocks (the decoder).

A block is two halves, each reading the stream and adding what it computes. In the usual
(pre-norm) form it is two lines:

    x = x + attention(norm(x))
    x = x + feed_forward(norm(x))

``sublayer`` is one such line and ``block`` is the two lines. Everything the course varies is an
ordinary argument: where the norm sits (before the part, after the add, or nowhere), which norm,
whether a part is left out, whether the result is added or replaces the stream, and the
attention's own options (causal mask, positions, a function from scores to weights). The labs'
remove-a-part toggles, the six-step example, the trained model of notebook 05 and the stacks of
notebook 03 all run this one ``block``.
"""

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_choice, check_matrix, check_positive_int, check_vector
from .attention import attention as self_attention, causal_weights as masked_softmax
from .ffn import ffn as plain_ffn, swiglu
from .norm import normaliser, root_mean_square
from .weights import random_weights

PLACEMENTS = ("pre", "post", "none")


@dataclass
class BlockWeights:
    """The learned numbers of one block (d = d_model, f = d_ff, the FFN's hidden width).

    Wq, Wk, Wv, Wo: (d, d) attention projections, split into ``heads`` contiguous slices.
    W1: (d, f) widens ("up"); W2: (f, d) narrows ("down"). With W_gate (d, f) the FFN is gated
    (SwiGLU): (silu(x W_gate) * x W1) W2. b1 (f,), b2 (d,): optional biases (plain FFN only).
    attention_norm, ffn_norm: optional (d,) gains of the norm of each half (one number per
    column); attention_norm_bias, ffn_norm_bias: optional (d,) shifts, for LayerNorm only.
    """
    Wq: np.ndarray
    Wk: np.ndarray
    Wv: np.ndarray
    Wo: np.ndarray
    W1: np.ndarray
    W2: np.ndarray
    W_gate: np.ndarray | None = None
    b1: np.ndarray | None = None
    b2: np.ndarray | None = None
    attention_norm: np.ndarray | None = None
    attention_norm_bias: np.ndarray | None = None
    ffn_norm: np.ndarray | None = None
    ffn_norm_bias: np.ndarray | None = None
    heads: int = 1

    def __post_init__(self):
        d = check_matrix(self.Wq, "Wq").shape[0]
        square = f" (square: d_model = {d}, taken from Wq's rows)"
        for name in ("Wq", "Wk", "Wv", "Wo"):
            setattr(self, name, check_matrix(getattr(self, name), name, rows=d, columns=d,
                                             rows_reason=square, columns_reason=square))
        self.W1 = check_matrix(self.W1, "W1", rows=d, rows_reason=f" (d_model = {d})")
        f = self.W1.shape[1]
        self.W2 = check_matrix(self.W2, "W2", rows=f, columns=d, rows_reason=f" (W1's {f} columns)",
                               columns_reason=f" (d_model = {d})")
        if self.W_gate is not None:
            self.W_gate = check_matrix(self.W_gate, "W_gate", rows=d, columns=f,
                                       rows_reason=f" (d_model = {d})", columns_reason=f" like W1 ({f})")
            if self.b1 is not None or self.b2 is not None:
                raise ValueError("b1 and b2 should be None for a gated FFN (SwiGLU has no biases here), "
                                 "got a bias")
        for name, length in (("b1", f), ("b2", d), ("attention_norm", d), ("attention_norm_bias", d),
                             ("ffn_norm", d), ("ffn_norm_bias", d)):
            if getattr(self, name) is not None:
                setattr(self, name, check_vector(getattr(self, name), name, length))
        self.heads = check_positive_int(self.heads, "heads")
        if d % self.heads:
            raise ValueError(f"heads should divide d_model = {d} into equal slices, got heads={self.heads}")

    @property
    def d_model(self):
        return self.Wq.shape[0]

    @property
    def d_ff(self):
        return self.W1.shape[1]

    @property
    def gated(self):
        return self.W_gate is not None


def random_block_weights(d_model, d_ff, heads=1, *, seed, scale, gated=False):
    """Random weights for one block: every matrix drawn from normal(0, scale), in the order
    Wq, Wk, Wv, Wo, (W_gate if gated), W1, W2, from ``default_rng(seed)``. No biases, no gains.

    A scale near 1/sqrt(d_model) keeps each part's output about as large as its input.
    Returns a BlockWeights.
    """
    d, f = check_positive_int(d_model, "d_model"), check_positive_int(d_ff, "d_ff")
    shapes = [(d, d)] * 4 + [(d, f)] * (2 if gated else 1) + [(f, d)]
    drawn = random_weights(shapes, seed=seed, scale=scale)
    Wq, Wk, Wv, Wo = drawn[:4]
    W_gate = drawn[4] if gated else None
    return BlockWeights(Wq, Wk, Wv, Wo, W1=drawn[-2], W2=drawn[-1], W_gate=W_gate, heads=heads)


# ---------------------------------------------------------------- the block


def sublayer(x, part, norm, *, placement="pre", residual=True, steps=None, name=""):
    """One half of a block: ``part`` reads the stream x and its result is added to x.

        placement "pre":  x + part(norm(x))      (the norm rescales only the copy the part reads)
        placement "post": norm(x + part(x))      (the norm rescales the stream itself)
        placement "none": x + part(x)
    residual=False: the part's result replaces x instead of being added to it.
    part: a function (..., d) -> (..., d), or None to leave this half out (x comes back unchanged).
    steps: a list to which the grid after every step is appended as (name, array), or None.
    """
    if part is None:
        return x
    keep = steps.append if steps is not None else (lambda step: None)
    read = x
    if placement == "pre":
        read = norm(x)
        keep((f"norm before {name}", read))
    change = part(read)
    keep(("feed-forward" if name == "FFN" else name, change))
    x = x + change if residual else change
    if residual:
        keep((f"add {name}", x))
    if placement == "post":
        x = norm(x)
        keep((f"norm after {name}", x))
    return x


def block(x, weights, *, placement="pre", norm="rms", eps=1e-5, use_attention=True, use_ffn=True,
          use_residual=True, causal=True, activation="gelu", positions=None,
          causal_weights=masked_softmax, steps=None):
    """One decoder block: x (length, d) or (batch, length, d) in, the same shape out.

    In its usual form, pre-norm with both parts and the residual adds, it is
    ``x = x + attention(norm(x))`` then ``x = x + feed_forward(norm(x))``.

    weights: a BlockWeights. placement: "pre", "post" or "none" (see ``sublayer``).
    norm: "rms" (RMSNorm) or "layer" (LayerNorm), with eps (0 allowed); the gains (and shifts)
    are the weights' attention_norm and ffn_norm.
    use_attention / use_ffn: False leaves that half out; use_residual: False replaces the stream
    with each part's result instead of adding it.
    causal, positions, causal_weights: the attention's options (``lib.attention.attention``):
    mask the future, a function applied to each head's queries and keys (e.g. ``rope``), the
    function that turns causal scores into weights.
    activation: the plain FFN's activation (a gated FFN always uses SiLU).
    steps: a list that receives (name, grid) after every step, as ``block_steps`` returns.
    """
    w = weights
    x = as_float_array(x, "x")
    check_choice(placement, "placement", PLACEMENTS)
    if x.ndim not in (2, 3) or x.shape[-1] != w.d_model:
        raise ValueError(f"x should have shape (length, {w.d_model}) or (batch, length, {w.d_model}) "
                         f"to match the weights' d_model, got shape {x.shape}")
    normalise = normaliser(norm, eps)

    def attention(h):
        return self_attention(h, w.Wq, w.Wk, w.Wv, w.Wo, heads=w.heads, causal=causal,
                              positions=positions, causal_weights=causal_weights)

    def feed_forward(h):
        return swiglu(h, w.W_gate, w.W1, w.W2) if w.gated else plain_ffn(h, w.W1, w.b1, w.W2, w.b2, activation)

    how = dict(placement=placement, residual=use_residual, steps=steps)
    x = sublayer(x, attention if use_attention else None,
                 lambda h: normalise(h, w.attention_norm, w.attention_norm_bias), name="attention", **how)
    x = sublayer(x, feed_forward if use_ffn else None,
                 lambda h: normalise(h, w.ffn_norm, w.ffn_norm_bias), name="FFN", **how)
    return x


def block_steps(x, weights, **options):
    """Run one block and keep the grid after every step, as a list of (name, array).

    Takes ``block``'s options. Pre-norm names: input, norm before attention, attention, add
    attention, norm before FFN, feed-forward, add FFN; post-norm ends each half with
    "norm after ..." instead; a part that is left out has no steps.
    """
    steps = [("input", as_float_array(x, "x"))]
    block(x, weights, steps=steps, **options)
    return steps


# ---------------------------------------------------------------- the stack


class DecoderOutput(NamedTuple):
    """output: (..., length, d), the last stream after the final norm (if any).
    streams: the stream before the first block and after every block, n_blocks + 1 arrays."""
    output: np.ndarray
    streams: list


def decoder(x, blocks, *, final_norm=True, final_gain=None, **options):
    """A stack of blocks, then one final norm: the decoder of a language model.

    x: (length, d) or (batch, length, d); blocks: a list of BlockWeights, run in order.
    final_norm: apply the blocks' norm kind (``norm`` option, RMSNorm by default) once more at
    the top, with gain final_gain (d,) or None. Other options go to every ``block``.
    Returns a DecoderOutput(output, streams); streams[0] is x, streams[i] the stream after block i.
    """
    streams = [as_float_array(x, "x")]
    for weights in blocks:
        streams.append(block(streams[-1], weights, **options))
    output = streams[-1]
    if final_norm:
        output = normaliser(options.get("norm", "rms"), options.get("eps", 1e-5))(output, final_gain)
    return DecoderOutput(output, streams)


# ---------------------------------------------------------------- the course's examples

# The six-step example of notebook 04: 4 tokens of 4 numbers, pre-norm, RMSNorm without epsilon
# or gain, exact GELU, attention without a mask.
SIX_STEP_OPTIONS = dict(placement="pre", norm="rms", eps=0.0, activation="gelu", causal=False)


def six_step_setup(seed=28):
    """The tokens and weights of the six-step example: draws from default_rng(28) in the order
    X (4, 4) at scale 0.9, Wq, Wk, Wv, Wo (4, 4) at 0.6, W1 (4, 16) and W2 (16, 4) at 0.5, each
    rounded to one decimal. Another seed draws another setup the same way. Returns (X, BlockWeights)."""
    shapes = [(4, 4)] * 5 + [(4, 16), (16, 4)]
    X, Wq, Wk, Wv, Wo, W1, W2 = random_weights(shapes, seed=seed, scale=[0.9] + [0.6] * 4 + [0.5] * 2,
                                                decimals=1)
    return X, BlockWeights(Wq, Wk, Wv, Wo, W1=W1, W2=W2)


def six_steps():
    """The seven grids of the six-step example (the input, then one per step), as (name, array).
    Their sizes (RMS) are 0.74, 1.00, 0.95, 1.41, 1.00, 1.21, 2.05."""
    X, weights = six_step_setup()
    return block_steps(X, weights, **SIX_STEP_OPTIONS)


def random_stack(depth, d_model=16, d_ff=64, heads=1, *, seed, gain=1.0):
    """``depth`` blocks of random weights, block i drawn with ``random_block_weights`` from seed
    ``seed + 1 + i``: every matrix at scale gain/sqrt(d_model), and W2 (which has d_ff rows) shrunk
    by sqrt(d_model/d_ff), so each matrix gives back about ``gain`` times as much as it reads.
    Returns a list of BlockWeights; a longer stack with the same seed starts with the same blocks."""
    depth = check_positive_int(depth, "depth")
    blocks = []
    for i in range(depth):
        drawn = random_block_weights(d_model, d_ff, heads, seed=seed + 1 + i, scale=gain * d_model ** -0.5)
        blocks.append(replace(drawn, W2=drawn.W2 * np.sqrt(d_model / d_ff)))
    return blocks


class PlacementTrace(NamedTuple):
    """sizes: (depth + 1,) RMS of the stream before the first block and after each block.
    gaps: (depth + 1,) RMS of the difference between the runs with and without the nudge.
    amplification: gaps[-1] / gaps[0], how much larger the nudge arrives at the top."""
    sizes: np.ndarray
    gaps: np.ndarray
    amplification: float


def norm_placement_experiment(depth=48, d_model=16, d_ff=64, length=8, *, seed=1, nudge=1e-6,
                              **options):
    """Push one input, and the same input nudged a little, through ``depth`` random blocks
    (``random_stack`` with gain 1) with pre-norm and with post-norm (RMSNorm, causal attention,
    GELU). The input is drawn from ``default_rng(seed)``, the nudge's direction from
    ``default_rng(seed + depth + 1)``.

    Other keyword options go to every block (e.g. use_attention=False, activation="relu").
    Returns {"pre": PlacementTrace, "post": PlacementTrace}. Pre-norm's stream grows roughly like
    sqrt(depth) and a nudge arrives amplified; post-norm's stream stays at size 1 and a nudge
    usually arrives shrunk. The exact numbers depend on the seed.
    """
    blocks = random_stack(depth, d_model, d_ff, seed=seed)
    x, = random_weights([(length, d_model)], seed=seed, scale=1.0)
    direction, = random_weights([(length, d_model)], seed=seed + depth + 1, scale=1.0)
    traces = {}
    for placement in ("pre", "post"):
        plain = decoder(x, blocks, placement=placement, final_norm=False, **options).streams
        nudged = decoder(x + nudge * direction, blocks, placement=placement, final_norm=False,
                         **options).streams
        sizes = np.array([root_mean_square(stream) for stream in plain])
        gaps = np.array([root_mean_square(a - b) for a, b in zip(plain, nudged)])
        traces[placement] = PlacementTrace(sizes, gaps, float(gaps[-1] / gaps[0]))
    return traces
