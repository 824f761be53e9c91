"""Notebook 06 live: a local JupyterLab (CPython kernel) in Chromium, as a learner uses it.

Runs every cell, presses start in the live-training lab and expects its loss to fall on screen
frame by frame while the page stays usable (stop takes effect mid-run), then runs on to the end;
saves a screenshot of each lab in test-artifacts/.
"""

import re

from test_browser_live import PANEL, cell_errors, open_and_run

NOTEBOOK = "06_block_at_work.ipynb"
STEP = re.compile(r"step (\d+):")


def steps_said(verdict) -> int:
    found = STEP.search(" ".join(verdict.inner_text().split()))
    return int(found.group(1)) if found else 0


def test_block_at_work_notebook_live(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    labs = open_and_run(page, base, NOTEBOOK)

    live = page.locator(f"{PANEL} .course-lab-live-training")
    verdict, start = live.locator(".course-verdict"), live.locator("button.course-live-start")
    live.scroll_into_view_if_needed()
    assert "no step yet" in verdict.inner_text()
    start.click()
    # The run answers in frames: the verdict names a step before the end, the button reads "stop".
    page.wait_for_function("el => /step \\d+:/.test(el.innerText)", arg=verdict.element_handle(), timeout=60_000)
    page.wait_for_function("el => el.innerText.trim() === 'stop'", arg=start.element_handle(), timeout=60_000)
    start.click()
    page.wait_for_function("el => el.innerText.trim() === 'start'", arg=start.element_handle(), timeout=60_000)
    stopped = steps_said(verdict)
    assert 0 < stopped < 300
    start.click()
    page.wait_for_function("el => el.innerText.includes('step 300:')", arg=verdict.element_handle(), timeout=120_000)
    said = " ".join(verdict.inner_text().split())
    assert "below the" in said and "steps a second" in said

    for name in labs:
        lab = page.locator(f"{PANEL} .course-lab-{name}")
        lab.scroll_into_view_if_needed()
        lab.screenshot(path=str(artifacts / f"live-06-{name}.png"))
    assert cell_errors(page) == []
