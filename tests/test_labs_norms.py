"""The labs of notebook 03: models against lib/, views driven over every control."""

import itertools
import re
import warnings

import numpy as np
import pytest

from labs import norms
from labs.norms.placement import PLACEMENT_DEPTH, PlacementLab, placement_model
from labs.norms.residual_stream import ResidualStreamLab, stream_model
from labs.norms.stack import DTYPES, GAIN_MAX, GAIN_MIN, LAYERS_MAX, SQRT_D, StackLab, stack_model
from labs.norms.training_curves import curves_model
from labs.norms.which_axis import AXIS_MODES, BATCH, CHANGED, TOKENS, AxisLab, axis_model, axis_table
from lib.block import norm_placement_experiment
from lib.norm import layer_norm, root_mean_square
from lib.stack import MODES, random_rotations, residual_stream, run_stack, start_vector


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- stack lab: model

EXPECTED = {  # (mode, gain) at 64 layers in float64 -> status
    ("plain", GAIN_MIN): "vanished", ("plain", GAIN_MAX): "exploded", ("plain", 1.0): "steady",
    ("residual", GAIN_MIN): "grows", ("residual", GAIN_MAX): "exploded",
    ("post-layer", GAIN_MIN): "steady-sqrt8", ("post-layer", GAIN_MAX): "steady-sqrt8",
    ("post-rms", GAIN_MIN): "steady-sqrt8", ("post-rms", GAIN_MAX): "steady-sqrt8",
    ("pre-layer", GAIN_MIN): "slow-growth", ("pre-layer", GAIN_MAX): "slow-growth",
    ("pre-rms", GAIN_MIN): "slow-growth", ("pre-rms", GAIN_MAX): "slow-growth",
}


@pytest.mark.parametrize("mode,gain", sorted(EXPECTED))
def test_stack_model_verdicts(mode, gain):
    m = stack_model(mode, gain, LAYERS_MAX)
    assert m.status == EXPECTED[mode, gain], m.verdict
    assert np.allclose(m.lengths, run_stack(start_vector(8, seed=50_000), random_rotations(64, 8, seed=0),
                                               gain, mode).lengths, equal_nan=True)


def test_stack_model_numbers_in_the_verdict():
    m = stack_model("post-layer", 1.3, 30)
    assert "2.83" in m.verdict and np.allclose(m.lengths[1:], SQRT_D, rtol=1e-5)
    m = stack_model("plain", 0.5, 30)
    assert "\u00d70.50 per layer" in m.verdict and m.final == pytest.approx(m.start * 0.5 ** 30)
    m = stack_model("pre-layer", 1.0, 64)
    size = m.steps.mean()
    assert m.verdict.startswith("Grows slowly: every layer adds a change of the same length (2.83)")
    assert f"far below {m.start:.2f} + 64 \u00d7 2.83 = {m.start + 64 * size:.2f}" in m.verdict
    assert m.final < m.start + 64 * size / 4


def test_layer_after_layer_only_when_every_layer_moves_the_same_way():
    """'Grows layer after layer' only when no layer left the vector shorter; otherwise the verdict
    says 'overall' and counts the layers that went the other way."""
    seen = set()
    for gain in (0.5, 0.8, 1.0, 1.3):
        for layers in (5, 12, 30, LAYERS_MAX):
            m = stack_model("residual", gain, layers)
            if m.status not in ("grows", "shrinks"):
                continue
            ratios = np.asarray(m.lengths[1:]) / np.asarray(m.lengths[:-1])
            against = int((ratios < 1).sum()) if m.status == "grows" else int((ratios > 1).sum())
            if against == 0:
                assert "layer after layer" in m.verdict, m.verdict
            else:
                assert "layer after layer" not in m.verdict and " overall, though " in m.verdict
                assert f"{against} layer{'s' if against != 1 else ''} of {layers} left it" in m.verdict
            seen.add(against == 0)
    assert seen == {True, False}                                      # both kinds of sentence are reached


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("gain", [GAIN_MIN, GAIN_MAX])
def test_stack_model_gain_extremes_at_depth_64(mode, dtype, gain):
    m = stack_model(mode, gain, LAYERS_MAX, dtype)
    assert m.verdict and "Traceback" not in m.verdict
    if m.overflow_at is not None:
        assert m.status == "overflow"
        assert f"Overflowed at layer {m.overflow_at}" in m.verdict


