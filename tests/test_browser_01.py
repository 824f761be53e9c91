"""Notebook 01 live: a local JupyterLab (CPython kernel) in Chromium, as a learner uses it.

Runs every cell, clicks the shuffle lab's "add positions" toggle and expects the verdict to
change from "identical" to "changed by", moves the scale-factor slider by keyboard and expects
its verdict to follow, and saves a screenshot of each lab in test-artifacts/.
"""

from test_browser_live import PANEL, cell_errors, open_and_run

NOTEBOOK = "01_positional_encoding.ipynb"


def test_positional_notebook_live(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    labs = open_and_run(page, base, NOTEBOOK)

    shuffle = page.locator(f"{PANEL} .course-lab-shuffle")
    verdict = shuffle.locator(".course-verdict")
    verdict.scroll_into_view_if_needed()
    before = verdict.inner_text()
    assert "identical, only its row moved" in before
    shuffle.locator(".course-toggle-positions").click()
    page.wait_for_function("([el, before]) => el.innerText !== before",
                           arg=[verdict.element_handle(), before], timeout=15_000)
    after = verdict.inner_text()
    assert "cat's output changed by" in after and "new input" in after
    shuffle.locator(".course-toggle-positions").click()              # and back again
    page.wait_for_function("([el, before]) => el.innerText === before",
                           arg=[verdict.element_handle(), before], timeout=15_000)

    scaling = page.locator(f"{PANEL} .course-lab-scaling")
    verdict = scaling.locator(".course-verdict")
    verdict.scroll_into_view_if_needed()
    assert "Scale factor \u00d72 = \u221ad_model" in verdict.inner_text()
    handle = scaling.locator(".course-slider-scale .noUi-handle")
    handle.focus()
    for _ in range(3):                                                  # x2 -> x16
        page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.innerText.includes('Scale factor \u00d716')",
                           arg=verdict.element_handle(), timeout=15_000)
    assert "follow the words" in verdict.inner_text()

    for name in labs:
        lab = page.locator(f"{PANEL} .course-lab-{name}")
        lab.scroll_into_view_if_needed()
        lab.screenshot(path=str(artifacts / f"live-01-{name}.png"))
    assert cell_errors(page) == []
