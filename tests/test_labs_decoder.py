"""The labs of notebook 04: models against lib/, views driven over every control."""

import html
import itertools
import re
import warnings

import matplotlib.colors
import numpy as np
import pytest

from labs.decoder import calculator_lab, flow_lab, six_steps_lab
from labs.decoder.calculator import BYTES, CalculatorLab, calculator_model, memory_rows
from labs.decoder.layer_flow import (DEPTH_MAX, PARTS, WITHOUT, WORDS, FlowLab, block_shapes, flow_inputs, flow_model,
                                     similarity)
from labs.decoder.near_identity import c_rand, near_identity_model, rand_demonstration, relative_changes
from labs.decoder.six_steps import N_STEPS, STEP_EXPLAINED, SixStepsLab, six_steps_model
from labs.decoder.models import (COURSE_EXAMPLE, REAL_MODELS, TRAINED_MODEL, Preset, presets, trained_preset,
                                  trained_stored)
from lib.attention import attention, causal_mask
from lib.block import block_steps, decoder, random_block_weights, random_stack, six_step_setup, six_steps
from lib.ffn import ffn
from lib.norm import rms_norm, root_mean_square
from lib.params import ModelConfig, count_parameters, kv_cache_per_token, mebibytes, training_memory
from engine.presentation.numbers import amount, percentage, size


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def table_rows(value):
    """The cells of the HTML tables in ``value`` as text, row by row (header rows included)."""
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", value)]


def text_of(value):
    return html.unescape(re.sub(r"<[^>]+>", "", value))


# ---------------------------------------------------------------- six steps

def test_six_steps_model_reproduces_the_worked_example():
    m = six_steps_model(6)
    assert [round(float(s), 2) for s in m.sizes] == [0.74, 1.00, 0.95, 1.41, 1.00, 1.21, 2.05]
    assert np.allclose(np.round(m.grids[6][0], 2), [0.12, -0.58, -2.73, -1.31])
    assert "[+0.12, -0.58, -2.73, -1.31]" in m.verdict
    assert all(np.array_equal(grid, lib_grid) for grid, (_, lib_grid) in zip(m.grids, six_steps()))
    assert np.allclose(m.attention_weights.sum(axis=-1), 1.0)


@pytest.mark.parametrize("step", range(7))
def test_six_steps_verdict_of_every_step(step):
    m = six_steps_model(step)
    assert m.step == step and m.name == m.names[step]
    assert f"{m.sizes[step]:.2f}" in m.verdict
    if step:
        assert m.verdict.startswith(f"Step {step}")


@pytest.mark.parametrize("seed", [101, 102, 103, 7])
def test_new_random_weights_keep_the_pattern(seed):
    m = six_steps_model(6, seed)
    X, w = six_step_setup(seed)
    assert np.allclose(m.grids[6], block_steps(X, w, placement="pre", norm="rms", eps=0.0,
                                                   activation="gelu", causal=False)[-1][1])
    assert m.sizes[1] == pytest.approx(1.0) and m.sizes[4] == pytest.approx(1.0)
    assert m.sizes[6] > m.sizes[0]


@pytest.mark.parametrize("seed", [None, 103, 125] + list(range(101, 131)))
def test_six_steps_adds_say_grows_or_shrinks_from_the_sizes(seed):
    for step, before in ((3, 0), (6, 3)):
        m = six_steps_model(step, seed)
        old, new = (f"{m.sizes[i]:.2f}" for i in (before, step))
        word = "grows" if float(new) > float(old) else "shrinks" if float(new) < float(old) else None
        if word:
            assert f"{word} from {old} to {new}" in m.verdict
        else:
            assert f"keeps its size, {new}" in m.verdict
        assert ("grows" in m.verdict) + ("shrinks" in m.verdict) == (word is not None)


def test_six_steps_adds_that_shrink_say_so():
    assert "the stream shrinks from 1.19 to 1.13" in six_steps_model(3, 125).verdict
    assert "which shrinks from 1.65 to 1.59" in six_steps_model(6, 103).verdict
    assert "the stream grows from 0.74 to 1.41" in six_steps_model(3).verdict


def test_six_steps_odd_steps_are_clipped():
    assert six_steps_model(-3).step == 0 and six_steps_model(99).step == 6


