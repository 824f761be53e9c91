"""Numbers and lists as a learner reads them, in plain text. Every message of the course (a
check's feedback, a lab's verdict, a report line) formats its numbers with these functions, so
the same number always looks the same.

    number(2.0) -> "2"              number(-0.004) -> "0"           number(0.1234, 3) -> "0.123"
    fixed(1.5) -> "1.50"            fixed(-0.001) -> "0.00"         fixed(2048.25, 1, grouped=True) -> "2,048.2"
    amount(0.0007) -> "0.0007"      amount(9.523) -> "9.52"         amount(7.3e8) -> "7.3e+08"
    significant(1e-5) -> "1e-05"    significant(27.51, 2) -> "28"   scientific(0.000123) -> "1.2e-04"
    count(7079424) -> "7,079,424"   size(85_000_000) -> "85.0 M"    size(85_000_000, 0) -> "85 M"
    shape((2, 1024, 4096)) -> "(2, 1024, 4096)"      shape([5]) -> "(5,)"
    byte_size(36_864) -> "36.0 KiB" byte_size(219_029_504) -> "208.9 MiB"   byte_size(512) -> "512 bytes"
    exact(2.0) -> "2"               exact(1 / 3) -> "0.333333"      exact(4718592) -> "4,718,592"
    array([[1, 2.5], [1 / 3, 0]]) -> "[[1.    , 2.5   ],\n [0.3333, 0.    ]]"
    percent(0.003) -> "under 1%"    percentage(0.667) -> "67%"      percentage(0.0312, 1, signed=True) -> "+3.1%"
    power_of_ten(-6) -> "10\u207b\u2076"    word_list(["a", "b", "c"]) -> "a, b and c"
    plural(1, "block") -> "1 block"  plural(3, "block") -> "3 blocks"
    article(18) -> "an"             article(12) -> "a"              article(800) -> "an"
    ordinal(2) -> "2nd"             ordinal(11) -> "11th"           ordinal(23) -> "23rd"
    vector([2, -0.144, 1.5]) -> "[2, -0.14, 1.5]"    vector([2, -0.144], signed=True) -> "[+2.00, -0.14]"

and the format in which a slider writes its own readout, and a value written in it:
readout(2) -> ".2f"    as_readout(100000.0, ",.0f") -> "100,000"    as_readout(1e-05, ".0e") -> "1e-5"
"""

from __future__ import annotations

import math
import re


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


def fixed(value, digits: int = 2, signed: bool = False, grouped: bool = False) -> str:
    """A number with exactly ``digits`` decimals, for columns that line up: 1.50, -0.14, and 0.00
    (never -0.00, even for a tiny negative number); with ``signed``, +1.50 and +0.00; with
    ``grouped``, thousands separated: 2,048.0."""
    spec = f"{'+' if signed else ''}{',' if grouped else ''}.{digits}f"
    return f"{round(float(value), digits) + 0.0:{spec}}"


def significant(value, digits: int = 6) -> str:
    """A number to ``digits`` significant digits, trailing zeros dropped, a power of ten for the
    very small and the very large: 1e-05, 0.5, 27.5, 1e+06 (``digits=2``: 0.0013, 28, 2.4e+02)."""
    return f"{value:.{digits}g}"


def scientific(value, digits: int = 1) -> str:
    """A number as a power of ten with ``digits`` decimals: 1.2e-04, 3.0e-13 (``digits=0``: 1e-05)."""
    return f"{float(value):.{digits}e}"


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


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def power_of_ten(exponent: int) -> str:
    """"10\u207b\u2076" for -6: a power of ten in plain text, its exponent in superscript digits (a
    plot's tick label needs no mathtext to lay out on every draw)."""
    return "10" + str(int(exponent)).translate(_SUPERSCRIPT)


def count(n) -> str:
    """A whole number with thousands separators: 7,079,424."""
    return f"{int(n):,}"


def shape(dims) -> str:
    """An array's shape as NumPy prints it: "(2, 1024, 4096)", "(5,)". No thousands separators:
    "(2, 1,024)" would read as three axes."""
    dims = tuple(int(d) for d in dims)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def size(n, digits: int = 1) -> str:
    """A parameter count in words: 671.0 B, 85.0 M (``digits=0``: 85 M), and in full below a
    million (38,597)."""
    n = float(n)
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.{digits}f} B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.{digits}f} M"
    return f"{int(round(n)):,}"


