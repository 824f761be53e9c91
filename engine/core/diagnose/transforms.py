"""Slips that change the expected result as a whole: its sign flipped, a size of the input as a
factor (a sum where the mean was wanted, n - 1 for n, a square root), rearranged (transposed,
rolled round or shifted by one entry or row, reversed), a function of it (1 / expected, its square, root, log, a
log in another base), a constant factor or term, rounded, precision lost in float32."""

from __future__ import annotations

import math

import numpy as np

from engine.presentation.numbers import exact, percent, plural, word_list

from .slips import RAISED, SKIP, Slip, example_quote, input_sizes


def sign(ex, probes, numeric, close):
    yield Slip("Your numbers have the expected size but the opposite sign{example}: a minus sign is "
               "missing or one too many, or a subtraction runs the other way.", lambda p: -p.wanted)


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


def size_factor(ex, probes, numeric, close):
    """The expected numbers times (or over) a size of the input, the same size on every case."""
    if not numeric:
        return
    for code in input_sizes(numeric[0].case, ex):
        for (power, sample), meaning in FACTORS:
            def predict(p, code=code, power=power, sample=sample):
                n = input_sizes(p.case, ex).get(code)
                if n is None or n <= 0 or (sample and n <= 1):
                    return None
                return p.wanted * (n ** power) * ((n / (n - 1)) ** sample if sample else 1.0)

            def words(wrong, code=code, meaning=meaning):
                values = sorted({int(input_sizes(p.case, ex)[code]) for p in wrong})
                return (f"Your numbers are the expected ones scaled by {code} (it is "
                        f"{word_list(str(v) for v in values)} on the tests your code gets wrong)"
                        f"{example_quote(wrong)}: {meaning}.")
            yield Slip(words, predict)


def rearranged(ex, probes, numeric, close):
    """The expected grid transposed, rolled round or shifted by one along an axis, or reversed."""
    def transposed(p):
        exp = p.wanted
        return np.swapaxes(exp, -1, -2) if exp.ndim >= 2 and exp.shape[-1] == exp.shape[-2] else None

    def shifted(axis, step):
        def predict(p):
            got, exp = p.yours, p.wanted
            if exp.ndim < -axis or got.shape != exp.shape:
                return None
            if exp.shape[axis] < 3:
                return SKIP                   # a shift of two entries rests on a single number
            out = np.roll(exp, step, axis=axis).astype(float)
            edge = [slice(None)] * exp.ndim
            edge[axis] = slice(0, 1) if step > 0 else slice(-1, None)
            out[tuple(edge)] = got[tuple(edge)]        # what rolled round is not judged
            return out
        return predict

    def reversed_(axis):
        def predict(p):
            exp = p.wanted
            if exp.ndim < -axis:
                return None
            return np.flip(exp, axis=axis) if exp.shape[axis] > 1 else SKIP
        return predict

    yield Slip("Your numbers are the expected grid transposed: rows and columns swapped (a `.T`, or two "
               "indices the other way round){example}.", transposed)
    def rolled(axis, step):
        def predict(p):
            exp = p.wanted
            if exp.ndim < -axis or p.yours.shape != exp.shape:
                return None
            return np.roll(exp, step, axis=axis) if exp.shape[axis] > 1 else SKIP
        return predict

    for axis, unit, units in ((-1, "entry", "entries"), (-2, "row", "rows")):
        yield Slip(f"Your {units} are the expected ones with the last {unit} moved to the front: the "
                   f"pieces joined (stacked or concatenated) in the wrong order, or an index one too "
                   f"small that wrapped round to the end{{example}}.", rolled(axis, 1), least=2)
        yield Slip(f"Your {units} are the expected ones with the first {unit} moved to the end: the "
                   f"pieces joined (stacked or concatenated) in the wrong order, or an index one too "
                   f"large that wrapped round to the start{{example}}.", rolled(axis, -1), least=2)
        yield Slip(f"Your numbers are the expected ones moved one {unit} on: an index, a count or a "
                   f"slice one {unit} too early{{example}}.", shifted(axis, 1))
        yield Slip(f"Your numbers are the expected ones moved one {unit} back: an index, a count or a "
                   f"slice one {unit} too late (counted from 1?){{example}}.", shifted(axis, -1))
        yield Slip(f"Your numbers are the expected ones in reverse order along the {units}{{example}}.",
                   reversed_(axis))


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


def powers(ex, probes, numeric, close):
    for change, words in POWERS:
        yield Slip(f"Your numbers are {words}{{example}}.", lambda p, change=change:
                   change(p.wanted.astype(float)) if p.wanted.dtype.kind == "f" else None)


def constant(ex, probes, numeric, close):
    """The expected numbers times a constant, or plus one, on every case."""
    wrong_ones = [p for p in numeric if p.yours.shape == p.wanted.shape and not p.right]
    if not wrong_ones:
        return
    got, exp = wrong_ones[0].yours.astype(float), wrong_ones[0].wanted.astype(float)
    norm = float(np.sum(exp * exp))
    scale = float(np.sum(got * exp) / norm) if norm else 0.0
    if np.isfinite(scale) and scale not in (0.0, 1.0, -1.0):
        yield Slip(f"Every number of yours is {exact(round(scale, 6))} times the expected one{{example}}: "
                   "a constant factor is wrong, missing or one too many.", lambda p: p.wanted * scale)
    offset = float(np.mean(got - exp))
    if np.isfinite(offset) and offset:
        yield Slip(f"Every number of yours is the expected one {'plus' if offset > 0 else 'minus'} "
                   f"{exact(abs(round(offset, 6)))}{{example}}: a constant is added that should not be, "
                   "or one is missing.", lambda p: p.wanted + offset)


def rounded(ex, probes, numeric, close):
    for digits in range(0, 7):
        yield Slip(f"Your numbers are the expected ones rounded to {plural(digits, 'decimal')}{{example}}: "
                   "keep every digit (round only what you print).",
                   lambda p, digits=digits: np.round(p.wanted.astype(float), digits)
                   if p.wanted.dtype.kind == "f" else None)


def float32(ex, probes, numeric, close):
    """Right on every float64 case, wrong on float32 ones only: precision lost."""
    wrong = [p for p in numeric if not p.right]
    if not wrong or any(p.got is RAISED for p in probes):
        return

    def in_float32(case):
        return any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in case.args)

    if not all(in_float32(p.case) for p in wrong) or all(in_float32(p.case) for p in numeric):
        return
    got, exp = wrong[0].yours.astype(float), wrong[0].wanted.astype(float)
    with np.errstate(all="ignore"):
        off = np.abs(got - exp) / np.maximum(np.abs(exp), 1e-30)
    worst = float(np.nanmax(off)) if np.any(np.isfinite(off)) else float("inf")
    size = percent(worst) if worst < 10 else "far more than the numbers themselves"
    yield Slip(f"Your function is right on every float64 test and wrong only in float32, off by up to "
               f"{size} there: float32 keeps about 7 digits, and your formula loses them, for instance "
               "by subtracting two large numbers that are nearly equal (cancellation). Compute it "
               "another way, one that subtracts before it squares.")
