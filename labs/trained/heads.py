"""The attention-heads lab (notebook 05): where each head of the trained model looks while the model
copies or reverses a list of letters, and what the copy and reverse predictions lose when one head
is left out.

What the lab shows depends on nothing but what is picked (the held-out text, its sentence, the
block, the head and whether it is left out), so it is computed when the course is built and
looked up (``precomputed``): each head's weights on each copy and reverse sentence
(:func:`sentence_maps`), each text's copy and reverse perplexities with every head
(:func:`text_perplexities`) and without each head (:func:`text_without_head`), and, over every
text, the heads' weights (:func:`head_summary`) and the perplexities with every head and without
each (:func:`pooled_perplexities`). Where a result is not in the store
(other weights), it is computed live: :func:`text_attention` runs the model on a text once, with
each head's attention weights kept, as ``lib.block.block`` computes them, at the rows of the
text's copy and reverse sentences; :func:`left_out_losses` runs the blocks from a head's block
on with that head left out.

Model: ``heads_model`` (the maps, the heads' weights pooled over every held-out text, and the
copy and reverse perplexities with every head and with one head left out). View: ``HeadsLab``. Root widget:
``heads_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from lib import model
from lib.attention import causal_weights
from engine.presentation.html import plain
from engine.presentation.numbers import amount, count, fixed
from engine.presentation.tables import table

from engine.kit.figure_view import cell_grid, decades, set_cells, set_changed, set_limits
from engine.kit.layout import choice, controls, lab_root, menu, numbers_widget, switch, verdict_widget
from engine.kit.result import Result
from .held_out import texts
from .precomputed import precomputed

KINDS = ("copy", "reverse")
LONGEST = 13               # tokens of the longest copy or reverse sentence: 5 letters, twice, the bar and the two ends
TOP_POWER = 4              # the perplexity panel runs up to 10,000; beyond, a bar is marked


# ---------------------------------------------------------------- the sentences of a text

class Sentence(NamedTuple):
    """A copy or reverse sentence of a held-out text: its kind, the position of its first word
    ("copy" or "reverse"), of its bar and just past its end (the text may cut it short)."""
    kind: str
    start: int
    bar: int
    stop: int

    @property
    def letters(self) -> int:
        return self.bar - self.start - 1

    @property
    def complete(self) -> bool:
        return self.stop - self.start == 2 * self.letters + 3


class Predictions(NamedTuple):
    """The copy and reverse predictions of a text, each made at one row: rows (p,) the row that
    predicts (it guesses the token after it), kinds (p,) "copy" or "reverse", sources (p,) the
    position of the letter it must write, in the first half of its sentence."""
    rows: np.ndarray
    kinds: np.ndarray
    sources: np.ndarray


@lru_cache(maxsize=8)
def sentences(text: int) -> tuple:
    """Every copy and reverse sentence of held-out text ``text`` (0-based), in order; a sentence
    cut by the end of the text before its bar is left out."""
    ids, vocab = texts()[text].ids, model.vocab()
    found = []
    for start in np.flatnonzero(np.isin(ids, [vocab.index(k) for k in KINDS])):
        bars = np.flatnonzero(ids[start:] == vocab.index("|"))
        if not len(bars):
            continue
        bar = int(start + bars[0])
        stop = min(bar + (bar - start - 1) + 2, len(ids))
        found.append(Sentence(vocab[ids[start]], int(start), bar, int(stop)))
    return tuple(found)


@lru_cache(maxsize=8)
def predictions(text: int) -> Predictions:
    """The copy and reverse predictions of held-out text ``text``, from its labels (every token
    labelled "copy" or "reverse" is one), with the letter each must write."""
    t, names = texts()[text], model.info()["kinds"]
    rows, kinds, sources = [], [], []
    for s in sentences(text):
        for answer in range(s.bar + 1, s.stop):
            kind = names[t.kinds[answer]]
            if kind not in KINDS:
                continue
            k = answer - s.bar - 1                                   # the k-th letter written
            source = s.start + 1 + (k if kind == "copy" else s.letters - 1 - k)
            rows.append(answer - 1)
            kinds.append(kind)
            sources.append(source)
    return Predictions(np.array(rows, dtype=np.int64), np.array(kinds), np.array(sources, dtype=np.int64))


# ---------------------------------------------------------------- one run per text, weights kept

class TextAttention(NamedTuple):
    """What one run of the model on a held-out text kept (layers L, heads H):

    streams:  (L + 1, n, d) the stream before each block and after the last;
    maps:     one per sentence of ``sentences``: (L, H, rows, 1 + rows) the weights of each row of
              the sentence on the text before it (summed, column 0) and on each of its tokens;
    source:   (L, H, p) each head's weight, at each prediction's row, on the letter to write;
    after:    (L, H, p) on the token just after that letter;
    previous: (L, H, r) at each letter before a bar, on the token just before it;
    losses:   (p,) -log p(the right letter) at each prediction, the whole model."""
    streams: np.ndarray
    maps: tuple
    source: np.ndarray
    after: np.ndarray
    previous: np.ndarray
    losses: np.ndarray


def _letters_before_bars(text: int) -> np.ndarray:
    return np.array([row for s in sentences(text) for row in range(s.start + 1, s.bar)], dtype=np.int64)


@lru_cache(maxsize=8)
def text_attention(text: int) -> TextAttention:
    """Run the trained model on held-out text ``text`` once, keeping each head's weights where
    the lab and the notebook read them (see ``TextAttention``); cached, read-only."""
    ids, p = texts()[text].ids, predictions(text)
    letters = _letters_before_bars(text)
    kept = {"maps": [], "source": [], "after": [], "previous": []}

    def weigh_and_keep(scores):                                          # (heads, n, n)
        weights = causal_weights(scores)
        kept["maps"].append([np.concatenate([weights[:, s.start:s.stop, :s.start].sum(-1, keepdims=True),
                                             weights[:, s.start:s.stop, s.start:s.stop]], axis=-1)
                             for s in sentences(text)])
        kept["source"].append(weights[:, p.rows, p.sources])
        kept["after"].append(weights[:, p.rows, p.sources + 1])
        kept["previous"].append(weights[:, letters, letters - 1])
        return weights

    x = model.embed(ids)
    streams = [x]
    for run_block in model.blocks():
        x = run_block(x, causal_weights=weigh_and_keep)
        streams.append(x)
    losses = model.token_losses(model.output_logits(x), ids)[p.rows]
    maps = tuple(np.array(per_sentence) for per_sentence in zip(*kept["maps"]))
    out = TextAttention(np.array(streams), maps, np.array(kept["source"]), np.array(kept["after"]),
                        np.array(kept["previous"]), losses)
    for array in (out.streams, *out.maps, out.source, out.after, out.previous, out.losses):
        array.setflags(write=False)
    return out


def every_text() -> tuple:
    """``text_attention`` of every held-out text (each computed once per kernel)."""
    return tuple(text_attention(i) for i in range(len(texts())))


def _every_sentence() -> list:
    return [{"text": t, "sentence": i} for t in range(len(texts())) for i in range(len(sentences(t)))]


@precomputed(_every_sentence)
def _sentence_maps(text, sentence) -> dict:
    kept = text_attention(text).maps[sentence]                         # (L, H, rows, rows + 1)
    maps = np.full(kept.shape[:2] + (LONGEST, LONGEST + 1), np.nan, dtype=kept.dtype)
    maps[:, :, :kept.shape[2], :kept.shape[3]] = kept                  # every sentence on one grid
    return {"maps": maps}


def sentence_maps(text: int, sentence: int) -> np.ndarray:
    """Every head's weights on sentence ``sentence`` of held-out text ``text`` (both 0-based),
    (L, H, rows, rows + 1): ``text_attention(text).maps[sentence]`` (computed when the course was
    built: ``precomputed``)."""
    s = sentences(text)[sentence]
    rows = s.stop - s.start
    return _sentence_maps(text=int(text), sentence=int(sentence))["maps"][:, :, :rows, :rows + 1]


@precomputed(lambda: [{"text": t} for t in range(len(texts()))])
def _text_perplexities(text) -> dict:
    return perplexities(text, text_attention(text).losses)


def text_perplexities(text: int) -> dict:
    """``perplexities`` of held-out text ``text`` (0-based) with every head (computed when the
    course was built: ``precomputed``)."""
    return _text_perplexities(text=int(text))


# ---------------------------------------------------------------- one head left out

def without_head(head: int):
    """A ``causal_weights`` for ``lib.block.block`` that leaves head ``head`` (0-based) out: its
    weights are all 0, so it adds nothing to the stream; the other heads are as trained."""
    def weights(scores):                                                 # (..., heads, n, n)
        out = causal_weights(scores)
        out[..., head, :, :] = 0.0
        return out
    return weights


@lru_cache(maxsize=128)
def left_out_losses(text: int, block: int, head: int) -> np.ndarray:
    """-log p(the right letter) at each copy and reverse prediction of held-out text ``text``
    with head ``head`` of block ``block`` (both 0-based) left out; cached, read-only.

    The blocks before ``block`` compute what they always do, so the run starts from the kept
    stream there. The text is cut after its last prediction (no row reads a later one), and the
    last block's FFN, which works on each row alone, runs only on the rows that predict."""
    p, runs = predictions(text), model.blocks()
    end = int(p.rows.max()) + 1 if len(p.rows) else 1
    x = np.array(text_attention(text).streams[block][:end])
    last = len(runs) - 1
    for number in range(block, last):
        x = runs[number](x, causal_weights=without_head(head) if number == block else causal_weights)
    x = runs[last](x, use_ffn=False, causal_weights=without_head(head) if block == last else causal_weights)
    x = runs[last](x[p.rows], use_attention=False)                      # (p, d): each row on its own
    logp = model.log_probabilities(model.output_logits(x))
    losses = -logp[np.arange(len(p.rows)), texts()[text].ids[p.rows + 1]]
    losses.setflags(write=False)
    return losses


