"""Skip-ahead sets: a few questions per notebook; all right marks the notebook done.

A learner who already knows a topic answers its notebook's skip-ahead questions (one cell near
the top of the notebook: ``skip_ahead("<stem>")`` from :mod:`engine.ui.skip_ahead`). They are
graded together; when every answer is right the notebook counts as done. The questions are
ordinary :class:`~engine.core.definition.Question` objects, named in ``SKIP_AHEAD`` by the
notebook's definitions module and kept apart from the course-wide ones
(:func:`engine.core.registry.skip_ahead_questions`): they are never asked one by one with
``ask`` and never reveal their answers.

Results are kept in the progress file under the key ``"skip_ahead"`` (files of earlier releases
have them under ``"test_out"``, the feature's former name; :mod:`engine.core.progress` reads
that key too)::

    "skip_ahead": {"01_positional_encoding": {"attempts": 2, "passed": true,
                                               "passed_at": "...", "last_score": [4, 4]}}

:func:`skipped_ahead` and :func:`status_label` are what a progress view shows.
"""

from __future__ import annotations

from .progress import Progress
from .questions import grade as grade_question
from .registry import skip_ahead_questions


def grade(stem: str, answers: dict) -> dict:
    """Grade every answer: ``{question id: (ok, message)}``; ok is None when the answer is
    missing or cannot be read (the message says why). Records nothing."""
    out = {}
    for q in skip_ahead_questions(stem):
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


def record_attempt(stem: str, right: int, total: int) -> dict:
    """Record one submitted attempt (all questions answered): passed when right == total."""
    record = Progress.load()
    entry = record.record_skip_ahead(stem, right, total)
    record.save()
    return entry


def skipped_ahead(stem: str, record: Progress | None = None) -> bool:
    """True when the learner passed the notebook's skip-ahead set (it then counts as done)."""
    record = Progress.load() if record is None else record
    return bool(record.skip_ahead(stem).get("passed"))


def status_label(stem: str, record: Progress | None = None) -> str:
    """A short label for a progress view: "skipped ahead" (with the day), or ""."""
    entry = (Progress.load() if record is None else record).skip_ahead(stem)
    if not entry.get("passed"):
        return ""
    day = str(entry.get("passed_at", ""))[:10]
    return f"skipped ahead{' on ' + day if day else ''}"


__all__ = ["grade", "record_attempt", "skipped_ahead", "status_label"]
