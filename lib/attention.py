"""Multi-head self-attention: every position takes a weighted average of the positions it may see.

Queries, keys and values are projections of the same input. The projected width is cut into
``heads`` contiguous slices; each head scores its queries against its keys, scales by
sqrt(head size), masks the future if causal, takes a softmax and averages its values. The heads'
results are put side by side again and projected by Wo.

While a text is generated one token at a time, the keys and values of the tokens already seen
never change: a ``KVCache`` keeps them, and each new token computes only its own query, key and
value, and reads the cached keys through the rectangular causal mask (``causal_mask(1, n)``).
"""

import math
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from ._checks import as_float_array, check_matrix, check_positive_int


def softmax(x, axis=-1):
    """Softmax along ``axis``, stable for large numbers (the largest is subtracted first).

    Any shape in, same shape out; the numbers along ``axis`` become positive and sum to 1.
    Entries of -inf (masked) become exactly 0.
    """
    return _softmax_in_place(as_float_array(x, "x").copy(), axis)


def _softmax_in_place(x, axis):
    """``softmax`` written over x itself, an array the caller owns; returns x. Each step works
    in place because every new grid of this size costs time to allocate."""
    largest = np.max(x, axis=axis, keepdims=True)
    x -= np.where(np.isfinite(largest), largest, 0.0)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def causal_mask(length, keys=None):
    """The causal mask, shape (length, keys), True where query i may look at key j.

    The queries are the last ``length`` positions of a text of ``keys`` tokens (keys None: the
    same ``length`` tokens, a square), so query i sits at position i + keys - length and may look
    at itself and the past: j <= i + keys - length. The rest, the future, is False. A square of 3:
    [[T, F, F], [T, T, F], [T, T, T]]; 2 new queries after 2 cached tokens (keys=4):
    [[T, T, T, F], [T, T, T, T]]. Read-only: one mask per pair of sizes is made and kept.
    """
    length = check_positive_int(length, "length")
    keys = length if keys is None else check_positive_int(keys, "keys")
    if keys < length:
        raise ValueError(f"keys should be at least length = {length} (the queries are the last "
                         f"positions of the text the keys cover), got keys={keys}")
    return _kept_mask(length, keys)


@lru_cache(maxsize=16)
def _kept_mask(length, keys):
    """The mask of ``causal_mask``, made once per pair of sizes and read-only, since callers share it."""
    mask = np.tril(np.ones((length, keys), dtype=bool), keys - length)
    mask.setflags(write=False)
    return mask


def causal_weights(scores):
    """Attention weights from scores with the future masked: each row i is a softmax over the
    keys it may see only (``causal_mask``), so the future gets weight exactly 0.

    scores: (..., queries, keys), row = query, column = key, queries <= keys: the queries are the
    last positions of the text (all of it when the grid is square; the new tokens when the keys
    of earlier ones are kept in a cache). Returns the same shape; every row sums to 1. Example:
    scores [[1, 5], [0, 0]] give [[1, 0], [0.5, 0.5]]; one new query after a cache, [[1, 5]],
    gives its softmax over both keys.
    """
    masked = as_float_array(scores, "scores").copy()          # the caller's scores stay as they are
    if masked.ndim < 2:
        raise ValueError(f"scores should have shape (..., queries, keys), got shape {masked.shape}")
    allowed = causal_mask(*masked.shape[-2:])                 # (queries, keys) over (..., queries, keys)
    np.copyto(masked, -np.inf, where=~allowed)
    return _softmax_in_place(masked, axis=-1)


