"""A matplotlib figure shown inside an ipywidgets ``Output`` and redrawn in place.

Build the figure once (``matplotlib.figure.Figure``, not pyplot, so nothing is displayed twice
or kept globally), keep its artists, and on every change update them (``set_height``,
``set_data``, ``set_text``...) then call :meth:`FigureView.redraw`. The figure is rendered to PNG
into one ``Image`` widget that sits in the ``Output``; a redraw only swaps the image's bytes, so
the plot does not flicker or jump, and the figure is never rebuilt.

    fig = Figure(figsize=(6, 3)); ax = fig.add_subplot()
    bars = ax.bar(names, values)
    view = FigureView(fig, changing=[bars])   # view.widget goes into the lab's layout
    ...
    for bar, v in zip(bars, new_values): bar.set_height(v)
    view.redraw()

**Blitting.** Most of a figure never changes: axes, ticks, tick labels, axis labels, legends,
reference lines. The artists a lab updates are listed as ``changing``; everything else is
*static*. The static part is drawn once into a cached background; a redraw restores that
background and draws only the changing artists on it, which takes a millisecond or two instead
of the tens of milliseconds a full draw of the ticks and their labels takes. A full draw happens
only when something static changed (matplotlib marks the figure *stale* when a static artist's
``set_*`` method is called or an axis's limits or ticks change), and :attr:`FigureView.last`
says which case a redraw was in. A lab whose static part takes a few states (two scales, a
few ranges of the layer axis) names the state it is in, ``view.redraw(state=("log", 32))``:
the background of each state is kept, and going back to a state already drawn costs no full
draw. The background drawn before the lab first names a state, with nothing static changed
since, is that state's.

The changing artists are drawn above the static artists of their axes (the view raises their
``zorder`` by :data:`CHANGING_ZORDER`, keeping their order among themselves), so a full draw
and a blit paint in the same order and give exactly the same pixels. A static artist that must
stay on top of a changing one (a reference line over bars, a legend over a curve) is listed as
changing too. If a changing artist reaches outside its axes into a static artist drawn after
it (another axes, a figure title), the figure is drawn as matplotlib draws it, every artist in
its turn, so the pixels are always those of a full draw. Knowing this needs the extent of the
static axes, which lays out all their tick labels: each is measured when first needed and kept
until that axes changes.

**Cheap pixels.** The PNG is encoded only when the pixels differ from the image already shown,
and only the bands of rows that changed are compressed again (:mod:`engine.kit.png`); texts are
drawn from pixels rasterised once (:mod:`engine.kit.text_cache`). The image widget gets the PNG
as a ``data:`` URL (``format="url"``), decoded in the page at once, where raw bytes would go
through a blob URL and the browser's network layer first (``benchmarks/NOTES.md``).

**Drawn for the width shown.** The page writes the width the figure is shown at, the height it
may take and the screen's device pixels per CSS px into a hidden text box,
:attr:`FigureView.size_box`; :meth:`FigureView.fit` lays the figure out again for a narrower
width (:mod:`engine.kit.figure_layout`). The backgrounds are dropped: the next redraw is a full
draw. The image's class ``course-figure-text-N`` gives its smallest text in tenths of a figure
pixel (``course-figure-text-111``: 11.1 px), which a test measures.

What a lab builds its figure from (:data:`OKABE_ITO`, :func:`new_figure`, :class:`Bars`,
:func:`set_changed`...) is in :mod:`engine.kit.figure_parts`, imported here too. Importing this
module imports neither matplotlib nor ipywidgets, so a lab's model can be tested without them.
"""

from __future__ import annotations

import base64

import numpy as np

from engine.kit.figure_layout import NARROWEST, Design, read_size, sharpness
from engine.kit.figure_parts import (OKABE_ITO, Bars, cell_grid, decades, flatten, new_figure, set_cells,
                                     set_changed, set_limits, smallest_text, whole_ticks)
