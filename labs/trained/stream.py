"""The trained model's residual-stream lab (notebook 05): the stream of one token of the held-out
text (or the average over all), block by block: what attention and the FFN add, and the stream's
size, far below float16's limit.

Model: ``stream_model`` (``lib.model.forward`` with trace=True). View: ``TrainedStreamLab``. Root
widget: ``stream_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib import model
from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed

from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.kit.result import Result
from .held_out import held_out, trace


FLOAT16_LIMIT = float(np.finfo(np.float16).max)      # 65,504


@dataclass(frozen=True)
class TrainedStreamResult(Result):
    """The residual stream of one token of the held-out text (or the average over its tokens).

    attention, ffn: (blocks,) the size (RMS) of what each block's attention and FFN added;
    stream: (blocks + 1,) the stream's size before the first block and after each.
    """
    position: int               # the token's position, -1 for the average
    attention: np.ndarray
    ffn: np.ndarray
    stream: np.ndarray
    largest: float              # the stream's largest number
    tokens: int
    block: int                  # the block of the largest addition, from 1
    float16_limit: float
    verdict: str


def stream_model(position: int = 0) -> TrainedStreamResult:
    """The residual stream of the held-out text's token at ``position`` (or, for -1, the average
    over all tokens): the size (RMS) of what each block's attention and FFN added, the stream's
    size before the first block and after each block, its largest number, and the verdict."""
    t = trace()
    ids = held_out()[0]
    position = int(np.clip(int(position), -1, len(ids) - 1))
    rms = lambda a: np.sqrt((a ** 2).mean(axis=-1))  # noqa: E731  (one size per token)
    if position < 0:
        pick = lambda a: a.mean(axis=-1)             # noqa: E731  (average over the tokens)
        who = f"on average over the {len(ids)} tokens"
    else:
        pick = lambda a: a[..., position]            # noqa: E731
        who = f"for \u201c{model.vocab()[ids[position]]}\u201d at position {position}"
    attention = pick(rms(t.attention_adds))
    ffn = pick(rms(t.ffn_adds))
    stream = pick(rms(t.streams))
    largest = float(np.abs(t.streams[:, position] if position >= 0 else t.streams).max())
    big = int(np.argmax(np.maximum(attention, ffn)))
    part = "attention" if attention[big] >= ffn[big] else "the FFN"
    verdict = (f"The stream {who} grows from {fixed(stream[0])} to {fixed(stream[-1])}; the largest "
               f"addition comes from {part} in block {big + 1} ({fixed(max(attention[big], ffn[big]))}). "
               f"Its largest number is {fixed(largest, 1)}, far below float16's limit of "
               f"{count(FLOAT16_LIMIT)}.")
    return TrainedStreamResult(position=position, attention=attention, ffn=ffn, stream=stream,
                               largest=largest, tokens=len(ids), block=big + 1, float16_limit=FLOAT16_LIMIT,
                               verdict=verdict)


def largest_size() -> float:
    """The largest size (RMS) of the stream or of an addition, over every token and the average."""
    t = trace()
    return float(max(np.sqrt((a ** 2).mean(axis=-1)).max() for a in (t.streams, t.attention_adds, t.ffn_adds)))


class TrainedStreamLab:
    """The view: a slider for the token (-1 = the average), bars per block, the stream's size."""

    def __init__(self, position=-1):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        n = len(held_out()[0])
        layers = model.info()["config"]["layers"]
        self.position = slider("int", value=position, min=-1, max=n - 1, step=1,
                               description="token (-1 = average)")
        self.position.add_class("course-slider-token")
        self.verdict = verdict_widget()
        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        k = np.arange(1, layers + 1)
        self.attention = Bars(ax, k - 0.2, width=0.4, facecolor=OKABE_ITO["blue"], label="attention adds")
        self.ffn = Bars(ax, k + 0.2, width=0.4, facecolor=OKABE_ITO["orange"], hatch="//", edgecolor="white",
                        label="FFN adds")
        (self.line,) = ax.plot(np.arange(layers + 1), np.zeros(layers + 1), color=OKABE_ITO["black"],
                               marker="o", markersize=4, linewidth=1.6, label="the stream")
        ax.set_xticks(np.arange(layers + 1), ["start"] + [f"block {i}" for i in k], fontsize=9)
        ax.set_ylabel("size (RMS)")
        self.title = ax.set_title("the residual stream, averaged over the held-out text", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(handles=[self.line, self.attention.artist, self.ffn.artist], loc="upper left", fontsize=8,
                  frameon=True, framealpha=0.85)
        ax.set_ylim(0, largest_size() * 1.35)          # one scale for every token: compare them
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Bars per block: what attention and the FFN add; line: the stream's size",
                               changing=[self.attention.artist, self.ffn.artist, self.line, self.title])
        self.root = lab_root("trained-stream", [controls(self.position), self.view.widget, self.verdict])
        self.position.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> TrainedStreamResult:
        m = stream_model(self.position.value)
        self.attention.set(m.attention)
        self.ffn.set(m.ffn)
        self.line.set_ydata(m.stream)
        if m.position < 0:
            self.title.set_text("the residual stream, averaged over the held-out text")
        else:
            ids = held_out()[0]
            self.title.set_text(f"the residual stream of \u201c{model.vocab()[ids[m.position]]}\u201d "
                                f"(position {m.position})")
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def stream_lab(**initial):
    """The residual-stream lab's root widget (class ``course-lab-trained-stream``)."""
    return TrainedStreamLab(**initial).root
