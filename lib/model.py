"""The course's small trained decoder, run with the course's own NumPy parts.

A LLaMA-style model (RMSNorm before each part and before the output, RoPE, SwiGLU, tied
embeddings) trained with PyTorch by ``training/train.py`` on a toy language the project generates.
Its weights ship in ``lib/trained/`` beside PyTorch's logits on a held-out text, so the forward
pass here can be checked against an independent implementation (in the browser, those arrays
are fetched from the course site the first time they are needed: ``lib.files``). Nothing here
imports PyTorch.

    from lib import model
    ids = model.heldout().ids                       # 256 tokens the model never trained on
    logits = model.forward(ids)                     # (256, vocab), PyTorch's to 1e-4
    model.perplexity(logits, ids)                   # how surprised it is, on average
    model.forward(ids, skip={0}, positions=False)   # leave out block 1 and the positions

Every switch of ``forward`` (skip blocks, no positions, the RoPE pairing and base, LayerNorm
instead of RMSNorm, epsilon) changes how the same weights are used, never the weights.
"""

from __future__ import annotations

import json
from functools import lru_cache, partial
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import files
from ._checks import as_float_array, check_choice, check_non_negative
from .attention import softmax
from .block import BlockWeights, Step, block
from .config import ModelConfig
from .deprecated.names import earlier_names
from .ffn import silu
from .norm import NORMS, normaliser
from .positional import PAIRINGS, rope

FOLDER = files.FOLDER


@lru_cache(maxsize=1)
def info() -> dict:
    """What the training recorded (lib/trained/model.json): config, settings, loss curve,
    framework version, seed, timing, the vocabulary and the labels of what decides each token."""
    return json.loads((FOLDER / "model.json").read_text(encoding="utf-8"))


def config() -> ModelConfig:
    """The trained model's sizes as a ``lib.config.ModelConfig`` (for counting its parameters)."""
    c = info()["config"]
    return ModelConfig(d_model=c["d_model"], layers=c["layers"], d_ff=c["d_ff"], vocab=c["vocab"],
                       heads=c["heads"], context=c["context"], gated=True, tied=c["tied"])


@earlier_names
class Weights(NamedTuple):
    """embedding: (vocab, d), also the output layer (tied); blocks: one ``lib.block.BlockWeights``
    per layer (gated FFN, RMSNorm gains, ``heads`` heads); final_norm_gain: (d,) the gain of the
    norm before the output."""
    embedding: np.ndarray
    blocks: tuple
    final_norm_gain: np.ndarray


@lru_cache(maxsize=1)
def weight_arrays() -> MappingProxyType:
    """Every array of the weights file (lib/trained/weights.npz) by its name, read-only float32:
    "embedding" (vocab, d), "final_norm_gain" (d,) and block i's arrays as "{i}.<field>", each
    named as its field of ``lib.block.BlockWeights`` ("0.Wq", "0.W_up", "0.attention_norm_gain").
    The model was trained and is run in float32, so every number the forward pass computes is
    float32 too."""
    with files.load("weights.npz") as data:
        arrays = {name: np.asarray(data[name], dtype=np.float32) for name in data.files}
    for array in arrays.values():
        array.setflags(write=False)
    return MappingProxyType(arrays)


@lru_cache(maxsize=1)
def weights() -> Weights:
    """The committed weights (``weight_arrays``), with each block's arrays as a BlockWeights."""
    arrays, heads = weight_arrays(), info()["config"]["heads"]
    blocks = tuple(BlockWeights(**_block_arrays(arrays, i), heads=heads) for i in range(info()["config"]["layers"]))
    return Weights(arrays["embedding"], blocks, arrays["final_norm_gain"])


def _block_arrays(arrays, i):
    """Block i's arrays by field name: "0.Wq" -> "Wq"."""
    prefix = f"{i}."
    return {name.removeprefix(prefix): array for name, array in arrays.items() if name.startswith(prefix)}


