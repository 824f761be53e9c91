"""The wording rules every sentence the course computes follows (a lab's verdict, a check's
feedback), and the numbers a sentence states, read back out of it.

- **One plural rule**, engine/presentation/numbers.py's ``plural``: "1 block", "2 blocks", never
  "1 blocks", "all 1 numbers" or "2 number" (:func:`disagreements`).
- **Signed distances**: the score of rotary positions depends on the sign of m - n, so a distance
  is never written as a bare size, "3 apart" (:func:`unsigned_distances`).
- **"entry k" for an array's k-th number**: "position k" is kept for a token's position
  (:func:`positions_named`).

:func:`stated_numbers` reads every number a sentence states, with how it was written (decimals,
a power of ten, a percentage, millions), and :func:`matches` says whether a computed value is
one that would be written so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# ---------------------------------------------------------------- plurals

# Number-noun disagreement: "1 numbers", "all 1 tests", "2 number", "(4,) has 1 axes".
NOUNS = ("number", "test", "case", "row", "column", "axis", "axe", "item", "step", "position", "token",
         "word", "block", "layer", "expert", "key", "grid", "head", "prediction", "other", "fixed case",
         "random one", "second", "call", "unit", "addition", "text", "parameter", "point", "pair", "slice",
         "byte", "entry", "entrie", "time", "decimal")
ONE_MANY = re.compile(r"(?<![\d.,])(?:all )?1 (?:" + "|".join(NOUNS) + r")s\b")
MANY_ONE = re.compile(r"(?<![\d.,\w])(?:0|[2-9]|\d{2,}) (?:"
                      + "|".join(n for n in NOUNS if n not in ("axe", "other", "entrie"))
                      + r")\b(?!s)(?! of\b)(?!-)")
ALL_ONE = re.compile(r"\ball 1 ")


def disagreements(said: str) -> list[str]:
    """The places where a number and its noun disagree, as ``plural`` would not write them."""
    return [m.group(0) for pattern in (ONE_MANY, MANY_ONE, ALL_ONE) for m in pattern.finditer(said)]


# ---------------------------------------------------------------- signs and entries

UNSIGNED = re.compile(r"\b\d+(?:\.\d+)? apart\b")


def unsigned_distances(said: str) -> list[str]:
    """Distances written without their sign ("3 apart")."""
    return UNSIGNED.findall(said)


POSITION = re.compile(r"\bpositions? (\d+)\b(?![.\d]*%)|\bat (\d+) positions\b", re.IGNORECASE)


def positions_named(said: str) -> list[str]:
    """Every "position k" (and "at 3 positions") of ``said``: right for a token's position, wrong
    for the k-th number of an array, which is its entry k."""
    return [m.group(0) for m in POSITION.finditer(said)]


# ---------------------------------------------------------------- the numbers of a sentence

MINUS = "\u2212"
NUMBER = re.compile(r"""
    (?P<bound>\bunder\s|\bover\s|<\s?|>\s?)?
    (?<![\w.])
    (?P<sign>[\u2212-])?
    (?P<whole>\d{1,3}(?:,\d{3})+|\d+)
    (?P<fraction>\.\d+)?
    (?:e(?P<power>[+\u2212-]?\d+))?
    (?![\w.]\d)(?!\w)
    (?P<unit>%|\s[MG]iB\b|\s[MB]\b)?
    """, re.VERBOSE)
QUOTED = re.compile(r"\u201c[^\u201d]*\u201d")           # words quoted from a text: not numbers
SCALE = {"M": 1e6, "B": 1e9}


@dataclass(frozen=True)
class Stated:
    """One number of a sentence: its value as written, and the tolerance its writing allows."""

    text: str
    value: float
    tolerance: float
    percent: bool = False
    bound: str = ""                      # "under" or "over": the number is a bound, not a value

    def allows(self, x: float) -> bool:
        """True when ``x`` would be written as this number (a share for a percentage)."""
        if not math.isfinite(x):
            return False
        if self.bound == "under":                # a share: "under 1%", "<0.1%"
            return 0 < x * 100 < self.value
        if self.bound == "over":
            return self.value < x * 100 <= 100
        candidates = (x * 100, x) if self.percent else (x,)
        return any(abs(c - self.value) <= self.tolerance * (1 + 1e-9) + 1e-12 for c in candidates)


def stated_numbers(said: str) -> list[Stated]:
    """Every number ``said`` states, in order, with words in quotation marks left out."""
    text = QUOTED.sub(" ", said).replace("\u00b2", " ").replace("\u00b3", " ")
    found = []
    for m in NUMBER.finditer(text):
        whole = m.group("whole").replace(",", "")
        fraction = m.group("fraction") or ""
        decimals = len(fraction) - 1 if fraction else 0
        value = float(whole + fraction)
        tolerance = 0.5 * 10.0 ** -decimals
        if m.group("power"):
            power = int(m.group("power").replace(MINUS, "-"))
            value *= 10.0 ** power
            tolerance *= 10.0 ** power
        if m.group("sign"):
            value = -value
        unit = (m.group("unit") or "").strip()
        if unit in SCALE:
            value, tolerance = value * SCALE[unit], tolerance * SCALE[unit]
        bound = (m.group("bound") or "").strip()
        bound = {"<": "under", ">": "over"}.get(bound, bound)
        written = m.group(0).strip()
        if unit != "%" and bound:               # "over 30 layers": a number, not a bound
            written, bound = written[m.start("whole") - m.start() - (1 if m.group("sign") else 0):].strip(), ""
        found.append(Stated(written, value, tolerance, unit == "%", bound))
    return found
