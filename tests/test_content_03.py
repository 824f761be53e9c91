"""Notebook 03: the syllabus figures, as the notebook itself computes and prints them, and every
sentence of its prose that states a quantity or a direction, checked against the numbers."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from exercises.core.registry import all_exercises, get_exercise, get_question
from labs.norms import placement_model, stack_model
from lib.block import Step, block_trace, random_stack
from lib.stack import random_rotations, residual_stream

from exercise_answers import try_variant

NOTEBOOK = "03_norms_and_residuals.ipynb"
PATH = Path(__file__).resolve().parents[1] / "content" / NOTEBOOK
FIGURES = {"stack-modes", "layernorm-1155", "sqrt8", "ten-means", "batchnorm-axis", "eps-inside-outside",
           "rms-pick", "residual-add", "placement-48", "residual-stream"}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


@pytest.fixture(scope="module")
def cells():
    return json.loads(PATH.read_text(encoding="utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def markdown(cells):
    return "\n".join(source(c) for c in cells if c["cell_type"] == "markdown")


def numbers(text):
    return [float(n) for n in re.findall(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def line_with(text, start):
    return next(line for line in text.splitlines() if line.startswith(start))


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures)
    assert all(figures[name].strip() for name in FIGURES)


# ---------------------------------------------------------------- the stack of layers

def test_stack_modes(figures):
    lines = figures["stack-modes"].splitlines()
    rows = {line.split("  ")[0]: numbers(line.split("  ", 1)[1]) for line in lines[1:7]}
    assert len(rows) == 6
    plain, residual = rows["x \u2190 f(x)"], rows["x \u2190 x + f(x)"]
    assert plain[0] < 1e-6 and plain[2] > 1e6                     # vanishes at 0.5, explodes at 2
    assert residual[0] > 1 and residual[2] > 1e6                  # never vanishes, can still grow
    for post in ("x \u2190 LayerNorm(x + f(x))", "x \u2190 RMSNorm(x + f(x))"):
        assert rows[post] == [2.83, 2.83, 2.83]                   # pinned at sqrt(8)
    for pre in ("x \u2190 x + f(LayerNorm(x))", "x \u2190 x + f(RMSNorm(x))"):
        assert 3 < rows[pre][0] < rows[pre][1] < rows[pre][2] < 3 * np.sqrt(30 * 8 * 4)
    assert stack_model("plain", 2.0, 30)["final"] == pytest.approx(plain[2], rel=0.01)


def test_half_a_percent_per_layer_is_forgiven(figures):
    """'Half a percent of difference per layer would be forgiven (the line under the table)'."""
    low, high = numbers(line_with(figures["stack-modes"], "a gain of 0.995"))[-2:]
    assert (low, high) == (0.86, 1.16) and 0.8 < low < 1 < high < 1.25


def test_the_residual_add_never_came_close_to_vanishing(figures):
    """'on none of the 100 stacks did the vector come close to vanishing', but it can grow."""
    line = line_with(figures["stack-modes"], "x + f(x) at gain 0.5, 100 stacks")
    assert "x1.12 to x149 its start" in line
    growth = [stack_model("residual", 0.5, 30, seed=seed)["final"] / stack_model("residual", 0.5, 30, seed=seed)[
        "lengths"][0] for seed in range(100)]
    assert min(growth) > 0.5 and max(growth) > 10


def test_the_residual_stack_grows_overall_but_not_at_every_layer(figures, cells):
    """'over 30 layers the length grew in every stack; not at every layer, though: some layers leave
    the vector shorter (the line that counts them)'."""
    low = numbers(line_with(figures["stack-modes"], "x + f(x) at gain 0.5, 100 stacks"))[-2]
    assert low > 1                                                   # grew in every stack
    shrank, total, stacks, _hundred = numbers(line_with(figures["stack-modes"], "  layers that left").replace(",", ""))
    assert total == 3000 and 0 < shrank < total / 2 and stacks > 0
    runs = [stack_model("residual", 0.5, 30, seed=seed) for seed in range(100)]
    assert shrank == sum(int((np.diff(run["lengths"]) < 0).sum()) for run in runs)
    text = " ".join(markdown(cells).split())
    assert "grows layer after layer" not in text and "some layers leave the vector shorter" in text


