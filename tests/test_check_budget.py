"""The time and size budget of a check (engine/core/budget.py): runaway learner code stops
with plain-language feedback and the kernel stays usable.

In-process tests use a short budget; the live-kernel test runs a real ipykernel (the course's
kernel spec, through jupyter_client) with the budget the learner gets, and checks that after an
infinite loop, a deep recursion and a huge allocation the next cell still runs. Loops that catch
the budget's stop (SWALLOWING) are checked 5 times each, in a fresh process (so that a hang fails
instead of freezing the suite), in every CPython found here, in the live kernel, and in Pyodide
(tests/test_browser_budget.py): the same verdict every time. The overhead of
the tracing hook on the official solutions is printed as a ratio (not asserted: timings vary).
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from engine.core import budget, sandbox
from engine.core.cell import run_cell
from engine.core.checker import evaluate_source
from engine.core.registry import all_exercises, get_exercise

ROOT = Path(__file__).resolve().parents[1]

LOOP = "def row_mean(x):\n    while True:\n        pass\n"
ONE_LINE_LOOP = "def row_mean(x):\n    while True: y = 1\n"
SWALLOWING_LOOP = ("def row_mean(x):\n    while True:\n        try:\n            y = 1\n"
                   "        except Exception:\n            pass\n")
LONG_LOOP = ("def row_mean(x):\n    total = 0\n    for i in range(10 ** 12):\n        total += i\n"
             "    return x.mean(axis=-1, keepdims=True)\n")
RECURSION = "def row_mean(x):\n    return row_mean(x)\n"
LOOPED_TABLE = textwrap.dedent("""
    def position_table(length, d_model):
        table = np.zeros((length, d_model))
        for pos in range(length):
            for i in range(0, d_model, 2):
                angle = pos / 10000 ** (i / d_model)
                table[pos, i] = np.sin(angle)
                table[pos, i + 1] = np.cos(angle)
        return table
""")
HUGE = "def row_mean(x):\n    return np.ones((10 ** 7, 10 ** 7)).sum(axis=-1)\n"

# Loops that catch the budget's stop, each as the learner might write it. The first stop is
# caught; the check must end all the same, every time.
SWALLOWING = {
    "except:": textwrap.dedent("""
        def row_mean(x):
            while True:
                try:
                    total = x.sum()
                except:
                    continue
        """),
    "except BaseException": textwrap.dedent("""
        def row_mean(x):
            while True:
                try:
                    total = x.sum()
                except BaseException:
                    pass
        """),
    "except Exception in while True": textwrap.dedent("""
        def row_mean(x):
            while True:
                try:
                    total = x.sum()
                except Exception:
                    continue
        """),
    "in a nested function": textwrap.dedent("""
        def row_mean(x):
            def add_up():
                while True:
                    try:
                        total = x.sum()
                    except:
                        pass
            while True:
                try:
                    return add_up()
                except BaseException:
                    continue
        """),
    "in a generator": textwrap.dedent("""
        def row_mean(x):
            def rows():
                while True:
                    try:
                        yield x[0]
                    except:
                        pass
            total = 0
            for row in rows():
                try:
                    total = total + row
                except:
                    pass
        """),
    "the stop kept": textwrap.dedent("""
        def row_mean(x):
            while True:
                try:
                    total = x.sum()
                except BaseException as error:
                    kept = error
        """),
    "with suppress": textwrap.dedent("""
        import contextlib

        def row_mean(x):
            while True:
                with contextlib.suppress(BaseException):
                    total = x.sum()
        """),
}
# The first line of the loop each form is reported at (the outermost frame's loop).
SWALLOWING_LINES = {"except:": 3, "except BaseException": 3, "except Exception in while True": 3,
                    "in a nested function": 9, "in a generator": 10, "the stop kept": 3,
                    "with suppress": 5}


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@pytest.fixture
def short_budget(monkeypatch):
    monkeypatch.setattr(budget, "CALL_SECONDS", 0.3)
    monkeypatch.setattr(budget, "CHECK_SECONDS", 2.0)


@pytest.mark.parametrize("source", [LOOP, ONE_LINE_LOOP, SWALLOWING_LOOP, LONG_LOOP],
                         ids=["while", "one-line while", "loop catching Exception", "huge for loop"])
def test_a_loop_that_never_ends_stops_with_plain_feedback(source, short_budget):
    started = time.monotonic()
    fb = evaluate_source("row-mean", source)
    assert time.monotonic() - started < 2.0
    assert fb.kind == "timeout", fb.text()
    assert "did not finish in 0.3 s on the example above: is there a loop that never ends?" in fb.text()
    assert fb.location and fb.location.startswith("line ")
    assert sys.gettrace() is None


CHECKS_OF_SWALLOWING_LOOPS = textwrap.dedent("""
    import json, sys, time
    from engine.core import budget
    from engine.core.checker import evaluate_source
    from engine.core.registry import get_exercise
    budget.CALL_SECONDS = 0.3
    found = {}
    for name, source in json.loads(sys.argv[1]).items():
        runs = []
        for _ in range(5):
            started = time.monotonic()
            fb = evaluate_source("row-mean", source)
            runs.append([fb.kind, fb.text(), time.monotonic() - started,
                         sys.gettrace() is None and sys.getprofile() is None])
        found[name] = runs
    found["then the solution"] = evaluate_source("row-mean", get_exercise("row-mean").solution_source).text()
    print(json.dumps(found))
