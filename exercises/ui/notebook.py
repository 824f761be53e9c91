"""What notebooks call. The setup cell reads::

    from exercises.ui.notebook import ____, ask, begin, check, hint, solution
    begin()

then each exercise's hidden check cell calls ``check("<id>")``; ``hint`` and ``solution`` are the
text-only alternatives to the buttons under the feedback (:mod:`exercises.ui.feedback`), and
``ask`` shows a question (:mod:`exercises.ui.questions`). These record the learner's progress
and display their result.
"""

from __future__ import annotations

import html
import os

from exercises.core import hints, own
from exercises.core.blank import ____
from exercises.core.checker import Feedback, evaluate
from exercises.core.progress import Progress, notices
from exercises.core.registry import get_exercise

from .display import Html, in_kernel, shell, show
from .feedback import exercise_controls, feedback_html, hint_html, locked_solution_html, solution_html
from .questions import ask
from .release_view import announce
from .style import box


def strict() -> bool:
    """True when ``COURSE_STRICT=1``: a check that is not passed raises."""
    return os.environ.get("COURSE_STRICT", "").strip().lower() in ("1", "true", "yes")


def _show_notices() -> None:
    for message in notices():
        show(Html(box("blank", html.escape(message), "course-notice"), message))


_begun = False


def begin() -> None:
    """Run by every notebook's setup cell: once per kernel, tell the learner if the course has a
    newer release than some of their saved notebooks (``exercises.ui.release_view``)."""
    global _begun
    if _begun or not in_kernel():
        return
    _begun = True
    announce()


# ---------------------------------------------------------------- hints and solution

def hint(exercise_id: str) -> None:
    """Show the next hint of an exercise's ladder (text-only alternative to the button)."""
    record = Progress.load()
    level, total, text = hints.next_hint(get_exercise(exercise_id), record)
    record.save()
    if not level:
        show(Html("<div>This exercise has no hints.</div>", "This exercise has no hints."))
        return
    show(Html(hint_html(level, total, text), f"Hint {level} of {total}: {text}"))


def solution(exercise_id: str) -> None:
    """Show the solution, if the exercise has been attempted (text-only alternative)."""
    record = Progress.load()
    source = hints.reveal_solution(get_exercise(exercise_id), record)
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


def check(exercise_id: str, namespace: dict | None = None) -> "Checked":
    """Check an exercise, record the result and show the feedback.

    The learner's function or value is looked up by name in ``namespace``; by default, the
    notebook's (the kernel's user namespace). With ``COURSE_STRICT=1`` a check that is not passed
    raises ``AssertionError``. The feedback is displayed; the returned :class:`Checked` shows
    nothing and holds it as ``.feedback``.
    """
    if namespace is None:
        namespace = learner_namespace()
    ex = get_exercise(exercise_id)
    fb = evaluate(ex, namespace)
    record = Progress.load()
    record.record_check(ex.id, fb.passed, fb.kind)
    if fb.status == "fail" and not fb.hint:
        level, total, text = hints.next_hint(ex, record)
        if level:
            fb.ladder = (level, total, text)
    record.save()
    own.note_check(ex, namespace.get(ex.name), fb)  # a passing function can then run the labs
    _show_notices()
    show(Html(feedback_html(fb), fb.text()))
    if in_kernel():
        show(exercise_controls(ex.id))
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


__all__ = ["____", "ask", "begin", "check", "hint", "solution"]
