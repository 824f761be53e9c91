"""Which run a check judges: it gives a verdict only on code the learner ran, and says which run.

Before judging the object a notebook's namespace holds, ``check`` asks :func:`judge`, with the
kernel's :class:`~engine.core.runs.RunLog`:

- the latest run of the cell that defines the name stopped before defining it (a
  ``SyntaxError``, an error above the ``def``), so the kernel still holds an older object:
  no verdict, "Your exercise cell did not run" and the error with its line;
- the notebook, saved after that run, no longer holds the code that ran (the learner changed
  the cell and did not run it; :mod:`engine.core.saved`): no verdict, "You changed the cell
  since you ran it";
- the name holds an object that is not the learner's (:func:`not_yours`): the course's own
  function (``from lib.norm import rms_norm`` in a later cell) or one a cell bound without
  defining it (an import): no verdict, "This is not your function", and the cell that bound it;
- otherwise the check judges, and a line says which run it judged (its prompt number and when).

The feedback without a verdict is an :class:`Unjudged`: status "blank", not a pass, not a miss.
"""

from __future__ import annotations

import hashlib
import inspect
import time

from .checker import Feedback
from .definition import Exercise
from .runs import Run, RunLog, defines
from .saved import compare_run

HEADLINES = {
    "not-run": "Your exercise cell did not run",
    "changed": "You changed the cell since you ran it",
    "not-yours": "This is not your function",
}
COURSE_PACKAGES = ("lib", "engine", "labs", "exercises", "training")
RUN_IT = "Run the exercise cell (Shift+Enter), then this check."
_MISSING = object()


class Unjudged(Feedback):
    """A check that gave no verdict, because the code in the kernel is not the code the cell
    holds or last tried to run. ``kind`` is "not-run" or "changed"."""

    @property
    def headline(self) -> str:
        return HEADLINES.get(self.kind, self.kind)

    @property
    def status(self) -> str:
        return "blank"

    @property
    def attempted(self) -> bool:
        return False

    def text(self) -> str:
        return "\n".join([f"[not checked] {self.exercise}: {self.headline}"]
                         + [f"  - {d}" for d in self.details])


def ago(then: float, now: float | None = None) -> str:
    """When ``then`` was, by the clock: "at 14:05", or "on 5 Dec at 14:05" on another day than
    ``now``. A check's output is saved with the notebook: "just now" would stay in it for good."""
    moment = time.localtime(then)
    today = time.localtime(time.time() if now is None else now)
    clock = time.strftime("%H:%M", moment)
    if (moment.tm_year, moment.tm_yday) == (today.tm_year, today.tm_yday):
        return f"at {clock}"
    return f"on {moment.tm_mday} {time.strftime('%b', moment)} at {clock}"


def _not_run(ex: Exercise, latest: Run, earlier: Run | None, now: float | None) -> Unjudged:
    run = f"Its latest run, {latest.label} ({ago(latest.started, now)}),"
    if latest.error:
        first = (f"{run} stopped before defining `{ex.name}`: {latest.error}. Fix it and run it "
                 "again (Shift+Enter), then this check.")
    else:
        first = f"{run} no longer defines `{ex.name}`. {RUN_IT}"
    older = f"an earlier run, {earlier.label}" if earlier is not None else "an earlier run"
    return Unjudged(ex.id, "not-run", [
        first, f"This check judged nothing: the `{ex.name}` still in this kernel is from {older}."])


def _course_own(ex: Exercise, obj) -> str:
    """The dotted name of ``obj`` when it is the course's own (a function of a course package, or
    the exercise's reference itself); "" when it may be the learner's."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or ex.name
    if obj is ex.reference or module.split(".")[0] in COURSE_PACKAGES:
        return f"{module}.{name}" if module else name
    return ""


def not_yours(ex: Exercise, namespace: dict, log: RunLog | None = None) -> Unjudged | None:
    """No verdict when the object under the exercise's name is not the learner's: the course's
    own function (whatever bound it), or, with the kernel's ``log``, an object bound by a cell
    that holds no ``def`` or assignment of the name (an import in a later cell). None: judge."""
    obj = namespace.get(ex.name, _MISSING)
    if ex.kind != "function" or obj is _MISSING:
        return None
    bound = log.defined_by(ex.name) if log is not None else None
    by = f", bound by the cell that ran as {bound.label}," if bound is not None else ","
    own = _course_own(ex, obj)
    if own:
        first = f"`{ex.name}` here is the course's own {own}{by} not your function."
    elif bound is not None and not defines(bound.source, ex.name):
        first = (f"`{ex.name}` here was bound by the cell that ran as {bound.label}, which does not "
                 f"define it (it holds no `def {ex.name}(`): it is not your function.")
    else:
        return None
    return Unjudged(ex.id, "not-yours", [
        first, "Run your exercise cell again (Shift+Enter), then this check.",
        "This check judged nothing: it judges only the function your exercise cell defines."])


def judged_code(ex: Exercise, namespace: dict, log: RunLog | None = None) -> str | None:
    """A fingerprint of the code a check is on: the text of the latest cell run that defined
    the name or tried to (with the kernel's ``log``), else the function's own source; None when
    neither is known. The same code gets the same verdict: the progress counts it as one try."""
    run = log.latest(ex.name) if log is not None else None
    text = run.source if run is not None else None
    if not text:
        obj = namespace.get(ex.name)
        try:
            text = inspect.getsource(obj) if callable(obj) else None
        except (OSError, TypeError):
            text = None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text else None


def judge(ex: Exercise, namespace: dict, log: RunLog, folder, session: str | None = None,
          now: float | None = None) -> tuple[Unjudged | None, str]:
    """``(feedback, note)``: the feedback to show instead of a verdict (None: judge), and the
    line saying which run the verdict is on ("" when the log knows no run of the name)."""
    if namespace.get(ex.name, _MISSING) is _MISSING:
        return None, ""
    latest = log.latest(ex.name)
    if latest is None:
        return None, ""
    if not latest.defined:
        return _not_run(ex, latest, log.defined_by(ex.name), now), ""
    saved = compare_run(latest.source, latest.cell_id, ex.id, latest.started, folder, session)
    if saved is not None and not saved.same:
        return Unjudged(ex.id, "changed", [
            f"Your notebook {saved.notebook}, saved {ago(saved.saved, now)}, no longer holds the "
            f"code that ran as {latest.label} ({ago(latest.started, now)}). {RUN_IT}",
            "This check judged nothing: it judges only code that ran."]), ""
    note = f"Judged: the `{ex.name}` defined when your cell ran as {latest.label}, {ago(latest.started, now)}."
    if latest.error:
        note += f" That run then stopped with {latest.error}."
    if log.running is not None and latest.number != log.running - 1:
        note += " Changed the cell since? Run it again (Shift+Enter), then this check."
    return None, note


__all__ = ["COURSE_PACKAGES", "HEADLINES", "Unjudged", "ago", "judge", "judged_code", "not_yours"]
