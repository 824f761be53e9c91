"""The labs of notebook 01 (position shuffle, position table, rotary positions), headless.

The models are pinned against lib/; the views are driven through every option of every
dropdown and toggle and both extremes of every slider, and must redraw the same figure.
"""

import itertools
import math

import numpy as np
import pytest

from labs.positional import rotary, scaling, shuffle
from labs.positional import table as position_table
from lib.attention import attention
from lib.positional import rope, sinusoidal
from engine.presentation.numbers import amount

IDENTITY = (0, 1, 2)
MOVED = [p for p in shuffle.PERMUTATIONS if p != IDENTITY]


# ---------------------------------------------------------------- shuffle: the model

def test_shuffle_weights_are_seeded_and_not_the_identity():
    assert shuffle.X.shape == (3, 4) and all(W.shape == (4, 4) for W in (shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO))
    for W in (shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO):
        assert not np.allclose(W, np.eye(4))
    from lib.weights import random_weights
    again = random_weights([(3, 4)] + [(4, 4)] * 4, seed=shuffle.SHUFFLE_SEED,
                           scale=[0.5, 2.0, 2.0, 0.6, 0.6], decimals=2)
    assert all(np.array_equal(a, b) for a, b in zip(again, (shuffle.X, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO)))


def test_shuffle_model_matches_lib_attention():
    m = shuffle.shuffle_model((2, 1, 0), add_positions=True, causal=False, scale=False)
    pe = sinusoidal(3, 4)
    before = attention(shuffle.X + pe, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO, causal=False)
    after = attention(shuffle.X[[2, 1, 0]] + pe, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO, causal=False)
    assert np.allclose(m.out_before, before) and np.allclose(m.out_after, after)
    assert m.change[0] == pytest.approx(np.linalg.norm(after[2] - before[0]))
    assert m.new_row == [2, 1, 0]
    scaled = shuffle.shuffle_model((2, 1, 0), add_positions=True, scale=True)
    assert np.allclose(scaled.inputs_before, 2 * shuffle.X + pe)
    unscaled_no_pos = shuffle.shuffle_model((2, 1, 0), add_positions=False, scale=True)
    assert np.allclose(unscaled_no_pos.inputs_before, 2 * shuffle.X)


@pytest.mark.parametrize("order", MOVED)
def test_without_positions_outputs_only_move_rows(order):
    for scale in (False, True):
        m = shuffle.shuffle_model(order, add_positions=False, causal=False, scale=scale)
        assert np.all(m.change < 1e-12)
        for word, row in enumerate(m.new_row):
            assert np.allclose(m.out_after[row], m.out_before[word], atol=1e-12)
        if order[0] != 0:                               # cat moved
            assert f"only its row moved (row 0 \u2192 row {m.new_row[0]})" in m.verdict
        else:
            assert "cat stays at row 0 and its output is identical" in m.verdict
        assert "bag of words" in m.verdict


@pytest.mark.parametrize("order", MOVED)
def test_with_positions_every_reordering_changes_outputs(order):
    m = shuffle.shuffle_model(order, add_positions=True)
    assert np.any(m.change > 0.01)
    moved = [w for w in range(3) if m.new_row[w] != w]
    assert all(m.change[w] > 0.01 for w in moved)
    assert "a word at a new place is a new input" in m.verdict
    if m.change[0] >= 1e-9:
        assert f"cat's output changed by {amount(m.change[0])}" in m.verdict


def test_causal_mask_alone_gives_a_weak_order():
    # Row i averages exactly i + 1 words.
    _, weights = attention(shuffle.X, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO, causal=True, return_weights=True)
    assert list((weights[0] > 0).sum(axis=-1)) == [1, 2, 3]
    # cat stays first: its output is the same; the swapped words change.
    m = shuffle.shuffle_model((0, 2, 1), add_positions=False, causal=True)
    assert m.change[0] < 1e-12 and m.change[1] > 0.01
    assert "cat stays at row 0 and its output is identical" in m.verdict
    assert "the words in rows 0 to i" in m.verdict and "not in which order" in m.verdict
    # Swapping the two words before car leaves car's output as it was: the same set of earlier words.
    m = shuffle.shuffle_model((1, 0, 2), add_positions=False, causal=True)
    assert m.change[2] < 1e-12 and np.all(m.change[:2] > 0)
    m = shuffle.shuffle_model((2, 1, 0), add_positions=False, causal=True)
    assert np.all(m.change > 0)                         # every word sees other words now


