"""Why a wrong result is wrong, told by what the learner's code did: its results on the fixed
cases compared with the reference's under the changes that learners' slips produce.

The checker (:mod:`engine.core.checker`) first looks for a known mistake of the exercise
(``Exercise.mistakes``). When none fits, :func:`explain` tries, in order, the slips any exercise
can have, and names the first that fits every fixed case the code gave numbers for. A slip fits
when the code's result equals the reference's result changed that way (within the exercise's
tolerance) on every case where the change applies, the code is right where it does not, and it
differs from the reference's somewhere:

    right on the example only   every hidden test wrong: a size or a number of the example written in
    shape                       an axis of length 1 dropped or in the wrong place (``keepdims``), rows
                                and columns swapped, one row or number too many or too few, a last
                                reduction missing, one number where one per row was wanted and back
    number type                 whole numbers, or float32, where float64 was wanted
    another reduction           each row's median, largest number, sum of squares... where another
                                of its statistics was wanted
    another axis                the reference's computation along another axis, or over the whole array
    an argument changed         the reference given an argument changed as slips change it: left
                                out (all ones), negated, without its signs, transposed, swapped with
                                another argument, a whole number off by one, a list reversed or one
                                item short, another of the values the tests pass
    sign                        every number's sign flipped
    a size factor               the expected numbers times or over a size of the input (a sum where
                                the mean was wanted and back, n - 1 for n, a square root)
    a factor per row            each row times a number of its own (a division by each row's total missing)
    rearranged                  the expected grid transposed, shifted by one entry or one row, reversed
    a function of the result    1 / expected, its square, its root, its log, a power (a log in another base)
    a default                   the reference with a default argument (eps) set otherwise: 0, squared,
                                doubled, ten times, a fixed number whatever is passed
    a constant                  the expected numbers times a constant, or plus one
    a term                      a count with a product of the sizes too many or too few
    rounded                     the expected numbers rounded
    float32                     right in float64, wrong in float32 only (precision lost)

Each explanation is a sentence with the numbers it rests on (those of the example above, the
only case whose numbers feedback may quote, and the sizes of the hidden ones).
:func:`settled` says what the code was seen to do right, so that the hint ladder does not offer
a generic hint about it (:func:`engine.core.hints.contradicts`): a result of the right shape
on every fixed case, batches and non-square inputs included, leaves no doubt about the axis.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from engine.presentation.numbers import exact, percent, plural, word_list

from .definition import Case, Exercise

RAISED = object()        # what a call that raised is recorded as
SKIP = object()          # a slip that says nothing about a case (a shift of a single row)


@dataclass
class Probe:
    """One fixed case: the learner's result (``RAISED`` when it raised) and the reference's."""

    case: Case
    got: Any
    expected: Any


Close = Callable[[Any, Any, Case], bool]


def _array(value) -> np.ndarray | None:
    """``value`` as an array of numbers, or None (an error, None, a string)."""
    if value is RAISED or value is None or isinstance(value, (str, bytes, dict, set)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything that is not array-like
        return None
    return arr if arr.dtype.kind in "biuf" else None


def _numeric(probes: list[Probe]) -> list[tuple[Probe, np.ndarray, np.ndarray]]:
    out = []
    for p in probes:
        got, exp = _array(p.got), _array(p.expected)
        if got is not None and exp is not None:
            out.append((p, got, exp))
    return out


def _quiet(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with NumPy's warnings silenced; None when it raises."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return func(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a change that does not apply to this case
        return None


def _fits(numeric, predict, close: Close, least: int = 1) -> list | None:
    """The wrong probes a slip explains: ``predict(probe, got, expected)`` is what the slip gives
    (None where it does not apply, and then the code must be right there; SKIP where the slip
    says nothing). None unless it fits every probe and explains at least ``least`` wrong ones."""
    wrong = []
    for p, got, exp in numeric:
        guess = _quiet(predict, p, got, exp)
        if guess is SKIP:
            continue
        right = close(got, exp, p.case)
        if guess is not None and not right and _overflowed(got, guess):
            continue             # the code's numbers overflowed where the slip's did not: not judged
        if guess is None:
            if not right:
                return None
            continue
        if not close(got, guess, p.case):
            return None
        if not right:
            wrong.append((p, got, exp, guess))
    return wrong if len(wrong) >= least else None


def _overflowed(got: np.ndarray, guess) -> bool:
    """True when ``got`` holds NaN or infinity where ``guess`` is finite (the code's formula ran
    out of range on this case: it says nothing about the slip)."""
    guess = np.asarray(guess)
    if got.shape != guess.shape or got.dtype.kind != "f":
        return False
    with np.errstate(all="ignore"):
        return bool(np.any(~np.isfinite(got) & np.isfinite(guess)))


def _quote(got: np.ndarray, exp: np.ndarray) -> str:
    """" (on the example above: 1.5 where 0.5 was expected)" for the first differing number."""
    if got.shape != exp.shape:
        return ""
    with np.errstate(all="ignore"):
        bad = np.argwhere(~np.isclose(got.astype(float), exp.astype(float), rtol=1e-9, atol=1e-12, equal_nan=True))
    if not len(bad):
        return ""
    i = tuple(int(k) for k in bad[0])
    return f" (on the example above: {exact(got[i])} where {exact(exp[i])} was expected)"


def _example(wrong) -> str:
    seen = next((w for w in wrong if w[0].case.visible), None)
    return _quote(seen[1], seen[2]) if seen else ""


def _name(ex: Exercise, index: int) -> str:
    names = list(ex.contract.args) if ex.contract else []
    return names[index] if index < len(names) else f"argument {index + 1}"


def _first(case: Case):
    """The first argument when it is an array of numbers, else None."""
    x = case.args[0] if case.args else None
    return x if isinstance(x, np.ndarray) and x.dtype.kind in "iuf" else None


def _reference(ex: Exercise, case: Case, *args, **kwargs):
    out = ex.reference(*args, **kwargs)
    return None if out is None else np.asarray(out)


# ---------------------------------------------------------------- the example only

def _example_only(ex, probes, numeric, close) -> str | None:
    visible = [p for p in probes if p.case.visible]
    hidden = [p for p in probes if not p.case.visible]
    if len(visible) != 1 or len(hidden) < 2:
        return None
    got, exp = _array(visible[0].got), _array(visible[0].expected)
    if got is None or exp is None or got.shape != exp.shape or not close(got, exp, visible[0].case):
        return None
    for p in hidden:
        g, e = _array(p.got), _array(p.expected)
        if g is not None and e is not None and g.shape == e.shape and close(g, e, p.case):
            return None
    sizes = sorted({int(n) for a in visible[0].case.args for n in
                    (a.shape if isinstance(a, np.ndarray) else
                     ([a] if isinstance(a, (int, np.integer)) and not isinstance(a, bool) else []))})
    written = f" (the example's sizes are {word_list(sizes)})" if sizes else ""
    return (f"Your function gives the right result on the example above and a wrong one on every "
            f"hidden test ({len(hidden)} of them): it depends on the example itself. Look for a size "
            f"or a number of the example written into your code{written} where it should be read "
            "from the input (its shape, its length, an argument).")


# ---------------------------------------------------------------- the shape

REDUCTIONS = [("the largest", np.max, ".max()"), ("the total", np.sum, ".sum()"),
              ("the mean", np.mean, ".mean()"), ("the largest size", lambda a, axis: np.abs(a).max(axis=axis),
                                                 "np.abs(...).max()")]


def _shape(ex, probes, numeric, close) -> str | None:
    """A result of the wrong shape whose numbers say what happened."""
    for p, got, exp in numeric:
        if got.shape == exp.shape:
            continue
        where = "the example above" if p.case.visible else "a hidden test"
        seen = f"on {where}, expected shape {exp.shape}, got {got.shape}"
        same = lambda a, b: a.shape == b.shape and close(a, b, p.case)  # noqa: E731
        if got.ndim >= 2 and got.shape == exp.shape[:-2] + exp.shape[-2:][::-1] and 1 not in exp.shape[-2:] \
                and same(got, np.swapaxes(exp, -1, -2)):
            return (f"Your result is the expected one transposed ({seen}): rows and columns are "
                    "swapped.")
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
            total = " it is the total of the expected ones, so the sum ran over every axis where one " \
                    "sum per row was wanted (`axis=-1`)." if same(np.asarray(exp.sum()), got) else ""
            return f"Your function returns one number in all ({seen}) where one per row was wanted:{total or ' a sum or a mean ran over every axis.'}"
        if got.ndim == exp.ndim + 1 and got.shape[:-1] == exp.shape:
            for words, reduce, code in REDUCTIONS:
                if same(np.asarray(_quiet(reduce, got, axis=-1)), exp):
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
    return None


def _number_type(ex, probes, numeric, close) -> str | None:
    wrong = [(p, g, e) for p, g, e in numeric if g.shape == e.shape and not close(g, e, p.case)]
    if not wrong or any(e.dtype.kind != "f" for _p, _g, e in wrong):
        return None
    if all(g.dtype.kind in "iub" for _p, g, _e in wrong):
        return (f"Your result holds whole numbers (an array of {wrong[0][1].dtype}){_example(wrong)}: "
                "the decimals were dropped, by an array of integers the numbers were written into or "
                "a conversion to `int`.")
    narrow = [g.dtype for _p, g, e in wrong if g.dtype.kind == "f" and g.dtype.itemsize < e.dtype.itemsize]
    if len(narrow) == len(wrong):
        return (f"Your result is in {narrow[0]} where {wrong[0][2].dtype} was wanted{_example(wrong)}: "
                f"{narrow[0]} keeps fewer digits. Keep the number type of the input.")
    return None


# ---------------------------------------------------------------- reductions, axes and arguments

STATISTICS = [
    ("sum", lambda x: x.sum(axis=-1, keepdims=True)),
    ("mean", lambda x: x.mean(axis=-1, keepdims=True)),
    ("median", lambda x: np.median(x, axis=-1, keepdims=True)),
    ("largest number", lambda x: x.max(axis=-1, keepdims=True)),
    ("smallest number", lambda x: x.min(axis=-1, keepdims=True)),
    ("product", lambda x: x.prod(axis=-1, keepdims=True)),
    ("standard deviation", lambda x: x.std(axis=-1, keepdims=True)),
    ("variance", lambda x: x.var(axis=-1, keepdims=True)),
    ("mean of the absolute values", lambda x: np.abs(x).mean(axis=-1, keepdims=True)),
    ("sum of the absolute values", lambda x: np.abs(x).sum(axis=-1, keepdims=True)),
    ("mean of the squares", lambda x: (x * x).mean(axis=-1, keepdims=True)),
    ("sum of the squares", lambda x: (x * x).sum(axis=-1, keepdims=True)),
    ("root mean square", lambda x: np.sqrt((x * x).mean(axis=-1, keepdims=True))),
    ("first number", lambda x: x[..., :1]),
    ("last number", lambda x: x[..., -1:]),
    ("midpoint between the largest and the smallest number",
     lambda x: (x.max(axis=-1, keepdims=True) + x.min(axis=-1, keepdims=True)) / 2),
]


def _reduction(ex, probes, numeric, close) -> str | None:
    """Each row reduced to another of its statistics than the expected one."""
    def per_row(p, exp):
        x = _first(p.case)
        return x is not None and x.ndim >= 1 and exp.shape in (x.shape[:-1] + (1,), x.shape[:-1])

    if not numeric or not all(per_row(p, e) for p, _g, e in numeric):
        return None
    wanted = next((name for name, stat in STATISTICS
                   if all(close(np.asarray(stat(p.case.args[0])).reshape(e.shape), e, p.case) for p, _g, e in numeric)),
                  None)
    for name, stat in STATISTICS:
        if name == wanted:
            continue
        wrong = _fits(numeric, lambda p, got, exp, stat=stat: np.asarray(stat(p.case.args[0])).reshape(exp.shape),
                      close)
        if wrong:
            instead = f"; the expected result is each row's {wanted}" if wanted else ""
            return f"Your result is each row's {name}{instead}{_example(wrong)}."
    return None


def _other_axis(ex, probes, numeric, close) -> str | None:
    """The reference's computation along another axis of the first array, or over all of it."""
    if ex.reference is None or not numeric or _first(numeric[0][0].case) is None:
        return None
    if not all(_first(p.case) is not None and exp.shape[:-1] == p.case.args[0].shape[:-1] for p, _g, exp in numeric):
        return None

    def along(axis):
        def predict(p, got, exp):
            x = p.case.args[0]
            if x.ndim < 2 or axis >= x.ndim - 1:
                return None
            out = _reference(ex, p.case, np.moveaxis(x, axis, -1).copy(), *p.case.args[1:], **p.case.kwargs)
            out = np.moveaxis(out, -1, axis)
            return out if out.shape == got.shape else None
        return predict

    for axis in range(0, 3):
        wrong = _fits(numeric, along(axis), close)
        if wrong:
            return (f"Your function works along axis {axis} of `{_name(ex, 0)}` (down the columns) "
                    f"instead of along its last axis, the numbers of each row{_example(wrong)}. "
                    "Count axes from the end (`axis=-1`), so a batch works too.")

    def whole(p, got, exp):
        x = p.case.args[0]
        rest = [np.tile(a, x.size // x.shape[-1]) if isinstance(a, np.ndarray) and a.shape == x.shape[-1:] else a
                for a in p.case.args[1:]]                 # a gain of one number per column, for every column
        out = _reference(ex, p.case, x.reshape(1, -1).copy(), *rest, **p.case.kwargs)
        if out.size == got.size:
            return out.reshape(got.shape)
        return np.broadcast_to(out.reshape(()), got.shape) if out.size == 1 else None

    wrong = _fits(numeric, whole, close)
    if wrong:
        return (f"Your function treats the whole of `{_name(ex, 0)}` as one row: its numbers come "
                f"from all the rows together{_example(wrong)}. Each row (the last axis) is computed "
                "on its own.")
    return None


def _changes(ex: Exercise, cases: list[Case]) -> list[tuple[int, Callable, str]]:
    """(argument number, change, words) for every change of an argument that slips make."""
    found = []
    if not cases:
        return found
    first = cases[0]
    for i, arg in enumerate(first.args):
        name = _name(ex, i)
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
            found.append((i, lambda a: -a, f"with `-{name}` for `{name}` (a subtraction the wrong way "
                                           f"round, or a minus sign too many)"))
            if i == 0:
                continue
            found += [(i, np.ones_like, f"with `{name}` left out (as if it were all ones)"),
                      (i, np.zeros_like, f"with `{name}` left out (as if it were all zeros)"),
                      (i, np.abs, f"with `{name}` without its signs (`np.abs({name})`): its negative "
                                  f"numbers matter"),
                      (i, lambda a: a.T if a.ndim == 2 and a.shape[0] == a.shape[1] else SKIP,
                       f"with `{name}` transposed")]
            for j, other in enumerate(first.args):
                if j != i and isinstance(other, np.ndarray) and other.shape == arg.shape and other.dtype.kind == "f":
                    found.append((i, ("swap", j), f"with `{_name(ex, j)}` used where `{name}` was wanted"))
        elif isinstance(arg, np.ndarray) and arg.dtype.kind in "iu":
            found += [(i, lambda a: a - 1, f"with `{name} - 1` for `{name}` (one too low)"),
                      (i, lambda a: a + 1, f"with `{name} + 1` for `{name}` (one too high)")]
        elif isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)):
            found += [(i, lambda v: v + 1, f"with `{name} + 1` for `{name}` (one too many, or counted from 1)"),
                      (i, lambda v: v - 1 if v >= 1 else SKIP, f"with `{name} - 1` for `{name}` (one too few)")]
            for j, other in enumerate(first.args):
                if j != i and isinstance(other, (int, np.integer)) and not isinstance(other, (bool, np.bool_)):
                    found.append((i, ("swap", j), f"with `{_name(ex, j)}` used where `{name}` was wanted"))
        elif isinstance(arg, list):
            found += [(i, lambda v: v[::-1] if len(v) > 1 else SKIP, f"with the items of `{name}` in reverse order"),
                      (i, lambda v: v[:-1] if v else SKIP, f"without the last item of `{name}`"),
                      (i, lambda v: v[1:] if v else SKIP, f"without the first item of `{name}`")]
        elif isinstance(arg, (str, bool)):
            values = {c.args[i] for c in cases if len(c.args) > i and isinstance(c.args[i], type(arg))}
            if isinstance(arg, bool):
                values = {True, False}
            for value in sorted(values, key=repr):
                found.append((i, lambda v, value=value: value if v != value else SKIP,
                              f"with `{name}` = {value!r} whatever `{name}` is"))
    return found


