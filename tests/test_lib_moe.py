"""lib.moe: top-k routing (its edges: huge scores, ties, the default k), the routing rules side by
side, the mixture's output with and without shared experts, the biased router and load
balancing, and the checks."""

import numpy as np
import pytest

from lib.ffn import ffn
from lib.moe import RULES, Balancing, balance_load, mixture_of_experts, route, route_with_bias, tokens_per_expert

SCORES = [2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28]


def softmax(kept):
    weights = np.exp(kept - kept.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------- route

def test_worked_router_shares():
    routing = route(SCORES, top_k=2)
    assert list(routing.experts) == [0, 2]                     # the course's experts 1 and 3
    assert np.allclose(np.round(routing.shares, 3), [0.875, 0.125])
    assert routing.scores.tolist() == SCORES


def test_route_keeps_the_best_scores_and_softmaxes_over_them():
    scores = np.random.default_rng(3).normal(size=(50, 8))
    routing = route(scores, top_k=3)
    assert routing.experts.shape == routing.shares.shape == (50, 3)
    best = np.sort(scores, axis=1)[:, ::-1][:, :3]
    assert np.array_equal(np.take_along_axis(scores, routing.experts, 1), best)
    assert np.allclose(routing.shares, softmax(best))
    assert np.allclose(route(scores, top_k=1).shares, 1.0)
    assert np.array_equal(route(scores).experts, routing.experts[:, :2])        # top_k = 2 by default


def test_one_token_of_scores_gives_one_row():
    one, many = route(SCORES), route(np.array([SCORES, SCORES]))
    assert one.experts.shape == one.shares.shape == (2,) and one.scores.shape == (8,)
    assert np.array_equal(one.experts, many.experts[1]) and np.array_equal(one.shares, many.shares[0])


def test_huge_scores_give_finite_shares():
    routing = route(np.array([[1000.0, 999.0, -5.0], [-800.0, -801.0, -900.0]]))
    assert np.allclose(routing.shares, [[1 / (1 + np.e ** -1), 1 / (1 + np.e)]] * 2)
    biased = route_with_bias([1000.0, 999.0, -5.0], np.zeros(3))
    assert np.allclose(biased.shares, routing.shares[0])


def test_ties_go_to_the_lower_numbered_expert():
    scores = np.round(np.random.default_rng(0).normal(size=(50, 40)))         # many equal scores
    routing = route(scores, top_k=3)
    for row, chosen in zip(scores, routing.experts):
        assert list(chosen) == sorted(range(40), key=lambda e: (-row[e], e))[:3]


# ---------------------------------------------------------------- the routing rules

def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_every_rule_keeps_the_same_experts_as_the_scores_rank_them():
    """Softmax and sigmoid both grow with the score, so no rule changes which experts are kept."""
    scores = np.random.default_rng(8).normal(0.0, 3.0, size=(500, 8))
    for k in (1, 2, 3, 8):
        experts = [route(scores, k, rule).experts for rule in RULES]
        assert all(np.array_equal(experts[0], other) for other in experts[1:])


def test_the_worked_token_under_each_rule():
    s = np.array(SCORES)
    everything = np.exp(s) / np.exp(s).sum()
    expected = {"topk_softmax": softmax(s[[0, 2]]), "softmax_topk": everything[[0, 2]],
                "sigmoid_topk": sigmoid(s[[0, 2]]) / sigmoid(s[[0, 2]]).sum()}
    for rule, shares in expected.items():
        routing = route(SCORES, 2, rule)
        assert list(routing.experts) == [0, 2] and np.allclose(routing.shares, shares)
    assert np.round(route(SCORES, 2, "softmax_topk").shares, 3).tolist() == [0.725, 0.103]
    assert np.round(route(SCORES, 2, "sigmoid_topk").shares, 3).tolist() == [0.597, 0.403]
    assert route(SCORES, 2).shares.tolist() == route(SCORES, 2, "topk_softmax").shares.tolist()   # the default


def test_the_kept_part_of_a_full_softmax_sums_below_one_and_renormalised_is_the_topk_softmax():
    scores = np.random.default_rng(4).normal(0.0, 2.0, size=(200, 8))
    for k in (1, 2, 7):
        kept = route(scores, k, "softmax_topk").shares
        assert np.all(kept.sum(axis=1) < 1)
        assert np.allclose(kept / kept.sum(axis=1, keepdims=True), route(scores, k).shares)
    assert np.allclose(route(scores, 8, "softmax_topk").shares.sum(axis=1), 1.0)   # every expert kept


def test_with_one_expert_kept_only_the_full_softmax_leaves_the_score_in_the_weight():
    """Top 1 then a softmax (or a normalised sigmoid) weighs every token's expert 1, whatever its
    scores; a softmax over all experts keeps the chosen expert's probability."""
    scores = np.random.default_rng(6).normal(0.0, 2.0, size=(300, 8))
    assert np.all(route(scores, 1).shares == 1.0) and np.all(route(scores, 1, "sigmoid_topk").shares == 1.0)
    probability = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    kept = route(scores, 1, "softmax_topk").shares[:, 0]
    assert np.allclose(kept, probability.max(axis=1)) and np.ptp(kept) > 0.5


def test_sigmoid_shares_are_finite_and_exact_for_huge_scores():
    routing = route(np.array([[800.0, 700.0, -900.0], [-800.0, -801.0, -900.0]]), 2, "sigmoid_topk")
    assert np.all(np.isfinite(routing.shares))
    assert np.allclose(routing.shares[0], [0.5, 0.5])
    assert np.allclose(routing.shares[1], [1 / (1 + np.exp(-1.0)), 1 / (1 + np.e)])   # e^-800 : e^-801
    full = route(np.array([1000.0, 999.0, -5.0]), 2, "softmax_topk")
    assert np.all(np.isfinite(full.shares)) and np.allclose(full.shares, softmax(np.array([1000.0, 999.0, -5.0]))[:2])


def test_a_full_softmax_shares_each_tokens_huge_scores_on_their_own():
    """Each token's softmax is shifted by its own largest score: tokens 1,000 apart in scale both
    get their shares, neither 0 / 0."""
    scores = np.array([[1000.0, 999.0, -5.0], [-1000.0, -1001.0, -1005.0]])
    routing = route(scores, 2, "softmax_topk")
    assert np.all(np.isfinite(routing.shares))
    assert np.allclose(routing.shares, [softmax(scores[0])[:2], softmax(scores[1])[:2]])


def test_route_with_bias_shares_by_each_rule_from_the_unbiased_scores():
    scores = np.random.default_rng(2).normal(size=(20, 8))
    bias = np.linspace(1.0, -1.0, 8)
    for rule in RULES:
        biased = route_with_bias(scores, bias, 3, rule)
        assert np.array_equal(biased.experts, route(scores + bias, 3).experts)
        kept = np.take_along_axis(scores, biased.experts, 1)
        want = {"topk_softmax": softmax(kept), "sigmoid_topk": sigmoid(kept) / sigmoid(kept).sum(axis=1, keepdims=True),
                "softmax_topk": np.take_along_axis(softmax(scores), biased.experts, 1)}[rule]
        assert np.allclose(biased.shares, want)
    assert np.array_equal(route_with_bias(scores, np.zeros(8), 2, "sigmoid_topk").shares,
                          route(scores, 2, "sigmoid_topk").shares)


# ---------------------------------------------------------------- the mixture

def random_experts(rng, d, n_experts, d_out=None):
    weights = [(rng.normal(size=(d, 12)), rng.normal(size=(12, d_out or d))) for _ in range(n_experts)]
    return [lambda h, W=W: ffn(h, W[0], None, W[1], None, activation="gelu") for W in weights]


def test_mixture_is_the_weighted_sum_of_the_chosen_experts():
    rng = np.random.default_rng(5)
    d, n_experts = 6, 4
    experts = random_experts(rng, d, n_experts)
    x, router = rng.normal(size=(2, 5, d)), rng.normal(size=(d, n_experts))
    result = mixture_of_experts(x, router, experts)                          # top_k = 2 by default
    assert result.output.shape == x.shape
    assert result.experts.shape == result.shares.shape == (2, 5, 2)
    assert result.scores.shape == (2, 5, n_experts) and np.allclose(result.scores, x @ router)
    for b, i in np.ndindex(2, 5):
        token = x[b, i]
        expected = sum(share * experts[e](token[None])[0]
                       for e, share in zip(result.experts[b, i], result.shares[b, i]))
        assert np.allclose(result.output[b, i], expected)
    full = mixture_of_experts(x, router, experts, top_k=n_experts)        # all experts: dense softmax mix
    dense = sum(softmax(result.scores)[..., e:e + 1] * experts[e](x.reshape(-1, d)).reshape(x.shape)
                for e in range(n_experts))
    assert np.allclose(full.output, dense)


def test_a_shared_expert_runs_on_every_token_with_weight_one():
    rng = np.random.default_rng(11)
    d, n_experts = 5, 6
    experts, (common,) = random_experts(rng, d, n_experts), random_experts(rng, d, 1)
    x, router = rng.normal(size=(3, 4, d)), rng.normal(size=(d, n_experts))
    for rule in RULES:
        routed = mixture_of_experts(x, router, experts, 2, rule)
        both = mixture_of_experts(x, router, experts, 2, rule, shared=[common])
        assert np.allclose(both.output, routed.output + common(x.reshape(-1, d)).reshape(x.shape))
        assert np.array_equal(both.experts, routed.experts) and np.array_equal(both.shares, routed.shares)
    twice = mixture_of_experts(x, router, experts, shared=[common, common])
    assert np.allclose(twice.output, mixture_of_experts(x, router, experts).output
                       + 2 * common(x.reshape(-1, d)).reshape(x.shape))


def test_stand_in_experts_show_each_experts_weight_in_the_output():
    """Experts that answer with 1 in a slot of their own make the output list every weight:
    the notebook's side-by-side of the rules reads them off this way."""
    one_hot = [lambda t, i=i: np.tile(np.eye(9)[i], (len(t), 1)) for i in range(9)]
    out = mixture_of_experts(np.array([SCORES]), np.eye(8), one_hot[:8], 2, "sigmoid_topk", shared=one_hot[8:])
    weights = out.output[0]
    assert weights[8] == 1.0 and np.allclose(weights[[0, 2]], route(SCORES, 2, "sigmoid_topk").shares)
    assert np.count_nonzero(weights) == 3


def test_an_expert_with_one_token_runs_on_it():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]])                      # token 0 alone prefers expert 0
    router = np.eye(2) * 10
    experts = [lambda h: h * 2.0, lambda h: -h]
    result = mixture_of_experts(x, router, experts, top_k=1)
    assert result.experts.ravel().tolist() == [0, 1, 1]
    assert np.allclose(result.output, [[2.0, 0.0], [0.0, -1.0], [0.0, -2.0]])


