"""The learner's path, live: a local JupyterLab (CPython kernel) in Chromium.

A check judges only the code the learner ran: after a SyntaxError it gives no verdict on the
older function still in the kernel; after an edit that was saved but not run it says so; a check
that finds no function is not counted as an attempt, nor is the course's own function judged as the
learner's. After a restart and a reload the setup cell
says what the progress holds and the kernel does not, and the lab's badge says it too; a lab
left on screen by a restart says its cell must run again, and a check run alone in the new
kernel shows the exercise passed before. Enter in
an answer box checks the answer. Each test works on its own copy of a notebook (its own kernel);
screenshots are saved in test-artifacts/.
"""

import json
import shutil
from pathlib import Path

from engine.core.registry import get_exercise, get_question
from engine.presentation.numbers import exact
from test_browser_live import APP, PANEL, open_notebook
from tools.browser import page_snippets

NB = f"{APP}.shell.currentWidget.content"
KERNEL = f"{APP}.shell.currentWidget.sessionContext.session.kernel"
NORMS = "03_norms_and_residuals.ipynb"

# The JavaScript these tests evaluate in the page: tests/test_browser_learner_path.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=APP, NB=NB)


def copy_of(root, notebook, name):
    """A copy of a shipped notebook under learner-path/, so no other test sees its changes."""
    folder = root / "learner-path"
    folder.mkdir(exist_ok=True)
    shutil.copy(root / notebook, folder / name)
    return f"learner-path/{name}"


def cell_index(page, exercise=None, source=None):
    """The index of the exercise's cell, or of the first code cell whose text starts with source."""
    return page.evaluate(SNIPPETS["CELL_INDEX"], [exercise, source])


def paste(page, index, text):
    """Replace the cell's text, as pasting over it does."""
    page.evaluate(f"([i, t]) => {NB}.widgets[i].model.sharedModel.setSource(t)", [index, text])


def run_cell(page, index):
    """Run one cell (as Ctrl+Enter does) and wait until the kernel has finished it."""
    page.evaluate(SNIPPETS["RUN_CELL"], index)
    page.wait_for_function(
        f"""i => {NB}.widgets[i].model.executionCount !== null && {KERNEL}.status === 'idle'""",
        arg=index, timeout=60_000)


def output(page, index):
    return page.evaluate(f"i => {NB}.widgets[i].node.querySelector('.jp-OutputArea').innerText", index)


def feedback(page, check_index):
    """The check's feedback box: its status class and text."""
    box = page.locator(f"{PANEL} .jp-Cell").nth(check_index).locator(".course-feedback")
    return box.get_attribute("class"), box.inner_text()


def progress_entry(progress_file, exercise):
    data = json.loads(progress_file.read_text()) if progress_file.exists() else {}
    return data.get("exercises", {}).get(exercise, {})


def test_after_a_syntax_error_the_check_does_not_judge_the_older_function(jupyter_server, page, artifacts):
    base, root = jupyter_server
    open_notebook(page, base, copy_of(root, NORMS, "stale-after-syntax-error.ipynb"))
    ex = get_exercise("rms-norm-16bit")
    cell = cell_index(page, exercise="rms-norm-16bit")
    run_cell(page, cell_index(page, source="import numpy as np"))
    paste(page, cell, ex.solution_source)
    run_cell(page, cell)
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    assert "course-pass" in status and "Passed" in text

    unclosed = ex.solution_source.replace("np.sqrt(", "np.sqrt((", 1)       # an unclosed bracket
    line = next(i for i, text in enumerate(unclosed.splitlines(), 1) if "np.sqrt((" in text)
    paste(page, cell, unclosed)
    run_cell(page, cell)
    assert "SyntaxError" in output(page, cell)
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    assert "course-blank" in status and "Passed" not in text
    assert "Your exercise cell did not run" in text
    assert f"SyntaxError on line {line}" in text and "This check judged nothing" in text
    page.locator(f"{PANEL} .jp-Cell").nth(cell + 1).screenshot(path=str(artifacts / "live-learner-syntax-error.png"))

    wrong = ex.variant_source(ex.mistakes[0].code)                           # fixed, but wrong
    paste(page, cell, wrong)
    run_cell(page, cell)
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    count = page.evaluate(f"i => {NB}.widgets[i].model.executionCount", cell)
    assert "course-fail" in status and f"Judged: the rms_norm defined when your cell ran as [{count}]" in text


