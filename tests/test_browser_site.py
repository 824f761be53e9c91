"""The static site in a real Chromium: the UI, every notebook, and a kernel that boots offline."""

import hashlib
import json
import re
import urllib.parse

import pytest

from conftest import CONTENT, notebooks

LOCAL = ("http://127.0.0.1", "data:", "blob:")
CDN = "https://cdn.jsdelivr.net/"


def first_heading(notebook):
    """The first line of the notebook's first markdown cell, as the page shows it."""
    cells = json.loads(notebook.read_text())["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return source.strip().splitlines()[0].lstrip("# ").strip()


def watch(page):
    """Record console errors, and record and refuse every request that leaves 127.0.0.1.

    The route is the context's, so it also sees the kernel's web worker (a page's own
    routes and request events do not). Routes added later take precedence.
    """
    record = {"errors": [], "outside": []}
    page.on("console", lambda m: record["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: record["errors"].append(str(e)))

    def route(route):
        if route.request.url.startswith(LOCAL):
            return route.continue_()
        record["outside"].append(route.request.url)
        return route.abort()

    page.context.route("**/*", route)
    return record


def test_lab_ui_renders_from_a_sub_path(online_site, serve_site, page, artifacts):
    site, _ = online_site
    base = serve_site(site, "/transformer-course/")
    record = watch(page)  # the CDN is unreachable here: its requests are refused
    page.goto(base + "lab/index.html")
    page.wait_for_selector(".jp-DirListing-item", timeout=60_000)
    listed = page.inner_text(".jp-DirListing-content")
    for notebook in notebooks():
        top = notebook.relative_to(CONTENT).parts[0]
        assert top in listed, f"{top} is not in the file browser"
    page.screenshot(path=str(artifacts / "site-lab-ui.png"))
    unexpected = [e for e in record["errors"] if not re.search(r"cdn\.jsdelivr|pyodide|Failed to load resource|ERR_FAILED", e, re.I)]
    assert unexpected == [], unexpected


@pytest.mark.parametrize("notebook", notebooks(), ids=lambda p: p.relative_to(CONTENT).as_posix())
def test_every_notebook_opens_and_shows_its_cells(notebook, online_site, serve_site, page, artifacts):
    site, _ = online_site
    base = serve_site(site, "/transformer-course/")
    record = watch(page)
    path = urllib.parse.quote(notebook.relative_to(CONTENT).as_posix())
    page.goto(f"{base}lab/index.html?path={path}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    heading = first_heading(notebook)
    page.wait_for_function(
        "text => document.querySelector('.jp-NotebookPanel').innerText.includes(text)", arg=heading)
    expected = min(5, len(json.loads(notebook.read_text())["cells"]))
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length >= n", arg=expected)
    assert not page.locator(".jp-Dialog").is_visible(), "a dialog (e.g. Select Kernel) opened"
    page.screenshot(path=str(artifacts / f"site-{notebook.stem}.png"))
    unexpected = [e for e in record["errors"] if not re.search(r"cdn\.jsdelivr|pyodide|Failed to load resource|ERR_FAILED", e, re.I)]
    assert unexpected == [], unexpected
    assert all(u.startswith(CDN) for u in record["outside"]), record["outside"]


def run_in_repl(page, base, codes):
    """Run each snippet as a cell of the JupyterLite console; return the console's text."""
    query = "&".join("code=" + urllib.parse.quote(code) for code in codes)
    page.goto(f"{base}repl/index.html?kernel=python&execute=1&{query}")
    # A cell gets its number once the kernel's reply and the "idle" after its outputs are in
    # (JupyterLab's CodeCell.execute; the Pyodide kernel sends a cell's output before its reply):
    # when every snippet has its number, every output is on the page.
    page.wait_for_function(
        "n => [...document.querySelectorAll('.jp-CodeConsole .jp-InputPrompt')]"
        ".filter(p => /\\[\\d+\\]/.test(p.innerText)).length >= n",
        arg=len(codes), timeout=120_000)
    return page.inner_text(".jp-CodeConsole")


def test_self_hosted_kernel_boots_with_no_outside_request(self_hosted_site, serve_site, page, artifacts):
    site, _ = self_hosted_site
    base = serve_site(site, "/classroom/")
    record = watch(page)
    text = run_in_repl(page, base, [
        "print(6 * 7)",
        "import ipywidgets\nipywidgets.IntSlider(value=3, description='probe')",
        "import os\nos.chdir('/tmp')  # as from a notebook in another folder",
        "import lib\nprint('found', lib.__file__)",
        "import lib.norm",
    ])
    page.wait_for_selector(".widget-slider", timeout=30_000)
    page.screenshot(path=str(artifacts / "self-hosted-repl.png"))
    assert "42" in text
    assert "probe" in page.inner_text(".widget-slider")
    assert re.search(r"found /lib/python3\.\d+/site-packages/lib/__init__\.py", text), text
    # The npm core ships no numpy: that, and only that, stops the library here.
    assert "No module named 'numpy'" in text
    assert record["outside"] == [], record["outside"]


FETCH_ARRAYS = (
    # What lib.files does in the browser, without numpy (the npm core has none): the index the
    # site build wrote into the wheel, the fetcher the wheel declares, each served file checked.
    "import hashlib, json, importlib.metadata, importlib.resources\n"
    "import lib  # the course wheel, loaded as a plain import loads it\n"
    "index = json.loads(importlib.resources.files('lib').joinpath('trained/served.json').read_text())\n"
    "(fetch,) = [e.load() for e in importlib.metadata.entry_points(group='transformer_course.fetch')]\n"
    "for name, entry in sorted(index.items()):\n"
    "    data = fetch(entry['file'])\n"
    "    print(name, 'fetched', len(data) == entry['bytes'], hashlib.sha256(data).hexdigest() == entry['sha256'])"
)


def test_self_hosted_kernel_fetches_the_trained_models_arrays_from_the_site(self_hosted_site, serve_site, page):
    """Notebook 05's arrays are not in the wheel the kernel preloads: the kernel fetches them from
    the site (here self-hosted, under a sub-path, with every outside request refused)."""
    site, _ = self_hosted_site
    base = serve_site(site, "/classroom/")
    record = watch(page)
    text = run_in_repl(page, base, [FETCH_ARRAYS, "try:\n    fetch('weights-000000000000.npz')\n"
                                                  "except OSError as error:\n    print('refused:', error)"])
    for name in ("heldout_texts.npz", "precomputed.npz", "reference.npz", "weights.npz"):
        assert f"{name} fetched True True" in text, text
    assert re.search(r"refused: the site answered 404 .*/classroom/static/pyodide-lock/weights-000000000000\.npz",
                     text), text
    assert record["outside"] == [], record["outside"]


def test_online_site_boots_from_a_stand_in_cdn(online_site, self_hosted_site, serve_site, browser, artifacts):
    """The default build, with the CDN answered from local copies of what it serves.

    The stand-in holds the npm core and PyPI's pure wheels (numpy's wasm wheel exists
    only on the real CDN), so the kernel boots, takes the course wheel from the site's
    own lock, and stops at numpy, having asked the CDN for it. PyPI's wheels are not
    byte for byte Pyodide's, so the stand-in corrects their sha256 in the lock on its
    way to the page; nothing else in the site is touched.
    """
    site, _ = online_site
    stand_in = self_hosted_site[0] / "static"
    base = serve_site(site, "/transformer-course/")
    context = browser.new_context()
    page = context.new_page()
    record = watch(page)
    asked = []
    cors = {"Access-Control-Allow-Origin": "*"}

    def stand_in_file(url):
        name = url.rsplit("/", 1)[-1].split("?")[0]
        found = [stand_in / d / name for d in ("pyodide", "pyodide-lock") if (stand_in / d / name).is_file()]
        return name, (found[0] if found else None)

    def cdn(route):
        name, path = stand_in_file(route.request.url)
        asked.append(name)
        if path is None:
            return route.fulfill(status=404, body="not on the stand-in CDN", headers=cors)
        return route.fulfill(path=str(path), headers=cors)

    def lock(route):
        served = json.loads(route.fetch().text())
        for entry in served["packages"].values():
            if entry["file_name"].startswith(CDN):
                _, path = stand_in_file(entry["file_name"])
                if path is not None:
                    entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        route.fulfill(body=json.dumps(served), content_type="application/json")

    context.route(CDN + "**", cdn)  # the context's routes also see the kernel's worker
    context.route("**/static/pyodide-lock/pyodide-lock.json?*", lock)
    try:
        text = run_in_repl(page, base, [
            "print(6 * 7)",
            "import lib\nprint('found', lib.__file__)",
            "import lib.norm",
        ])
        page.screenshot(path=str(artifacts / "online-repl-stand-in-cdn.png"))
    finally:
        context.close()
    assert "42" in text
    assert re.search(r"found /lib/python3\.\d+/site-packages/lib/__init__\.py", text), text
    assert "No module named 'numpy'" in text
    assert "pyodide.mjs" in asked and any(n.startswith("numpy-2.4.6-") for n in asked), asked
    assert not any(n.startswith("transformer_course") for n in asked), "the course wheel must come from the site"
    assert all(u.startswith(CDN) for u in record["outside"]), record["outside"]


LOAD_PROGRESS = (
    # The progress module is plain Python, so it loads even where numpy cannot (the npm core).
    "from engine.core import progress\n"
    "print('progress file:', progress.progress_path())"
)


def test_progress_survives_a_page_reload_in_the_browser(self_hosted_site, serve_site, browser):
    site, _ = self_hosted_site
    base = serve_site(site, "/classroom/")
    context = browser.new_context()
    try:
        first = context.new_page()
        watch(first)
        text = run_in_repl(first, base, [
            LOAD_PROGRESS, "progress.record_check('browser-demo', True, 'pass')\nprint(progress.notices())"])
        assert "progress file: /drive/course-progress.json" in text, text
        assert "[]" in text
        first.close()
        second = context.new_page()  # a new page: a new kernel, the same browser storage
        watch(second)
        text = run_in_repl(second, base, [
            LOAD_PROGRESS, "print('status after reload:', progress.status_of(progress.exercise_entry('browser-demo')))"])
        assert "status after reload: passed" in text, text
    finally:
        context.close()
