"""Review of what was missed (start notebook) and the skip-ahead sets of notebooks 01 to 05."""

import json

import numpy as np
import pytest

from engine.core import progress, review, skip_ahead
from engine.core.definition import Question
from engine.core.questions import grade
from engine.core import inventory
from engine.core.registry import (all_questions, get_exercise, notebooks_with_skip_ahead,
                                     register_skip_ahead, skip_ahead_questions)


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.delenv("COURSE_STRICT", raising=False)


def _history():
    progress.record_check("row-mean", False, "values")           # missed once, then passed
    progress.record_check("row-mean", True, "pass")
    progress.record_check("layer-norm-fix", False, "nan")            # never passed, solution opened
    progress.record_reveal("layer-norm-fix")
    progress.record_check("stable-softmax", True, "pass")         # clean pass: not due
    progress.record_answer("start-predict-softmax", 0, False, lock=True)
    progress.record_answer("start-number-equal-scores", "0.2", True)   # right: not due
    progress.record_question_reveal("start-shape-row-mean")


# ---------------------------------------------------------------- review

def test_review_lists_what_was_missed_in_course_order():
    assert review.items() == []
    _history()
    items = review.items()
    assert [it.id for it in items] == ["row-mean", "start-predict-softmax", "start-shape-row-mean",
                                       "layer-norm-fix"]
    reasons = {it.id: it.reason for it in items}
    assert reasons["row-mean"] == "1 check failed before it passed"
    assert reasons["layer-norm-fix"] == "you opened the solution"
    assert "locked-in" in reasons["start-predict-softmax"]
    assert not any(it.cleared for it in items)


def test_review_check_runs_fresh_random_cases_and_records():
    _history()
    ex = get_exercise("layer-norm-fix")
    fb = review.check_exercise("layer-norm-fix", ex.template)
    assert fb.kind == "blank" and progress.load().review("layer-norm-fix") == {}     # a blank is no attempt
    fb = review.check_exercise("layer-norm-fix", ex.variant_source(ex.mistakes[0].code))
    assert not fb.passed and progress.load().review("layer-norm-fix")["tries"] == 1
    seen = set()
    for seed in range(3):
        fb = review.check_exercise("layer-norm-fix", ex.solution_source, rng=np.random.default_rng(seed))
        assert fb.passed
        seen.add(fb.cases)
    entry = progress.load().review("layer-norm-fix")
    assert entry["passed"] and entry["tries"] == 4 and entry["kind"] == "exercise"
    record = progress.exercise_entry("layer-norm-fix")
    assert record["passed"] and record["passed_after_solution"]          # honest: the solution was seen
    cleared = {it.id: it.cleared for it in review.items()}
    assert cleared["layer-norm-fix"] and not cleared["row-mean"]
    assert "layer-norm-fix" not in [it.id for it in review.items(include_cleared=False)]


def test_review_reports_syntax_and_runtime_errors_without_raising():
    fb = review.check_exercise("row-mean", "def row_mean(x)\n    return x\n")
    assert fb.kind == "error" and "line 1" in fb.text()
    fb = review.check_exercise("row-mean", "import nosuchmodule\n")
    assert fb.kind == "error" and "ModuleNotFoundError" in fb.text()


def test_review_questions_are_graded_and_recorded():
    _history()
    with pytest.raises(ValueError):
        review.answer_question("start-shape-row-mean", "four by two")
    assert review.answer_question("start-shape-row-mean", "4, 2")[0] is False
    assert review.answer_question("start-shape-row-mean", "(4, 2, 1)")[0] is True
    assert progress.load().review("start-shape-row-mean")["passed"]
    assert progress.question_entry("start-predict-softmax")["answer"] == 0    # the locked answer stays


def test_review_widget_end_to_end():
    from engine.ui.review import Review

    empty = Review(seed=0)
    assert "Nothing to review" in empty.summary.value and empty.work.layout.display == "none"
    _history()
    view = Review(seed=0)
    assert "4 items to review" in view.summary.value
    assert view.menu.value == "row-mean" and view.code.value == get_exercise("row-mean").template
    view.code.value = "def row_mean(x):\n    return x.sum(axis=0, keepdims=True) / x.shape[-1]\n"
    fb = view._on_check()
    assert not fb.passed and "course-fail" in view.result.value
    view.code.value = get_exercise("row-mean").solution_source
    assert view._on_check().passed and "course-pass" in view.result.value
    assert "3 items to review, 1 cleared" in view.summary.value
    assert view.menu.options[0][0].startswith("\u2714")
    view._on_start_over()
    assert view.code.value == get_exercise("row-mean").template
    view.menu.value = "start-predict-softmax"
    assert view.code.layout.display == "none" and view.choices.layout.display is None
    assert view._on_check() is None and "Pick an answer" in view.result.value
    q = next(q for q in all_questions() if q.id == "start-predict-softmax")
    view.choices.value = (q.answer + 1) % len(q.choices)
    assert view._on_check() is False
    view.choices.value = q.answer
    assert view._on_check() is True and "Right" in view.result.value
    view.menu.value = "start-shape-row-mean"
    view.text.value = "nonsense"
    assert view._on_check() is None and "course-blank" in view.result.value
    view.result.value = ""
    view.text._handle_custom_msg({"event": "submit"}, [])     # Enter in the box checks too
    assert "course-blank" in view.result.value
    view.refresh()
    assert "2 items to review, 2 cleared" in view.summary.value


