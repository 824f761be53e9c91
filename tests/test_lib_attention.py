"""lib.attention against torch's softmax, scaled_dot_product_attention (per head, non-square
projections too) and nn.MultiheadAttention, and the checks."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lib.attention import attention, causal_mask, causal_weights, softmax
from lib.positional import rope

rng = np.random.default_rng(21)


def test_softmax_matches_torch_and_is_stable():
    x = rng.normal(0, 5, (3, 4, 7))
    for axis in (-1, 0, 1):
        assert np.allclose(softmax(x, axis=axis), torch.softmax(torch.tensor(x), dim=axis).numpy(),
                           atol=1e-6, rtol=0)
    assert np.allclose(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    assert np.allclose(softmax(np.array([0.0, -np.inf, 0.0])), [0.5, 0.0, 0.5])


def test_the_causal_mask_is_made_once_per_length_and_cannot_be_changed():
    assert causal_mask(5) is causal_mask(5)
    with pytest.raises(ValueError, match="read-only"):
        causal_mask(5)[0, 4] = True


def test_softmax_and_causal_weights_leave_their_scores_as_they_were():
    scores = rng.normal(0, 3, (2, 5, 5))
    before = scores.copy()
    softmax(scores)
    causal_weights(scores)
    assert np.array_equal(scores, before)


def test_float32_in_gives_float32_out_with_the_same_numbers():
    x, (Wq, Wk, Wv, Wo) = rng.normal(size=(6, 8)), rng.normal(0, 0.4, (4, 8, 8))
    single = [a.astype(np.float32) for a in (x, Wq, Wk, Wv, Wo)]
    pairs = [(softmax(single[0]), softmax(x)),
             (causal_weights(single[0][:, :6]), causal_weights(x[:, :6])),
             (attention(*single, heads=2, positions=rope), attention(x, Wq, Wk, Wv, Wo, heads=2, positions=rope))]
    for ours, exact in pairs:
        assert ours.dtype == np.float32
        assert np.allclose(ours, exact, atol=1e-5, rtol=1e-5)


def test_causal_mask():
    mask = causal_mask(4)
    assert mask.dtype == bool and mask.shape == (4, 4)
    assert mask[2, 2] and mask[2, 0] and not mask[2, 3]
    assert (mask.sum(axis=1) == np.arange(1, 5)).all()          # token i sees i + 1 tokens


def test_a_rectangular_mask_lets_the_last_queries_read_every_earlier_key():
    """New queries after a cache: query i sits at position i + keys - length of the text."""
    assert causal_mask(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(1, 5).all()                                # one new token reads the whole text
    assert causal_mask(3, 3) is causal_mask(3)                    # keys=length is the square
    with pytest.raises(ValueError, match="keys should be at least length = 3"):
        causal_mask(3, 2)


def test_the_last_rows_of_a_square_are_the_weights_of_new_queries_after_a_cache():
    scores = rng.normal(size=(2, 6, 6))
    full = causal_weights(scores)
    for new in (1, 2, 6):
        assert np.allclose(causal_weights(scores[..., -new:, :]), full[..., -new:, :])


@pytest.mark.parametrize("causal", [False, True])
def test_one_head_with_identity_projections_matches_scaled_dot_product_attention(causal):
    x = rng.normal(size=(2, 6, 8))
    eye = np.eye(8)
    t = torch.tensor(x)
    expected = F.scaled_dot_product_attention(t, t, t, is_causal=causal).numpy()
    assert np.allclose(attention(x, eye, eye, eye, eye, causal=causal), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
def test_heads_match_scaled_dot_product_attention_on_projected_slices(causal):
    x = rng.normal(size=(5, 12))
    Wq, Wk, Wv, Wo = (rng.normal(size=(12, 12)) for _ in range(4))
    heads, size = 3, 4
    split = lambda a: torch.tensor(a).reshape(5, heads, size).transpose(0, 1)     # (heads, 5, size)
    per_head = F.scaled_dot_product_attention(split(x @ Wq), split(x @ Wk), split(x @ Wv), is_causal=causal)
    expected = per_head.transpose(0, 1).reshape(5, 12).numpy() @ Wo
    assert np.allclose(attention(x, Wq, Wk, Wv, Wo, heads=heads, causal=causal), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("heads, causal", [(1, False), (4, False), (4, True), (2, True)])
def test_matches_nn_multihead_attention(heads, causal):
    d, length = 16, 7
    torch.manual_seed(heads)
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True, dtype=torch.float64)
    x = rng.normal(size=(3, length, d))
    mask = torch.triu(torch.ones(length, length, dtype=torch.bool), 1) if causal else None   # True = blocked
    expected, expected_weights = mha(*(torch.tensor(x),) * 3, attn_mask=mask, need_weights=True,
                                     average_attn_weights=False)
    w = mha.in_proj_weight.detach().numpy()                      # (3d, d): rows of Wq, Wk, Wv stacked
    Wq, Wk, Wv = w[:d].T, w[d:2 * d].T, w[2 * d:].T
    Wo = mha.out_proj.weight.detach().numpy().T
    out, weights = attention(x, Wq, Wk, Wv, Wo, heads=heads, causal=causal, return_weights=True)
    assert np.allclose(out, expected.detach().numpy(), atol=1e-6, rtol=0)
    assert weights.shape == (3, heads, length, length)
    assert np.allclose(weights, expected_weights.detach().numpy(), atol=1e-6, rtol=0)


def test_positions_are_applied_to_each_heads_queries_and_keys():
    x = rng.normal(size=(6, 8))
    Wq, Wk, Wv, Wo = (rng.normal(size=(8, 8)) for _ in range(4))
    _, weights = attention(x, Wq, Wk, Wv, Wo, heads=2, positions=rope, return_weights=True)
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        q, k = rope((x @ Wq)[:, cols]), rope((x @ Wk)[:, cols])
        scores = np.where(causal_mask(6), q @ k.T / 2.0, -np.inf)
        assert np.allclose(weights[h], softmax(scores))


def test_without_positions_a_shuffle_only_moves_the_rows():
    x = rng.normal(size=(3, 4))
    Wq, Wk, Wv, Wo = (rng.normal(size=(4, 4)) for _ in range(4))
    order = [2, 0, 1]
    plain = attention(x, Wq, Wk, Wv, Wo, causal=False)
    assert np.allclose(attention(x[order], Wq, Wk, Wv, Wo, causal=False), plain[order])
    turned = attention(x, Wq, Wk, Wv, Wo, causal=False, positions=rope)
    assert not np.allclose(attention(x[order], Wq, Wk, Wv, Wo, causal=False, positions=rope), turned[order])


W = np.ones((4, 4))


@pytest.mark.parametrize("call, expected", [
    (lambda: attention(np.ones((3, 5)), W, W, W, W), r"Wq should have 5 rows to match x's last axis"),
    (lambda: attention(np.ones((3, 4)), W, np.ones((4, 2)), W, W), "Wk should have 4 columns like Wq"),
    (lambda: attention(np.ones((3, 4)), W, W, np.ones((4, 2)), W), "Wo should have 2 rows to match Wv's 2 columns"),
    (lambda: attention(np.ones((3, 4)), W, W, W, W, heads=3),
     "heads should divide Wq's width 4 into equal slices, got heads=3"),
    (lambda: attention(np.ones(4), W, W, W, W), r"x should have shape \(length, d\) or \(batch, length, d\)"),
    (lambda: attention(np.ones((3, 4)), W, W, W, W, heads=0), "heads should be a whole number of at least 1"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


def test_causal_weights_hook_replaces_the_mask_and_softmax():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 5, 8))
    Wq, Wk, Wv, Wo = (rng.normal(size=(8, 8)) for _ in range(4))

    def masked_softmax(scores):
        return softmax(np.where(causal_mask(scores.shape[-1]), scores, -np.inf))

    expected = attention(x, Wq, Wk, Wv, Wo, heads=2)
    np.testing.assert_allclose(attention(x, Wq, Wk, Wv, Wo, heads=2, causal_weights=masked_softmax),
                               expected, rtol=1e-12, atol=1e-12)
    uniform = attention(x, Wq, Wk, Wv, Wo, heads=2, causal_weights=lambda s: np.full(s.shape, 1 / s.shape[-1]))
    assert not np.allclose(uniform, expected)
    with pytest.raises(ValueError, match=r"one weight per score, shape \(2, 2, 5, 5\)"):
        attention(x, Wq, Wk, Wv, Wo, heads=2, causal_weights=lambda s: s[..., :1])
    # Without the causal mask the hook is not used.
    np.testing.assert_allclose(attention(x, Wq, Wk, Wv, Wo, heads=2, causal=False, causal_weights=masked_softmax),
                               attention(x, Wq, Wk, Wv, Wo, heads=2, causal=False))


# ---------------------------------------------------------------- non-square projections, lists, edges

@pytest.mark.parametrize("causal", [False, True])
def test_non_square_heads_match_scaled_dot_product_attention_per_head_with_a_batch(causal):
    batch, length, d, d_attn, d_v, d_out, heads = 2, 5, 10, 6, 9, 7, 3
    x = rng.normal(size=(batch, length, d))
    Wq, Wk = rng.normal(size=(d, d_attn)), rng.normal(size=(d, d_attn))
    Wv, Wo = rng.normal(size=(d, d_v)), rng.normal(size=(d_v, d_out))
    out, weights = attention(x, Wq, Wk, Wv, Wo, heads=heads, causal=causal, return_weights=True)
    assert out.shape == (batch, length, d_out) and weights.shape == (batch, heads, length, length)
    t = torch.tensor(x)
    per_head = []
    for h in range(heads):
        q = t @ torch.tensor(Wq[:, 2 * h:2 * h + 2])                       # head h: its own slice of columns
        k = t @ torch.tensor(Wk[:, 2 * h:2 * h + 2])
        v = t @ torch.tensor(Wv[:, 3 * h:3 * h + 3])
        per_head.append(F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        scores = q @ k.transpose(-1, -2) / np.sqrt(2)
        if causal:
            scores = scores.masked_fill(~torch.tril(torch.ones(length, length, dtype=torch.bool)), -torch.inf)
        assert np.allclose(weights[:, h], torch.softmax(scores, -1).numpy(), atol=1e-9)
    expected = torch.cat(per_head, dim=-1).numpy() @ Wo
    assert np.allclose(out, expected, atol=1e-9, rtol=0)


def test_softmax_subtracts_each_rows_own_largest_number():
    x = np.array([[1000.0, 999.0], [-1000.0, -999.0]])
    expected = [[1 / (1 + np.e ** -1), 1 / (1 + np.e)], [1 / (1 + np.e), 1 / (1 + np.e ** -1)]]
    assert np.allclose(softmax(x), expected)
    assert np.allclose(softmax(x.T, axis=0), np.transpose(expected))
    assert np.allclose(softmax([1, 1]), [0.5, 0.5])                          # a list is numbers too


def test_causal_weights_docstring_example():
    assert np.allclose(causal_weights([[1, 5], [0, 0]]), [[1, 0], [0.5, 0.5]])
    scores = rng.normal(size=(2, 3, 4, 4))
    weights = causal_weights(scores)
    assert np.all(weights[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)
    assert np.allclose(weights.sum(-1), 1)


def test_lists_of_tokens_and_weights_are_numbers_too():
    x = rng.normal(size=(3, 4))
    Wq, Wk, Wv, Wo = (rng.normal(size=(4, 4)) for _ in range(4))
    assert np.allclose(attention(x.tolist(), Wq.tolist(), Wk, Wv, Wo), attention(x, Wq, Wk, Wv, Wo))


@pytest.mark.parametrize("call, expected", [
    (lambda: attention(np.ones((3, 4)), W, np.ones((5, 4)), W, W), r"Wk should have 4 rows to match x's last axis \(4"),
    (lambda: attention(np.ones((3, 4)), W, W, np.ones((5, 4)), W), r"Wv should have 4 rows to match x's last axis \(4"),
    (lambda: attention(np.ones((3, 4)), np.ones((4, 6)), np.ones((4, 6)), np.ones((4, 4)), W, heads=3),
     "heads should divide Wv's width 4 into equal slices, got heads=3"),
    (lambda: attention(np.ones((3, 4)), np.ones((4, 6)), np.ones((4, 6)), np.ones((4, 3)), np.ones((3, 4)), heads=2),
     "heads should divide Wv's width 3 into equal slices, got heads=2"),
    (lambda: attention(np.ones((3, 4)), np.ones((4, 6)), np.ones((4, 4)), W, W), r"Wk should have 6 columns like Wq"),
    (lambda: causal_mask(0), "length should be a whole number of at least 1"),
    (lambda: causal_weights([1.0, 2.0]), r"scores should have shape \(\.\.\., queries, keys\)"),
    (lambda: causal_weights(np.ones((3, 2))), "keys should be at least length = 3"),
    (lambda: softmax("abc"), "x should be an array of numbers"),
])
def test_more_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


# ---------------------------------------------------------------- with a KV cache

def test_attention_with_a_cache_equals_attention_over_the_whole_text():
    """The text in three parts (5, 1 and 3 tokens), each reading the cache of the parts before:
    the same outputs as the whole text at once, with RoPE at each token's own position, for one
    text and a batch of two; the weights have a row per new token and a column per token so far."""
    from lib.attention import KVCache
    Wq, Wk, Wv, Wo = rng.normal(0, 0.4, (4, 8, 8))
    for x in (rng.normal(size=(9, 8)), rng.normal(size=(2, 9, 8))):
        whole, whole_weights = attention(x, Wq, Wk, Wv, Wo, heads=2, positions=rope, return_weights=True)
        cache, outs = KVCache(), []
        for start, stop in ((0, 5), (5, 6), (6, 9)):
            out, weights = attention(x[..., start:stop, :], Wq, Wk, Wv, Wo, heads=2, positions=rope,
                                     return_weights=True, cache=cache)
            assert weights.shape == x.shape[:-2] + (2, stop - start, stop) and cache.length == stop
            assert np.allclose(weights, whole_weights[..., start:stop, :stop], atol=1e-12)
            outs.append(out)
        assert np.allclose(np.concatenate(outs, axis=-2), whole, atol=1e-12)
        assert cache.keys.shape == cache.values.shape == x.shape[:-2] + (2, 9, 4)
        assert cache.nbytes == 2 * cache.keys.size * 8
        # the cache holds the keys as turned at their own positions, and the plain values
        keys = rope(np.swapaxes((x @ Wk).reshape(*x.shape[:-1], 2, 4), -3, -2))
        assert np.allclose(cache.keys, keys, atol=1e-12)
        assert np.allclose(cache.values, np.swapaxes((x @ Wv).reshape(*x.shape[:-1], 2, 4), -3, -2), atol=1e-12)


def test_an_empty_cache_holds_nothing_and_positions_get_the_cache_s_length_as_offset():
    from lib.attention import KVCache
    cache = KVCache()
    assert cache.length == 0 and cache.nbytes == 0 and cache.keys is None
    offsets = []

    def positions(q, offset=None):
        offsets.append(offset)
        return q

    x, (Wq, Wk, Wv, Wo) = rng.normal(size=(4, 6)), rng.normal(0, 0.4, (4, 6, 6))
    attention(x[:3], Wq, Wk, Wv, Wo, positions=positions, cache=cache)
    attention(x[3:], Wq, Wk, Wv, Wo, positions=positions, cache=cache)
    attention(x, Wq, Wk, Wv, Wo, positions=positions)
    assert offsets == [0, 0, 3, 3, None, None]            # queries and keys alike; no cache, no offset
    keys, values = cache.append(np.ones((1, 2, 6)), np.zeros((1, 2, 6)))
    assert keys.shape == values.shape == (1, 6, 6) and cache.length == 6
    assert np.array_equal(keys[:, 4:], np.ones((1, 2, 6))) and np.array_equal(cache.keys, keys)


def test_without_the_mask_a_cache_s_queries_read_every_key():
    from lib.attention import KVCache
    x, (Wq, Wk, Wv, Wo) = rng.normal(size=(5, 6)), rng.normal(0, 0.4, (4, 6, 6))
    cache = KVCache()
    attention(x[:4], Wq, Wk, Wv, Wo, cache=cache, causal=False)
    _out, weights = attention(x[4:], Wq, Wk, Wv, Wo, cache=cache, causal=False, return_weights=True)
    _whole, expected = attention(x, Wq, Wk, Wv, Wo, causal=False, return_weights=True)
    assert np.allclose(weights[0], expected[0, 4:], atol=1e-12)
