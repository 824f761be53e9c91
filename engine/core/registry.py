"""The course-wide registry: every notebook, and the exercises, questions and skip-ahead sets
defined for it.

The notebooks and the module of the course's definitions package each names in its metadata
come from the course's inventory (:mod:`engine.core.inventory`, read from the notebooks
themselves). A definitions module is data only: it names its exercises and questions, in the
order the notebook uses them, in ``DEFINITIONS``, and its skip-ahead questions (if any) in
``SKIP_AHEAD``. :func:`load_all` imports those modules and registers what they define, so the
progress view and the tests know every exercise even before a notebook is opened.

A notebook's retired exercises (replaced by reworked ones, kept only so that notebooks saved
from earlier releases still check) are in the module of the same name in the course's retired
package, when it has one; :func:`load_all` registers them too, so :func:`get_exercise` finds
them by their id, while :func:`all_exercises` leaves them out unless asked.

Which packages those are is the course's to say: the :class:`~engine.core.course.Course` it
declares names them (``definitions="exercises.definitions"``, ``retired="exercises.retired"``).
The engine imports nothing of a course by its code; the modules are imported here by name, inside
those two packages only (:func:`definitions_module`, :func:`retired_module`), as a plugin loader
does.
"""

from __future__ import annotations

import importlib
import importlib.util

from . import inventory
from .course import current
from .definition import Exercise, Question


def notebooks() -> list[tuple[str, str, str | None]]:
    """``(stem, title, definitions module)`` of every notebook of the course, in order."""
    return [(nb.stem, nb.title, nb.definitions) for nb in inventory.notebooks()]


def titles() -> dict[str, str]:
    """{notebook stem: its title}."""
    return {stem: title for stem, title, _m in notebooks()}


def definitions_module(name: str):
    """The module ``name`` of the course's definitions package (``"exercises.definitions.norms"``)."""
    package = current().definitions
    if not name.startswith(package + ".") or not name[len(package) + 1:].isidentifier():
        raise ValueError(f"{name!r} is not a module of {package}: a notebook's "
                         "metadata.course.definitions names one, e.g. \"norms\"")
    return _import(name)


def retired_module(name: str):
    """The module of the course's retired package named like the definitions module ``name``
    (``"exercises.definitions.norms"`` -> ``exercises.retired.norms``): the retired exercises of
    that notebook, or None when it has none (or the course has no retired package)."""
    package = current().retired
    if package is None:
        return None
    retired = f"{package}.{definitions_module(name).__name__.rpartition('.')[2]}"
    return _import(retired) if importlib.util.find_spec(retired) is not None else None


def _import(name: str):
    return importlib.import_module(name)


def definitions_of(module, retired: bool) -> list:
    """``module.DEFINITIONS``, refused (``ValueError``) when it holds an exercise of the other
    kind: a retired exercise in a module of :mod:`exercises.definitions` (``retired`` False) or a
    live one in a module of :mod:`exercises.retired` (``retired`` True)."""
    misplaced = [e.id for e in module.DEFINITIONS if isinstance(e, Exercise) and e.retired is not retired]
    if misplaced:
        raise ValueError(f"{module.__name__} holds {'live' if retired else 'retired'} exercises "
                         f"({', '.join(misplaced)}): the retired exercises belong in {current().retired}, "
                         f"the live ones in {current().definitions}")
    return list(module.DEFINITIONS)


_EXERCISES: dict[str, Exercise] = {}
_QUESTIONS: dict[str, Question] = {}
_SKIP_AHEAD: dict[str, list[Question]] = {}   # notebook stem -> its skip-ahead questions
_LOADED = False


def register(*items: Exercise | Question) -> None:
    """Add exercises or questions to the registry (ids unique across the course)."""
    for item in items:
        table = _EXERCISES if isinstance(item, Exercise) else _QUESTIONS
        other = _QUESTIONS if table is _EXERCISES else _EXERCISES
        old = table.get(item.id)
        if (old is not None and old is not item and old.notebook != item.notebook) or item.id in other:
            raise ValueError(f"id {item.id!r} is already used")
        table[item.id] = item


def register_skip_ahead(stem: str, *questions: Question) -> None:
    """The skip-ahead set of notebook ``stem``: 3 to 5 questions of that notebook, ids unique in
    the set. These questions are kept apart from the course-wide ones (see
    :mod:`engine.core.skip_ahead`)."""
    if stem not in titles():
        raise ValueError(f"unknown notebook {stem!r}")
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError(f"skip-ahead set of {stem}: repeated question ids")
    if not 3 <= len(questions) <= 5:
        raise ValueError(f"skip-ahead set of {stem}: 3 to 5 questions, got {len(questions)}")
    for q in questions:
        if q.notebook != stem:
            raise ValueError(f"question {q.id!r} belongs to {q.notebook}, not {stem}")
    _SKIP_AHEAD[stem] = list(questions)


def load_all() -> None:
    """Import the definitions module of every notebook that names one, and its retired module if
    it has one, and register what they define (a retired exercise in the definitions, or a live
    one among the retired, is refused)."""
    global _LOADED
    if _LOADED:
        return
    for stem, _title, name in notebooks():
        if name is None:
            continue
        module = definitions_module(name)
        register(*definitions_of(module, retired=False))
        retired = retired_module(name)
        if retired is not None:
            register(*definitions_of(retired, retired=True))
        if getattr(module, "SKIP_AHEAD", ()):
            register_skip_ahead(stem, *module.SKIP_AHEAD)
    _LOADED = True


def get_exercise(ex_id: str) -> Exercise:
    load_all()
    try:
        return _EXERCISES[ex_id]
    except KeyError:
        raise KeyError(f"no exercise with id {ex_id!r}") from None


def get_question(q_id: str) -> Question:
    load_all()
    try:
        return _QUESTIONS[q_id]
    except KeyError:
        raise KeyError(f"no question with id {q_id!r}") from None


def all_exercises(retired: bool = False) -> list[Exercise]:
    """Every exercise of the course, in notebook order. Retired ones (kept only for notebooks
    saved from earlier releases, still found by :func:`get_exercise`) are left out unless
    ``retired`` is True."""
    load_all()
    order = {stem: i for i, stem in enumerate(titles())}
    chosen = [e for e in _EXERCISES.values() if retired or not e.retired]
    return sorted(chosen, key=lambda e: order.get(e.notebook, len(order)))


def all_questions() -> list[Question]:
    load_all()
    order = {stem: i for i, stem in enumerate(titles())}
    return sorted(_QUESTIONS.values(), key=lambda q: order.get(q.notebook, len(order)))


def exercises_by_notebook() -> list[tuple[str, str, list[Exercise]]]:
    """``(stem, title, exercises)`` for every notebook, empty lists included; retired exercises
    left out."""
    exercises = all_exercises()
    return [(stem, title, [e for e in exercises if e.notebook == stem])
            for stem, title, _m in notebooks()]


def skip_ahead_questions(stem: str) -> list[Question]:
    """The skip-ahead questions of notebook ``stem`` ([] if it has none)."""
    load_all()
    return list(_SKIP_AHEAD.get(stem, []))


def notebooks_with_skip_ahead() -> list[str]:
    """The stems of the notebooks that have a skip-ahead set, in course order."""
    load_all()
    return [stem for stem in titles() if stem in _SKIP_AHEAD]
