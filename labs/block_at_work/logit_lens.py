"""The logit-lens lab (notebook 06): each block's residual stream read through the model's output
layer (its final norm and the embedding table): how probable the right next token already is
after the embedding and after every block.

Model: ``lens_model`` (``lib.model.forward`` with trace=True, then ``lib.model.output_logits`` on
every stream). View: ``LensLab``. Root widget: ``lens_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib import model
from engine.kit.layout import controls, lab_root, menu, numbers_widget, verdict_widget
from engine.kit.result import Result
from engine.presentation.html import plain
from engine.presentation.numbers import fixed
from engine.presentation.tables import table

# Each text with the token after which its answer starts: the predictions from there on are the
# ones the lab scores.
TEXTS = {"copy": ("copy b d a e | b d a e .", "|"), "reverse": ("reverse c a h e | e h a c .", "|"),
         "count": ("count 3 4 5 6 7 .", "count"), "sum": ("5 plus 2 is 7 .", "is"),
         "agreement": ("the big cats chase the dog .", "cats")}
ANSWERABLE = 0.5           # "answerable": the right token's mean probability reaches this


@dataclass(frozen=True)
class LensResult(Result):
    """The logit lens on one text's answer.

    rows: (answers,) the positions whose next token is part of the answer; p: (layers + 1,
    answers) the right next token's probability read from the stream after the embedding (row 0)
    and after each block; mean: (layers + 1,) its mean per stream.
    """
    text: str                   # a key of TEXTS
    words: str
    ids: np.ndarray
    rows: np.ndarray
    p: np.ndarray
    mean: np.ndarray
    block: int | None           # the first stream whose mean reaches threshold (0: the embedding)
    answers: int
    threshold: float
    verdict: str


@lru_cache(maxsize=len(TEXTS))
def lens_model(text: str = "copy") -> LensResult:
    """The logit lens on one of TEXTS: p[i, t], the probability of token t + 1 read from the
    stream after the embedding (i = 0) and after block i, for the predictions of the answer (from
    the token after which it starts to the end); their mean per stream; the first stream whose
    mean reaches ANSWERABLE (0 = the embedding, None if none does) and the verdict."""
    text = text if text in TEXTS else "copy"
    words, start = TEXTS[text]
    ids = model.encode(words)
    streams = model.forward(ids, trace=True).streams                     # (layers + 1, n, d)
    probs = model.probabilities(model.output_logits(streams).astype(np.float64))   # (layers + 1, n, vocab)
    first = words.split().index(start)
    rows = np.arange(first, len(ids) - 1)                                 # the answer's predictions
    p = probs[:, rows, ids[rows + 1]]                                     # (layers + 1, answer)
    mean = p.mean(axis=1)
    reached = np.flatnonzero(mean >= ANSWERABLE)
    block = int(reached[0]) if reached.size else None
    where = ("the embedding alone" if block == 0 else f"block {block}" if block else "no block")
    verdict = (f"\u201c{words}\u201d: the right next token's mean probability over the "
               f"{len(rows)} answer predictions is {fixed(mean[0])} read from the embedding and "
               f"{fixed(mean[-1])} after the last block; {where} first makes it at least {fixed(ANSWERABLE, 1)} "
               + (f"({fixed(mean[block])})." if block is not None else "."))
    return LensResult(text=text, words=words, ids=ids, rows=rows, p=p, mean=mean, block=block,
                      answers=len(rows), threshold=ANSWERABLE, verdict=verdict)


class LensLab:
    """The view: a text menu; a grid of the right token's probability, stream by answer token."""

    def __init__(self, text="copy"):
        from engine.kit.figure_view import FigureView, cell_grid, new_figure

        layers = model.config().layers
        self.text = menu(list(TEXTS), text, "text")
        self.verdict, self.numbers = verdict_widget(), numbers_widget()
        most = max(len(lens_model(t).rows) for t in TEXTS)
        fig = new_figure(6.4, 3.0)
        ax = fig.add_subplot()
        self.mesh = cell_grid(ax, np.full((layers + 1, most), np.nan), cmap="viridis", vmin=0, vmax=1)
        ax.set_yticks(np.arange(layers + 1), ["embedding"] + [f"after block {i}" for i in range(1, layers + 1)],
                      fontsize=8)
        ax.set_xticks(np.arange(most), [""] * most)
        self.words = [ax.text(j, -0.04, "", ha="center", va="top", fontsize=8, transform=ax.get_xaxis_transform())
                      for j in range(most)]
        ax.set_xlabel("the answer's next tokens, in order", labelpad=14)
        ax.set_title("the right next token's probability, read from each stream", fontsize=10)
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        scale = ScalarMappable(norm=Normalize(0, 1), cmap="viridis")   # not the mesh: its changes redraw no bar
        bar = fig.colorbar(scale, ax=ax, fraction=0.05, pad=0.03)
        bar.ax.tick_params(labelsize=8)
        bar.set_label("probability", fontsize=8)
        fig.subplots_adjust(left=0.2, right=0.78, top=0.88, bottom=0.3)
        self.ax, self.most = ax, most
        self.view = FigureView(fig, description="Grid: the right next token's probability read from the stream "
                                                "after the embedding and after each block",
                               changing=[self.mesh, self.words])
        self.root = lab_root("logit-lens", [controls(self.text), self.view.widget, self.verdict, self.numbers])
        self.text.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> LensResult:
        from engine.kit.figure_view import set_cells, set_changed, set_limits

        m = lens_model(self.text.value)
        grid = np.full((len(m.p), self.most), np.nan)
        grid[:, :m.p.shape[1]] = m.p
        set_cells(self.mesh, np.ma.masked_invalid(grid))
        vocab = model.vocab()
        targets = [vocab[i] for i in m.ids[m.rows + 1]]
        for j, text in enumerate(self.words):          # none beyond the text's columns (off the grid)
            set_changed(text, text=targets[j] if j < len(targets) else "", visible=j < len(targets))
        set_limits(self.ax, x=(-0.5, m.p.shape[1] - 0.5))        # the text's own columns, none left empty
        self.view.redraw(state=self.text.value)
        self.verdict.value = plain(m.verdict)
        names = ["embedding"] + [f"after block {i}" for i in range(1, len(m.mean))]
        self.numbers.value = table([[name, fixed(v)] for name, v in zip(names, m.mean)],
                                   header=["stream", "mean probability of the right token"])
        self.model = m
        return m


def lens_lab(**initial):
    """The logit-lens lab's root widget (class ``course-lab-logit-lens``)."""
    return LensLab(**initial).root
