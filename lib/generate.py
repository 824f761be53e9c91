"""Text from the trained model, one token at a time: greedy and sampled continuations, the KV cache.

The model scores every possible next token (a row of logits); a continuation appends one token
and asks again. Greedy decoding takes the most probable token every time. Sampling draws one
from the model's probabilities after three optional changes: a temperature T (divide the
logits by T: below 1 sharpens, above 1 flattens), top-k (keep the k most probable tokens) and
top-p (keep the fewest most probable tokens whose probabilities add up to p). The draws come
from ``np.random.default_rng(seed)``, so the same seed gives the same text.

Rerunning the whole text for every new token repeats the work on every token before it. With a
KV cache each block keeps the keys and values of the tokens it has read
(``lib.attention.KVCache``), and a new token computes only its own query, key and value; its
query reads every cached key. It runs the very same ``lib.block.block`` as ``lib.model.forward``,
with a cache. The work per new token then grows with the length n of the text (its scores against
n keys), not with n² (``decoding_work``); the price is memory, ``kv_cache_bytes``.

    from lib import generate, model
    prompt = model.encode("copy b d a |")
    out = generate.greedy(prompt, 4)
    model.decode(out.ids)                  # "b d a ."
    out.probabilities                      # the model's probability of each chosen token
    generate.generate(prompt, 4, temperature=0.8, top_k=5, seed=1)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import model
from .attention import KVCache
from .params import block_parameters, kv_cache_per_token


# ---------------------------------------------------------------- the KV cache

def new_caches(layers=None):
    """One empty ``KVCache`` per block of the trained model (or ``layers`` of them)."""
    return [KVCache() for _ in range(layers or model.config().layers)]


def cached_forward(ids, caches, **details):
    """The logits (new, vocab) of the new tokens ``ids`` (new,) of a text whose earlier tokens
    the ``caches`` (one ``KVCache`` per block) hold; appends the new tokens' keys and values.

    Each block is ``lib.model.blocks(**details)[i]``, the block of ``lib.model.forward``, given
    its cache: the new tokens are at positions past ... past + new - 1 (RoPE turns them there)
    and read the keys of all past + new tokens. So the rows equal the last rows of
    ``lib.model.forward`` on the whole text, up to float32 rounding. ``details`` as in ``forward``.
    """
    ids = _token_ids(ids, "ids")
    blocks = model.blocks(**details)
    if len(caches) != len(blocks):
        raise ValueError(f"caches should hold one KVCache per block ({len(blocks)}), got {len(caches)}")
    x = model.embed(ids)                                           # (new, d)
    for block, cache in zip(blocks, caches):
        x = block(x, cache=cache)
    return model.output_logits(x, **{k: details[k] for k in ("norm", "eps") if k in details})


def cache_bytes(caches):
    """The memory the caches take: every cached key and value, in bytes."""
    return sum(cache.nbytes for cache in caches)


def kv_cache_bytes(tokens, bytes_per_number=4, config=None):
    """The KV cache's memory for a text of ``tokens`` tokens by ``lib.params.kv_cache_per_token``
    (the trained model's configuration by default): its numbers per token × tokens × bytes.
    The trained model: 4 blocks × 2 × 96 = 768 numbers a token, 3,072 bytes in float32; 256
    tokens, 786,432 bytes (0.75 MiB). ``cache_bytes`` of the caches after 256 tokens is the same."""
    config = config or model.config()
    return kv_cache_per_token(config) * int(tokens) * int(bytes_per_number)


class DecodingWork(NamedTuple):
    """Multiply-adds of the matrix products to get the next token's logits, by part.

    projections: Wq, Wk, Wv, Wo in every block; attention: scores (queries · keys) and the
    weighted mean of values in every block; ffn: every block's FFN (and router); output: the
    output layer. ``total`` adds them; a floating-point count is twice the multiply-adds."""
    projections: int
    attention: int
    ffn: int
    output: int

    @property
    def total(self):
        return self.projections + self.attention + self.ffn + self.output


def decoding_work(n, cached=True, config=None):
    """The work (a ``DecodingWork``) for the logits after the n-th token of a text.

    cached=True: the new token alone, its key and value added to a cache of n - 1 tokens: each
    block projects one token (4·d² for the trained model), scores it against n keys and averages
    n values (2·n·d), runs the FFN once (3·d·d_ff gated); then the output layer (vocab·d).
    cached=False: the whole text of n tokens again, as ``lib.model.forward`` does: n times the
    projections, FFN and output layer, and every n × n score and weight (2·n²·d per block,
    the masked half included).

    The trained model (d 96, d_ff 256, 4 blocks, vocabulary 55): cached, 447,648 + 768·n
    multiply-adds (n = 16: 459,936; n = 256: 644,256); rerun, n · 447,648 + 768·n²
    (n = 16: 7,358,976; n = 256: 164,929,536): exactly n times the cached step, since the rerun
    does for each of the n tokens what the cached step does for the last one.
    """
    c = config or model.config()
    n = int(n)
    if n < 1:
        raise ValueError(f"n should be a whole number of at least 1 (the text's length), got {n}")
    count = block_parameters(c)
    tokens = 1 if cached else n
    return DecodingWork(projections=c.layers * tokens * count.attention,
                        attention=c.layers * tokens * 2 * n * c.d_model,
                        ffn=c.layers * tokens * (count.ffn_active + count.router),
                        output=tokens * c.vocab * c.d_model)


# ---------------------------------------------------------------- choosing the next token

def next_token_distribution(logits, temperature=1.0, top_k=None, top_p=None):
    """The probabilities (vocab,) the next token is drawn from, given one row of logits (vocab,).

    In order: temperature (softmax of logits / temperature; 0 puts all the probability on the
    most probable token, the first of ties: greedy), top_k (keep the k most probable tokens,
    and any tied with the k-th), top_p (keep, from the most probable down, the fewest tokens
    whose probabilities add up to at least p). What is kept is rescaled to sum to 1.
    Logits [2, 1, 0, -1] at temperature 1: [0.644, 0.237, 0.087, 0.032]; at 0.5: [0.865, 0.117,
    0.016, 0.002]; with top_k=2: [0.731, 0.269, 0, 0]; with top_p=0.85: [0.731, 0.269, 0, 0]
    (0.644 alone falls short of 0.85; with the next, 0.881 reaches it).
    """
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1 or not logits.size:
        raise ValueError(f"logits should be one row of numbers, shape (vocab,), got shape {logits.shape}")
    temperature = _number(temperature, "temperature", 0.0, np.inf)
    if temperature == 0:
        return np.eye(logits.size)[int(np.argmax(logits))]
    p = model.probabilities(logits / temperature)
    if top_k is not None:
        k = _whole(top_k, "top_k", logits.size)
        p = np.where(p < np.sort(p)[-k], 0.0, p)
    if top_p is not None:
        top_p = _number(top_p, "top_p", 0.0, 1.0, low_open=True)
        order = np.argsort(-p, kind="stable")                  # most probable first
        before = np.cumsum(p[order]) - p[order]                 # what the more probable ones add up to
        kept = np.zeros(p.size, dtype=bool)
        kept[order] = before < top_p * p.sum()
        p = np.where(kept, p, 0.0)
    return p / p.sum()


def pick(distribution, u):
    """The token a uniform number u in [0, 1) picks from ``distribution`` (vocab,): the first
    whose cumulative probability passes u. [0.5, 0.3, 0.2] with u = 0.6 picks token 1."""
    cumulative = np.cumsum(distribution)
    return min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), len(cumulative) - 1)


class Continuation(NamedTuple):
    """What a continuation chose, one row per new token (steps of them, fewer after ``stop``).

    ids: (steps,) the tokens chosen, in order (int64).
    probabilities: (steps,) the model's probability of each chosen token (the softmax of its
    logits, before any temperature, top-k or top-p).
    chosen_from: (steps,) its probability in the distribution it was drawn from (1 for greedy).
    logits: (steps, vocab) the model's logits for each new token (float32).
    distributions: (steps, vocab) the distribution each was drawn from."""
    ids: np.ndarray
    probabilities: np.ndarray
    chosen_from: np.ndarray
    logits: np.ndarray
    distributions: np.ndarray


def generate(prompt, steps, *, temperature=1.0, top_k=None, top_p=None, seed=0, stop=None, cache=True,
             **details):
    """Continue ``prompt`` (token ids, at least one) by up to ``steps`` tokens; returns a Continuation.

    Each token is drawn from ``next_token_distribution(logits, temperature, top_k, top_p)`` with
    a uniform number from ``np.random.default_rng(seed)`` (``pick``): the same seed, the same
    text. temperature=0 is greedy (``greedy``). stop: a token id (or word) after which to end.
    cache=True runs each new token alone with a KV cache (``cached_forward``); False runs the
    whole text again each time (``lib.model.forward``): the same tokens, far more work. The text
    may not outgrow the model's context (256 tokens). ``details`` as in ``lib.model.forward``.
    """
    prompt, context = _token_ids(prompt, "prompt"), model.config().context
    if len(prompt) > context:
        raise ValueError(f"prompt should be at most the model's context, {context} tokens, got {len(prompt)}")
    steps = _whole(steps, "steps", context - len(prompt), low=0)
    stop = model.encode(stop)[0] if isinstance(stop, str) else stop
    rng = np.random.default_rng(seed)
    caches = new_caches() if cache else None
    logits = (cached_forward(prompt, caches, **details) if cache else model.forward(prompt, **details))[-1]
    rows, text = [], list(prompt)
    for step in range(steps):
        distribution = next_token_distribution(logits, temperature, top_k, top_p)
        token = pick(distribution, rng.random())
        rows.append((token, logits, distribution))
        text.append(token)
        if token == stop or step == steps - 1:
            break
        logits = (cached_forward([token], caches, **details) if cache else model.forward(text, **details))[-1]
    return _continuation(rows, len(model.vocab()))


def greedy(prompt, steps, *, stop=None, cache=True, **details):
    """The greedy continuation of ``prompt``: the most probable token every time (``generate``
    at temperature 0). "copy b d a |" continues "b d a .", each with probability above 0.99."""
    return generate(prompt, steps, temperature=0.0, stop=stop, cache=cache, **details)


def _continuation(rows, vocab):
    """The Continuation of [(token, logits, distribution)] rows (none when steps is 0)."""
    ids = np.array([token for token, _l, _d in rows], dtype=np.int64)
    logits = np.array([row for _t, row, _d in rows], dtype=np.float32).reshape(len(rows), vocab)
    distributions = np.array([d for _t, _l, d in rows], dtype=np.float64).reshape(len(rows), vocab)
    at = np.arange(len(rows))
    probabilities = model.probabilities(logits.astype(np.float64))[at, ids] if len(rows) else np.zeros(0)
    return Continuation(ids, probabilities, distributions[at, ids], logits, distributions)


# ---------------------------------------------------------------- checks

def _token_ids(ids, name):
    """ids as a 1-D int64 array of token ids of the trained model's vocabulary, at least one."""
    ids = np.asarray(ids)
    vocab = len(model.vocab())
    if ids.ndim != 1 or not ids.size or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{name} should be token ids, a list of whole numbers (lib.model.encode of a text), "
                         f"at least one, got {ids.dtype} of shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= vocab:
        raise ValueError(f"{name} should hold token ids from 0 to {vocab - 1}, got {int(ids.min())} to "
                         f"{int(ids.max())}")
    return ids.astype(np.int64)


def _whole(value, name, high, low=1):
    """A whole number from low to high, or a ValueError naming them."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} should be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _number(value, name, low, high, low_open=False):
    """A number from low to high (above low if low_open), or a ValueError naming them."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not (low < value if low_open else low <= value) or not value <= high:
        bounds = f"above {low:g}" if low_open else f"at least {low:g}"
        raise ValueError(f"{name} should be a number {bounds}{'' if high == np.inf else f' and at most {high:g}'}, "
                         f"got {value!r}")
    return float(value)
