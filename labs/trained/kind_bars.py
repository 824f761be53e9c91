"""The bar chart the ablation and mismatch labs share: perplexity per kind of prediction, the
trained model beside the setting now, on a log scale."""

from __future__ import annotations

import numpy as np

from ..kit.layout import log_scale
from .held_out import GROUPS


class KindBars:
    """Two bars per kind of prediction on ``ax``: the trained model, and the setting now
    (labelled ``now_label``); ``update`` sets their heights and the axis's range."""

    def __init__(self, ax, now_label):
        from ..kit.figure_view import OKABE_ITO

        labels = [label for label, _k in GROUPS]
        x = np.arange(len(labels))
        self.full = ax.bar(x - 0.2, np.ones(len(labels)), width=0.4, color=OKABE_ITO["sky"],
                           label="trained model")
        self.now = ax.bar(x + 0.2, np.ones(len(labels)), width=0.4, color=OKABE_ITO["vermillion"],
                          label=now_label, hatch="//", edgecolor="white")
        log_scale(ax.yaxis)
        ax.set_xticks(x, labels, rotation=40, ha="right", fontsize=9)
        ax.set_ylabel("perplexity (log)")
        ax.set_title("perplexity by kind of prediction", fontsize=10)
        ax.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, frameon=True, framealpha=0.85)
        self.ax = ax

    def update(self, full: dict, now: dict) -> None:
        values = []
        for (label, _k), a, b in zip(GROUPS, self.full, self.now):
            a.set_height(full[label])
            shown = now[label] if np.isfinite(now[label]) else 1.0
            b.set_height(shown)
            values += [full[label], shown]
        self.ax.set_ylim(0.8, max(max(values) * 8, 10.0))
