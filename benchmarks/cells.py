"""Every notebook cell timed in a real kernel, under a chosen Python (and so a chosen NumPy).

Each notebook of the course (its inventory, :mod:`engine.core.inventory`) is solved
(``python -m engine solve``: every blank filled, as a learner who finishes it runs it) and run
top to bottom by ``nbclient`` in a fresh kernel of the given interpreter, as JupyterLab's *Run All*
runs it. A cell's time is the kernel's own: from the moment it reports itself busy with the cell
to the moment it reports itself idle (the time stamps the kernel puts on its messages), so the
client's side and the messages' travel are left out. The kernel uses matplotlib's inline
backend, as the browser's does.

A cell is named by the number JupyterLab shows beside it after *Run All* in a fresh kernel,
``[n]``: its place among the notebook's code cells, from 1. Each notebook runs as
``tests/test_notebooks.py`` runs it: in a folder of its own, with no progress recorded, so a cell
that would use the learner's own functions from their earlier notebooks (notebook 05's capstone)
uses the course's.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"


def notebooks(names=None) -> list[Path]:
    """The course's notebooks (its inventory), in order; only those whose stem or name is in
    ``names`` when given."""
    from engine.core import inventory

    paths = [CONTENT / nb.path for nb in inventory.notebooks()]
    return [p for p in paths if not names or p.stem in names or p.name in names]


def solve(path: Path, folder: Path) -> Path:
    """The solved copy of the notebook at ``path``, written into ``folder``."""
    solved = folder / path.name
    subprocess.run([sys.executable, "-m", "engine", "solve", str(path), str(solved)],
                   cwd=ROOT, check=True, capture_output=True)
    return solved


def code_cells(notebook: dict) -> list[dict]:
    """[{"cell": n, "position": p, "id", "first_line"}] of the notebook's code cells: n as JupyterLab
    shows it after *Run All*, p its place among all the notebook's cells (from 1, as a reader counts)."""
    out = []
    for position, cell in enumerate(notebook["cells"], 1):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        lines = [line for line in source.splitlines() if line.strip()]
        out.append({"cell": len(out) + 1, "position": position, "id": cell.get("id"),
                    "first_line": lines[0][:80] if lines else ""})
    return out


def kernel_spec(folder: Path, python, env: dict) -> str:
    """Write a kernel spec (in ``folder``) that starts ``python`` with ``env``; its name."""
    spec = folder / "kernels" / "bench"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bench", "language": "python", "env": env}), encoding="utf-8")
    return "bench"


def _seconds(execution: dict) -> float | None:
    times = [execution.get(k) for k in ("iopub.status.busy", "iopub.status.idle")]
    if not all(times):
        return None
    busy, idle = (datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ") for t in times)
    return (idle - busy).total_seconds()


def run_notebook(solved: Path, python, env: dict, workdir: Path) -> list:
    """Seconds each code cell took in a fresh kernel of ``python``, in order (None where the kernel
    gave no time). Raises nbclient's CellExecutionError if a cell fails."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="bench-kernel-", dir=workdir) as tmp:
        name = kernel_spec(Path(tmp), python, env)
        manager = KernelManager(kernel_name=name,
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(Path(tmp) / "kernels")]))
        notebook = nbformat.read(solved, as_version=4)
        client = NotebookClient(notebook, km=manager, timeout=900, allow_errors=False, record_timing=True,
                                resources={"metadata": {"path": str(workdir)}})
        client.execute(stderr=subprocess.DEVNULL)         # the kernel's start-up warnings
    return [_seconds(c.metadata.get("execution", {})) for c in notebook.cells if c.cell_type == "code"]


def kernel_env(base: dict, progress: Path) -> dict:
    """The kernel's environment: ``base`` with the progress written aside and matplotlib's
    backend left to the kernel (the inline one, as in the browser)."""
    env = {**base, "COURSE_PROGRESS_FILE": str(progress)}
    env.pop("MPLBACKEND", None)
    env.pop("COURSE_STRICT", None)
    return env


def time_cells(pythons: dict, names=None, repeats: int = 1, log=print) -> list:
    """Every code cell of every chosen notebook, timed in each interpreter of ``pythons``
    ({label: (python, environment)}), the interpreters taking turns ``repeats`` times.

    Returns [{"notebook", "cells": [{"cell", "id", "first_line", label: seconds list}], label + "_total": ...}]."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-cells-") as tmp:
        tmp = Path(tmp)
        for path in notebooks(names):
            folder = tmp / path.stem                       # alone: no other notebook in its workspace
            folder.mkdir()
            solved = solve(path, folder)
            cells = code_cells(json.loads(solved.read_text(encoding="utf-8")))
            for cell in cells:
                for label in pythons:
                    cell[label] = []
            for round_ in range(repeats):
                for label, (python, env) in pythons.items():
                    progress = tmp / f"progress-{path.stem}-{label}-{round_}.json"     # each run starts afresh
                    seconds = run_notebook(solved, python, kernel_env(env, progress), folder)
                    for cell, s in zip(cells, seconds):
                        if s is not None:
                            cell[label].append(s)
            row = {"notebook": path.name, "cells": cells}
            for label in pythons:
                row[label + "_total_s"] = round(sum(statistics.median(c[label]) for c in cells if c[label]), 2)
            log(f"  notebook {path.name}: " + ", ".join(f"{label} {row[label + '_total_s']} s" for label in pythons))
            rows.append(row)
    return rows


__all__ = ["code_cells", "notebooks", "run_notebook", "solve", "time_cells"]
