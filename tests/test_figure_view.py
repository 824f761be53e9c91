"""The figure view (engine/kit/figure_view.py and the modules it is built from: figure_parts,
figure_layout, regions, png, text_cache): blitting gives exactly the pixels of a plain full
draw, a full draw happens when (and only when) something static changed, known static states are
reused, the PNG it writes decodes to the pixels drawn and reaches the image widget as a data: URL,
and ``set_changed`` leaves an artist alone when nothing differs. Every lab is driven through its
controls and compared with a full draw after each change."""

import base64
import io
import subprocess
import sys
import zlib

import matplotlib.colors
import matplotlib.lines
import numpy as np
import pytest
from PIL import Image

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kit import figure_view, text_cache
from engine.kit import png as png_module
from engine.kit.figure_view import (FigureView, PngWriter, decades, encode_png, new_figure, set_changed, smallest_text,
                                  whole_ticks)
from engine.presentation.numbers import power_of_ten


def _same_as_full_draw(view):
    shown, full = view.pixels(), view.full_draw_pixels()
    assert shown.shape == full.shape
    different = np.argwhere(np.any(shown != full, axis=-1))
    assert not len(different), f"{len(different)} pixels differ, first at (row, column) {different[0]}"


def _two_panel_figure():
    fig = new_figure(6.4, 3.2)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    (line,) = left.plot([0, 1, 2], [0, 1, 0], marker="o")
    left.axhline(0.5, color="black")                                     # static, under the line
    left.legend([line], ["a line"], loc="upper right")
    bars = right.bar(range(3), [1, 2, 3])
    labels = [right.text(i, 0, "", ha="center", va="bottom") for i in range(3)]
    image = left.imshow(np.zeros((2, 2)), extent=(0, 2, 0, 1), alpha=0.5, vmin=0, vmax=1)
    title = fig.suptitle("start")
    right.set_ylim(0, 4)
    view = FigureView(fig, changing=[line, bars, labels, image, title])
    return view, line, bars, labels, image, title, left, right


def test_a_change_of_a_changing_artist_is_a_blit_with_the_pixels_of_a_full_draw():
    view, line, bars, labels, image, title, _left, _right = _two_panel_figure()
    assert view.last == "full" and view.full_draws == 1
    for step in range(4):
        line.set_ydata([step * 0.3, 1 - step * 0.2, 0.4])
        for i, (bar, label) in enumerate(zip(bars, labels)):
            bar.set_height(1 + (i + step) % 3)
            label.set_text(f"{i + step}")
            label.set_y(1 + (i + step) % 3)
        image.set_data(np.full((2, 2), step / 4))
        title.set_text(f"step {step}")
        before = view.image.value
        view.redraw()
        assert view.last == "blit", view.why
        assert view.image.value != before
        _same_as_full_draw(view)
    assert view.full_draws == 1 and view.blits == 4


def test_a_static_change_is_a_full_draw_and_nothing_changed_draws_nothing():
    view, line, *_rest, left, _right = _two_panel_figure()
    encodes = view.encodes
    view.redraw()
    assert view.last == "none" and view.encodes == encodes            # no draw, no new PNG
    left.set_xlim(-1, 3)
    line.set_ydata([1, 0, 1])
    view.redraw()
    assert view.last == "full" and view.why == "a static artist changed"
    _same_as_full_draw(view)
    line.set_ydata([0, 0, 1])
    view.redraw()
    assert view.last == "blit"
    _same_as_full_draw(view)


def test_a_known_static_state_reuses_its_background():
    view, line, *_rest, left, _right = _two_panel_figure()
    for limits, expected in (((0, 2), "full"), ((-2, 4), "full"), ((0, 2), "blit"), ((-2, 4), "blit")):
        left.set_xlim(*limits)
        line.set_ydata(np.random.default_rng(len(limits)).random(3))
        view.redraw(state=limits)
        assert view.last == expected
        _same_as_full_draw(view)
    assert view.full_draws == 3                                       # the first draw and two states


