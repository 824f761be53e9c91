"""What notebooks call: the one module of the engine a notebook imports. The setup cell reads::

    from engine.notebook import ____, ask, begin, check, hint, solution
    begin()

then each exercise's hidden check cell calls ``check("<id>")``; ``hint`` and ``solution`` are the
text-only alternatives to the buttons under the feedback (:mod:`engine.ui.feedback`), and
``ask`` shows a question (:mod:`engine.ui.questions`). These record the learner's progress
and display their result. The views a notebook shows are here too: ``skip_ahead`` (a notebook's
skip-ahead set), ``progress_view``, ``review`` and ``course_release`` (the start notebook's), and
two helpers notebooks use in their own cells: ``mentions_blank`` (whether a learner's function
still holds a blank) and ``byte_size`` (a number of bytes in words).

``begin`` also connects the kernel's cell runs to a :class:`~engine.core.runs.RunLog`, so a
check judges only code the learner ran and says which run (:mod:`engine.core.which_run`),
tells a learner whose kernel has just started what their progress says and the kernel no longer
holds (:mod:`engine.core.restart`), and, on a site whose kernel has no drive, where their
progress is kept (:mod:`engine.ui.storage_view`).
"""

from __future__ import annotations

import difflib
import html
import os
from pathlib import Path

from engine.core import hints, own, page_store, restart, saved, which_run
from engine.core.blank import ____, mentions_blank
from engine.core.checker import Feedback, evaluate
from engine.core.progress import Progress, notices
from engine.core.registry import all_exercises, get_exercise
from engine.core.runs import RunLog
from engine.presentation.html import box, bullets, headline, inline
from engine.presentation.numbers import byte_size

from .ui.display import Html, in_kernel, shell, show
from .ui.feedback import exercise_controls, feedback_html, hint_html, locked_solution_html, solution_html
from .ui.progress_view import progress_view
from .ui.questions import ask
from .ui.release_view import announce, course_release
from .ui.review import review
from .ui.skip_ahead import skip_ahead
from .ui.storage_view import storage_status


def strict() -> bool:
    """True when ``COURSE_STRICT=1``: a check that is not passed raises."""
    return os.environ.get("COURSE_STRICT", "").strip().lower() in ("1", "true", "yes")


def _show_notices() -> None:
    for message in notices():
        show(Html(box("blank", html.escape(message), "course-notice"), message))


_begun = False
_runs: RunLog | None = None     # this kernel's cell runs, once begin() has run


def begin() -> None:
    """Run by every notebook's setup cell, once per kernel: tell the learner if the course has a
    newer release than some of their saved notebooks (``engine.ui.release_view``), start
    following the cells' runs, and say what a new kernel does not hold."""
    global _begun
    if _begun or not in_kernel():
        return
    _begun = True
    if page_store.needed():              # no drive: bring back the progress the browser keeps
        Progress.load()
        show(storage_status())
    announce()
    running = shell()
    _follow_runs(running)
    _explain_new_kernel(running)


def _follow_runs(running) -> None:
    """Feed IPython's ``pre_run_cell`` and ``post_run_cell`` events to a new run log. The
    callbacks never raise: a problem there must not print into every cell."""
    global _runs
    log = RunLog(ex.name for ex in all_exercises())

    def started(info=None) -> None:
        try:
            log.started(getattr(info, "raw_cell", "") or "", getattr(info, "cell_id", None), running.user_ns)
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    def finished(result=None) -> None:
        try:
            error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
            log.finished(getattr(result, "execution_count", None), error)
        except Exception:  # noqa: BLE001 - see the docstring
            pass

    running.events.register("pre_run_cell", started)
    running.events.register("post_run_cell", finished)
    _runs = log


def _here() -> Path:
    """The kernel's folder: its notebook's (JupyterLab and JupyterLite start kernels there)."""
    try:
        return Path.cwd()
    except OSError:                          # the folder was removed
        return Path(".")


def _running_source(running) -> str:
    """The text of the cell running now (the setup cell): IPython hands the running cell's
    result, with its text, to the display hook before the code runs."""
    info = getattr(getattr(getattr(running, "displayhook", None), "exec_result", None), "info", None)
    if getattr(info, "raw_cell", None):
        return info.raw_cell
    history = getattr(getattr(running, "history_manager", None), "input_hist_raw", None)
    return history[-1] if history else ""


def _explain_new_kernel(running) -> None:
    """If the progress says some of this notebook's functions passed, or the notebook was saved
    with labs, say what this new kernel does not hold yet (:mod:`engine.core.restart`)."""
    found = saved.this_notebook(_here(), _running_source(running), saved.session_path())
    ids, labs = (saved.exercise_ids(found[1]), saved.has_widget_outputs(found[1])) if found else ([], False)
    lines = restart.restart_lines(restart.passed_functions(ids, Progress.load()), labs)
    if not lines:
        return
    title = "This notebook's kernel has just started"
    body = headline("info", title) + bullets(inline(line) for line in lines)
    show(Html(box("info", body, "course-new-kernel"), "\n".join([title] + [f"  - {line}" for line in lines])))


# ---------------------------------------------------------------- hints and solution

