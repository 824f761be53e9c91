"""Checking a learner's answer against the reference, and the feedback it gives.

:func:`evaluate` is pure: it runs the learner's function (or reads their value) on the
exercise's fixed cases and on random ones drawn for this very code, compares with the reference
and returns a :class:`Feedback`, plain data with a plain-text form. It records nothing and
displays nothing: ``check`` in :mod:`engine.notebook` records the result and shows it
(its HTML is built in :mod:`engine.ui.feedback`). :func:`evaluate_source` first runs the code
of the exercise's cell as the learner typed it (the review does this).

For every case the learner's function gets copies of the inputs (:mod:`engine.core.sandbox`),
within a time budget (:mod:`engine.core.budget`); after the call the copies are compared with
the untouched inputs, so a function that changes its argument does not pass. The same code always meets the
same random cases, so it gets the same verdict on every run.

A failed check names a known mistake only when the learner's code behaved like that mistake on
every fixed case (the same numbers, or an error where the mistake raises one); otherwise it says
what was observed and guesses nothing.
"""

from __future__ import annotations

import ast
import linecache
import warnings
from dataclasses import dataclass, field

import numpy as np

from engine.presentation import numbers

from . import diagnose
from .blank import contains_blank, mentions_blank
from .cell import run_cell
from .definition import Case, Exercise
from .registry import get_exercise
from .budget import Budget, OutOfTime, is_learners, resource_problem
from .sandbox import (ABSENT, Change, argument_names, changed_arguments, copied, read_only, requested_size,
                      same, seed_for)

_MISSING = object()
_RAISED = diagnose.RAISED   # what a call that raised is recorded as, when comparing behaviours
SHOWN = 3                # differing numbers quoted on the visible example

# Headline per feedback kind.
HEADLINES = {
    "pass": "Passed",
    "blank": "Not attempted yet",
    "missing": "Not attempted yet",
    "error": "Your code raised an error",
    "none": "Your function returned None",
    "type": "Wrong type",
    "shape": "Wrong shape",
    "nan": "NaN or infinity in the result",
    "values": "Wrong values",
    "inplace": "Your function changed its input",
    "state": "Your function's results depend on earlier calls",
    "timeout": "Your function did not finish",
    "condition": "Right numbers, but not as the exercise asks",
    "recursion": "Your function kept calling itself",
    "memory": "Your function asked for too much memory",
}

EARLIER = "Passed before this kernel started"

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


@dataclass
class Feedback:
    """What a check found. ``kind`` is one of :data:`HEADLINES`' keys."""

    exercise: str
    kind: str
    details: list[str] = field(default_factory=list)
    hint: str | None = None  # the hint matching a known mistake or problem
    ladder: tuple[int, int, str] | None = None  # (level, of, text) from the hint ladder
    location: str | None = None  # "line 3: return x.sum()" in the learner's code
    cases: int = 0
    right: tuple = ()  # what the code was seen to do right ("shape"): no generic hint about it
    earlier: bool = False  # "missing" in this kernel, though the progress says it passed before

    @property
    def passed(self) -> bool:
        return self.kind == "pass"

    @property
    def attempted(self) -> bool:
        return self.kind not in ("blank", "missing")

    @property
    def status(self) -> str:
        """"pass", "fail" (attempted, not passed) or "blank" (not attempted)."""
        if self.passed or self.earlier:
            return "pass"
        return "fail" if self.attempted else "blank"

    @property
    def headline(self) -> str:
        return EARLIER if self.earlier else HEADLINES.get(self.kind, self.kind)

    def text(self) -> str:
        mark = {"pass": "[passed]", "fail": "[not yet]", "blank": "[not attempted]"}[self.status]
        lines = [f"{mark} {self.exercise}: {self.headline}"]
        lines += [f"  - {d}" for d in self.details]
        if self.location:
            lines.append(f"  - where: {self.location}")
        if self.hint:
            lines.append(f"  Hint: {self.hint}")
        if self.ladder:
            level, total, text = self.ladder
            lines.append(f"  Hint {level} of {total}: {text}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()


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


# ---------------------------------------------------------------- comparing results

def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"a {type(value).__name__}"


def _case_name(case: Case) -> str:
    if case.visible:
        return "the example above"
    shapes = [a.shape for a in case.args if isinstance(a, np.ndarray)]
    where = f" (input shape {shapes[0]})" if shapes else ""
    return f"a hidden test, {case.label or 'another input'}{where}"


def _on(where: str) -> str:
    """"On the example above" / "On a hidden test, one token (input shape (1, 4)),": the start of
    a sentence about a case."""
    return f"On {where}" + ("" if where == "the example above" else ",")


def _is_numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "biufc"


def _tolerance(ex: Exercise, case: Case | None) -> tuple[float, float]:
    if case is None:
        return ex.rtol, ex.atol
    return (ex.rtol if case.rtol is None else case.rtol,
            ex.atol if case.atol is None else case.atol)


def _as_array(value) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(value)
    except Exception:  # noqa: BLE001 - anything that is not array-like
        return np.asarray(None, dtype=object)


def _close(a, b, ex: Exercise, case: Case | None = None) -> bool:
    rtol, atol = _tolerance(ex, case)
    try:
        a, b = _as_array(a), _as_array(b)
        if a.shape != b.shape or not _is_numeric(a) or not _is_numeric(b):
            return False
        with np.errstate(all="ignore"):
            return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError):
        return False