def test_float16_overflow_is_reported_with_its_layer():
    for mode in ("plain", "residual"):
        m = stack_model(mode, GAIN_MAX, LAYERS_MAX, "float16")
        assert m.status == "overflow" and 5 < m.overflow_at < 40
        assert m.verdict.startswith(f"Overflowed at layer {m.overflow_at}")
    m = stack_model("plain", GAIN_MIN, LAYERS_MAX, "float16")
    assert m.status == "vanished" and "exactly 0" in m.verdict


def test_stack_model_odd_inputs_never_raise():
    for args in [("nonsense", 1.0, 10), ("plain", 1e300, 64), ("residual", float("inf"), 64),
                 ("pre-rms", float("nan"), 64), ("plain", 1.0, 0), ("plain", 1.0, 500)]:
        assert stack_model(*args).verdict


# ---------------------------------------------------------------- stack lab: view

def test_stack_view_over_every_control():
    lab = StackLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab" in lab.root._dom_classes and "course-lab-stack" in lab.root._dom_classes
    assert "course-verdict" in lab.verdict._dom_classes
    for mode, dtype in itertools.product(MODES, DTYPES):
        lab.mode.value, lab.dtype.value = mode, dtype
        for gain, layers in itertools.product((GAIN_MIN, 1.0, GAIN_MAX), (1, LAYERS_MAX)):
            lab.gain.value, lab.layers.value = gain, layers
            m = stack_model(mode, gain, layers, dtype, lab.seed)
            assert lab.model.status == m.status
            assert lab.verdict.value.endswith("</div>") and lab.model.verdict[:30] in lab.verdict.value
            assert len(lab.line.get_xdata()) == layers + 1
            if m.overflow_at:
                assert lab.stop.get_visible() and "overflow" in lab.stop_text.get_text()
    assert lab.view.figure is fig and lab.view.renders > renders + 50


def test_stack_new_random_layers_button():
    lab = StackLab(mode="pre-layer", gain=1.0, layers=64)
    before = lab.model.lengths.copy()
    lab.button.click()
    assert lab.seed == 1 and not np.allclose(before, lab.model.lengths)
    assert lab.model.status == "slow-growth"


def test_stack_first_slider_changes_the_picture():
    lab = StackLab()
    image = lab.view.image.value
    lab.gain.value = lab.gain.value + lab.gain.step
    assert lab.view.image.value != image


# ---------------------------------------------------------------- which axis

def test_axis_model_right_and_wrong():
    for value in (-4.0, 0.0, 2.0, 4.0):
        right = axis_model(value, "token")
        assert np.allclose(right.out, layer_norm(right.x))
        assert np.allclose(right.means, 0, atol=1e-9) and np.allclose(right.stds, 1, atol=1e-4)
        assert right.moved_others < 1e-12
        wrong = axis_model(value, "column")
        assert np.allclose(wrong.out, layer_norm(wrong.x.T).T)
        assert np.allclose(wrong.out.mean(axis=0), 0, atol=1e-9)
        if value != BATCH[CHANGED]:
            assert wrong.moved_others > 0.05 and "OTHER" in wrong.verdict
            assert "0.00" in right.verdict and "nothing else" in right.verdict
    assert "as it starts" in axis_model(float(BATCH[CHANGED]), "token").verdict
    assert axis_model(float("nan"), "bogus").how == "token"