def _argument_changed(ex, probes, numeric, close) -> str | None:
    """The reference given one argument changed the way slips change it."""
    if ex.reference is None or not numeric:
        return None
    for i, change, words in _changes(ex, [p.case for p, _g, _e in numeric]):
        def predict(p, got, exp, i=i, change=change):
            args = list(p.case.args)
            if i >= len(args):
                return None
            new = args[change[1]] if isinstance(change, tuple) else change(args[i])
            if new is SKIP:
                return SKIP
            args[i] = new
            return _reference(ex, p.case, *args, **p.case.kwargs)
        wrong = _fits(numeric, predict, close)
        if wrong:
            return f"Your numbers are what the right computation gives {words}{_example(wrong)}."
    return None


def _default(ex, probes, numeric, close) -> str | None:
    """The reference with a default argument set otherwise (eps missing, squared, fixed, ...)."""
    if ex.reference is None or ex.contract is None:
        return None
    for name, default in ex.contract.defaults.items():
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            continue
        given = lambda p, name=name, default=default: float(p.case.kwargs.get(name, default))  # noqa: E731
        tries = [(lambda v: 0.0, f"what {name} = 0 gives: {name} is missing, or where it changes nothing"),
                 (lambda v: v ** 2, f"what {name} squared gives"),
                 (lambda v: v ** 0.5, f"what the square root of {name} gives"),
                 (lambda v: 2 * v, f"what twice {name} gives: {name} is added twice"),
                 (lambda v: 10 * v, f"what ten times {name} gives"),
                 (lambda v: v / 10, f"what a tenth of {name} gives")]
        for c in sorted({float(default), 1e-3, 1e-6, 1e-8, 1e-10, 1e-12, 1.0}):
            tries.append((lambda v, c=c: c, f"what {name} = {exact(c)} gives, whatever {name} is "
                                            f"passed: use the argument `{name}`"))
        for change, words in tries:
            def predict(p, got, exp, change=change):
                value = change(given(p))
                if value == given(p):
                    return None
                return _reference(ex, p.case, *p.case.args, **{**p.case.kwargs, name: value})
            wrong = _fits(numeric, predict, close)
            if wrong:
                return f"Your numbers are {words}{_example(wrong)}."
    return None


