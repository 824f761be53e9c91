"""The deploy's browser run (tools/site_run.py), here as far as this machine allows.

The deploy runs it on the built site with Pyodide from the CDN. Here, with no CDN: on a site
built from Pyodide's npm core (no NumPy) it boots the site's own kernel, runs cells and stops
with one sentence at the first NumPy import; it writes the solved copies into JupyterLite's own
drive; and, against the local JupyterLab with a CPython kernel, it runs every notebook in full
(tests/test_browser_live.py) and the solved copy here, and it fails on what it must fail on.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CONTENT, ROOT, notebooks
from tools import site_run
from tools.browser import page_snippets

FIRST = notebooks()[0].relative_to(CONTENT).as_posix()       # the course's first notebook

# The JavaScript these tests evaluate in the page: tests/test_site_run.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=site_run.APP)


def test_on_a_core_only_site_the_kernel_boots_runs_cells_and_the_run_stops_at_numpy(
        self_hosted_site, browser, tmp_path):
    site, report = self_hosted_site
    assert "numpy" in report["missing"]
    summary = tmp_path / "summary.md"
    done = subprocess.run([sys.executable, "-m", "tools.site_run", str(site), "--summary", str(summary)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == site_run.NUMPY_MISSING
    # The kernel booted: its own report, made inside the site's Pyodide before any cell ran.
    assert re.search(r"^Kernel: Python 3\.14\.\d+ on emscripten \(wasm32, 32-bit pointers, so NumPy's "
                     r"default integer is 32 bits\), no NumPy installed\.$", done.stdout, re.M), done.stdout
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## The course in the browser: JupyterLite (the site's Pyodide kernel), chromium")
    # It ran the first notebook's setup cell, up to its first line (the NumPy import), and no further.
    first = json.loads((site / "files" / FIRST).read_text(encoding="utf-8"))
    setup = next(i for i, c in enumerate(first["cells"]) if c["cell_type"] == "code")
    assert "".join(first["cells"][setup]["source"]).startswith("import numpy as np")
    assert re.search(rf"^\| {re.escape(FIRST)} \| shipped \| \d+\.\d \| 1 \| ", text, re.M), text
    assert re.search(rf"^\| {setup + 1} \| `import numpy as np` \| \d+\.\d{{3}} \| ModuleNotFoundError: "
                     r"No module named 'numpy' \|$", text, re.M), text
    assert f"- {site_run.NUMPY_MISSING}" in text


def test_the_solved_copies_are_written_into_the_sites_own_drive(self_hosted_site, serve_site, browser):
    site, _ = self_hosted_site
    shipped = site_run.site_notebooks(site)
    copies = {path: site_run.solved_copy(nb) for path, nb in shipped.items()}
    target = site_run.JupyterLite(serve_site(site, "/solved-drive/"))
    context = browser.new_context()
    try:
        target.prepare(context)
        page = context.new_page()
        placed = site_run.add_solved_copies(page, target, copies)
        assert placed == {p: f"solved/{p}" for p in shipped}
        stored = page.evaluate(SNIPPETS["SAVED_CELLS"], list(placed.values()))
    finally:
        context.close()
    def text(source):
        return "".join(source) if isinstance(source, list) else source

    for (path, notebook), cells in zip(copies.items(), stored):
        assert [[kind, text(source)] for kind, source in cells] == [
            [c["cell_type"], text(c["source"])] for c in notebook["cells"]], path
        exercises = [c for c in notebook["cells"] if "exercise" in c["metadata"].get("tags", [])]
        assert all("____" not in "".join(c["source"]) for c in exercises), path
    assert any("____" in "".join(c["source"]) for nb in shipped.values() for c in nb["cells"])


def test_the_solved_copy_runs_in_the_local_jupyterlab_with_every_check_passed(jupyter_server, browser):
    base, root = jupyter_server
    shipped = json.loads((root / FIRST).read_text(encoding="utf-8"))
    course = site_run.run_course(browser, site_run.JupyterLabServer(base), {FIRST: shipped},
                                 forms=(site_run.SOLVED,))
    assert course.problems == []
    [run] = course.notebooks
    assert run.path == f"solved/{FIRST}" and (root / "solved" / FIRST).is_file()
    exercises = [c["metadata"]["course"]["exercise"] for c in shipped["cells"]
                 if "exercise" in c["metadata"].get("tags", [])]
    assert [(c.exercise, c.verdict) for c in run.checks] == [(e, "passed") for e in exercises]
    assert run.labs and all(lab.seconds is not None for lab in run.labs)
    text = course.markdown()
    assert text.startswith("## The course in the browser: JupyterLab (a local CPython kernel)\n\n**Passed**")
    lab = run.labs[0]
    assert f"| solved/{FIRST} | solved | {lab.cell} | {lab.name} | {lab.control} | {lab.seconds * 1000:.0f} |" in text
    assert "64-bit pointers, so NumPy's default integer is 64 bits" in text


FAULTY = [
    ("import sys\nprint('a warning', file=sys.stderr)", {}),
    ("from engine.notebook import check\nfrom labs.start import temperature_lab\n\ntemperature_lab()", {}),
    ("def row_mean(x):\n    return x.mean(axis=-1, keepdims=True)",
     {"tags": ["exercise"], "course": {"exercise": "row-mean"}}),
    ('check("row-mean")', {"tags": ["check"], "jupyter": {"source_hidden": True}}),
    ("1 / 0", {}),
    ("print('not run: Run All stops at an error')", {}),
]
SLOW = [("import time\ntime.sleep(60)", {}), ("print('not run')", {})]


def write_notebook(root, name, cells):
    import nbformat

    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python", "display_name": "Python"}})
    notebook.cells = [nbformat.v4.new_code_cell(source, metadata=meta) for source, meta in cells]
    (root / "faulty").mkdir(exist_ok=True)
    nbformat.write(notebook, root / "faulty" / name)
    return site_run.plan_of(json.loads((root / "faulty" / name).read_text(encoding="utf-8")), f"faulty/{name}")


def test_the_run_fails_on_errors_a_lab_that_does_not_answer_a_wrong_verdict_and_a_slow_cell(jupyter_server, page):
    base, root = jupyter_server
    target = site_run.JupyterLabServer(base)
    # A lab's first answer cannot come within a millisecond: here the lab "does not answer".
    run = site_run.run_notebook(page, target, write_notebook(root, "faulty.ipynb", FAULTY), budgets={"lab": 0.001})
    where = "faulty/faulty.ipynb (shipped): "
    assert run.problems[:4] == [
        where + "cell 1 (import sys) shows an error: stderr: a warning",
        where + "cell 5 (1 / 0) shows an error: ZeroDivisionError: division by zero",
        where + "cell 6 and the 0 code cells after it were not run (Run All stops at a cell that fails).",
        where + "cell 2: the lab 'temperature' did not answer its slider 'temperature' (right arrow key) "
                "within 0.001 s."]
    assert run.problems[4].startswith(where + "cell 4: the check of 'row-mean' says 'passed' where a shipped "
                                      "copy should say 'not attempted': ") and len(run.problems) == 5
    assert [c.cell for c in run.cells] == [1, 2, 3, 4, 5] and all(c.seconds is not None for c in run.cells)
    run = site_run.run_notebook(page, target, write_notebook(root, "slow.ipynb", SLOW), budgets={"cell": 2})
    assert run.problems == ["faulty/slow.ipynb (shipped): cell 1 (import time) did not finish within its budget "
                            "of 2 s; the cells after it were not run."]
    assert [(c.cell, c.seconds) for c in run.cells] == [(1, None)]


def test_the_command_refuses_a_folder_that_holds_no_site(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tools.site_run", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"{tmp_path} holds no built site (no jupyter-lite.json and files/): "
                                   "build one first with python -m tools.site build --output DIR.")


@pytest.mark.parametrize("notebook", notebooks(), ids=lambda p: p.relative_to(CONTENT).as_posix())
def test_the_plan_finds_the_cell_of_every_lab_and_check_the_inventory_lists(notebook):
    from engine.core import inventory

    data = json.loads(notebook.read_text(encoding="utf-8"))
    plan = site_run.plan_of(data, notebook.name)
    entry = inventory.notebook(notebook.stem)
    assert list(plan.code) == [i for i, c in enumerate(data["cells"]) if c["cell_type"] == "code"]
    assert list(plan.checks.values()) == list(entry.exercises)
    assert all("check" in data["cells"][i]["metadata"]["tags"] for i in plan.checks)
    assert [lab for labs in plan.labs.values() for lab in labs] == list(entry.labs)
    assert all(f"{lab.rsplit('.', 1)[1]}(" in "".join(data["cells"][i]["source"])
               for i, labs in plan.labs.items() for lab in labs)