# ---------------------------------------------------------------- pooled over the texts

class HeadSummary(NamedTuple):
    """Each head's average weight (L, H) over every held-out text: ``copy`` and ``reverse`` on the
    letter to write, at the copy and at the reverse predictions; ``after`` on the token just after
    it, at the reverse predictions; ``previous`` on the token before, at the letters before a
    bar; and how many rows each average rests on (``counts``). ``by_distance``: for "copy" and
    "reverse", (distances (n,), rows (n,), weights (L, H, n)): the weight on the letter to write
    averaged over the predictions whose letter stands that many tokens before the row."""
    copy: np.ndarray
    reverse: np.ndarray
    after: np.ndarray
    previous: np.ndarray
    counts: dict
    by_distance: dict


@precomputed(lambda: [{}])
def _pooled_looks() -> dict:
    runs = every_text()
    kinds = np.concatenate([predictions(i).kinds for i in range(len(runs))])
    source = np.concatenate([r.source for r in runs], axis=-1)           # (L, H, all predictions)
    after = np.concatenate([r.after for r in runs], axis=-1)
    previous = np.concatenate([r.previous for r in runs], axis=-1)
    copy, reverse = kinds == "copy", kinds == "reverse"
    back = np.concatenate([predictions(i).rows - predictions(i).sources for i in range(len(runs))])
    found = {"copy": source[..., copy].mean(-1), "reverse": source[..., reverse].mean(-1),
             "after": after[..., reverse].mean(-1), "previous": previous.mean(-1),
             "copy_rows": int(copy.sum()), "reverse_rows": int(reverse.sum()), "previous_rows": previous.shape[-1]}
    for kind, where in (("copy", copy), ("reverse", reverse)):        # how far back the letter stands
        distances = np.unique(back[where])
        found[f"{kind}_distances"] = distances
        found[f"{kind}_distance_rows"] = np.array([int((back[where] == d).sum()) for d in distances])
        found[f"{kind}_by_distance"] = np.stack([source[..., where & (back == d)].mean(-1) for d in distances], -1)
    return found


