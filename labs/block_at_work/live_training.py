"""The live-training lab (notebook 06): a tiny model learns to copy the previous token, trained in
the page with the course's own backward pass and Adam (``lib.train.LiveTraining``), a few steps
per frame; pre- or post-norm, the learning rate and warm-up are the learner's to set.

Model: ``training_summary`` (what the losses so far say) and ``live_training_model`` (a whole run,
for the tests and the notebook's cells). View: ``LiveTrainingLab``, which advances its run a
few steps per frame while it runs. Root widget: ``live_training_lab()``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import numpy as np

from lib.train import LiveTraining, current_token_loss
from engine.kit.layout import choice, controls, lab_root, numbers_widget, pick_slider, switch, verdict_widget
from engine.kit.result import Result
from engine.presentation.html import plain
from engine.presentation.numbers import count, fixed, number
from engine.presentation.tables import table

MAX_STEPS = 300            # a run's length
STEPS_PER_FRAME = 3        # steps between two redraws
WINDOW = 25                # the losses averaged for "the loss now"
WARMUP = 50                # the warm-up's steps when it is on
RATES = (("0.001", 0.001), ("0.003", 0.003), ("0.01", 0.01), ("0.03", 0.03), ("0.1", 0.1))
Y_TOP = 1.6                # the plot's top: a loss above it is drawn at it


@dataclass(frozen=True)
class TrainingSummary(Result):
    """A live training run so far. losses: (steps,) its loss at each step."""
    placement: str              # "pre" or "post"
    lr: float
    warmup: int                 # warm-up steps, 0 for none
    setting: str                # the three in words
    steps: int
    losses: np.ndarray
    now: float                  # the mean of the last window losses (NaN before a step)
    first: float                # the mean of the first window losses
    baseline: float             # the loss of copying the current token
    window: int
    steps_per_second: float
    whole_steps_per_second: int
    diverged: bool
    verdict: str


def training_summary(losses, baseline: float, placement: str = "pre", lr: float = 0.01, warmup: int = 0,
                     seconds: float = 0.0) -> TrainingSummary:
    """What the losses of a run so far say: its steps, the mean of the last WINDOW losses, the
    loss of a model that copies the current token instead (``baseline``), the steps per second
    (``seconds`` spent stepping) and the verdict."""
    losses = np.asarray(losses, dtype=float)
    steps = len(losses)
    setting = f"{placement}-norm, learning rate {number(lr, 3)}" + (f", warm-up over {warmup} steps" if warmup else "")
    given = {"placement": placement, "lr": float(lr), "warmup": int(warmup), "setting": setting}
    if not steps:
        return TrainingSummary(**given, steps=0, losses=losses, now=float("nan"), first=float("nan"),
                               baseline=baseline, window=0, steps_per_second=0.0, whole_steps_per_second=0,
                               diverged=False, verdict=f"{setting}: no step yet. Press start; copying the current "
                                                       f"token would score {fixed(baseline)}.")
    now, first = float(np.mean(losses[-WINDOW:])), float(np.mean(losses[:WINDOW]))
    rate = steps / seconds if seconds > 0 else 0.0
    diverged = not np.isfinite(now)
    if diverged:
        verdict = f"{setting}: the loss is no longer a number after {steps} steps: the run diverged."
    else:
        beats = "below" if now < baseline else "not yet below"
        verdict = (f"{setting}, step {steps}: the loss averages {fixed(now)} over the last {min(WINDOW, steps)} "
                   f"steps, from {fixed(first)} over the first; {beats} the {fixed(baseline)} of copying the "
                   f"current token.")
    if rate:
        verdict += f" Here {count(int(rate))} steps a second."
    return TrainingSummary(**given, steps=steps, losses=losses, now=now, first=first, baseline=baseline,
                           window=min(WINDOW, steps), steps_per_second=rate, whole_steps_per_second=int(rate),
                           diverged=diverged, verdict=verdict)


def live_training_model(placement: str = "pre", lr: float = 0.01, warmup: bool = False,
                        steps: int = MAX_STEPS) -> TrainingSummary:
    """A whole run of ``steps`` steps with these settings (the lab's run, played at once)."""
    run = LiveTraining(placement=placement, lr=lr, warmup=WARMUP if warmup else 0)
    with np.errstate(over="ignore", invalid="ignore"):
        run.advance(steps)
    return training_summary(run.losses, current_token_loss(run.task), placement, lr, WARMUP if warmup else 0)


class LiveTrainingLab:
    """The view: start/stop and start-again buttons, pre/post-norm, learning rate, warm-up; the
    loss of this run and of the run before, redrawn every STEPS_PER_FRAME steps."""

    def __init__(self, placement="pre", lr=0.01, warmup=False):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.start = widgets.Button(description="start", icon="play", layout=widgets.Layout(width="auto"),
                                    tooltip="train, a few steps per frame; press again to stop")
        self.start.add_class("course-live-start")
        self.again = widgets.Button(description="new weights", icon="refresh", layout=widgets.Layout(width="auto"),
                                    tooltip="new weights, the same settings: press start to train them")
        self.placement = choice([("pre-norm", "pre"), ("post-norm", "post")], placement, "norm")
        self.lr = pick_slider(RATES, lr, "learning rate")
        self.warmup = switch(f"warm-up over {WARMUP} steps", warmup)
        self.verdict, self.numbers = verdict_widget(), numbers_widget()
        fig = new_figure(6.4, 3.0)
        ax = fig.add_subplot()
        (self.before,) = ax.plot([], [], color=OKABE_ITO["sky"], linestyle=":", linewidth=1.2, label="the run before")
        (self.line,) = ax.plot([], [], color=OKABE_ITO["blue"], linewidth=1.2, label="this run")
        self.baseline = ax.axhline(current_token_loss(LiveTraining().task), color=OKABE_ITO["vermillion"],
                                   linestyle="--", linewidth=1, label="copying the current token")
        ax.set_xlim(0, MAX_STEPS)
        ax.set_ylim(0, Y_TOP)
        ax.set_xlabel("training step")
        ax.set_ylabel("loss")
        self.title = ax.set_title("", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8, frameon=False)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Line: the training loss at every step",
                               changing=[self.before, self.line, self.title])
        self.root = lab_root("live-training", [controls(self.start, self.again),
                                               controls(self.placement, self.lr, self.warmup),
                                               self.view.widget, self.verdict, self.numbers])
        self.running, self.task = False, None
        self.start.on_click(lambda _b: self.toggle())
        self.again.on_click(lambda _b: self.reset())
        for control in (self.placement, self.lr, self.warmup):
            control.observe(lambda _c: self.reset(), names="value")
        self.run, self.seconds = None, 0.0
        self.reset(keep=False)

    def reset(self, keep: bool = True) -> TrainingSummary:
        """A new run with the settings shown; the run so far becomes "the run before"."""
        if keep and self.run is not None:
            self.before.set_data(np.arange(1, len(self.run.losses) + 1), np.minimum(self.run.losses, Y_TOP))
        self.run = LiveTraining(placement=self.placement.value, lr=self.lr.value,
                                warmup=WARMUP if self.warmup.value else 0)
        self.seconds = 0.0
        return self.update()

    def frame(self) -> TrainingSummary:
        """STEPS_PER_FRAME steps (fewer at the end of the run), then the redraw."""
        left = MAX_STEPS - len(self.run.losses)
        if left > 0:
            began = time.perf_counter()
            with np.errstate(over="ignore", invalid="ignore"):
                self.run.advance(min(STEPS_PER_FRAME, left))
            self.seconds += time.perf_counter() - began
        return self.update()

    def toggle(self) -> None:
        """Start the run, or stop it if it runs."""
        self.running = not self.running
        if self.running and len(self.run.losses) >= MAX_STEPS:
            self.reset()
        self._buttons()
        if self.running:
            self.task = asyncio.ensure_future(self._play()) if _loop_running() else None
            if self.task is None:                   # no event loop here: the whole run at once
                while self.running and len(self.run.losses) < MAX_STEPS:
                    self.frame()
                self.running = False
                self._buttons()

    async def _play(self) -> None:
        while self.running and len(self.run.losses) < MAX_STEPS:
            self.frame()
            await asyncio.sleep(0)                  # let the page draw and take a click
        self.running = False
        self._buttons()

    def _buttons(self) -> None:
        self.start.description, self.start.icon = ("stop", "pause") if self.running else ("start", "play")

    def update(self) -> TrainingSummary:
        losses = np.asarray(self.run.losses, dtype=float)
        m = training_summary(losses, current_token_loss(self.run.task), self.run.placement, self.run.lr,
                             self.run.warmup, self.seconds)
        self.line.set_data(np.arange(1, len(losses) + 1), np.minimum(np.nan_to_num(losses, nan=Y_TOP), Y_TOP))
        self.title.set_text(f"copying the previous token: {m.setting}")
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.numbers.value = table([["steps", str(m.steps)], ["loss now", fixed(m.now) if m.steps else "none yet"],
                                    ["copying the current token", fixed(m.baseline)],
                                    ["steps a second here", count(int(m.steps_per_second))]],
                                   header=["", ""])
        self.model = m
        return m


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def live_training_lab(**initial):
    """The live-training lab's root widget (class ``course-lab-live-training``)."""
    return LiveTrainingLab(**initial).root
