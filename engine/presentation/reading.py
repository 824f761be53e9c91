"""Numbers as a learner types them, read back: the inverse of :mod:`engine.presentation.numbers`.

A number box or an answer box takes a number in the forms the course writes it and the usual
ones besides: "0.25", "1e-5", "1,024" and "2 359 296" (thousands separated, as ``count`` and
``fixed(..., grouped=True)`` write them), "25%" (0.25), "1/4", "−3" (a typographic minus).
A text that is none of these is refused with a sentence that says why.
"""

from __future__ import annotations

import math
import re

_GROUPED = re.compile(r"[+-]?\d{1,3}([, _]\d{3})+(\.\d*)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_FRACTION = re.compile(r"[+-]?[\d.]+\s*/\s*[\d.]+")
_WITH_UNIT = re.compile(r"[+-]?[\d.,]*\d\s*(?![eE]$)[^\W\d]+")     # "512 KiB", "3tokens"


def read_number(text: str) -> float:
    """Read a number typed as "0.25", "1e-5", "1,024", "2 359 296", "25%" (-> 0.25) or "1/4".

    Raises ``ValueError`` with a plain explanation when the text is not a number.
    """
    t = str(text).strip().replace("\u2212", "-")
    if not t:
        raise ValueError("Type a number.")
    percent = t.endswith("%")
    t = t.rstrip("%").strip()
    if _GROUPED.fullmatch(t):
        t = re.sub(r"[, _]", "", t)
    elif _DECIMAL_COMMA.fullmatch(t):
        raise ValueError(f"{text.strip()!r} is not a number I can read: write decimals with a point, "
                         f"as in {t.replace(',', '.')}.")
    try:
        if _FRACTION.fullmatch(t):
            a, b = t.split("/")
            value = float(a) / float(b)
        else:
            value = float(t)
    except (ValueError, ZeroDivisionError):
        if _WITH_UNIT.fullmatch(t):
            raise ValueError(f"{text.strip()!r} is not a number I can read: type the number alone, "
                             "without a unit, in the unit the question asks for.") from None
        raise ValueError(f"{text!r} is not a number I can read.") from None
    if not math.isfinite(value):
        raise ValueError("Type a finite number.")
    return value / 100 if percent else value


__all__ = ["read_number"]