def test_identity_order_and_bad_orders_never_raise():
    for flags in itertools.product((False, True), repeat=3):
        m = shuffle.shuffle_model(IDENTITY, *flags)
        assert np.all(m.change == 0) and "unchanged" in m.verdict
    assert shuffle.shuffle_model((0, 0, 1)).order == IDENTITY
    assert amount(0.412) == "0.41" and amount(3e-8) == "3e-08"


# ---------------------------------------------------------------- shuffle: the view

def _table_rows(value):
    """The cells of an HTML table as text, row by row (the header row first)."""
    import html
    import re
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", value)]


def _text(widget_html):
    import html
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", widget_html))


def test_shuffle_view_every_option_and_toggle():
    lab = shuffle.ShuffleLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab" in lab.root._dom_classes and "course-lab-shuffle" in lab.root._dom_classes
    assert "course-verdict" in lab.verdict._dom_classes
    assert "var(--jp-ui-font-color1" in lab.verdict.value
    assert "only its row moved" in _text(lab.verdict.value)       # the default: car dog cat
    assert not hasattr(lab, "scale")                              # the factor has its own lab now
    seen = 0
    for value in [v for _label, v in lab.order.options]:
        lab.order.value = value
        for flags in itertools.product((False, True), repeat=2):
            lab.positions.value, lab.causal.value = flags
            model = shuffle.shuffle_model(value, *flags)
            assert _text(lab.verdict.value) == model.verdict
            assert np.allclose(lab.images[0].get_array(), model.out_before)
            assert np.allclose(lab.images[1].get_array(), model.out_after)
            assert [b.get_height() for b in lab.bars] == pytest.approx(list(model.change))
            header, *rows = _table_rows(lab.numbers.value)
            assert header == ["word: row before \u2192 after", "output before", "output after", "change"]
            for w, row in enumerate(rows):
                after = model.new_row[w]
                assert row[0] == f"{shuffle.WORDS[w]}: row {w} \u2192 {after}"
                assert [float(v) for v in row[1].split()] == pytest.approx(model.out_before[w], abs=0.006)
                assert [float(v) for v in row[2].split()] == pytest.approx(model.out_after[after], abs=0.006)
                assert float(row[3]) == pytest.approx(model.change[w], abs=0.006 + 0.01 * model.change[w])
            assert lab.title_after.get_text() == f"after: {shuffle.sentence(value)}"
            seen += 1
    assert seen == 6 * 4
    assert lab.view.figure is fig and lab.view.renders > renders


def test_shuffle_toggle_changes_the_verdict_and_the_button_shuffles():
    lab = shuffle.ShuffleLab()
    without = _text(lab.verdict.value)
    lab.positions.value = True
    change = shuffle.shuffle_model((2, 1, 0), add_positions=True).change[0]
    assert _text(lab.verdict.value) != without
    assert f"cat's output changed by {change:.2f}" in _text(lab.verdict.value)
    for _ in range(10):
        old = lab.order.value
        lab.shuffle.click()
        assert lab.order.value != old and lab.order.value in shuffle.PERMUTATIONS
        assert lab.model.order == lab.order.value


# ---------------------------------------------------------------- position table

def test_position_table_model_pins_the_figures():
    m = position_table.position_table_model(8, 16, 3)
    assert np.array_equal(m.table, sinusoidal(16, 8))
    assert np.array_equal(m.values, sinusoidal(16, 8)[3])
    assert m.speeds[-1] == pytest.approx(10000 ** (-(8 - 2) / 8))
    assert position_table.position_table_model(4, 16, 1).speeds[-1] == pytest.approx(1 / 100)
    two = position_table.position_table_model(2, 5, 0)
    assert list(two.values) == [0.0, 1.0] and "[sin(pos), cos(pos)]" in two.verdict
    assert position_table.position_table_model(8, 10, 0).table.shape == (10, 8)
    assert "0.001 radians per position, 10000^(\u22126/8)" in m.verdict


@pytest.mark.parametrize("length, said", [(18, "an 18"), (8, "an 8"), (11, "an 11"), (80, "an 80"), (16, "a 16"),
                                          (1, "a 1"), (100, "a 100")])
