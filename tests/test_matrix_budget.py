"""Every notebook cell and every lab change within its budget of matrix work: counted, never timed.

In the browser NumPy has no BLAS, and the matrix products are what makes a cell or a lab slow
there. ``benchmarks/flops.py`` counts their floating-point operations exactly (2·n·k·m for an
(n, k) by (k, m) product), per cell of each solved notebook (conftest's ``solved_run``, shared
with tests/test_notebooks.py) and per change of every lab (its first visits and its updates,
the labs benchmark's sweep). The budgets are in ``benchmarks/budget.json``, derived by
``./course bench`` from the targets (a cell ≤ 2 s, a first visit ≤ 100 ms, an update ≤ one frame)
through the measured no-BLAS throughput and the WebAssembly factor: the most matrix work that
fits in each target under the browser estimate.

What is over its budget today is listed, with its count, in ``tests/matrix_work_over_budget.json``.
A listed cell or lab may not do more work than listed, and once it fits its budget it must leave
the list; anything not listed must fit. So the bar cannot drift: no change brings back a slow
cell without a test failing, and no fix goes unrecorded.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import CONTENT, ROOT, notebooks
from engine.core.notebooks import cell_number

BUDGET = json.loads((ROOT / "benchmarks" / "budget.json").read_text(encoding="utf-8"))
OVER = json.loads((Path(__file__).parent / "matrix_work_over_budget.json").read_text(encoding="utf-8"))
NOTEBOOKS = notebooks()


TARGET_S = {"cell": BUDGET["targets"]["cell_s"], "first_visit": BUDGET["targets"]["first_visit_ms"] / 1000,
            "update": BUDGET["targets"]["update_ms"] / 1000}
WHAT = {"cell": "a cell", "first_visit": "a lab's first visit", "update": "a lab's update"}


def work_of(by_type):
    """{dtype: operations} of counted work ({dtype: [operations, seconds]}), types with none left out."""
    return {k: int(v[0] if isinstance(v, (list, tuple)) else v) for k, v in by_type.items()
            if (v[0] if isinstance(v, (list, tuple)) else v)}


def _mflop(work):
    return " and ".join(f"{v / 1e6:,.0f} MFLOP in {k}" for k, v in sorted(work.items())) or "none"


def verdicts(name, work, kind, listed):
    """The problems with one thing's matrix work ({dtype: operations}) against the budget of its
    ``kind`` and its entry in the list ({dtype: operations}, or None if unlisted)."""
    from benchmarks.browser_estimate import share

    budget = BUDGET["budgets"][kind]
    used = share(work, budget)
    estimate = f"about {used * TARGET_S[kind]:.2f} s in the browser's estimate, target {TARGET_S[kind]:g} s"
    if used > 1 and listed is None:
        return [f"{name} does {_mflop(work)} of matrix products, {used:.0%} of the budget of {WHAT[kind]} "
                f"({' or '.join(f'{v / 1e6:,.0f} MFLOP in {k}' for k, v in sorted(budget.items()))}; "
                f"{estimate}): make it do less (see docs/performance.md)"]
    if listed is not None and any(v > listed.get(k, 0) for k, v in work.items()):
        return [f"{name} does {_mflop(work)} of matrix products, more than the {_mflop(listed)} it is allowed "
                f"in tests/matrix_work_over_budget.json ({estimate})"]
    if listed is not None and used <= 1:
        return [f"{name} now fits its budget ({used:.0%} of it): take it off tests/matrix_work_over_budget.json"]
    return []


# ---------------------------------------------------------------- the budgets themselves

def test_the_budgets_are_the_targets_through_the_measured_throughput_and_factor():
    from benchmarks.browser_estimate import budgets

    assert BUDGET["budgets"] == budgets(BUDGET["no_blas_flops_per_s_by_type"], BUDGET["factor"])
    assert BUDGET["targets"] == {"cell_s": 2.0, "first_visit_ms": 100.0, "update_ms": 16.7}
    assert 1 <= BUDGET["factor"] < 10
    assert {"float32", "float64"} <= set(BUDGET["no_blas_flops_per_s_by_type"])
    assert all(1e7 < rate < 1e11 for rate in BUDGET["no_blas_flops_per_s_by_type"].values())


def test_the_list_of_what_is_over_budget_names_real_cells_and_labs():
    from benchmarks.cells import code_cells
    from benchmarks.labs import all_labs

    ids = {nb.name: {c["id"] for c in code_cells(json.loads(nb.read_text(encoding="utf-8")))} for nb in NOTEBOOKS}
    for notebook, cells in OVER["cells"].items():
        assert notebook in ids, f"{notebook} is not a notebook of the course"
        for cell_id in cells:
            assert cell_id in ids[notebook], f"{notebook} has no code cell with id {cell_id}"
    labs = all_labs()
    for lab, visits in OVER["labs"].items():
        assert lab in labs and set(visits) <= {"first_visit", "update"}, lab


def test_a_cell_over_its_budget_is_named_with_its_number_and_the_work_it_does():
    cell = BUDGET["budgets"]["cell"]
    triple = {"float32": 3 * cell["float32"]}
    name = "05_trained_model.ipynb cell 45 (shown as [21] after Run All: `settings = ...`)"
    (found,) = verdicts(name, triple, "cell", None)
    assert found.startswith(f"{name} does {3 * cell['float32'] / 1e6:,.0f} MFLOP in float32 of matrix products, "
                            "300% of the budget of a cell (")
    assert found.endswith("; about 6.00 s in the browser's estimate, target 2 s): make it do less "
                          "(see docs/performance.md)")
    assert "more than the" in verdicts(name, triple, "cell", {"float32": 2 * cell["float32"]})[0]
    assert "take it off" in verdicts(name, {"float32": cell["float32"] // 2}, "cell", triple)[0]
    assert verdicts(name, triple, "cell", triple) == [] == verdicts(name, {"float32": 1}, "cell", None)
    # float64 work counts against float64's own budget
    assert verdicts(name, {"float64": cell["float64"] + 1}, "cell", None)
    assert not verdicts(name, {"float64": cell["float64"]}, "cell", None)


# ---------------------------------------------------------------- the count

COUNTED = r"""
import json, sys
from benchmarks import flops
count = flops.install()
import numpy as np
from lib import attention                       # a module of the course, compiled with `@` counted
rng = np.random.default_rng(0)
a, b, v = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=3)
x, W = rng.normal(size=(6, 8)), rng.normal(size=(8, 8))
cases = {
    "np.matmul": lambda: np.matmul(a, b), "np.dot": lambda: np.dot(a, b),
    "np.einsum": lambda: np.einsum("ij,jk->ik", a, b), "matrix @ vector": lambda: np.dot(b.T, v),
    "np.tensordot": lambda: np.tensordot(a, b, axes=1), "np.inner": lambda: np.inner(a, b.T),
    "np.vdot": lambda: np.vdot(v, v), "np.linalg.multi_dot": lambda: np.linalg.multi_dot([a, b, b.T]),
    "lib.attention.attention": lambda: attention.attention(x, W, W, W, W, heads=2),
}

