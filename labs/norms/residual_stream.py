"""The residual-stream lab (notebook 03): the stream of 12 pre-norm blocks, block by block. Each
block adds a vector of about the same size; added at right angles the stream grows like √blocks,
and each block's share of the stream it produces falls.

Model: ``stream_model`` (``lib.stack.residual_stream``). View: ``ResidualStreamLab``. Root
widget: ``stream_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.stack import residual_stream
from engine.presentation.html import plain
from engine.presentation.numbers import fixed, percentage, plural, readout

from engine.kit.figure_view import set_limits, whole_ticks
from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.kit.result import Result

STREAM_MAX = 24


@lru_cache(maxsize=256)
def _stream(blocks: int, alignment: float, seed: int):
    """``lib.stack.residual_stream``, kept (read-only) so a setting seen before costs nothing."""
    r = residual_stream(blocks, alignment=alignment, seed=seed)
    for value in r:
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return r


@dataclass(frozen=True)
class StreamResult(Result):
    """The residual stream after each of ``blocks`` blocks (entry 0: before block 1).

    sizes, aligned, right_angles: (blocks + 1,) the stream's size, and the size it would have
    with every addition in one direction or at right angles to the stream; additions, shares:
    (blocks,) each block's addition's size and its share of the stream it produced.
    """
    blocks: int
    alignment: float
    seed: int
    sizes: np.ndarray
    additions: np.ndarray
    aligned: np.ndarray
    right_angles: np.ndarray
    shares: np.ndarray
    final: float            # the stream's size after the last block
    verdict: str


def stream_model(blocks: int = 12, alignment: float = 0.0, seed: int = 0) -> StreamResult:
    """``blocks`` pre-norm blocks each adding a vector of size 1.0 to a stream that starts at 0.9
    (``lib.stack.residual_stream``, 64 numbers). ``alignment`` 0 to 1 turns the additions from
    independent directions towards the stream's own direction. Returns numbers and the verdict."""
    blocks = int(np.clip(int(blocks), 1, STREAM_MAX))
    alignment = float(np.clip(alignment, 0.0, 1.0)) if np.isfinite(alignment) else 0.0
    r = _stream(blocks, alignment, int(seed))
    final, aligned, law = float(r.sizes[-1]), float(r.aligned[-1]), float(r.right_angles[-1])
    shares = r.shares
    mid = min(4, blocks)
    verdict = (f"{plural(blocks, 'addition')} of size about {fixed(r.additions.mean())} took "
               f"the stream from {fixed(r.sizes[0])} to {fixed(final)}. All in one direction they would give "
               f"{fixed(aligned)}; at right angles to the stream, {fixed(law)}. Block 1's addition is "
               f"{percentage(shares[0])} of the stream it produced")
    if blocks >= 4:
        verdict += f", block {mid}'s {percentage(shares[mid - 1])}"
    if blocks > 4:
        verdict += f", block {blocks}'s {percentage(shares[-1])}"
    verdict += "."
    return StreamResult(blocks=blocks, alignment=alignment, seed=int(seed), sizes=r.sizes,
                        additions=r.additions, aligned=r.aligned, right_angles=r.right_angles,
                        shares=shares, final=final, verdict=verdict)


class ResidualStreamLab:
    """The view: blocks and alignment sliders, a new-blocks button; sizes and shares per block."""

    def __init__(self, blocks=12, alignment=0.0, seed=0):
        import ipywidgets as widgets
        from matplotlib.ticker import FuncFormatter

        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        self.seed = int(seed)
        self.blocks = slider("int", value=blocks, min=1, max=STREAM_MAX, step=1, description="blocks")
        self.alignment = slider("float", value=alignment, min=0.0, max=1.0, step=0.05,
                                 description="additions agree (0 = independent)", readout_format=readout(2))
        self.button = widgets.Button(description="new random blocks", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-blocks")
        self.verdict = verdict_widget()
        fig = new_figure(6.4, 3.2)
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        k = np.arange(1, STREAM_MAX + 1)
        self.bars = Bars(left, k, width=0.7, facecolor=OKABE_ITO["sky"], label="each addition")
        (self.aligned,) = left.plot([], [], color=OKABE_ITO["vermillion"], linestyle="--", linewidth=1.8,
                                    label="all aligned")
        (self.law,) = left.plot([], [], color=OKABE_ITO["black"], linestyle=":", linewidth=1.8,   # dotted, as in the stack lab
                                label="right angles")
        (self.line,) = left.plot([], [], color=OKABE_ITO["blue"], marker="o", markersize=3,
                                 linewidth=1.8, label="the stream")
        self.share_bars = Bars(right, k, width=0.7, facecolor=OKABE_ITO["orange"])
        left.set_title("sizes (RMS)", fontsize=10)
        right.set_title("addition \u00f7 the stream it made", fontsize=10)
        left.set_xlabel("block")
        right.set_xlabel("block")
        left.set_ylabel("RMS")
        right.set_ylabel("share")
        right.set_ylim(0, 1.05)
        right.yaxis.set_major_formatter(FuncFormatter(lambda share, _position: percentage(share)))
        left.legend(handles=[self.aligned, self.law, self.line, self.bars.artist], loc="upper left", fontsize=8,
                    frameon=False)
        for ax in (left, right):
            ax.grid(True, axis="y", alpha=0.3)
            whole_ticks(ax.xaxis, 1, STREAM_MAX, most=7)
        # Fixed scales for every setting: at most 24 additions of size 1, all in one direction.
        set_limits(left, x=(-0.5, STREAM_MAX + 0.6), y=(0, 1.08 * float(stream_model(STREAM_MAX, 1.0).aligned.max())))
        set_limits(right, x=(0.4, STREAM_MAX + 0.6))
        fig.tight_layout()
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Two plots: the stream's size and each block's share",
                               changing=[self.bars.artist, self.aligned, self.law, self.line,
                                         self.share_bars.artist])
        self.root = lab_root("stream", [controls(self.blocks, self.alignment, self.button), self.view.widget,
                                        self.verdict])
        self.blocks.observe(lambda _c: self.update(), names="value")
        self.alignment.observe(lambda _c: self.update(), names="value")
        self.button.on_click(self._new_blocks)
        self.update()

    def _new_blocks(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update(self) -> StreamResult:
        m = stream_model(self.blocks.value, self.alignment.value, self.seed)
        n = m.blocks
        k = np.arange(n + 1)
        self.bars.set(m.additions)                # one bar per block, none beyond the n blocks
        self.share_bars.set(m.shares)
        self.line.set_data(k, m.sizes)
        self.law.set_data(k, m.right_angles)
        self.aligned.set_data(k, m.aligned)
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def stream_lab(**initial):
    """The residual-stream lab's root widget (class ``course-lab-stream``)."""
    return ResidualStreamLab(**initial).root
