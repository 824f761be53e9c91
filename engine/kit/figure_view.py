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
without PNG's per-row filters and at zlib level 1: for flat-coloured plots that is both the
smallest and by far the fastest of the settings measured (``benchmarks/NOTES.md``). Its rows
are compressed in bands, and only the bands whose pixels changed are compressed again
(:class:`PngWriter`).

**Shown at once.** The image widget receives the PNG as a ``data:`` URL (``format="url"``)
rather than as raw bytes: for raw bytes the page makes a blob URL, which the browser fetches
through its network layer before decoding, while a ``data:`` URL is decoded in the page
straight away. The base64 text is a third larger; in Chromium the plot still reaches the
screen sooner (``benchmarks/NOTES.md``). :attr:`FigureView.png` is the PNG itself.

**Drawn for the width shown.** A lab designs its figure for 640 px (6.4 inches at 100 dpi). The
page tells the view how wide the figure is shown, and how tall it may be for the lab's first
control and the plot to fit one screen (``engine/presentation/access.js`` measures the lab and writes
"width height" in CSS px into a hidden text box of the view, :attr:`FigureView.size_box`).
Narrower than the design, :meth:`FigureView.fit` draws the figure at that width with one figure
pixel per CSS pixel, so its text keeps its size (8 pt is 11 CSS px): the panels are laid out
again by matplotlib's ``tight_layout``, side-by-side panels go one under the other below
:data:`STACK_BELOW` of the design's width, titles wrap and legends go to one column when they do
not fit (one outside its axes goes inside them, where it covers least). The model and the
lab's artists are untouched; the cached backgrounds are dropped, so
the redraw after a resize is a full draw and the updates after it are blits again. The image's
``width`` and ``height`` are the PNG's, and its class ``course-figure-text-N`` gives its smallest
text in tenths of a figure pixel (``course-figure-text-111``: 11.1 px), which a test measures
against the width the plot is shown at.

Importing this module imports neither matplotlib nor ipywidgets (the helpers import what they
use), so a lab's model can be imported and tested without them.
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from functools import lru_cache
from types import MethodType

import numpy as np

from engine.presentation.numbers import power_of_ten

# Okabe-Ito palette: distinguishable with the common colour-vision deficiencies.
OKABE_ITO = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}

PNG_COMPRESS_LEVEL = 1       # zlib level: fastest, and plots are mostly flat colour
PNG_BAND = 16                # rows of a PNG compressed together (only changed bands again)
CHANGING_ZORDER = 100        # added to a changing artist's zorder: drawn above the static ones
MARGIN = 2                   # pixels around a changing artist's extent (antialiasing)
DIRTY_SHARE = 0.6            # a changed part larger than this share of the figure: redraw it all
STACK_BELOW = 0.7            # shown narrower than this share of the design: panels one under another
NARROW_HEIGHT = 0.8          # a figure shown narrower than its design: this share of its height...
PANEL_HEIGHT = 0.7           # ...or, panels stacked, this share of it per panel
LOWEST = 120                 # pixels: no panel is made lower than this to fit a screen
NARROWEST = 200              # pixels: no figure is drawn narrower (a narrower box scales it down)
READABLE_AXES = 100          # CSS px: a figure laid out again grows until each axes is this high...
FLATTEST = 4.0               # ...and no axes is wider than this many times its height
LAYOUT_PASSES = 8            # lay out again while wrapped texts or grown panels move things
GROWTH = 2.0                 # a figure grows by at most twice its height for its panels to be readable
TICK_GAP = 3                 # CSS px between two tick labels of an axis; closer, every other one goes
SHARPEST = 2.0               # a screen with more device pixels per CSS px gets the figure at most 2x...
PIXEL_BUDGET = 1.0           # ...and never with more pixels than the design has (an update costs no more)


