"""The position-shuffle lab (notebook 01): reorder a three-word sentence and compare each word's
attention output before and after. Without position vectors attention sees a set, so every word's
output is the same, only in another row; with them, a word at a new place is a new input.

Model: ``shuffle_model`` (``lib.attention.attention`` on small random weights). View:
``ShuffleLab``. Root widget: ``shuffle_lab()``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.attention import attention
from lib.positional import add_positions
from lib.weights import random_weights
from engine.presentation.html import plain
from engine.presentation.numbers import amount, fixed, word_list
from engine.presentation.tables import table

from engine.kit.figure_view import cell_grid, set_cells, set_changed, set_limits
from engine.kit.layout import controls, lab_root, menu, numbers_widget, switch, verdict_widget
from engine.kit.result import Result
from .table import TABLE_USE, course_table

TOL = 1e-9  # below this, two outputs count as identical

WORDS = ("cat", "dog", "car")
D_MODEL = 4
SHUFFLE_SEED = 104
# Small word vectors (drawn with standard deviation 0.5) and four random projections: no
# identity matrices, so attention really mixes the words.
X, WQ, WK, WV, WO = random_weights([(len(WORDS), D_MODEL)] + [(D_MODEL, D_MODEL)] * 4,
                                   seed=SHUFFLE_SEED, scale=[0.5, 2.0, 2.0, 0.6, 0.6], decimals=2)
PERMUTATIONS = tuple(itertools.permutations(range(len(WORDS))))


def shuffled(order, rng) -> tuple:
    """Another order at random: never the sentence as written (nothing would move) and never
    ``order`` itself (the press would change nothing on screen)."""
    unchanged = tuple(range(len(WORDS)))
    others = [p for p in PERMUTATIONS if p not in (tuple(order), unchanged)]
    return others[int(rng.integers(len(others)))]


def sentence(order) -> str:
    return " ".join(WORDS[i] for i in order)


def _attend(words, add_pos: bool, causal: bool, scale: bool, table=course_table):
    if add_pos:
        inputs = add_positions(words, table(len(words), D_MODEL), scale=scale)
    else:
        inputs = words * (math.sqrt(D_MODEL) if scale else 1.0)
    return inputs, attention(inputs, WQ, WK, WV, WO, heads=1, causal=causal)


@dataclass(frozen=True)
class ShuffleResult(Result):
    """The sentence's attention outputs before and after reordering, rows in sentence order.

    inputs_before, inputs_after, out_before, out_after: (words, d_model) the inputs and outputs in
    both orders; change, identical: (words,) how far each word's output moved (the length of the
    difference between its output after and before) and whether it stayed the same.
    """
    order: tuple            # the new sentence, as indices into WORDS
    sentence_before: str
    sentence_after: str
    inputs_before: np.ndarray
    inputs_after: np.ndarray
    out_before: np.ndarray
    out_after: np.ndarray
    change: np.ndarray
    new_row: list           # the row each word moved to
    identical: np.ndarray
    finite: bool            # False when the outputs overflowed
    verdict: str


def shuffle_model(order=(2, 1, 0), add_positions=False, causal=False, scale=False, focus=0,
                  table=course_table) -> ShuffleResult:
    """Attention outputs of the sentence before and after reordering, and a verdict.

    order: the new sentence, as indices into WORDS ((2, 1, 0) is "car dog cat").
    Returns the inputs and outputs in both orders (rows in sentence order), each word's change
    (length of the difference between its output after and before), the row each word moved to,
    and the verdict about the word ``focus`` ("cat"). ``table(length, d_model)`` makes the
    position table (the course's sinusoidal one, or the learner's). ``scale`` multiplies the
    words by sqrt(d_model) first (the lab no longer offers it: ``labs.positional.scaling`` varies
    the factor).
    """
    order = tuple(int(i) for i in order)
    if sorted(order) != list(range(len(WORDS))):
        order = tuple(range(len(WORDS)))
    with np.errstate(over="ignore", invalid="ignore"):
        in_before, out_before = _attend(X, add_positions, causal, scale, table)
        in_after, out_after = _attend(X[list(order)], add_positions, causal, scale, table)
    new_row = [order.index(w) for w in range(len(WORDS))]          # where each word went
    change = np.array([np.linalg.norm(out_after[new_row[w]] - out_before[w])
                       for w in range(len(WORDS))])
    finite = bool(np.all(np.isfinite(out_before)) and np.all(np.isfinite(out_after)))
    name = WORDS[focus]
    if not finite:
        verdict = "The outputs overflowed, so they cannot be compared."
    elif order == tuple(range(len(WORDS))):
        verdict = (f"The order is unchanged (\u201c{sentence(order)}\u201d), so every output is "
                   "exactly the same. Pick another order or press shuffle.")
    else:
        if change[focus] < TOL:
            if new_row[focus] != focus:
                first = (f"{name}'s output is identical, only its row moved "
                         f"(row {focus} \u2192 row {new_row[focus]}).")
            else:
                first = f"{name} stays at row {focus} and its output is identical."
        else:
            first = f"{name}'s output changed by {amount(change[focus])}."
        others = [w for w in range(len(WORDS)) if w != focus]
        same = [WORDS[w] for w in others if change[w] < TOL]
        moved = [f"{WORDS[w]}'s by {amount(change[w])}" for w in others if change[w] >= TOL]
        parts = []
        if moved:
            parts.append(f"{'Also changed' if change[focus] >= TOL else 'Changed'}: "
                         f"{word_list(moved)}.")
        if same:
            parts.append(f"{word_list(same)} {'is' if len(same) == 1 else 'are'} identical"
                         f"{' too' if change[focus] < TOL else ''}.")
        if not add_positions and not causal:
            why = "Without positions attention sees a bag of words, not a sequence."
        elif not add_positions:
            why = ("With the causal mask alone, row i averages the words in rows 0 to i: it sees which "
                   "words came before it, but not in which order.")
        else:
            why = "With positions added, a word at a new place is a new input."
        verdict = " ".join([first] + parts + [why])
    return ShuffleResult(order=order, sentence_before=sentence(range(len(WORDS))),
                         sentence_after=sentence(order), inputs_before=in_before, inputs_after=in_after,
                         out_before=out_before, out_after=out_after, change=change,
                         new_row=new_row, identical=change < TOL, finite=finite, verdict=verdict)


@lru_cache(maxsize=1)
def change_top() -> float:
    """The change panel's fixed height: the largest change of an output over every order and
    every toggle with the course's position table (rounded up to a tenth, at least 0.5)."""
    largest = max(float(np.nanmax(shuffle_model(order, *flags).change))
                  for order in PERMUTATIONS for flags in itertools.product((False, True), repeat=3))
    return max(0.5, float(np.ceil(largest * 10) / 10))