def test_position_table_verdict_takes_the_article_of_the_table_s_length_as_said(length, said):
    m = position_table.position_table_model(12, length, 0)
    assert m.verdict.startswith(f"Position 0 of {said} \u00d7 12 table")


def test_article_is_an_before_numbers_said_with_a_vowel_first():
    from engine.presentation.numbers import article

    assert [n for n in range(1, 1000) if article(n) == "an"] == [8, 11, 18] + list(range(80, 90)) + list(range(800, 900))
    assert [article(n) for n in (8000, 11000, 18500, 1000, 2048, 81920)] == ["an", "an", "an", "a", "a", "an"]


def test_position_table_model_keeps_settings_meaningful():
    assert position_table.position_table_model(7, 4, 99).d_model == 6           # odd -> even below
    assert position_table.position_table_model(1, 4, 99).d_model == 2
    assert position_table.position_table_model(8, 4, 99).row == 3               # row kept in the table
    assert position_table.position_table_model(8, 0, -1).length == 1


def test_position_table_view_slider_extremes():
    lab = position_table.PositionTableLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab-position-table" in lab.root._dom_classes
    assert lab.d_slider.step == 2 and lab.d_slider.min == 2             # even values only
    for d in (lab.d_slider.min, lab.d_slider.max):
        for length in (lab.length_slider.min, lab.length_slider.max):
            lab.d_slider.value, lab.length_slider.value = d, length
            assert lab.row_slider.max == length - 1
            for row in (lab.row_slider.min, lab.row_slider.max):
                lab.row_slider.value = row
                m = lab.model
                assert (m.d_model, m.length, m.row) == (d, length, row)
                assert lab.image.get_array().shape == (length, d)
                assert np.allclose(lab.image.get_array(), sinusoidal(length, d))
                assert f"PE[{row}] = [" in lab.readout.value
                assert _text(lab.verdict.value) == m.verdict
                fast = lab.fast_hand.get_data()
                assert fast[0][1] == pytest.approx(math.sin(row)) and fast[1][1] == pytest.approx(math.cos(row))
    lab.length_slider.value = 40
    lab.row_slider.value = 39
    lab.length_slider.value = 5                                         # the row follows
    assert lab.row_slider.value == 4 and lab.model.row == 4
    assert lab.view.figure is fig and lab.view.renders > renders


def test_position_table_a_frame_shown_before_is_redrawn_without_a_full_draw():
    """Each frame (the smallest of FRAMES holding the table) is drawn in full the first time it is
    shown; back in it, only the table, its highlight, titles and hands are drawn again, and the
    picture is that of a full draw, the frame's own ticks included."""
    lab = position_table.PositionTableLab(d_model=8, length=16, row=3)      # frame (8, 16)
    seen = {(8, 16)}
    changes = [("d", 2), ("d", 64), ("length", 1), ("d", 8), ("length", 16), ("d", 2), ("d", 30),
               ("d", 64), ("d", 50), ("length", 64), ("length", 3), ("d", 6)]
    for name, value in changes:
        (lab.d_slider if name == "d" else lab.length_slider).value = value
        d, length = lab.model.d_model, lab.model.length
        frame = (position_table.frame(d), position_table.frame(length))
        assert lab.view.last == ("blit" if frame in seen else "full"), (name, value, frame, lab.view.why)
        seen.add(frame)
        assert lab.ax.get_xlim() == (-0.5, frame[0] - 0.5) and lab.ax.get_ylim() == (frame[1] - 0.5, -0.5)
        assert 2 * d >= frame[0] and (2 * length >= frame[1] or length == 1)  # at least half of each side
        shown, full = lab.view.pixels(), lab.view.full_draw_pixels()
        assert shown.shape == full.shape and np.array_equal(shown, full), (name, value)
    assert lab.view.full_draws == 1 + 6                 # the first draw and the six frames new to it


# ---------------------------------------------------------------- rotary positions

def test_rope_model_reproduces_the_worked_scores():
    assert round(rotary.rope_model(5, 2).score, 3) == 0.217
    assert round(rotary.rope_model(15, 12).score, 3) == 0.217
    assert round(rotary.rope_model(8, 2).score, 3) == -0.765
    rng = np.random.default_rng(2026)
    assert np.array_equal(rotary.QUERY, rng.normal(0, 1, 32)) and np.array_equal(rotary.KEY, rng.normal(0, 1, 32))
    m = rotary.rope_model(5, 2)
    assert "score 0.217" in m.verdict and "the same to 12 decimals" in m.verdict