# ---------------------------------------------------------------- transforms of the result

def _sign(ex, probes, numeric, close) -> str | None:
    wrong = _fits(numeric, lambda p, got, exp: -exp, close)
    if wrong:
        return (f"Your numbers have the expected size but the opposite sign{_example(wrong)}: a "
                "minus sign is missing or one too many, or a subtraction runs the other way.")
    return None


def _sizes(case: Case, ex: Exercise) -> dict[str, float]:
    """The sizes of a case's inputs, by their code: {"`x.shape[-1]`": 4, "`x.size`": 8}."""
    found = {}
    for i, arg in enumerate(case.args):
        name = _name(ex, i)
        if isinstance(arg, np.ndarray):
            for axis, n in enumerate(arg.shape):
                index = axis - arg.ndim if axis >= arg.ndim - 2 else axis
                found[f"`{name}.shape[{index}]`"] = float(n)
            if arg.ndim >= 2:
                found[f"`{name}.size`"] = float(arg.size)
        elif isinstance(arg, (list, tuple)):
            found[f"`len({name})`"] = float(len(arg))
        elif isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)):
            found[f"`{name}`"] = float(arg)
    return found


FACTORS = [   # (power of n, power of n/(n-1)), and the slips that give that factor
    ((1, 0), "a sum where the mean was wanted, a division by it missing, or a multiplication where a "
             "division was wanted (by it, or by its square root)"),
    ((-1, 0), "divided by it once too often, or a mean where the sum was wanted"),
    ((0.5, 0), "its square root: a division by the square root of that size missing, or a sum where "
               "a mean was wanted under a square root"),
    ((-0.5, 0), "over its square root: a division by the square root of that size one too many"),
    ((0, 1), "divided by n - 1 where n was wanted, or the other way round (ddof=1: the sample variance)"),
    ((0, -1), "divided by n where n - 1 was wanted, or the other way round"),
    ((0, 0.5), "the square root of n / (n - 1): a variance divided by n - 1 (ddof=1) where n was wanted"),
    ((0, -0.5), "the square root of (n - 1) / n: a variance divided by n where n - 1 was wanted"),
]


