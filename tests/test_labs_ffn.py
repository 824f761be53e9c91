"""Labs of notebook 02 (labs/ffn/), headless: the models against lib/ and every control of every
view."""

import itertools
import warnings

import numpy as np
import pytest

from labs.ffn import hidden_units_lab, parameters_lab, remove_activation_lab, router_lab, router_model
from labs.ffn.hidden_units import HiddenUnitsLab, hidden_units_model
from labs.ffn.parameters import ROUNDINGS, ParametersLab, parameters_model
from labs.ffn.remove_activation import RemoveActivationLab, collapse_model, ffn_weights
from labs.ffn.router import FAIR_SHARE, RouterLab
from lib.ffn import ffn, worked_example


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _redrawn(lab, change):
    """Apply change(); check the figure was redrawn in place (same Figure, one more render)."""
    figure, renders = lab.view.figure, lab.view.renders
    change()
    assert lab.view.figure is figure
    assert lab.view.renders > renders
    assert lab.verdict.value.strip() and "course" not in lab.verdict.value
    return lab.model


def _classes(root):
    return set(root._dom_classes)


# ---------------------------------------------------------------- lab 1: hidden units

def test_hidden_units_model_on_the_worked_example():
    cat = hidden_units_model(2, 0)
    assert cat.name == "cat" and cat.pre.tolist() == [2, -2, 1, 0]
    assert cat.post.tolist() == [2, 0, 1, 0] and int(cat.on.sum()) == 2
    assert cat.out.tolist() == [1, 1]
    assert "2 of 4 units are on (units 1 and 3)" in cat.verdict
    alone = hidden_units_model(2, 0, alone=True)
    assert alone.difference == 0 and "exactly the same" in alone.verdict
    assert alone.batch_size == 3
    e = worked_example()
    for row, name in zip(e.X, e.tokens):
        m = hidden_units_model(*row, activation="gelu", alone=True)
        assert m.name == name
        assert np.allclose(m.out, ffn(e.X, e.W_up, e.b_up, e.W_down, e.b_down, activation="gelu")[e.tokens.index(name)])
    own = hidden_units_model(-3, 3, "silu", True)
    assert own.name is None and own.batch_size == 4 and own.difference < 1e-12
    assert "1 of 4 units is on" in own.verdict and "SiLU lets a little" in own.verdict
    edge = hidden_units_model(0, 1)                                  # two units exactly at 0: off
    assert edge.pre.tolist() == [0, 1, 0, -1] and "1 of 4 units is on (unit 2)" in edge.verdict
    assert np.all(np.isfinite(hidden_units_model(np.nan, np.inf).out))


def test_hidden_units_view_over_every_control():
    lab = HiddenUnitsLab()
    assert {"course-lab", "course-lab-hidden-units"} <= _classes(lab.root)
    for token in ("dog", "car", "own", "cat"):
        m = _redrawn(lab, lambda: setattr(lab.token, "value", token))
    assert m.name == "cat" and (lab.x1.value, lab.x2.value) == (2.0, 0.0)
    for activation in ("gelu", "silu", "relu"):
        _redrawn(lab, lambda: setattr(lab.activation, "value", activation))
    for alone in (True, False, True):
        m = _redrawn(lab, lambda: setattr(lab.alone, "value", alone))
    assert m.alone and lab.alone_marks.get_visible() and "output run alone" in lab.numbers.value
    for slider in (lab.x1, lab.x2):
        for value in (slider.min, slider.max):
            _redrawn(lab, lambda: setattr(slider, "value", value))
            assert lab.token.value == "own"
    lab.x1.value, lab.x2.value = 1.0, 1.0                        # typing dog's numbers selects dog
    assert lab.token.value == "dog" and lab.model.name == "dog"
    assert "dog [1, 1]" in lab.numbers.value
    assert "course-verdict" in lab.verdict._dom_classes
    assert "var(--jp-ui-font-color1" in lab.verdict.value
    assert hidden_units_lab("car", "silu", True) is not None


def test_hidden_units_legend_shows_each_after_bar_s_colour_with_the_unit_s_state():
    """The "after" bars are orange for a unit that is on and blue for one that is off: the
    legend has a swatch of each colour, named by that state, and every bar drawn has the colour
    of its state's swatch."""
    from matplotlib.colors import to_hex

    lab = HiddenUnitsLab("cat", "relu")
    legend = lab.ax.get_legend()
    swatch = {text.get_text(): to_hex(handle.get_facecolor())
              for handle, text in zip(legend.legend_handles, legend.texts)}
    assert swatch["after (unit on)"] != swatch["after (unit off)"]
    seen = set()
    for token in ("cat", "dog", "car", "own"):
        lab.token.value = token
        m = lab.model
        for bar, on in zip(lab.after, m.on):
            assert to_hex(bar.get_facecolor()) == swatch["after (unit on)" if on else "after (unit off)"]
            seen.add(bool(on))
    assert seen == {True, False}                                 # both states shown and checked