def test_six_steps_view_over_every_control():
    lab = SixStepsLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert {"course-lab", "course-lab-six-steps"} <= set(lab.root._dom_classes)
    assert "course-verdict" in lab.verdict._dom_classes and "course-lab-caption" in lab.caption._dom_classes
    for step in range(7):
        lab.step.value = step
        m = six_steps_model(step)
        assert text_of(lab.verdict.value) == m.verdict
        assert text_of(lab.caption.value) == f"Step {step} of {N_STEPS}: {STEP_EXPLAINED[m.key]} (the example's weights)"
        header, *rows = table_rows(lab.numbers.value)
        assert header == (["token", "before", "after"] if step else ["token", "input"])
        assert rows[0][-1].split()[0] == f"{m.grids[step][0, 0] + 0.0:.2f}"
        assert [float(v) for v in rows[3][-1].split()] == pytest.approx(m.grids[step][3], abs=0.006)
        if step:
            assert [float(v) for v in rows[1][1].split()] == pytest.approx(m.grids[step - 1][1], abs=0.006)
        assert rows[4] == ["step", "size (RMS)"]                                 # the second table
        assert rows[5:] == [[s, f"{v:.2f}"] for s, v in zip(["in", "1", "2", "3", "4", "5", "6"], m.sizes)]
        assert np.array_equal(lab.bars.heights, m.sizes)
        colours = [matplotlib.colors.to_hex(c) for c in lab.bars.artist.get_facecolor()]
        assert colours == ["#e69f00" if i == step else "#56b4e9" for i in range(N_STEPS + 1)]   # this step's in orange
    assert lab.forward.disabled and not lab.back.disabled
    lab.back.click()
    assert lab.step.value == 5
    for _ in range(9):
        lab.back.click()
    assert lab.step.value == 0 and lab.back.disabled
    lab.forward.click()
    assert lab.step.value == 1
    before = lab.model.grids.copy()
    lab.new.click()
    assert lab.seed == 101 and not np.allclose(before, lab.model.grids)
    lab.original.click()
    assert lab.seed is None and np.allclose(before, lab.model.grids)
    assert lab.view.figure is fig and lab.view.renders > renders + 10


def test_six_steps_first_slider_changes_the_picture():
    lab = SixStepsLab()
    image = lab.view.image.value
    lab.step.value += 1
    assert lab.view.image.value != image


# ---------------------------------------------------------------- layer flow: model

COMBINATIONS = list(itertools.product((True, False), repeat=len(PARTS)))
# the same 128 combinations in an order where one toggle changes at a time (a Gray code)
GRAY = [tuple(not (((i ^ (i >> 1)) >> bit) & 1) for bit in range(len(PARTS))) for i in range(2 ** len(PARTS))]
assert sorted(GRAY) == sorted(COMBINATIONS)


def _parts(combination):
    return dict(zip(PARTS, combination))


def test_flow_runs_lib_decoder():
    m = flow_model(5, causal=False, ffn=False)
    base, _first, last = flow_inputs(True)
    blocks = random_stack(5, 16, 64, 2, seed=0)
    run = decoder(base, blocks, placement="pre", use_ffn=False, causal=False, norm="rms", activation="gelu")
    assert np.allclose(m.output, run.output)
    assert np.allclose(m.sizes, [root_mean_square(s) for s in run.streams])
    assert m.alike[-1] == pytest.approx(similarity(run.streams[-1]))
    moved = decoder(last, blocks, placement="pre", use_ffn=False, causal=False, norm="rms", activation="gelu")
    assert m.leak == pytest.approx(np.abs(moved.output[0] - run.output[0]).max())
    assert len(WORDS) == 8 and WORDS[0] == WORDS[4]


