"""The several-heads lab (notebook 01, attention): what several heads of the same total width buy, and
what they cost.

Four tokens, "9 minus 4 is", each a one-hot vector of 4 numbers (9 is [1, 0, 0, 0], ...), go
through one attention layer (``lib.attention.attention``, causal) whose W_K, W_V and W_O are the
identity. The last token, "is", needs both numbers: its query scores 9 and 4 (the sliders) and
the other two tokens 0. With one head of 4 numbers, 9 and 4 share one softmax, whose weights sum
to 1. With two heads of 2 numbers, the same width, head 1 scores only 9 and head 2 only 4: each
has a softmax of its own, and writes into its own 2 numbers of the output. The costs are the
same parameters, one grid of scores per head, and a lower rank per head.

Model: ``several_heads_model`` (a ``HeadsResult``). View: ``SeveralHeadsLab``. Root widget:
``several_heads_lab()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed, number, readout
from engine.presentation.tables import table

from engine.kit.layout import choice, controls, lab_root, numbers_widget, slider, verdict_widget
from engine.kit.result import Result
from lib.attention import attention

TOKENS = ("9", "minus", "4", "is")
D_MODEL = 4
FIRST, SECOND = 0, 2                   # where 9 and 4 stand, and the output's number each one's value fills
SCORE_MIN, SCORE_MAX, SCORE_STEP = 0.0, 8.0, 0.1
HEADS = (1, 2)
TOP, Y_TICKS = 1.5, (0, 0.25, 0.5, 0.75, 1)      # room above the bars for the legends


def constructed_weights(heads: int, first: float, second: float) -> tuple:
    """Wq, Wk, Wv, Wo (4, 4) of the constructed layer: Wk, Wv, Wo the identity; Wq's row of "is"
    gives, after the division by √(head size), the score ``first`` to 9 and ``second`` to 4 (and 0
    to the others) with one head; with two, head 1 scores only 9 (columns 0, 1) and head 2 only 4
    (columns 2, 3)."""
    root = math.sqrt(D_MODEL // heads)
    Wq = np.zeros((D_MODEL, D_MODEL))
    Wq[TOKENS.index("is"), [FIRST, SECOND]] = root * first, root * second
    eye = np.eye(D_MODEL)
    return Wq, eye, eye, eye


@dataclass(frozen=True)
class Cost:
    """What a layer of 4 numbers costs with ``heads`` heads: ``parameters`` in W_Q, W_K, W_V and
    W_O; ``grid_numbers`` the scores of one text of 4 tokens (one 4 x 4 grid per head);
    ``rank`` the largest rank one head's W_Q W_Kᵀ can have (its head size)."""
    heads: int
    parameters: int
    grid_numbers: int
    rank: int


def cost(heads: int) -> Cost:
    size = D_MODEL // heads
    return Cost(heads, 4 * D_MODEL * D_MODEL, heads * len(TOKENS) ** 2, size)


@dataclass(frozen=True)
class HeadsResult(Result):
    """One setting of the lab.

    heads: 1 or 2; first, second: the scores of 9 and of 4.
    weights: (heads, 4) the weights of "is" on the four tokens, one row per head.
    output: (4,) the output of "is" (W_O the identity): number 0 holds what arrived of 9's value,
    number 2 what arrived of 4's. to_first, to_second: the weight on 9 (head 1's) and on 4 (the
    one head's, or head 2's); together: their sum. costs: the ``Cost`` of one head and of two.
    verdict: one sentence from these numbers."""
    heads: int
    first: float
    second: float
    weights: np.ndarray
    output: np.ndarray
    to_first: float
    to_second: float
    together: float
    costs: tuple
    verdict: str


@lru_cache(maxsize=256)
def _run(heads: int, first: float, second: float) -> tuple:
    x = np.eye(D_MODEL)                                          # the 4 tokens, one-hot
    out, weights = attention(x, *constructed_weights(heads, first, second), heads=heads, causal=True,
                             return_weights=True)
    last = weights[:, -1, :].copy()                              # (heads, 4): the weights of "is"
    output = out[-1].copy()
    for array in (last, output):
        array.setflags(write=False)
    return last, output


def several_heads_model(heads: int = 1, first: float = 4.0, second: float = 4.0) -> HeadsResult:
    """The constructed layer with ``heads`` heads (1 or 2), 9 scored ``first`` and 4 ``second``."""
    heads = 2 if heads == 2 else 1
    first, second = (float(np.clip(v, SCORE_MIN, SCORE_MAX)) if np.isfinite(v) else SCORE_MIN
                     for v in (float(first), float(second)))
    weights, output = _run(heads, first, second)
    to_first, to_second = float(weights[0, FIRST]), float(weights[-1, SECOND])
    together = to_first + to_second
    arrived = (f"the output holds {fixed(output[FIRST])} of \u201c9\u201d\u2019s value and {fixed(output[SECOND])} "
               f"of \u201c4\u201d\u2019s")
    if heads == 1:
        verdict = (f"One head of 4 numbers: \u201c9\u201d gets {fixed(to_first)} of its weight and \u201c4\u201d gets "
                   f"{fixed(to_second)}, "
                   f"{fixed(together)} together, as the four tokens share one total of 1; {arrived}.")
    else:
        verdict = (f"Two heads of 2 numbers: head 1 gives \u201c9\u201d {fixed(to_first)} of its weight and head 2 gives \u201c4\u201d "
                   f"{fixed(to_second)}, {fixed(together)} together, as each head has a total of 1 of its own; {arrived}.")
    return HeadsResult(heads, first, second, weights, output, to_first, to_second, together,
                       (cost(1), cost(2)), verdict)


