"""What a learner's progress record holds, as the report reads it (:mod:`exercises.core.report`'s
helpers that need none of its tables): the kind each counted or flagged field must have (a count
over MAX_COUNT is no count: such a file is skipped, never summed), and the status of each entry.
"""

from __future__ import annotations

import re

from engine.core import export
from engine.core.progress import RENAMED_SECTIONS, status_of


# The fields the report reads, and the kind each must have when present.
_COUNTS = ("attempts", "hints", "checks", "misses", "tries")
MAX_COUNT = 10 ** 9          # more attempts, hints or checks than anyone makes: not a real count
_FLAGS = ("passed", "passed_after_solution", "solution_revealed", "correct", "revealed")


def wrong_kind(data: dict) -> str | None:
    """What in a progress record has the wrong kind of value, or None."""
    for section in ("exercises", "questions"):
        if not isinstance(data.get(section), dict) or not all(isinstance(v, dict) for v in data[section].values()):
            return f"its {section!r} section"
    for section in (*RENAMED_SECTIONS.values(), *RENAMED_SECTIONS):      # skip_ahead, and test_out
        value = data.get(section, {})
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            return f"its {section!r} section"
    for section in ("exercises", "questions", *RENAMED_SECTIONS.values(), *RENAMED_SECTIONS):
        for key, entry in data.get(section, {}).items():
            for name in _COUNTS:
                value = entry.get(name, 0)
                if type(value) is not int or value < 0:
                    return f"{section} entry {export.printable(key, 40)!r}: {name!r}"
                if value > MAX_COUNT:
                    return (f"{section} entry {export.printable(key, 40)!r}: {name!r} (a number of "
                            f"{len(str(value)) if value < 10 ** 4000 else 'over 4,000'} digits, not a count)")
            for name in _FLAGS:
                if not isinstance(entry.get(name, False), bool):
                    return f"{section} entry {export.printable(key, 40)!r}: {name!r}"
    return None


def _day(value) -> str:
    """The date of a time stamp written by the course (YYYY-MM-DD...), else ""."""
    match = re.match(r"\d{4}-\d{2}-\d{2}", value) if isinstance(value, str) else None
    return match.group(0) if match else ""


def skipped_ahead(data: dict, stem: str) -> str:
    """"" if the learner did not pass notebook ``stem``'s skip-ahead set, else the day (or "yes")."""
    entry = data.get("skip_ahead", {}).get(stem, {})
    if not entry.get("passed"):
        return ""
    return _day(entry.get("passed_at")) or "yes"


def exercise_status(entry: dict, notebook_skipped: bool) -> str:
    """One of :data:`EXERCISE_STATUSES` (the progress view's rules, then the report's two)."""
    status = status_of(entry)
    if status in ("passed", "passed-after-solution"):
        return status
    if notebook_skipped:
        return "skipped-ahead"
    if status == "not-started" and entry.get("hints", 0) > 0:
        return "started"
    return status


def question_status(entry: dict) -> str:
    if "answer" not in entry:
        return "not answered"
    return "right" if entry.get("correct") else "wrong"


def skip_ahead_status(entry: dict) -> str:
    if entry.get("passed"):
        return "passed"
    return "attempted" if entry.get("attempts", 0) > 0 else "not taken"


def yes_no(flag) -> str:
    return "yes" if flag else "no"
