"""Questions (parsing, grading, widgets), the feedback controls, the start lab and the figure helper."""

import numpy as np
import pytest

from engine.core import progress
from engine.core.questions import grade, parse_number, parse_shape
from engine.core.definition import Question
from engine.core.registry import all_questions, get_question
from engine.presentation.numbers import exact


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@pytest.mark.parametrize("text,shape", [
    ("3,4", (3, 4)), ("(3, 4)", (3, 4)), ("3 4", (3, 4)), ("[3, 4]", (3, 4)), (" 3x4 ", (3, 4)),
    ("(5,)", (5,)), ("5", (5,)), ("4, 2, 1", (4, 2, 1)), ("()", ()),
])
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["", "three", "3.5, 4", "3,,4", "-3", "3;4"])
def test_parse_shape_rejects(text):
    with pytest.raises(ValueError):
        parse_shape(text)


@pytest.mark.parametrize("text,value", [
    ("0.2", 0.2), ("1e-5", 1e-5), ("1,024", 1024), ("2 359 296", 2359296), ("20%", 0.2),
    ("1/5", 0.2), ("\u22123", -3.0), (" .5 ", 0.5),
])
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "inf", "1/0"])
def test_parse_number_rejects(text):
    with pytest.raises(ValueError):
        parse_number(text)


def test_grading():
    q = get_question("start-number-equal-scores")
    assert grade(q, "0.2")[0] and grade(q, "0.2005")[0] and grade(q, "1/5")[0]
    assert not grade(q, "0.25")[0]
    s = get_question("start-shape-row-mean")
    assert grade(s, "4, 2, 1")[0] and grade(s, "(4,2,1)")[0] and grade(s, "4 2 1")[0]
    ok, msg = grade(s, "4, 2")
    assert not ok and "axes" in msg
    p = get_question("start-predict-softmax")
    assert grade(p, p.answer)[0] and not grade(p, (p.answer + 1) % len(p.choices))[0]


def test_question_definitions_are_sound():
    for q in all_questions():
        assert q.explanation
        if q.kind == "predict":
            assert len(q.choices) >= 3


def test_bad_question_definition_is_refused():
    with pytest.raises(ValueError):
        Question("x", "00_start_here", "predict", "?", answer=5, choices=["a", "b"])


# ---------------------------------------------------------------- widgets

def test_predict_locks_and_records_before_explaining():
    from engine.ui.questions import ask

    q = get_question("start-predict-softmax")
    w = ask(q.id)
    assert "course-question-predict" in w._dom_classes
    assert w.lock_button.disabled and w.result.value == ""
    wrong = (q.answer + 1) % len(q.choices)
    w.radio.value = wrong
    assert not w.lock_button.disabled
    w.lock_button.click()
    entry = progress.question_entry(q.id)
    assert entry["answer"] == wrong and entry["correct"] is False
    assert w.radio.disabled and w.lock_button.disabled
    assert "Not quite" in w.result.value and q.explanation.split()[0] in w.result.value
    # a reload shows the locked answer; a second lock cannot change it
    again = ask(q.id)
    assert again.radio.disabled and again.radio.value == wrong
    progress.record_answer(q.id, q.answer, True, lock=True)
    assert progress.question_entry(q.id)["answer"] == wrong


def test_number_widget_with_tolerance_and_reveal():
    from engine.ui.questions import ask

    w = ask("start-number-equal-scores")
    w.text.value = "nonsense"
    w.check_button.click()
    assert "not a number" in w.result.value and "tries" not in progress.question_entry(
        "start-number-equal-scores")
    w.text.value = "0.3"
    w.check_button.click()
    assert "course-fail" in w.result.value and w.reveal_button.layout.display is None
    w.text.value = "0.2001"
    w.check_button.click()
    assert "course-pass" in w.result.value
    assert progress.question_entry("start-number-equal-scores")["tries"] == 2
    w.reveal_button.click()
    assert "0.2" in w.result.value and progress.question_entry("start-number-equal-scores")["revealed"]


def test_shape_widget():
    from engine.ui.questions import ask

    w = ask("start-shape-row-mean")
    assert "course-question-shape" in w._dom_classes
    w.text.value = "(4, 2, 1)"
    w.check_button.click()
    assert "course-pass" in w.result.value


