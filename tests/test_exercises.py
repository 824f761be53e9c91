"""Drives every exercise of the course from its definition in exercises/definitions/.

Adding an exercise to a notebook's module is enough for it to be tested here: its solution, its
template, and each of its known mistakes, run as a learner's answer, which must get its own hint.
Its other wrong answers and alternative correct answers are in tests/data/answers/, read by
tests/exercise_answers.py.
"""

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import notebooks
from engine.core import progress
from engine.core.blank import BLANK, ____
from engine.core.cell import run_cell
from engine.core import budget, sandbox
from engine.core.checker import evaluate, evaluate_fixed, evaluate_source
from engine.core.definition import Exercise, Mistake, count_blanks, fill_blanks
from engine.core.notebooks import exercise_id, read, solve_notebook, validate_notebook
from engine.core.registry import all_exercises, get_exercise, titles
from engine.ui.feedback import feedback_html
from engine.notebook import check

from exercise_answers import alternatives, mistake_feedback, try_template, try_variant, wrong_answers

ROOT = Path(__file__).resolve().parents[1]
CONTENT = ROOT / "content"
EXERCISES = all_exercises()
IDS = [ex.id for ex in EXERCISES]
WRONG = [(ex.id, i) for ex in EXERCISES for i in range(len(wrong_answers(ex.id)))]
ALTERNATIVES = [(ex.id, i) for ex in EXERCISES for i in range(len(alternatives(ex.id)))]
MISTAKES = [(ex.id, m.name) for ex in EXERCISES for m in ex.mistakes]


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.delenv("COURSE_STRICT", raising=False)
    # a shorter time budget than the learner's 3 s, so that the loops among the wrong answers
    # stop sooner (tests/test_check_budget.py checks the real budget in a live kernel)
    monkeypatch.setattr(budget, "CALL_SECONDS", 1.0)


def test_registry_is_not_empty_and_ids_are_unique():
    assert "row-mean" in IDS and "stable-softmax" in IDS
    assert len(IDS) == len(set(IDS))
    stems = set(titles())
    assert all(ex.notebook in stems for ex in EXERCISES)


@pytest.mark.parametrize("ex_id", IDS)
def test_definition_is_complete(ex_id):
    ex = get_exercise(ex_id)
    assert count_blanks(ex.template) == len(ex.solution) >= 1
    assert len(ex.hints) >= 2, "a hint ladder has at least two steps"
    assert len(ex.mistakes) + len(wrong_answers(ex_id)) >= 3, "at least three typical wrong answers"
    assert len(alternatives(ex_id)) >= 2, "at least two other correct formulations"
    if ex.kind == "function":
        cases = ex.cases(np.random.default_rng(0))
        assert sum(c.visible for c in cases) == 1 and cases[0].visible, "the visible example first"
        assert any(c.random for c in cases), "random cases every run"
        assert not any(c.random for c in ex.fixed_cases()), "fixed cases are not labelled random"
        assert ex.contract is not None, "a function exercise states its contract"


@pytest.mark.parametrize("ex_id", IDS)
def test_solution_passes_on_many_random_draws(ex_id):
    ex = get_exercise(ex_id)
    for seed in range(5):
        fb = try_variant(ex, rng=np.random.default_rng(seed))
        assert fb.passed, fb.text()
    assert try_variant(ex).passed  # and with fresh, unseeded randomness


@pytest.mark.parametrize("ex_id", IDS)
def test_template_as_shipped_is_not_attempted(ex_id):
    fb = try_template(get_exercise(ex_id))
    assert fb.kind == "blank" and fb.status == "blank", fb.text()
    assert "not attempted" in fb.text().lower()


def _expected_feedback(fb, answer, source):
    text = fb.text()
    assert not fb.passed, f"wrong answer accepted: {source}"
    if answer.kind:
        assert fb.kind == answer.kind, text
    for word in answer.expect:
        assert word.lower() in text.lower(), f"{word!r} missing from:\n{text}"