def test_axis_view_over_every_control():
    lab = AxisLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab-axis" in lab.root._dom_classes
    for how in AXIS_MODES:
        lab.how.value = how
        for value in (lab.value.min, lab.value.max):
            lab.value.value = value
            m = axis_model(value, how)
            assert np.allclose(lab.images[1].get_array(), m.out)
            header, *rows = table_rows(lab.numbers.value)
            assert header == ["token", "in", "out", "out's mean, std"]
            assert [r[0] for r in rows] == list(TOKENS)
            assert rows[0][3].split(", ")[0] == f"{m.means[0] + 0.0:.2f}"
            assert rows[2][3].split(", ")[1] == f"{m.stds[2]:.2f}"
            assert rows[CHANGED[0]][1].split()[CHANGED[1]] == f"{value:.1f}"
            assert [float(v) for v in rows[3][2].split()] == pytest.approx(m.out[3], abs=0.006)
            assert html_text(lab.verdict.value) == m.verdict
    assert lab.view.figure is fig and lab.view.renders == renders + 5   # the first toggle value is the start
    assert len(TOKENS) == BATCH.shape[0]


def table_rows(value):
    """The cells of an HTML table as text, row by row (the header row first)."""
    import html
    import re
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", value)]


def html_text(value):
    import html
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", value))


# ---------------------------------------------------------------- pre-norm vs post-norm

def test_placement_model_against_lib():
    traces = norm_placement_experiment(depth=64, seed=1)
    m = placement_model(48, seed=1)
    assert np.allclose(m.pre.sizes, traces["pre"].sizes[:49])
    assert m.pre.factor == pytest.approx(traces["pre"].gaps[48] / traces["pre"].gaps[0])
    assert np.allclose(m.post.sizes[1:], 1.0, atol=1e-3)
    assert m.pre.factor > 3 and m.post.factor < 0.3          # direction and rough size
    assert 0.5 * np.sqrt(48) < m.pre.size < 2 * np.sqrt(48)
    assert "amplified" in m.verdict and "shrunk" in m.verdict


@pytest.mark.parametrize("seed", range(1, 6))
def test_placement_direction_holds_for_other_setups(seed):
    m = placement_model(48, seed)
    assert m.pre.factor > 1 > m.post.factor


def test_placement_view_over_every_control():
    lab = PlacementLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab-placement" in lab.root._dom_classes
    for depth in (1, 2, 64, 48):
        lab.depth.value = depth
        assert len(lab.lines["pre"][0].get_xdata()) == depth + 1
        assert html_text(lab.verdict.value) == placement_model(depth, lab.seed).verdict
    lab.button.click()
    assert lab.seed == 101 and html_text(lab.verdict.value) == placement_model(48, 101).verdict
    assert lab.view.figure is fig and lab.view.renders == renders + 5


def test_placement_new_blocks_share_no_block_with_the_stack_before():
    from lib.block import random_stack
    lab = PlacementLab()
    seeds = [lab.seed]
    for _ in range(3):
        lab.button.click()
        seeds.append(lab.seed)
    stacks = [random_stack(PLACEMENT_DEPTH, seed=s) for s in seeds]
    for before, after in zip(stacks, stacks[1:]):
        assert not any(np.array_equal(a.Wq, b.Wq) for a in before for b in after)
    # every draw of a setup (input s, blocks s + 1 to s + 64, nudge s + 65) is its own
    draws = [set(range(s, s + PLACEMENT_DEPTH + 2)) for s in seeds]
    assert all(not (a & b) for a, b in zip(draws, draws[1:]))
    traces = [placement_model(48, s) for s in seeds]
    assert all(t.verdict != u.verdict for t, u in zip(traces, traces[1:]))


# ---------------------------------------------------------------- residual stream

