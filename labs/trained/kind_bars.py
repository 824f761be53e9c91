"""The bar chart the ablation and mismatch labs share: perplexity per kind of prediction over
every held-out text, the trained model beside the setting now, on a log scale; under each pair,
how many predictions it rests on."""

from __future__ import annotations

import numpy as np

from engine.presentation.numbers import amount, count

from engine.kit.figure_view import decades, set_changed
from .held_out import GROUPS, counts

SHORT = {"sums and differences": "sums+diff"}     # a tick label that fits under its bars
LEGEND_ROOM = 16          # points between the chart and its title, for the legend's row
TOP_POWER = 4              # the chart runs up to a perplexity of 10,000; beyond, a bar is marked


class KindBars:
    """Two bars per kind of prediction on ``ax``: the trained model, and the setting now
    (labelled ``now_label``); ``update`` sets their heights and the axis's range."""

    def __init__(self, ax, now_label):
        from engine.kit.figure_view import OKABE_ITO, Bars

        n = counts()
        labels = [f"{SHORT.get(label, label)} ({count(n[label])})" for label, _k in GROUPS]
        x = np.arange(len(labels))
        self.full = Bars(ax, x - 0.2, width=0.4, facecolor=OKABE_ITO["sky"], label="trained model")
        self.now = Bars(ax, x + 0.2, width=0.4, facecolor=OKABE_ITO["vermillion"], label=now_label, hatch="//",
                        edgecolor="white")
        decades(ax.yaxis, 0, TOP_POWER)
        ax.set_ylim(0.8, 10.0 ** TOP_POWER)
        # A bar above the chart is marked beside its top, on white (over the hatched bar it was
        # hard to read).
        self.over = [ax.text(i + 0.42, 0.98, "", ha="left", va="top", fontsize=8, rotation=90,
                             transform=ax.get_xaxis_transform(),
                             bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0}) for i in x]
        ax.set_xticks(x, labels, rotation=40, ha="right", fontsize=9)
        ax.set_ylabel("perplexity (log)")
        # The legend sits in a row between the title and the chart: inside it, it would lie
        # across the marks of bars above the chart and across tall bars.
        ax.set_title("perplexity by kind of prediction", fontsize=10, pad=LEGEND_ROOM)
        ax.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=8, frameon=False,
                  borderaxespad=0.1, borderpad=0.1, handlelength=1.5, columnspacing=1.0)
        self.ax = ax

    def changing(self) -> list:
        """The artists an update changes: the bars, and the marks of bars above the chart."""
        return [self.full.artist, self.now.artist, self.over]

    def update(self, full: dict, now: dict) -> None:
        """Set the bars' heights; a perplexity above the chart is drawn to its top, with a mark."""
        top = 10.0 ** TOP_POWER
        shown = [now[label] if np.isfinite(now[label]) else top for label, _k in GROUPS]
        self.full.set([full[label] for label, _k in GROUPS])
        self.now.set([min(value, top) for value in shown])
        for mark, value in zip(self.over, shown):
            set_changed(mark, text=f"\u2191{amount(value)}" if value > top else "")
