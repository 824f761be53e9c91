"""Notebook 02: the syllabus figures, computed by its cells, pinned; the lab and exercise cells in place."""

import json

import pytest

from conftest import CONTENT

NAME = "02_feed_forward.ipynb"

PINNED = {
    "hidden-units": ["hidden layer shape: (3, 4)", "cat before ReLU: [2.0, -2.0, 1.0, 0.0]",
                     "cat's units on: 2 of 4"],
    "cat-alone": ["exactly the same: True"],
    "collapse": ["W1 @ W2 = [[1.5, -0.5], [1.5, 0.5]]", "(below 1e-12: True)"],
    "block-768": ["768 x 3,072: 2,359,296", "attention: 2,359,296", "FFN: 4,718,592", "norms: 1,536",
                  "one block: 7,079,424", "attention 33.3%, FFN 66.7%"],
    "toy-ffn": ["= 162"],
    "silu": ["silu(-3) = -0.14", "silu(0) = 0.00", "silu(3) = 2.86"],
    "gated-width": ["d_ff = 3,072:  4,718,592", "d_ff = 2,048:  4,718,592", "multiple of 32: 352"],
    "router-shares": ["expert 1 (number 0 in lib.moe): share 0.875",
                      "expert 3 (number 2 in lib.moe): share 0.125"],
    "moe-counts": ["40,115,712 stored, 11,804,160 used per token", "506 M stored, 166 M used per token",
                   "dense 209 MiB", "965 MiB (2 bytes)", "483 MiB (1 byte)"],
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


def _cells():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))["cells"]


def test_labs_exercises_and_questions_are_in_the_notebook():
    source = "\n".join("".join(c["source"]) for c in _cells())
    for lab in ("hidden_units_lab()", "remove_activation_lab()", "parameters_lab()", "router_lab()"):
        assert lab in source
    exercises = [c["metadata"]["course"]["exercise"] for c in _cells()
                 if c["metadata"].get("course", {}).get("exercise")]
    assert exercises == ["ffn-sublayer", "block-count", "swiglu", "top2-weights"]
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
                   "2.86", "352", "1,536"):
        assert number not in prose, f"{number} is typed in the prose; print it from a cell"
