"""The seam between the engine and a course is real: a second, tiny course (tests/second_course/:
one notebook on averages, one lab, one exercise) runs on the engine as it is.

The second course names itself to the engine as any course does, through a
``engine.core.course.Course``: here with ``ENGINE_COURSE=averages:COURSE`` (the course is on
PYTHONPATH, not installed), and, installed with pip, through the entry point its pyproject.toml
declares. nbval runs its notebook as shipped and solved, its check accepts the solution and
rejects wrong answers with their feedback, and a local JupyterLab (a CPython kernel) runs it in
Chromium, its lab answering and its check giving its verdict.
"""

import ast
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_nbval
from test_notebooks import assert_passed
from tools.browser import local_jupyterlab, open_notebook, run_all

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "tests" / "second_course"
NOTEBOOK = COURSE / "content" / "01_averages.ipynb"
ENV = {"ENGINE_COURSE": "averages:COURSE", "PYTHONPATH": os.pathsep.join([str(COURSE), str(ROOT)]),
       "MPLBACKEND": "Agg"}
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def engine(*args, cwd=ROOT, env=None):
    """``python -m engine ARGS`` for the second course; the finished process."""
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd, env={**os.environ, **ENV, **(env or {})},
                          capture_output=True, text=True, timeout=300)


def test_the_engine_has_no_line_for_the_second_course():
    """No code of the engine names the second course or its packages (its README cites it as an
    example): what runs it is what runs any course."""
    named = [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "engine").rglob("*"))
             if path.suffix in (".py", ".js", ".css") and "averages" in path.read_text(encoding="utf-8")]
    assert named == []


def test_the_second_course_imports_only_the_engine_numpy_and_the_standard_library():
    found = set()
    for path in COURSE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
    assert found - set(sys.stdlib_module_names) == {"engine", "numpy"}       # and itself, relatively