def byte_size(n, digits: int = 1) -> str:
    """Bytes in binary units, the largest that keeps the number at 1 or more: 512 bytes,
    36.0 KiB, 208.9 MiB, 12.6 GiB, 1.2 TiB (1 KiB = 1,024 bytes, 1 MiB = 1,024 KiB, ...)."""
    n = float(n)
    word = _finite_or_word(n)
    if word:
        return word
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if abs(n) >= 1024 ** power:
            return f"{n / 1024 ** power:,.{digits}f} {unit}"
    return f"{int(round(n)):,} bytes"


def percent(share) -> str:
    """A share as a whole percentage, "under 1%" for a small share that is not zero."""
    share = float(share)
    return "under 1%" if 0 < share < 0.005 else f"{share:.0%}"


def percentage(share, digits: int = 0, signed: bool = False, floor: bool = False) -> str:
    """A share as a percentage with exactly ``digits`` decimals, as :func:`fixed` writes numbers:
    0.667 -> "67%", (0.667, 1) -> "66.7%", (0.0312, 1, signed=True) -> "+3.1%". A small share
    reads "0%" (:func:`percent` says "under 1%"); with ``floor``, a share above 0 and below the
    last decimal shown reads as that bound: (0.0004, 1, floor=True) -> "<0.1%"."""
    share = float(share)
    step = 10.0 ** -digits / 100
    if floor and 0 < share < step:
        return "<" + fixed(step * 100, digits) + "%"
    return fixed(share * 100, digits, signed) + "%"


def word_list(items) -> str:
    """["a"] -> "a"; ["a", "b", "c"] -> "a, b and c"."""
    items = [str(item) for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def article(n) -> str:
    """"a" or "an" before the whole number ``n`` written in figures, by how it is said: "an"
    before eight, eleven, eighteen, eighty-..., eight hundred... (and their thousands, millions)."""
    n = abs(int(n))
    while n >= 1000:
        n //= 1000                      # said by its leading group: 18,000 is "eighteen thousand"
    return "an" if n in (8, 11, 18) or 80 <= n <= 89 or 800 <= n <= 899 else "a"


def ordinal(n: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    n = int(n)
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def plural(n, word: str, many: str | None = None) -> str:
    """"1 block", "2 blocks", "0 blocks"; ``many`` for irregular plurals."""
    return f"{count(n) if float(n).is_integer() else number(n)} {word if n == 1 else (many or word + 's')}"


def readout(digits: int = 2, grouped: bool = False, power: bool = False) -> str:
    """The ``readout_format`` of a slider: ipywidgets writes a slider's number in the browser,
    from a d3-format spec. ``readout(2)`` writes it as ``fixed(value, 2)`` does (".2f"), with
    ``grouped`` its thousands separated (",.0f": 10,000), with ``power`` as a power of ten
    (".0e": 1e-5, d3 writing no leading zero in the exponent)."""
    return f"{',' if grouped else ''}.{digits}{'e' if power else 'f'}"


_READOUT = re.compile(r"(,)?(?:\.(\d+))?([defg])?")


def as_readout(value, spec: str) -> str:
    """``value`` written as a slider's ``readout_format`` writes it (the d3-format specs the
    course uses: "d", ".2f", ",.0f", ".0e", ".3g"), as the slider's number box shows it: no
    negative zero, and an exponent without a leading zero (1e-5, as d3 writes it)."""
    match = _READOUT.fullmatch(spec or "")
    grouped, digits, kind = match.groups() if match else (None, None, "g")
    value = float(value)
    word = _finite_or_word(value)
    if word:
        return word
    if kind == "d":
        return f"{int(round(value)):{',' if grouped else ''}d}"
    if kind == "f" or (kind is None and digits is not None):
        return fixed(value, int(digits or 0), grouped=bool(grouped))
    text = f"{value:{',' if grouped else ''}.{digits or 6}{kind or 'g'}}"
    text = re.sub(r"e([+-])0*(\d)", r"e\1\2", text)
    return "0" if float(text.replace(",", "")) == 0 else text

