"""What notebooks call: ``begin`` in the setup cell, then ``check``, ``hint``, ``solution``
(the setup cell also imports the blank ``____`` and ``ask`` from here).

These record progress and display their result; the hint and solution buttons come from
``exercises.ui.feedback``.
"""

from __future__ import annotations

import html
import os
import sys

from exercises.core import own, progress
from exercises.core.blank import ____
from exercises.core.checker import Feedback, box_style, code_html, evaluate
from exercises.core.registry import Exercise, get_exercise

from .questions import ask


def strict() -> bool:
    """True when ``COURSE_STRICT=1``: a check that is not passed raises."""
    return os.environ.get("COURSE_STRICT", "").strip().lower() in ("1", "true", "yes")


class Html:
    """Rich output with a text/plain fallback."""

    def __init__(self, html_text: str, text: str):
        self.html, self.plain = html_text, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.plain


def show(obj) -> None:
    try:
        from IPython.display import display
    except ImportError:  # plain Python
        print(repr(obj))
        return
    display(obj)


def in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    # ipykernel and the Pyodide kernel both show widgets; a terminal IPython does not.
    return shell is not None and type(shell).__name__ != "TerminalInteractiveShell"


def _show_notices() -> None:
    for message in progress.notices():
        show(Html(f'<div class="course-notice" style="{box_style("blank")}">'
                  f"{html.escape(message)}</div>", message))


_begun = False


def begin() -> None:
    """Run by every notebook's setup cell: once per kernel, tell the learner if the course has a
    newer release than some of their saved notebooks (``exercises.ui.release_view``)."""
    global _begun
    if _begun or not in_kernel():
        return
    _begun = True
    from .release_view import announce

    announce()


# ---------------------------------------------------------------- hints and solution

def next_hint(exercise: Exercise | str) -> tuple[int, int, str]:
    """Advance the hint ladder by one and record it: ``(level, total, text)``."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    level = int(progress.exercise_entry(ex.id).get("hints", 0))
    level = min(level + 1, len(ex.hints))
    if level:
        progress.record_hint(ex.id, level)
    return level, len(ex.hints), (ex.hints[level - 1] if level else "")


def hints_seen(exercise: Exercise | str) -> list[str]:
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    level = int(progress.exercise_entry(ex.id).get("hints", 0))
    return list(ex.hints[:level])


def can_reveal(exercise: Exercise | str) -> bool:
    """The solution may be shown once the check has been run on an attempt."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    entry = progress.exercise_entry(ex.id)
    return entry.get("attempts", 0) > 0 or bool(entry.get("solution_revealed"))


def reveal_solution(exercise: Exercise | str) -> str | None:
    """The solved cell, recorded as revealed; None before the first attempt."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    if not can_reveal(ex):
        return None
    progress.record_reveal(ex.id)
    return ex.solution_source


NOT_YET_REVEAL = ("The solution opens after your first attempt: fill in the blank, "
                  "run the cell and its check once. Until then, try a hint.")


def hint_html(level: int, total: int, text: str) -> str:
    from exercises.core.checker import _inline

    return (f'<div class="course-hint" style="{box_style("blank")}">'
            f"<b>Hint {level} of {total}:</b> {_inline(text)}</div>")


def solution_html(source: str) -> str:
    return (f'<div class="course-solution" style="{box_style("pass")}">'
            "<b>Solution</b> (copy it into the cell above if you like, then run the check):"
            '<pre style="margin: 4px 0; font-family: var(--jp-code-font-family, monospace);'
            ' color: var(--jp-content-font-color1, inherit);">'
            f"{html.escape(source)}</pre></div>")


def hint(exercise_id: str) -> None:
    """Show the next hint of an exercise's ladder (text-only alternative to the button)."""
    level, total, text = next_hint(exercise_id)
    if not level:
        show(Html("<div>This exercise has no hints.</div>", "This exercise has no hints."))
        return
    show(Html(hint_html(level, total, text), f"Hint {level} of {total}: {text}"))


def solution(exercise_id: str) -> None:
    """Show the solution, if the exercise has been attempted (text-only alternative)."""
    source = reveal_solution(exercise_id)
    if source is None:
        show(Html(f'<div class="course-solution-locked" style="{box_style("blank")}">'
                  f"{html.escape(NOT_YET_REVEAL)}</div>", NOT_YET_REVEAL))
        return
    show(Html(solution_html(source), "Solution:\n" + source))


# ---------------------------------------------------------------- check

def check(exercise_id: str, namespace: dict | None = None) -> "_Quiet":
    """Check an exercise, record the result and show the feedback.

    The learner's function or value is looked up by name in ``namespace``
    (default: the caller's globals, i.e. the notebook). With
    ``COURSE_STRICT=1`` a check that is not passed raises ``AssertionError``.
    The feedback is displayed; the returned object shows nothing and holds it
    as ``.feedback``.
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    ex = get_exercise(exercise_id)
    fb = evaluate(ex, namespace)
    progress.record_check(ex.id, fb.passed, fb.kind)
    own.note_check(ex, namespace.get(ex.name), fb)  # a passing function can then run the labs
    if fb.status == "fail" and not fb.hint:
        level, total, text = next_hint(ex)
        if level:
            fb.ladder = (level, total, text)
    _show_notices()
    show(fb)
    if in_kernel():
        try:
            from .feedback import exercise_controls
        except ImportError:
            pass
        else:
            show(exercise_controls(ex.id))
    if strict() and not fb.passed:
        raise AssertionError(fb.text())
    return _Quiet(fb)


class _Quiet:
    """Wraps the feedback so a check as a cell's last line does not display it twice."""

    def __init__(self, fb: Feedback):
        self.feedback = fb

    def __repr__(self) -> str:
        return ""

    def _repr_html_(self) -> str:
        return ""

    def _ipython_display_(self) -> None:
        pass
