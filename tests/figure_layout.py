"""What a learner can read in a lab's plot, checked on the layout of what its figure view
draws (:func:`layout_of`: the axes and the texts matplotlib drew, in CSS px): every axes at least
:data:`LOWEST_AXES` px high and no flatter than 1 : :data:`FLATTEST`, no two texts on top of each
other (turned texts as the turned boxes they are, not their upright boxes), no text cut at the
picture's edge, no bar or group of an axis named by words left without its name. Shared by the headless figure tests and the browser tests, which run
:func:`layout_of` in the notebook's kernel (its source is sent there: :data:`PROBE`).
"""

from __future__ import annotations

import itertools
import math

LOWEST_AXES = 80        # CSS px
FLATTEST = 4.0          # an axes at most 4 times as wide as it is high
TOUCHING = 1.0          # CSS px two texts may share (antialiasing, a glyph's side bearing)


def corners(text: dict) -> list[tuple[float, float]]:
    """The four corners of a text's own box, turned by its angle about the centre of its upright
    box (matplotlib turns a text about its box's centre, whatever its alignment)."""
    x0, y0, x1, y1 = text["box"]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = text["size"]
    turn = math.radians(text["angle"])
    c, s = math.cos(turn), math.sin(turn)
    out = []
    for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        out.append((cx + dx * c + dy * s, cy - dx * s + dy * c))   # y grows downwards on the page
    return out


def depth(a: list, b: list) -> float:
    """How far two convex shapes (lists of corners) reach into each other: the least overlap of
    their shadows on the sides' directions (separating axes); 0 when they do not meet."""
    least = math.inf
    for shape in (a, b):
        for (x0, y0), (x1, y1) in zip(shape, shape[1:] + shape[:1]):
            nx, ny = y0 - y1, x1 - x0
            norm = math.hypot(nx, ny)
            if norm == 0:
                continue
            nx, ny = nx / norm, ny / norm
            pa = [x * nx + y * ny for x, y in a]
            pb = [x * nx + y * ny for x, y in b]
            overlap = min(max(pa), max(pb)) - max(min(pa), min(pb))
            if overlap <= 0:
                return 0.0
            least = min(least, overlap)
    return least


def problems(layout: dict, where: str = "") -> list[str]:
    """What a learner could not read in one figure's ``layout``, in words (empty: nothing)."""
    out = []
    for ax in layout["axes"]:
        x0, y0, x1, y1 = ax["box"]
        width, height = x1 - x0, y1 - y0
        name = f"the axes “{ax['title'][:40]}”" if ax["title"] else "an axes"
        if height < LOWEST_AXES - 0.5:
            out.append(f"{where}{name} is {height:.0f} px high (less than {LOWEST_AXES})")
        if not ax["colorbar"] and width > FLATTEST * height + 0.5:
            out.append(f"{where}{name} is {width:.0f} x {height:.0f} px, flatter than 1:{FLATTEST:g}")
        for label in ax.get("unlabelled", []):
            out.append(f"{where}{name} leaves “{label[:30]}” unlabelled")
        if ax.get("empty_columns"):
            out.append(f"{where}{name} shows {ax['empty_columns']} empty column(s) of cells")
        if ax.get("zero_on_log"):
            out.append(f"{where}{name} labels a tick 0 on a logarithmic scale")
    texts = layout["texts"]
    shapes = [corners(t) for t in texts]
    for (i, a), (j, b) in itertools.combinations(enumerate(texts), 2):
        ax0, ay0, ax1, ay1 = a["box"]
        bx0, by0, bx1, by1 = b["box"]
        if ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0:
            continue
        reach = depth(shapes[i], shapes[j])
        if reach > TOUCHING:
            out.append(f"{where}“{a['text'][:30]}” and “{b['text'][:30]}” overlap by {reach:.0f} px")
    for text in texts:
        x0, y0, x1, y1 = text["box"]
        if x0 < -TOUCHING or y0 < -TOUCHING or x1 > layout["width"] + TOUCHING or y1 > layout["height"] + TOUCHING:
            out.append(f"{where}“{text['text'][:30]}” is cut at the picture's edge "
                       f"([{x0:.0f}, {y0:.0f}, {x1:.0f}, {y1:.0f}] in {layout['width']:.0f} x {layout['height']:.0f})")
    return out


