"""The number beside every slider, and a number alone: a box that shows a value and takes a
typed one, in the same format.

ipywidgets writes a slider's number in the browser, in a box that can be typed over, and reads
back what JavaScript's ``parseFloat`` makes of it: "100,000", the way the box itself writes a
large number, becomes 100; a "pick one" slider (``SelectionSlider``) ignores what is typed and
Enter there adds a line, so the box then disagrees with the slider; a number box clamps or drops
a value it does not like without a word. Here the kernel writes the box and reads it:

- the box shows the control's value in the control's own format (its ``readout_format``, or the
  chosen option's label), and is written again whenever the value changes, so the box, the
  slider and the plot always show the same value;
- what is typed is read by :func:`read`: the text of a value as the box writes it, that value
  written another way (``engine.presentation.reading``: "100,000", "100000", "1e5"), an option's label
  or its number; the control then takes that value;
- anything else is refused, the box goes back to the control's value, and a sentence under it
  says why: "d_model moves in steps of 64: 100 lies between 64 and 128.";
- the box is a one-line text field: Enter (or leaving it) confirms, and never adds a line.

A slider's own values are put on its grid in the kernel too (:func:`snap`): the browser adds
steps in floating point and may hand over 2.000000000000001 for 2; the lab's model sees 2.0.

ipywidgets is imported inside the functions, so importing this module imports no widgets.
"""

from __future__ import annotations

import functools
import math

from engine.presentation.html import plain
from engine.presentation.numbers import as_readout, word_list
from engine.presentation.reading import read_number

BOX_CLASS, MESSAGE_CLASS, PAIR_CLASS = "course-number-box", "course-box-message", "course-slider-with-box"
MULTIPLY = "\u00d7xX*"            # a typed "×2" or "x2" is the number 2


def snap(value: float, low: float, step: float, high: float) -> float:
    """The value of the grid ``low, low + step, ...`` (up to ``high``) nearest ``value``, written
    with no more decimals than ``low`` and ``step`` have: snap(2.000000000000001, -3, 0.1, 3) ->
    2.0."""
    if not step or not math.isfinite(value):
        return min(max(value, low), high)
    last = math.floor((high - low) / step + 1e-9)
    k = min(max(round((value - low) / step), 0), last)
    return round(low + k * step, max(decimals(low), decimals(step)))


def decimals(x: float) -> int:
    """How many decimals the grid value ``x`` has at the fewest: 0.05 -> 2, 32 -> 0, 1e-05 -> 5."""
    return next((d for d in range(17) if round(x, d) == x), 17)


