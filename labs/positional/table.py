"""The position-table lab (notebook 01): the sinusoidal table for any d_model and length, one row
picked out, and its fastest and slowest pairs drawn as the hands of a clock.

Model: ``position_table_model`` (``lib.positional.sinusoidal``, or the learner's table function).
View: ``PositionTableLab``. Root widget: ``position_table_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.own import Use
from lib.positional import sinusoidal
from engine.presentation.html import code, plain, text_block
from engine.presentation.numbers import article, fixed, plural, significant

from engine.kit.figure_view import whole_ticks
from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.kit.result import Result


def course_table(length, d_model):
    """The course's position table, in the signature of the learner's ``sinusoidal_table``."""
    return sinusoidal(length, d_model)


# The exercise whose function this lab and the shuffle lab can run instead of the course's
# (see engine/kit/own_function.py).
TABLE_USE = Use("position-table", course_table, "lib.positional.sinusoidal")

D_MAX, LENGTH_MAX = 64, 64
# The heatmap's frame, columns and rows: the smallest of FRAMES that holds the table, so the table
# fills at least half of each side (a quarter for length 1) and a slider that stays inside a frame
# redraws only the table. Each frame is a static state of the view: the first time a frame is
# shown it is drawn in full, and going back to it redraws only the table.
FRAMES = (4, 8, 16, 32, 64)


def frame(size: int) -> int:
    """The smallest of FRAMES that holds ``size`` columns or rows."""
    return next((f for f in FRAMES if size <= f), FRAMES[-1])


def _even(d) -> int:
    return max(2, 2 * (int(d) // 2))


@dataclass(frozen=True)
class PositionTableResult(Result):
    """The sinusoidal table, one of its rows and that row's fastest and slowest pairs.

    table: (length, d_model); speeds, angles: (d_model / 2,) each pair's radians per position and
    its angle at ``row``; values: (d_model,) the row.
    """
    d_model: int
    length: int
    row: int
    table: np.ndarray
    speeds: np.ndarray
    base: float
    turns: float                # the fast pair's angle at the row, in turns
    fast_columns: tuple         # (0, 1)
    slow_columns: tuple         # (d_model - 2, d_model - 1)
    exponent: tuple             # the slowest speed is base^(exponent[0] / exponent[1])
    angles: np.ndarray
    values: np.ndarray
    fast: tuple                 # the row's two numbers of the fast pair
    slow: tuple                 # and of the slowest pair
    verdict: str


def position_table_model(d_model=8, length=16, row=3, base=10000.0, table=None) -> PositionTableResult:
    """The sinusoidal table for the sliders, the selected row and its fastest and slowest pairs.

    Odd d_model is taken down to the even number below; row is kept inside the table.
    ``table(length, d_model)`` makes the table at base 10000 (default: ``lib.positional.sinusoidal``
    at ``base``); the learner's function can be passed here.
    """
    d = _even(d_model)
    length = max(1, int(length))
    row = min(max(0, int(row)), length - 1)
    table = sinusoidal(length, d, base) if table is None else table(length, d)
    speeds = base ** (-np.arange(0, d, 2) / d)                    # radians per position, per pair
    angles = row * speeds
    last = d // 2 - 1
    turns = angles[0] / (2 * np.pi)
    verdict = (f"Position {row} of {article(length)} {length} \u00d7 {d} table: the fast pair (columns 0, 1) has "
               f"turned {fixed(angles[0])} radians ({fixed(turns)} turns)")
    if last:
        verdict += (f", the slowest pair (columns {d - 2}, {d - 1}) only {fixed(angles[last], 4)}: it turns "
                    f"{significant(speeds[last], 4)} radians per position, {fixed(base, 0)}^(\u2212{d - 2}/{d}).")
    else:
        verdict += "; with d_model = 2 that is the only pair, so the row is [sin(pos), cos(pos)]."
    return PositionTableResult(d_model=d, length=length, row=row, table=table, speeds=speeds, base=base,
                               turns=turns, fast_columns=(0, 1), slow_columns=(d - 2, d - 1),
                               exponent=(-(d - 2), d), angles=angles, values=table[row],
                               fast=(table[row, 0], table[row, 1]), slow=(table[row, d - 2], table[row, d - 1]),
                               verdict=verdict)


def _row_readout(model) -> str:
    values = model.values
    shown = [fixed(v) for v in values[:8]]
    if len(values) > 8:
        shown = shown[:4] + ["\u2026"] + [fixed(v) for v in values[-4:]]
    text = f"PE[{model.row}] = [{', '.join(shown)}]"
    return text_block(code(text))


class PositionTableLab:
    """The view: sliders for d_model, length and row; the heatmap and a clock with two hands."""

    def __init__(self, d_model=8, length=16, row=3):
        import ipywidgets as widgets
        from matplotlib.patches import Circle, Rectangle

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.d_slider = slider("int", value=_even(d_model), min=2, max=D_MAX, step=2, description="d_model")
        self.d_slider.add_class("course-slider-d-model")
        self.length_slider = slider("int", value=length, min=1, max=LENGTH_MAX, description="length")
        self.length_slider.add_class("course-slider-length")
        self.row_slider = slider("int", value=min(row, length - 1), min=0, max=length - 1,
                                 description="position (row)")
        self.row_slider.add_class("course-slider-row")
        self.readout = widgets.HTML()
        self.readout.add_class("course-row-readout")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.5, 1])
        ax, clock = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        # Nearest-neighbour cells are the same pixels whether the table or its colours are
        # resampled; resampling the table (one number per cell, not four) draws twice as fast.
        self.image = ax.imshow(np.zeros((length, _even(d_model))), cmap="PuOr_r", vmin=-1, vmax=1,
                               aspect="auto", interpolation="nearest", interpolation_stage="data")
        bar = fig.colorbar(self.image, ax=ax, fraction=0.06, pad=0.03)
        bar.ax.tick_params(labelsize=9)
        self.highlight = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor=OKABE_ITO["black"],
                                   linewidth=2)
        ax.add_patch(self.highlight)
        self.ax = ax
        self._frame(_even(d_model), length)
        ax.set_xlabel("column: fast pairs left, slow right")
        ax.set_ylabel("position")
        ax.tick_params(labelsize=9)
        self.title = ax.set_title("PE: 16 positions \u00d7 8 numbers", fontsize=10)

        clock.add_patch(Circle((0, 0), 1, fill=False, edgecolor="0.6", linewidth=1))
        for k in range(12):
            a = 2 * np.pi * k / 12
            clock.plot([0.9 * np.sin(a), np.sin(a)], [0.9 * np.cos(a), np.cos(a)], color="0.6", lw=1)
        (self.fast_hand,) = clock.plot([0, 0], [0, 1], color=OKABE_ITO["vermillion"], lw=3,
                                       solid_capstyle="round", label="fast: pair 0")
        (self.slow_hand,) = clock.plot([0, 0], [0, 1], color=OKABE_ITO["blue"], lw=3, ls="--",
                                       solid_capstyle="round", label="slow: last pair")
        clock.plot([0], [0], "o", color="black", ms=4)
        clock.set_xlim(-1.15, 1.15)
        clock.set_ylim(-1.15, 1.15)
        clock.set_xticks([-1, 0, 1])      # the limits never change: fixed ticks redraw faster
        clock.set_yticks([-1, 0, 1])
        clock.set_aspect("equal")
        clock.set_xlabel("sin (even column)")
        clock.set_ylabel("cos (odd column)")
        clock.tick_params(labelsize=9)
        self.clock_title = clock.set_title("the hands at position 0\n(slow: pair 3)", fontsize=10)
        # Under the clock: inside it, a hand can point at any place the legend could take.
        self.legend = clock.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=8, ncol=1,
                                   frameon=False, handlelength=1.5)
        fig.tight_layout()
        self.view = FigureView(fig, description="Heatmap of the sinusoidal position table and a clock",
                               changing=[self.image, self.highlight, self.title, self.fast_hand,
                                         self.slow_hand, self.clock_title])

        self.own = OwnFunctionSwitch([TABLE_USE], self._on_change)
        self.root = lab_root("position-table", [controls(self.d_slider, self.length_slider, self.row_slider),
                                                self.own.widget, self.view.widget, self.readout, self.verdict])
        self.d_slider.observe(self._on_change, names="value")
        self.length_slider.observe(self._on_length, names="value")
        self.row_slider.observe(self._on_change, names="value")
        self.update()

    def _frame(self, d: int, length: int) -> None:
        """Fit the heatmap's frame to the table (a full draw only the first time a frame is shown)."""
        columns, rows = frame(d), frame(length)
        if getattr(self, "_framed", None) == (columns, rows):
            return
        self.ax.set_xlim(-0.5, columns - 0.5)            # fixed: the table never rescales them
        self.ax.set_ylim(rows - 0.5, -0.5)
        whole_ticks(self.ax.xaxis, 0, columns - 1)
        whole_ticks(self.ax.yaxis, 0, rows - 1)
        self._framed = (columns, rows)

    def _on_length(self, change) -> None:
        self._updating = True
        self.row_slider.max = max(0, int(change["new"]) - 1)     # clamps the row's value too
        self._updating = False
        self.update()

    def _on_change(self, _change=None) -> None:
        if not getattr(self, "_updating", False):
            self.update()

    def update(self) -> PositionTableResult:
        d, length, row = self.d_slider.value, self.length_slider.value, self.row_slider.value
        model = self.own.run(lambda table: position_table_model(d, length, row, table=table))
        d, length, row = model.d_model, model.length, model.row
        self._frame(d, length)
        self.image.set_data(model.table)
        self.image.set_extent((-0.5, d - 0.5, length - 0.5, -0.5))
        self.highlight.set_bounds(-0.5, row - 0.5, d, 1)
        self.title.set_text(f"PE: {plural(length, 'position')} \u00d7 {plural(d, 'number')}")
        for hand, (s, c) in ((self.fast_hand, model.fast), (self.slow_hand, model.slow)):
            hand.set_data([0, s], [0, c])
        self.clock_title.set_text(f"the hands at position {row}\n(slow: pair {d // 2 - 1})")
        self.view.redraw(state=self._framed)
        self.readout.value = _row_readout(model)
        self.verdict.value = plain(model.verdict)
        self.model = model
        return model


def position_table_lab(**initial):
    """The position-table lab's root widget (class ``course-lab-position-table``)."""
    return PositionTableLab(**initial).root
