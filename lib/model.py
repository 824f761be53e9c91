"""The course's small trained decoder, run with the course's own NumPy parts.

A LLaMA-style model (RMSNorm before each part and before the output, RoPE, SwiGLU, tied
embeddings) trained with PyTorch by ``training/train.py`` on a toy language the project generates.
Its weights ship in ``lib/trained/`` beside PyTorch's logits on a held-out text, so the forward
pass here can be checked against an independent implementation. Nothing here imports PyTorch.

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
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._checks import check_choice, check_non_negative
from .attention import attention, softmax
from .ffn import silu, swiglu
from .norm import layer_norm, rms_norm
from .params import ModelConfig
from .positional import PAIRINGS, rope

FOLDER = Path(__file__).resolve().parent / "trained"
NORMS = ("rms", "layer")


@lru_cache(maxsize=1)
def info() -> dict:
    """What the training recorded (lib/trained/model.json): config, settings, loss curve,
    framework version, seed, timing, the vocabulary and the labels of what decides each token."""
    return json.loads((FOLDER / "model.json").read_text(encoding="utf-8"))


def config() -> ModelConfig:
    """The trained model's sizes as a ``lib.params.ModelConfig`` (for counting its parameters)."""
    c = info()["config"]
    return ModelConfig(d_model=c["d_model"], layers=c["layers"], d_ff=c["d_ff"], vocab=c["vocab"],
                       heads=c["heads"], context=c["context"], gated=True, tied=c["tied"])


@dataclass(frozen=True)
class BlockWeights:
    """One block's weights, in the course's orientation (x @ W). d = d_model, f = d_ff."""
    attention_norm: np.ndarray   # (d,)  RMSNorm gain before attention
    wq: np.ndarray               # (d, d)
    wk: np.ndarray               # (d, d)
    wv: np.ndarray               # (d, d)
    wo: np.ndarray               # (d, d)
    ffn_norm: np.ndarray         # (d,)  RMSNorm gain before the FFN
    w_gate: np.ndarray           # (d, f)
    w_up: np.ndarray             # (d, f)
    w_down: np.ndarray           # (f, d)


class Weights(NamedTuple):
    """embedding: (vocab, d), also the output layer (tied); blocks: one BlockWeights per layer;
    final_norm: (d,) the gain of the norm before the output."""
    embedding: np.ndarray
    blocks: tuple
    final_norm: np.ndarray


@lru_cache(maxsize=1)
def weights() -> Weights:
    """The committed weights (float32 on disk), as read-only float64 arrays."""
    with np.load(FOLDER / "weights.npz") as data:
        arrays = {name: np.asarray(data[name], dtype=np.float64) for name in data.files}
    for array in arrays.values():
        array.setflags(write=False)
    names = [f.name for f in BlockWeights.__dataclass_fields__.values()]
    blocks = tuple(BlockWeights(**{n: arrays[f"{i}.{n}"] for n in names})
                   for i in range(info()["config"]["layers"]))
    return Weights(arrays["embedding"], blocks, arrays["final_norm"])


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
    with np.load(FOLDER / "reference.npz") as data:
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


def _norm(kind, eps):
    if kind == "rms":
        return lambda x, gain: rms_norm(x, gain, eps=eps)
    return lambda x, gain: layer_norm(x, gain, None, eps=eps)


