"""Texts drawn from pixels rasterised once: a lab redraws the same labels again and again.

matplotlib's Agg renderer lays out and rasterises a text's glyphs (FreeType) on every draw, and
rasterising was most of a text's time. :func:`canvas_class` gives an Agg canvas whose renderer
keeps each text's image and lays it on the canvas as Agg itself would; the pixels are those of
matplotlib's own drawing (``tests/test_figure_view.py`` compares them).

It reaches into matplotlib's private drawing (``RendererAgg._prepare_font`` and the renderer's
``_renderer.draw_text_image``), written for matplotlib :data:`WRITTEN_FOR`, the version the
browser runs. A matplotlib without ``_prepare_font`` gets its own canvas, unchanged; a test
fails with a clear message on any other version, so the patch is read again before an upgrade.

Why the course does not use ipympl, matplotlib's own widget backend: it needs a live connection
(a comm) between each figure and the kernel, through which the page asks for every frame, and a
frontend extension of its own in the page; and it draws the whole figure again on each change
and sends a picture of the whole canvas. The figure view needs neither: it blits the changing
artists and sends a PNG, re-compressing only the bands of rows that changed, through a plain
ipywidgets ``Image``, which every Jupyter page shows.

Importing this module imports no matplotlib.
"""

from __future__ import annotations

import math
from functools import lru_cache
from types import MethodType

import numpy as np

WRITTEN_FOR = "3.10"         # the matplotlib (major.minor) whose private text drawing this follows
TEXT_IMAGES_KEPT = 4096      # texts whose pixels are kept (a few kB each)
_text_images = {}            # (text, font, size, dpi, settings) -> (its pixels, descent, offsets)


@lru_cache(maxsize=1)
def canvas_class():
    """matplotlib's Agg canvas, whose renderer draws each text from pixels rasterised once.

    Agg draws a text by laying out and rasterising its glyphs (FreeType) at the origin, then
    laying that grey image on the canvas at the text's place, rounded to a whole pixel, in the
    text's colour and angle. The image depends only on the text, its font and size, the dpi
    and the text settings, so it is kept: a lab redraws the same labels again and again, and
    rasterising was most of a text's time. The pixels are those of matplotlib's own drawing
    (a test compares them)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

    if not callable(getattr(RendererAgg, "_prepare_font", None)):   # another matplotlib: its own drawing
        return FigureCanvasAgg

    class TextOnceCanvas(FigureCanvasAgg):
        def get_renderer(self):
            renderer = super().get_renderer()
            if "draw_text" not in vars(renderer):          # a new renderer (a new size or dpi)
                renderer.draw_text = MethodType(_draw_text_once, renderer)
            return renderer

    return TextOnceCanvas


def _draw_text_once(renderer, gc, x, y, s, prop, angle, ismath=False, mtext=None):
    """``RendererAgg.draw_text`` with each text's image rasterised once (:func:`canvas_class`)."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import RendererAgg, get_hinting_flag

    if ismath:
        return RendererAgg.draw_text(renderer, gc, x, y, s, prop, angle, ismath, mtext)
    flags, antialiased = get_hinting_flag(), gc.get_antialiased()
    font = (tuple(prop.get_family()), prop.get_slant(), prop.get_variant(), prop.get_weight(), prop.get_stretch(),
            prop.get_size_in_points(), prop.get_file(), prop.get_math_fontfamily())
    key = (s, font, renderer.dpi, flags, antialiased, mpl.rcParams["text.hinting_factor"],
           mpl.rcParams["text.kerning_factor"])
    found = _text_images.get(key)
    if found is None:
        face = renderer._prepare_font(prop)
        face.set_text(s, 0, flags=flags)
        face.draw_glyphs_to_bitmap(antialiased=antialiased)
        offset_x, offset_y = face.get_bitmap_offset()
        if len(_text_images) >= TEXT_IMAGES_KEPT:
            _text_images.clear()
        found = _text_images[key] = (np.array(face.get_image()), face.get_descent() / 64.0,
                                     offset_x / 64.0, offset_y / 64.0)
    image, descent, offset_x, offset_y = found
    x = round(x + offset_x + descent * math.sin(math.radians(angle)))      # as RendererAgg.draw_text
    y = round(y + offset_y + descent * math.cos(math.radians(angle)))
    renderer._renderer.draw_text_image(image, x, y + 1, angle, gc)
