"""A top-k mixture of experts: many feed-forward networks, only k of them run for each token.

A router matrix gives every token one score per expert. The k best-scored experts are kept, and
a rule turns the scores into their shares (``RULES``): by default a softmax over just the k kept
scores. The token's output is the share-weighted sum of those k experts' outputs, plus the
output of every shared expert, which each token runs with weight 1. Experts are numbered from 0,
as the course numbers them.
"""

from typing import NamedTuple

import numpy as np

from ._checks import as_float_array, check_choice, check_matrix, check_non_negative, check_positive_int

# How the kept experts' scores become their shares. Every rule keeps the same k experts (softmax
# and sigmoid both grow with the score); they differ in the shares.
RULES = {
    "topk_softmax": "keep the top k, then a softmax over just their k scores (shares sum to 1)",
    "softmax_topk": "a softmax over all E scores, then keep the top k as they are (sum below 1)",
    "sigmoid_topk": "a sigmoid of every score, keep the top k, divide by their sum (sum 1)",
}


class Routing(NamedTuple):
    """Where each token goes. For n tokens, E experts and top_k = k:

    experts: (n, k) int, the chosen experts, best score first.
    shares:  (n, k), their weights (by default the softmax of the kept scores: each row sums to 1).
    scores:  (n, E), the router's raw scores.
    """
    experts: np.ndarray
    shares: np.ndarray
    scores: np.ndarray


def _shares(scores, chosen, rule):
    """The weights of the chosen experts under ``rule`` (see RULES): scores (n, E), chosen (n, k)
    int. Returns (n, k)."""
    kept = np.take_along_axis(scores, chosen, axis=1)                 # (n, k)
    if rule == "topk_softmax":
        weights = np.exp(kept - kept.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)
    if rule == "softmax_topk":
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))  # (n, E)
        return np.take_along_axis(weights, chosen, axis=1) / weights.sum(axis=1, keepdims=True)
    # "sigmoid_topk": the kept sigmoids divided by their sum, through their logarithms,
    # log sigmoid(z) = min(z, 0) - log(1 + e^-|z|), so that sigmoids too small for a float
    # (e^-800) keep their ratio.
    log_affinities = np.minimum(kept, 0) - np.log1p(np.exp(-np.abs(kept)))
    weights = np.exp(log_affinities - log_affinities.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


class MixtureOutput(NamedTuple):
    """What a mixture-of-experts layer gives back for x of shape (..., d):

    output:  (..., d_out), the share-weighted sum of the chosen experts' outputs (plus the shared
             experts' outputs, if any).
    experts: (..., k) int, which experts each token went to, best first.
    shares:  (..., k), how much each chosen expert counts (by default each row sums to 1).
    scores:  (..., E), the router's raw scores.
    """
    output: np.ndarray
    experts: np.ndarray
    shares: np.ndarray
    scores: np.ndarray


def route(scores, top_k=2, rule="topk_softmax"):
    """Keep the top_k scores of every token and give the kept experts their shares by ``rule``.

    scores: (n, E) or (E,) for one token. Returns a Routing with experts and shares of shape
    (n, top_k) (or (top_k,) for one token). Ties go to the lower-numbered expert. ``rule`` is one
    of RULES: "topk_softmax" (a softmax over the kept scores), "softmax_topk" (the kept part of a
    softmax over all scores) or "sigmoid_topk" (the kept sigmoids, divided by their sum).
    Example: scores [2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28] keep experts 0 and 2
    with shares 0.875 and 0.125 (topk_softmax), 0.725 and 0.103 (softmax_topk), 0.597 and 0.403
    (sigmoid_topk).
    """
    scores = as_float_array(scores, "scores")
    rule = check_choice(rule, "rule", tuple(RULES))
    if scores.ndim == 1:
        one = route(scores[None, :], top_k, rule)
        return Routing(one.experts[0], one.shares[0], one.scores[0])
    if scores.ndim != 2:
        raise ValueError(f"scores should have shape (tokens, experts), got shape {scores.shape}")
    top_k = check_positive_int(top_k, "top_k")
    if top_k > scores.shape[1]:
        raise ValueError(f"top_k should be at most the number of experts ({scores.shape[1]}), got {top_k}")
    chosen = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]   # (n, k), best first
    return Routing(chosen, _shares(scores, chosen, rule), scores)


