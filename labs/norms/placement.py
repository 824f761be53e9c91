"""The pre-norm vs post-norm lab (notebook 03): the same stack of random blocks with the norm
before each part (pre-norm) or after each add (post-norm): the stream's size per block, and how
much a tiny change made at the bottom has grown or shrunk by the top.

Model: ``placement_model`` (``lib.block.norm_placement_experiment``). View: ``PlacementLab``.
Root widget: ``placement_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.block import norm_placement_experiment
from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed, plural, significant

from engine.kit.figure_view import decades, set_limits, whole_ticks
from engine.kit.layout import controls, lab_root, slider, verdict_widget
from engine.kit.result import Result
from .precomputed import precomputed

PLACEMENT_DEPTH = 64
# A setup with seed s draws its input from s, its blocks from s + 1 to s + 64 and its nudge from
# s + 65: "new random blocks" steps the seed by 100, so no draw is shared with the setup before.
NEW_BLOCKS_STEP = 100


@lru_cache(maxsize=8)
def _placement(seed: int):
    return norm_placement_experiment(depth=PLACEMENT_DEPTH, seed=seed)


STACKS, STACKS_DEPTH = 50, 48    # the notebook's sample: 50 stacks of 48 blocks


@precomputed(lambda: [{"depth": STACKS_DEPTH, "count": STACKS}])
def _many_stacks(depth, count) -> dict:
    runs = [norm_placement_experiment(depth, seed=NEW_BLOCKS_STEP * k) for k in range(1, count + 1)]
    found = {}
    for name in ("pre", "post"):
        found[f"{name}_gaps"] = np.array([run[name].gaps for run in runs])
        found[f"{name}_ends"] = np.array([run[name].sizes[[0, -1]] for run in runs])     # the stream's first and last
    return found


def many_stacks(depth: int = STACKS_DEPTH, count: int = STACKS) -> dict:
    """``count`` stacks of ``depth`` random blocks (``lib.block``'s experiment with seeds 100, 200,
    ...: no two share a block). For "pre" and "post" (-norm): the size of the gap between the run
    and the nudged run after each block of each stack ("gaps", (count, depth + 1), column 0 the
    nudge itself), the size of the stream at the bottom and at the top ("ends", (count, 2): the
    input's, then the last block's), how much the gap grew from bottom to top ("amplification",
    (count,)) and how much it grew measured against the stream it is a change of ("relative",
    (count,): the gap over the stream's size at the top, divided by the nudge over the input's
    size). The notebook's 50
    stacks of 48 were computed when the course was built (``labs.norms.precomputed``); any other
    call runs live."""
    found = _many_stacks(depth=int(depth), count=int(count))
    out = {}
    for name in ("pre", "post"):
        gaps, ends = found[f"{name}_gaps"], found[f"{name}_ends"]
        out[name] = {"gaps": gaps, "ends": ends, "amplification": gaps[:, -1] / gaps[:, 0],
                     "relative": (gaps[:, -1] / ends[:, 1]) / (gaps[:, 0] / ends[:, 0])}
    return out


def times(value: float) -> str:
    """A ratio as the verdicts write it: three significant digits, a whole number from 1,000."""
    return significant(value, 3) if value < 1000 else count(round(value))


@dataclass(frozen=True)
class PlacementRun(Result):
    """One placement's first ``depth`` blocks. sizes, growth: (depth + 1,) the stream's size and
    how many times the tiny change made at the bottom has grown, before block 1 and after each."""
    sizes: np.ndarray
    growth: np.ndarray
    size: float         # sizes[depth]
    factor: float       # growth[depth]


@dataclass(frozen=True)
class PlacementResult(Result):
    """Pre-norm's and post-norm's run through the same ``depth`` blocks."""
    depth: int
    seed: int
    pre: PlacementRun
    post: PlacementRun
    ratio: float        # pre's factor / post's
    apart: float        # the larger of ratio and 1 / ratio
    start: float        # the stream's size before block 1
    verdict: str


def _run(trace, depth: int) -> PlacementRun:
    """The first ``depth`` blocks of one placement's trace."""
    return PlacementRun(sizes=trace.sizes[:depth + 1], growth=trace.gaps[:depth + 1] / trace.gaps[0],
                        size=float(trace.sizes[depth]), factor=float(trace.gaps[depth] / trace.gaps[0]))


