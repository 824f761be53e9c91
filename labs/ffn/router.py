"""The router lab (notebook 02): 4,096 tokens routed top-2 over 8 experts; left to itself the
router overloads some experts, and a balancing bias evens the load out. Beside it, what a
mixture of experts stores against what one token uses.

Model: ``router_model`` (``lib.moe.route`` and ``lib.moe.balance_load``; memory from
``lib.params``). View: ``RouterLab``. Root widget: ``router_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.moe import balance_load, route
from lib.params import ModelConfig, count_parameters, mebibytes
from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed, number, percent, plural, readout, size, vector
from engine.presentation.tables import table

from engine.kit.figure_view import set_changed
from engine.kit.layout import controls, lab_root, numbers_widget, slider, verdict_widget
from engine.kit.result import Result

N_EXPERTS, TOP_K, N_TOKENS = 8, 2, 4096
FAIR_SHARE = N_TOKENS * TOP_K // N_EXPERTS
EXAMPLE_SCORES = np.array([2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28])
ROUTER_SEED, ROUTER_WIDTH = 2027, 16
STRENGTH_MAX, STEPS_MAX, TOKEN_MAX = 1.0, 20, 15
SCORE_SCALES = (3.0, 5.0, 8.0)         # the scores panel shows ± the first that holds the bars


@lru_cache(maxsize=1)
def router_scores() -> np.ndarray:
    """Scores of 4,096 random tokens for 8 experts, (4096, 8); token 0 is the example's.

    Tokens share a common direction (as real tokens do) and the router is random, so some
    experts score high for most tokens: left to itself the router is unfair.
    """
    rng = np.random.default_rng(ROUTER_SEED)
    x = rng.normal(0.0, 1.0, (N_TOKENS, ROUTER_WIDTH)) + rng.normal(0.0, 0.6, ROUTER_WIDTH)
    W_router = rng.normal(0.0, 1.5 / np.sqrt(ROUTER_WIDTH), (ROUTER_WIDTH, N_EXPERTS))
    scores = x @ W_router
    scores[0] = EXAMPLE_SCORES
    scores.setflags(write=False)
    return scores


@lru_cache(maxsize=256)
def _balanced(strength: float, steps: int):
    return balance_load(router_scores(), TOP_K, strength, steps)


@lru_cache(maxsize=1)
def _own_choice() -> np.ndarray:
    """(4096, 2): the two experts each token's own scores choose, with no bias, in increasing order."""
    return np.sort(route(router_scores(), TOP_K).experts, axis=1)


def rerouted_share(experts) -> float:
    """The share of the tokens whose two experts (``experts``, (4096, 2)) are not the two their own
    scores choose: what balancing costs."""
    return float(np.mean(np.any(np.sort(np.asarray(experts), axis=1) != _own_choice(), axis=1)))


def memory_figures() -> dict:
    """Weights of the course's 12-block model at d = 768: dense vs 8 experts (top 2), in MiB."""
    dense = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12)
    mixture = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12, experts=N_EXPERTS,
                          top_k=TOP_K)
    d_count, m_count = count_parameters(dense), count_parameters(mixture)
    return {"dense": d_count.total, "stored": m_count.total, "used": m_count.active,
            "dense_mib": mebibytes(d_count.total, 2), "mixture_mib_2": mebibytes(m_count.total, 2),
            "mixture_mib_1": mebibytes(m_count.total, 1)}


@dataclass(frozen=True)
class RouterResult(Result):
    """The 4,096 tokens routed top-2 over 8 experts after some steps of bias balancing.

    counts, first_counts, bias: (experts,) tokens per expert now and before balancing, and the
    balancing bias; scores: (experts,) one token's router scores; chosen, shares: (2,) its two
    experts (numbered from 0) and their shares.
    """
    strength: float
    steps: int
    token: int
    counts: np.ndarray
    first_counts: np.ndarray
    bias: np.ndarray
    fair: int                   # the fair share of tokens per expert
    scores: np.ndarray
    chosen: np.ndarray
    shares: np.ndarray
    moved: bool                 # whether balancing changed the token's experts
    rerouted: float             # the share of tokens not sent to both experts their scores chose
    tokens: int
    busiest: int
    quietest: int
    busiest_share: float        # busiest / fair
    quietest_share: float
    expert_numbers: list        # chosen, as the verdict numbers them (from 0)
    unbiased_numbers: list      # the experts the token's own scores chose
    memory: dict                # memory_figures()
    verdict: str


