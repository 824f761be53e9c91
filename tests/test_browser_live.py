"""The labs live: a local JupyterLab (CPython kernel) driven in Chromium as a learner would.

Open a notebook, run every cell, move a lab's slider and see its plot change, see the
checks' feedback. Screenshots are saved in test-artifacts/.
"""

import urllib.parse

APP = "window.jupyterapp"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def open_notebook(page, base, path):
    page.goto(f"{base}lab/tree/{urllib.parse.quote(path)}?reset")  # no other notebook restored
    page.wait_for_function(f"{APP} && {APP}.shell.currentWidget && {APP}.shell.currentWidget.sessionContext", timeout=60_000)
    page.wait_for_function(
        f"{APP}.shell.currentWidget.sessionContext.session && "
        f"{APP}.shell.currentWidget.sessionContext.session.kernel && "
        f"{APP}.shell.currentWidget.sessionContext.session.kernel.status === 'idle'", timeout=60_000)


def run_all(page):
    """Run every cell and wait until the kernel has finished them all."""
    page.evaluate(f"{APP}.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        f"""() => {{
            const nb = {APP}.shell.currentWidget.content;
            const code = nb.widgets.filter(c => c.model.type === 'code');
            return code.every(c => c.model.executionCount !== null) &&
                   !document.querySelector('.jp-InputPrompt').closest('.jp-Notebook').innerText.includes('[*]') &&
                   {APP}.shell.currentWidget.sessionContext.session.kernel.status === 'idle';
        }}""", timeout=180_000)


def cell_errors(page):
    return page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts() + \
        page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").all_inner_texts()


def slider(page, description):
    """The ipywidgets slider whose label reads `description`."""
    return page.locator(".widget-slider", has=page.locator(".widget-label", has_text=description)).first


def test_start_page_lab_reacts_to_its_slider(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    open_notebook(page, base, "00_start_here.ipynb")
    run_all(page)
    assert cell_errors(page) == []
    lab = page.locator(".course-lab").first
    lab.scroll_into_view_if_needed()
    image = lab.locator("img").first
    image.wait_for()
    before = image.get_attribute("src")
    verdict_before = lab.inner_text()
    handle = slider(page, "temperature").locator(".noUi-handle")
    handle.focus()
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([lab, src]) => { const img = document.querySelectorAll('.course-lab')[0].querySelector('img');"
        " return img && img.getAttribute('src') !== src; }", arg=[0, before], timeout=15_000)
    assert lab.inner_text() != verdict_before, "the lab's verdict did not follow the slider"
    lab.screenshot(path=str(artifacts / "live-start-lab.png"))


def test_start_page_checks_say_not_attempted(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    open_notebook(page, base, "00_start_here.ipynb")
    run_all(page)
    feedback = page.locator(".course-feedback")
    assert feedback.count() >= 1
    assert page.locator(".course-feedback.course-blank").count() == feedback.count()
    assert page.locator(".course-feedback.course-pass").count() == 0
    feedback.first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "live-start-blank-checks.png"))


def write_checks_notebook(root):
    """A notebook with one solved exercise and one typical wrong answer, each with its check."""
    import nbformat
    from lib.exercises.registry import get_exercise

    start = nbformat.read(root / "00_start_here.ipynb", as_version=4)
    setup = next(c for c in start.cells if "setup" in c.metadata.get("tags", []))
    cells = [nbformat.v4.new_markdown_cell("# Checks, passed and failed"), setup]
    for exercise_id, source in (("row-mean", None), ("stable-softmax", "wrong")):
        exercise = get_exercise(exercise_id)
        original = next(c for c in start.cells if c.metadata.get("course", {}).get("exercise") == exercise_id)
        text = exercise.solution_source if source is None else exercise.variant_source(exercise.wrong[0])
        filled = nbformat.v4.new_code_cell(text, metadata=dict(original.metadata))
        check = nbformat.v4.new_code_cell(f'check("{exercise_id}")',
                                          metadata={"tags": ["check"], "jupyter": {"source_hidden": True}})
        cells += [filled, check]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=start.metadata)
    nbformat.write(notebook, root / "checks_demo.ipynb")
    return "checks_demo.ipynb"


def test_checks_pass_and_fail_readably_in_light_and_dark(jupyter_server, page, artifacts):
    base, root = jupyter_server
    open_notebook(page, base, write_checks_notebook(root))
    run_all(page)
    passed, failed = page.locator(".course-feedback.course-pass"), page.locator(".course-feedback.course-fail")
    assert passed.count() == 1 and failed.count() == 1
    assert "stable-softmax" == failed.get_attribute("data-exercise")
    # One more hint per click, from the ladder; the solution opens after the attempt.
    controls = page.locator(".course-controls").nth(1)
    hints_before = controls.locator(".course-hints").inner_text()
    controls.locator(".course-hint-button").click()
    page.wait_for_function(
        "([el, before]) => el.innerText !== before",
        arg=[controls.locator(".course-hints").element_handle(), hints_before])
    controls.locator(".course-solution-button").click()
    controls.locator(".course-solution").wait_for()
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        page.evaluate(f"{APP}.commands.execute('apputils:change-theme', {{theme: '{theme}'}})")
        page.wait_for_function(
            "dark => document.body.dataset.jpThemeLight === (dark ? 'false' : 'true')", arg=theme.endswith("Dark"))
        page.wait_for_timeout(300)
        for feedback in (passed, failed):
            colour, background = feedback.evaluate(
                "el => [getComputedStyle(el).color, getComputedStyle(el.closest('.jp-OutputArea-output') || el).backgroundColor]")
            assert colour != background
        passed.scroll_into_view_if_needed()
        name = theme.split()[-1].lower()
        page.locator(PANEL).screenshot(path=str(artifacts / f"live-checks-{name}.png"))
