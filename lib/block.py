"""One decoder block, written once, and a stack of blocks (the decoder).

A block is two halves, each reading the stream and adding what it computes. In the usual
(pre-norm) form it is two lines, and so is ``block``:

    x = x + attention(attention_norm(x))        # x = sublayer(x, attention, attention_norm, ...)
    x = x + feed_forward(ffn_norm(x))           # x = sublayer(x, feed_forward, ffn_norm, ...)

Everything the course varies is an ordinary argument that chooses the functions of these lines:
which norm (RMSNorm, LayerNorm) and where it sits (``Sublayer``: before the part, after the add,
or nowhere), whether a half is left out, whether the result is added or replaces the stream, and
the attention's own options (causal mask, positions, a function from scores to weights). With a
trace, the grid after every step is kept under its ``Step``. The labs' remove-a-part toggles, the
six-step example, the trained model of notebook 05 and the stacks of notebook 03 all run this one
``block``.

Weights are named the library's way (see ``lib``): Wq, Wk, Wv, Wo; the FFN's W_up, W_down and
W_gate with biases b_up, b_down; each norm's gain and bias (attention_norm_gain, ...).
"""

from dataclasses import dataclass, replace
from enum import Enum
from functools import partial
from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_choice, check_matrix, check_positive_int, check_vector
from .attention import attention as self_attention, causal_weights as masked_softmax
from .deprecated.names import earlier_names
from .ffn import ffn as plain_ffn, swiglu
from .norm import normaliser, root_mean_square
from .weights import random_weights

PLACEMENTS = ("pre", "post", "none")


@earlier_names
@dataclass
class BlockWeights:
    """The learned numbers of one block (d = d_model, f = d_ff, the FFN's hidden width).

    Wq, Wk, Wv, Wo: (d, d) attention projections, split into ``heads`` contiguous slices.
    W_up: (d, f) widens; W_down: (f, d) narrows. With W_gate (d, f) the FFN is gated (SwiGLU):
    (silu(x W_gate) * x W_up) W_down. b_up (f,), b_down (d,): optional biases (plain FFN only).
    attention_norm_gain, ffn_norm_gain: optional (d,) gains of the norm of each half (one number
    per column); attention_norm_bias, ffn_norm_bias: optional (d,) shifts, for LayerNorm only.
    """
    Wq: np.ndarray
    Wk: np.ndarray
    Wv: np.ndarray
    Wo: np.ndarray
    W_up: np.ndarray
    W_down: np.ndarray
    W_gate: np.ndarray | None = None
    b_up: np.ndarray | None = None
    b_down: np.ndarray | None = None
    attention_norm_gain: np.ndarray | None = None
    attention_norm_bias: np.ndarray | None = None
    ffn_norm_gain: np.ndarray | None = None
    ffn_norm_bias: np.ndarray | None = None
    heads: int = 1

    def __post_init__(self):
        d = check_matrix(self.Wq, "Wq").shape[0]
        square = f" (square: d_model = {d}, taken from Wq's rows)"
        for name in ("Wq", "Wk", "Wv", "Wo"):
            setattr(self, name, check_matrix(getattr(self, name), name, rows=d, columns=d,
                                             rows_reason=square, columns_reason=square))
        self.W_up = check_matrix(self.W_up, "W_up", rows=d, rows_reason=f" (d_model = {d})")
        f = self.W_up.shape[1]
        self.W_down = check_matrix(self.W_down, "W_down", rows=f, columns=d,
                                   rows_reason=f" (W_up's {f} columns)", columns_reason=f" (d_model = {d})")
        if self.W_gate is not None:
            self.W_gate = check_matrix(self.W_gate, "W_gate", rows=d, columns=f,
                                       rows_reason=f" (d_model = {d})", columns_reason=f" like W_up ({f})")
            if self.b_up is not None or self.b_down is not None:
                raise ValueError("b_up and b_down should be None for a gated FFN (SwiGLU has no biases "
                                 "here), got a bias")
        for name, length in (("b_up", f), ("b_down", d), ("attention_norm_gain", d),
                             ("attention_norm_bias", d), ("ffn_norm_gain", d), ("ffn_norm_bias", d)):
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
        return self.W_up.shape[1]

    @property
    def gated(self):
        return self.W_gate is not None


