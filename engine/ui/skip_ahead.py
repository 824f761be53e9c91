"""The skip-ahead widget: ``skip_ahead("<notebook stem>")`` near the top of notebooks 01 to 05.

All the notebook's skip-ahead questions at once (:mod:`engine.core.skip_ahead`), one "Submit"
button.
Every answer right marks the notebook done (recorded under "skip_ahead" in the progress file).
A wrong answer is marked, but the right one is never shown, so the set stays a fair test; the
learner can work through the notebook and come back. The choices of a multiple-choice question
are shown in a fresh order each time the cell runs.
"""

from __future__ import annotations

import html
import random

import ipywidgets as widgets

from engine.core import skip_ahead as sets
from engine.core.registry import skip_ahead_questions, titles
from engine.presentation.access import course_root
from engine.presentation.html import box, bullets, inline, text_block


class SkipAhead:
    """The view of one notebook's skip-ahead set."""

    def __init__(self, stem: str, seed=None):
        self.stem = stem
        self.questions = skip_ahead_questions(stem)
        rng = random.Random(seed)
        self.inputs, self.marks, self.orders = {}, {}, {}
        rows = []
        self.header = widgets.HTML()
        self.header.add_class("course-skip-ahead-header")
        self.result = widgets.HTML()
        self.result.add_class("course-skip-ahead-result")
        self.submit = widgets.Button(description="Submit my answers", layout=widgets.Layout(width="auto"),
                                     disabled=not self.questions)
        self.submit.add_class("course-skip-ahead-submit")
        for n, q in enumerate(self.questions, start=1):
            prompt = widgets.HTML(text_block(f"<b>{n}.</b> {inline(q.prompt)}"))
            if q.kind == "predict":
                order = list(range(len(q.choices)))
                rng.shuffle(order)
                self.orders[q.id] = order
                field = widgets.RadioButtons(options=[(q.choices[i], i) for i in order], value=None,
                                             layout=widgets.Layout(width="auto"))
            else:
                field = widgets.Text(placeholder="a shape, e.g. 3, 4" if q.kind == "shape"
                                     else "a number, e.g. 0.5", layout=widgets.Layout(width="14em"))
            field.add_class("course-skip-ahead-answer")
            mark = widgets.HTML()
            mark.add_class("course-skip-ahead-mark")
            self.inputs[q.id], self.marks[q.id] = field, mark
            row = widgets.VBox([prompt, field, mark])
            row.add_class("course-skip-ahead-question")
            rows.append(row)
        self.submit.on_click(self._on_submit)
        self.root = course_root(widgets.VBox([self.header, *rows, self.submit, self.result]), "course-skip-ahead")
        self.title = titles().get(stem, stem)
        self._show_header()

    def _show_header(self) -> None:
        if not self.questions:
            self.header.value = box("blank", "This notebook has no skip-ahead questions yet: work "
                                    "through it from the top.", "course-skip-ahead-none")
            return
        done = sets.status_label(self.stem)
        lead = (f"<b>Already know this?</b> Answer these {len(self.questions)} questions. If every "
                "answer is right, this notebook counts as done in your progress; its labs and "
                "exercises stay open. Wrong answers are marked but not corrected, so the test stays "
                "fair: read the notebook and come back.")
        if done:
            lead = f"<b>\u2714 You {html.escape(done)}.</b> You can still try the questions."
        self.header.value = box("pass" if done else "blank", lead, "course-skip-ahead-intro")

    def answers(self) -> dict:
        return {q_id: field.value for q_id, field in self.inputs.items()}

    def _on_submit(self, _button=None) -> dict:
        graded = sets.grade(self.stem, self.answers())
        missing = [q_id for q_id, (ok, _m) in graded.items() if ok is None]
        for q in self.questions:
            ok, message = graded[q.id]
            if ok is None:
                self.marks[q.id].value = box("blank", html.escape(message), "course-skip-ahead-unread")
            elif ok:
                self.marks[q.id].value = box("pass", "\u2714 Right.", "course-pass")
            else:
                self.marks[q.id].value = box("fail", "\u2718 Not right.", "course-fail")
        if missing:
            self.result.value = box("blank", f"Answer every question first ({len(missing)} still "
                                    "open or unreadable); nothing was recorded.", "course-skip-ahead-incomplete")
            return graded
        right = sum(1 for ok, _m in graded.values() if ok)
        total = len(graded)
        entry = sets.record_attempt(self.stem, right, total)
        if right == total:
            notes = bullets(inline(q.explanation) for q in self.questions if q.explanation)
            self.result.value = box("pass", f"<b>All {total} right: you skipped ahead past "
                                    f"\u201c{html.escape(self.title)}\u201d.</b> It now counts as done."
                                    + notes, "course-skip-ahead-passed")
            for field in self.inputs.values():
                field.disabled = True
            self.submit.disabled = True
        else:
            tries = entry.get("attempts", 1)
            self.result.value = box("fail", f"<b>{right} of {total} right.</b> Work through the "
                                    "notebook; the marked questions are what it covers. "
                                    f"(Attempt {tries}; attempts are kept in your progress.)",
                                    "course-skip-ahead-failed")
        self._show_header()
        return graded


def skip_ahead(stem: str, seed=None) -> widgets.VBox:
    """The skip-ahead widget of a notebook (root class ``course-skip-ahead``)."""
    return SkipAhead(stem, seed).root


__all__ = ["SkipAhead", "skip_ahead"]
