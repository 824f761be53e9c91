"""The course served as a classroom serves it: over plain HTTP, at an address that is not this
computer's own, so the browser gives the page no secure context (window.isSecureContext is
false), no service worker, and the kernel no /drive. Chromium reaches the local server under the
name classroom.test (its host resolver maps that name to 127.0.0.1; the name is not localhost,
so the origin is not secure).

What is tested where (numpy cannot run in the browser here: there is no NumPy wasm build):
- progress kept across a reload, on the self-hosted site built from Pyodide's core (the progress
  modules are plain Python, so they run there), in JupyterLite's console;
- the landing page's two verdicts (can Python load? can this browser keep your work?) on that
  address, and in a Chromium whose settings keep no site data;
- a zero-byte course wheel, and one cut short by a copy: not "Ready";
- JupyterLab's notice when a notebook's Python does not start (the CDN refused), and its
  "still starting" notice going away once Python has started (a stand-in CDN).
"""

import hashlib
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from tools.browser import CHROMIUM, CHROMIUM_ARGS, page_snippets

HOST = "classroom.test"
CDN = "https://cdn.jsdelivr.net/"
CORS = {"Access-Control-Allow-Origin": "*"}

# The JavaScript these tests evaluate in the page: tests/test_browser_classroom.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))


def classroom(base):
    """The served site's address under the classroom name instead of 127.0.0.1."""
    return base.replace("127.0.0.1", HOST)


@pytest.fixture(scope="module")
def classroom_browser(browser):
    """A Chromium that resolves classroom.test to this machine."""
    launched = browser.browser_type.launch(executable_path=CHROMIUM,
                                           args=CHROMIUM_ARGS + [f"--host-resolver-rules=MAP {HOST} 127.0.0.1"])
    yield launched
    launched.close()


def refuse_outside(context, record):
    """Refuse every request that leaves the classroom server (the CDN included), recording it."""
    def route(route):
        if route.request.url.startswith(f"http://{HOST}:"):
            return route.continue_()
        record.append(route.request.url)
        return route.abort()
    context.route("**/*", route)


def open_landing(page, base):
    page.goto(base)
    page.wait_for_selector("#runtime-check[data-result]", timeout=60_000)
    page.wait_for_selector("#storage-check[data-result]", timeout=60_000)


def start_button(page):
    return page.evaluate(SNIPPETS["START_BUTTON"])


def repl(page, base, codes):
    """Open JupyterLite's console and run each snippet; wait until the last one has run."""
    query = "&".join("code=" + urllib.parse.quote(code) for code in codes)
    page.goto(f"{base}repl/index.html?kernel=python&execute=1&{query}")
    wait_for_runs(page, len(codes))


def wait_for_runs(page, count):
    page.wait_for_function(
        "n => [...document.querySelectorAll('.jp-CodeConsole .jp-InputPrompt')]"
        ".filter(p => /\\[\\d+\\]/.test(p.innerText)).length >= n", arg=count, timeout=180_000)


def run_more(page, code, printed):
    """Type one more snippet into the console's prompt, run it, and return the console's text once
    it shows `printed`."""
    page.locator(".jp-CodeConsole-promptCell .cm-content").click()
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("text => document.querySelector('.jp-CodeConsole-content').innerText.includes(text)",
                           arg=printed, timeout=60_000)
    return page.inner_text(".jp-CodeConsole-content")


STORED = SNIPPETS["STORED"]

# What begin() does in a notebook's setup cell (begin itself needs numpy, which this site lacks).
SHOW_STORAGE = ("from engine.core import progress, page_store\n"
                "from engine.ui.storage_view import storage_status\n"
                "progress.load()\n"
                "print('progress file:', progress.progress_path(), '| state:', page_store.state()['state'])\n"
                "storage_status()")
KEPT = "Your progress is kept in this browser"


