"""Notebook 01's lab: how far one weight pulls a weighted mean.

Five numbers, four of weight 1 and the last of the weight the slider sets. The weighted mean moves
from the mean of the other four (weight 0) towards the last number, a share w / (4 + w) of the
way. The model is a pure function of the slider's value; the view draws it.
"""

from __future__ import annotations

import numpy as np

from engine.kit.figure_view import set_changed
from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.presentation.html import plain
from engine.presentation.numbers import number, percent, readout

NUMBERS = np.array([2.0, 3.0, 4.0, 5.0, 12.0])
WEIGHT_MIN, WEIGHT_MAX = 0.0, 12.0


def weights_model(weight: float, numbers=NUMBERS) -> dict:
    """The weights (1 for each number, ``weight`` for the last), the weighted mean, the mean of
    the other numbers, the share of the way the last number pulls the mean, and a verdict."""
    weight = min(max(float(weight), WEIGHT_MIN), WEIGHT_MAX) if np.isfinite(weight) else 1.0
    numbers = np.asarray(numbers, dtype=float)
    weights = np.ones_like(numbers)
    weights[-1] = weight
    mean = float((numbers * weights).sum() / weights.sum())
    others = float(numbers[:-1].mean())
    share = weight / (len(numbers) - 1 + weight)
    last = number(numbers[-1])
    if weight == 0:
        verdict = (f"Of weight 0, the last number ({last}) counts for nothing: the weighted mean is "
                   f"the mean of the other numbers, {number(others)}.")
    else:
        verdict = (f"Of weight {number(weight, 1)}, the last number ({last}) pulls the weighted mean to "
                   f"{number(mean)}: {percent(share)} of the way from the mean of the others "
                   f"({number(others)}) to it.")
    return {"weight": weight, "weights": weights, "mean": mean, "others": others, "share": share,
            "verdict": verdict}


class WeightsLab:
    """The view: a "weight of the last number" slider, the weights as bars at the numbers'
    values and the weighted mean as a line, redrawn in place; the verdict."""

    def __init__(self, weight: float = 1.0):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.slider = slider("float", value=weight, min=WEIGHT_MIN, max=WEIGHT_MAX, step=0.5,
                             description="weight of the last number", readout_format=readout(1))
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        model = weights_model(weight)
        self.bars = ax.bar(NUMBERS, model["weights"], width=0.5, color=OKABE_ITO["blue"], label="weight")
        (self.mean,) = ax.plot([model["mean"]] * 2, [0.0, WEIGHT_MAX + 1.0], color=OKABE_ITO["orange"],
                               linestyle="--", linewidth=1.5, label="weighted mean")
        ax.set_xlim(NUMBERS.min() - 1.0, NUMBERS.max() + 1.0)
        ax.set_ylim(0.0, WEIGHT_MAX + 1.0)
        ax.set_xticks(NUMBERS, [number(v) for v in NUMBERS])
        ax.set_xlabel("number")
        ax.set_ylabel("weight")
        self.title = ax.set_title(f"The weighted mean: {number(model['mean'])}")     # laid out with its text
        ax.legend(loc="upper left", fontsize=9, frameon=False)
        fig.tight_layout()
        self.view = FigureView(fig, description="Bars of five numbers' weights and a line at their weighted mean",
                               changing=[self.bars, self.mean, self.title])

        self.root = lab_root("weights", [controls(self.slider), self.view.widget, self.verdict])
        self.slider.observe(self._on_change, names="value")
        self.update(weight)

    def _on_change(self, change) -> None:
        self.update(change["new"])

    def update(self, weight: float) -> dict:
        model = weights_model(weight)
        set_changed(self.bars[-1], height=model["weights"][-1])
        self.mean.set_xdata([model["mean"]] * 2)
        self.title.set_text(f"The weighted mean: {number(model['mean'])}")
        self.view.redraw()
        self.verdict.value = plain(model["verdict"])
        self.model = model
        return model


def weights_lab(weight: float = 1.0):
    """The lab's root widget (classes ``course-lab`` and ``course-lab-weights``)."""
    return WeightsLab(weight).root