class HeldOut(NamedTuple):
    """ids: (n,) the held-out text's tokens; kinds: (n,) what decides each token (an index into
    ``info()["kinds"]``); logits: (n, vocab) PyTorch's logits on it, float32; bigram: (vocab,
    vocab) how often token b followed token a in the training text."""
    ids: np.ndarray
    kinds: np.ndarray
    logits: np.ndarray
    bigram: np.ndarray


@lru_cache(maxsize=1)
def heldout() -> HeldOut:
    """The held-out text and what PyTorch computed on it (lib/trained/reference.npz)."""
    with files.load("reference.npz") as data:
        out = HeldOut(data["ids"].astype(np.int64), data["kinds"].astype(np.int64),
                      np.asarray(data["logits"]), data["bigram"].astype(np.int64))
    for array in out:
        array.setflags(write=False)
    return out


def vocab() -> list:
    """The model's words, in the order of the embedding's rows."""
    return list(info()["vocab"])


def encode(text: str) -> np.ndarray:
    """Words separated by spaces -> token ids. Unknown words raise a ValueError naming them."""
    index = {word: i for i, word in enumerate(vocab())}
    unknown = [w for w in text.split() if w not in index]
    if unknown:
        raise ValueError(f"these words are not in the model's vocabulary: {', '.join(unknown)}")
    return np.array([index[w] for w in text.split()], dtype=np.int64)


def decode(ids) -> str:
    """Token ids -> the words, separated by spaces."""
    words = vocab()
    return " ".join(words[int(i)] for i in ids)


class Trace(NamedTuple):
    """Everything the forward pass computed on the way, for a text of n tokens.

    streams: (layers + 1, n, d) the residual stream before the first block and after each block.
    attention_adds, ffn_adds: (layers, n, d) what each block's attention and FFN added.
    gates: (layers, n, d_ff) silu(x @ W_gate), how open each hidden unit's gate is.
    logits: (n, vocab). Skipped blocks add zeros (and their gates are NaN)."""
    streams: np.ndarray
    attention_adds: np.ndarray
    ffn_adds: np.ndarray
    gates: np.ndarray
    logits: np.ndarray


def _options(positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5):
    """The options of ``lib.block.block`` that run a block of this model the way it was trained
    (pre-norm, causal, RoPE with the given pairing and base), or with one detail changed."""
    check_choice(pairing, "pairing", PAIRINGS)
    check_choice(norm, "norm", tuple(NORMS))
    turn = partial(rope, base=float(base), pairing=pairing) if positions else None
    return dict(placement="pre", norm=norm, eps=check_non_negative(eps, "eps"), causal=True,
                positions=turn)


def forward(ids, *, skip=(), trace=False, **details):
    """Run the trained model on ``ids`` (n token ids); returns the logits (n, vocab), or a Trace.

    skip:      block numbers (0-based) to leave out: the stream passes them unchanged.
    details:   how the same weights are used (all as trained by default):
      positions: False runs attention without RoPE (the model was trained with it);
      pairing:   "halves" as trained (number i with i + d/2) or "neighbours" (2i with 2i + 1);
      base:      the RoPE base (trained with 10,000);
      norm:      "rms" as trained, or "layer": LayerNorm (centred) with the same gains;
      eps:       the norms' epsilon (trained with 1e-5).
    Row t of the logits scores the token that comes after token t.
    """
    options = _options(**details)
    skip = {int(i) for i in skip}
    x = embed(ids)                                                      # (n, d)
    streams, steps = [x], []
    with np.errstate(invalid="ignore", divide="ignore"):     # odd settings (a base of 0) give NaN
        for i, b in enumerate(weights().blocks):
            kept = {} if trace else None                                # Step -> (n, d) grid
            if i not in skip:
                x = block(x, b, trace=kept, **options)
            streams.append(x)
            steps.append(kept)
        logits = output_logits(x, norm=options["norm"], eps=options["eps"])     # (n, vocab)
    return _traced(streams, steps, logits) if trace else logits


