"""The ablation lab (notebook 05): leave out any combination of the trained model's four blocks,
or its positions (RoPE), and watch the perplexity per kind of prediction and one prediction's
top words.

Model: ``ablation_model`` (``lib.model.forward`` with blocks skipped). View: ``AblationLab``.
Root widget: ``ablation_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib import model
from engine.presentation.html import plain
from engine.presentation.numbers import amount, count, fixed

from engine.kit.layout import controls, lab_root, slider, switch, verdict_widget
from engine.kit.result import Result
from .held_out import GROUPS, WATCHED_TOP, context, held_out, run, setting_perplexities, texts, watched_words
from .kind_bars import KindBars

TOP = WATCHED_TOP          # words shown for a watched prediction


@dataclass(frozen=True)
class AblationResult(Result):
    """The trained model with some blocks (and perhaps the positions) left out, on the held-out
    texts. full, now: perplexity by kind of prediction (a GROUPS label, "all texts" for every
    prediction) for the whole model and for this setting. top, top_now, top_full: (TOP,) the
    watched prediction's top words now and their probabilities now and with the whole model."""
    keep: tuple                 # one entry per block: False for a block left out
    skip: tuple                 # the blocks left out, numbered from 0
    removed_blocks: list        # the same, numbered from 1
    texts: int
    tokens: int
    predictions: int
    ratio: float                # now's perplexity over all texts / full's
    positions: bool
    watch: int                  # which of the decided predictions is watched
    position: int               # the watched prediction's position in the held-out text
    kind: str                   # its kind
    full: dict
    now: dict
    right: int                  # the word that came (its id)
    right_full: float           # its probability with the whole model and now
    right_now: float
    top: list
    top_now: list
    top_full: list
    context: str                # the text before the watched prediction
    verdict: str


def ablation_model(keep=(True, True, True, True), positions: bool = True, watch: int = 0) -> AblationResult:
    """The trained model with the blocks whose ``keep`` entry is False left out (the stream passes
    them unchanged) and, with positions=False, no RoPE. ``watch`` picks one of the held-out text's
    decided predictions (0 .. len(watchable) - 1). Returns perplexities per kind of prediction for
    the trained model and this setting, the watched prediction's top words, and the verdict."""
    layers = model.info()["config"]["layers"]
    keep = tuple(bool(k) for k in keep)[:layers]
    keep = keep + (True,) * (layers - len(keep))
    skip = tuple(i for i, k in enumerate(keep) if not k)
    ids, masks, watched, target_kinds = held_out()
    watch = int(np.clip(int(watch), 0, len(watched) - 1))
    position = int(watched[watch])
    _l, full_probs, _losses = run()
    words = watched_words(skip=skip, positions=bool(positions))       # the top words of every watched prediction
    full, now = setting_perplexities(), setting_perplexities(skip=skip, positions=bool(positions))
    vocab = model.vocab()
    right = int(ids[position + 1])
    top = [int(i) for i in words["top"][watch]]
    removed = [f"block {i + 1}" for i in skip] + ([] if positions else ["the positions"])
    whole_full, whole_now = full["all texts"], now["all texts"]
    pool = texts()
    if not removed:
        change = (f"The whole model: perplexity {amount(whole_full)} on the {len(pool)} held-out texts "
                  f"({count(sum(len(t.ids) - 1 for t in pool))} predictions, one for each token after a text's "
                  "first). Leave something out and compare.")
    else:
        ratios = {label: now[label] / full[label] for label, _k in GROUPS[:-1]
                  if np.isfinite(now[label]) and np.isfinite(full[label])}
        worst = max(ratios, key=ratios.get) if ratios else "all texts"
        change = (f"Without {' and '.join(removed)}, the perplexity rises from {amount(whole_full)} "
                  f"to {amount(whole_now)} (\u00d7{amount(whole_now / whole_full)}); hit hardest: "
                  f"{worst} ({amount(full[worst])} \u2192 {amount(now[worst])}).")
    guess = vocab[top[0]]
    watched_text = (f"Watched: after \u201c{context(position)}\u201d the right word \u201c{vocab[right]}\u201d "
                    f"gets {fixed(full_probs[position, right])} from the whole model")
    if removed:
        watched_text += f" and {fixed(words['right_p'][watch])} now"
    top_p = float(words["top_p"][watch][0])
    watched_text += (f"; the top word is \u201c{guess}\u201d ({fixed(top_p)})"
                     + (", the word that came." if top[0] == right else ", not the word that came."))
    return AblationResult(keep=keep, skip=skip, removed_blocks=[i + 1 for i in skip], texts=len(pool),
                          tokens=sum(len(t.ids) for t in pool), predictions=sum(len(t.ids) - 1 for t in pool),
                          ratio=whole_now / whole_full, positions=bool(positions), watch=watch,
                          position=position, kind=target_kinds[position], full=full, now=now,
                          right=right, right_full=float(full_probs[position, right]),
                          right_now=float(words["right_p"][watch]), top=top,
                          top_now=[float(p) for p in words["top_p"][watch]],
                          top_full=[float(full_probs[position, i]) for i in top],
                          context=context(position), verdict=f"{change} {watched_text}")


