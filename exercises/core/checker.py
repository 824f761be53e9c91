"""Checking a learner's answer against the reference, and the feedback it gives.

:func:`evaluate` is pure: it runs the learner's function (or reads their value) on fixed and
fresh random cases, compares with the reference and returns a :class:`Feedback`, plain data with
a plain-text form. It records nothing and displays nothing: ``check`` in
:mod:`exercises.ui.notebook` records the result and shows it (its HTML is built in
:mod:`exercises.ui.feedback`). :func:`evaluate_source` first runs the code of the exercise's cell
as the learner typed it (the review does this).
"""

from __future__ import annotations

import copy
import linecache
import os
import re
import sys
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import text
from .blank import contains_blank, mentions_blank
from .cell import run_cell
from .definition import Case, Exercise
from .registry import get_exercise

_MISSING = object()

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
}


@dataclass
class Feedback:
    """What a check found. ``kind`` is one of :data:`HEADLINES`' keys."""

    exercise: str
    kind: str
    details: list[str] = field(default_factory=list)
    hint: str | None = None  # the hint matching a known mistake
    ladder: tuple[int, int, str] | None = None  # (level, of, text) from the hint ladder
    location: str | None = None  # "line 3: return x.sum()" in the learner's code
    cases: int = 0

    @property
    def passed(self) -> bool:
        return self.kind == "pass"

    @property
    def attempted(self) -> bool:
        return self.kind not in ("blank", "missing")

    @property
    def status(self) -> str:
        """"pass", "fail" (attempted, not passed) or "blank" (not attempted)."""
        if self.passed:
            return "pass"
        return "fail" if self.attempted else "blank"

    @property
    def headline(self) -> str:
        return HEADLINES.get(self.kind, self.kind)

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


# ---------------------------------------------------------------- helpers

def _internal_dirs() -> list[str]:
    """Folders whose code is the course's or Python's, never the learner's."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    dirs = [os.path.join(root, d) + os.sep for d in ("lib", "labs", "exercises")]
    dirs.append(os.path.dirname(np.__file__) + os.sep)
    for prefix in {sys.prefix, sys.base_prefix, getattr(sys, "exec_prefix", sys.prefix)}:
        dirs.append(os.path.join(prefix, "lib") + os.sep)
    dirs.append(os.path.dirname(os.__file__) + os.sep)
    return dirs


def error_location(exc: BaseException) -> str | None:
    """"line 5: return x.sum()": the deepest line of the learner's own code in the traceback."""
    internal = _internal_dirs()
    frames = traceback.extract_tb(exc.__traceback__)
    learners = [f for f in frames
                if not any(os.path.abspath(f.filename).startswith(d) for d in internal)
                and not f.filename.startswith("<frozen")]
    if not learners:
        return None
    f = learners[-1]
    line = (f.line or linecache.getline(f.filename, f.lineno) or "").strip()
    return f"line {f.lineno}: {line}" if line else f"line {f.lineno}"


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"a {type(value).__name__}"


def _case_name(case: Case) -> str:
    if case.visible:
        return "the example above"
    shapes = [a.shape for a in case.args if isinstance(a, np.ndarray)]
    where = f" (input shape {shapes[0]})" if shapes else ""
    return f"a hidden test: {case.label or 'another input'}{where}"


def _is_numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "biufc"


def _close(a, b, ex: Exercise) -> bool:
    try:
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape or not _is_numeric(a):
            return False
        return bool(np.allclose(a, b, rtol=ex.rtol, atol=ex.atol, equal_nan=True))
    except (TypeError, ValueError):
        return False


def _first_difference(got: np.ndarray, exp: np.ndarray, ex: Exercise) -> str:
    bad = ~np.isclose(got, exp, rtol=ex.rtol, atol=ex.atol, equal_nan=True)
    if exp.ndim == 0:
        return f"expected {text.array(exp)}, got {text.array(got)}"
    if exp.ndim == 1:
        i = int(np.argmax(bad))
        return f"position {i} differs: expected {text.array(exp[i])}, got {text.array(got[i])}"
    flat_rows = bad.reshape(-1, exp.shape[-1]).any(axis=1)
    r = int(np.argmax(flat_rows))
    index = np.unravel_index(r, exp.shape[:-1])
    name = f"row {index[0]}" if len(index) == 1 else f"row {tuple(int(i) for i in index)}"
    return (f"{name} differs: expected {text.array(exp[index])}, got {text.array(got[index])}"
            f" ({int(flat_rows.sum())} of {flat_rows.size} rows are wrong)")


