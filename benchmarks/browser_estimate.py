"""The browser's NumPy: every lab and every notebook cell under OpenBLAS and without BLAS, and
what a learner would wait in the browser, judged against the targets.

The browser's kernel runs NumPy without BLAS (:mod:`benchmarks.noblas` builds the same, once).
In one run, taking turns, this section times under both NumPys (one BLAS thread for OpenBLAS,
as the browser's kernel has one thread):

* every lab's first visits and updates (:func:`benchmarks.labs.visits`: each value of its sweep
  set for the first time, then once more), each lab in a fresh process of each interpreter,
  ``LAB_RUNS`` times by turns; each figure is the least over the runs (the first visits' slowest
  and the updates' median of one run each): other work on the machine only ever adds time, and
  on a shared machine it comes and goes for seconds at a time;
* every code cell of every notebook, solved and run top to bottom in a fresh kernel of each
  interpreter (:mod:`benchmarks.cells`), ``repeats`` times (the median is kept);
* the matrix work of each cell and each lab change, counted (:mod:`benchmarks.flops`), and,
  under the no-BLAS NumPy, each matrix product timed as well: the *no-BLAS throughput* is their
  floating-point operations over their seconds, from which the budgets of
  ``tests/test_matrix_budget.py`` are derived (``benchmarks/budget.json``): the most matrix work
  that fits in a target under the browser estimate, for each number type (float64 products run
  several times slower than float32 ones here, partly because the course's largest products are
  float64).

**The browser estimate** of a figure is its no-BLAS time × the larger WebAssembly factor of the
``wasm`` section (pure Python or compiled code, whichever slows down more). The targets, on the
estimate: every cell ≤ :data:`CELL_TARGET_S` (its median over the runs), every first visit of a
lab's settings ≤ :data:`FIRST_VISIT_TARGET_MS` (judged on the slowest: a learner meets each one
once) and its updates ≤ :data:`UPDATE_TARGET_MS` (one frame at 60 Hz; judged on the median, as
the labs table judges them).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from . import cells, flops, noblas, training
from .labs import TARGET_MS, select

CELL_TARGET_S = 2.0
FIRST_VISIT_TARGET_MS = 100.0
UPDATE_TARGET_MS = TARGET_MS
LAB_RUNS = 3                 # fresh processes per lab and interpreter (1 with --quick)
BUDGET = Path(__file__).resolve().parent / "budget.json"
ROOT = Path(__file__).resolve().parent.parent


def _json_from(command: list, env: dict) -> dict:
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def time_labs(pythons: dict, names, quick: bool, log=print, runs: int | None = None) -> list:
    """[{"lab", "runs", label: {"first_visit", "update"}}]: each lab in ``runs`` fresh processes
    of each interpreter, by turns (:data:`LAB_RUNS`, 1 if ``quick``); for each interpreter the
    first visits of the run whose slowest is least, and the updates of the run whose median is."""
    runs = (1 if quick else LAB_RUNS) if runs is None else runs
    rows = []
    for name in select(names):
        found = {label: [] for label in pythons}
        for _run in range(runs):
            for label, (python, env) in pythons.items():
                command = [str(python), "-c", "import json, sys; from benchmarks.labs import visits; "
                           f"print(json.dumps(visits([{name!r}], quick={quick!r}, log=lambda _t: None)))"]
                found[label].append(_json_from(command, {**env, "MPLBACKEND": "Agg"})[0])
        row = {"lab": name, "runs": runs}
        for label, results in found.items():
            first = min(results, key=lambda r: r["first_visit_slowest_ms"])
            update = min(results, key=lambda r: r["update"]["median_ms"])
            row[label] = {"first_visit": first["first_visit"], "first_visit_slowest_ms": first["first_visit_slowest_ms"],
                          "update": update["update"], "update_slowest_ms": update["update_slowest_ms"]}
        log(f"  lab {name}: " + "; ".join(f"{label} first visit {row[label]['first_visit']['median_ms']} ms, update "
                                         f"{row[label]['update']['median_ms']} ms" for label in pythons))
        rows.append(row)
    return rows


def time_training(pythons: dict, quick: bool, factor: float | None) -> dict:
    """{label: benchmarks.training.measure in a fresh process of that interpreter, "estimate": the
    no-BLAS one as the browser would see it}."""
    found = {}
    for label, (python, env) in pythons.items():
        command = [str(python), "-m", "benchmarks.training"] + (["--quick"] if quick else [])
        found[label] = _json_from(command, {**env, "MPLBACKEND": "Agg"})
    return {**found, "estimate": training.judge(found, factor)}


def count_labs(python, env: dict, names, quick: bool, timing: bool) -> dict:
    """:func:`benchmarks.flops.count_labs` in a fresh process of ``python``."""
    command = [str(python), "-m", "benchmarks.flops", "labs"] + (["--quick"] if quick else []) \
        + (["--time"] if timing else []) + (["--labs", ",".join(names)] if names else [])
    return _json_from(command, {**env, "MPLBACKEND": "Agg"})


def count_cells(python, env: dict, names, timing: bool) -> dict:
    """{notebook: flops.read_cells rows}: every solved notebook counted in a kernel of ``python``."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-count-") as tmp:
        tmp = Path(tmp)
        for path in cells.notebooks(names):
            folder = tmp / path.stem                       # alone, with no progress (benchmarks.cells)
            folder.mkdir()
            solved = cells.solve(path, folder)
            out[path.name] = flops.count_notebook(solved, python, cells.kernel_env(env, folder / "progress.json"),
                                                  folder, timing=timing)
    return out


