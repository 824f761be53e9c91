"""Every notebook on a phone (390 px), zoomed in (200 %) and on a desktop: a local JupyterLab
(CPython kernel) in Chromium, each notebook opened and run once (``opened``, the fixture of
tests/test_browser_access.py, made again for this module so the two run side by side).

- narrow: at 390 px wide and at 640 px (a 1280 px window at 200 % zoom) nothing sticks out
  of the notebook, no output scrolls sideways by a single pixel, printed output wraps between
  words, and no plot is wider than its output; screenshots of every lab at 390 px and in the
  dark theme go to test-artifacts/;
- plots: at 390 px every lab's plot is drawn as many pixels wide as it is shown, its smallest
  text at least 11 CSS px; a lab's first control comes above its plot at every size; at 200 %
  zoom (640 x 450 CSS px) the first control and the whole plot fit the notebook's view where
  the plot can be drawn that low;
- scrolling: no lab's output is put in a scrolling box, even in a cell marked "scrolled";
- progress: at 390 px every cell of the progress table is within the view; on a phone a
  notebook opens with the side panel closed;
- every width: on a desktop, a phone and at 200 % zoom no choice, control or text of the course
  is drawn over another or cut off, and every lab's plot, as its kernel drew it for that width,
  is readable (tests/figure_layout.py).
"""

from pathlib import Path

from conftest import CONTENT
from test_browser_access import (AUDIT_ROOTS, NARROW, NOTEBOOKS, WIDE, ZOOMED, _shut_kernels,  # noqa: F401 - fixtures
                                 access_server, controls_that_do_not_fit, focus, kernel_value, lab_names, opened)
from test_browser_live import APP, PANEL, open_notebook
from tools.browser import page_snippets

# The JavaScript these tests evaluate in the page: tests/test_browser_screens.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=APP, PANEL=PANEL)


# ---------------------------------------------------------------- narrow and zoomed


STICKING_OUT = SNIPPETS["STICKING_OUT"]

WIDER_THAN_THE_NOTEBOOK = SNIPPETS["WIDER_THAN_THE_NOTEBOOK"]


OVERFLOWING_OUTPUTS = SNIPPETS["OVERFLOWING_OUTPUTS"]

BROKEN_MID_WORD = SNIPPETS["BROKEN_MID_WORD"]


def test_narrow_screen_and_zoom_need_no_horizontal_scrolling(opened, artifacts):
    page = opened.page
    problems = []
    try:
        for size, label in ((NARROW, "390 px"), (ZOOMED, "200 % zoom")):
            opened.viewport(size)
            page.evaluate(AUDIT_ROOTS)
            wider = page.evaluate(WIDER_THAN_THE_NOTEBOOK)
            assert not wider["page"], f"the page scrolls sideways at {label}"
            problems += [f"{label}: {what} is wider than the notebook" for what in wider["wide"]]
            # Not one pixel of any output scrolls sideways; printed text wraps between words.
            problems += [f"{label}: the output of {what}" for what in page.evaluate(OVERFLOWING_OUTPUTS)]
            if page.evaluate(BROKEN_MID_WORD):
                problems.append(f"{label}: printed output wraps mid-word")
            for name in lab_names(opened):
                lab = opened.lab(name)
                lab.scroll_into_view_if_needed()
                found = lab.evaluate(STICKING_OUT)
                problems += [f"{label}, {name}: {what} sticks out" for what in found["out"]]
                if found["image"]:
                    shown, natural = found["image"]
                    if shown > found["area"] + 1:
                        problems.append(f"{label}, {name}: the plot is wider than its output ({shown:.0f} px)")
                if size is NARROW:
                    image = lab.locator("img.course-figure-image")
                    if image.count():        # the plot redrawn for this width, then its picture
                        page.wait_for_function(DRAWN_FOR_ITS_WIDTH, arg=image.element_handle())
                    lab.screenshot(path=str(artifacts / f"narrow-{opened.stem[:2]}-{name}.png"))
            problems += [f"{label}: {p}" for p in controls_that_do_not_fit(opened)]
        opened.viewport(WIDE)
        opened.theme("JupyterLab Dark")
        for name in lab_names(opened):
            lab = opened.lab(name)
            lab.scroll_into_view_if_needed()
            lab.screenshot(path=str(artifacts / f"dark-{opened.stem[:2]}-{name}.png"))
    finally:
        opened.theme("JupyterLab Light")
        opened.viewport(WIDE)
    assert problems == []


DRAWN_FOR_ITS_WIDTH = SNIPPETS["DRAWN_FOR_ITS_WIDTH"]

TEXT_SHOWN = SNIPPETS["TEXT_SHOWN"]

SMALLEST_TEXT_PX = 11