def test_similarity_is_the_mean_cosine():
    assert similarity(np.ones((3, 4))) == pytest.approx(1.0)
    assert similarity(np.eye(4)) == pytest.approx(0.0)
    assert similarity(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(-1.0)


@pytest.mark.parametrize("depth", [1, DEPTH_MAX])
def test_flow_model_over_every_toggle_combination(depth):
    full = flow_model(depth)
    for combination in COMBINATIONS:
        parts = _parts(combination)
        m = flow_model(depth, **parts)
        removed = [name for name, on in parts.items() if not on]
        assert m.removed == removed and list(m.sentences) == removed
        assert m.verdict.startswith(m.summary) and len(m.sizes) == depth + 1
        for name in removed:
            assert m.sentences[name] in m.verdict
        if parts["causal"] or not parts["attention"]:
            assert m.leak == 0.0 and np.all(m.leaks == 0.0), parts      # exactly: nothing from the future
            assert "no word reads the future" in m.summary
        elif m.vanished_at is None:
            assert m.leak > 1e-6 and "word 1 reads the future" in m.sentences["causal"], parts
        else:
            assert "vanished" in m.summary
            assert "vanished" in m.sentences["causal"]                    # the run plotted
        if not parts["attention"]:
            assert m.context == 0.0 and "moves the last word's output by 0 " in m.sentences["attention"]
        if not parts["positions"] and (not parts["causal"] or not parts["attention"]):
            assert m.copies == 0.0
        if not parts["positions"]:
            assert ("identical" in m.sentences["positions"]) == (m.copies <= 1e-12)
        if len(removed) > 1:
            together = " and ".join([", ".join(PARTS[n] for n in removed[:-1]), PARTS[removed[-1]]])
            assert m.summary.startswith(f"With the {together} removed together, after {depth} block")
        if parts["final_norm"] and m.overflow_at is None and m.sizes[-1] > 0.01:
            assert 0.9 < m.output_size < 1.0 + 1e-9                     # the final norm: size 1, eps aside
        if m.overflow_at is None:
            assert np.all(np.isfinite(m.sizes))
    assert full.removed == [] and "every part on" in full.summary


def test_flow_what_each_part_prevents_at_depth_48():
    full = flow_model(48)
    alone = flow_model(48, residual=False, norms=False, ffn=False, final_norm=False)
    assert alone.alike[-1] > 0.999 > full.alike[-1]                       # attention alone collapses
    assert np.abs(alone.output - alone.output[0]).max() < 1e-9
    no_norms = flow_model(48, norms=False)
    assert no_norms.sizes[-1] > 1000 * full.sizes[-1]
    no_residual = flow_model(48, residual=False)
    assert no_residual.alike[-1] > 0.999 and no_residual.context < 0.01 * full.context
    unmasked = flow_model(48, causal=False)
    assert unmasked.leak > 0.1 and f"{unmasked.leak:.2f}" in unmasked.sentences["causal"]
    no_positions = flow_model(48, positions=False)
    assert no_positions.copies > 0 and "causal mask" in no_positions.sentences["positions"]
    no_final = flow_model(48, final_norm=False)
    assert no_final.output_size == pytest.approx(full.sizes[-1])
    assert f"{full.sizes[-1]:.2f}" in no_final.sentences["final_norm"]


def test_flow_part_sentences_describe_the_runs_plotted():
    """With several parts removed, each part's sentence gives the numbers of the run on the plot
    (all of them removed together) against the dashed run with every part on, never of a run
    with that part alone removed, which is not drawn."""
    for depth in (12, DEPTH_MAX):
        m = flow_model(depth, positions=False, causal=False, norms=False)
        full = m.full
        assert m.summary.startswith(f"With the position vectors, causal mask and norms removed together, "
                                       f"after {depth} blocks:")
        for name in m.removed:
            assert m.sentences[name].startswith(f"With {WITHOUT[name]} and 2 other parts removed, ")
        assert f"its size reaches {amount(m.sizes[-1])} after {depth} blocks (every part on: " \
               f"{amount(full.sizes[-1])})" in m.sentences["norms"]
        assert f"moves word 1's output by {amount(m.leak)}" in m.sentences["causal"]
    # without the positions and the mask the two copies of "the" come out identical in the run
    # plotted (the mask alone still tells them apart, in a run that is not plotted here)
    both = flow_model(12, positions=False, causal=False)
    assert both.copies == 0.0 and "come out identical" in both.sentences["positions"]
    assert flow_model(12, positions=False).copies > 0
    # residual add, norms and FFN removed: the plotted stream shrinks to 0.051, and the norms'
    # sentence gives that size, not the 8.5e+09 of the norms removed alone
    shrunk = flow_model(48, residual=False, norms=False, ffn=False)
    assert shrunk.sizes[-1] < 0.1 < 1e9 < flow_model(48, norms=False).sizes[-1]
    assert f"its size reaches {amount(shrunk.sizes[-1])} after 48 blocks" in shrunk.sentences["norms"]
    assert "e+09" not in shrunk.verdict


def test_flow_ffn_sentence_names_what_still_works_on_each_word_alone():
    """The norms and attention's value and output maps work on each word by itself too: the FFN
    is the block's one wide, learned non-linear map of a word alone, and holds the parameters
    the sentence says the block keeps without it."""
    from lib.params import ModelConfig, block_parameters
    m = flow_model(12, ffn=False)
    said = m.sentences["ffn"]
    assert "nothing works on a word by itself" not in said
    assert "norms only rescale a word" in said and "value and output maps are linear" in said
    one = block_parameters(ModelConfig(d_model=16, layers=1, d_ff=64, vocab=1))
    assert f"keeps only {percentage(1 - one.ffn / one.total)} of its parameters" in said


def test_flow_norms_sentence_says_the_stream_grew_until_it_overflowed():
    from labs.decoder.layer_flow import _part_sentence
    full = flow_model(12)
    parts = {n: n != "norms" for n in PARTS}
    growing = {"overflow_at": 5, "sizes": np.array([1.0, 3.0, 40.0, 9e80, 1e250, np.nan])}
    said = _part_sentence("norms", growing, full, parts, 12)
    assert said == ("Without the norms, every block reads the raw stream and the stream grew until the "
                    "numbers overflowed at block 5.")
    uneven = {"overflow_at": 5, "sizes": np.array([1.0, 3.0, 2.0, 9e80, 1e250, np.nan])}
    assert "grew" not in _part_sentence("norms", uneven, full, parts, 12)
    assert "overflowed at block 5" in _part_sentence("norms", uneven, full, parts, 12)
    no_norms = flow_model(12, norms=False)
    assert no_norms.overflow_at is None
    assert f"its size reaches {amount(no_norms.sizes[-1])}" in no_norms.sentences["norms"]


def test_flow_runs_each_block_once_per_setting_and_every_depth_equals_its_own_run(monkeypatch):
    """The lab runs a setting's blocks once, deeper only when asked, and reads a shallower
    stack's streams from a deeper run: each depth, asked in any order, gives exactly (to the
    bit) what a run of that many blocks gives, each sentence on its own."""
    import labs.decoder.layer_flow as flow

    run_blocks = []
    real = flow.decoder
    monkeypatch.setattr(flow, "decoder", lambda x, blocks, **o: run_blocks.append(len(blocks)) or real(x, blocks, **o))
    seed = 97                                            # a stack no other test has run
    options = dict(placement="pre", causal=False, norm="rms", activation="gelu")
    sentences = flow_inputs(True)
    for depth in (30, 5, 48, 12, 48):
        m = flow_model(depth, seed=seed, causal=False)
        blocks = random_stack(depth, 16, 64, 2, seed=1000 * seed)
        runs = [decoder(x, blocks, **options) for x in sentences]
        assert np.array_equal(m.output, runs[0].output)
        assert np.array_equal(m.sizes, [root_mean_square(s) for s in runs[0].streams])
        assert m.leak == np.abs(runs[2].output[0] - runs[0].output[0]).max()
        assert m.context == np.abs(runs[1].output[-1] - runs[0].output[-1]).max()
    assert sum(run_blocks) == 2 * DEPTH_MAX          # this setting's 48 blocks and every part on's 48


def test_flow_model_other_seeds_and_odd_depths():
    assert flow_model(0).depth == 1 and flow_model(500).depth == DEPTH_MAX
    assert not np.allclose(flow_model(12, seed=1).output, flow_model(12, seed=0).output)
    with pytest.raises(TypeError, match="unknown parts"):
        flow_model(3, mask=False)


# ---------------------------------------------------------------- layer flow: shapes

@pytest.mark.parametrize("batch,length,d_model,heads", [(2, 8, 16, 2), (1, 5, 12, 3), (3, 4, 8, 1)])
def test_block_shapes_match_a_real_run(batch, length, d_model, heads):
    rows, problem = block_shapes(batch, length, d_model, heads)
    assert problem is None
    shapes = {name: shape for name, shape, _ in rows}
    w = random_block_weights(d_model, 4 * d_model, heads, seed=0, scale=0.3)
    x = np.random.default_rng(0).normal(size=(batch, length, d_model))
    for name in ("x", "attention output (@ Wo)", "x + attention", "FFN output", "block output"):
        assert shapes[name] == x.shape
    q = rms_norm(x) @ w.Wq
    split = q.reshape(batch, length, heads, -1).swapaxes(1, 2)
    assert shapes["Q, K, V split into heads"] == split.shape
    _, weights = attention(rms_norm(x), w.Wq, w.Wk, w.Wv, w.Wo, heads=heads, return_weights=True)
    assert shapes[next(n for n in shapes if n.startswith("scores"))] == weights.shape
    assert shapes["attention weights"] == weights.shape and shapes["causal mask"] == causal_mask(length).shape
    hidden = rms_norm(x) @ w.W_up
    assert shapes["hidden units"] == hidden.shape and shapes["W_up"] == w.W_up.shape and shapes["W_down"] == w.W_down.shape
    assert ffn(rms_norm(x), w.W_up, None, w.W_down, None).shape == shapes["FFN output"]


def test_block_shapes_refuse_heads_that_do_not_divide():
    rows, problem = block_shapes(2, 8, 16, 3)
    assert rows == [] and "3 heads cannot split d_model = 16" in problem
    assert block_shapes(0, 8, 16, 2)[1]


# ---------------------------------------------------------------- layer flow: view

def test_flow_view_over_every_toggle_combination_at_both_depths():
    lab = FlowLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert {"course-lab", "course-lab-layer-flow"} <= set(lab.root._dom_classes)
    for name, toggle in lab.toggles.items():
        assert f"course-toggle-{name.replace('_', '-')}" in toggle._dom_classes
    count = 0
    for depth in (1, DEPTH_MAX):
        lab.depth.value = depth
        for combination in GRAY:
            for name, on in _parts(combination).items():
                lab.toggles[name].value = on
            m = flow_model(depth, lab.seed, **_parts(combination))
            assert text_of(lab.verdict.value) == m.verdict
            assert len(lab.lines[0].get_xdata()) == depth + 1
            count += 1
    assert count == 2 * 128
    assert lab.view.figure is fig and lab.view.renders > renders + 200


def test_flow_view_toggle_changes_the_verdict_and_new_blocks():
    lab = FlowLab()
    before = lab.verdict.value
    lab.toggles["causal"].value = False
    assert lab.verdict.value != before and "reads the future" in text_of(lab.verdict.value)
    lab.toggles["causal"].value = True
    assert lab.verdict.value == before
    lab.new.click()
    assert lab.seed == 1 and text_of(lab.verdict.value) == flow_model(12, 1).verdict
    image = lab.view.image.value
    lab.depth.value += 3                                   # the first slider changes the picture
    assert lab.view.image.value != image


def test_flow_small_outputs_run_the_lab_s_blocks_with_wo_and_w_down_scaled():
    """The switch 'small Wo and W_down' runs the same 48 blocks with Wo and W_down times
    1/sqrt(2 x 48), GPT-2's rule; the dashed run with every part on keeps the lab's weights; the
    verdict and the title say so."""
    from labs.decoder.layer_flow import SMALL_OUTPUTS, _stack
    blocks = [b for b in _stack(0, small_outputs=True)[:12]]
    sentence = flow_inputs(True)[0]
    run = decoder(sentence, blocks, placement="none", final_norm=False, norm="rms", activation="gelu")
    m = flow_model(12, norms=False, final_norm=False, small_outputs=True)
    assert np.allclose(m.sizes, [root_mean_square(s) for s in run.streams], rtol=1e-12)
    assert m.full.alike[-1] == flow_model(12).alike[-1]              # the dashed line: the lab's weights
    assert m.small_outputs and m.small_factor == pytest.approx(SMALL_OUTPUTS)
    assert "Wo and W_down at 0.10 of the lab's size (1/\u221a(2 \u00d7 48)" in m.summary
    assert "Wo and W_down" not in flow_model(12, norms=False, final_norm=False).summary
    lab = FlowLab()
    assert "course-toggle-small-outputs" in lab.small._dom_classes and lab.small.description == "small Wo and W_down"
    lab.small.value = True
    assert text_of(lab.verdict.value) == flow_model(12, lab.seed, small_outputs=True).verdict
    assert lab.suptitle.get_text().endswith("; small Wo and W_down")
    lab.small.value = False
    assert text_of(lab.verdict.value) == flow_model(12, lab.seed).verdict


def test_flow_several_parts_removed_say_their_numbers_are_those_of_all_removed_together():
    """With several parts removed, each part's sentence gives the combined run's numbers, and the
    verdict says so (a reader of 'Without the residual add ... similarity 1.000' with four parts
    off is told the 1.000 is theirs together)."""
    m = flow_model(48, residual=False, norms=False, ffn=False, final_norm=False)
    assert ("The sentences below give the numbers of this run, with the 4 parts removed together; remove one "
            "at a time to see what each does on its own.") in m.summary
    assert m.removed_count == 4
    for name in ("residual", "norms", "ffn", "final_norm"):        # each sentence names the combination
        assert m.sentences[name].startswith(f"With {WITHOUT[name]} and 3 other parts removed, ")
    assert "Without" not in m.verdict
    one = flow_model(48, residual=False)
    assert "removed together" not in one.summary
    assert one.sentences["residual"].startswith("Without the residual add, each block replaces the stream")


def test_calculator_writes_memory_as_every_cell_does_and_names_its_sources():
    """The verdict's memory is byte_size's (1.2 TiB, as the KV-cache cell writes DeepSeek-V3's
    weights, not 1,249.9 GiB); a count is not repeated in brackets when its short form is the same;
    the experts hold parameters 'that any one token does not use'; the trained model's count is
    'in its weights file', not 'published'."""
    from engine.presentation.numbers import byte_size
    deep = calculator_model(preset="DeepSeek-V3")
    assert f"{byte_size(deep.total * 2)} at 2 bytes per number" in deep.verdict and "1.2 TiB" in deep.verdict
    assert "GiB at" not in deep.verdict
    assert "that any one token does not use" in deep.verdict and "never uses" not in deep.verdict
    ours = calculator_model(preset=TRAINED_MODEL)
    assert ours.verdict.startswith("448,512 parameters, ") and "(448,512)" not in ours.verdict
    lab = CalculatorLab(preset=TRAINED_MODEL)
    rows = table_rows(lab.gap.value)
    assert rows[-1][0] == "in its weights file" and not any(r[0] == "published" for r in rows)


def test_flow_view_shape_menus():
    lab = FlowLab()
    for name, control in lab.shape_controls.items():
        for value in control.options:
            control.value = value[1]
            c = {k: w.value for k, w in lab.shape_controls.items()}
            rows, problem = block_shapes(c["batch"], c["length"], c["d_model"], c["heads"])
            if problem:
                assert text_of(lab.shapes.value) == problem
            else:
                # A shape as NumPy prints it: "(2, 1024, 16)", never "(2, 1,024, 16)" (five axes?)
                assert f"({c['batch']}, {c['length']}, {c['d_model']})" in text_of(lab.shapes.value)
        control.value = control.options[1][1]
    assert "(2, 2, 8, 8)" in text_of(FlowLab().shapes.value)       # the shape question's answer


# ---------------------------------------------------------------- near identity

def test_near_identity():
    small = near_identity_model(4, 0.02, seed=2)
    assert len(small.lengths) == 5 and np.all(small.changes < 0.05)
    assert abs(small.lengths[-1] / small.lengths[0] - 1) < 0.01
    large = near_identity_model(4, 0.2, seed=2)
    assert large.lengths[-1] > 3 * large.lengths[0]
    assert np.all((0.01 < small.relative) & (small.relative < 0.03)) and large.relative[0] > 3


def test_relative_changes_are_each_blocks_change_over_the_stream_it_read():
    streams = [np.ones((2, 2)), 1.1 * np.ones((2, 2)), np.array([[1.1, 1.1], [1.1, -1.1]])]
    assert np.allclose(relative_changes(streams), [0.1, 1.0])


def test_c_rand_is_the_linear_congruential_generator_of_a_common_c_library():
    numbers = c_rand(42)
    assert [next(numbers) for _ in range(3)] == [175, 400, 17869]      # srand(42); rand(); rand(); rand()
    first = c_rand(1)
    assert next(first) == 41                                            # srand(1); rand(): the classic 41


def test_the_rand_setup_moves_its_tokens_by_a_few_percent_per_block():
    m = rand_demonstration()
    assert [f"{v:.4f}" for v in m.lengths] == ["1.3809", "1.3990", "1.4163", "1.4205", "1.4256"]
    assert np.all((0.01 < m.relative) & (m.relative < 0.09))
    assert m.sigma == pytest.approx(0.1 / np.sqrt(3)) and len(rand_demonstration(2).lengths) == 3


# ---------------------------------------------------------------- parameter calculator

def test_calculator_course_example():
    m = calculator_model()
    assert m.total == 109_529_856 and round(m.mib, 1) == 208.9
    assert [round(100 * m.shares[p], 1) for p in ("embedding", "attention", "FFN")] == [22.4, 25.8, 51.7]
    assert m.parts["norms"] == 19_200
    assert round(m.depth2 / 1e6) == 194 and round(m.width2 / 1e6) == 389
    assert "109,529,856" in m.verdict and "208.9 MiB" in m.verdict and "194.5 M" in m.verdict
    assert calculator_model(bytes_per_number=4).mib == pytest.approx(2 * m.mib)


def test_presets_are_the_course_example_the_real_models_and_the_trained_model():
    table = presets()
    assert list(table)[0] == COURSE_EXAMPLE and set(REAL_MODELS) <= set(table)
    assert all(isinstance(preset, Preset) for preset in table.values())
    example = table[COURSE_EXAMPLE]
    assert count_parameters(example.config).total == 109_529_856 and example.published is None
    for name, real in REAL_MODELS.items():
        assert table[name] == Preset(real.config, real.published, real.published_active, real.note)
    assert (TRAINED_MODEL in table) == (trained_preset() is not None)


def test_the_trained_model_preset_is_counted_exactly_by_its_weights_file():
    from lib import model

    config = trained_preset()
    if not (model.FOLDER / "weights.npz").exists():
        assert config is None and trained_stored() is None
        return
    assert config == model.config() and config.gated and config.tied
    with np.load(model.FOLDER / "weights.npz") as stored:
        numbers = sum(stored[name].size for name in stored.files)
    assert trained_stored() == numbers == count_parameters(config).total
    assert presets()[TRAINED_MODEL].published == numbers


def test_the_course_example_preset_is_768_wide_with_twelve_heads():
    example = presets()[COURSE_EXAMPLE]
    assert example.config == ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12) and example.config.heads == 12
    assert example.published is None and example.published_active is None
    assert example.note == "the course's own example: RMSNorm, plain FFN, tied embedding"


