"""Every notebook's course output with a keyboard alone and through an accessibility audit, and
its labs brought back by a reload: a local JupyterLab (CPython kernel) in Chromium.

Each notebook is opened and run once (in a JupyterLab of its own, so what these tests answer
and record does not reach the other browser tests); then, in this order:

- keyboard: every control of every lab is reached with Tab and shows a focus ring; every
  slider moves with the arrow keys, every check box with Space, every radio group and menu
  with the arrows, and JupyterLab takes none of those keys; one lab is driven further and
  one question answered with the keyboard alone, and the verdict that changes is a polite
  live region and the plot's text alternative; in 03, the learner's own layer_norm is switched
  on with the keyboard and its badge counts its calls;
- controls that fit: every slider track is wider than 100 px and no label, option, button or
  readout is cut off;
- axe: axe-core finds no serious or critical violation in the course's own elements, in the
  light and the dark theme (what it finds in JupyterLab's own interface, with the first notebook
  open in the light theme, is printed at the end of the run);
- motion: nothing in the course animates;
- reload: a cell run again leaves no widget behind, and a reload brings every lab back.

The same notebooks on a phone, zoomed in and at every width: tests/test_browser_screens.py.
"""

import json
import re
import urllib.request
from pathlib import Path

import pytest

from conftest import CONTENT, local_jupyterlab, notebooks
from test_browser_live import APP, PANEL, cell_errors, open_notebook, run_all
from tools.browser import page_snippets, settle

# The JavaScript these tests evaluate in the page: tests/test_browser_access.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=APP, PANEL=PANEL)

NOTEBOOKS = [p.relative_to(CONTENT).as_posix() for p in notebooks()]
SERIOUS = ("serious", "critical")
WIDE, NARROW, ZOOMED = {"width": 1280, "height": 900}, {"width": 390, "height": 2600}, {"width": 640, "height": 1200}

# The lab each notebook's keyboard test drives further, in a way of its own (see drive_lab below);
# a notebook not listed has its first lab's first slider driven to its ends.
DRIVEN = {
    "00_start_here.ipynb": "temperature",
    "01_positional_encoding.ipynb": "position-table",
    "02_feed_forward.ipynb": "hidden-units",
    "03_norms_and_residuals.ipynb": "stream",
    "04_decoder_block.ipynb": "layer-flow",
    "05_trained_model.ipynb": "ablation",
}


# ---------------------------------------------------------------- the session per notebook

@pytest.fixture(scope="module")
def access_server(tmp_path_factory):
    work = tmp_path_factory.mktemp("access")
    with local_jupyterlab(work, work / "progress.json") as server:
        yield server


class Opened:
    """A notebook opened and run once in its own browser context."""

    def __init__(self, page, name, root):
        self.page, self.name, self.root = page, name, root
        self.stem = name.rsplit("/", 1)[-1].removesuffix(".ipynb")

    def labs(self):
        return self.page.locator(f"{PANEL} .course-lab")

    def lab(self, name):
        return self.page.locator(f"{PANEL} .course-lab-{name}")

    def cells(self) -> int:
        return self.page.evaluate(f"{APP}.shell.currentWidget.content.widgets.length")

    def settle(self, timeout=60.0):
        """Wait until the kernel has answered every change and the page shows it (the kernel idle
        with no request waiting for its answer, the plots loaded: tools.browser.settle)."""
        settle(self.page, timeout)

    def theme(self, name):
        self.page.evaluate(f"{APP}.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
        self.page.wait_for_function("dark => document.body.dataset.jpThemeLight === (dark ? 'false' : 'true')",
                                    arg=name.endswith("Dark"))
        self.painted()

    def painted(self):
        """Wait until the browser has laid out and painted what just changed (two frames)."""
        self.page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")

    def viewport(self, size):
        self.page.set_viewport_size(size)
        if size["width"] < 800:                     # a learner on a phone closes the side panels
            self.page.evaluate(f"{APP}.shell.collapseLeft(); {APP}.shell.collapseRight();")
        # JupyterLab lays its panels out again on the resize: wait until the notebook fits.
        self.page.wait_for_function(f"() => document.querySelector('{PANEL}').getBoundingClientRect().right "
                                    "<= window.innerWidth + 1")
        self.painted()


def _shut_kernels(base):
    with urllib.request.urlopen(base + "api/sessions", timeout=10) as response:
        sessions = json.load(response)
    for session in sessions:
        request = urllib.request.Request(f"{base}api/sessions/{session['id']}", method="DELETE")
        urllib.request.urlopen(request, timeout=10).read()


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=NOTEBOOKS)
def opened(request, access_server, browser):
    base, root = access_server
    context = browser.new_context(viewport=WIDE, reduced_motion="reduce")
    page = context.new_page()
    page.set_default_timeout(60_000)
    open_notebook(page, base, request.param)
    run_all(page)
    assert cell_errors(page) == []
    page.wait_for_function("() => !!window.courseAccess")        # the course's page script ran
    yield Opened(page, request.param, root)
    context.close()
    _shut_kernels(base)


