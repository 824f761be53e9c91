"""Notebook 04 live: a local JupyterLab (CPython kernel) in Chromium, as a learner uses it.

Runs every cell, switches off the layer-flow lab's causal mask and expects its verdict to say that
word 1 now reads the future, switches it back on, and saves a screenshot of each lab in
test-artifacts/.
"""

from test_browser_live import PANEL, cell_errors, open_and_run

NOTEBOOK = "04_decoder_block.ipynb"


def test_decoder_notebook_live(jupyter_server, page, artifacts):
    base, _ = jupyter_server
    labs = open_and_run(page, base, NOTEBOOK)

    flow = page.locator(f"{PANEL} .course-lab-layer-flow")
    verdict = flow.locator(".course-verdict")
    verdict.scroll_into_view_if_needed()
    before = verdict.inner_text()
    assert "every part on" in before and "no word reads the future" in before
    flow.locator(".course-toggle-causal").click()
    page.wait_for_function("([el, before]) => el.innerText !== before",
                           arg=[verdict.element_handle(), before], timeout=15_000)
    after = verdict.inner_text()
    assert "Without the causal mask, word 1 reads the future" in after
    flow.locator(".course-toggle-causal").click()                     # and back again
    page.wait_for_function("([el, before]) => el.innerText === before",
                           arg=[verdict.element_handle(), before], timeout=15_000)

    for name in labs:
        lab = page.locator(f"{PANEL} .course-lab-{name}")
        lab.scroll_into_view_if_needed()
        lab.screenshot(path=str(artifacts / f"live-04-{name}.png"))
    assert cell_errors(page) == []
