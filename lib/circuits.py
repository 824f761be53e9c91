"""How the trained model's heads work together: where each head looks, and which heads read what
earlier heads wrote.

A head's attention map (``attention_maps``) holds, for each token (a row), its weights on every
earlier token. Two patterns have names (``head_scores``):

* a **previous-token head** puts its weight on the token just before: in "copy b d a |" the
  token "d" looks at "b";
* an **induction head** puts its weight on the token *after an earlier occurrence of the current
  token*: at the second "b" of "copy b d a | b d a", it looks at the "d" that followed the first
  "b", the token to copy next (Olsson et al. 2022).

An induction head needs a previous-token head before it: the earlier "d" only "knows" it came
after "b" if a head of an earlier block wrote "b" into d's stream. The induction head then finds
it with its keys: its QK circuit reads what the previous-token head's OV circuit wrote. Elhage et
al. (2021) measure this *K-composition* from the weights alone (``composition``); ``keys_without``
measures it by running the model: the induction head's keys computed without the earlier head.

    ids = model.encode("copy b d a e | b d a e .")
    maps = attention_maps(ids)                          # (4, 4, 11, 11): blocks, heads, rows, columns
    head_scores(maps, ids).previous                     # (4, 4), one per head
    keys_without(ids, (0, 3), (1, 1))                   # block 2's head 2 run without block 1's head 4
"""

from __future__ import annotations

from typing import NamedTuple

import math

import numpy as np

from . import model
from .attention import causal_weights
from .norm import rms_norm
from .positional import rope


def attention_maps(ids, **details):
    """Every head's attention weights on the text ``ids`` (n tokens), in the trained model:
    (layers, heads, n, n), row t the weights of token t on tokens 0 ... t (the rest 0).
    ``details`` as in ``lib.model.forward``."""
    kept = []

    def weigh_and_keep(scores):                                       # (heads, n, n)
        weights = causal_weights(scores)
        kept.append(weights)
        return weights

    x = model.embed(ids)
    for run_block in model.blocks(**details):
        x = run_block(x, causal_weights=weigh_and_keep)
    return np.array(kept)


class HeadScores(NamedTuple):
    """previous: (..., layers, heads) each head's mean weight on the token just before, over the
    rows 1 ... n - 1. induction: its mean weight on the tokens that followed an earlier
    occurrence of the current token (summed over the occurrences, the previous token excepted),
    over the rows that have one; NaN if none has."""
    previous: np.ndarray
    induction: np.ndarray


def induction_targets(ids):
    """Where an induction head looks: a boolean (n, n) grid, True at [t, s + 1] when token s is
    an earlier occurrence of token t and s + 1 < t - 1 (so the previous token never counts).
    "a b c a b" (ids [0, 1, 2, 0, 1]): row 3 (the second "a") marks column 1 (the "b" after the
    first "a"), row 4 (the second "b") marks column 2 ("c"); "a a" marks nothing."""
    ids = np.asarray(ids)
    n = len(ids)
    same = ids[:, None] == ids[None, :]                               # (n, n): token t is token s
    earlier = np.tril(same, -3)                                        # s <= t - 3, so s + 1 < t - 1
    targets = np.zeros((n, n), dtype=bool)
    targets[:, 1:] = earlier[:, :-1]                                   # [t, s] -> [t, s + 1]
    return targets


def head_scores(maps, ids):
    """Each head's previous-token and induction scores (a HeadScores) from its maps
    (..., layers, heads, n, n) on the text ``ids`` (n tokens).

    A head that always looks at the previous token scores previous 1; one that spreads its weight
    evenly over the t + 1 tokens it may see scores about the mean of 1 / (t + 1)."""
    maps = np.asarray(maps, dtype=np.float64)
    n = maps.shape[-1]
    rows = np.arange(1, n)
    previous = maps[..., rows, rows - 1].mean(axis=-1)
    targets = induction_targets(ids)
    has = targets.any(axis=1)
    with np.errstate(invalid="ignore"):
        induction = (maps * targets).sum(axis=-1)[..., has].mean(axis=-1) if has.any() else \
            np.full(previous.shape, np.nan)
    return HeadScores(previous, induction)


class KindScores(NamedTuple):
    """loss: (kinds,) the mean loss -log p(next token) of the predictions of each kind (NaN for a
    kind with none); accuracy: (kinds,) the share of them whose most probable token is the next
    token; counts: (kinds,) how many predictions of each kind. The kinds are ``model.info()["kinds"]``."""
    loss: np.ndarray
    accuracy: np.ndarray
    counts: np.ndarray


def kind_scores(logits, ids, kinds, n_kinds=None):
    """Loss and accuracy by kind of prediction (a KindScores) over texts: logits (texts, n, vocab),
    ids and kinds (texts, n), or one text without the first axis. Row t predicts token t + 1,
    whose kind is kinds[t + 1]."""
    logits = np.asarray(logits, dtype=np.float64)
    ids, kinds = np.asarray(ids), np.asarray(kinds)
    if logits.ndim == 2:
        logits, ids, kinds = logits[None], ids[None], kinds[None]
    n_kinds = n_kinds or len(model.info()["kinds"])
    losses = np.concatenate([model.token_losses(row, text) for row, text in zip(logits, ids)])
    right = (logits[:, :-1].argmax(axis=-1) == ids[:, 1:]).ravel()
    which = kinds[:, 1:].ravel().astype(np.int64)
    counts = np.bincount(which, minlength=n_kinds)
    with np.errstate(invalid="ignore"):
        loss = np.bincount(which, weights=losses, minlength=n_kinds) / counts
        accuracy = np.bincount(which, weights=right, minlength=n_kinds) / counts
    return KindScores(loss, accuracy, counts)