def lab_names(opened):
    return [re.search(r"course-lab-([\w-]+)", lab.get_attribute("class")).group(1) for lab in opened.labs().all()]


# ---------------------------------------------------------------- keyboard

FOCUSABLE = SNIPPETS["FOCUSABLE"]

ACTIVE = SNIPPETS["ACTIVE"]


def tab_through(page, lab):
    """Focus the lab's first control, press Tab until focus leaves the lab; return the keys of
    the controls reached, each with whether its focus ring showed."""
    expected = lab.evaluate(FOCUSABLE)
    focus(page, lab.locator("[data-key]").first)
    reached = []
    for _ in range(3 * len(expected) + 5):
        active = lab.evaluate(ACTIVE)
        if active is None:
            break
        reached.append(active)
        page.keyboard.press("Tab")
    return expected, reached


def focus(page, locator):
    """Focus a control as if the keyboard had brought it there: after a key press the browser
    shows the focus ring (``:focus-visible``). (Tabbing back and forth from a control would
    land in a code cell, where Tab indents.)"""
    page.keyboard.press("Shift")
    locator.focus()


VALUE = SNIPPETS["VALUE"]


def press_and_back(opened, locator, key, back):
    """Press ``key`` on a control (focused as the keyboard does), see its value change, then
    press ``back``; then wait, as a learner does, until the lab has answered both."""
    page = opened.page
    focus(page, locator)
    before = locator.evaluate(VALUE)
    page.keyboard.press(key)
    page.wait_for_function(f"([el, before]) => ({VALUE})(el) !== before",
                           arg=[locator.element_handle(), before])
    # The kernel's answer to the first key may set the control again (a value snapped to the lab's
    # grid): wait for it, so that the key back starts from where the lab left the control.
    opened.settle()
    page.keyboard.press(back)
    page.wait_for_function(f"([el, before]) => ({VALUE})(el) === before",
                           arg=[locator.element_handle(), before])
    opened.settle()        # the kernel's answer may set other controls (a lab's menu follows its sliders)


CELL_OF = f"""(lab) => {APP}.shell.currentWidget.content.widgets.findIndex(c => c.node.contains(lab))"""


def tab_from_the_cell(opened):
    """The README's path into a lab: from the lab's cell in command mode, reached by clicking its
    prompt or by Esc and the arrow keys, the first Tab lands on the lab's first control (never on
    JupyterLab's cell toolbar)."""
    page = opened.page
    problems = []
    for name in lab_names(opened):
        lab = opened.lab(name)
        lab.scroll_into_view_if_needed()
        first = lab.evaluate(FOCUSABLE)[0]
        index = lab.evaluate(CELL_OF)
        cell = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(index)
        # 1. a click on the cell's prompt, then Tab
        cell.locator(".jp-InputPrompt").click()
        page.wait_for_function(f"{APP}.shell.currentWidget.content.activeCellIndex === {index} && "
                               f"{APP}.shell.currentWidget.content.mode === 'command'")
        page.keyboard.press("Tab")
        active = lab.evaluate(ACTIVE)
        if not active or active["key"] != first:
            problems.append(f"{name}, from its prompt: Tab went to {page.evaluate(WHAT_HAS_FOCUS)}")
        # 2. in the cell above, Esc, the down arrow, then Tab
        page.evaluate(f"{APP}.shell.currentWidget.content.node.focus(); "
                      f"{APP}.shell.currentWidget.content.activeCellIndex = {index - 1}")
        page.evaluate(f"{APP}.commands.execute('notebook:enter-edit-mode')")
        page.wait_for_function(f"{APP}.shell.currentWidget.content.mode === 'edit'")
        page.keyboard.press("Escape")
        page.keyboard.press("ArrowDown")
        page.wait_for_function(f"{APP}.shell.currentWidget.content.activeCellIndex === {index} && "
                               f"{APP}.shell.currentWidget.content.mode === 'command'")
        page.keyboard.press("Tab")
        active = lab.evaluate(ACTIVE)
        if not active or active["key"] != first:
            problems.append(f"{name}, from command mode: Tab went to {page.evaluate(WHAT_HAS_FOCUS)}")
        elif not active["ring"]:
            problems.append(f"{name}: no focus ring on the first control reached with Tab")
    assert problems == []