def mixture_of_experts(x, W_router, experts, top_k=2, rule="topk_softmax", shared=()):
    """Run each token through its top_k experts and mix their outputs by the router's shares.

    x:        (..., d), any number of leading axes (tokens).
    W_router: (d, E), one column of scores per expert.
    experts:  a list of E functions, each mapping (n, d) to (n, d_out), e.g. a feed-forward net.
    rule:     how the kept scores become shares (one of RULES).
    shared:   functions like the experts that every token runs, each added with weight 1.
    Returns a MixtureOutput (output, experts, shares, scores). Only the chosen experts run.
    """
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x should have shape (..., d), got a single number")
    W_router = check_matrix(W_router, "W_router", rows=x.shape[-1],
                            rows_reason=f" to match x's last axis ({x.shape[-1]} numbers per token)")
    if len(experts) != W_router.shape[1]:
        raise ValueError(f"experts should hold {W_router.shape[1]} functions, one per column of "
                         f"W_router, got {len(experts)}")
    tokens = x.reshape(-1, x.shape[-1])                               # (n, d)
    routing = route(tokens @ W_router, top_k, rule)
    output = None
    runs = [(f"expert {number}", expert, *np.nonzero(routing.experts == number))
            for number, expert in enumerate(experts)]
    every = np.arange(tokens.shape[0])
    runs += [(f"shared expert {number}", expert, every, None) for number, expert in enumerate(shared)]
    for name, expert, rows, slot in runs:                             # slot None: a shared expert
        if rows.size == 0:
            continue
        result = np.asarray(expert(tokens[rows]), dtype=float)        # (tokens here, d_out)
        if result.ndim != 2 or result.shape[0] != rows.size:
            raise ValueError(f"{name} should return one row per token it gets, shape "
                             f"({rows.size}, d_out), got shape {result.shape}")
        if output is None:
            output = np.zeros((tokens.shape[0], result.shape[-1]))
        output[rows] += result if slot is None else routing.shares[rows, slot][:, None] * result
    if output is None:                                                # no tokens at all
        output = np.zeros_like(tokens)
    lead = x.shape[:-1]
    return MixtureOutput(output.reshape(*lead, output.shape[-1]), routing.experts.reshape(*lead, top_k),
                         routing.shares.reshape(*lead, top_k), routing.scores.reshape(*lead, len(experts)))


def tokens_per_expert(chosen, n_experts):
    """How many tokens each expert received: chosen is any int array of expert numbers
    (e.g. Routing.experts, (n, k)); returns (n_experts,) counts. The fair share is n·k/E."""
    chosen = np.asarray(chosen)
    return np.bincount(chosen.ravel(), minlength=check_positive_int(n_experts, "n_experts"))


def route_with_bias(scores, bias, top_k=2, rule="topk_softmax"):
    """Choose each token's top_k experts by scores + bias, but share by the scores alone.

    The bias (E,) only decides *which* experts a token goes to; the shares still come from the
    chosen experts' own scores (by ``rule``, one of RULES), so a bias cannot make an expert count
    more in a token's output than its score says. A zero bias gives exactly
    ``route(scores, top_k, rule)``.
    scores: (n, E) or (E,); bias: (E,). Returns a Routing (scores: the unbiased scores).
    """
    scores = as_float_array(scores, "scores")
    if scores.ndim not in (1, 2):
        raise ValueError(f"scores should have shape (tokens, experts), got shape {scores.shape}")
    bias = as_float_array(bias, "bias")
    if bias.shape != (scores.shape[-1],):
        raise ValueError(f"bias should have shape ({scores.shape[-1]},), one number per expert, "
                         f"got shape {bias.shape}")
    chosen = route(scores + bias, top_k, rule).experts
    shares = _shares(np.atleast_2d(scores), np.atleast_2d(chosen), rule)
    return Routing(chosen, shares.reshape(chosen.shape), scores)


class Balancing(NamedTuple):
    """The result of ``balance_load``:

    bias:    (E,), the bias reached after the last step.
    counts:  (steps + 1, E), tokens per expert before any balancing (row 0) and after each step.
    routing: the Routing of the tokens with the final bias.
    """
    bias: np.ndarray
    counts: np.ndarray
    routing: Routing


def balance_load(scores, top_k=2, strength=0.0, steps=10):
    """Even out the tokens per expert with a few steps of bias balancing.

    Each step routes every token (``route_with_bias``), counts the tokens per expert and moves
    each expert's bias by strength · (fair − count) / fair, fair = n·top_k/E: an expert that got
    too many tokens is marked down, a quiet one is marked up. strength 0 leaves the router to
    itself. scores: (n, E). Returns a Balancing (bias, counts per step, final routing).
    """
    scores = as_float_array(scores, "scores")
    if scores.ndim != 2:
        raise ValueError(f"scores should have shape (tokens, experts), got shape {scores.shape}")
    strength = check_non_negative(strength, "strength")
    if not np.isfinite(strength):
        raise ValueError(f"strength should be a number of at least 0, got {strength!r}")
    steps = int(steps)
    if steps < 0:
        raise ValueError(f"steps should be a whole number of at least 0, got {steps}")
    n_experts = scores.shape[1]
    fair = scores.shape[0] * check_positive_int(top_k, "top_k") / n_experts
    bias = np.zeros(n_experts)
    routing = route_with_bias(scores, bias, top_k)
    counts = [tokens_per_expert(routing.experts, n_experts)]
    for _ in range(steps):
        bias = bias + strength * (fair - counts[-1]) / fair
        routing = route_with_bias(scores, bias, top_k)
        counts.append(tokens_per_expert(routing.experts, n_experts))
    return Balancing(bias, np.array(counts), routing)