# ---------------------------------------------------------------- lab 2: remove the activation

def test_collapse_model_matches_to_1e_12_without_the_activation():
    for width in (4, 16, 64):
        m = collapse_model(width, "none")
        assert m.matches and m.difference < 1e-12
        assert len(m.bends) == 0 and m.collapsed_parameters == 6
        assert m.parameters == 2 * 2 * width + width + 2
        assert "below 1e-12" in m.verdict and "one 2 × 2 matrix" in m.verdict
        W_up, b_up, W_down, b_down = ffn_weights(width)
        assert np.allclose(m.W, W_up @ W_down)
    four = collapse_model(4, "none")
    assert four.W.tolist() == [[1.5, -0.5], [1.5, 0.5]]          # the worked example's product
    relu = collapse_model(4, "relu")
    assert not relu.matches and relu.bends.tolist() == [1.0, 2.0]
    assert "bends at 2 points" in relu.verdict
    assert len(collapse_model(64, "relu").bends) > len(collapse_model(16, "relu").bends) > 2


def test_remove_activation_view_over_every_control():
    lab = RemoveActivationLab()
    assert {"course-lab", "course-lab-remove-activation"} <= _classes(lab.root)
    for activation in ("none", "relu", "none"):
        _redrawn(lab, lambda: setattr(lab.activation, "value", activation))
    for width in (lab.width.max, lab.width.min, 16):
        m = _redrawn(lab, lambda: setattr(lab.width, "value", width))
        assert m.matches and "below 1e-12" in m.verdict
        assert f"{m.parameters:,} / 6" in lab.numbers.value
    lab.activation.value = "relu"
    assert "bends at" in lab.model.verdict
    before = lab.view.image.value
    lab.width.value = lab.width.value + lab.width.step                 # the first slider changes the picture
    assert lab.view.image.value != before
    assert remove_activation_lab(64, "none") is not None


# ---------------------------------------------------------------- lab 3: where the parameters are

def test_parameters_model_reproduces_the_worked_counts():
    m = parameters_model(768, 4.0, False)
    assert (m.attention, m.ffn, m.norms, m.total) == (2_359_296, 4_718_592, 1_536, 7_079_424)
    assert round(m.shares["attention"], 3) == 0.333 and round(m.shares["ffn"], 3) == 0.667
    assert "7,079,424" in m.verdict and "66.7%" in m.verdict and "2,048" in m.verdict
    g = parameters_model(768, 4.0, True, 32)
    assert g.width == 2048 and g.ffn == 4_718_592 and "exactly the same as" in g.verdict
    small = parameters_model(128, 4.0, True, 32)
    assert small.width == 352 and "+3.1% against" in small.verdict
    assert parameters_model(128, 4.0, True, 1).width == 342


def test_parameters_view_over_every_control():
    lab = ParametersLab()
    assert {"course-lab", "course-lab-parameters"} <= _classes(lab.root)
    controls = [(lab.kind, [True, False]), (lab.log_scale, [True, False])]
    for control, values in controls:
        for value in values:
            _redrawn(lab, lambda: setattr(control, "value", value))
    lab.kind.value = True
    for n in ROUNDINGS:
        m = _redrawn(lab, lambda: setattr(lab.round_to, "value", n))
        assert m.width % n == 0 and m.ffn >= m.plain_ffn
    for log_scale, d, multiple in itertools.product((False, True), (lab.d_model.min, lab.d_model.max),
                                                    (lab.multiple.min, lab.multiple.max)):
        renders = lab.view.renders
        lab.log_scale.value, lab.d_model.value, lab.multiple.value = log_scale, d, multiple
        m = lab.model
        assert lab.view.renders > renders
        assert m.d_model == d and m.d_ff == round(multiple * d)
        assert lab.ax.get_yscale() == ("log" if log_scale else "linear")
        assert f"{m.total:,}" in lab.numbers.value
    lab.d_model.value, lab.multiple.value, lab.kind.value = 768, 4.0, False
    assert lab.model.total == 7_079_424 and "66.7%" in lab.numbers.value
    assert parameters_lab(4096, 8.0, True, 256, True) is not None


# ---------------------------------------------------------------- lab 4: router

