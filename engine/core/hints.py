"""The hint ladder and the solution lock of an exercise, kept in the learner's progress record.

Each request shows one more hint, up to the last. A failed check that matches no known mistake
climbs one step too, when its result was wrong (:data:`AFTER_A_WRONG_RESULT`): the hints are
about the method, so they do not follow an error Python raised, a missing ``return`` or a wrong
type (the feedback itself says what to fix), and no hint is shown twice. Nor does it offer a hint
its exercise declares to be about something the check saw the code do right (:func:`contradicts`;
:class:`~engine.core.definition.Hint`): code whose results have the right shape on every fixed
case is not offered a hint about the axis. Such a hint is then not passed over either: the ladder
waits there (the button shows it), so every hint recorded as seen was shown. The solution opens
only once the check has seen an attempt (a check run with the blanks still in place is none),
and opening it is recorded, so a later pass counts as "passed after the solution".
"""

from __future__ import annotations

from .definition import Exercise
from .progress import Progress

# Feedback kinds after which the ladder climbs: the code ran and gave a wrong result.
AFTER_A_WRONG_RESULT = ("values", "shape", "nan")

NOT_YET_REVEAL = ("The solution opens after your first attempt: fill in the blank, "
                  "run the cell and its check once. Until then, try a hint.")


def hints_seen(ex: Exercise, record: Progress) -> list[str]:
    """The hints already shown, in order."""
    return list(ex.hints[: int(record.exercise(ex.id).get("hints", 0))])


def next_hint(ex: Exercise, record: Progress) -> tuple[int, int, str]:
    """Climb the ladder one step and record it: ``(level, total, text)``; level 0 when the
    exercise has no hints, and the last hint again once every one was shown."""
    level = min(int(record.exercise(ex.id).get("hints", 0)) + 1, len(ex.hints))
    if level:
        record.record_hint(ex.id, level)
    return level, len(ex.hints), (ex.hints[level - 1] if level else "")


def contradicts(hint: str, right=()) -> bool:
    """True when ``hint`` is declared to be about something the code was seen to do right
    (``right``, such as ("shape",), from :func:`engine.core.diagnose.settled`): a
    ``Hint(..., about="shape")``, for code whose results had the right shape everywhere. The
    words a hint uses never decide ("a grid of the same shape as the nudge" is no hint about the
    axis)."""
    about = getattr(hint, "about", "")
    return bool(about) and about in right


def hint_after_miss(ex: Exercise, record: Progress, kind: str, right=()) -> tuple[int, int, str] | None:
    """The ladder's next hint for a failed check of feedback ``kind``, recorded: None when the
    result was not a wrong one (see the module's docstring), every hint was shown already, or
    the next hint is about something the check saw the code do right (``right``). No hint is
    passed over: the record counts the hints seen, so a hint skipped would count as seen."""
    seen = len(hints_seen(ex, record))
    if kind not in AFTER_A_WRONG_RESULT or seen >= len(ex.hints):
        return None
    level = seen + 1
    if contradicts(ex.hints[level - 1], right):
        return None
    record.record_hint(ex.id, level)
    return level, len(ex.hints), ex.hints[level - 1]


def hints_left(ex: Exercise, record: Progress) -> int:
    """How many of the exercise's hints the learner has not seen yet."""
    return len(ex.hints) - len(hints_seen(ex, record))


def can_reveal(ex: Exercise, record: Progress) -> bool:
    """The solution may be shown once the check has been run on an attempt."""
    entry = record.exercise(ex.id)
    return entry.get("attempts", 0) > 0 or bool(entry.get("solution_revealed"))


def reveal_solution(ex: Exercise, record: Progress) -> str | None:
    """The solved cell, recorded as revealed; None before the first attempt."""
    if not can_reveal(ex, record):
        return None
    record.record_reveal(ex.id)
    return ex.solution_source
