"""The feedback on a call that went wrong before giving a result to compare: an error (named from
the code where it can be), a function that did not finish, recursed without end or asked for too
much memory, or one that changed its input; and where in the learner's code it happened."""

from __future__ import annotations

import ast
import linecache

import numpy as np

from engine.presentation import numbers

from . import diagnose
from .budget import OutOfTime, is_learners, resource_problem
from .calls import Call, Runner
from .compare import case_name, on
from .definition import Case, Exercise
from .sandbox import ABSENT, Change, requested_size
from .verdict import Feedback

INPLACE_HINT = ("Work on a new array instead of the one you were given: `x = x - mean` makes a new "
                "array, while `x -= mean`, `x[...] = ...`, `np.exp(x, out=x)`, `x.sort()` or "
                "`items.pop()` change the caller's own data.")
LIST_HINT = ("Build a new list instead of changing the one you were given: `sorted(items)`, `items + "
             "[new]`, a slice or a list comprehension make a new list, while `items.sort()`, "
             "`items.append(...)`, `items.pop()`, `del items[i]` or `items[i] = ...` change the "
             "caller's own list.")
DICT_HINT = ("Build a new dictionary instead of changing the one you were given: `{**given, key: "
             "value}` or `dict(given)` make a new one, while `given[key] = ...`, `given.pop(key)` "
             "or `given.update(...)` change the caller's own.")
STATE_HINT = ("Build the result anew inside the function on every call: an array or list defined "
              "outside the function (or as a default argument) and filled in by it is shared by "
              "all calls, and random numbers differ from call to call.")
# How to stop a cell that runs without end outside a check: the check stops the learner's
# code itself, but a call typed in a cell of its own runs until the kernel is stopped. The
# browser's kernel cannot be interrupted (no signals, budget.py), so it is restarted.
STOP_A_RUNAWAY = ("If you call the function yourself in a cell and that cell never finishes "
                  "(its prompt stays at [*]), restart the kernel: Kernel \u2192 Restart Kernel (or the "
                  "\u27f3 button of the notebook's toolbar); your cells stay as they are, run them "
                  "again from the top. In a JupyterLab on your own computer, Kernel \u2192 Interrupt "
                  "Kernel (the \u25a0 button) stops the cell and keeps your variables.")
TIMEOUT_HINT = ("A `while` loop stops only when its condition becomes false: check that something "
                "inside the loop moves towards that. Your notebook is still usable: fix the cell, "
                "run it, then run the check again. " + STOP_A_RUNAWAY)
RECURSION_HINT = ("A function that calls itself needs a case that returns without calling again, "
                  "and every call must come closer to that case.")
MEMORY_HINT = ("The inputs of the check are small, so an array this large comes from a size taken "
               "from the wrong place: check the shapes you pass to `np.zeros`, `np.ones` or "
               "`np.arange`, and look for an outer product or `[:, None]` where an element-by-"
               "element operation was meant.")



# ---------------------------------------------------------------- where an error happened

