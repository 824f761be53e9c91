"""Labs whose verdict, table or figure once disagreed with the notebook or with the plot, each
driven to the very setting where it did (headless, no kernel, no browser)."""

from __future__ import annotations

import numpy as np
import pytest


def _renderer(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


# ---------------------------------------------------------------- 02: hidden units

def test_a_slider_value_a_rounding_away_from_a_token_counts_the_units_the_notebook_counts():
    """The slider hands the kernel 2.000000000000001 for cat's 2: the units the notebook computes
    as exactly 0 stay off, and the batch and alone outputs are exactly the same, as it says."""
    from labs.ffn.hidden_units import EXAMPLE, TOKENS, hidden_units_model
    from lib.ffn import hidden_units

    for name, row in zip(TOKENS, EXAMPLE.X):
        exact_pre = hidden_units(row.astype(float), EXAMPLE.W_up, EXAMPLE.b_up)
        for nudged in (np.nextafter(row.astype(float), np.inf), np.nextafter(row.astype(float), -np.inf)):
            m = hidden_units_model(float(nudged[0]), float(nudged[1]), alone=True)
            assert m.name == name
            assert m.units_on == [int(i) + 1 for i in np.flatnonzero(exact_pre > 0)], m.verdict
            assert m.difference == 0.0 and "exactly the same" in m.verdict, m.verdict
    cat = hidden_units_model(2.000000000000001, 0.0)
    assert "2 of 4 units are on (units 1 and 3)" in cat.verdict


# ---------------------------------------------------------------- 01: rotary

def test_the_rotary_verdict_keeps_the_sign_of_the_distance():
    from labs.positional.rotary import rope_model

    ahead, behind = rope_model(query_pos=5, key_pos=2), rope_model(query_pos=0, key_pos=3)
    assert "the key 3 positions before the query (m \u2212 n = 3)" in ahead.verdict
    assert "the key 3 positions after the query (m \u2212 n = \u22123)" in behind.verdict
    assert ahead.distance == 3 and behind.distance == -3
    assert not np.isclose(ahead.score, behind.score)      # why the sign must be said
    assert "m \u2212 n = 0" in rope_model(query_pos=4, key_pos=4).verdict


# ---------------------------------------------------------------- 01: position table

def test_the_position_table_fills_its_frame_at_every_size():
    """The heatmap's frame fits the table: at least half of each side (length 1: a quarter), so
    the table never opens as a speck in a 64 x 64 frame."""
    from labs.positional.table import D_MAX, LENGTH_MAX, PositionTableLab

    lab = PositionTableLab()
    for d, length in [(lab.d_slider.value, lab.length_slider.value), (2, 1), (8, 16), (10, 17), (64, 64),
                      (34, 3), (D_MAX, 2), (4, LENGTH_MAX)]:
        lab.d_slider.value, lab.length_slider.value = d, length
        d, length = lab.model.d_model, lab.model.length
        left, right = lab.ax.get_xlim()
        bottom, top = lab.ax.get_ylim()
        columns, rows = right - left, bottom - top
        assert columns >= d and rows >= length
        assert d / columns >= 0.5 and length / rows >= (0.25 if length == 1 else 0.5), (d, length)


# ---------------------------------------------------------------- 01: shuffle

def test_shuffle_always_changes_the_order_and_never_returns_the_sentence_as_written():
    from labs.positional.shuffle import PERMUTATIONS, ShuffleLab, shuffled

    rng = np.random.default_rng(0)
    written = tuple(range(len(PERMUTATIONS[0])))
    for order in PERMUTATIONS:
        for _ in range(40):
            new = shuffled(order, rng)
            assert new != order and new != written
    lab = ShuffleLab()
    for _ in range(20):
        before = lab.order.value
        lab._on_shuffle()
        assert lab.order.value not in (before, written)


def test_the_shuffle_labs_row_label_clears_every_row_text():
    from labs.positional.shuffle import ShuffleLab

    lab = ShuffleLab()
    renderer = _renderer(lab.view.figure)
    for ax, texts in zip((lab.ax_before, lab.ax_after), lab.row_labels):
        label = ax.yaxis.label.get_window_extent(renderer)
        for text in texts:
            assert not label.overlaps(text.get_window_extent(renderer)), text.get_text()


# ---------------------------------------------------------------- legends and lines over labels

def test_the_temperature_labels_stay_clear_of_the_even_split_line_and_the_legend():
    from labs.start.temperature import T_MAX, T_MIN, TemperatureLab

    lab = TemperatureLab()
    for t in (T_MIN, 0.5, 1.0, 2.0, 3.0, 5.0, T_MAX):
        lab.slider.value = t
        renderer = _renderer(lab.view.figure)
        even = lab.ax.transData.transform((0, lab.model.even_share))[1]
        legend = lab.ax.get_legend().get_window_extent(renderer)
        for text in lab.labels:
            box = text.get_window_extent(renderer)
            assert not (box.y0 - 1 <= even <= box.y1 + 1), (t, text.get_text())
            assert not box.overlaps(legend), (t, text.get_text())


def test_the_ablation_legend_runs_through_no_bar_and_no_mark():
    from labs.trained.ablation import AblationLab

    lab = AblationLab()
    lab.blocks[0].value = False                   # block 1 off: bars above the chart, with marks
    renderer = _renderer(lab.view.figure)
    legend = lab.kinds.ax.get_legend().get_window_extent(renderer)
    assert any(t.get_text() for t in lab.kinds.over)
    for text in lab.kinds.over:
        if text.get_text():
            assert not legend.overlaps(text.get_window_extent(renderer))
    boxes = lab.kinds.full.boxes() + lab.kinds.now.boxes()
    assert len(boxes) == 2 * len(lab.kinds.over)                 # a box for each bar
    for box in boxes:
        assert not legend.overlaps(box)
    title = lab.kinds.ax.title.get_window_extent(renderer)
    assert not legend.overlaps(title)
