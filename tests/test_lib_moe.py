"""lib.moe: top-k routing, the curriculum's router shares, and the mixture's output."""

import numpy as np
import pytest

from lib.ffn import ffn
from lib.moe import mixture_of_experts, route, tokens_per_expert

SCORES = [2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28]


def test_curriculum_router_shares():
    routing = route(SCORES, top_k=2)
    assert list(routing.experts) == [0, 2]                     # the course's experts 1 and 3
    assert np.allclose(np.round(routing.shares, 3), [0.875, 0.125])


def test_route_keeps_the_best_scores_and_softmaxes_over_them():
    scores = np.random.default_rng(3).normal(size=(50, 8))
    routing = route(scores, top_k=3)
    assert routing.experts.shape == routing.shares.shape == (50, 3)
    best = np.sort(scores, axis=1)[:, ::-1][:, :3]
    assert np.allclose(np.take_along_axis(scores, routing.experts, 1), best)
    expected = np.exp(best) / np.exp(best).sum(1, keepdims=True)
    assert np.allclose(routing.shares, expected)
    assert np.allclose(route(scores, top_k=1).shares, 1.0)


def test_mixture_is_the_weighted_sum_of_the_chosen_experts():
    rng = np.random.default_rng(5)
    d, n_experts = 6, 4
    weights = [(rng.normal(size=(d, 12)), rng.normal(size=(12, d))) for _ in range(n_experts)]
    experts = [lambda h, W=W: ffn(h, W[0], None, W[1], None, activation="gelu") for W in weights]
    x, router = rng.normal(size=(2, 5, d)), rng.normal(size=(d, n_experts))
    result = mixture_of_experts(x, router, experts, top_k=2)
    assert result.output.shape == x.shape
    assert result.experts.shape == result.shares.shape == (2, 5, 2)
    assert result.scores.shape == (2, 5, n_experts)
    b, i = 1, 3
    token = x[b, i]
    expected = sum(share * experts[e](token[None])[0]
                   for e, share in zip(result.experts[b, i], result.shares[b, i]))
    assert np.allclose(result.output[b, i], expected)
    full = mixture_of_experts(x, router, experts, top_k=n_experts)        # all experts: dense softmax mix
    probabilities = np.exp(result.scores) / np.exp(result.scores).sum(-1, keepdims=True)
    dense = sum(probabilities[..., e:e + 1] * experts[e](x.reshape(-1, d)).reshape(x.shape)
                for e in range(n_experts))
    assert np.allclose(full.output, dense)


def test_tokens_per_expert_counts_every_choice():
    routing = route(np.random.default_rng(9).normal(size=(4096, 8)), top_k=2)
    counts = tokens_per_expert(routing.experts, 8)
    assert counts.shape == (8,) and counts.sum() == 4096 * 2        # fair share 1,024 each


@pytest.mark.parametrize("call, expected", [
    (lambda: route(SCORES, top_k=9), "top_k should be at most the number of experts"),
    (lambda: route(np.ones((2, 3, 4))), r"scores should have shape \(tokens, experts\)"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((5, 2)), [abs, abs]), "W_router should have 4 rows"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((4, 3)), [abs, abs]), "experts should hold 3 functions"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()
