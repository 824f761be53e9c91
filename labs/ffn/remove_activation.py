"""The remove-the-activation lab (notebook 02): without its activation a feed-forward network of
any width is exactly one matrix W_up @ W_down plus a bias; with ReLU it bends wherever a hidden unit
switches on or off.

Model: ``collapse_model`` (``lib.ffn.ffn`` and ``lib.ffn.collapse``, or the learner's
``one_matrix``). View: ``RemoveActivationLab``. Root widget: ``remove_activation_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.core.own import Use
from lib.ffn import collapse, ffn, worked_example
from engine.presentation.html import plain
from engine.presentation.numbers import count, number, plural, scientific, vector
from engine.presentation.tables import table

from engine.kit.figure_view import set_limits
from engine.kit.layout import choice, controls, lab_root, numbers_widget, slider, verdict_widget
from engine.kit.result import Result
from .hidden_units import ACTIVATION_NAMES, EXAMPLE, TOKENS

WIDTH_MIN, WIDTH_MAX, WIDTH_STEP = 4, 64, 4

PATH = np.linspace(-2.0, 4.0, 241)          # t: cat at 0, dog at 1, car at 2 on x = (2 - t, t)


@lru_cache(maxsize=1)
def _wide_weights():
    """The worked example's four hidden units, then 60 more drawn once (seed 2)."""
    e = worked_example()
    rng = np.random.default_rng(2)
    extra = WIDTH_MAX - 4
    W_up = np.hstack([e.W_up, rng.normal(0.0, 1.0, (2, extra))])
    b_up = np.concatenate([e.b_up, rng.normal(0.0, 1.5, extra)])
    W_down = np.vstack([e.W_down, rng.normal(0.0, 0.4, (extra, 2))])
    return W_up, b_up, W_down, e.b_down.copy()


def ffn_weights(width: int):
    """W_up, b_up, W_down, b_down of the lab's FFN of the given hidden width (4 = the worked example)."""
    width = int(np.clip(int(width), 1, WIDTH_MAX))
    W_up, b_up, W_down, b_down = _wide_weights()
    return W_up[:, :width].copy(), b_up[:width].copy(), W_down[:width].copy(), b_down.copy()


D_MODEL = 2                 # the worked example's tokens have 2 numbers
ONE_MATRIX_BELOW = 1e-12    # a largest difference below this: rounding, the FFN is one matrix


def course_one_matrix(W_up, b_up, W_down, b_down):
    """``lib.ffn.collapse`` in the signature of the exercise's ``one_matrix``: W with b below it,
    (d_model + 1, d_out)."""
    W, b = collapse(W_up, b_up, W_down, b_down)
    return np.vstack([W, b])


# The exercise whose function draws the lab's one-matrix lines (see engine/kit/own_function.py).
ONE_MATRIX_USE = Use("one-matrix", course_one_matrix, "lib.ffn.collapse")


def _path_inputs(t):
    t = np.asarray(t, dtype=float)
    return np.stack([2.0 - t, t], axis=-1)


@dataclass(frozen=True)
class CollapseResult(Result):
    """The FFN of one width, with or without its activation, against one matrix W_up @ W_down.

    t: (points,) where on the line through cat, dog and car; along, straight: (points, d_model)
    the FFN's output there and that of x @ W + b. tokens_out, tokens_one: (3, d_model) the same
    for the three tokens. W: (d_model, d_model), b: (d_model,) the collapsed matrix and bias.
    bends: (bend_count,) where along the line a hidden unit crosses zero.
    """
    width: int
    activation: str             # "none" for no activation
    t: np.ndarray
    along: np.ndarray
    straight: np.ndarray
    tokens_out: np.ndarray
    tokens_one: np.ndarray
    W: np.ndarray
    b: np.ndarray
    difference: float           # the largest difference between the FFN and x @ W + b
    matches: bool               # difference < one_matrix_below
    bends: np.ndarray
    parameters: int             # the FFN's
    collapsed_parameters: int   # W's and b's
    bend_count: int
    d_model: int
    one_matrix_below: float
    verdict: str


