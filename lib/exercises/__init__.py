"""Exercise machinery of the course: the blank, checks, hints, solutions, progress.

In a notebook's setup cell::

    from lib.exercises import ____, check, hint, solution

An exercise cell holds blanks ``____``; the hidden cell after it runs
``check("<exercise id>")``. Definitions (solution, hints, cases, known
mistakes) live in one module per notebook in this package.
"""

from .blank import BLANK, ____, Blank
from .checker import Feedback, evaluate
from .registry import (
    NOTEBOOKS, Case, Exercise, Mistake, Question, Variant, all_exercises, all_questions,
    exercises_by_notebook, get_exercise, get_question, register,
)
from .api import check, hint, solution, strict

__all__ = [
    "____", "BLANK", "Blank", "Case", "Exercise", "Feedback", "Mistake", "NOTEBOOKS",
    "Question", "Variant", "all_exercises", "all_questions", "check", "evaluate",
    "exercises_by_notebook", "get_exercise", "get_question", "hint", "register", "solution",
    "strict",
]

# When a notebook's setup cell imports this package in a kernel, tell the learner once if the
# course was updated since their copies of its notebooks were made (labs/release_view.py).
from .api import in_kernel as _in_kernel

if _in_kernel():
    try:
        from labs.release_view import announce as _announce
    except ImportError:  # widgets unavailable: nothing to show
        pass
    else:
        _announce()