@pytest.mark.parametrize("ex_id,name", MISTAKES)
def test_a_known_mistake_as_a_learners_answer_gets_its_hint(ex_id, name):
    """The mistake's own declaration is the answer: the check, fixed and random cases, rejects
    it with the mistake's hint, and with the feedback tests/data/answers/ expects of it."""
    ex = get_exercise(ex_id)
    mistake = next(m for m in ex.mistakes if m.name == name)
    fb = try_variant(ex, mistake.code)
    assert not fb.passed and fb.hint == mistake.hint, fb.text()
    for answer in mistake_feedback():
        if (answer.exercise, answer.mistake) == (ex_id, name):
            _expected_feedback(fb, answer, ex.variant_source(mistake.code))


@pytest.mark.parametrize("ex_id,index", WRONG)
def test_wrong_answer_is_rejected_with_the_intended_feedback(ex_id, index):
    ex = get_exercise(ex_id)
    answer = wrong_answers(ex_id)[index]
    _expected_feedback(try_variant(ex, answer.code), answer, ex.variant_source(answer.code))


@pytest.mark.parametrize("ex_id,index", ALTERNATIVES)
def test_other_correct_formulation_is_accepted(ex_id, index):
    ex = get_exercise(ex_id)
    fb = try_variant(ex, alternatives(ex_id)[index].code)
    assert fb.passed, fb.text()


def test_the_answers_data_names_real_exercises_and_mistakes_and_repeats_no_mistake():
    """Every row of tests/data/answers/ is about an exercise of its notebook (retired ones too)
    and fills blanks it has; a row about a mistake names one; and no wrong answer is a known
    mistake written again (a mistake is declared once, in its definition)."""
    every = {ex.id: ex for ex in all_exercises(retired=True)}
    for answer in mistake_feedback() + wrong_answers() + alternatives():
        ex = every[answer.exercise]
        assert ex.notebook == answer.notebook, answer
        if answer.mistake is not None:
            assert answer.mistake in [m.name for m in ex.mistakes], answer
        else:
            ex.variant_source(answer.code)       # raises for a blank the exercise does not have
    for ex in every.values():
        mistaken = [ex.variant_source(m.code) for m in ex.mistakes]
        assert len(set(mistaken)) == len(mistaken), f"{ex.id}: two mistakes with the same code"
        again = [a for a in wrong_answers(ex.id) if ex.variant_source(a.code) in mistaken]
        assert not again, f"{ex.id}: known mistakes written again as wrong answers: {again}"


@pytest.mark.parametrize("ex_id", IDS)
def test_no_hint_gives_the_answer_away(ex_id):
    ex = get_exercise(ex_id)
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    ladder = squash(" ".join(ex.hints))
    for fill in ex.solution:
        if len(squash(fill)) > 3:
            assert squash(fill) not in ladder, f"a hint contains the solution {fill!r}"
    for mistake in ex.mistakes:
        for fill in ex.solution:
            if len(squash(fill)) > 3:
                assert squash(fill) not in squash(mistake.hint)


FUNCTION_IDS = [ex.id for ex in EXERCISES if ex.kind == "function"]


def _first_array(case):
    return next((a for a in case.args if isinstance(a, np.ndarray)), None)


@pytest.mark.parametrize("ex_id", FUNCTION_IDS)
def test_the_contract_matches_the_solutions_signature(ex_id):
    ex = get_exercise(ex_id)
    func = run_cell(ex.solution_source, ex.context, ex.id)[ex.name]
    parameters = inspect.signature(func).parameters
    assert list(parameters) == list(ex.contract.args), "the contract names every argument, in order"
    defaults = {name: p.default for name, p in parameters.items() if p.default is not p.empty}
    assert defaults == dict(ex.contract.defaults)


