"""Question widgets: predict (multiple choice), number, shape.

``ask("<question id>")`` shows the question defined in the notebook's module of
the course's definitions package. A predict answer is locked in and recorded before the explanation
appears; a reload shows the recorded answer, still locked. A number or shape answer is checked
by its button or by pressing Enter in its box.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from engine.core import progress
from engine.core.definition import Question
from engine.core.questions import grade
from engine.core.registry import get_question
from engine.presentation.access import course_root, on_enter
from engine.presentation.html import box, inline, text_block
from engine.presentation.numbers import exact


def _result(status: str, body_html: str, css_class: str) -> str:
    return box(status, body_html, f"course-question-feedback {css_class}")


def _explanation(q: Question) -> str:
    return f'<div class="course-explanation">{inline(q.explanation)}</div>' if q.explanation else ""


_LABELS = {"predict": "Predict", "number": "Work it out", "shape": "Which shape?"}


def _prompt(q: Question) -> widgets.HTML:
    w = widgets.HTML(text_block(f"<b>{_LABELS[q.kind]}</b> {inline(q.prompt)}"))
    w.add_class("course-question-prompt")
    return w


def _root(q: Question, children) -> widgets.VBox:
    return course_root(widgets.VBox(children), "course-question", f"course-question-{q.kind}", f"course-q-{q.id}",
                       share=True)


def predict_widget(q: Question) -> widgets.VBox:
    radio = widgets.RadioButtons(options=[(c, i) for i, c in enumerate(q.choices)], value=None,
                                 layout=widgets.Layout(width="auto"))
    radio.add_class("course-choices")
    lock = widgets.Button(description="Lock in my answer", disabled=True,
                          layout=widgets.Layout(width="auto"))
    lock.add_class("course-lock-button")
    result = widgets.HTML("")
    result.add_class("course-question-result")

    def show_locked(index: int, correct: bool) -> None:
        radio.value = index
        radio.disabled = True
        lock.disabled = True
        lock.description = "Answer locked in"
        verdict = "Right." if correct else (
            f"Not quite: the answer is \u201c{html.escape(q.choices[int(q.answer)])}\u201d.")
        status = "pass" if correct else "fail"
        result.value = _result(status, f"<b>You chose \u201c{html.escape(q.choices[index])}\u201d.</b> "
                               f"{verdict}{_explanation(q)}", f"course-{status}")

    def on_select(change) -> None:
        if not radio.disabled:
            lock.disabled = change["new"] is None

    def on_lock(_button=None) -> None:
        if radio.value is None or radio.disabled:
            return
        correct, _msg = grade(q, radio.value)
        entry = progress.record_answer(q.id, int(radio.value), correct, lock=True)
        # the first recorded answer is the one that counts
        show_locked(int(entry.get("answer", radio.value)), bool(entry.get("correct", correct)))

    radio.observe(on_select, names="value")
    lock.on_click(on_lock)
    earlier = progress.question_entry(q.id)
    if "answer" in earlier and isinstance(earlier["answer"], int) and 0 <= earlier["answer"] < len(q.choices):
        show_locked(earlier["answer"], bool(earlier.get("correct")))
    root = _root(q, [_prompt(q), radio, lock, result])
    root.radio, root.lock_button, root.result = radio, lock, result
    return root


def _typed_widget(q: Question, placeholder: str) -> widgets.VBox:
    text = widgets.Text(placeholder=placeholder, layout=widgets.Layout(width="14em"))
    text.add_class("course-answer")
    button = widgets.Button(description="Check my answer", layout=widgets.Layout(width="auto"))
    button.add_class("course-answer-button")
    reveal = widgets.Button(description="Show the answer", layout=widgets.Layout(width="auto",
                            display="none"))
    reveal.add_class("course-reveal-button")
    reveal._course_own_layout = True            # shown and hidden as the answers come: not shared
    result = widgets.HTML("")
    result.add_class("course-question-result")

    def answer_text() -> str:
        if q.kind == "shape":
            return str(tuple(q.answer))
        return exact(q.answer)

    def on_check(typed=None) -> None:
        """Judge ``typed`` (Enter's text), or the box's value (the button)."""
        answer = typed if isinstance(typed, str) else text.value
        try:
            correct, message = grade(q, answer)
        except ValueError as exc:
            result.value = _result("blank", html.escape(str(exc)), "course-blank")
            return
        progress.record_answer(q.id, answer.strip(), correct)
        if correct:
            result.value = _result("pass", f"<b>{html.escape(message)}</b> {_explanation(q)}", "course-pass")
            reveal.layout.display = "none"
        else:
            result.value = _result("fail", f"<b>{html.escape(message)}</b> Try again, or show the answer.",
                                   "course-fail")
            reveal.layout.display = None

    def on_reveal(_button=None) -> None:
        progress.record_question_reveal(q.id)
        result.value = _result("blank", f"<b>The answer is {html.escape(answer_text())}.</b> "
                               f"{_explanation(q)}", "course-revealed")

    button.on_click(on_check)
    sent = on_enter(text, on_check)             # Enter in the box checks, like the button
    reveal.on_click(on_reveal)
    earlier = progress.question_entry(q.id)
    if earlier.get("ever_correct"):
        result.value = _result("pass", f"<b>You answered this already.</b> {_explanation(q)}", "course-pass")
    root = _root(q, [_prompt(q), widgets.HBox([text, sent, button, reveal]), result])
    root.text, root.check_button, root.reveal_button, root.result = text, button, reveal, result
    return root


def ask(question_id: str) -> widgets.VBox:
    """The widget for a registered question."""
    q = get_question(question_id)
    if q.kind == "predict":
        return predict_widget(q)
    if q.kind == "number":
        return _typed_widget(q, "a number, e.g. 0.5")
    return _typed_widget(q, "a shape, e.g. 3, 4")
