"""The parts of a figure a redraw paints again: pixel bounds, joined where they overlap.

A blit (:class:`engine.kit.figure_view.FigureView`) restores the background only where the
changed artists painted last time or paint now, and draws there the changing artists that reach
in, clipped to it. The pixels a part covers are integer bounds ``(x0, y0, x1, y1)`` counted from
the figure's bottom left, ``x1`` and ``y1`` excluded, with :data:`MARGIN` around an artist's
extent for antialiasing. These are plain functions of boxes and artists; the view keeps what
each artist painted.

Importing this module imports no matplotlib.
"""

from __future__ import annotations

import numpy as np

MARGIN = 2                   # pixels around a changing artist's extent (antialiasing)
DIRTY_SHARE = 0.6            # a changed part larger than this share of the figure: redraw it all


def drawn_whole(artist) -> bool:
    """True for an image in an axes: a redraw of part of the figure draws it whole (its pixels
    are resampled for the whole of it), so that part must hold it."""
    from matplotlib.image import AxesImage

    return isinstance(artist, AxesImage)


def pixel_bounds(box, width: int, height: int) -> tuple:
    """The whole pixels (x0, y0, x1, y1) a matplotlib Bbox may paint, with MARGIN around it for
    antialiasing, within a figure ``width`` x ``height`` pixels."""
    x0, y0, x1, y1 = box.padded(MARGIN).extents
    if not np.all(np.isfinite([x0, y0, x1, y1])):
        return (0, 0, width, height)
    return (max(int(np.floor(x0)), 0), max(int(np.floor(y0)), 0), min(int(np.ceil(x1)), width),
            min(int(np.ceil(y1)), height))


def overlap(a, b) -> bool:
    """True if pixel bounds a and b, (x0, y0, x1, y1) with x1 and y1 excluded, share a pixel."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def holding(box, others):
    """The smallest bounds holding ``box`` and each of ``others``."""
    for other in others:
        box = (min(box[0], other[0]), min(box[1], other[1]), max(box[2], other[2]), max(box[3], other[3]))
    return box


def joined(boxes) -> list:
    """The boxes with any that overlap replaced by the bounds holding them, until none overlap."""
    parts = []
    for box in boxes:
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        while True:
            touching = [part for part in parts if overlap(part, box)]
            if not touching:
                break
            parts = [part for part in parts if not overlap(part, box)]
            box = holding(box, touching)
        parts.append(box)
    return parts


def paint_bounds(artist, renderer, whole, window_extent):
    """The pixels ``artist`` may paint now, as integer bounds (x0, y0, x1, y1) from the bottom
    left, or None if it paints nothing. ``whole``: the figure's box (matplotlib Bbox);
    ``window_extent(artist, renderer)``: the artist's extent (the view keeps it for a redraw)."""
    from matplotlib.image import AxesImage
    from matplotlib.text import Text

    if not artist.get_visible():
        return None
    clip = artist.get_clip_box() if artist.get_clip_on() else None
    if clip is not None or isinstance(artist, AxesImage):
        box = clip or whole            # clipped (bars, lines, images): its axes, quick to know
    else:
        try:
            box = window_extent(artist, renderer)
        except Exception:  # noqa: BLE001 - without an extent, assume the clip box or everything
            box = clip or whole
        if not isinstance(artist, Text):             # strokes and markers reach past the path
            width = getattr(artist, "get_linewidth", lambda: 0)()
            width = max(np.atleast_1d(width)) if np.size(width) else 0
            marker = getattr(artist, "get_markersize", lambda: 0)()
            box = box.padded(renderer.points_to_pixels(float(width) + float(marker)))
    x0, y0, x1, y1 = box.padded(MARGIN).extents
    if not np.all(np.isfinite([x0, y0, x1, y1])):
        return (0, 0, int(whole.width), int(whole.height))
    return (int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))


def dirty_parts(fresh, drawn, changing, width: int, height: int):
    """The parts of a figure ``width`` x ``height`` pixels the changed artists painted last time
    or paint now, as a list of bounds that do not overlap, or None when they cover most of the
    figure (:data:`DIRTY_SHARE`). Each changed artist's bounds, before and now, are one part;
    overlapping parts are joined; a part an image overlaps grows to hold it whole (an image is
    drawn whole). fresh: {id(artist): bounds} of each changed artist now (:func:`paint_bounds`);
    drawn: {id(artist): bounds} of each artist when last drawn; changing: the changing artists."""
    boxes = [drawn.get(key) for key in fresh] + list(fresh.values())
    parts = joined([(max(b[0], 0), max(b[1], 0), min(b[2], width), min(b[3], height))
                    for b in boxes if b is not None])
    images = [box for artist in changing if drawn_whole(artist) and (box := drawn.get(id(artist)))]
    while True:                   # parts only grow: this ends
        grown = joined([holding(part, [image for image in images if overlap(part, image)])
                        for part in parts])
        if grown == parts:
            break
        parts = grown
    if sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in parts) > DIRTY_SHARE * width * height:
        return None
    return parts


def draw_within(artist, region, renderer) -> None:
    """Draw ``artist`` with its clip box narrowed to ``region`` (a matplotlib Bbox; an image is
    drawn whole: the part holds it)."""
    from matplotlib.transforms import Bbox

    if drawn_whole(artist):
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


def painted_extent(child, pixels, blank, renderer):
    """The extent of what ``child``, drawn alone on the canvas, painted: the pixels that differ
    from the figure's own background, and its box (painted, maybe, in the figure's colour).
    Measuring what was drawn takes a millisecond; laying out its tick labels again to measure
    them takes as long as drawing them. ``pixels`` and ``blank``: the canvas now and with
    nothing drawn on it, (height, width) uint32."""
    from matplotlib.transforms import Bbox

    painted = pixels != blank
    box = child.get_window_extent(renderer)
    rows, columns = np.flatnonzero(painted.any(axis=1)), np.flatnonzero(painted.any(axis=0))
    if rows.size:
        height = pixels.shape[0]              # rows count from the top, extents from the bottom
        box = Bbox.union([box, Bbox.from_extents(columns[0], height - rows[-1] - 1, columns[-1] + 1,
                                                 height - rows[0])])
    return box


def parts_reached(boxes, order, changed, extent, width: int, height: int):
    """The parts of a figure ``width`` x ``height`` pixels that ``boxes`` (matplotlib Bboxes)
    cover, joined, and the static artists of ``order`` that reach into one of them, ``changed``
    among them. ``extent(child)``: the box a static artist paints."""
    parts = joined([pixel_bounds(box, width, height) for box in boxes])
    return parts, [child for child in order if child is changed or any(
        overlap(pixel_bounds(extent(child), width, height), part) for part in parts)]


def draw_order(figure, artist):
    """A key that sorts artists as a full draw of ``figure`` paints them (figure children, then
    by zorder)."""
    axes = artist.axes
    if axes is None:
        return (1, artist.get_zorder(), 0, 0)
    rank = next((i for i, child in enumerate(sorted(figure.get_children(), key=lambda a: a.get_zorder()))
                 if child is axes), 0)
    index = next((i for i, child in enumerate(axes.get_children()) if child is artist), 0)
    return (0, rank, artist.get_zorder(), index)
