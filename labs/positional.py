"""Labs of notebook 01, positional encoding: position shuffle, position table, rotary positions.

Each lab has a model (a pure function from control values to numbers and a verdict) and a view
(widgets and one matplotlib figure, redrawn in place). The numbers come from ``lib``:
``lib.attention.attention``, ``lib.positional.sinusoidal`` and ``lib.positional.rope``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from lib.attention import attention
from exercises.core.own import Use
from lib.positional import PAIRINGS, add_positions, rope, sinusoidal
from lib.weights import random_weights

from .kit.layout import controls as _controls, verdict_html as _verdict_html

TOL = 1e-9  # below this, two outputs count as identical


# ====================================================================== position shuffle

WORDS = ("cat", "dog", "car")
D_MODEL = 4
SHUFFLE_SEED = 104
# Small word vectors (about the size 1/sqrt(d_model) of a fresh embedding table) and four
# random projections: no identity matrices, so attention really mixes the words.
X, WQ, WK, WV, WO = random_weights([(len(WORDS), D_MODEL)] + [(D_MODEL, D_MODEL)] * 4,
                                   seed=SHUFFLE_SEED, scale=[0.5, 2.0, 2.0, 0.6, 0.6], decimals=2)
PERMUTATIONS = tuple(itertools.permutations(range(len(WORDS))))


def sentence(order) -> str:
    return " ".join(WORDS[i] for i in order)


def _course_table(length, d_model):
    return sinusoidal(length, d_model)


def _rope_one_as_rope(rope_one):
    """The learner's ``rope_one(x, position, base)`` (pairs i and i + d/2) in the signature of
    ``lib.positional.rope`` for one vector; the neighbours pairing (2i with 2i + 1) lays the
    pairs out as halves, turns them, and puts them back."""
    def turn(x, base=10000.0, pairing="halves", offset=0):
        x = np.asarray(x, dtype=float)
        if pairing == "halves":
            return rope_one(x, offset, base)
        half = len(x) // 2
        turned = np.asarray(rope_one(np.concatenate([x[0::2], x[1::2]]), offset, base))
        if turned.shape != x.shape:
            return turned                     # the guard reports the wrong shape
        out = np.empty_like(x)
        out[0::2], out[1::2] = turned[:half], turned[half:]
        return out
    return turn


# The exercises whose functions these labs can run instead of the course's (see labs/kit/own_function.py).
TABLE_USE = Use("sinusoidal-table", _course_table, "lib.positional.sinusoidal")
ROPE_USE = Use("rope-rotation", rope, "lib.positional.rope", adapt=_rope_one_as_rope)


def _attend(words, add_pos: bool, causal: bool, scale: bool, table=_course_table):
    if add_pos:
        inputs = add_positions(words, table(len(words), D_MODEL), scale=scale)
    else:
        inputs = words * (math.sqrt(D_MODEL) if scale else 1.0)
    return inputs, attention(inputs, WQ, WK, WV, WO, heads=1, causal=causal)


def amount(value: float) -> str:
    """A change as text: two decimals, or a power of ten when it is tiny but not zero."""
    return f"{value:.2f}" if value >= 0.005 else f"only {value:.0e}"


def _list_words(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def shuffle_model(order=(2, 1, 0), add_positions=False, causal=False, scale=False, focus=0,
                  table=_course_table) -> dict:
    """Attention outputs of the sentence before and after reordering, and a verdict.

    order: the new sentence, as indices into WORDS ((2, 1, 0) is "car dog cat").
    Returns the inputs and outputs in both orders (rows in sentence order), each word's change
    (length of the difference between its output after and before), the row each word moved to,
    and the verdict about the word ``focus`` ("cat"). ``table(length, d_model)`` makes the
    position table (the course's sinusoidal one, or the learner's).
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
                         f"{_list_words(moved)}.")
        if same:
            parts.append(f"{_list_words(same)} {'is' if len(same) == 1 else 'are'} identical"
                         f"{' too' if change[focus] < TOL else ''}.")
        if not add_positions and not causal:
            why = "Without positions attention sees a set of words, not a sequence."
        elif not add_positions:
            why = ("The causal mask alone gives a weak sense of order: row i averages the first "
                   "i + 1 words, whichever they are.")
        else:
            why = "With positions added, a word at a new place is a new input."
        verdict = " ".join([first] + parts + [why])
    return {"order": order, "sentence_before": sentence(range(len(WORDS))),
            "sentence_after": sentence(order), "inputs_before": in_before, "inputs_after": in_after,
            "out_before": out_before, "out_after": out_after, "change": change,
            "new_row": new_row, "identical": change < TOL, "finite": finite, "verdict": verdict}


