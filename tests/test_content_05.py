"""Notebook 05: the figures, as the notebook itself computes and prints them, and its structure."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from lib import model

NOTEBOOK = "05_trained_model.ipynb"
PATH = Path(__file__).resolve().parents[1] / "content" / NOTEBOOK
FIGURES = {"training-record", "logits-match", "perplexity", "residual-stream", "rms-by-hand",
           "largest-value", "gates-shut", "ablations", "mismatches", "parameters", "loss-curve"}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


def numbers(text):
    return [float(n.replace(",", "")) for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures)
    assert all(figures[name].strip() for name in FIGURES)


def test_training_record(figures):
    text = figures["training-record"]
    assert "4 blocks, d_model 96, 4 heads of 24, SwiGLU width 256, vocabulary 55, context 256" in text
    assert "448,512 parameters, trained with PyTorch 2.13.0+cpu on 2 CPU threads in 648 s (seed 2026)" in text
    assert "loss at step 50: 3.098;  at step 1800: 1.084 (held-out 1.094)" in text


def test_logits_match(figures):
    text = figures["logits-match"]
    assert "logits: (256, 55)" in text
    difference = float(re.search(r"PyTorch's logits: ([\d.e+-]+)", text).group(1))
    assert difference < 1e-4
    assert "largest logit: 22.1" in text


def test_perplexity(figures):
    text = figures["perplexity"]
    assert "uniform 55, bigram 6.87, trained model 2.98" in text
    rows = {line.split()[0]: numbers(line) for line in text.splitlines()[1:]}
    assert rows["copy"] == [16, 10.32, 1.04] and rows["reverse"] == [5, 9.91, 1.00]
    assert rows["verb"] == [10, 5.98, 2.99]
    for kind in ("count", "copy", "reverse", "sum", "difference"):
        assert rows[kind][2] < 1.2 < 3 < rows[kind][1]          # learned what the bigram cannot


def test_residual_stream(figures):
    text = figures["residual-stream"]
    assert "start (the embedding): stream 0.11" in text
    assert "block 1: attention adds 0.15, FFN adds 1.83, stream 1.89" in text
    assert "block 4: attention adds 0.73, FFN adds 8.63, stream 13.51" in text


def test_rms_by_hand(figures):
    assert float(figures["rms-by-hand"].split(":")[-1]) < 1e-12


def test_largest_value(figures):
    text = figures["largest-value"]
    assert "largest |number| in the stream: 0.5, 13.4, 37.4, 63.8, 113.8" in text
    assert "float16's largest number: 65,504" in text and "room to spare: x576" in text


def test_gates_shut(figures):
    text = figures["gates-shut"]
    assert "block 1:  26.4 of 256 units shut per token on average (from 9 to 44)" in text
    assert "block 3:  41.6 of 256 units shut per token on average (from 18 to 75)" in text


def test_ablations(figures):
    text = figures["ablations"]
    assert "whole model: perplexity 2.98; copy 1.04, reverse 1.00" in text
    rows = {line.split(":")[0]: numbers(line.split(":")[1]) for line in text.splitlines()[1:6]}
    assert rows["without block 1"][0] == pytest.approx(4687.70)
    assert rows["without block 2"][:2] == [6.05, 31.80]
    assert rows["without block 3"][3] == pytest.approx(343.79)
    firsts = [rows[f"without block {i}"][0] for i in (1, 2, 3, 4)]
    assert firsts == sorted(firsts, reverse=True) and firsts[0] > 55    # block 1 matters most
    assert rows["without positions"][0] == pytest.approx(127.77)
    assert "order-dependent predictions: 1.07 with RoPE, 825.53 without" in text


def test_mismatches(figures):
    rows = {}
    for line in figures["mismatches"].splitlines()[1:]:
        name, rest = line[:24].strip(), line[24:].split()
        rows[name] = rest
    assert rows["as trained"] == ["2.98", "1.00", "100%", "0.000", "trained"]
    assert rows["RoPE pairs neighbours"] == ["48.44", "16.23", "48%", "26.334", "loud"]
    assert rows["RoPE base 100,000"] == ["3.16", "1.06", "92%", "9.911", "quiet"]
    assert rows["no RoPE"][-1] == "loud" and rows["LayerNorm for RMSNorm"][-1] == "quiet"
    assert rows["eps 1e-3 for 1e-5"][-1] == "quiet" and rows["eps 0.1 for 1e-5"][-1] == "loud"


def test_parameters(figures):
    text = figures["parameters"]
    assert "embedding (also the output layer):    5,280" in text
    assert "total: 448,512 (the weights file holds 448,512)" in text
    assert "shares: embedding 1.2%, attention 32.9%, ffn 65.8%, norms 0.2%" in text
    assert "1.71 MiB" in text


def test_loss_curve(figures):
    lines = figures["loss-curve"].splitlines()
    assert lines[0].startswith("step    50   training loss 3.098")
    assert lines[-1] == "step  1800   training loss 1.084   held-out loss 1.094"
    assert len(lines) == len(model.info()["loss_curve"][::4]) + 1


def test_structure():
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    for lab in ("ablation_lab()", "mismatch_lab()", "stream_lab()"):
        assert any(lab in source for source in code), lab
    for question in ("trained-number-uniform", "trained-predict-block", "trained-predict-mismatch"):
        assert f'ask("{question}")' in code
    first_code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    assert "torch" not in "".join(code)
    # the learner predicts before each lab that answers the question
    assert code.index('ask("trained-predict-block")') < next(i for i, s in enumerate(code) if "ablation_lab()" in s)
    assert code.index('ask("trained-predict-mismatch")') < next(i for i, s in enumerate(code) if "mismatch_lab()" in s)
    markdown = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for typed in ("2.98", "6.87", "4,687", "4687", "127.7", "825", "48.4", "3.16", "448,512", "113.8",
                  "576", "1.5e-05", "648"):
        assert typed not in markdown, f"figure {typed} typed in prose"
    assert "training/README.md" in markdown


def test_question_answers_match_the_model():
    from exercises.core.registry import get_question
    from labs.trained import ablation_model, mismatch_model
    ppl = [ablation_model(tuple(j != i for j in range(4)))["now"]["whole text"] for i in range(4)]
    assert get_question("trained-predict-block").answer == int(np.argmax(ppl))
    mistakes = [{"pairing": "neighbours"}, {"base": 100_000.0}, {"positions": False}]
    ratios = [mismatch_model(**m)["ratio"] for m in mistakes]
    assert get_question("trained-predict-mismatch").answer == int(np.argmin(ratios))
    assert get_question("trained-number-uniform").answer == len(model.vocab())
