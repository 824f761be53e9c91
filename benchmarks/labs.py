"""Every lab driven headlessly in CPython: control change to updated output, and the naive way.

For each lab the notebooks call (the course's inventory, :mod:`engine.core.inventory`) the
harness builds the lab, finds its controls in the
widget tree (sliders, dropdowns, toggle buttons, toggles and checkboxes that are enabled and are
not the "use my function" switch), and sets a sweep of values on each: spread values across the
first slider's range (or every option of a selection slider), and every option of each dropdown
and toggle. The observer chain is synchronous, so the time to set ``control.value`` is the time
from the change to the updated figure, numbers and verdict being ready.

Three ways are timed on the same values, interleaved, in the same process:

* ``update``: the lab as shipped. Its view updates the changing artists and calls
  ``FigureView.redraw``, which restores the cached static background and draws only those
  artists (a *blit*), or draws the whole figure when something static changed (a *full draw*).
  Each value is first set once on its own (``first_visit``: what a learner's first drag meets,
  with every cache a lab keeps still cold, the view's backgrounds included), then again
  interleaved with the two other ways, so that all three run with the same model caches.
  ``full_draws`` counts, for both passes, how many updates needed a full draw.
* ``full``: the same lab with every redraw a full draw (the view's backgrounds forgotten before
  each redraw): what the update would cost without blitting.
* ``naive``: the ``interact`` way, a new figure built and rendered on every change. It is made
  generically by building the lab anew for each value (its widgets, a new ``Figure`` with its
  axes and layout, the model) with rendering held back, setting the control on that new lab,
  then rendering each of its figures once as the inline backend shows a figure under
  ``interact`` (``IPython.core.pylabtools.print_figure(fig, "png", bbox_inches="tight")``, the
  backend's default, which measures the figure's extent before drawing it). The rebuild
  counts a little that ``interact`` would not (the widgets are built again, and the model runs
  for the default value before the new one); ``naive_rebuild`` reports the rebuild alone so
  the difference can be judged.

``encode`` is the PNG encoding alone inside the shipped updates, and :func:`png_settings`
compares the ways of writing the PNG on every lab's final picture.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import os
import time
from pathlib import Path

import numpy as np

from engine.core import inventory

from .stats import ratio, summary

os.environ.setdefault("MPLBACKEND", "Agg")

SWEEP_FULL, SWEEP_QUICK = 10, 4        # values across the first slider
OPTIONS_FULL, OPTIONS_QUICK = 6, 3     # at most this many options per dropdown or toggle
TARGET_MS, TARGET_P95_MS = 16.7, 33.3  # one frame at 60 Hz for the median, two for the 95th percentile
TARGET_NAIVE, TARGET_FULL = 8.0, 4.0    # at least this many times faster than the naive and full-draw ways


def all_labs():
    """{"<package>.<name>": function} for every lab the notebooks call, in course order."""
    found = {}
    for lab in inventory.labs():
        module, _, name = lab.rpartition(".")
        found[lab.removeprefix("labs.")] = getattr(importlib.import_module(module), name)
    return found


def select(names=None):
    """The labs whose id or function name matches one of ``names`` (all when None)."""
    labs = all_labs()
    if not names:
        return labs
    wanted = set(names)
    chosen = {k: f for k, f in labs.items()
              if k in wanted or k.split(".")[1] in wanted or k.split(".")[1].removesuffix("_lab") in wanted}
    if not chosen:
        raise SystemExit(f"no lab matches {sorted(wanted)}; labs: {', '.join(labs)}")
    return chosen


# ---------------------------------------------------------------- finding controls

def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)
    for output in getattr(widget, "outputs", ()) or ():     # an Output's widgets (a FigureView's image)
        ref = output.get("data", {}).get("application/vnd.jupyter.widget-view+json") if isinstance(output, dict) else None
        if ref:
            from ipywidgets.widgets.widget import _instances
            if ref.get("model_id") in _instances:
                yield _instances[ref["model_id"]]


def _kind(widget) -> str | None:
    name = getattr(widget, "_model_name", "")
    if name.endswith("SliderModel") and "Range" not in name:
        return "selection-slider" if name == "SelectionSliderModel" else "slider"
    if name in ("DropdownModel", "ToggleButtonsModel", "RadioButtonsModel", "SelectModel"):
        return "options"
    if name in ("ToggleButtonModel", "CheckboxModel"):
        return "toggle"
    return None


def controls(root):
    """[(kind, widget)] in the widget tree's order; disabled ones and the "use my function" switch left out."""
    found = []
    for widget in _walk(root):
        kind = _kind(widget)
        if kind is None or getattr(widget, "disabled", False):
            continue
        if "course-own-switch" in getattr(widget, "_dom_classes", ()):
            continue
        found.append((kind, widget))
    return found


