"""How much slower Python runs as WebAssembly, the way the course's browser kernel runs it.

The browser's kernel is Pyodide: CPython compiled to WebAssembly. Here the npm package
``pyodide`` (the same build the site ships, version :data:`PYODIDE`) runs under Node, and the
same pure-Python workload is timed in it and in this machine's CPython, each in a fresh
process, alternated three times and repeated in each. The ratio of the two medians is the *WebAssembly factor*; the benchmark
report multiplies each lab's CPython update time by it to estimate what a learner waits in the
browser. It is an estimate, and a pessimistic one for the labs: their drawing and their NumPy
arithmetic are compiled C in both worlds, and the pure-Python part is what slows down most.

The package is installed once with npm into ``benchmarks/.pyodide/`` (git-ignored); without
Node or npm the section reports itself skipped.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PYODIDE = "314.0.6"
ROUNDS = 3                   # fresh processes of each, alternated
FOLDER = Path(__file__).resolve().parent / ".pyodide"

# A lab's update in pure Python: calls, attribute look-ups, small loops, dicts, string formatting.
WORKLOAD = r'''
import time

class Artist:
    def __init__(self, x, y):
        self.x, self.y, self.stale = x, y, False
    def set_data(self, x, y):
        self.x, self.y, self.stale = x, y, True
    @property
    def extent(self):
        return (min(self.x), max(self.x), min(self.y), max(self.y))

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def update(artists, k):
    text = []
    for i, a in enumerate(artists):
        xs = [j * 0.5 for j in range(k)]
        a.set_data(xs, [x * x - i for x in xs])
        text.append(f"{i}: {a.extent[3]:.2f}")
    table = {t.split(":")[0]: len(t) for t in text}
    return sum(table.values()) + fib(16)

def once():
    artists = [Artist([0.0], [0.0]) for _ in range(40)]
    start = time.perf_counter()
    for k in range(20, 40):
        update(artists, k)
    return time.perf_counter() - start

times = [once() for _ in range(REPEATS)]
'''


def workload(repeats: int) -> str:
    """The workload's source; it leaves its durations in seconds in ``times``."""
    return WORKLOAD.replace("REPEATS", str(int(repeats)))


def _cpython(repeats: int) -> list:
    code = workload(repeats) + "\nimport json; print(json.dumps(times))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def install(log=print) -> Path | None:
    """The folder holding node_modules/pyodide (installed with npm if needed), or None."""
    if (FOLDER / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        return FOLDER
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    FOLDER.mkdir(parents=True, exist_ok=True)
    log(f"  installing pyodide@{PYODIDE} with npm into {FOLDER}...")
    subprocess.run([npm, "install", "--no-save", "--prefix", str(FOLDER), f"pyodide@{PYODIDE}"],
                   check=True, capture_output=True, text=True)
    return FOLDER


def _pyodide(folder: Path, repeats: int) -> tuple[list, str]:
    script = """
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
const py = await loadPyodide();
py.runPython(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify({times: py.globals.get("times").toJs(),
                            version: py.runPython("import sys; sys.version.split()[0]")}));
"""
    with tempfile.TemporaryDirectory(prefix="bench-wasm-", dir=folder) as tmp:
        tmp = Path(tmp)
        (tmp / "run.mjs").write_text(script)
        (tmp / "workload.py").write_text(workload(repeats))
        out = subprocess.run(["node", str(tmp / "run.mjs"), str(tmp / "workload.py")], cwd=folder,
                             capture_output=True, text=True, check=True, timeout=600)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["times"], result["version"]


def run(repeats: int = 15, log=print) -> dict:
    """{"factor", "cpython", "pyodide", ...}: medians in ms and their ratio, or {"skipped": why}."""
    folder = install(log)
    if folder is None:
        return {"skipped": "node or npm is missing"}
    wasm, native = [], []
    for _ in range(ROUNDS):                   # alternated, so a change of load falls on both
        times, version = _pyodide(folder, repeats)
        wasm += times
        native += _cpython(repeats)
    cpython_ms = 1000 * statistics.median(native)
    pyodide_ms = 1000 * statistics.median(wasm)
    factor = round(pyodide_ms / cpython_ms, 2)
    log(f"  WebAssembly factor {factor} (Pyodide {version} under Node {pyodide_ms:.1f} ms, "
        f"CPython {sys.version.split()[0]} {cpython_ms:.1f} ms)")
    return {"factor": factor, "cpython_ms": round(cpython_ms, 2), "pyodide_ms": round(pyodide_ms, 2),
            "repeats": repeats * ROUNDS, "pyodide_version": version, "pyodide_package": PYODIDE,
            "cpython_version": sys.version.split()[0],
            "node_version": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()}


__all__ = ["PYODIDE", "install", "run", "workload"]
