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

Rendering is the main cost of a lab's update, so it is kept lean: the figure is
drawn by one Agg canvas kept for its whole life (no ``savefig`` round trip), a
redraw does nothing when no artist changed since the last one (matplotlib marks
the figure *stale* whenever an artist's ``set_*`` method is called), the PNG is
encoded only when the pixels differ from the image already shown, and it is
written with fast zlib settings and without an alpha channel when every pixel is
opaque. The pixels are exactly those ``savefig`` would give at the same dpi.
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

# zlib level 1: about twice as fast as the default (6) for a plot, and the file only a few
# per cent larger (plots are mostly flat colour, which any level compresses well).
PNG_COMPRESS_LEVEL = 1


def new_figure(width: float = 6.4, height: float = 3.2) -> Figure:
    """A figure not managed by pyplot, white background (readable in light and dark themes)."""
    fig = Figure(figsize=(width, height), facecolor="white")
    return fig


def encode_png(rgba, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """PNG bytes of an (height, width, 4) uint8 RGBA array; RGB when every pixel is opaque."""
    import numpy as np
    from PIL import Image

    rgba = np.asarray(rgba)
    image = Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), np.ascontiguousarray(rgba),
                             "raw", "RGBA", 0, 1)
    if rgba[..., 3].min() == 255:
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=compress_level)
    return buffer.getvalue()


class FigureView:
    """Shows ``figure`` in ``self.widget`` (an ``ipywidgets.Output``); :meth:`redraw` re-renders it.

    ``renders`` counts calls of :meth:`redraw`; ``draws`` and ``encodes`` count the times the
    figure was actually drawn and a new PNG was actually made (both skipped when nothing changed).
    """

    def __init__(self, figure: Figure, dpi: int = 100, description: str = ""):
        self.figure = figure
        self.dpi = dpi
        self.renders = 0
        self.draws = 0
        self.encodes = 0
        self._canvas = None
        self._figure_draws = 0  # draws of the figure by anyone (its canvas's draw events)
        self._our_draw = -1     # the value of that count just after this view's last draw
        self._pixels = None    # a copy of the RGBA pixels last encoded
        self._png = b""        # and their PNG
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

    def _agg(self):
        """The figure's Agg canvas (made once; it keeps its renderer between draws)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        if self._canvas is None or self.figure.canvas is not self._canvas:
            self._canvas = FigureCanvasAgg(self.figure)
            self._canvas.mpl_connect("draw_event", self._count_draw)
        if self.figure.dpi != self.dpi:
            self.figure.set_dpi(self.dpi)
        return self._canvas

    def _count_draw(self, _event=None) -> None:
        self._figure_draws += 1

    def _render(self) -> bool:
        """Bring ``self._png`` up to date with the figure; True if its pixels changed."""
        import numpy as np

        if (self._pixels is not None and not self.figure.stale and self.figure.canvas is self._canvas
                and self._figure_draws == self._our_draw):
            return False                                   # no artist changed since this view drew
        canvas = self._agg()
        canvas.draw()
        self.draws += 1
        self._our_draw = self._figure_draws
        pixels = np.asarray(canvas.buffer_rgba())
        if self._pixels is not None and self._pixels.shape == pixels.shape and np.array_equal(self._pixels, pixels):
            return False                                   # drawn again, same picture
        self._pixels = pixels.copy()
        self._png = encode_png(self._pixels)
        self.encodes += 1
        return True

    def redraw(self) -> None:
        """Render the same figure again, with its artists as they are now."""
        if self._render() or not self.image.value:
            self.image.value = self._png
        self.renders += 1
