"""The skip-ahead widget: ``skip_ahead("<notebook stem>")`` near the top of notebooks 01 to 05.

All the notebook's test-out questions at once (exercises/core/skip_ahead.py), one "Submit" button.
Every answer right marks the notebook done (recorded under "test_out" in the progress file).
A wrong answer is marked, but the right one is never shown, so the set stays a fair test; the
learner can work through the notebook and come back. The choices of a multiple-choice question
are shown in a fresh order each time the cell runs.
"""

from __future__ import annotations

import html
import random

import ipywidgets as widgets

from exercises.core import skip_ahead as sets
from exercises.core.checker import _inline, box_style
from exercises.core.registry import NOTEBOOKS


def _box(status: str, body: str, cls: str) -> str:
    return f'<div class="{cls}" style="{box_style(status)}">{body}</div>'


def _plain(text: str) -> str:
    return f'<div style="color: var(--jp-ui-font-color1, inherit);">{text}</div>'


class SkipAhead:
    """The view of one notebook's test-out set."""

    def __init__(self, stem: str, seed=None):
        self.stem = stem
        self.questions = sets.questions_for(stem)
        rng = random.Random(seed)
        self.inputs, self.marks, self.orders = {}, {}, {}
        rows = []
        titles = {s: t for s, t, _m in NOTEBOOKS}
        self.header = widgets.HTML()
        self.header.add_class("course-test-out-header")
        self.result = widgets.HTML()
        self.result.add_class("course-test-out-result")
        self.submit = widgets.Button(description="Submit my answers", layout=widgets.Layout(width="auto"),
                                     disabled=not self.questions)
        self.submit.add_class("course-test-out-submit")
        for n, q in enumerate(self.questions, start=1):
            prompt = widgets.HTML(_plain(f"<b>{n}.</b> {_inline(q.prompt)}"))
            if q.kind == "predict":
                order = list(range(len(q.choices)))
                rng.shuffle(order)
                self.orders[q.id] = order
                field = widgets.RadioButtons(options=[(q.choices[i], i) for i in order], value=None,
                                             layout=widgets.Layout(width="auto"))
            else:
                field = widgets.Text(placeholder="a shape, e.g. 3, 4" if q.kind == "shape"
                                     else "a number, e.g. 0.5", layout=widgets.Layout(width="14em"))
            field.add_class("course-test-out-answer")
            mark = widgets.HTML()
            mark.add_class("course-test-out-mark")
            self.inputs[q.id], self.marks[q.id] = field, mark
            row = widgets.VBox([prompt, field, mark])
            row.add_class("course-test-out-question")
            rows.append(row)
        self.submit.on_click(self._on_submit)
        self.root = widgets.VBox([self.header, *rows, self.submit, self.result])
        self.root.add_class("course-test-out")
        self.title = titles.get(stem, stem)
        self._show_header()

    def _show_header(self) -> None:
        if not self.questions:
            self.header.value = _box("blank", "This notebook has no test-out questions yet: work "
                                     "through it from the top.", "course-test-out-none")
            return
        done = sets.status_label(self.stem)
        lead = (f"<b>Already know this?</b> Answer these {len(self.questions)} questions. If every "
                "answer is right, this notebook counts as done in your progress; its labs and "
                "exercises stay open. Wrong answers are marked but not corrected, so the test stays "
                "fair: read the notebook and come back.")
        if done:
            lead = f"<b>\u2714 You {html.escape(done)}.</b> You can still try the questions."
        self.header.value = _box("pass" if done else "blank", lead, "course-test-out-intro")

    def answers(self) -> dict:
        return {q_id: field.value for q_id, field in self.inputs.items()}

    def _on_submit(self, _button=None) -> dict:
        graded = sets.grade(self.stem, self.answers())
        missing = [q_id for q_id, (ok, _m) in graded.items() if ok is None]
        for q in self.questions:
            ok, message = graded[q.id]
            if ok is None:
                self.marks[q.id].value = _box("blank", html.escape(message), "course-test-out-unread")
            elif ok:
                self.marks[q.id].value = _box("pass", "\u2714 Right.", "course-pass")
            else:
                self.marks[q.id].value = _box("fail", "\u2718 Not right.", "course-fail")
        if missing:
            self.result.value = _box("blank", f"Answer every question first ({len(missing)} still "
                                     "open or unreadable); nothing was recorded.", "course-test-out-incomplete")
            return graded
        right = sum(1 for ok, _m in graded.values() if ok)
        total = len(graded)
        entry = sets.record(self.stem, right, total)
        if right == total:
            notes = "".join(f"<li>{_inline(q.explanation)}</li>" for q in self.questions if q.explanation)
            self.result.value = _box("pass", f"<b>All {total} right: you tested out of "
                                     f"\u201c{html.escape(self.title)}\u201d.</b> It now counts as done."
                                     f'<ul style="margin: 4px 0; padding-left: 20px;">{notes}</ul>',
                                     "course-test-out-passed")
            for field in self.inputs.values():
                field.disabled = True
            self.submit.disabled = True
        else:
            tries = entry.get("attempts", 1)
            self.result.value = _box("fail", f"<b>{right} of {total} right.</b> Work through the "
                                     "notebook; the marked questions are what it covers. "
                                     f"(Attempt {tries}; attempts are kept in your progress.)",
                                     "course-test-out-failed")
        self._show_header()
        return graded


def skip_ahead(stem: str, seed=None) -> widgets.VBox:
    """The test-out widget of a notebook (root class ``course-test-out``)."""
    return SkipAhead(stem, seed).root



__all__ = ["SkipAhead", "skip_ahead"]