def _annotate_heatmap(ax, shape):
    return [[ax.text(c, r, "", ha="center", va="center", fontsize=9) for c in range(shape[1])]
            for r in range(shape[0])]


def _fill_heatmap(image, texts, values, limit):
    image.set_data(values)
    image.set_clim(-limit, limit)
    for r, row in enumerate(texts):
        for c, text in enumerate(row):
            v = values[r, c]
            label = f"{v:.2f}"
            text.set_text("0.00" if label == "-0.00" else label)
            text.set_color("white" if abs(v) > 0.6 * limit else "black")


class ShuffleLab:
    """The view: an order dropdown, a shuffle button, three toggles, outputs side by side."""

    def __init__(self, order=(2, 1, 0), add_positions=False, causal=False, scale=False, seed=0):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure
        from .kit.own_function import MineSwitch

        self.rng = np.random.default_rng(seed)
        self.colours = OKABE_ITO
        style = {"description_width": "initial"}
        self.order = widgets.Dropdown(options=[(sentence(p), p) for p in PERMUTATIONS],
                                      value=tuple(order), description="new order", style=style,
                                      layout=widgets.Layout(width="15em"))
        self.order.add_class("course-order")
        self.shuffle = widgets.Button(description="shuffle", tooltip="pick another order at random",
                                      layout=widgets.Layout(width="auto"))
        self.shuffle.add_class("course-shuffle-button")
        self.positions = widgets.ToggleButton(value=add_positions, description="add positions",
                                              tooltip="add the sinusoidal position vectors",
                                              layout=widgets.Layout(width="auto"))
        self.positions.add_class("course-toggle-positions")
        self.causal = widgets.ToggleButton(value=causal, description="causal mask",
                                           tooltip="each word sees only itself and earlier words",
                                           layout=widgets.Layout(width="auto"))
        self.causal.add_class("course-toggle-causal")
        self.scale = widgets.ToggleButton(value=scale, description="scale words \u00d7\u221ad_model",
                                          tooltip="multiply the words by sqrt(d_model) = 2 first",
                                          layout=widgets.Layout(width="auto"))
        self.scale.add_class("course-toggle-scale")
        self.verdict = widgets.HTML()
        self.verdict.add_class("course-verdict")

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 0.65])
        self.ax_before, self.ax_after, self.ax_change = (fig.add_subplot(grid[0, i]) for i in range(3))
        blank = np.zeros((len(WORDS), D_MODEL))
        self.images, self.texts = [], []
        for ax in (self.ax_before, self.ax_after):
            self.images.append(ax.imshow(blank, cmap="PuOr_r", vmin=-1, vmax=1, aspect="auto"))
            self.texts.append(_annotate_heatmap(ax, blank.shape))
            ax.set_xticks(range(D_MODEL))
            ax.set_yticks(range(len(WORDS)))
            ax.set_xlabel("output number")
            ax.tick_params(labelsize=9)
        self.ax_before.set_ylabel("row (word)")
        self.title_before = self.ax_before.set_title("", fontsize=10)
        self.title_after = self.ax_after.set_title("", fontsize=10)
        self.bars = self.ax_change.bar(WORDS, np.zeros(len(WORDS)), color=OKABE_ITO["blue"],
                                       edgecolor="black", linewidth=0.6)
        self.bar_labels = [self.ax_change.text(i, 0, "", ha="center", va="bottom", fontsize=9)
                           for i in range(len(WORDS))]
        self.ax_change.set_title("change of\neach output", fontsize=10)
        self.ax_change.set_ylabel("|after \u2212 before|")
        self.ax_change.tick_params(labelsize=9)
        self.suptitle = fig.suptitle("", fontsize=10)
        for ax in (self.ax_before, self.ax_after):
            ax.set_yticklabels([f"{w} (0)" for w in WORDS])
        fig.tight_layout()
        self.view = FigureView(fig, description="Attention outputs before and after the shuffle")

        controls = _controls(*[self.order, self.shuffle, self.positions, self.causal, self.scale])
        self.mine = MineSwitch([TABLE_USE], self._on_change)
        self.root = widgets.VBox([controls, self.mine.widget, self.view.widget, self.verdict])
        self.root.add_class("course-lab")
        self.root.add_class("course-lab-shuffle")
        for w in (self.order, self.positions, self.causal, self.scale):
            w.observe(self._on_change, names="value")
        self.shuffle.on_click(self._on_shuffle)
        self.update()

    def _on_change(self, _change=None) -> None:
        self.update()

    def _on_shuffle(self, _button=None) -> None:
        others = [p for p in PERMUTATIONS if p != self.order.value]
        self.order.value = others[int(self.rng.integers(len(others)))]  # triggers update

    def update(self) -> dict:
        order, positions, causal, scale = (self.order.value, self.positions.value, self.causal.value,
                                           self.scale.value)
        model = self.mine.run(lambda table: shuffle_model(order, positions, causal, scale, table=table),
                              TABLE_USE.exercise if positions else None)
        outs = (model["out_before"], model["out_after"])
        limit = max(float(np.nanmax(np.abs(np.nan_to_num(np.concatenate(outs))))), 1e-6)
        words_in_rows = (list(WORDS), [WORDS[i] for i in model["order"]])
        for ax, image, texts, values, rows in zip((self.ax_before, self.ax_after), self.images,
                                                   self.texts, outs, words_in_rows):
            _fill_heatmap(image, texts, np.nan_to_num(values), limit)
            ax.set_yticklabels([f"{w} ({r})" for r, w in enumerate(rows)])
        self.title_before.set_text(f"before: {model['sentence_before']}")
        self.title_after.set_text(f"after: {model['sentence_after']}")
        top = max(float(np.nanmax(model["change"])), 0.5)
        for i, (bar, label, value) in enumerate(zip(self.bars, self.bar_labels, model["change"])):
            bar.set_height(value)
            bar.set_facecolor(self.colours["vermillion"] if value >= TOL else self.colours["blue"])
            label.set_text("0" if value < TOL else amount(value).replace("only ", ""))
            label.set_y(value + 0.02 * top)
        self.ax_change.set_ylim(0, top * 1.25)
        setting = [("positions added" if self.positions.value else "no positions")]
        if self.causal.value:
            setting.append("causal mask")
        if self.scale.value:
            setting.append("words \u00d72")
        self.suptitle.set_text("Attention outputs, " + ", ".join(setting))
        self.view.redraw()
        self.verdict.value = _verdict_html(model["verdict"])
        self.model = model
        return model