def test_a_new_static_state_of_one_axes_draws_again_only_what_reaches_where_it_was_and_is(monkeypatch):
    fig = new_figure(6.4, 3.2)
    panels = [fig.add_subplot(1, 3, i + 1) for i in range(3)]
    lines = [ax.plot([0, 1, 2], [0, 1, 0])[0] for ax in panels]
    for ax in panels:
        ax.set_title("a panel")
    fig.subplots_adjust(left=0.08, right=0.98, wspace=0.6)
    view = FigureView(fig, changing=lines)
    drawn = []
    real = FigureView._draw_only
    monkeypatch.setattr(FigureView, "_draw_only", lambda self, only: drawn.append(only) or real(self, only))
    first, middle, last = panels

    last.set_ylim(0, 2)                               # one axes, far from the others: drawn alone
    view.redraw(state="last taller")
    assert view.last == "full" and view.partial_draws == 1 and [a.get_position().x0 for a in drawn[-1]] == [last.get_position().x0]
    _same_as_full_draw(view)
    middle.set_yticks([0, 1], ["a tick label long enough", "to reach the first panel"])
    view.redraw(state="middle long")
    assert view.partial_draws == 2 and [first, middle] == drawn[-1]
    _same_as_full_draw(view)
    middle.set_yticks([0, 1], ["0", "1"])             # short again: where it was reaches the first
    view.redraw(state="last taller, middle back")
    assert view.partial_draws == 3 and [first, middle] == drawn[-1]
    _same_as_full_draw(view)
    middle.set_yticks([0, 1], ["a tick label long enough", "to reach the first panel"])
    static_draws = len(drawn)
    view.redraw(state="middle long")                  # a state drawn before: its background
    assert len(drawn) == static_draws and view.partial_draws == 3
    _same_as_full_draw(view)
    first.set_ylim(0, 3)
    last.set_ylim(0, 3)                               # two at once: the whole figure is drawn
    draws = view.partial_draws
    view.redraw(state="two at once")
    assert view.last == "full" and view.partial_draws == draws and drawn[-1] is None
    _same_as_full_draw(view)


def test_the_background_drawn_before_a_state_is_named_is_that_state_s_unless_a_static_artist_changed():
    view, line, *_rest, left, _right = _two_panel_figure()
    line.set_ydata([1, 0, 1])
    view.redraw(state="first")                          # nothing static changed since the first draw
    assert view.last == "blit" and view.full_draws == 1
    _same_as_full_draw(view)
    left.set_xlim(-1, 3)
    view.redraw(state="wide")
    assert view.last == "full"
    left.set_xlim(0, 2)
    view.redraw(state="first")
    assert view.last == "blit" and view.full_draws == 2
    _same_as_full_draw(view)
    other, line, *_rest, left, _right = _two_panel_figure()
    left.set_xlim(-1, 3)                                # changed before the first state is named
    other.redraw(state="wide")
    assert other.last == "full" and other.full_draws == 2
    _same_as_full_draw(other)


