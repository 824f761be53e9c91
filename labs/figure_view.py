"""A matplotlib figure shown inside an ipywidgets ``Output`` and redrawn in place.

Build the figure once (``matplotlib.figure.Figure``, not pyplot, so nothing is
displayed twice or kept globally), keep its artists, and on every change update
them (``set_height``, ``set_data``, ``set_text``...) then call
:meth:`FigureView.redraw`. The figure is rendered to PNG into one ``Image``
widget that sits in the ``Output``; a redraw only swaps the image's bytes, so
the plot does not flicker or jump, and the figure is never rebuilt.

    fig = Figure(figsize=(6, 3)); ax = fig.add_subplot()
    bars = ax.bar(names, values)
    view = FigureView(fig)            # view.widget goes into the lab's layout
    ...
    for bar, v in zip(bars, new_values): bar.set_height(v)
    view.redraw()
"""

from __future__ import annotations

import io

import ipywidgets as widgets
from matplotlib.figure import Figure

# Okabe-Ito palette: distinguishable with the common colour-vision deficiencies.
OKABE_ITO = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}


def new_figure(width: float = 6.4, height: float = 3.2) -> Figure:
    """A figure not managed by pyplot, white background (readable in light and dark themes)."""
    fig = Figure(figsize=(width, height), facecolor="white")
    return fig


class FigureView:
    """Shows ``figure`` in ``self.widget`` (an ``ipywidgets.Output``); :meth:`redraw` re-renders it."""

    def __init__(self, figure: Figure, dpi: int = 100, description: str = ""):
        self.figure = figure
        self.dpi = dpi
        self.renders = 0
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height="auto"))
        self.image.add_class("course-figure-image")
        self.widget = widgets.Output()
        self.widget.add_class("course-figure")
        # Put the Image widget into the Output directly (no kernel needed to do so).
        self.widget.outputs = ({
            "output_type": "display_data",
            "data": {
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": self.image.model_id, "version_major": 2, "version_minor": 0},
                "text/plain": description or "A figure",
            },
            "metadata": {},
        },)
        self.redraw()

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=self.dpi, facecolor=self.figure.get_facecolor())
        return buffer.getvalue()

    def redraw(self) -> None:
        """Render the same figure again, with its artists as they are now."""
        self.image.value = self.png()
        self.renders += 1