def test_stream_model():
    m = stream_model(12)
    r = residual_stream(12, seed=0)
    assert np.allclose(m.sizes, r.sizes) and np.allclose(m.shares, r.shares)
    assert f"{r.sizes[-1]:.2f}" in m.verdict and "12.90" in m.verdict
    assert f"{r.shares[0]:.0%}" in m.verdict and f"block 12's {r.shares[-1]:.0%}" in m.verdict
    assert stream_model(1).verdict and stream_model(24, 1.0).final == pytest.approx(24.9)
    assert root_mean_square(np.ones(4)) == 1.0


def test_stream_view_over_every_control():
    lab = ResidualStreamLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert "course-lab-stream" in lab.root._dom_classes
    for blocks, alignment in itertools.product((1, 24), (0.0, 1.0)):
        lab.blocks.value, lab.alignment.value = blocks, alignment
        m = stream_model(blocks, alignment, lab.seed)
        assert np.allclose(lab.line.get_ydata(), m.sizes)
        assert np.array_equal(lab.bars.heights, m.additions) and np.array_equal(lab.share_bars.heights, m.shares)
        tops = [path.vertices[:4, 1].max() for path in lab.bars.artist.get_paths()]   # one shape per block
        assert len(tops) == blocks and np.allclose(tops, m.additions)
        assert html_text(lab.verdict.value) == m.verdict
    lab.button.click()
    assert lab.seed == 1
    assert lab.view.figure is fig and lab.view.renders > renders + 4


def test_lab_functions_return_root_widgets():
    for make, name in ((norms.stack_lab, "stack"), (norms.axis_lab, "axis"),
                       (norms.placement_lab, "placement"), (norms.stream_lab, "stream"),
                       (norms.curves_lab, "training-curves")):
        root = make()
        assert f"course-lab-{name}" in root._dom_classes


# ---------------------------------------------------------------- verdicts that hold at every setting

def test_the_right_angle_law_is_dotted_and_the_aligned_total_dashed():
    stream = ResidualStreamLab()
    assert stream.law.get_linestyle() == ":" and stream.aligned.get_linestyle() == "--"
    import json
    from pathlib import Path
    nb = Path(__file__).resolve().parents[1] / "content" / "03_norms_and_residuals.ipynb"
    text = " ".join("".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]).split()
    text = " ".join(text)
    assert ("the dashed line is what the stream would be if every addition pointed the same way, the dotted one "
            "what it is when every addition is at right angles to the stream" in text)
    assert "simply add, which is the dashed line" in text


def test_the_stack_lab_leaves_the_square_root_law_to_the_stream_question():
    """The stack lab comes before the question why the stream grows far less than its additions
    (norms-predict-stream-sum): no verdict, legend or line of it names a law, a square root of
    the depth or right angles, at any scale, depth or draw; a single draw of 8 numbers scatters
    widely around the law, so none of them judges it."""
    lab = StackLab()
    labels = [t.get_text() for t in lab.ax.get_legend().get_texts()]
    assert not any("law" in label for label in labels), labels
    for mode, gain, layers, seed in itertools.product(("pre-layer", "pre-rms"), (GAIN_MIN, 0.5, 1.0, 2.0),
                                                      (8, 30, 64), (0, 1, 2)):
        verdict = stack_model(mode, gain, layers, seed=seed).verdict
        for word in ("law", "right angle", "\u221a(", "\u221adepth", "square"):
            assert word not in verdict, verdict


def test_stack_note_off_the_chart_stays_inside_the_axes_at_every_width():
    """The note that marks a curve leaving the chart is drawn inside the axes, clear of the tick
    labels, on a wide screen and on a phone."""
    lab = StackLab()
    seen = 0
    for width in (640, 390):
        lab.view.fit(width)
        for mode, gain, layers, dtype in itertools.product(("plain", "residual"), (GAIN_MIN, 0.6, 1.5, GAIN_MAX),
                                                           (10, 17, 18, 30, 33, 64), DTYPES):
            lab.mode.value, lab.gain.value, lab.layers.value, lab.dtype.value = mode, gain, layers, dtype
            if not lab.edge_text.get_text():
                continue
            seen += 1
            renderer = lab.view.figure.canvas.get_renderer()
            box, axes = lab.edge_text.get_window_extent(renderer), lab.ax.get_window_extent(renderer)
            assert axes.x0 <= box.x0 and box.x1 <= axes.x1, (width, mode, gain, layers, dtype)
    assert seen > 20


