"""The learner's notebooks as last saved: which one this kernel runs, and whether a cell that ran
still holds the code it ran.

The kernel never sees a cell's text until the cell runs; the saved notebook is the one place it
can read what the learner has typed since. JupyterLab and JupyterLite save it every few seconds
(autosave) and on Ctrl+S; the kernel runs in the notebook's folder (``/drive/...`` in
JupyterLite), so it can read the file. A comparison is only possible once the file was saved
after the run: :func:`compare_run` returns None before that.

Plain Python: files and JSON only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_LOOK_AT = 6                   # notebooks read at most, most recently saved first


@dataclass(frozen=True)
class Comparison:
    """A saved notebook read against a run: ``same`` when it still holds the code that ran."""

    notebook: str      # the file's name
    saved: float       # when it was saved (its modification time)
    same: bool


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def normalised(source: str) -> str:
    """Code as compared: line endings, trailing spaces and blank first and last lines aside."""
    lines = str(source).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _read(path: Path) -> dict | None:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return notebook if isinstance(notebook, dict) and isinstance(notebook.get("cells"), list) else None


def _code_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"]


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def notebooks(folder, session: str | None = None, after: float = 0.0) -> list[Path]:
    """The notebooks in ``folder`` saved after ``after``, most recent first. ``session`` is the
    path of the kernel's own notebook when the server says it (``JPY_SESSION_NAME``): then only
    that one, if it is there."""
    folder = Path(folder)
    if session:
        own = folder / Path(session).name
        if own.is_file():
            return [own] if _modified(own) > after else []
    try:
        found = [p for p in folder.glob("*.ipynb") if p.is_file()]
    except OSError:
        return []
    found = [p for p in found if _modified(p) > after]
    return sorted(found, key=_modified, reverse=True)[:_LOOK_AT]


def exercise_ids(notebook: dict) -> list[str]:
    """The exercises whose cells the notebook holds (``metadata.course.exercise``), in order."""
    ids = []
    for cell in _code_cells(notebook):
        course = cell.get("metadata", {}).get("course", {})
        if isinstance(course, dict) and course.get("exercise"):
            ids.append(str(course["exercise"]))
    return ids


def has_widget_outputs(notebook: dict) -> bool:
    """True when the notebook was saved with widgets (labs) in its outputs."""
    for cell in _code_cells(notebook):
        for output in cell.get("outputs", []) or []:
            if isinstance(output, dict) and WIDGET_VIEW in (output.get("data") or {}):
                return True
    return False


def this_notebook(folder, running_source: str, session: str | None = None) -> tuple[Path, dict] | None:
    """The notebook this kernel runs, and its saved content: the server's ``session`` path when
    given, else the most recently saved notebook in ``folder`` holding a code cell with
    ``running_source`` (the text of the cell running now, e.g. the setup cell)."""
    if session:
        own = Path(folder) / Path(session).name
        notebook = _read(own) if own.is_file() else None
        if notebook is not None:
            return own, notebook
    wanted = normalised(running_source)
    if not wanted:
        return None
    for path in notebooks(folder):
        notebook = _read(path)
        if notebook and any(normalised(_source(c)) == wanted for c in _code_cells(notebook)):
            return path, notebook
    return None


def compare_run(source: str, cell_id: str | None, exercise: str, started: float, folder,
                session: str | None = None) -> Comparison | None:
    """Read the notebook saved after a run (of ``source``, from cell ``cell_id``, which started
    at ``started``) that holds that cell or the cell of ``exercise``: does it still hold the code
    that ran? With the cell's id, that cell's saved text is compared; without one, any code cell
    holding the same text counts. None when no such notebook was saved after the run."""
    ran = normalised(source)
    for path in notebooks(folder, session, after=started):
        notebook = _read(path)
        if notebook is None:
            continue
        cells = _code_cells(notebook)
        same_id = [c for c in cells if cell_id and c.get("id") == cell_id]
        if not same_id and exercise not in exercise_ids(notebook):
            continue
        texts = [normalised(_source(c)) for c in (same_id or cells)]
        return Comparison(path.name, _modified(path), ran in texts)
    return None


def session_path() -> str | None:
    """The kernel's notebook as the Jupyter server names it, if it does (JupyterLite does not)."""
    return os.environ.get("JPY_SESSION_NAME") or None


__all__ = ["Comparison", "WIDGET_VIEW", "compare_run", "exercise_ids", "has_widget_outputs",
           "normalised", "notebooks", "session_path", "this_notebook"]
