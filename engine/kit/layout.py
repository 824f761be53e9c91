"""The pieces every lab is built from: its root box, a wrapping row of controls, a slider, a
switch, a choice, a number, the verdict and the numbers below the plot.

Every control is a native one a keyboard and a screen reader can use: a slider (named after
its description, Home and End go to its current ends), a check box for anything switched on
and off (its tick shows the state), radio buttons for one choice among a few, a menu for
longer lists. In a row of ``controls`` every slider has a number box beside it that shows its
value and takes a typed one, in the same format (``engine/kit/number_box.py``), and every slider
made here hands the lab only values on its grid. ``lab_root`` marks the lab as a course widget
(``engine.presentation.access``): a focus ring that shows, controls that wrap on a narrow screen, the
verdict read out when it changes and given to the plot as its text alternative.

ipywidgets is imported inside each function, so a lab's model can be imported and tested
without it. The HTML that goes into the verdict and numbers widgets is made with
``presentation`` (``engine.presentation.html.plain`` for a verdict, ``engine.presentation.tables.table`` for
numbers).
"""

from .number_box import number_entry, slider_classes, with_box

SLIDER_STYLE = {"description_width": "initial"}     # the whole description shows beside a control

# A slider's track is at least 11em wide whatever its description; one with more positions than
# LONG_TRACK gets an 18em track.
LONG_TRACK = 40


def verdict_widget():
    """The HTML widget that shows a lab's verdict (class ``course-verdict``): read out when it
    changes, and the text alternative of the lab's plot."""
    import ipywidgets as widgets
    verdict = widgets.HTML()
    verdict.add_class("course-verdict")
    return verdict


def caption_widget():
    """The HTML widget above a lab's plot that says what it shows now (class
    ``course-lab-caption``): text the page lays out, so a screen reader reads it and a narrow
    screen wraps it, and a redraw of the plot does not draw it."""
    import ipywidgets as widgets
    caption = widgets.HTML()
    caption.add_class("course-lab-caption")
    return caption


def numbers_widget():
    """The HTML widget that shows a lab's numbers as a small table (class ``course-lab-numbers``)."""
    import ipywidgets as widgets
    numbers = widgets.HTML()
    numbers.add_class("course-lab-numbers")
    return numbers


def positions(control) -> int:
    """How many values a slider can take (its track's positions)."""
    if hasattr(control, "options"):                             # a SelectionSlider
        return len(control.options)
    step = control.step or 1
    return int(round((control.max - control.min) / step)) + 1


def controls(*children):
    """Controls side by side, wrapping onto more lines on a narrow screen. Every slider gets its
    number box beside it (``number_box.with_box``): the box shows the slider's value, in the
    slider's format, and takes a typed one."""
    import ipywidgets as widgets
    items = [with_box(child) if isinstance(child, _sliders()) else child for child in children]
    return widgets.HBox(items, layout=widgets.Layout(flex_flow="row wrap", align_items="center"))


def _sliders():
    """The ipywidgets slider classes a row of ``controls`` gives a number box."""
    import ipywidgets as widgets
    return (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider, widgets.SelectionSlider)


def slider(kind: str, **options):
    """A slider that updates while it moves: kind "float" or "int"; ``options`` are the
    slider's own (value, min, max, step, description, readout_format). Its values are snapped
    to its grid in the kernel (0.1 steps give 2.0, never 2.000000000000001). Its track has a
    fixed minimum width, longer for a long range (class ``course-track-long``)."""
    import ipywidgets as widgets
    cls = slider_classes()[widgets.FloatSlider if kind == "float" else widgets.IntSlider]
    return _track(cls(continuous_update=True, style=SLIDER_STYLE, layout=widgets.Layout(width="auto"), **options))


def log_slider(**options):
    """A slider on a log scale (ipywidgets' ``FloatLogSlider``: ``min``, ``max`` and ``step`` are
    exponents of ``base``), its values snapped to that grid in the kernel (10 ** 2.25, not what
    the browser's arithmetic made of it)."""
    import ipywidgets as widgets
    cls = slider_classes()[widgets.FloatLogSlider]
    return _track(cls(continuous_update=True, style=SLIDER_STYLE, layout=widgets.Layout(width="auto"), **options))


def pick_slider(options, value, description: str):
    """A slider that picks one of a few ordered values (ipywidgets' ``SelectionSlider``):
    ``options`` as (label, value) pairs; its number box takes a label or a value typed."""
    import ipywidgets as widgets
    return _track(widgets.SelectionSlider(options=options, value=value, description=description,
                                          continuous_update=True, style=SLIDER_STYLE,
                                          layout=widgets.Layout(width="auto")))


def _track(control):
    control.add_class("course-slider")
    if positions(control) > LONG_TRACK:
        control.add_class("course-track-long")
    return control


def switch(description: str, value: bool = True, tooltip: str = ""):
    """Something the learner turns on and off: a check box, whose tick shows the state (not a
    colour) and which a screen reader announces as checked or not checked."""
    import ipywidgets as widgets
    return widgets.Checkbox(value=bool(value), description=description, indent=False, tooltip=tooltip,
                            layout=widgets.Layout(width="auto"))


def choice(options, value=None, description: str = ""):
    """One choice among a few: radio buttons side by side (the dot shows the choice; Tab reaches
    the group and the arrow keys choose). ``options`` as for any ipywidgets selection."""
    import ipywidgets as widgets
    options = list(options)
    if value is None:
        first = options[0]
        value = first[1] if isinstance(first, tuple) else first
    return widgets.RadioButtons(options=options, value=value, description=description,
                                orientation="horizontal", style=SLIDER_STYLE,
                                layout=widgets.Layout(width="auto"))


def menu(options, value, description: str):
    """One choice among many: a drop-down menu as wide as its longest option."""
    import ipywidgets as widgets
    return widgets.Dropdown(options=options, value=value, description=description, style=SLIDER_STYLE,
                            layout=widgets.Layout(width="auto"))


def log_scale(axis):
    """Put a log scale on a matplotlib axis (ax.xaxis or ax.yaxis) without minor ticks.

    Minor ticks and their labels are most of the drawing time of a log axis, and a lab redraws
    on every move of a slider; the labelled major ticks are kept.
    """
    from matplotlib.ticker import NullLocator
    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    axis.set_minor_locator(NullLocator())


def lab_root(name, children):
    """A lab's outer box, with the classes ``course-lab`` and ``course-lab-<name>``, marked as a
    course widget (``engine.presentation.access``). Its widgets share their layouts and styles: a
    lab never changes a widget's layout or style after it is made (a shared one refuses)."""
    import ipywidgets as widgets

    from engine.presentation.access import course_root
    return course_root(widgets.VBox(children), "course-lab", f"course-lab-{name}", share=True)