def _compare(got, exp, case: Case, ex: Exercise) -> Feedback | None:
    """None when ``got`` matches ``exp``; otherwise the feedback."""
    where = _case_name(case)
    fb = lambda kind, *details: Feedback(ex.id, kind, list(details))  # noqa: E731
    if got is None:
        return fb("none", f"On {where} your function gave `None`. "
                          "Did you forget the `return`?" if ex.kind == "function"
                  else f"`{ex.name}` is `None`.")
    try:
        arr = np.asarray(got)
    except Exception:  # noqa: BLE001 - anything that is not array-like
        arr = np.asarray(None, dtype=object)
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
        detail = f"On {where} the result contains {what}"
        if case.visible and arr.ndim:
            detail += f" at {int(bad.sum())} of {arr.size} positions, first at index " \
                      f"{tuple(int(i) for i in np.argwhere(bad)[0])}"
        return fb("nan", detail + ". NaN comes from 0/0 or inf - inf; infinity from an "
                  "overflow, such as `np.exp` of a large number.")
    if not _close(arr, exp_arr, ex):
        if case.visible:
            return fb("values", f"On {where}: {_first_difference(arr, exp_arr, ex)}.")
        nbad = int((~np.isclose(arr, exp_arr, rtol=ex.rtol, atol=ex.atol)).sum())
        return fb("values", f"The example above may look right, but on {where} "
                  f"{nbad} of {arr.size} numbers are wrong.")
    return None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diagnose(fb: Feedback, ex: Exercise, case: Case | None, got=_MISSING,
              exc: BaseException | None = None) -> None:
    for mistake in ex.mistakes:
        if exc is not None and mistake.error and re.search(mistake.error, str(exc), re.I):
            fb.hint = mistake.hint
            return
        if exc is None and mistake.impl is not None and case is not None and got is not _MISSING:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    wrong = mistake.impl(*copy.deepcopy(case.args), **case.kwargs)
            except Exception:  # noqa: BLE001 - a mistake that cannot run simply does not match
                continue
            if _close(got, wrong, ex) and not _close(got, _reference(ex, case), ex):
                fb.hint = mistake.hint
                return


def _reference(ex: Exercise, case: Case):
    return ex.reference(*copy.deepcopy(case.args), **case.kwargs)


# ---------------------------------------------------------------- evaluate

def evaluate(exercise: Exercise | str, namespace: dict, rng=None) -> Feedback:
    """Check the learner's answer found in ``namespace``; returns the feedback."""
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
    for mistake in ex.mistakes:
        if mistake.impl is not None:
            try:
                if _close(got, mistake.impl(), ex):
                    problem.hint = mistake.hint
                    break
            except Exception:  # noqa: BLE001
                continue
    return problem


def _evaluate_function(ex: Exercise, func, rng) -> Feedback:
    if not callable(func):
        return Feedback(ex.id, "type", [
            f"`{ex.name}` should be a function, but it is {_describe(func)}."])
    rng = np.random.default_rng() if rng is None else rng
    cases = ex.cases(rng)
    for case in cases:
        args = copy.deepcopy(case.args)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = func(*args, **case.kwargs)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            if mentions_blank(func):
                return Feedback(ex.id, "blank", [
                    "Your function still holds a blank `____`. Replace it with code, "
                    "run the exercise cell, then this check."])
            fb = Feedback(ex.id, "error", [
                f"On {_case_name(case)}: {type(exc).__name__}: {exc}"])
            fb.location = error_location(exc)
            _diagnose(fb, ex, case, exc=exc)
            return fb
        if contains_blank(got):
            return Feedback(ex.id, "blank", [
                "Your function still returns the blank `____`. Replace it with code, "
                "run the exercise cell, then this check."])
        with np.errstate(all="ignore"):
            expected = _reference(ex, case)
        problem = _compare(got, expected, case, ex)
        if problem is not None:
            _diagnose(problem, ex, case, got=got)
            return problem
    fixed = sum(1 for c in cases if not c.label.startswith("random"))
    return Feedback(ex.id, "pass", [
        f"All {len(cases)} tests passed: {fixed} fixed cases and "
        f"{len(cases) - fixed} random ones drawn just now."], cases=len(cases))


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


__all__ = ["HEADLINES", "Feedback", "error_location", "evaluate", "evaluate_source"]
