"""tools/mutation/ and its command tools/mutate.py, the one mutation engine: on a tiny package of its own, which mutants it makes,
that their ids stay the same when other lines move, and that a run tells killed from surviving
mutants; on the exercises' solutions, that a learner's slips are made for them alone and that a
check with too few fixed cases lets some survive."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tools.mutate import main
from tools.mutation.generate import LIBRARY, SOLUTION, mutants
from tools.mutation.targets import reference_targets, run_solutions, solution_targets

ROOT = Path(__file__).resolve().parents[1]

CALC = textwrap.dedent('''\
    """A module to mutate."""


    def clamp(x, low=0, high=10):
        """x, kept between low and high."""
        if x < low:
            return low
        return min(x, high)


    def double(x):
        return 2 * x


    def unused(x):
        return x - 1
''')

TESTS = textwrap.dedent('''\
    from pkg.calc import clamp, double


    def test_clamp():
        assert clamp(-5) == 0 and clamp(50) == 10 and clamp(3) == 3


    def test_double():
        assert double(3) == 6
''')


def find(found, kind, after):
    """The one mutant of that kind whose edited line reads ``after``."""
    [mutant] = [m for m in found if m.kind == kind and m.after.strip() == after]
    return mutant


def test_mutants_are_small_edits_that_still_parse():
    found = mutants(CALC, "pkg.calc")
    assert all(m.before != m.after for m in found)
    assert {m.func for m in found} == {"clamp", "double", "unused"}           # not the docstrings
    assert find(found, "compare", "if x <= low:").line == 6
    assert find(found, "op", "return 2 / x").func == "double"
    assert find(found, "const", "def clamp(x, low=1, high=10):").apply(CALC) == CALC.replace("low=0", "low=1")
    assert find(found, "branch", "if False:").func == "clamp"
    assert [m.func for m in found if m.kind == "return"] == ["clamp", "clamp", "double", "unused"]
    assert [m.func for m in mutants(CALC, "pkg.calc", only={"double"})] == ["double"] * len(
        [m for m in found if m.func == "double"])


def test_ids_stay_the_same_when_other_lines_move():
    before = mutants(CALC, "pkg.calc")
    moved = mutants(CALC.replace('"""A module to mutate."""', '"""A module to mutate."""\nimport math\n'),
                    "pkg.calc")
    assert [m.id for m in mutants(CALC, "pkg.calc")] == [m.id for m in before]
    assert [m.id.split(":")[-1] for m in moved] == [m.id.split(":")[-1] for m in before]
    assert [m.line for m in moved] == [m.line + 2 for m in before]
    assert [m.id.split(":")[1] for m in moved] == [str(m.line + 2) for m in before]
    assert len({m.id for m in before}) == len(before)                            # unique


@pytest.fixture
def package(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "calc.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pkg_calc.py").write_text(TESTS)
    return tmp_path


def mutate(root, *args):
    """Run the tool on the package in ``root`` (pytest's plugins not loaded: the run is faster)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "tools.mutate", "--root", str(root), "--package", "pkg",
                           "--jobs", "2", *args], capture_output=True, text=True, env=env, timeout=600)


