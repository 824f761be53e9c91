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

- solution code outside the tagged cells: a line of an exercise's solved cell (its blanks
  filled with the definition's solution) pasted into a markdown cell or an untagged code cell;

and, in content/ itself, what would ship but must not: stray files JupyterLab names Untitled
(`Untitled1.ipynb`, `untitled.txt`, `Untitled Folder`) and the copies its Duplicate makes
(`00_start_here-Copy1.ipynb`), which would be shipped and listed on the landing page; symbolic
links (the build would ship what they point to, which may lie outside the course, and a link to
a folder above would copy the checkout into itself), dangling ones included; hidden folders
(`.vscode/`, `.virtual_documents/`: JupyterLite's build cannot ship them) and hidden files
(`.env`); notebooks that cannot be read. Each is one sentence.

`python -m tools.site build` refuses to build while there are any (unless told to ship anyway);
`python -m tools.site check` runs only this check, and with `--clear` first removes what running
a notebook leaves in it (:func:`clear`: outputs, execution counts, widget state, timings), which
JupyterLab's "Clear Outputs of All Cells" does only in part. Cells are numbered as a reader
counts them in JupyterLab: every cell, markdown included, from 1 at the top.
"""

import json
import os
import re
from pathlib import Path

from engine.core.definition import count_blanks, fill_blanks
from engine.core.notebooks import cell_number, exercise_id, validate_notebook

BLANK = "____"
KERNEL = "python"
WIDGET_STATE = "widgets"              # the notebook metadata key of saved widget state
TIMING_KEYS = ("execution", "ExecuteTime")


CHECKPOINTS = ".ipynb_checkpoints"     # JupyterLab's own, never shipped (the build leaves it out)
DUPLICATE = re.compile(r"-Copy\d+(\.[^/]*)?$")   # JupyterLab's Duplicate: "00_start_here-Copy1.ipynb"
SOLVED_LINE_CHARS = 12                   # a solved line this long, pasted elsewhere, is a solution


def walk(content):
    """(path, is a folder) of everything under content, links not followed, checkpoints left out."""
    for folder, dirs, files in os.walk(content, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != CHECKPOINTS)
        for name in dirs + sorted(files):
            path = Path(folder) / name
            yield path, name in dirs and not path.is_symlink()


def notebooks_in(content):
    """Every notebook under content (not through links), checkpoints left out, sorted."""
    content = Path(content)
    return sorted(p for p, folder in walk(content)
                  if not folder and p.suffix == ".ipynb" and not p.is_symlink()
                  and not any(part.startswith(".") for part in p.relative_to(content).parts))


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


def stray_files(content) -> list[tuple[str, str]]:
    """(path relative to content, why it must not ship) for what is in content but must not
    ship: Untitled files, Duplicate's copies, links, hidden files and folders."""
    content = Path(content)
    found = []
    for path, folder in walk(content):
        name = path.relative_to(content).as_posix()
        if any(name.startswith(earlier + "/") for earlier, _ in found):
            continue                                  # inside a folder already refused
        if path.is_symlink():
            target = os.readlink(path)
            if not path.exists():
                found.append((name, f"a symbolic link to {target}, which does not exist: delete it"))
            else:
                found.append((name, f"a symbolic link (to {target}): the build would ship what it points to, "
                                    "which may lie outside the course; put the file itself there, or delete "
                                    "the link"))
        elif path.name.startswith("."):
            kind = "folder" if folder else "file"
            found.append((name, f"a hidden {kind} (an editor's or JupyterLab's own): it would not reach "
                                "learners as meant; delete it or move it out of content/"))
        elif path.name.lower().startswith("untitled"):
            found.append((name, "a stray file JupyterLab named Untitled: delete it, or rename it if it "
                                "belongs to the course"))
        elif not folder and DUPLICATE.search(path.name):
            found.append((name, "a copy made by JupyterLab's Duplicate (learners would see the notebook "
                                "twice): delete it, or rename it if it belongs to the course"))
    return found


def pasted_solutions(notebook: dict) -> list[str]:
    """Cells outside the exercise cells that hold a line of an exercise's solved cell."""
    from engine.core.registry import get_exercise

    cells = [c for c in notebook.get("cells", []) if isinstance(c, dict)]
    solved = {}
    for cell in cells:
        ex_id = exercise_id(cell)
        try:
            fills = get_exercise(ex_id).solution if ex_id else None
        except (KeyError, LookupError, ValueError):
            continue
        text = _source(cell)
        if not fills or count_blanks(text) != len(fills):
            continue
        before = {_plain(line) for line in text.splitlines()}
        for line in fill_blanks(text, fills).splitlines():
            plain = _plain(line)
            if len(plain) >= SOLVED_LINE_CHARS and plain not in before:
                solved.setdefault(plain, ex_id)
    problems = []
    for index, cell in enumerate(cells):
        if exercise_id(cell) is not None:
            continue
        lines = {_plain(line.strip().strip("`")) for line in _source(cell).splitlines()}
        hits = sorted({ex for line, ex in solved.items() if line in lines})
        if hits:
            problems.append(f"{cell_number(index)} holds the solution of {', '.join(hits)} outside its "
                            "exercise cell: delete it")
    return problems


def _plain(line: str) -> str:
    return " ".join(line.split())


def problems(content) -> list[tuple[str, str]]:
    """(path relative to content, problem) for every notebook that must not ship, and everything
    else in content that must not ship."""
    found = []
    for path in notebooks_in(content):
        name = path.relative_to(content).as_posix()
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            found.append((name, f"cannot be read ({exc.strerror or type(exc).__name__}): give it read "
                                "permission, or delete it"))
            continue
        except (UnicodeDecodeError, ValueError) as exc:
            found.append((name, f"cannot be read as a notebook ({type(exc).__name__}): restore it with "
                                "git checkout, or delete it"))
            continue
        found.extend((name, problem) for problem in notebook_problems(notebook))
        if isinstance(notebook, dict) and isinstance(notebook.get("cells"), list):
            found.extend((name, problem) for problem in pasted_solutions(notebook))
    found.extend(stray_files(content))
    return found


UNSHIPPABLE = ("cannot be read", "a symbolic link", "a hidden folder")


def unshippable(found) -> list[tuple[str, str]]:
    """Of the problems found, those no build ships even when told to (--ship-anyway)."""
    return [(name, problem) for name, problem in found if problem.startswith(UNSHIPPABLE)]


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
    "definition; delete stray Untitled files, Duplicate's copies, links and hidden files. Work on copies with ./course lab, which "
    "never touches content/."
)


def describe(found) -> str:
    """A plain message listing what was found."""
    lines = [f"  {name}: {problem}" for name, problem in found]
    return "\n".join(lines)