""")


def _run_python(python, script, *args, timeout=120):
    """Run ``script`` in a fresh ``python`` (with this checkout first on its path, and the course,
    which that Python has not installed, named by ENGINE_COURSE); its output, or a failure that
    says it hung."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "ENGINE_COURSE": "exercises.course:COURSE"}
    try:
        done = subprocess.run([python, "-c", script, *args], capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{python} still running after {timeout} s: a loop swallowed the stop")
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_loop_that_catches_the_stop_is_stopped_every_time_and_the_next_check_runs(tmp_path):
    """Each form, checked 5 times (a fresh process, so that a hang fails the test instead of
    freezing it): "did not finish" each time, within the budget, with the same feedback word
    for word; no hook is left behind, and the solution then passes."""
    found = json.loads(_run_python(sys.executable, CHECKS_OF_SWALLOWING_LOOPS, json.dumps(SWALLOWING)))
    for name, runs in ((n, r) for n, r in found.items() if n in SWALLOWING):
        kinds, texts, seconds, clean = zip(*runs)
        assert set(kinds) == {"timeout"}, (name, texts[0])
        assert len(set(texts)) == 1, (name, texts)
        assert "did not finish in 0.3 s on the example above" in texts[0], texts[0]
        assert f"where: line {SWALLOWING_LINES[name]}: " in texts[0], (name, texts[0])
        assert max(seconds) < 2.0, (name, seconds)
        assert all(clean), name
    assert "All 12 tests passed" in found["then the solution"], found["then the solution"]


def _pythons() -> list:
    """This Python and every other CPython 3.11 to 3.14 found here (on the PATH, or installed
    by pyenv), one per version."""
    found = {sys.version_info[:2]: sys.executable}
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(f"python3.{minor}") for minor in range(11, 15)]
    candidates += sorted(glob.glob(os.path.join(pyenv, "versions", "3.1[1-4]*", "bin", "python3")))
    for python in filter(None, candidates):
        try:
            version = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                                     capture_output=True, text=True, timeout=30).stdout.split()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if len(version) == 2:
            found.setdefault((int(version[0]), int(version[1])), python)
    return [pytest.param(found[v], id=f"python{v[0]}.{v[1]}") for v in sorted(found)]


