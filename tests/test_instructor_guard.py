"""The build guard catches what authors really leave in content/: a check cell naming no
exercise, an exercise cell that is not its template, the widget state and timings a run leaves
after its outputs are cleared, a notebook that switched to the python3 kernel, stray Untitled
files; `check --clear` removes what a run leaves; a core-only Pyodide is refused unless
--ship-anyway. Cells are named by the number a reader counts in JupyterLab (every cell, from 1)."""

import json
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert.preprocessors import ClearOutputPreprocessor

from conftest import CONTENT, ROOT
from engine.core.notebooks import cell_number
from tools import guard
from tools import site as site_tool
from tools.lab import bound_environment

ENV = bound_environment()


@pytest.fixture
def content(tmp_path):
    copy = tmp_path / "content"
    shutil.copytree(CONTENT, copy)
    return copy


def edit(path, change):
    notebook = json.loads(path.read_text())
    change(notebook)
    path.write_text(json.dumps(notebook, indent=1))
    return notebook


def index_of(notebook, text):
    return next(i for i, c in enumerate(notebook["cells"]) if "".join(c["source"]).strip() == text)


def test_a_check_naming_no_exercise_is_refused_with_the_cell_jupyterlab_shows(content):
    name = "01_positional_encoding.ipynb"
    original = json.loads((content / name).read_text())
    at = index_of(original, 'check("position-table")')

    def typo(notebook):
        notebook["cells"][at]["source"] = ['check("position-tabel")']
    edit(content / name, typo)
    found = [problem for nb, problem in guard.problems(content) if nb == name]
    assert f"cell {at + 1}: check('position-tabel') names no exercise of the course " \
           "(a typo? learners would get a KeyError)" in found
    assert f"cell {at + 1}: the check cell should call check('position-table')" in found
    # The cell really is the one a reader counts: every cell, markdown included, from 1.
    assert cell_number(at) == f"cell {at + 1}"
    with pytest.raises(site_tool.BuildError) as refused:
        site_tool.build(content.parent / "site", content=content)
    assert "check('position-tabel') names no exercise" in str(refused.value)
    assert not (content.parent / "site").exists()