@lru_cache(maxsize=1)
def head_summary() -> HeadSummary:
    """The heads' weights of ``HeadSummary``, pooled over every held-out text (computed when the
    course was built: ``precomputed``)."""
    looks = _pooled_looks()
    return HeadSummary(looks["copy"], looks["reverse"], looks["after"], looks["previous"],
                       {kind: int(looks[f"{kind}_rows"]) for kind in ("copy", "reverse", "previous")},
                       {kind: (looks[f"{kind}_distances"], looks[f"{kind}_distance_rows"], looks[f"{kind}_by_distance"])
                        for kind in KINDS})


def _every_head() -> list:
    layers, heads = model.info()["config"]["layers"], model.info()["config"]["heads"]
    return [{"block": None, "head": None}] + [{"block": b, "head": h} for b in range(1, layers + 1)
                                             for h in range(1, heads + 1)]


@precomputed(_every_head)
def _pooled_perplexities(block, head) -> dict:
    runs = range(len(texts()))
    losses = np.concatenate([text_attention(i).losses if block is None else left_out_losses(i, block - 1, head - 1)
                             for i in runs])
    kinds = np.concatenate([predictions(i).kinds for i in runs])
    with np.errstate(over="ignore"):
        return {kind: float(np.exp(losses[kinds == kind].mean())) for kind in KINDS}


