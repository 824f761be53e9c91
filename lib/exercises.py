"""Kept for notebooks saved from earlier releases, whose setup cell reads
``from lib.exercises import ____, check, hint, solution``. New notebooks import from
``exercises.ui.notebook``; nothing in ``lib`` uses this module.

The one module of the course with an effect on import: it calls ``begin()``, which tells the
learner, once per kernel, when the course has a newer release (such a notebook has no other
place to do so); see ``exercises.ui.notebook.begin``.
"""

from exercises.ui.notebook import ____, begin, check, hint, solution

begin()

__all__ = ["____", "check", "hint", "solution"]