def test_the_engine_lists_and_validates_the_second_course_by_the_name_it_passes_in():
    listed = engine("list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == "exercise 01_averages weighted-mean: A weighted mean\n"
    validated = engine("validate", str(COURSE / "content"))
    assert validated.returncode == 0 and validated.stdout == "", validated.stdout
    written = engine("cells", str(COURSE / "content"))
    assert "every exercise cell is its definition's template" in written.stdout, written.stdout + written.stderr


def test_installed_the_second_course_is_found_by_the_name_its_entry_point_gives(tmp_path):
    """pip installs the second course as any course is installed; with two courses in one Python,
    ENGINE_COURSE names the one to run by its entry point's name."""
    target, source = tmp_path / "site", tmp_path / "source"
    shutil.copytree(COURSE, source, ignore=shutil.ignore_patterns("__pycache__"))    # pip builds in its folder
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                                "--no-build-isolation", "--target", str(target), str(source)],
                               capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    script = ("from engine.core.course import current\n"
              "course = current()\n"
              "print(course.name, course.definitions, course.labs)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)]), "ENGINE_COURSE": "averages-course"}
    found = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["averages-course", "averages.definitions", "averages.labs"]
    env.pop("ENGINE_COURSE")
    both = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert both.returncode != 0
    assert "Several courses are installed (averages-course, transformer-course): set ENGINE_COURSE" in both.stderr


def test_the_notebook_runs_as_shipped(tmp_path):
    copy = tmp_path / NOTEBOOK.name
    copy.write_bytes(NOTEBOOK.read_bytes())
    assert_passed(run_nbval(copy, tmp_path, tmp_path / "progress.json", strict=False, extra_env=ENV))


def test_the_notebook_runs_solved_with_its_check_passing(tmp_path):
    solved = tmp_path / NOTEBOOK.name
    made = engine("solve", str(NOTEBOOK), str(solved))
    assert made.returncode == 0, made.stderr
    exercise = [[c["source"] for c in json.loads(path.read_text())["cells"] if "exercise" in c["metadata"].get("tags", [])]
                for path in (NOTEBOOK, solved)]
    assert "____" in "".join(exercise[0][0]) and "____" not in "".join(exercise[1][0])
    assert_passed(run_nbval(solved, tmp_path, tmp_path / "progress.json", strict=True, extra_env=ENV))


CHECKS = """
import json, sys
from engine.core.cell import run_cell
from engine.core.registry import get_exercise
from engine.notebook import check

ex = get_exercise("weighted-mean")
answers = {"solution": ex.solution_source, "blank": ex.template,
           "raises": ex.variant_source({0: "x.nope()"}), "wrong": ex.variant_source({0: "w.sum()"}),
           **{m.name: ex.variant_source(m.code) for m in ex.mistakes}}
found = {}
for name, source in answers.items():
    fb = check(ex.id, run_cell(source, ex.context, ex.id)).feedback
    found[name] = {"status": fb.status, "hint": fb.hint, "text": fb.text()}
found["mistakes"] = {m.name: m.hint for m in ex.mistakes}
open(sys.argv[1], "w").write(json.dumps(found))
"""


def test_its_check_accepts_the_solution_and_rejects_wrong_answers_with_feedback(tmp_path):
    out = tmp_path / "checks.json"
    env = {**os.environ, **ENV, "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json")}
    env.pop("COURSE_STRICT", None)
    ran = subprocess.run([sys.executable, "-c", CHECKS, str(out)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(out.read_text())
    assert found["solution"]["status"] == "pass"
    assert found["blank"]["status"] == "blank" and "____" in found["blank"]["text"]
    for name, hint in found.pop("mistakes").items():
        assert found[name]["status"] == "fail" and found[name]["hint"] == hint and hint in found[name]["text"], name
    assert found["wrong"]["status"] == "fail" and "the example" in found["wrong"]["text"]
    assert found["raises"]["status"] == "fail" and "AttributeError" in found["raises"]["text"]
    progress = json.loads((tmp_path / "progress.json").read_text())
    assert progress["format"] == "averages-course-progress"
    assert progress["exercises"]["weighted-mean"]["passed"] is True


# ---------------------------------------------------------------- in a browser

@pytest.fixture(scope="module")
def averages_jupyter(tmp_path_factory):
    """(base URL, root folder) of a local JupyterLab over a copy of the second course's notebooks,
    its kernels running the second course (ENGINE_COURSE, PYTHONPATH)."""
    folder = tmp_path_factory.mktemp("averages-jupyter")
    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch:           # the server and its kernels inherit these
            for name, value in ENV.items():
                patch.setenv(name, value)
            patch.delenv("COURSE_STRICT", raising=False)
            base, root = stack.enter_context(local_jupyterlab(folder, folder / "progress.json", COURSE / "content"))
        solved = engine("solve", str(NOTEBOOK), str(root / "solved" / NOTEBOOK.name))
        assert solved.returncode == 0, solved.stderr
        yield base, root


def verdict_of(page, lab):
    return " ".join(lab.locator(".course-verdict").inner_text().split())


def model_verdicts(*weights) -> list[str]:
    """The lab model's verdicts at these weights, computed by the second course's own model."""
    script = ("import json, sys\nfrom averages.labs.weights import weights_model\n"
              "print(json.dumps([weights_model(float(w))['verdict'] for w in sys.argv[1:]]))")
    done = subprocess.run([sys.executable, "-c", script, *map(str, weights)], env={**os.environ, **ENV},
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_in_jupyterlab_its_lab_answers_and_its_check_gives_its_verdict(averages_jupyter, page, artifacts):
    first, moved = model_verdicts(1.0, 2.5)
    base, _root = averages_jupyter
    open_notebook(page, base, NOTEBOOK.name)
    run_all(page)
    assert page.locator(f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    lab = page.locator(f"{PANEL} .course-lab-weights")
    assert verdict_of(page, lab) == first
    lab.locator(".noUi-handle").focus()
    for _ in range(3):                                          # 1.0 -> 2.5, one step of 0.5 a press
        page.keyboard.press("ArrowRight")
    page.wait_for_function("([el, wanted]) => el.innerText.replace(/\\s+/g, ' ').trim() === wanted",
                           arg=[lab.locator(".course-verdict").element_handle(), moved])
    feedback = page.locator(f"{PANEL} .course-feedback[data-exercise='weighted-mean']")
    assert "course-blank" in feedback.get_attribute("class")           # as shipped: not attempted
    lab.screenshot(path=str(artifacts / "live-second-course-weights.png"))

    open_notebook(page, base, f"solved/{NOTEBOOK.name}")
    run_all(page)
    feedback = page.locator(f"{PANEL} .course-feedback[data-exercise='weighted-mean']")
    assert "course-pass" in feedback.get_attribute("class")
    assert "passed" in feedback.inner_text().lower()
