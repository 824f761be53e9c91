"""Shared fixtures: built sites, local servers, a real Chromium, and the notebooks executed once
per session (their outputs, widget state and lab figure texts, for every test that reads them).

Browser tests use Debian's Chromium through Playwright (never a downloaded browser); the
functions they share with the browser benchmark live in tools/browser.py.
With CI=true a missing Chromium is a failure, not a skip.
"""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest

from tools.browser import CHROMIUM, CHROMIUM_ARGS, local_jupyterlab

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
CACHE = ROOT / ".cache"
ARTIFACTS = ROOT / "test-artifacts"
PYODIDE_NPM = "https://registry.npmjs.org/pyodide/-/pyodide-314.0.6.tgz"


def notebooks():
    """Every notebook shipped in content/, sub-folders included, in course order (the course's
    inventory, engine/core/inventory.py)."""
    from engine.core import inventory

    return [CONTENT / nb.path for nb in inventory.notebooks()]


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def progress_file(tmp_path_factory):
    """Tests never write progress into content/: kernels get a temporary file."""
    return tmp_path_factory.mktemp("progress") / "course-progress.json"


# ---------------------------------------------------------------- notebooks run solved

def run_nbval(path, folder, progress, strict, extra_env=None):
    """nbval (lax, this Python's kernel) on the notebook at ``path``, in ``folder``; the finished process."""
    env = {**os.environ, "COURSE_PROGRESS_FILE": str(progress), "MPLBACKEND": "Agg", **(extra_env or {})}
    env.pop("COURSE_STRICT", None)
    if strict:
        env["COURSE_STRICT"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(folder), str(path)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )


class SolvedRun(NamedTuple):
    """One notebook solved and run under nbval: ``notebook`` (the shipped one), ``solved`` (its
    solved copy), ``result`` (nbval's finished process), ``cells`` (each code cell's matrix work,
    ``benchmarks.flops.read_cells``)."""
    notebook: Path
    solved: Path
    result: subprocess.CompletedProcess
    cells: list


@pytest.fixture(scope="session")
def solved_run(tmp_path_factory):
    """solved_run(notebook) -> SolvedRun: the notebook solved by ``python -m engine solve`` and
    run under nbval with COURSE_STRICT=1 (every check must pass), once per session, its kernel
    counting the matrix work of each cell as it runs (``benchmarks/flops.py``, installed by an
    IPython start-up file: the cells and the course's modules run as they are, each ``@`` through
    a function computing the same product)."""
    from benchmarks import flops

    runs = {}

    def run(notebook):
        if notebook not in runs:
            folder = tmp_path_factory.mktemp(f"solved-{notebook.stem}")
            solved = folder / notebook.name
            subprocess.run([sys.executable, "-m", "engine", "solve", str(notebook), str(solved)],
                           cwd=ROOT, check=True, capture_output=True, text=True)
            log = folder / "matrix-work.jsonl"
            flops.startup_file(folder / "ipython", log)
            path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
            result = run_nbval(solved, folder, folder / "progress.json", strict=True,
                               extra_env={"IPYTHONDIR": str(folder / "ipython"), "PYTHONPATH": path})
            cells = flops.read_cells(log, json.loads(solved.read_text(encoding="utf-8"))) if log.exists() else []
            runs[notebook] = SolvedRun(notebook, solved, result, cells)
        return runs[notebook]

    return run


# ---------------------------------------------------------------- built sites

def _build(output, pyodide=None, content=CONTENT, ship_anyway=False):
    from tools.site import build
    return build(output, pyodide, content, ship_anyway=ship_anyway)


@pytest.fixture(scope="session")
def online_site(tmp_path_factory):
    """The site as instructors build it by default (Pyodide from the CDN)."""
    output = tmp_path_factory.mktemp("site") / "online"
    report = _build(output)
    return output, report


@pytest.fixture(scope="session")
def pyodide_npm_tarball():
    """The npm package pyodide@314.0.6 (the core only: no numpy or matplotlib)."""
    path = CACHE / "pyodide-314.0.6.tgz"
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        with urllib.request.urlopen(PYODIDE_NPM, timeout=120) as response:
            data = response.read()
        path.write_bytes(data)
    return path


@pytest.fixture(scope="session")
def self_hosted_site(tmp_path_factory, pyodide_npm_tarball):
    """A self-hosted site made from the npm core and PyPI's pure wheels (no notebook runs on it,
    so the build needs --ship-anyway)."""
    output = tmp_path_factory.mktemp("site") / "self-hosted"
    report = _build(output, pyodide_npm_tarball, ship_anyway=True)
    return output, report


@pytest.fixture(scope="session")
def serve_site():
    """serve_site(folder, base_path) -> URL of folder served on 127.0.0.1 under base_path."""
    from tools.serve import Server
    servers = []

    def start(folder, base_path="/"):
        server = Server(folder, port=0, base_path=base_path).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.port}{base_path}"

    yield start
    for server in servers:
        server.close()


# ---------------------------------------------------------------- Chromium

@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing: apt-get install chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


# ---------------------------------------------------------------- local Jupyter