def test_some_of_the_orthogonal_matrices_mirror(figures, cells):
    """'The matrix is orthogonal: it turns the vector, some of the matrices also mirror it'."""
    assert "the stack's matrices that also mirror: 39 of 64" in figures["stack-modes"]
    q = random_rotations(64, seed=0)
    assert np.allclose(q @ q.transpose(0, 2, 1), np.eye(8))      # orthogonal: lengths kept
    assert 0 < int((np.linalg.det(q) < 0).sum()) < 64
    text = markdown(cells)
    assert "it is a rotation" not in text and "some of the matrices also mirror it" in text


def test_the_length_question_comes_before_the_lab_that_shows_sqrt8(cells):
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    assert code.index('ask("norms-number-length")') < next(i for i, s in enumerate(code) if "stack_lab()" in s)
    assert code.index('ask("norms-predict-stack")') < next(i for i, s in enumerate(code) if "stack_lab()" in s)


# ---------------------------------------------------------------- LayerNorm and RMSNorm

def test_sqrt8(figures):
    text = figures["sqrt8"]
    assert "length after LayerNorm: 2.8284" in text and "square root of 8:       2.8284" in text
    assert "mean 0.0000, std 1.0000" in text


def test_layernorm_1155(figures):
    assert "mean 3.0  std 2.0" in figures["layernorm-1155"]
    assert "LayerNorm: -1.0000 -1.0000 +1.0000 +1.0000" in figures["layernorm-1155"]


def test_ten_means(figures):
    assert "(2, 5, 1) -> 10 separate means" in figures["ten-means"]
    assert "is 0: True" in figures["ten-means"]


def test_gains_and_shifts_are_per_feature(cells):
    """LayerNorm's gain and bias and the RMSNorm gain scale columns (features), not positions (tokens)."""
    for heading in ("## LayerNorm", "## RMSNorm"):
        cell = " ".join(next(source(c) for c in cells if source(c).startswith(heading)).split())
        assert "position" not in cell and "per feature (per column)" in cell
    from lib.norm import layer_norm, rms_norm
    x = np.random.default_rng(0).normal(size=(5, 4))
    gain = np.array([1.0, 2.0, 0.5, 3.0])
    assert np.allclose(layer_norm(x, gain) / layer_norm(x), gain)          # the same in every row
    assert np.allclose(rms_norm(x, gain) / rms_norm(x), gain)


def test_batchnorm_axis(figures):
    """The deeper box: normalising each column moves the other tokens, each token does not."""
    token = line_with(figures["batchnorm-axis"], "normalising each token")
    column = line_with(figures["batchnorm-axis"], "normalising each column")
    assert token.endswith("up to 0.00") and column.endswith("up to 0.94")


def test_eps_outside_the_root_differs_little_then_a_lot(figures, cells):
    lines = figures["eps-inside-outside"].splitlines()
    ordinary, flat = (float(line.split("largest gap ")[1]) for line in lines)
    assert ordinary < 1e-5 and flat > 0.5
    text = markdown(cells)
    assert "most frameworks" in text and "every trained model" not in text


def test_rms_pick(figures, cells):
    text = figures["rms-pick"]
    assert "root mean square of pick: 0.6144" in text
    assert "-1.790 +0.163 -0.326 -0.814" in text
    assert "mean of pick: -0.425 before, -0.692 after" in text     # 'not moved to 0'
    assert "syllabus" not in json.dumps(cells)


def test_residual_add(figures):
    assert "x + f(x) = 1.1 1.8 3.3 3.9" in figures["residual-add"]


