"""What ships: the notebooks in content/ as learners must get them.

A notebook saved from JupyterLab (`./course lab --edit-shipped`, or any editor) can carry stored
outputs or an exercise cell with its blanks filled in; the next build would ship it to every
learner, as a new release. `problems` finds both, and `python -m tools.site build` refuses to
build while there are any (unless told to ship anyway); `python -m tools.site check` runs only
this check.

An exercise cell is a code cell tagged "exercise"; as shipped it holds at least one blank, `____`.
"""

import json
from pathlib import Path

BLANK = "____"


def notebooks_in(content):
    """Every notebook under content, checkpoints left out, sorted."""
    content = Path(content)
    return sorted(p for p in content.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def notebook_problems(notebook: dict) -> list[str]:
    """What in one notebook (parsed JSON) must not ship; [] when it is clean."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return ["not a notebook (no list of cells)"]
    with_outputs, filled = [], []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            with_outputs.append(index)
        tags = (cell.get("metadata") or {}).get("tags") or []
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if "exercise" in tags and BLANK not in source:
            filled.append(index)
    problems = []
    if with_outputs:
        problems.append(f"stored outputs in {_cells(with_outputs)}")
    if filled:
        problems.append(f"exercise {_cells(filled)} filled in (no {BLANK} blank left)")
    return problems


def _cells(indices):
    shown = ", ".join(str(i) for i in indices[:8]) + (", ..." if len(indices) > 8 else "")
    return f"cell{'s' if len(indices) > 1 else ''} {shown}"


def problems(content) -> list[tuple[str, str]]:
    """(notebook path relative to content, problem) for every notebook that must not ship."""
    found = []
    for path in notebooks_in(content):
        name = path.relative_to(content).as_posix()
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            found.append((name, f"cannot be read as a notebook ({type(exc).__name__})"))
            continue
        found.extend((name, problem) for problem in notebook_problems(notebook))
    return found


HOW_TO_FIX = (
    "To fix: clear the outputs (JupyterLab: Edit > Clear Outputs of All Cells, then save; or "
    "jupyter nbconvert --clear-output --inplace NOTEBOOK) and put the blanks back (git checkout "
    "-- NOTEBOOK restores the committed version). Work on copies with ./course lab, which never "
    "touches content/."
)


def describe(found) -> str:
    """A plain message listing what was found."""
    lines = [f"  {name}: {problem}" for name, problem in found]
    return "\n".join(lines)