def pooled_perplexities(block: int | None = None, head: int | None = None) -> dict:
    """The perplexity of the copy and of the reverse predictions of every held-out text together:
    the whole model, or with head ``head`` of block ``block`` (both counted from 1) left out
    (computed when the course was built for every head: ``precomputed``)."""
    if block is None or head is None:
        return _pooled_perplexities(block=None, head=None)
    return _pooled_perplexities(block=int(block), head=int(head))


def _every_text_and_head() -> list:
    layers, heads = model.info()["config"]["layers"], model.info()["config"]["heads"]
    return [{"text": t, "block": b, "head": h}
            for t in range(len(texts())) for b in range(layers) for h in range(heads)]


@precomputed(_every_text_and_head)
def _text_without_head(text, block, head) -> dict:
    return perplexities(text, left_out_losses(text, block, head))


def text_without_head(text: int, block: int, head: int) -> dict:
    """``perplexities`` of held-out text ``text`` with head ``head`` of block ``block`` left out
    (all 0-based; computed when the course was built for every text and head: ``precomputed``)."""
    return _text_without_head(text=int(text), block=int(block), head=int(head))


def perplexities(text: int, losses) -> dict:
    """{"copy": ..., "reverse": ...}: the perplexity of a text's copy and of its reverse
    predictions from their losses (NaN for a kind the text does not have)."""
    kinds = predictions(text).kinds
    with np.errstate(over="ignore"):
        return {kind: float(np.exp(np.mean(losses[kinds == kind]))) if (kinds == kind).any() else float("nan")
                for kind in KINDS}


# ---------------------------------------------------------------- the model of the lab

def _clip(value, low: int, high: int) -> int:
    return int(np.clip(int(value), low, high))


def _map_grid(weights, sentence: Sentence):
    """The chosen head's weights of one sentence on a fixed grid of LONGEST rows and LONGEST + 1
    columns (the text before it, then its tokens), empty cells NaN."""
    grid = np.full((LONGEST, LONGEST + 1), np.nan)
    rows = sentence.stop - sentence.start
    grid[:rows, :rows + 1] = weights
    grid[:rows, 1:rows + 1][np.triu_indices(rows, 1)] = np.nan         # the future: never looked at
    return grid


