"""Every lab driven headlessly in CPython: control change to updated output, and the naive way.

For each ``*_lab()`` of the lab packages the harness builds the lab, finds its controls in the
widget tree (sliders, dropdowns, toggle buttons, toggles and checkboxes that are enabled and are
not the "use my function" switch), and sets a sweep of values on each: spread values across the
first slider's range (or every option of a selection slider), and every option of each dropdown
and toggle. The observer chain is synchronous, so the time to set ``control.value`` is the time
from the change to the updated figure, numbers and verdict being ready.

Three ways are timed on the same values, interleaved, in the same process:

* ``update``: the lab as shipped (its view updates artists in place and calls ``FigureView.redraw``).
  Each value is first set once on its own (``first_visit``: what a learner's first drag meets,
  with any cache a lab keeps still cold), then again interleaved with the two other ways, so
  that all three run with the same caches. The 50 ms target applies to both.
* ``savefig``: the same lab with the FigureView of before (``Figure.savefig`` to PNG on every
  redraw, nothing skipped), which shows what the FigureView rendering path gains.
* ``naive``: the ``interact`` way, a new figure built and rendered on every change. It is made
  generically by building the lab anew for each value (its widgets, a new ``Figure`` with its
  axes and layout, the model) with rendering held back, setting the control on that new lab,
  then rendering each of its figures once as the inline backend shows a figure under
  ``interact`` (``IPython.core.pylabtools.print_figure(fig, "png", bbox_inches="tight")``, the
  backend's default, which measures the figure's extent before drawing it). The rebuild
  counts a little that ``interact`` would not (the widgets are built again, and the model runs
  for the default value before the new one); ``naive_rebuild`` reports the rebuild alone so
  the difference can be judged.
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

from .stats import ratio, summary

os.environ.setdefault("MPLBACKEND", "Agg")

MODULES = ("start", "positional", "ffn", "norms", "decoder", "trained")
SWEEP_FULL, SWEEP_QUICK = 10, 4        # values across the first slider
OPTIONS_FULL, OPTIONS_QUICK = 6, 3     # at most this many options per dropdown or toggle
TARGET_MS, TARGET_RATIO = 50.0, 3.0


def all_labs():
    """{"<package>.<name>": function} for every ``*_lab`` function of the lab packages."""
    found = {}
    for name in MODULES:
        package = importlib.import_module(f"labs.{name}")
        for attr, value in vars(package).items():
            if (attr.endswith("_lab") and callable(value)
                    and getattr(value, "__module__", "").startswith(package.__name__ + ".")):
                found[f"{name}.{attr}"] = value
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
        if widget._model_name == "FloatLogSliderModel":
            exps = np.linspace(widget.min, widget.max, n)
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

def savefig_png(view) -> bytes:
    """The FigureView rendering of before: ``Figure.savefig`` to PNG, every time."""
    buffer = io.BytesIO()
    view.figure.savefig(buffer, format="png", dpi=view.dpi, facecolor=view.figure.get_facecolor())
    return buffer.getvalue()


def inline_png(view) -> bytes:
    """What ``interact`` shows: the figure rendered as the inline backend renders it."""
    from IPython.core.pylabtools import print_figure

    return print_figure(view.figure, "png", bbox_inches="tight")


def _savefig_redraw(view) -> None:
    view.image.value = savefig_png(view)
    view.renders += 1


@contextlib.contextmanager
def patched_views(mode: str, created: list | None = None):
    """mode "savefig": every redraw renders with savefig; "hold": redraws only count (and views
    made meanwhile are appended to ``created``)."""
    from labs.kit import figure_view

    cls = figure_view.FigureView
    original_redraw, original_init = cls.redraw, cls.__init__

    def held(self):
        self.renders += 1

    def init(self, *args, **kwargs):
        if created is not None:
            created.append(self)
        original_init(self, *args, **kwargs)

    cls.redraw = _savefig_redraw if mode == "savefig" else held
    cls.__init__ = init
    try:
        yield
    finally:
        cls.redraw, cls.__init__ = original_redraw, original_init


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


def bench_lab(name: str, function, quick: bool = False) -> dict:
    """Time every control of one lab in the three ways; return its summary."""
    t0 = time.perf_counter()
    build_s = []
    gc.collect()
    for i in range(1 if quick else 3):
        if i:
            close(root)
        seconds, root = _timed_build(function)
        build_s.append(seconds)
    found = controls(root)
    savefig_root = function()
    savefig_found = controls(savefig_root)
    first_slider = next((i for i, (k, _w) in enumerate(found) if k in ("slider", "selection-slider")), None)
    times = {"update": [], "first_visit": [], "savefig": [], "naive": [], "naive_rebuild": []}
    first = {"update": [], "first_visit": [], "savefig": [], "naive": []}
    described = []
    for index, (kind, widget) in enumerate(found):
        values = sweep(kind, widget, index == first_slider, quick)
        original = widget.value
        other = savefig_found[index][1]
        described.append({"control": _label(widget), "kind": kind, "values": len(values),
                          "first_slider": index == first_slider})
        # Pass 1: the shipped lab alone, each value for the first time in this process (what a
        # learner's first drag meets, caches cold). Pass 2: the three ways interleaved, same values.
        first_visits = [_set(widget, value) for value in values]
        with contextlib.suppress(Exception):
            widget.value = original
        for value, visit in zip(values, first_visits):
            fast = _set(widget, value)
            with patched_views("savefig"):
                slow = _set(other, value)
            naive, rebuild = _naive_change(function, index, value)
            if fast is None or slow is None or visit is None:
                continue
            for key, t in (("update", fast), ("first_visit", visit), ("savefig", slow), ("naive", naive)):
                times[key].append(t)
                if index == first_slider:
                    first[key].append(t)
            times["naive_rebuild"].append(rebuild)
        with contextlib.suppress(Exception):
            widget.value = original
            with patched_views("savefig"):
                other.value = original
    close(root)
    close(savefig_root)
    result = {"lab": name, "controls": described, "build": summary(build_s)}
    for key, values in times.items():
        result[key] = summary(values)
    result["first_slider"] = {key: summary(v) for key, v in first.items()}
    result["speedup_vs_naive"] = ratio(result["naive"], result["update"])
    result["speedup_vs_savefig"] = ratio(result["savefig"], result["update"])
    meds = (result["update"]["median_ms"], result["first_visit"]["median_ms"])
    result["meets_ms_target"] = bool(None not in meds and max(meds) <= TARGET_MS)
    result["meets_ratio_target"] = bool(result["speedup_vs_naive"] and result["speedup_vs_naive"] >= TARGET_RATIO)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def _timed_build(function):
    start = time.perf_counter()
    root = function()
    return time.perf_counter() - start, root


def run(names=None, quick: bool = False, log=print) -> list:
    """Benchmark the chosen labs; a list of per-lab summaries."""
    import matplotlib
    matplotlib.use("Agg")
    results = []
    for name, function in select(names).items():
        result = bench_lab(name, function, quick=quick)
        log(f"  lab {name}: {result['update']['median_ms']} ms median "
            f"(savefig {result['savefig']['median_ms']}, naive {result['naive']['median_ms']}, "
            f"{result['update']['n']} changes, {result['seconds']} s)")
        results.append(result)
    return results


# ---------------------------------------------------------------- profiles

PARTS = (  # (label, how a profiled function is recognised), the first match wins per function
    ("FigureView redraw (Agg draw + PNG)", lambda f, n: n == "redraw" and f.endswith("figure_view.py")),
    ("  of which Figure.draw", lambda f, n: n == "draw" and f.endswith("matplotlib/figure.py")),
    ("  of which axes' ticks and tick labels", lambda f, n: n == "draw" and f.endswith("matplotlib/axis.py")),
    ("  of which PNG encoding", lambda f, n: n == "encode_png"),
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


__all__ = ["all_labs", "bench_lab", "controls", "run", "sweep", "profile"]
