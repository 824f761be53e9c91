"""What a run of the built course (tools/site_run.py) reads of each notebook, and what it records:
the plan of a notebook (its code cells, the labs each calls, the check cells), each cell's time,
each lab's first answer, each check's verdict, and the budgets they are held to."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

CELL_SECONDS = 60.0       # one code cell, from the kernel starting it to finishing it
KERNEL_SECONDS = 180.0    # from opening a notebook to an idle kernel (Pyodide and its packages loaded)
LAB_SECONDS = 30.0        # from a lab's control to the lab's first change


# ---------------------------------------------------------------- what a notebook holds

@dataclass(frozen=True)
class Plan:
    """What one notebook holds: its labs and exercises as the course's inventory reads them
    (engine/core/inventory.py), and the cells that run, call each lab and check each exercise.

    Cells are numbered from 1 over all cells, markdown included, in the order JupyterLab shows.
    """
    path: str                          # as the site's JupyterLab names it: "00_start_here.ipynb"
    code: tuple[int, ...]              # indices (from 0) of the code cells, in order
    first_lines: dict[int, str]        # index -> the cell's first line of code
    labs: dict[int, tuple[str, ...]]   # index -> the labs the cell calls ("labs.start.temperature_lab")
    checks: dict[int, str]             # index -> the exercise id of a check cell
    inventory_labs: tuple[str, ...] = ()
    inventory_exercises: tuple[str, ...] = ()


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _calls(source: str, functions: dict[str, str]) -> tuple[str, ...]:
    """Of ``functions`` (name -> dotted name), those the code calls, in order."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    calls = [functions[n.func.id] for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in functions]
    return tuple(dict.fromkeys(calls))


def plan_of(notebook: dict, path: str) -> Plan:
    """The plan of one notebook (parsed JSON) that the site's JupyterLab opens at ``path``."""
    from engine.core import inventory
    from engine.core.notebooks import _CHECK_CALL, exercise_id

    entry = inventory.read_notebook(notebook, path)
    functions = {lab.rsplit(".", 1)[1]: lab for lab in entry.labs}
    cells = notebook.get("cells", [])
    code, first_lines, labs, checks = [], {}, {}, {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        code.append(index)
        first_lines[index] = next((line.strip() for line in source.splitlines() if line.strip()), "")
        if called := _calls(source, functions):
            labs[index] = called
        if "check" in (cell.get("metadata", {}).get("tags") or []):
            named = _CHECK_CALL.findall(source)
            before = exercise_id(cells[index - 1]) if index else None
            if named or before:
                checks[index] = named[0] if named else before
    return Plan(path, tuple(code), first_lines, labs, checks, entry.labs, entry.exercises)


def site_notebooks(site: Path) -> dict[str, dict]:
    """{path in the site's JupyterLab: parsed notebook} for every notebook the site ships, in the
    course's order (its inventory of the site's files)."""
    from engine.core import inventory

    files = Path(site) / "files"
    return {nb.path: json.loads((files / nb.path).read_text(encoding="utf-8")) for nb in inventory.scan(files)}


def solved_copy(notebook: dict) -> dict:
    """The notebook with every exercise's blanks filled with its solution (``./course solve``)."""
    from engine.core.notebooks import solve_notebook

    return solve_notebook(copy.deepcopy(notebook))[0]


# ---------------------------------------------------------------- what a run records

@dataclass
class CellTime:
    cell: int                    # numbered from 1, markdown cells included
    line: str                    # its first line of code
    seconds: float | None        # None: it did not finish within its budget
    error: str | None = None     # the error output or stderr it showed, in one line


@dataclass
class LabAnswer:
    cell: int
    name: str                    # the lab's class name: "temperature" for course-lab-temperature
    control: str                 # what was driven: "slider 'temperature' (arrow key)"
    seconds: float | None        # from the key press or click to the lab's first change


@dataclass
class Verdict:
    cell: int
    exercise: str
    verdict: str                 # passed, failed, not attempted, or "no feedback"


@dataclass
class NotebookRun:
    path: str
    form: str                    # "shipped" or "solved"
    kernel_seconds: float | None = None
    cells: list[CellTime] = field(default_factory=list)
    labs: list[LabAnswer] = field(default_factory=list)
    checks: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stopped: bool = False        # the whole run stopped here (no kernel, no NumPy)

    @property
    def passed(self) -> bool:
        return not self.problems and not self.stopped

    @property
    def result(self) -> str:
        if self.stopped:
            return "the run stopped here"
        return "passed" if self.passed else f"{len(self.problems)} problem(s)"

    def fail(self, problem: str) -> None:
        self.problems.append(f"{self.path} ({self.form}): {problem}")


def default_budgets() -> dict:
    return {"kernel": KERNEL_SECONDS, "cell": CELL_SECONDS, "lab": LAB_SECONDS}


@dataclass
class CourseRun:
    target: str                            # "JupyterLite (the site's Pyodide kernel)", ...
    kernel: dict | None = None             # the kernel's own report (PROBE)
    budgets: dict = field(default_factory=default_budgets)
    notebooks: list[NotebookRun] = field(default_factory=list)
    stopped: str | None = None             # why the run stopped before the end

    @property
    def problems(self) -> list[str]:
        found = [p for run in self.notebooks for p in run.problems]
        return found + ([self.stopped] if self.stopped else [])

    @property
    def passed(self) -> bool:
        return bool(self.notebooks) and not self.problems

    def markdown(self) -> str:
        from tools.site_report import summary_markdown     # the report reads these records

        return summary_markdown(self)


class Stop(Exception):
    """The run cannot go on (no kernel, or no NumPy): the message says why, in one sentence."""
