"""Hint and solution buttons shown under an exercise's check."""

from __future__ import annotations

import ipywidgets as widgets

from . import notebook as api
from exercises.core.registry import get_exercise


def _hint_label(level: int, total: int) -> str:
    if level >= total:
        return "No more hints"
    return f"Show a hint ({level + 1} of {total})"


def exercise_controls(exercise_id: str) -> widgets.VBox:
    """A "Show a hint" button (one more hint per click) and a "Show the solution" button.

    The solution opens only after the check has seen an attempt; opening it is recorded.
    """
    ex = get_exercise(exercise_id)
    total = len(ex.hints)
    seen = api.hints_seen(ex)
    hint_button = widgets.Button(description=_hint_label(len(seen), total),
                                 disabled=len(seen) >= total,
                                 tooltip="Each click shows one more hint",
                                 layout=widgets.Layout(width="auto"))
    hint_button.add_class("course-hint-button")
    solution_button = widgets.Button(description="Show the solution",
                                     tooltip="Opens after your first attempt",
                                     layout=widgets.Layout(width="auto"))
    solution_button.add_class("course-solution-button")
    hints_area = widgets.HTML("".join(api.hint_html(i + 1, total, h) for i, h in enumerate(seen)))
    hints_area.add_class("course-hints")
    solution_area = widgets.HTML("")
    solution_area.add_class("course-solution-area")

    def on_hint(_button=None) -> None:
        level, of, text = api.next_hint(ex)
        shown = api.hints_seen(ex)
        hints_area.value = "".join(api.hint_html(i + 1, of, h) for i, h in enumerate(shown))
        hint_button.description = _hint_label(level, of)
        hint_button.disabled = level >= of

    def on_solution(_button=None) -> None:
        source = api.reveal_solution(ex)
        if source is None:
            solution_area.value = (f'<div class="course-solution-locked" '
                                   f'style="{api.box_style("blank")}">{api.NOT_YET_REVEAL}</div>')
            return
        solution_area.value = api.solution_html(source)

    hint_button.on_click(on_hint)
    solution_button.on_click(on_solution)
    row = widgets.HBox([hint_button, solution_button])
    box = widgets.VBox([row, hints_area, solution_area])
    box.add_class("course-controls")
    box.hint_button, box.solution_button = hint_button, solution_button
    box.hints_area, box.solution_area = hints_area, solution_area
    return box