def test_the_trained_model_preset_names_what_its_size_is(monkeypatch):
    trained = presets()[TRAINED_MODEL]
    assert trained.published == trained_stored() and trained.published_active is None
    assert "weights file" in trained.note
    import labs.decoder.models

    monkeypatch.setattr(labs.decoder.models, "trained_preset", lambda: None)
    assert TRAINED_MODEL not in presets()


def test_a_trained_model_whose_configuration_is_not_a_model_config_gives_no_preset(monkeypatch):
    from lib import model

    monkeypatch.setattr(model, "config", lambda: {"d_model": 4})
    assert trained_preset() is None


def test_calculator_presets_and_their_gaps():
    table = presets()
    assert set(REAL_MODELS) < set(table) and COURSE_EXAMPLE in table
    for name, (config, published, _active, _note) in table.items():
        m = calculator_model(preset=name)
        assert m.ok and m.total == count_parameters(config).total
        assert m.steps[-1][2] == m.total, name                     # the steps add up
        if published:
            said = "In its weights file" if name == TRAINED_MODEL else "Published"
            assert m.gap["published"] == published and said in m.verdict
    small = calculator_model(preset="GPT-2 Small")
    assert [size(v) for v in (small.gap["blocks"], small.gap["embedding"], small.gap["simple"])] \
        == ["85.0 M", "38.6 M", "123.6 M"]
    assert "85.0 M" in small.verdict and "123.6 M" in small.verdict
    for name in table:                      # a verdict that stops at the simple count says the rest too
        m = calculator_model(preset=name)
        if "brings the count to" in m.verdict:
            rest = size(m.total - m.gap["simple"])
            assert f"the rest ({rest}:" in m.verdict and f"to the full {size(m.total)}." in m.verdict, name
    deep = calculator_model(preset="DeepSeek-V3")
    assert "does not come close" in deep.verdict and "37.0 B active" in deep.verdict
    assert deep.gap["simple"] < 0.05 * deep.gap["published"]
    assert abs(deep.total / 671e9 - 1) < 0.01 and abs(deep.active / 37e9 - 1) < 0.05
    assert any("mixture of experts" in what for what, _a, _t in deep.steps)