WHAT_HAS_FOCUS = SNIPPETS["WHAT_HAS_FOCUS"]


def check_every_lab_by_keyboard(opened):
    page, cells = opened.page, opened.cells()
    problems = []
    for index in range(opened.labs().count()):
        lab = opened.labs().nth(index)
        name = re.search(r"course-lab-([\w-]+)", lab.get_attribute("class")).group(1)
        lab.scroll_into_view_if_needed()
        expected, reached = tab_through(page, lab)
        keys = {r["key"] for r in reached}
        missing = [k for k in expected if k not in keys]
        if missing:
            problems.append(f"{name}: Tab never reached {len(missing)} of its {len(expected)} controls")
        problems += [f"{name}: no focus ring on {r['what']}" for r in reached if not r["ring"]]
        # Every slider moves with the arrows, every check box with Space, every radio group and
        # menu with the arrows; JupyterLab takes none of these keys.
        for handle in lab.locator(".noUi-handle").all():
            at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
            press_and_back(opened, handle, "ArrowLeft" if at_end else "ArrowRight", "ArrowRight" if at_end else "ArrowLeft")
        for box in lab.locator("input[type=checkbox]:enabled").all():
            press_and_back(opened, box, "Space", "Space")
        for group in lab.locator(".widget-radio-box").all():
            radios = group.locator("input[type=radio]:checked")
            if radios.count():
                last = group.locator("input[type=radio]").last.is_checked()
                press_and_back(opened, radios.first, "ArrowLeft" if last else "ArrowRight",
                               "ArrowRight" if last else "ArrowLeft")
        for menu in lab.locator("select:enabled").all():
            last = menu.evaluate("el => el.selectedIndex === el.options.length - 1")
            press_and_back(opened, menu, "ArrowUp" if last else "ArrowDown", "ArrowDown" if last else "ArrowUp")
        opened.settle()
    assert problems == []
    assert opened.cells() == cells, "a key meant for a control reached JupyterLab and changed the notebook"
    assert cell_errors(page) == []


def text_of(locator):
    return " ".join(locator.inner_text().split())


def wait_for_new_verdict(page, verdict, before):
    page.wait_for_function("([el, before]) => el.innerText.replace(/\\s+/g, ' ').trim() !== before",
                           arg=[verdict.element_handle(), before])


def check_the_verdict_speaks(opened, lab):
    """The verdict is a polite live region and the plot's text alternative, kept in step."""
    verdict = lab.locator(".course-verdict")
    live = verdict.locator(".widget-html-content")
    assert live.get_attribute("aria-live") == "polite"
    # Read both in one step, once they agree: the kernel may still be sending the next update.
    agreed = opened.page.wait_for_function(
        SNIPPETS["VERDICT_AGREES"], arg=[lab.locator("img.course-figure-image").element_handle(), verdict.element_handle()]).json_value()
    assert agreed and lab.get_by_role("img").count() >= 1