def test_enter_in_a_number_or_shape_box_checks_the_answer():
    """The browser sends {"event": "submit"} when Enter is pressed in a text box."""
    from engine.ui.questions import ask

    for question_id, wrong, right in (("start-number-equal-scores", "0.3", "0.2"),
                                      ("start-shape-row-mean", "(4, 2)", "(4, 2, 1)")):
        w = ask(question_id)
        w.text.value = wrong
        w.text._handle_custom_msg({"event": "submit"}, [])
        assert "course-fail" in w.result.value, question_id
        w.text.value = right
        w.text._handle_custom_msg({"event": "submit"}, [])
        assert "course-pass" in w.result.value, question_id
        w.text._handle_custom_msg({"event": "something else"}, [])
        assert progress.question_entry(question_id)["tries"] == 2, question_id


def test_exercise_controls_hint_ladder_and_solution_lock():
    from engine.ui.feedback import exercise_controls

    controls = exercise_controls("row-mean")
    assert "course-controls" in controls._dom_classes
    controls.solution_button.click()
    assert "course-solution-locked" in controls.solution_area.value
    assert not progress.exercise_entry("row-mean").get("solution_revealed")
    controls.hint_button.click()
    assert "Hint 1 of 3" in controls.hints_area.value
    controls.hint_button.click()
    assert "Hint 2 of 3" in controls.hints_area.value and "Hint 1 of 3" in controls.hints_area.value
    controls.hint_button.click()
    assert controls.hint_button.disabled
    progress.record_check("row-mean", False, "values")
    controls.solution_button.click()
    assert "course-solution" in controls.solution_area.value
    assert "keepdims=True" in controls.solution_area.value
    assert progress.exercise_entry("row-mean")["solution_revealed"]
    # a new view (page reload) shows the hints already seen
    assert "Hint 3 of 3" in exercise_controls("row-mean").hints_area.value


def test_a_hint_the_feedback_shows_is_not_listed_again_under_it():
    from engine.ui.feedback import exercise_controls
    from engine.notebook import check
    from engine.core.cell import run_cell
    from engine.core.registry import get_exercise

    ex = get_exercise("row-mean")
    wrong = run_cell(ex.variant_source({0: "x.sum(axis=-1, keepdims=True).reshape(1, -1) + 1"}), ex.context)
    shown = [check("row-mean", wrong).feedback for _ in range(len(ex.hints) + 2)]
    assert [fb.ladder[0] if fb.ladder else None for fb in shown] == [1, 2, 3, None, None]
    controls = exercise_controls("row-mean", in_feedback=2)
    assert "Hint 1 of 3" in controls.hints_area.value and "Hint 3 of 3" in controls.hints_area.value
    assert "Hint 2 of 3" not in controls.hints_area.value
    crash = run_cell("def row_mean(x):\n    return np.rsqrt(x)\n", ex.context)
    progress.reset()
    fb = check("row-mean", crash).feedback
    assert fb.kind == "error" and fb.ladder is None and progress.exercise_entry("row-mean").get("hints", 0) == 0
    assert fb.details[-1] == 'Stuck on the method? hint("row-mean") shows one hint.'


# ---------------------------------------------------------------- start lab and figure helper

def test_temperature_model_is_sensible_at_every_setting():
    from labs.start.temperature import T_MAX, T_MIN, temperature_model

    for t in [T_MIN, 0.3, 1.0, 2.5, T_MAX, 0.0, -1.0, float("nan"), 1e6]:
        m = temperature_model(t)
        assert np.isfinite(m.weights).all() and m.weights.sum() == pytest.approx(1.0)
        assert m.verdict and "nan" not in m.verdict.lower()
    assert "hard choice" in temperature_model(T_MIN).verdict
    assert "flattened towards an even split" in temperature_model(1e6).verdict
    assert "leads with 56%" in temperature_model(1.0).verdict


def test_each_temperature_verdict_shows_somewhere_on_the_slider():
    from labs.start.temperature import T_MAX, T_MIN, temperature_model

    steps = np.arange(T_MIN, T_MAX + 1e-9, 0.05)                  # the slider's values
    verdicts = [temperature_model(t).verdict for t in steps]
    for kind in ("hard choice", "leads with", "flattened towards an even split"):
        assert any(kind in v for v in verdicts), kind
    assert "flattened towards an even split" in temperature_model(T_MAX).verdict


