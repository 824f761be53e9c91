"""Notebook 03: the syllabus figures, as the notebook itself computes and prints them."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from labs.norms import placement_model, stack_model
from lib.stack import residual_stream

NOTEBOOK = "03_norms_and_residuals.ipynb"
PATH = Path(__file__).resolve().parents[1] / "content" / NOTEBOOK


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


def numbers(text):
    return [float(n) for n in re.findall(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def test_every_figure_cell_printed(figures):
    expected = {"stack-modes", "layernorm-1155", "sqrt8", "ten-means", "rms-pick", "residual-add",
                "placement-48", "residual-stream"}
    assert expected <= set(figures)
    assert all(figures[name].strip() for name in expected)


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


def test_rms_pick(figures):
    assert "root mean square of pick: 0.6144" in figures["rms-pick"]
    assert "-1.790 +0.163 -0.326 -0.814" in figures["rms-pick"]


def test_residual_add(figures):
    assert "x + f(x) = 1.1 1.8 3.3 3.9" in figures["residual-add"]


def test_stack_modes(figures):
    rows = {line.split("  ")[0]: numbers(line.split("  ", 1)[1]) for line in figures["stack-modes"].splitlines()[1:]}
    assert len(rows) == 6
    plain, residual = rows["x \u2190 f(x)"], rows["x \u2190 x + f(x)"]
    assert plain[0] < 1e-6 and plain[2] > 1e6                     # vanishes at 0.5, explodes at 2
    assert residual[0] > 1 and residual[2] > 1e6                  # never vanishes, can still grow
    for post in ("x \u2190 LayerNorm(x + f(x))", "x \u2190 RMSNorm(x + f(x))"):
        assert rows[post] == [2.83, 2.83, 2.83]                   # pinned at sqrt(8)
    for pre in ("x \u2190 x + f(LayerNorm(x))", "x \u2190 x + f(RMSNorm(x))"):
        assert 3 < rows[pre][0] < rows[pre][1] < rows[pre][2] < 3 * np.sqrt(30 * 8 * 4)
    assert stack_model("plain", 2.0, 30)["final"] == pytest.approx(plain[2], rel=0.01)


def test_placement_48(figures):
    text = figures["placement-48"]
    assert "pre-norm stream 8.70 (sqrt(48) = 6.93), post-norm stream 1.00" in text
    assert "arrives x11.2 with pre-norm, x0.0369 with post-norm" in text
    assert "pre-norm:  from x2.96 to x21.9, median x8.01" in text
    assert "post-norm: from x0.000834 to x0.887, median x0.013" in text
    m = placement_model(48, seed=1)
    assert m["pre"]["factor"] > 1 > m["post"]["factor"]


def test_residual_stream(figures):
    text = figures["residual-stream"]
    assert "1.00 " * 11 + "1.00" in text
    assert "stream: 0.90 at the start, 3.85 after 12 blocks" in text
    assert "aligned: 12.90; at right angles: 3.58" in text
    assert "blocks 1, 4, 12: 70%, 44%, 26%" in text
    r = residual_stream(12, seed=0)
    assert r.shares[0] > r.shares[3] > r.shares[11]
    assert abs(r.sizes[-1] - r.right_angles[-1]) < 0.1 * r.aligned[-1]


def test_structure():
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    for lab in ("stack_lab()", "axis_lab()", "placement_lab()", "stream_lab()"):
        assert any(lab in source for source in code), lab
    for question in ("norms-predict-stack", "norms-number-five", "norms-number-means",
                     "norms-number-length", "norms-predict-zero-f", "norms-predict-placement",
                     "norms-predict-stream"):
        assert f'ask("{question}")' in code
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    # the predict question comes before the first lab
    assert code.index('ask("norms-predict-stack")') < next(i for i, s in enumerate(code) if "stack_lab()" in s)
    markdown = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for typed in ("2.83", "0.6144", "1.790", "3.85", "12.9", "11.2", "0.0369"):
        assert typed not in markdown, f"figure {typed} typed in prose"