def drive_lab(opened):
    """The notebook's chosen lab, driven further with the keyboard alone."""
    page = opened.page
    name = DRIVEN.get(opened.name) or lab_names(opened)[0]
    lab = opened.lab(name)
    lab.scroll_into_view_if_needed()
    verdict = lab.locator(".course-verdict")
    opened.settle()
    check_the_verdict_speaks(opened, lab)
    before = text_of(verdict)
    if name == "temperature" or opened.name not in DRIVEN:
        handle = lab.locator(".noUi-handle").first
        focus(page, handle)
        page.keyboard.press("End")
        wait_for_new_verdict(page, verdict, before)
        assert handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        page.keyboard.press("Home")
        assert handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemin")
    elif name == "position-table":
        # The row slider's end follows the length: End on it goes to the last row of 64.
        focus(page, lab.locator(".course-slider-length .noUi-handle"))
        page.keyboard.press("End")
        opened.settle()
        row = lab.locator(".course-slider-row .noUi-handle")
        page.wait_for_function("el => el.getAttribute('aria-valuemax') === '63.0'", arg=row.element_handle())
        focus(page, row)
        page.keyboard.press("End")
        page.wait_for_function("el => el.innerText.includes('Position 63 of a 64')", arg=verdict.element_handle())
        page.keyboard.press("Home")
        page.wait_for_function("el => el.innerText.includes('Position 0 of a 64')", arg=verdict.element_handle())
    elif name == "hidden-units":
        radio = lab.locator(".widget-radio input[type=radio]:checked")
        focus(page, radio)
        page.keyboard.press("ArrowRight")
        wait_for_new_verdict(page, verdict, before)
        assert "GELU" in lab.locator(".widget-radio input[type=radio]:checked").evaluate(
            "el => el.parentElement.textContent")
    elif name == "stream":
        # The "additions agree" slider: a track of its own and a keyboard that reaches 1.
        handle = lab.locator(".widget-slider", has_text="additions agree").locator(".noUi-handle")
        focus(page, handle)
        page.keyboard.press("End")
        wait_for_new_verdict(page, verdict, before)
        assert handle.get_attribute("aria-valuenow") == "1.0"
        pair = lab.locator(".course-slider-with-box", has_text="additions agree")
        page.wait_for_function("el => el.value === '1.00'", arg=pair.locator(".course-number-box input").element_handle())
    elif name == "layer-flow":
        causal = lab.locator(".course-toggle-causal input[type=checkbox]")
        focus(page, causal)
        page.keyboard.press("Space")
        page.wait_for_function("el => el.innerText.includes('Without the causal mask')", arg=verdict.element_handle())
        assert not causal.is_checked()
        page.keyboard.press("Space")
        page.wait_for_function("([el, before]) => el.innerText.replace(/\\s+/g, ' ').trim() === before",
                               arg=[verdict.element_handle(), before])
    elif name == "ablation":
        first_block = lab.locator("input[type=checkbox]").first
        focus(page, first_block)
        page.keyboard.press("Space")
        wait_for_new_verdict(page, verdict, before)
        assert not first_block.is_checked()
    check_the_verdict_speaks(opened, lab)


def answer_a_question(opened):
    """The notebook's first predict question, answered and locked in with the keyboard alone."""
    page = opened.page
    question = page.locator(f"{PANEL} .course-question-predict").first
    question.scroll_into_view_if_needed()
    group = question.locator(".widget-radio-box")
    assert group.get_attribute("role") == "radiogroup" and group.get_attribute("aria-labelledby")
    result = question.locator(".course-question-result .widget-html-content")
    assert result.get_attribute("aria-live") == "polite"
    first = question.locator("input[type=radio]").first
    focus(page, first)
    page.keyboard.press("ArrowDown")                    # choose the second answer
    page.wait_for_function("el => !el.disabled", arg=question.locator(".course-lock-button").element_handle())
    page.keyboard.press("Tab")                          # to "Lock in my answer"
    assert page.evaluate("document.activeElement.textContent") == "Lock in my answer"
    page.keyboard.press("Enter")
    page.wait_for_function("el => el.innerText.includes('You chose')", arg=result.element_handle())
    assert question.locator("input[type=radio]").nth(1).is_checked()


def answer_a_number_question(opened):
    """00's number question, a wrong answer (Enter in the box checks it, and JupyterLab does not
    take the Enter), then the answer shown, and a hint, by keyboard."""
    page = opened.page
    question = page.locator(f"{PANEL} .course-question-number").first
    question.scroll_into_view_if_needed()
    field = question.locator(".course-enter input[type=text]")     # not its hidden partner
    assert field.get_attribute("aria-labelledby")
    mode = f"{APP}.shell.currentWidget.content.mode"
    before = page.evaluate(mode)
    focus(page, field)
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    result = question.locator(".course-question-result")
    page.wait_for_function("el => el.innerText.includes('Try again')", arg=result.element_handle())
    assert page.evaluate(mode) == before, "Enter in the answer box reached JupyterLab"
    assert page.evaluate("document.activeElement.type") == "text"
    page.keyboard.press("Tab")                          # to "Check my answer"
    assert page.evaluate("document.activeElement.textContent") == "Check my answer"
    page.keyboard.press("Tab")                          # to "Show the answer", now shown
    assert page.evaluate("document.activeElement.textContent") == "Show the answer"
    page.keyboard.press("Space")
    page.wait_for_function("el => el.innerText.includes('The answer is')", arg=result.element_handle())
    controls = page.locator(f"{PANEL} .course-controls").first
    focus(page, controls.locator(".course-hint-button"))
    page.keyboard.press("Enter")
    page.wait_for_function("el => el.innerText.includes('Hint 1 of')", arg=controls.locator(".course-hints").element_handle())