def test_temperature_lab_redraws_in_place():
    from labs.start.temperature import TemperatureLab

    lab = TemperatureLab()
    assert "course-lab" in lab.root._dom_classes
    assert lab.slider.description == "temperature"
    fig, bars, renders, image = lab.view.figure, lab.bars.artist, lab.view.renders, lab.view.image
    first_png = image.value
    lab.slider.value = 0.3
    assert lab.view.figure is fig and lab.bars.artist is bars and lab.view.image is image
    assert lab.view.renders == renders + 1 and image.value != first_png
    assert list(lab.bars.heights) == pytest.approx(list(lab.model.weights))
    assert "hard choice" in lab.verdict.value
    ax = lab.ax
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_figure_view_puts_the_image_in_an_output():
    from matplotlib.figure import Figure

    from engine.kit.figure_view import FigureView

    fig = Figure()
    line, = fig.add_subplot().plot([0, 1], [0, 1])
    view = FigureView(fig)
    data = view.widget.outputs[0]["data"]["application/vnd.jupyter.widget-view+json"]
    assert data["model_id"] == view.image.model_id
    assert view.png[:4] == b"\x89PNG" and bytes(view.image.value).startswith(b"data:image/png;base64,")
    line.set_ydata([1, 0])
    view.redraw()
    assert view.renders == 2


def test_lib_and_the_exercise_core_do_not_import_ipywidgets():
    import subprocess
    import sys

    code = ("import sys, lib.block, lib.model, engine.core.checker, exercises.definitions.start; "
            "print('ipywidgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_transposed_shape_answer_is_told_its_sizes_are_swapped():
    """K16: (8, 10) for a (10, 8) answer is named as swapped, not as wrong sizes."""
    q = get_question("pos-shape-ten-tokens")
    assert tuple(q.answer) == (10, 8)
    assert grade(q, "8, 10") == (False, "(8, 10) has the right sizes, but swapped: which axis comes first?")
    assert grade(q, "10, 10") == (False, "(10, 10) has the right number of axes, but not the right sizes.")
    s = get_question("start-shape-row-mean")               # (4, 2, 1): three axes in another order
    assert grade(s, "1, 2, 4") == (False, "(1, 2, 4) has the right sizes, but in the wrong order: "
                                          "which axis comes where?")


@pytest.mark.parametrize("question_id,typed,said", [
    ("norms-number-length", "8", "8 is not it yet: too large, by a factor between 2 and 10."),
    ("decoder-number-norms", "6", "6 is not it yet: close, within 25 % of the answer, but too small."),
    ("trained-number-uniform", "4.01", "4.01 is not it yet: too small, by more than a factor of 10."),
    ("decoder-number-kv-cache", "262,144", "262,144 is not it yet: too small, but within a factor of 2."),
    ("decoder-number-kv-cache", "525,000", "525,000 is not it yet: close, within 1 % of the answer, but too large."),
    ("decoder-number-norms", "-7", "-7 is not it yet: its sign is not the answer's."),
    ("decoder-number-norms", "0", "0 is not it yet."),
])
def test_a_wrong_number_is_told_how_far_off_it_is_without_the_answer(question_id, typed, said):
    """K20: the walk's near misses (the sum of squares for the length, the final norm forgotten,
    the loss for the perplexity, the keys alone for the cache) get the direction and a band of
    the gap, never the answer itself."""
    q = get_question(question_id)
    ok, message = grade(q, typed)
    assert not ok and message == said
    assert exact(q.answer) not in message.replace(typed, "")


def test_a_number_with_a_unit_is_asked_for_without_it():
    """C8: "512 KiB" is refused with the reason (a unit) and what to type instead."""
    q = get_question("decoder-number-kv-cache")
    with pytest.raises(ValueError, match="type the number alone, without a unit"):
        grade(q, "512 KiB")


def test_a_mistyped_exercise_id_is_told_in_plain_words_with_the_nearest_ids(capsys):
    """hint, solution and check with an id that names no exercise say so and name the nearest
    ids (or where to copy the id from), record nothing and raise nothing."""
    from engine.notebook import check, hint, solution

    before = progress.Progress.load().data
    hint("row-maen")
    assert "There is no exercise called “row-maen” in this course. Did you mean “row-mean”?" in capsys.readouterr().out
    solution("no-such-exercise")
    assert "The check cell under the exercise names it" in capsys.readouterr().out
    assert check("rowmean", {}) is None and "Did you mean “row-mean”?" in capsys.readouterr().out
    hint(["row-mean"])
    assert "There is no exercise called" in capsys.readouterr().out
    assert progress.Progress.load().data == before
