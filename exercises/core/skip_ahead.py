"""Test-out sets: a few questions per notebook; all right marks the notebook done.

A learner who already knows a topic answers its notebook's test-out questions (one cell near
the top of the notebook: ``skip_ahead("<stem>")`` from ``exercises.ui``). They are graded
together; when every answer is right the notebook counts as done. The questions are ordinary
:class:`~exercises.core.registry.Question` objects, but they live in this registry, not in the
course-wide one: they are never asked one by one with ``ask`` and never reveal their answers.

Each notebook's module registers its set with :func:`register_set`. Results are kept in the
progress file under the key ``"test_out"``::

    "test_out": {"01_positional_encoding": {"attempts": 2, "passed": true,
                                             "passed_at": "...", "last_score": [4, 4]}}

:func:`tested_out` and :func:`status_label` are what a progress view shows.
"""

from __future__ import annotations

from . import progress
from .questions import grade as grade_question
from .registry import NOTEBOOKS, Question, load_all

_SETS: dict[str, list[Question]] = {}
KEY = "test_out"


def register_set(stem: str, *questions: Question) -> None:
    """The test-out set of notebook ``stem`` (3 to 5 questions, ids unique in the set)."""
    if stem not in {s for s, _t, _m in NOTEBOOKS}:
        raise ValueError(f"unknown notebook {stem!r}")
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError(f"test-out set of {stem}: repeated question ids")
    if not 3 <= len(questions) <= 5:
        raise ValueError(f"test-out set of {stem}: 3 to 5 questions, got {len(questions)}")
    for q in questions:
        if q.notebook != stem:
            raise ValueError(f"question {q.id!r} belongs to {q.notebook}, not {stem}")
    _SETS[stem] = list(questions)


def questions_for(stem: str) -> list[Question]:
    """The notebook's test-out questions ([] if it has none yet)."""
    load_all()
    return list(_SETS.get(stem, []))


def stems_with_sets() -> list[str]:
    load_all()
    return [stem for stem, _t, _m in NOTEBOOKS if stem in _SETS]


def grade(stem: str, answers: dict) -> dict:
    """Grade every answer: ``{question id: (ok, message)}``; ok is None when the answer is
    missing or cannot be read (the message says why). Records nothing."""
    out = {}
    for q in questions_for(stem):
        answer = answers.get(q.id)
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            out[q.id] = (None, "Not answered yet.")
            continue
        try:
            ok, message = grade_question(q, answer)
        except (ValueError, TypeError) as exc:
            out[q.id] = (None, str(exc))
            continue
        out[q.id] = (ok, "Right." if ok else "Not right.")   # the right answer is never shown
    return out


def record(stem: str, right: int, total: int) -> dict:
    """Record one submitted attempt (all questions answered): passed when right == total."""
    data = progress.load()
    section = data.setdefault(KEY, {})
    entry = section.setdefault(stem, {})
    entry["attempts"] = int(entry.get("attempts", 0)) + 1
    entry["last_score"] = [int(right), int(total)]
    entry["last_at"] = progress._now()
    if total and right == total and not entry.get("passed"):
        entry["passed"] = True
        entry["passed_at"] = progress._now()
    progress.save(data)
    return dict(entry)


def entry(stem: str, data: dict | None = None) -> dict:
    data = progress.load() if data is None else data
    section = data.get(KEY)
    value = section.get(stem) if isinstance(section, dict) else None
    return dict(value) if isinstance(value, dict) else {}


def tested_out(stem: str, data: dict | None = None) -> bool:
    """True when the learner passed the notebook's test-out set (it then counts as done)."""
    return bool(entry(stem, data).get("passed"))


def status_label(stem: str, data: dict | None = None) -> str:
    """A short label for a progress view: "tested out" (with the day), or ""."""
    e = entry(stem, data)
    if not e.get("passed"):
        return ""
    day = str(e.get("passed_at", ""))[:10]
    return f"tested out{' on ' + day if day else ''}"


__all__ = ["KEY", "entry", "grade", "questions_for", "record", "register_set", "status_label",
           "stems_with_sets", "tested_out"]