def _index(index: tuple, ndim: int) -> str:
    if ndim == 1:                   # an array's k-th number: its entry (a "position" is a token's)
        return f"entry {index[0]}"
    if ndim == 2:
        return f"row {index[0]}, column {index[1]}"
    return "entry [" + ", ".join(str(i) for i in index) + "]"


def _count(bad: int, total: int) -> str:
    """"2 of the 12 numbers differ", "all 12 numbers differ", "the number differs"."""
    if total == 1:
        return "the number differs"
    verb = "differs" if bad == 1 else "differ"
    return f"{bad} of the {total} numbers {verb}" if bad < total else f"all {total} numbers differ"


def _rows(bad: np.ndarray) -> str:
    """", in rows 0 and 2 of 5" for a grid of numbers; "" for a single row."""
    if bad.ndim < 2:
        return ""
    per_row = bad.reshape(-1, bad.shape[-1]).any(axis=1)
    if per_row.size == 1:
        return ""
    if per_row.all():
        return ", in both rows" if per_row.size == 2 else f", in all {per_row.size} rows"
    rows = [int(r) for r in np.flatnonzero(per_row)]
    if bad.ndim == 2:
        names = [str(r) for r in rows[:4]] + (["others"] if len(rows) > 4 else [])
        return f", in {'row' if len(rows) == 1 else 'rows'} {numbers.word_list(names)} of {bad.shape[0]}"
    return f", in {len(rows)} of the {per_row.size} rows"


def _difference(got: np.ndarray, exp: np.ndarray, case: Case, ex: Exercise) -> str:
    """The numbers that differ, in words sized to the result: one number, a row, a grid."""
    rtol, atol = _tolerance(ex, case)
    if exp.ndim == 0:
        if case.visible:
            return f"expected {numbers.exact(exp)}, got {numbers.exact(got)}"
        return f"your function gave {numbers.exact(got)}, which is not the right number"
    with np.errstate(all="ignore"):
        bad = ~np.isclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)
    nbad = int(bad.sum())
    if not case.visible:
        return _count(nbad, bad.size) + _rows(bad)
    first = [tuple(int(i) for i in index) for index in np.argwhere(bad)[:SHOWN]]
    quoted = "; ".join(f"{_index(i, exp.ndim)}: expected {numbers.exact(float(exp[i]))}, got "
                       f"{numbers.exact(float(np.real(got[i])))}" for i in first)
    if exp.size == 1:
        return quoted
    return f"{quoted} ({_count(nbad, bad.size)}{_rows(bad)})"


