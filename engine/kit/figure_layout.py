"""A figure laid out again for the width it is shown at, and put back as the lab designed it.

A lab designs its figure for 640 px (6.4 inches at 100 dpi). The page tells the view how wide
the figure is shown, and how tall it may be for the lab's first control and the plot to fit one
screen (``engine/presentation/access.js`` measures the lab and writes "width height ratio" into
a hidden text box of the view). Narrower than the design, the figure is drawn at that width with
one figure pixel per CSS pixel, so its text keeps its size (8 pt is 11 CSS px): :class:`Design`
lays the panels out again with matplotlib's ``tight_layout``; side-by-side panels go one under
the other below :data:`STACK_BELOW` of the design's width, titles and long y labels wrap,
legends go to one column when they do not fit (one outside its axes goes inside them, where it
covers least; on a phone, or where it would lie over the data, under them), tick labels of
numbers that touch are thinned (words under bars wrap onto lines or stand on end, every bar
keeps its name: :mod:`engine.kit.tick_labels`), and a panel left too
low or too flat to read makes the figure taller. The model and the lab's artists are untouched,
and the design is restored exactly when the figure is shown wide again. On a sharp screen the
figure is drawn with more pixels per CSS px (:func:`sharpness`).

Importing this module imports no matplotlib (each function imports what it uses).
"""

from __future__ import annotations

import math

import numpy as np

from .tick_labels import category_formatter, thinned_class, wrapped_class

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


def read_size(text: str):
    """``(width, height, ratio)`` from the "width height ratio" the page writes (CSS px, and
    device pixels per CSS px; height None and ratio 1 when left out), or None if ``text`` is
    not a size."""
    parts = str(text).split()
    try:
        numbers = [float(p) for p in parts[:3]]
        width = numbers[0]
    except (ValueError, IndexError):
        return None
    height = numbers[1] if len(numbers) > 1 else None
    ratio = numbers[2] if len(numbers) > 2 and math.isfinite(numbers[2]) else 1.0
    return width, height, ratio


def sharpness(ratio: float, design: float, shown: float) -> float:
    """Figure pixels per CSS px on a screen of ``ratio`` device pixels per CSS px, for a figure
    of ``shown`` pixels whose design has ``design`` (both at one figure pixel per CSS px): the
    ratio, in quarters, at most :data:`SHARPEST`, and less where the figure would have more
    pixels than its design (:data:`PIXEL_BUDGET`): an update draws and sends no more than at 1x."""
    most = math.sqrt(PIXEL_BUDGET * design / shown) if shown else 1.0
    return max(1.0, math.floor(4 * min(ratio, SHARPEST, most)) / 4)


def colorbar_of(ax):
    """The axes a colorbar axes belongs to (the axes of the picture it keys), or None."""
    colorbar = getattr(ax, "_colorbar", None)
    return getattr(getattr(colorbar, "mappable", None), "axes", None)


def covers_data(legend, renderer) -> bool:
    """Whether an axes' ``legend`` lies over its data: a point of a line or of its segments, a
    marker, or a bar (lines drawn across the whole axes, a grid or a mark at 0, do not count)."""
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox

    ax = legend.axes
    box = Bbox.intersection(legend.get_window_extent(renderer).padded(-1), ax.bbox)   # data is drawn within the axes
    if box is None:
        return False
    for line in ax.get_lines():
        if not isinstance(line, Line2D) or not line.get_visible() or line.get_transform() != ax.transData:
            continue
        points = np.asarray(line.get_xydata(), dtype=float)
        points = points[np.all(np.isfinite(points), axis=1)]
        if not len(points):
            continue
        if line.get_linestyle() not in ("None", "none", "", " ") and len(points) > 1:
            t = np.linspace(0, 1, 16)[:, None, None]                   # along each segment
            points = (points[:-1] * (1 - t) + points[1:] * t).reshape(-1, 2)
        shown = ax.transData.transform(points)
        if np.any((shown[:, 0] > box.x0) & (shown[:, 0] < box.x1) & (shown[:, 1] > box.y0) & (shown[:, 1] < box.y1)):
            return True
    shapes = [patch.get_window_extent(renderer) for patch in ax.patches
              if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_height() != 0]
    for collection in ax.collections:           # bars drawn as one collection of shapes, points
        if not collection.get_visible() or collection.get_transform() != ax.transData:
            continue
        if isinstance(collection, PolyCollection):
            shapes += [Bbox.from_extents(*ax.transData.transform(path.vertices).min(axis=0),
                                         *ax.transData.transform(path.vertices).max(axis=0))
                       for path in collection.get_paths() if len(path.vertices)]
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_visible() and len(collection.get_offsets()):
            shown = collection.get_offset_transform().transform(np.asarray(collection.get_offsets(), dtype=float))
            shapes += [Bbox.from_extents(x - 2, y - 2, x + 2, y + 2) for x, y in shown]
    return any(shape.width > 0 and shape.height > 0 and shape.overlaps(box) for shape in shapes)