def test_calculator_custom_sizes_and_bad_ones():
    m = calculator_model(d_model=64, layers=4, heads=4, d_ff=256, vocab=1000, gated=True, tied=False, biases=True)
    c = ModelConfig(d_model=64, layers=4, d_ff=256, vocab=1000, heads=4, gated=True, tied=False, biases=True)
    assert m.total == count_parameters(c).total and m.steps == []
    moe = calculator_model(experts=8, top_k=2)
    assert moe.active < moe.total and "A token uses only" in moe.verdict
    odd = calculator_model(heads=7)
    assert odd.ok and odd.total == 109_529_856 and "7 heads do not split d_model = 768" in odd.verdict
    for bad in (dict(experts=4, top_k=9), dict(d_model=0), dict(heads=0)):
        m = calculator_model(**bad)
        assert not m.ok and m.verdict.startswith("These sizes do not make a model")
    assert calculator_model(preset="no such model").preset is None
    assert round(mebibytes(109_529_856, 0.5), 1) == round(calculator_model(bytes_per_number=0.5).mib, 1)


def test_calculator_view_over_every_control():
    lab = CalculatorLab()
    fig, renders = lab.view.figure, lab.view.renders
    assert {"course-lab", "course-lab-parameter-calculator"} <= set(lab.root._dom_classes)
    for preset in lab.preset.options:
        lab.preset.value = preset
        for nbytes in BYTES:
            lab.bytes.value = nbytes
            if preset != lab.CUSTOM:
                assert text_of(lab.verdict.value) == calculator_model(preset=preset, bytes_per_number=nbytes).verdict
                assert "from the simple count" in text_of(lab.gap.value)
                m = lab.model
                header, *rows = table_rows(lab.numbers.value)
                assert header == ["part", "parameters", "share of the total"]
                assert [r[0] for r in rows[:7]] == lab.part_names + ["twice the blocks", "twice the width"]
                assert rows[2][1] == size(m.parts["FFN"]) and rows[5][1] == size(m.depth2)
                assert rows[6][2] == f"\u00d7{m.width2 / m.total:.2f}"
                assert rows[7] == [m.preset, f"{size(m.total)} parameters, {m.memory}"]
    lab.preset.value = "GPT-2 Small"
    assert lab.d_model.value == 768 and lab.vocab.value == 50257 and lab.biases.value
    lab.layers.value = 24                                   # a control moves: the preset no longer applies
    assert lab.preset.value == lab.CUSTOM and lab.model.preset is None
    for slider in (lab.d_model, lab.layers):
        for value in (slider.min, slider.max):
            slider.value = value
            assert lab.model.ok and lab.model.config.d_model == lab.d_model.value
    for box in (lab.gated, lab.tied, lab.biases):
        box.value = not box.value
        assert lab.model.config.gated == lab.gated.value
    lab.d_model.value, lab.heads.value = 768, 7                 # 7 does not divide 768: counted, with a note
    assert lab.model.ok and "7 heads do not split" in text_of(lab.verdict.value)
    lab.heads.value = 12
    lab.experts.value, lab.top_k.value = 4, 9
    assert not lab.model.ok
    lab.top_k.value = 2
    assert lab.model.ok and lab.model.active < lab.model.total
    assert lab.view.figure is fig and lab.view.renders > renders + 30


