"""Exercises of notebook 06, "The block at work".

Its questions are in :mod:`exercises.definitions.questions.block_at_work`; the answers only the
tests try are in tests/data/answers/06_block_at_work.toml."""

from __future__ import annotations

import numpy as np

from lib.attention import causal_mask as _causal_mask, softmax as _softmax

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.questions import block_at_work as questions

NOTEBOOK = "06_block_at_work"


# ---------------------------------------------------------------- attention, one token at a time with a cache

def _cached_attention_reference(q, k, v):
    """Causal attention read whole: every query against every key, the future masked."""
    n, d = q.shape
    scores = np.where(_causal_mask(n, n), q @ k.T / np.sqrt(d), -np.inf)
    return _softmax(scores, axis=-1) @ v


CACHED_EXAMPLE = (np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),        # q
                  np.array([[0.5, 1.0], [2.0, -1.0], [0.0, 1.5]]),       # k
                  np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))        # v

CACHED_CONTRACT = Contract(
    args={"q": "the queries, shape (n, d): one row per token of the text, in order, n >= 1",
          "k": "the keys, shape (n, d), one row per token",
          "v": "the values, shape (n, d_v), one row per token"},
    returns="the outputs, shape (n, d_v): row t the weighted mean of the values of tokens 0 ... t, "
            "weighted by the softmax of token t's scores against their keys over sqrt(d)",
    ndims=(2,), dtypes=("float64", "float32"),
    edges={"one token": "a text of a single token: its output is its own value",
           "one number": "keys and queries of one number each (d = 1)",
           "wide values": "values wider than the keys (d_v > d)",
           "huge": "scores in the hundreds, far beyond what exp can hold",
           "large future": "a token whose largest score is against a later key"},
)


def _cached_fixed() -> list[Case]:
    rows = np.arange(1.0, 13.0)
    return [
        Case(tuple(a.copy() for a in CACHED_EXAMPLE), "the example", visible=True),
        Case((np.array([[0.7, -1.2, 0.4]]), np.array([[1.5, 0.3, -0.8]]), np.array([[2.0, -1.0, 0.5]])),
             "a text of a single token", covers=("one token",)),
        Case((np.array([[1.0], [2.0], [-1.0], [0.5]]), np.array([[0.5], [-1.0], [2.0], [1.5]]),
              np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [-1.0, 3.0]])),
             "4 tokens, keys and queries of one number", covers=("one number",)),
        Case((np.sin(rows).reshape(4, 3), np.cos(rows).reshape(4, 3), np.arange(20.0).reshape(4, 5) - 7.0),
             "4 tokens, values of 5 numbers for keys of 3", covers=("wide values",)),
        Case((np.array([[4.0, 0.0], [0.0, 4.0], [1.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [9.0, 9.0]]),
              np.array([[1.0, -1.0], [2.0, 0.5], [-3.0, 4.0]])),
             "a later key that would win every score", covers=("large future",)),
        Case((np.array([[30.0, -20.0], [-25.0, 30.0], [20.0, 20.0]]), np.array([[-20.0, 25.0], [30.0, -30.0],
                                                                                [25.0, 20.0]]),
              np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]])),
             "scores in the hundreds", covers=("huge",)),
        in_float32(Case((np.cos(np.arange(15.0)).reshape(5, 3), np.sin(np.arange(15.0)).reshape(5, 3) * 2.0,
                         np.arange(10.0).reshape(5, 2) * 0.5), "5 tokens")),
    ]


def _cached_case(rng) -> Case:
    n, d, dv = (int(x) for x in rng.integers(1, 7, size=3))
    scale = rng.uniform(0.5, 3.0)
    return Case((rng.normal(0, scale, (n, d)), rng.normal(0, scale, (n, d)), rng.normal(0, 1, (n, dv))),
                f"random queries, keys and values: {n} tokens, d = {d}, d_v = {dv}")


CACHED_ATTENTION = Exercise(
    id="cached-attention", notebook=NOTEBOOK, name="cached_attention",
    title="Attention one token at a time, with a KV cache",
    template='''def cached_attention(q, k, v):
    """Causal attention computed as a decoder generating text computes it: one token at a time,
    each new token's key and value appended to a cache. q, k: (n, d) and v: (n, d_v), one row per
    token, in order. Returns (n, d_v): row t is what token t's query reads from tokens 0 ... t."""
    K, V = k[:0], v[:0]                 # the caches of keys and values, empty: (0, d), (0, d_v)
    out = []
    for t in range(len(q)):
        K = ____                        # the cache with token t's key appended: (t + 1, d)
        V = ____                        # the same for its value: (t + 1, d_v)
        scores = ____                   # token t's query against every cached key, over sqrt(d): (t + 1,)
        weights = np.exp(scores - scores.max())
        out.append(weights / weights.sum() @ V)
    return np.array(out)
''',
    solution=["np.vstack([K, k[t]])", "np.vstack([V, v[t]])", "K @ q[t] / np.sqrt(q.shape[1])"],
    reference=_cached_attention_reference,
    contract=CACHED_CONTRACT,
    fixed=_cached_fixed,
    draw=three_of(_cached_case),
    hints=[
        "The cache holds one row per token read so far. Appending token t's key adds one row at the "
        "bottom: `np.vstack` stacks rows, and `k[t]` is the key of token t.",
        "Each score is token t's query dotted with one cached key: with the keys as the rows of `K`, "
        "`K @ q[t]` gives all t + 1 of them at once.",
        "Divide the scores by the square root of d, the number of numbers in a key (`q.shape[1]`), as "
        "attention read whole does, not by anything that grows with the text.",
    ],
    mistakes=[
        Mistake("every key at once", {0: "k", 1: "v"},
                "Your cache holds the keys and values of the WHOLE text from the first token on, so "
                "each token reads the tokens after it too: the future. The cache grows by one row per "
                "token: append row t of `k` to what the cache held."),
        Mistake("not scaled", {2: "K @ q[t]"},
                "Your scores are not divided by sqrt(d), so the weights come out sharper than attention's: "
                "divide by the square root of the number of numbers in a key."),
        Mistake("scaled by the text so far", {2: "K @ q[t] / np.sqrt(len(K))"},
                "You divided by the square root of the number of cached tokens, which grows with the text. "
                "The scale is sqrt(d), the number of numbers in a key: the same for every token."),
        Mistake("key as value", {1: "np.vstack([V, k[t]])"},
                "Your value cache holds the keys: the output is then a mean of keys. Append row t of `v` to "
                "the value cache."),
        Mistake("new key on top", {0: "np.vstack([k[t], K])"},
                "Your new key goes on top of the key cache while its value goes at the bottom of the value "
                "cache, so keys and values no longer pair up: row i of each must belong to the same token. "
                "Append both at the bottom."),
    ],
    rtol=1e-6, atol=1e-9,
)

DEFINITIONS = [CACHED_ATTENTION, *questions.QUESTIONS]