@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory, progress_file):
    """(base URL, root folder) of a local JupyterLab over a copy of content/ (local_jupyterlab)."""
    with local_jupyterlab(tmp_path_factory.mktemp("jupyter"), progress_file) as server:
        yield server


# ---------------------------------------------------------------- executed notebooks

# Run in the kernel after a notebook's last cell: the texts drawn in each lab's figure (titles,
# axis and tick labels, legends, texts), keyed by the model id of the image widget that shows it.
# The widgets' own state (verdicts, tables, controls) is kept by nbclient in metadata.widgets.
FIGURE_TEXTS_PROBE = """\
import gc as _gc, json as _json, sys as _sys
_view_module = _sys.modules.get("engine.kit.figure_view")
_texts = {}
if _view_module is not None:
    from matplotlib.text import Text as _Text
    for _view in _gc.get_objects():
        if isinstance(_view, _view_module.FigureView):
            _texts[_view.image.model_id] = [
                _t.get_text() for _t in _view.figure.findobj(_Text) if _t.get_visible() and _t.get_text().strip()]
print(_json.dumps(_texts))
"""


class Executed(NamedTuple):
    """A notebook as it ran: its cells with their outputs, the widgets' state in
    ``notebook.metadata.widgets``, and ``figure_texts``, {image widget id: the texts drawn in
    that lab figure}."""

    notebook: object
    figure_texts: dict


def run_notebook(name, progress_file) -> Executed:
    """Execute content/<name> in a real kernel, keeping the widgets' state and the labs' figure texts."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(CONTENT / name, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(FIGURE_TEXTS_PROBE))
    os.environ["COURSE_PROGRESS_FILE"] = str(progress_file)
    client = NotebookClient(notebook, timeout=300, kernel_name="python", store_widget_state=True,
                            resources={"metadata": {"path": str(CONTENT)}})
    client.execute()
    probe = notebook.cells.pop()
    printed = "".join(output.get("text", "") for output in probe.outputs if output.output_type == "stream")
    return Executed(notebook, json.loads(printed))


@pytest.fixture(scope="session")
def executed_notebook(tmp_path_factory):
    """executed_notebook("01_positional_encoding.ipynb") -> Executed: each notebook runs once per
    session, and every test that reads a notebook's outputs shares that run."""
    cache = {}

    def get(name):
        if name not in cache:
            progress = tmp_path_factory.mktemp("executed") / "progress.json"
            cache[name] = run_notebook(name, progress)
        return cache[name]

    return get


def figure_outputs(notebook):
    """{figure id: the text its cell showed} for code cells with metadata.course.figure.

    A notebook marks each cell that computes a syllabus figure with
    `"course": {"figure": "<id>"}`; the tests pin what that cell printed.
    """
    figures = {}
    for cell in notebook.cells:
        figure = cell.metadata.get("course", {}).get("figure")
        if cell.cell_type != "code" or not figure:
            continue
        texts = []
        for output in cell.outputs:
            if output.output_type == "stream":
                texts.append(output.text)
            elif "data" in output:
                texts.append(output.data.get("text/plain", ""))
        figures[figure] = "".join(texts)
    return figures


@pytest.fixture(scope="session")
def notebook_figures(executed_notebook):
    """notebook_figures("01_positional_encoding.ipynb") -> {figure id: printed text} (cached)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = figure_outputs(executed_notebook(name).notebook)
        return cache[name]

    return get


# ---------------------------------------------------------------- accessibility audit

AXE_OUTSIDE = pytest.StashKey[list]()


@pytest.fixture(scope="session")
def axe_outside_course(request):
    """A list the accessibility audit fills with what axe-core finds in JupyterLab's own
    interface: outside the course's scope, and printed at the end of the run, not hidden."""
    return request.config.stash.setdefault(AXE_OUTSIDE, [])


def pytest_sessionfinish(session):
    """In a pytest-xdist worker: hand what the audit found to the controller, which prints it."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["axe_outside_course"] = list(session.config.stash.get(AXE_OUTSIDE, []))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: a worker has finished; keep what its audit found."""
    found = getattr(node, "workeroutput", {}).get("axe_outside_course", [])
    node.config.stash.setdefault(AXE_OUTSIDE, []).extend(found)


def pytest_terminal_summary(terminalreporter, config):
    found = list(dict.fromkeys(config.stash.get(AXE_OUTSIDE, [])))     # once, however many workers saw it
    if found:
        terminalreporter.section("axe-core on JupyterLab's own interface (outside the course's audit)")
        for line in found:
            terminalreporter.write_line(line)


# The files that take longest, run first: pytest-xdist hands each process one whole file at a
# time (pytest.ini), so a long file left for the end keeps one process busy while the other waits.
LONGEST_FIRST = ("test_browser_", "test_site_run.py", "test_saved_notebooks.py", "test_notebooks.py",
                 "test_check_budget.py", "test_new_notebook.py", "test_cli_course.py", "test_matrix_budget.py",
                 "test_site.py")


def pytest_collection_modifyitems(items):
    """Put the files of LONGEST_FIRST first, in that order (the tests of a file keep theirs)."""
    def rank(item):
        return next((i for i, start in enumerate(LONGEST_FIRST) if item.path.name.startswith(start)),
                    len(LONGEST_FIRST))
    items.sort(key=rank)