def placement_model(depth: int = 48, seed: int = 1) -> PlacementResult:
    """The first ``depth`` blocks of a stack of 64 random blocks (``lib.block``'s experiment):
    the stream's size after each block and how much a tiny change made at the bottom has grown
    or shrunk, for pre-norm and post-norm (RMSNorm). Returns numbers and the verdict."""
    depth = int(np.clip(int(depth), 1, PLACEMENT_DEPTH))
    traces = _placement(int(seed))
    pre, post = _run(traces["pre"], depth), _run(traces["post"], depth)

    def how(f):
        return "amplified" if f > 1 else "shrunk"
    ratio = pre.factor / post.factor
    apart = max(ratio, 1 / ratio)
    start = float(pre.sizes[0])
    if apart < 1.05:
        compared = "about the same with both"
    else:
        compared = (f"{'pre' if ratio > 1 else 'post'}-norm's {times(apart)} times as large as "
                    f"{'post' if ratio > 1 else 'pre'}-norm's")
    verdict = (f"After {plural(depth, 'block')}: the pre-norm stream has gone from size "
               f"{fixed(start)} to {fixed(pre.size)}, the post-norm stream is at "
               f"{fixed(post.size)}. A tiny change at the bottom arrives {how(pre.factor)} "
               f"\u00d7{significant(pre.factor, 3)} with pre-norm and {how(post.factor)} "
               f"\u00d7{significant(post.factor, 3)} with post-norm: {compared}.")
    return PlacementResult(depth=depth, seed=int(seed), pre=pre, post=post, ratio=ratio, apart=apart,
                           start=start, verdict=verdict)


class PlacementLab:
    """The view: a depth slider, a new-blocks button; sizes and the nudge's growth per block."""

    def __init__(self, depth=48, seed=1):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = int(seed)
        self.depth = slider("int", value=depth, min=1, max=PLACEMENT_DEPTH, step=1,
                             description="depth (blocks)")
        self.button = widgets.Button(description="new random blocks", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-blocks")
        self.verdict = verdict_widget()
        fig = new_figure(6.4, 3.2)
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        colours = {"pre": OKABE_ITO["blue"], "post": OKABE_ITO["orange"]}
        styles = {"pre": "-", "post": "--"}
        self.lines = {}
        for name in ("pre", "post"):
            label = f"{name}-norm"
            self.lines[name] = (left.plot([], [], color=colours[name], linestyle=styles[name],
                                          linewidth=1.8, label=label)[0],
                                right.plot([], [], color=colours[name], linestyle=styles[name],
                                           linewidth=1.8, label=label)[0])
        right.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        left.set_title("size of the stream (RMS)", fontsize=10)
        right.set_title("a tiny change, \u00d7 its start", fontsize=10)
        for ax in (left, right):
            ax.set_xlabel("block")
            ax.grid(True, alpha=0.3)
            set_limits(ax, x=(0, PLACEMENT_DEPTH))          # every depth on one fixed axis
            whole_ticks(ax.xaxis, 0, PLACEMENT_DEPTH, most=5)
        left.set_ylabel("RMS")
        right.set_ylabel("growth (log)")
        left.legend(loc="upper left", fontsize=8, frameon=False)
        right.legend(loc="lower left", fontsize=8, frameon=False)
        self.left, self.right = left, right
        self._scales()
        fig.tight_layout()
        changing = [line for pair in self.lines.values() for line in pair]
        self.view = FigureView(fig, description="Two plots: the stream's size and a small change's growth per block",
                               changing=changing)
        self.root = lab_root("placement", [controls(self.depth, self.button), self.view.widget, self.verdict])
        self.depth.observe(lambda _c: self.update(), names="value")
        self.button.on_click(self._new_blocks)
        self.update()

    def _scales(self) -> None:
        """Fixed vertical scales for the seed's 64 blocks, so moving the depth only redraws the lines."""
        whole = placement_model(PLACEMENT_DEPTH, self.seed)
        top = max(whole.pre.sizes.max(), 1.5)
        set_limits(self.left, y=(0, round(float(top) * 1.1, 1)))
        growth = np.concatenate([whole.pre.growth, whole.post.growth])
        growth = growth[np.isfinite(growth) & (growth > 0)]
        low = int(np.floor(np.log10(min(growth.min(), 0.5))))
        high = int(np.ceil(np.log10(max(growth.max(), 2.0))))
        decades(self.right.yaxis, low, high, label_every=1 if high - low <= 6 else 2)
        self._state = self.seed

    def _new_blocks(self, _button=None) -> None:
        self.seed += NEW_BLOCKS_STEP
        self._scales()
        self.update()

    def update(self) -> PlacementResult:
        m = placement_model(self.depth.value, self.seed)
        k = np.arange(m.depth + 1)
        for name, (size_line, growth_line) in self.lines.items():
            size_line.set_data(k, getattr(m, name).sizes)
            growth_line.set_data(k, getattr(m, name).growth)
        self.view.redraw(state=self._state)
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def placement_lab(**initial):
    """The pre-norm vs post-norm lab's root widget (class ``course-lab-placement``)."""
    return PlacementLab(**initial).root
