"""Feedback that says where in the learner's own steps a wrong result goes wrong, and what a
wrong result observably is when no slip explains it (engine/core/diagnose/steps.py,
observed.py), and the bounds a changed line of the solution is evaluated within (bounded.py).

Each answer runs through the real check and the test reads the feedback the learner would read.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.cell import run_cell
from engine.core.checker import evaluate
from engine.core.diagnose.bounded import TooLarge, bounded, namespace
from engine.core.registry import get_exercise


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


def _feedback(ex_id: str, code):
    ex = get_exercise(ex_id)
    source = ex.variant_source(code) if isinstance(code, dict) else code
    fb = evaluate(ex, run_cell(source, ex.context, ex.id))
    assert not fb.passed, source
    return fb


def test_the_first_wrong_step_is_named_with_the_change_of_its_line():
    fb = _feedback("moe-counts", {2: "attention + expert + router + norms"})
    text = fb.text()
    assert "`used` is the first of your steps that is not" in text, text
    assert "`top_k *` left out" in text, text
    assert "`stored`" in text.split("`used` is the first")[0], text      # the right steps before it


def test_a_right_step_before_the_wrong_one_is_said_to_be_right():
    fb = _feedback("layer-norm-fix", {1: "((x - x.mean()) ** 2).mean(axis=-1, keepdims=True)"})
    assert "Your `mean` is right; `var` is the first of your steps that is not" in fb.text(), fb.text()


def test_right_steps_and_a_wrong_last_line_point_at_the_line_that_combines_them():
    fb = _feedback("stable-softmax", {1: "e.sum(axis=-1, keepdims=True).cumsum(axis=-2)"})
    assert "Your `shifted` and `e` are both right" in fb.text(), fb.text()


def test_the_two_outcomes_of_a_choice_swapped_are_named_and_never_a_fixed_flag():
    fb = _feedback("block-count", {1: "(2 if gated else 3) * d * d_ff"})
    assert "the two outcomes of `3 if gated else 2` the other way round" in fb.text(), fb.text()
    assert "whatever `gated` is" not in fb.text() and "log" not in fb.text(), fb.text()


def test_a_function_call_left_out_is_named_as_left_out_not_replaced():
    fb = _feedback("perplexity-logits", {2: "shifted - np.exp(shifted).sum(axis=-1, keepdims=True)"})
    assert "`np.log(...)` left out" in fb.text() and "np.abs" not in fb.text(), fb.text()


def test_a_reduction_along_another_axis_is_named_by_its_axis():
    fb = _feedback("rms-norm", {0: "np.mean(x ** 2, axis=0, keepdims=True)"})
    assert "`axis=0` (along axis 0) where `axis=-1` was wanted" in fb.text(), fb.text()


def test_a_step_used_as_an_index_is_a_step_and_the_last_line_is_not_blamed():
    fb = _feedback("top2-routing", {0: "np.sort(scores)[-2:]"})
    assert "`best` is the first of your steps that is not" in fb.text(), fb.text()
    assert "`sort` where `argsort` was wanted" in fb.text(), fb.text()
    assert "into the result" not in fb.text(), fb.text()


@pytest.mark.parametrize("fill, said", [
    ("np.round(x.sum(axis=-1, keepdims=True), 2)", "rounded to 2 decimals"),
    ("x.sum(axis=-1, keepdims=True).astype(int)", "cut to whole numbers"),
])
def test_a_one_line_function_is_read_as_its_line_changed(fill, said):
    fb = _feedback("row-mean", {0: fill})
    assert "Your result is what the right line gives with" in fb.text() and said in fb.text(), fb.text()


def test_a_single_wrong_number_is_not_counted_as_one_of_many():
    fb = _feedback("perplexity", {1: "np.mean(1 / right)"})
    assert "every one of its" not in fb.text() and "1 number" not in fb.text(), fb.text()


def test_a_wrong_step_no_slip_explains_is_described_by_what_it_holds():
    fb = _feedback("causal-weights", {0: "np.eye(L, dtype=bool)"})
    assert "In `allowed`, on the example above, only numbers below the diagonal" in fb.text(), fb.text()
    fb = _feedback("causal-weights", {1: "scores.min()"})
    assert "In `masked`, on the example above, only numbers above the diagonal" in fb.text(), fb.text()
    assert "all 0" not in fb.text(), fb.text()          # -1 where -inf was wanted is no factor 0


def test_a_list_built_in_a_loop_is_no_step():
    fb = _feedback("future-leak", {1: "np.abs(run(changed)[i] - base[i]).mean()"})
    assert "`leak` is the first" not in fb.text() and "into the result" not in fb.text(), fb.text()


def test_a_result_that_is_the_input_unchanged_is_said_so():
    fb = _feedback("stable-softmax", "def softmax(scores):\n    return scores * 1\n")
    assert "your result is `scores` itself, unchanged" in fb.text(), fb.text()


def test_rows_that_depend_on_other_rows_are_seen_by_reordering_the_rows():
    source = ("def softmax(scores):\n    e = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
              "    return e / (e.sum(axis=-1, keepdims=True) + e[..., :1, :1])\n")
    fb = _feedback("stable-softmax", source)
    assert "a row of yours depends on the other rows" in fb.text(), fb.text()


def test_a_right_answer_reordered_by_the_learner_is_named_as_its_order():
    source = ("def softmax(scores):\n    e = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
              "    return (e / e.sum(axis=-1, keepdims=True))[..., ::-1]\n")
    assert "reverse order" in _feedback("stable-softmax", source).text()


def test_a_changed_line_may_not_raise_a_whole_number_to_a_huge_power():
    with pytest.raises(TooLarge):
        eval(bounded("top_k ** expert"), namespace({"top_k": 8, "expert": 29_000_000}))
    assert eval(bounded("(a + 1) ** 2"), namespace({"a": 3})) == 16
    assert np.allclose(eval(bounded("x ** 0.5"), namespace({"x": np.array([4.0, 9.0])})), [2, 3])


def test_a_changed_line_may_not_ask_numpy_for_a_huge_array():
    space = namespace({"np": np, "n": 100_000})
    for text in ("np.arange(n * n)", "np.zeros((n, n))", "np.ones(n ** 2)", "np.eye(n)"):
        with pytest.raises(TooLarge):
            eval(bounded(text), space)
    assert eval(bounded("np.arange(n // 1000)"), space).shape == (100,)
    assert eval(bounded("np.zeros((3, 4)).shape"), space) == (3, 4)
    assert eval(bounded("np.exp(0.0)"), space) == 1.0


def test_a_changed_index_is_said_as_the_whole_subscript():
    """A slip in an index (the 1 of -1 made 0) is said in the code the learner reads,
    `q.shape[0]` where `q.shape[-1]` was wanted, never as bare numbers ("0 where 1")."""
    from engine.core.diagnose.expressions import variants

    said = dict(variants("np.sqrt(q.shape[-1]) + x[i, 2]", ["q", "x", "i"]))
    assert said["np.sqrt(q.shape[-0]) + x[i, 2]"] == "`q.shape[0]` where `q.shape[-1]` was wanted"
    assert said["np.sqrt(q.shape[--1]) + x[i, 2]"] == "`q.shape[1]` where `q.shape[-1]` was wanted"
    assert said["np.sqrt(q.shape[-1]) + x[i, 3]"] == "`x[i, 3]` where `x[i, 2]` was wanted"
    assert not any(words.startswith(("0 where", "1 where", "2 where")) for words in said.values())
