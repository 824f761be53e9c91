"""Readings of a wrong answer taken from the code itself and from the error it raised: each test
runs a learner's answer through the real check and reads the feedback the learner would read."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.diagnose import Probe, explain
from engine.core.diagnose.expressions import variants
from engine.core.registry import get_exercise
from exercise_answers import checked_in_notebook as _checked


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


def test_a_table_one_row_short_is_named_as_an_index_one_past_the_end():
    fb = _checked("rope-rotation", {0: "sinusoidal(position, len(x), base)[position]"})
    assert fb.kind == "error" and "one past the end" in fb.hint and "needs 3" in fb.hint, fb.text()
    assert "Stuck on the method?" not in fb.text()


def test_a_table_too_small_for_a_hidden_position_calls_no_step_after_the_raise_right():
    fb = _checked("rope-rotation", {0: "sinusoidal(len(x), len(x), base)[position]"})
    text = fb.text()
    assert fb.kind == "error" and "made smaller than that index needs" in fb.hint, text
    assert "`row` never got a value" in text and "line that turns" not in text, text


def test_sorted_values_used_as_positions_are_named_by_the_step_and_the_error():
    fb = _checked("top2-routing", {0: "np.sort(scores)[-2:]"})
    text = fb.text()
    assert fb.kind == "error" and "`sort` where `argsort` was wanted" in fb.hint, text
    assert "must hold positions" in text, text


def test_a_matrix_product_of_mismatched_sizes_names_the_inner_sizes_beside_the_step():
    """`W_up.T @ W_down` raises on the example and runs on a square case: the step is read there."""
    fb = _checked("one-matrix", {0: "W_up.T @ W_down"})
    text = fb.text()
    assert fb.kind == "error" and "`a @ b` pairs each row of `a` with each column of `b`" in text, text
    assert "`W_up` transposed" in fb.hint, text


def test_pythons_own_sum_on_an_array_is_said_to_add_the_rows():
    fb = _checked("row-mean", "def row_mean(x):\n    return sum(x) / x.shape[-1]\n")
    assert not fb.passed and "Python's own `sum`" in fb.hint and "adds its rows together" in fb.hint, fb.text()


def test_an_index_for_a_slice_is_not_read_as_a_sum_over_every_axis():
    fb = _checked("top2-routing", "def top2_weights(scores, over='kept'):\n"
                                  "    best = np.argsort(scores)[-2]\n"
                                  "    e = np.exp(scores - scores.max())\n"
                                  "    weights = np.zeros_like(scores)\n"
                                  "    weights[best] = e[best] / (e[best].sum() if over == 'kept' else e.sum())\n"
                                  "    return weights\n")
    assert not fb.passed and "[-2:]" in fb.hint and "every axis" not in fb.hint, fb.text()


@pytest.mark.parametrize("step, words", [(1, "last row moved to the front"), (-1, "first row moved to the end")])
def test_rows_rolled_round_are_told_apart_from_a_shifted_index(step, words):
    ex = get_exercise("one-matrix")
    probes = [Probe(c, np.roll(ex.reference(*c.args), step, axis=0), ex.reference(*c.args)) for c in ex.fixed_cases()]
    said = explain(ex, probes, lambda a, b, case: np.allclose(a, b))
    assert said and words in said and "joined" in said and "too early" not in said, said


def test_a_runner_up_of_two_entries_is_not_read_as_a_shift():
    fb = _checked("top2-routing", {0: "[np.argmax(scores), np.argmax(np.delete(scores, np.argmax(scores))) - 1]"})
    assert not fb.passed and "moved one entry" not in fb.text(), fb.text()


def test_a_division_rounded_up_is_never_said_to_round_down():
    """The changed lines of ``-(-a // b)``: `/` for its `//` is a division that was to be rounded
    up (the steps' reading quotes these words)."""
    words = [w for code, w in variants("-(-budget // (per_unit * multiple))", ["budget", "per_unit", "multiple"])
             if code == "-(-budget / (per_unit * multiple))"]
    assert words and "rounded up" in words[0] and "rounded down" not in words[0], words


@pytest.mark.parametrize("fill, words", [
    ("shifted - np.log(np.exp(scores).sum(axis=-1, keepdims=True))", "`np.exp(scores)` where `np.exp(shifted)` was wanted"),
    ("scores - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))", "`scores - np.log("),
])
def test_a_name_replaced_in_one_place_of_a_line_is_named_there(fill, words):
    fb = _checked("perplexity-logits", {2: fill})
    assert not fb.passed and fb.hint and "`log_p` is the first" in fb.hint and words in fb.hint, fb.text()