def test_stack_grid_lines_are_ten_times_apart_in_every_mode_and_the_curve_off_the_chart_is_marked():
    """The notebook says each grid line is ten times the one below: it holds at every setting."""
    lab = StackLab()
    for mode, gain, dtype in itertools.product(MODES, (GAIN_MIN, 1.0, GAIN_MAX), DTYPES):
        lab.mode.value, lab.gain.value, lab.dtype.value = mode, gain, dtype
        ticks = lab.ax.get_yticks()
        low, high = lab.ax.get_ylim()
        shown = ticks[(ticks >= low) & (ticks <= high)]
        assert len(shown) >= 3 and np.allclose(shown[1:] / shown[:-1], 10), (mode, gain)
        assert all(g for g in lab.ax.yaxis.get_gridlines()) and lab.ax.yaxis.get_minor_locator().tick_values(1, 10) == []
        lengths = lab.model.lengths
        outside = np.isfinite(lengths) & (lengths > 0) & ((lengths > high) | (lengths < low))
        if outside.any():
            first = int(np.argmax(outside))
            assert f"from layer {first}" in lab.edge_text.get_text()
        else:
            assert lab.edge_text.get_text() == ""


def test_placement_compares_the_two_nudges_in_words_that_fit_the_numbers():
    """One way of writing a ratio at every depth: three significant digits, a whole number from
    1,000 (never 303.29 beside 6,602)."""
    from labs.norms.placement import times

    for depth in range(1, 65):
        m = placement_model(depth)
        text = m.verdict
        assert not re.search(r"\b[01] times", text), text
        ratio = m.pre.factor / m.post.factor
        apart = max(ratio, 1 / ratio)
        if apart < 1.05:
            assert "about the same" in text
        else:
            assert f"{times(apart)} times as large" in text
            digits = re.search(r"norm's ([\d,.]+) times", text).group(1).replace(",", "").replace(".", "").lstrip("0")
            assert len(digits) <= 3 or "." not in re.search(r"norm's ([\d,.]+) times", text).group(1)
        assert text.startswith(f"After {depth} block{'s' if depth > 1 else ''}:")


def test_block_axes_are_ticked_in_whole_blocks_at_every_depth():
    placement, stream = PlacementLab(), ResidualStreamLab()
    for depth in (1, 2, 3, 5, 24, 64):
        placement.depth.value = depth
        stream.blocks.value = min(depth, 24)
        for ax in (placement.left, placement.right, stream.left, stream.right):
            ticks = ax.get_xticks()
            assert np.all(ticks == np.round(ticks)), ticks
            assert all("." not in t.get_text() for t in ax.get_xticklabels())


def test_fixed_decimals_never_show_a_negative_zero():
    from engine.presentation.numbers import fixed
    assert [fixed(v) for v in (-1e-17, -0.004, 0.0, 1.5, -0.14)] == ["0.00", "0.00", "0.00", "1.50", "-0.14"]
    assert fixed(-1e-17, signed=True) == "+0.00" and fixed(-0.04, 1) == "0.0"


def test_axis_table_shows_no_negative_zero_at_any_setting():
    for how in ("token", "column"):
        for value in np.arange(-4.0, 4.5, 0.5):
            cells = " ".join(" ".join(row) for row in table_rows(axis_table(axis_model(value, how))))
            assert "-0.00" not in cells.replace(",", " ").split()


# ---------------------------------------------------------------- the loss curves of the training runs

