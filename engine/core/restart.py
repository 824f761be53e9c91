"""After a restart or a reload: what the learner's progress says and this new kernel does not hold.

The progress file keeps every pass, but a kernel holds only the code run in it: after a restart
(or reopening the notebook) the labs cannot run the learner's functions until their exercise
cells and checks run again, and labs saved in the notebook show "Error displaying widget: model
not found" until their cells run again. The setup cell's ``begin()`` says so
(:func:`restart_lines`); a lab's badge says it of one function (``engine/kit/own_function.py``,
with :func:`passed_earlier`).
"""

from __future__ import annotations

from engine.presentation.numbers import word_list

from .progress import Progress
from .registry import get_exercise

PASSED = ("passed", "passed-after-solution")
RUN_ALL = "Run \u25b8 Run All Cells (in the menu) runs every cell again."


def passed_earlier(ex_id: str, record: Progress | None = None) -> bool:
    """True when the learner's progress says the exercise's check passed (in any kernel)."""
    record = Progress.load() if record is None else record
    return record.status(ex_id) in PASSED


def passed_functions(ex_ids, record: Progress) -> list[str]:
    """The function names of the exercises among ``ex_ids`` whose check passed, in order."""
    names = []
    for ex_id in ex_ids:
        try:
            ex = get_exercise(ex_id)
        except KeyError:            # a notebook of another release may name other exercises
            continue
        if ex.kind == "function" and passed_earlier(ex_id, record) and ex.name not in names:
            names.append(ex.name)
    return names


def restart_lines(passed_names, saved_labs: bool) -> list[str]:
    """What a new kernel's setup cell tells the learner ([] when there is nothing to say).

    passed_names: the functions of this notebook whose checks passed before this kernel started.
    saved_labs:   the notebook was saved with labs in its outputs.
    """
    lines = []
    if passed_names:
        names = word_list([f"`{n}`" for n in passed_names])
        if len(passed_names) == 1:
            passed, again = "passed its check", "its exercise cell runs again and its check passes"
        else:
            passed, again = "passed their checks", "their exercise cells run again and their checks pass"
        lines.append(f"Your progress is saved: {names} {passed}. This kernel has just started, so "
                     f"it does not hold your code: the labs run the course's functions until "
                     f"{again} again.")
    if saved_labs or passed_names:
        lines.append("A lab saved from an earlier kernel shows \u201cError displaying widget: model "
                     "not found\u201d or no longer responds: run its cell again.")
    if lines:
        lines.append(RUN_ALL)
    return lines


__all__ = ["PASSED", "RUN_ALL", "passed_earlier", "passed_functions", "restart_lines"]