PHONE_ZOOMED = {"width": 640, "height": 450}      # a 1280 x 900 window at 200 % zoom, in CSS px

FITS_ONE_VIEW = SNIPPETS["FITS_ONE_VIEW"]

ORDER_OF_LAB = SNIPPETS["ORDER_OF_LAB"]


def readable_height(layout) -> float:
    """The least height (CSS px) the figure of ``layout`` could have with every axes readable
    (tests/figure_layout.py: at least LOWEST_AXES high, no flatter than 1 : FLATTEST), its texts
    around the axes keeping the room they have: each row of axes at its least readable height."""
    from figure_layout import FLATTEST, LOWEST_AXES

    rows = []                                          # [top, bottom, least readable height]
    for ax in layout["axes"]:
        if ax["colorbar"]:
            continue
        x0, y0, x1, y1 = ax["box"]
        least = max(LOWEST_AXES, (x1 - x0) / FLATTEST)
        row = next((r for r in rows if min(r[1], y1) - max(r[0], y0) > 1), None)
        if row is None:
            rows.append([y0, y1, least])
        else:
            row[0], row[1], row[2] = min(row[0], y0), max(row[1], y1), max(row[2], least)
    return layout["height"] - sum(bottom - top for top, bottom, _ in rows) + sum(least for *_, least in rows)


def test_plots_are_drawn_for_a_phone_and_fit_one_view_under_their_controls_at_200_percent(opened):
    """At 390 px every lab's plot is redrawn for the width it is shown at, its smallest text at
    least 11 CSS px; on a desktop, a phone and at 200 % zoom (640 x 450 CSS px) each lab's first
    control comes above its plot; at 200 % zoom the first control and the whole plot fit the
    notebook's view at once, unless the plot cannot be both readable and that low under the
    lab's controls (the kernel drew it taller than the height it was told): then the first
    control is at the view's top and the plot starts within the view, unless the lab's
    controls alone fill it."""
    page = opened.page
    problems = [f"1280 px: {name}: the plot comes before its first control"
                for name in lab_names(opened) if not opened.lab(name).evaluate(ORDER_OF_LAB)]
    try:
        opened.viewport(NARROW)
        for name in lab_names(opened):
            if not opened.lab(name).evaluate(ORDER_OF_LAB):
                problems.append(f"390 px: {name}: the plot comes before its first control")
            image = opened.lab(name).locator("img.course-figure-image")
            if not image.count():
                continue
            image.scroll_into_view_if_needed()
            try:
                page.wait_for_function(DRAWN_FOR_ITS_WIDTH, arg=image.element_handle(), timeout=30_000)
            except Exception:  # noqa: BLE001 - said below with the sizes measured
                pass
            text = image.evaluate(TEXT_SHOWN)
            if text["px"] is None or text["px"] < SMALLEST_TEXT_PX:
                problems.append(f"390 px, {name}: smallest text {text['px']} CSS px "
                                f"(drawn {text['natural']} px wide, shown {text['shown']:.0f})")
        opened.viewport(PHONE_ZOOMED)
        # Every plot drawn for the size it was told, and the kernel idle: then whether a lab fits
        # is known at once (a short wait only for a picture the scroll brings into view).
        page.wait_for_function(PICTURES_FIT, arg=1, timeout=90_000)
        opened.settle()
        for name in lab_names(opened):
            lab = opened.lab(name)
            if not lab.evaluate(ORDER_OF_LAB):
                problems.append(f"200 %: {name}: the plot comes before its first control")
            if not lab.locator("img.course-figure-image").count():
                continue
            try:
                page.wait_for_function(f"(lab) => ({FITS_ONE_VIEW})(lab).fits", arg=lab.element_handle(),
                                       timeout=5_000)
            except Exception:  # noqa: BLE001 - said below with the places measured
                found = lab.evaluate(FITS_ONE_VIEW)
                (top, _bottom), control = found["plot"], found["control"]
                figures = kernel_value(page, _layouts_probe(), "_course_layouts()").get(name, [])
                least = max([readable_height(figure) for figure in figures] or [0.0])
                drawn = [f"{figure['width']:.0f} x {figure['height']:.0f}" for figure in figures]
                told = lab.evaluate("lab => [...lab.querySelectorAll('.course-figure-size input')].map(i => i.value)")
                # The kernel draws a plot no lower than it stays readable (engine/kit/figure_layout.py):
                # drawn taller than it was told, under the lab's controls, it cannot fit with them.
                heights = [int(value.split()[1]) for value in told if len(value.split()) == 3]
                at_least = bool(heights) and all(figure["height"] > height + 1
                                                 for figure, height in zip(figures, heights))
                filled = all(height == 0 for height in heights)     # the controls alone fill the view
                if not (at_least and 0 <= control[0] <= 8 and (top < found["view"] or filled)):
                    problems.append(f"200 %, {name}: first control at {control}, plot at {found['plot']} px in a "
                                    f"view {found['view']} px high (drawn {drawn} for {told}, readable at {least:.0f} px)")
    finally:
        opened.viewport(WIDE)
    assert problems == []