def _framed_heatmap():
    """A heatmap whose frame (limits and whole-number ticks) fits the table: a state per frame."""
    fig = new_figure(6.4, 3.2)
    ax = fig.add_subplot()
    image = ax.imshow(np.zeros((4, 4)), vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    title = ax.set_title("")
    view = FigureView(fig, changing=[image, title])
    return view, ax, image, title


def _show_frame(view, ax, image, title, size, frame):
    ax.set_xlim(-0.5, frame - 0.5)
    ax.set_ylim(frame - 0.5, -0.5)
    whole_ticks(ax.xaxis, 0, frame - 1)
    whole_ticks(ax.yaxis, 0, frame - 1)
    image.set_data(np.sin(np.arange(size * size).reshape(size, size)))
    image.set_extent((-0.5, size - 0.5, size - 0.5, -0.5))
    title.set_text(f"{size} in a frame of {frame}")
    view.redraw(state=frame)


def test_a_frame_revisited_is_a_blit_with_its_own_ticks_also_after_a_resize():
    view, ax, image, title = _framed_heatmap()
    visits = ((3, 4), (12, 16), (40, 64), (5, 8), (2, 4), (9, 16), (64, 64), (8, 8))
    for size, frame in visits:
        _show_frame(view, ax, image, title, size, frame)
        assert view.last == ("full" if frame not in [f for _s, f in visits[:visits.index((size, frame))]]
                             else "blit"), (size, frame)
        assert list(ax.get_xticks()) == list(ax.get_yticks()) and ax.get_xlim()[1] == frame - 0.5
        _same_as_full_draw(view)                       # the frame's own ticks are in its background
    view.fit(300, 400)                # a resize drops every frame's background and draws frame 8 anew
    assert view.last == "full"
    for (size, frame), expected in zip(visits[:6], ("full", "full", "full", "blit", "blit", "blit")):
        _show_frame(view, ax, image, title, size, frame)
        assert view.last == expected and view.pixels().shape[1] == 300, (size, frame, view.why)
        _same_as_full_draw(view)


def test_the_smallest_text_class_follows_a_changing_text_and_each_static_state():
    view, ax, image, title = _framed_heatmap()

    def shown():
        classes = [c for c in view.image._dom_classes if c.startswith("course-figure-text-")]
        assert classes == [f"course-figure-text-{int(smallest_text(view.figure) * view.dpi / 72 * 10)}"]
        return smallest_text(view.figure)

    _show_frame(view, ax, image, title, 3, 4)
    assert shown() == 10                                # the tick labels
    ax.set_xlabel("column", fontsize=7)                 # static: another state, with smaller text
    _show_frame(view, ax, image, title, 12, 16)
    assert view.last == "full" and shown() == 7
    title.set_fontsize(6)                               # a changing text smaller than every other
    _show_frame(view, ax, image, title, 13, 16)
    assert view.last == "blit" and shown() == 6
    title.set_fontsize(12)
    ax.set_xlabel("")                                   # back to the first state's static part
    _show_frame(view, ax, image, title, 2, 4)
    assert view.last == "blit" and shown() == 10
    ax.set_xlabel("column", fontsize=7)
    _show_frame(view, ax, image, title, 11, 16)
    assert view.last == "blit" and shown() == 7
    title.set_text(" ")                                 # a text showing nothing does not count
    title.set_fontsize(4)
    view.redraw(state=16)
    assert shown() == 7


def test_a_changing_artist_reaching_into_a_later_axes_makes_a_full_draw():
    view, _line, _bars, labels, *_rest = _two_panel_figure()
    labels[0].set_position((-1.6, 1.0))                               # into the left panel's area
    labels[0].set_text("a long label that runs left, far into the other panel")
    view.redraw()
    _same_as_full_draw(view)


def test_a_later_axes_is_measured_once_while_unchanged_and_again_after_it_changes():
    """Whether a changing artist reaches a static one drawn after it needs that one's extent,
    which lays out all its tick labels: it is measured once (at the first draw) and kept until
    the axes changes. A changing artist that does reach one is painted in matplotlib's order."""
    view, line, _bars, _labels, _image, _title, _left, right = _two_panel_figure()
    measured = []
    measure = right.get_tightbbox
    right.get_tightbbox = lambda *args, **kwargs: measured.append(1) or measure(*args, **kwargs)
    for top in (1.5, 2.0, 2.5, 3.0):
        line.set_ydata([0, top, 0])
        view.redraw()
        assert view.last == "blit"
        _same_as_full_draw(view)
    assert not measured
    # Long tick labels on the right panel reach left, over the left panel's line.
    right.set_yticks([0, 2, 4], ["a tick label long enough to reach the other panel"] * 3)
    for top in (0.5, 0.6):
        line.set_ydata([0, top, 0])
        view.redraw()
        assert view.last == "full" and view.why == "a changing artist reaches a static artist drawn after it"
        _same_as_full_draw(view)
    assert len(measured) == 1


def test_the_png_decodes_to_the_pixels_drawn():
    rng = np.random.default_rng(0)
    for shape in ((7, 5, 4), (4, 6, 4), (1, 1, 4)):
        picture = rng.integers(0, 256, shape, dtype=np.uint8)
        decoded = np.asarray(Image.open(io.BytesIO(encode_png(picture))))
        assert decoded.shape == shape and np.array_equal(decoded, picture)
    view, *_rest = _two_panel_figure()
    shown = np.asarray(Image.open(io.BytesIO(view.png)))
    assert np.array_equal(shown, view.pixels())


def _decoded(png):
    return np.asarray(Image.open(io.BytesIO(png)))


def test_a_new_picture_compresses_again_only_the_bands_that_changed(monkeypatch):
    rng = np.random.default_rng(1)
    picture = rng.integers(0, 256, (40, 9, 4), dtype=np.uint8)
    writer = PngWriter(band=16)                                  # bands: rows 0-15, 16-31, 32-39
    compressed = []
    fresh = png_module.zlib.compressobj
    monkeypatch.setattr(png_module.zlib, "compressobj", lambda *a: compressed.append(1) or fresh(*a))
    assert np.array_equal(_decoded(writer.write(picture)), picture) and len(compressed) == 3
    assert writer.write(picture.copy()) is None and len(compressed) == 3       # the same pixels
    picture[20, 4, :3] = 255 - picture[20, 4, :3]
    assert np.array_equal(_decoded(writer.write(picture)), picture) and len(compressed) == 4
    picture[0, 0, 0] = 255 - picture[0, 0, 0]
    picture[39, 8, 2] = 255 - picture[39, 8, 2]
    assert np.array_equal(_decoded(writer.write(picture)), picture) and len(compressed) == 6
    picture[5, 5, 3] = 128 if picture[5, 5, 3] != 128 else 0     # an alpha changed: its band alone
    assert np.array_equal(_decoded(writer.write(picture)), picture) and len(compressed) == 7


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 17),
       st.lists(st.tuples(st.integers(0, 39), st.integers(0, 11), st.integers(0, 3), st.integers(0, 255)),
                max_size=6),
       st.booleans())
