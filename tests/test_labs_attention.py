"""Labs of notebook 01, attention (labs/attention/), headless: each model against lib/ or a
computation of its own, at every setting, and every control of every view redrawn in place."""

import warnings

import numpy as np
import pytest

from labs.attention import circuits_lab, raises_itself, raw_scores, scale_lab, scale_model, several_heads_lab
from labs.attention.circuits import LONGEST, MOST_WORDS, TEXTS, CircuitsLab, circuits_model, ov_readings
from labs.attention.scale import KEYS, ONE_KEY, QUERIES, WIDTHS, ScaleLab
from labs.attention.several_heads import (FIRST, SECOND, SCORE_MAX, SCORE_MIN, SeveralHeadsLab, cost,
                                          several_heads_model)
from lib import circuits, model
from lib.attention import softmax


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _redrawn(lab, change):
    """Apply change(); the figure is redrawn in place (same Figure, one more render) and the
    verdict is a sentence with no NaN in it."""
    figure, renders = lab.view.figure, lab.view.renders
    change()
    assert lab.view.figure is figure and lab.view.renders > renders
    assert lab.verdict.value.strip() and "nan" not in lab.verdict.value.lower()
    return lab.model


# ---------------------------------------------------------------- the scale

def test_the_scores_are_drawn_independently_and_spread_like_the_root_of_the_width():
    for d in WIDTHS:
        scores = raw_scores(d)
        assert scores.shape == (QUERIES, KEYS) and not scores.flags.writeable
        rng = np.random.default_rng([17, d])                            # the draw the docstring names
        q = rng.standard_normal((QUERIES, 1, d), dtype=np.float32)
        k = rng.standard_normal((QUERIES, KEYS, d), dtype=np.float32)
        np.testing.assert_allclose(scores, (q * k).sum(-1, dtype=np.float64), rtol=1e-12)
        raw, divided = scale_model(d, False), scale_model(d, True)
        assert raw.spread == pytest.approx(np.sqrt(d), rel=0.15)        # "the spread grows like √d"
        assert divided.spread == pytest.approx(1.0, rel=0.15)           # "divided, it stays near 1"
        assert divided.spread == pytest.approx(raw.spread / np.sqrt(d))
        np.testing.assert_allclose(raw.weights.sum(), 1.0)
        assert raw.top == pytest.approx(softmax(scores).max(-1).mean())


def test_undivided_the_top_key_takes_nearly_all_and_divided_its_share_keeps_its_size():
    tops = [scale_model(d, False).top for d in WIDTHS]
    assert tops[0] < 0.5 and tops[-1] >= ONE_KEY and tops == sorted(tops)
    assert "nearly all of it to one key" in scale_model(1024, False).verdict
    divided = [scale_model(d, True).top for d in WIDTHS]
    assert max(divided) - min(divided) < 0.1 and max(divided) < 0.5
    assert "even split" in scale_model(1024, True).verdict


def test_the_scale_model_is_sensible_at_any_setting():
    assert scale_model(100).d == 128 and scale_model(1e9).d == 1024 and scale_model(-5).d == 2
    for d in (float("nan"), float("inf"), float("-inf")):
        m = scale_model(d, True)
        assert m.d in WIDTHS and np.isfinite(m.spread) and "nan" not in m.verdict


def test_the_scale_view_redraws_in_place_over_every_width_and_the_switch():
    lab = ScaleLab()
    assert {"course-lab", "course-lab-scale"} <= set(lab.root._dom_classes)
    for divided in (True, False):
        _redrawn(lab, lambda: setattr(lab.divided, "value", divided))
        for d in reversed(WIDTHS) if divided else WIDTHS:
            if lab.width.value == d:
                continue
            m = _redrawn(lab, lambda: setattr(lab.width, "value", d))
            assert (m.d, m.divided) == (d, divided)
            assert list(lab.marker.get_data()[0]) == [d] and list(lab.marker.get_data()[1]) == [m.spread]
            np.testing.assert_allclose(lab.bars.heights, m.weights)
            assert f"d = {d}" in lab.bars_title.get_text()
    assert scale_lab()._dom_classes


# ---------------------------------------------------------------- several heads

def _expected(heads, first, second):
    """The weights of "is" by hand: one head sees 9, minus, 4, is with scores first, 0, second, 0;
    head 1 of two sees 9 scored first and the rest 0, head 2 sees 4 scored second and the rest 0."""
    if heads == 1:
        return [softmax(np.array([first, 0.0, second, 0.0]))]
    return [softmax(np.array([first, 0.0, 0.0, 0.0])), softmax(np.array([0.0, 0.0, second, 0.0]))]


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("first, second", [(4.0, 4.0), (4.0, 6.0), (0.0, 8.0), (8.0, 0.5)])
def test_the_weights_of_is_are_the_softmax_of_its_scores_head_by_head(heads, first, second):
    m = several_heads_model(heads, first, second)
    expected = _expected(heads, first, second)
    np.testing.assert_allclose(m.weights, expected, atol=1e-12)
    assert m.to_first == pytest.approx(expected[0][FIRST]) and m.to_second == pytest.approx(expected[-1][SECOND])
    # W_V and W_O the identity, one-hot tokens: number 0 of the output is what arrived of 9
    assert m.output[FIRST] == pytest.approx(m.to_first) and m.output[SECOND] == pytest.approx(m.to_second)
    if heads == 1:
        assert m.together <= 1.0 and "share one total of 1" in m.verdict
    else:
        assert "a total of 1 of its own" in m.verdict


