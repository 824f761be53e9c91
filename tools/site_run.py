"""Run the built course in Chromium as learners get it: every notebook of a site, in the site's
own JupyterLab (JupyterLite) with its own Pyodide kernel, its labs driven and its checks read.

    python -m tools.site_run SITE_DIR [--solved] [--summary FILE] [--chromium PATH]

SITE_DIR is a site built by `python -m tools.site build`. The run serves it on 127.0.0.1 and, for
each notebook the site ships (`files/`), as learners do: opens it in the site's JupyterLab, waits
for the kernel, runs all its cells (JupyterLab's Run All, which stops at a cell that fails), then
drives one control of every lab (a slider's arrow key, a menu's next choice, a button) and reads
every check's verdict.
With --solved it does the same again for the solved copy of every notebook (its blanks filled in
by `engine.core.notebooks.solve_notebook`, as `./course solve` does), written by the run into
a folder `solved/` of the browser's own drive, in a fresh browser profile.

It fails on any error output (a traceback or anything written to stderr), any cell that does not
finish within its budget (--cell-seconds), any lab that does not answer its control within
--lab-seconds, a lab missing from the cell that calls it, a check that is not "not attempted"
in a shipped copy or not passed in a solved one, and a kernel that does not start within
--kernel-seconds. NumPy missing from the site's Pyodide (a site built from Pyodide's core only)
stops the run at the first cell that imports it, with one sentence saying so.

Before Chromium starts, every module the notebooks and the course wheel import is checked against
what the site preloads (tools/preload.py).

It records each cell's time (from the kernel's "busy" to its "idle" for that cell, as the page
sees them), each lab's first answer (from the key press or click to the first change of the lab's
plot or text) and each check's verdict, prints them, and with --summary
appends them as Markdown tables to FILE (in a GitHub workflow: $GITHUB_STEP_SUMMARY). The exit
status is 0 when every notebook passed, 1 otherwise.

The run reads JupyterLab through its handle in the page (`window.jupyterapp`) to run cells and
read their outputs as a learner's clicks do: the site's `jupyter-lite.json` sets
`exposeAppInBrowser` (the course's two-tab guard needs it too), and the run sets it again in what
it is served of that file, so a site built before works the same; it changes nothing else. The same functions run the notebooks of a
local JupyterLab with a CPython kernel (:class:`JupyterLabServer`), as the browser tests do.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import urllib.parse
from pathlib import Path

from tools.browser import APP, CHROMIUM_ARGS, find_chromium, page_snippets, settle
from tools.site_plan import (CELL_SECONDS, KERNEL_SECONDS, LAB_SECONDS, CellTime, CourseRun, LabAnswer,
                             NotebookRun, Plan, Stop, Verdict, default_budgets, plan_of, site_notebooks,
                             solved_copy)
from tools.site_report import one_line, kernel_sentence, notebook_line

SOLVED_FOLDER = "solved"
SHIPPED, SOLVED = "shipped", "solved"
EXPECTED_VERDICT = {SHIPPED: "not attempted", SOLVED: "passed"}
VERDICTS = {"course-pass": "passed", "course-fail": "failed", "course-blank": "not attempted"}
NUMPY_MISSING = ("NumPy is not in this site's Pyodide distribution: the kernel started, but no "
                 "notebook of this course can run on this site; build it with the full distribution "
                 "(python -m tools.site build --pyodide pyodide-314.0.6.tar.bz2) or with Pyodide from "
                 "the CDN (no --pyodide).")

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CURRENT = f"{APP}.shell.currentWidget"
KERNEL = f"{CURRENT}.sessionContext.session.kernel"

# What the kernel reports about itself, before any cell runs (plain Python: runs without NumPy,
# and reads NumPy's version without importing it, so the setup cell's time stays its own).
PROBE = """\
import json as _j, platform as _p, struct as _s, sys as _y
try:
    from importlib.metadata import version as _v
    _n = _v("numpy")
except Exception:
    _n = None
print(_j.dumps({"python": _p.python_version(), "platform": _y.platform, "machine": _p.machine(),
                "pointer_bits": _s.calcsize("P") * 8, "numpy": _n}))
