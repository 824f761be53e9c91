"""The course's landing page (the site root) in a real Chromium: it lists the notebooks, starts
00 in JupyterLab, and checks that Python can be loaded from where the site says it is (each
file's first bytes), saying in plain words what happened when it cannot (the CDN refused, a
core-only self-hosted build) and turning the start button off. (Plain-HTTP classroom addresses,
browsers that keep no site data and damaged files: test_browser_classroom.py.)"""

import re
import urllib.parse

from conftest import CONTENT, notebooks
from test_browser_site import watch
from test_site import first_heading

CDN = "https://cdn.jsdelivr.net/"


def cdn_with_every_file(asked):
    """A CDN that answers for every file, with what such a file starts with."""
    def cdn(route):
        name = route.request.url.split("?")[0].rsplit("/", 1)[-1]
        asked.append((route.request.method, route.request.headers.get("range"), name))
        start = (b"\0asm" if name.endswith(".wasm") else b"PK\x03\x04" if name.endswith((".zip", ".whl"))
                 else b"export const loadPyodide")
        route.fulfill(status=200, body=start + bytes(64), headers={"Access-Control-Allow-Origin": "*"})
    return cdn


def open_landing(browser, base, width=1280, cdn=None):
    """A page on the landing page (through the sub-path without its slash); CDN requests are
    refused, or answered by cdn(route)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    record = watch(page)
    if cdn is not None:
        context.route(CDN + "**", cdn)
    page.goto(base.rstrip("/"))
    page.wait_for_selector("#runtime-check[data-result]", timeout=60_000)
    return page, record


def test_with_the_cdn_refused_the_page_says_what_happened_and_what_to_ask_for(
        online_site, serve_site, browser, artifacts):
    base = serve_site(online_site[0], "/course/")
    page, record = open_landing(browser, base, width=390)
    try:
        assert page.url == base
        check = page.locator("#runtime-check")
        assert check.get_attribute("data-result") == "problem"
        text = check.inner_text()
        assert "Python cannot load, so the notebooks will not run in this browser." in text
        assert "could not reach cdn.jsdelivr.net" in text
        assert "ask your instructor for the self-hosted version of the course" in text
        assert check.get_attribute("role") == "status"
        start = page.locator("#course-start")
        assert start.get_attribute("href") is None and start.get_attribute("aria-disabled") == "true"
        assert page.inner_text("#course-start-why") == ("The course cannot start in this browser: Python cannot "
                                                        "load, so the notebooks will not run in this browser. See below.")
        assert start.get_attribute("aria-describedby") == "course-start-why"
        # Readable at 390 px: nothing wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(artifacts / "landing-cdn-refused-390px.png"), full_page=True)
        assert record["outside"] and all(u.startswith(CDN + "pyodide/v314.0.6/full/") for u in record["outside"])
    finally:
        page.context.close()


def test_a_core_only_self_hosted_build_is_named_as_such(self_hosted_site, serve_site, browser, artifacts):
    base = serve_site(self_hosted_site[0], "/classroom/")
    page, record = open_landing(browser, base)
    try:
        text = page.inner_text("#runtime-check")
        assert page.get_attribute("#runtime-check", "data-result") == "problem"
        assert "Python starts here, but the notebooks cannot run: numpy, matplotlib are missing." in text
        assert "built with only the core of Pyodide" in text
        assert "rebuild the site with the full Pyodide distribution" in text
        assert record["outside"] == []
        page.screenshot(path=str(artifacts / "landing-core-only.png"), full_page=True)
    finally:
        page.context.close()


def test_with_the_runtime_reachable_the_page_says_ready(online_site, serve_site, browser):
    base = serve_site(online_site[0], "/course/")
    asked = []
    page, _record = open_landing(browser, base, cdn=cdn_with_every_file(asked))
    try:
        text = page.inner_text("#runtime-check")
        assert page.get_attribute("#runtime-check", "data-result") == "ok", text
        assert "Ready: Python and every package the notebooks need can be loaded (from cdn.jsdelivr.net)." in text
        names = {name for _method, _range, name in asked}
        assert {"pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"} <= names
        assert any(n.startswith("numpy-2.4.6-") for n in names)
        assert {(method, rng) for method, rng, _name in asked} == {("GET", "bytes=0-15")}, \
            "the check asks for each file's first bytes only"
        page.wait_for_selector("#storage-check[data-result]")
        assert "Your work is kept in this browser, for this site's address" in page.inner_text("#storage-check")
        assert page.get_attribute("#course-start", "href") == "lab/index.html?path=00_start_here.ipynb"
    finally:
        page.context.close()


def test_the_page_lists_the_notebooks_and_starts_00_by_keyboard(online_site, serve_site, browser, artifacts):
    base = serve_site(online_site[0], "/course/")
    page, record = open_landing(browser, base, cdn=cdn_with_every_file([]))
    try:
        assert page.locator("h1").inner_text() == "The transformer block, part by part"
        assert page.locator("h2").all_inner_texts() == [
            "Can the course run in this browser?", "Your work", "The notebooks, in order", "Good to know"]
        listed = page.locator(".notebooks li > a").all_inner_texts()
        assert listed == [first_heading(nb) for nb in notebooks()]
        summaries = page.locator(".notebooks li p").all_inner_texts()
        assert len(summaries) == len(listed) and all(len(s) > 40 for s in summaries)
        page.keyboard.press("Tab")
        focused = page.evaluate("[document.activeElement.id, getComputedStyle(document.activeElement).outlineStyle,"
                                " getComputedStyle(document.activeElement).outlineWidth]")
        assert focused[0] == "course-start" and focused[1] == "solid" and focused[2] == "3px"
        page.screenshot(path=str(artifacts / "landing-start-focused.png"))
        page.keyboard.press("Enter")
        page.wait_for_url("**/course/lab/index.html?path=00_start_here.ipynb")
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
        page.wait_for_function("text => document.querySelector('.jp-NotebookPanel').innerText.includes(text)",
                               arg=first_heading(CONTENT / "00_start_here.ipynb"))
        assert all(u.startswith(CDN) for u in record["outside"]), record["outside"]
    finally:
        page.context.close()


def test_the_list_shows_each_notebook_s_own_number_only_and_the_site_has_an_icon(online_site, serve_site, browser):
    """The notebooks' titles carry their numbers ("01 Attention: ..."), so the list draws no
    "1.", "2." of its own beside them; the page, and JupyterLab's page, name the site's icon, which
    the site serves (a browser's request for it is not a 404), at its root as well."""
    base = serve_site(online_site[0], "/course/")
    page, record = open_landing(browser, base, cdn=cdn_with_every_file([]))
    try:
        items = page.locator(".notebooks li")
        assert items.count() == len(notebooks())
        markers = page.evaluate("[...document.querySelectorAll('.notebooks li')]"
                                ".map(li => getComputedStyle(li).listStyleType)")
        assert set(markers) == {"none"}
        first = page.locator(".notebooks li").first.inner_text()
        assert first.startswith(first_heading(CONTENT / "00_start_here.ipynb"))
        icons = [page.evaluate("document.querySelector('link[rel=icon]').href")]
        lab = page.request.get(base + "lab/index.html").text()           # JupyterLab's page names it too
        icons.append(urllib.parse.urljoin(base + "lab/index.html",
                                          re.search(r'<link rel="icon" href="([^"]+)"', lab).group(1)))
        for href in icons:
            answer = page.request.get(href)
            assert answer.status == 200 and answer.body()[:4] == b"\0\0\1\0", href   # an ICO file
        root = page.request.get(base + "favicon.ico")
        assert root.status == 200 and root.body()[:4] == b"\0\0\1\0"
        assert not [e for e in record["errors"] if "404" in e], record["errors"]
    finally:
        page.context.close()