def test_calculator_memory_beyond_the_weights():
    llama = calculator_model(preset="LLaMA-7B")
    assert llama.cache_numbers == 262_144 and llama.cache_token == 524_288     # 2 bytes a number
    assert llama.context == 2048 and llama.cache_context == 2 ** 30            # 1 GiB
    assert llama.training["float32"].total == llama.training["bfloat16"].total == 16 * llama.total
    smol = calculator_model(preset="SmolLM2-360M", bytes_per_number=1)
    assert smol.cache_numbers == 20_480 and smol.cache_context == 20_480 * 8192
    deep = calculator_model(preset="DeepSeek-V3")
    assert deep.cache_numbers == 61 * 576 and deep.context == 131_072
    custom = calculator_model(kv_heads=4, context=100, bytes_per_number=4)
    assert custom.cache_numbers == 12 * 2 * 4 * 64 and custom.cache_context == 12 * 2 * 256 * 100 * 4
    assert custom.total == count_parameters(ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000,
                                                           heads=12, kv_heads=4)).total
    odd = calculator_model(kv_heads=5)                       # 5 sets cannot serve 12 heads equally
    assert odd.ok and "do not split 12 heads" in odd.verdict and odd.cache_numbers == 12 * 2 * 768
    empty = calculator_model(context=0)
    assert not empty.ok and empty.verdict == ("These sizes do not make a model: context should be a whole "
                                                    "number of at least 1 token, got 0.")
    assert "0 sets of keys and values do not split 12 heads" in calculator_model(kv_heads=0).verdict
    cache, training = memory_rows(llama)
    assert cache == [("weights, 2 bytes per number", "12.6 GiB"), ("KV cache, one token (262,144 numbers)", "512.0 KiB"),
                     ("KV cache, 2,048 tokens", "1.0 GiB")]
    assert training[2] == ("float32 copy of the weights", "none", "25.1 GiB")
    assert training[-1] == ("total, activations aside", "100.4 GiB", "100.4 GiB")