def random_block_weights(d_model, d_ff, heads=1, *, seed, scale, gated=False):
    """Random weights for one block: every matrix drawn from normal(0, scale), in the order
    Wq, Wk, Wv, Wo, (W_gate if gated), W_up, W_down, from ``default_rng(seed)``. No biases, no
    gains. A scale near 1/sqrt(d_model) keeps each part's output about as large as its input.
    Returns a BlockWeights.
    """
    d, f = check_positive_int(d_model, "d_model"), check_positive_int(d_ff, "d_ff")
    shapes = [(d, d)] * 4 + [(d, f)] * (2 if gated else 1) + [(f, d)]
    drawn = random_weights(shapes, seed=seed, scale=scale)
    Wq, Wk, Wv, Wo = drawn[:4]
    W_gate = drawn[4] if gated else None
    return BlockWeights(Wq, Wk, Wv, Wo, W_up=drawn[-2], W_down=drawn[-1], W_gate=W_gate, heads=heads)


# ---------------------------------------------------------------- the steps of a block


class Step(Enum):
    """The grids a traced block keeps, each under a key that never changes. ``label`` is the text
    notebooks and labs show; it is written in ``LABELS`` only, and no code reads it back."""
    INPUT = "input"
    ATTENTION_NORM = "attention_norm"              # pre-norm: the normalised copy attention reads
    ATTENTION = "attention"                        # what attention computes
    ATTENTION_ADD = "attention_add"                # the stream after the add
    ATTENTION_POST_NORM = "attention_post_norm"    # post-norm: the stream after its norm
    FFN_NORM = "ffn_norm"
    FFN = "ffn"
    FFN_ADD = "ffn_add"
    FFN_POST_NORM = "ffn_post_norm"

    @property
    def label(self):
        """The step as notebooks and labs name it ("norm before attention", "add FFN", ...)."""
        return LABELS[self]

    @property
    def is_norm(self):
        """True for the steps whose grid a norm made (before a part or after an add)."""
        return self.value.endswith("norm")


LABELS = {
    Step.INPUT: "input",
    Step.ATTENTION_NORM: "norm before attention",
    Step.ATTENTION: "attention",
    Step.ATTENTION_ADD: "add attention",
    Step.ATTENTION_POST_NORM: "norm after attention",
    Step.FFN_NORM: "norm before FFN",
    Step.FFN: "feed-forward",
    Step.FFN_ADD: "add FFN",
    Step.FFN_POST_NORM: "norm after FFN",
}


class Half(NamedTuple):
    """The keys of one half's steps: the norm before the part, the part, the add, the norm after."""
    norm: Step
    part: Step
    add: Step
    norm_after: Step


ATTENTION_HALF = Half(Step.ATTENTION_NORM, Step.ATTENTION, Step.ATTENTION_ADD, Step.ATTENTION_POST_NORM)
FFN_HALF = Half(Step.FFN_NORM, Step.FFN, Step.FFN_ADD, Step.FFN_POST_NORM)


# ---------------------------------------------------------------- the block


class Sublayer(NamedTuple):
    """One half of a block, in the form the block's options give it:

        placement "pre":  x + part(norm(x))      the norm rescales only the copy the part reads
        placement "post": norm(x + part(x))      the norm rescales the stream itself
        placement "none": x + part(x)
    residual=False drops "x +": the part's result replaces the stream. trace: None, or a dict
    that receives the grid after every step under its ``Step``.
    """
    placement: str = "pre"
    residual: bool = True
    trace: dict | None = None

    def __call__(self, x, part, norm, half=ATTENTION_HALF):
        """The stream x (..., length, d) after this half; ``part`` and ``norm`` map (..., length, d)
        to the same shape; ``half`` names the steps in the trace."""
        read = self.keep(half.norm, norm(x)) if self.placement == "pre" else x
        change = self.keep(half.part, part(read))                          # (..., length, d)
        x = self.keep(half.add, x + change) if self.residual else change
        return self.keep(half.norm_after, norm(x)) if self.placement == "post" else x

    def keep(self, step, grid):
        """Put ``grid`` in the trace under ``step`` (if there is a trace); return it."""
        if self.trace is not None:
            self.trace[step] = grid
        return grid


