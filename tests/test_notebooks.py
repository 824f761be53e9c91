"""Every notebook in content/: valid, shipped clean, and run top to bottom in real kernels.

nbval runs each notebook twice: as shipped (blanks unfilled: no cell may error) and
solved by `python -m engine solve` with COURSE_STRICT=1 (every check must pass; the solved
run is shared with tests/test_matrix_budget.py, conftest's ``solved_run``).
"""

import nbformat
import pytest

from conftest import CONTENT, notebooks, run_nbval
from engine.core.notebooks import cell_number

NOTEBOOKS = notebooks()
IDS = [p.relative_to(CONTENT).as_posix() for p in NOTEBOOKS]


def test_content_has_notebooks():
    assert any(p.name == "00_start_here.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_is_valid_and_shipped_clean(notebook):
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python"
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{cell_number(index)} has stored outputs"
            assert cell.execution_count is None, f"{cell_number(index)} has an execution count"


def assert_passed(result):
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " failed" not in result.stdout


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs_as_shipped(notebook, tmp_path):
    copy = tmp_path / notebook.name
    copy.write_bytes(notebook.read_bytes())
    assert_passed(run_nbval(copy, tmp_path, tmp_path / "progress.json", strict=False))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs_solved_with_every_check_passing(notebook, solved_run):
    run = solved_run(notebook)
    shipped, solved_nb = (nbformat.read(p, as_version=4) for p in (notebook, run.solved))
    exercises = [i for i, c in enumerate(shipped.cells) if "exercise" in c.metadata.get("tags", [])]
    for index in exercises:
        assert "____" in shipped.cells[index].source, f"exercise {cell_number(index)} ships with no blank"
        assert "____" not in solved_nb.cells[index].source, f"a blank survived solving in {cell_number(index)}"
    others = [i for i in range(len(shipped.cells)) if i not in exercises]
    assert all(shipped.cells[i].source == solved_nb.cells[i].source for i in others), \
        "solving changed a cell that is not an exercise"
    assert_passed(run.result)
