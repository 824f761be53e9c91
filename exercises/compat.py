"""What notebooks saved from earlier releases import, from where those releases had it.

A learner's saved notebook keeps the imports of the release it was saved from (JupyterLite keeps
it in the browser), so the module paths those releases used must keep working after every
update; tests/test_saved_notebooks.py runs notebooks saved from earlier releases to prove it. The
code those old paths need is here, in one place. Each old path is a module that only imports its
names from this one (tests/test_architecture.py checks that it holds nothing else; lib.exercises
also answers ``python -m``):

========================  ==================================  =====================================
old module path           names saved notebooks import        where they live now
========================  ==================================  =====================================
``lib.exercises``         ``____, check, hint, solution``     ``exercises.ui.notebook`` (here, check,
                                                              hint and solution call ``begin()``)
``labs.questions``        ``ask``                             ``exercises.ui.questions``
``labs.testout``          ``test_out``                        ``exercises.ui.skip_ahead.skip_ahead``
``labs.progress_view``    ``progress_view``                   ``exercises.ui.progress_view``
``labs.review``           ``review``                          ``exercises.ui.review``
``labs.release_view``     ``course_release``                  ``exercises.ui.release_view``
========================  ==================================  =====================================

``python -m lib.exercises ...``, the command line of those releases, says where it went
(:func:`moved`) instead of doing nothing.
"""

from __future__ import annotations

import sys

from exercises.ui import notebook
from exercises.ui.notebook import ____
from exercises.ui.progress_view import progress_view
from exercises.ui.questions import ask
from exercises.ui.release_view import course_release
from exercises.ui.review import review
from exercises.ui.skip_ahead import skip_ahead as test_out

# {old module path: the names it keeps}
OLD_PATHS = {
    "lib.exercises": ("____", "check", "hint", "solution"),
    "labs.questions": ("ask",),
    "labs.testout": ("test_out",),
    "labs.progress_view": ("progress_view",),
    "labs.review": ("review",),
    "labs.release_view": ("course_release",),
}


def check(exercise_id: str, namespace: dict | None = None):
    """``exercises.ui.notebook.check``, after ``begin()`` (an old setup cell never calls it)."""
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


def moved(old: str, argv: list[str]) -> int:
    """What ``python -m <old>`` says now: where the command went, with exit code 2."""
    command = " ".join(argv) or "COMMAND"
    print(f"python -m {old} is no longer a command: use python -m exercises {command} (or, for solve and "
          f"report, ./course {command}); python -m exercises --help lists its commands.", file=sys.stderr)
    return 2


__all__ = ["OLD_PATHS", "____", "ask", "check", "course_release", "hint", "moved", "progress_view", "review",
           "solution", "test_out"]
