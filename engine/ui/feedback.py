"""What a check shows: its feedback as HTML, and the hint and solution buttons under it."""

from __future__ import annotations

import html

import ipywidgets as widgets

from engine.core.checker import Feedback
from engine.core.verdict import LADDER_NOTE
from engine.core.hints import NOT_YET_REVEAL, hints_seen, next_hint, reveal_solution
from engine.core.progress import Progress
from engine.core.registry import get_exercise
from engine.presentation.access import course_root
from engine.presentation.html import box, bullets, code, code_block, headline, inline


def feedback_html(fb: Feedback) -> str:
    """The feedback box (classes ``course-feedback course-<status>``, ``data-exercise``,
    ``data-kind``): headline, details, where the error happened, and any hint."""
    items = [inline(d) for d in fb.details]
    if fb.location:
        items.append("where: " + code(fb.location))
    body = headline(fb.status, fb.headline) + bullets(items)
    if fb.hint:
        body += f'<div class="course-hint course-hint-mistake"><b>Hint:</b> {inline(fb.hint)}</div>'
    if fb.ladder:
        level, total, text = fb.ladder
        body += (f'<div class="course-hint course-hint-ladder"><b>Hint {level} of {total}</b> '
                 f'<span class="course-hint-note">({html.escape(LADDER_NOTE)})</span>: {inline(text)}</div>')
    return box(fb.status, body, f"course-feedback course-{fb.status}",
               data={"exercise": fb.exercise, "kind": fb.kind})


def hint_html(level: int, total: int, text: str) -> str:
    return box("blank", f"<b>Hint {level} of {total}:</b> {inline(text)}", "course-hint")


def solution_html(source: str) -> str:
    return box("pass", "<b>Solution</b> (copy it into the cell above if you like, then run the check):"
               + code_block(source), "course-solution")


def locked_solution_html() -> str:
    return box("blank", html.escape(NOT_YET_REVEAL), "course-solution-locked")


def _hint_label(level: int, total: int) -> str:
    if level >= total:
        return "No more hints"
    return f"Show a hint ({level + 1} of {total})"


def _hints_html(seen: list[str], total: int, in_feedback: int) -> str:
    return "".join(hint_html(i + 1, total, h) for i, h in enumerate(seen) if i + 1 != in_feedback)


def exercise_controls(exercise_id: str, in_feedback: int = 0) -> widgets.VBox:
    """A "Show a hint" button (one more hint per click) and a "Show the solution" button.

    The hints seen so far are listed under them, except hint ``in_feedback``, which the feedback
    box above already shows. The solution opens only after the check has seen an attempt;
    opening it is recorded.
    """
    ex = get_exercise(exercise_id)
    total = len(ex.hints)
    seen = hints_seen(ex, Progress.load())
    hint_button = widgets.Button(description=_hint_label(len(seen), total),
                                 disabled=len(seen) >= total,
                                 tooltip="Each click shows one more hint",
                                 layout=widgets.Layout(width="auto"))
    hint_button.add_class("course-hint-button")
    solution_button = widgets.Button(description="Show the solution",
                                     tooltip="Opens after your first attempt",
                                     layout=widgets.Layout(width="auto"))
    solution_button.add_class("course-solution-button")
    hints_area = widgets.HTML(_hints_html(seen, total, in_feedback))
    hints_area.add_class("course-hints")
    solution_area = widgets.HTML("")
    solution_area.add_class("course-solution-area")

    def on_hint(_button=None) -> None:
        record = Progress.load()
        level, of, _text = next_hint(ex, record)
        record.save()
        hints_area.value = _hints_html(hints_seen(ex, record), of, in_feedback)
        hint_button.description = _hint_label(level, of)
        hint_button.disabled = level >= of

    def on_solution(_button=None) -> None:
        record = Progress.load()
        source = reveal_solution(ex, record)
        if source is None:
            solution_area.value = locked_solution_html()
            return
        record.save()
        solution_area.value = solution_html(source)

    hint_button.on_click(on_hint)
    solution_button.on_click(on_solution)
    row = widgets.HBox([hint_button, solution_button])
    controls = course_root(widgets.VBox([row, hints_area, solution_area]), "course-controls", share=True)
    controls.hint_button, controls.solution_button = hint_button, solution_button
    controls.hints_area, controls.solution_area = hints_area, solution_area
    return controls
