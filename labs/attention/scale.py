"""The scale lab (notebook 01, attention): why the scores are divided by √d.

A query and a key of d numbers each, every number drawn with mean 0 and spread 1, score q·k: a
sum of d products, whose spread grows like √d. The lab draws 128 queries, each with 16 keys of its
own, at each width d on its slider, measures the spread of their 2,048 scores, and gives one query's 16
softmax weights, divided by √d or not. Undivided, a wide query gives nearly all its weight to
one key; divided, the spread stays near 1 at every width and the weights keep their shape.

Model: ``scale_model`` (a ``ScaleResult``). View: ``ScaleLab``. Root widget: ``scale_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.presentation.html import plain
from engine.presentation.numbers import fixed, number, ordinal, percentage

from engine.kit.layout import controls, lab_root, pick_slider, switch, verdict_widget
from engine.kit.result import Result
from lib.attention import softmax

WIDTHS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)     # d, the numbers of a query and of a key
QUERIES, KEYS = 128, 16
SEED = 17
X_TICKS, Y_TICKS = (2, 8, 32, 128, 512), (0.5, 2, 8, 32)
ONE_KEY = 0.9            # the top key's average weight from which softmax "gives nearly all to one key"


@lru_cache(maxsize=len(WIDTHS))
def raw_scores(d: int) -> np.ndarray:
    """(QUERIES, KEYS) scores q·k, not divided: each of the QUERIES queries against KEYS keys of its
    own, every number of every query and key drawn from normal(0, 1) in float32 (the queries first,
    then the keys, from ``default_rng([SEED, d])``), so the 2,048 scores are drawn independently.
    Read-only."""
    rng = np.random.default_rng([SEED, int(d)])
    queries = rng.standard_normal((QUERIES, 1, d), dtype=np.float32)
    keys = rng.standard_normal((QUERIES, KEYS, d), dtype=np.float32)
    scores = (queries * keys).sum(axis=-1, dtype=np.float64)          # (QUERIES, KEYS)
    scores.setflags(write=False)
    return scores


@dataclass(frozen=True)
class Measured:
    """What one width gives: ``spread`` the standard deviation of the scores, ``top`` the largest
    weight of each query averaged over the queries, ``weights`` query 0's weights largest first."""
    spread: float
    top: float
    weights: np.ndarray


@lru_cache(maxsize=2 * len(WIDTHS))
def measured(d: int, divided: bool) -> Measured:
    """The scores of width d (``raw_scores``), divided by √d or not, and their softmax weights."""
    scores = raw_scores(d) / np.sqrt(d) if divided else raw_scores(d)
    weights = softmax(scores)                                          # (QUERIES, KEYS), rows sum to 1
    first = np.sort(weights[0])[::-1].copy()
    first.setflags(write=False)
    return Measured(float(scores.std()), float(weights.max(axis=-1).mean()), first)


@dataclass(frozen=True)
class ScaleResult(Result):
    """One setting of the lab.

    d, divided: the width and whether the scores are divided by √d; root_d: √d.
    spread, top, weights: this setting's ``Measured`` (weights: query 0's, largest first).
    raw_spread: the spread at this width, not divided. even: 1 / KEYS, an even split.
    widths: every width of the slider; raw_spreads, divided_spreads: the spread at each, not divided
    and divided (the left panel's two curves). verdict: one sentence from these numbers."""
    d: int
    divided: bool
    root_d: float
    spread: float
    top: float
    weights: np.ndarray
    raw_spread: float
    even: float
    widths: tuple
    raw_spreads: tuple
    divided_spreads: tuple
    verdict: str


def scale_model(d: int = 64, divided: bool = True) -> ScaleResult:
    """The lab at width ``d`` (the nearest of ``WIDTHS``), scores divided by √d or not."""
    d = min(WIDTHS, key=lambda w: abs(w - float(d))) if np.isfinite(float(d)) else WIDTHS[0]
    divided = bool(divided)
    here, raw = measured(d, divided), measured(d, False)
    root, even = float(np.sqrt(d)), 1.0 / KEYS
    if divided:
        said = (f"d = {d}, scores divided by \u221a{d} = {number(root)}: they spread {fixed(here.spread)} "
                f"(undivided {fixed(raw.spread)})")
    else:
        said = f"d = {d}, scores not divided: they spread {fixed(here.spread)}, near \u221a{d} = {number(root)}"
    if here.top >= ONE_KEY:
        shape = (f"the top key takes {percentage(here.top)} of a query's weight on average: softmax gives "
                 "nearly all of it to one key.")
    else:
        shape = (f"the top key takes {percentage(here.top)} of a query's weight on average, against "
                 f"{percentage(even)} each for an even split.")
    return ScaleResult(d, divided, root, here.spread, here.top, here.weights, raw.spread, even, WIDTHS,
                       tuple(measured(w, False).spread for w in WIDTHS),
                       tuple(measured(w, True).spread for w in WIDTHS), f"{said}; {shape}")