def test_experts_may_give_another_width_and_lists():
    rng = np.random.default_rng(8)
    x, router = rng.normal(size=(7, 4)), rng.normal(size=(4, 3))
    experts = [lambda h, k=k: [[float(k)] * 5] * len(h) for k in range(3)]  # plain lists, 5 numbers out
    result = mixture_of_experts(x, router, experts)
    expected = (result.shares * result.experts).sum(-1)                     # expert k gives k everywhere
    assert result.output.shape == (7, 5) and np.allclose(result.output, expected[:, None])


def test_only_the_chosen_experts_run():
    calls = []
    experts = [lambda h, k=k: calls.append((k, len(h))) or h for k in range(4)]
    x = np.array([[5.0, 0, 0, 0], [4.0, 0, 3, 0]])                          # experts 0, 1 and 0, 2
    mixture_of_experts(x, np.eye(4), experts)
    assert sorted(calls) == [(0, 2), (1, 1), (2, 1)]


def test_no_tokens_give_no_output():
    result = mixture_of_experts(np.zeros((0, 3)), np.ones((3, 2)), [abs, abs], top_k=1)
    assert result.output.shape == (0, 3) and result.experts.shape == (0, 1)


def test_tokens_per_expert_counts_every_choice():
    routing = route(np.random.default_rng(9).normal(size=(4096, 8)), top_k=2)
    counts = tokens_per_expert(routing.experts, 8)
    assert counts.shape == (8,) and counts.sum() == 4096 * 2        # fair share 1,024 each
    assert tokens_per_expert([[0, 2], [2, 0], [2, 3]], 6).tolist() == [2, 0, 3, 1, 0, 0]