# ---------------------------------------------------------------- skip ahead

SETS = [nb.stem for nb in inventory.notebooks() if nb.skip_ahead]      # the notebooks that show one


def test_every_notebook_that_shows_a_skip_ahead_set_has_a_sound_one():
    assert notebooks_with_skip_ahead() == SETS and len(SETS) >= 5
    main_ids = {q.id for q in all_questions()}
    for stem in SETS:
        questions = skip_ahead_questions(stem)
        assert 3 <= len(questions) <= 5
        for q in questions:
            assert q.notebook == stem and q.id not in main_ids and q.explanation
            if q.kind == "predict":
                assert len(q.choices) >= 3
            right = q.answer if q.kind != "number" else repr(float(q.answer))
            assert grade(q, right)[0]
    assert skip_ahead_questions("00_start_here") == []


def _right_answers(stem):
    return {q.id: (q.answer if q.kind == "predict" else
                   ", ".join(map(str, q.answer)) if q.kind == "shape" else repr(float(q.answer)))
            for q in skip_ahead_questions(stem)}


def test_grading_records_attempts_and_passing_marks_the_notebook_done():
    stem = "03_norms_and_residuals"
    assert not skip_ahead.skipped_ahead(stem) and skip_ahead.status_label(stem) == ""
    answers = _right_answers(stem)
    first = next(iter(answers))
    wrong = dict(answers, **{first: "7"})
    graded = skip_ahead.grade(stem, wrong)
    assert graded[first][0] is False and graded[first][1] == "Not right."
    assert all(ok for q_id, (ok, _m) in graded.items() if q_id != first)
    skip_ahead.record_attempt(stem, 3, 4)
    assert not skip_ahead.skipped_ahead(stem)
    assert all(ok for ok, _m in skip_ahead.grade(stem, answers).values())
    entry = skip_ahead.record_attempt(stem, 4, 4)
    assert entry["attempts"] == 2 and entry["passed"] and entry["last_score"] == [4, 4]
    assert skip_ahead.skipped_ahead(stem) and skip_ahead.status_label(stem).startswith("skipped ahead on ")
    data = json.loads(progress.progress_path().read_text())
    assert data["skip_ahead"][stem]["passed"] and data["exercises"] == {}     # a separate key


def test_skip_ahead_widget():
    from engine.ui.skip_ahead import SkipAhead

    stem = "01_positional_encoding"
    view = SkipAhead(stem, seed=1)
    assert "course-skip-ahead-intro" in view.header.value
    view._on_submit()
    assert "Answer every question first" in view.result.value and not progress.load().skip_ahead(stem)
    right = _right_answers(stem)
    for q in view.questions:
        view.inputs[q.id].value = right[q.id]
    predict = next(q for q in view.questions if q.kind == "predict")
    view.inputs[predict.id].value = (predict.answer + 1) % len(predict.choices)
    view._on_submit()
    asked = len(view.questions)
    assert f"{asked - 1} of {asked} right" in view.result.value and "\u2718" in view.marks[predict.id].value
    assert predict.choices[predict.answer] not in view.result.value + view.marks[predict.id].value
    view.inputs[predict.id].value = predict.answer
    view._on_submit()
    assert "skipped ahead past" in view.result.value and view.submit.disabled
    assert skip_ahead.skipped_ahead(stem)
    again = SkipAhead(stem)
    assert "You skipped ahead on" in again.header.value


def test_skip_ahead_choices_come_in_a_fresh_order():
    from engine.ui.skip_ahead import SkipAhead

    stem = "04_decoder_block"
    q = next(q for q in skip_ahead_questions(stem) if q.kind == "predict")
    orders = {tuple(v for _l, v in SkipAhead(stem, seed=s).inputs[q.id].options) for s in range(12)}
    assert len(orders) > 1


def test_a_notebook_without_a_set_says_so():
    from engine.ui.skip_ahead import SkipAhead

    view = SkipAhead("00_start_here")
    assert "no skip-ahead questions yet" in view.header.value and view.submit.disabled


def test_register_skip_ahead_refuses_bad_sets():
    q = Question("x-out", "01_positional_encoding", "shape", "?", answer=(1,), explanation="e")
    with pytest.raises(ValueError, match="3 to 5"):
        register_skip_ahead("01_positional_encoding", q)           # too few
    with pytest.raises(ValueError, match="unknown notebook"):
        register_skip_ahead("99_nothing", q, q, q)
    with pytest.raises(ValueError, match="repeated"):
        register_skip_ahead("02_feed_forward", q, q, q)            # repeated and foreign
    assert [q.id for q in skip_ahead_questions("01_positional_encoding")] != ["x-out"]