def _compare(got, exp, case: Case, ex: Exercise) -> Feedback | None:
    """None when ``got`` matches ``exp``; otherwise the feedback."""
    where = _case_name(case)
    fb = lambda kind, *details: Feedback(ex.id, kind, list(details))  # noqa: E731
    if got is None:
        return fb("none", f"On {where}{'' if case.visible else ','} your function gave `None`. "
                          "Did you forget the `return`?" if ex.kind == "function"
                  else f"`{ex.name}` is `None`.")
    arr = _as_array(got)
    exp_arr = np.asarray(exp)
    want = "a NumPy array" if exp_arr.ndim else "a number"
    if not _is_numeric(arr) or isinstance(got, (str, bytes, dict, set)):
        return fb("type", f"Expected {want}, got {_describe(got)}: `{_short(got)}`.")
    if arr.shape != exp_arr.shape:
        return fb("shape", f"On {where}: expected shape {exp_arr.shape}, got shape {arr.shape}.")
    exp_finite = np.isfinite(exp_arr) if _is_numeric(exp_arr) else True
    bad = ~np.isfinite(arr) & exp_finite
    if np.any(bad):
        what = "NaN (not a number)" if np.any(np.isnan(arr)) else "infinity"
        detail = f"On {where}{'' if case.visible else ','} the result contains {what}"
        if arr.ndim:
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            detail += (f" in {numbers.plural(int(bad.sum()), 'entry', 'entries')} of {arr.size}, first at "
                       f"{_index(first, arr.ndim)}")
        return fb("nan", detail + ". NaN comes from 0/0 or inf - inf; infinity from an "
                  "overflow, such as `np.exp` of a large number.")
    if not _close(arr, exp_arr, ex, case):
        if case.visible:
            return fb("values", f"On {where}: {_difference(arr, exp_arr, case, ex)}.")
        return fb("values", f"The example above may look right, but on {where}: "
                  f"{_difference(arr, exp_arr, case, ex)}.")
    return None


def _short(value, limit: int = 60) -> str:
    text_ = repr(value)
    return text_ if len(text_) <= limit else text_[: limit - 3] + "..."


# ---------------------------------------------------------------- running the learner's function

@dataclass
class _Call:
    """One call of the learner's function: what it returned or raised, and what it changed
    (``wrote``: the error the code met when it wrote into a read-only argument)."""

    value: object = _MISSING
    error: BaseException | None = None
    changed: list = field(default_factory=list)
    wrote: BaseException | None = None

    @property
    def behaviour(self):
        return _RAISED if self.error is not None else self.value


