"""The training-scrub lab (notebook 06): the trained model at any recorded checkpoint of its
training: its loss by kind of prediction, its copy accuracy, and the attention maps of its
previous-token head and its induction head on a probe text.

Model: ``scrub_model`` (``lib.training_record``). View: ``ScrubLab``. Root widget: ``scrub_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib import model
from lib.training_record import first_step, record
from engine.kit.layout import controls, lab_root, menu, numbers_widget, pick_slider, verdict_widget
from engine.kit.result import Result
from engine.presentation.html import plain
from engine.presentation.numbers import fixed
from engine.presentation.tables import table

SHOWN_KINDS = ("grammar", "count", "copy", "reverse", "sum")   # the loss curves drawn
PREVIOUS_FROM, INDUCTION_FROM, COPY_FROM = 0.3, 0.25, 0.5      # a head "is" one from these scores on


@lru_cache(maxsize=1)
def named_heads() -> dict:
    """The two heads the record singles out, found from its scores at the last checkpoint
    (averaged over the probes): the previous-token head (the highest previous-token score in
    the first block) and the induction head (the highest induction score in a later block),
    each as (block, head) counted from 0, with the steps their scores (averaged over the probes)
    first reach PREVIOUS_FROM and INDUCTION_FROM and the copy accuracy COPY_FROM."""
    r = record()
    previous, induction = r.previous[-1].mean(axis=0), r.induction[-1].mean(axis=0)      # (L, H)
    prev_head = (0, int(np.argmax(previous[0])))
    later = np.where(np.arange(len(induction))[:, None] > 0, induction, -np.inf)
    ind_head = tuple(int(i) for i in np.unravel_index(np.argmax(later), later.shape))
    prev_curve = r.previous[:, :, prev_head[0], prev_head[1]].mean(axis=1)
    ind_curve = r.induction[:, :, ind_head[0], ind_head[1]].mean(axis=1)
    return {"previous": prev_head, "induction": ind_head, "previous_curve": prev_curve, "induction_curve": ind_curve,
            "previous_from": first_step(prev_curve, PREVIOUS_FROM), "induction_from": first_step(ind_curve, INDUCTION_FROM),
            "copy_from": first_step(r.accuracy[:, r.kinds.index("copy")], COPY_FROM)}


def _short(ids) -> str:
    """A probe text's first words, short enough for a menu on a phone: "copy b d a e | …"."""
    words = model.decode(ids).split()
    return " ".join(words[:words.index("|") + 1]) + " \u2026"


def _maps_step(step: int) -> int:
    """The latest step with full maps at or before ``step``."""
    steps = record().map_steps
    return int(steps[max(0, np.searchsorted(steps, step, side="right") - 1)])


@dataclass(frozen=True)
class ScrubResult(Result):
    """The training record at one checkpoint, on one probe text.

    previous_map, induction_map: (n, n) the two named heads' attention maps at maps_step;
    loss, accuracy: (kinds,) by kind of prediction.
    """
    step: int
    index: int                  # the checkpoint's entry in the record
    probe: int
    maps_step: int              # the latest step with maps at or before step
    previous_map: np.ndarray
    induction_map: np.ndarray
    previous_score: float
    induction_score: float
    copy_accuracy: float
    copy_loss: float
    loss: np.ndarray
    accuracy: np.ndarray
    previous_head: tuple        # (block, head) counted from 1
    induction_head: tuple
    verdict: str


def scrub_model(step: int = 0, probe: int = 0) -> ScrubResult:
    """The record at checkpoint ``step`` (snapped to a recorded one) on probe text ``probe``:
    loss and accuracy by kind, the two named heads' scores, their attention maps at the latest
    step with maps, and the verdict."""
    r, heads = record(), named_heads()
    index = int(np.argmin(np.abs(r.steps - int(step))))
    step = int(r.steps[index])
    probe = int(np.clip(int(probe), 0, len(r.probes) - 1))
    (pb, ph), (ib, ih) = heads["previous"], heads["induction"]
    at = _maps_step(step)
    maps = r.maps[int(np.flatnonzero(r.map_steps == at)[0]), probe]
    copy = r.kinds.index("copy")
    previous, induction = float(r.previous[index, probe, pb, ph]), float(r.induction[index, probe, ib, ih])
    accuracy, loss = float(r.accuracy[index, copy]), float(r.loss[index, copy])
    verdict = (f"Step {step}: copy accuracy {fixed(accuracy)}, copy loss {fixed(loss)}. On this probe block "
               f"{pb + 1}'s head {ph + 1} puts {fixed(previous)} of its weight on the previous token; block "
               f"{ib + 1}'s head {ih + 1} puts {fixed(induction)} on the token after the earlier occurrence "
               f"(maps of step {at}).")
    return ScrubResult(step=step, index=index, probe=probe, maps_step=at, previous_map=maps[pb, ph],
                       induction_map=maps[ib, ih], previous_score=previous, induction_score=induction,
                       copy_accuracy=accuracy, copy_loss=loss, loss=r.loss[index], accuracy=r.accuracy[index],
                       previous_head=(pb + 1, ph + 1), induction_head=(ib + 1, ih + 1), verdict=verdict)