@dataclass(frozen=True)
class TrainedHeadResult(Result):
    """One head of the trained model on one sentence of a held-out text (all counted from 1).

    grid: (LONGEST, LONGEST + 1) the head's weights on the sentence (the text before it, then its
    tokens; empty cells NaN); marks: (row, column) of the letter each predicting row must write.
    looks: the head's pooled weights over every held-out text ("copy", "reverse", "after",
    "previous"); counts, pooled_counts: predictions by kind on this text and on all of them;
    whole, without: this text's perplexity by kind with every head and without this one.
    """
    text: int
    sentence: int
    block: int
    head: int
    leave_out: bool
    kind: str                   # the sentence's kind: "copy" or "reverse"
    words: list
    grid: np.ndarray
    marks: list
    looks: dict
    counts: dict
    pooled_counts: dict
    texts: int
    whole: dict
    without: dict | None        # None unless leave_out
    table: list                 # the block's heads, a row of texts each
    verdict: str


def heads_model(text: int = 1, sentence: int = 1, block: int = 1, head: int = 1,
                leave_out: bool = False) -> TrainedHeadResult:
    """Held-out text ``text``, its ``sentence``-th copy or reverse sentence, head ``head`` of block
    ``block`` (all counted from 1, as the lab shows them). Returns the head's weights on the
    sentence (``grid``, with its words and the letter each predicting row must write), the head's
    weights pooled over every held-out text, the four heads of its block in a table, the text's
    copy and reverse perplexities with the whole model and, with ``leave_out``, without the head,
    and the verdict."""
    layers, heads = model.info()["config"]["layers"], model.info()["config"]["heads"]
    text = _clip(text, 1, len(texts()))
    spans = sentences(text - 1)
    sentence = _clip(sentence, 1, len(spans))
    block, head = _clip(block, 1, layers), _clip(head, 1, heads)
    s = spans[sentence - 1]
    words = model.decode(texts()[text - 1].ids[s.start:s.stop]).split()
    p = predictions(text - 1)
    inside = (p.rows >= s.start) & (p.rows < s.stop)
    marks = [(int(r - s.start), int(c - s.start) + 1) for r, c in zip(p.rows[inside], p.sources[inside])]
    summary = head_summary()
    b, h = block - 1, head - 1
    whole = text_perplexities(text - 1)
    without = text_without_head(text - 1, b, h) if leave_out else None
    numbers = {"copy": float(summary.copy[b, h]), "reverse": float(summary.reverse[b, h]),
               "after": float(summary.after[b, h]), "previous": float(summary.previous[b, h])}
    n = {kind: int((p.kinds == kind).sum()) for kind in KINDS}
    rows = [(f"head {j + 1}" + (" (shown)" if j == h else ""), fixed(summary.copy[b, j]),
             fixed(summary.reverse[b, j]), fixed(summary.after[b, j]), fixed(summary.previous[b, j]))
            for j in range(heads)]
    who = f"Block {block}, head {head}"
    looks = (f"{who}, over the {len(texts())} texts: {fixed(numbers['copy'])} of its weight on the letter "
             f"to write at the {count(summary.counts['copy'])} copy predictions, {fixed(numbers['reverse'])} "
             f"at the {count(summary.counts['reverse'])} reverse ones; {fixed(numbers['previous'])} on the "
             f"previous token at the letters before a bar.")
    if without is None:
        effect = (f"Text {text}'s {n['copy']} copy and {n['reverse']} reverse predictions: perplexity "
                  f"{amount(whole['copy'])} and {amount(whole['reverse'])} with every head.")
    else:
        effect = (f"Without this head, text {text}'s {n['copy']} copy predictions go from perplexity "
                  f"{amount(whole['copy'])} to {amount(without['copy'])}, its {n['reverse']} reverse ones "
                  f"from {amount(whole['reverse'])} to {amount(without['reverse'])}.")
    return TrainedHeadResult(text=text, sentence=sentence, block=block, head=head, leave_out=bool(leave_out),
                       kind=s.kind, words=words, grid=_map_grid(sentence_maps(text - 1, sentence - 1)[b, h], s),
                       marks=marks, looks=numbers, counts=n, pooled_counts=dict(summary.counts), texts=len(texts()),
                       whole=whole, without=without, table=rows, verdict=f"{looks} {effect}")