def cell(source):                               # as IPython runs a cell, with the same rewrite
    import ast
    namespace = {"a": a, "b": b}
    exec(compile(flops.Rewrite().visit(ast.parse(source)), "<cell>", "exec"), namespace)
    return namespace["r"]

cases.update({"a @ b in a cell": lambda: cell("r = a @ b"), "a.dot(b) in a cell": lambda: cell("r = a.dot(b)"),
              "a @= b in a cell": lambda: cell("r = a.copy()\nr @= b")})
out = {}
for name, call in cases.items():
    count.reset()
    result = call()
    out[name] = {"flops": count.flops, "products": count.products, "sum": float(np.sum(result))}
print(json.dumps(out))
"""


def test_every_kind_of_matrix_product_is_counted_and_computes_the_same(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", COUNTED], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    expected = {"np.matmul": 2 * 5 * 3 * 4, "np.dot": 2 * 5 * 3 * 4, "a @ b in a cell": 2 * 5 * 3 * 4,
                "a.dot(b) in a cell": 2 * 5 * 3 * 4, "a @= b in a cell": 2 * 5 * 3 * 4,
                "np.einsum": 2 * 5 * 3 * 4, "matrix @ vector": 2 * 4 * 3, "np.tensordot": 2 * 5 * 3 * 4,
                "np.inner": 2 * 5 * 3 * 4, "np.vdot": 2 * 3, "np.linalg.multi_dot": 2 * 5 * 3 * 4 + 2 * 5 * 4 * 3,
                # four (6, 8) x (8, 8) projections; per head of 4 numbers, scores (6, 4) x (4, 6) and
                # weights (6, 6) x (6, 4)
                "lib.attention.attention": 4 * (2 * 6 * 8 * 8) + 2 * (2 * 6 * 4 * 6 + 2 * 6 * 6 * 4)}
    assert {name: r["flops"] for name, r in found.items()} == expected
    rng = np.random.default_rng(0)                 # the same products, uncounted, give the same numbers
    a, b, v = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=3)
    for name in ("np.matmul", "a @ b in a cell", "a.dot(b) in a cell", "a @= b in a cell"):
        assert found[name]["sum"] == pytest.approx(float(np.sum(a @ b)), rel=1e-12)
    assert found["np.vdot"]["sum"] == pytest.approx(float(v @ v), rel=1e-12)


# ---------------------------------------------------------------- every cell

@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.relative_to(CONTENT).as_posix() for p in NOTEBOOKS])
def test_every_cell_stays_within_its_budget_of_matrix_work(notebook, solved_run):
    run = solved_run(notebook)
    from benchmarks.cells import code_cells

    shipped = code_cells(json.loads(notebook.read_text(encoding="utf-8")))
    counted = {c["id"]: c for c in run.cells}
    missing = [c["cell"] for c in shipped if c["id"] not in counted]
    assert not missing, (f"the solved run of {notebook.name} counted no work for cells {missing} (did it stop? "
                         + run.result.stdout[-2000:] + ")")
    listed = OVER["cells"].get(notebook.name, {})
    problems = []
    for cell in run.cells:
        name = (f"{notebook.name} {cell_number(cell['position'] - 1)} (shown as [{cell['cell']}] after Run All: "
                f"`{cell['first_line']}`)")
        problems += verdicts(name, work_of(cell["by_type"]), "cell", listed.get(cell["id"], {}).get("flops"))
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- every lab

@pytest.fixture(scope="module")
def lab_counts():
    """Every lab's first visits and updates, counted in a fresh process (the labs benchmark's short sweep)."""
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "benchmarks.flops", "labs", "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])["labs"]


def test_every_lab_is_counted(lab_counts):
    from benchmarks.labs import all_labs

    assert [row["lab"] for row in lab_counts] == list(all_labs())
    assert all(row["first_visit"] and row["update"] for row in lab_counts), \
        [row["lab"] for row in lab_counts if not (row["first_visit"] and row["update"])]


@pytest.mark.parametrize("visit", ["first_visit", "update"])
def test_every_lab_change_stays_within_its_budget_of_matrix_work(lab_counts, visit):
    from benchmarks.browser_estimate import share

    budget = BUDGET["budgets"][visit]
    problems = []
    for row in lab_counts:
        worst = max(row[visit], key=lambda change: share(work_of(change["by_type"]), budget))
        name = (f"the {row['lab']} lab's {visit.replace('_', ' ')} of {worst['control']} = {worst['value']}")
        problems += verdicts(name, work_of(worst["by_type"]), visit, OVER["labs"].get(row["lab"], {}).get(visit))
    assert not problems, "\n".join(problems)
