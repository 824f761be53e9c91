"""Slider to screen in Chromium, against a local JupyterLab (CPython kernel).

The server is started as the browser tests start theirs (``tools.browser.local_jupyterlab``: the
same flags and settings, over a copy of content/), outside pytest. One lab of each notebook is
measured (:func:`timed_labs`: the first the notebook calls whose first slider can be dragged). Its
notebook is opened and run, then the right or left arrow key is pressed on the lab's first
slider handle, one press at a time (two right, two left, turning back at an end); the time runs from the key's ``keydown`` event in the page
to the first animation frame after the lab's new plot image has loaded and decoded (what the
learner sees), all measured by the page's own clock.

Then the slider is dragged by keyboard: :data:`DRAG_STEPS` arrow presses towards its farther end,
sent as fast as the page takes them. Every new plot shown is time-stamped; the drag *settles* when the plot for the last
value is on screen (no new image for a second after it), and the time counted is from the last
key press to that image. While a value is being computed ipywidgets keeps only the newest of the
values that arrive (it does not queue them all), so the number of images shown per drag says
how many intermediate values were skipped.

The *floor* is measured the same way, in the same run: a notebook of one slider and one image,
where each key press only swaps the image for one of two ready-made pictures of a lab's size,
sent as the labs send theirs. It computes and draws nothing, so its time is what the page, the
server and the kernel's messages cost on their own; a lab's time above the floor is its own.

Each press is also cut into :data:`STAGES` (benchmarks/browser.js, ARM), from the page's and the
kernel's clocks: to the kernel, the kernel's work until it sends the new plot, back to the page,
the image's load, decode and the next frame. Each lab's and the floor's median stages are kept
(``stages``), and ``breakdown`` sets the slowest lab's beside the floor's.
"""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import tempfile
from pathlib import Path

from tools.browser import APP, CHROMIUM, CHROMIUM_ARGS, CONTENT, local_jupyterlab, open_notebook, page_snippets, run_all

from .stats import summary

FLOOR = ("floor.ipynb", "course-lab-floor")          # written into the server's folder by ``run``
TARGET_MS = 50.0             # key press to plot on screen, median
DRAG_STEPS, DRAG_TARGET_MS = 20, 150.0


def _steps_to_far_end(widget) -> int:
    """How many steps a slider can take from its value towards its farther end."""
    if widget._model_name == "SelectionSliderModel":
        count, at = len(widget.options), widget.index
    else:
        step = widget.step or 1
        count = round((widget.max - widget.min) / step) + 1
        at = round(((widget.value if widget._model_name != "FloatLogSliderModel"
                     else math.log(widget.value, widget.base)) - widget.min) / step)
    return max(at, count - 1 - at)


def timed_labs() -> dict:
    """{lab: (notebook, its root's class)}: for each notebook, the first lab it calls (the
    course's inventory) whose first slider can be dragged :data:`DRAG_STEPS` steps without
    reaching an end; each lab is built headlessly to see its slider."""
    from engine.core import inventory

    from .labs import all_labs, close, controls

    built, chosen = all_labs(), {}
    for notebook in inventory.notebooks():
        for lab in notebook.labs:
            root = built[lab.removeprefix("labs.")]()
            css = next(c for c in root._dom_classes if c.startswith("course-lab-"))
            sliders = [w for kind, w in controls(root) if kind in ("slider", "selection-slider")]
            fits = bool(sliders) and _steps_to_far_end(sliders[0]) > DRAG_STEPS
            close(root)
            if fits:
                chosen[css.removeprefix("course-lab-")] = (notebook.path, css)
                break
    return chosen

# The JavaScript evaluated in the page: benchmarks/browser.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), KERNEL=f"{APP}.shell.currentWidget.sessionContext.session.kernel")
ARM, ARM_DRAG = SNIPPETS["ARM"], SNIPPETS["ARM_DRAG"]

# The stages of a key press (benchmarks/browser.js, ARM), each from the mark before to its own;
# "kernel" and "to page" are read from the kernel's clock where it made its messages.
STAGES = (("to kernel", "key press to the kernel's busy for it: sent, the server, the kernel's queue"),
          ("kernel", "the kernel's busy to its message of the new plot: the lab's compute, draw and PNG"),
          ("to page", "that message made to received in the page: the kernel's output, the server"),
          ("to src", "received to the image's src set (the widget's messages handled in turn)"),
          ("load", "src set to the image loaded"),
          ("decode", "loaded to decoded"),
          ("frame", "decoded to the next animation frame"))


def stages(marks: dict) -> dict | None:
    """{stage: ms} of one key press's marks (ARM's state), or None if a message was not seen."""
    busy, picture = marks.get("busy"), marks.get("picture")
    if busy is None or picture is None:
        return None
    points = (marks["key"], busy["date"], picture["date"], picture["at"], marks["src"], marks["load"],
              marks["decoded"], marks["frame"])
    return {name: round(b - a, 2) for (name, _), a, b in zip(STAGES, points, points[1:])}