@pytest.mark.parametrize("ex_id", FUNCTION_IDS)
def test_the_fixed_cases_cover_the_whole_contract(ex_id):
    """Every number of axes and number type the contract promises, every default argument
    both used and overridden, every edge, and shapes whose axes all differ."""
    ex = get_exercise(ex_id)
    contract, fixed = ex.contract, ex.fixed_cases()
    drawn = [c for seed in range(5) for c in ex.draw(np.random.default_rng(seed))]
    firsts = [_first_array(c) for c in fixed]
    for ndim in contract.ndims:
        assert any(a is not None and a.ndim == ndim for a in firsts), f"no fixed case with {ndim} axes"
    for case in fixed + drawn:
        first = _first_array(case)
        if contract.ndims and first is not None:
            assert first.ndim in contract.ndims, f"{case.label}: {first.ndim} axes, not promised"
        for arg in case.args:
            if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
                assert arg.dtype.name in contract.dtypes, f"{case.label}: {arg.dtype} not promised"
    for dtype in contract.dtypes:
        assert any(isinstance(a, np.ndarray) and a.dtype.name == dtype for c in fixed for a in c.args), \
            f"no fixed case in {dtype}"
    for name, value in contract.defaults.items():
        assert any(name not in c.kwargs for c in fixed), f"no fixed case uses the default {name}"
        assert any(name in c.kwargs and c.kwargs[name] != value for c in fixed), \
            f"no fixed case passes another {name}"
    covered = {tag for c in fixed for tag in c.covers}
    assert set(contract.edges) <= covered, f"edges no fixed case reaches: {set(contract.edges) - covered}"
    assert covered <= set(contract.edges) | {"float32"}, f"unknown edges: {covered - set(contract.edges)}"
    if contract.ndims and max(contract.ndims) >= 2:
        def distinct(a):
            free = [n for i, n in enumerate(a.shape) if i - a.ndim not in contract.square[1:]]
            return a.ndim >= 2 and len(set(free)) == len(free)
        assert any(a is not None and distinct(a) for a in firsts), "no fixed case with all axes different"


@pytest.mark.parametrize("ex_id", FUNCTION_IDS)
def test_every_known_mistake_is_rejected_and_recognised_by_what_it_does(ex_id):
    """A mistake's code, run as the learner's cell, fails the fixed cases and gets its own
    hint; it returns numbers on some fixed case, so it is told apart by its results, not only
    by raising."""
    ex = get_exercise(ex_id)
    for number, mistake in enumerate(ex.mistakes):
        fb = evaluate_fixed(ex, run_cell(ex.variant_source(mistake.code), ex.context, ex.id))
        assert not fb.passed, f"mistake {mistake.name!r} passes the fixed cases"
        assert fb.hint == mistake.hint, f"{mistake.name!r} got {fb.hint!r}"
        values = 0
        for case in ex.fixed_cases():
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ex.mistaken(number)(*sandbox.copied(case.args), **case.kwargs)
                values += 1
            except Exception:  # noqa: BLE001
                pass
        assert values, f"mistake {mistake.name!r} raises on every fixed case"


VERDICTS = textwrap.dedent("""
    import json, sys
    from engine.core import budget, sandbox
    from engine.core.cell import run_cell
    from engine.core.checker import evaluate
    from engine.core.registry import get_exercise
    budget.CALL_SECONDS = 1.0
    verdicts = {}
    for ex_id, name, source in json.load(sys.stdin):
        ex = get_exercise(ex_id)
        namespace = run_cell(source, ex.context, ex.id)
        func = namespace.get(ex.name)
        seed = sandbox.seed_for(ex.id, func) if callable(func) else None
        verdicts[f"{ex.id}: {name}"] = [seed, evaluate(ex, namespace).text()]
    print(json.dumps(verdicts))
""")


def _every_answer():
    """(exercise id, name, source): the solution, every known mistake, every wrong answer and
    every alternative of every exercise."""
    for ex in EXERCISES:
        yield ex.id, "solution", ex.solution_source
        for mistake in ex.mistakes:
            yield ex.id, f"mistake {mistake.name}", ex.variant_source(mistake.code)
        for i, answer in enumerate(wrong_answers(ex.id)):
            yield ex.id, f"wrong {i}", ex.variant_source(answer.code)
        for i, answer in enumerate(alternatives(ex.id)):
            yield ex.id, f"alternative {i}", ex.variant_source(answer.code)