@pytest.mark.parametrize("pairing", ["halves", "neighbours"])
@pytest.mark.parametrize("base", rotary.BASES)
def test_rope_model_score_depends_only_on_distance(pairing, base):
    for m_pos, n_pos in [(0, 0), (5, 2), (2, 5), (rotary.POS_MAX, 0), (0, rotary.POS_MAX), (rotary.POS_MAX, rotary.POS_MAX)]:
        m = rotary.rope_model(m_pos, n_pos, base, pairing, pair=15)
        assert m.spread < 1e-10 and m.lengths_kept
        turned = rope(rotary.QUERY, base, pairing, offset=m_pos)
        i, j = m.indices
        assert m.q_after == pytest.approx((turned[i], turned[j]))
        index = list(m.distances).index(m_pos - n_pos)
        assert m.curve[index] == pytest.approx(m.score)
        assert math.hypot(*m.q_after) == pytest.approx(math.hypot(*m.q_before))
    assert rotary.pair_indices(3, 32, "halves") == (3, 19) and rotary.pair_indices(3, 32, "neighbours") == (6, 7)


def test_rope_model_never_raises_outside_the_range():
    m = rotary.rope_model(-5, 99, 10000.0, "sideways", 99)
    assert (m.query_pos, m.key_pos, m.pairing, m.pair) == (0, rotary.POS_MAX, "halves", 15)


def test_rotary_view_every_control():
    lab = rotary.RotaryLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab-rotary" in lab.root._dom_classes
    for pairing in [v for _label, v in lab.pairing.options]:
        lab.pairing.value = pairing
        for base in [v for _label, v in lab.base_slider.options]:
            lab.base_slider.value = base
            for slider in (lab.q_slider, lab.k_slider, lab.pair_slider):
                for value in (slider.min, slider.max):
                    slider.value = value
                    m = lab.model
                    expected = rotary.rope_model(lab.q_slider.value, lab.k_slider.value, base, pairing,
                                            lab.pair_slider.value)
                    assert m.score == pytest.approx(expected.score)
                    assert _text(lab.verdict.value) == expected.verdict
                    assert list(lab.marker.get_data()[1]) == pytest.approx([m.score])
    assert lab.view.figure is fig and lab.view.renders > renders


def test_rotary_both_buttons_keep_the_score():
    lab = rotary.RotaryLab(query_pos=5, key_pos=2)
    score = lab.model.score
    for _ in range(10):
        lab.up.click()
    assert (lab.q_slider.value, lab.k_slider.value) == (15, 12)
    assert lab.model.score == pytest.approx(score, abs=1e-12)
    assert "score 0.217" in _text(lab.verdict.value)
    for _ in range(20):                                  # stops at position 0, never raises
        lab.down.click()
    assert (lab.q_slider.value, lab.k_slider.value) == (3, 0)
    assert lab.model.score == pytest.approx(score, abs=1e-12)
    lab.q_slider.value = rotary.POS_MAX
    lab.up.click()                                        # would leave the range: nothing moves
    assert lab.q_slider.value == rotary.POS_MAX


def test_rotary_both_buttons_are_disabled_at_the_ends_with_the_reason():
    lab = rotary.RotaryLab(query_pos=rotary.POS_MAX - 1, key_pos=3)
    assert not lab.up.disabled
    lab.up.click()
    assert lab.q_slider.value == rotary.POS_MAX and lab.k_slider.value == 4
    assert lab.up.disabled and f"last position, {rotary.POS_MAX}" in lab.up.tooltip
    assert not lab.down.disabled
    lab.q_slider.value, lab.k_slider.value = 5, 0
    assert lab.down.disabled and "position 0" in lab.down.tooltip and not lab.up.disabled


# ---------------------------------------------------------------- the scale factor

def test_shuffle_model_keeps_its_scale_argument_for_saved_notebooks():
    import inspect
    assert "scale" in inspect.signature(shuffle.shuffle_model).parameters
    scaled = shuffle.shuffle_model((2, 1, 0), add_positions=True, scale=True)
    assert np.allclose(scaled.inputs_before, 2 * shuffle.X + sinusoidal(3, 4))


