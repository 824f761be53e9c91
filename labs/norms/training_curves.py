"""The training-curves lab (notebook 03): the loss curves of the small decoders trained ahead of
time with each placement of the norm (``lib.placement_runs``), three seeds each, at the depth and
warm-up the learner picks, against the bigram and unigram losses.

Model: ``curves_model`` (the curves and outcomes of one depth and warm-up). View: ``CurvesLab``.
Root widget: ``curves_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.kit.layout import (
    controls,
    lab_root,
    numbers_widget,
    pick_slider,
    switch,
    verdict_widget,
)
from engine.kit.result import Result
from engine.presentation.html import plain
from engine.presentation.numbers import fixed
from engine.presentation.tables import table
from lib.placement_runs import FINAL_POINTS, OUTCOMES, outcome, runs, steps_to, summary

NAMES = {"pre": "pre-norm", "post": "post-norm", "damped": "no norm, damped", "rezero": "no norm, ReZero"}
STYLES = {"pre": ("blue", "-"), "post": ("vermillion", "--"), "damped": ("green", ":"), "rezero": ("purple", "-.")}
Y_BOTTOM, Y_TOP = 1.0, 5.0   # the plot's loss range: every curve ends above 1, the legend sits above 4


@dataclass(frozen=True)
class Curves(Result):
    """One depth and warm-up: ``curves`` {variant: (seeds, P) training losses}, ``steps`` (P,);
    ``warmup`` {variant: whether its runs had warm-up} (the runs without a norm never did);
    ``outcomes`` {variant: [each seed's outcome]}, ``below`` {variant: [each seed's first step
    below the bigram loss, or None]}, ``final`` {variant: median final loss}; the two marks; the
    verdict."""
    depth: int
    warmup_asked: bool
    steps: np.ndarray
    curves: dict
    warmup: dict
    outcomes: dict
    below: dict
    final: dict
    bigram_loss: float
    unigram_loss: float
    verdict: str


def _runs_of(variant: str, warmup: bool, depth: int) -> np.ndarray:
    r = runs()
    chosen = (r.variants == variant) & (r.warmup == warmup) & (r.depths == depth)
    return r.curves[chosen][np.argsort(r.seeds[chosen])]


def _counted(found: list) -> str:
    parts = [f"{found.count(o)} {o}" for o in OUTCOMES if found.count(o)]
    return ", ".join(parts)


@lru_cache(maxsize=8)
def curves_model(depth: int = 12, warmup: bool = False) -> Curves:
    """The curves of every placement at ``depth`` blocks, with warm-up where it was run (pre- and
    post-norm) if ``warmup``; the outcomes and the verdict. The runs are stored, so each of the six
    settings is worked out once (its outcomes read every run of the file, through ``summary``)."""
    r = runs()
    depths = sorted(set(r.depths.tolist()))
    depth = min(depths, key=lambda d: abs(d - int(depth)))
    used = {v: bool(warmup) and v in ("pre", "post") for v in NAMES}
    curves = {v: _runs_of(v, used[v], depth) for v in NAMES}
    outcomes = {v: [outcome(c, r.bigram_loss) for c in curves[v]] for v in NAMES}
    below = {v: [steps_to(c, r.bigram_loss) for c in curves[v]] for v in NAMES}
    final = {s.variant: s.final for s in summary() if s.depth == depth and s.warmup == used[s.variant]}
    said = "; ".join(f"{NAMES[v]} {_counted(outcomes[v])}" for v in NAMES)
    verdict = (f"{depth} blocks, {'warm-up for pre- and post-norm' if warmup else 'no warm-up'}, "
               f"{len(curves['pre'])} seeds each: {said}. Learned: the mean loss of its last "
               f"{int(r.steps[-1] - r.steps[-1 - FINAL_POINTS])} steps is below the bigram loss "
               f"({fixed(r.bigram_loss)}); stalled: not yet, after {int(r.steps[-1])} steps.")
    if warmup:
        verdict += " The runs without a norm were trained without warm-up only."
    return Curves(depth, bool(warmup), r.steps, curves, used, outcomes, below, final, r.bigram_loss,
                  r.unigram_loss, verdict)


class CurvesLab:
    """The view: depth and warm-up; each seed's loss curve, coloured and dashed by placement."""

    def __init__(self, depth=12, warmup=False):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        r = runs()
        depths = sorted(set(r.depths.tolist()))
        self.depth = pick_slider([(str(d), d) for d in depths], int(depth), "blocks")
        self.warmup = switch("warm-up (pre- and post-norm)", warmup)
        self.verdict, self.numbers = verdict_widget(), numbers_widget()
        fig = new_figure(6.4, 3.4)
        ax = fig.add_subplot()
        self.lines = {}
        for variant, (colour, style) in STYLES.items():
            self.lines[variant] = [ax.plot([], [], color=OKABE_ITO[colour], linestyle=style, linewidth=1.3,
                                           label=NAMES[variant] if seed == 0 else None)[0]
                                   for seed in range(len(_runs_of(variant, False, depths[0])))]
        ax.axhline(r.bigram_loss, color=OKABE_ITO["black"], linewidth=0.8, label="bigram loss")
        ax.axhline(r.unigram_loss, color=OKABE_ITO["black"], linewidth=0.8, linestyle=(0, (1, 3)),
                   label="unigram loss")
        ax.set_xlim(0, float(r.steps[-1]))
        ax.set_ylim(Y_BOTTOM, Y_TOP)
        ax.set_xlabel("training step")
        ax.set_ylabel("training loss")
        self.title = ax.set_title("12 blocks, no warm-up", fontsize=10)     # laid out with a title
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8, frameon=False, ncol=2)
        fig.tight_layout()
        self.view = FigureView(fig, description="Lines: each run's training loss over its steps, by placement",
                               changing=[*(line for lines in self.lines.values() for line in lines), self.title])
        self.root = lab_root("training-curves", [controls(self.depth, self.warmup), self.view.widget,
                                                  self.verdict, self.numbers])
        for control in (self.depth, self.warmup):
            control.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> Curves:
        m = curves_model(self.depth.value, self.warmup.value)
        for variant, lines in self.lines.items():
            for line, curve in zip(lines, m.curves[variant]):
                line.set_data(m.steps, np.minimum(np.nan_to_num(curve, nan=Y_TOP), Y_TOP))
        self.title.set_text(f"{m.depth} blocks, " + ("warm-up" if m.warmup_asked else "no warm-up"))
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.numbers.value = table(
            [[NAMES[v] + (", warm-up" if m.warmup[v] else ""), _counted(m.outcomes[v]), fixed(m.final[v]),
              ", ".join("never" if s is None else str(s) for s in m.below[v])] for v in NAMES],
            header=["placement", "seeds", "median final loss", "first step below the bigram loss"],
            mono_columns=(2, 3))
        self.model = m
        return m


def curves_lab(**initial):
    """The training-curves lab's root widget (class ``course-lab-training-curves``)."""
    return CurvesLab(**initial).root