def test_calculator_view_shows_the_cache_of_the_heads_and_context_set():
    lab = CalculatorLab()
    header, *rows = table_rows(lab.beyond.value)
    assert header == ["memory", "bytes"] and rows[1] == ["KV cache, one token (18,432 numbers)", "36.0 KiB"]
    lab.preset.value = "SmolLM2-360M"
    assert (lab.kv_heads.value, lab.context.value) == (5, 8192)
    assert table_rows(lab.beyond.value)[3] == ["KV cache, 8,192 tokens", "320.0 MiB"]
    lab.context.value = 1024                                  # a control moves: the preset no longer applies
    assert lab.preset.value == lab.CUSTOM and table_rows(lab.beyond.value)[3] == ["KV cache, 1,024 tokens", "40.0 MiB"]
    lab.kv_heads.value = 15
    assert lab.model.cache_numbers == 3 * 20_480
    assert ["training with AdamW", "float32", "bfloat16 + float32 copy"] in table_rows(lab.beyond.value)
    lab.experts.value, lab.top_k.value = 4, 9
    assert not lab.model.ok and lab.beyond.value == ""


def test_calculator_first_slider_changes_the_picture():
    lab = CalculatorLab()
    image = lab.view.image.value
    lab.d_model.value += 3 * lab.d_model.step
    assert lab.view.image.value != image