def test_one_head_makes_the_two_numbers_compete_and_two_heads_do_not():
    for heads in (1, 2):
        before, after = several_heads_model(heads, 4.0, 4.0), several_heads_model(heads, 4.0, 6.0)
        if heads == 1:
            assert after.to_first < before.to_first / 2 and before.together < 1
        else:
            assert after.to_first == before.to_first and before.together > 1.8
    one, two = cost(1), cost(2)
    assert one.parameters == two.parameters == 4 * 4 * 4
    assert two.grid_numbers == 2 * one.grid_numbers and (one.rank, two.rank) == (4, 2)


def test_the_several_heads_model_is_sensible_at_any_setting():
    for first, second in ((float("nan"), 4.0), (float("inf"), -1e9), (-3.0, 99.0)):
        m = several_heads_model(7, first, second)
        assert m.heads == 1 and SCORE_MIN <= m.first <= SCORE_MAX and SCORE_MIN <= m.second <= SCORE_MAX
        assert np.isfinite(m.weights).all() and "nan" not in m.verdict.lower()


def test_the_several_heads_view_redraws_in_place_over_every_control():
    lab = SeveralHeadsLab()
    assert {"course-lab", "course-lab-several-heads"} <= set(lab.root._dom_classes)
    for heads in (2, 1, 2):
        m = _redrawn(lab, lambda: setattr(lab.heads, "value", heads))
        shown = (lab.head1 if heads == 2 else lab.one).heights
        np.testing.assert_allclose(shown, m.weights[0])
        assert ("2 heads of 2 (shown)" if heads == 2 else "1 head of 4 (shown)") in lab.numbers.value
        for slider in (lab.first, lab.second):
            for value in (slider.max, slider.min):
                m = _redrawn(lab, lambda: setattr(slider, "value", value))
                np.testing.assert_allclose(lab.out.heights, m.output)
    assert several_heads_lab()._dom_classes


# ---------------------------------------------------------------- a head's two circuits

def test_the_ov_reading_is_the_embedding_through_the_heads_value_and_output_and_back():
    w = model.weights()
    E, g = np.asarray(w.embedding, dtype=np.float64), np.asarray(w.final_norm_gain, dtype=np.float64)
    size = model.config().d_model // model.config().heads
    readings = ov_readings()
    for block, head in ((0, 0), (1, 1), (3, 2)):
        b = w.blocks[block]
        cut = slice(head * size, (head + 1) * size)
        by_hand = (E * np.asarray(b.attention_norm_gain, dtype=np.float64)) @ b.Wv[:, cut] @ b.Wo[cut] @ (g[:, None] * E.T)
        by_hand = (by_hand - by_hand.mean(-1, keepdims=True)) / by_hand.std(-1, keepdims=True)
        np.testing.assert_allclose(readings[block, head], by_hand, atol=1e-5)
    assert (raises_itself() == (np.diagonal(readings, axis1=-2, axis2=-1) > 0).sum(-1)).all()


def test_some_heads_copy_and_some_lower_what_they_read():
    counts, vocab = raises_itself(), len(model.vocab())
    assert counts.max() >= 45 and counts.min() <= 10 and vocab == 55
    copier = tuple(int(i) + 1 for i in np.unravel_index(counts.argmax(), counts.shape))
    assert "it copies what it reads" in circuits_model(TEXTS[0], *copier).verdict
    lowerer = tuple(int(i) + 1 for i in np.unravel_index(counts.argmin(), counts.shape))
    assert "it lowers what it reads" in circuits_model(TEXTS[0], *lowerer).verdict


@pytest.mark.parametrize("text", TEXTS)
def test_the_map_is_the_heads_weights_on_the_text_with_the_future_left_out(text):
    maps = circuits.attention_maps(model.encode(text))
    n = len(text.split())
    for block, head in ((1, 1), (2, 3), (4, 4)):
        m = circuits_model(text, block, head)
        assert m.grid.shape == (LONGEST, LONGEST) and m.ov_grid.shape == (MOST_WORDS, MOST_WORDS)
        shown = m.grid[:n, :n]
        future = np.triu(np.ones((n, n), dtype=bool), 1)
        assert np.isnan(shown[future]).all() and np.isnan(m.grid[n:]).all()
        np.testing.assert_allclose(shown[~future], maps[block - 1, head - 1][~future], atol=1e-6)
        np.testing.assert_allclose(np.nansum(shown, axis=1), 1.0, atol=1e-5)
        assert m.weight == pytest.approx(getattr(m.block_looks, m.pattern)[head - 1])
        assert m.weight == max(float(getattr(m.block_looks, p)[head - 1]) for p in ("previous", "itself", "first"))


def test_the_circuits_model_is_sensible_at_any_setting():
    m = circuits_model("not a text of the lab", 99, -4)
    assert (m.text, m.block, m.head) == (TEXTS[0], model.config().layers, 1) and "nan" not in m.verdict.lower()


def test_the_circuits_view_redraws_in_place_over_every_control():
    lab = CircuitsLab()
    assert {"course-lab", "course-lab-circuits"} <= set(lab.root._dom_classes)
    for text in TEXTS[1:] + TEXTS[:1]:
        m = _redrawn(lab, lambda: setattr(lab.text, "value", text))
        visible = [t.get_text() for t in lab.map_rows if t.get_visible()]
        assert visible == list(m.words)
    for block in (2, 3, 4, 1):
        _redrawn(lab, lambda: setattr(lab.block, "value", block))
        for head in (2, 3, 4, 1):
            m = _redrawn(lab, lambda: setattr(lab.head, "value", head))
            assert (m.block, m.head) == (block, head) and f"head {head} (shown)" in lab.numbers.value
            assert f"block {block}, head {head}" in lab.map_title.get_text()
    assert circuits_lab()._dom_classes