def test_scaling_model_matches_lib_attention():
    pe = sinusoidal(3, 4)
    m = scaling.scaling_model(2.0)
    words = 2.0 * shuffle.X
    assert m.word_share == pytest.approx((words ** 2).sum() / ((words ** 2).sum() + (pe ** 2).sum()))
    before = attention(words + pe, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO, causal=False)
    length = np.linalg.norm(before, axis=-1).mean()
    by_word, by_place = [], []
    for order in MOVED:
        after = attention(2.0 * shuffle.X[list(order)] + pe, shuffle.WQ, shuffle.WK, shuffle.WV, shuffle.WO,
                          causal=False)
        rows = [order.index(w) for w in range(3)]
        by_word.append(np.linalg.norm(after[rows] - before, axis=-1).mean() / length)
        by_place.append(np.linalg.norm(after - before, axis=-1).mean() / length)
    assert m.by_word == pytest.approx(np.mean(by_word)) and m.by_place == pytest.approx(np.mean(by_place))


def test_scaling_the_words_up_makes_the_outputs_follow_the_words():
    curves = [scaling.scaling_model(f) for f in scaling.FACTORS]
    shares = [m.word_share for m in curves]
    by_word = [m.by_word for m in curves]
    by_place = [m.by_place for m in curves]
    assert all(a < b for a, b in zip(shares, shares[1:]))                 # the word's share grows
    assert all(a < b for a, b in zip(by_place, by_place[1:]))             # a fixed place changes more
    from_one = [w for f, w in zip(scaling.FACTORS, by_word) if f >= 1]
    assert all(a > b for a, b in zip(from_one, from_one[1:]))             # a word moves less, from x1 on
    assert curves[0].follows == "positions" and curves[-1].follows == "words"
    assert "follow the positions" in curves[0].verdict and "follow the words" in curves[-1].verdict
    usual = scaling.scaling_model(scaling.USUAL)
    assert 0.4 < usual.word_share < 0.6 and "= \u221ad_model" in usual.verdict
    assert np.allclose(usual.share_curve, shares) and np.allclose(usual.by_word_curve, by_word)


def test_scaling_model_never_raises_for_odd_factors():
    for factor, expected in [(-1, scaling.USUAL), ("x", scaling.USUAL), (float("nan"), scaling.USUAL),
                             (1e9, scaling.FACTORS[-1]), (1e-9, scaling.FACTORS[0])]:
        m = scaling.scaling_model(factor)
        assert m.factor == expected and m.finite
    broken = scaling.scaling_model(2.0, table=lambda length, d: np.full((length, d), np.inf))
    assert not broken.finite and "overflowed" in broken.verdict


def test_scaling_view_every_factor():
    lab = scaling.ScalingLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert {"course-lab", "course-lab-scaling"} <= set(lab.root._dom_classes)
    assert lab.factor.value == scaling.USUAL
    assert [label for label, _v in lab.factor.options][3] == "\u00d72 = \u221ad_model"
    for factor in scaling.FACTORS:
        lab.factor.value = factor
        m = scaling.scaling_model(factor)
        assert _text(lab.verdict.value) == m.verdict
        assert list(lab.moved_marker.get_data()[1]) == pytest.approx([100 * m.by_word, 100 * m.by_place])
        assert list(lab.share_marker.get_data()[0]) == pytest.approx([math.log2(factor)] * 2)
        assert list(lab.word_line.get_ydata()) == pytest.approx(list(100 * m.by_word_curve))
    assert lab.view.figure is fig and lab.view.renders > renders


def test_the_rotary_verdict_counts_the_places_a_distance_has_and_says_when_there_is_none():
    from labs.positional.rotary import POS_MAX, rope_model
    lone = rope_model(0, POS_MAX)
    assert lone.places == 1 and "has no other place in the lab's range, 0 to 31" in lone.verdict
    assert "Moved together" not in lone.verdict
    m = rope_model(5, 2)
    assert m.places == POS_MAX + 1 - 3 == len(m.together)
    assert f"Moved together to any of the {m.places} places this distance has" in m.verdict


def test_the_scaling_verdict_says_neither_alone_when_both_move_by_more_than_half():
    from labs.positional import scaling_model
    for factor in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
        m = scaling_model(factor)
        neither = min(m.by_word, m.by_place) > 0.5
        assert ("follow neither the words nor the positions alone" in m.verdict) == neither, factor
    assert "neither" in scaling_model(2.0).verdict and "neither" in scaling_model(1.0).verdict