def test_on_a_plain_http_classroom_address_progress_survives_a_reload(self_hosted_site, serve_site,
                                                                     classroom_browser, artifacts):
    base = classroom(serve_site(self_hosted_site[0], "/classroom/"))
    context = classroom_browser.new_context()
    outside = []
    refuse_outside(context, outside)
    try:
        landing = context.new_page()
        open_landing(landing, base)
        assert landing.evaluate("window.isSecureContext") is False
        storage = landing.inner_text("#storage-check")
        assert landing.get_attribute("#storage-check", "data-result") == "ok"
        assert "Your work is kept in this browser, for this site's address" in storage
        assert "This site is served over plain http://" in storage and "your progress is kept in this browser's storage" in storage
        landing.screenshot(path=str(artifacts / "classroom-landing-plain-http.png"), full_page=True)
        landing.close()

        first = context.new_page()
        repl(first, base, [SHOW_STORAGE, "progress.record_check('browser-demo', True, 'pass')\nprint('recorded')"])
        text = first.inner_text(".jp-CodeConsole")
        assert "progress file: /home/pyodide/course-progress.json" in text, "no /drive here"
        assert "recorded" in text
        first.wait_for_selector(f".course-storage-status:has-text('{KEPT}')", timeout=60_000)
        first.wait_for_function(f"() => ({STORED})().then(all => all.some(r => r.includes('browser-demo')))",
                                timeout=60_000)
        first.screenshot(path=str(artifacts / "classroom-progress-kept.png"))
        first.close()

        second = context.new_page()  # a new page: a new kernel with empty files, the same browser
        repl(second, base, [SHOW_STORAGE])
        second.wait_for_selector(f".course-storage-status:has-text('{KEPT}')", timeout=60_000)
        after = run_more(second, "print('after', 'reload:', progress.status_of(progress.exercise_entry('browser-demo')))",
                         "after reload:")
        assert "after reload: passed" in after, after
        assert outside == [], outside
    finally:
        context.close()


def test_a_browser_that_keeps_no_site_data_is_told_so_and_cannot_start(self_hosted_site, serve_site, browser,
                                                                        tmp_path, artifacts):
    """A Chromium whose settings block site data (cookies and site storage) for every site."""
    base = classroom(serve_site(self_hosted_site[0], "/classroom/"))
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(
        json.dumps({"profile": {"default_content_setting_values": {"cookies": 2}}}))
    context = browser.browser_type.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS + [f"--host-resolver-rules=MAP {HOST} 127.0.0.1"])
    try:
        page = context.pages[0] if context.pages else context.new_page()
        open_landing(page, base)
        text = page.inner_text("#storage-check")
        assert page.get_attribute("#storage-check", "data-result") == "problem"
        assert ("This browser keeps no data for this site, so the notebooks cannot open here and nothing you do "
                "would be kept.") in text
        assert "allow this site to keep data (cookies and site data)" in text
        button = start_button(page)
        assert button["href"] is None and button["disabled"] == "true"
        assert button["why"].startswith("The course cannot start in this browser: ")
        page.screenshot(path=str(artifacts / "classroom-landing-no-site-data.png"), full_page=True)
        # JupyterLab itself cannot start there; the course's notice says why.
        page.goto(base + "lab/index.html?path=00_start_here.ipynb")
        notice = page.wait_for_selector("#course-kernel-notice[data-result=problem]", timeout=60_000)
        assert notice.get_attribute("role") == "alert"
        assert "This browser keeps no data for this site" in notice.inner_text()
    finally:
        context.close()


def test_a_zero_byte_course_wheel_is_not_ready(online_site, tmp_path, classroom_browser, serve_site):
    site = tmp_path / "site"
    shutil.copytree(online_site[0], site)
    wheel = next((site / "static/pyodide-lock").glob("transformer_course-*.whl"))
    wheel.write_bytes(b"")
    base = classroom(serve_site(site, "/course/"))
    context = classroom_browser.new_context()
    asked = []

    def cdn(route):  # a CDN that has every file: each starts as its kind of file does
        name = route.request.url.split("?")[0].rsplit("/", 1)[-1]
        asked.append((route.request.headers.get("range"), name))
        start = (b"\0asm" if name.endswith(".wasm") else b"PK\x03\x04" if name.endswith((".zip", ".whl"))
                 else b"export const loadPyodide")
        route.fulfill(status=200, body=start + bytes(64), headers=CORS)

    context.route(CDN + "**", cdn)
    try:
        page = context.new_page()
        open_landing(page, base)
        text = page.inner_text("#runtime-check")
        assert page.get_attribute("#runtime-check", "data-result") == "problem", text
        assert ("Python starts here, but the notebooks cannot run: the file of transformer-course on this site is "
                "empty or damaged.") in text
        assert "Ready" not in text
        assert start_button(page)["disabled"] == "true"
        assert {rng for rng, _name in asked} == {"bytes=0-15"}, "the check asks for the first bytes only"
        assert any(name.startswith("numpy-2.4.6-") for _rng, name in asked)
    finally:
        context.close()