class Design:
    """A figure's layout as the lab made it, and the same figure laid out again for a width.

    Kept: the figure's size and margins, each axes' place in its grid and its position, each title's
    wrapping and each legend's columns, labels and place, so the design is restored exactly."""

    def __init__(self, figure):
        self.size = tuple(figure.get_size_inches())
        # The figure's own margins and gaps: tight_layout sets them, and measures the room each
        # axes' labels take from them at the next layout (left from another width, they skew it).
        pars = figure.subplotpars
        self.margins = {name: getattr(pars, name) for name in ("left", "right", "bottom", "top", "wspace", "hspace")}
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
        self.categories = []         # [(axis, its own formatter, its labels' own angle)] of the x axes
                                     # whose labels (words under bars) were wrapped or turned

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
        figure.subplots_adjust(**self.margins)
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
            if isinstance(axis.get_major_formatter(), thinned_class()):
                axis.set_major_formatter(formatter)
        self.thinned = []
        for label, text in self.relabelled:
            label.set_text(text)
        self.relabelled = []
        self._restore_categories()
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

    def _fit_legends(self, figure, width, renderer, under=()) -> list:
        """Each legend within its axes (one outside them, beside, above or below, goes inside,
        where it covers least) or, a figure's own, within the figure: in one column if it is
        too wide, then with its labels wrapped. ``under``: the axes' legends that go under the
        axes and its labels instead (on a phone an axes has no room to spare for a legend over
        its data and texts; narrowed, one that would lie over the data). Returns the legends
        moved inside their axes."""
        import textwrap

        moved = []
        for legend, columns, handles, labels, _loc, anchor in self.legends:
            ax = legend.axes if legend.parent is not figure else None
            below = any(legend is other for other in under)
            if ax is not None and anchor is not None and not below:
                box = anchor.transformed(ax.transAxes.inverted())
                if box.x0 >= 0.99 or box.y0 >= 0.99 or box.x1 < 0 or box.y1 < 0:   # outside the axes
                    legend.set_bbox_to_anchor(None)
                    legend._set_loc(0)                          # "best"
                    moved.append(legend)
            fit = 0.95 * (width if ax is None else min(width, ax.bbox.width))
            # From the lab's own columns and labels at every pass: a legend wrapped for the axes of
            # an earlier pass (or of another width) is not left narrower than it needs to be.
            self._own_box(legend)
            if legend.get_window_extent(renderer).width > fit:
                self._remake(legend, 1, handles, labels)
            wide = legend.get_window_extent(renderer).width
            if wide > fit:
                longest = max((len(label) for label in labels), default=1)
                chars = max(int(longest * fit / wide) - 1, 8)
                self._remake(legend, 1, handles, [textwrap.fill(label, chars) for label in labels])
            if ax is not None and below:
                self._put_under(legend, ax, renderer)
        return moved

    def _own_box(self, legend) -> None:
        """Put back the box the lab made for ``legend`` (one made again from its handles, which
        are the legend's copies of the lab's artists, is not the same size)."""
        for (kept, *_rest), (box, texts, handles, columns) in zip(self.legends, self.boxes):
            if kept is legend and legend._legend_box is not box:
                legend._legend_box, legend.texts, legend.legend_handles, legend._ncols = box, texts, handles, columns
                legend._set_loc(legend._loc)
                legend.stale = True

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
            bars = {id(colorbar_of(ax)): (ax, position) for ax, _s, position in placed if colorbar_of(ax)}
            panels = [a for a in placed if colorbar_of(a[0]) is None]
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
        # On a phone every axes' legend goes under its axes; narrowed less, one over the data.
        under = [legend for legend in self._legends(figure) if legend.parent is not figure
                 and width < STACK_BELOW * design_width]
        for legend in self._legends(figure):
            if legend.parent is not figure:          # inside its axes: no room made for it
                legend.set_in_layout(False)
        for text in self._inside_texts(figure):       # a note inside an axes: no room made for it either
            text.set_in_layout(False)
        # A line with no points yet (a marker a setting shows) is measured by matplotlib at the
        # figure's corner: room made for it would squeeze the axes to nothing.
        empty = [line for ax in figure.axes for line in ax.lines if line.get_in_layout() and not len(line.get_xdata())]
        for line in empty:
            line.set_in_layout(False)
        try:
            self._settle(figure, dpi, width, height, renderer, under, stacked)
        finally:
            for line in empty:
                line.set_in_layout(True)

    def _settle(self, figure, dpi, width, height, renderer, under, stacked) -> None:
        """Lay the figure out again until nothing moves, growing it where a panel is left too
        low or too flat to read (part of :meth:`lay_out`)."""
        import warnings

        grown, designed = 0.0, height
        for _ in range(2 * LAYOUT_PASSES):
            # A title or label wraps for the room its axes has, and the axes move as the layout
            # makes room for it: lay out again until nothing moves. A panel left too low or too
            # flat to read makes the figure taller (a readable plot before one that fits the
            # screen), as long as growing helps.
            before = [tuple(ax.get_position().bounds) for ax in figure.axes]
            moved = self._fit_legends(figure, width, renderer, under)
            self._wrap_side_labels(figure, renderer)
            self._fit_categories(figure, renderer)
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
            # A legend inside its axes that lies over the data goes under the axes.
            covering = [legend for legend in self._legends(figure) if legend.parent is not figure
                        and not any(legend is other for other in under) and covers_data(legend, renderer)]
            if covering:
                under += covering
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

    def _restore_categories(self) -> None:
        for axis, formatter, angle, align in self.categories:
            if isinstance(axis.get_major_formatter(), wrapped_class()):
                axis.set_major_formatter(formatter)
            axis.set_tick_params(labelrotation=angle)
            for label in axis.get_ticklabels():
                label.set_horizontalalignment(align)
        self.categories = []

    def _fit_categories(self, figure, renderer) -> None:
        """The words under an x axis's bars or groups, each label within the room between its
        tick and the next: upright ones wrapped onto lines where they are too wide, or, when a
        word alone is, turned to stand on end; slanted ones turned to stand on end when the
        slant leaves them too close. Every bar keeps its label (thinning, for numbers, would
        leave a bar unnamed)."""
        from matplotlib.text import Text

        self._restore_categories()
        for ax in figure.axes:
            axis = ax.xaxis
            formatter = category_formatter(axis)
            labels = [t for t in axis.get_ticklabels() if t.get_visible()]
            if formatter is None or not labels:
                continue
            low, high = sorted(axis.get_view_interval())
            locs = [x for x in axis.get_majorticklocs() if low <= x <= high]
            if len(locs) < 2:
                continue
            places = sorted(ax.transData.transform([(x, 0) for x in locs])[:, 0])
            apart = min(b - a for a, b in zip(places, places[1:]))
            texts = formatter.format_ticks(locs)
            font = labels[0].get_fontproperties()

            def size(shown, font=font):
                boxes = [Text(0, 0, t, fontproperties=font, figure=figure).get_window_extent(renderer)
                         for t in shown]
                return max(b.width for b in boxes), max(b.height for b in boxes)

            angle = labels[0].get_rotation() % 180
            if abs(math.sin(math.radians(angle))) > 0.2:
                if apart * abs(math.sin(math.radians(angle))) >= size(texts)[1] + TICK_GAP:
                    continue
                self.categories.append((axis, axis.get_major_formatter(), labels[0].get_rotation(),
                                        labels[0].get_horizontalalignment()))
                self._stand_on_end(axis)
                continue
            if size(texts)[0] <= apart - TICK_GAP:
                continue
            longest = max(len(line) for t in texts for line in t.split("\n"))
            fits = next((chars for chars in range(longest - 1, 2, -1)
                         if size(wrapped_class()(formatter, chars).format_ticks(locs))[0] <= apart - TICK_GAP),
                        None)
            self.categories.append((axis, axis.get_major_formatter(), labels[0].get_rotation(),
                                    labels[0].get_horizontalalignment()))
            if fits is not None:
                axis.set_major_formatter(wrapped_class()(axis.get_major_formatter(), fits))
            else:
                self._stand_on_end(axis)

    @staticmethod
    def _stand_on_end(axis) -> None:
        """Turn an axis's tick labels to read upwards, each centred under its tick."""
        axis.set_tick_params(labelrotation=90)
        for label in axis.get_ticklabels():
            label.set_horizontalalignment("center")

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
                if colorbar_of(ax) is not None:
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
                turn = math.radians(labels[0].get_rotation() % 180)
                if across == 0 and abs(math.sin(turn)) > 0.2:
                    # Turned labels stand side by side along their slant: apart by their ticks'
                    # distance times the sine of the angle, each as thick as its lines.
                    places = sorted(t.get_window_extent(renderer).x1 for t in labels)
                    thick = max(self._upright(t, renderer).height for t in labels)
                    step_room = min(b - a for a, b in zip(places, places[1:])) * abs(math.sin(turn))
                    if step_room >= thick + gap:
                        continue
                    step = next((k for k in (2, 3, 4, 5) if k * step_room >= thick + gap), 10)
                    self.thinned.append((axis, axis.get_major_formatter()))
                    axis.set_major_formatter(thinned_class()(axis.get_major_formatter(), step))
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
                axis.set_major_formatter(thinned_class()(axis.get_major_formatter(), step))

    @staticmethod
    def _upright(text, renderer):
        """The box of ``text`` before it is turned."""
        from matplotlib.text import Text

        return Text(0, 0, text.get_text(), fontproperties=text.get_fontproperties(),
                    linespacing=text._linespacing, figure=text.get_figure(root=True)).get_window_extent(renderer)

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