def use_my_function(opened):
    """03: once the LayerNorm check passes, "use my layer_norm" is ticked with Space, and the
    badge shows the learner's function at work: its calls counted, its last call shown."""
    from engine.core.registry import get_exercise

    page = opened.page
    run_exercise(opened, "layer-norm-fix", get_exercise("layer-norm-fix").solution_source)
    lab = opened.lab("axis")
    lab.scroll_into_view_if_needed()
    switch = lab.locator(".course-own-switch input[type=checkbox]")
    page.wait_for_function("el => !el.disabled", arg=switch.element_handle())
    focus(page, switch)
    page.keyboard.press("Space")
    badge = lab.locator(".course-own-badge")
    counted = re.compile(r"your layer_norm — called (\d+) times? for this plot, (\d+) since you ticked the "
                         r"box; last call layer_norm\(array \(\d+, \d+\)")
    page.wait_for_function("el => el.innerText.includes('called')", arg=badge.element_handle())
    first = counted.search(text_of(badge))
    assert first and int(first.group(1)) >= 1 and first.group(1) == first.group(2), text_of(badge)
    focus(page, lab.locator(".noUi-handle"))
    page.keyboard.press("ArrowLeft")                # one more plot: the count goes on
    page.wait_for_function("([el, total]) => !el.innerText.includes(total + ' since')",
                           arg=[badge.element_handle(), first.group(2)])
    again = counted.search(text_of(badge))
    assert again and int(again.group(2)) == int(first.group(2)) + int(again.group(1))


# What each notebook's test types into a number box: (lab, slider class, typed, the box after
# Enter, in the verdict after Enter, or the reason shown for a refusal).
TYPED = {
    "01_positional_encoding.ipynb": ("scaling", "course-slider-scale", "4", "\u00d74", "Scale factor \u00d74:", None),
    "04_decoder_block.ipynb": ("parameter-calculator", "course-slider-d-model", "100", "768", None,
                               "d_model moves in steps of 32: 100 lies between 96 and 128."),
    "05_trained_model.ipynb": ("mismatch", "course-slider-base", "100,000", "100,000", "RoPE base 100,000", None),
}


def type_into_a_number_box(opened):
    """A value typed in the format the box shows and confirmed with Enter sets the slider, the
    box and the verdict alike, or is refused with its reason shown; Enter adds no line and does
    not reach JupyterLab."""
    page = opened.page
    name, slider_class, typed, shown, said, refused = TYPED[opened.name]
    lab = opened.lab(name)
    pair = lab.locator(".course-slider-with-box", has=page.locator(f".{slider_class}"))
    field = pair.locator(".course-number-box input")
    handle = pair.locator(".noUi-handle")
    verdict = lab.locator(".course-verdict")
    pair.scroll_into_view_if_needed()
    opened.settle()
    before, position = text_of(verdict), handle.get_attribute("aria-valuenow")
    mode, cells = page.evaluate(f"{APP}.shell.currentWidget.content.mode"), opened.cells()
    focus(page, field)
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(typed)
    page.keyboard.press("Enter")
    message = pair.locator(".course-box-message")
    if refused:
        page.wait_for_function("([el, why]) => el.innerText.includes(why)", arg=[message.element_handle(), refused])
        page.wait_for_function("([el, shown]) => el.value === shown", arg=[field.element_handle(), shown])
        assert message.is_visible() and handle.get_attribute("aria-valuenow") == position
        opened.settle()
        assert text_of(verdict) == before
    else:
        page.wait_for_function("([el, said]) => el.innerText.includes(said)", arg=[verdict.element_handle(), said])
        page.wait_for_function("([el, shown]) => el.value === shown", arg=[field.element_handle(), shown])
        assert handle.get_attribute("aria-valuenow") != position and text_of(message) == ""
        check_the_verdict_speaks(opened, lab)
    assert field.evaluate("el => el.tagName") == "INPUT" and "\n" not in field.input_value()
    assert page.evaluate(f"{APP}.shell.currentWidget.content.mode") == mode and opened.cells() == cells