from engine.kit.png import PNG_BAND, PNG_COMPRESS_LEVEL, PngWriter, encode_png
from engine.kit.regions import (MARGIN, dirty_parts, draw_order, draw_within, overlap, paint_bounds, painted_extent,
                                parts_reached)
from engine.kit.text_cache import canvas_class

__all__ = ["CHANGING_ZORDER", "OKABE_ITO", "PNG_BAND", "PNG_COMPRESS_LEVEL", "Bars", "FigureView", "PngWriter",
           "cell_grid", "decades", "encode_png", "new_figure", "set_cells", "set_changed", "set_limits",
           "smallest_text", "whole_ticks"]

CHANGING_ZORDER = 100        # added to a changing artist's zorder: drawn above the static ones


class FigureView:
    """Shows ``figure`` in ``self.widget`` (an ``ipywidgets.Output``); :meth:`redraw` re-renders it.

    ``changing``: the artists the lab updates (containers and lists are opened up); more can be
    added with :meth:`changing`. Counters: ``renders`` counts calls of :meth:`redraw`;
    ``full_draws`` and ``blits`` how many of them drew the whole figure or only the changing
    artists (a redraw with nothing changed does neither); ``encodes`` how many made a new PNG.
    ``last`` is "full", "blit" or "none" for the last redraw, and ``why`` the reason for its
    last full draw.
    """

    def __init__(self, figure, dpi: int = 100, description: str = "", changing=()):
        import ipywidgets as widgets

        self.figure = figure
        self.base_dpi = dpi          # figure pixels per inch of the design: one per CSS px at 100
        self.dpi = dpi               # figure pixels per inch drawn now (more on a sharp screen)
        self.renders = 0
        self.full_draws = 0
        self.partial_draws = 0
        self.blits = 0
        self.encodes = 0
        self.last = "none"
        self.why = ""
        self._changing = []          # the changing artists, in the order they are drawn
        self._canvas = None
        self._background = None      # the static part's pixels (a matplotlib BufferRegion)
        self._later = []             # the static axes and figure-level artists, in drawing order
        self._extents = {}           # id(static artist) -> (artist, bbox): its extent, while unchanged
        self._states = {}            # state -> (background, later, extents) of the static states seen
        self._checked = None         # the background the last blit's artists were checked against
        self._drawn = {}             # id(artist) -> the pixel bounds it painted when last drawn
        self._empty = None           # ((shape, colour), the figure's pixels with nothing drawn on it)
        self._measured = {}          # id(artist) -> (artist, its window extent) in the redraw under way
        self._state = None
        self._writer = PngWriter()   # keeps a copy of the pixels last encoded, and their bands
        self._png = b""              # the PNG of those pixels
        self._smallest = {}          # id(background) -> (background, changing texts' sizes, smallest text)
        self.changing(*flatten(changing))
        self._design = Design(figure)
        self._size = None            # (width, height) in CSS px the figure is laid out for, None: the design
        self._ratio = 1.0            # device pixels per CSS px of the screen it is drawn for
        self.image = widgets.Image(format="url", layout=widgets.Layout(max_width="100%", height="auto"))
        self.image.add_class("course-figure-image")
        self.size_box = widgets.Text(layout=widgets.Layout(display="none"))
        self.size_box.add_class("course-figure-size")
        self.size_box.observe(self._on_size, names="value")
        self.widget = widgets.Output()
        self.widget.add_class("course-figure")
        # Put the Image and the size box into the Output directly (no kernel needed to do so).
        self.widget.outputs = tuple({
            "output_type": "display_data",
            "data": {
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": shown.model_id, "version_major": 2, "version_minor": 0},
                "text/plain": text,
            },
            "metadata": {},
        } for shown, text in ((self.image, description or "A figure"), (self.size_box, "")))
        self.redraw()

    # ---------------------------------------------------------------- which artists change

    def changing(self, *artists) -> None:
        """Mark more artists as changing: drawn on every redraw, above the static ones."""
        for artist in flatten(artists):
            if any(artist is known for known in self._changing):
                continue
            artist.set_zorder(artist.get_zorder() + CHANGING_ZORDER)
            artist.set_animated(True)
            self._changing.append(artist)
        self._changing.sort(key=lambda artist: draw_order(self.figure, artist))
        self._forget()                               # the static part is now another one

    def _forget(self) -> None:
        self._background = None
        self._extents = {}
        self._states.clear()
        self._smallest.clear()

    # ---------------------------------------------------------------- drawing

    def _agg(self):
        """The figure's Agg canvas (made once; it keeps its renderer between draws)."""
        if self._canvas is None or self.figure.canvas is not self._canvas:
            self._canvas = canvas_class()(self.figure)
            self._forget()
        if self.figure.dpi != self.dpi:
            self.figure.set_dpi(self.dpi)
            self._forget()
        return self._canvas

    def _full_draw(self, why: str, base=None) -> None:
        """Draw the static part and keep it as the background, then draw the changing artists.
        Given ``base``, the background before the static change, only where static artists
        changed is drawn again, when that can be known (:meth:`_draw_static_changes`)."""
        if self._draw_static_changes(base):
            self.partial_draws += 1
        else:
            self._draw_static()
        self._later = self._static_order()
        if self._state is not None:
            self._states[self._state] = (self._background, self._later, dict(self._extents))
        if self._reaches_later_static(every=True):
            self._paint_in_order("a changing artist reaches a static artist drawn after it")
            return
        self._draw_changing()
        self._checked = self._background
        self.full_draws += 1
        self.last, self.why = "full", why

    def _draw_static(self) -> None:
        """Draw the whole static part, keep it as the background and measure each static
        axes and figure-level artist, so that a later change of one is drawn again alone."""
        canvas = self._agg()
        self._drop_changed_extents()
        self._draw_only(None)
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        order = self._static_order()
        if len(order) > 1:               # one of several may later change alone
            renderer = canvas.get_renderer()
            for child in order:
                self._static_extent(child, renderer)

    def _draw_only(self, drawn) -> None:
        """Draw the figure without its changing artists and, if ``drawn`` is a list, with only
        those of its static axes and figure-level artists."""
        from matplotlib.image import AxesImage

        images = [a for a in self._changing if isinstance(a, AxesImage) and a.get_visible()]
        left_out = [] if drawn is None else [child for child in self._static_order()
                                             if not any(child is d for d in drawn)]
        stale = [child.stale for child in left_out]
        for image in images:             # matplotlib draws animated images too: keep them out
            image.set_visible(False)
        for child in left_out:           # an animated artist is left out of a draw
            child.set_animated(True)
        try:
            self._canvas.draw()
        finally:
            for image in images:
                image.set_visible(True)
            for child, was in zip(left_out, stale):
                child.set_animated(False)
                child.stale = was        # the draw placed it again, where it was: not a change

    def _draw_static_changes(self, base) -> bool:
        """Bring ``base``, the background drawn before one static axes or figure-level artist
        changed, up to date by drawing again only where it was and where it is now. It is drawn
        alone, which shows the pixels it paints now; if other static artists reach there, the
        figure is drawn again with only those and it; those parts of the drawing are laid on
        ``base``. The pixels are those of a whole draw. False (nothing done) unless exactly one
        static artist changed, where it was is known and does not reach every other, and the
        figure does not lay itself out again as it draws (a layout engine moves every axes)."""
        from matplotlib.layout_engine import PlaceHolderLayoutEngine
        from matplotlib.transforms import Bbox

        order = self._static_order()
        engine = self.figure.get_layout_engine()         # tight_layout() called once leaves a placeholder
        if (base is None or not isinstance(engine, (type(None), PlaceHolderLayoutEngine))
                or [id(c) for c in order] != [id(c) for c in self._later]):
            return False
        changed = [child for child in order if child.stale]
        known = self._extents.get(id(changed[0])) if len(changed) == 1 else None
        if known is None or known[0] is not changed[0]:
            return False
        changed = changed[0]
        canvas = self._canvas
        renderer = canvas.get_renderer()
        width, height = int(self.figure.bbox.width), int(self.figure.bbox.height)

        def reaching(boxes):
            return parts_reached(boxes, order, changed, lambda child: self._static_extent(child, renderer),
                                 width, height)

        if len(reaching([known[1]])[1]) == len(order):        # where it was reaches every static artist
            return False
        blank = self._blank()
        self._draw_only([changed])
        self._extents[id(changed)] = (changed, self._painted(changed, blank, renderer))
        parts, drawn = reaching([known[1], self._extents[id(changed)][1]])
        if len(drawn) > 1:                # it reaches no other static artist: drawn already
            self._draw_only(drawn)
        new = [canvas.copy_from_bbox(Bbox.from_extents(*part)) for part in parts]
        canvas.restore_region(base)
        for region in new:
            canvas.restore_region(region)
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        return True

    def _painted(self, child, blank, renderer):
        """The extent of what ``child``, drawn alone on the canvas, painted
        (:func:`engine.kit.regions.painted_extent`). ``blank``: :meth:`_blank`."""
        pixels = np.asarray(self._canvas.buffer_rgba()).view(np.uint32)[..., 0]
        return painted_extent(child, pixels, blank, renderer)

    def _blank(self):
        """The figure's pixels with nothing drawn on it but its own background, as uint32 (drawn
        once for each size and colour)."""
        key = (tuple(self.figure.bbox.size), tuple(self.figure.patch.get_facecolor()))
        if self._empty is None or self._empty[0] != key:
            self._draw_only([])
            self._empty = (key, np.asarray(self._canvas.buffer_rgba()).view(np.uint32)[..., 0].copy())
        return self._empty[1]

    def _paint_in_order(self, why: str) -> None:
        """Draw the whole figure as matplotlib does without blitting, every artist in its turn
        (the background is kept: the static part has not changed). For a changing artist that
        reaches a static artist drawn after it, which a blit would paint over. Every changing
        artist is checked again at the next redraw."""
        renderer = self._plain_draw().get_renderer()
        for artist in self._changing:
            self._drawn[id(artist)] = self._box(artist, renderer)
            artist.stale = False
        self._checked = None
        self.full_draws += 1
        self.last, self.why = "full", why

    def _restore_state(self, state) -> None:
        """Go back to a static state drawn before: its background, and the extents measured for
        it. Its static artists are as they were then (the lab names every static state), so
        none counts as changed since that background was drawn."""
        self._background, self._later, extents = self._states[state]
        self._extents = dict(extents)
        for child in self._later:
            child.stale = False

    def _static_order(self) -> list:
        """The static axes and figure-level static artists, in the order a draw paints them."""
        return [child for child in sorted(self.figure.get_children(), key=lambda a: a.get_zorder())
                if child is not self.figure.patch and child.get_visible() and not child.get_animated()]

    def _drop_changed_extents(self) -> None:
        """Forget the extent of every static artist changed since it was measured. matplotlib
        marks an axes (or a figure-level artist) stale when anything static in it changes; a
        measured one is marked fresh (:meth:`_static_extent`), so stale means changed since."""
        self._extents = {key: (child, box) for key, (child, box) in self._extents.items() if not child.stale}

    def _static_extent(self, child, renderer):
        """The pixels a static axes or figure-level artist paints, measured when first asked for
        and kept while it does not change: measuring an axes lays out every tick label, which
        takes a third as long as drawing the figure, and most axes never change."""
        known = self._extents.get(id(child))
        if known is not None and known[0] is child and not child.stale:
            return known[1]
        figure_stale = self.figure.stale
        try:
            box = child.get_tightbbox(renderer) if hasattr(child, "get_tightbbox") else None
            box = box or child.get_window_extent(renderer)
        except Exception:  # noqa: BLE001 - an artist without an extent covers everything
            box = self.figure.bbox
        # Measuring sets the ticks again (to what they are): not a change of the picture.
        child.stale = False
        self.figure.stale = figure_stale
        self._extents[id(child)] = (child, box)
        return box

    def _draw_changing(self) -> None:
        renderer = self._canvas.get_renderer()
        for artist in self._changing:
            artist.draw(renderer)
            self._drawn[id(artist)] = self._box(artist, renderer)
            artist.stale = False
        self.figure.stale = False

    def _extent(self, artist, renderer):
        """The pixels a changing artist may paint: its clip box if it is clipped, else its extent."""
        if artist.get_clip_on() and artist.get_clip_box() is not None and artist.get_clip_path() is None:
            return artist.get_clip_box()
        return self._window_extent(artist, renderer)

    def _window_extent(self, artist, renderer):
        """``artist.get_window_extent``, worked out once per redraw: for a text it is a layout of
        the text, and a redraw asks for it up to three times."""
        known = self._measured.get(id(artist))
        if known is None or known[0] is not artist:
            known = self._measured[id(artist)] = (artist, artist.get_window_extent(renderer))
        return known[1]

    def _reaches_later_static(self, every: bool) -> bool:
        """True if a changing artist paints where a static artist drawn after it lies. Only the
        artists changed since the last redraw are looked at, unless ``every``: the others were
        looked at then, against the same static part."""
        renderer = self._canvas.get_renderer()
        for artist in self._changing:
            if not (every or artist.stale):
                continue
            home = artist.axes
            if home is None:          # figure-level: drawn after every static artist either way
                continue
            start = next((i + 1 for i, child in enumerate(self._later) if child is home), len(self._later))
            later = [child for child in self._later[start:] if child is not home]
            if not later or not artist.get_visible():
                continue
            box = self._extent(artist, renderer).padded(MARGIN)
            if any(box.overlaps(self._static_extent(child, renderer)) for child in later):
                return True
        return False

    def _changed(self) -> bool:
        return any(artist.stale for artist in self._changing)

    def _render(self, state) -> bool:
        """Bring the pixels up to date with the figure; True if they may have changed."""
        self._agg()                                  # the canvas, made once
        self._measured = {}                          # artists' extents, as they are in this redraw
        switched = state != self._state
        known = state is not None and state in self._states
        base = self._background                      # a static change is drawn on it
        if switched:
            unnamed = self._state is None and self._background is not None and not self.figure.stale
            self._state = state
            if known:                                # a static state drawn before: its background
                self._restore_state(state)
            elif unnamed and state is not None:      # the static part drawn before any state was
                self._states[state] = (self._background, self._later, dict(self._extents))   # named: this one's
            elif state is not None:
                self._background = None
        if self._background is None:
            self._full_draw("first draw" if not self.full_draws else "a new static state", base)
        elif self.figure.stale and not known:
            self._full_draw("a static artist changed", base)
        elif not (switched or self.figure.stale or self._changed()):
            self.last = "none"
            return False
        elif self._reaches_later_static(every=switched or self._checked is not self._background):
            self._paint_in_order("a changing artist reaches a static artist drawn after it")
        else:
            self._checked = self._background
            if switched or self.figure.stale:
                self._place_axes()
                self._blit(None)
            else:
                renderer = self._canvas.get_renderer()
                fresh = {id(a): self._box(a, renderer) for a in self._changing if a.stale}
                self._blit(self._dirty(fresh), fresh)
            self.blits += 1
            self.last = "blit"
        return True

    # ---------------------------------------------------------------- redrawing only what changed

    def _box(self, artist, renderer):
        """The pixels ``artist`` may paint now (:func:`engine.kit.regions.paint_bounds`)."""
        return paint_bounds(artist, renderer, self.figure.bbox, self._window_extent)

    def _dirty(self, fresh):
        """The parts of the figure to paint again, or None for all of it
        (:func:`engine.kit.regions.dirty_parts`). fresh: {id(artist): bounds} of each changed
        artist now (:meth:`_box`)."""
        return dirty_parts(fresh, self._drawn, self._changing, int(self.figure.bbox.width),
                           int(self.figure.bbox.height))

    def _blit(self, parts, fresh=None) -> None:
        """Restore the background (only ``parts`` of it, if given) and draw the changing artists
        that reach into each part, clipped to it. With parts, ``fresh`` holds the bounds of the
        changed artists now (the others paint where they did last time)."""
        from matplotlib.transforms import Bbox

        if parts is None:
            self._canvas.restore_region(self._background)
            self._draw_changing()
            return
        renderer = self._canvas.get_renderer()
        height = int(self.figure.bbox.height)
        for x0, y0, x1, y1 in parts:
            if x1 <= x0 or y1 <= y0:
                continue
            # The saved pixels count rows from the top, and Agg copies the last row and column
            # of the bounds too: columns x0 .. x1 - 1 and rows y0 .. y1 - 1 from the bottom.
            self._canvas.restore_region(self._background, bbox=(x0, height - y1, x1 - 1, height - y0 - 1),
                                        xy=(0, 0))
            region = Bbox.from_extents(x0, y0, x1, y1)
            for artist in self._changing:
                box = fresh[id(artist)] if id(artist) in fresh else self._drawn.get(id(artist))
                if box is not None and overlap(box, (x0, y0, x1, y1)):
                    draw_within(artist, region, renderer)
        self._drawn.update(fresh)
        for artist in self._changing:
            artist.stale = False
        self.figure.stale = False

    def _place_axes(self) -> None:
        """Size each axes for its limits as a draw does (an axes with a fixed aspect ratio, such
        as an image's, changes its box with its limits). matplotlib marks an axes changed when
        it is placed, even where it stays: one that had not changed is still unchanged (its
        measured extent still holds)."""
        for ax in self.figure.axes:
            unchanged = not ax.stale
            locator = ax.get_axes_locator()
            ax.apply_aspect(locator(ax, self._canvas.get_renderer()) if locator else None)
            if unchanged:
                ax.stale = False
        self._measured = {}                          # an axes may have moved: extents anew

    def _encode(self) -> bool:
        """Make a new PNG if the pixels differ from the last ones; True if they did."""
        png = self._writer.write(self._canvas.buffer_rgba())
        if png is None:
            return False
        self._png = png
        self.encodes += 1
        return True

    def redraw(self, state=None) -> None:
        """Render the figure again, with its artists as they are now.

        ``state``: a hashable naming the state of the figure's static part, for a lab whose
        static part takes a few states (``None``: any static change is a full draw). The lab
        must pass a new state whenever it changes a static artist (limits, ticks, labels)."""
        if (self._render(state) and self._encode()) or not self.image.value:
            self._show_size()
            self.image.value = b"data:image/png;base64," + base64.b64encode(self._png)
        self.renders += 1

    # ---------------------------------------------------------------- the width shown

    def _on_size(self, change) -> None:
        """The page wrote "width height ratio" (CSS px, and device pixels per CSS px) into the
        size box: draw for that size."""
        size = read_size(change["new"])
        if size is not None:           # not a size: nothing the learner wrote, nothing to say
            self.fit(*size)

    def fit(self, width: float, height: float | None = None, ratio: float = 1.0) -> None:
        """Draw the figure for a box ``width`` CSS px wide, with room for ``height`` px of it
        in one screen (None: as tall as it needs), on a screen of ``ratio`` device pixels per
        CSS px. As wide as the design or wider: the design. Narrower: the figure is laid out
        again for that width at one figure pixel per CSS pixel (its text keeps its size), each
        axes kept readable. On a sharp screen it is then drawn with more pixels per CSS px
        (:meth:`sharpness`); the image is shown at the CSS size. A redraw follows."""
        design_width = self._design.pixels(self.base_dpi)[0]
        width = int(max(width, NARROWEST))
        size = None if width >= design_width else (width, None if height is None else int(height))
        if size == self._size and ratio == self._ratio:
            return
        if size != self._size:
            self.figure.set_dpi(self.base_dpi)          # laid out in CSS px
            self._design.lay_out(self.figure, self.base_dpi, *(size or (None, None)))
            self._size = size
        self._ratio = ratio
        self.dpi = self.base_dpi * self.sharpness(ratio)
        self._forget()
        self._drawn.clear()
        self.redraw(self._state)

    def sharpness(self, ratio: float) -> float:
        """Figure pixels per CSS px on a screen of ``ratio`` device pixels per CSS px
        (:func:`engine.kit.figure_layout.sharpness`): an update draws and sends no more than at 1x."""
        design = float(np.prod(self._design.pixels(self.base_dpi)))
        shown = float(np.prod(self.figure.get_size_inches())) * self.base_dpi ** 2
        return sharpness(ratio, design, shown)

    def _show_size(self) -> None:
        """The image's width and height, in CSS px (the PNG's, divided by the figure pixels per
        CSS px), and its smallest text, in tenths of a figure pixel."""
        height, width = self._writer.pixels.shape[:2]
        scale = self.dpi / self.base_dpi
        across, down = int(width / scale + 0.5), int(height / scale + 0.5)     # whole CSS px
        shown = (str(across), str(down))
        if (self.image.width, self.image.height) != shown:
            self.image.width, self.image.height = shown
        label = f"course-figure-text-{int(self._smallest_text() * self.dpi / 72 * 10)}"
        if label not in self.image._dom_classes:
            self.image._dom_classes = tuple(c for c in self.image._dom_classes
                                            if not c.startswith("course-figure-text-")) + (label,)

    def _smallest_text(self) -> float:
        """``smallest_text(self.figure)``, kept for each background (each static state) and
        looked for again only when a changing text's size or showing changed: walking every tick
        label of the figure takes as long as a blit."""
        from matplotlib.text import Text

        texts = tuple((t.get_fontsize(), bool(t.get_visible() and t.get_text().strip()))
                      for artist in self._changing for t in artist.findobj(Text))
        known = self._smallest.get(id(self._background))
        if known is None or known[0] is not self._background or known[1] != texts:
            kept = [self._background] + [known[0] for known in self._states.values()]
            self._smallest = {key: entry for key, entry in self._smallest.items()     # none kept alive
                              if any(entry[0] is background for background in kept)}
            known = self._smallest[id(self._background)] = (self._background, texts, smallest_text(self.figure))
        return known[2]

    def _plain_draw(self):
        """Draw the figure as matplotlib draws it without blitting, every artist, changing or
        not, in its turn; returns the canvas."""
        canvas = self._agg()
        for artist in self._changing:
            artist.set_animated(False)
        try:
            canvas.draw()
        finally:
            for artist in self._changing:
                artist.set_animated(True)
            self.figure.stale = False
        return canvas

    def full_draw_pixels(self):
        """The RGBA pixels of a plain full draw of the figure now: every artist, changing or
        not, drawn in its turn by matplotlib as if there were no blitting. The picture on show
        is left as it is (the next redraw restores the background)."""
        return np.asarray(self._plain_draw().buffer_rgba()).copy()

    @property
    def png(self) -> bytes:
        """The PNG on show (the image widget holds it as a ``data:`` URL)."""
        return self._png

    def pixels(self):
        """The RGBA pixels on show, (height, width, 4)."""
        return self._writer.pixels