def _label(widget) -> str:
    return getattr(widget, "description", "") or widget.__class__.__name__


def sweep(kind, widget, first_slider: bool, quick: bool) -> list:
    """The values to set on ``widget``, in order (each differs from the one before)."""
    if kind == "slider":
        n = SWEEP_QUICK if quick else SWEEP_FULL
        if not first_slider:
            n = 2                                       # other sliders: both ends
        if widget._model_name == "FloatLogSliderModel":          # the exponents the slider's steps reach
            exps = np.linspace(widget.min, widget.max, n)
            exps = [widget.min + round((e - widget.min) / widget.step) * widget.step for e in exps]
            values = [float(widget.base ** e) for e in exps]
        else:
            lo, hi, step = widget.min, widget.max, widget.step or 1
            raw = np.linspace(lo, hi, n)
            values = [lo + round((v - lo) / step) * step for v in raw]
            values = [int(v) if isinstance(widget.value, int) else float(v) for v in values]
    elif kind == "selection-slider" or kind == "options":
        values = [v for _label, v in _options(widget)]
        limit = (SWEEP_QUICK if quick else SWEEP_FULL) if first_slider else (OPTIONS_QUICK if quick else OPTIONS_FULL)
        if len(values) > limit:
            values = [values[i] for i in np.linspace(0, len(values) - 1, limit).round().astype(int)]
    else:
        values = [not widget.value, widget.value] * (1 if quick else 2)
    out, last = [], widget.value
    for v in values:
        if v != last:
            out.append(v)
            last = v
    return out


def _options(widget):
    labels = widget._options_labels
    values = widget._options_values
    return list(zip(labels, values))


# ---------------------------------------------------------------- rendering modes

def inline_png(view) -> bytes:
    """What ``interact`` shows: the figure rendered as the inline backend renders it."""
    from IPython.core.pylabtools import print_figure

    for artist in view._changing:          # a new figure under interact has no blitting
        artist.set_animated(False)
    return print_figure(view.figure, "png", bbox_inches="tight")


@contextlib.contextmanager
def patched_views(mode: str, created: list | None = None):
    """mode "full": every redraw is a full draw; "hold": redraws only count; "shipped": redraws
    as shipped. Views made meanwhile are appended to ``created``."""
    from engine.kit import figure_view

    cls = figure_view.FigureView
    original_redraw, original_init = cls.redraw, cls.__init__

    def held(self, state=None):
        self.renders += 1

    def full(self, state=None):
        self._forget()
        original_redraw(self, state)

    def init(self, *args, **kwargs):
        if created is not None:
            created.append(self)
        original_init(self, *args, **kwargs)

    cls.redraw = {"full": full, "hold": held}.get(mode, original_redraw)
    cls.__init__ = init
    try:
        yield
    finally:
        cls.redraw, cls.__init__ = original_redraw, original_init