def _size_factor(ex, probes, numeric, close) -> str | None:
    """The expected numbers times (or over) a size of the input, the same size on every case."""
    if not numeric:
        return None
    for code in _sizes(numeric[0][0].case, ex):
        for (power, sample), meaning in FACTORS:
            def predict(p, got, exp, code=code, power=power, sample=sample):
                n = _sizes(p.case, ex).get(code)
                if n is None or n <= 0 or (sample and n <= 1):
                    return None
                return exp * (n ** power) * ((n / (n - 1)) ** sample if sample else 1.0)
            wrong = _fits(numeric, predict, close)
            if wrong:
                values = sorted({int(_sizes(w[0].case, ex)[code]) for w in wrong})
                return (f"Your numbers are the expected ones scaled by {code} (it is "
                        f"{word_list(str(v) for v in values)} on the tests your code gets wrong)"
                        f"{_example(wrong)}: {meaning}.")
    return None


def _example_size(ex, probes, numeric, close) -> str | None:
    """The expected numbers times a size over that size on the example (or the other way round):
    the example's size written into the code as a number."""
    visible = next((p for p, _g, _e in numeric if p.case.visible), None)
    if visible is None:
        return None
    for code, written in _sizes(visible.case, ex).items():
        if written <= 0:
            continue
        for power in (1, -1):
            def predict(p, got, exp, code=code, power=power, written=written):
                n = _sizes(p.case, ex).get(code)
                return None if n is None or n <= 0 else exp * (n / written) ** power
            wrong = _fits(numeric, predict, close)
            if wrong:
                return (f"Your numbers are right where {code} is {int(written)}, as on the example "
                        f"above, and off by the factor {code} / {int(written)} elsewhere: the example's "
                        f"size {int(written)} is written into your code where it should be read from "
                        "the input (its shape, its length).")
    return None