class ScrubLab:
    """The view: a slider over the checkpoints and a probe menu; the curves with a cursor, two maps."""

    def __init__(self, step=0, probe=0):
        from engine.kit.figure_view import OKABE_ITO, FigureView, cell_grid, new_figure

        r, heads = record(), named_heads()
        self.step = pick_slider([(str(s), int(s)) for s in r.steps], int(step), "training step")
        self.probe = menu([(f"probe {i + 1}: {_short(p)}", i) for i, p in enumerate(r.probes)], int(probe), "text")
        self.verdict, self.numbers = verdict_widget(), numbers_widget()
        fig = new_figure(6.4, 4.6)
        grid = fig.add_gridspec(2, 2, height_ratios=[1, 1.25], hspace=0.5, wspace=0.3)
        loss_ax, score_ax = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])   # the cursors: top row only
        prev_ax, ind_ax = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
        colours = [OKABE_ITO[c] for c in ("blue", "orange", "vermillion", "green", "purple")]
        styles = ["-", "--", "-", ":", "-."]
        for kind, colour, style in zip(SHOWN_KINDS, colours, styles):
            loss_ax.plot(r.steps, r.loss[:, r.kinds.index(kind)], color=colour, linestyle=style, label=kind)
        loss_ax.set_ylabel("loss")
        loss_ax.set_title("loss by kind of prediction", fontsize=9)
        loss_ax.legend(fontsize=8, ncol=2, frameon=False, loc="upper right")
        (pb, ph), (ib, ih) = heads["previous"], heads["induction"]
        score_ax.plot(r.steps, r.accuracy[:, r.kinds.index("copy")], color=OKABE_ITO["vermillion"],
                      label="copy accuracy")
        score_ax.plot(r.steps, heads["previous_curve"], color=OKABE_ITO["blue"], linestyle="--",
                      label="previous-token head's score")
        score_ax.plot(r.steps, heads["induction_curve"], color=OKABE_ITO["green"], linestyle=":",
                      label="induction head's score")
        score_ax.set_ylim(0, 1.8)                  # room above the curves (at most 1) for the legend
        score_ax.set_yticks([0, 0.5, 1])
        score_ax.set_xlabel("training step")
        loss_ax.set_xlabel("training step")
        score_ax.set_title("copying and the two heads", fontsize=9)
        score_ax.legend(fontsize=8, frameon=False, loc="upper left")
        self.cursors = [ax.axvline(0, color=OKABE_ITO["black"], linewidth=1) for ax in (loss_ax, score_ax)]
        n = r.probes.shape[1]
        self.prev_mesh = cell_grid(prev_ax, np.zeros((n, n)), cmap="Blues", vmin=0, vmax=1)
        self.ind_mesh = cell_grid(ind_ax, np.zeros((n, n)), cmap="Greens", vmin=0, vmax=1)
        for ax, (b, h), what in ((prev_ax, (pb, ph), "previous-token"), (ind_ax, (ib, ih), "induction")):
            ax.set_title(f"block {b + 1} head {h + 1} ({what})", fontsize=9)
            ax.set_xlabel("looks at token", fontsize=8)
            ax.set_ylabel("token", fontsize=8)
            ax.tick_params(labelsize=8)
        fig.subplots_adjust(left=0.09, right=0.98, top=0.93, bottom=0.11)
        self.axes = (loss_ax, score_ax, prev_ax, ind_ax)
        self.view = FigureView(fig, description="Loss and copy curves over training with a cursor at the step shown, "
                                                "and two heads' attention maps",
                               changing=[*self.cursors, self.prev_mesh, self.ind_mesh])
        self.root = lab_root("training-scrub", [controls(self.step, self.probe), self.view.widget, self.verdict,
                                                self.numbers])
        for control in (self.step, self.probe):
            control.observe(lambda _c: self.update(), names="value")
        self.shown = None                  # the (maps step, probe) the maps show
        self.update()

    def update(self) -> ScrubResult:
        from engine.kit.figure_view import set_cells

        m = scrub_model(self.step.value, self.probe.value)
        for cursor in self.cursors:
            cursor.set_xdata([m.step, m.step])
        if self.shown != (m.maps_step, m.probe):          # the maps change at a dozen steps only
            set_cells(self.prev_mesh, m.previous_map)
            set_cells(self.ind_mesh, m.induction_map)
            self.shown = (m.maps_step, m.probe)
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        kinds = record().kinds
        self.numbers.value = table([[kind, fixed(m.loss[i]), fixed(m.accuracy[i])] for i, kind in enumerate(kinds)],
                                   header=["kind of prediction", "loss", "accuracy"], mono_columns=(1, 2))
        self.model = m
        return m


def scrub_lab(**initial):
    """The training-scrub lab's root widget (class ``course-lab-training-scrub``)."""
    return ScrubLab(**initial).root