def test_a_course_wheel_cut_short_by_a_copy_is_not_ready(online_site, tmp_path, classroom_browser, serve_site):
    """Half the wheel, as an interrupted copy leaves it: it still starts as a zip does, but its
    length is not the one the build wrote down."""
    site = tmp_path / "site"
    shutil.copytree(online_site[0], site)
    wheel = next((site / "static/pyodide-lock").glob("transformer_course-*.whl"))
    wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    base = classroom(serve_site(site, "/course/"))
    context = classroom_browser.new_context()

    def cdn(route):
        name = route.request.url.split("?")[0].rsplit("/", 1)[-1]
        start = (b"\0asm" if name.endswith(".wasm") else b"PK\x03\x04" if name.endswith((".zip", ".whl"))
                 else b"export const loadPyodide")
        route.fulfill(status=206, body=start + bytes(12), headers={**CORS, "Content-Range": "bytes 0-15/100000"})

    context.route(CDN + "**", cdn)
    try:
        page = context.new_page()
        open_landing(page, base)
        text = page.inner_text("#runtime-check")
        assert page.get_attribute("#runtime-check", "data-result") == "problem", text
        assert ("Python starts here, but the notebooks cannot run: the file of transformer-course on this site is "
                "empty or damaged.") in text
        assert "Ready" not in text and start_button(page)["disabled"] == "true"
    finally:
        context.close()


@pytest.mark.parametrize("app", ["lab", "notebooks"])
def test_in_jupyterlab_a_notebook_whose_python_cannot_load_says_so(app, online_site, serve_site, classroom_browser,
                                                                   artifacts):
    base = classroom(serve_site(online_site[0], "/course/"))
    context = classroom_browser.new_context(viewport={"width": 390, "height": 800})
    outside = []
    refuse_outside(context, outside)
    try:
        page = context.new_page()
        page.goto(base + f"{app}/index.html?path=00_start_here.ipynb")
        notice = page.wait_for_selector("#course-kernel-notice[data-result=problem]", timeout=90_000)
        text = notice.inner_text()
        assert notice.get_attribute("role") == "alert"
        assert "Python cannot load, so the notebooks will not run in this browser." in text
        assert "could not reach cdn.jsdelivr.net" in text and "What to do:" in text
        assert page.locator("#course-kernel-notice a").get_attribute("href") == base
        assert page.evaluate("document.getElementById('course-kernel-notice').getBoundingClientRect().right") <= 390
        page.screenshot(path=str(artifacts / f"classroom-{app}-python-cannot-load-390px.png"))
        page.locator("#course-kernel-notice button").focus()
        page.keyboard.press("Enter")
        assert page.locator("#course-kernel-notice").is_hidden()
        assert outside and all(url.startswith(CDN) for url in outside), outside
    finally:
        context.close()