def shuffle_lab(**initial):
    """The position-shuffle lab's root widget (class ``course-lab``)."""
    return ShuffleLab(**initial).root


# ====================================================================== position table

D_MAX, LENGTH_MAX = 64, 64


def _even(d) -> int:
    return max(2, 2 * (int(d) // 2))


def position_table_model(d_model=8, length=16, row=3, base=10000.0, table=None) -> dict:
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
    verdict = (f"Position {row} of a {length} \u00d7 {d} table: the fast pair (columns 0, 1) has "
               f"turned {angles[0]:.2f} radians ({turns:.2f} turns)")
    if last:
        verdict += (f", the slowest pair (columns {d - 2}, {d - 1}) only {angles[last]:.4f}: it turns "
                    f"{speeds[last]:.4g} radians per position, 10000^(\u2212{d - 2}/{d}).")
    else:
        verdict += "; with d_model = 2 that is the only pair, so the row is [sin(pos), cos(pos)]."
    return {"d_model": d, "length": length, "row": row, "table": table, "speeds": speeds,
            "angles": angles, "values": table[row], "fast": (table[row, 0], table[row, 1]),
            "slow": (table[row, d - 2], table[row, d - 1]), "verdict": verdict}


def _row_readout(model) -> str:
    values = model["values"]
    shown = [f"{v:.2f}" for v in values[:8]]
    if len(values) > 8:
        shown = shown[:4] + ["\u2026"] + [f"{v:.2f}" for v in values[-4:]]
    return (f'<div style="color: var(--jp-ui-font-color1, inherit); font-family: '
            f'var(--jp-code-font-family, monospace);">PE[{model["row"]}] = [{", ".join(shown)}]</div>')


class PositionTableLab:
    """The view: sliders for d_model, length and row; the heatmap and a clock with two hands."""

    def __init__(self, d_model=8, length=16, row=3):
        import ipywidgets as widgets
        from matplotlib.patches import Circle, Rectangle

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure
        from .kit.own_function import MineSwitch

        style = {"description_width": "initial"}
        self.d_slider = widgets.IntSlider(value=_even(d_model), min=2, max=D_MAX, step=2,
                                          description="d_model", style=style,
                                          layout=widgets.Layout(width="22em"))
        self.d_slider.add_class("course-slider-d-model")
        self.length_slider = widgets.IntSlider(value=length, min=1, max=LENGTH_MAX,
                                               description="length", style=style,
                                               layout=widgets.Layout(width="22em"))
        self.length_slider.add_class("course-slider-length")
        self.row_slider = widgets.IntSlider(value=min(row, length - 1), min=0, max=length - 1,
                                            description="position (row)", style=style,
                                            layout=widgets.Layout(width="22em"))
        self.row_slider.add_class("course-slider-row")
        self.readout = widgets.HTML()
        self.readout.add_class("course-row-readout")
        self.verdict = widgets.HTML()
        self.verdict.add_class("course-verdict")

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.5, 1])
        ax, clock = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        self.image = ax.imshow(np.zeros((length, _even(d_model))), cmap="PuOr_r", vmin=-1, vmax=1,
                               aspect="auto", interpolation="nearest")
        bar = fig.colorbar(self.image, ax=ax, fraction=0.06, pad=0.03)
        bar.ax.tick_params(labelsize=9)
        self.highlight = Rectangle((-0.5, -0.5), 1, 1, fill=False, edgecolor=OKABE_ITO["black"],
                                   linewidth=2)
        ax.add_patch(self.highlight)
        from matplotlib.ticker import MaxNLocator
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("column: fast pairs left, slow right")
        ax.set_ylabel("position")
        ax.tick_params(labelsize=9)
        self.title = ax.set_title("", fontsize=10)
        self.ax = ax

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
        clock.set_ylim(-1.15, 1.45)
        clock.set_xticks([-1, 0, 1])      # the limits never change: fixed ticks redraw faster
        clock.set_yticks([-1, 0, 1])
        clock.set_aspect("equal")
        clock.set_xlabel("sin (even column)")
        clock.set_ylabel("cos (odd column)")
        clock.tick_params(labelsize=9)
        self.clock_title = clock.set_title("", fontsize=10)
        self.legend = clock.legend(loc="upper center", fontsize=8, ncol=1, frameon=False)
        fig.tight_layout()
        self.view = FigureView(fig, description="Heatmap of the sinusoidal position table and a clock")

        controls = _controls(*[self.d_slider, self.length_slider, self.row_slider])
        self.mine = MineSwitch([TABLE_USE], self._on_change)
        self.root = widgets.VBox([controls, self.mine.widget, self.view.widget, self.readout, self.verdict])
        self.root.add_class("course-lab")
        self.root.add_class("course-lab-position-table")
        self.d_slider.observe(self._on_change, names="value")
        self.length_slider.observe(self._on_length, names="value")
        self.row_slider.observe(self._on_change, names="value")
        self.update()

    def _on_length(self, change) -> None:
        self._updating = True
        self.row_slider.max = max(0, int(change["new"]) - 1)     # clamps the row's value too
        self._updating = False
        self.update()

    def _on_change(self, _change=None) -> None:
        if not getattr(self, "_updating", False):
            self.update()

    def update(self) -> dict:
        d, length, row = self.d_slider.value, self.length_slider.value, self.row_slider.value
        model = self.mine.run(lambda table: position_table_model(d, length, row, table=table))
        d, length, row = model["d_model"], model["length"], model["row"]
        self.image.set_data(model["table"])
        self.image.set_extent((-0.5, d - 0.5, length - 0.5, -0.5))
        self.ax.set_xlim(-0.5, d - 0.5)
        self.ax.set_ylim(length - 0.5, -0.5)
        self.highlight.set_bounds(-0.5, row - 0.5, d, 1)
        self.title.set_text(f"PE: {length} position{'s' if length > 1 else ''} \u00d7 {d} numbers")
        for hand, (s, c) in ((self.fast_hand, model["fast"]), (self.slow_hand, model["slow"])):
            hand.set_data([0, s], [0, c])
        self.clock_title.set_text(f"the hands at position {row}")
        self.slow_hand.set_label(f"slow: pair {d // 2 - 1}")
        self.legend.get_texts()[1].set_text(f"slow: pair {d // 2 - 1}")
        self.view.redraw()
        self.readout.value = _row_readout(model)
        self.verdict.value = _verdict_html(model["verdict"])
        self.model = model
        return model