def block(x, weights, *, placement="pre", norm="rms", eps=1e-5, use_attention=True, use_ffn=True,
          use_residual=True, causal=True, activation="gelu", positions=None,
          causal_weights=masked_softmax, cache=None, trace=None):
    """One decoder block: x (length, d) or (batch, length, d) in, the same shape out.

    weights: a BlockWeights. placement: "pre", "post" or "none" (see ``Sublayer``); use_residual:
    False replaces the stream with each part's result instead of adding it.
    norm: "rms" (RMSNorm) or "layer" (LayerNorm), with eps (0 allowed), the weights' gains (and
    shifts) for each half. use_attention / use_ffn: False leaves that half out.
    causal, positions, causal_weights: the attention's options (``lib.attention.attention``):
    mask the future, a function applied to each head's queries and keys (e.g. ``rope``), the
    function that turns causal scores into weights.
    cache: None, or the ``lib.attention.KVCache`` of this block's attention for the earlier
    tokens of the text: x is then only the new tokens, which read the cached keys and values
    and append their own (what generating with a KV cache does, block by block).
    activation: the plain FFN's activation (a gated FFN always uses SiLU).
    trace: None, or a dict that receives the grid after every step, as ``block_trace`` returns.
    """
    w = weights
    x = _stream(x, w)                                                      # (..., length, d)
    sublayer = Sublayer(check_choice(placement, "placement", PLACEMENTS), use_residual, trace)
    attention_norm, ffn_norm = _norms(w, norm, eps)
    attention = partial(self_attention, Wq=w.Wq, Wk=w.Wk, Wv=w.Wv, Wo=w.Wo, heads=w.heads, causal=causal,
                        positions=positions, causal_weights=causal_weights, cache=cache)
    feed_forward = (partial(swiglu, W_gate=w.W_gate, W_up=w.W_up, W_down=w.W_down) if w.gated else
                    partial(plain_ffn, W_up=w.W_up, b_up=w.b_up, W_down=w.W_down, b_down=w.b_down,
                            activation=activation))
    if use_attention:
        x = sublayer(x, attention, attention_norm, ATTENTION_HALF)
    if use_ffn:
        x = sublayer(x, feed_forward, ffn_norm, FFN_HALF)
    return x


def _stream(x, weights):
    """x as a float array of shape (length, d) or (batch, length, d), d the weights' d_model."""
    x = as_float_array(x, "x")
    if x.ndim not in (2, 3) or x.shape[-1] != weights.d_model:
        d = weights.d_model
        raise ValueError(f"x should have shape (length, {d}) or (batch, length, {d}) to match the "
                         f"weights' d_model, got shape {x.shape}")
    return x


def _norms(weights, kind, eps):
    """The norms of the two halves, each a function (..., d) -> (..., d) with its own gain and shift."""
    normalise = normaliser(kind, eps)
    return (partial(normalise, gain=weights.attention_norm_gain, bias=weights.attention_norm_bias),
            partial(normalise, gain=weights.ffn_norm_gain, bias=weights.ffn_norm_bias))


def block_trace(x, weights, **options):
    """Run one block and keep the grid after every step: a dict Step -> array, in order.

    Takes ``block``'s options. Pre-norm: INPUT, ATTENTION_NORM, ATTENTION, ATTENTION_ADD, FFN_NORM,
    FFN, FFN_ADD; post-norm ends each half with its POST_NORM step instead of starting with its
    NORM; a half that is left out has no steps. Each grid has x's shape.
    """
    trace = {Step.INPUT: as_float_array(x, "x")}
    block(x, weights, trace=trace, **options)
    return trace


def block_steps(x, weights, **options):
    """``block_trace`` as notebooks and labs show it: a list of (label, array), in order."""
    return [(step.label, grid) for step, grid in block_trace(x, weights, **options).items()]