def _row_factor(ex, probes, numeric, close) -> str | None:
    """Each row (the last axis) the expected row times a number of its own."""
    def predict(p, got, exp):
        if got.shape != exp.shape or exp.ndim == 0 or exp.dtype.kind != "f" or exp.shape[-1] < 2:
            return None
        g, e = got.astype(float), exp.astype(float)
        scale = (g * e).sum(axis=-1, keepdims=True) / (e * e).sum(axis=-1, keepdims=True)
        return e * np.where(np.isfinite(scale), scale, 1.0)

    wrong = _fits(numeric, predict, close)
    if not wrong:
        return None
    scales = np.concatenate([np.ravel(((g * e).sum(-1)) / (e * e).sum(-1)) for _p, g, e, _q in wrong])
    scales = scales[np.isfinite(scales)]
    if scales.size < 2 or np.allclose(scales, scales[0], rtol=1e-6):
        return None
    ones = all(np.allclose(e.sum(axis=-1), 1.0) for _p, _g, e, _q in wrong)
    seen = next((w for w in wrong if w[0].case.visible), None)
    numbers = ""
    if seen is not None:
        g, e = seen[1].astype(float), seen[2].astype(float)
        factors = np.ravel((g * e).sum(-1) / (e * e).sum(-1))[:3]
        sums = np.ravel(g.sum(-1))[:3]
        numbers = (f" (on the example above its rows sum to {word_list(exact(float(s)) for s in sums)})"
                   if ones else f" (on the example above: {word_list(exact(float(f)) for f in factors)})")
    if ones:
        return (f"Each row of yours is the expected row times a factor of its own: the expected rows "
                f"sum to 1, yours do not{numbers}. Divide each row by its own total.")
    return (f"Each row of yours is the expected row times a factor of its own{numbers}: a division "
            "(or a multiplication) of each row by a number of its own, such as its size or its "
            "total, is wrong, missing or one too many.")


