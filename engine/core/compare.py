"""Comparing a learner's result with the reference's on one case, and the words for what differs:
the wrong type, the wrong shape, NaN or infinity, or which numbers differ (quoted only on the
example above, the one case whose numbers the feedback may show)."""

from __future__ import annotations

import warnings

import numpy as np

from engine.presentation import numbers

from .definition import Case, Exercise
from .verdict import Feedback

SHOWN = 3                # differing numbers quoted on the visible example


def describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"a {type(value).__name__}"


def case_name(case: Case) -> str:
    if case.visible:
        return "the example above"
    shapes = [a.shape for a in case.args if isinstance(a, np.ndarray)]
    where = f" (input shape {shapes[0]})" if shapes else ""
    return f"a hidden test, {case.label or 'another input'}{where}"


def on(where: str) -> str:
    """"On the example above" / "On a hidden test, one token (input shape (1, 4)),": the start of
    a sentence about a case."""
    return f"On {where}" + ("" if where == "the example above" else ",")


def _is_numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "biufc"


def tolerance(ex: Exercise, case: Case | None) -> tuple[float, float]:
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


def close(a, b, ex: Exercise, case: Case | None = None) -> bool:
    rtol, atol = tolerance(ex, case)
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
    rtol, atol = tolerance(ex, case)
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


def compare(got, exp, case: Case, ex: Exercise) -> Feedback | None:
    """None when ``got`` matches ``exp``; otherwise the feedback."""
    where = case_name(case)
    fb = lambda kind, *details: Feedback(ex.id, kind, list(details))  # noqa: E731
    if got is None:
        return fb("none", f"On {where}{'' if case.visible else ','} your function gave `None`. "
                          "Did you forget the `return`?" if ex.kind == "function"
                  else f"`{ex.name}` is `None`.")
    arr = _as_array(got)
    exp_arr = np.asarray(exp)
    want = "a NumPy array" if exp_arr.ndim else "a number"
    if not _is_numeric(arr) or isinstance(got, (str, bytes, dict, set)):
        return fb("type", f"Expected {want}, got {describe(got)}: `{_short(got)}`.")
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
    if not close(arr, exp_arr, ex, case):
        if case.visible:
            return fb("values", f"On {where}: {_difference(arr, exp_arr, case, ex)}.")
        return fb("values", f"The example above may look right, but on {where}: "
                  f"{_difference(arr, exp_arr, case, ex)}.")
    return None


def _short(value, limit: int = 60) -> str:
    text_ = repr(value)
    return text_ if len(text_) <= limit else text_[: limit - 3] + "..."