# The floor's notebook: the stack lab's picture and its negative, as FigureView sends them; a key
# press on the slider shows one or the other, with nothing computed or drawn.
FLOOR_CELL = """\
import ipywidgets as widgets
from labs.norms.stack import StackLab

view = StackLab().view
first = view.image.value
view.figure.patch.set_facecolor("black")
view.redraw()
pictures = [first, view.image.value]
slider = widgets.IntSlider(value=5, min=0, max=40, description="floor")
image = widgets.Image(format=view.image.format, value=pictures[slider.value % 2])
slider.observe(lambda change: setattr(image, "value", pictures[change["new"] % 2]), names="value")
floor = widgets.VBox([slider, image])
floor.add_class("course-lab-floor")
floor"""


def _course_kernelspec() -> dict:
    """The kernelspec the course's notebooks name (that of the first in content/)."""
    first = sorted(Path(CONTENT).glob("*.ipynb"))[0]
    return json.loads(first.read_text(encoding="utf-8"))["metadata"]["kernelspec"]


def write_floor_notebook(folder) -> Path:
    """Write the floor's notebook (one code cell, the course's kernel) into ``folder``."""
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "floor", "metadata": {},
                           "outputs": [], "source": FLOOR_CELL}],
                "metadata": {"kernelspec": _course_kernelspec()},
                "nbformat": 4, "nbformat_minor": 5}
    path = Path(folder) / FLOOR[0]
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def stage_medians(parts: list) -> dict:
    """{stage: median ms} over the presses whose stages were all seen ({} if none was)."""
    seen = [p for p in parts if p is not None]
    return {name: round(statistics.median(p[name] for p in seen), 2) for name, _ in STAGES} if seen else {}


def breakdown(out: dict) -> dict | None:
    """Where the time of the slowest lab's key press goes: {"lab", "stages": {stage: [lab's
    median, the floor's, above the floor]}}, medians in ms from the same run (the stages' medians
    need not add up to the press's)."""
    labs = {name: r for name, r in out["labs"].items() if r.get("stages")}
    floor = out.get("floor", {}).get("stages")
    if not labs or not floor:
        return None
    name = max(labs, key=lambda n: labs[n]["median_ms"])
    return {"lab": name, "stages": {stage: [labs[name]["stages"][stage], floor[stage],
                                            round(labs[name]["stages"][stage] - floor[stage], 2)]
                                    for stage, _ in STAGES},
            "about": dict(STAGES)}


@contextlib.contextmanager
def jupyter_server():
    """(base URL, root folder) of a local JupyterLab over a copy of content/, as the tests start it."""
    with tempfile.TemporaryDirectory(prefix="bench-jupyter-") as tmp:
        with local_jupyterlab(tmp, Path(tmp) / "progress.json") as server:
            yield server


def _position(handle) -> tuple[float, float, float]:
    """(value, lowest, highest) of a slider, as its handle tells a screen reader."""
    return tuple(float(handle.get_attribute(name)) for name in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))


