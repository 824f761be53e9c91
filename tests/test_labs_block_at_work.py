"""The lab of notebook 06 (labs/block_at_work/): its model's numbers and its view, redrawn in place."""

import numpy as np
import pytest

from labs.block_at_work.block_at_work import NUMBERS, SHIFT_MAX, SHIFT_MIN, BlockAtWorkLab, block_at_work_model


def test_the_mean_follows_the_move_and_the_centred_numbers_do_not():
    still = block_at_work_model(0.0)
    for shift in (SHIFT_MIN, -0.5, 0.0, 2.5, SHIFT_MAX):
        m = block_at_work_model(shift)
        assert m["mean"] == pytest.approx(NUMBERS.mean() + shift)
        np.testing.assert_allclose(m["centred"], still["centred"], atol=1e-12)
        assert m["centred"].sum() == pytest.approx(0.0, abs=1e-12)
    assert "the mean 4" in block_at_work_model(1.0)["verdict"]


def test_the_model_is_sensible_at_any_setting():
    for shift in (float("nan"), float("inf"), -1e6):
        m = block_at_work_model(shift)
        assert np.isfinite(m["moved"]).all() and m["verdict"] and "nan" not in m["verdict"].lower()


def test_the_view_redraws_in_place_at_both_ends_of_its_slider():
    lab = BlockAtWorkLab()
    fig, image, renders = lab.view.figure, lab.view.image, lab.view.renders
    for value in (lab.slider.min, lab.slider.max):
        lab.slider.value = value
        assert lab.view.figure is fig and lab.view.image is image
        assert lab.moved[0].get_height() == pytest.approx(NUMBERS[0] + value)
        assert lab.model["verdict"].split(";")[0] in lab.verdict.value
    assert lab.view.renders == renders + 2
    assert lab.ax.get_ylabel() and lab.ax.get_title()
