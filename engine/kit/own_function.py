"""The "use my function" switch of a lab, and the badge that says whose code is running.

A lab that uses a function the learner writes in an exercise builds one
:class:`OwnFunctionSwitch` with the :class:`engine.core.own.Use` of each such function, puts
``switch.widget`` under its controls and, in its ``update``, asks the switch to run the model::

    model = self.own.run(lambda norm: axis_model(value, how, norm=norm), "layer-norm-fix")

The switch is greyed out until the exercise's check passes in this kernel; it turns on by
itself the moment it does (the lab redraws), and off again if a later check of the same
exercise fails. Ticked, the model runs on the learner's function; if that raises or returns
something unusable, the lab runs on the course's function and the badge says why in one line.
While the learner's function runs, the badge counts its calls (for this plot, and since the
switch was ticked) and shows its last call with the shapes of the arrays it received, so a
learner sees their own code at work.
"""

from __future__ import annotations

import dataclasses
import html

import ipywidgets as widgets
import numpy as np

from engine.core import own, restart
from engine.presentation.html import box, code
from engine.presentation.numbers import plural, significant

_ONLY = object()


def _argument(value) -> str:
    """One argument of a call, short: an array by its shape, a number by its value."""
    if isinstance(value, np.ndarray):
        return f"array {value.shape}" if value.ndim else significant(value.item())
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return significant(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 12 else "a string"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    if callable(value):
        return getattr(value, "__name__", "a function")
    return type(value).__name__


def call_summary(name: str, args, kwargs) -> str:
    """How a call looked, e.g. ``layer_norm(array (4, 8), eps=1e-05)``."""
    parts = [_argument(a) for a in args] + [f"{k}={_argument(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


class CallCounter:
    """Counts the calls of the learner's function and remembers how the last one looked."""

    def __init__(self):
        self.total = 0       # since the switch was last ticked
        self.this_run = 0    # during the last update of the lab
        self.last = ""       # call_summary of the last call

    def wrap(self, name: str, func):
        def counted(*args, **kwargs):
            self.total += 1
            self.this_run += 1
            self.last = call_summary(name, args, kwargs)
            return func(*args, **kwargs)
        return counted

    def counting(self, use):
        """``use`` whose learner's function is counted (the course's is not)."""
        adapt = use.adapt

        def counted_adapt(func):
            counted = self.wrap(use.name, func)
            return adapt(counted) if adapt is not None else counted
        return dataclasses.replace(use, adapt=counted_adapt)


class OwnFunctionSwitch:
    """A checkbox "use my function" and a badge; ``run`` runs a model on the chosen function.

    ``running_own`` says whether the last ``run`` ran the learner's function (the badge says
    why not).
    """

    def __init__(self, uses, on_change=None):
        self.uses = {use.exercise: use for use in uses}
        self.on_change = on_change
        self.checkbox = widgets.Checkbox(value=False, description="use my function", indent=False,
                                         layout=widgets.Layout(width="auto"))
        self.checkbox.add_class("course-own-switch")
        self.badge = widgets.HTML()
        self.badge.add_class("course-own-badge")
        self.widget = widgets.HBox([self.checkbox, self.badge],
                                   layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        self.widget.add_class("course-own")
        self.running_own = False
        self._earlier = {}
        self.calls = CallCounter()
        self._refresh_switch()
        self.checkbox.observe(self._on_tick, names="value")
        own.listen(self._on_registry)

    # -------------------------------------------------------------- state

    def _available(self) -> list[str]:
        return [ex_id for ex_id in self.uses if own.passed_function(ex_id) is not None]

    def _refresh_switch(self) -> None:
        names = [self.uses[ex_id].name for ex_id in self._available()]
        self.checkbox.disabled = not names
        self.checkbox.description = (f"use my {names[0]}" if len(names) == 1 else "use my function"
                                     if names else "use my function (after its check passes)")
        self.checkbox.tooltip = ("Run this lab on the function you wrote" if names else
                                 "Opens when your function passes its check")

    def _on_tick(self, change=None) -> None:
        if change is not None and change.get("new"):
            self.calls = CallCounter()
        self._changed()

    def _on_registry(self, ex_id: str) -> None:
        if ex_id not in self.uses:
            return
        self._refresh_switch()
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -------------------------------------------------------------- running

    def run(self, build, exercise=_ONLY):
        """``build(function)`` on the learner's function of ``exercise`` (default: the only
        use) when the box is ticked and it passed, else on the course's. ``exercise=None`` means
        that this setting of the lab uses none of the learner's functions: ``build(None)``."""
        if exercise is _ONLY:
            exercise = next(iter(self.uses))
        if exercise is None:
            self.running_own = False
            self.badge.value = self._badge_html(None, False, "")
            return build(None)
        use = self.uses[exercise]
        self.calls.this_run = 0
        outcome = own.run_model(build, self.calls.counting(use), want_own=bool(self.checkbox.value))
        self.running_own = outcome.own
        self.badge.value = self._badge_html(use, outcome.own, outcome.note, outcome.kind)
        return outcome.result

    def _passed_earlier(self, ex_id: str) -> bool:
        """The progress says the check passed, in an earlier kernel (read once per lab)."""
        if ex_id not in self._earlier:
            self._earlier[ex_id] = restart.passed_earlier(ex_id)
        return self._earlier[ex_id]

    def _badge_html(self, use, is_own: bool, note: str, kind: str = "") -> str:
        if use is None:                 # named by what it is, not by a function met later
            body = "running: the course's code \u2014 this setting runs no function of yours"
            status, state = "blank", "none"
        elif is_own:
            calls = self.calls
            ran = (f"called {plural(calls.this_run, 'time')} for this plot, {calls.total} since you "
                   f"ticked the box; last call {code(calls.last)}" if calls.this_run else
                   "not called for this plot")
            body = f"\u25b6 running: <b>your {code(use.name)}</b> \u2014 {ran}"
            status, state = "pass", "own"
        else:
            body = f"running: the course's {code(use.label)}"
            if note and kind == "not-here":
                body += f" \u2014 {html.escape(note)}"
                status, state = "blank", "not-here"
            elif note and self.checkbox.value:
                body += f" \u2014 {html.escape(note)}"
                status, state = "fail", "fallback"
            elif own.passed_function(use.exercise) is not None:
                body += f" \u2014 your {code(use.name)} passed its check: tick the box to run it here"
                status, state = "blank", "course"
            else:
                reason = own.lost_reason(use.exercise)
                title = use.title
                if reason:
                    body += f" \u2014 {html.escape(reason)}"
                elif self._passed_earlier(use.exercise):
                    body += (f" \u2014 your {code(use.name)} passed its check before this kernel "
                             f"started: run its exercise cell and its check again to run it here")
                else:
                    body += (f" \u2014 pass the check of \u201c{html.escape(title)}\u201d to run your "
                             f"{code(use.name)} here")
                status, state = "blank", "course"
        return box(status, body, css_class=f"course-own-state course-own-{state}",
                   extra_style=" margin: 0 0 0 8px; padding: 2px 8px;")


__all__ = ["OwnFunctionSwitch"]
