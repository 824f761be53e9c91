"""The start page's lab: softmax temperature.

Dividing the scores by a temperature before softmax makes the weights sharper (temperature below
1) or flatter (above 1). The model is a pure function of the slider's value; the view draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.own import Use
from lib.attention import softmax
from engine.presentation.html import plain
from engine.presentation.numbers import fixed, percent, percentage, readout

from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.kit.result import Result

WORDS = ("cat", "sat", "on", "the", "mat")
SCORES = np.array([2.0, 1.0, 0.5, 0.1, -1.0])
T_MIN, T_MAX = 0.1, 5.0
FLATTENED = 1.4     # the top weight at most 1.4 times an even split: from T = 4.1 on the slider


def course_softmax(scores):
    """The course's softmax along the last axis, as the learner's ``softmax(scores)`` is called."""
    return softmax(scores)


# The exercise whose function this lab can run instead of the course's (engine/kit/own_function.py).
SOFTMAX_USE = Use("stable-softmax", course_softmax, "lib.attention.softmax")


@dataclass(frozen=True)
class TemperatureResult(Result):
    """What the temperature lab shows at one temperature.

    weights: (words,) the softmax of the scores divided by the temperature.
    """
    temperature: float      # the temperature used (a very small one for zero or less)
    weights: np.ndarray     # (words,)
    top: int                # the entry of the largest weight
    top_share: float        # that weight
    even_share: float       # each word's weight in an even split: 1 / words
    words: int              # how many words
    verdict: str


def temperature_model(temperature: float, scores=SCORES, words=WORDS, softmax_fn=course_softmax) -> TemperatureResult:
    """Softmax of ``scores / temperature`` and a one-line verdict drawn from the numbers.
    ``softmax_fn``: the softmax to use, called on one row of scores (a (1, words) array)."""
    scores = np.asarray(scores, dtype=float)
    t = float(temperature)
    if not np.isfinite(t) or t <= 0:
        t = 1e-3  # the limit of a very low temperature: the top score takes everything
    weights = np.asarray(softmax_fn((scores / t)[None, :]), dtype=float)[0]
    top = int(np.argmax(weights))
    even = 1.0 / len(weights)
    share = float(weights[top])
    if share >= 0.9:
        taken = "over 99.9%" if share > 0.999 else percentage(share, 1)
        verdict = (f"At temperature {fixed(t)}, \u201c{words[top]}\u201d takes {taken} of the "
                   "weight: nearly a hard choice of one word.")
    elif share <= FLATTENED * even:
        verdict = (f"At temperature {fixed(t)} the weights have flattened towards an even split: the "
                   f"largest is {percentage(share)}, against {percentage(even)} each for an even split.")
    else:
        verdict = (f"At temperature {fixed(t)}, \u201c{words[top]}\u201d leads with {percentage(share)}; "
                   f"the smallest weight is {percent(weights.min())}.")
    return TemperatureResult(temperature=t, weights=weights, top=top, top_share=share,
                             even_share=even, words=len(weights), verdict=verdict)


GAP = 0.01          # between a bar (or the even-split line) and the label above it, in weight
INSIDE_FROM = 0.8   # a bar taller than this holds its label inside, whatever the size of the plot


def label_y(weight: float, even: float, height: float) -> float:
    """Where a bar's label starts: just above the bar, or just above the even-split line when
    the label would otherwise sit across it (a bar a little below the line)."""
    y = weight + GAP
    return even + GAP if y < even + GAP and y + height > even - GAP else y


def _text_points(text) -> float:
    """The height of ``text`` (with a number in it) in points, whatever the figure's size."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(text.figure).get_renderer()
    kept = text.get_text()
    text.set_text("0.20")
    box = text.get_window_extent(renderer)
    text.set_text(kept)
    return float(box.height) * 72 / text.figure.dpi


class TemperatureLab:
    """The view: a "temperature" slider, a bar plot redrawn in place, and the verdict."""

    def __init__(self, temperature: float = 1.0):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.colours = (OKABE_ITO["blue"], OKABE_ITO["orange"])
        self.slider = slider("float", value=temperature, min=T_MIN, max=T_MAX, step=0.05,
                             description="temperature", readout_format=readout(2))
        self.slider.add_class("course-slider-temperature")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        model = temperature_model(temperature)
        self.bars = Bars(ax, range(len(WORDS)), facecolor=self.colours[0], edgecolor="black", linewidth=0.6,
                         label="weight of each word")
        ax.set_xticks(range(len(WORDS)), WORDS)
        self.labels = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=9)
                       for i in range(len(WORDS))]
        even = ax.axhline(model.even_share, color="black", linestyle="--", linewidth=1,
                          label=f"even split (1/{len(WORDS)})")
        ax.set_ylim(0, 1.08)
        ax.set_xlabel(f"word (scores {', '.join(fixed(s, 1) for s in SCORES)}); orange: the largest weight")
        ax.set_ylabel("softmax weight")
        self.title = ax.set_title(f"softmax(scores / {fixed(model.temperature)})")
        ax.legend(handles=[even, self.bars.artist], loc="upper right", fontsize=8, frameon=False)
        fig.tight_layout()
        self.ax = ax
        self.label_points = _text_points(self.labels[0])      # in data units at each update's size
        self.view = FigureView(fig, description="Bar chart of softmax weights for five words",
                               changing=[self.bars.artist, self.labels, self.title])

        self.own = OwnFunctionSwitch([SOFTMAX_USE], self.update)
        self.root = lab_root("temperature", [controls(self.slider), self.own.widget, self.view.widget, self.verdict])
        self.slider.observe(self._on_change, names="value")
        self.update(temperature)

    def _on_change(self, change) -> None:
        self.update(change["new"])

    def update(self, temperature: float | None = None) -> TemperatureResult:
        temperature = self.slider.value if temperature is None else temperature
        model = self.own.run(lambda fn: temperature_model(temperature, softmax_fn=fn))
        self.bars.set(model.weights, [self.colours[1] if i == model.top else self.colours[0]
                                         for i in range(len(model.weights))])
        low, top = self.ax.get_ylim()
        height = self.label_points / (self.ax.bbox.height * 72 / self.ax.figure.dpi) * (top - low)
        for i, w in enumerate(model.weights):
            self.labels[i].set_text(fixed(w))
            inside = w > INSIDE_FROM or w + GAP + height > top   # no room above: the label goes inside the bar
            self.labels[i].set_y(w - GAP if inside else label_y(w, model.even_share, height))
            self.labels[i].set_verticalalignment("top" if inside else "bottom")
        self.title.set_text(f"softmax(scores / {fixed(model.temperature)})")
        self.view.redraw()
        self.verdict.value = plain(model.verdict)
        self.model = model
        return model


def temperature_lab(temperature: float = 1.0):
    """The lab's root widget (classes ``course-lab`` and ``course-lab-temperature``)."""
    return TemperatureLab(temperature).root
