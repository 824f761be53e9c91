"""Slider to screen in Chromium, against a local JupyterLab (CPython kernel).

The server is started as the browser tests start theirs (``tools.browser.local_jupyterlab``: the
same flags and settings, over a copy of content/), outside pytest. For each lab measured the
notebook is opened and run, then the right (or left) arrow key is pressed on the lab's first
slider handle, one press at a time; the time runs from the key's ``keydown`` event in the page
to the first animation frame after the lab's new plot image has loaded and decoded (what the
learner sees), all measured by the page's own clock.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from tools.browser import CHROMIUM, CHROMIUM_ARGS, local_jupyterlab, open_notebook, run_all

from .stats import summary

LABS = {"stack": ("03_norms_and_residuals.ipynb", "course-lab-stack"),
        "flow": ("04_decoder_block.ipynb", "course-lab-layer-flow")}
TARGET_MS = 150.0

ARM = """([lab, handle]) => {
    const img = lab.querySelector('.course-figure img, img');
    const state = {done: false, t0: null, ms: null, before: img.src};
    window.__courseBench = state;
    handle.addEventListener('keydown', () => { if (state.t0 === null) state.t0 = performance.now(); },
                            {capture: true, once: true});
    const observer = new MutationObserver(() => {
        if (img.src === state.before || state.t0 === null) return;
        observer.disconnect();
        const shown = () => requestAnimationFrame(() => {
            state.ms = performance.now() - state.t0; state.done = true; });
        (img.complete ? Promise.resolve() : new Promise(r => img.addEventListener('load', r, {once: true})))
            .then(() => img.decode().catch(() => null)).then(shown);
    });
    observer.observe(img, {attributes: true, attributeFilter: ['src']});
}"""


@contextlib.contextmanager
def jupyter_server():
    """(base URL, root folder) of a local JupyterLab over a copy of content/, as the tests start it."""
    with tempfile.TemporaryDirectory(prefix="bench-jupyter-") as tmp:
        with local_jupyterlab(tmp, Path(tmp) / "progress.json") as server:
            yield server


def _measure(page, lab, presses: int) -> list:
    """Milliseconds from each key press on the lab's first slider to its new image on screen."""
    handle = lab.locator(".widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    times = []
    for i in range(presses):
        key = "ArrowRight" if i < (presses + 1) // 2 else "ArrowLeft"
        page.evaluate(ARM, [lab.element_handle(), handle.element_handle()])
        page.keyboard.press(key)
        page.wait_for_function("window.__courseBench && window.__courseBench.done", timeout=30_000)
        times.append(page.evaluate("window.__courseBench.ms") / 1000.0)
        page.wait_for_timeout(150)                     # let the kernel go idle between presses
    return times


def run(presses: int = 15, labs=("stack", "flow"), log=print) -> dict:
    """{lab: summary} of slider-to-screen times, or {"skipped": reason}."""
    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is missing"}
    from playwright.sync_api import sync_playwright

    out = {"target_ms": TARGET_MS, "labs": {}}
    with jupyter_server() as (base, _root), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in labs:
                notebook, css = LABS[name]
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.set_default_timeout(60_000)
                try:
                    open_notebook(page, base, notebook)
                    run_all(page)
                    lab = page.locator(f".{css}").first
                    lab.wait_for()
                    _measure(page, lab, 2)                 # warm-up (first draws, caches)
                    result = summary(_measure(page, lab, presses))
                    result["notebook"] = notebook
                    result["meets_target"] = bool(result["median_ms"] <= TARGET_MS)
                    out["labs"][name] = result
                    log(f"  browser {name}: {result['median_ms']} ms median, p95 {result['p95_ms']} ms")
                finally:
                    context.close()
        finally:
            browser.close()
    return out


__all__ = ["jupyter_server", "run"]
