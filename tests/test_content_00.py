"""Notebook 00, and what every notebook's text must respect.

Notebook 00: its format, and the temperature sentences pinned through what its figure cell prints
(the cell marked with metadata.course.figure, run in a real kernel).

Course-wide:
- no learner-facing text says where the material came from (a numbered seed, a syllabus or a
  curriculum): it says what the thing is;
- every notebook after 00 ends with one "## References" cell, just before "## You can now", and
  every "<Name> et al." its prose cites is in that list;
- the example a check starts with (the one its feedback calls "the example above") is written
  above the check as a call, ``name(args)``, whose arguments are the example's (functions among
  them give the check's answer);
- no box (a hint, "inside the root or outside?") sits between an exercise's heading and its check,
  and no line of its solution is written above it.
"""

import ast
import builtins
import contextlib
import dataclasses
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import CONTENT, ROOT, notebooks
from engine.core.registry import all_exercises, get_question

NAME = "00_start_here.ipynb"
NOTEBOOKS = notebooks()


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _cells(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


# ---------------------------------------------------------------- notebook 00

@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


def test_format_and_setup():
    notebook = json.loads((CONTENT / NAME).read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] == 5
    assert notebook["metadata"]["kernelspec"]["name"] == "python"
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert "setup" in code[0]["metadata"].get("tags", [])
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


def _temperature_rows(text):
    rows = {}
    for line in text.strip().splitlines():
        temperature = float(line.split()[1])
        pairs = re.findall(r"(\w+) (\d\.\d\d)", line.split(None, 2)[2])
        rows[temperature] = [(word, float(weight)) for word, weight in pairs]
    return rows


def test_temperature_sharpens_or_flattens_but_never_reorders(figures):
    rows = _temperature_rows(figures["temperature"])
    temperatures = sorted(rows)
    assert len(temperatures) == 4
    assert rows[temperatures[0]][0][1] > 0.9                           # the top word takes nearly all
    spreads = [max(w for _, w in rows[t]) - min(w for _, w in rows[t]) for t in temperatures]
    assert all(a > b for a, b in zip(spreads, spreads[1:]))             # drifting towards an even split
    orders = {tuple(word for word, _ in sorted(rows[t], key=lambda p: -p[1])) for t in temperatures}
    assert len(orders) == 1                                            # the order never changes
    from labs.start import temperature_model
    for t in np.geomspace(0.01, 100, 30):
        weights = temperature_model(t)["weights"]
        assert list(np.argsort(-weights, kind="stable")) == list(range(len(weights)))


def test_the_softmax_prediction_quotes_computed_numbers():
    from lib.attention import softmax
    question = get_question("start-predict-softmax")
    scores = np.array([2.0, 1.0, 0.1])
    assert "[2.0, 1.0, 0.1]" in question.prompt
    assert ", ".join(f"{w:.2f}" for w in (scores / scores.sum())) in question.choices[0]
    weights = softmax(scores)
    assert f"{weights[0]:.2f}, {weights[1]:.2f} and {weights[2]:.2f}" in question.explanation


def test_the_right_softmax_choice_is_told_apart_by_what_softmax_does_with_the_gaps():
    """The right choice states the ratio a gap of 1 makes (e, 2.72), which the scores divided by
    their total (the first wrong choice) do not have: there the ratio is the scores' own, 2."""
    from lib.attention import softmax
    question = get_question("start-predict-softmax")
    scores = np.array([2.0, 1.0, 0.1])
    right = question.choices[question.answer]
    weights, divided = softmax(scores), scores / scores.sum()
    assert scores[0] - scores[1] == 1.0 and "1 point above the second" in right
    assert "gaps between the scores" in right and f"{weights[0] / weights[1]:.2f} (e) times" in right
    assert f"{np.e:.2f}" == f"{weights[0] / weights[1]:.2f}"
    assert f"{divided[0] / divided[1]:.2f}" != f"{weights[0] / weights[1]:.2f}"
    assert "none of them zero" not in right


def test_the_row_mean_paragraph_does_not_work_the_shape_question_s_case():
    cells = _cells(CONTENT / NAME)
    sources = [_source(c) for c in cells]
    asked = sources.index('ask("start-shape-row-mean")')
    above = " ".join(" ".join(sources[:asked]).split())
    assert "(4, 2, 3)" not in above and "also works for a batch" not in above
    assert "the check also gives your function arrays with more axes in front of that one" in above


def test_the_start_page_announces_the_references():
    prose = "\n".join(_source(c) for c in _cells(CONTENT / NAME) if c["cell_type"] == "markdown")
    assert "**References**" in prose


# ---------------------------------------------------------------- course-wide: provenance

PROVENANCE = re.compile(r"syllab|curricul|\bseeds?/|\bseed 0\d\d\b|reference texts?\b", re.IGNORECASE)
LEARNER_FACING = sorted(
    [p for p in CONTENT.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    + [p for folder in ("engine", "lib", "labs", "exercises", "presentation") for p in (ROOT / folder).rglob("*.py")])


@pytest.mark.parametrize("path", LEARNER_FACING, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_learner_facing_text_says_where_the_material_came_from(path):
    hits = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if PROVENANCE.search(line)]
    assert hits == [], f"say what the thing is, not where it came from: {hits}"


def test_the_provenance_pattern_catches_what_it_should():
    for text in ("The setup is the syllabus's (seed 001)", "seed 002's toy FFN", "from the curriculum",
                 "see seeds/", "the reference text's figures"):
        assert PROVENANCE.search(text), text
    for text in ("drawn from seed 2026, query first", "seed=104", "a fixed seed", "reference outputs"):
        assert not PROVENANCE.search(text), text


# ---------------------------------------------------------------- course-wide: references

@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name != NAME], ids=lambda p: p.name)
def test_each_notebook_ends_with_its_references(path):
    sources = [_source(c) for c in _cells(path)]
    at = [i for i, s in enumerate(sources) if s.startswith("## References")]
    assert len(at) == 1, "one References section"
    assert at[0] == len(sources) - 2 and sources[-1].startswith("## You can now")
    items = [line for line in sources[at[0]].splitlines() if line.startswith("- ")]
    assert len(items) >= 2
    entries = re.split(r"\n- ", sources[at[0]])[1:]
    assert all(re.search(r"\b(19|20)\d\d\b", entry) for entry in entries), "each entry has its year"
    prose = "\n".join(s for i, s in enumerate(sources) if i != at[0])
    for name in set(re.findall(r"\b([A-Z][a-z]+) et al\.", prose)):
        assert name in sources[at[0]], f"{name} et al. is cited but not in the references"


