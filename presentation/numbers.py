"""Numbers and lists as a learner reads them, in plain text. Every message of the course (a
check's feedback, a lab's verdict, a report line) formats its numbers with these functions, so
the same number always looks the same.

    number(2.0) -> "2"          number(-0.004) -> "0"         number(0.1234, 3) -> "0.123"
    amount(0.0007) -> "0.0007"  amount(9.523) -> "9.52"       amount(7.3e8) -> "7.3e+08"
    count(7079424) -> "7,079,424"                            size(85_000_000) -> "85.0 M"
    exact(2.0) -> "2"           exact(1 / 3) -> "0.333333"     exact(4718592) -> "4,718,592"
    array([[1, 2.5], [1 / 3, 0]]) -> "[[1.    , 2.5   ],\n [0.3333, 0.    ]]"
    percent(0.003) -> "under 1%"                             word_list(["a", "b", "c"]) -> "a, b and c"
    plural(1, "block") -> "1 block"                          plural(3, "block") -> "3 blocks"
"""

from __future__ import annotations

import math


def _finite_or_word(value: float) -> str | None:
    if math.isnan(value):
        return "not a number"
    if math.isinf(value):
        return "infinite" if value > 0 else "minus infinite"
    return None


def number(value, digits: int = 2) -> str:
    """A short number: at most ``digits`` decimals, trailing zeros and negative zero dropped."""
    value = float(value)
    word = _finite_or_word(value)
    if word:
        return word
    text = f"{round(value, digits):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fixed(value, digits: int = 2, signed: bool = False) -> str:
    """A number with exactly ``digits`` decimals, for columns that line up: 1.50, -0.14, and 0.00
    (never -0.00, even for a tiny negative number); with ``signed``, +1.50 and +0.00."""
    return f"{round(float(value), digits) + 0.0:{'+' if signed else ''}.{digits}f}"


def vector(values, digits: int = 2, signed: bool = False) -> str:
    """A row of numbers in brackets: [2, -0.14, 1.5], or with signs: [+2.00, -0.14, +1.50]."""
    if signed:
        return "[" + ", ".join(fixed(v, digits, signed=True) for v in _flat(values)) + "]"
    return "[" + ", ".join(number(v, digits) for v in _flat(values)) + "]"


def _flat(values):
    try:
        import numpy as np
        return np.ravel(values).tolist()
    except ImportError:                      # plain Python (the progress report needs no numpy)
        return list(values)


def amount(value) -> str:
    """A size or a change in plain words, with two significant digits below 0.1, two decimals up
    to 1,000, whole numbers up to 100,000, and a power of ten beyond: 0, 0.0007, 0.14, 9.52,
    31,062, 7.3e+08."""
    value = float(value)
    word = _finite_or_word(value)
    if word:
        return word
    if value == 0:
        return "0"
    if abs(value) < 0.1 or abs(value) >= 1e5:
        return f"{value:.2g}"
    return f"{value:.2f}" if abs(value) < 1000 else f"{value:,.0f}"


def exact(value) -> str:
    """A number in full, as a check quotes it: whole numbers with thousands separators
    (4,718,592; 2.0 -> 2), others to 6 significant digits (0.333333, 1e-05, nan)."""
    if hasattr(value, "item"):               # a NumPy scalar or a 0-d array
        value = value.item()
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def array(values) -> str:
    """An array as NumPy prints it, to at most 4 decimals, commas between numbers (a single
    number as :func:`exact`)."""
    import numpy as np

    arr = np.asarray(values)
    if arr.ndim == 0:
        return exact(arr)
    with np.printoptions(precision=4, suppress=True, floatmode="maxprec"):
        return np.array2string(arr, separator=", ")


def count(n) -> str:
    """A whole number with thousands separators: 7,079,424."""
    return f"{int(n):,}"


def size(n) -> str:
    """A parameter count in words: 671.0 B, 85.0 M, and in full below a million (38,597)."""
    n = float(n)
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.1f} B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.1f} M"
    return f"{int(round(n)):,}"


def percent(share) -> str:
    """A share as a whole percentage, "under 1%" for a small share that is not zero."""
    share = float(share)
    return "under 1%" if 0 < share < 0.005 else f"{share:.0%}"


def word_list(items) -> str:
    """["a"] -> "a"; ["a", "b", "c"] -> "a, b and c"."""
    items = [str(item) for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def plural(n, word: str, many: str | None = None) -> str:
    """"1 block", "2 blocks", "0 blocks"; ``many`` for irregular plurals."""
    return f"{count(n) if float(n).is_integer() else number(n)} {word if n == 1 else (many or word + 's')}"