def throughput(lab_counts: dict, cell_counts: dict) -> dict:
    """{"flops_per_s", "flops", "seconds", "by_type": {dtype: flops per s}}: the no-BLAS matrix
    products of every lab change and every cell, timed one by one."""
    snapshots = [c for row in lab_counts["labs"] for v in ("first_visit", "update") for c in row[v]]
    snapshots += [c for rows in cell_counts.values() for c in rows]
    by_type = flops.totals_by_type(snapshots)
    total_flops = sum(f for f, _s in by_type.values())
    total_seconds = sum(s for _f, s in by_type.values())
    return {"flops_per_s": round(total_flops / total_seconds) if total_seconds else None,
            "flops": total_flops, "seconds": round(total_seconds, 3),
            "by_type": {k: round(f / s) for k, (f, s) in by_type.items() if s}}


def budgets(rates: dict, factor: float) -> dict:
    """The most matrix work (floating-point operations) that fits in each target in the browser,
    estimated as the tables estimate a time: the target's time ÷ the WebAssembly factor × the
    no-BLAS throughput, for each number type (``rates``: {dtype: operations per second})."""
    seconds = {"cell": CELL_TARGET_S, "first_visit": FIRST_VISIT_TARGET_MS / 1000, "update": UPDATE_TARGET_MS / 1000}
    return {kind: {dtype: int(target / factor * rate) for dtype, rate in sorted(rates.items())}
            for kind, target in seconds.items()}


def share(by_type: dict, budget: dict) -> float:
    """The fraction of ``budget`` ({dtype: operations}) that matrix work ``by_type`` ({dtype:
    operations, or [operations, seconds]}) uses; a number type without a budget of its own (an
    integer product) counts against the smallest."""
    smallest = min(budget.values())
    return sum((work[0] if isinstance(work, (list, tuple)) else work) / budget.get(dtype, smallest)
               for dtype, work in by_type.items())


def judged_ms(timings: dict, visit: str) -> float | None:
    """The time a target judges: the slowest first visit (a learner meets each once), the median update."""
    return timings.get("first_visit_slowest_ms") if visit == "first_visit" else timings["update"]["median_ms"]


def _median_ms(values) -> float | None:
    return round(1000 * statistics.median(values), 2) if values else None