def test_keyboard_reaches_and_works_every_control(opened):
    tab_from_the_cell(opened)
    check_every_lab_by_keyboard(opened)
    drive_lab(opened)
    if opened.page.locator(f"{PANEL} .course-question-predict").count():
        answer_a_question(opened)
    if opened.name == "00_start_here.ipynb":
        answer_a_number_question(opened)
    if opened.name in TYPED:
        type_into_a_number_box(opened)
    if opened.name == "03_norms_and_residuals.ipynb":
        use_my_function(opened)
    opened.settle()
    assert cell_errors(opened.page) == []


# ---------------------------------------------------------------- controls that fit

FIT = SNIPPETS["FIT"]


def controls_that_do_not_fit(opened):
    problems = []
    for lab in opened.labs().all():
        name = re.search(r"course-lab-([\w-]+)", lab.get_attribute("class")).group(1)
        fit = lab.evaluate(FIT)
        problems += [f"{name}: the track of “{label}” is {width:.0f} px" for label, width in fit["tracks"] if width <= 100]
        problems += [f"{name}: “{text}” is cut off" for text in fit["clipped"]]
    return problems


def test_every_slider_track_and_option_label_fits(opened):
    assert opened.labs().count() >= 1
    assert controls_that_do_not_fit(opened) == []


# ---------------------------------------------------------------- axe

AUDIT_ROOTS = SNIPPETS["AUDIT_ROOTS"]


def axe_run(page, context, options):
    """axe-core's violations in ``context`` (its include/exclude selectors) with ``options``."""
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SCRIPT)
    return page.evaluate(SNIPPETS["AXE_RUN"], [context, options])


def run_exercise(opened, exercise_id, source):
    """Fill an exercise cell with ``source`` (as a learner types it), run it and its check."""
    page = opened.page
    index = page.evaluate(SNIPPETS["FILL_EXERCISE"], [exercise_id, source])
    for cell in (index, index + 1):                 # the exercise cell, then its check
        page.evaluate(f"{APP}.shell.currentWidget.content.activeCellIndex = {cell}")
        page.evaluate(f"{APP}.commands.execute('notebook:run-cell')")
        opened.settle()


def make_feedback_states(opened):
    """00's exercises checked once wrong and once right, a hint and the solution opened: the
    feedback the audit must see besides "not attempted"."""
    from engine.core.registry import get_exercise

    page = opened.page
    for exercise_id, right in (("row-mean", False), ("stable-softmax", True)):
        exercise = get_exercise(exercise_id)
        run_exercise(opened, exercise_id,
                     exercise.solution_source if right else exercise.variant_source(exercise.mistakes[0].code))
    page.locator(f"{PANEL} .course-feedback.course-fail").wait_for()
    page.locator(f"{PANEL} .course-feedback.course-pass").wait_for()
    controls = page.locator(f"{PANEL} .course-controls", has=page.locator(".course-solution-button")).first
    controls.locator(".course-solution-button").click()
    controls.locator(".course-solution").wait_for()
    for refresh in (".course-progress-refresh", ".course-review-refresh"):
        page.locator(f"{PANEL} {refresh}").click()
    opened.settle()


SPOKEN = SNIPPETS["SPOKEN"]


def test_axe_finds_no_serious_violation_in_the_course(opened, axe_outside_course):
    page = opened.page
    if opened.name == "00_start_here.ipynb":
        make_feedback_states(opened)
    opened.settle()
    for lab in opened.labs().all():                 # what axe cannot judge: the words themselves
        spoken = lab.evaluate(SPOKEN)
        assert spoken["live"] == "polite" and spoken["verdict"], spoken
        assert spoken["alt"] == spoken["verdict"], "the plot's text alternative is not the verdict shown"
    serious = []
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        opened.theme(theme)
        roots = page.evaluate(AUDIT_ROOTS)
        assert roots >= 3
        # The rules that do not depend on colours give the same answer in both themes.
        only = {} if theme.endswith("Light") else {"runOnly": {"type": "rule", "values": ["color-contrast"]}}
        for v in axe_run(page, {"include": [["[data-course-audit]"]]}, only):
            if v["impact"] in SERIOUS:
                serious.append(f"{theme}: {v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"][:5]))
        if theme.endswith("Dark") or opened.name != NOTEBOOKS[0]:
            continue                                  # JupyterLab's interface: once is enough
        outside = axe_run(page, {"include": [["body"]], "exclude": [["[data-course-audit]"]]}, {})
        for v in outside:
            axe_outside_course.append(f"{opened.stem}, {theme}: {v['id']} ({v['impact']}, "
                                      f"{len(v['nodes'])} element(s)): {v['help']}")
    opened.theme("JupyterLab Light")
    assert serious == [], "\n".join(serious)


