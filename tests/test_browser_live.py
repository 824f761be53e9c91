"""The labs live: a local JupyterLab (CPython kernel) driven in Chromium as a learner would.

Every notebook is run by the deploy's own browser run (tools/site_run.py): every cell, one
control of every lab, every check's verdict. Then the checks' feedback passed and failed, and
a prediction locked in. Screenshots are saved in test-artifacts/.
"""

import json

import pytest

from conftest import CONTENT, notebooks
from engine.core import inventory
from tools import site_run
from tools.browser import APP, open_notebook, run_all

NOTEBOOKS = [p.relative_to(CONTENT).as_posix() for p in notebooks()]
IDS = NOTEBOOKS

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def shown_labs(page) -> list[str]:
    """The names of the labs the open notebook shows (``course-lab-<name>``), in order."""
    return page.locator(f"{PANEL} .course-lab").evaluate_all(
        "els => els.map(el => [...el.classList].find(c => c.startsWith('course-lab-')).slice(11))")


def open_and_run(page, base, notebook):
    """Open a notebook, run every cell, require no stderr and every lab the notebook calls (the
    course's inventory) shown once; return the labs' names."""
    open_notebook(page, base, notebook)
    run_all(page)
    assert cell_errors(page) == []
    names = shown_labs(page)
    expected = inventory.notebook(notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")).labs
    assert len(names) == len(set(names)) == len(expected), (names, expected)
    return names


def cell_errors(page):
    """Tracebacks and anything written to stderr (warnings included) in the open notebook."""
    return page.locator(f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()


@pytest.fixture(scope="session")
def local_run(artifacts):
    """What the deploy's browser run (tools/site_run.py) records here, against the local
    JupyterLab: written as its Markdown report to test-artifacts/browser-run-local.md."""
    course = site_run.CourseRun(site_run.JupyterLabServer.name)
    yield course
    if course.notebooks:
        (artifacts / "browser-run-local.md").write_text(course.markdown(), encoding="utf-8")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs_its_labs_answer_and_its_checks_say_not_attempted(notebook, jupyter_server, page,
                                                                       artifacts, local_run):
    """The deploy's browser run of one notebook: Run All, every code cell within its budget and
    with no error or stderr; one control of every lab its cells call, each answered; every check
    "not attempted", as shipped. Pictures of the labs go to test-artifacts/run-shipped-*.png."""
    base, root = jupyter_server
    plan = site_run.plan_of(json.loads((root / notebook).read_text(encoding="utf-8")), notebook)
    run = site_run.run_notebook(page, site_run.JupyterLabServer(base), plan, screenshots=artifacts,
                                course=local_run)
    assert run.problems == []
    assert [c.cell - 1 for c in run.cells] == list(plan.code) and all(c.seconds is not None for c in run.cells)
    assert len(run.labs) == sum(len(labs) for labs in plan.labs.values()) >= 1, "every notebook has a lab"
    assert all(lab.seconds is not None for lab in run.labs)
    assert [(c.exercise, c.verdict) for c in run.checks] == [(e, "not attempted") for e in plan.checks.values()]


def write_checks_notebook(root):
    """A notebook with one solved exercise and one typical wrong answer, each with its check."""
    import nbformat
    from engine.core.registry import get_exercise

    start = nbformat.read(root / "00_start_here.ipynb", as_version=4)
    setup = next(c for c in start.cells if "setup" in c.metadata.get("tags", []))
    cells = [nbformat.v4.new_markdown_cell("# Checks, passed and failed"), setup]
    for exercise_id, source in (("row-mean", None), ("stable-softmax", "wrong")):
        exercise = get_exercise(exercise_id)
        original = next(c for c in start.cells if c.metadata.get("course", {}).get("exercise") == exercise_id)
        text = exercise.solution_source if source is None else exercise.variant_source(exercise.mistakes[0].code)
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
    passed, failed = page.locator(f"{PANEL} .course-feedback.course-pass"), page.locator(f"{PANEL} .course-feedback.course-fail")
    assert passed.count() == 1 and failed.count() == 1
    assert "stable-softmax" == failed.get_attribute("data-exercise")
    # One more hint per click, from the ladder; the solution opens after the attempt.
    controls = page.locator(f"{PANEL} .course-controls").nth(1)
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
        # the theme's colours laid out and painted (two frames), not a fixed wait
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        for feedback in (passed, failed):
            colour, background = feedback.evaluate(
                "el => [getComputedStyle(el).color, getComputedStyle(el.closest('.jp-OutputArea-output') || el).backgroundColor]")
            assert colour != background
        passed.scroll_into_view_if_needed()
        name = theme.split()[-1].lower()
        page.locator(PANEL).screenshot(path=str(artifacts / f"live-checks-{name}.png"))


def test_a_predict_answer_is_locked_in_before_the_explanation(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    open_notebook(page, base, "00_start_here.ipynb")
    run_all(page)
    question = page.locator(f"{PANEL} .course-question-predict").first
    question.scroll_into_view_if_needed()
    result = question.locator(".course-question-result")
    assert result.inner_text().strip() == "", "the explanation showed before an answer"
    lock = question.locator(".course-lock-button")
    assert lock.is_disabled()
    question.locator(".course-choices input[type=radio]").first.check()
    lock.click()
    page.wait_for_function("el => el.innerText.includes('You chose')", arg=result.element_handle())
    assert question.locator(".course-choices input[type=radio]").first.is_disabled()
    question.screenshot(path=str(artifacts / "live-start-predict-locked.png"))
    # The answer was recorded: running the notebook again shows it still locked.
    page.evaluate(f"{APP}.commands.execute('notebook:clear-all-cell-outputs')")
    page.locator(f"{PANEL} .course-question-predict").first.wait_for(state="detached")
    run_all(page)
    question = page.locator(f"{PANEL} .course-question-predict").first
    page.wait_for_function("el => el.innerText.includes('You chose')",
                           arg=question.locator(".course-question-result").element_handle())