@pytest.mark.parametrize("call, expected", [
    (lambda: route(SCORES, top_k=9), "top_k should be at most the number of experts"),
    (lambda: route(SCORES, top_k=0), "top_k should be a whole number of at least 1"),
    (lambda: route(SCORES, 2, "softmax"), "rule should be one of 'topk_softmax', 'softmax_topk', 'sigmoid_topk'"),
    (lambda: route_with_bias(SCORES, np.zeros(8), 2, "top"), "rule should be one of"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((4, 2)), [abs, abs], shared=[lambda t: t[:1]]),
     r"shared expert 0 should return one row per token it gets, shape \(3, d_out\)"),
    (lambda: route(np.ones((2, 3, 4))), r"scores should have shape \(tokens, experts\)"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((5, 2)), [abs, abs]), "W_router should have 4 rows"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((4, 3)), [abs, abs]), "experts should hold 3 functions"),
    (lambda: mixture_of_experts(3.0, np.ones((1, 2)), [abs, abs]), r"x should have shape \(..., d\), got a single"),
    (lambda: tokens_per_expert([0, 1], 0), "n_experts should be a whole number of at least 1"),
    (lambda: route_with_bias(SCORES, np.zeros(3)), r"bias should have shape \(8,\), one number per expert"),
    (lambda: route_with_bias(np.ones((2, 2, 8)), np.zeros(8)), r"scores should have shape \(tokens, experts\)"),
    (lambda: balance_load(np.ones(8)), r"scores should have shape \(tokens, experts\)"),
    (lambda: balance_load(np.ones((4, 8)), 2, -1.0), "strength should be a number of at least 0"),
    (lambda: balance_load(np.ones((4, 8)), 2, np.inf), "strength should be a number of at least 0"),
    (lambda: balance_load(np.ones((4, 8)), 2, 0.5, -1), "steps should be a whole number of at least 0"),
    (lambda: balance_load(np.ones((4, 8)), 0), "top_k should be a whole number of at least 1"),
    (lambda: balance_load(np.ones((4, 8)), 2, "strong"), "strength should be a number of at least 0"),
    (lambda: route_with_bias(np.ones(8), "none"), "bias should be an array of numbers"),
    (lambda: route_with_bias(np.float64(1.0), np.zeros(1)), r"scores should have shape \(tokens, experts\)"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((5, 2)), [abs, abs]), "to match x's last axis"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((4, 2)), [lambda t: t.sum(axis=1)] * 2),
     r"expert \d should return one row per token it gets, shape \(\d, d_out\), got shape \(\d,\)"),
    (lambda: mixture_of_experts(np.ones((3, 4)), np.ones((4, 2)), [lambda t: t[:1]] * 2),
     r"expert \d should return one row per token it gets"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


# ---------------------------------------------------------------- the biased router and load balancing

def test_route_with_bias_chooses_by_the_bias_and_shares_by_the_scores():
    scores = np.array(SCORES)
    plain = route_with_bias(scores, np.zeros(8))
    assert list(plain.experts) == [0, 2] and np.allclose(plain.shares, route(scores).shares)
    bias = np.zeros(8)
    bias[5] = 1.0                                                  # expert 6 now beats expert 3
    moved = route_with_bias(scores, bias)
    assert list(moved.experts) == [0, 5] and moved.scores.tolist() == SCORES
    assert np.allclose(moved.shares, softmax(scores[[0, 5]]))
    many_scores = np.random.default_rng(1).normal(size=(10, 8))
    many = route_with_bias(many_scores, bias, top_k=3)
    assert np.array_equal(many.experts, route(many_scores + bias, 3).experts)
    assert np.allclose(many.shares, softmax(np.take_along_axis(many_scores, many.experts, 1)))


def unfair_scores():
    """2,048 tokens whose scores favour the higher-numbered of 8 experts."""
    return np.random.default_rng(12).normal(size=(2048, 8)) + np.linspace(-1.0, 1.0, 8)


def test_balance_load_moves_the_bias_by_the_documented_step():
    scores = unfair_scores()
    fair = 2048 * 3 / 8
    bias, counts = np.zeros(8), []
    for _ in range(4):                                             # routing, counting, one step each
        counts.append(tokens_per_expert(route_with_bias(scores, bias, 3).experts, 8))
        bias = bias + 0.3 * (fair - counts[-1]) / fair
    result = balance_load(scores, 3, 0.3, 3)
    assert isinstance(result, Balancing) and np.array_equal(result.counts, counts)
    assert np.allclose(result.bias, bias - 0.3 * (fair - counts[-1]) / fair)
    assert np.array_equal(result.routing.experts, route_with_bias(scores, result.bias, 3).experts)


def test_balance_load_evens_out_the_tokens():
    scores = unfair_scores()
    left = balance_load(scores, 2, 0.0, 10)
    assert left.counts.shape == (11, 8)
    assert np.all(left.counts == left.counts[0]) and np.all(left.bias == 0)
    assert np.array_equal(left.counts[0], tokens_per_expert(route(scores, 2).experts, 8))
    assert left.counts[0][0] < 100 and left.counts[0][7] > 1000          # unfair: the fair share is 512
    balanced = balance_load(scores, 2, 0.5, 10)
    assert np.all(np.abs(balanced.counts[-1] - 512) <= 5)
    assert np.array_equal(balanced.counts, balance_load(scores, strength=0.5).counts)   # 2 experts, 10 steps
    assert balance_load(scores, 2, 0.5, 0).counts.shape == (1, 8)
    assert np.array_equal(balance_load(scores, 2, 0.5, 3.0).counts, balanced.counts[:4])
    assert np.all(balance_load(scores).bias == 0)                      # strength 0 by default


def test_route_with_bias_shares_each_tokens_huge_scores_on_their_own():
    scores = np.array([[1000.0, 999.0, -5.0], [-1000.0, -1001.0, -1005.0]])
    routed = route_with_bias(scores, np.zeros(3))
    assert np.all(np.isfinite(routed.shares))
    assert np.allclose(routed.shares, [softmax(np.array([1000.0, 999.0])), softmax(np.array([-1000.0, -1001.0]))])


def test_route_with_bias_and_balance_load_take_lists():
    routed = route_with_bias([SCORES, SCORES[::-1]], [0.0] * 8)
    assert routed.experts.tolist() == [[0, 2], [7, 5]]
    assert np.array_equal(balance_load([SCORES, SCORES[::-1]], 1, 0.5, 2).counts,
                          balance_load(np.array([SCORES, SCORES[::-1]]), 1, 0.5, 2).counts)


def test_experts_may_return_any_numbers_numpy_reads_as_floats():
    from fractions import Fraction

    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    as_fractions = [lambda t: [[Fraction(1, 2)] * 2] * len(t), lambda t: [[Fraction(3, 2)] * 2] * len(t)]
    out = mixture_of_experts(x, np.eye(2), as_fractions, top_k=2)
    expected = out.shares[..., :1] * np.where(out.experts[..., :1] == 0, 0.5, 1.5) \
        + out.shares[..., 1:] * np.where(out.experts[..., 1:] == 0, 0.5, 1.5)
    assert out.output.dtype == np.float64 and np.allclose(out.output, np.broadcast_to(expected, (2, 2)))