def _traced(streams, steps, logits):
    """The Trace of a forward pass: the streams, and each block's steps ({} for a skipped block,
    which adds zeros and whose gates are NaN)."""
    nothing = np.zeros_like(streams[0])                                 # (n, d)
    gates = [silu(kept[Step.FFN_NORM] @ b.W_gate) if kept else                  # (n, d_ff)
             np.full((len(nothing), b.d_ff), np.nan, dtype=nothing.dtype)
             for kept, b in zip(steps, weights().blocks)]
    return Trace(np.array(streams), np.array([kept.get(Step.ATTENTION, nothing) for kept in steps]),
                 np.array([kept.get(Step.FFN, nothing) for kept in steps]), np.array(gates), logits)


def blocks(**details):
    """The trained model's blocks as functions of the stream, in order: blocks()[i](x) runs
    block i on x (n, d). ``details`` as in ``forward`` (positions, pairing, base, norm, eps)."""
    options = _options(**details)
    return [partial(block, weights=b, **options) for b in weights().blocks]


def embed(ids):
    """The embedding's rows for the token ids: the stream before the first block, (n, d)."""
    return weights().embedding[np.asarray(ids, dtype=np.int64)]


def output_logits(x, norm="rms", eps=1e-5):
    """The final norm and the tied output layer: logits (n, vocab) from a stream (n, d)."""
    w = weights()
    return normaliser(norm, eps)(as_float_array(x, "x"), w.final_norm_gain) @ w.embedding.T   # (n, vocab)


def log_probabilities(logits):
    """log softmax over the last axis, stable for large logits."""
    logits = np.asarray(logits, dtype=float)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def probabilities(logits):
    """softmax over the last axis: each row becomes the model's probabilities for the next token."""
    return softmax(logits, axis=-1)


def token_losses(logits, ids):
    """-log p(next token) for each of the n - 1 predictions the logits of n tokens make."""
    ids = np.asarray(ids, dtype=np.int64)
    logp = log_probabilities(logits)[:-1]
    return -logp[np.arange(len(ids) - 1), ids[1:]]


def perplexity(logits, ids, mask=None):
    """exp(average loss) over the predictions (optionally only where ``mask``, length n - 1, is True).
    1 means always sure and right; the vocabulary size means no better than guessing uniformly."""
    losses = token_losses(logits, ids)
    if mask is not None:
        losses = losses[np.asarray(mask, dtype=bool)]
    with np.errstate(over="ignore"):
        return float(np.exp(losses.mean()))


def bigram_probabilities(smoothing=1.0):
    """p(next | this) from the training text's pair counts, plus ``smoothing`` for every pair
    (so no pair has probability 0). Shape (vocab, vocab); each row sums to 1."""
    counts = heldout().bigram + float(smoothing)
    return counts / counts.sum(axis=1, keepdims=True)


def bigram_logits(ids, smoothing=1.0):
    """The bigram baseline as logits (log probabilities) for each token of ``ids``: (n, vocab)."""
    return np.log(bigram_probabilities(smoothing))[np.asarray(ids, dtype=np.int64)]


def order_mask(kinds=None):
    """For the held-out text: True for each prediction (length n - 1) whose answer depends on the
    order of earlier tokens (counting, copy, reverse, differences)."""
    h = heldout()
    kinds = h.kinds if kinds is None else np.asarray(kinds)
    names = info()["kinds"]
    order = [names.index(k) for k in info()["order_kinds"]]
    return np.isin(kinds[1:], order)



@lru_cache(maxsize=1)
def heldout_texts() -> tuple:
    """Every held-out text with PyTorch's logits on it, as a tuple of ``HeldOut`` (bigram: the
    training text's counts, as in ``heldout()``): first the text of ``heldout()``, then the texts
    of lib/trained/heldout_texts.npz, drawn from the same language with other seeds and run through
    the committed weights by ``training/heldout_texts.py``. Their ``kinds`` index ``info()["kinds"]``."""
    first = heldout()
    with files.load("heldout_texts.npz") as data:
        ids, kinds, logits = (np.asarray(data[name]) for name in ("ids", "kinds", "logits"))
    texts = [first]
    for i in range(len(ids)):
        text = HeldOut(ids[i].astype(np.int64), kinds[i].astype(np.int64), logits[i], first.bigram)
        for array in text[:3]:
            array.setflags(write=False)
        texts.append(text)
    return tuple(texts)
