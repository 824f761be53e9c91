"""What every family of slips is written with: the :class:`Slip` itself, the markers a prediction
may give, and the few words each sentence quotes (an argument's name, the example's numbers).

A family (one module of this package) looks at the probes, the learner's results beside the
reference's on the fixed cases, and yields the slips that could explain them. A slip is a sentence
and, beside it, what the code would give on a probe if it had made that slip; the one loop of
:func:`engine.core.diagnose.explain` keeps the first slip whose prediction fits every probe.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from engine.core.definition import Case
from engine.presentation.numbers import exact

RAISED = object()        # what a call that raised is recorded as
SKIP = object()          # a prediction that says nothing about a case (a shift of a single row)

Close = Callable[[Any, Any, Any], bool]     # close(a, b, case): equal within the case's tolerance


@dataclass
class Probe:
    """One fixed case: the learner's result (``RAISED`` when it raised) and the reference's, and
    both as arrays of numbers (``yours``, ``wanted``; None when one is not numbers). ``right``:
    the two agree within the case's tolerance (set by :func:`engine.core.diagnose.explain`)."""

    case: Case
    got: Any
    expected: Any
    yours: np.ndarray | None = field(init=False, repr=False)
    wanted: np.ndarray | None = field(init=False, repr=False)
    right: bool = field(init=False, default=False, repr=False)

    def __post_init__(self) -> None:
        self.yours, self.wanted = as_numbers(self.got), as_numbers(self.expected)

    @property
    def numeric(self) -> bool:
        return self.yours is not None and self.wanted is not None


@dataclass(frozen=True)
class Slip:
    """One slip a learner's code may show, as data.

    ``words`` names it: a sentence, in which ``{example}`` stands for the first number of the
    example above that the slip explains ("(on the example above: 1.5 where 0.5 was expected)"),
    or a function of the probes it explains, for a sentence that quotes their sizes.
    ``predict(probe)`` is the code's result on ``probe`` if it made this slip: None where the slip
    does not apply (the code must then be right there), :data:`SKIP` where it says nothing. A slip
    without ``predict`` was seen by its family directly (a shape, a number type): its words stand.
    ``least`` is the number of wrong probes it must explain.
    """

    words: str | Callable[[list], str]
    predict: Callable[[Any], Any] | None = None
    least: int = 1

    def said(self, wrong: list) -> str:
        """The sentence for the wrong probes this slip explains."""
        if callable(self.words):
            return self.words(wrong)
        return self.words.replace("{example}", example_quote(wrong))


def as_numbers(value) -> np.ndarray | None:
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


def quiet(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with NumPy's warnings silenced; None when it raises."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return func(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a change that does not apply to this case
        return None


def quote(got: np.ndarray, exp: np.ndarray) -> str:
    """" (on the example above: 1.5 where 0.5 was expected)" for the first differing number."""
    if got.shape != exp.shape:
        return ""
    with np.errstate(all="ignore"):
        bad = np.argwhere(~np.isclose(got.astype(float), exp.astype(float), rtol=1e-9, atol=1e-12, equal_nan=True))
    if not len(bad):
        return ""
    i = tuple(int(k) for k in bad[0])
    return f" (on the example above: {exact(got[i])} where {exact(exp[i])} was expected)"


def example_quote(wrong: list) -> str:
    """The quote of the example above, when it is among the ``wrong`` probes; else ""."""
    seen = next((p for p in wrong if p.case.visible), None)
    return quote(seen.yours, seen.wanted) if seen is not None else ""


def arg_name(ex, index: int) -> str:
    """The name of the exercise's argument ``index`` (from its contract), or "argument 2"."""
    names = list(ex.contract.args) if ex.contract else []
    return names[index] if index < len(names) else f"argument {index + 1}"


def first_array(case) -> np.ndarray | None:
    """The case's first argument when it is an array of numbers, else None."""
    x = case.args[0] if case.args else None
    return x if isinstance(x, np.ndarray) and x.dtype.kind in "iuf" else None


def reference(ex, case, *args, **kwargs):
    """The reference's result on other arguments, as an array (None for None)."""
    out = ex.reference(*args, **kwargs)
    return None if out is None else np.asarray(out)


def is_count(value) -> bool:
    """A whole number passed as a size (not a flag)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def input_sizes(case, ex) -> dict[str, float]:
    """The sizes of a case's inputs, by their code: {"`x.shape[-1]`": 4, "`x.size`": 8}."""
    found = {}
    for i, arg in enumerate(case.args):
        name = arg_name(ex, i)
        if isinstance(arg, np.ndarray):
            for axis, n in enumerate(arg.shape):
                index = axis - arg.ndim if axis >= arg.ndim - 2 else axis
                found[f"`{name}.shape[{index}]`"] = float(n)
            if arg.ndim >= 2:
                found[f"`{name}.size`"] = float(arg.size)
        elif isinstance(arg, (list, tuple)):
            found[f"`len({name})`"] = float(len(arg))
        elif is_count(arg):
            found[f"`{name}`"] = float(arg)
    return found
