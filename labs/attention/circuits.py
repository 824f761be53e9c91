"""The circuits lab (notebook 01, attention): one head of the trained model read as two circuits.

Pick a short text, a block and a head of the course's trained model (``lib.model``: 4 blocks of
4 heads). The left grid is the head's attention map on the text (``lib.circuits.attention_maps``):
where each token looks, the work of the head's QK circuit, x_i W_Q W_Kᵀ x_jᵀ (with the positions
turned in). The right grid is its OV circuit, W_V W_O, read through the tied embedding: row s is
what the head would add to the logits if it put all its weight on token s, from s's embedding row
through the block's norm gain, W_V, W_O, the final norm's gain and the output layer (the blocks
in between left out), each row centred on its mean over the 55 tokens and divided by its spread.
A bright diagonal is a head that raises the token it reads: it copies.

Model: ``circuits_model`` (a ``CircuitsResult``). View: ``CircuitsLab``. Root widget: ``circuits_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed, plural
from engine.presentation.tables import table

from engine.kit.figure_view import cell_grid, set_cells, set_changed
from engine.kit.layout import choice, controls, lab_root, menu, numbers_widget, verdict_widget
from engine.kit.result import Result
from lib import circuits, model

TEXTS = ("copy b d a e | b d a e .", "reverse g a b | b a g .", "9 minus 4 is 5 .",
         "count 3 4 5 6 7 .", "the big dog sees the old cats .")
LONGEST = max(len(t.split()) for t in TEXTS)                     # 11 tokens
MOST_WORDS = max(len(dict.fromkeys(t.split())) for t in TEXTS)   # 7 distinct tokens
COPIES, LOWERS = 45, 10          # of the 55 tokens: from this many on it copies, up to this many it lowers
Z_LIMIT = 3.0                    # the colour scale of the OV grid, in spreads
WORD_SIZE, WORD_GAP = 8, 2       # points: the tokens' size beside the grids, and their gap to the cells


@lru_cache(maxsize=len(TEXTS))
def text_maps(text: str) -> np.ndarray:
    """Every head's attention map on ``text``: (blocks, heads, n, n), read-only."""
    maps = circuits.attention_maps(model.encode(text))
    maps.setflags(write=False)
    return maps


def read_through_embedding(ov: np.ndarray) -> np.ndarray:
    """OV matrices (..., d, d) read through the tied embedding: (..., vocab, vocab), row s what
    the matrix adds to the logits when it reads token s alone, E ov diag(g) Eᵀ (E the embedding,
    g the final norm's gain), centred on the row's mean and divided by its spread."""
    weights = model.weights()
    embedding = np.asarray(weights.embedding, dtype=np.float64)                  # (vocab, d)
    out = embedding @ ov @ (np.asarray(weights.final_norm_gain, dtype=np.float64)[:, None] * embedding.T)
    return (out - out.mean(axis=-1, keepdims=True)) / out.std(axis=-1, keepdims=True)


@lru_cache(maxsize=1)
def ov_readings() -> np.ndarray:
    """(blocks, heads, vocab, vocab): row s of head h in block b is what the head's OV circuit
    adds to the logits when it reads token s alone, E G W_V,h W_O,h diag(g) Eᵀ (G the block's
    attention norm gain; ``read_through_embedding``). The norms' divisions by the RMS scale a
    whole row and change nothing here. Read-only."""
    _qk, ov = circuits.head_circuits(model.weight_arrays(), model.config().heads)  # (blocks, heads, d, d)
    out = read_through_embedding(ov)
    out.setflags(write=False)
    return out


def raises_itself() -> np.ndarray:
    """(blocks, heads): for how many of the vocabulary's tokens each head's OV reading raises the
    token it reads above that row's mean (the diagonal of ``ov_readings`` above 0)."""
    return (np.diagonal(ov_readings(), axis1=-2, axis2=-1) > 0).sum(axis=-1)