def test_every_png_written_decodes_to_its_pixels_whatever_changed(height, width, band, changes, opaque):
    rng = np.random.default_rng(height * 100 + width)
    picture = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    if opaque:
        picture[..., 3] = 255
    writer = PngWriter(band=band)
    for row, column, channel, value in [(0, 0, 0, 0)] + changes:
        picture[row % height, column % width, channel] = value
        png = writer.write(picture)
        if png is not None:
            shown = _decoded(png)
        assert np.array_equal(shown, picture)


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_checksums_of_two_pieces_combine_into_the_checksum_of_both(first, second):
    combined = png_module._adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second))
    assert combined == zlib.adler32(first + second)


def test_the_image_widget_holds_the_png_as_a_data_url():
    view, line, *_rest = _two_panel_figure()
    prefix = b"data:image/png;base64,"
    value = bytes(view.image.value)
    assert view.image.format == "url" and value.startswith(prefix)
    assert base64.b64decode(value[len(prefix):], validate=True) == view.png
    line.set_ydata(np.asarray(line.get_ydata()) * 0.5)
    view.redraw()
    assert base64.b64decode(bytes(view.image.value)[len(prefix):], validate=True) == view.png
    shown = np.asarray(Image.open(io.BytesIO(view.png)).convert("RGBA"))
    assert np.array_equal(shown, view.full_draw_pixels())


def test_set_changed_marks_an_artist_changed_only_when_a_property_differs():
    view, _line, bars, *_rest = _two_panel_figure()
    bar = bars[0]
    height, colour = bar.get_height(), bar.get_facecolor()
    set_changed(bar, height=height, facecolor=colour)
    assert not bar.stale                                   # the same values: nothing to redraw
    set_changed(bar, facecolor=matplotlib.colors.to_hex(colour))
    assert not bar.stale                                   # the same colour, written another way
    set_changed(bar, height=height + 0.5)
    assert bar.stale and bar.get_height() == height + 0.5
    view.redraw()
    _same_as_full_draw(view)
    set_changed(bar, facecolor="#D55E00")
    assert bar.stale and matplotlib.colors.same_color(bar.get_facecolor(), "#D55E00")
    view.redraw()
    _same_as_full_draw(view)


def test_bars_drawn_as_one_collection_are_the_bars_set_and_unchanged_bars_are_not_marked_changed():
    from engine.kit.figure_view import Bars

    fig = new_figure()
    ax = fig.add_subplot()
    bars = Bars(ax, [0, 1, 2, 3], width=0.5, facecolor="#56B4E9")
    assert ax.get_xlim()[0] < -0.25 and ax.get_xlim()[1] > 3.25                   # every place in sight
    bars.set([1.0, np.nan, 3.0], ["#E69F00", "#56B4E9", "#0072B2"])             # NaN and the 4th: no bar
    boxes = [path.get_extents() for path in bars.artist.get_paths()]
    assert [(b.x0, b.x1, b.y0, b.y1) for b in boxes] == [(-0.25, 0.25, 0.0, 1.0), (1.75, 2.25, 0.0, 3.0)]
    assert [matplotlib.colors.to_hex(c) for c in bars.artist.get_facecolor()] == ["#e69f00", "#0072b2"]
    bars.artist.stale = False
    bars.set([1.0, np.nan, 3.0], ["#E69F00", "#56B4E9", "#0072B2"])
    assert not bars.artist.stale                                                  # nothing differs
    bars.set([1.0, 2.0, 3.0], ["#E69F00", "#56B4E9", "#0072B2"])
    assert bars.artist.stale and len(bars.artist.get_paths()) == 3 and len(bars.boxes()) == 3


