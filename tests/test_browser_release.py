"""A course update in a real Chromium: two successive builds served from the same address.

The learner saves an edit under the first build; after the second build their edit is still
there, the start notebook's release panel lists the notebook as older, the fresh copy it writes
(from the zip of notebooks the site serves beside the wheel, fetched by the kernel) has the new
content, and a kernel started after the update runs the new library. Self-hosted
builds from the npm core are used so the kernel boots here with no CDN (it has no numpy, which
none of this needs).
"""

import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from conftest import CONTENT, _build
from test_browser_site import run_in_repl, watch
from tools.browser import page_snippets

NOTEBOOK = "01_positional_encoding.ipynb"
NOTE = "# my own note, kept across updates"
CORRECTION = "Corrected in the second release."

# The JavaScript these tests evaluate in the page: tests/test_browser_release.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))


STORED = SNIPPETS["STORED"]


def course_version(site):
    wheel = next((site / "static/pyodide-lock").glob("transformer_course-*.whl"))
    return wheel.name.split("-")[1]


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory, pyodide_npm_tarball):
    root = tmp_path_factory.mktemp("releases")
    first = root / "first"
    _build(first, pyodide_npm_tarball, ship_anyway=True)
    content = root / "content-2"
    shutil.copytree(CONTENT, content)
    notebook = json.loads((content / NOTEBOOK).read_text())
    notebook["cells"][0]["source"] = "".join(notebook["cells"][0]["source"]) + "\n\n" + CORRECTION
    (content / NOTEBOOK).write_text(json.dumps(notebook, indent=1))
    second = root / "second"
    _build(second, pyodide_npm_tarball, content, ship_anyway=True)
    return first, second, root / "served"


IN_FRONT = SNIPPETS["IN_FRONT"]


def open_in_lab(page, base, path):
    page.goto(f"{base}lab/index.html?path={urllib.parse.quote(path)}")
    page.wait_for_function(IN_FRONT, arg=path)


def test_an_update_keeps_the_learners_edit_and_offers_the_new_version(two_builds, serve_site, browser, artifacts):
    first, second, served = two_builds
    shutil.copytree(first, served)
    base = serve_site(served, "/course/")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch(page)
        open_in_lab(page, base, NOTEBOOK)
        editor = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .cm-content").first
        editor.click()
        page.keyboard.press("Control+End")
        page.keyboard.type("\n" + NOTE)
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !document.querySelector('.jp-NotebookPanel .jp-mod-dirty, .lm-TabBar-tab.jp-mod-dirty')")
        page.wait_for_function(STORED, arg=[NOTEBOOK, NOTE])       # the edit is in the browser's storage

        # The instructor redeploys: the second build replaces the first at the same address.
        shutil.rmtree(served)
        shutil.copytree(second, served)

        page = context.new_page()
        page.set_default_timeout(60_000)
        watch(page)
        open_in_lab(page, base, NOTEBOOK)
        page.wait_for_function("note => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').innerText.includes(note)", arg=NOTE)
        assert CORRECTION not in page.inner_text(".jp-NotebookPanel:not(.lm-mod-hidden)"), "the learner's copy was replaced"

        text = run_in_repl(page, base, [
            "import lib, importlib.metadata\nprint('library', importlib.metadata.version('transformer_course'))",
            "from engine.ui.release_view import course_release\ncourse_release()",
        ])
        assert f"library {course_version(second)}" in text, "the kernel did not load the new library"
        panel = page.locator(".course-release")
        panel.wait_for()
        assert "1 of your notebooks is older" in panel.inner_text()
        assert NOTEBOOK in panel.inner_text()
        panel.locator(".course-release-fresh").click()
        page.wait_for_function("() => document.querySelector('.course-release-result').innerText.trim() !== ''")
        result = page.inner_text(".course-release-result")      # fetched beside the wheel, written, or why not
        assert result.startswith("The new version is in"), result
        page.screenshot(path=str(artifacts / "release-update-notice.png"))

        fresh = NOTEBOOK.replace(".ipynb", " (new version).ipynb")
        open_in_lab(page, base, fresh)
        page.wait_for_function("text => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').innerText.includes(text)", arg=CORRECTION)
        open_in_lab(page, base, NOTEBOOK)
        page.wait_for_function("note => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)').innerText.includes(note)", arg=NOTE)
    finally:
        context.close()
