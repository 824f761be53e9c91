"""Notebook 02: the syllabus figures, computed by its cells, pinned; the lab and exercise cells in place."""

import json
import re

import numpy as np
import pytest

from conftest import CONTENT
from labs.decoder.models import REAL_MODELS
from lib.ffn import gelu, silu as lib_silu, worked_example
from lib.params import ModelConfig, block_parameters, ffn_parameters, gated_width

NAME = "02_feed_forward.ipynb"

PINNED = {
    "hidden-units": ["hidden layer shape: (3, 4)", "cat before ReLU: [2.0, -2.0, 1.0, 0.0]",
                     "cat's units on: 2 of 4"],
    "cat-alone": ["exactly the same: True"],
    "collapse": ["W_up @ W_down = [[1.5, -0.5], [1.5, 0.5]]", "(below 1e-12: True)"],
    "block-768": ["768 x 3,072: 2,359,296", "attention: 2,359,296", "FFN: 4,718,592", "norms: 1,536",
                  "one block: 7,079,424", "attention 33.3%, FFN 66.7%"],
    "toy-ffn": ["= 162"],
    "silu": ["silu(-3) = -0.14", "silu(0) = 0.00", "silu(3) = 2.86"],
    "gated-width": ["d_ff = 3,072:  4,718,592", "d_ff = 2,048:  4,718,592", "multiple of 32: 352",
                    "gated FFN, d_ff = 3,072:  7,077,888  (x1.50 the plain count)",
                    "plain at 3,072 9,437,184, gated at 2,048 9,437,184"],
    "ffn-flops": ["plain FFN at 768: 9,437,184 FLOPs per token, 2 x its 4,718,592 weights"],
    "llama-width": ["d = 4,096: 8/3 x d = 10,922.67, rounded up to a multiple of 256: 11,008 (released: 11,008)"],
    "router-shares": ["expert 1 (number 0 in lib.moe): share 0.875",
                      "expert 3 (number 2 in lib.moe): share 0.125"],
    "moe-counts": ["40,115,712 stored, 11,804,160 used per token", "506 M stored, 166 M used per token",
                   "dense 209 MiB", "965 MiB (2 bytes)", "483 MiB (1 byte)",
                   "stored x4.62, used per token x1.52, FFN weights a token runs x2.00",
                   "the router: 6,144 numbers per block"],
    "router-balance": ["fair share 1,024"],
}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


@pytest.mark.parametrize("figure", sorted(PINNED))
def test_figure_is_computed_and_pinned(figures, figure):
    assert figure in figures, f"no cell carries the figure {figure!r}"
    for text in PINNED[figure]:
        assert text in figures[figure], f"{text!r} missing from:\n{figures[figure]}"


def test_balancing_evens_out_the_router(figures):
    lines = [line for line in figures["router-balance"].splitlines() if line.startswith("strength")]
    spreads = []
    for line in lines:
        low, high = (int(n.replace(",", "")) for n in line.split("from ")[1].split(" to "))
        spreads.append(high - low)
    assert len(spreads) == 3 and spreads[0] > spreads[1] > spreads[2]
    fair = 1024
    assert spreads[0] > fair / 2                    # "left to itself, the router favours some experts"
    assert spreads[-1] < 0.05 * fair                # "close to its fair share" after balancing


def _cells():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))["cells"]


def test_labs_exercises_and_questions_are_in_the_notebook():
    source = "\n".join("".join(c["source"]) for c in _cells())
    for lab in ("hidden_units_lab()", "remove_activation_lab()", "parameters_lab()", "router_lab()"):
        assert lab in source
    exercises = [c["metadata"]["course"]["exercise"] for c in _cells()
                 if c["metadata"].get("course", {}).get("exercise")]
    assert exercises == ["ffn-sublayer", "block-count", "swiglu", "top2-weights", "moe-counts"]
    for question in ("ffn-predict-alone", "ffn-shape-hidden", "ffn-number-cat-on",
                     "ffn-predict-no-activation", "ffn-number-fair-share"):
        assert f'ask("{question}")' in source
    first_code = next(c for c in _cells() if c["cell_type"] == "code")
    assert "setup" in first_code["metadata"].get("tags", [])
    predict = next(i for i, c in enumerate(_cells()) if 'ask("ffn-predict-alone")' in "".join(c["source"]))
    lab = next(i for i, c in enumerate(_cells()) if "hidden_units_lab()" in "".join(c["source"]))
    assert predict < lab, "the predict question comes before the first lab"


def test_prose_does_not_type_the_figures():
    prose = "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")
    for number in ("7,079,424", "2,359,296", "4,718,592", "33.3", "66.7", "162", "0.875", "0.125",
                   "506", "166", "965", "483", "209", "40,115,712", "11,804,160", "1,024", "-0.14",
                   "2.86", "352", "1,536", "9,437,184", "7,077,888", "1.50", "4.62", "1.52", "2.00",
                   "6,144", "0.13", "10,922", "13,824", "22,016", "3,072 operations"):
        assert number not in prose, f"{number} is typed in the prose; print it from a cell"