def position_table_lab(**initial):
    """The position-table lab's root widget (class ``course-lab``)."""
    return PositionTableLab(**initial).root


# ====================================================================== rotary positions

HEAD_SIZE = 32
ROPE_SEED = 2026
_rng = np.random.default_rng(ROPE_SEED)
QUERY = _rng.normal(0, 1, HEAD_SIZE)     # drawn first
KEY = _rng.normal(0, 1, HEAD_SIZE)       # then the key
del _rng
POS_MAX = 31
BASES = (100.0, 1000.0, 10000.0, 100000.0, 1000000.0)


def pair_indices(pair: int, d: int = HEAD_SIZE, pairing: str = "halves") -> tuple[int, int]:
    """The two numbers that turn together as pair ``pair``."""
    return (pair, pair + d // 2) if pairing == "halves" else (2 * pair, 2 * pair + 1)


def rope_score(query_pos, key_pos, base=10000.0, pairing="halves", query=QUERY, key=KEY,
               rope=rope) -> float:
    """The scaled score of the query turned for query_pos against the key turned for key_pos."""
    q = rope(query, base, pairing, offset=query_pos)
    k = rope(key, base, pairing, offset=key_pos)
    return float(q @ k / math.sqrt(len(query)))


def rope_model(query_pos=5, key_pos=2, base=10000.0, pairing="halves", pair=0, rope=rope) -> dict:
    """Rotary positions for one query and one key: the turned pair, the score, and its constancy.

    ``rope(x, base, pairing, offset)`` turns one vector (``lib.positional.rope`` or the learner's)."""
    if pairing not in PAIRINGS:
        pairing = "halves"
    m, n = min(max(0, int(query_pos)), POS_MAX), min(max(0, int(key_pos)), POS_MAX)
    pair = min(max(0, int(pair)), HEAD_SIZE // 2 - 1)
    base = float(base)
    q_turned = rope(QUERY, base, pairing, offset=m)
    k_turned = rope(KEY, base, pairing, offset=n)
    score = float(q_turned @ k_turned / math.sqrt(HEAD_SIZE))
    # The same distance anywhere in 0..POS_MAX: both positions moved together.
    shifts = range(-min(m, n), POS_MAX - max(m, n) + 1)
    together = np.array([rope_score(m + s, n + s, base, pairing, rope=rope) for s in shifts])
    spread = float(np.max(np.abs(together - score)))
    distances = np.arange(-POS_MAX, POS_MAX + 1)
    curve = np.array([rope_score(max(t, 0), max(-t, 0), base, pairing, rope=rope) for t in distances])
    i, j = pair_indices(pair, HEAD_SIZE, pairing)
    lengths = {"query": (float(np.linalg.norm(QUERY)), float(np.linalg.norm(q_turned))),
               "key": (float(np.linalg.norm(KEY)), float(np.linalg.norm(k_turned)))}
    kept = all(math.isclose(a, b, rel_tol=1e-12) for a, b in lengths.values())
    same = "the same to 12 decimals" if spread < 1e-12 else f"within {spread:.1e}"
    verdict = (f"Query at {m}, key at {n}, {abs(m - n)} apart: score {score:.3f}. "
               f"Moved together anywhere from 0 to {POS_MAX}, the score stays {score:.3f} ({same}). "
               f"The turn keeps the lengths: query {lengths['query'][1]:.2f}, key {lengths['key'][1]:.2f}"
               f"{'' if kept else ' (changed!)'}.")
    theta = base ** (-pair / (HEAD_SIZE // 2))
    return {"query_pos": m, "key_pos": n, "base": base, "pairing": pairing, "pair": pair,
            "indices": (i, j), "theta": theta,
            "q_before": (QUERY[i], QUERY[j]), "q_after": (q_turned[i], q_turned[j]),
            "k_before": (KEY[i], KEY[j]), "k_after": (k_turned[i], k_turned[j]),
            "score": score, "together": together, "spread": spread, "distances": distances,
            "curve": curve, "lengths": lengths, "lengths_kept": kept, "verdict": verdict}


class RotaryLab:
    """The view: sliders for the two positions, the base and the pair; a pairing dropdown;
    the pair on a plane and the score against the distance."""

    def __init__(self, query_pos=5, key_pos=2, base=10000.0, pairing="halves", pair=0):
        import ipywidgets as widgets
        from matplotlib.patches import Circle

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure
        from .kit.own_function import MineSwitch

        style = {"description_width": "initial"}
        wide = widgets.Layout(width="20em")
        self.q_slider = widgets.IntSlider(value=query_pos, min=0, max=POS_MAX,
                                          description="query position", style=style, layout=wide)
        self.q_slider.add_class("course-slider-query")
        self.k_slider = widgets.IntSlider(value=key_pos, min=0, max=POS_MAX,
                                          description="key position", style=style, layout=wide)
        self.k_slider.add_class("course-slider-key")
        self.base_slider = widgets.SelectionSlider(options=[(f"{b:,.0f}", b) for b in BASES],
                                                   value=float(base), description="base",
                                                   style=style, layout=wide)
        self.base_slider.add_class("course-slider-base")
        self.pair_slider = widgets.IntSlider(value=pair, min=0, max=HEAD_SIZE // 2 - 1,
                                             description="pair shown", style=style, layout=wide)
        self.pair_slider.add_class("course-slider-pair")
        self.pairing = widgets.Dropdown(options=[("halves: i with i + 16", "halves"),
                                                 ("neighbours: 2i with 2i + 1", "neighbours")],
                                        value=pairing, description="pairing", style=style,
                                        layout=widgets.Layout(width="20em"))
        self.pairing.add_class("course-pairing")
        self.up = widgets.Button(description="both +1", layout=widgets.Layout(width="auto"),
                                 tooltip="move the query and the key one position later")
        self.up.add_class("course-both-up")
        self.down = widgets.Button(description="both \u22121", layout=widgets.Layout(width="auto"),
                                   tooltip="move the query and the key one position earlier")
        self.down.add_class("course-both-down")
        self.verdict = widgets.HTML()
        self.verdict.add_class("course-verdict")

        fig = new_figure(6.4, 3.8)
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 1.25])
        plane, curve = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        q_colour, k_colour = OKABE_ITO["vermillion"], OKABE_ITO["blue"]
        self.q_circle = Circle((0, 0), 1, fill=False, ls=":", edgecolor=q_colour, lw=1)
        self.k_circle = Circle((0, 0), 1, fill=False, ls=":", edgecolor=k_colour, lw=1)
        plane.add_patch(self.q_circle)
        plane.add_patch(self.k_circle)
        plane.axhline(0, color="0.75", lw=0.8)
        plane.axvline(0, color="0.75", lw=0.8)
        (self.q_start,) = plane.plot([], [], "o", mfc="none", mec=q_colour, ms=7,
                                     label="query, unturned")
        (self.k_start,) = plane.plot([], [], "s", mfc="none", mec=k_colour, ms=7,
                                     label="key, unturned")
        (self.q_line,) = plane.plot([], [], "-o", color=q_colour, lw=2, ms=7, markevery=[1],
                                    label="query, turned")
        (self.k_line,) = plane.plot([], [], "--s", color=k_colour, lw=2, ms=7, markevery=[1],
                                    label="key, turned")
        plane.set_aspect("equal", adjustable="box")
        plane.set_xlabel("first number of the pair")
        plane.set_ylabel("second number")
        plane.tick_params(labelsize=9)
        self.plane_title = plane.set_title("pair 0: numbers 0 and 16", fontsize=10)
        self.plane = plane

        (self.curve_line,) = curve.plot([], [], color=OKABE_ITO["blue"], lw=1.5,
                                        marker=".", ms=3, label="score at each distance")
        (self.marker,) = curve.plot([], [], "o", color=OKABE_ITO["orange"], mec="black", ms=9,
                                    label="the query and key now")
        curve.axhline(0, color="0.75", lw=0.8)
        curve.set_xlabel("distance (query \u2212 key position)")
        curve.set_ylabel("score q\u00b7k / \u221a32")
        curve.tick_params(labelsize=9)
        self.curve_title = curve.set_title("score 0.000, base 10,000", fontsize=10)
        self.curve = curve
        fig.legend(handles=[self.q_line, self.k_line, self.q_start, self.k_start, self.curve_line,
                            self.marker], loc="lower center", ncol=3, fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.13, 1, 1))
        self.view = FigureView(fig, description="A query and key pair on the plane, and the score")

        controls = _controls(*[self.q_slider, self.k_slider, self.up, self.down,
                                  self.base_slider, self.pairing, self.pair_slider])
        self.mine = MineSwitch([ROPE_USE], self._on_change)
        self.root = widgets.VBox([controls, self.mine.widget, self.view.widget, self.verdict])
        self.root.add_class("course-lab")
        self.root.add_class("course-lab-rotary")
        for w in (self.q_slider, self.k_slider, self.base_slider, self.pairing, self.pair_slider):
            w.observe(self._on_change, names="value")
        self.up.on_click(lambda _b: self._move_both(1))
        self.down.on_click(lambda _b: self._move_both(-1))
        self._holding = False
        self.update()

    def _move_both(self, step: int) -> None:
        m, n = self.q_slider.value + step, self.k_slider.value + step
        if min(m, n) < 0 or max(m, n) > POS_MAX:
            return                                               # would leave the slider's range
        self._holding = True
        self.q_slider.value, self.k_slider.value = m, n
        self._holding = False
        self.update()

    def _on_change(self, _change=None) -> None:
        if not self._holding:
            self.update()

    def update(self) -> dict:
        args = (self.q_slider.value, self.k_slider.value, self.base_slider.value, self.pairing.value,
                self.pair_slider.value)
        model = self.mine.run(lambda turn: rope_model(*args, rope=turn))
        (qa, qb), (ka, kb) = model["q_after"], model["k_after"]
        self.q_start.set_data([model["q_before"][0]], [model["q_before"][1]])
        self.k_start.set_data([model["k_before"][0]], [model["k_before"][1]])
        self.q_line.set_data([0, qa], [0, qb])
        self.k_line.set_data([0, ka], [0, kb])
        rq, rk = math.hypot(qa, qb), math.hypot(ka, kb)
        self.q_circle.set_radius(rq)
        self.k_circle.set_radius(rk)
        r = 1.15 * max(rq, rk, 1e-3)
        self.plane.set_xlim(-r, r)
        self.plane.set_ylim(-r, r)
        i, j = model["indices"]
        self.plane_title.set_text(f"pair {model['pair']}: numbers {i} and {j}")
        distance = model["query_pos"] - model["key_pos"]
        self.curve_line.set_data(model["distances"], model["curve"])
        self.marker.set_data([distance], [model["score"]])
        top = max(float(np.max(np.abs(model["curve"]))), 0.1) * 1.15
        self.curve.set_xlim(-POS_MAX - 1, POS_MAX + 1)
        self.curve.set_ylim(-top, top)
        self.curve_title.set_text(f"score {model['score']:.3f}, base {model['base']:,.0f}")
        self.view.redraw()
        self.verdict.value = _verdict_html(model["verdict"])
        self.model = model
        return model


def rotary_lab(**initial):
    """The rotary-positions lab's root widget (class ``course-lab``)."""
    return RotaryLab(**initial).root
