"""What a learner types or returns is shown back as text, never as HTML: the progress view's
export name, a question's typed answer, and the feedback on a function that returns markup."""

import pytest

from engine.core import progress, review
from engine.ui.feedback import feedback_html

MARKUP = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
ESCAPED = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;script&gt;"


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.delenv("COURSE_STRICT", raising=False)
    progress.notices()


def no_markup(html_text):
    assert "<img" not in html_text and "<script" not in html_text, html_text


def test_a_name_holding_html_is_shown_as_text_in_the_progress_view():
    from engine.ui.progress_view import progress_view

    view = progress_view()
    view.name.value = MARKUP
    view.export_button.click()
    no_markup(view.message.value)
    no_markup(view.link.value)
    assert ESCAPED in view.message.value
    assert progress_view().name.value.startswith("<img")  # kept as typed, shown escaped


def test_a_typed_answer_holding_html_is_shown_as_text():
    from engine.ui.questions import ask

    widget = ask("start-number-equal-scores")
    widget.text.value = MARKUP
    widget.check_button.click()
    no_markup(widget.result.value)
    assert "&lt;img" in widget.result.value


def test_a_function_returning_html_gets_feedback_that_shows_it_as_text():
    source = f"def row_mean(x):\n    return {MARKUP!r}\n"
    fb = review.check_exercise("row-mean", source)
    assert not fb.passed
    page = feedback_html(fb)
    no_markup(page)
    assert ESCAPED in page  # what it returned is quoted, escaped