def test_two_runs_of_every_check_give_the_same_verdicts_word_for_word(tmp_path):
    """The solution, every known mistake, every wrong answer and every alternative of every
    exercise, checked in two separate Python processes (with different hash seeds): the same
    seed for their random cases, and identical feedback, word for word."""
    answers = json.dumps(list(_every_answer()))
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "COURSE_PROGRESS_FILE": str(tmp_path / f"progress{seed}.json"),
               "PYTHONHASHSEED": seed,
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        runs.append(subprocess.Popen([sys.executable, "-c", VERDICTS], cwd=tmp_path, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outputs = [run.communicate(answers, timeout=600) for run in runs]
    assert all(run.returncode == 0 for run in runs), [err[-2000:] for _out, err in outputs]
    first, second = (json.loads(out) for out, _err in outputs)
    assert len(first) == len(json.loads(answers)) > 100
    differ = [name for name in first if first[name] != second.get(name)]
    assert not differ, "\n\n".join(f"{first[n]}\n---\n{second.get(n)}" for n in differ[:3])


@pytest.mark.parametrize("ex_id", FUNCTION_IDS)
def test_every_wrong_answer_is_rejected_by_the_fixed_cases_alone(ex_id):
    """The fixed cases are the first net: the random ones only add to them."""
    ex = get_exercise(ex_id)
    for code in [m.code for m in ex.mistakes] + [a.code for a in wrong_answers(ex_id)]:
        source = ex.variant_source(code)
        namespace = run_cell(source, ex.context, ex.id)
        assert not evaluate_fixed(ex, namespace).passed, source


def test_random_cases_depend_on_the_code_alone():
    ex = get_exercise("layer-norm")
    first = run_cell(ex.solution_source, ex.context, ex.id)["layer_norm"]
    again = run_cell("\n\n" + ex.solution_source, ex.context, "elsewhere")["layer_norm"]
    other = run_cell(ex.variant_source(alternatives(ex.id)[0].code), ex.context, ex.id)["layer_norm"]
    assert sandbox.seed_for(ex.id, first) == sandbox.seed_for(ex.id, again)
    assert sandbox.seed_for(ex.id, first) != sandbox.seed_for(ex.id, other)
    assert sandbox.seed_for(ex.id, first) != sandbox.seed_for("rms-norm", first)
    helper = "def silu(z):\n    return z / (1 + np.exp(-z))\n\n"
    swiglu = "def swiglu(x, W_gate, W_up, W_down):\n    return (silu(x @ W_gate) * (x @ W_up)) @ W_down\n"
    one = run_cell(helper + swiglu, ex.context)["swiglu"]
    two = run_cell(helper.replace("np.exp(-z)", "np.exp(-z) + 0") + swiglu, ex.context)["swiglu"]
    assert sandbox.seed_for("swiglu", one) != sandbox.seed_for("swiglu", two), "helpers count"
    # callables without source: a NumPy function, a partial, an object with __call__
    import functools

    class Mean:
        def __call__(self, x):
            return x.mean(axis=-1, keepdims=True)

    for func in (np.mean, functools.partial(np.mean, axis=-1), Mean()):
        assert sandbox.seed_for("row-mean", func) == sandbox.seed_for("row-mean", func)
        assert not evaluate("row-mean", {"row_mean": func}).passed or func.__class__ is Mean


def test_a_function_that_changes_its_input_is_told_so():
    ex = get_exercise("layer-norm")
    source = ("def layer_norm(x, eps=1e-5):\n    x -= x.mean(axis=-1, keepdims=True)\n"
              "    x /= np.sqrt(x.var(axis=-1, keepdims=True) + eps)\n    return x\n")
    fb = evaluate_source(ex, source)
    assert fb.kind == "inplace" and fb.headline == "Your function changed its input"
    assert "On the example above your function changed its argument `x`" in fb.text()
    assert "the caller's data is altered" in fb.text() and "x = x - mean" in fb.hint
    assert fb.location == "line 2: x -= x.mean(axis=-1, keepdims=True)", "the line that wrote"
    # a read-only array of the learner's own making is not the input: its error is reported
    own = ("def row_mean(x):\n    out = np.broadcast_to(x.sum(-1, keepdims=True), x.shape[:-1] + (1,))\n"
           "    out[...] = out / x.shape[-1]\n    return out\n")
    fb = evaluate_source("row-mean", own)
    assert fb.kind == "error" and "read-only" in fb.text() and fb.location.startswith("line 3")
    blocks = get_exercise("leave-out-blocks")
    fb = evaluate_source(blocks, "def run_blocks(x, blocks, skip):\n    blocks.pop(0)\n"
                                 "    for block in blocks:\n        x = block(x)\n    return x\n")
    assert fb.kind == "inplace" and "`blocks`" in fb.text()


def test_the_hints_the_old_checks_got_wrong_now_name_the_cause():
    embed = get_exercise("scale-then-add")
    fb = try_variant(embed, {1: "table[:d_model]"})
    assert "exactly d_model words" in fb.hint and "as many rows as there are words" not in fb.hint
    norm = get_exercise("layer-norm")
    fb = try_variant(norm, {0: "np.sqrt(var + eps ** 2)"})
    assert "eps squared" in fb.hint and "NaN" not in fb.text()
    perplexity = get_exercise("perplexity")
    fb = try_variant(perplexity, {0: "probs[targets, np.arange(len(targets))]"})
    assert "swapped" in fb.hint and "whole rows" not in fb.hint


def test_feedback_fits_scalars_rows_and_grids():
    long_row = Exercise(id="test-long-row", notebook="00_start_here", title="t", name="v",
                        template="v = ____\n", solution=["0"], kind="value",
                        expected=lambda: np.arange(96.0), hints=["a", "b"])
    wrong = np.arange(96.0)
    wrong[[5, 40, 41, 90]] += 1.0
    detail = evaluate(long_row, {"v": wrong}).details[0]
    assert detail.startswith("For `v`: entry 5: expected 5, got 6; entry 40: expected 40, got 41;")
    assert "(4 of the 96 numbers differ)" in detail and "entry 90" not in detail and len(detail) < 200
    number = Exercise(id="test-number", notebook="00_start_here", title="t", name="n",
                      template="n = ____\n", solution=["0"], kind="value", expected=lambda: 5.0,
                      hints=["a", "b"])
    assert evaluate(number, {"n": 4.0}).details == ["For `n`: expected 5, got 4."]
    fb = try_variant(get_exercise("block-count"), {1: "2 * d * d_ff"})
    assert "which is not the right number" in fb.text() and " of 1 " not in fb.text()
    fb = try_variant(get_exercise("rms-norm"), {1: "x / (np.sqrt(ms) + eps) * gain"})
    assert "(input shape (3, 4)): all 12 numbers differ, in all 3 rows." in fb.text()
    fb = try_variant(get_exercise("stable-softmax"), {1: "e.sum(axis=0, keepdims=True)"})
    assert "(all 6 numbers differ, in both rows)" in fb.text()


@pytest.mark.parametrize("ex_id", [i for i in IDS if get_exercise(i).kind == "function"])
def test_memorised_output_cannot_pass(ex_id):
    ex = get_exercise(ex_id)
    visible = next(c for c in ex.cases(np.random.default_rng(1)) if c.visible)
    answer = ex.reference(*visible.args)
    ns = {ex.name: lambda *a, **k: answer.copy()}
    fb = evaluate(ex, ns)
    assert not fb.passed and "hidden test" in fb.text()


# ---------------------------------------------------------------- the notebooks

def _notebooks():
    return notebooks()


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.name)
def test_notebook_follows_the_conventions(path):
    nb = read(path)
    assert validate_notebook(nb) == []
    for i, cell in enumerate(nb["cells"]):
        ex_id = exercise_id(cell)
        if ex_id:
            assert get_exercise(ex_id).notebook == path.stem


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.name)
def test_no_hidden_expected_value_in_visible_text(path):
    """Numbers of hidden cases' expected results must not appear in the notebook."""
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb["cells"] if c["cell_type"] == "code"), "ship without outputs"
    for ex in all_exercises():
        if ex.notebook != path.stem or ex.kind != "function":
            continue
        for case in ex.cases(np.random.default_rng(0)):
            if case.visible or case.label.startswith("random"):
                continue
            expected = np.atleast_1d(np.asarray(ex.reference(*case.args), dtype=float)).ravel()
            for value in expected[:6]:      # four decimals: three match unrelated numbers ("a gain of 0.995")
                if abs(value) > 1e-9 and abs(value - round(value, 3)) > 1e-9:
                    assert f"{value:.4f}" not in text, f"{ex.id}: hidden value {value:.4f} visible"


