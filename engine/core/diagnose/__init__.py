"""Why a wrong result is wrong, told by what the learner's code did: its results on the fixed
cases compared with the reference's under the changes that learners' slips produce.

The checker (:mod:`engine.core.checker`) first looks for a known mistake of the exercise
(``Exercise.mistakes``). When none fits, :func:`explain` asks each family of slips, in the order
of :data:`ORDER`, for its candidates (:class:`~engine.core.diagnose.slips.Slip`: a sentence and
what the code would give if it had made that slip), and names the first that fits every fixed
case the code gave numbers for. A slip fits when the code's result equals its prediction
(within the exercise's tolerance) on every case where it applies, the code is right where it
does not, and it differs from the reference's somewhere. The families, one module each:

    arguments     right on the example only (its sizes written in); an argument changed as slips
                  change it: left out (all ones), negated, without its signs, transposed, swapped
                  with another, a whole number off by one, a list reversed or one item short,
                  another of the values the tests pass; a default (eps) set otherwise
    shape         an axis of length 1 dropped or in the wrong place (``keepdims``), rows and
                  columns swapped, one row or number too many or too few, a last reduction
                  missing, one number where one per row was wanted and back; whole numbers, or
                  float32, where float64 was wanted
    counts        a count with a product of the sizes too many or too few
    statistics    each row's median, largest number, sum of squares... where another of its
                  statistics was wanted; another axis, or the whole array; each row times a
                  number of its own (a division by each row's total missing)
    transforms    every sign flipped; a size of the input as a factor (a sum where the mean was
                  wanted, n - 1 for n, a square root); the grid transposed, rolled, shifted, reversed;
                  1 / expected, its square, root, log, a log in another base; a constant factor
                  or term; rounded; right in float64 and wrong in float32 only
    names         causes the code itself shows: loops, ``np.max`` of two arrays, a misspelt name,
                  Python's own ``sum`` (or max, min) of an array
    errors        what an error says of the code: an index one past the end, values used as
                  positions, a matrix product of mismatched inner sizes

Beside the result, :mod:`~engine.core.diagnose.steps` reads the learner's own steps (the names the
cell assigns) and names the first that differs from the solution's, with the change of its line
that gives the learner's values (:mod:`~engine.core.diagnose.expressions`: "`+` where `*` was
wanted"), each changed line evaluated within bounds (:mod:`~engine.core.diagnose.bounded`).

Each explanation is a sentence with the numbers it rests on (those of the example above, the
only case whose numbers feedback may quote, and the sizes of the hidden ones). When no slip
fits, :func:`engine.core.diagnose.observed.describe` says what is observably wrong instead.
:func:`settled` says what the code was seen to do right, so that the hint ladder does not offer
a generic hint about it (:func:`engine.core.hints.contradicts`): a result of the right shape on
every fixed case, batches and non-square inputs included, leaves no doubt about the axis.
"""

from __future__ import annotations

import warnings
import numpy as np

from . import arguments, counts, shape, statistics, transforms
from .errors import error_cause
from .names import builtin_reduction, close_name, loops_in, misspelt_name, reduction_for_pairwise
from .observed import describe
from .steps import first_wrong as first_wrong_step
from .steps import part_names, step_names, wrong_line
from .slips import RAISED, SKIP, Close, Probe, Slip, quiet


# The order in which the causes are tried: the first that fits is named.
ORDER = [arguments.example_only, shape.shape, shape.number_type, counts.terms, statistics.reduction,
         statistics.other_axis, arguments.argument_changed, arguments.default, transforms.sign,
         transforms.size_factor, arguments.example_size, transforms.rearranged, transforms.powers,
         transforms.constant, statistics.row_factor, transforms.rounded, transforms.float32]


def explain(ex, probes: list[Probe], close: Close) -> str | None:
    """The first slip that fits what the code did on every probe, in words with numbers; None
    when none does."""
    numeric = [p for p in probes if p.numeric]
    for p in numeric:
        p.right = close(p.yours, p.wanted, p.case)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for family in ORDER:
            for slip in _candidates(family, ex, probes, numeric, close):
                words = quiet(_named, slip, numeric, close)
                if words:
                    return words
    return None


def _candidates(family, *seen):
    """The slips a family offers; a family that raises offers no more."""
    try:
        yield from family(*seen)
    except Exception:  # noqa: BLE001 - a family that does not apply to these results
        return


def _named(slip: Slip, numeric: list[Probe], close: Close) -> str | None:
    """The slip's sentence when it fits every probe (see the module's docstring), else None."""
    if slip.predict is None:
        return slip.said([])
    wrong = fits(slip, numeric, close)
    return slip.said(wrong) if wrong is not None else None


def fits(slip: Slip, numeric: list[Probe], close: Close) -> list[Probe] | None:
    """The wrong probes ``slip`` explains; None unless it fits every probe and explains at least
    ``slip.least`` wrong ones."""
    wrong = []
    for p in numeric:
        guess = quiet(slip.predict, p)
        if guess is SKIP:
            continue
        if guess is not None and not p.right and _overflowed(p.yours, guess):
            continue             # the code's numbers overflowed where the slip's did not: not judged
        if guess is None:
            if not p.right:
                return None
            continue
        if not close(p.yours, guess, p.case):
            return None
        if not p.right:
            wrong.append(p)
    return wrong if len(wrong) >= slip.least else None


def _overflowed(got: np.ndarray, guess) -> bool:
    """True when ``got`` holds NaN or infinity where ``guess`` is finite (the code's formula ran
    out of range on this case: it says nothing about the slip)."""
    guess = np.asarray(guess)
    if got.shape != guess.shape or got.dtype.kind != "f":
        return False
    with np.errstate(all="ignore"):
        return bool(np.any(~np.isfinite(got) & np.isfinite(guess)))


def settled(probes: list[Probe]) -> tuple[str, ...]:
    """What the code was seen to do right on every fixed case: "shape" when every result had the
    expected shape (the fixed cases include batches and inputs whose axes all differ, so a
    reduction along the wrong axis, or without keepdims, shows in the shape)."""
    numeric = [p for p in probes if p.numeric]
    if numeric and len(numeric) == len(probes) and all(p.yours.shape == p.wanted.shape for p in numeric):
        return ("shape",)
    return ()


__all__ = ["ORDER", "RAISED", "Probe", "Slip", "builtin_reduction", "close_name", "describe", "error_cause",
           "explain", "first_wrong_step", "fits", "loops_in", "misspelt_name", "part_names",
           "reduction_for_pairwise", "settled", "step_names", "wrong_line"]
