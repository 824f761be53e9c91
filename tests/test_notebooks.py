"""Every notebook in content/: valid, shipped clean, and run top to bottom in real kernels.

nbval runs each notebook twice: as shipped (blanks unfilled: no cell may error) and
solved by `python -m engine solve` with COURSE_STRICT=1 (every check must pass; the solved
run is shared with tests/test_matrix_budget.py, conftest's ``solved_run``).
"""

import re

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


def _shown(line: str) -> str:
    """What a line of code shows or computes: ``print(x)`` and ``x`` alike, comment dropped."""
    line = line.split("#")[0].strip()
    match = re.fullmatch(r"print\((.*)\)", line)
    return match.group(1).strip() if match else line


def _calls(cell) -> set:
    """The lines of a code cell that call something and show or compute it, not a name's
    assignment, a return, an import or the head of a block."""
    shown = {_shown(line) for line in cell.source.splitlines()}
    return {line for line in shown if "(" in line and "=" not in line.split("(")[0]
            and not line.startswith(("import ", "from ", "for ", "if ", "with ", "return ", "def "))}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_no_code_cell_shows_again_what_the_cell_before_it_printed(notebook):
    """A result is printed once: two code cells in a row never show the same call's value (one
    printing it, the next ending on it, as 03 once did with its check's example)."""
    code = [(index, cell) for index, cell in enumerate(nbformat.read(notebook, as_version=4).cells)
            if cell.cell_type == "code"]
    repeated = [(cell_number(i), sorted(_calls(a) & _calls(b))) for (_, a), (i, b) in zip(code, code[1:])
                if _calls(a) & _calls(b)]
    assert not repeated, repeated


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