def test_every_registered_exercise_of_an_existing_notebook_is_in_it():
    for path in _notebooks():
        in_file = {exercise_id(c) for c in read(path)["cells"]} - {None}
        registered = {ex.id for ex in EXERCISES if ex.notebook == path.stem}
        assert registered == in_file, path.name


def test_start_notebook_metadata():
    nb = read(CONTENT / "00_start_here.ipynb")
    assert nb["metadata"]["kernelspec"]["name"] == "python"
    assert nb["metadata"]["kernelspec"]["language"] == "python"


def test_solve_command_fills_every_blank(tmp_path):
    dest = tmp_path / "solved"
    result = subprocess.run([sys.executable, "-m", "engine", "solve", str(CONTENT), str(dest)],
                            cwd=ROOT, capture_output=True, text=True, check=True)
    assert "00_start_here.ipynb" in result.stdout
    for path in _notebooks():
        solved = read(dest / path.name)
        for cell in solved["cells"]:
            ex_id = exercise_id(cell)
            if ex_id:
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                assert count_blanks(source) == 0
                assert source.rstrip() == get_exercise(ex_id).solution_source.rstrip()


def test_solve_command_on_one_notebook(tmp_path):
    subprocess.run([sys.executable, "-m", "engine", "solve",
                    str(CONTENT / "00_start_here.ipynb"), str(tmp_path / "one.ipynb")],
                   cwd=ROOT, check=True, capture_output=True)
    _nb, ids = solve_notebook(read(CONTENT / "00_start_here.ipynb"))
    assert ids == ["row-mean", "stable-softmax"]
    solved = read(tmp_path / "one.ipynb")
    assert [exercise_id(c) for c in solved["cells"] if exercise_id(c)] == ids
    assert solve_notebook(solved)[1] == []  # solving twice changes nothing