def _exercise(exercise_id):
    """The exercise called ``exercise_id``, or None after saying, in plain words, that there is
    none (a typo in a hint, solution or check call), with the nearest ids."""
    try:
        return get_exercise(exercise_id)
    except (KeyError, TypeError):
        known = [ex.id for ex in all_exercises(retired=True)]
        close = difflib.get_close_matches(str(exercise_id), known, n=3)
        text = (f"There is no exercise called “{exercise_id}” in this course. "
                + (f"Did you mean {' or '.join(f'“{c}”' for c in close)}?" if close
                   else "The check cell under the exercise names it: copy the id from there."))
        show(Html(box("blank", html.escape(text), "course-notice"), text))
        return None


def hint(exercise_id: str, demo: bool = False) -> None:
    """Show the next hint of an exercise's ladder (text-only alternative to the button).

    With ``demo=True`` (00's demonstration cell) the hint is shown but not recorded, so running
    a notebook from top to bottom counts no hint as used."""
    ex = _exercise(exercise_id)
    if ex is None:
        return
    record = Progress.load()
    level, total, text = hints.next_hint(ex, record)
    if not demo:
        record.save()
    if not level:
        show(Html("<div>This exercise has no hints.</div>", "This exercise has no hints."))
        return
    show(Html(hint_html(level, total, text), f"Hint {level} of {total}: {text}"))


def solution(exercise_id: str) -> None:
    """Show the solution, if the exercise has been attempted (text-only alternative)."""
    ex = _exercise(exercise_id)
    if ex is None:
        return
    record = Progress.load()
    source = hints.reveal_solution(ex, record)
    if source is None:
        show(Html(locked_solution_html(), hints.NOT_YET_REVEAL))
        return
    record.save()
    show(Html(solution_html(source), "Solution:\n" + source))


# ---------------------------------------------------------------- check

def learner_namespace() -> dict:
    """The namespace the notebook's cells run in: the running IPython shell's."""
    running = shell()
    if running is None:
        raise TypeError("check() could not find your notebook's variables: outside a notebook, "
                        "pass them, e.g. check(\"row-mean\", globals())")
    return running.user_ns


def check(exercise_id: str, namespace: dict | None = None) -> "Checked | None":
    """Check an exercise, record the result and show the feedback.

    The learner's function or value is looked up by name in ``namespace``; by default, the
    notebook's (the kernel's user namespace). There, once ``begin()`` ran, the check judges only
    code the learner ran, and says which run (:mod:`engine.core.which_run`). With
    ``COURSE_STRICT=1`` a check that is not passed raises ``AssertionError``. The feedback is
    displayed; the returned :class:`Checked` shows nothing and holds it as ``.feedback``.
    """
    notebook = namespace is None
    if namespace is None:
        namespace = learner_namespace()
    ex = _exercise(exercise_id)
    if ex is None:
        return None
    judged = ""
    fb = which_run.not_yours(ex, namespace, _runs if notebook else None)
    if fb is None and notebook and _runs is not None:
        fb, judged = which_run.judge(ex, namespace, _runs, _here(), saved.session_path())
    if fb is None:
        fb = evaluate(ex, namespace)
        if judged and fb.attempted:             # a verdict: say which run it is on
            fb.details.append(judged)
    record = Progress.load()
    if fb.kind == "missing" and restart.passed_earlier(ex.id, record):
        fb = Feedback(ex.id, "missing", [
            f"Your progress keeps this pass, but this kernel does not hold `{ex.name}` yet (it "
            "started after you ran it): run the exercise cell above (Shift+Enter), then this "
            "check, to use it here."], earlier=True)
    code = which_run.judged_code(ex, namespace, _runs if notebook else None)
    record.record_check(ex.id, fb.passed, fb.kind, code)     # the same code judged again: no new try
    if fb.status == "fail" and not fb.hint:
        fb.ladder = hints.hint_after_miss(ex, record, fb.kind, fb.right)
        if fb.ladder is None and hints.hints_left(ex, record):
            fb.details.append("Stuck on the method? " + (
                "\u201cShow a hint\u201d below gives one hint per click." if in_kernel()
                else f"hint(\"{ex.id}\") shows one hint."))
    record.save()
    own.note_check(ex, namespace.get(ex.name), fb)  # a passing function can then run the labs
    _show_notices()
    show(Html(feedback_html(fb), fb.text()))
    if in_kernel():
        show(exercise_controls(ex.id, in_feedback=fb.ladder[0] if fb.ladder else 0))
    if strict() and not fb.passed:
        raise AssertionError(fb.text())
    return Checked(fb)


class Checked:
    """What ``check`` returns: the feedback, as ``.feedback``. It displays nothing, so a check
    as a cell's last line does not show the feedback twice."""

    def __init__(self, fb: Feedback):
        self.feedback = fb

    def __repr__(self) -> str:
        return ""

    def _repr_html_(self) -> str:
        return ""

    def _ipython_display_(self) -> None:
        pass


__all__ = ["____", "ask", "begin", "byte_size", "check", "course_release", "hint", "mentions_blank", "progress_view",
           "review", "skip_ahead", "solution"]