def _rearranged(ex, probes, numeric, close) -> str | None:
    """The expected grid transposed, shifted by one along an axis, or reversed."""
    def transposed(p, got, exp):
        return np.swapaxes(exp, -1, -2) if exp.ndim >= 2 and exp.shape[-1] == exp.shape[-2] else None

    def shifted(axis, step):
        def predict(p, got, exp):
            if exp.ndim < -axis or got.shape != exp.shape:
                return None
            if exp.shape[axis] < 2:
                return SKIP
            out = np.roll(exp, step, axis=axis).astype(float)
            edge = [slice(None)] * exp.ndim
            edge[axis] = slice(0, 1) if step > 0 else slice(-1, None)
            out[tuple(edge)] = got[tuple(edge)]        # what rolled round is not judged
            return out
        return predict

    def reversed_(axis):
        def predict(p, got, exp):
            if exp.ndim < -axis:
                return None
            return np.flip(exp, axis=axis) if exp.shape[axis] > 1 else SKIP
        return predict

    candidates = [(transposed, "the expected grid transposed: rows and columns swapped (a `.T`, or two "
                               "indices the other way round)")]
    for axis, unit, units in ((-1, "entry", "entries"), (-2, "row", "rows")):
        candidates += [(shifted(axis, 1), f"the expected ones moved one {unit} on: an index, a count or a "
                                          f"slice one {unit} too early"),
                       (shifted(axis, -1), f"the expected ones moved one {unit} back: an index, a count or a "
                                           f"slice one {unit} too late (counted from 1?)"),
                       (reversed_(axis), f"the expected ones in reverse order along the {units}")]
    for predict, words in candidates:
        wrong = _fits(numeric, predict, close)
        if wrong:
            return f"Your numbers are {words}{_example(wrong)}."
    return None


POWERS = [
    (lambda e: 1.0 / e, "one over the expected ones: a division turned upside down, or a minus sign "
                        "missing from an exponent"),
    (lambda e: e ** 2, "the squares of the expected ones: a square root is missing"),
    (np.sqrt, "the square roots of the expected ones: a square root one too many, or a square missing"),
    (np.log, "the logs of the expected ones: a log one too many, or an `np.exp` missing"),
    (np.exp, "e to the power of the expected ones: an `np.exp` one too many"),
    (lambda e: e ** (1 / math.log(2)), "the expected ones to the power 1 / ln 2 = 1.4427: a log in base 2 "
                                       "(`np.log2`) where the natural log was wanted"),
    (lambda e: e ** (1 / math.log(10)), "the expected ones to the power 1 / ln 10 = 0.434294: a log in base 10 "
                                        "(`np.log10`) where the natural log was wanted"),
    (lambda e: e ** math.log(2), "the expected ones to the power ln 2: the natural log where a log in base 2 "
                                 "was wanted"),
]


def _powers(ex, probes, numeric, close) -> str | None:
    for change, words in POWERS:
        wrong = _fits(numeric, lambda p, got, exp, change=change:
                      change(exp.astype(float)) if exp.dtype.kind == "f" else None, close)
        if wrong:
            return f"Your numbers are {words}{_example(wrong)}."
    return None


def _constant(ex, probes, numeric, close) -> str | None:
    wrong_ones = [(p, g, e) for p, g, e in numeric if g.shape == e.shape and not close(g, e, p.case)]
    if not wrong_ones:
        return None
    _p, got, exp = wrong_ones[0]
    got, exp = got.astype(float), exp.astype(float)
    norm = float(np.sum(exp * exp))
    scale = float(np.sum(got * exp) / norm) if norm else 0.0
    if np.isfinite(scale) and scale not in (0.0, 1.0, -1.0):
        wrong = _fits(numeric, lambda p, got, exp: exp * scale, close)
        if wrong:
            return (f"Every number of yours is {exact(round(scale, 6))} times the expected one"
                    f"{_example(wrong)}: a constant factor is wrong, missing or one too many.")
    offset = float(np.mean(got - exp))
    if np.isfinite(offset) and offset:
        wrong = _fits(numeric, lambda p, got, exp: exp + offset, close)
        if wrong:
            return (f"Every number of yours is the expected one {'plus' if offset > 0 else 'minus'} "
                    f"{exact(abs(round(offset, 6)))}{_example(wrong)}: a constant is added that "
                    "should not be, or one is missing.")
    return None


def _monomials(names: list[str], degree: int):
    """Products of at most ``degree`` of the names: ("d",), ("d", "d_ff"), ..."""
    for k in range(1, degree + 1):
        yield from itertools.combinations_with_replacement(range(len(names)), k)


