"""Notebook files: writing their exercise cells from the definitions, solving them (blanks ->
solutions) and checking their conventions.

Conventions: an exercise is a code cell tagged ``exercise`` with
``metadata.course.exercise = "<id>"``; its source is the definition's ``template``, which
:func:`write_exercise_cells` writes there (the definition is the one place the learner's code
is written); the next cell is its check, tagged ``check``, with
``metadata.jupyter.source_hidden = true``, calling ``check("<id>")``. Every ``check``, ``hint``
or ``solution`` call in any cell names a registered exercise, and every ``ask`` call a
registered question.

Cells are numbered as a reader counts them in JupyterLab: every cell, markdown included, from 1
at the top (:func:`cell_number`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .definition import count_blanks, fill_blanks
from .registry import get_exercise, get_question


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _set_source(cell: dict, text: str) -> None:
    cell["source"] = text.splitlines(True) if isinstance(cell.get("source"), list) else text


def _tags(cell: dict) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def exercise_id(cell: dict) -> str | None:
    if cell.get("cell_type") != "code" or "exercise" not in _tags(cell):
        return None
    return cell.get("metadata", {}).get("course", {}).get("exercise")


def read(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write(nb: dict, path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_exercise_cells(nb: dict) -> tuple[dict, list[str]]:
    """The notebook with every exercise cell's source set to its definition's template; and
    the ids of the cells that changed. Raises KeyError for an exercise that is not registered."""
    changed = []
    for cell in nb.get("cells", []):
        ex_id = exercise_id(cell)
        if ex_id is None:
            continue
        template = get_exercise(ex_id).template.rstrip("\n")      # a cell holds no final newline
        if _source(cell) != template or not isinstance(cell.get("source"), list):
            cell["source"] = template.splitlines(True)           # as Jupyter saves a cell: its lines
            changed.append(ex_id)
    return nb, changed


def solve_notebook(nb: dict) -> tuple[dict, list[str]]:
    """The notebook with every exercise's blanks replaced by its solution; and the ids solved."""
    solved = []
    for cell in nb.get("cells", []):
        ex_id = exercise_id(cell)
        if ex_id is None:
            continue
        ex = get_exercise(ex_id)
        text = _source(cell)
        if count_blanks(text) == 0:  # already solved (or rewritten by hand): leave it
            continue
        if count_blanks(text) != len(ex.solution):
            raise ValueError(f"exercise {ex_id!r}: the cell has {count_blanks(text)} blanks, "
                             f"the definition {len(ex.solution)} solutions")
        _set_source(cell, fill_blanks(text, ex.solution))
        solved.append(ex_id)
    return nb, solved


def solve_path(src, dest) -> list[tuple[Path, list[str]]]:
    """Solve one notebook, or every notebook under a folder (same relative paths in ``dest``)."""
    src, dest = Path(src), Path(dest)
    if src.is_dir():
        pairs = [(p, dest / p.relative_to(src)) for p in sorted(src.rglob("*.ipynb"))
                 if ".ipynb_checkpoints" not in p.parts]
    else:
        if dest.is_dir() or str(dest).endswith(("/", "\\")):
            dest = dest / src.name
        pairs = [(src, dest)]
    done = []
    for a, b in pairs:
        nb, ids = solve_notebook(read(a))
        write(nb, b)
        done.append((b, ids))
    return done


_CHECK_CALL = re.compile(r"""check\(\s*["']([^"']+)["']""")
_NAMED_CALL = re.compile(r"""\b(check|hint|solution|ask)\(\s*["']([^"']+)["']""")


def cell_number(index: int) -> str:
    """How the course names the cell at ``index`` (0-based in the file): "cell 3" for the third
    cell from the top, markdown cells counted."""
    return f"cell {index + 1}"


def validate_notebook(nb: dict) -> list[str]:
    """Problems with the exercise/check conventions (an empty list when all is well)."""
    problems = []
    cells = nb.get("cells", [])
    for i, cell in enumerate(cells):
        tags = _tags(cell)
        here, below = cell_number(i), cell_number(i + 1)
        if cell.get("cell_type") == "code":
            for call, named in _NAMED_CALL.findall(_source(cell)):
                kind, find = ("question", get_question) if call == "ask" else ("exercise", get_exercise)
                try:
                    find(named)
                except KeyError:
                    problems.append(f"{here}: {call}({named!r}) names no {kind} of the course "
                                    "(a typo? learners would get a KeyError)")
        if "exercise" in tags:
            ex_id = exercise_id(cell)
            if not ex_id:
                problems.append(f"{here}: tagged exercise but no metadata.course.exercise")
                continue
            try:
                ex = get_exercise(ex_id)
            except KeyError:
                problems.append(f"{here}: exercise {ex_id!r} is not registered")
                continue
            if _source(cell).rstrip() != ex.template.rstrip():
                problems.append(f"{here}: exercise {ex_id!r} differs from its template")
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            if nxt is None or "check" not in _tags(nxt):
                problems.append(f"{below}: the check of {ex_id!r} must follow it, tagged check")
                continue
            if nxt.get("metadata", {}).get("jupyter", {}).get("source_hidden") is not True:
                problems.append(f"{below}: the check of {ex_id!r} is not source_hidden")
            if _CHECK_CALL.findall(_source(nxt)) != [ex_id]:
                problems.append(f"{below}: the check cell should call check({ex_id!r})")
        elif "check" in tags:
            prev = cells[i - 1] if i else None
            if prev is None or "exercise" not in _tags(prev):
                problems.append(f"{here}: a check cell that follows no exercise")
    return problems
