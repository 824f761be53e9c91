"""How much slower Python runs as WebAssembly, the way the course's browser kernel runs it.

The browser's kernel is Pyodide: CPython compiled to WebAssembly. Here the npm package
``pyodide`` (the same build the site ships, version :data:`PYODIDE`) runs under Node, and the
same workloads are timed in it and in this machine's CPython, each in a fresh process,
alternated three times and repeated in each. Two workloads, two factors, each Pyodide's fastest
run over CPython's fastest (on a shared machine the medians move with the load of the moment,
and a ratio of medians with them; the fastest runs are the code's own cost, with nothing else
on the core):

* **pure Python** (:data:`WORKLOAD`): calls, attribute look-ups, small loops, dicts and string
  formatting, what a lab's update does in Python;
* **compiled code** (:data:`COMPILED`): no NumPy (the npm package ships none), but C that the
  interpreter calls and that runs as WebAssembly in the browser, as NumPy's loops do there:
  zlib compressing and expanding, json writing and reading, re searching and hashlib's SHA-256
  (its own portable C, the one Pyodide's hashlib runs; CPython's ``hashlib.sha256`` here would
  be OpenSSL's, which uses the processor's SHA instructions and is 50 times faster than any
  portable code, in the browser or not).
  Each part is timed on its own; the factor is the geometric mean of the four parts' factors,
  so no part counts more because it happens to take longer.

The benchmark's browser estimate multiplies a time measured in CPython by the larger of the two
factors. It is an estimate: NumPy's own loops in Pyodide are not among the parts timed (Pyodide's
NumPy is not on npm, and the browser tests here cannot reach the CDN that serves it), and native
code can use vector instructions (AVX) that WebAssembly lacks or has only in part (SIMD128).

The package is installed once with npm into ``benchmarks/.pyodide/`` (git-ignored); without
Node or npm the section reports itself skipped.
"""

from __future__ import annotations

import json
import math
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

# C called from Python, no NumPy: each part's durations in seconds go into ``parts[name]``.
COMPILED = r'''
import json, random, re, time, zlib
try:                                          # hashlib's own SHA-256 in portable C, as in the browser
    from _sha2 import sha256                  # Python 3.12 and later
except ImportError:
    from _sha256 import sha256                # Python 3.11

rng = random.Random(0)
words = ["attention", "block", "residual", "norm", "token", "head", "query", "key", "value", "gate"]
text = " ".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(10_000))   # about 100 kB
raw = text.encode()
packed = zlib.compress(raw, 6)
records = [{"id": i, "name": rng.choice(words), "x": rng.random(), "tags": [rng.randrange(99) for _ in range(5)]}
           for i in range(1_000)]
written = json.dumps(records)
pattern = re.compile(r"\b(?:query|key|value)(\d+)\b")
long_text = text * 4                                                                     # about 400 kB
blob = raw * 20                                                                          # about 2 MB

PARTS = {
    "zlib": lambda: zlib.decompress(zlib.compress(raw, 6)),
    "json": lambda: json.loads(json.dumps(records)),
    "re": lambda: pattern.findall(long_text),
    "hashlib": lambda: sha256(blob).digest(),
}

def once(part):
    start = time.perf_counter()
    part()
    return time.perf_counter() - start

for part in PARTS.values():
    part()                                                                                # warm
parts = {name: [once(part) for _ in range(REPEATS)] for name, part in PARTS.items()}
'''


def workload(repeats: int) -> str:
    """The pure-Python workload's source; it leaves its durations in seconds in ``times``."""
    return WORKLOAD.replace("REPEATS", str(int(repeats)))


def compiled(repeats: int) -> str:
    """The compiled-code workload's source; it leaves {part: [seconds]} in ``parts``."""
    return COMPILED.replace("REPEATS", str(int(repeats)))


def both(repeats: int) -> str:
    """Both workloads, one after the other, in one process."""
    return workload(repeats) + "\n" + compiled(repeats)


def _cpython(repeats: int) -> dict:
    code = both(repeats) + "\nimport json; print(json.dumps({'times': times, 'parts': parts}))\n"
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


def _pyodide(folder: Path, repeats: int) -> dict:
    script = """
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
const py = await loadPyodide();
py.runPython(readFileSync(process.argv[2], "utf8"));
console.log(py.runPython("import json, sys; json.dumps({'times': times, 'parts': parts, "
                         + "'version': sys.version.split()[0]})"));
"""
    with tempfile.TemporaryDirectory(prefix="bench-wasm-", dir=folder) as tmp:
        tmp = Path(tmp)
        (tmp / "run.mjs").write_text(script)
        (tmp / "workload.py").write_text(both(repeats))
        out = subprocess.run(["node", str(tmp / "run.mjs"), str(tmp / "workload.py")], cwd=folder,
                             capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _factor(slow: list, fast: list) -> dict:
    """Medians and fastest runs in ms of the two, and the factor: fastest over fastest."""
    out = {"pyodide_ms": round(1000 * statistics.median(slow), 3), "cpython_ms": round(1000 * statistics.median(fast), 3),
           "pyodide_fastest_ms": round(1000 * min(slow), 3), "cpython_fastest_ms": round(1000 * min(fast), 3)}
    out["factor"] = round(min(slow) / min(fast), 2)
    return out


def run(repeats: int = 15, log=print) -> dict:
    """{"factor", "compiled_factor", "estimate_factor", ...}: medians and fastest runs in ms and the
    factors, or {"skipped": why}. "factor" is the pure-Python one, "estimate_factor" the larger."""
    folder = install(log)
    if folder is None:
        return {"skipped": "node or npm is missing"}
    wasm, native = {"times": [], "parts": {}}, {"times": [], "parts": {}}
    for _ in range(ROUNDS):                   # alternated, so a change of load falls on both
        for into, result in ((wasm, _pyodide(folder, repeats)), (native, _cpython(repeats))):
            into["times"] += result["times"]
            for name, values in result["parts"].items():
                into["parts"].setdefault(name, []).extend(values)
            into["version"] = result.get("version")
    pure = _factor(wasm["times"], native["times"])
    factor = pure["factor"]
    parts = {name: _factor(wasm["parts"][name], native["parts"][name]) for name in native["parts"]}
    compiled_factor = round(math.prod(p["factor"] for p in parts.values()) ** (1 / len(parts)), 2)
    log(f"  WebAssembly factor: pure Python {factor} (Pyodide {wasm['version']} under Node {pure['pyodide_fastest_ms']:.1f} "
        f"ms, CPython {sys.version.split()[0]} {pure['cpython_fastest_ms']:.1f} ms, fastest runs); compiled code "
        f"{compiled_factor} (" + ", ".join(f"{name} {p['factor']}" for name, p in parts.items()) + ")")
    return {**pure, "compiled_factor": compiled_factor, "compiled_parts": parts,
            "estimate_factor": max(factor, compiled_factor),
            "repeats": repeats * ROUNDS, "pyodide_version": wasm["version"], "pyodide_package": PYODIDE,
            "cpython_version": sys.version.split()[0],
            "node_version": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()}


__all__ = ["PYODIDE", "both", "compiled", "install", "run", "workload"]