def _split_heads(projected, heads):
    """(..., length, width) -> (..., heads, length, width / heads): contiguous slices, one per head."""
    *lead, length, width = projected.shape
    split = projected.reshape(*lead, length, heads, width // heads)
    return np.ascontiguousarray(np.swapaxes(split, -3, -2))       # each head's rows side by side in memory


def _join_heads(per_head):
    """(..., heads, length, size) -> (..., length, heads · size): the heads side by side again."""
    joined = np.swapaxes(per_head, -3, -2)
    return joined.reshape(*joined.shape[:-2], -1)


def _check_projections(d, Wq, Wk, Wv, Wo, heads):
    """Check the four matrices against x's width and each other; return them as float arrays."""
    reason = f" to match x's last axis ({d} numbers per token)"
    Wq = check_matrix(Wq, "Wq", rows=d, rows_reason=reason)
    Wk = check_matrix(Wk, "Wk", rows=d, columns=Wq.shape[1], rows_reason=reason,
                      columns_reason=f" like Wq (queries and keys are compared, {Wq.shape[1]} numbers)")
    Wv = check_matrix(Wv, "Wv", rows=d, rows_reason=reason)
    Wo = check_matrix(Wo, "Wo", rows=Wv.shape[1], rows_reason=f" to match Wv's {Wv.shape[1]} columns")
    heads = check_positive_int(heads, "heads")
    for name, width in (("Wq", Wq.shape[1]), ("Wv", Wv.shape[1])):
        if width % heads:
            raise ValueError(f"heads should divide {name}'s width {width} into equal slices, "
                             f"got heads={heads}")
    return Wq, Wk, Wv, Wo, heads


@dataclass
class KVCache:
    """The keys and values of every token one attention layer has read so far (the KV cache).

    keys, values: (..., heads, n, size) for the n tokens so far, the keys already turned by the
    attention's positions function at their own positions; None before the first token. Each call
    of ``attention`` with this cache appends its tokens' keys and values: a text of 256 tokens
    through one layer of 4 heads of 24 leaves keys and values of shape (4, 256, 24) each, 2 × 4 ×
    256 × 24 = 49,152 numbers, 196,608 bytes in float32.
    """
    keys: np.ndarray | None = None
    values: np.ndarray | None = None

    @property
    def length(self):
        """How many tokens the cache holds (0 when empty)."""
        return 0 if self.keys is None else self.keys.shape[-2]

    @property
    def nbytes(self):
        """The memory the cached keys and values take, in bytes."""
        return 0 if self.keys is None else self.keys.nbytes + self.values.nbytes

    def append(self, keys, values):
        """Add new tokens' keys and values, (..., heads, new, size) each; return every token's,
        (..., heads, n + new, size) each."""
        if self.keys is not None:
            if keys.shape[:-2] != self.keys.shape[:-2] or keys.shape[-1] != self.keys.shape[-1]:
                raise ValueError(f"the cache holds keys of shape {self.keys.shape} (..., heads, n, size): new "
                                 f"keys should differ only in n, got shape {keys.shape}")
            keys = np.concatenate([self.keys, keys], axis=-2)
            values = np.concatenate([self.values, values], axis=-2)
        self.keys, self.values = keys, values
        return keys, values


def attention(x, Wq, Wk, Wv, Wo, heads=1, causal=True, positions=None, return_weights=False,
              causal_weights=causal_weights, cache=None):
    """Multi-head self-attention of x.

    x:  (length, d) or (batch, length, d).
    Wq, Wk: (d, d_attn); Wv: (d, d_value); Wo: (d_value, d_out). heads must divide d_attn and
    d_value; head h uses columns h·size ... (h+1)·size - 1 of each projection.
    causal: if True, position i only looks at positions j <= i.
    positions: None, or a function applied to each head's queries and keys, shape
    (..., heads, length, size), e.g. ``rope``.
    causal_weights: the function from the scores (..., heads, length, length) to the weights
    when causal is True: ``causal_weights`` above, or another with the same contract (the
    learner's own, from notebook 04's exercise). Without the mask the weights are a plain softmax.
    Returns (..., length, d_out), and with return_weights=True also the attention weights,
    shape (..., heads, length, length), each row summing to 1.
    """
    x = as_float_array(x, "x")
    if x.ndim not in (2, 3):
        raise ValueError(f"x should have shape (length, d) or (batch, length, d), got shape {x.shape}")
    Wq, Wk, Wv, Wo, heads = _check_projections(x.shape[-1], Wq, Wk, Wv, Wo, heads)
    queries, keys, values = (_split_heads(x @ W, heads) for W in (Wq, Wk, Wv))   # (..., heads, length, size)
    if positions is not None:
        turn = positions if cache is None else partial(positions, offset=cache.length)
        queries, keys = turn(queries), turn(keys)
    if cache is not None:
        keys, values = cache.append(keys, values)                       # (..., heads, past + length, size)
    scores = (queries / math.sqrt(queries.shape[-1])) @ np.swapaxes(keys, -1, -2)   # (..., heads, length, keys)
    weigh = causal_weights if causal else softmax
    weights = as_float_array(weigh(scores), "the attention weights")    # (..., heads, length, keys)
    if weights.shape != scores.shape:
        raise ValueError(f"{getattr(weigh, '__name__', 'causal_weights')} should return one weight per score, "
                         f"shape {scores.shape}, got shape {weights.shape}")
    out = _join_heads(weights @ values) @ Wo                            # (..., length, d_out)
    return (out, weights) if return_weights else out
