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
both as a check of the exercise and under ``"review"`` in the progress file.

Questions are asked again, a predict question with its choices in a fresh order.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

from . import progress
from .checker import Feedback, error_location, evaluate
from .questions import grade as grade_question
from .registry import NOTEBOOKS, all_exercises, all_questions, get_exercise, get_question

KEY = "review"


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
        return f"{misses} check{'s' if misses > 1 else ''} failed before it passed"
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


def review_entry(item_id: str, data: dict | None = None) -> dict:
    data = progress.load() if data is None else data
    section = data.get(KEY)
    value = section.get(item_id) if isinstance(section, dict) else None
    return dict(value) if isinstance(value, dict) else {}


def items(data: dict | None = None, include_cleared: bool = True) -> list[Item]:
    """Everything missed, in course order: exercises of a notebook, then its questions."""
    data = progress.load() if data is None else data
    order = {stem: i for i, (stem, _t, _m) in enumerate(NOTEBOOKS)}
    out = []
    for ex in all_exercises():
        reason = _exercise_reason(data["exercises"].get(ex.id, {}))
        if reason:
            out.append(Item("exercise", ex.id, ex.notebook, ex.title, reason))
    for q in all_questions():
        reason = _question_reason(q, data["questions"].get(q.id, {}))
        if reason:
            title = q.prompt if len(q.prompt) <= 60 else q.prompt[:57].rstrip() + "\u2026"
            out.append(Item("question", q.id, q.notebook, title.replace("`", ""), reason))
    for item in out:
        item.cleared = bool(review_entry(item.id, data).get("passed"))
    out.sort(key=lambda it: (order.get(it.notebook, len(order)), it.kind != "exercise"))
    return out if include_cleared else [it for it in out if not it.cleared]


def _record(item_id: str, kind: str, passed: bool) -> dict:
    data = progress.load()
    section = data.setdefault(KEY, {})
    entry = section.setdefault(item_id, {"kind": kind})
    entry["tries"] = int(entry.get("tries", 0)) + 1
    entry["last"] = "pass" if passed else "fail"
    entry["last_at"] = progress._now()
    if passed and not entry.get("passed"):
        entry["passed"] = True
        entry["passed_at"] = progress._now()
    progress.save(data)
    return dict(entry)


_runs = [0]


def run_cell(source: str, context: str) -> dict | Feedback:
    """Run the learner's code in a fresh namespace, as a cell: the namespace, or the feedback
    when the code cannot be read or fails while it runs."""
    ns: dict = {"__name__": "__review__"}
    exec(compile(context, "<setup>", "exec"), ns)
    _runs[0] += 1
    filename = f"<review cell #{_runs[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        return Feedback("", "error", [f"Python cannot read line {exc.lineno}: {exc.msg}."])
    try:
        exec(code, ns)
    except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
        fb = Feedback("", "error", [f"Running your code: {type(exc).__name__}: {exc}"])
        fb.location = error_location(exc)
        return fb
    return ns


def check_exercise(ex_id: str, source: str, rng=None) -> Feedback:
    """Check the learner's code for an exercise on fresh random cases and record the result."""
    ex = get_exercise(ex_id)
    ns = run_cell(source, ex.context)
    if isinstance(ns, Feedback):
        fb = ns
        fb.exercise = ex.id
    else:
        fb = evaluate(ex, ns, rng=rng)
    progress.record_check(ex.id, fb.passed, fb.kind)
    if fb.attempted:
        _record(ex.id, "exercise", fb.passed)
    return fb


def answer_question(q_id: str, answer) -> tuple[bool, str]:
    """Grade a question answered again in review and record it (``ValueError`` if unreadable)."""
    q = get_question(q_id)
    ok, message = grade_question(q, answer)
    _record(q.id, "question", ok)
    return ok, message


__all__ = ["Item", "KEY", "answer_question", "check_exercise", "items", "review_entry", "run_cell"]