def test_the_guard_runs_the_exercise_systems_own_validation(content):
    name = "02_feed_forward.ipynb"

    def reorder(notebook):
        exercise = next(i for i, c in enumerate(notebook["cells"]) if "exercise" in c["metadata"].get("tags", []))
        notebook["cells"][exercise]["source"] = "".join(notebook["cells"][exercise]["source"]) + "\n# my note"
        notebook["cells"].insert(exercise + 1, {"cell_type": "markdown", "id": "x1", "metadata": {}, "source": ["oops"]})
        return exercise
    notebook = edit(content / name, reorder)
    exercise = next(i for i, c in enumerate(notebook["cells"]) if "exercise" in c["metadata"].get("tags", []))
    ex_id = notebook["cells"][exercise]["metadata"]["course"]["exercise"]
    found = [problem for nb, problem in guard.problems(content) if nb == name]
    assert f"cell {exercise + 1}: exercise {ex_id!r} differs from its template" in found
    assert f"cell {exercise + 2}: the check of {ex_id!r} must follow it, tagged check" in found
    assert f"cell {exercise + 3}: a check cell that follows no exercise" in found
    # `python -m engine validate` says the same, numbered the same way.
    done = subprocess.run([sys.executable, "-m", "engine", "validate", str(content / name)],
                          capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert done.returncode == 1
    assert f"{content / name}: cell {exercise + 1}: exercise {ex_id!r} differs from its template" in done.stdout


@pytest.fixture(scope="module")
def ran_00(tmp_path_factory):
    """00 as shipped, run top to bottom in a real kernel (blanks in place), as an author who
    runs it to try it out: (the notebook with its outputs, the progress file it wrote)."""
    folder = tmp_path_factory.mktemp("ran-00")
    notebook = nbformat.read(CONTENT / "00_start_here.ipynb", as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python", allow_errors=True,
                            resources={"metadata": {"path": str(CONTENT)}})
    client.execute(env={**ENV, "COURSE_PROGRESS_FILE": str(folder / "progress.json")})
    return notebook, folder / "progress.json"


def test_what_a_run_leaves_after_clear_outputs_is_refused_and_check_clear_removes_it(ran_00, tmp_path):
    """Clear the outputs of a run of 00 as JupyterLab's Clear Outputs does: the guard still finds
    the widget state and the timings, and guard.clear (./course check --clear) removes them."""
    notebook = nbformat.from_dict(json.loads(json.dumps(ran_00[0])))
    ClearOutputPreprocessor().preprocess(notebook, {})
    content = tmp_path / "content"
    content.mkdir()
    path = content / "00_start_here.ipynb"
    nbformat.write(notebook, path)
    found = [problem for _nb, problem in guard.problems(content)]
    state = next(p for p in found if p.startswith("saved widget state"))
    assert int(state.split("(")[1].split()[0]) >= 10, state     # kilobytes of it
    assert any(p.startswith("execution timestamps in cells ") for p in found), found
    assert not any(p.startswith("stored outputs") for p in found), "Clear Outputs removed those"
    done = subprocess.run([sys.executable, "-c", "import sys; from tools import guard; "
                           "print(guard.clear(sys.argv[1]))", str(path)], capture_output=True, text=True, env=ENV)
    assert done.stdout.strip() == "True", done.stderr
    assert guard.problems(content) == []
    cleared = json.loads(path.read_text())
    assert ["".join(c["source"]) for c in cleared["cells"]] == [c.source for c in notebook.cells]
    setup = next(c for c in cleared["cells"] if "begin()" in "".join(c["source"]))
    assert setup["metadata"] == {"tags": ["setup"]}, "clearing keeps the course's own metadata"


def test_running_00_top_to_bottom_records_no_hint(ran_00):
    """00 shows how hint() works in a demonstration cell; running it counts no hint as the
    learner's, so the report does not list every learner as started on that exercise."""
    from engine.report import report

    _notebook, progress = ran_00
    exercises = json.loads(progress.read_text())["exercises"]
    for ex_id in ("row-mean", "stable-softmax"):
        assert exercises.get(ex_id, {}).get("hints", 0) == 0, exercises.get(ex_id)
        assert report.exercise_status(exercises.get(ex_id, {}), False) == "not-started"
    demo = next(c for c in ran_00[0].cells if c.source.startswith("hint("))
    assert "Hint 1 of" in json.dumps(demo.outputs), "the demonstration still shows the hint"


def test_a_stray_untitled_notebook_and_a_python3_kernel_are_refused(content):
    shutil.copy(CONTENT / "00_start_here.ipynb", content / "Untitled1.ipynb")
    (content / "untitled.txt").write_text("")

    def python3(notebook):
        notebook["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                              "language": "python"}
    edit(content / "03_norms_and_residuals.ipynb", python3)
    found = guard.problems(content)
    assert ("Untitled1.ipynb", "a stray file JupyterLab named Untitled: delete it, or rename it if it belongs "
            "to the course") in found
    assert any(name == "untitled.txt" for name, _ in found)
    assert ("03_norms_and_residuals.ipynb", "its kernel is 'python3', not 'python' (JupyterLite would ask "
            "every learner to choose a kernel)") in found


def test_a_core_only_pyodide_is_refused_before_building_unless_shipped_anyway(pyodide_npm_tarball, tmp_path):
    done = subprocess.run([sys.executable, "-m", "tools.site", "build", "--output", str(tmp_path / "site"),
                           "--pyodide", str(pyodide_npm_tarball)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    message = done.stderr.strip()
    assert message.startswith("Not building: the Pyodide distribution ")
    assert "lacks " in message and "numpy" in message and "matplotlib" in message
    assert "no notebook of this course would run on the site" in message and "--ship-anyway" in message
    assert message.count("\n") == 0
    assert not (tmp_path / "site").exists()