def test_fixed_scales_tick_every_power_of_ten_and_only_whole_numbers():
    fig = new_figure()
    ax = fig.add_subplot()
    decades(ax.yaxis, -8, 8, label_every=2)
    ticks = ax.get_yticks()
    assert np.allclose(ticks, 10.0 ** np.arange(-8, 9)) and ax.get_ylim() == (1e-8, 1e8)
    assert np.allclose(ticks[1:] / ticks[:-1], 10)                     # each ten times the one below
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == power_of_ten(-8) == "10\u207b\u2078" and labels[1] == ""
    for low, high in ((0, 1), (0, 24), (1, 24), (0, 64), (-1, 48)):
        whole_ticks(ax.xaxis, low, high)
        ticks = ax.get_xticks()
        assert np.all(ticks == np.round(ticks)) and 2 <= len(ticks) <= 9 and ticks[0] >= low


def test_importing_the_figure_view_imports_neither_matplotlib_nor_ipywidgets():
    code = ("import sys, engine.kit.figure_view; "
            "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- every lab

def _lab_ids():
    from benchmarks.labs import all_labs
    return sorted(all_labs())


@pytest.mark.parametrize("name", _lab_ids())
def test_every_lab_shows_the_pixels_of_a_full_draw_after_every_change(name):
    from benchmarks import labs
    from engine.kit import figure_view

    views = []
    with labs.patched_views("shipped", views):
        root = labs.all_labs()[name]()
    assert views and all(view._changing for view in views), "the lab names its changing artists"
    found = labs.controls(root)
    first = next((i for i, (kind, _w) in enumerate(found) if kind in ("slider", "selection-slider")), None)
    blits = 0
    for index, (kind, widget) in enumerate(found):
        original = widget.value
        for value in labs.sweep(kind, widget, index == first, quick=True) + [original]:
            try:
                widget.value = value
            except Exception:  # noqa: BLE001 - a value another control has made invalid
                continue
            for view in views:
                _same_as_full_draw(view)
                blits += view.last == "blit"
    assert blits, "no change was blitted"
    labs.close(root, views)
    assert figure_view.FigureView.redraw is not None


def _plain_matplotlib_pixels(fig):
    """The figure drawn by matplotlib's own Agg canvas, every artist (none animated)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    animated = [a for a in fig.findobj() if a.get_animated()]
    for artist in animated:
        artist.set_animated(False)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    for artist in animated:
        artist.set_animated(True)
    return np.asarray(canvas.buffer_rgba()).copy()


def test_texts_drawn_from_kept_pixels_are_matplotlib_s_own_pixels():
    fig = new_figure(6.4, 3.2)
    ax = fig.add_subplot()
    texts = [ax.text(0.1, 0.8, "the same words", fontsize=9),
             ax.text(0.1, 0.6, "the same words", fontsize=12, weight="bold", color="#D55E00"),
             ax.text(0.5, 0.3, "turned\nthree lines\nof it", rotation=30, fontsize=8),
             ax.text(0.8, 0.2, "upright ↑10⁴ – ÷", rotation=90, fontsize=10, style="italic"),
             ax.text(0.3, 0.1, "$x^2$ and mathtext", fontsize=9)]
    ax.set_title("a title", fontsize=10)
    view = FigureView(fig, changing=texts)
    assert np.array_equal(view.pixels(), _plain_matplotlib_pixels(fig))
    texts[0].set_fontsize(14)                           # the same text at another size
    texts[1].set_text("the same words")                 # drawn before at this size: its kept pixels
    texts[2].set_rotation(200)
    view.redraw()
    assert np.array_equal(view.pixels(), _plain_matplotlib_pixels(fig))
    for width in (300, 1000):                           # narrow, then wide again: other renderers
        view.fit(width)
        assert np.array_equal(view.pixels(), _plain_matplotlib_pixels(fig))


def test_the_text_drawing_patch_is_for_the_matplotlib_installed_and_in_use():
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    installed = ".".join(matplotlib.__version__.split(".")[:2])
    assert installed == text_cache.WRITTEN_FOR, (
        f"engine/kit/text_cache.py draws texts through matplotlib's private RendererAgg._prepare_font "
        f"and draw_text_image as matplotlib {text_cache.WRITTEN_FOR} has them; matplotlib {installed} is "
        f"installed: read RendererAgg.draw_text of this version, bring _draw_text_once in line with it, "
        f"then set WRITTEN_FOR to {installed!r}")
    canvas = text_cache.canvas_class()
    assert canvas is not FigureCanvasAgg and issubclass(canvas, FigureCanvasAgg), (
        f"matplotlib {installed} has no RendererAgg._prepare_font: texts are drawn by matplotlib itself, "
        f"rasterised on every draw")
    renderer = canvas(new_figure()).get_renderer()
    assert "draw_text" in vars(renderer), "the canvas's renderer does not draw texts from kept pixels"


def _legend_figure():
    fig = new_figure(6.4, 3.2)
    ax, other = fig.subplots(1, 2)
    (line,) = ax.plot(np.arange(10), np.full(10, -9.0), label="a line with a long label")
    ax.set_ylim(-11, 11)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0))            # above the axes, as designed
    other.plot([0, 1], [0, 1])
    return FigureView(fig, changing=[line]), ax, line


def _legend_stays_put_as_the_data_move(view, ax, line):
    legend = ax.get_legend()
    placed = legend.get_window_extent(view.figure.canvas.get_renderer()).bounds
    for level in (9, 0, -9):                                           # over the legend, and away
        line.set_ydata(np.full(10, float(level)) + np.sin(np.arange(10)))
        view.redraw()
        assert view.last == "blit"
        _same_as_full_draw(view)
        assert legend.get_window_extent(view.figure.canvas.get_renderer()).bounds == pytest.approx(placed)
    return legend.get_window_extent(view.figure.canvas.get_renderer())


def test_a_legend_outside_its_axes_goes_inside_a_narrowed_figure_and_stays_where_it_was_put():
    view, ax, line = _legend_figure()
    view.fit(520, 600)                                                 # narrower than the design, not a phone
    box = _legend_stays_put_as_the_data_move(view, ax, line)
    inside = ax.get_window_extent(view.figure.canvas.get_renderer())
    assert inside.x0 - 1 <= box.x0 and box.x1 <= inside.x1 + 1 and inside.y0 - 1 <= box.y0 and box.y1 <= inside.y1 + 1


def test_on_a_phone_a_legend_goes_under_its_axes_and_labels_and_stays_there():
    view, ax, line = _legend_figure()
    view.fit(300, 600)
    box = _legend_stays_put_as_the_data_move(view, ax, line)
    renderer = view.figure.canvas.get_renderer()
    legend = ax.get_legend()
    legend.set_in_layout(False)
    above = ax.get_tightbbox(renderer)                                 # the axes with its labels
    legend.set_in_layout(True)
    assert box.y1 <= above.y0 and box.y0 >= 0                          # under them, in the picture


def test_a_figure_back_at_its_design_has_its_legends_where_the_design_put_them():
    view, ax, line = _legend_figure()
    renderer = view.figure.canvas.get_renderer()
    designed = ax.get_legend().get_window_extent(renderer).bounds
    for width in (300, 520):
        view.fit(width, 600)
        view.fit(1000)
        assert ax.get_legend().get_window_extent(view.figure.canvas.get_renderer()).bounds == pytest.approx(designed)


def test_a_colorbar_stays_beside_its_picture_when_the_panels_go_one_under_another():
    fig = new_figure(6.4, 3.4)
    grid = fig.add_gridspec(1, 2, width_ratios=[1.5, 1])
    heat, other = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    image = heat.imshow(np.arange(12.0).reshape(3, 4), aspect="auto")
    bar = fig.colorbar(image, ax=heat, fraction=0.06, pad=0.03)
    other.plot([0, 1], [1, 0])
    fig.tight_layout()
    view = FigureView(fig, changing=[image])
    designed = [ax.get_position().bounds for ax in (heat, bar.ax, other)]
    view.fit(390)
    heat_box, bar_box, other_box = (ax.get_position() for ax in (heat, bar.ax, other))
    assert other_box.y1 < heat_box.y0                                  # the panels one under another
    assert bar_box.x0 > heat_box.x1 and bar_box.x1 <= 1.0              # the colorbar to the right...
    assert bar_box.y0 < heat_box.y1 and heat_box.y0 < bar_box.y1       # ...at the picture's height
    assert bar_box.width < heat_box.width / 4
    view.fit(640)                                                      # the design again
    assert np.allclose([ax.get_position().bounds for ax in (heat, bar.ax, other)], designed)


@pytest.mark.parametrize("name", _lab_ids())
def test_every_colour_a_lab_s_legend_names_is_of_the_colour_blind_safe_palette_or_a_grey(name):
    from benchmarks import labs
    from engine.kit.figure_view import OKABE_ITO

    safe = {matplotlib.colors.to_hex(colour) for colour in OKABE_ITO.values()}
    views = []
    with labs.patched_views("shipped", views):
        root = labs.all_labs()[name]()
    named = []
    for view in views:
        legends = list(view.figure.legends) + [ax.get_legend() for ax in view.figure.axes if ax.get_legend()]
        for legend in legends:
            for handle, label in zip(legend.legend_handles, legend.texts):
                if isinstance(handle, matplotlib.lines.Line2D):             # its line, its marker
                    shown = ([handle.get_color()] if handle.get_linestyle() not in ("None", "none", "") else []) + (
                        [handle.get_markerfacecolor(), handle.get_markeredgecolor()]
                        if handle.get_marker() not in (None, "None", "none", "") else [])
                else:
                    shown = [handle.get_facecolor()]
                for colour in shown:
                    named += [(label.get_text(), matplotlib.colors.to_hex(rgba[:3]))
                              for rgba in np.atleast_2d(matplotlib.colors.to_rgba_array(colour)) if rgba[3] > 0]
    for label, colour in named:
        red, green, blue = matplotlib.colors.to_rgb(colour)
        assert colour in safe or red == green == blue, f"{label!r} is shown in {colour}"
    labs.close(root, views)


@pytest.mark.parametrize("name", _lab_ids())
def test_every_lab_is_drawn_for_a_phone_and_back_with_its_text_kept_and_its_updates_blitted(name):
    """fit(262): the width of a lab's plot at 390 px. The PNG is 262 px wide, its smallest text
    at least 11 px (8 pt at 100 dpi), the image's width and height are the PNG's, an update
    after the resize shows the pixels of a full draw; fit to a wide box gives the design's size
    again, still the pixels of a full draw."""
    from benchmarks import labs
    from engine.kit.figure_view import smallest_text

    views = []
    with labs.patched_views("shipped", views):
        root = labs.all_labs()[name]()
    designed = [view.pixels().copy() for view in views]
    found = labs.controls(root)
    for view in views:
        view.fit(262, 700)
        height, width = view.pixels().shape[:2]
        assert width == 262 and (view.image.width, view.image.height) == ("262", str(height))
        assert smallest_text(view.figure) * view.dpi / 72 >= 11
        assert f"course-figure-text-{int(smallest_text(view.figure) * view.dpi / 72 * 10)}" in view.image._dom_classes
    kind, widget = found[0]
    for value in labs.sweep(kind, widget, True, quick=True)[:2]:
        try:
            widget.value = value
        except Exception:  # noqa: BLE001 - a value another control has made invalid
            continue
        for view in views:
            _same_as_full_draw(view)
    widget.value = labs.sweep(kind, widget, True, quick=True)[0]
    for view, before in zip(views, designed):
        view.fit(1000)
        assert view.pixels().shape == before.shape
        _same_as_full_draw(view)
    labs.close(root, views)


# ---------------------------------------------------------------- readable at every width

# The sizes the page gives a lab's plot (tools and tests measure them in Chromium): the design at
# 1280 px; 262 px wide at 390 px, with the height left under the lab's controls (little in a lab
# of many controls); 512 x 278 at 200 % zoom; and the same on screens of 2 and 3 device pixels
# per CSS px.
PHONE = (262, 660, 3.0)
READ_AT = [(1000, None, 1.0), (262, 660, 1.0), (262, 250, 1.0), (512, 278, 1.0), (262, 400, 3.0), (512, 278, 2.0),
           (1000, None, 2.0)]


@pytest.mark.parametrize("name", _lab_ids())
def test_every_lab_s_plot_is_readable_at_every_width_and_setting(name):
    """At each size the page gives a lab's plot, at the first two settings of each of its
    controls, and laid out for a phone at the first of them: every axes at least 80 CSS px high and no flatter than 1:4, no text over
    another, no text cut at the picture's edge, every bar or group named by words labelled, no
    tick labelled 0 on a log scale, no empty column of cells, and (at each size) no legend over
    its axes' data (tests/figure_layout.py)."""
    from benchmarks import labs
    from figure_layout import layout_of, legends_over_data, problems

    views = []
    with labs.patched_views("shipped", views):
        root = labs.all_labs()[name]()
    found = []
    for width, height, ratio in READ_AT:
        for view in views:
            view.fit(width, height, ratio)
            found += problems(layout_of(view), f"{width} x {height} at {ratio:g}x: ")
            found += [f"{width} x {height} at {ratio:g}x: the legend “{label}” lies over the data"
                      for label in legends_over_data(view)]
    for kind, widget in labs.controls(root):
        original = widget.value
        for index, value in enumerate(labs.sweep(kind, widget, False, quick=True)[:2]):
            try:
                widget.value = value
            except Exception:  # noqa: BLE001 - a value another control has made invalid
                continue
            where = f"{getattr(widget, 'description', kind)} = {value}"
            for view in views:
                found += problems(layout_of(view), f"{where}: ")
                if index == 0:        # the page narrowed to a phone's width at this setting
                    view.fit(*PHONE)
                    found += problems(layout_of(view), f"{where}, laid out at 390 px: ")
                    view.fit(*READ_AT[-1])
        try:
            widget.value = original
        except Exception:  # noqa: BLE001
            pass
    labs.close(root, views)
    assert found == []


def test_a_sharp_screen_gets_more_pixels_per_css_px_but_never_more_than_the_design_has():
    """On a screen of 3 device pixels per CSS px a phone's plot is drawn with 1.25 to 2 figure
    pixels per CSS px (never more pixels than the design); the image keeps its CSS size and
    the text its CSS size; on a 1x screen one pixel per CSS px."""
    from benchmarks import labs

    views = []
    with labs.patched_views("shipped", views):
        root = labs.all_labs()["start.temperature_lab"]()
    view = views[0]
    design = view.pixels().shape[0] * view.pixels().shape[1]
    view.fit(262, 660, 1.0)
    one = view.pixels().shape
    assert one[1] == 262 and view.image.width == "262"
    view.fit(262, 660, 3.0)
    sharp = view.pixels().shape
    scale = sharp[1] / 262
    assert 1.25 <= scale <= 2.0 and sharp[0] * sharp[1] <= design * 1.01
    assert (view.image.width, view.image.height) == ("262", str(one[0]))
    assert smallest_text(view.figure) * view.dpi / 72 / scale >= 11          # 11 CSS px, as at 1x
    _same_as_full_draw(view)
    view.fit(1000, None, 2.0)                                                    # a desktop at 2x: the design
    assert view.pixels().shape[0] * view.pixels().shape[1] <= design * 1.01
    labs.close(root, views)


@pytest.mark.parametrize("name", _lab_ids())
def test_a_lab_s_plot_laid_out_for_one_width_is_the_same_whatever_width_came_before(name):
    """A layout leaves nothing behind: laid out for 390 px or for 200 % zoom, each figure of the
    lab has the size and axes it has when laid out for that width at once, also after the
    narrowest layout and the other width (a page that narrows, widens or zooms on the way)."""
    from benchmarks import labs

    def laid_out(steps):
        views = []
        with labs.patched_views("shipped", views):
            root = labs.all_labs()[name]()
        for width, height in steps:
            for view in views:
                view.fit(width, height)
        found = [(view.pixels().shape, [tuple(np.round(ax.get_position().bounds, 3)) for ax in view.figure.axes])
                 for view in views]
        labs.close(root, views)
        return found

    phone, zoomed = (262, 700), (512, 278)
    assert laid_out([(200, 700), phone, zoomed]) == laid_out([zoomed])
    at_once = laid_out([phone])
    assert laid_out([(200, 700), phone]) == at_once
    assert laid_out([(200, 700), zoomed, phone]) == at_once
