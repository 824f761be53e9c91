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
import copy
import json
import re
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from tools.browser import APP, CHROMIUM_ARGS, find_chromium, settle

CELL_SECONDS = 60.0       # one code cell, from the kernel starting it to finishing it
KERNEL_SECONDS = 180.0    # from opening a notebook to an idle kernel (Pyodide and its packages loaded)
LAB_SECONDS = 30.0        # from a lab's control to the lab's first change
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


# ---------------------------------------------------------------- what a notebook holds

@dataclass(frozen=True)
class Plan:
    """What one notebook holds: its labs and exercises as the course's inventory reads them
    (engine/core/inventory.py), and the cells that run, call each lab and check each exercise.

    Cells are numbered from 1 over all cells, markdown included, in the order JupyterLab shows.
    """
    path: str                          # as the site's JupyterLab names it: "00_start_here.ipynb"
    code: tuple[int, ...]              # indices (from 0) of the code cells, in order
    first_lines: dict[int, str]        # index -> the cell's first line of code
    labs: dict[int, tuple[str, ...]]   # index -> the labs the cell calls ("labs.start.temperature_lab")
    checks: dict[int, str]             # index -> the exercise id of a check cell
    inventory_labs: tuple[str, ...] = ()
    inventory_exercises: tuple[str, ...] = ()


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _calls(source: str, functions: dict[str, str]) -> tuple[str, ...]:
    """Of ``functions`` (name -> dotted name), those the code calls, in order."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    calls = [functions[n.func.id] for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in functions]
    return tuple(dict.fromkeys(calls))


def plan_of(notebook: dict, path: str) -> Plan:
    """The plan of one notebook (parsed JSON) that the site's JupyterLab opens at ``path``."""
    from engine.core import inventory
    from engine.core.notebooks import _CHECK_CALL, exercise_id

    entry = inventory.read_notebook(notebook, path)
    functions = {lab.rsplit(".", 1)[1]: lab for lab in entry.labs}
    cells = notebook.get("cells", [])
    code, first_lines, labs, checks = [], {}, {}, {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        code.append(index)
        first_lines[index] = next((line.strip() for line in source.splitlines() if line.strip()), "")
        if called := _calls(source, functions):
            labs[index] = called
        if "check" in (cell.get("metadata", {}).get("tags") or []):
            named = _CHECK_CALL.findall(source)
            before = exercise_id(cells[index - 1]) if index else None
            if named or before:
                checks[index] = named[0] if named else before
    return Plan(path, tuple(code), first_lines, labs, checks, entry.labs, entry.exercises)


def site_notebooks(site: Path) -> dict[str, dict]:
    """{path in the site's JupyterLab: parsed notebook} for every notebook the site ships, in the
    course's order (its inventory of the site's files)."""
    from engine.core import inventory

    files = Path(site) / "files"
    return {nb.path: json.loads((files / nb.path).read_text(encoding="utf-8")) for nb in inventory.scan(files)}


def solved_copy(notebook: dict) -> dict:
    """The notebook with every exercise's blanks filled with its solution (``./course solve``)."""
    from engine.core.notebooks import solve_notebook

    return solve_notebook(copy.deepcopy(notebook))[0]


# ---------------------------------------------------------------- what a run records

@dataclass
class CellTime:
    cell: int                    # numbered from 1, markdown cells included
    line: str                    # its first line of code
    seconds: float | None        # None: it did not finish within its budget
    error: str | None = None     # the error output or stderr it showed, in one line


@dataclass
class LabAnswer:
    cell: int
    name: str                    # the lab's class name: "temperature" for course-lab-temperature
    control: str                 # what was driven: "slider 'temperature' (arrow key)"
    seconds: float | None        # from the key press or click to the lab's first change


@dataclass
class Verdict:
    cell: int
    exercise: str
    verdict: str                 # passed, failed, not attempted, or "no feedback"


@dataclass
class NotebookRun:
    path: str
    form: str                    # "shipped" or "solved"
    kernel_seconds: float | None = None
    cells: list[CellTime] = field(default_factory=list)
    labs: list[LabAnswer] = field(default_factory=list)
    checks: list[Verdict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stopped: bool = False        # the whole run stopped here (no kernel, no NumPy)

    @property
    def passed(self) -> bool:
        return not self.problems and not self.stopped

    @property
    def result(self) -> str:
        if self.stopped:
            return "the run stopped here"
        return "passed" if self.passed else f"{len(self.problems)} problem(s)"

    def fail(self, problem: str) -> None:
        self.problems.append(f"{self.path} ({self.form}): {problem}")


def default_budgets() -> dict:
    return {"kernel": KERNEL_SECONDS, "cell": CELL_SECONDS, "lab": LAB_SECONDS}


@dataclass
class CourseRun:
    target: str                            # "JupyterLite (the site's Pyodide kernel)", ...
    kernel: dict | None = None             # the kernel's own report (PROBE)
    budgets: dict = field(default_factory=default_budgets)
    notebooks: list[NotebookRun] = field(default_factory=list)
    stopped: str | None = None             # why the run stopped before the end

    @property
    def problems(self) -> list[str]:
        found = [p for run in self.notebooks for p in run.problems]
        return found + ([self.stopped] if self.stopped else [])

    @property
    def passed(self) -> bool:
        return bool(self.notebooks) and not self.problems

    def markdown(self) -> str:
        return summary_markdown(self)


class Stop(Exception):
    """The run cannot go on (no kernel, or no NumPy): the message says why, in one sentence."""


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

# Run All, as the learner's menu does, timing each code cell in the page from the kernel's "busy"
# to its "idle" for that cell's request (queued cells do not wait on the page in between); stop
# waiting when one cell has been running for longer than `ms`.
RUN_ALL = f"""async ([code, ms]) => {{
    const panel = {CURRENT}, nb = panel.content, kernel = panel.sessionContext.session.kernel;
    const cells = nb.widgets, sent = [], busy = {{}}, idle = {{}}, replies = {{}};
    code.forEach(i => cells[i].node.setAttribute('data-course-run-cell', String(i)));
    let next = 0;
    const listen = (_, {{msg, direction}}) => {{
        const type = msg.header.msg_type, parent = msg.parent_header && msg.parent_header.msg_id;
        if (direction === 'send' && type === 'execute_request') {{
            while (next < code.length && cells[code[next]].model.sharedModel.getSource() !== msg.content.code) next++;
            if (next < code.length) sent.push([msg.header.msg_id, code[next++]]);
        }} else if (direction === 'recv' && parent) {{
            const now = performance.now(), state = msg.content.execution_state;
            if (type === 'status' && state === 'busy' && !(parent in busy)) busy[parent] = now;
            if (type === 'status' && state === 'idle' && !(parent in idle)) idle[parent] = now;
            if (type === 'execute_reply') replies[parent] = msg.content.status;
        }}
    }};
    kernel.anyMessage.connect(listen);
    let late = null, timer = null;
    const all = {APP}.commands.execute('notebook:run-all-cells').then(() => true, () => true);
    const watch = new Promise(resolve => {{
        timer = setInterval(() => {{
            const now = performance.now();
            for (const [id, index] of sent)
                if (id in busy && !(id in idle) && now - busy[id] > ms) {{ late = index; resolve(false); }}
        }}, 100);
    }});
    await Promise.race([all, watch]);
    clearInterval(timer);
    kernel.anyMessage.disconnect(listen);
    return {{late, cells: sent.map(([id, index]) => ({{
        index, status: replies[id] || null,
        seconds: id in busy && id in idle ? (idle[id] - busy[id]) / 1000 : null,
        outputs: cells[index].model.outputs.toJSON().map(o => ({{
            type: o.output_type, name: o.name || null, ename: o.ename || null, evalue: o.evalue || null,
            text: o.output_type === 'stream' ? [].concat(o.text).join('') : null}}))}}))}};
}}"""

PROBE_KERNEL = f"""async code => {{
    const future = {KERNEL}.requestExecute({{code, silent: false, store_history: false}});
    let text = '';
    future.onIOPub = msg => {{
        if (msg.header.msg_type === 'stream') text += msg.content.text;
        if (msg.header.msg_type === 'error') text += msg.content.ename + ': ' + msg.content.evalue;
    }};
    await future.done;
    return text;
}}"""

# What a lab shows in answer to its controls: its pictures and its text, the controls' own
# labels and readouts left out (they change at once, before the lab has answered).
LAB_STATE = """lab => {
    const copy = lab.cloneNode(true);
    copy.querySelectorAll('.widget-slider, .widget-readout, select, input, button, label')
        .forEach(n => n.remove());
    return [...lab.querySelectorAll('img')].map(i => i.src).join('|') + copy.textContent;
}"""

# Note the lab's state, then the time of the first input event (key press, click, change) and of
# the first change of the lab's state after it.
WATCH_LAB = f"""lab => {{
    const state = {LAB_STATE};
    const before = state(lab);
    lab.__courseInput = null;
    lab.__courseAnswer = null;
    const mark = () => {{ if (lab.__courseInput === null) lab.__courseInput = performance.now(); }};
    for (const type of ['keydown', 'pointerdown', 'change', 'input']) lab.addEventListener(type, mark, true);
    const observer = new MutationObserver(() => {{
        if (lab.__courseInput !== null && lab.__courseAnswer === null && state(lab) !== before) {{
            lab.__courseAnswer = performance.now() - lab.__courseInput;
            observer.disconnect();
        }}
    }});
    observer.observe(lab, {{subtree: true, childList: true, attributes: true, characterData: true}});
}}"""

LAB_NAME = """lab => ([...lab.classList].find(c => c.startsWith('course-lab-')) || 'course-lab-?').slice(11)"""

FEEDBACK = """cell => [...cell.querySelectorAll('.course-feedback')].map(f =>
    [f.getAttribute('data-exercise'), [...f.classList].join(' '), f.innerText.slice(0, 300)])"""

STDERR = f"""() => [...document.querySelectorAll(
        "{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")]
    .map(o => [Number((o.closest('[data-course-run-cell]') || {{getAttribute: () => -1}})
                      .getAttribute('data-course-run-cell')), o.innerText.slice(0, 300)])"""

# The notebook at `path` is open, its kernel idle.
OPENED = f"""path => {{
    const app = {APP};
    if (!app || !app.shell) return false;
    const panel = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return Boolean(kernel) && kernel.status === 'idle';
}}"""
# Close every other document (JupyterLite may restore the last one opened), make it the current one.
ALONE = f"""async path => {{
    const app = {APP};
    for (const w of [...app.shell.widgets('main')]) {{
        if (w.context && w.context.path === path) {{ app.shell.activateById(w.id); continue; }}
        try {{ if (w.sessionContext) await w.sessionContext.shutdown(); }} catch (e) {{}}
        w.dispose();
    }}
    return {CURRENT}.context.path === path;
}}"""


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _error_of(outputs: list[dict]) -> tuple[str | None, bool]:
    """(the error a cell showed, in one line, or None; True when it is NumPy missing)."""
    for out in outputs:
        if out["type"] == "error":
            name = re.sub(r"^<class '(?:builtins\.)?(.*)'>$", r"\1", out["ename"] or "")  # Pyodide's kernel
            missing = name == "ModuleNotFoundError" and "'numpy'" in (out["evalue"] or "")   # sends the repr
            return _one_line(f"{name}: {out['evalue']}"), missing
    for out in outputs:
        if out["type"] == "stream" and out["name"] == "stderr":
            return _one_line(f"stderr: {out['text']}"), False
    return None, False


def open_notebook(page, target, path: str, seconds: float = KERNEL_SECONDS) -> float:
    """Open the notebook at ``path`` alone and wait for its kernel to be idle; return how long
    that took (s). Raise Stop when the kernel does not start in time."""
    started = time.perf_counter()
    page.goto(target.url(path))
    try:
        page.wait_for_function(OPENED, arg=path, polling=100, timeout=seconds * 1000)
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError, or a crashed page
        raise Stop(f"The kernel of {path} did not start within {seconds:g} s ({_one_line(exc, 120)}): "
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
        return {"error": _one_line(text)}


def run_cells(page, plan: Plan, run: NotebookRun, seconds: float = CELL_SECONDS) -> None:
    """Run all the code cells, as the learner's Run All does (JupyterLab stops at a cell that
    fails), timing each. Raise Stop when NumPy is missing; stop the notebook at a cell that does
    not finish within its budget."""
    done = page.evaluate(RUN_ALL, [list(plan.code), seconds * 1000])
    for cell in done["cells"]:
        index = cell["index"]
        line = _one_line(plan.first_lines[index], 80)
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
                         f"{name!r} appeared ({_one_line(exc, 120)}).")
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
                     f"{run.form} copy should say {expected!r}: {_one_line(text)}")


def read_stderr(page, run: NotebookRun) -> None:
    """Errors shown after the cells ran (in a lab's own output, after its control was driven)."""
    flagged = {c.cell for c in run.cells if c.error}
    for index, text in page.evaluate(STDERR):
        if index + 1 not in flagged:
            flagged.add(index + 1)
            where = f"cell {index + 1}" if index >= 0 else "an output outside the cells"
            run.fail(f"{where} shows an error after it ran: {_one_line(text)}")


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
        page.evaluate(f"""async () => {{
            for (const w of [...{APP}.shell.widgets('main')]) {{
                try {{ if (w.sessionContext) await w.sessionContext.shutdown(); }} catch (e) {{}}
                w.dispose();
            }}
        }}""")
    except Exception:  # noqa: BLE001 - a page that is gone has nothing left to close
        pass


def add_solved_copies(page, target, copies: dict[str, dict]) -> dict[str, str]:
    """Write the solved copies into the folder SOLVED_FOLDER of the browser's drive (or the
    server's folder); return {shipped path: path of its solved copy}."""
    page.goto(target.url(None))
    page.wait_for_function(f"() => {APP} && {APP}.serviceManager", polling=100, timeout=60_000)
    placed = {path: f"{SOLVED_FOLDER}/{path}" for path in copies}
    page.evaluate(f"""async ([folder, files]) => {{
        const contents = {APP}.serviceManager.contents;
        const made = new Set();
        for (const [path, notebook] of files) {{
            const parts = path.split('/');
            for (let i = 1; i < parts.length; i++) {{
                const dir = parts.slice(0, i).join('/');
                if (made.has(dir)) continue;
                try {{ await contents.get(dir, {{content: false}}); }}
                catch (e) {{ await contents.save(dir, {{type: 'directory'}}); }}
                made.add(dir);
            }}
            await contents.save(path, {{type: 'notebook', format: 'json', content: notebook}});
            await contents.get(path, {{content: false}});   // it is there, or this throws
        }}
    }}""", [SOLVED_FOLDER, [[placed[p], nb] for p, nb in copies.items()]])
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


# ---------------------------------------------------------------- the report

def _s(seconds: float | None, digits: int = 2) -> str:
    return "–" if seconds is None else f"{seconds:.{digits}f}"


def notebook_line(run: NotebookRun) -> str:
    total = sum(c.seconds or 0 for c in run.cells)
    answered = sum(lab.seconds is not None for lab in run.labs)
    return (f"{run.path} ({run.form}): kernel {_s(run.kernel_seconds, 1)} s, {len(run.cells)} cells in "
            f"{total:.1f} s, {answered} of {len(run.labs)} labs answered, "
            f"{len(run.checks)} checks: {run.result}")


def kernel_sentence(kernel: dict | None) -> str:
    if not kernel:
        return "Kernel: none started."
    if "error" in kernel:
        return f"Kernel: its report could not be read ({kernel['error']})."
    bits = kernel.get("pointer_bits")
    numpy = f"NumPy {kernel['numpy']}" if kernel.get("numpy") else "no NumPy installed"
    return (f"Kernel: Python {kernel.get('python')} on {kernel.get('platform')} "
            f"({kernel.get('machine')}, {bits}-bit pointers, so NumPy's default integer is {bits} bits), "
            f"{numpy}.")


def summary_markdown(course: CourseRun) -> str:
    """The run as Markdown: the verdict, the kernel, one row per notebook, every lab's first
    answer, every check's verdict and, folded, every cell's time."""
    b = course.budgets
    lines = [f"## The course in the browser: {course.target}", ""]
    if course.passed:
        lines.append(f"**Passed**: {len(course.notebooks)} notebook runs, no problem.")
    else:
        lines.append(f"**Failed**: {len(course.problems)} problem(s).")
        lines += [""] + [f"- {_md(p)}" for p in course.problems]
    lines += ["", kernel_sentence(course.kernel) + f" Budgets: kernel start {b['kernel']:g} s, each cell "
              f"{b['cell']:g} s, each lab's first answer {b['lab']:g} s. Cells are numbered from 1, "
              "markdown cells included.", ""]
    lines += ["| notebook | copy | kernel ready, s | code cells run | all cells, s | slowest cell, s | "
              "labs answered | checks | result |", "|---|---|---|---|---|---|---|---|---|"]
    for run in course.notebooks:
        timed = [c for c in run.cells if c.seconds is not None]
        slowest = max(timed, key=lambda c: c.seconds, default=None)
        verdicts = {}
        for check in run.checks:
            verdicts[check.verdict] = verdicts.get(check.verdict, 0) + 1
        lines.append(
            f"| {_md(run.path)} | {run.form} | {_s(run.kernel_seconds, 1)} | {len(run.cells)} | "
            f"{sum(c.seconds for c in timed):.2f} | "
            f"{f'cell {slowest.cell}: {slowest.seconds:.2f}' if slowest else '–'} | "
            f"{sum(lab.seconds is not None for lab in run.labs)} of {len(run.labs)} | "
            f"{', '.join(f'{n} {v}' for v, n in verdicts.items()) or '–'} | "
            f"{run.result} |")
    labs = [(run, lab) for run in course.notebooks for lab in run.labs]
    if labs:
        lines += ["", "### Each lab's first answer", "",
                  "From the key press or click on one of its controls to the first change of its plot "
                  "or text.", "", "| notebook | copy | cell | lab | control | first answer, ms |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {_md(run.path)} | {run.form} | {lab.cell} | {_md(lab.name)} | {_md(lab.control)} | "
                  f"{'no answer' if lab.seconds is None else f'{lab.seconds * 1000:.0f}'} |"
                  for run, lab in labs]
    for run in course.notebooks:
        if not run.cells:
            continue
        total = sum(c.seconds or 0 for c in run.cells)
        lines += ["", f"<details><summary>{_md(run.path)} ({run.form}): each cell's time, "
                  f"{len(run.cells)} cells, {total:.1f} s</summary>", "",
                  "| cell | first line | s | error |", "|---|---|---|---|"]
        lines += [f"| {c.cell} | `{_md(_one_line(c.line, 70)).replace('`', '')}` | "
                  f"{'over budget' if c.seconds is None else f'{c.seconds:.3f}'} | {_md(c.error or '')} |"
                  for c in run.cells]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped, HTML's angle brackets kept as text."""
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


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
