"""The learner's own functions in the labs: remembered when their check passes, run behind a
guard, and replaced by the course's function (with a one-line reason) when they fail."""

import html
import re

import numpy as np
import pytest

from engine.core import own
from engine.core.cell import run_cell
from engine.core.registry import get_exercise
from engine.notebook import check


@pytest.fixture(autouse=True)
def _clean(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.delenv("COURSE_STRICT", raising=False)
    own.forget_all()
    yield
    own.forget_all()


def learner(ex_id, variant=None):
    """The namespace of a notebook in which the exercise cell was run (solution or a variant)."""
    ex = get_exercise(ex_id)
    source = ex.solution_source if variant is None else ex.variant_source(variant)
    return run_cell(source, ex.context, ex_id)


def passed(ex_id):
    ns = learner(ex_id)
    assert check(ex_id, ns).feedback.passed
    return ns[get_exercise(ex_id).name]


# ---------------------------------------------------------------- remembering through check

def test_check_remembers_a_passing_function_and_forgets_it_when_a_recheck_fails():
    ns = learner("layer-norm-fix")
    assert own.passed_function("layer-norm-fix") is None
    check("layer-norm-fix", ns)
    assert own.passed_function("layer-norm-fix") is ns["layer_norm"]
    broken = learner("layer-norm-fix", get_exercise("layer-norm-fix").mistakes[0].code)
    check("layer-norm-fix", broken)
    assert own.passed_function("layer-norm-fix") is None
    assert "no longer passes" in own.lost_reason("layer-norm-fix")
    check("layer-norm-fix", ns)                                   # fixed again
    assert own.passed_function("layer-norm-fix") is ns["layer_norm"] and not own.lost_reason("layer-norm-fix")


def test_a_blank_check_or_a_value_exercise_changes_nothing():
    passed("layer-norm-fix")
    check("layer-norm-fix", learner_template := run_cell(get_exercise("layer-norm-fix").template,
                                                     get_exercise("layer-norm-fix").context))
    assert learner_template and own.passed_function("layer-norm-fix") is not None   # blank: not an attempt


def test_guard_reports_raising_wrong_shape_and_nan_in_one_line():
    from labs.norms.stack import LAYER_NORM_USE

    x = np.arange(8.0).reshape(2, 4)
    cases = {
        "raised ZeroDivisionError": lambda x, eps=1e-5: 1 / 0,
        "shape (2,)": lambda x, eps=1e-5: x.mean(axis=-1),
        "NaN or infinity": lambda x, eps=1e-5: x * np.nan,
        "not an array": lambda x, eps=1e-5: "text",
    }
    for words, func in cases.items():
        with pytest.raises(own.UnusableFunction) as info:
            own.guarded(LAYER_NORM_USE, func)(x)
        assert words in str(info.value) and "\n" not in str(info.value)


def test_guard_works_on_copies_so_the_lab_data_is_safe():
    from labs.norms.stack import LAYER_NORM_USE

    x = np.arange(8.0).reshape(2, 4)

    def vandal(x, eps=1e-5):
        x[...] = 0.0
        return x
    own.guarded(LAYER_NORM_USE, vandal)(x)
    assert x[1, 3] == 7.0


# ---------------------------------------------------------------- every lab that uses one

def _badge(lab):
    return lab.own.badge.value


def _same(lab_factory, ex_id, numbers, tick_setup=None):
    """A lab built before the check passes offers the switch once it passes; ticked, it runs the
    learner's function and shows the same numbers as on the course's."""
    lab = lab_factory()
    if tick_setup:
        tick_setup(lab)
    assert lab.own.checkbox.disabled and "pass the check" in _badge(lab)
    reference = numbers(lab.update())
    passed(ex_id)
    assert not lab.own.checkbox.disabled
    assert "tick the box" in _badge(lab)
    lab.own.checkbox.value = True
    assert lab.own.running_own and "running: <b>your" in _badge(lab) and "course-own-own" in _badge(lab)
    for got, want in zip(numbers(lab.model), reference):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    lab.own.checkbox.value = False
    assert not lab.own.running_own and "the course's" in _badge(lab)
    lab.own.checkbox.value = True
    return lab


def test_temperature_lab_weighs_the_words_with_the_learners_softmax():
    from labs.start.temperature import TemperatureLab

    lab = _same(TemperatureLab, "stable-softmax", lambda m: [m.weights, m.top_share])
    lab.slider.value = lab.slider.min                       # a low temperature: large scores, still theirs
    assert lab.own.running_own and "called" in _badge(lab) and "softmax(array (1, 5))" in _badge(lab)


def test_position_table_lab():
    from labs.positional.table import PositionTableLab

    lab = _same(PositionTableLab, "position-table", lambda m: [m.table, m.values])
    lab.d_slider.value, lab.length_slider.value = 64, 64
    assert lab.own.running_own and lab.model.table.shape == (64, 64)


def test_shuffle_lab_with_positions():
    from labs.positional.shuffle import ShuffleLab

    def positions_on(lab):
        lab.positions.value = True
    lab = _same(ShuffleLab, "position-table", lambda m: [m.out_before, m.out_after, m.change],
                positions_on)
    lab.positions.value = False
    assert "this setting runs no function of yours" in _badge(lab) and not lab.own.running_own


@pytest.mark.parametrize("pairing", ["halves", "neighbours"])
def test_rotary_lab_both_pairings(pairing):
    from labs.positional.rotary import RotaryLab

    def choose(lab):
        lab.pairing.value = pairing
        lab.base_slider.value = 100.0
    _same(RotaryLab, "rope-rotation", lambda m: [m.curve, m.together, m.score, m.q_after], choose)


def test_remove_activation_lab_draws_its_one_matrix_lines_with_the_learners_one_matrix():
    from labs.ffn.remove_activation import RemoveActivationLab

    lab = _same(RemoveActivationLab, "one-matrix", lambda m: [m.straight, m.W, m.b, m.difference])
    for activation in ("none", "relu"):                  # both settings draw the one-matrix lines
        lab.activation.value = activation
        lab.width.value = lab.width.max
        assert lab.own.running_own and "called" in _badge(lab)
    lab.activation.value = "none"
    assert lab.model.matches, "with the learner's one_matrix the lines lie on the curves"


def test_remove_activation_lab_falls_back_from_a_one_matrix_with_its_bias_left_out():
    from labs.ffn.remove_activation import RemoveActivationLab

    lab = RemoveActivationLab(activation="none")
    reference = lab.model.straight.copy()
    ns = run_cell("def one_matrix(W_up, b_up, W_down, b_down):\n    return W_up @ W_down\n", "import numpy as np\n")
    own.remember("one-matrix", ns["one_matrix"])         # as if it had passed, then was edited
    lab.own.checkbox.value = True
    assert not lab.own.running_own and "course-own-fallback" in _badge(lab) and "shape" in _badge(lab)
    np.testing.assert_allclose(lab.model.straight, reference)


def test_axis_lab():
    from labs.norms.which_axis import AxisLab

    lab = _same(AxisLab, "layer-norm-fix", lambda m: [m.out, m.means, m.stds])
    lab.how.value = "column"
    lab.value.value = lab.value.max
    assert lab.own.running_own


@pytest.mark.parametrize("mode,ex_id", [("pre-layer", "layer-norm-fix"), ("post-rms", "rms-norm-16bit")])
def test_stack_lab_uses_the_norm_of_its_mode(mode, ex_id):
    from labs.norms.stack import StackLab

    def choose(lab):
        lab.mode.value = mode
    lab = _same(StackLab, ex_id, lambda m: [m.lengths[np.isfinite(m.lengths)]], choose)
    lab.mode.value = "plain"
    assert "this setting runs no function of yours" in _badge(lab)
    other = "pre-rms" if ex_id == "layer-norm-fix" else "pre-layer"
    lab.mode.value = other                                      # the other norm has not passed
    assert not lab.own.running_own and "has not passed its check" in _badge(lab)


def test_calculator_lab_counts_models_with_a_plain_ffn_and_shared_keys_and_values():
    from labs.decoder.calculator import CalculatorLab, calculator_model

    lab = _same(CalculatorLab, "grouped-parameters", lambda m: [m.total, m.depth2, m.width2, m.mib])
    lab.kv_heads.value = 4                                  # grouped-query attention: still theirs
    assert lab.own.running_own and lab.model.total == calculator_model(kv_heads=4).total == 100_092_672
    lab.gated.value = True
    assert not lab.own.running_own and "course-own-not-here" in _badge(lab)
    assert "gated FFN" in _badge(lab) and lab.model.ok


# ---------------------------------------------------------------- falling back

BROKEN = {
    "raises": "def layer_norm(x, eps=1e-5):\n    raise RuntimeError('oops')\n",
    "wrong shape": "def layer_norm(x, eps=1e-5):\n    return x.mean(axis=-1)\n",
    "nan": "def layer_norm(x, eps=1e-5):\n    return x * float('nan')\n",
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_function_makes_the_lab_fall_back_with_a_message(kind):
    from labs.norms.which_axis import AxisLab

    lab = AxisLab()
    reference = lab.model.out.copy()
    ns = run_cell(BROKEN[kind], "import numpy as np\n")
    own.remember("layer-norm-fix", ns["layer_norm"])      # as if it had passed, then was edited
    lab.own.checkbox.value = True
    assert not lab.own.running_own
    badge = _badge(lab)
    assert "course-own-fallback" in badge and "the course's" in badge and "Traceback" not in badge
    assert {"raises": "RuntimeError", "wrong shape": "shape", "nan": "NaN"}[kind] in badge
    np.testing.assert_allclose(lab.model.out, reference)
    lab.value.value = -4.0                                # every later setting still works
    assert np.all(np.isfinite(lab.model.out))


def test_a_failed_recheck_makes_a_running_lab_fall_back():
    from labs.positional.table import PositionTableLab

    lab = PositionTableLab()
    passed("position-table")
    lab.own.checkbox.value = True
    assert lab.own.running_own
    check("position-table", learner("position-table", get_exercise("position-table").mistakes[0].code))
    assert not lab.own.running_own and lab.own.checkbox.disabled
    assert "no longer passes its check" in _badge(lab) and "course-own-fallback" in _badge(lab)
    passed("position-table")
    assert lab.own.running_own                          # ticked all along: back on the learner's


def test_flow_lab_runs_the_learners_causal_weights():
    from labs.decoder.layer_flow import FlowLab

    lab = _same(FlowLab, "cached-causal-weights", lambda m: [m.sizes, m.alike, m.leaks, m.output])
    lab.toggles["causal"].value = False                  # no mask computed: nothing of theirs runs
    assert not lab.own.running_own and "this setting runs no function of yours" in _badge(lab)
    lab.toggles["causal"].value = True
    assert lab.own.running_own


def test_flow_lab_falls_back_from_a_causal_mask_that_reads_the_future():
    from labs.decoder.layer_flow import FlowLab

    lab = FlowLab()
    reference = lab.model.output.copy()
    ns = run_cell("def causal_weights(scores):\n    return scores[..., :1]\n", "import numpy as np\n")
    own.remember("cached-causal-weights", ns["causal_weights"])
    lab.own.checkbox.value = True
    badge = _badge(lab)
    assert not lab.own.running_own and "course-own-fallback" in badge and "Traceback" not in badge
    np.testing.assert_allclose(lab.model.output, reference)


# ---------------------------------------------------------------- the learner sees their code run

def test_the_badge_counts_the_calls_of_the_learners_function_and_shows_the_last_one():
    from labs.norms.which_axis import AxisLab

    seen = []
    ns = learner("layer-norm-fix")
    solution = ns["layer_norm"]

    def layer_norm(x, eps=1e-5):                        # the learner's, with a tally of its own
        seen.append((np.shape(x), eps))
        return solution(x, eps)
    assert check("layer-norm-fix", {**ns, "layer_norm": layer_norm}).feedback.passed
    lab = AxisLab()
    before = len(seen)
    lab.own.checkbox.value = True
    ran = len(seen) - before
    assert lab.own.running_own and ran >= 1 and lab.own.calls.this_run == ran == lab.own.calls.total
    shape, eps = seen[-1]
    last = f"layer_norm(array {shape}, eps={eps:g})"
    assert lab.own.calls.last == last
    assert f"called {ran} time" in _badge(lab) and "since you ticked the box" in _badge(lab)
    assert html.escape(last) in _badge(lab)
    before = len(seen)
    lab.value.value = -1.0                              # one more plot: the count goes on
    assert lab.own.calls.this_run == len(seen) - before and lab.own.calls.total == len(seen) - before + ran
    lab.own.checkbox.value = False                      # the course's function: nothing counted
    before = len(seen)
    lab.value.value = 1.0
    assert len(seen) == before and "called" not in _badge(lab)
    lab.own.checkbox.value = True                       # ticked again: counting starts afresh
    assert lab.own.calls.total == lab.own.calls.this_run == len(seen) - before


def test_call_summary_names_arrays_by_shape_and_numbers_by_value():
    from engine.kit.own_function import call_summary

    assert call_summary("f", (np.zeros((2, 3)), 4, 0.5), {"eps": 1e-5, "pairing": "halves"}) == \
        "f(array (2, 3), 4, 0.5, eps=1e-05, pairing='halves')"
    assert call_summary("g", (), {}) == "g()"


def test_shuffle_lab_at_first_visit_names_no_function_the_learner_has_not_met():
    """01's shuffle lab comes long before the position-table exercise: its badge, positions off,
    says that no function of the learner's runs, without naming ``position_table``."""
    from labs.positional.shuffle import ShuffleLab

    lab = ShuffleLab()
    assert not lab.positions.value
    said = html.unescape(re.sub(r"<[^>]+>", "", _badge(lab)))
    assert said == "running: the course's code \u2014 this setting runs no function of yours"
    assert "position_table" not in said