class _Runner:
    """Runs one learner's function on the cases of one check, within one budget."""

    def __init__(self, ex: Exercise, func):
        self.ex, self.func, self.budget = ex, func, Budget()
        self.calls: dict[int, _Call] = {}
        self.results: list = []              # (case, the result returned, an untouched copy)

    def _names(self, case: Case) -> list[str]:
        return argument_names(self.func, len(case.args))

    def call(self, case: Case) -> _Call:
        """Call on copies of the case's inputs (the case itself stays untouched), every array in
        them read-only, however deep (in a list, in an object's attributes): a write into one,
        through any view of it, stops the code where it happens. Everything else (a list's
        items, an object's attributes) is compared with the originals after the call.
        OutOfTime propagates."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        read_only((args, kwargs))
        try:
            value = self._run(args, kwargs)
        except ValueError as exc:
            if "read-only" not in str(exc):
                return _Call(error=exc)
            return self._wrote(case, exc)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            return _Call(error=exc, changed=changed_arguments(args, kwargs, case.args, case.kwargs,
                                                              self._names(case)))
        return _Call(value=value, changed=changed_arguments(args, kwargs, case.args, case.kwargs,
                                                            self._names(case)))

    def _run(self, args, kwargs, each_line=None):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return self.budget.watched(each_line, self.func, *args, **kwargs)

    def _wrote(self, case: Case, write: BaseException) -> _Call:
        """The code met a read-only array: run it on writable copies. If it then runs, the array
        was one of its arguments: say which changed. If it fails again, the read-only array was
        its own (``np.broadcast_to`` makes such views), and that error is the outcome."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        try:
            self._run(args, kwargs)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            return _Call(error=exc)
        changed = changed_arguments(args, kwargs, case.args, case.kwargs, self._names(case))
        return _Call(changed=changed or [None], wrote=write)

    def line_of_change(self, case: Case) -> tuple[str, int] | None:
        """(file name, line) of the learner's line that changed an argument on ``case``: the
        call is run again, and the arguments compared with the originals before each line."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        read_only((args, kwargs))
        names = self._names(case)
        state = {"line": None, "changed": False, "culprit": None}

        def look(line):            # blame the last line that took the arguments from as given to changed
            changed = bool(changed_arguments(args, kwargs, case.args, case.kwargs, names))
            if changed and not state["changed"]:
                state["culprit"] = state["line"]
            state["changed"], state["line"] = changed, line

        try:
            self._run(args, kwargs, lambda filename, lineno: look((filename, lineno)))
        except Exception:  # noqa: BLE001 - the learner's code may raise anything
            pass
        look(None)
        return state["culprit"] if state["changed"] else None

    def outcome(self, index: int, case: Case) -> _Call:
        if index not in self.calls:
            self.calls[index] = self.call(case)
        return self.calls[index]


# The reference's and the known mistakes' results on fixed cases, kept with the case itself (an id
# alone could be taken again by another case, once an exercise made for a test is gone).
_EXPECTED: dict[int, tuple[Case, object]] = {}
_MISTAKEN: dict[tuple[int, int], tuple[Case, object]] = {}


def _kept(store: dict, key, case: Case, ex: Exercise, compute):
    entry = store.get(key)
    if entry is not None and entry[0] is case:
        return entry[1]
    value = compute()
    if any(case is c for c in ex.fixed_cases()):
        store[key] = (case, value)
    return value


def _reference(ex: Exercise, case: Case):
    def compute():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return ex.reference(*copied(case.args), **copied(case.kwargs))
    return _kept(_EXPECTED, id(case), case, ex, compute)


def _mistaken(ex: Exercise, number: int, case: Case):
    """What mistake ``number`` gives on ``case`` (:data:`_RAISED` if it raises)."""
    def compute():
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return ex.mistaken(number)(*copied(case.args), **copied(case.kwargs))
        except Exception:  # noqa: BLE001 - a mistake that raises is modelled as raising
            return _RAISED
    return _kept(_MISTAKEN, (id(ex.mistakes[number]), id(case)), case, ex, compute)


def _agree(a, b, ex: Exercise, case: Case) -> bool:
    if a is _RAISED or b is _RAISED:
        return a is b
    if a is None or b is None:
        return a is b
    return _close(a, b, ex, case)


# ---------------------------------------------------------------- evaluate

def evaluate(exercise: Exercise | str, namespace: dict, rng=None) -> Feedback:
    """Check the learner's answer found in ``namespace``; returns the feedback.

    The random cases are drawn with ``rng`` when given; otherwise with a generator seeded from
    the exercise and the answer's code, so the same code always gets the same verdict."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    obj = namespace.get(ex.name, _MISSING)
    if obj is _MISSING:
        return Feedback(ex.id, "missing", [
            f"I cannot find `{ex.name}` yet. Run the exercise cell above "
            "(Shift+Enter), then run this check again."])
    if contains_blank(obj):
        return Feedback(ex.id, "blank", [
            "The blank `____` is still in place. Replace it with your code, run the "
            "exercise cell, then this check."])
    if ex.kind == "value":
        return _evaluate_value(ex, obj)
    return _evaluate_function(ex, obj, rng)


def _evaluate_value(ex: Exercise, got) -> Feedback:
    case = Case(args=(), label="your value", visible=True)
    exp = ex.expected()
    problem = _compare(got, exp, case, ex)
    if problem is None:
        return Feedback(ex.id, "pass", [f"`{ex.name}` is right."], cases=1)
    problem.details = [d.replace("On the example above", f"For `{ex.name}`") for d in problem.details]
    for number, mistake in enumerate(ex.mistakes):
        try:
            if _close(got, ex.mistaken(number), ex):
                problem.hint = mistake.hint
                break
        except Exception:  # noqa: BLE001 - a mistake whose code raises matches no value
            continue
    return problem


def _blank_feedback(ex: Exercise) -> Feedback:
    return Feedback(ex.id, "blank", [
        "Your function still holds a blank `____`. Replace it with code, run the exercise "
        "cell, then this check."])