BUDGET_ALONE = textwrap.dedent("""
    import json, linecache, sys, time
    from engine.core.budget import Budget, OutOfTime
    found = {}
    for name, source in json.loads(sys.argv[1]).items():
        filename = f"<cell {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {}
        exec(compile(source, filename, "exec"), namespace)
        runs = []
        for _ in range(5):
            started = time.monotonic()
            try:
                Budget(per_call=0.3).call(namespace["row_mean"], [1.0, 2.0])
                verdict = "returned"
            except OutOfTime as stop:
                verdict = str(stop)
            except BaseException as error:
                verdict = type(error).__name__
            runs.append([verdict, time.monotonic() - started, sys.gettrace() is None and sys.getprofile() is None])
        found[name] = runs
    print(json.dumps({"python": list(sys.version_info[:2]), "monitoring": hasattr(sys, "monitoring"),
                      "runs": found}))
""")


@pytest.mark.parametrize("python", _pythons())
def test_the_stop_cannot_be_swallowed_in_any_python_found(python):
    """The budget alone (plain Python, as in the browser) in each CPython found: every form
    stopped within the budget in 5 runs out of 5 (sys.monitoring from 3.12, the tracing hook
    armed again on 3.11)."""
    swallowing = {name: source.replace("x.sum()", "sum(x)")
                  for name, source in SWALLOWING.items()}
    found = json.loads(_run_python(python, BUDGET_ALONE, json.dumps(swallowing)))
    assert found["monitoring"] == (tuple(found["python"]) >= (3, 12))
    for name, runs in found["runs"].items():
        assert [verdict for verdict, _s, _c in runs] == ["did not finish in 0.3 s"] * 5, (found["python"], name, runs)
        assert max(s for _v, s, _c in runs) < 2.0, (found["python"], name, runs)
        assert all(clean for _v, _s, clean in runs), (found["python"], name)


def test_slow_calls_stop_once_the_whole_check_is_over_its_budget(monkeypatch):
    monkeypatch.setattr(budget, "CALL_SECONDS", 0.5)
    monkeypatch.setattr(budget, "CHECK_SECONDS", 0.8)
    slow = ("def row_mean(x):\n    import time\n    end = time.monotonic() + 0.2\n"
            "    while time.monotonic() < end:\n        pass\n"
            "    return x.sum(axis=-1, keepdims=True) / x.shape[-1]\n")
    fb = evaluate_source("row-mean", slow)
    assert fb.kind == "timeout", fb.text()
    assert "more than 0.8 s in all" in fb.text()


def test_deep_recursion_gets_plain_feedback_and_the_limit_is_restored():
    limit = sys.getrecursionlimit()
    fb = evaluate_source("row-mean", RECURSION)
    assert fb.kind == "recursion", fb.text()
    assert "called itself over and over" in fb.text() and "RecursionError" in fb.text()
    assert fb.location == "line 2: return row_mean(x)"
    assert sys.getrecursionlimit() == limit


def test_a_huge_allocation_gets_plain_feedback():
    fb = evaluate_source("row-mean", HUGE)
    assert fb.kind == "memory", fb.text()
    assert "an array of shape (10000000, 10000000)" in fb.text() and "TiB" in fb.text()


def test_a_tracer_already_running_is_put_back():
    calls = []

    def tracer(frame, event, arg):
        calls.append(event)
        return None

    sys.settrace(tracer)
    try:
        fb = evaluate_source("row-mean", get_exercise("row-mean").solution_source)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(None)
    assert fb.passed


def test_only_the_learners_frames_are_traced():
    assert budget.is_learners("<cell row-mean #3>")
    assert budget.is_learners("/tmp/ipykernel_123/456.py")
    assert not budget.is_learners(np.__file__)
    assert not budget.is_learners(str(ROOT / "lib" / "norm.py"))
    assert not budget.is_learners(os.__file__)


