"""Kept for notebooks saved from earlier releases, whose setup cell reads
``from lib.exercises import ____, check, hint, solution``. New notebooks import from
``exercises.ui.notebook`` and call its ``begin()`` in their setup cell; nothing in ``lib``
uses this module.

Importing it has no effect. The first check, hint or solution such a notebook asks for runs
``begin()`` (once per kernel), so the learner still hears when the course has a newer release;
see ``exercises.ui.notebook.begin``.
"""

from exercises.ui import notebook
from exercises.ui.notebook import ____


def check(exercise_id: str, namespace: dict | None = None):
    """``exercises.ui.notebook.check``, after ``begin()``."""
    notebook.begin()
    return notebook.check(exercise_id, namespace)


def hint(exercise_id: str) -> None:
    """``exercises.ui.notebook.hint``, after ``begin()``."""
    notebook.begin()
    notebook.hint(exercise_id)


def solution(exercise_id: str) -> None:
    """``exercises.ui.notebook.solution``, after ``begin()``."""
    notebook.begin()
    notebook.solution(exercise_id)


__all__ = ["____", "check", "hint", "solution"]