def test_residual_prose_makes_no_guarantee_it_cannot_keep(cells):
    text = " ".join(markdown(cells).split())
    assert "cannot vanish" not in text and "however small or chaotic" not in text
    assert "unless the part cancels it exactly" in text and "would have to cancel exactly" in text


# ---------------------------------------------------------------- pre-norm and post-norm

def test_pre_norm_history(cells):
    text = " ".join(markdown(cells).split())
    assert "nearly every model since" not in text
    for name in ("BERT", "GPT-1", "GPT-2", "most large language models since"):
        assert name in text


def test_matrices_at_one_over_root_rows_keep_each_parts_output_of_the_order_of_its_input(cells):
    """'every matrix drawn at the scale 1/sqrt(its number of rows), the usual choice that keeps a
    part's output of the same order as its input': in the lab's 48 blocks, attention's and the
    FFN's outputs stay within a factor of 3 of the (normalised) input they read."""
    assert "keeps a part's output of the same order as its input" in " ".join(markdown(cells).split())
    x = np.random.default_rng(1).normal(size=(8, 16))
    for weights in random_stack(48, seed=1):
        steps = block_trace(x, weights, placement="pre", norm="rms", causal=True, activation="gelu")
        for part, read in ((Step.ATTENTION, Step.ATTENTION_NORM), (Step.FFN, Step.FFN_NORM)):
            ratio = np.sqrt((steps[part] ** 2).mean() / (steps[read] ** 2).mean())
            assert 1 / 3 < ratio < 3, (part, ratio)
        x = steps[Step.FFN_ADD]


def test_placement_48(figures):
    text = figures["placement-48"]
    assert "pre-norm stream 8.70 (sqrt(48) = 6.93), post-norm stream 1.00" in text
    assert "arrives x11.2 with pre-norm, x0.0369 with post-norm" in text
    m = placement_model(48, seed=1)
    assert m["pre"]["factor"] > 1 > m["post"]["factor"]


def _spread(text, name):
    low, high, median = numbers(line_with(text, f"50 stacks, {name}").split(":", 1)[1])
    return low, high, median


def test_almost_always_larger_with_pre_norm_usually_by_tens(figures):
    """'In almost every stack ... larger with pre-norm ..., usually by a factor of tens. ... in some
    stacks it amplifies it as well'."""
    line = line_with(figures["placement-48"], "larger with pre-norm")
    larger, total, ratio, amplified = numbers(line)
    assert total == 50 and larger >= 0.9 * total
    assert 10 <= ratio < 100
    assert amplified >= 1
    assert total - amplified > total / 2                              # 'in most random stacks it arrives smaller'
    assert "in most random stacks it arrives smaller than it left" in get_question("norms-predict-placement").explanation


def test_other_draws_placement_factors_lie_inside_the_printed_spread(figures, cells):
    """The syllabus's x6.28 and x0.32 come from another draw: both inside our ranges."""
    pre_low, pre_high, _m = _spread(figures["placement-48"], "pre-norm")
    post_low, post_high, _m = _spread(figures["placement-48"], "post-norm")
    assert pre_low < 6.28 < pre_high and post_low < 0.32 < post_high
    line = line_with(figures["placement-48"], "the same 50 draws at 32 blocks").split(":", 1)[1]
    pre_32_low, pre_32_high, post_32_low, post_32_high = numbers(line.replace("pre-norm", "").replace("post-norm", ""))
    assert pre_32_low < 5.653 < pre_32_high and post_32_low < 0.04951 < post_32_high
    text = " ".join(markdown(cells).split())
    assert "\u00d76.28 and \u00d70.32 at 48 blocks" in text and "\u00d75.653 and \u00d70.04951 at 32" in text
    assert "elsewhere" not in text and "often quoted" not in text