def kernel_value(page, code, expression):
    """The value of the Python ``expression`` (a JSON text) after ``code`` ran in the open
    notebook's kernel, quietly: no output, no prompt number, nothing in its history."""
    import ast

    reply = page.evaluate(SNIPPETS["KERNEL_VALUE"], [code, expression])
    value = reply["user_expressions"]["value"]
    assert value.get("status") == "ok", value
    return json.loads(ast.literal_eval(value["data"]["text/plain"]))


# ---------------------------------------------------------------- motion

def test_nothing_in_the_course_moves_by_itself(opened):
    """Nothing in the course animates (so nothing depends on timing); with reduced motion asked
    for (this browser context asks), not even a transition is left."""
    running = opened.page.evaluate(SNIPPETS["ANIMATED"])
    assert running == []
    slow = opened.page.evaluate(SNIPPETS["TRANSITIONS"])
    assert slow == []


# ---------------------------------------------------------------- a reload brings every lab back

WIDGETS_IN_KERNEL = "str(len(__import__('ipywidgets').widgets.widget._instances))"

CELLS_WITH_COURSE_WIDGETS = SNIPPETS["CELLS_WITH_COURSE_WIDGETS"]

LABS_BACK = SNIPPETS["LABS_BACK"]

NOT_FOUND = SNIPPETS["NOT_FOUND"]


def test_a_cell_run_again_leaves_no_widget_behind_and_a_reload_brings_every_lab_back(opened):
    """Every cell that shows a course widget run again: the kernel holds as many widgets as
    before (each run's widgets replace the last run's). The notebook saved and the page
    reloaded, with its kernel running: every lab the notebook calls (the course's inventory)
    is on the page again with its plot, none says "model not found", and the kernel still
    answers each lab's first slider."""
    from engine.core import inventory

    page = opened.page
    count = len(inventory.notebook(opened.stem).labs)
    opened.settle()
    before = kernel_value(page, "", WIDGETS_IN_KERNEL)
    for index in page.evaluate(CELLS_WITH_COURSE_WIDGETS):
        page.evaluate(f"{APP}.shell.currentWidget.content.activeCellIndex = {index}")
        page.evaluate(f"{APP}.commands.execute('notebook:run-cell')")
        opened.settle()
    assert kernel_value(page, "", WIDGETS_IN_KERNEL) == before, "running the cells again left widgets in the kernel"
    page.evaluate(f"{APP}.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !{APP}.shell.currentWidget.context.model.dirty")
    page.reload()
    page.wait_for_function(f"{APP} && {APP}.shell.currentWidget && {APP}.shell.currentWidget.sessionContext "
                           f"&& {APP}.shell.currentWidget.sessionContext.session "
                           f"&& {APP}.shell.currentWidget.sessionContext.session.kernel", timeout=60_000)
    try:
        page.wait_for_function(LABS_BACK, arg=count, timeout=90_000)
    except Exception:  # noqa: BLE001 - said below with what the page shows
        shown = page.locator(f"{PANEL} .course-lab").count()
        raise AssertionError(f"after the reload {shown} of {count} labs are back, "
                             f"{page.evaluate(NOT_FOUND)} outputs say 'model not found'") from None
    opened.settle()
    driven = 0
    for lab in opened.labs().all():
        pair = lab.locator(".course-slider-with-box").first
        if not pair.count():
            continue
        # The kernel writes the slider's value into its number box: it answers the slider.
        handle, box = pair.locator(".noUi-handle"), pair.locator(".course-number-box input")
        shown = box.input_value()
        at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        focus(page, handle)
        page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
        page.wait_for_function("([el, before]) => el.value !== before", arg=[box.element_handle(), shown])
        page.keyboard.press("ArrowRight" if at_end else "ArrowLeft")
        page.wait_for_function("([el, before]) => el.value === before", arg=[box.element_handle(), shown])
        opened.settle()
        driven += 1
    assert driven >= 1 and page.evaluate(NOT_FOUND) == 0
    assert cell_errors(page) == []