class SeveralHeadsLab:
    """The view: one head or two, and the scores of 9 and of 4; the weights of "is" per head, and
    the output's four numbers; the costs of both layouts in a table."""

    def __init__(self, heads: int = 1, first: float = 4.0, second: float = 4.0):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        self.heads = choice([("1 head of 4 numbers", 1), ("2 heads of 2 numbers", 2)], int(heads), "layer")
        self.first = slider("float", value=first, min=SCORE_MIN, max=SCORE_MAX, step=SCORE_STEP,
                            description="score of 9", readout_format=readout(1))
        self.first.add_class("course-slider-first")
        self.second = slider("float", value=second, min=SCORE_MIN, max=SCORE_MAX, step=SCORE_STEP,
                             description="score of 4", readout_format=readout(1))
        self.second.add_class("course-slider-second")
        self.verdict = verdict_widget()
        self.numbers = numbers_widget()

        fig = new_figure(6.4, 3.3)
        grid = fig.add_gridspec(1, 2, wspace=0.35)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        x = np.arange(len(TOKENS))
        self.one = Bars(left, x, width=0.6, facecolor=OKABE_ITO["blue"], label="the one head")
        self.head1 = Bars(left, x - 0.2, width=0.4, facecolor=OKABE_ITO["sky"], edgecolor="black",
                          linewidth=0.4, label="head 1")
        self.head2 = Bars(left, x + 0.2, width=0.4, facecolor=OKABE_ITO["orange"], edgecolor="black",
                          linewidth=0.4, hatch="//", label="head 2")
        left.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
        left.set_xticks(x, list(TOKENS))
        left.set_xlim(-0.6, len(TOKENS) - 0.4)
        left.set_ylim(0, TOP)
        left.set_yticks(Y_TICKS, [number(t) for t in Y_TICKS])
        left.set_xlabel("the token \u201cis\u201d looks at")
        left.set_ylabel("weight")
        left.legend(handles=[self.one.artist, self.head1.artist, self.head2.artist], loc="upper left",
                    fontsize=8, frameon=False)
        left.set_title("the weights of \u201cis\u201d", fontsize=10)

        self.out = Bars(right, x, width=0.6, facecolor=OKABE_ITO["green"], label="output of \u201cis\u201d")
        full = right.axhline(1.0, color="0.5", linestyle=":", linewidth=1, label="a value in full")
        right.set_xticks(x, [f"from {t}" for t in TOKENS], fontsize=8)
        right.set_xlim(-0.6, len(TOKENS) - 0.4)
        right.set_ylim(0, TOP)
        right.set_yticks(Y_TICKS, [number(t) for t in Y_TICKS])
        right.set_ylabel("number of the output")
        right.legend(handles=[self.out.artist, full], loc="upper left", fontsize=8, frameon=False)
        right.set_title("what arrives (W_O = identity)", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.18)
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Bars: the weights of the last token per head, and its output",
                               changing=[self.one.artist, self.head1.artist, self.head2.artist, self.out.artist])

        self.root = lab_root("several-heads", [controls(self.heads, self.first, self.second), self.view.widget,
                                       self.verdict, self.numbers])
        for control in (self.heads, self.first, self.second):
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def update(self) -> HeadsResult:
        m = several_heads_model(self.heads.value, self.first.value, self.second.value)
        nothing = np.full(len(TOKENS), np.nan)
        self.one.set(m.weights[0] if m.heads == 1 else nothing)
        self.head1.set(m.weights[0] if m.heads == 2 else nothing)
        self.head2.set(m.weights[1] if m.heads == 2 else nothing)
        self.out.set(m.output)
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        rows = [(f"{'1 head of 4' if c.heads == 1 else '2 heads of 2'}" + (" (shown)" if c.heads == m.heads else ""),
                 count(c.parameters), count(c.grid_numbers), count(c.rank)) for c in m.costs]
        self.numbers.value = table(rows, header=["layer", "parameters of W_Q, W_K, W_V, W_O",
                                                 "scores per text of 4 tokens", "rank of a head's W_Q W_K\u1d40, at most"],
                                   mono_columns=(1, 2, 3))
        self.model = m
        return m


def several_heads_lab(**initial):
    """The several-heads lab's root widget (classes ``course-lab`` and ``course-lab-several-heads``)."""
    return SeveralHeadsLab(**initial).root
