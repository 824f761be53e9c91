"""Notebook 04: the syllabus figures, as the notebook itself computes and prints them."""

import json
from pathlib import Path

import pytest

NOTEBOOK = "04_decoder_block.ipynb"
PATH = Path(__file__).resolve().parents[1] / "content" / NOTEBOOK
FIGURES = {"six-steps", "causal-mask", "flow-48", "near-identity", "hand-block", "hand-decoder", "count-768",
           "depth-width", "gpt2-gap", "real-models"}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures)
    assert all(figures[name].strip() for name in FIGURES)


def test_six_steps(figures):
    text = figures["six-steps"]
    sizes = [line.split("size ")[1] for line in text.splitlines() if " size " in line]
    assert sizes == ["0.74", "1.00", "0.95", "1.41", "1.00", "1.21", "2.05"]
    assert "output row 1: [+0.12, -0.58, -2.73, -1.31]" in text


def test_causal_mask(figures):
    text = figures["causal-mask"]
    assert "[[1 0 0 0 0]\n [1 1 0 0 0]\n [1 1 1 0 0]\n [1 1 1 1 0]\n [1 1 1 1 1]]" in text
    assert "[[1.   0.   0.   0.  ]" in text                   # token 1 reads only itself
    assert "each row sums to [1. 1. 1. 1.]" in text


def test_flow_48(figures):
    text = figures["flow-48"]
    assert "word 1 moved by the last word: 0\n" in text                 # exactly 0 with the mask
    assert "attention alone: words alike 0.21 -> 1.000" in text
    assert "every part on:   words alike 0.21 -> 0.818" in text
    assert "no causal mask:  word 1 moved by the last word: 0.34" in text


def test_near_identity(figures):
    text = figures["near-identity"]
    assert "weights at 0.02: average token length 1.3391 -> 1.3396 -> 1.3433 -> 1.3441 -> 1.3397" in text
    assert "weights at 0.2: average token length 1.3391 -> 4.7269" in text


def test_hand_block(figures):
    text = figures["hand-block"]
    assert "input                  +0.00 +4.00" in text
    assert "add attention          -1.00 +5.00" in text
    assert "add FFN                -1.00 +7.00" in text
    distance = float(text.split("whole numbers: ")[1].split()[0])
    assert 0 < distance < 1e-4                                          # lib reproduces it to 1e-4


def test_hand_decoder_and_seven_norms(figures):
    text = figures["hand-decoder"]
    assert "stream after 1 block: -1.00 +7.00" in text
    assert "after the final norm: -1.00 +1.00" in text
    assert "norms: 2 per block x 3 blocks + 1 final = 7" in text


def test_count_768(figures):
    text = figures["count-768"]
    assert "total: 109,529,856 parameters" in text
    for line in ("embedding  22.4%", "attention  25.8%", "ffn        51.7%"):
        assert line in text
    assert "the norms hold 19,200 of them" in text
    assert "memory at 2 bytes per number: 208.9 MiB" in text


def test_depth_width(figures):
    text = figures["depth-width"]
    assert "24 blocks:           194.5 M  (x1.78)" in text
    assert "388.9 M  (x3.55)" in text


def test_gpt2_gap(figures):
    text = figures["gpt2-gap"]
    assert "counted the simple way: 85.0 M (published 124 M)" in text
    assert "50,257 x 768:           38.6 M" in text
    assert "blocks + embedding:                      123.6 M" in text


def test_real_models(figures):
    rows = {line[:15].strip(): line[15:].split() for line in figures["real-models"].splitlines()[1:]}
    assert rows["GPT-2 Small"] == ["123.6", "M", "124.4", "M", "124.0", "M"]
    assert rows["DeepSeek-V3"] == ["29.6", "B", "671.0", "B", "671.0", "B"]   # the simple count does not close
    assert rows["per token"] == ["37.6", "B", "37.0", "B"]
    assert set(rows) >= {"GPT-2 Medium", "GPT-2 Large", "LLaMA-7B", "SmolLM2-360M"}


def test_structure():
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    cells = nb["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    for lab in ("six_steps_lab()", "flow_lab()", "calculator_lab()"):
        assert any(lab in source for source in code), lab
    questions = ("decoder-predict-size", "decoder-shape-scores", "decoder-predict-collapse",
                 "decoder-predict-zero-ffn", "decoder-number-norms", "decoder-number-width",
                 "decoder-predict-gpt2-gap")
    for question in questions:
        assert f'ask("{question}")' in code
    exercises = [c["metadata"]["course"]["exercise"] for c in cells if "exercise" in c["metadata"].get("tags", [])]
    assert exercises == ["causal-weights", "decoder-stack", "model-parameters"]
    first_code = next(c for c in cells if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    assert code.index('ask("decoder-predict-size")') < next(i for i, s in enumerate(code) if "six_steps_lab()" in s)
    assert code.index('ask("decoder-predict-collapse")') < next(i for i, s in enumerate(code) if "flow_lab()" in s)
    figures = {c["metadata"].get("course", {}).get("figure") for c in cells if c["cell_type"] == "code"}
    assert FIGURES <= figures
    markdown = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for typed in ("0.74", "2.05", "0.12, -0.58", "[-1, 7]", "109,529,856", "22.4", "25.8", "51.7", "19,200",
                  "208.9", "194", "389", "85.0", "38.6", "123.6", "671", "37 B", "0.818", "1.3391"):
        assert typed not in markdown, f"figure {typed} typed in prose"
    assert "You can now" in markdown and "(05_trained_model.ipynb)" in markdown
