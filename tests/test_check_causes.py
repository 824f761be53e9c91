"""Mistakes the checks name by their cause, and feedback that says what the notebook says.

Each test runs a learner's answer through the real check (no kernel: ``check`` with the
answer's namespace) and reads the feedback the learner would read.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import CONTENT
from engine.core.checker import STOP_A_RUNAWAY, evaluate_source
from engine.core.diagnose import close_name
from engine.core.registry import get_exercise
from exercise_answers import checked_in_notebook as _checked


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@pytest.mark.parametrize("fills, cause", [
    ({0: "scores.max(axis=-1)", 1: "e.sum(axis=-1)"}, "keepdims=True"),
    ({0: "np.max(scores, axis=-1)", 1: "np.sum(e, axis=-1)"}, "keepdims=True"),
    ({0: "scores.max(axis=0, keepdims=True)", 1: "e.sum(axis=0, keepdims=True)"}, "axis 0"),
])
def test_a_softmax_without_keepdims_or_along_the_wrong_axis_is_told_why(fills, cause):
    fb = _checked("stable-softmax", fills)
    assert not fb.passed and fb.hint and cause in fb.hint, fb.text()


def test_np_max_for_np_maximum_is_told_apart_from_a_wrong_value():
    for fills in ({0: "np.max(0, x @ W_up + b_up)"}, {0: "np.max(x @ W_up + b_up, 0)"}):
        fb = _checked("ffn-sublayer", fills)
        assert not fb.passed and fb.hint and "np.maximum" in fb.hint and "axis" in fb.hint, fb.text()


def test_eps_added_after_the_division_is_named_as_the_order_of_operations():
    fb = _checked("layer-norm", {0: "np.sqrt(var) + eps"})
    # the first failing case may be any token (a wrong number) or an all-equal one (NaN): the hint names the cause
    assert not fb.passed and fb.kind in ("values", "nan") and fb.hint and "`/` is worked out before `+`" in fb.hint, fb.text()


def test_a_misspelt_name_is_named_with_the_close_one_never_a_generic_hint():
    source = ("def row_mean(x):\n    right = x.sum(axis=-1, keepdims=True)\n"
              "    return rigth / x.shape[-1]\n")
    fb = _checked("row-mean", source)
    text = fb.text()
    assert fb.kind == "error" and "`rigth` is not defined: did you mean `right`?" in text, text
    assert "Stuck on the method?" not in text
    # the learner's namespace counts too, and a name close to nothing is not guessed at
    assert close_name("softmx", ["softmax", "row_mean"]) == "softmax"
    assert close_name("scale", ["callable", "sorted", "x"]) is None


LOOPED = '''def position_table(length, d_model):
    table = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            table[pos, i] = np.sin(angle)
            table[pos, i + 1] = np.cos(angle)
    return table
'''


def test_right_numbers_from_a_loop_do_not_pass_the_table_without_a_loop():
    """The exercise asks for the table without a loop: a double loop gives the right numbers,
    and the check says so, says the condition is not met, points at the loop and does not count
    it as passed (the skill the exercise names is not shown)."""
    fb = evaluate_source("position-table", LOOPED)
    text = fb.text()
    assert not fb.passed and fb.kind == "condition", text
    assert "right numbers" in text and "without a loop" in text
    assert fb.location == "line 3: for pos in range(length):"
    # the same numbers without a loop pass
    assert evaluate_source("position-table", get_exercise("position-table").solution_source).passed


def _start_text() -> str:
    cells = json.loads((CONTENT / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    return re.sub(r"\s+", " ", " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))


def test_the_hint_ladder_climbs_by_itself_exactly_when_notebook_00_says_it_does():
    said = _start_text()
    assert ("When your code runs but gives wrong numbers and the check cannot name the cause, it "
            "shows the next hint by itself; after an error, the feedback points at the line, and "
            "the next hint waits for your click.") in said
    assert ("A check that recognises your mistake (a wrong axis, a forgotten `keepdims`, a misspelt "
            "name) names it.") in said
    unexplained = _checked("row-mean", {0: "x.sum(axis=-1, keepdims=True).reshape(1, -1) + 1"})
    assert unexplained.kind in ("values", "shape") and not unexplained.hint and unexplained.ladder[0] == 1
    error = _checked("row-mean", {0: "x.sum(axis=-1, keepdims=True) @ 3"})
    assert error.kind == "error" and error.ladder is None and error.location
    for named in ({0: "x.sum(axis=0, keepdims=True)"}, {0: "x.sum(axis=-1)"}):
        fb = _checked("row-mean", named)
        assert fb.hint and fb.ladder is None, fb.text()
    misspelt = _checked("row-mean", {0: "x.summ(axis=-1, keepdims=True)"})
    assert misspelt.kind == "error" and misspelt.ladder is None


def test_a_hint_shown_with_an_unnamed_miss_says_it_is_the_next_on_the_method_not_a_reading():
    """The hint the ladder shows by itself with a miss the check cannot name is marked as the
    exercise's next hint on the method, in the text and in the HTML, so it does not read like a
    diagnosis of the code."""
    from engine.core.verdict import LADDER_NOTE
    from engine.ui.feedback import feedback_html
    fb = _checked("row-mean", {0: "x.sum(axis=-1, keepdims=True).reshape(1, -1) + 1"})
    assert fb.ladder and not fb.hint, fb.text()
    assert f"Hint 1 of 3 ({LADDER_NOTE}): " in fb.text()
    assert "course-hint-ladder" in feedback_html(fb) and "not a reading of your code" in feedback_html(fb)


def test_how_to_stop_a_runaway_cell_is_said_with_the_runaway_feedback_and_in_00(monkeypatch):
    from engine.core import budget
    monkeypatch.setattr(budget, "CALL_SECONDS", 0.2)
    fb = evaluate_source("row-mean", "def row_mean(x):\n    while True:\n        pass\n")
    assert fb.kind == "timeout" and STOP_A_RUNAWAY in fb.hint, fb.text()
    said = _start_text()
    for words in ("prompt stays at `[*]`", "Kernel → Restart Kernel", "Kernel → Interrupt Kernel"):
        assert words in said and words.replace("`", "") in STOP_A_RUNAWAY


@pytest.mark.parametrize("ex_id", ["rope-rotation", "top2-routing", "moe-counts", "leave-one-out"])
def test_feedback_calls_an_arrays_numbers_entries_and_agrees_in_number(ex_id):
    """The k-th number of a result is its entry k ("position k" is kept for a token's place):
    the feedback on every known mistake of the exercises whose results are rows of numbers
    says "entry", and its numbers agree with their nouns (engine.presentation.numbers.plural)."""
    import wording

    ex = get_exercise(ex_id)
    entries = 0
    for mistake in ex.mistakes:
        fb = evaluate_source(ex, ex.variant_source(mistake.code))
        said = " ".join(fb.details)
        assert not wording.positions_named(said), said
        assert not wording.disagreements(fb.text()), fb.text()
        entries += bool(re.search(r"\bentry \d+\b", said))
    assert entries, f"{ex_id}: no feedback quoted an entry"