MARK_LABS_SCROLLED = SNIPPETS["MARK_LABS_SCROLLED"]

LABS_IN_SCROLL_BOXES = SNIPPETS["LABS_IN_SCROLL_BOXES"]


def test_no_lab_is_shown_in_a_scrolling_box_even_in_a_cell_marked_scrolled(opened):
    """After Run All, and again once every lab's cell is marked "scrolled" (JupyterLab's output
    scrolling, which puts a tall output in a 24em box), on a desktop and a phone: no lab's output
    scrolls within its cell (its output area as tall inside as shown) and every verdict under a
    plot is within its output."""
    page = opened.page
    names = lab_names(opened)
    assert names, f"{opened.name} shows no lab"
    problems = [f"after Run All: {p}" for p in page.evaluate(LABS_IN_SCROLL_BOXES)]
    try:
        assert page.evaluate(MARK_LABS_SCROLLED) == len(names)
        for size, label in ((WIDE, "1280 px"), (NARROW, "390 px")):
            opened.viewport(size)
            problems += [f"marked scrolled, {label}: {p}" for p in page.evaluate(LABS_IN_SCROLL_BOXES)]
    finally:
        page.evaluate(f"{APP}.shell.currentWidget.content.widgets.forEach(c => {{ if (c.outputsScrolled) c.outputsScrolled = false; }})")
        opened.viewport(WIDE)
    assert problems == []


PROGRESS_CELLS_OUT = SNIPPETS["PROGRESS_CELLS_OUT"]


def test_the_progress_table_fits_a_phone(opened, artifacts):
    """At 390 px every shown cell of the progress table (the exercise and its status; the
    notebook's name in a row of its own) lies within the notebook's view and holds its text."""
    page = opened.page
    tables = page.locator(f"{PANEL} .course-progress-table").count()
    assert tables == ("progress_view()" in (CONTENT / opened.name).read_text()), tables
    if not tables:
        return
    try:
        opened.viewport(NARROW)
        shown = page.locator(f"{PANEL} .course-progress-table .course-progress-heading").first
        assert shown.is_visible(), "the notebook's name has no row of its own at 390 px"
        statuses = page.locator(f"{PANEL} .course-progress-table td.course-status")
        assert statuses.count() >= 1 and statuses.first.is_visible()
        page.locator(f"{PANEL} .course-progress-table").first.screenshot(path=str(artifacts / "narrow-progress.png"))
        assert page.evaluate(PROGRESS_CELLS_OUT) == []
    finally:
        opened.viewport(WIDE)


SIDE_PANEL_SCRIPT = CONTENT.parent / "tools" / "landing_page" / "side-panel.js"


def test_a_notebook_opens_with_the_side_panel_closed_on_a_phone(access_server, browser, tmp_path):
    """The site adds a script to JupyterLab's pages; with it, at 390 px, a notebook opens (in
    JupyterLab's default layout, which shows the file browser) with the side panel closed and
    the notebook taking the window's width but for JupyterLab's activity bar."""
    from tools.landing import ASSETS_COPIED, watch_kernel

    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "index.html").write_text("<html><head></head><body></body></html>")
    watch_kernel(tmp_path, "lab/index.html")
    assert SIDE_PANEL_SCRIPT.name in ASSETS_COPIED
    assert f'static/course/{SIDE_PANEL_SCRIPT.name}" defer' in (tmp_path / "lab" / "index.html").read_text()
    base, _root = access_server
    context = browser.new_context(viewport={"width": 390, "height": 844}, reduced_motion="reduce")
    context.add_init_script(path=str(SIDE_PANEL_SCRIPT))
    page = context.new_page()
    try:
        open_notebook(page, base, NOTEBOOKS[0])
        page.wait_for_function(f"{APP}.shell.leftCollapsed", timeout=30_000)
        page.wait_for_function(SNIPPETS["LEFT_PANEL_CLOSED"])
        width = page.evaluate(f"() => document.querySelector('{PANEL}').getBoundingClientRect().width")
        # All but JupyterLab's activity bar and the margins around its documents.
        assert width >= 0.75 * 390, f"the notebook is {width:.0f} px wide in a 390 px window"
    finally:
        context.close()
        _shut_kernels(base)



# ---------------------------------------------------------------- what a learner sees, at every width