class Grid:
    """The values a control can take and how the box writes each one.

    kind: "options" (a list of labelled values), "linear" (low, low + step, ... high) or "log"
    (base ** e for e on a linear grid of exponents). ``name`` is the control's description.
    """

    def __init__(self, kind, name, spec="", low=0.0, high=0.0, step=0.0, base=10.0, options=(), whole=False):
        self.kind, self.name, self.spec = kind, name, spec
        self.low, self.high, self.step, self.base = low, high, step, base
        self.options, self.whole = tuple(options), whole

    # ---------------------------------------------------------------- writing

    def write(self, value) -> str:
        """The text the box shows for ``value``."""
        if self.kind == "options":
            return next((label for label, v in self.options if _same(v, value)), str(value))
        return as_readout(value, self.spec)

    def widest(self) -> int:
        """How many characters the widest value takes."""
        if self.kind == "options":
            return max((len(label) for label, _v in self.options), default=1)
        ends = [self.write(self.snap(v)) for v in (self.value_at(self.low), self.value_at(self.high))]
        return max(len(text) for text in ends) + 1

    # ---------------------------------------------------------------- the grid

    def value_at(self, position: float) -> float:
        """The value at ``position`` on the linear grid (the exponent, for a log grid)."""
        return self.base ** position if self.kind == "log" else position

    def snap(self, value: float) -> float:
        """The grid value nearest ``value``."""
        if self.kind == "log":
            if value <= 0:
                return self.base ** self.low
            exponent = snap(math.log(value, self.base), self.low, self.step, self.high)
            return self.base ** exponent
        snapped = snap(value, self.low, self.step, self.high)
        return int(snapped) if self.whole else snapped

    def neighbours(self, value: float) -> tuple[float, float]:
        """The two grid values around ``value`` (inside the grid's ends)."""
        position = math.log(value, self.base) if self.kind == "log" else value
        below = snap(position - self.step / 2, self.low, self.step, self.high)
        above = snap(position + self.step / 2, self.low, self.step, self.high)
        return self.value_at(below), self.value_at(above)

    # ---------------------------------------------------------------- reading

    def read(self, text: str):
        """The value ``text`` asks for; ``ValueError`` with the reason in plain words if none."""
        typed = " ".join(str(text).split())
        if not typed:
            raise ValueError(f"Type a value for {self.name}, then press Enter.")
        if self.kind == "options":
            return self._read_option(typed)
        number = _number(typed)
        if number is None:
            read_number(typed.lstrip(MULTIPLY))           # raises, saying why it is no number
        if self.whole and not float(number).is_integer():
            raise ValueError(f"{self.name} takes whole numbers: {typed} is not one.")
        nearest = self.snap(number)
        if _same(nearest, number) or (not self.whole and self.write(nearest) == as_readout(number, self.spec)):
            return nearest
        low, high = self.value_at(self.low), self.value_at(self.high)
        if number < low or number > high:
            raise ValueError(f"{self.name} goes from {self.write(low)} to {self.write(high)}: "
                             f"{typed} is {'below' if number < low else 'above'} that.")
        below, above = self.neighbours(number)
        if self.kind == "log":
            how = f"takes the values {self.write(low)}, {self.write(self.value_at(self.low + self.step))}, \u2026 " \
                  f"{self.write(high)}"
        else:
            how = f"moves in steps of {as_readout(self.step, self.spec) if not self.whole else int(self.step)}"
        raise ValueError(f"{self.name} {how}: {typed} lies between {self.write(below)} and {self.write(above)}.")

    def _read_option(self, typed: str):
        wanted = typed.casefold()
        for label, value in self.options:
            if " ".join(label.split()).casefold() == wanted:
                return value
        number = _number(typed)
        if number is not None:
            for label, value in self.options:
                if (isinstance(value, (int, float)) and _same(value, number)) or _same(_number(label), number):
                    return value
        labels = [label for label, _v in self.options]
        raise ValueError(f"{self.name} takes {word_list(labels).replace(' and ', ' or ')}: "
                         f"{typed} is not one of them.")


def _number(text):
    """The number ``text`` reads as (a leading × allowed), or None."""
    if text is None:
        return None
    for candidate in (text, text.lstrip(MULTIPLY).split(" = ")[0]):
        try:
            return read_number(candidate)
        except ValueError:
            continue
    return None


def _same(a, b) -> bool:
    if a is None or b is None:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return a == b


def grid_of(control) -> Grid:
    """The grid of a slider (``IntSlider``, ``FloatSlider``, ``FloatLogSlider``,
    ``SelectionSlider``) or of a :func:`number_entry`, as it is now (a lab may move its ends)."""
    import ipywidgets as widgets

    name = control.description or "this value"
    if isinstance(control, widgets.SelectionSlider):
        return Grid("options", name, options=zip(control._options_labels, control._options_values))
    if isinstance(control, widgets.FloatLogSlider):
        return Grid("log", name, control.readout_format, control.min, control.max, control.step, control.base)
    whole = isinstance(control, widgets.IntSlider) or getattr(control, "whole", False)
    spec = getattr(control, "readout_format", "d" if whole else ".2f")
    return Grid("linear", name, spec, control.min, control.max, control.step or 1, whole=whole)


# ---------------------------------------------------------------- sliders on their grid

