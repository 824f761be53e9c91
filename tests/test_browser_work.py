"""A learner's work survives what happens in a school, in Chromium, on the self-hosted site built
from Pyodide's core (its kernel runs the progress code, no numpy), served by the course's server:

- the site moves to another address (here another port: browser storage belongs to scheme, host
  and port): the landing page names the address that holds the work, and one export there and
  one import at the new address bring the saved notebook and the progress along;
- a browser that will not keep the site's data for good (a private window: Playwright's contexts
  are such) is told the work may not last and reminded to export; one that keeps it is told so;
- one notebook in two tabs: the stale tab's save shows JupyterLab's "File Changed" dialog, where
  Enter keeps both versions instead of overwriting the other tab's.

One server per address and one Chromium serve the whole file."""

import json
import urllib.parse
from pathlib import Path

import pytest

from tools.browser import page_snippets

NOTEBOOK = "00_start_here.ipynb"

# The JavaScript these tests evaluate in the page: tests/test_browser_work.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))


@pytest.fixture(scope="module")
def addresses(self_hosted_site, serve_site):
    """The same site at two addresses (two ports)."""
    return serve_site(self_hosted_site[0], "/course/"), serve_site(self_hosted_site[0], "/course/")


def landing(page, base):
    page.goto(base)
    page.wait_for_selector("#storage-check[data-result]", timeout=60_000)


def open_notebook(page, base, path=NOTEBOOK):
    page.goto(f"{base}lab/index.html?path={urllib.parse.quote(path)}")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-NotebookPanel .jp-Cell')",
                           timeout=90_000)
    # On this site numpy is missing: the course's notice says so; hide it to reach the cells.
    page.wait_for_selector("#course-kernel-notice button", timeout=90_000)
    page.click("#course-kernel-notice button")


def type_into_first_cell(page, text):
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.click()
    page.keyboard.press("Enter")
    page.wait_for_selector(".jp-Notebook.jp-mod-editMode .jp-Cell.jp-mod-active .cm-content:focus")
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n\n" + text)
    page.keyboard.press("Escape")


def save(page):
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)


def drive_file(page, path):
    """The record of path in this address's JupyterLite drive (IndexedDB), or None."""
    return page.evaluate(SNIPPETS["DRIVE_FILE"], ["JupyterLite Storage - /course/", path])


def repl(page, base, code):
    page.goto(f"{base}repl/index.html?kernel=python&execute=1&code={urllib.parse.quote(code)}")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-CodeConsole .jp-InputPrompt')]"
        ".some(p => /\\[\\d+\\]/.test(p.innerText))", timeout=180_000)
    return page.inner_text(".jp-CodeConsole")


def test_work_moves_to_a_new_address_with_one_export_and_one_import(addresses, browser, tmp_path):
    old, new = addresses
    note = "my own note, written at the old address"
    context = browser.new_context(accept_downloads=True)
    try:
        page = context.new_page()
        open_notebook(page, old)
        type_into_first_cell(page, note)
        save(page)
        done = repl(page, old, "from engine.core import progress\nprogress.record_check('browser-demo', True, 'pass')\n"
                               "print('recorded', 'here')")
        assert "recorded here" in done
        assert note in drive_file(page, NOTEBOOK)
        page.wait_for_function(f"() => ({DRIVE_HAS})('course-progress.json')", timeout=60_000)

        landing(page, old)
        assert page.inner_text("#work-address") == old
        with page.expect_download() as download:
            page.click("#work-export")
        exported = tmp_path / download.value.suggested_filename
        download.value.save_as(exported)
        assert exported.name.startswith("course-work-127.0.0.1-")
        assert "Exported" in page.inner_text("#work-status")
        work = json.loads(exported.read_text())
        assert work["address"] == old and {k for k, _ in work["stores"]["files"]} >= {NOTEBOOK, "course-progress.json"}

        landing(page, new)
        assert page.inner_text("#work-address") == new
        assert drive_file(page, NOTEBOOK) is None, "the new address starts blank"
        page.set_input_files("#work-import", str(exported))
        page.wait_for_function("() => document.getElementById('work-status').innerText.startsWith('Imported')")
        assert f"from {old}" in page.inner_text("#work-status")

        open_notebook(page, new)
        page.wait_for_function("text => document.querySelector('.jp-NotebookPanel').innerText.includes(text)",
                               arg=note, timeout=60_000)
        after = repl(page, new, "from engine.core import progress\n"
                                "print('status:', progress.status_of(progress.exercise_entry('browser-demo')))")
        assert "status: passed" in after, after

        landing(page, new)                     # imported again: nothing is overwritten
        page.set_input_files("#work-import", str(exported))
        page.wait_for_function("() => document.getElementById('work-status').innerText.startsWith('Imported 0 files')")
    finally:
        context.close()


DRIVE_HAS = SNIPPETS["DRIVE_HAS"]


def test_a_browser_that_may_clear_the_work_says_so_and_one_that_keeps_it_says_that(addresses, browser):
    base = addresses[0]
    context = browser.new_context()
    try:
        page = context.new_page()
        landing(page, base)
        text = page.inner_text("#storage-check")
        assert page.get_attribute("#storage-check", "data-result") == "ok"
        assert page.evaluate("navigator.storage.persisted()") is False
        assert "This browser may not keep it for good: in a private window it lasts only until the window is closed" in text
        assert "Export your work now and then" in text
        origin = base.split("/course/")[0]
        cdp = browser.new_browser_cdp_session()
        cdp.send("Browser.grantPermissions", {"origin": origin, "permissions": ["durableStorage"],
                                              "browserContextId": context_id(cdp, page)})
        landing(page, base)
        assert page.evaluate("navigator.storage.persisted()") is True
        text = page.inner_text("#storage-check")
        assert "This browser keeps it until you delete it yourself." in text and "may not keep it" not in text
    finally:
        context.close()


def context_id(cdp, page):
    """The browser context id of page, for the browser-wide CDP session."""
    targets = cdp.send("Target.getTargets")["targetInfos"]
    return next(t["browserContextId"] for t in targets if t["type"] == "page" and t["url"] == page.url)


def test_one_notebook_in_two_tabs_keeps_both_versions_when_enter_is_pressed(addresses, browser):
    base = addresses[1]
    context = browser.new_context()
    try:
        first, second = context.new_page(), context.new_page()
        open_notebook(first, base)
        open_notebook(second, base)
        type_into_first_cell(first, "written in the first tab")
        save(first)
        type_into_first_cell(second, "written in the second tab")
        second.keyboard.press("Control+s")
        dialog = second.wait_for_selector(".jp-Dialog[data-course-keep-both]", timeout=30_000)
        assert "File Changed" in dialog.inner_text()
        assert second.evaluate("document.activeElement.classList.contains('course-keep-both')")
        second.keyboard.press("Enter")
        second.wait_for_selector("#course-two-tabs-notice")
        copy = "00_start_here (this tab's copy).ipynb"
        assert copy in second.inner_text("#course-two-tabs-notice")
        second.wait_for_function("text => document.querySelector('.jp-NotebookPanel').innerText.includes(text)",
                                 arg="written in the first tab")
        saved = drive_file(second, NOTEBOOK)
        assert "written in the first tab" in saved and "written in the second tab" not in saved
        kept = drive_file(second, copy)
        assert kept is not None and "written in the second tab" in kept
    finally:
        context.close()
