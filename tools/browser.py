"""Chromium and a local JupyterLab, driven as a learner would: what the browser tests
(tests/conftest.py, tests/test_browser_*.py) and the browser benchmark (benchmarks/browser.py)
share.

Chromium is Debian's (/usr/bin/chromium), driven through Playwright; never a downloaded browser.
Where there is none (a GitHub runner has Google Chrome), :func:`find_chromium` finds the one there is.
"""

import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tools.lab import KERNEL_MANAGER, bound_environment, lab_extensions
from tools.processes import stop

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
APP = "window.jupyterapp"


def page_snippets(path: Path, **values: str) -> dict[str, str]:
    """{name: JavaScript} of a file of snippets for page.evaluate, each after a line
    ``// --- NAME`` (the file's other ``//`` lines at the start of a line are comments). In each,
    ``__KEY__`` becomes ``values[KEY]``, or the snippet KEY written above it."""
    snippets: dict[str, str] = {}
    for part in re.split(r"(?m)^// --- ", path.read_text(encoding="utf-8"))[1:]:
        name, _, body = part.partition("\n")
        code = "\n".join(line for line in body.splitlines() if not line.startswith("//")).strip()
        snippets[name.strip()] = re.sub(r"__([A-Z_]+)__", lambda m: {**values, **snippets}[m.group(1)], code)
    return snippets


OTHER_CHROMIUMS = ("chromium", "google-chrome", "google-chrome-stable", "chromium-browser")


def find_chromium():
    """Debian's Chromium if installed, else the first Chromium or Chrome on the PATH, else None."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return next((found for name in OTHER_CHROMIUMS if (found := shutil.which(name))), None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_jupyterlab(workdir, progress_file, content=CONTENT):
    """A local JupyterLab (CPython kernel) on 127.0.0.1 over a copy of content in workdir.

    Yields (base URL, root folder). The app object is exposed to the page so tests and
    benchmarks can run JupyterLab commands (run all cells, change theme) as a learner's
    clicks do; news pop-ups are off and every cell is kept in the page.
    """
    workdir = Path(workdir)
    root, settings = workdir / "root", workdir / "lab-settings"
    shutil.copytree(content, root, dirs_exist_ok=True)
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}')  # every cell in the page, as a long scroll
    env = {**bound_environment(), "COURSE_PROGRESS_FILE": str(progress_file), "JUPYTER_PLATFORM_DIRS": "1",
           "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    port = free_port()
    log = open(workdir / "server.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", "--allow-root", "--ServerApp.token=", "--ServerApp.password=",
         "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", KERNEL_MANAGER,
         lab_extensions(workdir / "labextensions"), f"--ServerApp.root_dir={root}"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(url + "api/status", timeout=2) as response:
                    json.load(response)
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(f"jupyter lab exited: see {log.name}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"jupyter lab did not start in 90 s: see {log.name}") from None
                time.sleep(0.5)
        yield url, root
    finally:
        stop(process)
        log.close()


# The JavaScript these functions evaluate in the page: tools/browser.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"), APP=APP)
ANSWERED = SNIPPETS["ANSWERED"]
PICTURES_LOADED = SNIPPETS["PICTURES_LOADED"]
TWO_FRAMES = SNIPPETS["TWO_FRAMES"]


def open_notebook(page, base, path):
    """Open the notebook at path (relative to the server's root) alone; wait for an idle kernel."""
    page.goto(f"{base}lab/tree/{urllib.parse.quote(path)}?reset")  # no other notebook restored
    page.wait_for_function(SNIPPETS["NOTEBOOK_OPEN"], timeout=60_000)
    page.wait_for_function(SNIPPETS["KERNEL_IDLE"], timeout=60_000)


def run_all(page):
    """Run every cell and wait until the kernel has finished them all."""
    page.evaluate(f"{APP}.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(SNIPPETS["ALL_CELLS_RUN"], timeout=180_000)


def settle(page, timeout=60.0):
    """Wait until the kernel has answered every message the page sent it and the page shows the
    answer: the kernel idle with no request waiting, every course picture loaded, two frames
    painted since, and still nothing sent that waits for an answer. ``timeout`` (s) bounds the
    wait for these states; nothing here waits for a time."""
    deadline = time.monotonic() + timeout
    while True:
        left = max(deadline - time.monotonic(), 0.001) * 1000
        page.wait_for_function(ANSWERED, timeout=left)
        page.wait_for_function(PICTURES_LOADED, timeout=left)
        page.evaluate(TWO_FRAMES)
        if page.evaluate(ANSWERED) and page.evaluate(PICTURES_LOADED):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the kernel or the page was still busy after {timeout:g} s")


__all__ = ["ANSWERED", "APP", "CHROMIUM", "CHROMIUM_ARGS", "find_chromium", "free_port", "local_jupyterlab",
           "open_notebook", "run_all", "settle"]