def test_router_model_example_token_and_fair_share():
    m = router_model(0.0)
    assert FAIR_SHARE == 4096 * 2 // 8 == 1024 and m.fair == 1024
    assert list(m.chosen) == [0, 2] and np.allclose(np.round(m.shares, 3), [0.875, 0.125])
    assert "experts 0 and 2 with shares 0.875 and 0.125" in m.verdict
    assert m.counts.sum() == 8192 and m.busiest > 1.5 * 1024 and m.quietest < 0.5 * 1024
    assert "Left to itself" in m.verdict
    balanced = router_model(0.5, 10)
    assert balanced.busiest - balanced.quietest < 0.05 * (m.busiest - m.quietest)
    assert "After 10 balancing steps at strength 0.50" in balanced.verdict
    mem = m.memory
    assert round(mem["stored"] / 1e6) == 506 and round(mem["used"] / 1e6) == 166
    assert [round(mem[k]) for k in ("dense_mib", "mixture_mib_2", "mixture_mib_1")] == [209, 965, 483]
    moved = [router_model(1.0, 20, t) for t in range(16)]
    assert all(np.allclose(x.shares.sum(), 1) for x in moved)


def test_router_view_over_every_control():
    lab = RouterLab()
    assert {"course-lab", "course-lab-router"} <= _classes(lab.root)
    assert "965 MiB at 2 bytes, 483 MiB at 1 byte" in lab.memory.value and "209 MiB" in lab.memory.value
    for slider in (lab.strength, lab.steps, lab.token):
        for value in (slider.max, slider.min, slider.max):
            _redrawn(lab, lambda: setattr(slider, "value", value))
    assert lab.model.token == lab.token.max and lab.biased_marks.get_visible()
    lab.strength.value = 0.0
    assert not lab.biased_marks.get_visible() and "Left to itself" in lab.model.verdict
    before = lab.view.image.value
    lab.strength.value = 3 * lab.strength.step                       # the browser's three arrow presses
    assert lab.view.image.value != before
    assert router_lab(1.0, 0, 15) is not None


def test_balancing_has_a_price_the_verdict_states_and_the_lab_counts_it():
    """The share of tokens no longer sent to both experts their own scores chose, counted token by
    token against the unbiased top 2, is in the verdict whenever balancing runs; none without it."""
    from labs.ffn.router import router_scores
    from lib.moe import balance_load, route
    own = np.sort(route(router_scores(), 2).experts, axis=1)
    assert router_model(0.0).rerouted == 0.0 and "price" not in router_model(0.0).verdict
    for strength in (0.25, 0.5):
        m = router_model(strength, 10)
        moved = np.any(np.sort(balance_load(router_scores(), 2, strength, 10).routing.experts, axis=1) != own, axis=1)
        assert m.rerouted == pytest.approx(moved.mean()) and 0.3 < m.rerouted < 0.6
        assert f"The price: {round(100 * m.rerouted)}% of the 4,096 tokens are no longer sent to both experts" \
               in m.verdict


def test_the_router_lab_numbers_experts_from_0_as_the_notebook_and_the_checks_do():
    lab = RouterLab()
    labels = [t.get_text() for t in lab.ax_load.get_xticklabels()]
    assert labels == [str(e) for e in range(8)]
    assert "tokens per expert (0 to 7)" in lab.numbers.value
    assert router_model(0.0).expert_numbers == [0, 2]


def test_the_difference_from_one_matrix_is_written_plainly_once_it_is_not_rounding():
    lab = RemoveActivationLab()
    assert lab.model.difference > 1                                   # with ReLU: far from one matrix
    row = next(r for r in lab.numbers.value.split("</tr>") if "largest |FFN" in r)
    import re
    assert not re.search(r"\de[+-]\d", row), row


def test_the_width_slider_writes_its_thousands_grouped_as_the_lab_s_tables_do():
    from engine.kit.number_box import grid_of
    grid = grid_of(ParametersLab().d_model)
    assert grid.write(4096) == "4,096"
    with pytest.raises(ValueError, match="width d_model goes from 64 to 4,096: 5000 is above that"):
        grid.read("5000")


def test_your_own_numbers_picked_on_a_token_moves_the_sliders_off_every_token():
    """Picking "your own numbers" while the sliders hold a token's numbers shows another token:
    the sliders move to numbers of no token, and the lab says "your token"."""
    lab = HiddenUnitsLab("cat", "relu")
    lab.token.value = "own"
    assert (lab.x1.value, lab.x2.value) == (0.5, -0.5) and lab.token.value == "own"
    assert lab.model.verdict.startswith("your token [0.5, -0.5]")
    lab.x1.value = 1.5                           # moved by hand: it stays "own", nothing jumps back
    lab.token.value = "dog"
    lab.token.value = "own"
    assert (lab.x1.value, lab.x2.value) == (0.5, -0.5)


def test_the_parameters_lab_writes_each_part_s_count_over_its_bar():
    """The shares stay as the width grows; the counts over the bars grow with it."""
    lab = ParametersLab()
    lab.d_model.value = 768
    small = [label.get_text() for label in lab.counts]
    lab.d_model.value = 2048
    large = [label.get_text() for label in lab.counts]
    assert small == ["2.4 M", "4.7 M", "1,536"] and large == ["16.8 M", "33.6 M", "4,096"]
    assert [label.get_position()[1] for label in lab.counts] == [bar.get_height() for bar in lab.bars]