def test_an_edit_saved_but_not_run_gets_no_verdict(jupyter_server, page, artifacts):
    base, root = jupyter_server
    open_notebook(page, base, copy_of(root, NORMS, "edited-not-run.ipynb"))
    ex = get_exercise("layer-norm-fix")
    cell = cell_index(page, exercise="layer-norm-fix")
    run_cell(page, cell_index(page, source="import numpy as np"))
    paste(page, cell, ex.variant_source({0: "x.mean()"}))
    run_cell(page, cell)
    run_cell(page, cell + 1)
    assert "course-fail" in feedback(page, cell + 1)[0]

    paste(page, cell, ex.solution_source)                  # fixed in the cell, not run ...
    editor = page.locator(f"{PANEL} .jp-Cell").nth(cell).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # fixed")                          # ... typed in, then saved (Ctrl+S)
    page.keyboard.press("Control+s")
    page.wait_for_function(f"() => !{APP}.shell.currentWidget.context.model.dirty")
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    assert "course-blank" in status and "You changed the cell since you ran it" in text
    assert "edited-not-run.ipynb, saved" in text and "This check judged nothing" in text
    assert "Wrong" not in text and "Passed" not in text
    page.locator(f"{PANEL} .jp-Cell").nth(cell + 1).screenshot(path=str(artifacts / "live-learner-changed.png"))

    run_cell(page, cell)                                     # run it: now it is judged
    run_cell(page, cell + 1)
    assert "course-pass" in feedback(page, cell + 1)[0]


def test_the_course_s_own_function_bound_by_a_later_cell_is_not_judged(jupyter_server, page, progress_file):
    """The exercise left blank, a later cell imports the course's rms_norm over its name: the
    check says so and records nothing: no pass, no try, no miss (the progress file is this
    worker's, so other tests may have recorded the exercise before)."""
    base, root = jupyter_server
    before = progress_entry(progress_file, "rms-norm-16bit")
    open_notebook(page, base, copy_of(root, NORMS, "course-function.ipynb"))
    cell = cell_index(page, exercise="rms-norm-16bit")
    run_cell(page, cell_index(page, source="import numpy as np"))
    run_cell(page, cell)                                                      # the blank, as shipped
    later = cell_index(page, source="from lib.attention import attention")    # the notebook's last cell
    paste(page, later, "from lib.norm import rms_norm, root_mean_square")
    run_cell(page, later)
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    count = page.evaluate(f"i => {NB}.widgets[i].model.executionCount", later)
    assert "course-blank" in status and "Passed" not in text and "This is not your function" in text
    assert f"rms_norm here is the course's own lib.norm.rms_norm, bound by the cell that ran as [{count}]" in text
    after = progress_entry(progress_file, "rms-norm-16bit")
    for field in ("passed", "passed_at", "attempts", "misses"):
        assert after.get(field) == before.get(field), field


def test_a_check_that_finds_no_function_is_not_an_attempt(jupyter_server, page, progress_file):
    base, root = jupyter_server
    open_notebook(page, base, copy_of(root, NORMS, "not-found.ipynb"))
    before = progress_entry(progress_file, "relative-growth")
    run_cell(page, cell_index(page, source="import numpy as np"))
    check = cell_index(page, exercise="relative-growth") + 1
    run_cell(page, check)
    status, text = feedback(page, check)
    assert "course-blank" in status and "Not attempted yet" in text and "I cannot find" in text
    after = progress_entry(progress_file, "relative-growth")
    assert after["checks"] == before.get("checks", 0) + 1 and after["last"] == "missing"
    assert after.get("attempts", 0) == before.get("attempts", 0)
    assert after.get("misses", 0) == before.get("misses", 0)


def test_after_a_restart_and_a_reload_the_setup_cell_and_the_badge_explain(jupyter_server, page, artifacts):
    base, root = jupyter_server
    path = copy_of(root, NORMS, "restarted.ipynb")
    open_notebook(page, base, path)
    ex = get_exercise("layer-norm-fix")
    setup, cell = cell_index(page, source="import numpy as np"), cell_index(page, exercise="layer-norm-fix")
    lab = cell_index(page, source="from labs.norms import axis_lab")
    run_cell(page, setup)
    paste(page, cell, ex.solution_source)
    run_cell(page, cell)
    run_cell(page, cell + 1)
    run_cell(page, lab)
    badge = page.locator(f"{PANEL} .jp-Cell").nth(lab).locator(".course-own-badge")
    assert "your layer_norm passed its check: tick the box" in badge.inner_text()
    page.evaluate(f"{APP}.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !{APP}.shell.currentWidget.context.model.dirty")

    page.evaluate(f"{APP}.shell.currentWidget.sessionContext.restartKernel()")
    # The lab still on screen says, in words, that it needs its cell run again (not an icon).
    stale = page.locator(f"{PANEL} .jp-Cell").nth(lab).locator(".course-lab.jupyter-widgets-disconnected")
    stale.wait_for()
    said = stale.evaluate(SNIPPETS["RESTART_NOTICE"])
    assert "The kernel restarted" in said["root"] and "Run its cell again" in said["root"], said
    assert said["inside"] == [], "a broken-link icon is left inside the lab"
    stale.screenshot(path=str(artifacts / "live-learner-restarted-lab.png"))
    open_notebook(page, base, path)                                          # a reload
    page.wait_for_function(f"i => {NB}.widgets[i].node.innerText.includes('model not found')", arg=lab,
                           timeout=30_000)                   # the saved lab, without its kernel
    run_cell(page, setup)
    banner = page.locator(f"{PANEL} .jp-Cell").nth(setup).locator(".course-new-kernel")
    text = banner.inner_text()
    assert "kernel has just started" in text and "Your progress is saved:" in text and "layer_norm" in text
    assert "model not found" in text and "Run All Cells" in text
    banner.screenshot(path=str(artifacts / "live-learner-new-kernel.png"))
    run_cell(page, lab)
    assert ("your layer_norm passed its check before this kernel started: run its exercise cell "
            "and its check again to run it here") in badge.inner_text()
    # The check run alone in the new kernel: passed before, not "Not attempted yet".
    run_cell(page, cell + 1)
    status, text = feedback(page, cell + 1)
    assert "course-pass" in status and "Passed before this kernel started" in text, text
    assert "Not attempted" not in text and "run the exercise cell above" in text