def raises_by_chance(draws: int = 100, seed: int = 0) -> np.ndarray:
    """(draws,): the count of ``raises_itself`` for heads whose W_V,h (d, size) and W_O,h (size, d)
    are random normal numbers, of the trained heads' shapes, read the same way: what an OV
    circuit unrelated to the tokens scores."""
    d, heads = model.config().d_model, model.config().heads
    rng = np.random.default_rng(seed)
    ov = rng.normal(size=(draws, d, d // heads)) @ rng.normal(size=(draws, d // heads, d))
    return (np.diagonal(read_through_embedding(ov), axis1=-2, axis2=-1) > 0).sum(axis=-1)


@dataclass(frozen=True)
class Looks:
    """Where the heads of one block look on a text, each a (heads,) mean weight: ``previous`` on the
    token just before (rows 1 ... n − 1), ``itself`` on the token itself (every row), ``first``
    on the text's first token (rows 1 ... n − 1)."""
    previous: np.ndarray
    itself: np.ndarray
    first: np.ndarray


def looks(maps: np.ndarray) -> Looks:
    """``Looks`` of one block's maps (heads, n, n)."""
    n = maps.shape[-1]
    rows = np.arange(1, n)
    return Looks(maps[:, rows, rows - 1].mean(axis=-1), np.diagonal(maps, axis1=-2, axis2=-1).mean(axis=-1),
                 maps[:, 1:, 0].mean(axis=-1))


@dataclass(frozen=True)
class CircuitsResult(Result):
    """One setting of the lab (block and head counted from 1, as the lab shows them).

    words: the text's tokens; grid: (LONGEST, LONGEST) the head's map, NaN beyond the text and
    in the future; distinct: the text's tokens, each once, in order; ov_grid: (MOST_WORDS,
    MOST_WORDS) the OV reading among them (row: the token read, column: the token raised), NaN
    beyond. block_looks: the ``Looks`` of the block's heads on the text; copies: (heads,) for how
    many of the ``vocab`` tokens each head of the block raises the token it reads; copies_here:
    how many of the distinct tokens (``text_tokens`` of them) the chosen head raises. pattern, weight: where the chosen
    head looks most ("previous", "itself" or "first") and its mean weight there. verdict."""
    text: str
    block: int
    head: int
    words: tuple
    grid: np.ndarray
    distinct: tuple
    ov_grid: np.ndarray
    block_looks: Looks
    copies: np.ndarray
    copies_here: int
    text_tokens: int
    vocab: int
    pattern: str
    weight: float
    verdict: str


PLACES = {"previous": "the token just before it", "itself": "itself", "first": "the text's first token"}


def circuits_model(text: str = TEXTS[0], block: int = 1, head: int = 1) -> CircuitsResult:
    """Head ``head`` of block ``block`` (both from 1) on ``text`` (one of ``TEXTS``)."""
    layers, heads = model.config().layers, model.config().heads
    text = text if text in TEXTS else TEXTS[0]
    block, head = int(np.clip(int(block), 1, layers)), int(np.clip(int(head), 1, heads))
    words = tuple(text.split())
    n = len(words)
    maps = text_maps(text)[block - 1]                                   # (heads, n, n)
    grid = np.full((LONGEST, LONGEST), np.nan)
    grid[:n, :n] = np.where(np.tril(np.ones((n, n), dtype=bool)), maps[head - 1], np.nan)
    distinct = tuple(dict.fromkeys(words))
    ids = model.encode(" ".join(distinct))
    reading = ov_readings()[block - 1]                                  # (heads, vocab, vocab)
    ov_grid = np.full((MOST_WORDS, MOST_WORDS), np.nan)
    ov_grid[:len(ids), :len(ids)] = reading[head - 1][np.ix_(ids, ids)]
    block_looks = looks(maps)
    copies = raises_itself()[block - 1]
    copies_here = int((reading[head - 1][ids, ids] > 0).sum())
    found = {name: float(getattr(block_looks, name)[head - 1]) for name in PLACES}
    pattern = max(found, key=found.get)
    vocab = reading.shape[-1]
    k = int(copies[head - 1])
    tendency = (": it copies what it reads" if k >= COPIES else ": it lowers what it reads" if k <= LOWERS else "")
    verdict = (f"Block {block}, head {head} on \u201c{text}\u201d looks most at {PLACES[pattern]}, "
               f"{fixed(found[pattern])} of a token's weight on average. Read through the output layer, its OV "
               f"circuit raises the token it reads for {k} of the {vocab} tokens ({copies_here} of the "
               f"{plural(len(ids), 'token')} of this text){tendency}.")
    return CircuitsResult(text, block, head, words, grid, distinct, ov_grid, block_looks, copies, copies_here,
                          len(ids), vocab, pattern, found[pattern], verdict)


class CircuitsLab:
    """The view: a text menu and choices of block and head; the head's map on the text (QK at
    work) and its OV reading among the text's tokens; the block's four heads in a table."""

    def __init__(self, text: str = TEXTS[0], block: int = 1, head: int = 1):
        from matplotlib import colormaps

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        layers, heads = model.config().layers, model.config().heads
        for each in TEXTS:                       # every text run now, not on a later change
            text_maps(each)
        ov_readings()
        self.text = menu([(t, t) for t in TEXTS], text if text in TEXTS else TEXTS[0], "text")
        self.block = choice([(str(i), i) for i in range(1, layers + 1)], int(block), "block")
        self.head = choice([(str(i), i) for i in range(1, heads + 1)], int(head), "head")
        self.verdict = verdict_widget()
        self.numbers = numbers_widget()
        self.model = None

        fig = new_figure(6.4, 3.6)
        # Cells as wide in both grids (the map's LONGEST columns, the OV grid's MOST_WORDS), so
        # that the tokens above the columns have the same room in each; the last: the colour bar.
        grid = fig.add_gridspec(1, 3, width_ratios=[LONGEST, MOST_WORDS, 0.5], wspace=0.7)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        blues = colormaps["Blues"].with_extremes(bad="#e4e4e4")
        self.map = cell_grid(left, np.full((LONGEST, LONGEST), np.nan), cmap=blues, vmin=0, vmax=1)
        diverging = colormaps["PuOr_r"].with_extremes(bad="#e4e4e4")
        self.ov = cell_grid(right, np.full((MOST_WORDS, MOST_WORDS), np.nan), cmap=diverging,
                            vmin=-Z_LIMIT, vmax=Z_LIMIT)
        from matplotlib.patches import Rectangle

        # White strips cover the cells beyond the text: the grids keep their size and limits, so a
        # new text is drawn over the kept background, never a full draw.
        self.covers = {}
        for ax, size in ((left, LONGEST), (right, MOST_WORDS)):
            ax.set_xticks([])
            ax.set_yticks([])
            for spine in ax.spines.values():
                spine.set_visible(False)
            self.covers[ax] = [ax.add_patch(Rectangle((size - 0.5, -0.5), 0, size, facecolor="white",
                                                      edgecolor="none", zorder=2)) for _ in range(2)]
        # Column words above each grid and row words to its left, WORD_GAP points from the cells:
        # they stay beside the cells whatever the text's length (the cells beyond it are covered).
        # The grid's labels stand just beyond the longest of the texts' words, measured: every
        # point left over is taken from the grids, whose columns are narrow on a phone.
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import text_to_path
        from matplotlib.transforms import offset_copy

        font = FontProperties(size=WORD_SIZE)
        longest = max(text_to_path.get_text_width_height_descent(word, font, ismath=False)[0]
                      for text in TEXTS for word in text.split())
        pad = longest + 2 * WORD_GAP
        for ax, across, down in ((left, "looks at (key)", "token (query)"),
                                 (right, "raises this token", "reads this token")):
            ax.xaxis.set_label_position("top")
            ax.set_xlabel(across, fontsize=9, labelpad=pad)
            ax.set_ylabel(down, fontsize=9, labelpad=pad)
        self.map_title = left.set_title("", fontsize=9, pad=pad + 16)
        right.set_title("OV, read through the output", fontsize=9, pad=pad + 16)
        # The words change with the text: texts beside the grids, whose cells beyond the text
        # are covered. The words are the figure's static part, one state per text (drawn once,
        # then kept): a new block or head draws only the two grids, what lies on them (the covers
        # beyond the text, the diagonal's marks) and the map's title.
        def words(ax, size):
            beside = offset_copy(ax.transData, fig=fig, x=-WORD_GAP, units="points")
            above = offset_copy(ax.transData, fig=fig, y=WORD_GAP, units="points")
            return ([ax.text(-0.5, i, "", ha="right", va="center", fontsize=WORD_SIZE, transform=beside)
                     for i in range(size)],
                    [ax.text(i, -0.5, "", ha="center", va="bottom", fontsize=WORD_SIZE, rotation=90,
                             transform=above) for i in range(size)])

        self.map_rows, self.map_columns = words(left, LONGEST)
        self.ov_rows, self.ov_columns = words(right, MOST_WORDS)
        (self.diagonal,) = right.plot([], [], linestyle="none", marker="s", markersize=9, markerfacecolor="none",
                                      markeredgecolor=OKABE_ITO["black"], markeredgewidth=1.0,
                                      label="reads and raises the same token")
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        # a scale of its own: the grid's new numbers never reach the colour bar
        scale = ScalarMappable(norm=Normalize(-Z_LIMIT, Z_LIMIT), cmap=diverging)
        scale.axes = right             # the picture it keys, for the view's layout on a narrow screen
        bar = fig.colorbar(scale, cax=fig.add_subplot(grid[2]))
        bar.set_ticks([-Z_LIMIT, 0, Z_LIMIT], labels=["lowers", "0", "raises"], fontsize=8)
        bar.outline.set_visible(False)
        fig.legend(handles=[self.diagonal], loc="lower right", bbox_to_anchor=(0.99, 0.0), fontsize=8,
                   frameon=False, handlelength=1)
        fig.subplots_adjust(left=0.13, right=0.9, top=0.72, bottom=0.1)       # room for the bar's words
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Heat maps: one head's attention map on a text, and what its "
                                                "OV circuit raises for each token it reads",
                               changing=[self.map, self.ov, *self.covers[left], *self.covers[right], self.diagonal,
                                         self.map_title])
        self.root = lab_root("circuits", [controls(self.text, self.block, self.head), self.view.widget,
                                          self.verdict, self.numbers])
        for control in (self.text, self.block, self.head):
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def _show_text(self, m: CircuitsResult, n: int, k: int) -> None:
        """The static part for a text: its words beside the grids, the covers beyond its ``n``
        tokens (``k`` distinct ones) and the OV grid's diagonal marks."""
        for ax, size, shown in ((self.left, LONGEST, n), (self.right, MOST_WORDS, k)):
            right_strip, bottom_strip = self.covers[ax]          # beyond the text's columns, then its rows
            set_changed(right_strip, x=shown - 0.5, y=-0.5, width=size - shown, height=size)
            set_changed(bottom_strip, x=-0.5, y=shown - 0.5, width=size, height=size - shown)
        for labels, words in ((self.map_rows, m.words), (self.map_columns, m.words), (self.ov_rows, m.distinct),
                              (self.ov_columns, m.distinct)):
            for i, label in enumerate(labels):
                set_changed(label, text=words[i] if i < len(words) else "", visible=i < len(words))
        set_changed(self.diagonal, data=(list(range(k)), list(range(k))))

    def update(self) -> CircuitsResult:
        m = circuits_model(self.text.value, self.block.value, self.head.value)
        n, k = len(m.words), len(m.distinct)
        set_cells(self.map, m.grid)
        set_cells(self.ov, m.ov_grid)
        if self.model is None or self.model.text != m.text:
            self._show_text(m, n, k)
        set_changed(self.map_title, text=f"block {m.block}, head {m.head}: map (QK)")
        self.view.redraw(state=m.text)
        self.verdict.value = plain(m.verdict)
        lk = m.block_looks
        rows = [(f"head {h + 1}" + (" (shown)" if h + 1 == m.head else ""), fixed(lk.previous[h]), fixed(lk.itself[h]),
                 fixed(lk.first[h]), f"{count(m.copies[h])} of {m.vocab}") for h in range(len(m.copies))]
        self.numbers.value = table(rows, header=[f"block {m.block}", "on the token before", "on itself",
                                                 "on the first token", "raises the token it reads"],
                                   mono_columns=(1, 2, 3, 4))
        self.model = m
        return m


def circuits_lab(**initial):
    """The circuits lab's root widget (classes ``course-lab`` and ``course-lab-circuits``)."""
    return CircuitsLab(**initial).root
