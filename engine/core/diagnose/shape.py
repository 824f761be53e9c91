"""Slips a result's shape or number type shows: an axis of length 1 dropped or in the wrong place
(``keepdims``), rows and columns swapped, one row or number too many or too few, a last reduction
missing, one number where one per row was wanted and back; whole numbers, or float32, where
float64 was wanted."""

from __future__ import annotations

import numpy as np

from .slips import Slip, example_quote, quiet

REDUCTIONS = [("the largest", np.max, ".max()"), ("the total", np.sum, ".sum()"),
              ("the mean", np.mean, ".mean()"), ("the largest size", lambda a, axis: np.abs(a).max(axis=axis),
                                                 "np.abs(...).max()")]


def shape(ex, probes, numeric, close):
    """A result of the wrong shape whose numbers say what happened (on the first such probe)."""
    for p in numeric:
        got, exp = p.yours, p.wanted
        if got.shape == exp.shape:
            continue
        words = _shape_words(got, exp, p, close)
        if words:
            yield Slip(words)
        return


def _shape_words(got, exp, p, close) -> str | None:
    where = "the example above" if p.case.visible else "a hidden test"
    seen = f"on {where}, expected shape {exp.shape}, got {got.shape}"
    same = lambda a, b: a.shape == b.shape and close(a, b, p.case)  # noqa: E731
    if got.ndim >= 2 and got.shape == exp.shape[:-2] + exp.shape[-2:][::-1] and 1 not in exp.shape[-2:] \
            and same(got, np.swapaxes(exp, -1, -2)):
        return f"Your result is the expected one transposed ({seen}): rows and columns are swapped."
    if got.size == exp.size and close(got, exp.reshape(got.shape), p.case):
        if got.ndim == exp.ndim:
            flipped = " a row where a column was wanted, the result transposed:" \
                if got.ndim == 2 and got.shape == exp.shape[::-1] else ""
            return (f"Your numbers are right, but the axis of length 1 is in the wrong place "
                    f"({seen}):{flipped} `keepdims=True` (or `[..., None]`) keeps it where the "
                    "axis you reduced was, last.")
        if got.ndim < exp.ndim:
            return (f"Your numbers are right, but {seen}: the axis of length 1 the result keeps "
                    "(one number per row, as a column) was dropped. `keepdims=True` keeps it.")
        return f"Your numbers are right, but {seen}: your result has an extra axis of length 1."
    if exp.ndim == 0 and got.ndim == 1:
        for words, reduce, code in REDUCTIONS[1:3]:
            if same(np.asarray(reduce(got)), exp):
                return (f"Your function returns one number per row ({seen}) where a single "
                        f"number was wanted: {words} of them (`{code}`).")
        return (f"Your function returns one number per row ({seen}) where a single number was "
                "wanted: the step that combines them into one is missing.")
    if exp.ndim >= 1 and got.ndim == 0:
        picked, summed = _picked(got, exp, same), same(np.asarray(exp.sum()), got)
        if picked:
            also = (" (It is also their total: if that line adds up, the sum ran over every axis.)"
                    if summed else "")
            return (f"Your function returns one number in all ({seen}) where {exp.size} were wanted: "
                    f"{picked}{also}")
        total = " it is the total of the expected ones, so the sum ran over every axis where one " \
                "sum per row was wanted (`axis=-1`)." if same(np.asarray(exp.sum()), got) else ""
        return (f"Your function returns one number in all ({seen}) where one per row was wanted:"
                f"{total or ' a sum or a mean ran over every axis.'}")
    if got.ndim == exp.ndim + 1 and got.shape[:-1] == exp.shape:
        for words, reduce, code in REDUCTIONS:
            if same(np.asarray(quiet(reduce, got, axis=-1)), exp):
                return (f"Your numbers are right up to the last step ({seen}): {words} of each "
                        f"row of them is wanted (`{code}`), one number per row.")
        return (f"Your result has an extra axis of length {got.shape[-1]} ({seen}): an operation "
                "between an array and a column (or a row) made a grid where one number per "
                "entry was wanted.")
    if got.ndim == exp.ndim and got.ndim >= 1:
        differ = [i for i in range(got.ndim) if got.shape[i] != exp.shape[i]]
        if len(differ) == 1 and abs(got.shape[differ[0]] - exp.shape[differ[0]]) == 1:
            axis = differ[0]
            n = min(got.shape[axis], exp.shape[axis])
            if n < 2:
                return None
            unit = "row" if got.ndim >= 2 and axis == got.ndim - 2 else "number"
            more = got.shape[axis] > exp.shape[axis]
            for start in (0, 1):
                part = lambda a: a[(slice(None),) * axis + (slice(start, start + n),)]  # noqa: E731
                if same(part(got) if more else got[(slice(None),) * axis + (slice(0, n),)],
                        exp[(slice(None),) * axis + (slice(0, n),)] if more else part(exp)):
                    return (f"Your result has one {unit} too {'many' if more else 'few'} ({seen}); "
                            f"the {unit}s it shares with the expected result are right. Check where "
                            "a range or a slice starts and stops.")
    return None


def number_type(ex, probes, numeric, close):
    """Whole numbers, or a narrower float, where the reference gives floats."""
    wrong = [p for p in numeric if p.yours.shape == p.wanted.shape and not p.right]
    if not wrong or any(p.wanted.dtype.kind != "f" for p in wrong):
        return
    if all(p.yours.dtype.kind in "iub" for p in wrong):
        yield Slip(f"Your result holds whole numbers (an array of {wrong[0].yours.dtype}){example_quote(wrong)}: "
                   "the decimals were dropped, by an array of integers the numbers were written into or "
                   "a conversion to `int`.")
        return
    narrow = [p.yours.dtype for p in wrong
              if p.yours.dtype.kind == "f" and p.yours.dtype.itemsize < p.wanted.dtype.itemsize]
    if len(narrow) == len(wrong):
        yield Slip(f"Your result is in {narrow[0]} where {wrong[0].wanted.dtype} was wanted{example_quote(wrong)}: "
                   f"{narrow[0]} keeps fewer digits. Keep the number type of the input.")


def _picked(got, exp, same) -> str | None:
    """The words for one number that is one of the expected ones (and not their total): a single
    index where a slice that keeps several was wanted."""
    flat = exp.reshape(-1)
    at = [i for i in range(flat.size) if same(np.asarray(flat[i]), got)]
    if not at or len(at) == flat.size:
        return None
    return (f"it is one of them (entry {at[0]}), so a single index picked one entry where a slice "
            "that keeps several (`[i:]`, `[:k]`) was wanted.")