del _j, _p, _s, _y, _n
"""


# ---------------------------------------------------------------- where notebooks open

class JupyterLite:
    """A built site served at ``base``: its own JupyterLab and Pyodide kernel."""

    name = "JupyterLite (the site's Pyodide kernel)"

    def __init__(self, base: str):
        self.base = base if base.endswith("/") else base + "/"

    def prepare(self, context) -> None:
        """Expose JupyterLab to the page (``exposeAppInBrowser``); nothing else is changed."""
        def expose(route):
            try:
                response = route.fetch()
                config = json.loads(response.text())
                config.setdefault("jupyter-config-data", {})["exposeAppInBrowser"] = True
                route.fulfill(response=response, body=json.dumps(config))
            except Exception:  # noqa: BLE001 - the page went away while its config was on the way
                pass

        context.route("**/jupyter-lite.json*", expose)

    def url(self, path: str | None) -> str:
        query = f"?path={urllib.parse.quote(path)}" if path else ""
        return f"{self.base}lab/index.html{query}"


class JupyterLabServer:
    """A local JupyterLab server (tools.browser.local_jupyterlab: CPython kernel, app exposed)."""

    name = "JupyterLab (a local CPython kernel)"

    def __init__(self, base: str):
        self.base = base if base.endswith("/") else base + "/"

    def prepare(self, context) -> None:
        pass

    def url(self, path: str | None) -> str:
        return f"{self.base}lab/tree/{urllib.parse.quote(path)}?reset" if path else f"{self.base}lab?reset"


# ---------------------------------------------------------------- in the page

# The JavaScript the run evaluates in the page: tools/site_run.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=APP, CURRENT=CURRENT, KERNEL=KERNEL, PANEL=PANEL)
RUN_ALL = SNIPPETS["RUN_ALL"]
PROBE_KERNEL = SNIPPETS["PROBE_KERNEL"]
LAB_STATE = SNIPPETS["LAB_STATE"]
WATCH_LAB = SNIPPETS["WATCH_LAB"]
LAB_NAME = SNIPPETS["LAB_NAME"]
FEEDBACK = SNIPPETS["FEEDBACK"]
STDERR = SNIPPETS["STDERR"]
OPENED = SNIPPETS["OPENED"]
ALONE = SNIPPETS["ALONE"]


def _error_of(outputs: list[dict]) -> tuple[str | None, bool]:
    """(the error a cell showed, in one line, or None; True when it is NumPy missing)."""
    for out in outputs:
        if out["type"] == "error":
            name = re.sub(r"^<class '(?:builtins\.)?(.*)'>$", r"\1", out["ename"] or "")  # Pyodide's kernel
            missing = name == "ModuleNotFoundError" and "'numpy'" in (out["evalue"] or "")   # sends the repr
            return one_line(f"{name}: {out['evalue']}"), missing
    for out in outputs:
        if out["type"] == "stream" and out["name"] == "stderr":
            return one_line(f"stderr: {out['text']}"), False
    return None, False


def open_notebook(page, target, path: str, seconds: float = KERNEL_SECONDS) -> float:
    """Open the notebook at ``path`` alone and wait for its kernel to be idle; return how long
    that took (s). Raise Stop when the kernel does not start in time."""
    started = time.perf_counter()
    page.goto(target.url(path))
    try:
        page.wait_for_function(OPENED, arg=path, polling=100, timeout=seconds * 1000)
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError, or a crashed page
        raise Stop(f"The kernel of {path} did not start within {seconds:g} s ({one_line(exc, 120)}): "
                   "the site's Python could not be loaded in the browser.") from None
    ready = time.perf_counter() - started
    if not page.evaluate(ALONE, path):
        raise Stop(f"{path} opened, but JupyterLab did not make it the current document.")
    return ready


def probe_kernel(page) -> dict:
    """The kernel's own report: Python version, platform, pointer size and NumPy's version."""
    text = page.evaluate(PROBE_KERNEL, PROBE)
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": one_line(text)}


def run_cells(page, plan: Plan, run: NotebookRun, seconds: float = CELL_SECONDS) -> None:
    """Run all the code cells, as the learner's Run All does (JupyterLab stops at a cell that
    fails), timing each. Raise Stop when NumPy is missing; stop the notebook at a cell that does
    not finish within its budget."""
    done = page.evaluate(RUN_ALL, [list(plan.code), seconds * 1000])
    for cell in done["cells"]:
        index = cell["index"]
        line = one_line(plan.first_lines[index], 80)
        if index == done["late"]:
            run.cells.append(CellTime(index + 1, plan.first_lines[index], None, f"did not finish within {seconds:g} s"))
            run.fail(f"cell {index + 1} ({line}) did not finish within its budget of {seconds:g} s; "
                     "the cells after it were not run.")
            return
        if cell["status"] not in ("ok", "error"):   # aborted: after a failed cell Run All goes no further
            continue
        error, numpy_missing = _error_of(cell["outputs"])
        timed = None if cell["seconds"] is None else round(cell["seconds"], 3)
        run.cells.append(CellTime(index + 1, plan.first_lines[index], timed, error))
        if numpy_missing:
            run.fail(f"cell {index + 1} ({line}): {error}")
            raise Stop(NUMPY_MISSING)
        if error:
            run.fail(f"cell {index + 1} ({line}) shows an error: {error}")
    if len(run.cells) < len(plan.code):
        ran = {c.cell - 1 for c in run.cells}
        first = next(i for i in plan.code if i not in ran)
        run.fail(f"cell {first + 1} and the {len(plan.code) - len(ran) - 1} code cells after it were not run "
                 "(Run All stops at a cell that fails).")


def _quoted(text: str) -> str:
    return "'" + " ".join(str(text).split()) + "'"


def _drive(page, lab) -> str | None:
    """Act on one control of the lab, as a learner would; return what was done (None: the lab
    has no control the run can drive)."""
    handles = lab.locator(".widget-slider .noUi-handle")
    if handles.count():
        label = lab.locator(".widget-slider").first.locator(".widget-label").first
        name = label.inner_text().strip() if label.count() else ""
        handle = handles.first
        handle.focus()
        before = handle.get_attribute("aria-valuenow")
        page.keyboard.press("ArrowRight")
        key = "right"
        if handle.get_attribute("aria-valuenow") == before:     # at its right end: go left
            lab.evaluate("lab => { lab.__courseInput = null; }")   # time the press that moved it
            page.keyboard.press("ArrowLeft")
            key = "left"
        return f"slider {_quoted(name)} ({key} arrow key)".replace(" ''", "")
    selects = lab.locator("select:not([disabled])")
    if selects.count():
        select = selects.first
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.selectedIndex")
        choice = (current + 1) % len(options)
        select.select_option(index=choice)
        return f"menu, choice {_quoted(options[choice])}"
    radios = lab.locator("input[type=radio]:not(:checked):not([disabled])")
    if radios.count():
        radios.first.check()
        return "radio choice"
    buttons = lab.locator("button:not([disabled]):not(.mod-active)")
    if buttons.count():
        text = buttons.first.inner_text().strip()
        buttons.first.click()
        return f"button {_quoted(text)}"
    boxes = lab.locator("input[type=checkbox]:not([disabled])")
    if boxes.count():
        boxes.first.click()
        return "check box"
    return None


def drive_labs(page, plan: Plan, run: NotebookRun, seconds: float = LAB_SECONDS,
               screenshots: Path | None = None, idle_seconds: float = CELL_SECONDS) -> None:
    """Drive one control of every lab the notebook's cells call and time the lab's first answer;
    then wait (up to ``idle_seconds``) for the kernel to finish what the control started."""
    found = {lab for called in plan.labs.values() for lab in called}
    for lab in plan.inventory_labs:
        if lab not in found:
            run.fail(f"no cell calls the lab {lab} by its name, so the run cannot find it (the course's "
                     "inventory lists it).")
    for index, called in plan.labs.items():
        cell = page.locator(f"{PANEL} [data-course-run-cell='{index}']")
        labs = cell.locator(".course-lab")
        shown = labs.count()
        if shown < len(called):
            run.fail(f"cell {index + 1} calls {', '.join(c.rsplit('.', 1)[-1] for c in called)}, but "
                     f"shows {shown} lab(s): a lab did not appear (its widgets were not displayed).")
        for number in range(shown):
            lab = labs.nth(number)
            name = lab.evaluate(LAB_NAME)
            try:        # the lab drawn in full (its cell's answer in, its pictures loaded)
                settle(page, idle_seconds)
            except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError
                run.fail(f"cell {index + 1}: the page was still busy {idle_seconds:g} s after the lab "
                         f"{name!r} appeared ({one_line(exc, 120)}).")
            lab.evaluate(WATCH_LAB)
            control = _drive(page, lab)
            if control is None:
                run.fail(f"cell {index + 1}: the lab {name!r} has no control to drive.")
                continue
            try:
                page.wait_for_function("lab => lab.__courseAnswer !== null", arg=lab.element_handle(),
                                       polling=20, timeout=seconds * 1000)
                answer = round(lab.evaluate("lab => lab.__courseAnswer") / 1000, 3)
            except Exception:  # noqa: BLE001 - Playwright's TimeoutError
                answer = None
                run.fail(f"cell {index + 1}: the lab {name!r} did not answer its {control} within "
                         f"{seconds:g} s.")
            run.labs.append(LabAnswer(index + 1, name, control, answer))
            wait_idle(page, idle_seconds)
            if screenshots is not None:
                stem = Path(plan.path).stem
                lab.screenshot(path=str(Path(screenshots) / f"run-{run.form}-{stem}-{name}.png"))


def wait_idle(page, seconds: float) -> None:
    """Wait until the kernel has answered every message the page sent it and the page shows the
    answer (a lab's answer computed to its end, its picture loaded): tools.browser.settle."""
    settle(page, seconds)


def read_checks(page, plan: Plan, run: NotebookRun) -> None:
    """Read every check cell's verdict; it must be the one the copy expects."""
    expected = EXPECTED_VERDICT[run.form]
    for exercise in plan.inventory_exercises:
        if exercise not in plan.checks.values():
            run.fail(f"the exercise {exercise!r} has no check cell.")
    for index, exercise in plan.checks.items():
        found = page.locator(f"{PANEL} [data-course-run-cell='{index}']").evaluate(FEEDBACK)
        mine = [f for f in found if f[0] == exercise]
        if not mine:
            run.checks.append(Verdict(index + 1, exercise, "no feedback"))
            run.fail(f"cell {index + 1}: the check of {exercise!r} showed no feedback.")
            continue
        classes, text = mine[0][1].split(), mine[0][2]
        verdict = next((VERDICTS[c] for c in classes if c in VERDICTS), "unknown")
        run.checks.append(Verdict(index + 1, exercise, verdict))
        if verdict != expected:
            run.fail(f"cell {index + 1}: the check of {exercise!r} says {verdict!r} where a "
                     f"{run.form} copy should say {expected!r}: {one_line(text)}")


def read_stderr(page, run: NotebookRun) -> None:
    """Errors shown after the cells ran (in a lab's own output, after its control was driven)."""
    flagged = {c.cell for c in run.cells if c.error}
    for index, text in page.evaluate(STDERR):
        if index + 1 not in flagged:
            flagged.add(index + 1)
            where = f"cell {index + 1}" if index >= 0 else "an output outside the cells"
            run.fail(f"{where} shows an error after it ran: {one_line(text)}")


def run_notebook(page, target, plan: Plan, form: str = SHIPPED, budgets: dict | None = None,
                 screenshots: Path | None = None, course: CourseRun | None = None) -> NotebookRun:
    """Open one notebook, run every code cell, drive every lab, read every check.

    Raise Stop when the run cannot go on (no kernel, no NumPy); problems of the notebook itself
    are listed in the result's ``problems``.
    """
    budgets = {**default_budgets(), **(budgets or {})}
    run = NotebookRun(plan.path, form)
    if course is not None:
        course.notebooks.append(run)
    try:
        run.kernel_seconds = round(open_notebook(page, target, plan.path, budgets["kernel"]), 3)
        if course is not None and course.kernel is None:
            course.kernel = probe_kernel(page)
        run_cells(page, plan, run, budgets["cell"])
        if not any(c.seconds is None for c in run.cells):
            drive_labs(page, plan, run, budgets["lab"], screenshots, budgets["cell"])
            read_checks(page, plan, run)
            read_stderr(page, run)
    except Stop:
        run.stopped = True
        raise
    finally:
        close(page)
    return run


def close(page) -> None:
    """Shut every open notebook's kernel down and close it, so the next notebook opens alone."""
    try:
        page.evaluate(SNIPPETS["CLOSE_ALL"])
    except Exception:  # noqa: BLE001 - a page that is gone has nothing left to close
        pass


def add_solved_copies(page, target, copies: dict[str, dict]) -> dict[str, str]:
    """Write the solved copies into the folder SOLVED_FOLDER of the browser's drive (or the
    server's folder); return {shipped path: path of its solved copy}."""
    page.goto(target.url(None))
    page.wait_for_function(f"() => {APP} && {APP}.serviceManager", polling=100, timeout=60_000)
    placed = {path: f"{SOLVED_FOLDER}/{path}" for path in copies}
    page.evaluate(SNIPPETS["SAVE_NOTEBOOKS"], [SOLVED_FOLDER, [[placed[p], nb] for p, nb in copies.items()]])
    return placed


def run_course(browser, target, notebooks: dict[str, dict], forms=(SHIPPED,),
               budgets: dict | None = None, screenshots: Path | None = None, log=None) -> CourseRun:
    """Run every notebook at ``target`` in each form (SHIPPED, SOLVED: the solved copies), each
    form in a fresh browser profile; return what was recorded."""
    budgets = {**default_budgets(), **(budgets or {})}
    course = CourseRun(target.name, budgets=budgets)
    try:
        for form in forms:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            try:
                target.prepare(context)
                page = context.new_page()
                page.set_default_timeout(60_000)
                copies, paths = notebooks, {p: p for p in notebooks}
                if form == SOLVED:
                    copies = {p: solved_copy(nb) for p, nb in notebooks.items()}
                    paths = add_solved_copies(page, target, copies)
                for path, notebook in copies.items():
                    plan = plan_of(notebook, paths[path])
                    run = run_notebook(page, target, plan, form, budgets, screenshots, course)
                    if log:
                        log(notebook_line(run))
            finally:
                context.close()
    except Stop as stop:
        course.stopped = str(stop)
    return course


# ---------------------------------------------------------------- serving and the command line

def serve(site: Path):
    """The site served on 127.0.0.1 (a free port) as `./course serve` serves it: (server, URL)."""
    from tools.serve import Server

    server = Server(site, port=0).start()
    return server, f"http://127.0.0.1:{server.port}/"


def parser():
    p = argparse.ArgumentParser(prog="python -m tools.site_run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("site", metavar="SITE_DIR", help="a site built by python -m tools.site build")
    p.add_argument("--solved", action="store_true", help="also run the solved copy of every notebook")
    p.add_argument("--summary", metavar="FILE", help="append the Markdown report to FILE "
                   "(in a GitHub workflow: $GITHUB_STEP_SUMMARY)")
    p.add_argument("--chromium", metavar="PATH", help="the Chromium or Chrome to drive (default: "
                   "Debian's /usr/bin/chromium, else google-chrome or chromium on the PATH)")
    p.add_argument("--notebook", action="append", metavar="PATH",
                   help="run only this notebook (its path in the site; may be repeated)")
    p.add_argument("--cell-seconds", type=float, default=CELL_SECONDS, help="budget of one cell")
    p.add_argument("--lab-seconds", type=float, default=LAB_SECONDS, help="budget of a lab's first answer")
    p.add_argument("--kernel-seconds", type=float, default=KERNEL_SECONDS, help="budget of a kernel's start")
    p.add_argument("--screenshots", metavar="DIR", help="save a picture of every lab after its answer")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    site = Path(args.site)
    if not (site / "jupyter-lite.json").is_file() or not (site / "files").is_dir():
        print(f"{site} holds no built site (no jupyter-lite.json and files/): build one first with "
              "python -m tools.site build --output DIR.", file=sys.stderr)
        return 2
    notebooks = site_notebooks(site)
    if args.notebook:
        unknown = sorted(set(args.notebook) - set(notebooks))
        if unknown:
            print(f"The site has no notebook {unknown[0]!r}; it has {', '.join(notebooks)}.", file=sys.stderr)
            return 2
        notebooks = {p: nb for p, nb in notebooks.items() if p in args.notebook}
    from tools import preload

    missing = preload.site_problems(site)
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    chromium = args.chromium or find_chromium()
    if chromium is None:
        print("No Chromium or Chrome found: install Debian's chromium (apt-get install chromium) or "
              "give one with --chromium PATH.", file=sys.stderr)
        return 2
    if args.screenshots:
        Path(args.screenshots).mkdir(parents=True, exist_ok=True)
    budgets = {"kernel": args.kernel_seconds, "cell": args.cell_seconds, "lab": args.lab_seconds}
    from playwright.sync_api import sync_playwright

    server, base = serve(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                forms = (SHIPPED, SOLVED) if args.solved else (SHIPPED,)
                course = run_course(browser, JupyterLite(base), notebooks, forms, budgets,
                                    Path(args.screenshots) if args.screenshots else None,
                                    log=lambda line: print(line, flush=True))
                course.target += f", {Path(chromium).name} {browser.version}"
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(kernel_sentence(course.kernel))
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as out:
            out.write(course.markdown())
    if course.passed:
        print(f"Passed: {len(course.notebooks)} notebook runs in the site's own kernel, no problem.")
        return 0
    print("\n".join(course.problems), file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
