"""Tick labels a figure laid out again for a narrow width writes: every other one of numbers
(:func:`thinned_class`), words wrapped onto lines (:func:`wrapped_class`), and which axes are
named by words (:func:`category_formatter`: a bar's name is never thinned away).

Importing this module imports no matplotlib (each function imports what it uses).
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def thinned_class():
    """A matplotlib tick formatter that keeps every ``step``-th of the labels the formatter it
    wraps writes (the one at 0 among them when there is one), and blanks the others."""
    from matplotlib.ticker import Formatter

    class Thinned(Formatter):
        def __init__(self, formatter, step):
            self.formatter, self.step = formatter, int(step)

        def set_axis(self, axis):
            super().set_axis(axis)
            self.formatter.set_axis(axis)

        def format_ticks(self, values):
            labels = self.formatter.format_ticks(values)
            shown = [i for i, label in enumerate(labels) if label.strip()]      # counted among the labelled
            zero = next((k for k, i in enumerate(shown) if values[i] == 0), 0)
            kept = {i for k, i in enumerate(shown) if (k - zero) % self.step == 0}
            return [label if i in kept else "" for i, label in enumerate(labels)]

        def __call__(self, x, pos=None):
            return self.formatter(x, pos)

        def get_offset(self):
            return self.formatter.get_offset()

        def format_data_short(self, value):
            return self.formatter.format_data_short(value)

    return Thinned


@lru_cache(maxsize=1)
def wrapped_class():
    """A matplotlib tick formatter that writes the labels of the formatter it wraps onto lines
    of at most ``chars`` characters (broken at spaces; each line of the label on its own)."""
    import textwrap

    from matplotlib.ticker import Formatter

    class Wrapped(Formatter):
        def __init__(self, formatter, chars):
            self.formatter, self.chars = formatter, int(chars)

        def set_axis(self, axis):
            super().set_axis(axis)
            self.formatter.set_axis(axis)

        def format_ticks(self, values):
            return [wrap_label(label, self.chars) for label in self.formatter.format_ticks(values)]

        def __call__(self, x, pos=None):
            return wrap_label(self.formatter(x, pos), self.chars)

        def get_offset(self):
            return self.formatter.get_offset()

        def format_data_short(self, value):
            return self.formatter.format_data_short(value)

    def wrap_label(label, chars):
        return "\n".join(textwrap.fill(line, chars, break_long_words=False) for line in label.split("\n"))

    return Wrapped


def category_formatter(axis):
    """The formatter that writes words under ``axis``'s ticks (a name under each bar or group,
    fixed by the lab), looked for under the layout's own wrappers; None when its labels are
    numbers (no letter outside their mathtext)."""
    import re

    from matplotlib.category import StrCategoryFormatter
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    formatter = axis.get_major_formatter()
    while hasattr(formatter, "formatter"):
        formatter = formatter.formatter
    if not isinstance(formatter, (FixedFormatter, FuncFormatter, StrCategoryFormatter)):
        return None
    labels = formatter.format_ticks(list(axis.get_majorticklocs()))
    words = "".join(re.sub(r"\$[^$]*\$", "", str(label)) for label in labels)
    return formatter if any(ch.isalpha() for ch in words) else None