def _terms(ex, probes, numeric, close) -> str | None:
    """A count off by a product of the sizes (a term missing, one too many, doubled)."""
    cases = [(p, g, e) for p, g, e in numeric if g.shape == e.shape and e.dtype.kind in "iuf"
             and np.all(np.isfinite(e)) and np.allclose(e, np.round(e))]
    if len(cases) != len(numeric) or not cases:
        return None
    sized = [i for i, a in enumerate(cases[0][0].case.args)
             if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))]
    if not sized or not all(len(p.case.args) == len(cases[0][0].case.args) for p, _g, _e in cases):
        return None
    names = [_name(ex, i) for i in sized]
    values = np.array([[float(p.case.args[i]) for i in sized] for p, _g, _e in cases])     # (cases, sizes)
    gaps = np.array([np.ravel(g.astype(float) - e.astype(float)) for _p, g, e in cases])     # (cases, outputs)
    terms = [(m, np.prod(values[:, list(m)], axis=1)) for m in _monomials(names, 3)]
    coefficients = [1, -1, 2, -2, 3, -3, 4, -4]
    for out in range(gaps.shape[1]):
        gap = gaps[:, out]
        wrong = gap != 0
        if wrong.sum() < 2:
            continue
        found = None
        for (m, v), c in itertools.product(terms, coefficients):
            if np.array_equal(gap[wrong], c * v[wrong]):
                found = [(c, m)]
                break
        if found is None and wrong.sum() >= 3:
            found = _two_terms(gap[wrong], [(m, v[wrong]) for m, v in terms], coefficients)
        if found:
            said = " and ".join(_term_words(c, m, names) for c, m in found)
            which = "" if gaps.shape[1] == 1 else f"Your number at entry {out}: "
            where = "" if wrong.all() else f" on the {int(wrong.sum())} tests it gets wrong"
            seen = next(((g, e) for p, g, e in cases if p.case.visible), None)
            quoted = _quote(*seen) if seen is not None else ""
            return (f"{which or 'Your count: '}{said}{where}{quoted}: a part counted that should not "
                    "be, one left out, or one counted with the wrong number of matrices.")
    return None


def _two_terms(gap, terms, coefficients) -> list | None:
    """The first pair of terms (in the order of itertools.combinations, then of the coefficient
    pairs) with c1 * t1 + c2 * t2 equal to ``gap``, as [(c1, m1), (c2, m2)]; None if none is.
    Each c2 * t2 is looked up by its numbers instead of trying every pair: about 700 products
    instead of 200,000 comparisons for a count of six sizes."""
    scaled: dict[tuple, list] = {}
    for j, (_m, v) in enumerate(terms):
        for b, c in enumerate(coefficients):
            scaled.setdefault(tuple((c * v).tolist()), []).append((j, b))
    candidates = sorted((i, j, a, b) for i, (_m, v) in enumerate(terms) for a, c in enumerate(coefficients)
                        for j, b in scaled.get(tuple((gap - c * v).tolist()), ()) if j > i)
    for i, j, a, b in candidates:           # confirmed as the sum itself, as the pair search did
        c1, c2 = coefficients[a], coefficients[b]
        if np.array_equal(gap, c1 * terms[i][1] + c2 * terms[j][1]):
            return [(c1, terms[i][0]), (c2, terms[j][0])]
    return None


def _term_words(c: int, m: tuple, names: list[str]) -> str:
    product = " * ".join(names[i] for i in m)
    times = {1: "", 2: "twice ", 3: "three times ", 4: "four times "}[abs(c)]
    return f"{times}`{product}` {'too many' if c > 0 else 'too few'}"


def _rounded(ex, probes, numeric, close) -> str | None:
    for digits in range(0, 7):
        wrong = _fits(numeric, lambda p, got, exp: np.round(exp.astype(float), digits)
                      if exp.dtype.kind == "f" else None, close)
        if wrong:
            return (f"Your numbers are the expected ones rounded to {plural(digits, 'decimal')}"
                    f"{_example(wrong)}: keep every digit (round only what you print).")
    return None


def _float32(ex, probes, numeric, close) -> str | None:
    wrong = [(p, g, e) for p, g, e in numeric if not close(g, e, p.case)]
    if not wrong or any(p.got is RAISED for p in probes):
        return None

    def in_float32(case):
        return any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in case.args)

    if not all(in_float32(p.case) for p, _g, _e in wrong) or all(in_float32(p.case) for p, _g, _e in numeric):
        return None
    _p, got, exp = wrong[0]
    with np.errstate(all="ignore"):
        off = np.abs(got.astype(float) - exp.astype(float)) / np.maximum(np.abs(exp.astype(float)), 1e-30)
    worst = float(np.nanmax(off)) if np.any(np.isfinite(off)) else float("inf")
    size = percent(worst) if worst < 10 else "far more than the numbers themselves"
    return (f"Your function is right on every float64 test and wrong only in float32, off by up to "
            f"{size} there: float32 keeps about 7 digits, and your formula loses them, for instance "
            "by subtracting two large numbers that are nearly equal (cancellation). Compute it "
            "another way, one that subtracts before it squares.")


CAUSES = [_example_only, _shape, _number_type, _terms, _reduction, _other_axis, _argument_changed, _default,
          _sign, _size_factor, _example_size, _rearranged, _powers, _constant, _row_factor, _rounded, _float32]