def _evaluate_function(ex: Exercise, func, rng, fixed_only: bool = False) -> Feedback:
    if not callable(func):
        return Feedback(ex.id, "type", [
            f"`{ex.name}` should be a function, but it is {_describe(func)}."])
    if rng is None:
        rng = np.random.default_rng(seed_for(ex.id, func))
    cases = ex.fixed_cases() if fixed_only else ex.cases(rng)
    run = _Runner(ex, func)
    try:
        for index, case in enumerate(cases):
            problem = _judge(run, index, case)
            if problem is not None:
                if mentions_blank(func) or (problem.kind == "blank"):
                    return _blank_feedback(ex)
                if problem.kind in ("values", "shape", "nan", "none", "type", "error"):
                    _diagnose(problem, run, case)
                return problem
    except OutOfTime as over:
        if mentions_blank(func):
            return _blank_feedback(ex)
        return _timeout(ex, over, case)
    fixed = sum(1 for c in cases if not c.random)
    if ex.without_loops:
        loops = diagnose.loops_in(func)
        if loops:
            return _loop_used(ex, loops, len(cases))
    return Feedback(ex.id, "pass", [
        f"{'All ' + numbers.plural(len(cases), 'test') if len(cases) > 1 else 'The one test'} passed: "
        f"{numbers.plural(fixed, 'fixed case')} and {numbers.plural(len(cases) - fixed, 'random one')} "
        "drawn for this code."], cases=len(cases))


def _loop_used(ex: Exercise, loops: list[tuple[int, str]], tests: int) -> Feedback:
    """Right numbers from code with a Python loop, where the exercise asks for none: not a pass
    (the skill the exercise names, the whole grid at once, is not shown), and said plainly."""
    lineno, line = loops[0]
    return Feedback(ex.id, "condition", [
        f"Your function gives the right numbers on all {numbers.plural(tests, 'test')}, but the "
        f"exercise asks for it without a loop, and your code loops in Python "
        f"({numbers.plural(len(loops), 'loop')}). The right numbers are a good start: now let "
        "NumPy do the looping."], hint=ex.without_loops, location=f"line {lineno}: {line}")


def _judge(run: _Runner, index: int, case: Case) -> Feedback | None:
    ex = run.ex
    where = _case_name(case)
    outcome = run.outcome(index, case)
    if outcome.changed:          # a change to the arguments comes first: it may be why the code failed
        return _changed_input(ex, run, outcome, case, where)
    if outcome.error is not None:
        return _error(ex, outcome.error, where)
    got = outcome.value
    if contains_blank(got):
        return Feedback(ex.id, "blank")
    problem = _compare(got, _reference(ex, case), case, ex)
    if problem is not None:
        return problem
    try:
        first = copied(got)
    except Exception:  # noqa: BLE001 - a result that cannot be copied is not followed further
        return None
    again = run.call(case)                       # the same input once more
    if again.error is not None or again.changed or not same(got, first) \
            or not _agree(again.value, first, ex, case):
        return Feedback(ex.id, "state", [
            f"Called a second time with the same input ({where[0].lower() + where[1:]}), your "
            "function gave a different result."], hint=STATE_HINT)
    for earlier, value, kept in run.results:     # earlier results must stay as they were returned
        if not same(value, kept):
            return Feedback(ex.id, "state", [
                f"Your function changed the result it had returned for {_case_name(earlier)} "
                f"when it was called again on {where}: the caller's earlier result is altered."],
                hint=STATE_HINT)
    run.results.append((case, got, first))
    return None


def _error(ex: Exercise, exc: BaseException, where: str) -> Feedback:
    problem = resource_problem(exc)
    location = error_location(exc)
    if problem == "recursion":
        return Feedback(ex.id, "recursion", [
            f"{_on(where)} your function called itself over and over, hundreds of calls deep, "
            "without coming to an end, so Python stopped it (RecursionError)."],
            hint=RECURSION_HINT, location=location)
    if problem == "memory":
        return Feedback(ex.id, "memory", [
            f"{_on(where)} your function asked for {requested_size(exc)}: more memory than "
            "there is, for inputs of a few numbers."], hint=MEMORY_HINT, location=location)
    line = location.split(": ", 1)[1] if location and ": " in location else ""
    hint = diagnose.reduction_for_pairwise(line) if line else None
    return Feedback(ex.id, "error", [f"On {where}: {type(exc).__name__}: {exc}"], location=location,
                    hint=hint or diagnose.misspelt_name(exc))