def sentence_options(text: int) -> list:
    """The sentence menu of held-out text ``text`` (from 1): (its words, its number from 1)."""
    ids = texts()[_clip(text, 1, len(texts())) - 1].ids
    return [(model.decode(ids[s.start:s.stop]) + ("" if s.complete else " \u2026"), i + 1)
            for i, s in enumerate(sentences(_clip(text, 1, len(texts())) - 1))]


# ---------------------------------------------------------------- the view

TABLE_HEADER = ("", "copy: on the letter", "reverse: on the letter", "reverse: just after it",
                "previous token")


class HeadsLab:
    """The view: menus for the text and its sentence, choices for the block and the head, a switch
    that leaves the head out; the head's map of the sentence, the copy and reverse perplexities."""

    def __init__(self, text=1, sentence=1, block=1, head=1, leave_out=False):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        layers, heads = model.info()["config"]["layers"], model.info()["config"]["heads"]
        for t in range(len(texts())):        # every text looked up now (or computed now, not on a later move)
            text_perplexities(t)
            for i in range(len(sentences(t))):
                sentence_maps(t, i)
        self.text = menu([(f"text {i + 1}", i + 1) for i in range(len(texts()))], int(text), "held-out text")
        self.sentence = menu(sentence_options(int(text)), int(sentence), "sentence")
        self.block = choice([(str(i + 1), i + 1) for i in range(layers)], int(block), "block")
        self.head = choice([(str(i + 1), i + 1) for i in range(heads)], int(head), "head")
        self.leave_out = switch("leave this head out", bool(leave_out))
        self.verdict = verdict_widget()
        self.numbers = numbers_widget()
        fig = new_figure(6.4, 3.6)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.7, 1], wspace=0.45)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        from matplotlib import colormaps
        colours = colormaps["Blues"].with_extremes(bad="#e4e4e4")          # grey: the future, never looked at
        self.image = cell_grid(left, np.full((LONGEST, LONGEST + 1), np.nan), cmap=colours, vmin=0, vmax=1)
        left.set_xticks([])
        left.set_yticks([])
        left.axvline(0.5, color=OKABE_ITO["black"], linewidth=0.8)
        left.set_xlabel("looks at (key)", fontsize=9, labelpad=38)
        left.set_ylabel("row (query)", fontsize=9, labelpad=44)
        # The words change with the sentence: texts beside the grid, not tick labels (those would
        # cost a full draw of the figure on every change).
        self.row_words = [left.text(-0.7, i, "", ha="right", va="center", fontsize=9) for i in range(LONGEST)]
        self.column_words = [left.text(i, LONGEST, "", ha="center", va="top", fontsize=9, rotation=90)
                             for i in range(LONGEST + 1)]
        (self.rings,) = left.plot([], [], linestyle="none", marker="s", markersize=8, markerfacecolor="none",
                                  markeredgecolor=OKABE_ITO["vermillion"], markeredgewidth=1.8,
                                  label="the letter to write")
        # the key stands below the bars, outside the map: drawn once, never over the changing map
        self.key = fig.legend(handles=[self.rings], loc="lower right", bbox_to_anchor=(0.98, 0.0), fontsize=8,
                              frameon=False, handlelength=1)
        self.map_title = left.set_title("", fontsize=9)
        x = np.arange(len(KINDS))
        self.whole_bars = Bars(right, x - 0.2, width=0.4, facecolor=OKABE_ITO["sky"], label="every head")
        self.without_bars = Bars(right, x + 0.2, width=0.4, facecolor=OKABE_ITO["vermillion"], hatch="//",
                                 edgecolor="white", label="head left out")
        decades(right.yaxis, 0, TOP_POWER)
        right.set_ylim(0.8, 10.0 ** TOP_POWER)
        right.set_xticks(x, list(KINDS), fontsize=9)
        right.set_ylabel("perplexity (log)", fontsize=9)
        right.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        right.grid(True, axis="y", alpha=0.3)
        right.legend(loc="upper left", fontsize=8, frameon=True, framealpha=0.85)
        self.over = [right.text(i + 0.2, 0.98, "", ha="center", va="top", fontsize=8, rotation=90,
                                transform=right.get_xaxis_transform()) for i in x]
        self.bars_title = right.set_title("", fontsize=9)
        fig.subplots_adjust(left=0.12, right=0.98, top=0.9, bottom=0.24)
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Heat map: one head's attention weights on a copy or reverse "
                                                "sentence; bars: the text's copy and reverse perplexity",
                               changing=[self.image, self.row_words, self.column_words, self.rings, self.map_title,
                                         self.whole_bars.artist, self.without_bars.artist, self.over,
                                         self.bars_title])
        self.root = lab_root("heads", [controls(self.text, self.sentence),
                                       controls(self.block, self.head, self.leave_out),
                                       self.view.widget, self.verdict, self.numbers])
        self._new_options = False
        self.text.observe(self._new_text, names="value")
        for control in (self.sentence, self.block, self.head, self.leave_out):
            control.observe(lambda _c: None if self._new_options else self.update(), names="value")
        self.update()

    def _new_text(self, _change=None) -> None:
        """A new text has other sentences: the menu gets them, and its first is shown."""
        self._new_options = True
        try:
            self.sentence.options = sentence_options(self.text.value)
            self.sentence.value = 1
        finally:
            self._new_options = False
        self.update()

    def update(self) -> TrainedHeadResult:
        m = heads_model(self.text.value, self.sentence.value, self.block.value, self.head.value,
                        self.leave_out.value)
        set_cells(self.image, m.grid)
        rows = len(m.words)
        # the grid is cut to the sentence: one scale (and one cached background) per length
        set_limits(self.left, x=(-0.5, rows + 0.5), y=(rows - 0.5, -0.5))
        # the words past a short sentence's end are hidden: they would stand beyond the map, over the bars
        # (set_changed: a label that keeps its word, place and visibility is not drawn again)
        for i, label in enumerate(self.row_words):
            set_changed(label, text=m.words[i] if i < rows else "", visible=i < rows)
        for i, label in enumerate(self.column_words):
            set_changed(label, text="before" if i == 0 else m.words[i - 1] if i <= rows else "",
                        position=(i, rows - 0.3), visible=i <= rows)
        set_changed(self.rings, data=([c for _r, c in m.marks], [r for r, _c in m.marks]))
        # short enough to stay above its own axes (a title reaching the bars would cost full draws)
        set_changed(self.map_title, text=f"block {m.block}, head {m.head}; text {m.text}, {m.kind}")
        top = 10.0 ** TOP_POWER
        without = [m.without[kind] if m.without is not None else np.nan for kind in KINDS]
        self.whole_bars.set([min(m.whole[kind], top) if np.isfinite(m.whole[kind]) else np.nan
                             for kind in KINDS])                                   # NaN: no bar
        self.without_bars.set([min(shown, top) if np.isfinite(shown) else np.nan for shown in without])
        for mark, shown in zip(self.over, without):
            set_changed(mark, text=f"\u2191{amount(shown)}" if np.isfinite(shown) and shown > top else "")
        set_changed(self.bars_title, text=f"text {m.text}: {m.counts['copy']} copy and\n"
                                          f"{m.counts['reverse']} reverse predictions")
        self.view.redraw(state=rows)
        self.verdict.value = plain(m.verdict)
        self.numbers.value = table(m.table, header=[f"block {m.block}", *TABLE_HEADER[1:]],
                                   mono_columns=(1, 2, 3, 4))
        self.model = m
        return m


def heads_lab(**initial):
    """The attention-heads lab's root widget (class ``course-lab-heads``)."""
    return HeadsLab(**initial).root