def _prose():
    return "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


def _ratio(text, label):
    return float(re.search(label + r" x(\d+\.\d+)", text).group(1))


def test_a_third_matrix_makes_the_ffn_half_as_large_again(figures):
    text = figures["gated-width"]
    assert float(re.search(r"7,077,888  \(x(\d+\.\d+) the plain count", text).group(1)) == 1.5
    prose = _prose()
    assert "half as large again" in prose and "a third more" not in prose


def test_the_ffn_costs_two_flops_per_weight_and_the_activation_almost_nothing(figures):
    text = figures["ffn-flops"]
    flops, weights = (int(x.replace(",", "")) for x in re.findall(r"([\d,]{5,})", text.splitlines()[0]))
    assert flops == 2 * weights == 2 * ffn_parameters(768, 3072)
    share = float(re.search(r"(\d+\.\d+)% of that", text).group(1))
    assert share < 1                                                      # "only a few operations"
    gated = re.search(r"plain at 3,072 ([\d,]+), gated at 2,048 ([\d,]+)", figures["gated-width"]).groups()
    assert gated[0] == gated[1]                                           # same FLOPs as the plain one


def test_attention_and_one_ffn_matrix_are_equal_at_every_width():
    for d in (64, 768, 4096):
        assert 4 * d * d == d * (4 * d) == block_parameters(ModelConfig(d_model=d, layers=1, d_ff=4 * d,
                                                                       vocab=1)).attention
    assert "happens to equal" not in _prose()


def test_llama_widths_are_the_eight_thirds_rule_rounded_to_256(figures):
    lines = figures["llama-width"].strip().splitlines()
    assert len(lines) == 4
    for line in lines:
        rounded, released = re.search(r"256: ([\d,]+) \(released: ([\d,]+)\)", line).groups()
        assert rounded == released
    assert REAL_MODELS["LLaMA-7B"].config.d_ff == 11008 == gated_width(4096, 256)
    prose = _prose()
    assert "d = 4,096" in prose and "next multiple of 256 is 11,008" in prose
    assert 8 * 4096 % 3 != 0                                              # "not a whole number"


def test_what_a_mixture_costs_per_token(figures):
    text = figures["moe-counts"]
    stored, used, ffn = (_ratio(text, label) for label in ("stored", "used per token", "FFN weights a token runs"))
    assert stored > 3                                                     # "several times"
    assert 1.4 <= used <= 1.6                                             # "about half as many again"
    assert ffn == 2.0                                                     # "double"
    router_share = float(re.search(r"(\d+\.\d+)% of one expert", text).group(1))
    assert router_share < 1                                               # "tiny next to an expert"
    prose = _prose()
    assert "several times" in prose and "about half as many again" in prose and "double" in prose
    assert "not much more" not in prose


def test_the_mixture_exercise_comes_before_the_counts_and_nothing_above_answers_it():
    cells = _cells()
    sources = ["".join(c["source"]) for c in cells]
    exercise = next(i for i, c in enumerate(cells) if c["metadata"].get("course", {}).get("exercise") == "moe-counts")
    counts = next(i for i, c in enumerate(cells) if c["metadata"].get("course", {}).get("figure") == "moe-counts")
    assert exercise < counts
    above = "\n".join(sources[:exercise])
    for answer in ("d × 8", "d x 8", "must be in memory", "only uses two"):
        assert answer not in above, answer


def test_shape_and_count_questions_are_not_answered_above_them():
    sources = ["".join(c["source"]) for c in _cells()]
    shape = sources.index('ask("ffn-shape-hidden")')
    assert "to 4 **hidden units**" not in "\n".join(sources[:shape])
    assert "(3, 4)" not in "\n".join(s for s in sources[:shape] if not s.startswith("X = np.array"))


def test_the_deeper_boxes_hold_true():
    prose = _prose()
    assert "512 → 2048 → 512, four times wider" in prose and 2048 == 4 * 512   # the 2017 transformer
    assert float(gelu(np.array(-2.0))) < 0 and abs(float(gelu(np.array(-2.0)))) < 0.1  # small, negative
    e = worked_example()
    assert (e.X[0] @ e.W_up + e.b_up)[1] == -2                                 # cat's second unit
    for z in (-3.0, -5.0):
        assert abs(float(lib_silu(z))) < 0.2                               # near 0, large negative z
    for z in (3.0, 5.0):
        assert abs(float(lib_silu(z)) - z) < 0.2                           # near z, large positive z
    assert "large negative z" in prose and "large positive z" in prose
