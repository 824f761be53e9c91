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
        weights = temperature_model(t).weights
        assert list(np.argsort(-weights, kind="stable")) == list(range(len(weights)))


def test_the_softmax_prediction_quotes_computed_numbers():
    from lib.attention import softmax
    question = get_question("start-predict-softmax")
    scores = np.array([2.0, 1.0, 0.1])
    assert "[2.0, 1.0, 0.1]" in question.prompt
    assert ", ".join(f"{w:.2f}" for w in (scores / scores.sum())) in question.choices[0]
    weights = softmax(scores)
    assert f"{weights[0]:.2f}, {weights[1]:.2f} and {weights[2]:.2f}" in question.explanation


def test_every_softmax_choice_is_a_rule_with_the_numbers_it_gives():
    """Each choice names a rule and the weights that rule gives [2.0, 1.0, 0.1] (computed, not
    typed); only the right one is softmax's. No choice stands out by its length or by being the
    only one with a mechanism: the longest is less than 1.3 times the shortest."""
    from lib.attention import softmax
    question = get_question("start-predict-softmax")
    scores = np.array([2.0, 1.0, 0.1])
    rules = [scores / scores.sum(), softmax(scores), (scores == scores.max()).astype(float),
             (scores - scores.min()) / (scores - scores.min()).sum()]
    written = ["[" + ", ".join(f"{w:.2f}" for w in rule) + "]" for rule in rules]
    assert len(set(written)) == 4
    for choice, numbers in zip(question.choices, written):
        assert choice.endswith(": " + numbers), choice
    assert question.answer == 1 and "exp" in question.choices[1]
    lengths = [len(c) for c in question.choices]
    assert max(lengths) < 1.3 * min(lengths), lengths
    assert "no weight at all" in question.explanation and rules[3][-1] == 0


SHIFTS = {"smallest score": lambda row: row.min(), "mean score": lambda row: row.mean(),
          "first score": lambda row: row[0]}


@pytest.mark.parametrize("mistake", sorted(SHIFTS))
def test_a_shift_mistake_s_hint_quotes_a_row_that_does_overflow_and_the_one_the_check_names(mistake):
    """The hint on a softmax shifted by the wrong number quotes a row that this shift leaves with an
    exponent float64 cannot hold, and it is the row the check names as the first NaN. A row
    [0, 1000] shifted by its mean would not do: exp(500) is finite."""
    from engine.core.registry import get_exercise
    from exercise_answers import try_variant
    ex = get_exercise("stable-softmax")
    wrong = next(m for m in ex.mistakes if m.name == mistake)
    said = try_variant(ex, wrong.code).text()
    assert wrong.hint in said
    label, row_at = re.search(r"On a hidden test, (.+?) \(input shape .*?first at row (\d+)", said).groups()
    case = next(c for c in ex.fixed_cases() if c.label == label)
    named = case.args[0][int(row_at)]
    quoted = np.array([float(x.replace("\u2212", "-")) for x in
                       re.search(r"a row such as \[([^\]]+)\]", wrong.hint).group(1).split(",")])
    assert np.array_equal(quoted, named), (quoted, named)
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(quoted - SHIFTS[mistake](quoted))).any()
        assert np.isfinite(np.exp(500.0)) and np.isinf(np.exp(710.0))      # "above about 709"
    assert "[0, 1000]" not in wrong.hint or SHIFTS[mistake](np.array([0.0, 1000.0])) == 0


def test_the_row_mean_hints_grow_more_concrete():
    """The ladder: which argument, then the axis counted from the end, then `keepdims` with the
    shapes it gives; no hint writes the fill."""
    from engine.core.registry import get_exercise
    hints = get_exercise("row-mean").hints
    assert "`axis`" in hints[0] and "axis=-1" not in hints[0]
    assert "axis=-1" in hints[1] and "keepdims" not in hints[1]
    assert "keepdims=True" in hints[2] and "(2, 1)" in hints[2]
    assert "x.sum(axis=-1, keepdims=True)" not in " ".join(hints)


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


def test_the_welcome_names_every_notebook_s_topic_in_course_order():
    """The first paragraph lists what each notebook after this one is about, in their order."""
    from engine.core.inventory import notebooks as course_notebooks

    cells = json.loads((Path(__file__).resolve().parents[1] / "content" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    welcome = " ".join("".join(cells[0]["source"]).split())
    topics = {"01_attention": "attention", "01_positional_encoding": "position information",
              "02_feed_forward": "the feed-forward network", "03_norms_and_residuals": "normalisation and residual",
              "04_decoder_block": "the whole decoder block", "05_trained_model": "a small trained model",
              "06_block_at_work": "puts that model to work"}
    stems = [nb.stem for nb in course_notebooks()][1:]
    assert stems == list(topics)
    places = [welcome.index(topics[stem]) for stem in stems]
    assert places == sorted(places)
