"""What ships: the notebooks in content/ as learners must get them.

A notebook saved from JupyterLab (`./course lab --edit-shipped`, or any editor) can carry what
learners must not get; the next build would ship it to every learner, as a new release.
`problems` finds, per notebook:

- stored outputs (and execution counts);
- an exercise cell with its blanks filled in (a code cell tagged "exercise" holds at least one
  blank, `____`, as shipped);
- saved widget state (JupyterLab's "save widget state" keeps every lab's state in the
  notebook's metadata, and clearing the outputs leaves it);
- execution timestamps in cells' metadata (JupyterLab's "record timing");
- a kernel other than `python`, the name JupyterLite's kernel has (another one makes JupyterLite
  ask each learner to choose a kernel);
- what the exercise system's own validation finds (`python -m engine validate`:
  engine.core.notebooks.validate_notebook): an exercise cell that differs from its template
  (the learner's code is written once, in its definition in exercises/definitions/, and
  `python -m engine cells content` writes the notebooks' exercise cells from it),
  a check cell that does not follow its exercise, a `check("...")`, `hint`, `solution` or `ask`
  that names no exercise or question of the course (learners would get a KeyError);

and, in content/ itself, stray files JupyterLab names Untitled (`Untitled1.ipynb`,
`untitled.txt`, `Untitled Folder`), which would be shipped and listed on the landing page.

`python -m tools.site build` refuses to build while there are any (unless told to ship anyway);
`python -m tools.site check` runs only this check, and with `--clear` first removes what running
a notebook leaves in it (:func:`clear`: outputs, execution counts, widget state, timings), which
JupyterLab's "Clear Outputs of All Cells" does only in part. Cells are numbered as a reader
counts them in JupyterLab: every cell, markdown included, from 1 at the top.
"""

import json
from pathlib import Path

from engine.core.notebooks import cell_number, validate_notebook

BLANK = "____"
KERNEL = "python"
WIDGET_STATE = "widgets"              # the notebook metadata key of saved widget state
TIMING_KEYS = ("execution", "ExecuteTime")


def notebooks_in(content):
    """Every notebook under content, checkpoints left out, sorted."""
    content = Path(content)
    return sorted(p for p in content.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def notebook_problems(notebook: dict) -> list[str]:
    """What in one notebook (parsed JSON) must not ship; [] when it is clean."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return ["not a notebook (no list of cells)"]
    with_outputs, filled, timed = [], [], []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata") or {}
        if any(key in metadata for key in TIMING_KEYS):
            timed.append(index)
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            with_outputs.append(index)
        if "exercise" in (metadata.get("tags") or []) and BLANK not in _source(cell):
            filled.append(index)
    problems = []
    if with_outputs:
        problems.append(f"stored outputs in {_cells(with_outputs)}")
    if filled:
        problems.append(f"exercise {_cells(filled)} filled in (no {BLANK} blank left)")
    meta = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    if meta.get(WIDGET_STATE):
        size = len(json.dumps(meta[WIDGET_STATE])) / 1000
        problems.append(f"saved widget state ({size:.0f} kB in the notebook's metadata)")
    if timed:
        problems.append(f"execution timestamps in {_cells(timed)}")
    kernel = (meta.get("kernelspec") or {}).get("name") if isinstance(meta.get("kernelspec"), dict) else None
    if kernel != KERNEL:
        problems.append(f"its kernel is {kernel!r}, not {KERNEL!r} (JupyterLite would ask every learner to "
                        "choose a kernel)")
    said = {f"{cell_number(i)}: exercise " for i in filled}  # "filled in" already says why it differs
    problems.extend(p for p in validate_notebook(notebook)
                    if not (p.endswith("differs from its template") and any(p.startswith(s) for s in said)))
    return problems


def _cells(indices):
    numbers = [cell_number(i).split()[1] for i in indices]
    shown = ", ".join(numbers[:8]) + (", ..." if len(numbers) > 8 else "")
    return f"cell{'s' if len(indices) > 1 else ''} {shown}"


def stray_files(content) -> list[str]:
    """Files and folders under content that JupyterLab named Untitled (made by a click, never
    meant to ship), relative to content."""
    content = Path(content)
    return sorted(p.relative_to(content).as_posix() for p in content.rglob("*")
                  if p.name.lower().startswith("untitled") and ".ipynb_checkpoints" not in p.parts)


def problems(content) -> list[tuple[str, str]]:
    """(path relative to content, problem) for every notebook that must not ship, and every
    stray file."""
    found = []
    for path in notebooks_in(content):
        name = path.relative_to(content).as_posix()
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            found.append((name, f"cannot be read as a notebook ({type(exc).__name__})"))
            continue
        found.extend((name, problem) for problem in notebook_problems(notebook))
    found.extend((name, "a stray file JupyterLab named Untitled: delete it, or rename it if it "
                        "belongs to the course") for name in stray_files(content))
    return found


def clear(path) -> bool:
    """Remove from one notebook file what running it leaves: outputs, execution counts, saved
    widget state, execution timestamps. Everything else (sources, tags, the course's metadata)
    stays as it is. True when the file changed."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    notebook = json.loads(text)
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop(WIDGET_STATE, None)
    for cell in notebook.get("cells", []):
        for key in TIMING_KEYS:
            (cell.get("metadata") or {}).pop(key, None)
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    cleared = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    if cleared == text:
        return False
    path.write_text(cleared, encoding="utf-8")
    return True


HOW_TO_FIX = (
    "To fix: ./course check --clear removes outputs, execution counts, widget state and timings "
    "from every notebook of content/ (JupyterLab's Clear Outputs of All Cells leaves widget state "
    "and timings); put blanks back and undo other edits with git checkout -- NOTEBOOK (the "
    "committed version); python -m engine cells content writes every exercise cell from its "
    "definition; delete stray Untitled files. Work on copies with ./course lab, which "
    "never touches content/."
)


def describe(found) -> str:
    """A plain message listing what was found."""
    lines = [f"  {name}: {problem}" for name, problem in found]
    return "\n".join(lines)