def test_the_budget_changes_no_result_and_its_overhead_is_measured(capsys):
    """Every official solution gives the same numbers with and without the tracing hook; the
    time ratio is printed for the record."""
    plain = traced = 0.0
    for ex in all_exercises():
        func = run_cell(ex.solution_source, ex.context, ex.id)[ex.name]
        for case in ex.fixed_cases():
            args = [sandbox.copied(case.args) for _ in range(2)]
            with np.errstate(all="ignore"):
                started = time.perf_counter()
                for _ in range(5):
                    direct = func(*args[0], **case.kwargs)
                plain += time.perf_counter() - started
                started = time.perf_counter()
                for _ in range(5):
                    budgeted = budget.Budget(per_call=60, total=600).call(func, *args[1], **case.kwargs)
                traced += time.perf_counter() - started
            np.testing.assert_array_equal(np.asarray(direct), np.asarray(budgeted))
    loops = run_cell(LOOPED_TABLE, "import numpy as np\n")["position_table"]
    started = time.perf_counter()
    direct = loops(200, 64)
    loop_plain = time.perf_counter() - started
    started = time.perf_counter()
    budgeted = budget.Budget(per_call=60, total=600).call(loops, 200, 64)
    loop_traced = time.perf_counter() - started
    np.testing.assert_array_equal(direct, budgeted)
    with capsys.disabled():
        print(f"\n  the budget's tracing hook on the official solutions: {1000 * traced:.0f} ms "
              f"against {1000 * plain:.0f} ms without it, a ratio of {traced / plain:.2f}; on a "
              f"table built with two Python loops (200 x 64): {1000 * loop_traced:.0f} ms against "
              f"{1000 * loop_plain:.0f} ms, a ratio of {loop_traced / loop_plain:.1f}")


# ---------------------------------------------------------------- a live kernel

KERNEL_CELLS = [
    ("from engine.notebook import ____, check\nimport numpy as np", None),
    (LOOP, None),
    ('check("row-mean")', "did not finish in 3 s on the example above: is there a loop that never ends?"),
    ("print(1 + 1)", "2"),
    (RECURSION, None),
    ('check("row-mean")', "called itself over and over"),
    ("print(2 + 2)", "4"),
    (HUGE, None),
    ('check("row-mean")', "an array of shape (10000000, 10000000)"),
    ("print(3 + 3)", "6"),
    (get_exercise("row-mean").solution_source, None),
    ('check("row-mean")', "All 12 tests passed"),
    # loops that catch the stop, with a shorter budget: each checked once as the learner does,
    # then 5 more times (one feedback, word for word), and the next cell runs
    ("from engine.core import budget\nfrom engine.core.checker import evaluate\n"
     "budget.CALL_SECONDS = 0.3", None),
]
for _name, _source in SWALLOWING.items():
    KERNEL_CELLS += [
        (_source, None),
        ('check("row-mean")', "did not finish in 0.3 s on the example above"),
        ('runs = [evaluate("row-mean", globals()) for _ in range(5)]\n'
         'print(len({r.text() for r in runs}), "verdict:", *{r.kind for r in runs})', "1 verdict: timeout"),
        ("print(6 * 7)", "42"),
    ]


def test_runaway_code_in_a_live_kernel_gives_feedback_and_the_next_cell_runs(tmp_path):
    """An endless loop, a deep recursion, a huge allocation and every loop that catches the
    stop, in a real ipykernel: each gets its feedback, and the next cell runs."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "IPYTHONDIR": str(tmp_path / "ipython")}
    env.pop("COURSE_STRICT", None)
    manager, client = start_new_kernel(kernel_name="python", env=env, cwd=str(tmp_path))
    try:
        for source, expected in KERNEL_CELLS:
            texts, errors = [], []

            def collect(message):
                content = message["content"]
                if message["msg_type"] == "stream":
                    texts.append(content["text"])
                elif message["msg_type"] in ("display_data", "execute_result"):
                    texts.append(content["data"].get("text/plain", ""))
                elif message["msg_type"] == "error":
                    errors.append(f"{content['ename']}: {content['evalue']}")

            started = time.monotonic()
            reply = client.execute_interactive(source, output_hook=collect, timeout=60)
            seconds = time.monotonic() - started
            assert reply["content"]["status"] == "ok", (source, errors)
            assert seconds < 20, f"{source!r} took {seconds:.1f} s"
            if expected:
                assert expected in "".join(texts), (source, texts)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