def new_figure(width: float = 6.4, height: float = 3.2):
    """A figure not managed by pyplot, white background (readable in light and dark themes)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), facecolor="white")
    return fig


def set_changed(artist, **properties) -> None:
    """Set those of ``properties`` (as ``artist.set`` takes them) that differ from the artist's own.

    matplotlib marks an artist as changed on every ``set_height`` or ``set_facecolor``, even to
    the value it has, and the view redraws every artist marked changed. A control that moves
    one bar of twenty then redraws that bar alone:

        for bar, h in zip(bars, heights): set_changed(bar, height=h, facecolor=colour)
    """
    from matplotlib.colors import same_color

    new = {}
    for name, value in properties.items():
        now = getattr(artist, f"get_{name}")()
        same = same_color(now, value) if name.endswith("color") else np.array_equal(now, value)
        if not same:
            new[name] = value
    if new:
        artist.set(**new)


def decades(axis, low: int, high: int, label_every: int = 1) -> None:
    """A fixed log scale on ``axis`` (ax.xaxis or ax.yaxis) from 10**low to 10**high: a tick and
    a grid line at every power of ten, so each is ten times the one below, a label on every
    ``label_every``-th; no minor ticks. The limits and ticks never change afterwards, so the
    axis is drawn once into the view's background."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    ax = axis.axes
    (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log")
    exponents = range(int(low), int(high) + 1)
    axis.set_major_locator(FixedLocator([10.0 ** e for e in exponents]))
    axis.set_major_formatter(FixedFormatter([power_of_ten(e) if (e - low) % label_every == 0 else ""
                                             for e in exponents]))
    axis.set_minor_locator(NullLocator())
    (ax.set_xlim if axis is ax.xaxis else ax.set_ylim)(10.0 ** low, 10.0 ** high)


def whole_ticks(axis, low: int, high: int, most: int = 9) -> None:
    """Fixed whole-number ticks on ``axis`` from ``low`` to ``high``: every 1, 2, 5, 10, 20...
    so that at most ``most`` show (counts are never ticked 2.5 or 0.5)."""
    span = max(int(high) - int(low), 1)
    step = next(s * 10 ** k for k in range(8) for s in (1, 2, 5) if span / (s * 10 ** k) < most)
    first = -(-int(low) // step) * step
    axis.set_ticks(range(first, int(high) + 1, step))


def set_limits(ax, x=None, y=None) -> None:
    """Set an axes' limits where they differ from the present ones. Setting a limit, even to
    the same value, marks the figure changed and costs a full draw."""
    if x is not None and tuple(ax.get_xlim()) != (float(x[0]), float(x[1])):
        ax.set_xlim(*x)
    if y is not None and tuple(ax.get_ylim()) != (float(y[0]), float(y[1])):
        ax.set_ylim(*y)


class Bars:
    """Vertical bars drawn as one collection of shapes (a matplotlib ``PolyCollection``).
    ``ax.bar`` makes one patch per bar and matplotlib draws each on its own, a quarter of a
    millisecond apiece here; a collection is drawn in one call, so a redraw that must draw
    twenty bars again draws one artist. Give :attr:`artist` to the view as changing (and to a
    legend: pass ``label``); set the heights, and the colours, with :meth:`set`.

        bars = Bars(ax, range(24), width=0.7, facecolor="#56B4E9")
        bars.set(heights)                 # bars for the first len(heights) places
    """

    def __init__(self, ax, x, width: float = 0.8, **style):
        from matplotlib.collections import PolyCollection

        self.x = np.asarray(x, dtype=float)
        self.width = float(width)
        self.heights = np.zeros(0)
        self.artist = PolyCollection([], **style)
        ax.add_collection(self.artist, autolim=False)
        half = self.width / 2            # the places' extent across, as ax.bar would take it
        ax.update_datalim([(self.x.min() - half, 0.0), (self.x.max() + half, 0.0)], updatey=False)
        ax.autoscale_view(scaley=False)
        self._shown = None

    def set(self, heights, colours=None) -> None:
        """Bars of ``heights`` at the first ``len(heights)`` places (the others, and a height that
        is NaN, show no bar) and, if given, one colour for each. Nothing is marked changed when
        nothing differs."""
        heights = np.asarray(heights, dtype=float)
        present = np.isfinite(heights)                      # a NaN height: no bar
        x, tops = self.x[:len(heights)][present], heights[present]
        left, right, base = x - self.width / 2, x + self.width / 2, np.zeros_like(x)
        corners = np.stack([np.stack(corner, axis=-1) for corner in
                            ((left, base), (left, tops), (right, tops), (right, base))], axis=1)
        colours = None if colours is None else [c for c, keep in zip(colours, present) if keep]
        shown = (corners, None if colours is None else tuple(colours))
        if (self._shown is not None and np.array_equal(self._shown[0], corners, equal_nan=True)
                and self._shown[1] == shown[1]):
            return
        self.artist.set_verts(corners)
        if colours is not None:
            self.artist.set_facecolor(list(colours))
        self.heights, self._shown = heights, shown

    def boxes(self):
        """Each bar's box on the figure, in pixels (matplotlib Bboxes), as it is drawn now."""
        from matplotlib.transforms import Bbox

        to_pixels = self.artist.get_transform()
        return [Bbox.from_extents(*np.min(corners, axis=0), *np.max(corners, axis=0))
                for corners in (to_pixels.transform(path.vertices[:4]) for path in self.artist.get_paths())]


def cell_grid(ax, data, **colour):
    """A grid of coloured cells for ``data`` (rows, columns), laid out as ``imshow`` lays out an
    image (cell (i, j) centred on (j, i), the first row at the top) but drawn as a mesh of
    shapes: a few hundred cells are drawn far faster as shapes than as an image resampled to the
    screen's pixels. ``colour`` goes to ``pcolormesh`` (cmap, norm, vmin, vmax). Change the
    numbers with :func:`set_cells`."""
    rows, columns = np.shape(data)
    mesh = ax.pcolormesh(np.arange(columns + 1) - 0.5, np.arange(rows + 1) - 0.5, data, **colour)
    ax.set_xlim(-0.5, columns - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    return mesh


def set_cells(mesh, data) -> None:
    """New numbers for a :func:`cell_grid` of the same shape (a mesh's new numbers do not mark
    it as changed by themselves)."""
    mesh.set_array(data)
    mesh.changed()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _adler32_combine(first: int, second: int, second_length: int) -> int:
    """The Adler-32 checksum of two pieces of data one after the other, from each piece's own
    (as zlib's ``adler32_combine``, which Python's zlib does not offer)."""
    base = 65521
    rest = second_length % base
    low = ((first & 0xFFFF) + (second & 0xFFFF) + base - 1) % base
    high = (rest * (first & 0xFFFF) + (first >> 16) + (second >> 16) + base - rest) % base
    return low | (high << 16)


class PngWriter:
    """PNGs of successive pictures of one figure, compressing again only what changed.

    Each row is stored unfiltered (PNG filter type 0) and compressed with zlib: a plot is mostly
    long runs of one colour, which zlib finds without a filter's help. The rows are compressed in
    bands of :data:`PNG_BAND` rows, each by a fresh compressor and ending on a whole byte (a
    *sync flush*), so a band's compressed bytes depend on that band alone: a picture that differs
    from the last one in a few bands compresses those bands and reuses the others' bytes. The
    pixels are written as they are drawn, RGBA: leaving out an opaque alpha channel takes a copy
    that costs more than compressing it (it compresses to almost nothing).
    """

    def __init__(self, compress_level: int = PNG_COMPRESS_LEVEL, band: int = PNG_BAND):
        self.level, self.band = compress_level, band
        self.pixels = None           # (height, width, 4) uint8: a copy of the pixels last written
        self._rows = None            # (height, 1 + width * 4): each row's filter byte and pixels
        self._bands = []             # [(compressed bytes, Adler-32, length)] of each band

    def write(self, rgba) -> bytes | None:
        """The PNG of ``rgba``, (height, width, 4) uint8; None if it equals the last one written."""
        rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
        height, width = rgba.shape[:2]
        if self.pixels is None or self.pixels.shape != rgba.shape:     # a first picture, or another size
            self.pixels = np.empty_like(rgba)
            self._rows = np.zeros((height, 1 + width * 4), dtype=np.uint8)        # filter 0 on each row
            self._bands = [None] * -(-height // self.band)
            changed = range(len(self._bands))
        else:
            changed = self._changed_bands(rgba)
        if not changed:
            return None
        for index in changed:
            rows = slice(index * self.band, (index + 1) * self.band)
            self.pixels[rows] = rgba[rows]
            self._rows[rows, 1:] = rgba[rows].reshape(-1, width * 4)
            data = self._rows[rows].data
            compressor = zlib.compressobj(self.level, zlib.DEFLATED, -15)        # raw deflate
            self._bands[index] = (compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH),
                                  zlib.adler32(data), data.nbytes)
        checksum = 1                                                    # Adler-32 of nothing
        for _data, adler, length in self._bands:
            checksum = _adler32_combine(checksum, adler, length)
        stream = (b"\x78\x01" + b"".join(data for data, _a, _l in self._bands)
                  + b"\x03\x00" + struct.pack(">I", checksum))        # header, bands, last block, sum
        header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)    # 8 bits, RGBA
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", stream)
                + _chunk(b"IEND", b""))

    def _changed_bands(self, rgba) -> list:
        """The indices of the bands whose pixels differ from those last written (of the same size)."""
        height, width = rgba.shape[:2]
        count = len(self._bands)
        rows = np.any(rgba.view(np.uint32).reshape(height, width) != self.pixels.view(np.uint32).reshape(height, width),
                      axis=1)
        padded = np.zeros(count * self.band, dtype=bool)
        padded[:height] = rows
        return np.flatnonzero(padded.reshape(count, self.band).any(axis=1)).tolist()


def encode_png(rgba, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """PNG bytes of an (height, width, 4) uint8 RGBA array."""
    return PngWriter(compress_level).write(rgba)


# ---------------------------------------------------------------- text drawn once

TEXT_IMAGES_KEPT = 4096      # texts whose pixels are kept (a few kB each)
_text_images = {}            # (text, font, size, dpi, settings) -> (its pixels, descent, offsets)


@lru_cache(maxsize=1)
def _canvas_class():
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
    """``RendererAgg.draw_text`` with each text's image rasterised once (:func:`_canvas_class`)."""
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


def _drawn_whole(artist) -> bool:
    """True for an image in an axes: a redraw of part of the figure draws it whole (its pixels
    are resampled for the whole of it), so that part must hold it."""
    from matplotlib.image import AxesImage

    return isinstance(artist, AxesImage)


def _pixel_bounds(box, width: int, height: int) -> tuple:
    """The whole pixels (x0, y0, x1, y1) a matplotlib Bbox may paint, with MARGIN around it for
    antialiasing, within a figure ``width`` x ``height`` pixels."""
    x0, y0, x1, y1 = box.padded(MARGIN).extents
    if not np.all(np.isfinite([x0, y0, x1, y1])):
        return (0, 0, width, height)
    return (max(int(np.floor(x0)), 0), max(int(np.floor(y0)), 0), min(int(np.ceil(x1)), width),
            min(int(np.ceil(y1)), height))


def _overlap(a, b) -> bool:
    """True if pixel bounds a and b, (x0, y0, x1, y1) with x1 and y1 excluded, share a pixel."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _holding(box, others):
    """The smallest bounds holding ``box`` and each of ``others``."""
    for other in others:
        box = (min(box[0], other[0]), min(box[1], other[1]), max(box[2], other[2]), max(box[3], other[3]))
    return box


def _joined(boxes) -> list:
    """The boxes with any that overlap replaced by the bounds holding them, until none overlap."""
    parts = []
    for box in boxes:
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        while True:
            touching = [part for part in parts if _overlap(part, box)]
            if not touching:
                break
            parts = [part for part in parts if not _overlap(part, box)]
            box = _holding(box, touching)
        parts.append(box)
    return parts


def _colorbar_of(ax):
    """The axes a colorbar axes belongs to (the axes of the picture it keys), or None."""
    colorbar = getattr(ax, "_colorbar", None)
    return getattr(getattr(colorbar, "mappable", None), "axes", None)


def _flatten(artists) -> list:
    """Artists, with containers (what ``ax.bar`` returns, lists of texts) opened up."""
    from matplotlib.artist import Artist

    out = []
    for item in artists:
        if isinstance(item, Artist):
            out.append(item)
        elif item is not None:
            out.extend(_flatten(item))
    return out


def smallest_text(figure) -> float:
    """The size in points of the smallest text ``figure`` shows (tick labels included)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=0.0)


@lru_cache(maxsize=1)
def _thinned_class():
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


class _Design:
    """A figure's layout as the lab made it, and the same figure laid out again for a width.

    Kept: the figure's size, each axes' place in its grid and its position, each title's
    wrapping and each legend's columns, labels and place, so the design is restored exactly."""

    def __init__(self, figure):
        self.size = tuple(figure.get_size_inches())
        self.axes = [(ax, ax.get_subplotspec(), ax.get_position(original=True)) for ax in figure.axes]
        self.titles = self._titles(figure)
        self.wraps = [t.get_wrap() for t in self.titles]
        self.legends = [(legend, legend._ncols, list(legend.legend_handles), [t.get_text() for t in legend.texts],
                         legend._loc, legend._bbox_to_anchor) for legend in self._legends(figure)]
        # Each legend's own box as the lab made it: put back as it is (a box made again from the
        # legend's handles is not the same: they are the legend's copies of the lab's artists).
        self.boxes = [(legend._legend_box, legend.texts, legend.legend_handles, legend._ncols)
                      for legend in self._legends(figure)]
        self.thinned = []            # [(axis, its own formatter)] of the axes whose labels were thinned
        self.relabelled = []         # [(label, its own text)] of the labels wrapped onto more lines

    @staticmethod
    def _titles(figure):
        out = [figure._suptitle] if figure._suptitle is not None else []
        for ax in figure.axes:
            out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label]
        return out

    @staticmethod
    def _inside_texts(figure) -> list:
        """The texts a lab placed inside an axes, in the axes' own fractions (a note in a corner).
        Laid out with the axes, one wider than the narrowed axes would push them ever narrower."""
        return [text for ax in figure.axes for text in ax.texts
                if text.get_transform() is ax.transAxes and 0 <= text.get_position()[0] <= 1
                and 0 <= text.get_position()[1] <= 1]

    @staticmethod
    def _legends(figure):
        return list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]

    def pixels(self, dpi):
        return self.size[0] * dpi, self.size[1] * dpi

    def _restore(self, figure):
        figure.set_size_inches(*self.size)
        for ax, spec, position in self.axes:
            if spec is not None:
                ax.set_subplotspec(spec)
            ax._set_position(position)              # set_position would take it out of any layout
        for title, wrap in zip(self.titles, self.wraps):
            title.set_wrap(wrap)
        for (legend, _columns, _handles, _labels, loc, anchor), (box, texts, handles, columns) in zip(
                self.legends, self.boxes):
            # The anchor kept is the legend's own, already in display units: set_bbox_to_anchor
            # would transform it a second time (and fly the legend off the figure).
            legend._bbox_to_anchor = anchor
            legend._legend_box, legend.texts, legend.legend_handles, legend._ncols = box, texts, handles, columns
            legend._set_loc(loc)
            legend.stale = True
        for axis, formatter in self.thinned:
            if isinstance(axis.get_major_formatter(), _thinned_class()):
                axis.set_major_formatter(formatter)
        self.thinned = []
        for label, text in self.relabelled:
            label.set_text(text)
        self.relabelled = []
        for legend in self._legends(figure):
            legend.set_in_layout(True)
        for text in self._inside_texts(figure):
            text.set_in_layout(True)

    @staticmethod
    def _remake(legend, columns, handles, labels):
        """Lay ``legend`` out again in ``columns`` columns with ``labels`` (matplotlib lays a
        legend out once, when it is made: its box is made anew from the same handles)."""
        if legend._ncols != columns or [t.get_text() for t in legend.texts] != list(labels):
            legend.set_ncols(columns)
            legend._init_legend_box(handles, labels)
            legend._set_loc(legend._loc)           # the new box placed where the old one was
            legend.stale = True

    def _fit_legends(self, figure, width, renderer, under=False) -> list:
        """Each legend within its axes (one outside them, beside, above or below, goes inside,
        where it covers least) or, a figure's own, within the figure: in one column if it is
        too wide, then with its labels wrapped. ``under``: an axes' legend goes under the axes
        and its labels instead (on a phone an axes has no room to spare for a legend over its
        data and texts). Returns the legends moved inside their axes."""
        import textwrap

        moved = []
        for legend, columns, handles, labels, _loc, anchor in self.legends:
            ax = legend.axes if legend.parent is not figure else None
            if ax is not None and anchor is not None and not under:
                box = anchor.transformed(ax.transAxes.inverted())
                if box.x0 >= 0.99 or box.y0 >= 0.99 or box.x1 < 0 or box.y1 < 0:   # outside the axes
                    legend.set_bbox_to_anchor(None)
                    legend._set_loc(0)                          # "best"
                    moved.append(legend)
            fit = 0.95 * (width if ax is None else min(width, ax.bbox.width))
            if legend.get_window_extent(renderer).width > fit:
                self._remake(legend, 1, handles, labels)
            wide = legend.get_window_extent(renderer).width
            if wide > fit:
                longest = max((len(label) for label in labels), default=1)
                chars = max(int(longest * fit / wide) - 1, 8)
                self._remake(legend, 1, handles, [textwrap.fill(label, chars) for label in labels])
            if ax is not None and under:
                self._put_under(legend, ax, renderer)
        return moved

    @staticmethod
    def _put_under(legend, ax, renderer) -> None:
        """Place an axes' legend centred under the axes, its tick labels and its x label, and
        have the layout make room for it."""
        from matplotlib.transforms import offset_copy

        legend.set_in_layout(False)
        below = ax.bbox.y0 - ax.get_tightbbox(renderer).y0      # the axes' labels, the legend left out
        points = below / renderer.points_to_pixels(1.0) + 3
        # So many points under the axes' bottom edge: the place holds as the layout resizes the axes.
        legend.set_bbox_to_anchor((0.5, 0.0), transform=offset_copy(ax.transAxes, fig=ax.get_figure(root=True),
                                                                     y=-points, units="points"))
        legend._set_loc(9)                                      # "upper center"
        legend.set_in_layout(True)

    @staticmethod
    def _keep_where_best(legends, renderer):
        """Fix each legend where matplotlib's "best" puts it now. "Best" is worked out again at
        every draw from what the axes show, changing artists included; a blit draws the legend
        only with the background, so its place must not move with the data."""
        for legend in legends:
            box, within = legend.get_window_extent(renderer), legend.get_bbox_to_anchor()
            legend._set_loc(((box.x0 - within.x0) / within.width, (box.y0 - within.y0) / within.height))

    def lay_out(self, figure, dpi, width=None, room=None):
        """The design (``width`` None), or the figure ``width`` px wide, at most ``room`` px tall
        if it can (each panel at least :data:`LOWEST`)."""
        import warnings

        from matplotlib.gridspec import GridSpec

        self._restore(figure)
        if width is None:
            return
        design_width, design_height = self.pixels(dpi)
        placed = sorted((a for a in self.axes if a[1] is not None),
                        key=lambda a: (a[1].rowspan.start, a[1].colspan.start))
        columns = max((spec.get_gridspec().ncols for _ax, spec, _p in placed), default=1)
        stacked = columns > 1 and width < STACK_BELOW * design_width
        if stacked:
            bars = {id(_colorbar_of(ax)): (ax, position) for ax, _s, position in placed if _colorbar_of(ax)}
            panels = [a for a in placed if _colorbar_of(a[0]) is None]
            grid = GridSpec(len(panels), 1, figure=figure)
            for row, (ax, _spec, position) in enumerate(panels):
                if id(ax) not in bars:
                    ax.set_subplotspec(grid[row])
                    continue
                bar, beside = bars[id(ax)]          # a colorbar stays beside its axes, as designed
                gap = max(beside.x0 - position.x1, 0.0) / ((position.width + beside.width) / 2)
                pair = grid[row].subgridspec(1, 2, width_ratios=[position.width, beside.width], wspace=gap)
                ax.set_subplotspec(pair[0])
                bar.set_subplotspec(pair[1])
            panels, height = len(panels), len(panels) * PANEL_HEIGHT * design_height
        else:
            panels, height = max(len(placed), 1) if columns == 1 else 1, NARROW_HEIGHT * design_height
            plain = {}
            for ax, spec, _position in placed:
                # tight_layout leaves a grid alone whose spacing the lab set (wspace=...): the same
                # grid without it, for tight_layout to space as the narrow figure needs.
                grid = spec.get_gridspec()
                if getattr(grid, "locally_modified_subplot_params", lambda: False)():
                    if id(grid) not in plain:
                        plain[id(grid)] = GridSpec(grid.nrows, grid.ncols, figure=figure,
                                                   width_ratios=grid.get_width_ratios(),
                                                   height_ratios=grid.get_height_ratios())
                    rows, cols = spec.rowspan, spec.colspan
                    ax.set_subplotspec(plain[id(grid)][rows.start:rows.stop, cols.start:cols.stop])
        if room is not None:
            height = max(min(height, room), LOWEST * panels)
        for title in self.titles:
            title.set_wrap(True)
        figure.set_size_inches(width / dpi, height / dpi)
        renderer = figure.canvas.get_renderer() if hasattr(figure.canvas, "get_renderer") else None
        if renderer is None:
            return
        under = width < STACK_BELOW * design_width   # a phone: legends under their axes
        for legend in self._legends(figure):
            if legend.parent is not figure:          # inside its axes: no room made for it
                legend.set_in_layout(False)
        for text in self._inside_texts(figure):       # a note inside an axes: no room made for it either
            text.set_in_layout(False)
        grown, designed = 0.0, height
        for _ in range(LAYOUT_PASSES):
            # A title or label wraps for the room its axes has, and the axes move as the layout
            # makes room for it: lay out again until nothing moves. A panel left too low or too
            # flat to read makes the figure taller (a readable plot before one that fits the
            # screen), as long as growing helps.
            before = [tuple(ax.get_position().bounds) for ax in figure.axes]
            moved = self._fit_legends(figure, width, renderer, under)
            self._wrap_side_labels(figure, renderer)
            texts = self._texts_laid_out(figure)
            bottom, top = self._figure_legend_room(figure, renderer, height)
            with warnings.catch_warnings(record=True) as refused:
                warnings.simplefilter("always")      # a layout that cannot be met is drawn as it comes
                figure.tight_layout(rect=(0, bottom, 1, 1 - top), h_pad=0.8 if stacked else None)
            # Nothing moved, and the texts made room for are those drawn: the layout has settled.
            # Only a settled layout is measured for growing (a pass from another width's layout
            # can leave a panel low for a moment: growing for it would stay).
            settled = self._texts_laid_out(figure) == texts and np.allclose(
                before, [tuple(ax.get_position().bounds) for ax in figure.axes], atol=1e-4)
            if not settled:
                continue
            # Only a layout that could not make room for everything leaves labels off the figure.
            short = self._too_low(figure) + (self._overflow(figure, renderer) if refused else 0.0)
            if short > 0.5 and grown < GROWTH * designed:
                height, grown = height + short, grown + short
                figure.set_size_inches(width / dpi, height / dpi)
                renderer = figure.canvas.get_renderer()
            else:
                break
        self._thin_ticks(figure, renderer)
        self._keep_where_best(moved, renderer)

    def _texts_laid_out(self, figure) -> tuple:
        """The figure's height and the lines its wrapped titles and labels break into where they
        stand now (they break for the room their axes give them)."""
        return (figure.bbox.height, tuple(title._get_wrapped_text() for title in self.titles),
                tuple(ax.yaxis.label.get_text() for ax in figure.axes))

    @staticmethod
    def _overflow(figure, renderer) -> float:
        """How many pixels of the axes and their labels lie above or below the figure (a layout
        that cannot make room for them all leaves them where they were)."""
        height = figure.bbox.height
        boxes = [ax.get_tightbbox(renderer) for ax in figure.axes if ax.get_visible()]
        boxes = [box for box in boxes if box is not None]
        if not boxes:
            return 0.0
        return max(0.0, -min(box.y0 for box in boxes)) + max(0.0, max(box.y1 for box in boxes) - height)

    def _wrap_side_labels(self, figure, renderer) -> None:
        """A y label longer than its axes is high (or will be: :data:`READABLE_AXES`) goes onto
        more lines (matplotlib wraps a turned text only at the figure's edge)."""
        import textwrap

        for ax in figure.axes:
            label = ax.yaxis.label
            known = next((kept for artist, kept in self.relabelled if artist is label), None)
            text = known if known is not None else label.get_text()
            if not text.strip() or "\n" in text:
                continue
            # The room the axes will have: at least READABLE_AXES (the layout grows it to that), so
            # that a panel squeezed on the way does not wrap its label ever narrower.
            room = max(ax.get_position().transformed(figure.transFigure).height, READABLE_AXES)
            label.set_text(text)
            long = label.get_window_extent(renderer).height
            if long <= room or room <= 0:
                continue
            chars = max(int(len(text) * room / long) - 1, 8)
            if known is None:
                self.relabelled.append((label, text))
            label.set_text(textwrap.fill(text, chars))

    @staticmethod
    def _rows(figure) -> dict:
        """{row of the figure's grid: its axes} for the axes placed in a grid (colorbars with
        their panel)."""
        rows = {}
        for ax in figure.axes:
            spec = ax.get_subplotspec()
            if spec is None or not ax.get_visible():
                continue
            rows.setdefault(spec.get_topmost_subplotspec().rowspan.start, []).append(ax)
        return rows

    def _too_low(self, figure) -> float:
        """How many pixels taller the figure must be for every axes to be at least
        :data:`READABLE_AXES` px high and no flatter than :data:`FLATTEST` (the rows' shortfalls
        added up; 0 when none falls short). An axes of a fixed aspect (a square plane) keeps its
        shape and counts with the box it is drawn in."""
        short = 0.0
        for axes in self._rows(figure).values():
            row = 0.0
            for ax in axes:
                if _colorbar_of(ax) is not None:
                    continue
                box = ax.get_position(original=True).transformed(figure.transFigure)
                width, height = box.width, box.height
                if ax.get_aspect() != "auto":
                    ax.apply_aspect()
                    width = ax.get_position().transformed(figure.transFigure).width
                need = max(READABLE_AXES, width / FLATTEST, height * self._crowding(ax))
                row = max(row, need - height)
            short += row
        return short

    @staticmethod
    def _crowding(ax) -> float:
        """How many times taller ``ax`` must be for the texts a lab placed in it one above
        another (a label on each row of a grid) to stop touching: they are placed at heights
        that grow with the axes, their sizes stay. 1 when none touch."""
        from matplotlib.colors import to_rgba

        renderer = ax.get_figure(root=True).canvas.get_renderer()
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()
                 and to_rgba(t.get_color(), t.get_alpha())[3] > 0]
        placed = [(t.get_window_extent(renderer), t.get_transform().transform(t.get_position())[1]) for t in texts]
        factor = 1.0
        for i, (a, ya) in enumerate(placed):
            for b, yb in placed[i + 1:]:
                apart = abs(ya - yb)
                if apart < 0.5 or not a.overlaps(b):
                    continue
                factor = max(factor, ((a.height + b.height) / 2 + TICK_GAP) / apart)
        return factor

    def _thin_ticks(self, figure, renderer) -> None:
        """An axis whose tick labels touch (closer than :data:`TICK_GAP`) labels every second
        tick, or every third...: the ticks stay, the labels between them go."""
        gap = TICK_GAP
        for ax in figure.axes:
            for axis, across in ((ax.xaxis, 0), (ax.yaxis, 1)):
                labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text().strip()]
                if len(labels) < 3:
                    continue
                boxes = [t.get_window_extent(renderer) for t in labels]
                spans = sorted(((b.x0, b.x1) if across == 0 else (b.y0, b.y1)) for b in boxes)
                if all(b[0] - a[1] >= gap for a, b in zip(spans, spans[1:])):
                    continue
                for step in (2, 3, 4, 5, 10):
                    kept = spans[::step]
                    if all(b[0] - a[1] >= gap for a, b in zip(kept, kept[1:])):
                        break
                self.thinned.append((axis, axis.get_major_formatter()))
                axis.set_major_formatter(_thinned_class()(axis.get_major_formatter(), step))

    def _figure_legend_room(self, figure, renderer, height):
        """The shares of the figure's height its own legends take at the bottom and at the top."""
        bottom = top = 0.0
        if renderer is None:
            return bottom, top
        for legend in figure.legends:
            share = (legend.get_window_extent(renderer).height + 4) / height
            anchor = legend.get_bbox_to_anchor().transformed(figure.transFigure.inverted())
            if anchor.y0 < 0.5:
                bottom = max(bottom, share)
            else:
                top = max(top, share)
        return min(bottom, 0.4), min(top, 0.4)


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
        self.changing(*_flatten(changing))
        self._design = _Design(figure)
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
        for artist in _flatten(artists):
            if any(artist is known for known in self._changing):
                continue
            artist.set_zorder(artist.get_zorder() + CHANGING_ZORDER)
            artist.set_animated(True)
            self._changing.append(artist)
        self._changing.sort(key=self._draw_order)
        self._forget()                               # the static part is now another one

    def _forget(self) -> None:
        self._background = None
        self._extents = {}
        self._states.clear()
        self._smallest.clear()

    def _draw_order(self, artist):
        """A key that sorts artists as a full draw paints them (figure children, then by zorder)."""
        axes = artist.axes
        figure_children = self.figure.get_children()
        if axes is None:
            return (1, artist.get_zorder(), 0, 0)
        rank = next((i for i, child in enumerate(sorted(figure_children, key=lambda a: a.get_zorder()))
                     if child is axes), 0)
        children = axes.get_children()
        index = next((i for i, child in enumerate(children) if child is artist), 0)
        return (0, rank, artist.get_zorder(), index)

    # ---------------------------------------------------------------- drawing

    def _agg(self):
        """The figure's Agg canvas (made once; it keeps its renderer between draws)."""
        if self._canvas is None or self.figure.canvas is not self._canvas:
            self._canvas = _canvas_class()(self.figure)
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
            parts = _joined([_pixel_bounds(box, width, height) for box in boxes])
            return parts, [child for child in order if child is changed or any(
                _overlap(_pixel_bounds(self._static_extent(child, renderer), width, height), part) for part in parts)]

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
        """The extent of what ``child``, drawn alone on the canvas, painted: the pixels that
        differ from the figure's own background, and its box (painted, maybe, in the figure's
        colour). Measuring what was drawn takes a millisecond; laying out its tick labels again
        to measure them takes as long as drawing them. ``blank``: :meth:`_blank`."""
        from matplotlib.transforms import Bbox

        pixels = np.asarray(self._canvas.buffer_rgba()).view(np.uint32)[..., 0]
        painted = pixels != blank
        box = child.get_window_extent(renderer)
        rows, columns = np.flatnonzero(painted.any(axis=1)), np.flatnonzero(painted.any(axis=0))
        if rows.size:
            height = pixels.shape[0]              # rows count from the top, extents from the bottom
            box = Bbox.union([box, Bbox.from_extents(columns[0], height - rows[-1] - 1, columns[-1] + 1,
                                                     height - rows[0])])
        return box

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
        """The pixels ``artist`` may paint now, as integer bounds (x0, y0, x1, y1) from the
        bottom left, or None if it paints nothing."""
        from matplotlib.image import AxesImage
        from matplotlib.text import Text

        if not artist.get_visible():
            return None
        clip = artist.get_clip_box() if artist.get_clip_on() else None
        if clip is not None or isinstance(artist, AxesImage):
            box = clip or self.figure.bbox     # clipped (bars, lines, images): its axes, quick to know
        else:
            try:
                box = self._window_extent(artist, renderer)
            except Exception:  # noqa: BLE001 - without an extent, assume the clip box or everything
                box = clip or self.figure.bbox
            if not isinstance(artist, Text):             # strokes and markers reach past the path
                width = getattr(artist, "get_linewidth", lambda: 0)()
                width = max(np.atleast_1d(width)) if np.size(width) else 0
                marker = getattr(artist, "get_markersize", lambda: 0)()
                box = box.padded(renderer.points_to_pixels(float(width) + float(marker)))
        x0, y0, x1, y1 = box.padded(MARGIN).extents
        if not np.all(np.isfinite([x0, y0, x1, y1])):
            return (0, 0, int(self.figure.bbox.width), int(self.figure.bbox.height))
        return (int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))

    def _dirty(self, fresh):
        """The parts of the figure the changed artists painted last time or paint now, as a
        list of bounds (x0, y0, x1, y1) that do not overlap, or None when they cover most of the
        figure. Each changed artist's bounds, before and now, are one part; overlapping parts are
        joined; a part an image overlaps grows to hold it whole (an image is drawn whole).
        fresh: {id(artist): bounds} of each changed artist now (``_box``)."""
        width, height = int(self.figure.bbox.width), int(self.figure.bbox.height)
        boxes = [self._drawn.get(key) for key in fresh] + list(fresh.values())
        parts = _joined([(max(b[0], 0), max(b[1], 0), min(b[2], width), min(b[3], height))
                         for b in boxes if b is not None])
        images = [box for artist in self._changing
                  if _drawn_whole(artist) and (box := self._drawn.get(id(artist)))]
        while True:                   # parts only grow: this ends
            grown = _joined([_holding(part, [image for image in images if _overlap(part, image)])
                             for part in parts])
            if grown == parts:
                break
            parts = grown
        if sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in parts) > DIRTY_SHARE * width * height:
            return None
        return parts

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
                if box is not None and _overlap(box, (x0, y0, x1, y1)):
                    self._draw_within(artist, region, renderer)
        self._drawn.update(fresh)
        for artist in self._changing:
            artist.stale = False
        self.figure.stale = False

    @staticmethod
    def _draw_within(artist, region, renderer) -> None:
        """Draw ``artist`` with its clip box narrowed to ``region`` (an image is drawn whole:
        the part holds it)."""
        from matplotlib.transforms import Bbox

        if _drawn_whole(artist):
            artist.draw(renderer)
            return
        clip_on, clip = artist.get_clip_on(), artist.get_clip_box()
        inside = region if not clip_on or clip is None else Bbox.intersection(clip, region)
        if inside is None:
            return
        artist.set_clip_box(inside)
        artist.set_clip_on(True)
        try:
            artist.draw(renderer)
        finally:
            artist.set_clip_box(clip)
            artist.set_clip_on(clip_on)

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
        parts = str(change["new"]).split()
        try:
            numbers = [float(p) for p in parts[:3]]
            width = numbers[0]
        except (ValueError, IndexError):
            return                     # not a size: nothing the learner wrote, nothing to say
        height = numbers[1] if len(numbers) > 1 else None
        ratio = numbers[2] if len(numbers) > 2 and math.isfinite(numbers[2]) else 1.0
        self.fit(width, height, ratio)

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
        """Figure pixels per CSS px on a screen of ``ratio`` device pixels per CSS px: the ratio,
        in quarters, at most :data:`SHARPEST`, and less where the figure would have more pixels
        than its design (:data:`PIXEL_BUDGET`): an update draws and sends no more than at 1x."""
        design = float(np.prod(self._design.pixels(self.base_dpi)))
        shown = float(np.prod(self.figure.get_size_inches())) * self.base_dpi ** 2
        most = math.sqrt(PIXEL_BUDGET * design / shown) if shown else 1.0
        return max(1.0, math.floor(4 * min(ratio, SHARPEST, most)) / 4)

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
