"""The learner's own functions of earlier exercises, read back from their saved notebooks: the
capstone builds a block of the trained model from them.

:func:`your_parts` takes the exercises a function is built from. For each it reads the exercise
cell of the learner's saved notebook, runs it and checks it again; it keeps the learner's
function when that passes, and the course's own (the exercise's reference) otherwise, with one
line per part saying which it took and why. :func:`course_parts` gives the course's functions
alone: the capstone's check runs its cases with them, whatever the learner wrote before.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Sequence

from .cell import run_cell
from .checker import evaluate
from .notebooks import exercise_id, read
from .registry import all_exercises, get_exercise
from .workspace import workspace_root


class Parts(SimpleNamespace):
    """The functions chosen, by the names the exercises give them (``parts.rms_norm``), and
    ``report``: one line per part, whose function it is and why."""


def course_parts(ids: Sequence[str]) -> tuple[Callable, ...]:
    """The course's function for each exercise in ``ids``: its reference, which has the
    signature of the exercise's function."""
    return tuple(get_exercise(ex_id).reference for ex_id in ids)


def your_parts(ids: Sequence[str], root=None) -> Parts:
    """For each exercise in ``ids``, the learner's own function if their saved notebook holds
    one that passes its check again now, else the course's. ``root``: the folder of the
    learner's notebooks (default: the workspace)."""
    root = workspace_root() if root is None else Path(root)
    chosen, lines = {}, []
    for ex_id, course in zip(ids, course_parts(ids)):
        ex = get_exercise(ex_id)
        own, why = _own_part(ex_id, root)
        chosen[ex.name] = own if own is not None else course
        lines.append(f"{ex.name:<15} " + (f"yours, from {ex.notebook}.ipynb (it passes its check again)"
                                          if own is not None else f"the course's ({why})"))
    return Parts(**chosen, report="\n".join(lines))


def _saved_as(ex):
    """The exercise and, for notebooks saved before it replaced them, the retired exercises of
    its notebook that define the same function (each checked by its own check)."""
    return [ex] + [e for e in all_exercises(retired=True)
                   if e.retired and e.notebook == ex.notebook and e.name == ex.name and e.id != ex.id]


def _notebook_path(stem: str, root: Path) -> Path | None:
    direct = root / f"{stem}.ipynb"
    if direct.is_file():
        return direct
    found = sorted(p for p in root.glob(f"*/{stem}.ipynb") if ".ipynb_checkpoints" not in p.parts)
    return found[0] if found else None


def _own_part(ex_id: str, root: Path):
    """The learner's function for one exercise, read from their saved notebook and checked
    again, or (None, why not)."""
    ex = get_exercise(ex_id)
    path = _notebook_path(ex.notebook, root)
    if path is None:
        return None, f"{ex.notebook}.ipynb is not in your workspace"
    try:
        cells = read(path)["cells"]
    except (OSError, ValueError):
        return None, f"{path.name} could not be read"
    by_id = {exercise_id(c): "".join(c.get("source", "")) for c in reversed(cells) if exercise_id(c)}
    found = [e for e in _saved_as(ex) if e.id in by_id]
    if not found:
        return None, f"{path.name} has no {ex.name} exercise cell"
    ex, sources = found[0], [by_id[found[0].id]]
    try:
        namespace = run_cell(sources[0], ex.context, ex.id)
        feedback = evaluate(ex, namespace)
    except Exception as exc:  # noqa: BLE001 - the learner's saved code may raise anything
        return None, f"your saved cell raised {type(exc).__name__}"
    if feedback.kind == "blank":
        return None, f"the {ex.name} cell of {path.name} still has its blanks"
    if not feedback.passed:
        return None, f"your saved {ex.name} does not pass its check: {feedback.headline.lower()}"
    return namespace[ex.name], ""