def forward(ids, *, skip=(), positions=True, pairing="halves", base=10000.0, norm="rms",
            eps=1e-5, trace=False):
    """Run the trained model on ``ids`` (n token ids); returns the logits (n, vocab), or a Trace.

    skip:      block numbers (0-based) to leave out: the stream passes them unchanged.
    positions: False runs attention without RoPE (the model was trained with it).
    pairing:   "halves" as trained (number i with i + d/2) or "neighbours" (2i with 2i + 1).
    base:      the RoPE base (trained with 10,000).
    norm:      "rms" as trained, or "layer": LayerNorm (centred) with the same gains.
    eps:       the norms' epsilon (trained with 1e-5).
    Row t of the logits scores the token that comes after token t.
    """
    check_choice(pairing, "pairing", PAIRINGS)
    check_choice(norm, "norm", NORMS)
    eps = check_non_negative(eps, "eps")
    w = weights()
    heads = info()["config"]["heads"]
    ids = np.asarray(ids, dtype=np.int64)
    skip = {int(i) for i in skip}
    normalise = _norm(norm, eps)
    turn = partial(rope, base=float(base), pairing=pairing) if positions else None
    x = w.embedding[ids]
    streams, attention_adds, ffn_adds, gates = [x], [], [], []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for i, b in enumerate(w.blocks):
            if i in skip:
                zero = np.zeros_like(x)
                attention_adds.append(zero)
                ffn_adds.append(zero)
                gates.append(np.full((len(ids), b.w_gate.shape[1]), np.nan))
                streams.append(x)
                continue
            added = attention(normalise(x, b.attention_norm), b.wq, b.wk, b.wv, b.wo, heads=heads,
                              causal=True, positions=turn)
            x = x + added
            h = normalise(x, b.ffn_norm)
            if trace:
                gates.append(silu(h @ b.w_gate))
            changed = swiglu(h, b.w_gate, b.w_up, b.w_down)
            x = x + changed
            attention_adds.append(added)
            ffn_adds.append(changed)
            streams.append(x)
        logits = normalise(x, w.final_norm) @ w.embedding.T
    if not trace:
        return logits
    return Trace(np.array(streams), np.array(attention_adds), np.array(ffn_adds), np.array(gates),
                 logits)


def block(x, number, **options):
    """Block ``number`` (0-based) of the trained model applied to a stream x of shape (n, d):
    x + attention(RMSNorm(x)), then that + SwiGLU(RMSNorm(that)). ``options`` as in forward
    (positions, pairing, base, norm, eps)."""
    return _one_block(x, number, **options)


def blocks():
    """The trained model's blocks as functions, in order: blocks()[i](x) is block(x, i)."""
    return [partial(block, number=i) for i in range(info()["config"]["layers"])]


def embed(ids):
    """The embedding's rows for the token ids: the stream before the first block, (n, d)."""
    return weights().embedding[np.asarray(ids, dtype=np.int64)]


def output_logits(x, norm="rms", eps=1e-5):
    """The final norm and the tied output layer: logits (n, vocab) from a stream (n, d)."""
    w = weights()
    return _norm(norm, eps)(np.asarray(x, dtype=float), w.final_norm) @ w.embedding.T


def _one_block(x, only, *, positions=True, pairing="halves", base=10000.0, norm="rms",
                   eps=1e-5):
    """One block applied to a stream (what ``block`` runs)."""
    check_choice(pairing, "pairing", PAIRINGS)
    check_choice(norm, "norm", NORMS)
    b = weights().blocks[int(only)]
    normalise = _norm(norm, check_non_negative(eps, "eps"))
    turn = partial(rope, base=float(base), pairing=pairing) if positions else None
    x = np.asarray(x, dtype=float)
    x = x + attention(normalise(x, b.attention_norm), b.wq, b.wk, b.wv, b.wo,
                      heads=info()["config"]["heads"], causal=True, positions=turn)
    return x + swiglu(normalise(x, b.ffn_norm), b.w_gate, b.w_up, b.w_down)


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


def order_mask(ids=None, kinds=None):
    """For the held-out text: True for each prediction (length n - 1) whose answer depends on the
    order of earlier tokens (counting, copy, reverse, differences)."""
    h = heldout()
    kinds = h.kinds if kinds is None else np.asarray(kinds)
    names = info()["kinds"]
    order = [names.index(k) for k in info()["order_kinds"]]
    return np.isin(kinds[1:], order)


CONFIG = config()   # the trained model's sizes (lib.params.ModelConfig), e.g. for a parameter calculator
