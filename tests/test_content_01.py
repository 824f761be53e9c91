"""Notebook 01, positional encoding: its structure, and the syllabus figures it prints.

The figures are pinned through what the notebook's own cells print when it runs in a real
kernel (the cells marked with metadata.course.figure).
"""

import json
import re

import pytest

from conftest import CONTENT
from exercises.core.registry import all_exercises, all_questions

NAME = "01_positional_encoding.ipynb"
STEM = NAME[:-6]


@pytest.fixture(scope="module")
def notebook():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_format_and_setup(notebook):
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] == 5
    assert notebook["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                                  "language": "python"}
    assert all("id" in cell for cell in notebook["cells"])
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert "setup" in code[0]["metadata"].get("tags", [])
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


def test_rhythm_predict_then_lab_then_exercises_then_you_can_now(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    first_ask = next(i for i, s in enumerate(sources) if s.startswith('ask("pos-predict-shuffle")'))
    first_lab = next(i for i, s in enumerate(sources) if "shuffle_lab()" in s)
    first_exercise = next(i for i, c in enumerate(notebook["cells"]) if "exercise" in c["metadata"].get("tags", []))
    assert first_ask < first_lab < first_exercise
    for lab in ("shuffle_lab()", "position_table_lab()", "rotary_lab()"):
        assert sum(lab in s for s in sources) == 1
    assert sources[-1].startswith("## You can now")
    exercises = [ex.id for ex in all_exercises() if ex.notebook == STEM]
    assert len(exercises) >= 3
    for ex_id in exercises:
        assert f"**{ex_id}**" in sources[-1]                 # the closing list matches the exercises
    questions = [q for q in all_questions() if q.notebook == STEM]
    assert len(questions) >= 3
    for q in questions:
        assert sum(s.strip() == f'ask("{q.id}")' for s in sources) == 1
    assert any("<details><summary>" in s for s in sources)


def test_questions_come_before_the_figures_they_ask_about(notebook):
    cells = notebook["cells"]
    sources = [_source(c) for c in cells]
    position = {c.get("metadata", {}).get("course", {}).get("figure"): i for i, c in enumerate(cells)}
    for question, figure in [("pos-number-pe01", "pe-d2"), ("pos-shape-ten-tokens", "pe-shape"),
                             ("pos-number-last-speed", "last-speed"), ("pos-number-scale-64", "scale-64"),
                             ("pos-predict-rope", "rope-scores")]:
        asked = sources.index(f'ask("{question}")')
        assert asked < position[figure], question


def test_prose_does_not_type_the_figures(notebook):
    prose = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    for typed in ("0.217", "0.765", "(10, 8)", "0.38", "1.54", "0.24", "1.82", "0.44", "0.72",
                  "1/100", "0.01", "factor is 8", "= 8"):
        assert typed not in prose, typed


def test_figure_cells_are_marked(notebook):
    marked = {c["metadata"]["course"]["figure"] for c in notebook["cells"]
              if c["cell_type"] == "code" and "figure" in c["metadata"].get("course", {})}
    assert marked == {"shuffle", "causal", "pe-d2", "pe-shape", "last-speed", "pe-slice",
                      "scaled-word", "scale-64", "rope-scores"}


# ---------------------------------------------------------------- the pinned figures

def test_shuffle_figure(figures):
    lines = figures["shuffle"].splitlines()
    assert "positions added: False" in lines[0]
    assert lines[0].endswith("cat 0.00, dog 0.00, car 0.00")
    changes = [float(x) for x in re.findall(r"\w+ (\d+\.\d+)", lines[1].split(":", 2)[-1])]
    assert len(changes) == 3 and all(c > 0.5 for c in changes)


def test_causal_mask_figure(figures):
    assert "words each row averages over: [1 2 3 4 5]" in figures["causal"]


def test_d2_vector_and_pe01(figures):
    text = figures["pe-d2"]
    assert "equal to [sin(pos), cos(pos)]: True" in text
    assert "PE[0][1] = 1.0" in text


def test_shape_for_ten_tokens(figures):
    assert figures["pe-shape"].strip() == "(10, 8)"


def test_last_pair_speed(figures):
    text = figures["last-speed"]
    assert "d_model =   4: the last pair turns 0.010000 radians per position" in text
    assert "d_model =   8: the last pair turns 0.001000 radians per position" in text
    sine, reference = re.findall(r":\s*(\S+)\n", text)[-2:]
    assert sine == reference                                   # the table's pair is sin(1/100)


def test_table_built_once_and_sliced(figures):
    assert "whole table: (16, 8)   this text: (3, 8)" in figures["pe-slice"]
    assert "same as a table built for 3 rows: True" in figures["pe-slice"]


def test_scaled_word(figures):
    text = figures["scaled-word"]
    assert "PE[0]             = [0.0, 1.0, 0.0, 1.0]" in text
    assert "word + PE[0]      = [-0.77, 0.38, 0.91, 0.72]" in text
    assert "2 * word + PE[0]  = [-1.54, -0.24, 1.82, 0.44]" in text


def test_factor_for_d_model_64(figures):
    assert "d_model =  64: factor sqrt(d_model) = 8\n" in figures["scale-64"]


def test_rope_scores(figures):
    text = figures["rope-scores"]
    assert "lengths kept: True" in text
    assert "key at  2, query at  5 (3 apart): score 0.217" in text
    assert "key at 12, query at 15 (3 apart): score 0.217" in text
    assert "key at  2, query at  8 (6 apart): score -0.765" in text