def layout_of(view) -> dict:
    """What ``view`` (a ``engine.kit.figure_view.FigureView``) shows now, in CSS px from the
    picture's top left: ``width`` and ``height``; ``axes``, each visible axes' ``box`` [x0, y0,
    x1, y1], whether it is a ``colorbar`` and its ``title``; ``texts``, every text matplotlib
    draws (a tick label outside its axis's limits is not drawn and not listed, nor a text drawn
    in no colour), each with its ``box`` (the upright box around it), its ``angle`` and ``size``
    (its width and height before it is turned); each axes' ``unlabelled``: the words the lab put
    under a tick of an axis named by words (fixed labels with a letter outside mathtext) that are
    not drawn there (thinned away); ``zero_on_log``: whether a tick of a logarithmic (or symlog)
    axis is labelled 0 (no power of ten is 0); ``empty_columns``: how many columns of a grid of
    cells (a pcolormesh) within the axes' limits have no cell with a number. The figure is drawn once, as matplotlib draws it,
    to see which texts it draws; the picture on show is left as it is."""
    from matplotlib.colors import to_rgba
    from matplotlib.text import Text

    figure = view.figure
    canvas = view._agg()
    renderer = canvas.get_renderer()
    drawn = []
    own = vars(renderer).get("draw_text")
    plain = own or renderer.draw_text

    drawing = []                          # the text being drawn (one of many lines comes with no mtext)

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        text = mtext if mtext is not None else (drawing[-1] if drawing else None)
        if text is not None and not any(text is t for t in drawn):
            drawn.append(text)
        return plain(gc, x, y, s, prop, angle, ismath, mtext)

    text_draw = Text.draw

    def draw(self, renderer):
        drawing.append(self)
        try:
            return text_draw(self, renderer)
        finally:
            drawing.pop()

    renderer.draw_text = record
    Text.draw = draw
    try:
        view.full_draw_pixels()
    finally:
        Text.draw = text_draw
        if own is not None:
            renderer.draw_text = own
        else:
            del renderer.draw_text
    scale = view.dpi / getattr(view, "base_dpi", view.dpi)        # figure pixels per CSS px
    height = figure.bbox.height

    def css(box):
        return [box.x0 / scale, (height - box.y1) / scale, box.x1 / scale, (height - box.y0) / scale]

    texts = []
    for text in drawn:
        if to_rgba(text.get_color(), text.get_alpha())[3] == 0:
            continue                      # drawn in no colour: a text that only holds a place
        box = text.get_window_extent(renderer)
        upright = Text(0, 0, text._get_wrapped_text(), fontproperties=text.get_fontproperties(),
                       linespacing=text._linespacing, figure=figure).get_window_extent(renderer)
        texts.append({"text": text.get_text(), "box": css(box), "angle": float(text.get_rotation()) % 360,
                      "size": [upright.width / scale, upright.height / scale]})
    def unlabelled(ax) -> list:
        import re

        missing = []
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            while hasattr(formatter, "formatter"):                  # under the layout's wrappers
                formatter = formatter.formatter
            if type(formatter).__name__ not in ("FixedFormatter", "FuncFormatter", "StrCategoryFormatter"):
                continue
            low, high = sorted(axis.get_view_interval())
            ticks = [(x, t) for x, t in zip(axis.get_majorticklocs(), axis.get_ticklabels()) if low <= x <= high]
            meant = formatter.format_ticks([x for x, _t in ticks])
            if not any(ch.isalpha() for label in meant for ch in re.sub(r"\$[^$]*\$", "", str(label))):
                continue                                            # numbers: thinning them is fine
            missing += [label for label, (_x, t) in zip(meant, ticks)
                        if str(label).strip() and not (t.get_visible() and t.get_text().strip())]
        return missing

    def zero_on_log(ax) -> bool:
        import re

        return any(axis.get_scale() in ("log", "symlog") and t.get_visible()
                   and re.sub(r"[$\\{}]|mathdefault", "", t.get_text()).strip() in ("0", "0.0", "\u22120")
                   for axis in (ax.xaxis, ax.yaxis) for t in axis.get_ticklabels())

    def empty_columns(ax) -> int:
        import numpy as np
        from matplotlib.collections import QuadMesh

        empty = 0
        low, high = sorted(ax.get_xlim())
        for mesh in (c for c in ax.collections if isinstance(c, QuadMesh) and c.get_visible()):
            values = np.ma.masked_invalid(np.ma.asarray(mesh.get_array(), dtype=float))
            corners = mesh.get_coordinates()                         # (rows + 1, columns + 1, 2)
            if values.ndim != 2 or corners.shape[1] != values.shape[1] + 1:
                continue
            middles = (corners[0, :-1, 0] + corners[0, 1:, 0]) / 2
            rows = (corners[:-1, 0, 1] + corners[1:, 0, 1]) / 2
            shown = (middles > low) & (middles < high)
            for patch in ax.patches:             # cells under an opaque cover drawn above them are not shown
                if (patch.get_visible() and patch.get_zorder() > mesh.get_zorder() and hasattr(patch, "get_x")
                        and patch.get_facecolor()[3] == 1 and patch.get_width() > 0):
                    x0, x1 = sorted((patch.get_x(), patch.get_x() + patch.get_width()))
                    y0, y1 = sorted((patch.get_y(), patch.get_y() + patch.get_height()))
                    if y0 <= rows.min() and rows.max() <= y1:
                        shown &= ~((middles > x0) & (middles < x1))
            empty += int(np.sum(shown & np.all(np.ma.getmaskarray(values), axis=0)))
        return empty

    axes = [{"box": css(ax.get_window_extent(renderer)), "colorbar": getattr(ax, "_colorbar", None) is not None,
             "title": ax.get_title() or ax.get_ylabel(), "unlabelled": unlabelled(ax),
             "zero_on_log": zero_on_log(ax), "empty_columns": empty_columns(ax)}
            for ax in figure.axes if ax.get_visible() and ax.axison]
    return {"width": figure.bbox.width / scale, "height": height / scale, "axes": axes, "texts": texts}


