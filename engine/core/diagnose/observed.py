"""What a wrong result observably is, when no slip explains it: which entries are wrong, along
which axis, by how much, on which input. Facts, never a guess at the cause: "your result is `x`
itself, unchanged", "columns 0 and 1 are swapped", "only row 0 is wrong, 2 times the expected
numbers", "your rows change when the rows of `x` are put in another order".

:func:`describe` looks at one wrong case (the example above when it is wrong: the only case
whose numbers may be quoted) with the looks of :data:`LOOKS`, in order, and at how the code
behaves when its input is permuted (:func:`mixes_rows`), and writes what it saw.
"""

from __future__ import annotations

import numpy as np

from engine.presentation.numbers import exact, percent, plural, word_list

from .slips import arg_name, quiet


def describe(ex, probes, tolerance, rerun=None) -> str | None:
    """The facts a wrong result of the right shape shows, as one or two sentences; None when
    there is no such result. ``tolerance(case)`` gives (rtol, atol); ``rerun(args, kwargs)``, when
    given, calls the learner's function again (its result; None when it raises)."""
    wrong = [p for p in probes if p.numeric and not p.right and p.yours.shape == p.wanted.shape]
    if not wrong:
        return None
    p = next((q for q in wrong if q.case.visible), wrong[0])
    rtol, atol = tolerance(p.case)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(p.yours.astype(float), p.wanted.astype(float), rtol=rtol, atol=atol, equal_nan=True)
    facts = []
    for look, final in LOOKS:
        fact = quiet(look, ex, p, bad, rtol, atol)
        if fact:
            facts.append(fact)
            if final:
                break
    where = "On the example above" if p.case.visible else f"On a hidden test ({p.case.label or 'another input'})"
    said = f"What the check sees: {where.lower()[0] + where[1:]}, " + "; ".join(facts) + "." if facts else ""
    mixed = quiet(mixes_rows, ex, probes, tolerance, rerun) if rerun is not None else None
    said = " ".join(s for s in (said, mixed) if s)
    return said or None


# ---------------------------------------------------------------- the looks

def _unchanged(ex, p, bad, rtol, atol) -> str | None:
    """The result is one of the arguments, as it was given."""
    for i, arg in enumerate(p.case.args):
        if isinstance(arg, np.ndarray) and arg.shape == p.yours.shape and np.array_equal(arg, p.yours):
            return (f"your result is `{arg_name(ex, i)}` itself, unchanged: the function gives back the "
                    "numbers it was given")
    return None


def _permuted(ex, p, bad, rtol, atol) -> str | None:
    """The right numbers in another order along one axis (the same order in every row)."""
    got, exp = p.yours.astype(float), p.wanted.astype(float)
    for axis, unit, units in ((-1, "column", "columns"), (-2, "row", "rows")):
        if got.ndim < -axis or got.shape[axis] < 2:
            continue
        g, e = np.moveaxis(got, axis, 0), np.moveaxis(exp, axis, 0)
        order = []
        for k in range(g.shape[0]):
            match = [j for j in range(e.shape[0]) if np.allclose(g[k], e[j], rtol=rtol, atol=atol, equal_nan=True)]
            if not match:
                break
            order.append(next((j for j in match if j not in order), match[0]))
        if len(order) != g.shape[0] or sorted(order) != list(range(g.shape[0])) or order == sorted(order):
            continue
        if got.ndim == 1:
            unit, units = "entry", "entries"
        moved = [(k, j) for k, j in enumerate(order) if k != j]
        if len(moved) == 2:
            return (f"your {units} hold the right numbers, but {units} {moved[0][0]} and {moved[1][0]} are "
                    "swapped")
        said = ", ".join(f"your {unit} {k} is the expected {unit} {j}" for k, j in moved[:4])
        return f"your {units} hold the right numbers in another order ({said})"
    return None


def _input_kept(ex, p, bad, rtol, atol) -> str | None:
    """Where the result is wrong, it holds an argument's own numbers."""
    for i, arg in enumerate(p.case.args):
        if isinstance(arg, np.ndarray) and arg.shape == p.yours.shape and arg.dtype.kind == "f":
            if np.array_equal(arg[bad], p.yours[bad]):
                return (f"where your result is wrong it holds `{arg_name(ex, i)}`'s own numbers, unchanged "
                        f"({plural(int(bad.sum()), 'entry', 'entries')})")
    return None


def _region(ex, p, bad, rtol, atol) -> str | None:
    """Which entries are wrong, when they are not all: some rows, some columns, one side of the
    diagonal."""
    if bad.size == 1:
        return None                 # a single number: the comparison above says all there is
    if bad.all():
        return f"every one of its {bad.size} numbers is wrong"
    if bad.ndim == 1:
        return f"{_which(np.flatnonzero(bad), bad.size, 'entry', 'entries')} wrong, the others right"
    grid = bad.reshape(-1, *bad.shape[-2:]).any(axis=0)        # the last two axes, over any batch
    rows, cols = grid.any(axis=1), grid.any(axis=0)
    if grid.shape[0] == grid.shape[1] and grid.shape[0] > 1:
        upper, lower = np.triu(np.ones_like(grid), 1), np.tril(np.ones_like(grid), -1)
        if not (grid & ~upper).any():
            return "only numbers above the diagonal (a column after its row) are wrong"
        if not (grid & ~lower).any():
            return "only numbers below the diagonal (a column before its row) are wrong"
        if not (grid & ~np.eye(grid.shape[0], dtype=bool)).any():
            return "only numbers on the diagonal are wrong"
    if not rows.all():
        return f"{_which(np.flatnonzero(rows), rows.size, 'row', 'rows')} wrong, the others right"
    if not cols.all():
        return f"{_which(np.flatnonzero(cols), cols.size, 'column', 'columns')} wrong in every row, the others right"
    return f"{plural(int(bad.sum()), 'number')} of {bad.size} are wrong, spread over every row and column"


