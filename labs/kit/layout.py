"""The pieces every lab is built from: its root box, a wrapping row of controls, the verdict.

ipywidgets is imported inside each function, so a lab's model can be imported and tested
without it.
"""

import html


def verdict_html(text):
    """A verdict sentence as HTML, in the theme's text colour (light and dark themes)."""
    return f'<div style="color: var(--jp-ui-font-color1, inherit);">{html.escape(text)}</div>'


def verdict_widget():
    """The HTML widget that shows a lab's verdict (class ``course-verdict``)."""
    import ipywidgets as widgets
    verdict = widgets.HTML()
    verdict.add_class("course-verdict")
    return verdict


def controls(*children):
    """Controls side by side, wrapping onto more lines on a narrow screen."""
    import ipywidgets as widgets
    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap", align_items="center"))


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