@contextlib.contextmanager
def timed_encoding(times: list):
    """Append the seconds of every PNG the figure views write meanwhile to ``times`` (comparing
    the pixels with the last ones and compressing the bands that changed)."""
    from engine.kit.figure_view import PngWriter

    original = PngWriter.write

    def write(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            times.append(time.perf_counter() - start)

    PngWriter.write = write
    try:
        yield
    finally:
        PngWriter.write = original


def png_settings(pictures, repeats: int = 5) -> list:
    """Each way of writing a PNG on ``pictures`` (RGBA arrays): [{"setting", "encode", "kb"}]."""
    from PIL import Image

    from engine.kit.figure_view import encode_png

    def pillow(level):
        def write(rgba):
            image = Image.fromarray(np.ascontiguousarray(rgba[..., :3]))
            buffer = io.BytesIO()
            image.save(buffer, format="png", compress_level=level)
            return buffer.getvalue()
        return write

    ways = {"Pillow, zlib level 6 (savefig's)": pillow(6), "Pillow, zlib level 1": pillow(1),
            "unfiltered rows in bands, zlib level 1 (the view's, whole picture)": encode_png}
    rows = []
    for label, write in ways.items():
        seconds, sizes = [], []
        for _ in range(repeats):
            for picture in pictures:
                start = time.perf_counter()
                data = write(picture)
                seconds.append(time.perf_counter() - start)
                sizes.append(len(data))
        rows.append({"setting": label, "encode": summary(seconds), "kb": round(float(np.mean(sizes)) / 1000, 1)})
    return rows


# ---------------------------------------------------------------- one lab

def _set(widget, value) -> float | None:
    """Seconds to set ``widget.value``; None if the value is refused (a dependent range)."""
    start = time.perf_counter()
    try:
        widget.value = value
    except Exception:  # noqa: BLE001 - a value another control has made invalid
        return None
    return time.perf_counter() - start


def _naive_change(function, index: int, value):
    """(seconds, rebuild seconds) of the interact way: a new lab, the value set, every figure rendered."""
    created = []
    start = time.perf_counter()
    with patched_views("hold", created):
        root = function()
        rebuilt = time.perf_counter()
        widget = controls(root)[index][1]
        try:
            widget.value = value
        except Exception:  # noqa: BLE001
            pass
    for view in created:
        view.image.value = inline_png(view)
    end = time.perf_counter()
    close(root, created)
    return end - start, rebuilt - start


def close(root, views=()) -> None:
    """Close a lab's widgets (ipywidgets keeps every open widget alive) so the run does not grow."""
    for widget in list(_walk(root)):
        widget.close()
    for view in views:
        view.image.close()


def _draws(views) -> tuple[int, int]:
    """(full draws, blits) made so far by ``views``."""
    return sum(v.full_draws for v in views), sum(v.blits for v in views)


def bench_lab(name: str, function, quick: bool = False) -> dict:
    """Time every control of one lab in the three ways; return its summary."""
    t0 = time.perf_counter()
    build_s = []
    gc.collect()
    for _ in range(1 if quick else 3):
        seconds, root = _timed_build(function)
        build_s.append(seconds)
        close(root)
    views = []
    with patched_views("shipped", views):
        root = function()
    found = controls(root)
    full_views = []
    with patched_views("full", full_views):
        full_root = function()
    full_found = controls(full_root)
    first_slider = next((i for i, (k, _w) in enumerate(found) if k in ("slider", "selection-slider")), None)
    times = {"update": [], "first_visit": [], "full": [], "naive": [], "naive_rebuild": [], "encode": []}
    first = {"update": [], "first_visit": [], "full": [], "naive": []}
    draws = {"first_visit": [0, 0], "update": [0, 0]}
    described = []
    for index, (kind, widget) in enumerate(found):
        values = sweep(kind, widget, index == first_slider, quick)
        original = widget.value
        other = full_found[index][1]
        described.append({"control": _label(widget), "kind": kind, "values": len(values),
                          "first_slider": index == first_slider})
        # Pass 1: the shipped lab alone, each value for the first time in this process (what a
        # learner's first drag meets, caches cold). Pass 2: the three ways interleaved, same values.
        first_visits = []
        for value in values:
            before = _draws(views)
            first_visits.append(_set(widget, value))
            after = _draws(views)
            draws["first_visit"][0] += after[0] > before[0]
            draws["first_visit"][1] += 1
        with contextlib.suppress(Exception):
            widget.value = original
        for value, visit in zip(values, first_visits):
            before = _draws(views)
            encodings = []
            with timed_encoding(encodings):
                fast = _set(widget, value)
            after = _draws(views)
            with patched_views("full"):
                slow = _set(other, value)
            naive, rebuild = _naive_change(function, index, value)
            if fast is None or slow is None or visit is None:
                continue
            draws["update"][0] += after[0] > before[0]
            draws["update"][1] += 1
            times["encode"] += encodings
            for key, t in (("update", fast), ("first_visit", visit), ("full", slow), ("naive", naive)):
                times[key].append(t)
                if index == first_slider:
                    first[key].append(t)
            times["naive_rebuild"].append(rebuild)
        with contextlib.suppress(Exception):
            widget.value = original
            with patched_views("full"):
                other.value = original
    pictures = [v.pixels() for v in views if v.pixels() is not None]
    close(root, views)
    close(full_root, full_views)
    result = {"lab": name, "controls": described, "build": summary(build_s)}
    for key, values in times.items():
        result[key] = summary(values)
    result["first_slider"] = {key: summary(v) for key, v in first.items()}
    result["full_draws"] = {key: {"full": n, "of": total} for key, (n, total) in draws.items()}
    result["speedup_vs_naive"] = ratio(result["naive"], result["update"])
    result["speedup_vs_full"] = ratio(result["full"], result["update"])
    med, p95 = result["update"]["median_ms"], result["update"]["p95_ms"]
    result["meets_ms_target"] = bool(med is not None and med <= TARGET_MS and p95 <= TARGET_P95_MS)
    result["meets_ratio_target"] = bool(result["speedup_vs_naive"] and result["speedup_vs_naive"] >= TARGET_NAIVE
                                        and result["speedup_vs_full"] and result["speedup_vs_full"] >= TARGET_FULL)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["_pictures"] = pictures
    return result


def _timed_build(function):
    start = time.perf_counter()
    root = function()
    return time.perf_counter() - start, root


def run(names=None, quick: bool = False, log=print) -> tuple[list, list]:
    """Benchmark the chosen labs: (a summary per lab, the PNG settings compared on their pictures)."""
    import matplotlib
    matplotlib.use("Agg")
    results, pictures = [], []
    for name, function in select(names).items():
        result = bench_lab(name, function, quick=quick)
        pictures += result.pop("_pictures")
        drawn = result["full_draws"]["update"]
        log(f"  lab {name}: {result['update']['median_ms']} ms median, p95 {result['update']['p95_ms']} "
            f"(full draw {result['full']['median_ms']}, naive {result['naive']['median_ms']}; "
            f"{drawn['full']} of {drawn['of']} updates drew in full; {result['seconds']} s)")
        results.append(result)
    return results, png_settings(pictures, repeats=2 if quick else 5)


# ---------------------------------------------------------------- first visits and updates alone

def visit_sweep(function, each, quick: bool = False, views_mode: str = "shipped") -> list:
    """Build a lab and set every value of its sweep twice, the shipped way alone: first each value
    for the first time in this process (a *first visit*: every cache the lab keeps still cold), then,
    after the control is put back, each value again (an *update*, caches warm). For every change,
    ``each(visit, control, value, change)`` is called, visit being "first_visit" or "update" and
    ``change()`` the function that sets the value (True when the control took it); what ``each``
    returns is collected, in order, as (visit, control, value, returned). ``views_mode`` "hold"
    skips the drawing (redraws are only counted)."""
    found_views = []
    with patched_views(views_mode, found_views):
        root = function()
        found = controls(root)
        first_slider = next((i for i, (k, _w) in enumerate(found) if k in ("slider", "selection-slider")), None)
        out = []
        for index, (kind, widget) in enumerate(found):
            values = sweep(kind, widget, index == first_slider, quick)
            original = widget.value
            label = _label(widget)
            for visit in ("first_visit", "update"):
                for value in values:
                    out.append((visit, label, value, each(visit, label, value,
                                                          lambda w=widget, v=value: _set(w, v) is not None)))
                with contextlib.suppress(Exception):
                    widget.value = original
    close(root, found_views)
    return out


def visits(names=None, quick: bool = False, log=print) -> list:
    """[{"lab", "first_visit", "update", "first_visit_slowest_ms", "update_slowest_ms"}]: each chosen
    lab's first visits and updates, timed the shipped way alone (:func:`visit_sweep`)."""
    import matplotlib
    matplotlib.use("Agg")
    rows = []
    for name, function in select(names).items():
        def timed(visit, _control, _value, change):
            start = time.perf_counter()
            took = change()
            return time.perf_counter() - start if took else None

        gc.collect()
        done = visit_sweep(function, timed, quick)
        row = {"lab": name}
        for visit in ("first_visit", "update"):
            seconds = [t for v, _c, _x, t in done if v == visit and t is not None]
            row[visit] = summary(seconds)
            row[visit + "_slowest_ms"] = round(1000 * max(seconds), 2) if seconds else None
        log(f"  lab {name}: first visit {row['first_visit']['median_ms']} ms, update {row['update']['median_ms']} ms")
        rows.append(row)
    return rows


# ---------------------------------------------------------------- profiles

PARTS = (  # (label, how a profiled function is recognised), the first match wins per function
    ("FigureView redraw (Agg draw + PNG)", lambda f, n: n == "redraw" and f.endswith("kit/figure_view.py")),
    ("  of which Figure.draw", lambda f, n: n == "draw" and f.endswith("matplotlib/figure.py")),
    ("  of which axes' ticks and tick labels", lambda f, n: n == "draw" and f.endswith("matplotlib/axis.py")),
    ("  of which PNG encoding", lambda f, n: n == "write" and f.endswith("kit/png.py")),
    ("the lab's model (*_model)", lambda f, n: n.endswith("_model") and "/labs/" in f),
    ("legend built anew", lambda f, n: n == "__init__" and f.endswith("matplotlib/legend.py")),
    ("layout (tight_layout)", lambda f, n: n == "tight_layout"),
)


def profile(name: str, quick: bool = True, top: int = 8) -> dict:
    """cProfile of one lab's sweep, the shipped way: the share of the main parts, and the
    functions with the most time of their own."""
    import cProfile
    import pstats

    function = next(iter(select([name]).values()))
    root = function()
    found = controls(root)
    first = next((i for i, (k, _w) in enumerate(found) if k in ("slider", "selection-slider")), None)
    profiler = cProfile.Profile()
    changes = 0
    start = time.perf_counter()
    profiler.enable()
    for index, (kind, widget) in enumerate(found):
        for value in sweep(kind, widget, index == first, quick):
            changes += _set(widget, value) is not None
    profiler.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler).stats
    parts = {}
    for label, match in PARTS:
        cum = sum(ct for (file, _line, fn), (_cc, _nc, _tt, ct, _callers) in stats.items()
                  if match(file, fn) and not any(match(cf, cn) for (cf, _cl, cn) in _callers))
        parts[label] = round(100.0 * cum / total, 1) if total else None
    own = sorted(((tt, f"{Path(file).name}:{fn}") for (file, _l, fn), (_cc, _nc, tt, _ct, _c) in stats.items()),
                 reverse=True)[:top]
    return {"lab": name, "changes": changes, "ms_per_change": round(1000 * total / max(changes, 1), 1),
            "percent_of_time": parts,
            "own_time_top": [{"function": label, "percent": round(100.0 * tt / total, 1)} for tt, label in own]}


__all__ = ["all_labs", "bench_lab", "controls", "png_settings", "run", "sweep", "profile", "visit_sweep", "visits"]