def legends_over_data(view) -> list[str]:
    """The legends drawn inside an axes of ``view``'s figure over that axes' data, by their first
    label: over a point of a line (its markers, or along its segments; lines across the whole
    axes, a grid or a mark at 0, aside), a bar or a drawn point."""
    import numpy as np
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.patches import Rectangle

    figure = view.figure
    renderer = view._agg().get_renderer()
    view.full_draw_pixels()
    found = []
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        x0, y0, x1, y1 = box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1
        points = []
        for line in ax.get_lines():
            if not line.get_visible() or line.get_transform() != ax.transData:
                continue
            xy = np.asarray(line.get_xydata(), dtype=float)
            xy = xy[np.all(np.isfinite(xy), axis=1)]
            if len(xy) > 1 and line.get_linestyle() not in ("None", "none", "", " "):
                t = np.linspace(0, 1, 16)[:, None, None]
                xy = (xy[:-1] * (1 - t) + xy[1:] * t).reshape(-1, 2)
            if len(xy):
                points.append(ax.transData.transform(xy))
        for collection in ax.collections:
            if not collection.get_visible():
                continue
            if isinstance(collection, PolyCollection) and collection.get_transform() == ax.transData:
                points += [ax.transData.transform(path.vertices) for path in collection.get_paths()
                           if np.ptp(path.vertices[:, 1]) > 0]
            elif isinstance(collection, PathCollection) and len(collection.get_offsets()):
                points.append(collection.get_offset_transform().transform(
                    np.asarray(collection.get_offsets(), dtype=float)))
        frame = ax.bbox                                             # data is drawn within its axes
        x0, y0, x1, y1 = max(x0, frame.x0), max(y0, frame.y0), min(x1, frame.x1), min(y1, frame.y1)
        if x0 >= x1 or y0 >= y1:
            continue                                                # under or beside its axes
        inside = any(np.any((p[:, 0] > x0) & (p[:, 0] < x1) & (p[:, 1] > y0) & (p[:, 1] < y1)) for p in points)
        bars = [patch.get_window_extent(renderer) for patch in ax.patches
                if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_height() != 0]
        polygons = [p for p in points if len(p) == 4 or len(p) == 5]
        across = any(b.x0 < x1 and b.x1 > x0 and b.y0 < y1 and b.y1 > y0 and b.width > 0 and b.height > 0
                     for b in bars)
        across = across or any(p[:, 0].min() < x1 and p[:, 0].max() > x0 and p[:, 1].min() < y1 and p[:, 1].max() > y0
                               for p in polygons)
        if inside or across:
            found.append(legend.texts[0].get_text() if legend.texts else "a legend")
    return found