def _fill_heatmap(image, values, limit):
    """Show ``values`` in the heatmap; nothing is touched that stays the same, so the view
    redraws only what changed."""
    if not (np.array_equal(image.get_array(), values) and image.get_clim() == (-limit, limit)):
        set_cells(image, values)
        image.set_clim(-limit, limit)


def outputs_table(model: ShuffleResult) -> str:
    """Each word's output before and after the shuffle, its rows before and after, and how far
    its output changed."""
    header = ["word: row before \u2192 after", "output before", "output after", "change"]
    rows = []
    for w, word in enumerate(WORDS):
        after = model.new_row[w]
        change = model.change[w]
        rows.append([f"{word}: row {w} \u2192 {after}", " ".join(fixed(v) for v in model.out_before[w]),
                     " ".join(fixed(v) for v in model.out_after[after]),
                     "0" if change < TOL else amount(change)])
    return table(rows, header=header, mono_columns=range(1, 4))     # few columns: fits a phone


def _widest_row_label(fig) -> str:
    """The widest of the rows' texts ("car (2)", ...) as drawn in 9 points."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    labels = [f"{w} ({r})" for w in WORDS for r in range(len(WORDS))]
    probe = fig.text(0, 0, "", fontsize=9)
    widths = []
    for label in labels:
        probe.set_text(label)
        widths.append(probe.get_window_extent(renderer).width)
    probe.remove()
    return labels[int(np.argmax(widths))]


class ShuffleLab:
    """The view: an order dropdown, a shuffle button, two toggles, outputs side by side.
    (The words' scale factor has a lab of its own: ``labs.positional.scaling``.)"""

    def __init__(self, order=(2, 1, 0), add_positions=False, causal=False, seed=0):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.rng = np.random.default_rng(seed)
        self.colours = OKABE_ITO
        self.order = menu([(sentence(p), p) for p in PERMUTATIONS], tuple(order), "new order")
        self.order.add_class("course-order")
        self.shuffle = widgets.Button(description="shuffle", tooltip="pick another order at random",
                                      layout=widgets.Layout(width="auto"))
        self.shuffle.add_class("course-shuffle-button")
        self.positions = switch("add positions", add_positions, "add the sinusoidal position vectors")
        self.positions.add_class("course-toggle-positions")
        self.causal = switch("causal mask", causal, "each word sees only itself and earlier words")
        self.causal.add_class("course-toggle-causal")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 0.65])
        self.ax_before, self.ax_after, self.ax_change = (fig.add_subplot(grid[0, i]) for i in range(3))
        blank = np.zeros((len(WORDS), D_MODEL))
        self.images = []
        for ax in (self.ax_before, self.ax_after):
            self.images.append(cell_grid(ax, blank, cmap="PuOr_r", vmin=-1, vmax=1))
            ax.set_xticks(range(D_MODEL))
            ax.set_yticks(range(len(WORDS)))
            ax.set_xlabel("output number")
            ax.tick_params(labelsize=9)
        self.ax_before.set_ylabel("row (word)")
        self.title_before = self.ax_before.set_title("", fontsize=10)
        self.title_after = self.ax_after.set_title("", fontsize=10)
        self.bars = self.ax_change.bar(WORDS, np.zeros(len(WORDS)), color=OKABE_ITO["blue"],
                                       edgecolor="black", linewidth=0.6)
        self.numbers = numbers_widget()           # the outputs' numbers, as a table
        self.ax_change.set_title("change of\neach output", fontsize=10)
        self.ax_change.set_ylabel("|after \u2212 before|")
        self.ax_change.tick_params(labelsize=9)
        self.suptitle = fig.suptitle("", fontsize=10)
        # The rows' words change with the order: texts where the tick labels go (tick labels
        # would cost a full draw of the figure on every change). The tick labels stay, unseen,
        # holding the widest text's room, so the layout keeps the axis label clear of the texts.
        widest = _widest_row_label(fig)
        self.row_labels = []
        for ax in (self.ax_before, self.ax_after):
            ax.set_yticks(range(len(WORDS)), [widest] * len(WORDS), color="none")
            where = ax.get_yticklabels()[0].get_transform()
            self.row_labels.append([ax.text(0, r, f"{w} ({r})", ha="right", va="center", fontsize=9,
                                            transform=where) for r, w in enumerate(WORDS)])
        self.ax_change.set_ylim(0, change_top() * 1.25)
        fig.tight_layout()
        self.view = FigureView(fig, description="Attention outputs before and after the shuffle",
                               changing=[self.images, self.row_labels, self.title_before,
                                         self.title_after, self.bars, self.suptitle])

        self.own = OwnFunctionSwitch([TABLE_USE], self._on_change)
        row = controls(self.order, self.shuffle, self.positions, self.causal)
        self.root = lab_root("shuffle", [row, self.own.widget, self.view.widget, self.numbers,
                                         self.verdict])
        for w in (self.order, self.positions, self.causal):
            w.observe(self._on_change, names="value")
        self.shuffle.on_click(self._on_shuffle)
        self.update()

    def _on_change(self, _change=None) -> None:
        self.update()

    def _on_shuffle(self, _button=None) -> None:
        self.order.value = shuffled(self.order.value, self.rng)          # triggers update

    def update(self) -> ShuffleResult:
        order, positions, causal = self.order.value, self.positions.value, self.causal.value
        model = self.own.run(lambda table: shuffle_model(order, positions, causal, table=table),
                              TABLE_USE.exercise if positions else None)
        outs = (model.out_before, model.out_after)
        limit = max(float(np.nanmax(np.abs(np.nan_to_num(np.concatenate(outs))))), 1e-6)
        words_in_rows = (list(WORDS), [WORDS[i] for i in model.order])
        for labels, image, values, rows in zip(self.row_labels, self.images, outs, words_in_rows):
            _fill_heatmap(image, np.nan_to_num(values), limit)
            for r, (label, w) in enumerate(zip(labels, rows)):
                label.set_text(f"{w} ({r})")
        self.title_before.set_text(f"before: {model.sentence_before}")
        self.title_after.set_text(f"after: {model.sentence_after}")
        top = change_top()
        for bar, value in zip(self.bars, model.change):
            set_changed(bar, height=value, facecolor=self.colours["vermillion"] if value >= TOL else self.colours["blue"])
        self.numbers.value = outputs_table(model)
        if np.nanmax(model.change) > top:          # another position table went further
            top = float(np.nanmax(model.change))
        set_limits(self.ax_change, y=(0, top * 1.25))
        setting = [("positions added" if self.positions.value else "no positions")]
        if self.causal.value:
            setting.append("causal mask")
        self.suptitle.set_text("Attention outputs, " + ", ".join(setting))
        self.view.redraw(state=top)
        self.verdict.value = plain(model.verdict)
        self.model = model
        return model


def shuffle_lab(**initial):
    """The position-shuffle lab's root widget (class ``course-lab-shuffle``)."""
    return ShuffleLab(**initial).root
