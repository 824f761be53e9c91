"""What a lab builds its figure from: the colours, a figure of its own, and the small helpers that
set an artist, an axis or a grid of cells without marking anything changed that did not change.

The view (:mod:`engine.kit.figure_view`) draws again, on every redraw, the artists matplotlib
marks as changed, and draws the whole figure again when a static artist (an axis's limits or
ticks) changed: these helpers set only what differs, and give a lab the few axes it needs
(a log scale in decades, whole-number ticks) fixed once, so they are drawn once.

Importing this module imports no matplotlib (each helper imports what it uses).
"""

from __future__ import annotations

import numpy as np

from engine.presentation.numbers import power_of_ten

# Okabe-Ito palette: distinguishable with the common colour-vision deficiencies.
OKABE_ITO = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}


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


def smallest_text(figure) -> float:
    """The size in points of the smallest text ``figure`` shows (tick labels included)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=0.0)


def flatten(artists) -> list:
    """Artists, with containers (what ``ax.bar`` returns, lists of texts) opened up."""
    from matplotlib.artist import Artist

    out = []
    for item in artists:
        if isinstance(item, Artist):
            out.append(item)
        elif item is not None:
            out.extend(flatten(item))
    return out