def error_location(exc: BaseException, loop: bool = False) -> str | None:
    """"line 5: return x.sum()": the deepest line of the learner's own code in the traceback.
    (When the error came as a function was entered, as Python's recursion limit does, the line
    that called it.) With ``loop``, for code stopped by the time budget: the first line of the
    innermost loop around the line that was running, in the outermost of the learner's frames
    that was in a loop, so the same line wherever in the loop, or in the functions it calls,
    the code was stopped."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_learners(code.co_filename):
            frames.append((code.co_filename, tb.tb_lineno, code.co_firstlineno))
        tb = tb.tb_next
    if not frames and getattr(exc, "where", None):
        frames = [exc.where]
    if not frames:
        return None
    if len(frames) > 1 and frames[-1][1] == frames[-1][2]:
        frames.pop()
    filename, lineno, first = frames[-1]
    if loop:
        looping = [(name, start) for name, line, top in frames
                   if (start := _loop_start(name, line, top)) is not None]
        if looping:
            filename, lineno = looping[0]
    line = linecache.getline(filename, lineno).strip()
    return f"line {lineno}: {line}" if line else f"line {lineno}"


def _loop_start(filename: str, lineno: int, first: int) -> int | None:
    """The first line of the innermost ``while`` or ``for`` loop of the learner's source around
    ``lineno`` (in the function that starts at ``first``); None when there is none, or the source
    cannot be read."""
    source = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.While, ast.For))
             and node.lineno <= lineno <= (node.end_lineno or node.lineno) and node.lineno >= first]
    return max(loops, key=lambda node: node.lineno).lineno if loops else None


def error(ex: Exercise, exc: BaseException, where: str) -> Feedback:
    problem = resource_problem(exc)
    location = error_location(exc)
    if problem == "recursion":
        return Feedback(ex.id, "recursion", [
            f"{on(where)} your function called itself over and over, hundreds of calls deep, "
            "without coming to an end, so Python stopped it (RecursionError)."],
            hint=RECURSION_HINT, location=location)
    if problem == "memory":
        return Feedback(ex.id, "memory", [
            f"{on(where)} your function asked for {requested_size(exc)}: more memory than "
            "there is, for inputs of a few numbers."], hint=MEMORY_HINT, location=location)
    line = location.split(": ", 1)[1] if location and ": " in location else ""
    hint = (diagnose.reduction_for_pairwise(line) if line else None) or diagnose.misspelt_name(exc)
    if hint is None and _raised_in_own_code(exc):      # an error a library raised says less of this code
        hint = diagnose.error_cause(exc, line)
    return Feedback(ex.id, "error", [f"On {where}: {type(exc).__name__}: {exc}"], location=location, hint=hint)


def _raised_in_own_code(exc: BaseException) -> bool:
    """True when the innermost frame of the traceback is the learner's code (not a library's)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and is_learners(tb.tb_frame.f_code.co_filename)



def timeout(ex: Exercise, over: OutOfTime, case: Case) -> Feedback:
    where = case_name(case)
    if over.total:
        detail = (f"Your function did not finish: the tests took it more than {over.seconds:g} s "
                  f"in all, and it was still running on {where}. Is there a loop that never "
                  "ends, or one that runs far more often than the input needs?")
    else:
        detail = (f"Your function did not finish in {over.seconds:g} s on {where}: "
                  "is there a loop that never ends?")
    return Feedback(ex.id, "timeout", [detail], hint=TIMEOUT_HINT,
                    location=error_location(over, loop=True))


def changed_input(ex: Exercise, run: Runner, outcome: Call, case: Case, where: str) -> Feedback:
    changes = [c for c in outcome.changed if c is not None]
    if changes:
        named = [f"`{c.argument}`" for c in changes]
        argument = "argument" if len(named) == 1 else "arguments"
        what = f"changed its {argument} {numbers.word_list(named)}: {changes[0].what}"
        given = changes[0].described or "the data"
    else:
        what = "wrote into one of its arguments: after the call it may no longer hold what it was given"
        given = "the array"
    if outcome.wrote is not None:
        location = error_location(outcome.wrote)
    else:
        try:
            line = run.line_of_change(case)
        except OutOfTime:
            line = None
        location = _line(*line) if line else None
    return Feedback(ex.id, "inplace", [
        f"{on(where)} your function {what}.",
        f"That matters because the caller's data is altered: in your notebook {given} you pass "
        "in would be different after one call, and every run of the cell would change it again."],
        hint=_inplace_hint(changes[0] if changes else None), location=location)


def _line(filename: str, lineno: int) -> str:
    line = linecache.getline(filename, lineno).strip()
    return f"line {lineno}: {line}" if line else f"line {lineno}"


def _inplace_hint(change: Change | None) -> str:
    """The hint for a changed argument, in the words of what was changed: an array's numbers, a
    list or a dictionary (its items), or an object's attribute."""
    if change is None or isinstance(change.before, np.ndarray) and change.within is None:
        return INPLACE_HINT
    if not isinstance(change.before, np.ndarray):
        holder = change.before if change.within is None else change.within
        if isinstance(holder, list):
            return LIST_HINT
        if isinstance(holder, dict):
            return DICT_HINT
    part = change.path
    if change.before is ABSENT:
        return (f"Keep what you compute under a name of your own (`new = ...`), not in what you "
                f"were given: `{part} = ...` changes the caller's own data.")
    writes = ([f"`{part} *= 2`", f"`{part}[...] = ...`", f"`np.exp({part}, out={part})`", f"`{part}.sort()`"]
              if isinstance(change.before, np.ndarray) else [])
    return (f"Read `{part}`, never write it: keep what you compute under a name of your own (`new = "
            f"...`), while {', '.join(writes) + ' or ' if writes else ''}`{part} = ...` "
            f"change{'' if writes else 's'} the caller's own data.")


