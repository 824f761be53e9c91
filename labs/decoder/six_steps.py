"""The six-steps lab (notebook 04): 4 tokens of 4 numbers through one pre-norm block, one step at
a time (norm, attention, add, norm, feed-forward, add), with the typical size (root mean square)
of every grid.

Model: ``six_steps_model`` (``lib.block.block_trace``). View: ``SixStepsLab``. Root widget:
``six_steps_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.attention import attention
from lib.block import SIX_STEP_OPTIONS, Step, block_trace, six_step_setup
from lib.norm import root_mean_square
from engine.presentation.html import plain, strong
from engine.presentation.numbers import count, fixed, percentage, plural, vector
from engine.presentation.tables import table

from engine.kit.figure_view import cell_grid, set_cells, set_limits
from engine.kit.layout import caption_widget, controls, lab_root, numbers_widget, slider, verdict_widget
from engine.kit.result import Result

STEP_EXPLAINED = {
    Step.INPUT: "the tokens as they enter the block",
    Step.ATTENTION_NORM: "a normalised copy for attention to read",
    Step.ATTENTION: "attention's output: each row a mix of the value rows, through Wo",
    Step.ATTENTION_ADD: "the stream: input + attention",
    Step.FFN_NORM: "a normalised copy for the FFN to read",
    Step.FFN: "the FFN's output, each row on its own",
    Step.FFN_ADD: "the block's output: stream + FFN",
}
N_STEPS = 6


def _setup(seed):
    return six_step_setup() if seed is None else six_step_setup(int(seed))


def _change(before: str, after: str) -> str:
    """How a size moved, in words, from the two sizes as shown (two decimals)."""
    if float(after) > float(before):
        return f"grows from {before} to {after}"
    if float(after) < float(before):
        return f"shrinks from {before} to {after}"
    return f"keeps its size, {after}"


@dataclass(frozen=True)
class SixStepsResult(Result):
    """The six-step example's grid after every step, and a verdict about the chosen one.

    grids: (7, tokens, width) the input and the grid after each step; sizes: (7,) their sizes
    (RMS); attention_weights: (tokens, tokens) attention's weights (one head).
    """
    step: int                   # 0 = the input, 6 = the block's output
    seed: int | None            # None: the notebook's example
    keys: list                  # the seven lib.block Steps, in order
    names: list                 # their labels
    grids: np.ndarray
    sizes: np.ndarray
    attention_weights: np.ndarray
    hidden_on: int              # the FFN's hidden units that are positive before GELU
    hidden_total: int
    d_ff: int
    tokens: int
    width: int
    numbers: int                # tokens · width
    row_size: float             # the smallest row size after step 1
    source_token: int           # where token 1 takes most of its mix from (from 1)
    key: Step                   # the chosen step
    name: str                   # and its label
    verdict: str


def six_steps_model(step: int = N_STEPS, seed: int | None = None) -> SixStepsResult:
    """The grid after ``step`` (0 = the input, 6 = the block's output) of the six-step example.

    seed None is the notebook's example (``lib.block.six_step_setup()``); another seed draws
    other tokens and weights the same way. Returns every grid, its size (RMS), the attention
    weights, the FFN's hidden units that are on, and a verdict about the chosen step.
    """
    step = int(np.clip(int(step), 0, N_STEPS))
    X, weights = _setup(seed)
    trace = block_trace(X, weights, **SIX_STEP_OPTIONS)
    keys = list(trace)                                              # the seven Steps, in order
    names = [key.label for key in keys]
    grids = np.array(list(trace.values()))                          # (7, 4, 4)
    sizes = np.array([root_mean_square(grid) for grid in grids])
    _, mix = attention(trace[Step.ATTENTION_NORM], weights.Wq, weights.Wk, weights.Wv, weights.Wo,
                       causal=SIX_STEP_OPTIONS["causal"], return_weights=True)
    mix = mix[0]                                                    # one head: (4, 4)
    hidden_on = int(((trace[Step.FFN_NORM] @ weights.W_up) > 0).sum())
    hidden_total = grids.shape[1] * weights.d_ff
    s = [fixed(v) for v in sizes]
    key, name = keys[step], names[step]
    tokens, width = grids.shape[1], grids.shape[2]
    row_size = float(root_mean_square(grids[1], axis=-1).min())
    source = int(np.argmax(mix[0])) + 1                             # numbered from 1, as the text says
    if step == 0:
        text = (f"The input: {plural(tokens, 'token')} of {plural(width, 'number')}; its typical size (the "
                f"root mean square of all {plural(tokens * width, 'number')}) is {s[0]}.")
    elif step == 1:
        text = (f"Step 1, norm: each row is divided by its own root mean square, so every row now has "
                f"size {fixed(row_size)} and the grid went from {s[0]} to {s[1]}; the input itself is "
                "kept aside, unchanged, for the add.")
    elif step == 2:
        text = (f"Step 2, attention: every row becomes a weighted mix of the value rows, then goes through "
                f"the output matrix Wo; token 1 takes {percentage(mix[0, source - 1])} of its mix from token "
                f"{source}. Size {s[1]} \u2192 {s[2]}.")
    elif step == 3:
        text = (f"Step 3, add: attention's output (size {s[2]}) is added to the input (size {s[0]}), not "
                f"put in its place, so the stream {_change(s[0], s[3])}.")
    elif step == 4:
        text = (f"Step 4, norm: a copy of the stream (size {s[3]}) is rescaled to rows of size 1 for the "
                f"FFN, grid size {s[4]}; the stream itself keeps its size.")
    elif step == 5:
        text = (f"Step 5, FFN: each row on its own is widened to {weights.d_ff} hidden units "
                f"({hidden_on} of the {hidden_total} are positive before GELU), bent and narrowed "
                f"back to {plural(width, 'number')}. Size {s[5]}.")
    else:
        text = (f"Step 6, add: the FFN's output (size {s[5]}) is added to the stream, which "
                f"{_change(s[3], s[6])}. The block's output has size {s[6]} (the input had {s[0]}); "
                f"row 1 is {vector(grids[6][0], signed=True)}.")
    return SixStepsResult(step=step, seed=seed, keys=keys, names=names, grids=grids, sizes=sizes,
                          attention_weights=mix, hidden_on=hidden_on, hidden_total=hidden_total, d_ff=weights.d_ff,
                          tokens=tokens, width=width, numbers=tokens * width, row_size=row_size,
                          source_token=source, key=key, name=name, verdict=text)


def steps_table(m: SixStepsResult) -> str:
    """The two grids shown (the one before the step and the one after) side by side, a row per
    token, and the size (RMS) of every grid."""
    k = m.step
    grids = m.grids
    def row(grid, i):
        return " ".join(fixed(v) for v in grid[i])
    header = ["token"] + (["before", "after"] if k else ["input"])
    rows = [[f"token {i + 1}"] + ([row(grids[k - 1], i)] if k else []) + [row(grids[k], i)]
            for i in range(grids.shape[1])]
    steps = ["in"] + [count(i) for i in range(1, N_STEPS + 1)]
    sizes = table([[step, fixed(v)] for step, v in zip(steps, m.sizes)],
                  header=["step", "size (RMS)"], mono_columns=(1,))
    return table(rows, header=header, mono_columns=(1, 2)) + sizes    # few columns: fits a phone


class SixStepsLab:
    """The view: a step slider with back/forward buttons, new random weights, two grids and the
    sizes of all seven grids."""

    def __init__(self, step=0, seed=None):
        import ipywidgets as widgets
        from matplotlib.colors import TwoSlopeNorm

        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        self.seed = seed
        self.draws = 0
        self.colours = OKABE_ITO
        self.step = slider("int", value=step, min=0, max=N_STEPS, step=1, description="step")
        self.step.add_class("course-slider-step")
        self.back = widgets.Button(description="back", icon="arrow-left", layout=widgets.Layout(width="auto"))
        self.back.add_class("course-button-back")
        self.forward = widgets.Button(description="forward", icon="arrow-right",
                                      layout=widgets.Layout(width="auto"))
        self.forward.add_class("course-button-forward")
        self.new = widgets.Button(description="new random weights", icon="refresh",
                                  layout=widgets.Layout(width="auto"))
        self.new.add_class("course-button-new-weights")
        self.original = widgets.Button(description="the example's weights", layout=widgets.Layout(width="auto"))
        self.original.add_class("course-button-original")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.3)
        grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 1.15], wspace=0.45)
        self.ax_before, self.ax_after, self.ax_sizes = (fig.add_subplot(grid[0, i]) for i in range(3))
        colour = TwoSlopeNorm(vmin=-3.0, vcenter=0.0, vmax=3.0)
        self.images, self.titles = [], []
        for ax in (self.ax_before, self.ax_after):
            self.images.append(cell_grid(ax, np.zeros((4, 4)), cmap="PuOr_r", norm=colour))
            ax.set_xticks(range(4), [str(j + 1) for j in range(4)])
            ax.set_yticks(range(4), [f"token {i + 1}" for i in range(4)])
            ax.tick_params(labelsize=9, length=0)
            self.titles.append(ax.set_title("", fontsize=9))       # each grid's size: in the bars
        self.ax_after.set_yticks(range(4), [""] * 4)
        self.bars = Bars(self.ax_sizes, range(N_STEPS + 1), edgecolor="black", linewidth=0.6)
        self.numbers = numbers_widget()          # the grids' numbers and sizes, as tables
        self.ax_sizes.set_xticks(range(N_STEPS + 1), ["in"] + [count(i) for i in range(1, N_STEPS + 1)])
        self.ax_sizes.set_xlabel("step", fontsize=9)
        self.ax_sizes.set_ylabel("size (RMS)", fontsize=9)
        self.ax_sizes.set_title("size of every grid", fontsize=9)
        self.ax_sizes.tick_params(labelsize=9)
        self.caption = caption_widget()          # the step and what it does, above the plot
        fig.subplots_adjust(left=0.13, right=0.98, top=0.86, bottom=0.2)
        self.view = FigureView(fig, description="Two grids of 4 tokens by 4 numbers, before and after "
                                                "one step of the block, and the size of every grid",
                               changing=[self.images, self.titles, self.bars.artist])
        self.root = lab_root("six-steps", [controls(self.step, self.back, self.forward),
                                           controls(self.new, self.original), self.caption, self.view.widget,
                                           self.numbers,
                                           self.verdict])
        self.step.observe(lambda _c: self.update(), names="value")
        self.back.on_click(lambda _b: self._move(-1))
        self.forward.on_click(lambda _b: self._move(+1))
        self.new.on_click(self._new_weights)
        self.original.on_click(self._original_weights)
        self.update()

    def _move(self, by: int) -> None:
        self.step.value = int(np.clip(self.step.value + by, 0, N_STEPS))      # triggers update

    def _new_weights(self, _button=None) -> None:
        self.draws += 1
        self.seed = 100 + self.draws
        self.update()

    def _original_weights(self, _button=None) -> None:
        self.seed = None
        self.update()

    def update(self) -> SixStepsResult:
        m = six_steps_model(self.step.value, self.seed)
        k = m.step
        shown = [(k - 1 if k > 0 else None), k]
        for image, title, index in zip(self.images, self.titles, shown):
            if index is None:
                set_cells(image, np.zeros((4, 4)))
                image.set_alpha(0.15)
                title.set_text("(nothing before the input)")
                continue
            grid = m.grids[index]
            image.set_alpha(1.0)
            set_cells(image, grid)
            title.set_text("the input\n" if index == 0 else f"after step {index}:\n{m.names[index]}")
        top = float(np.max(m.sizes))
        self.bars.set(m.sizes, [self.colours["orange"] if i == k else self.colours["sky"]
                                   for i in range(len(m.sizes))])
        self.numbers.value = steps_table(m)
        set_limits(self.ax_sizes, y=(0, top * 1.25))    # changes only with new weights
        who = "the example's weights" if self.seed is None else f"random weights, draw {self.draws}"
        self.caption.value = strong(f"Step {k} of {N_STEPS}: {STEP_EXPLAINED[m.key]} ({who})")
        self.back.disabled, self.forward.disabled = k == 0, k == N_STEPS
        self.view.redraw(state=self.seed)
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def six_steps_lab(**initial):
    """The six-steps lab's root widget (class ``course-lab-six-steps``)."""
    return SixStepsLab(**initial).root