def run_in_ipython(cells, tmp_path, strict=False) -> list:
    """Run the cells one by one in a fresh IPython shell (in a subprocess), as a notebook's kernel
    would; the error each cell raised, as text, or None."""
    runner = textwrap.dedent("""
        import json, sys
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        errors = []
        for source in json.load(sys.stdin):
            outcome = shell.run_cell(source)
            error = outcome.error_before_exec or outcome.error_in_exec
            errors.append(None if error is None else f"{type(error).__name__}: {error}")
        print("ERRORS " + json.dumps(errors))
    """)
    env = {**os.environ, "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json"),
           "IPYTHONDIR": str(tmp_path / "ipython"), "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("COURSE_STRICT", None)
    if strict:
        env["COURSE_STRICT"] = "1"
    done = subprocess.run([sys.executable, "-c", runner], input=json.dumps(cells), cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.rsplit("ERRORS ", 1)[1])


def test_solved_notebook_code_passes_in_strict_mode(tmp_path):
    """Every code cell of the solved start notebook runs, as in a kernel, with COURSE_STRICT=1."""
    nb, _ = solve_notebook(read(CONTENT / "00_start_here.ipynb"))
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert sum("check(" in c for c in cells) == 2
    assert run_in_ipython(cells, tmp_path, strict=True) == [None] * len(cells)


# ---------------------------------------------------------------- the blank

def test_blank_absorbs_operations():
    x = np.arange(6.0).reshape(2, 3)
    for value in (____ + 1, 2 * ____, x - ____, x / ____, np.exp(____), np.sqrt(____ + 1e-5),
                  ____ ** 0.5, np.max(____, axis=-1), ____.sum(axis=-1), ____[0], ____(3),
                  x @ ____, -____, ____ == 3):
        assert value is BLANK
    assert repr(____) == "____" and f"{____:.2f}" == "____"
    assert not ____


def test_blank_inside_a_function_counts_as_not_attempted():
    ex = get_exercise("row-mean")
    ns = run_cell("def row_mean(x):\n    return x.sum(axis=____, keepdims=True) / x.shape[-1]\n",
                  ex.context)
    fb = evaluate(ex, ns)
    assert fb.kind == "blank"


def test_error_location_points_at_the_learners_line_only():
    ex = get_exercise("stable-softmax")
    fb = try_variant(ex, {1: "e.sum(axis=-1)"})
    assert fb.location.startswith("line 5:")
    assert "checker" not in fb.text() and "engine/core" not in fb.text()


def test_missing_name_is_reported_plainly():
    fb = evaluate("row-mean", {})
    assert fb.kind == "missing" and fb.status == "blank"
    assert "Run the exercise cell" in fb.text()


