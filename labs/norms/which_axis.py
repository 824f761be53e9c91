"""The which-axis lab (notebook 03): LayerNorm over each token's numbers (right) or over each
column of the batch (wrong). Done wrong, changing one token moves the other tokens' results.

Model: ``axis_model`` (``lib.norm.layer_norm``, or the learner's ``layer_norm``). View:
``AxisLab``. Root widget: ``axis_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.presentation.html import plain
from engine.presentation.numbers import fixed, readout
from engine.presentation.tables import table

from engine.kit.figure_view import cell_grid, set_cells
from engine.kit.layout import choice, controls, lab_root, numbers_widget, slider, verdict_widget
from engine.kit.result import Result
from .stack import LAYER_NORM_USE, course_layer_norm

TOKENS = ("the", "cat", "sat", "down")
BATCH = np.array([[0.5, -1.0, 2.0, 0.3],
                  [2.0, 1.5, -0.5, 0.8],
                  [-2.0, 0.4, 1.1, -0.6],
                  [3.5, 4.0, 2.5, 3.0]])
CHANGED = (1, 0)                   # the slider sets cat's first number
AXIS_MODES = {"token": "each token (right)", "column": "each column (wrong)"}


def normalise(x, how: str = "token", eps: float = 1e-5, norm=course_layer_norm):
    """LayerNorm over each token's numbers (how="token", the last axis) or, wrongly, over each
    column of the batch (how="column", the first axis). ``norm(x, eps=...)`` is the LayerNorm
    (the course's, or the learner's)."""
    x = np.asarray(x, dtype=float)
    return norm(x, eps=eps) if how == "token" else norm(x.T, eps=eps).T


@dataclass(frozen=True)
class AxisResult(Result):
    """The batch with cat's first number set, before and after normalising.

    x, out: (tokens, 4) the batch and its normalised copy; means, stds: (tokens,) each token's mean
    and std after normalising. moved_others, moved_own: how far the other tokens' results and
    cat's own moved from those of the batch as it starts (the largest change of a number).
    """
    value: float        # cat's first number
    how: str            # "token" or "column": a key of AXIS_MODES
    x: np.ndarray
    out: np.ndarray
    means: np.ndarray
    stds: np.ndarray
    moved_others: float
    moved_own: float
    verdict: str


def axis_model(value: float = 2.0, how: str = "token", norm=course_layer_norm) -> AxisResult:
    """Normalise BATCH with cat's first number set to ``value``, and compare with the batch as
    it starts. Returns the inputs, outputs, each token's mean and std after normalising, how far
    the other tokens' results moved, and the verdict."""
    how = how if how in AXIS_MODES else "token"
    x = BATCH.copy()
    x[CHANGED] = float(value) if np.isfinite(value) else BATCH[CHANGED]
    out = normalise(x, how, norm=norm)
    base = normalise(BATCH, how, norm=norm)
    others = [i for i in range(len(TOKENS)) if i != CHANGED[0]]
    moved_others = float(np.abs(out[others] - base[others]).max())
    moved_own = float(np.abs(out[CHANGED[0]] - base[CHANGED[0]]).max())
    means, stds = out.mean(axis=-1), out.std(axis=-1)
    name = TOKENS[CHANGED[0]]
    if how == "token":
        summary = (f"Every token now has mean {fixed(abs(means).max())} and std {fixed(stds.min())}: "
                   "each was rescaled using its own numbers only.")
    else:
        summary = (f"The tokens' means now run from {fixed(means.min())} to {fixed(means.max())} and their "
                   f"stds from {fixed(stds.min())} to {fixed(stds.max())}: only the columns were rescaled.")
    if moved_own < 1e-12:
        change = (f"This is the batch as it starts; change {name}'s first number and watch the "
                  "other rows.")
    elif moved_others < 1e-9:
        change = (f"Changing {name}'s first number changed {name}'s own result (by up to "
                  f"{fixed(moved_own)}) and nothing else: the other tokens' results moved by "
                  f"{fixed(moved_others)}.")
    else:
        change = (f"Changing {name}'s first number moved the OTHER tokens' results by up to "
                  f"{fixed(moved_others)}: a token's result now depends on what else is in the batch.")
    return AxisResult(value=float(x[CHANGED]), how=how, x=x, out=out, means=means, stds=stds,
                      moved_others=moved_others, moved_own=moved_own, verdict=f"{change} {summary}")