def _which(indices, total: int, unit: str, units: str) -> str:
    """"only row 0 is", "rows 1 and 3 are", "the even columns (0, 2, 4) are", "every row but the
    first is"."""
    found = [int(i) for i in indices]
    if len(found) == total - 1 and total > 2:
        missing = next(i for i in range(total) if i not in found)
        name = {0: "the first", total - 1: "the last"}.get(missing, f"{unit} {missing}")
        return f"every {unit} but {name} is"
    if total >= 4 and found in (list(range(0, total, 2)), list(range(1, total, 2))):
        parity = "even" if found[0] == 0 else "odd"
        return f"the {parity} {units} ({', '.join(map(str, found[:4]))}{', ...' if len(found) > 4 else ''}) are"
    if len(found) == 1:
        return f"only {unit} {found[0]} is"
    shown = [str(i) for i in found[:5]] + (["others"] if len(found) > 5 else [])
    return f"{units} {word_list(shown)} are"


def _size_of_error(ex, p, bad, rtol, atol) -> str | None:
    """By how much the wrong numbers are off: a common factor, a common difference, a narrow
    range of factors, or a small relative error."""
    if "b" in (p.yours.dtype.kind, p.wanted.dtype.kind):
        return None                       # True and False: which ones are wrong says it all
    got, exp = p.yours.astype(float)[bad], p.wanted.astype(float)[bad]
    if not got.size or not np.all(np.isfinite(got)) or not np.all(np.isfinite(exp)):
        return None
    gap = got - exp
    with np.errstate(all="ignore"):
        ratio = got / exp
    quoted = p.case.visible
    if np.all(exp != 0) and np.allclose(ratio, ratio[0], rtol=1e-6):
        r = float(ratio[0])
        if abs(r + 1) < 1e-9:
            return "the wrong numbers have the expected size and the opposite sign"
        if r == 0:
            return "the wrong numbers are all 0"
        return f"each wrong number is {exact(round(r, 6))} times the expected one"
    if np.allclose(gap, gap[0], rtol=1e-6, atol=1e-12):
        d = float(gap[0])
        return f"each wrong number is the expected one {'plus' if d > 0 else 'minus'} {exact(abs(round(d, 6)))}"
    scale = np.maximum(np.abs(exp), np.abs(got))
    worst = float(np.max(np.abs(gap) / np.where(scale > 0, scale, 1.0)))
    if worst < 0.05:
        return f"the wrong numbers are close, off by at most {percent(worst)}: a small term or constant differs"
    if np.all(got == 0):
        return "the wrong numbers are all 0"
    if np.all(exp != 0) and np.all(ratio > 0) and quoted:
        low, high = float(ratio.min()), float(ratio.max())
        return f"the wrong numbers are between {exact(round(low, 3))} and {exact(round(high, 3))} times the expected ones"
    if np.all(gap > 0):
        return "every wrong number is larger than the expected one"
    if np.all(gap < 0):
        return "every wrong number is smaller than the expected one"
    return None


# (look, final): a final look says all there is (the result is an input, or the right numbers moved).
LOOKS = [(_unchanged, True), (_permuted, True), (_input_kept, False), (_region, False), (_size_of_error, False)]


# ---------------------------------------------------------------- rows that meet

def mixes_rows(ex, probes, tolerance, rerun) -> str | None:
    """When the reference computes each row of its first argument on its own (its rows, put in
    another order, give the same rows in that order) and the learner's function does not: the
    rows meet somewhere they should not (a reduction over the wrong axis, a statistic of the
    whole array)."""
    for p in probes:
        x = p.case.args[0] if p.case.args else None
        if not isinstance(x, np.ndarray) or x.ndim < 2 or x.shape[-2] < 2 or p.right or not p.numeric:
            continue
        if p.wanted.shape[:-1] != x.shape[:-1] and p.wanted.shape != x.shape[:-1]:
            continue
        order = np.roll(np.arange(x.shape[-2]), 1)
        moved = (np.take(x, order, axis=-2), *p.case.args[1:])
        rtol, atol = tolerance(p.case)
        expected = np.asarray(ex.reference(*moved, **p.case.kwargs), dtype=float)
        along = -2 if p.wanted.ndim == x.ndim else -1
        if not np.allclose(expected, np.take(p.wanted.astype(float), order, axis=along), rtol=rtol, atol=atol):
            return None                     # the reference's rows meet too: nothing to say
        yours = rerun(moved, p.case.kwargs)
        if yours is None:
            return None
        yours = np.asarray(yours, dtype=float)
        if yours.shape == p.yours.shape and not np.allclose(
                yours, np.take(p.yours.astype(float), order, axis=along), rtol=rtol, atol=atol, equal_nan=True):
            return (f"With the rows of `{arg_name(ex, 0)}` put in another order (the last row first), your "
                    "result does not just move its rows the same way: a row of yours depends on the other "
                    "rows, where each row should be computed from its own numbers only (a reduction along "
                    "axis 0, or over the whole array?).")
        return None
    return None