def explain(ex: Exercise, probes: list[Probe], close: Close) -> str | None:
    """The first slip that fits what the code did on every probe, in words with numbers; None
    when none does."""
    numeric = _numeric(probes)
    for cause in CAUSES:
        words = _quiet(cause, ex, probes, numeric, close)
        if words:
            return words
    return None


# ---------------------------------------------------------------- what the code got right

def settled(probes: list[Probe]) -> tuple[str, ...]:
    """What the code was seen to do right on every fixed case: "shape" when every result had the
    expected shape (the fixed cases include batches and inputs whose axes all differ, so a
    reduction along the wrong axis, or without keepdims, shows in the shape)."""
    numeric = _numeric(probes)
    if numeric and len(numeric) == len(probes) and all(g.shape == e.shape for _p, g, e in numeric):
        return ("shape",)
    return ()


# ---------------------------------------------------------------- causes the code itself shows

def loops_in(func) -> list[tuple[int, str]]:
    """The Python loops of the cell that defined ``func`` (``for``, ``while``, comprehensions):
    (line number, the line) each, in order; [] when there is none or the source cannot be read."""
    import ast
    import linecache

    code = getattr(func, "__code__", None)
    if code is None:
        return []
    lines = linecache.getlines(code.co_filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return []
    kinds = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
    found = sorted({node.lineno if not isinstance(node, ast.comprehension) else node.target.lineno
                    for node in ast.walk(tree) if isinstance(node, kinds)})
    return [(n, lines[n - 1].strip()) for n in found if 0 < n <= len(lines)]


# NumPy's reductions whose second positional argument is an axis, and what the learner who
# passes two arrays to one of them meant.
PAIRWISE = {"max": "maximum", "amax": "maximum", "min": "minimum", "amin": "minimum"}


def reduction_for_pairwise(line: str) -> str | None:
    """The hint for ``np.max(a, b)`` (or min) with two arrays, on the line ``line``: NumPy reads
    ``b`` as an axis; the element-by-element larger of two arrays is ``np.maximum``."""
    import ast

    try:
        tree = ast.parse(line.strip().removeprefix("return ").strip() or "0")
    except SyntaxError:
        try:
            tree = ast.parse(line.split("=", 1)[-1].strip())
        except SyntaxError:
            return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in PAIRWISE and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("np", "numpy") and len(node.args) >= 2
                and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, int)
                         and not isinstance(node.args[0], ast.Constant))):
            name, pairwise = node.func.attr, PAIRWISE[node.func.attr]
            return (f"`np.{name}` takes one array and gives its {'largest' if 'max' in name else 'smallest'} "
                    f"number (its second argument is an axis). The {'larger' if 'max' in name else 'smaller'} "
                    f"of two arrays, number by number, is `np.{pairwise}`.")
    return None


MOVE_COST, CASE_COST = 2, 1       # Python's own costs for its "Did you mean" (a case flip is cheaper)


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with Python's costs: an insertion, a deletion or another letter
    costs MOVE_COST, the same letter in the other case CASE_COST."""
    row = [j * MOVE_COST for j in range(len(b) + 1)]
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i * MOVE_COST
        for j, y in enumerate(b, 1):
            change = 0 if x == y else CASE_COST if x.lower() == y.lower() else MOVE_COST
            previous, row[j] = row[j], min(row[j] + MOVE_COST, row[j - 1] + MOVE_COST, previous + change)
    return row[-1]


def close_name(missing: str, names) -> str | None:
    """The name of ``names`` closest to ``missing``, if close enough, as Python 3.10 and later
    choose it for "Did you mean" (the same costs and the same limit, which grows with the two
    names' lengths); the same answer on every Python the course runs on."""
    best, best_distance = None, None
    for name in sorted(set(names)):
        if name == missing or name.startswith("__"):
            continue
        limit = (len(missing) + len(name) + 3) * MOVE_COST // 6
        distance = _edit_distance(missing, name)
        if distance <= limit and (best_distance is None or distance < best_distance):
            best, best_distance = name, distance
    return best


def misspelt_name(exc: BaseException) -> str | None:
    """For a ``NameError``: the name that is not defined and the close name of those the code
    could use where it was raised (the function's variables, its namespace, the builtins)."""
    import builtins

    if not isinstance(exc, NameError) or isinstance(exc, UnboundLocalError):
        return None
    missing = getattr(exc, "name", None)
    if not missing:
        return None
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    names = set(dir(builtins))
    if tb is not None:
        frame = tb.tb_frame
        names |= set(frame.f_locals) | set(frame.f_globals) | set(frame.f_code.co_varnames)
    close = close_name(missing, names)
    if close:
        return (f"`{missing}` is not defined: did you mean `{close}`? A misspelt name is read as "
                "another name, one that was never given a value.")
    return (f"`{missing}` is not defined where your function looks for it: spell it as where it "
            "was given its value, or run the cell that defines it first.")
