"""What a learner can read in a lab's plot, checked on the layout of what its figure view
draws (:func:`layout_of`: the axes and the texts matplotlib drew, in CSS px): every axes at least
:data:`LOWEST_AXES` px high and no flatter than 1 : :data:`FLATTEST`, no two texts on top of each
other (turned texts as the turned boxes they are, not their upright boxes), no text cut at the
picture's edge. Shared by the headless figure tests and the browser tests, which run
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
    (its width and height before it is turned). The figure is drawn once, as matplotlib draws it,
    to see which texts it draws; the picture on show is left as it is."""
    from matplotlib.colors import to_rgba
    from matplotlib.text import Text

    figure = view.figure
    canvas = view._agg()
    renderer = canvas.get_renderer()
    drawn = []
    own = vars(renderer).get("draw_text")
    plain = own or renderer.draw_text

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and not any(mtext is t for t in drawn):
            drawn.append(mtext)
        return plain(gc, x, y, s, prop, angle, ismath, mtext)

    renderer.draw_text = record
    try:
        view.full_draw_pixels()
    finally:
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
    axes = [{"box": css(ax.get_window_extent(renderer)), "colorbar": getattr(ax, "_colorbar", None) is not None,
             "title": ax.get_title() or ax.get_ylabel()}
            for ax in figure.axes if ax.get_visible() and ax.axison]
    return {"width": figure.bbox.width / scale, "height": height / scale, "axes": axes, "texts": texts}
