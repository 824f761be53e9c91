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