def _below_every_word(ax, word) -> float:
    """How far (in points, below ``ax``'s bottom) a label clears the top words written like
    ``word``, whichever word of the vocabulary, with its check mark, a bar is given: the word is
    rotated, so a tick-style axis label would sit across it. The words hang a fixed number of
    points under the axes, so the label clears them at any height the axes is drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    longest = max(model.vocab(), key=len) + " \u2713"
    probe = ax.text(*word.get_position(), longest, rotation=word.get_rotation(), ha=word.get_ha(),
                    va=word.get_va(), fontsize=word.get_fontsize(), transform=word.get_transform())
    lowest = probe.get_window_extent(renderer).y0
    probe.remove()
    return (ax.get_window_extent(renderer).y0 - lowest) * 72 / ax.figure.dpi + 2


def _first_watch(kind: str = "reverse") -> int:
    _ids, _m, watched, target_kinds = held_out()
    for n, position in enumerate(watched):
        if target_kinds[position] == kind:
            return n
    return 0


class AblationLab:
    """The view: a slider for the watched prediction, a toggle per block and for the positions."""

    def __init__(self, keep=(True, True, True, True), positions=True, watch=None):

        from matplotlib.transforms import offset_copy

        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        layers = model.info()["config"]["layers"]
        watched = held_out()[2]
        watch = _first_watch() if watch is None else watch
        self.watch = slider("int", value=watch, min=0, max=len(watched) - 1, step=1,
                            description="prediction to watch")
        self.watch.add_class("course-slider-watch")
        self.blocks = [switch(f"block {i + 1}", bool(keep[i]) if i < len(keep) else True, f"use block {i + 1}")
                       for i in range(layers)]
        self.positions = switch("positions (RoPE)", bool(positions))
        self.verdict = verdict_widget()
        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.25, 1], wspace=0.35)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.kinds = KindBars(left, "with parts left out")
        x = np.arange(TOP)
        self.top_full = Bars(right, x - 0.2, width=0.4, facecolor=OKABE_ITO["sky"])
        self.top_now = Bars(right, x + 0.2, width=0.4, facecolor=OKABE_ITO["vermillion"], hatch="//",
                            edgecolor="white")
        right.set_ylim(0, 1.05)
        right.set_xticks(x, [""] * TOP, fontsize=9)
        # The top words change with every setting: texts under the bars, not tick labels (those
        # would cost a full draw of the figure on every change).
        under_axis = offset_copy(right.get_xaxis_transform(), fig=fig, y=-3, units="points")
        self.words = [right.text(i, 0, "word", rotation=30, ha="right", va="top", fontsize=9,
                                 transform=under_axis) for i in x]
        right.set_ylabel("probability")
        self.right_title = right.set_title("", fontsize=9)
        right.grid(True, axis="y", alpha=0.3)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.84, bottom=0.27)
        self.right = right
        under_words = offset_copy(right.transAxes, fig=fig, y=-_below_every_word(right, self.words[0]),
                                  units="points")
        self.axis_label = right.text(0.5, 0, "top words now", ha="center", va="top", fontsize=9,
                                     transform=under_words)
        self.view = FigureView(fig, description="Bars: perplexity per kind of prediction, and one prediction's top words",
                               changing=[self.kinds.changing(), self.top_full.artist, self.top_now.artist,
                                         self.words, self.right_title])
        self.root = lab_root("ablation", [controls(self.watch), controls(*self.blocks, self.positions),
                                          self.view.widget, self.verdict])
        for control in (self.watch, *self.blocks, self.positions):
            control.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> AblationResult:
        m = ablation_model(tuple(b.value for b in self.blocks), self.positions.value, self.watch.value)
        for button, kept in zip(self.blocks, m.keep):
            button.icon = "check" if kept else "times"
            button.button_style = "" if kept else "warning"
        self.positions.icon = "check" if m.positions else "times"
        self.positions.button_style = "" if m.positions else "warning"
        self.kinds.update(m.full, m.now)
        vocab = model.vocab()
        self.top_full.set(m.top_full)
        self.top_now.set(m.top_now)
        labels = [vocab[i] + (" \u2713" if i == m.right else "") for i in m.top]
        for text, label in zip(self.words, labels):
            text.set_text(label)
        words = m.context.split()
        short = " ".join(words[-6:])
        self.right_title.set_text(f"after \u201c{short}\u201d")
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def ablation_lab(**initial):
    """The ablation lab's root widget (class ``course-lab-ablation``)."""
    return AblationLab(**initial).root