class ScaleLab:
    """The view: a width slider and a "divide by √d" switch; the spread of the scores at every
    width (the chosen one marked), and one query's weights over the 16 keys."""

    def __init__(self, d: int = 64, divided: bool = False):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        self.width = pick_slider([(str(w), w) for w in WIDTHS], scale_model(d).d, "d (numbers per query)")
        self.width.add_class("course-slider-width")
        self.divided = switch("divide the scores by \u221ad", divided)
        self.verdict = verdict_widget()
        self.colours = {"raw": OKABE_ITO["blue"], "divided": OKABE_ITO["orange"], "top": OKABE_ITO["vermillion"]}

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 1.1], wspace=0.35)
        spread, bars = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        start = scale_model(d, divided)
        x = np.array(WIDTHS, dtype=float)
        spread.plot(x, np.sqrt(x), color="0.55", linestyle="--", linewidth=1, label="\u221ad")
        spread.plot(x, start.raw_spreads, "o-", color=self.colours["raw"], markersize=4, label="q\u00b7k")
        spread.plot(x, start.divided_spreads, "s-", color=self.colours["divided"], markersize=4,
                    label="q\u00b7k / \u221ad")
        (self.marker,) = spread.plot([], [], "o", markersize=11, markerfacecolor="none",
                                     markeredgecolor=OKABE_ITO["black"], markeredgewidth=1.6, label="now")
        spread.set_xscale("log", base=2)
        spread.set_yscale("log", base=2)
        spread.set_xticks(X_TICKS, [number(t) for t in X_TICKS])
        spread.set_yticks(Y_TICKS, [number(t) for t in Y_TICKS])
        spread.minorticks_off()
        spread.set_xlim(1.4, 1500)
        spread.set_ylim(0.35, 48)
        spread.set_xlabel("d")
        spread.set_ylabel("spread of the scores")
        spread.grid(True, alpha=0.3)
        spread.legend(loc="upper left", fontsize=8, frameon=False)
        spread.set_title("2,048 scores at each d", fontsize=10)

        self.bars = Bars(bars, range(KEYS), width=0.75, facecolor=self.colours["raw"], edgecolor="black",
                         linewidth=0.4, label="one query's weights")
        even = bars.axhline(1.0 / KEYS, color="black", linestyle=":", linewidth=1, label="even split (1/16)")
        bars.set_xlim(-0.7, KEYS - 0.3)
        bars.set_ylim(0, 1.05)
        ticks = [0, 5, 10, 15]
        bars.set_xticks(ticks, [ordinal(k + 1) for k in ticks])
        bars.set_xlabel("key, largest weight first")
        bars.set_ylabel("softmax weight")
        bars.legend(handles=[self.bars.artist, even], loc="upper right", fontsize=8, frameon=False)
        self.bars_title = bars.set_title("", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.16)
        self.spread_ax, self.bars_ax = spread, bars
        self.view = FigureView(fig, description="The spread of the scores at every width, and one query's "
                                                "weights over 16 keys",
                               changing=[self.marker, self.bars.artist, self.bars_title, even])

        self.root = lab_root("scale", [controls(self.width, self.divided), self.view.widget, self.verdict])
        for control in (self.width, self.divided):
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def update(self) -> ScaleResult:
        m = scale_model(self.width.value, self.divided.value)
        self.marker.set_data([m.d], [m.spread])
        colour = self.colours["divided" if m.divided else "raw"]
        self.bars.set(m.weights, [self.colours["top"]] + [colour] * (KEYS - 1))
        how = "divided by \u221ad" if m.divided else "not divided"
        self.bars_title.set_text(f"d = {m.d}, {how}")
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def scale_lab(**initial):
    """The scale lab's root widget (classes ``course-lab`` and ``course-lab-scale``)."""
    return ScaleLab(**initial).root
