"""The scale-factor lab (notebook 01): the words are multiplied by a factor before their position
rows are added. The factor sets the size of the word against the size of the position in the input,
and so whether attention's outputs follow the words or their places when the sentence is reordered.

Model: ``scaling_model`` (``lib.attention.attention`` on the shuffle lab's words and weights).
View: ``ScalingLab``. Root widget: ``scaling_lab()``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from lib.attention import attention
from engine.presentation.html import plain
from engine.presentation.numbers import number, percent

from engine.kit.figure_view import set_limits
from engine.kit.layout import controls, lab_root, pick_slider, verdict_widget
from engine.kit.result import Result
from .shuffle import D_MODEL, PERMUTATIONS, WK, WO, WORDS, WQ, WV, X
from .table import TABLE_USE, course_table

FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
USUAL = math.sqrt(D_MODEL)                 # the factor sqrt(d_model) many models use: 2 here
_X = [math.log2(f) for f in FACTORS]       # where the plots put each factor


def _outputs(words, factor, positions):
    """Attention (no mask) on the words times ``factor`` plus their position rows."""
    return attention(words * factor + positions, WQ, WK, WV, WO, heads=1, causal=False)


def _measure(factor, positions) -> tuple[float, float, float]:
    """(word share, moved matched by word, moved matched by place) at one factor.

    The word share is |w|² / (|w|² + |p|²), w the scaled words and p the position rows (not a
    share of |w + p|²). The other two are averages
    over the five reorderings of the sentence: how far each word's output moves (compared with
    that word's output before) and how far each row's output moves (compared with the same row
    before), as shares of the mean length of an output."""
    words = X * factor
    word_share = float((words ** 2).sum() / ((words ** 2).sum() + (positions ** 2).sum()))
    before = _outputs(X, factor, positions)
    length = float(np.linalg.norm(before, axis=-1).mean())
    by_word, by_place = [], []
    for order in PERMUTATIONS[1:]:
        after = _outputs(X[list(order)], factor, positions)
        rows = [order.index(w) for w in range(len(WORDS))]          # where each word went
        by_word.append(np.linalg.norm(after[rows] - before, axis=-1).mean() / length)
        by_place.append(np.linalg.norm(after - before, axis=-1).mean() / length)
    return word_share, float(np.mean(by_word)), float(np.mean(by_place))


@functools.lru_cache(maxsize=8)
def _curves(positions: bytes, shape: tuple) -> np.ndarray:
    """:func:`_measure` at every factor of FACTORS, one row each; the same for every setting of
    the slider, so kept for the last few position tables seen."""
    rows = np.frombuffer(positions).reshape(shape)
    curves = np.array([_measure(f, rows) for f in FACTORS])
    curves.flags.writeable = False
    return curves


def factor_label(factor: float) -> str:
    """"×0.25", "×2 = √d_model"."""
    return f"\u00d7{number(factor)}" + (" = \u221ad_model" if factor == USUAL else "")


@dataclass(frozen=True)
class ScalingResult(Result):
    """What the outputs follow at one scale factor, and across every factor of FACTORS.

    word_share: the words' share of |w|² + |p|²; by_word, by_place: the mean change of the
    outputs after a reordering matched by word and matched by place (shares of an output's
    length). factors, share_curve, by_word_curve, by_place_curve: (len(FACTORS),) the same three
    numbers at every factor (the curves).
    """
    factor: float
    word_share: float
    position_share: float   # 1 - word_share
    by_word: float
    by_place: float
    follows: str            # "words" or "positions"
    finite: bool            # False when the outputs overflowed
    factors: np.ndarray
    share_curve: np.ndarray
    by_word_curve: np.ndarray
    by_place_curve: np.ndarray
    verdict: str


def scaling_model(factor=USUAL, table=course_table) -> ScalingResult:
    """Word share and what the outputs follow, at one scale factor and across all of FACTORS.

    factor: the number the words are multiplied by (kept within FACTORS' range; not a positive
            number means sqrt(d_model)). ``table(length, d_model)`` makes the position table (the
            course's sinusoidal one, or the learner's).
    Returns the factor, the word and position shares of |w|² + |p|² (see _measure), the mean
    change of the outputs after a reordering matched by word and matched by place (shares of an
    output's length), what the outputs follow, the same three numbers for every factor of FACTORS
    (the curves), and the verdict.
    """
    try:
        factor = float(factor)
    except (TypeError, ValueError):
        factor = USUAL
    if not math.isfinite(factor) or factor <= 0:
        factor = USUAL
    factor = min(max(factor, FACTORS[0]), FACTORS[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        positions = np.asarray(table(len(WORDS), D_MODEL), dtype=float)[:len(WORDS)]
        share, by_word, by_place = _measure(factor, positions)
        curves = _curves(positions.tobytes(), positions.shape)             # (len(FACTORS), 3)
    finite = bool(np.all(np.isfinite(curves)) and math.isfinite(by_word) and math.isfinite(by_place))
    follows = "words" if by_word < by_place else "positions"
    if not finite:
        verdict = "The outputs overflowed, so they cannot be compared."
    else:
        other = "positions" if follows == "words" else "words"
        keeps = ("a word's output stays closer to itself wherever the word goes" if follows == "words"
                 else "the output at each place stays closer to itself whatever word stands there")
        if min(by_word, by_place) > 0.5:
            follow_words = (f"Either way the outputs move by more than half an output's length: they follow "
                            f"neither the words nor the positions alone, the {follows} a little more.")
        else:
            follow_words = f"The outputs follow the {follows} more than the {other}: {keeps}."
        verdict = (f"Scale factor {factor_label(factor)}: of the words' and the positions' squared "
                   f"lengths added, the words hold {percent(share)} and the positions "
                   f"{percent(1 - share)}. Reorder the "
                   f"sentence and each word's output moves by {percent(by_word)} of an output's "
                   f"length on average, while the output at each place moves by {percent(by_place)}. "
                   + follow_words)
    return ScalingResult(factor=factor, word_share=share, position_share=1 - share, by_word=by_word,
                         by_place=by_place, follows=follows, finite=finite, factors=np.array(FACTORS),
                         share_curve=curves[:, 0], by_word_curve=curves[:, 1], by_place_curve=curves[:, 2],
                         verdict=verdict)


class ScalingLab:
    """The view: a scale-factor slider; the word share, and how far the outputs move when
    matched by word and by place, against the factor, with the current factor marked."""

    def __init__(self, factor=USUAL):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        start = min(FACTORS, key=lambda f: abs(f - float(factor)))
        self.factor = pick_slider([(factor_label(f), f) for f in FACTORS], start, "scale factor")
        self.factor.add_class("course-slider-scale")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.3)
        share_ax, moved_ax = fig.subplots(1, 2)
        word_colour, place_colour = OKABE_ITO["blue"], OKABE_ITO["orange"]
        curve = scaling_model(start)
        (self.share_line,) = share_ax.plot(_X, 100 * curve.share_curve, "-o", color=word_colour,
                                           ms=4, label="words")
        (self.place_share_line,) = share_ax.plot(_X, 100 - 100 * curve.share_curve, "--s",
                                                 color=place_colour, ms=4, label="positions")
        (self.share_marker,) = share_ax.plot([], [], "o", ms=10, mfc="none", mec="black", mew=1.5,
                                            linestyle="none")
        share_ax.set_ylim(0, 100)
        share_ax.set_ylabel("share of |w|\u00b2 + |p|\u00b2 (%)")
        share_ax.set_title("what the input is made of", fontsize=10)
        (self.word_line,) = moved_ax.plot(_X, 100 * curve.by_word_curve, "-o", color=word_colour,
                                          ms=4, label="matched by word")
        (self.place_line,) = moved_ax.plot(_X, 100 * curve.by_place_curve, "--s", color=place_colour,
                                           ms=4, label="matched by place")
        (self.moved_marker,) = moved_ax.plot([], [], "o", ms=10, mfc="none", mec="black", mew=1.5,
                                             linestyle="none")
        moved_ax.set_ylabel("output moved after a reordering (%)")
        moved_ax.set_title("what the outputs follow", fontsize=10)
        for ax, where in ((share_ax, "center left"), (moved_ax, "upper left")):
            ax.set_xticks(_X)                       # the factors double: evenly spaced on log2
            ax.set_xticklabels([number(f) for f in FACTORS])
            ax.set_xlabel("scale factor")
            ax.tick_params(labelsize=8)
            ax.legend(fontsize=8, loc=where, frameon=False)
        self.cursors = [ax.axvline(math.log2(start), color="0.5", lw=1, ls=":") for ax in (share_ax, moved_ax)]
        self.share_ax, self.moved_ax = share_ax, moved_ax
        fig.tight_layout()
        self.view = FigureView(fig, description="Word share and output movement against the scale factor",
                               changing=[self.share_line, self.place_share_line, self.share_marker,
                                         self.word_line, self.place_line, self.moved_marker, self.cursors])

        self.own = OwnFunctionSwitch([TABLE_USE], self._on_change)
        self.root = lab_root("scaling", [controls(self.factor), self.own.widget, self.view.widget,
                                         self.verdict])
        self.factor.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, _change=None) -> None:
        self.update()

    def update(self) -> ScalingResult:
        factor = self.factor.value
        model = self.own.run(lambda table: scaling_model(factor, table=table), TABLE_USE.exercise)
        shares = 100 * np.nan_to_num(model.share_curve)
        self.share_line.set_ydata(shares)
        self.place_share_line.set_ydata(100 - shares)
        x = math.log2(model.factor)
        self.share_marker.set_data([x] * 2,
                                   [100 * model.word_share, 100 * model.position_share])
        by_word, by_place = (100 * np.nan_to_num(model[k]) for k in ("by_word_curve", "by_place_curve"))
        self.word_line.set_ydata(by_word)
        self.place_line.set_ydata(by_place)
        self.moved_marker.set_data([x] * 2, [100 * model.by_word, 100 * model.by_place])
        top = max(float(np.max(by_word)), float(np.max(by_place)), 1.0) * 1.15   # moves only with the table
        set_limits(self.moved_ax, y=(0, top))
        for cursor in self.cursors:
            cursor.set_xdata([x] * 2)
        self.view.redraw(state=top)
        self.verdict.value = plain(model.verdict)
        self.model = model
        return model


def scaling_lab(**initial):
    """The scale-factor lab's root widget (class ``course-lab-scaling``)."""
    return ScalingLab(**initial).root