def _timeout(ex: Exercise, over: OutOfTime, case: Case) -> Feedback:
    where = _case_name(case)
    if over.total:
        detail = (f"Your function did not finish: the tests took it more than {over.seconds:g} s "
                  f"in all, and it was still running on {where}. Is there a loop that never "
                  "ends, or one that runs far more often than the input needs?")
    else:
        detail = (f"Your function did not finish in {over.seconds:g} s on {where}: "
                  "is there a loop that never ends?")
    return Feedback(ex.id, "timeout", [detail], hint=TIMEOUT_HINT,
                    location=error_location(over, loop=True))


def _changed_input(ex: Exercise, run: _Runner, outcome: _Call, case: Case, where: str) -> Feedback:
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
        f"{_on(where)} your function {what}.",
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


def _diagnose(fb: Feedback, run: _Runner, failing: Case) -> None:
    """Name the known mistake the learner's code behaved like on every fixed case (and on the
    failing case); else the slip its results show (:func:`engine.core.diagnose.explain`);
    and say on which fixed cases it was right."""
    ex = run.ex
    fixed = ex.fixed_cases()
    probes = list(enumerate(fixed))
    if not any(failing is c for c in fixed):
        probes.append((len(fixed), failing))
    try:
        seen = [run.outcome(i, c).behaviour for i, c in probes]
    except OutOfTime:
        return
    for number, mistake in enumerate(ex.mistakes):
        if all(_agree(got, _mistaken(ex, number, case), ex, case)
               for got, (_i, case) in zip(seen, probes)):
            fb.hint = mistake.hint
            return
    observed = [diagnose.Probe(case, got, _reference(ex, case)) for got, (_i, case) in zip(seen, probes)]
    if fb.kind in ("values", "shape", "nan"):       # an error, None or a wrong type says what to fix itself
        fb.hint = diagnose.explain(ex, observed[:len(fixed)], lambda a, b, case: _close(a, b, ex, case))
    fb.right = diagnose.settled(observed[:len(fixed)])
    wrong = [case for got, (_i, case) in zip(seen, probes[:len(fixed)])
             if got is _RAISED or not _agree(got, _reference(ex, case), ex, case)]
    if wrong and len(wrong) < len(fixed):
        labels = ["the example" if c.visible else c.label for c in wrong]
        shown = labels[:4] + ([numbers.plural(len(labels) - 4, "other")] if len(labels) > 4 else [])
        listed = shown[0] if len(shown) == 1 else "; ".join(shown[:-1]) + " and " + shown[-1]
        fb.details.append(f"Of the {len(fixed)} fixed tests it gets {len(fixed) - len(wrong)} right; "
                          f"the ones it gets wrong: {listed}.")


def evaluate_source(exercise: Exercise | str, source: str, rng=None) -> Feedback:
    """Run ``source`` as the exercise's cell (after its context), then check it. Code that
    Python cannot read, or that fails while the cell runs, gives "error" feedback."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    try:
        namespace = run_cell(source, ex.context, ex.id)
    except SyntaxError as exc:
        return Feedback(ex.id, "error", [f"Python cannot read line {exc.lineno}: {exc.msg}."])
    except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
        return Feedback(ex.id, "error", [f"Running your code: {type(exc).__name__}: {exc}"],
                        location=error_location(exc))
    return evaluate(ex, namespace, rng=rng)


def evaluate_fixed(exercise: Exercise | str, namespace: dict) -> Feedback:
    """The verdict of the fixed cases alone (the tests use it to show that the fixed cases,
    not the random ones, reject a wrong answer)."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    obj = namespace.get(ex.name, _MISSING)
    if obj is _MISSING or contains_blank(obj) or ex.kind != "function":
        return evaluate(ex, namespace)
    return _evaluate_function(ex, obj, None, fixed_only=True)


__all__ = ["HEADLINES", "Feedback", "error_location", "evaluate", "evaluate_fixed", "evaluate_source"]
