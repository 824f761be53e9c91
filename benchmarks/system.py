"""Notebooks under nbval, the site build, import times, and the trained model against PyTorch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .stats import ratio, summary

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
PYTHON = sys.executable
MODEL_TARGET = 1.5           # lib.model.forward at most this many times PyTorch CPU float32's time


def notebooks() -> list[Path]:
    """The course's notebooks (its inventory), in order."""
    from engine.core import inventory

    return [CONTENT / nb.path for nb in inventory.notebooks()]


# ---------------------------------------------------------------- notebooks

def _nbval(path: Path, env: dict, cwd: Path) -> tuple[float, bool, str]:
    start = time.perf_counter()
    result = subprocess.run([PYTHON, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                             "-p", "no:cacheprovider", "-q", str(path)],
                            cwd=cwd, env=env, capture_output=True, text=True)
    tail = (result.stdout + result.stderr).strip().splitlines()
    return time.perf_counter() - start, result.returncode == 0, tail[-1] if tail else ""


def run_notebooks(names=None, repeats: int = 1, log=print) -> dict:
    """Each notebook's full nbval run, as shipped and solved (pytest start-up included)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-nb-") as tmp:
        tmp = Path(tmp)
        for path in notebooks():
            if names and path.stem not in names and path.name not in names:
                continue
            solved = tmp / "solved" / path.stem / path.name
            solved.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([PYTHON, "-m", "engine", "solve", str(path), str(solved)],
                           cwd=ROOT, check=True, capture_output=True)
            row = {"notebook": path.name}
            for form, file, extra in (("shipped", path, {}), ("solved", solved, {"COURSE_STRICT": "1"})):
                times, ok, last = [], True, ""
                for i in range(repeats):
                    env = {**os.environ, **extra, "COURSE_PROGRESS_FILE": str(tmp / f"p-{path.stem}-{form}-{i}.json"),
                           "MPLBACKEND": "Agg"}
                    seconds, passed, last = _nbval(file, env, tmp)
                    times.append(seconds)
                    ok = ok and passed
                row[form] = {**summary(times), "passed": ok, "pytest": last}
            log(f"  notebook {path.name}: shipped {row['shipped']['median_ms'] / 1000:.1f} s, "
                f"solved {row['solved']['median_ms'] / 1000:.1f} s")
            rows.append(row)
    total = sum(r[f]["median_ms"] for r in rows for f in ("shipped", "solved")) / 1000
    return {"notebooks": rows, "total_s": round(total, 1), "target_s": 90.0,
            "meets_target": total <= 90.0}


# ---------------------------------------------------------------- imports

IMPORTS = {"import lib, labs": "import lib, labs",
           "import engine.ui (a setup cell)": "import engine.ui"}


def run_imports(repeats: int = 5) -> dict:
    """Fresh CPython processes: the import alone (the interpreter's own start-up subtracted)."""
    out = {}
    code = ("import time, sys; t = time.perf_counter(); {stmt}; "
            "print(time.perf_counter() - t)")
    for label, stmt in IMPORTS.items():
        times = []
        for _ in range(repeats):
            result = subprocess.run([PYTHON, "-c", code.format(stmt=stmt)], cwd=ROOT, capture_output=True,
                                    text=True, check=True, env={**os.environ, "MPLBACKEND": "Agg"})
            times.append(float(result.stdout.strip().splitlines()[-1]))
        out[label] = summary(times)
    main = out["import lib, labs"]
    return {"imports": out, "target_ms": 500.0, "meets_target": main["median_ms"] <= 500.0}


# ---------------------------------------------------------------- site

def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


PRELOAD_TARGET_BYTES = 600_000   # the course's own bytes loaded before notebook 00's first cell runs


def preloaded_course_bytes(site: Path) -> dict:
    """{"bytes", "parts": {what: bytes}}: the course's own bytes a browser loads from a built site
    before notebook 00's first cell runs: the first notebook of the course (its file), and, of the
    packages the kernel preloads (the site's settings, with what they depend on in its lock), those
    the course builds (pyproject.toml's package), not Pyodide's or PyPI's."""
    import tomllib

    from engine.core import inventory
    from tools import lock as locks

    settings = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = settings["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]["loadPyodideOptions"]
    lock_dir = site / "static" / "pyodide-lock"
    packages = json.loads((lock_dir / "pyodide-lock.json").read_text())["packages"]
    course = locks.normalise(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"])
    first = inventory.notebooks()[0]
    parts = {f"notebook {Path(first.path).name}": _size(site / "files" / first.path)}
    for name in sorted(locks.dependency_closure(packages, kernel["packages"])):
        if name == course:
            parts[f"course wheel ({packages[name]['file_name']})"] = _size(lock_dir / packages[name]["file_name"])
    return {"bytes": sum(parts.values()), "parts": parts}


def run_site(build: bool = True, log=print) -> dict:
    """``jupyter lite build`` (tools.site.build) time, the bytes the course adds to the site, and
    the course's own bytes loaded before notebook 00's first cell runs."""
    from tools.wheel import build_wheel, served_files

    out = {"target_bytes": 5_000_000, "preload_target_bytes": PRELOAD_TARGET_BYTES}
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        tmp = Path(tmp)
        wheel = build_wheel(tmp / "wheel")
        served = sum(_size(p) for p in served_files().values())
        adds = {"course wheel (lib, exercises, labs)": _size(wheel),
                "trained model's arrays, served beside the wheel (fetched by notebook 05)": served,
                "notebooks (content/)": sum(_size(p) for p in notebooks())}
        first = notebooks()[0]
        out["preloaded"] = {"bytes": _size(wheel) + _size(first),
                            "parts": {"course wheel (built alone: no release data)": _size(wheel),
                                      f"notebook {first.name}": _size(first)}}
        if build:
            site = tmp / "site"
            start = time.perf_counter()
            subprocess.run([PYTHON, "-c", "import sys; from tools.site import build; build(sys.argv[1])", str(site)],
                           cwd=ROOT, check=True, capture_output=True)
            seconds = time.perf_counter() - start
            out["build"] = summary([seconds])
            files = site / "files"
            if files.exists():
                adds["notebooks (content/)"] = _size(files)
            wheels = list((site / "static" / "pyodide-lock").glob("transformer_course-*.whl"))
            if wheels:
                adds["course wheel (lib, exercises, labs)"] = _size(wheels[0])
            for archive in (site / "static" / "pyodide-lock").glob("release-notebooks-*.zip"):
                adds["the release's notebooks, served beside the wheel (fetched for a fresh copy)"] = _size(archive)
            out["preloaded"] = preloaded_course_bytes(site)
            out["site_bytes"] = _size(site)
            log(f"  site build: {seconds:.1f} s, {out['site_bytes'] / 1e6:.1f} MB in all")
    out["course_adds"] = adds
    out["course_adds_bytes"] = sum(adds.values())
    out["meets_target"] = out["course_adds_bytes"] <= out["target_bytes"]
    out["preload_meets_target"] = out["preloaded"]["bytes"] <= PRELOAD_TARGET_BYTES
    log(f"  the course's own bytes before notebook 00's first cell: {out['preloaded']['bytes'] / 1e3:.0f} kB")
    return out


# ---------------------------------------------------------------- trained model

def _torch_model(dtype):
    """The committed weights in the training script's own PyTorch model, in the given type."""
    from lib import model
    from training import train

    with np.load(model.FOLDER / "weights.npz") as arrays:
        return train.model_from_numpy_weights(model.info()["config"], dict(arrays), dtype)


def _openblas_threads_setter():
    """A function setting the loaded OpenBLAS's thread count, or None."""
    import ctypes
    import re

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for path in sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps))):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                return lambda n: setter(ctypes.c_int(int(n)))
    return None