@functools.lru_cache(maxsize=None)
def slider_classes():
    """{ipywidgets slider class: the same slider whose value the kernel puts on its grid}."""
    import ipywidgets as widgets
    from traitlets import validate

    made = {}
    for base in (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider):
        def on_the_grid(self, proposal, _base=base):
            value = _base._validate_value(self, proposal)
            return grid_of(self).snap(value)
        made[base] = type(base.__name__, (base,), {
            "__doc__": f"An ipywidgets {base.__name__} whose values the kernel snaps to its grid.",
            "__module__": __name__, "_validate_value": validate("value")(on_the_grid)})
    return made


# ---------------------------------------------------------------- the box

class NumberBox:
    """A text box that shows ``control``'s value and sets it to what is typed (see the module's
    docstring), with a line under it that says why a typed value was refused.

    ``box`` (class ``course-number-box``) and ``message`` (``course-box-message``) go into the
    layout beside the control (:func:`with_box`, :func:`number_entry`); the control keeps
    working as before.
    """

    def __init__(self, control):
        import ipywidgets as widgets

        self.control = control
        grid = grid_of(control)
        self.box = widgets.Text(value=grid.write(control.value), continuous_update=False,
                                disabled=control.disabled,
                                layout=widgets.Layout(width=f"{max(grid.widest(), 3) + 2}ch"))
        self.box.add_class(BOX_CLASS)
        self.message = widgets.HTML()
        self.message.add_class(MESSAGE_CLASS)
        self._writing = False
        self.box.observe(self._typed, names="value")
        control.observe(self._moved, names="value")
        control.observe(self._disabled, names="disabled")

    def _write(self) -> None:
        self._writing = True
        try:
            self.box.value = grid_of(self.control).write(self.control.value)
        finally:
            self._writing = False

    def _moved(self, _change) -> None:
        self.message.value = ""
        self._write()

    def _disabled(self, change) -> None:
        self.box.disabled = change["new"]

    def _typed(self, change) -> None:
        if self._writing:
            return
        try:
            value = grid_of(self.control).read(change["new"])
        except ValueError as refused:
            self._write()
            self.message.value = plain(str(refused))
            return
        self.message.value = ""
        self.control.value = value
        self._write()                      # in the box's own format, even if the value was the same


def with_box(control):
    """``control`` (a slider) with its number box beside it and the box's message under both:
    a wrapping row of class ``course-slider-with-box``. The slider's own readout is turned off
    (the box shows its value)."""
    import ipywidgets as widgets

    control.readout = False
    number = NumberBox(control)
    row = widgets.HBox([control, number.box, number.message],
                       layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
    row.add_class(PAIR_CLASS)
    row.number = number
    return row


@functools.lru_cache(maxsize=None)
def _entry_class():
    import ipywidgets as widgets
    from traitlets import Bool, Int, Unicode, validate

    class NumberEntry(widgets.HBox):
        """A whole number typed into a box, with its name before it and its message under it
        (class ``course-number-entry``). ``value``, ``min``, ``max``, ``description`` and
        ``disabled`` are the kernel's alone: the box shows the value."""

        value = Int(0)
        min = Int(0)
        max = Int(100)
        description = Unicode("")
        disabled = Bool(False)
        step, whole, readout_format = 1, True, ",d"

        @validate("value")
        def _validate_value(self, proposal):
            return min(max(int(proposal["value"]), self.min), self.max)

    NumberEntry.__module__ = __name__
    return NumberEntry


def number_entry(value: int, low: int, high: int, description: str):
    """A whole number from ``low`` to ``high`` typed into a box (no slider), written with its
    thousands separated ("32,000"); ``value`` is read and set like a slider's."""
    import ipywidgets as widgets

    entry = _entry_class()(min=low, max=high, value=value, description=description,
                           layout=widgets.Layout(flex_flow="row wrap", align_items="center", width="auto"))
    name = widgets.Label(description)
    name.add_class("course-entry-name")
    number = NumberBox(entry)
    entry.children = (name, number.box, number.message)
    entry.add_class("course-number-entry")
    entry.number = number
    return entry


__all__ = ["BOX_CLASS", "MESSAGE_CLASS", "PAIR_CLASS", "Grid", "NumberBox", "decimals", "grid_of", "number_entry",
           "slider_classes", "snap", "with_box"]