def router_model(strength: float = 0.0, steps: int = 10, token: int = 0) -> RouterResult:
    """Route the 4,096 tokens top-2 over 8 experts after ``steps`` steps of bias balancing.

    Returns tokens per expert (``counts``) against the fair share, the balancing bias, and one
    token's scores, its two experts (numbered from 0, as in lib.moe and the notebook) and their
    shares, the share of the tokens balancing sent elsewhere than their own scores chose, and the
    verdict.
    """
    strength = float(np.clip(np.nan_to_num(float(strength)), 0.0, STRENGTH_MAX))
    steps = int(np.clip(int(steps), 0, STEPS_MAX))
    token = int(np.clip(int(token), 0, N_TOKENS - 1))
    balancing = _balanced(round(strength, 6), steps)
    counts = balancing.counts[-1]
    first = balancing.counts[0]
    scores = router_scores()[token]
    chosen, shares = balancing.routing.experts[token], balancing.routing.shares[token]
    unbiased = route(scores, TOP_K)
    busiest, quietest = int(counts.max()), int(counts.min())
    rerouted = rerouted_share(balancing.routing.experts)
    if strength == 0 or steps == 0:
        verdict = (f"Left to itself, the router sends {count(busiest)} tokens to its busiest expert "
                   f"({fixed(busiest / FAIR_SHARE)} × the fair share of {count(FAIR_SHARE)}) and "
                   f"{count(quietest)} to its quietest ({fixed(quietest / FAIR_SHARE)} ×).")
    else:
        verdict = (f"After {plural(steps, 'balancing step')} at strength {fixed(strength)} "
                   f"the experts get {count(quietest)} to {count(busiest)} tokens "
                   f"({fixed(quietest / FAIR_SHARE)} × to {fixed(busiest / FAIR_SHARE)} × the fair share of "
                   f"{count(FAIR_SHARE)}); left to itself it was {count(int(first.min()))} to "
                   f"{count(int(first.max()))}. The price: {percent(rerouted)} of the {count(N_TOKENS)} tokens "
                   "are no longer sent to both experts their own scores chose.")
    who = "The example token" if token == 0 else f"Token {token}"
    pair = "experts " + " and ".join(f"{int(e)}" for e in chosen)
    verdict += (f" {who} goes to {pair} with shares {number(shares[0], 3)} and {number(shares[1], 3)}.")
    moved = set(int(e) for e in chosen) != set(int(e) for e in unbiased.experts)
    if moved:
        before = "experts " + " and ".join(f"{int(e)}" for e in unbiased.experts)
        verdict += f" Balancing moved it: its own scores chose {before}."
    return RouterResult(strength=strength, steps=steps, token=token, counts=counts, first_counts=first,
                        bias=balancing.bias, fair=FAIR_SHARE, scores=scores, chosen=chosen,
                        shares=shares, moved=moved, rerouted=rerouted, tokens=N_TOKENS, busiest=busiest,
                        quietest=quietest, busiest_share=busiest / FAIR_SHARE,
                        quietest_share=quietest / FAIR_SHARE, expert_numbers=[int(e) for e in chosen],
                        unbiased_numbers=[int(e) for e in unbiased.experts], memory=memory_figures(),
                        verdict=verdict)