# glibc gives large freed blocks back to the system, and the next array of that size is new
# memory the kernel must map page by page; on this kind of virtual machine that is most of the
# cost of a big temporary array. WebAssembly's memory is never given back: these settings make
# glibc keep it too, as the learner's browser does.
KEPT_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(2 ** 30), "MALLOC_TRIM_THRESHOLD_": str(2 ** 32 - 1),
               "MALLOC_TOP_PAD_": str(2 ** 28)}
BLOCK, PAUSE_S = 5, 0.3       # calls in a row of one library, then a pause before the next library


def _timed_blocks(runs: dict, repeats: int) -> dict:
    """{name: [seconds]}: ``repeats`` calls of each function, in rows of BLOCK calls of one function,
    a pause between rows. Calls of different libraries are not interleaved one by one: after a
    call each library's worker threads keep spinning for a while, and on two cores they would
    slow the other library's next call."""
    times = {name: [] for name in runs}
    for _ in range(max(1, repeats // BLOCK)):
        for name, run in runs.items():
            time.sleep(PAUSE_S)
            for _ in range(BLOCK):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
    return times


def run_model(repeats: int = 30, kept_memory: bool = True, one_thread: bool = True) -> dict:
    """NumPy forward (lib.model) against PyTorch CPU, same weights, same held-out text, in rows.

    Run twice: with the libraries' default threads (all cores), and (with one_thread) with one
    thread each (OpenBLAS for NumPy, intra-op for PyTorch), as the browser's single-threaded
    kernel runs.
    With kept_memory, the default-thread run is made once more in a fresh process whose memory
    allocator keeps freed memory (``KEPT_MEMORY``), reported under "kept_memory"."""
    import torch

    from lib import model
    ids = model.heldout().ids
    model.forward(ids)                                       # weights loaded and cached
    models = {"float32": _torch_model(torch.float32), "float64": _torch_model(torch.float64)}
    x = torch.tensor(np.asarray(ids))[None]
    set_blas = _openblas_threads_setter()
    default_torch = torch.get_num_threads()
    default_blas = _openblas().get("blas_threads")
    out = {"tokens": int(len(ids)), "torch_version": torch.__version__, "block": BLOCK, "pause_s": PAUSE_S}
    runs = [("", default_blas, default_torch)] + ([("one_thread_", 1, 1)] if set_blas and one_thread else [])
    calls = {"numpy": lambda: model.forward(ids)}
    calls.update({f"torch_{key}": (lambda m=m: m(x)) for key, m in models.items()})
    with torch.no_grad():
        for prefix, blas, threads in runs:
            if set_blas and blas:
                set_blas(blas)
            torch.set_num_threads(threads)
            for call in calls.values():
                call()                                       # warm-up
            for key, values in _timed_blocks(calls, repeats).items():
                out[prefix + key] = summary(values)
            out[prefix + "threads"] = {"openblas": blas, "torch": threads}
            out[prefix + "numpy_over_torch_float32"] = ratio(out[prefix + "numpy"], out[prefix + "torch_float32"])
            out[prefix + "numpy_over_torch_float64"] = ratio(out[prefix + "numpy"], out[prefix + "torch_float64"])
        agree = {key: float(np.abs(m(x)[0].numpy() - model.forward(ids)).max()) for key, m in models.items()}
    if set_blas and default_blas:
        set_blas(default_blas)
    torch.set_num_threads(default_torch)
    out["torch_threads"] = default_torch
    out["max_abs_difference_vs_torch_float32"] = agree["float32"]
    out["max_abs_difference_vs_torch_float64"] = agree["float64"]
    best = min(out["torch_float32"]["median_ms"], out["torch_float64"]["median_ms"])
    out["numpy_over_fastest_torch"] = round(out["numpy"]["median_ms"] / best, 2)
    if kept_memory:
        out["kept_memory"] = _run_model_keeping_memory(repeats)
    return {**out, **judge_model(out)}


def judge_model(out: dict) -> dict:
    """The model target's verdict, on the rows with memory kept when they were measured (memory
    behaves there as in the learner's browser), else on the default rows."""
    judged = out.get("kept_memory", out)
    return {"target_ratio": MODEL_TARGET,
            "target_judged_on": "memory kept" if "kept_memory" in out else "default allocator",
            "meets_target": bool(judged["numpy_over_torch_float32"] <= MODEL_TARGET)}


def _run_model_keeping_memory(repeats: int) -> dict:
    """The default-thread part of ``run_model`` in a fresh process with ``KEPT_MEMORY`` set."""
    code = ("import json, sys; from benchmarks.system import run_model; "
            f"r = run_model({int(repeats)}, kept_memory=False, one_thread=False); "
            "json.dump({k: r[k] for k in ('numpy', 'torch_float32', 'torch_float64', "
            "'numpy_over_torch_float32', 'numpy_over_torch_float64')}, sys.stdout)")
    done = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env={**os.environ, **KEPT_MEMORY},
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["settings"] = dict(KEPT_MEMORY)
    return result


# ---------------------------------------------------------------- the machine

def _openblas() -> dict:
    """The loaded OpenBLAS's own report: its configuration and the threads it uses."""
    import ctypes
    import re

    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return {}
    paths = sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps)))
    for path in paths:
        lib = ctypes.CDLL(path)
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            threads = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            config = getattr(lib, f"{prefix}_get_config{suffix}", None)
            if threads is None:
                continue
            out = {"blas_threads": int(threads())}
            if config is not None:
                config.restype = ctypes.c_char_p
                out["blas_config"] = config().decode(errors="replace")
            return out
    return {}


def machine() -> dict:
    import platform

    import matplotlib
    info = {"python": platform.python_version(), "numpy": np.__version__, "matplotlib": matplotlib.__version__,
            "platform": platform.platform(), "cores": os.cpu_count()}
    try:
        info["cores_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 1024 ** 2, 1)
                break
    except OSError:
        pass
    try:
        import ipywidgets
        info["ipywidgets"] = ipywidgets.__version__
        import PIL
        info["pillow"] = PIL.__version__
    except ImportError:
        pass
    blas = []
    try:
        from threadpoolctl import threadpool_info
        blas = [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer", "architecture")}
                for d in threadpool_info()]
    except ImportError:
        try:
            config = np.show_config(mode="dicts")
            blas = [config.get("Build Dependencies", {}).get("blas", {})]
        except Exception:  # noqa: BLE001
            pass
    info["blas"] = blas
    info.update(_openblas())
    info["blas_env"] = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                        if k in os.environ}
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    info["load_average_at_start"] = [round(v, 2) for v in load] if load else None
    return info


__all__ = ["machine", "notebooks", "run_imports", "run_model", "run_notebooks", "run_site"]