def test_post_norm_rescales_the_stream_96_times(figures):
    per_block = sum(step.is_norm for step in block_trace(
        np.ones((1, 16)), random_stack(1, seed=0)[0], placement="post"))
    assert f"{per_block} times per block, {48 * per_block} times in 48 blocks" in figures["placement-48"]
    explanation = get_question("norms-predict-placement").explanation
    assert f"{48 * per_block} times in all" in explanation and "48 times" not in explanation


# ---------------------------------------------------------------- the residual stream

def test_residual_stream(figures):
    text = figures["residual-stream"]
    assert "1.00 " * 11 + "1.00" in text
    assert "stream: 0.90 at the start, 3.85 after 12 blocks" in text
    assert "aligned: 12.90; at right angles: 3.58" in text
    assert "blocks 1, 4, 12: 70%, 44%, 26%" in text
    r = residual_stream(12, seed=0)
    assert r.shares[0] > r.shares[3] > r.shares[11]
    assert abs(r.sizes[-1] - r.right_angles[-1]) < 0.15 * r.right_angles[-1]   # 'near the right-angle line'


def test_residual_stream_other_draws_figures_lie_inside_the_spreads(figures, cells):
    """The syllabus's 3.2 with shares 75/51/34 %: inside the spread of our draws, below the
    right-angle size, with falling shares."""
    low, high, mean = numbers(line_with(figures["residual-stream"], "100 other draws").split(":", 1)[1])
    assert low < 3.22 < high and 3.0 < mean < 4.0
    right_angles = np.sqrt(0.9 ** 2 + 12)
    assert 3.22 < right_angles                                       # 'a little under the right-angle line'
    spreads = line_with(figures["residual-stream"], "  and the shares of blocks 1, 4, 12").split("over", 1)[1]
    bounds = numbers(spreads)
    for share, (low, high) in zip((75, 51, 34), zip(bounds[0::2], bounds[1::2])):
        assert low < share < high, (share, low, high)               # 'each ... inside its spread above'
    text = " ".join(markdown(cells).split())
    assert "near 3.2 with shares of 75, 51 and 34 %" in text and "elsewhere" not in text


# ---------------------------------------------------------------- exercises and questions

def test_question_texts():
    stack = get_question("norms-predict-stack")
    assert "a little" not in stack.prompt and "halves its length" in stack.prompt
    assert 0.5 ** 30 < 1e-8                                          # 'about one in a billion'
    zero_f = get_question("norms-predict-zero-f")
    assert "and train well" not in zero_f.explanation


def test_the_pre_norm_line_is_retired_but_still_checks_for_saved_notebooks():
    old = get_exercise("pre-norm-update")
    assert old.retired and old.id not in {ex.id for ex in all_exercises()}
    assert try_variant(old).passed


def test_nudge_growth_reproduces_the_labs_factors():
    """'Once your check passes, your function gives the two factors the lab printed'."""
    from exercises.core.cell import run_cell
    from lib.attention import attention
    from lib.ffn import ffn
    from lib.norm import rms_norm
    from lib.weights import random_weights

    ex = get_exercise("nudge-growth")
    nudge_growth = run_cell(ex.solution_source, ex.context)["nudge_growth"]
    layers = []
    for w in random_stack(48, seed=1):
        layers.append(lambda h, w=w: attention(h, w.Wq, w.Wk, w.Wv, w.Wo, causal=True))
        layers.append(lambda h, w=w: ffn(h, w.W_up, None, w.W_down, None, activation="gelu"))
    x, = random_weights([(8, 16)], seed=1, scale=1.0)
    direction, = random_weights([(8, 16)], seed=66, scale=1.0)
    m = placement_model(48, seed=1)
    for placement in ("pre", "post"):
        got = nudge_growth(x, 1e-6 * direction, layers, rms_norm, placement)
        assert got == pytest.approx(m[placement]["factor"], rel=1e-6)