# A desktop, a phone (390 CSS px, 3 device pixels per CSS px) and a 1280 x 900 window at 200 %
# zoom (640 x 450 CSS px, 2 device pixels per CSS px).
SCREENS = (("1280 px", 1280, 900, 1), ("390 px", 390, 844, 3), ("200 % zoom", 640, 450, 2))

PICTURES_FIT = SNIPPETS["PICTURES_FIT"]

OVERLAPS = SNIPPETS["OVERLAPS"]


def course_roots(opened):
    """Every course widget the notebook shows (labs, questions, checks, the progress view...)."""
    return opened.page.locator(f"{PANEL} .course-widget").all()


def screen(opened, width, height, ratio):
    """Show the notebook in a window of ``width`` x ``height`` CSS px of ``ratio`` device pixels
    each, JupyterLab's side panels closed on a narrow one; wait until every lab's picture is
    drawn for the width it is shown at and the kernel has answered."""
    page = opened.page
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": ratio,
                                                     "mobile": False})
    page.wait_for_function(f"() => window.innerWidth === {width} && window.devicePixelRatio === {ratio}")
    if width < 800:
        page.evaluate(f"{APP}.shell.collapseLeft(); {APP}.shell.collapseRight();")
    else:
        page.evaluate(f"{APP}.shell.expandLeft();")
    page.wait_for_function(f"() => document.querySelector('{PANEL}').getBoundingClientRect().right <= window.innerWidth + 1")
    opened.painted()
    page.wait_for_function(PICTURES_FIT, arg=ratio, timeout=90_000)
    opened.settle()
    page.wait_for_function(PICTURES_FIT, arg=ratio)
    return cdp


# Run in the notebook's kernel: {lab: the layout of each of its figures, as drawn now}
# (tests/figure_layout.py's layout_of, sent as its source).
def _layouts_probe() -> str:
    import inspect

    import figure_layout

    return inspect.getsource(figure_layout.layout_of) + '''
def _course_layouts():
    import gc, json
    from ipywidgets.widgets.widget import _instances
    from engine.kit.figure_view import FigureView
    views = {v.image.model_id: v for v in gc.get_objects()
             if isinstance(v, FigureView) and v.image.comm is not None}
    found = {}
    for root in list(_instances.values()):
        classes = getattr(root, "_dom_classes", ())
        if "course-lab" not in classes:
            continue
        name = next(c[len("course-lab-"):] for c in classes if c.startswith("course-lab-"))
        todo = [root]
        while todo:
            widget = todo.pop()
            todo += list(getattr(widget, "children", ()) or ())
            for output in getattr(widget, "outputs", ()) or ():
                shown = (output.get("data") or {}).get("application/vnd.jupyter.widget-view+json") \\
                    if isinstance(output, dict) else None
                if shown and shown.get("model_id") in views:
                    found.setdefault(name, []).append(layout_of(views[shown["model_id"]]))
    return json.dumps(found)
'''


def test_what_a_learner_sees_at_every_width_is_whole_and_readable(opened):
    """On a desktop, a phone and at 200 % zoom, in every course widget of the notebook: no
    choice's text leaves its label or runs over another choice, no two controls, texts or
    pictures are drawn over each other, no control or label is cut off; in every lab's plot, as
    its kernel drew it for that width, every axes is at least 80 CSS px high and no flatter than
    1:4, no two texts overlap and none is cut at the picture's edge (tests/figure_layout.py).
    The labs the notebook calls (the course's inventory) are all checked."""
    from engine.core import inventory
    from figure_layout import problems

    page = opened.page
    expected = {lab.rsplit(".", 1)[-1].removesuffix("_lab") for lab in inventory.notebook(opened.stem).labs}
    probe = _layouts_probe()
    found = []
    try:
        for label, width, height, ratio in SCREENS:
            screen(opened, width, height, ratio)
            for root in course_roots(opened):
                found += [f"{label}: {p}" for p in root.evaluate(OVERLAPS)]
            found += [f"{label}: {p}" for p in controls_that_do_not_fit(opened)]
            layouts = kernel_value(page, probe, "_course_layouts()")
            shown = page.evaluate(SNIPPETS["LAB_WIDTHS"])
            assert len(shown) == len(expected) >= 1, (sorted(shown), sorted(expected))
            assert set(layouts) == {name for name, widths in shown.items() if widths}, (sorted(layouts), shown)
            for name, figures in layouts.items():
                assert [round(f["width"]) for f in figures] == [round(w) for w in shown[name]], \
                    f"{label}, {name}: the kernel drew it {[f['width'] for f in figures]} px wide, shown {shown[name]}"
                for figure in figures:
                    found += problems(figure, f"{label}, {name}: ")
    finally:
        page.context.new_cdp_session(page).send("Emulation.clearDeviceMetricsOverride")
        opened.viewport(WIDE)
    assert found == []