def test_the_curves_are_the_stored_runs_of_each_placement_at_the_depth_and_warm_up_picked():
    from lib.placement_runs import runs

    r = runs()
    for depth in (2, 6, 12):
        for warmup in (False, True):
            m = curves_model(depth, warmup)
            assert m.depth == depth and m.warmup == {"pre": warmup, "post": warmup, "damped": False, "rezero": False}
            for variant, curves in m.curves.items():
                assert len(curves) == 3
                for seed, curve in zip((1, 2, 3), curves):
                    assert np.array_equal(curve, r.curves[r.index(variant, m.warmup[variant], depth, seed)], equal_nan=True)
    assert curves_model(7).depth == 6 and curves_model(100).depth == 12      # the nearest depth run


def test_the_curves_verdict_counts_what_the_curves_show():
    """12 blocks without warm-up: post-norm learned in 1 seed and stalled in 2 (its two stalled
    curves still above the bigram loss over their last 50 steps); with warm-up every run learned."""
    from lib.placement_runs import runs

    bigram = runs().bigram_loss
    m = curves_model(12, False)
    assert m.outcomes["post"].count("stalled") == 2 and m.outcomes["pre"] == ["learned"] * 3
    stalled = [c for c, o in zip(m.curves["post"], m.outcomes["post"]) if o == "stalled"]
    assert all(np.mean(c[-5:]) > bigram for c in stalled) and m.steps[-1] - m.steps[-6] == 50
    assert "post-norm 1 learned, 2 stalled" in m.verdict and "pre-norm 3 learned" in m.verdict
    assert "the mean loss of its last 50 steps is below the bigram loss (1.94)" in m.verdict
    warm = curves_model(12, True)
    assert all(o == "learned" for found in warm.outcomes.values() for o in found)
    assert "without warm-up only" in warm.verdict and "without warm-up only" not in m.verdict
    for variant, steps in m.below.items():                 # a stalled seed never got below the mark
        assert [s is None for s in steps] == [o == "stalled" for o in m.outcomes[variant]]


def test_the_curves_view_redraws_in_place_at_every_setting():
    from labs.norms.training_curves import Y_TOP, CurvesLab

    lab = CurvesLab()
    fig, renders = lab.view.figure, lab.view.renders
    for depth in (2, 6, 12):
        for warmup in (True, False):
            lab.depth.value, lab.warmup.value = depth, warmup
            m = curves_model(depth, warmup)
            assert html_text(lab.verdict.value) == m.verdict
            for variant, lines in lab.lines.items():
                for line, curve in zip(lines, m.curves[variant]):
                    assert np.array_equal(line.get_ydata(), np.minimum(curve, Y_TOP))
            assert lab.title.get_text() == f"{depth} blocks, " + ("warm-up" if warmup else "no warm-up")
    assert lab.view.figure is fig and lab.view.renders > renders + 5
    assert "first step below the bigram loss" in lab.numbers.value and "never" in lab.numbers.value


def test_the_stack_lab_s_off_the_chart_note_lies_off_the_curve_on_a_desktop_and_a_phone():
    """The note saying where the curve left the chart is placed across from where it left: none of
    the curve's points lies under it, whether the curve leaves early or late, on either size."""
    from labs.norms.stack import StackLab

    lab = StackLab()
    for size in ((1000, None, 1.0), (262, 600, 3.0)):
        lab.view.fit(*size)
        for layers, gain, mode in ((30, 0.5, "plain"), (58, 0.5, "plain"), (58, 2.0, "residual"), (20, 0.3, "plain")):
            lab.mode.value, lab.gain.value, lab.layers.value = mode, gain, layers
            renderer = lab.view.figure.canvas.get_renderer()
            note = lab.edge_text.get_window_extent(renderer)
            assert lab.edge_text.get_text(), (mode, layers)
            points = lab.line.get_transform().transform(np.column_stack(lab.line.get_data()))
            inside = [p for p in points if np.all(np.isfinite(p)) and note.contains(*p)]
            assert inside == [], (size, mode, layers, gain)