class RouterLab:
    """Balancing strength, steps and token sliders; a token's scores and tokens per expert."""

    def __init__(self, strength: float = 0.0, steps: int = 10, token: int = 0):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.colours = OKABE_ITO
        self.strength = slider("float", value=strength, min=0.0, max=STRENGTH_MAX, step=0.05,
                               description="balancing strength", readout_format=readout(2))
        self.strength.add_class("course-slider-strength")
        self.steps = slider("int", value=steps, min=0, max=STEPS_MAX, description="balancing steps")
        self.token = slider("int", value=token, min=0, max=TOKEN_MAX,
                            description="token shown (0: the example)")
        self.memory = numbers_widget()
        self.numbers = numbers_widget()
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 5.0)
        ax_token, ax_load = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
        experts = np.arange(N_EXPERTS)
        names = [f"{e}" for e in experts]
        self.score_bars = ax_token.bar(experts, np.zeros(N_EXPERTS), width=0.6, color=OKABE_ITO["sky"],
                                       edgecolor="black", linewidth=0.6)
        (self.biased_marks,) = ax_token.plot(experts, np.zeros(N_EXPERTS), linestyle="none", marker="_",
                                             markersize=14, markeredgewidth=2.2, color="black",
                                             label="score + bias (used to choose), when balancing")
        ax_token.axhline(0, color="black", linewidth=0.8)
        ax_token.set_xticks(experts, names)
        ax_token.set_ylabel("router score")
        ax_token.set_xlabel("expert (orange: the two kept; their shares in the table below)")
        ax_token.set_title("Router scores of the token shown: top 2 kept", fontsize=10)
        self.token_legend = ax_token.legend(loc="lower left", fontsize=8, frameon=False)
        self.load_bars = ax_load.bar(experts, np.zeros(N_EXPERTS), width=0.6, color=OKABE_ITO["blue"],
                                     edgecolor="black", linewidth=0.6)
        ax_load.axhline(FAIR_SHARE, color=OKABE_ITO["vermillion"], linestyle="--", linewidth=1.4,
                        label=f"fair share {count(N_TOKENS)} × {TOP_K} / {N_EXPERTS} = {count(FAIR_SHARE)}")
        ax_load.set_xticks(experts, names)
        ax_load.set_ylabel("tokens")
        ax_load.set_xlabel("expert")
        ax_load.set_title(f"{count(N_TOKENS)} random tokens routed (the counts in the table below)", fontsize=10)
        ax_load.legend(loc="upper right", fontsize=8, frameon=False)
        # The load panel's height holds the busiest expert before any balancing (balancing only
        # evens the load out); the scores' range is one of a few fixed ones.
        unbalanced = _balanced(0.0, 0).counts[0]
        ax_load.set_ylim(0, max(2.0 * FAIR_SHARE, float(unbalanced.max()) * 1.25))
        self.ax_token, self.ax_load = ax_token, ax_load
        self._scale(SCORE_SCALES[0])
        fig.tight_layout()
        self.view = FigureView(fig, description="Bar charts: one token's router scores for 8 experts, "
                                                "and how many of 4,096 tokens each expert receives",
                               changing=[self.score_bars, self.biased_marks, self.load_bars])
        self.root = lab_root("router", [controls(self.strength, self.steps), controls(self.token),
                                        self.view.widget, self.numbers, self.memory, self.verdict])
        for control in (self.strength, self.steps, self.token):
            control.observe(self._on_change, names="value")
        self._show_memory()
        self.update()

    def _scale(self, scale: float) -> None:
        """The scores panel's range, ± scale with room for the shares (a full draw when it changes)."""
        if getattr(self, "_state", None) != scale:
            self.ax_token.set_ylim(-1.2 * scale, 1.2 * scale)
            self._state = scale

    def _show_memory(self) -> None:
        mem = memory_figures()
        self.memory.value = table([
            ("12 blocks at d = 768", "parameters / weights in memory"),
            ("dense (one FFN per block)",
             f"{size(mem['dense'], 0)} / {fixed(mem['dense_mib'], 0)} MiB at 2 bytes"),
            (f"{N_EXPERTS} experts, top {TOP_K}: stored", f"{size(mem['stored'], 0)} / "
             f"{fixed(mem['mixture_mib_2'], 0)} MiB at 2 bytes, {fixed(mem['mixture_mib_1'], 0)} MiB at 1 byte"),
            ("used for one token", size(mem["used"], 0)),
        ])

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> RouterResult:
        m = router_model(self.strength.value, self.steps.value, self.token.value)
        c = self.colours
        scores, bias = m.scores, m.bias
        kept = {int(e): share for e, share in zip(m.chosen, m.shares)}
        biased = scores + bias
        values = np.concatenate([scores, biased])
        top = float(np.max(np.abs(values))) * 1.1
        scale = next((s for s in SCORE_SCALES if top <= s), float(np.ceil(top)))
        self._scale(scale)
        for e in range(N_EXPERTS):
            set_changed(self.score_bars[e], height=scores[e], facecolor=c["orange"] if e in kept else c["sky"])
        self.biased_marks.set_ydata(biased)
        balancing = bool(np.any(bias != 0))
        self.biased_marks.set_visible(balancing)
        counts = m.counts
        for e in range(N_EXPERTS):
            set_changed(self.load_bars[e], height=counts[e])
        state = ("left to itself" if m.strength == 0 or m.steps == 0
                 else f"after {plural(m.steps, 'step')} at strength {fixed(m.strength)}")
        self.view.redraw(state=self._state)
        who = "the example token" if m.token == 0 else f"token {m.token}"
        self.numbers.value = table([
            (f"{who}: experts kept (softmax over those two)",
             ", ".join(f"{e} with share {number(share, 3)}" for e, share in kept.items())),
            (f"tokens per expert (0 to {N_EXPERTS - 1}), {state}", ", ".join(count(n) for n in counts)),
            ("busiest / quietest vs fair",
             f"{fixed(m.busiest / FAIR_SHARE)} × / {fixed(m.quietest / FAIR_SHARE)} ×"),
            ("balancing bias", vector(bias)),
        ])
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def router_lab(strength: float = 0.0, steps: int = 10, token: int = 0):
    """The router lab's root widget (class ``course-lab``)."""
    return RouterLab(strength, steps, token).root