def collapse_model(width: int = 4, activation: str = "relu", one_matrix=course_one_matrix) -> CollapseResult:
    """The FFN of the given width with or without its activation, against one matrix W_up @ W_down.

    Returns the outputs along the line through cat, dog and car (``path``), the collapsed
    matrix and bias, the largest difference between the FFN and ``x @ W + b`` on the three tokens
    and along the line, the bends (where a hidden unit crosses zero) and the parameter counts.
    ``one_matrix(W_up, b_up, W_down, b_down)`` gives W with b below it (the learner's, or the
    course's).
    """
    width = int(np.clip(int(width), 1, WIDTH_MAX))
    activation = "none" if activation in (None, "none") else activation
    W_up, b_up, W_down, b_down = ffn_weights(width)
    stacked = np.asarray(one_matrix(W_up, b_up, W_down, b_down), dtype=float)    # (d_model + 1, d_out)
    W, b = stacked[:-1], stacked[-1]
    inputs = _path_inputs(PATH)
    along = ffn(inputs, W_up, b_up, W_down, b_down, activation=activation)
    straight = inputs @ W + b
    tokens_out = ffn(EXAMPLE.X, W_up, b_up, W_down, b_down, activation=activation)
    tokens_one = EXAMPLE.X @ W + b
    difference = float(max(np.max(np.abs(tokens_out - tokens_one)), np.max(np.abs(along - straight))))
    # Hidden unit j along the line: (2 - t) W_up[0, j] + t W_up[1, j] + b_up[j] = a_j + s_j t.
    a, s = 2.0 * W_up[0] + b_up, W_up[1] - W_up[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = np.where(np.abs(s) > 1e-12, -a / s, np.nan)
    inside = np.isfinite(crossing) & (crossing > PATH[0]) & (crossing < PATH[-1])
    bends = np.unique(np.round(crossing[inside], 9)) if activation != "none" else np.array([])
    parameters = 2 * 2 * width + width + 2
    collapsed_parameters = W.size + b.size
    matches = difference < ONE_MATRIX_BELOW
    if activation == "none":
        verdict = (f"Without an activation the width-{width} FFN ({count(parameters)} parameters) is "
                   f"exactly one {D_MODEL} × {D_MODEL} matrix W_up @ W_down plus a bias "
                   f"({plural(collapsed_parameters, 'parameter')}): the two differ by at most "
                   f"{scientific(difference)}{' (below ' + scientific(ONE_MATRIX_BELOW, 0) + ')' if matches else ''}. "
                   "Along the line the output is straight, "
                   "however wide the layer is.")
    else:
        act = ACTIVATION_NAMES.get(activation, str(activation))
        n = len(bends)
        verdict = (f"With {act} the width-{width} FFN ({count(parameters)} parameters) bends at "
                   f"{plural(n, 'point')} along the line, so it is not one matrix: it differs "
                   f"from x @ (W_up @ W_down) + b by up to {number(difference)}.")
    return CollapseResult(width=width, activation=activation, t=PATH, along=along, straight=straight,
                          tokens_out=tokens_out, tokens_one=tokens_one, W=W, b=b,
                          difference=difference, matches=matches, bends=bends, parameters=parameters,
                          collapsed_parameters=collapsed_parameters, bend_count=len(bends), d_model=D_MODEL,
                          one_matrix_below=ONE_MATRIX_BELOW, verdict=verdict)


SCALES = (5.0, 10.0, 20.0, 40.0, 80.0)


@lru_cache(maxsize=32)
def output_range(width: int) -> tuple:
    """The plot's vertical range at a width: the first of ±SCALES that holds both outputs and
    their one-matrix lines with and without the activation (so switching it keeps the scale),
    with room above for the legend. Returns (low, high)."""
    top = max(float(np.abs(getattr(collapse_model(width, activation), key)).max())
              for activation in ("relu", "none") for key in ("along", "straight"))
    scale = next((s for s in SCALES if top <= s), float(np.ceil(top)))
    return -1.15 * scale, 1.6 * scale


class RemoveActivationLab:
    """Width slider and activation switch; two output curves and their one-matrix versions."""

    def __init__(self, width: int = 4, activation: str = "relu"):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.width = slider("int", value=width, min=WIDTH_MIN, max=WIDTH_MAX, step=WIDTH_STEP,
                            description="hidden width d_ff")
        self.width.add_class("course-slider-width")
        self.activation = choice([("with ReLU", "relu"), ("activation removed", "none")], activation,
                                 "activation")
        self.numbers = numbers_widget()
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.4)
        ax = fig.add_subplot()
        colours = (OKABE_ITO["blue"], OKABE_ITO["orange"])
        self.curves, self.lines = [], []
        for k, colour in enumerate(colours):
            (curve,) = ax.plot(PATH, np.zeros_like(PATH), color=colour, linewidth=2.2,
                               label=f"FFN output {k + 1}")
            (line,) = ax.plot(PATH, np.zeros_like(PATH), color=colour, linestyle="--", linewidth=1.2)
            self.curves.append(curve)
            self.lines.append(line)
        ax.plot([], [], color="black", linestyle="--", linewidth=1.2, label="dashed: x @ (W_up @ W_down) + b")
        self.bend_marks = ax.vlines([], 0, 1, colors=OKABE_ITO["vermillion"], linewidth=1.6,
                                    label="a unit switches")
        for t, name in enumerate(TOKENS):
            ax.axvline(t, color="grey", linewidth=0.6)
        self.token_labels = [ax.text(t, 0, name, ha="center", va="bottom", fontsize=9)
                             for t, name in enumerate(TOKENS)]
        ax.set_xlim(PATH[0], PATH[-1])
        ax.set_xlabel("input along the line x = (2 − t, t): cat at t = 0, dog at 1, car at 2")
        ax.set_ylabel("output number")
        self.title = ax.set_title("FFN of width 4, with ReLU: 22 parameters", fontsize=10)
        ax.legend(loc="upper left", fontsize=8, frameon=False, ncol=2)
        ax.set_ylim(*output_range(width))
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Line plot of the FFN's two outputs along a line of "
                                                "inputs, with the single-matrix version dashed",
                               changing=[self.curves, self.lines, self.bend_marks, self.title])
        self.own = OwnFunctionSwitch([ONE_MATRIX_USE], self.update)
        self.root = lab_root("remove-activation", [controls(self.width, self.activation), self.own.widget,
                                                   self.view.widget, self.numbers, self.verdict])
        self.width.observe(self._on_change, names="value")
        self.activation.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> CollapseResult:
        width, activation = self.width.value, self.activation.value
        m = self.own.run(lambda one_matrix: collapse_model(width, activation, one_matrix))
        for k in range(2):
            self.curves[k].set_ydata(m.along[:, k])
            self.lines[k].set_ydata(m.straight[:, k])
        low, high = output_range(m.width)
        set_limits(self.ax, y=(low, high))
        for text in self.token_labels:
            text.set_y(low + 0.08 * (high - low))
        self.bend_marks.set_segments([[(t, low), (t, low + 0.06 * (high - low))] for t in m.bends])
        state = "with ReLU" if m.activation != "none" else "activation removed"
        self.title.set_text(f"FFN of width {m.width}, {state}: {count(m.parameters)} parameters")
        self.view.redraw(state=(low, high))
        W, b = m.W, m.b
        self.numbers.value = table([
            ("W_up @ W_down (one 2 × 2 matrix)", f"[{vector(W[0])}, {vector(W[1])}]"),
            ("b_up @ W_down + b_down", vector(b)),
            ("largest |FFN − one matrix|",
             scientific(m.difference) if m.difference < 1e-3 else number(m.difference)),
            ("parameters: FFN / one matrix", f"{count(m.parameters)} / {m.collapsed_parameters}"),
        ])
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def remove_activation_lab(width: int = 4, activation: str = "relu"):
    """The remove-the-activation lab's root widget (class ``course-lab``)."""
    return RemoveActivationLab(width, activation).root
