"""Review: the exercises and questions a learner missed, drawn from the progress file.

An exercise is due for review when its check failed at least once, when its solution was
opened, or when it was attempted and never passed. A question is due when its locked-in choice
was wrong, when its answer was shown, or when it was answered and never right. An item stays due
until it is passed once in review.

Why the learner retypes the function: the review runs in the kernel of the start notebook, where
the function the learner wrote in another notebook does not exist (each notebook has its own
kernel, and a copy saved from the other notebook could be the solution they pasted). So the
review shows the exercise's cell as it ships, blanks and all, and the learner fills it in again
from memory: retrieval is the point of a review. Their code runs in a fresh namespace and is
checked against fresh random cases, exactly like the notebook's own check; the result is recorded
both as a check of the exercise and as a try in the review (the ``"review"`` section of the
progress record).

Questions are asked again, a predict question with its choices in a fresh order.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.presentation.numbers import plural

from .checker import Feedback, evaluate_source
from .progress import Progress
from .questions import grade as grade_question
from .registry import all_exercises, all_questions, get_exercise, get_question, titles


@dataclass
class Item:
    """One thing to review. kind: "exercise" or "question"; cleared: passed in review."""

    kind: str
    id: str
    notebook: str
    title: str
    reason: str
    cleared: bool = False

    @property
    def label(self) -> str:
        mark = "\u2714 " if self.cleared else ""
        return f"{mark}{self.notebook[:2]} \u00b7 {self.title} ({self.reason})"


def _exercise_reason(entry: dict) -> str:
    if entry.get("solution_revealed"):
        return "you opened the solution"
    if entry.get("attempts", 0) and not entry.get("passed"):
        return "not passed yet"
    misses = int(entry.get("misses", 0))
    if misses:
        return f"{plural(misses, 'check')} failed before it passed"
    return ""


def _question_reason(q, entry: dict) -> str:
    if q.kind == "predict":
        if "answer" in entry and not entry.get("correct"):
            return "your locked-in answer was not right"
        return ""
    if entry.get("revealed"):
        return "you showed the answer"
    if entry.get("tries") and not entry.get("ever_correct"):
        return "not answered right yet"
    return ""


def items(record: Progress | None = None, include_cleared: bool = True) -> list[Item]:
    """Everything missed, in course order: exercises of a notebook, then its questions."""
    record = Progress.load() if record is None else record
    order = {stem: i for i, stem in enumerate(titles())}
    out = []
    for ex in all_exercises():
        reason = _exercise_reason(record.exercise(ex.id))
        if reason:
            out.append(Item("exercise", ex.id, ex.notebook, ex.title, reason))
    for q in all_questions():
        reason = _question_reason(q, record.question(q.id))
        if reason:
            title = q.prompt if len(q.prompt) <= 60 else q.prompt[:57].rstrip() + "\u2026"
            out.append(Item("question", q.id, q.notebook, title.replace("`", ""), reason))
    for item in out:
        item.cleared = bool(record.review(item.id).get("passed"))
    out.sort(key=lambda it: (order.get(it.notebook, len(order)), it.kind != "exercise"))
    return out if include_cleared else [it for it in out if not it.cleared]


def check_exercise(ex_id: str, source: str, rng=None) -> Feedback:
    """Check the learner's code for an exercise on fresh random cases and record the result, as
    a check of the exercise and, when it was an attempt, as a try in the review."""
    ex = get_exercise(ex_id)
    fb = evaluate_source(ex, source, rng=rng)
    record = Progress.load()
    record.record_check(ex.id, fb.passed, fb.kind)
    if fb.attempted:
        record.record_review(ex.id, "exercise", fb.passed)
    record.save()
    return fb


def answer_question(q_id: str, answer) -> tuple[bool, str]:
    """Grade a question answered again in review and record it (``ValueError`` if unreadable)."""
    q = get_question(q_id)
    ok, message = grade_question(q, answer)
    record = Progress.load()
    record.record_review(q.id, "question", ok)
    record.save()
    return ok, message


__all__ = ["Item", "answer_question", "check_exercise", "items"]