def _next_key(handle, i: int) -> str:
    """Two presses right, two left, and so on, turning back at either end of the slider (a press
    there would change nothing)."""
    now, low, high = _position(handle)
    right = (i // 2) % 2 == 0
    if now >= high:
        right = False
    elif now <= low:
        right = True
    return "ArrowRight" if right else "ArrowLeft"


def _measure(page, lab, presses: int, parts: list | None = None) -> list:
    """Seconds from each key press on the lab's first slider to its new image on screen; each
    press's :func:`stages` are added to ``parts``, if given."""
    handle = lab.locator(".widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    times = []
    for i in range(presses):
        key = _next_key(handle, i)
        page.evaluate(ARM, [lab.element_handle(), handle.element_handle()])
        page.keyboard.press(key)
        page.wait_for_function("window.__courseBench && window.__courseBench.done", timeout=30_000)
        marks = page.evaluate("window.__courseBench")
        times.append(marks["ms"] / 1000.0)
        if parts is not None:
            parts.append(stages(marks))
        page.wait_for_timeout(150)                     # let the kernel go idle between presses
    return times


def _drag(page, lab, steps: int = DRAG_STEPS) -> tuple[float, int]:
    """(seconds from the last of ``steps`` quick key presses to the last plot on screen, plots shown).

    The drag goes towards the slider's farther end, and every step must move the slider: a drag
    that reaches an end would time presses that change nothing."""
    handle = lab.locator(".widget-slider .noUi-handle").first
    handle.focus()
    start, low, high = _position(handle)
    forward, back = ("ArrowRight", "ArrowLeft") if high - start >= start - low else ("ArrowLeft", "ArrowRight")
    page.evaluate(ARM_DRAG, [lab.element_handle(), handle.element_handle()])
    for _ in range(steps):
        page.keyboard.press(forward)
    end = _position(handle)[0]
    if end in (low, high):
        raise RuntimeError(f"a {steps}-step drag from {start} reached the end of the slider ({low} to {high})")
    quiet = 0
    count = -1
    while quiet < 10:                                  # a second without a new image
        page.wait_for_timeout(100)
        now = page.evaluate("window.__courseDrag.shown.length")
        quiet = quiet + 1 if now == count else 0
        count = now
    state = page.evaluate("({keys: window.__courseDrag.keys, shown: window.__courseDrag.shown})")
    page.evaluate("window.__courseDrag.stop()")
    for _ in range(steps):                             # back to where it was, for the next drag
        page.keyboard.press(back)
    page.wait_for_timeout(1500)
    _return_to(page, handle, start, steps)
    last_key = state["keys"][-1]
    return (state["shown"][-1][0] - last_key) / 1000.0, len(state["shown"])


def _return_to(page, handle, value: float, most: int) -> None:
    """Press the arrows one at a time until the slider stands at ``value`` again. Quick presses
    can land while the kernel's echo of an earlier value resets the handle, so a drag and its
    way back do not always cancel; left alone, the drags would creep towards an end."""
    for _ in range(2 * most):
        now = _position(handle)[0]
        if math.isclose(now, value, rel_tol=1e-9, abs_tol=1e-12):
            return
        page.keyboard.press("ArrowRight" if now < value else "ArrowLeft")
        page.wait_for_timeout(200)
    raise RuntimeError(f"the slider did not come back to {value} (it stands at {_position(handle)[0]})")


def _open_lab(browser, base, notebook, css):
    """(context, page, lab locator): the notebook opened and run in a new page, its lab found."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    open_notebook(page, base, notebook)
    run_all(page)
    lab = page.locator(f".{css}").first
    lab.wait_for()
    return context, page, lab


def run(presses: int = 25, drags: int = 5, labs=None, log=print) -> dict:
    """{lab: summary} of slider-to-screen times and drags, and the floor, or {"skipped": reason}."""
    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is missing"}
    from playwright.sync_api import sync_playwright

    timed = timed_labs()
    out = {"target_ms": TARGET_MS, "drag_steps": DRAG_STEPS, "drag_target_ms": DRAG_TARGET_MS, "labs": {}}
    with jupyter_server() as (base, root), sync_playwright() as playwright:
        write_floor_notebook(root)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context, page, lab = _open_lab(browser, base, *FLOOR)
            try:
                _measure(page, lab, 2)
                parts = []
                out["floor"] = summary(_measure(page, lab, presses, parts))
                out["floor"]["stages"] = stage_medians(parts)
                log(f"  browser floor (an image swapped, nothing drawn): {out['floor']['median_ms']} ms median")
            finally:
                context.close()
            for name in labs or timed:
                notebook, css = timed[name]
                context, page, lab = _open_lab(browser, base, notebook, css)
                try:
                    _measure(page, lab, 2)                 # warm-up (first draws, caches)
                    parts = []
                    result = summary(_measure(page, lab, presses, parts))
                    result["stages"] = stage_medians(parts)
                    result["notebook"] = notebook
                    result["meets_target"] = bool(result["median_ms"] <= TARGET_MS)
                    result["above_floor_ms"] = round(result["median_ms"] - out["floor"]["median_ms"], 1)
                    settles, images = [], []
                    for _ in range(drags):
                        settle, shown = _drag(page, lab)
                        settles.append(settle)
                        images.append(shown)
                    drag = {"settle": summary(settles), "images": int(sorted(images)[len(images) // 2]),
                            "images_each": images}
                    drag["meets_target"] = bool(drag["settle"]["median_ms"] <= DRAG_TARGET_MS)
                    result["drag"] = drag
                    out["labs"][name] = result
                    log(f"  browser {name}: {result['median_ms']} ms median, p95 {result['p95_ms']} ms; "
                        f"a {DRAG_STEPS}-step drag settles {drag['settle']['median_ms']} ms after its last step, "
                        f"{drag['images']} images shown")
                finally:
                    context.close()
        finally:
            browser.close()
    out["breakdown"] = breakdown(out)
    if out["breakdown"]:
        log(f"  browser: where {out['breakdown']['lab']}'s key press goes, median ms (lab, floor, above the floor): "
            + "; ".join(f"{stage} {a:.1f} {b:.1f} {c:+.1f}" for stage, (a, b, c) in out["breakdown"]["stages"].items()))
    return out


__all__ = ["FLOOR_CELL", "STAGES", "breakdown", "jupyter_server", "run", "stage_medians", "stages", "timed_labs",
           "write_floor_notebook"]