# ---------------------------------------------------------------- check(): display, strict mode

def test_check_records_and_strict_mode_raises(monkeypatch, capsys):
    ns = run_cell(get_exercise("row-mean").template, get_exercise("row-mean").context)
    check("row-mean", ns)  # not strict: only displays
    assert progress.exercise_entry("row-mean")["checks"] == 1
    monkeypatch.setenv("COURSE_STRICT", "1")
    with pytest.raises(AssertionError, match="Not attempted"):
        check("row-mean", ns)
    bad = run_cell(get_exercise("row-mean").variant_source({0: "x.sum()"}),
                   get_exercise("row-mean").context)
    with pytest.raises(AssertionError, match="Wrong shape"):
        check("row-mean", bad)
    good = run_cell(get_exercise("row-mean").solution_source, get_exercise("row-mean").context)
    check("row-mean", good)  # passes, no exception
    assert progress.exercise_entry("row-mean")["passed"] is True


def test_check_finds_the_learners_code_in_the_notebooks_namespace(tmp_path):
    """In a notebook, ``check("<id>")`` reads the kernel's namespace: the learner's function as
    the exercise cell defined it, then as a later cell redefined it."""
    ex = get_exercise("row-mean")
    cells = ["from engine.notebook import ____, check\nimport numpy as np",
             ex.solution_source,
             "assert check('row-mean').feedback.passed",
             ex.variant_source({0: "x.max(axis=-1, keepdims=True)"}),
             "assert check('row-mean').feedback.kind == 'values'",
             "from lib.exercises import check as old_check\n"          # notebooks of earlier releases
             "assert old_check('row-mean').feedback.kind == 'values'"]
    assert run_in_ipython(cells, tmp_path) == [None] * len(cells)


def test_check_outside_a_notebook_asks_for_the_namespace():
    with pytest.raises(TypeError, match=r"globals\(\)"):
        check("row-mean")


def test_a_miss_advances_the_hint_ladder():
    ex = get_exercise("row-mean")
    bad = run_cell(ex.variant_source({0: "x.sum(axis=-1, keepdims=True).reshape(1, -1) + 1"}), ex.context)
    first = check("row-mean", bad).feedback
    second = check("row-mean", bad).feedback
    assert first.ladder[0] == 1 and second.ladder[0] == 2
    assert progress.exercise_entry("row-mean")["hints"] == 2


def test_feedback_html_is_themed_and_has_text_fallback():
    fb = try_variant(get_exercise("row-mean"), {0: "x.sum(axis=-1)"})
    html = feedback_html(fb)
    assert 'class="course-feedback course-fail" data-exercise="row-mean" data-kind="shape"' in html
    assert "var(--jp-ui-font-color1" in html and "var(--jp-error-color1" in html
    assert "keepdims" in repr(fb) and "<" not in fb.text()
    assert 'course-pass' in feedback_html(try_variant(get_exercise("row-mean")))
    assert 'course-blank' in feedback_html(try_template(get_exercise("row-mean")))