def test_examples_quoted_by_the_feedback_are_in_sight_above_their_checks(cells):
    """Every exercise's visible example is shown before its check; no answer box sits above it."""
    index = {c["metadata"].get("course", {}).get("exercise"): i for i, c in enumerate(cells)
             if "exercise" in c["metadata"].get("tags", [])}
    before = {ex: "\n".join(source(c) for c in cells[:i]) for ex, i in index.items()}
    assert "`[1, 1, 5, 5]` and `[2, 4, 6, 8]`" in before["layer-norm"]
    assert "`[3, -1, 2, 0]`" in before["rms-norm"] and "`[1, 1, 2, 0.5]`" in before["rms-norm"]
    assert "example_x = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.5, 2.5, 0.0]])" in before["nudge-growth"]
    for ex_id, i in index.items():
        intro = source(cells[i - 1]) + source(cells[i - 2])
        assert "<details>" not in intro, f"a box right above {ex_id}"
    eps_box = next(i for i, c in enumerate(cells) if "inside the root or outside" in source(c))
    assert eps_box > index["layer-norm"] + 1                          # after the check
    assert "sqrt(variance + eps)" not in "\n".join(source(c) for c in cells[:index["layer-norm"]])


def test_structure(cells):
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    for lab in ("stack_lab()", "axis_lab()", "placement_lab()", "stream_lab()"):
        assert any(lab in s for s in code), lab
    for question in ("norms-predict-stack", "norms-number-five", "norms-number-means",
                     "norms-number-length", "norms-predict-zero-f", "norms-predict-placement",
                     "norms-predict-stream-why"):
        assert f'ask("{question}")' in code
    exercises = [c["metadata"]["course"]["exercise"] for c in cells if "exercise" in c["metadata"].get("tags", [])]
    assert exercises == ["layer-norm", "rms-norm", "nudge-growth"]
    first_code = next(c for c in cells if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    figures = {c["metadata"].get("course", {}).get("figure") for c in cells if c["cell_type"] == "code"}
    assert FIGURES <= figures
    text = markdown(cells)
    for typed in ("2.83", "0.6144", "1.790", "3.85", "12.9", "11.2", "0.0369", "0.94", "0.425"):
        assert typed not in text, f"figure {typed} typed in prose"
    for claim in ("ten times the one below", "hundreds of times", "never does",
                  "gives back about as much as it reads", "only train with"):
        assert claim not in text
    assert source(cells[-2]).startswith("## References") and "Zhang, R. Sennrich" in source(cells[-2])


def test_the_stream_question_asks_why_and_the_section_below_shows_it(cells):
    """The labs above show the pre-norm stream growing far less than its additions add up to; the
    question asks why, and its answer is what the section then shows (the additions at right
    angles), with the premise true of the lab's stream. The growth law itself (√depth) is not
    stated above the question: it would give the answer away (tests/test_answers_in_sight.py)."""
    sources = [source(c) for c in cells]
    asked = sources.index('ask("norms-predict-stream-why")')
    assert 'ask("norms-predict-stream")' not in sources
    assert "far less than its additions add up to" in sources[asked - 1]
    q = get_question("norms-predict-stream-why")
    assert "unrelated directions" in q.choices[q.answer] and "squares add up" in q.choices[q.answer]
    r = residual_stream(12, seed=0)
    assert np.allclose(r.additions, 1.0) and r.sizes[0] == pytest.approx(0.9)      # the premise
    assert r.sizes[-1] < (0.9 + 12) / 2 and r.sizes[-1] > r.sizes[0]              # far smaller, still growing
    for seed in range(0, 101):                                   # "several times larger than it started"
        assert residual_stream(12, seed=seed).sizes[-1] > 2 * residual_stream(12, seed=seed).sizes[0]
    assert "several times larger" in q.explanation and "do not cancel out" in q.explanation
    assert "right-angled triangle" in "\n".join(sources[asked + 1:asked + 6])   # the section shows it