# ---------------------------------------------------------------- the stack


class DecoderOutput(NamedTuple):
    """output: (..., length, d), the last stream after the final norm (if any).
    streams: the stream before the first block and after every block, n_blocks + 1 arrays."""
    output: np.ndarray
    streams: list


def decoder(x, blocks, *, final_norm=True, final_norm_gain=None, **options):
    """A stack of blocks, then one final norm: the decoder of a language model.

    x: (length, d) or (batch, length, d); blocks: a list of BlockWeights, run in order.
    final_norm: apply the blocks' norm kind (``norm`` option, RMSNorm by default) once more at
    the top, with the gain final_norm_gain (d,) or None. Other options go to every ``block``.
    Returns a DecoderOutput(output, streams); streams[0] is x, streams[i] the stream after block i.
    """
    streams = [as_float_array(x, "x")]                                   # each (..., length, d)
    for weights in blocks:
        streams.append(block(streams[-1], weights, **options))
    output = streams[-1]
    if final_norm:
        normalise = normaliser(options.get("norm", "rms"), options.get("eps", 1e-5))
        output = normalise(output, final_norm_gain)
    return DecoderOutput(output, streams)


# ---------------------------------------------------------------- the course's examples

# The six-step example of notebook 04: 4 tokens of 4 numbers, pre-norm, RMSNorm without epsilon
# or gain, exact GELU, attention without a mask.
SIX_STEP_OPTIONS = dict(placement="pre", norm="rms", eps=0.0, activation="gelu", causal=False)


def six_step_setup(seed=28):
    """The tokens and weights of the six-step example: draws from default_rng(28) in the order
    X (4, 4) at scale 0.9, Wq, Wk, Wv, Wo (4, 4) at 0.6, W_up (4, 16) and W_down (16, 4) at 0.5,
    each rounded to one decimal. Another seed draws another setup the same way. Returns
    (X, BlockWeights)."""
    shapes = [(4, 4)] * 5 + [(4, 16), (16, 4)]
    X, Wq, Wk, Wv, Wo, W_up, W_down = random_weights(shapes, seed=seed, decimals=1,
                                                      scale=[0.9] + [0.6] * 4 + [0.5] * 2)
    return X, BlockWeights(Wq, Wk, Wv, Wo, W_up=W_up, W_down=W_down)


def six_steps():
    """The seven grids of the six-step example (the input, then one per step), as (name, array).
    Their sizes (RMS) are 0.74, 1.00, 0.95, 1.41, 1.00, 1.21, 2.05."""
    X, weights = six_step_setup()
    return block_steps(X, weights, **SIX_STEP_OPTIONS)


def random_stack(depth, d_model=16, d_ff=64, heads=1, *, seed, gain=1.0):
    """``depth`` blocks of random weights, block i drawn with ``random_block_weights`` from seed
    ``seed + 1 + i``: every matrix at scale gain/sqrt(d_model), and W_down (with d_ff rows) shrunk
    by sqrt(d_model/d_ff), so each matrix gives back about ``gain`` times as much as it reads.
    Returns a list of BlockWeights; a longer stack with the same seed starts with the same blocks."""
    depth = check_positive_int(depth, "depth")
    blocks = []
    for i in range(depth):
        drawn = random_block_weights(d_model, d_ff, heads, seed=seed + 1 + i, scale=gain * d_model ** -0.5)
        blocks.append(replace(drawn, W_down=drawn.W_down * np.sqrt(d_model / d_ff)))
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
    both = np.stack([x, x + nudge * direction])             # (2, length, d): the two runs as one batch
    traces = {}
    for placement in ("pre", "post"):
        streams = decoder(both, blocks, placement=placement, final_norm=False, **options).streams
        sizes = np.array([root_mean_square(plain) for plain, _nudged in streams])
        gaps = np.array([root_mean_square(plain - nudged) for plain, nudged in streams])
        traces[placement] = PlacementTrace(sizes, gaps, float(gaps[-1] / gaps[0]))
    return traces