def test_in_jupyterlab_the_still_starting_notice_goes_once_python_has_started(online_site, self_hosted_site,
                                                                            serve_site, classroom_browser):
    """A stand-in CDN: the npm core and PyPI's pure wheels for the kernel, and every other file's
    first bytes for the checks (numpy's wasm wheel exists only on the real CDN), so the checks
    find nothing wrong and the kernel starts. The page waits 0 s before its notice."""
    base = classroom(serve_site(online_site[0], "/course/"))
    stand_in = self_hosted_site[0] / "static"
    context = classroom_browser.new_context()
    context.add_init_script("window.courseKernelPatienceMs = 0")

    def stand_in_file(url):
        name = url.rsplit("/", 1)[-1].split("?")[0]
        found = [stand_in / d / name for d in ("pyodide", "pyodide-lock") if (stand_in / d / name).is_file()]
        return name, (found[0] if found else None)

    def cdn(route):
        name, path = stand_in_file(route.request.url)
        if route.request.headers.get("range"):
            # The page's check asks for the first bytes: answered as a CDN answers a range. (The
            # whole runtime, sent through this handler on a busy machine, can outlast the check's
            # 15 s, and the notice then says Python cannot load.)
            if path is None:
                return route.fulfill(status=206, body=b"PK\x03\x04" + bytes(12), headers=CORS)
            with path.open("rb") as file:
                return route.fulfill(status=206, body=file.read(16), headers=CORS)
        if path is not None:
            return route.fulfill(path=str(path), headers=CORS)
        return route.fulfill(status=404, body="not on the stand-in CDN", headers=CORS)

    def lock(route):
        served = json.loads(route.fetch(url=route.request.url.replace(HOST, "127.0.0.1")).text())
        for entry in served["packages"].values():
            if entry["file_name"].startswith(CDN):
                _, path = stand_in_file(entry["file_name"])
                if path is not None:
                    entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        route.fulfill(body=json.dumps(served), content_type="application/json")

    context.route(CDN + "**", cdn)
    context.route("**/static/pyodide-lock/pyodide-lock.json?*", lock)
    try:
        page = context.new_page()
        page.goto(base + "lab/index.html?path=00_start_here.ipynb")
        notice = page.wait_for_selector("#course-kernel-notice[data-result]", timeout=90_000)
        assert notice.get_attribute("data-result") == "waiting", notice.inner_text()
        assert notice.get_attribute("role") == "status"
        assert "Python has not started yet in this notebook." in notice.inner_text()
        page.wait_for_selector("#course-kernel-notice", state="detached", timeout=180_000)
        assert page.get_attribute(".jp-Notebook-ExecutionIndicator", "data-status") in ("idle", "busy")
    finally:
        context.close()


def test_on_a_plain_http_classroom_address_a_saved_notebook_survives_a_reload(online_site, serve_site,
                                                                             classroom_browser):
    """JupyterLite keeps the notebooks a learner saves in the page's own storage, which needs no
    secure context (no kernel is needed to edit and save)."""
    base = classroom(serve_site(online_site[0], "/course/"))
    context = classroom_browser.new_context()
    refuse_outside(context, [])
    note = "my own note, typed on a classroom address"
    try:
        page = context.new_page()
        page.goto(base + "lab/index.html?path=00_start_here.ipynb")
        assert page.evaluate("window.isSecureContext") is False
        page.wait_for_selector("#course-kernel-notice[data-result=problem]", timeout=90_000)
        page.click("#course-kernel-notice button")          # the CDN is refused here: hide its notice
        first = page.locator(".jp-NotebookPanel .jp-Cell").first
        page.wait_for_selector("#course-kernel-notice", state="hidden")
        first.click()
        page.keyboard.press("Enter")                         # edit the first (markdown) cell
        page.wait_for_selector(".jp-Notebook.jp-mod-editMode .jp-Cell.jp-mod-active .cm-content:focus")
        page.keyboard.press("Control+End")
        page.keyboard.insert_text("\n\n" + note)
        page.wait_for_selector(".jp-mod-dirty")               # the edit reached the notebook
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
        # The save has reached the page's storage (the drive of the site at /course/) before the reload.
        drive = ["JupyterLite Storage - /course/", "00_start_here.ipynb"]
        for _ in range(120):
            if note in page.evaluate(SNIPPETS["DRIVE_TEXT"], drive):
                break
            page.wait_for_timeout(500)
        assert note in page.evaluate(SNIPPETS["DRIVE_TEXT"], drive), page.locator(".jp-Dialog").all_inner_texts()
        page.reload()
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
        shown = "text => document.querySelector('.jp-NotebookPanel').innerText.includes(text)"
        try:
            page.wait_for_function(shown, arg=note, timeout=60_000)
        except Exception:
            first = page.locator(".jp-NotebookPanel .jp-Cell").first.inner_text()
            raise AssertionError(f"after the reload the first cell reads: {first[-300:]!r}") from None
    finally:
        context.close()