def test_lab_functions_return_root_widgets():
    for make, name in ((six_steps_lab, "six-steps"), (flow_lab, "layer-flow"),
                       (calculator_lab, "parameter-calculator")):
        assert f"course-lab-{name}" in make()._dom_classes


def test_calculator_counts_the_trained_model_when_it_exists():
    if trained_preset() is None:
        assert TRAINED_MODEL not in CalculatorLab().preset.options
        return
    m = calculator_model(preset=TRAINED_MODEL)
    assert m.ok and m.config.gated and m.config.tied
    assert m.published == m.total                  # the weights file holds exactly the count
    assert [what for what, _a, _t in m.steps][-1] == "gated FFN (three matrices)"
    assert "In its weights file" in m.verdict


# ---------------------------------------------------------------- counts in 32-bit browsers

def _is_whole(value):
    """A Python int or a NumPy int64: never a 32-bit integer, which wraps past 2,147,483,647."""
    return type(value) is int or (isinstance(value, np.integer) and value.dtype == np.int64)


def test_every_count_of_every_preset_is_a_64_bit_or_python_whole_number():
    """The browser's Python is 32-bit WebAssembly, where NumPy's default integer is int32: a
    count made with it would wrap around past 2**31. Every count here is a Python int."""
    biggest = 0
    for name in presets():
        m = calculator_model(preset=name)
        assert m.ok, name
        counts = [m.total, m.active, m.depth2, m.width2, *m.parts.values(),
                  *(getattr(m.count, field) for field in ("embedding", "positions", "output", "attention",
                                                             "ffn", "norms", "router", "total", "active"))]
        assert all(_is_whole(c) for c in counts), (name, [type(c) for c in counts])
        assert sum(m.parts.values()) == m.total
        biggest = max(biggest, m.total)
    assert biggest > 600 * 10 ** 9 > 2 ** 31                    # DeepSeek-V3 counts 671 B


def test_sizes_given_as_32_bit_integers_count_exactly_as_python_integers():
    """What a 32-bit browser gives for np.array([...]) sizes: np.int32. Counting with them must
    not overflow."""
    from exercises.retired.decoder import MODEL_PARAMETERS
    from labs.ffn.parameters import parameters_model
    from lib.params import ModelConfig, count_parameters

    sizes = dict(d_model=7168, layers=61, d_ff=18432, vocab=129280, heads=128)
    as_int32 = {k: np.int32(v) for k, v in sizes.items()}
    exact = count_parameters(ModelConfig(**sizes)).total
    assert count_parameters(ModelConfig(**as_int32)).total == exact and _is_whole(exact)
    d, layers, d_ff, vocab = (sizes[k] for k in ("d_model", "layers", "d_ff", "vocab"))
    by_hand = vocab * d + layers * (4 * d * d + 2 * d * d_ff + 2 * d) + d
    assert exact == by_hand > 2 ** 31
    reference = MODEL_PARAMETERS.reference(*(np.int32(v) for v in (d, layers, d_ff, vocab)))
    assert _is_whole(reference) and reference == by_hand
    m = parameters_model(np.int32(4096), 8.0)
    assert all(_is_whole(getattr(m, k)) for k in ("attention", "ffn", "norms", "total"))
    assert m.total == 4 * 4096 ** 2 + 2 * 4096 * 8 * 4096 + 2 * 4096


# ---------------------------------------------------------------- the steps' labels

def test_renaming_every_steps_label_breaks_no_code_path(monkeypatch):
    """A step's display text is written once, in lib.block.LABELS, and no code reads it back: with
    every label changed, the trained model's traced forward pass, the trained stream lab and the
    six-step lab (model and view) compute what they did before, and show the new labels."""
    import lib.block
    from labs.trained import held_out
    from labs.trained.stream import stream_model
    from lib import model

    ids = model.heldout().ids[:24]
    traced, streams = model.forward(ids, trace=True), stream_model(3)
    six = [six_steps_model(step) for step in range(N_STEPS + 1)]
    renamed = {step: f"renamed step {i}" for i, step in enumerate(lib.block.Step)}
    monkeypatch.setattr(lib.block, "LABELS", renamed)
    held_out._trace.cache_clear()                            # the stream lab traces the model again
    try:
        assert all(np.array_equal(a, b) for a, b in zip(model.forward(ids, trace=True), traced))
        again = stream_model(3)
        assert all(np.array_equal(again[key], streams[key]) for key in ("attention", "ffn", "stream"))
        for step, before in enumerate(six):
            after = six_steps_model(step)
            assert after.names == [renamed[key] for key in after.keys] != before.names
            assert after.verdict == before.verdict and np.array_equal(after.grids, before.grids)
        lab = SixStepsLab(step=5)
        assert lab.titles[1].get_text() == f"after step 5:\n{renamed[lib.block.Step.FFN]}"
        X, w = six_step_setup()
        assert [label for label, _ in block_steps(X, w)][-1] == renamed[lib.block.Step.FFN_ADD]
    finally:
        held_out._trace.cache_clear()
