"""Chromium and a local JupyterLab, driven as a learner would: what the browser tests
(tests/conftest.py, tests/test_browser_*.py) and the browser benchmark (benchmarks/browser.py)
share.

Chromium is Debian's (/usr/bin/chromium), driven through Playwright; never a downloaded browser.
Where there is none (a GitHub runner has Google Chrome), :func:`find_chromium` finds the one there is.
"""

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tools.lab import KERNEL_MANAGER, bound_environment

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
APP = "window.jupyterapp"
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
         f"--ServerApp.root_dir={root}"],
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
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def open_notebook(page, base, path):
    """Open the notebook at path (relative to the server's root) alone; wait for an idle kernel."""
    page.goto(f"{base}lab/tree/{urllib.parse.quote(path)}?reset")  # no other notebook restored
    page.wait_for_function(f"{APP} && {APP}.shell.currentWidget && {APP}.shell.currentWidget.sessionContext", timeout=60_000)
    page.wait_for_function(
        f"{APP}.shell.currentWidget.sessionContext.session && "
        f"{APP}.shell.currentWidget.sessionContext.session.kernel && "
        f"{APP}.shell.currentWidget.sessionContext.session.kernel.status === 'idle'", timeout=60_000)


def run_all(page):
    """Run every cell and wait until the kernel has finished them all."""
    page.evaluate(f"{APP}.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        f"""() => {{
            const nb = {APP}.shell.currentWidget.content;
            const code = nb.widgets.filter(c => c.model.type === 'code');
            return code.every(c => c.model.executionCount !== null) &&
                   !code.some(c => (c.node.querySelector('.jp-InputPrompt')?.innerText || '').includes('[*]')) &&
                   {APP}.shell.currentWidget.sessionContext.session.kernel.status === 'idle';
        }}""", timeout=180_000)


__all__ = ["APP", "CHROMIUM", "CHROMIUM_ARGS", "find_chromium", "free_port", "local_jupyterlab", "open_notebook", "run_all"]