def row(stdout, module):
    """The cells of a module's row in the printed table."""
    line = next(line for line in stdout.splitlines() if line.startswith(f"| {module} "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_a_run_tells_killed_from_surviving_mutants(package):
    listed = mutants(CALC, "pkg.calc")
    equivalent = find(listed, "compare", "if x <= low:")          # x == low returns low, which is x
    (package / "equivalent.txt").write_text(f"{equivalent.id}  x == low gives low either way\n")
    untested = "def f(x):\n    return x + 1\n"
    (package / "pkg" / "other.py").write_text(untested)
    done = mutate(package, "calc", "other", "--equivalents", str(package / "equivalent.txt"),
                  "--json", str(package / "out.json"), "--min-score", "50")
    status = {m["id"]: m["status"] for m in json.loads((package / "out.json").read_text())}
    assert set(status) >= {m.id for m in listed}
    assert status[find(listed, "op", "return 2 / x").id] == "killed"
    assert status[find(listed, "const", "def clamp(x, low=1, high=10):").id] == "killed"
    assert status[find(listed, "swap", "return min(high, x)").id] == "survived"     # min is symmetric
    assert status[equivalent.id] == "survived"
    unused = [m.id for m in listed if m.func == "unused"]
    assert unused and all(status[i] == "not run" for i in unused)             # no test runs its lines
    killed = sum(status[m.id] == "killed" for m in listed)
    cells = row(done.stdout, "pkg.calc")
    assert cells[:5] == ["pkg.calc", "tests/test_pkg_calc.py", str(len(listed)), str(killed), "1"]
    assert cells[5] == f"{len(listed) - killed - 1} ({len(unused)} on lines no test runs)"
    assert cells[6] == f"{100 * killed / (len(listed) - 1):.1f} %"
    n = len(mutants(untested, "pkg.other"))
    assert row(done.stdout, "pkg.other") == ["pkg.other", "-", str(n), "0", "0", f"{n} ({n} on lines no test runs)",
                                             "0.0 % no test file"]
    assert done.returncode == 1                                   # pkg.other is below --min-score


def test_reference_functions_that_only_call_lib_are_left_out(tmp_path):
    folder = tmp_path / "exercises" / "definitions"
    folder.mkdir(parents=True)
    (folder / "norms.py").write_text(textwrap.dedent('''\
        from lib.norm import rms_norm as _rms_norm


        def _plain(x):
            return _rms_norm(x)


        def _own(x):
            return x - x.mean()


        EXERCISES = [dict(reference=_plain), dict(reference=_own)]
    '''))
    [target] = reference_targets(tmp_path)
    assert target.only == {"_own"} and not target.scored
    assert target.tests == ["tests/test_exercises.py", "tests/test_exercise_references.py"]


def test_a_definitions_module_named_on_the_command_line_is_scored_on_its_references(tmp_path):
    folder = tmp_path / "exercises" / "definitions"
    folder.mkdir(parents=True)
    (folder / "norms.py").write_text(textwrap.dedent('''\
        def _helper(x):
            return x * 2


        def _scale_reference(x):
            return _helper(x) + 1


        def _passed(x):
            return x - 1


        EXERCISES = [dict(reference=_passed)]
    '''))
    (folder / "other.py").write_text("def _other_reference(x):\n    return -x\n")
    [target] = reference_targets(tmp_path, ["exercises.definitions.norms"], scored=True)
    assert target.only == {"_scale_reference", "_passed"} and target.scored
    assert target.module == "exercises.definitions.norms"
    assert target.tests == ["tests/test_exercises.py", "tests/test_exercise_references.py"]
    assert {t.module for t in reference_targets(tmp_path)} == {"exercises.definitions.norms",
                                                                "exercises.definitions.other"}
    with pytest.raises(SystemExit, match="There is no module exercises.definitions.missing: choose among"):
        reference_targets(tmp_path, ["exercises.definitions.missing"])


SOLUTION_CELL = textwrap.dedent('''\
    def centre(x, axis=-1):
        """Each row of x minus its mean."""
        mean = x.mean(axis=axis, keepdims=True)
        return x - mean
''')


def test_a_learners_slips_are_made_for_solutions_only():
    library = {m.kind for m in mutants(SOLUTION_CELL, "c", edits=LIBRARY)}
    learner = mutants(SOLUTION_CELL, "c", edits=SOLUTION)
    extra = {"term", "operands", "func", "name", "call", "inplace"}
    assert not library & extra and extra <= {m.kind for m in learner}
    assert find(learner, "func", "mean = x.sum(axis=axis, keepdims=True)").module == "c"
    assert find(learner, "operands", "return (mean) - (x)")
    assert find(learner, "inplace", "return np.subtract(x, mean, out=x)")
    assert {m.after.strip() for m in learner if m.kind == "axis"} >= {
        f"mean = x.mean(axis={a}, keepdims=True)" for a in ("None", "0", "-2")}
    before = {(m.start, m.end, m.new) for m in mutants(SOLUTION_CELL, "c", edits=LIBRARY)}
    assert before <= {(m.start, m.end, m.new) for m in learner}        # every programmer's slip too


def test_a_check_with_too_few_fixed_cases_lets_solution_mutants_survive():
    [full] = solution_targets(["row-mean"])
    [weak] = solution_targets(["row-mean"])
    weak.exercise = dataclasses.replace(full.exercise, fixed=lambda: full.exercise.fixed_cases()[:1])
    for target in (full, weak):
        target.mutants = target.find(ROOT)
    run_solutions([full, weak])
    assert full.baseline == weak.baseline == "passed"
    assert {m.status for m in full.mutants} == {"killed"} and len(full.mutants) >= 10
    alive = [m for m in weak.mutants if m.status == "survived"]
    assert any(m.after.strip().endswith("x.sum(axis=1, keepdims=True) / x.shape[-1]") for m in alive)


def test_the_solutions_run_from_the_command_line(tmp_path, capsys):
    assert main(["--solutions", "row-mean", "--json", str(tmp_path / "out.json"), "--min-score", "100"]) == 0
    cells = row(capsys.readouterr().out, "row-mean")
    assert cells[1] == "its check's fixed cases" and cells[2] == cells[3] and cells[6] == "100.0 %"
    statuses = {m["status"] for m in json.loads((tmp_path / "out.json").read_text())}
    assert statuses == {"killed"}