def test_the_exercise_core_writes_no_html():
    """HTML and styles live in engine/ui; the core returns plain values."""
    markup = re.compile(r"<(div|span|code|pre|b|i|ul|li|p|a|table|tr|td|th|style)[ >]|style=")
    core = ROOT / "exercises" / "core"
    offenders = [p.name for p in core.glob("*.py") if markup.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_evaluate_source_reports_unreadable_and_failing_code_as_feedback():
    fb = evaluate_source("row-mean", "def row_mean(x)\n    return x\n")
    assert fb.kind == "error" and fb.exercise == "row-mean" and "line 1" in fb.text()
    fb = evaluate_source("row-mean", "def row_mean(x):\n    return x\n\nrow_mean(1 / 0)\n")
    assert fb.kind == "error" and "ZeroDivisionError" in fb.text()
    assert fb.location == "line 4: row_mean(1 / 0)"
    assert evaluate_source("row-mean", get_exercise("row-mean").solution_source).passed


def test_importing_the_exercise_system_has_no_effect(tmp_path):
    """No module under exercises/ shows, prints or writes anything when imported."""
    code = ("import pkgutil, importlib, exercises\n"
            "for m in pkgutil.walk_packages(exercises.__path__, 'exercises.'):\n"
            "    if m.name != 'exercises.__main__': importlib.import_module(m.name)\n")
    env = {**os.environ, "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_the_definitions_and_the_progress_record_import_without_numpy(tmp_path):
    """The progress view runs in a bare Pyodide too: what it imports (the registry, the exercise
    data types) must not need NumPy before an exercise's cases are built."""
    code = ("import sys\nsys.modules['numpy'] = None\n"
            "import engine.core.definition, engine.core.registry, engine.core.progress\n")
    env = {**os.environ, "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_value_exercise_kind():
    ex = Exercise(id="test-value", notebook="00_start_here", title="t", name="n_params",
                  template="n_params = ____\n", solution=["2 * 768 * 3072"], kind="value",
                  expected=lambda: 4_718_592, hints=["a", "b"],
                  mistakes=[Mistake("one matrix", {0: "768 * 3072"}, "You counted one matrix.")])
    assert evaluate(ex, run_cell("n_params = ____\n", ex.context)).kind == "blank"
    assert evaluate(ex, {"n_params": 2 * 768 * 3072}).passed
    fb = evaluate(ex, {"n_params": 768 * 3072})
    assert fb.kind == "values" and fb.hint == "You counted one matrix."
    assert fb.details == ["For `n_params`: expected 4,718,592, got 2,359,296."]
    assert evaluate(ex, {"n_params": None}).details == ["`n_params` is `None`."]
    assert evaluate(ex, {"n_params": np.zeros(2)}).details == [
        "For `n_params`: expected shape (), got shape (2,)."]
    assert evaluate(ex, {"n_params": float("nan")}).kind == "nan"


def test_a_mistake_is_code_of_the_cell_other_than_the_solution():
    """A mistake's fills name blanks the template has, differ from the solution, and a mistake's
    name is its own: a definition that breaks this fails when it is built, not when a learner
    meets it."""
    cell = dict(id="test-mistakes", notebook="00_start_here", title="t", name="f", hints=["a", "b"],
                template="def f(x):\n    return ____ + ____\n", solution=["x", "1"])
    assert Exercise(**cell, mistakes=[Mistake("one fill", {1: "2"}, "h"), Mistake("whole", "f = 3\n", "h")])
    twice = [Mistake("twice", {1: "2"}, "h"), Mistake("twice", {1: "3"}, "h")]
    for mistakes, error in [([Mistake("no such blank", {2: "x"}, "h")], "no blank number 2"),
                            ([Mistake("the solution", {0: "x"}, "h")], "is the solution"),
                            (twice, "share a name")]:
        with pytest.raises(ValueError, match=error):
            Exercise(**cell, mistakes=mistakes)


def test_fill_blanks_leaves_longer_underscores_alone():
    assert count_blanks("a = _____ + ____x + x____ + ____") == 1
    assert fill_blanks("f(____, ____)", ["1", "2"]) == "f(1, 2)"


def test_the_row_mean_hints_each_name_one_more_piece_of_the_fill():
    """Each hint of row-mean's ladder is more concrete than the one before: the first names the
    reduction (`x.sum(...)`) and its `axis` argument, the second adds which axis (`axis=-1`), the
    third the argument that keeps it (`keepdims=True`), the fill's pieces in that order."""
    ex = get_exercise("row-mean")
    assert ex.solution == ["x.sum(axis=-1, keepdims=True)"]
    pieces = ["x.sum(", "axis=-1", "keepdims=True"]
    for rung, hint in enumerate(ex.hints):
        named = [piece in hint for piece in pieces]
        assert named[rung], (rung, hint)                       # this rung's piece
        assert not any(named[rung + 1:]), (rung, hint)         # nothing of a later rung yet


def test_a_cell_whose_result_is_a_blank_says_what_to_do_and_repr_stays_the_blank():
    """Run before its exercise is filled, a cell that calls the function shows the blank with a
    sentence on what to fill and run; the blank's own text (in code and messages) stays ____."""
    from IPython.lib.pretty import pretty

    from engine.core.blank import ____

    assert pretty(____).startswith("____  (a blank not filled yet: fill every ____ in the exercise cell")
    assert (repr(____), str(____), f"{____}") == ("____", "____", "____")
