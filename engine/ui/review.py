"""The review widget of the start notebook: ``review()``.

It lists what the learner missed (engine/core/review.py): exercises whose check failed, whose
solution was opened or that never passed, and questions answered wrongly or revealed. Pick one:
an exercise shows its cell as it ships, blanks and all, in a text box; fill it in again and press
"Check": the code runs on fresh random cases and the result is recorded. A question is asked
again, a multiple-choice one with its choices in a fresh order. Passed items are marked cleared.
"""

from __future__ import annotations

import html
import random

import ipywidgets as widgets

from engine.core import review as logic
from engine.core.registry import get_exercise, get_question, titles
from engine.presentation.access import course_root, on_enter
from engine.presentation.html import box, code, code_textarea_css, inline
from engine.presentation.numbers import plural

from .feedback import feedback_html


class Review:
    """The view: a summary, a menu of items, and the chosen item's cell or question."""

    def __init__(self, seed=None):
        self.rng = random.Random(seed)
        self.titles = titles()
        self.summary = widgets.HTML()
        self.summary.add_class("course-review-summary")
        self.menu = widgets.Dropdown(options=[], description="review", style={"description_width": "initial"},
                                     layout=widgets.Layout(width="100%", max_width="44em"))
        self.menu.add_class("course-review-menu")
        self.refresh_button = widgets.Button(description="Refresh the list", layout=widgets.Layout(width="auto"))
        self.refresh_button.add_class("course-review-refresh")
        self.about = widgets.HTML()
        self.about.add_class("course-review-about")
        self.code = widgets.Textarea(layout=widgets.Layout(width="100%", max_width="44em", height="12em"))
        self.code.add_class("course-review-code")
        self.choices = widgets.RadioButtons(options=[], value=None, layout=widgets.Layout(width="auto"))
        self.choices.add_class("course-review-choices")
        self.text = widgets.Text(layout=widgets.Layout(width="14em"))
        self.text.add_class("course-review-answer")
        self.check_button = widgets.Button(description="Check", layout=widgets.Layout(width="auto"))
        self.check_button.add_class("course-review-check")
        self.start_over = widgets.Button(description="Start over from the blank cell",
                                         layout=widgets.Layout(width="auto"))
        self.start_over.add_class("course-review-start-over")
        self.result = widgets.HTML()
        self.result.add_class("course-review-result")
        sent = on_enter(self.text, self._on_check)     # Enter in the box checks, like the button
        self.work = widgets.VBox([self.about, self.code, self.choices, self.text, sent,
                                  widgets.HBox([self.check_button, self.start_over],
                                               layout=widgets.Layout(flex_flow="row wrap")),
                                  self.result])
        self.menu.observe(self._on_pick, names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.check_button.on_click(self._on_check)
        self.start_over.on_click(self._on_start_over)
        self.root = widgets.VBox([widgets.HTML(code_textarea_css("course-review-code")), self.summary,
                                  widgets.HBox([self.menu, self.refresh_button],
                                               layout=widgets.Layout(flex_flow="row wrap", align_items="center")),
                                  self.work])
        course_root(self.root, "course-review")
        self.items = []
        self.refresh()

    # -------------------------------------------------------------- the list

    def refresh(self) -> None:
        chosen = self.menu.value
        self.items = logic.items()
        due = [it for it in self.items if not it.cleared]
        cleared = len(self.items) - len(due)
        if not self.items:
            text = ("Nothing to review yet. Exercises whose check failed, whose solution you opened, and "
                    "questions you got wrong will appear here.")
            self.summary.value = box("blank", html.escape(text), "course-review-empty")
        else:
            text = _count_text(len(due), cleared)
            self.summary.value = box("pass" if not due else "blank", f"<b>{html.escape(text)}</b> "
                                     "Pick one; an exercise comes back as its blank cell, to fill in "
                                     "again from memory.", "course-review-count")
        self.menu.options = [(it.label, it.id) for it in self.items]
        ids = [it.id for it in self.items]
        first_due = next((it.id for it in self.items if not it.cleared), ids[0] if ids else None)
        self.menu.value = chosen if chosen in ids else first_due
        self.work.layout.display = None if self.items else "none"
        self._show(self.menu.value)

    def _item(self, item_id):
        return next((it for it in self.items if it.id == item_id), None)

    def _on_pick(self, change) -> None:
        self._show(change["new"])

    # -------------------------------------------------------------- one item

    def _show(self, item_id) -> None:
        item = self._item(item_id)
        self.result.value = ""
        if item is None:
            return
        where = f"{item.notebook[:2]} {self.titles.get(item.notebook, item.notebook)}"
        if item.kind == "exercise":
            ex = get_exercise(item.id)
            self.about.value = box("blank", f"<b>{html.escape(ex.title)}</b> ({html.escape(where)}; "
                                   f"{html.escape(item.reason)}). Fill in the blanks {code('____')} "
                                   "below and press <b>Check</b>: your function runs on fresh random "
                                   "cases.", "course-review-exercise")
            self.code.value = ex.template
            self.code.layout.height = f"{1.45 * (ex.template.count(chr(10)) + 2):.1f}em"
            self.code.layout.display = None
            self.start_over.layout.display = None
            self.choices.layout.display = self.text.layout.display = "none"
        else:
            q = get_question(item.id)
            self.about.value = box("blank", f"<b>Question</b> ({html.escape(where)}; {html.escape(item.reason)}): "
                                   f"{inline(q.prompt)}", "course-review-question")
            self.code.layout.display = self.start_over.layout.display = "none"
            if q.kind == "predict":
                order = list(range(len(q.choices)))
                self.rng.shuffle(order)
                self.choices.options = [(q.choices[i], i) for i in order]
                self.choices.value = None
                self.choices.layout.display, self.text.layout.display = None, "none"
            else:
                self.text.value = ""
                self.text.placeholder = "a shape, e.g. 3, 4" if q.kind == "shape" else "a number, e.g. 0.5"
                self.choices.layout.display, self.text.layout.display = "none", None
        self.check_button.description = "Check" if item.kind == "exercise" else "Check my answer"

    def _on_start_over(self, _button=None) -> None:
        item = self._item(self.menu.value)
        if item is not None and item.kind == "exercise":
            self.code.value = get_exercise(item.id).template
            self.result.value = ""

    def _on_check(self, typed=None):
        """Check the item: Enter's text (``typed``), or what the boxes hold (the button)."""
        item = self._item(self.menu.value)
        if item is None:
            return None
        if item.kind == "exercise":
            fb = logic.check_exercise(item.id, self.code.value)
            self.result.value = feedback_html(fb)
            passed = fb.passed
            outcome = fb
        else:
            q = get_question(item.id)
            answer = self.choices.value if q.kind == "predict" else \
                typed if isinstance(typed, str) else self.text.value
            if answer is None:
                self.result.value = box("blank", "Pick an answer first.", "course-blank")
                return None
            try:
                passed, message = logic.answer_question(q.id, answer)
            except ValueError as exc:
                self.result.value = box("blank", html.escape(str(exc)), "course-blank")
                return None
            if passed:
                self.result.value = box("pass", f"<b>Right.</b> {inline(q.explanation)}", "course-pass")
            else:
                self.result.value = box("fail", "<b>Not right yet.</b> Try again, or go back to its "
                                        "notebook.", "course-fail")
            outcome = passed
        if passed:
            kept = self.result.value
            self.refresh_labels()
            self.result.value = kept
        return outcome

    def refresh_labels(self) -> None:
        """Update the summary and the menu's marks without losing the text box."""
        self.items = logic.items()
        due = [it for it in self.items if not it.cleared]
        cleared = len(self.items) - len(due)
        text = _count_text(len(due), cleared)
        self.summary.value = box("pass" if not due else "blank", f"<b>{html.escape(text)}</b>",
                                 "course-review-count")
        value = self.menu.value
        self.menu.unobserve(self._on_pick, names="value")
        try:
            self.menu.options = [(it.label, it.id) for it in self.items]
            self.menu.value = value
        finally:
            self.menu.observe(self._on_pick, names="value")


def _count_text(due: int, cleared: int) -> str:
    """The summary line, e.g. "3 items to review, 1 cleared."."""
    return f"{plural(due, 'item')} to review" + (f", {cleared} cleared" if cleared else "") + "."


def review(seed=None) -> widgets.VBox:
    """The review widget (root class ``course-review``)."""
    return Review(seed).root


__all__ = ["Review", "review"]