def judge(result: dict, factor: float | None) -> dict:
    """Add the browser estimates and the verdicts to a run's rows (in place); the misses."""
    missed = []
    for row in result["labs"]:
        for visit, target in (("first_visit", FIRST_VISIT_TARGET_MS), ("update", UPDATE_TARGET_MS)):
            judged = judged_ms(row["noblas"], visit)
            estimate = round(judged * factor, 2) if factor and judged is not None else None
            row[visit + "_estimate_ms"] = estimate
            row[visit + "_meets_target"] = None if estimate is None else estimate <= target
            if estimate is not None and estimate > target:
                missed.append({"lab": row["lab"], "what": visit, "estimate_ms": estimate})
    for notebook in result["cells"]:
        for cell in notebook["cells"]:
            for label in ("openblas", "noblas"):
                cell[label + "_ms"] = _median_ms(cell.get(label))
            estimate = round(cell["noblas_ms"] * factor, 1) if factor and cell["noblas_ms"] is not None else None
            cell["estimate_ms"] = estimate
            cell["meets_target"] = None if estimate is None else estimate <= CELL_TARGET_S * 1000
            if estimate is not None and estimate > CELL_TARGET_S * 1000:
                missed.append({"notebook": notebook["notebook"], "cell": cell["cell"], "estimate_ms": estimate})
    return missed


def run(factor: float | None = None, quick: bool = False,
        labs=None, notebooks=None, wheel=None, log=print) -> dict:
    """The section's results, or {"skipped": why} where no NumPy without BLAS can be had."""
    try:
        python, found = noblas.ensure(wheel, log)
    except noblas.Unavailable as why:
        return {"skipped": str(why)}
    env = noblas.environment()
    pythons = {"openblas": (Path(sys.executable), env), "noblas": (python, env)}
    out = {"numpy": {"openblas": noblas.describe(sys.executable), "noblas": found},
           "factor": factor, "quick": quick,
           "targets": {"cell_s": CELL_TARGET_S, "first_visit_ms": FIRST_VISIT_TARGET_MS,
                       "update_ms": UPDATE_TARGET_MS}}
    log("  labs under both NumPys (first visits, then updates)...")
    out["labs"] = time_labs(pythons, labs, quick, log)
    log("  the live-training lab's steps and frames under both NumPys...")
    out["live_training"] = time_training(pythons, quick, factor)
    log("  every notebook cell under both NumPys...")
    out["cells"] = cells.time_cells(pythons, notebooks, repeats=1 if quick else 3, log=log)
    log("  matrix work counted, and timed under the no-BLAS NumPy...")
    lab_counts = count_labs(python, env, labs, quick, timing=True)
    cell_counts = count_cells(python, env, notebooks, timing=True)
    _attach_counts(out, lab_counts, cell_counts)
    out["throughput"] = throughput(lab_counts, cell_counts)
    if out["throughput"]["by_type"] and factor:
        out["budgets"] = budgets(out["throughput"]["by_type"], factor)
    out["missed"] = judge(out, factor)
    out["all_meet_targets"] = not out["missed"] and out["live_training"]["estimate"]["meets_target"] if factor else None
    return out


def _attach_counts(out: dict, lab_counts: dict, cell_counts: dict) -> None:
    """Each lab row gets its largest counted first visit and update; each cell its count."""
    counted = {row["lab"]: row for row in lab_counts["labs"]}
    for row in out["labs"]:
        for visit in ("first_visit", "update"):
            changes = counted.get(row["lab"], {}).get(visit, [])
            row[visit + "_flops_max"] = max((c["flops"] for c in changes), default=0)
    for notebook in out["cells"]:
        by_id = {c["id"]: c for c in cell_counts.get(notebook["notebook"], [])}
        for cell in notebook["cells"]:
            cell["flops"] = by_id.get(cell["id"], {}).get("flops")


def budget_file(section: dict, started: str) -> dict:
    """What ``benchmarks/budget.json`` holds: the budgets and how they were derived."""
    return {"derived": f"./course bench (not --quick), the run of {started} UTC",
            "targets": section["targets"], "factor": section["factor"],
            "no_blas_flops_per_s": section["throughput"]["flops_per_s"],
            "no_blas_flops_per_s_by_type": section["throughput"]["by_type"],
            "budgets": section["budgets"]}


__all__ = ["BUDGET", "budget_file", "budgets", "judge", "run", "share", "throughput"]
