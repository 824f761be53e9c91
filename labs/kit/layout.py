"""The pieces every lab is built from: its root box, a wrapping row of controls, a slider, the
verdict and the numbers below the plot.

ipywidgets is imported inside each function, so a lab's model can be imported and tested
without it. The HTML that goes into the verdict and numbers widgets is made with
``exercises.ui.style`` (``plain`` for a verdict, ``table`` for numbers).
"""

SLIDER_STYLE = {"description_width": "initial"}     # the whole description shows beside a control


def verdict_widget():
    """The HTML widget that shows a lab's verdict (class ``course-verdict``)."""
    import ipywidgets as widgets
    verdict = widgets.HTML()
    verdict.add_class("course-verdict")
    return verdict


def numbers_widget():
    """The HTML widget that shows a lab's numbers as a small table (class ``course-lab-numbers``)."""
    import ipywidgets as widgets
    numbers = widgets.HTML()
    numbers.add_class("course-lab-numbers")
    return numbers


def controls(*children):
    """Controls side by side, wrapping onto more lines on a narrow screen."""
    import ipywidgets as widgets
    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap", align_items="center"))


def slider(kind: str, width: str = "22em", **options):
    """A slider that updates while it moves: kind "float" or "int"; ``options`` are the
    slider's own (value, min, max, step, description, readout_format)."""
    import ipywidgets as widgets
    cls = widgets.FloatSlider if kind == "float" else widgets.IntSlider
    return cls(continuous_update=True, style=SLIDER_STYLE, layout=widgets.Layout(width=width), **options)


def log_scale(axis):
    """Put a log scale on a matplotlib axis (ax.xaxis or ax.yaxis) without minor ticks.

    Minor ticks and their labels are most of the drawing time of a log axis, and a lab redraws
    on every move of a slider; the labelled major ticks are kept.
    """
    from matplotlib.ticker import NullLocator
    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    axis.set_minor_locator(NullLocator())


def lab_root(name, children):
    """A lab's outer box, with the classes ``course-lab`` and ``course-lab-<name>``."""
    import ipywidgets as widgets
    root = widgets.VBox(children)
    root.add_class("course-lab")
    root.add_class(f"course-lab-{name}")
    return root