def answer_with_enter(page, question, answer):
    box = question.locator(".course-answer input")
    box.fill(answer)
    box.press("Enter")
    result = question.locator(".course-question-result")
    page.wait_for_function("el => el.innerText.trim() !== ''", arg=result.element_handle(), timeout=15_000)
    return result


def test_enter_in_an_answer_box_checks_the_answer(jupyter_server, page, artifacts):
    base, root = jupyter_server
    open_notebook(page, base, copy_of(root, "00_start_here.ipynb", "enter.ipynb"))
    run_cell(page, cell_index(page, source="import numpy as np"))
    for question_id in ("start-number-equal-scores", "start-shape-row-mean"):
        run_cell(page, cell_index(page, source=f'ask("{question_id}")'))
    number = page.locator(f"{PANEL} .course-q-start-number-equal-scores")
    right = get_question("start-number-equal-scores").answer
    result = answer_with_enter(page, number, exact(right + 1))
    assert "course-fail" in result.inner_html() and f"{exact(right + 1)} is not it yet" in result.inner_text()
    number.locator(".course-answer input").fill(exact(right))
    number.locator(".course-answer input").press("Enter")
    page.wait_for_function("el => el.innerHTML.includes('course-pass')", arg=result.element_handle(), timeout=15_000)
    number.screenshot(path=str(artifacts / "live-learner-enter.png"))
    shape = page.locator(f"{PANEL} .course-q-start-shape-row-mean")
    result = answer_with_enter(page, shape, ", ".join(str(n) for n in get_question("start-shape-row-mean").answer))
    assert "course-pass" in result.inner_html()


def test_enter_right_after_fast_typing_judges_what_the_box_shows(jupyter_server, page):
    """Typed with no pause between keys and Enter at once, the answer judged is the box's text,
    not the one it held a few keys earlier. The kernel is kept busy while the keys are typed, so
    ipywidgets holds back the box's later values behind its first one, every time."""
    base, root = jupyter_server
    open_notebook(page, base, copy_of(root, "00_start_here.ipynb", "fast-enter.ipynb"))
    run_cell(page, cell_index(page, source="import numpy as np"))
    question_id = "start-number-equal-scores"
    run_cell(page, cell_index(page, source=f'ask("{question_id}")'))
    right = exact(get_question(question_id).answer)
    assert len(right) > 1                                     # the first key alone is not the answer
    question = page.locator(f"{PANEL} .course-q-{question_id}")
    box = question.locator(".course-answer input")
    result = question.locator(".course-question-result")
    before = result.inner_text()                              # "You answered this already" or ""
    box.click()
    page.evaluate(f"() => {{ {KERNEL}.requestExecute({{code: 'import time; time.sleep(3)'}}); }}")
    page.wait_for_function(f"() => {KERNEL}.status === 'busy'")
    page.keyboard.type(right)                                 # no delay between keys
    page.keyboard.press("Enter")
    page.wait_for_function("([el, before]) => el.innerText.trim() !== before.trim()",
                           arg=[result.element_handle(), before], timeout=30_000)
    assert "course-pass" in result.inner_html(), result.inner_text()
    assert "Right." in result.inner_text() and "not it yet" not in result.inner_text()


def test_the_site_saves_an_edited_notebook_within_seconds(online_site, serve_site, page):
    """The built site autosaves every few seconds (so a check soon sees an edit not run): the
    notebook's tab loses its unsaved mark without Ctrl+S."""
    from test_browser_site import watch
    from tools.site import AUTOSAVE_SECONDS

    site, _ = online_site
    base = serve_site(site, "/course/")
    watch(page)                               # nothing leaves 127.0.0.1 (the kernel need not start)
    page.goto(f"{base}lab/index.html?path=00_start_here.ipynb")
    editor = page.locator(f"{PANEL} .jp-CodeCell .cm-content").first
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # edited")
    dirty = ".lm-TabBar-tab.lm-mod-current.jp-mod-dirty"
    page.wait_for_selector(dirty)
    page.wait_for_selector(dirty, state="detached", timeout=(AUTOSAVE_SECONDS + 10) * 1000)