def axis_table(m: AxisResult) -> str:
    """The batch and its normalised copy as one table: a row per token, its numbers before
    and after, and the mean and std of its normalised numbers."""
    header = ["token", "in", "out", "out's mean, std"]
    rows = [[token, " ".join(fixed(v, 1) for v in m.x[i]), " ".join(fixed(v) for v in m.out[i]),
             f"{fixed(m.means[i])}, {fixed(m.stds[i])}"] for i, token in enumerate(TOKENS)]
    return table(rows, header=header, mono_columns=range(1, 4))     # few columns: fits a phone


class AxisLab:
    """The view: a slider for one of cat's numbers, a right/wrong toggle, input and output grids."""

    def __init__(self, value=2.0, how="token"):
        from matplotlib.colors import TwoSlopeNorm
        from matplotlib.patches import Rectangle

        from engine.kit.figure_view import FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.value = slider("float", value=value, min=-4.0, max=4.0, step=0.5,
                             description=f"{TOKENS[CHANGED[0]]}'s first number", readout_format=readout(1))
        self.how = choice([(label, key) for key, label in AXIS_MODES.items()], how, "normalise")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.2)
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 1], wspace=0.08)
        self.axes = (fig.add_subplot(grid[0]), fig.add_subplot(grid[1]))
        m = axis_model(value, how)
        colour = TwoSlopeNorm(vmin=-3.0, vcenter=0.0, vmax=3.0)
        self.images = []
        for ax, data, title in zip(self.axes, (m.x, m.out), ("the batch", "after normalising")):
            self.images.append(cell_grid(ax, data, cmap="PuOr_r", norm=colour))
            ax.set_xticks(range(data.shape[1]), [f"{j + 1}" for j in range(data.shape[1])])
            ax.set_xlabel("number of the token")
            ax.set_title(title, fontsize=10)
        self.axes[0].set_yticks(range(len(TOKENS)), TOKENS)
        self.axes[1].set_yticks([])
        # The numbers themselves, the means and the stds are in the table under the plot.
        self.numbers = numbers_widget()
        self.marker = self.axes[0].add_patch(Rectangle((CHANGED[1] - 0.5, CHANGED[0] - 0.5), 1, 1,
                                                       fill=False, linewidth=2.5, edgecolor="black"))
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.8, bottom=0.16)
        self.view = FigureView(fig, description="Two grids: a batch of four tokens, and the batch after normalising",
                               changing=[self.images, self.marker])
        self.own = OwnFunctionSwitch([LAYER_NORM_USE], self.update)
        self.root = lab_root("axis", [controls(self.value, self.how), self.own.widget, self.view.widget,
                                      self.numbers, self.verdict])
        self.value.observe(lambda _c: self.update(), names="value")
        self.how.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> AxisResult:
        value, how = self.value.value, self.how.value
        m = self.own.run(lambda norm: axis_model(value, how, norm=norm))
        for image, data in zip(self.images, (m.x, m.out)):
            set_cells(image, data)
        self.numbers.value = axis_table(m)
        # The title changes only with the mode: it is static, and each mode keeps its background.
        self.suptitle.set_text("LayerNorm over " + ("each token's numbers (rows)" if m.how == "token"
                                                      else "each column, across the tokens"))
        self.view.redraw(state=m.how)
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def axis_lab(**initial):
    """The which-axis lab's root widget (class ``course-lab-axis``)."""
    return AxisLab(**initial).root