# ---------------------------------------------------------------- the example above each check

def _calls(text, name):
    """Every call ``name(...)`` written in ``text`` (a definition ``def name(`` is not a call)."""
    found = []
    for match in re.finditer(rf"(?<![\w.]){re.escape(name)}\(", text):
        if text[max(0, match.start() - 4):match.start()] == "def ":
            continue
        depth = 0
        for end in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                found.append(text[match.start():end + 1])
                break
    return found


def _bound(cell_source):
    """The names a cell binds: assignments, loop targets, ``def``, ``class`` and imports."""
    names = set()
    for node in ast.walk(ast.parse(cell_source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _read(cell_source):
    return {n.id for n in ast.walk(ast.parse(cell_source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _define(name, cells, sources, before, namespace):
    """Run, in ``namespace``, the last code cell above ``before`` that binds ``name`` (no exercise
    cell), after the cells that bind the names it reads; names no cell binds are left alone."""
    if name in namespace or name in dir(builtins):
        return
    found = [i for i in range(before) if cells[i]["cell_type"] == "code"
             and "exercise" not in cells[i]["metadata"].get("tags", []) and name in _bound(sources[i])]
    if not found:
        return
    where = found[-1]
    for other in sorted(_read(sources[where]) - _bound(sources[where])):
        _define(other, cells, sources, where, namespace)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(sources[where], namespace)


def _same(a, b):
    """The notebook's argument ``a`` is the check's ``b``: the same numbers, text and structure.
    Functions are compared by what they do, through the reference's answer (see the test)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if callable(a) and callable(b) and not isinstance(b, type):
        return True
    if isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(b):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(b))
    return a == b


def _holds_function(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_function(v) for v in value)
    return callable(value) and not isinstance(value, np.ndarray)


def _shown_examples():
    out = []
    for path in NOTEBOOKS:
        for ex in all_exercises():
            if ex.notebook == path.stem and ex.kind == "function":
                out.append((path, ex))
    return out


@pytest.mark.parametrize("path, ex", _shown_examples(), ids=lambda v: getattr(v, "id", getattr(v, "name", "")))
def test_the_example_a_check_quotes_is_written_above_it(path, ex):
    cells = _cells(path)
    sources = [_source(c) for c in cells]
    check = sources.index(f'check("{ex.id}")')
    shown = [call for i, s in enumerate(sources[:check])
             if "exercise" not in cells[i]["metadata"].get("tags", []) for call in _calls(s, ex.name)]
    assert shown, f"no call of {ex.name}(...) above the check of {ex.id}"
    call = ast.parse(" ".join(shown[-1].split()), mode="eval").body

    namespace = {}
    setup = sources[next(i for i, c in enumerate(cells) if "setup" in c["metadata"].get("tags", []))]
    exec(setup.replace("begin()", ""), namespace)                        # the notebook's imports
    for name in sorted({n.id for arg in call.args for n in ast.walk(arg) if isinstance(n, ast.Name)}):
        _define(name, cells, sources, check, namespace)
    args = [eval(compile(ast.Expression(arg), "<example>", "eval"), namespace) for arg in call.args]

    visible = next(c for c in ex.cases(np.random.default_rng(0)) if c.visible)
    assert not visible.kwargs and not call.keywords
    assert len(args) == len(visible.args)
    for shown_arg, case_arg in zip(args, visible.args):
        assert _same(shown_arg, case_arg), f"{ex.id}: the notebook shows {shown_arg!r}, the check uses {case_arg!r}"
    if any(_holds_function(a) for a in visible.args):       # functions: the same answer from them
        expected = ex.reference(*visible.args)
        assert np.allclose(ex.reference(*args), expected, rtol=1e-9, atol=0), \
            f"{ex.id}: the functions the notebook shows give another answer than the check's"


# ---------------------------------------------------------------- course-wide: no answer above its exercise

def _exercise_places():
    out = []
    for path in NOTEBOOKS:
        cells = _cells(path)
        for i, cell in enumerate(cells):
            ex_id = cell["metadata"].get("course", {}).get("exercise")
            if ex_id and "exercise" in cell["metadata"].get("tags", []):
                out.append((path, ex_id))
    return out


@pytest.mark.parametrize("path, ex_id", _exercise_places(), ids=lambda v: getattr(v, "name", v))
def test_no_box_between_an_exercise_and_its_check_and_no_fill_above_it(path, ex_id):
    """Hints and "inside or outside" boxes come after the check: none sits between the exercise's
    heading and its check. No line of the solution is written out above the exercise."""
    from engine.core.registry import get_exercise

    cells = _cells(path)
    sources = [_source(c) for c in cells]
    at = next(i for i, c in enumerate(cells) if c["metadata"].get("course", {}).get("exercise") == ex_id
              and "exercise" in c["metadata"].get("tags", []))
    check = sources.index(f'check("{ex_id}")')
    heading = max(i for i in range(at) if cells[i]["cell_type"] == "markdown" and sources[i].lstrip().startswith("#"))
    assert at < check
    boxes = [i for i in range(heading, check) if "<details>" in sources[i]]
    assert boxes == [], f"a box between the heading of {ex_id} and its check: cells {boxes}"
    above = "".join("".join(sources[:at]).split())
    for fill in get_exercise(ex_id).solution:
        written = "".join(fill.split())
        if len(written) >= 6:
            assert not re.search(rf"(?<![\w.]){re.escape(written)}", above), f"{ex_id}: {fill!r} written above"