class Composition(NamedTuple):
    """How much each head reads what each head of an earlier block writes, from the weights alone
    (Elhage et al. 2021): [i, h, j, g] for head h of block i and head g of block j, NaN unless
    i < j. Each is a norm ratio from 0 to 1 (at most 1/sqrt(rank) for matrices of one rank); random
    matrices of the trained model's sizes give about 0.2.

    k: g's keys read h's output, |W_QK(g) W_OV(h)ᵀ| / (|W_QK(g)| |W_OV(h)|);
    q: g's queries read it, |W_OV(h) W_QK(g)| / (...); v: g's values read it, |W_OV(h) W_OV(g)| / (...).
    |·| is the Frobenius norm."""
    k: np.ndarray
    q: np.ndarray
    v: np.ndarray


def head_circuits(arrays, heads):
    """Every head's QK and OV matrices (layers, heads, d, d) from a weights file's arrays
    ({"0.Wq": (d, d), ..., "0.attention_norm_gain": (d,)}, as ``lib.model.weight_arrays``).

    In the stream's own terms (a row x, as x @ W): head h scores x_q W_QK x_kᵀ with
    W_QK = G Wq_h Wk_hᵀ G, and writes y W_OV with W_OV = G Wv_h Wo_h, where G is the diagonal of
    the block's attention norm gain (the norm's division by the RMS, one number per token, and
    RoPE's turn, which depends on the distance, are left out)."""
    layers = len({name.split(".")[0] for name in arrays if name[0].isdigit()})
    qk, ov = [], []
    for i in range(layers):
        gain = np.asarray(arrays[f"{i}.attention_norm_gain"], dtype=np.float64)[:, None]
        Wq, Wk, Wv = (gain * np.asarray(arrays[f"{i}.{name}"], dtype=np.float64) for name in ("Wq", "Wk", "Wv"))
        Wo = np.asarray(arrays[f"{i}.Wo"], dtype=np.float64)
        size = Wq.shape[1] // heads
        cut = [slice(h * size, (h + 1) * size) for h in range(heads)]
        qk.append([Wq[:, c] @ Wk[:, c].T for c in cut])
        ov.append([Wv[:, c] @ Wo[c, :] for c in cut])
    return np.array(qk), np.array(ov)


def composition(arrays, heads):
    """The K-, Q- and V-composition of every pair of heads in different blocks (a Composition),
    from a weights file's arrays (``head_circuits``)."""
    qk, ov = head_circuits(arrays, heads)
    layers = qk.shape[0]
    scores = {kind: np.full((layers, heads, layers, heads), np.nan) for kind in Composition._fields}
    for i in range(layers):
        for j in range(i + 1, layers):
            for h in range(heads):
                for g in range(heads):
                    scores["k"][i, h, j, g] = _ratio(qk[j, g] @ ov[i, h].T, qk[j, g], ov[i, h])
                    scores["q"][i, h, j, g] = _ratio(ov[i, h] @ qk[j, g], qk[j, g], ov[i, h])
                    scores["v"][i, h, j, g] = _ratio(ov[i, h] @ ov[j, g], ov[j, g], ov[i, h])
    return Composition(**scores)


def _ratio(product, a, b):
    """|product| / (|a| |b|), Frobenius norms; 0 when a or b is zero (nothing to compose)."""
    both = np.linalg.norm(a) * np.linalg.norm(b)
    return float(np.linalg.norm(product) / both) if both else 0.0


def keys_without(ids, head, reader):
    """The ``reader`` head's scores (a HeadScores of shape (1, 1)) on the text ``ids`` when its
    keys read the stream of a run without ``head``, and its queries the stream as it is: how much
    the reader's keys need what that earlier head wrote (K-composition, measured by running).

    head, reader: (block, head) pairs, 0-based, head's block before reader's; head None: nothing
    left out (the reader's own scores). Without the head, its weights are all 0, so it adds
    nothing, and whatever comes after it before the reader's block (its block's FFN included)
    runs without it. The trained model as trained (RoPE, RMSNorm with ε 1e-5).
    """
    j, g = reader
    skipped = None if head is None else tuple(head)
    if skipped is not None and skipped[0] >= j:
        raise ValueError(f"head should be in a block before the reader's (block {j}), got block {skipped[0]}")

    def weigh(block_number):
        def without(scores):                                          # (heads, n, n)
            weights = causal_weights(scores)
            if skipped is not None and skipped[0] == block_number:
                weights[skipped[1]] = 0.0
            return weights
        return without

    x = model.embed(ids)
    intact = x
    for k, run_block in enumerate(model.blocks()[:j]):
        intact, x = run_block(intact), run_block(x, causal_weights=weigh(k))
    w = model.weights().blocks[j]
    size = w.d_model // w.heads
    cut = slice(g * size, (g + 1) * size)
    queries = rope(rms_norm(intact, w.attention_norm_gain) @ w.Wq[:, cut])        # (n, size)
    keys = rope(rms_norm(x, w.attention_norm_gain) @ w.Wk[:, cut])
    maps = causal_weights(queries @ keys.T / math.sqrt(size))
    return head_scores(maps[None, None], ids)
