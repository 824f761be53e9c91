"""Counting the floating-point work of matrix products, per notebook cell and per lab change.

A matrix product of an (n, k) and a (k, m) array costs 2·n·k·m floating-point operations (a
multiplication and an addition for each of the k terms of each of the n·m results); a stack of
products costs that for each. In the browser, where NumPy has no BLAS, that work is most of what
makes a cell or a lab slow, and it can be counted exactly, with no clock: so a test can hold every
cell and every lab change to a budget that no machine's speed or load moves.

:func:`install` makes every matrix product the course computes count itself, in this process:

* ``a @ b`` in the course's modules (``lib``, ``exercises``, ``labs``, compiled from their source
  with each ``@`` turned into a call of :func:`matmul`, a Python function that computes the same
  product) and in the cells IPython runs (the same change, as one of IPython's
  ``ast_transformers``);
* ``np.matmul``, ``np.dot``, ``np.einsum``, ``np.tensordot``, ``np.inner``, ``np.vdot`` and
  ``np.linalg.multi_dot``, replaced in NumPy's namespaces by functions that call the originals;
  and ``x.dot(y)`` when ``x`` is an array.

Each product adds ``2 · k · (size of the result)`` to :data:`COUNT` (k, the length summed over;
for ``einsum``, NumPy's own count of its naive evaluation). In IPython, each cell's total is
written as one JSON line to a log file after it runs (its source, the work, the number of
products, the largest one). What is not counted: products computed by code compiled from a
string at run time (``exec``), and work that is not a matrix product (a softmax, a norm), which
the budgets leave room for.

    python -m benchmarks.flops labs [--labs a,b] [--quick] [--time]
        every lab's first visits and updates, counted (JSON on stdout); --time also times each
        product, for the throughput the budgets are derived with
"""

from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import json
import operator
import re
import sys
import time
from pathlib import Path

PACKAGES = ("lib", "exercises", "labs")
NAME = "__course_flops__"                     # the name the rewritten code calls, in builtins


class Count:
    """The running totals: ``flops`` (floating-point operations), ``products``, ``largest`` (the
    flops of the largest product), and, when timing, ``seconds`` spent in the products."""

    def __init__(self, timing: bool = False):
        self.timing = timing
        self.reset()

    def reset(self) -> None:
        self.flops, self.products, self.largest, self.seconds = 0, 0, 0, 0.0
        self.by_type: dict = {}

    def snapshot(self) -> dict:
        return {"flops": self.flops, "products": self.products, "largest": self.largest,
                "seconds": round(self.seconds, 6), "by_type": dict(self.by_type)}

    def add(self, flops: int, dtype, seconds: float = 0.0) -> None:
        self.flops += flops
        self.products += 1
        self.largest = max(self.largest, flops)
        self.seconds += seconds
        key = str(dtype)
        flops_then, seconds_then = self.by_type.get(key, (0, 0.0))
        self.by_type[key] = (flops_then + flops, seconds_then + seconds)


COUNT = Count()
_np = None                       # numpy, once installed
_ORIGINAL: dict = {}             # (namespace name, function name) -> the original function


def _is_array(x) -> bool:
    return isinstance(x, (_np.ndarray, _np.generic))


def _work(a, result) -> int:
    """2 · (the length summed over: a's last axis) · (the result's size)."""
    k = a.shape[-1] if getattr(a, "ndim", 0) >= 1 else 1
    return 2 * int(k) * int(_np.size(result))


def _timed(function, *args, **kwargs):
    if not COUNT.timing:
        return function(*args, **kwargs), 0.0
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def _counted(operation, a, b, *rest, **kwargs):
    """``operation(a, b, ...)``, its work added when both operands and the result are arrays."""
    result, seconds = _timed(operation, a, b, *rest, **kwargs)
    if _is_array(a) and _is_array(b) and _is_array(result):
        COUNT.add(_work(_np.asarray(a), result), _np.result_type(a, b), seconds)
    return result


def matmul(a, b):
    """``a @ b``, counted: what the rewritten ``@`` calls."""
    return _counted(operator.matmul, a, b)


def method_dot(x, *args, **kwargs):
    """``x.dot(...)``, counted when ``x`` is an array (anything else's ``dot`` is called as it is)."""
    if isinstance(x, _np.ndarray) and args:
        return _counted(_ORIGINAL[("numpy", "dot")], x, *args, **kwargs)
    return x.dot(*args, **kwargs)


def _wrap_binary(original):
    def counted(a, b, *rest, **kwargs):
        return _counted(original, a, b, *rest, **kwargs)
    counted.__name__ = counted.__qualname__ = getattr(original, "__name__", "product")
    counted.__doc__ = getattr(original, "__doc__", None)
    counted.__wrapped__ = original
    return counted


def _tensordot(original):
    def tensordot(a, b, *rest, **kwargs):
        result, seconds = _timed(original, a, b, *rest, **kwargs)
        if _is_array(a) and _is_array(b) and _is_array(result) and _np.size(result):
            summed = (_np.size(a) * _np.size(b) / _np.size(result)) ** 0.5
            COUNT.add(int(round(2 * summed * _np.size(result))), _np.result_type(a, b), seconds)
        return result
    tensordot.__wrapped__ = original
    return tensordot


def _vdot(original):
    def vdot(a, b):
        result, seconds = _timed(original, a, b)
        COUNT.add(2 * int(_np.size(a)), _np.result_type(a, b), seconds)
        return result
    vdot.__wrapped__ = original
    return vdot


_NAIVE = re.compile(r"Naive FLOP count:\s*([0-9.eE+]+)")


def _einsum(original, path):
    def einsum(*operands, **kwargs):
        result, seconds = _timed(original, *operands, **kwargs)
        arrays = [o for o in operands if not isinstance(o, str)]
        if arrays and all(_is_array(o) for o in arrays):
            try:
                found = _NAIVE.search(path(*operands, optimize="greedy")[1])
                COUNT.add(int(float(found.group(1))), _np.result_type(*arrays), seconds)
            except Exception:  # noqa: BLE001 - an odd call (a sublist form): counted as nothing
                pass
        return result
    einsum.__wrapped__ = original
    return einsum


def _multi_dot(original):
    def multi_dot(arrays, *, out=None):
        arrays = list(arrays)
        result = arrays[0]
        for b in arrays[1:]:
            result = matmul(result, b)
        if out is not None:
            out[...] = result
            return out
        return result
    multi_dot.__wrapped__ = original
    return multi_dot


def _patch_numpy() -> None:
    global _np
    import numpy

    _np = numpy
    for name in ("matmul", "dot", "inner"):
        _ORIGINAL[("numpy", name)] = getattr(numpy, name)
        setattr(numpy, name, _wrap_binary(getattr(numpy, name)))
    _ORIGINAL[("numpy", "tensordot")] = numpy.tensordot
    numpy.tensordot = _tensordot(numpy.tensordot)
    _ORIGINAL[("numpy", "vdot")] = numpy.vdot
    numpy.vdot = _vdot(numpy.vdot)
    _ORIGINAL[("numpy", "einsum")] = numpy.einsum
    numpy.einsum = _einsum(numpy.einsum, numpy.einsum_path)
    _ORIGINAL[("numpy.linalg", "multi_dot")] = numpy.linalg.multi_dot
    numpy.linalg.multi_dot = _multi_dot(numpy.linalg.multi_dot)


# ---------------------------------------------------------------- rewriting `@`

class Rewrite(ast.NodeTransformer):
    """``a @ b`` -> ``__course_flops__.matmul(a, b)``; ``x.dot(y)`` -> ``__course_flops__.method_dot(x, y)``;
    ``a @= b`` -> ``a = __course_flops__.matmul(a, b)`` for a plain name."""

    @staticmethod
    def _call(name, args, like):
        func = ast.Attribute(ast.Name(NAME, ast.Load()), name, ast.Load())
        return ast.copy_location(ast.Call(func, args, []), like)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return self._call("matmul", [node.left, node.right], node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult) and isinstance(node.target, ast.Name):
            value = self._call("matmul", [ast.Name(node.target.id, ast.Load()), node.value], node)
            return ast.copy_location(ast.Assign([node.target], value), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "dot" and len(node.args) == 1 and not node.keywords:
            return self._call("method_dot", [func.value, node.args[0]], node)
        return node

    def visit_Module(self, node):
        self.generic_visit(node)
        return ast.fix_missing_locations(node)


class _Loader(importlib.machinery.SourceFileLoader):
    """Compiles the course's modules from their source, rewritten, never from cached bytecode
    (and writes none, so a normal run never meets a rewritten module)."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        tree = ast.parse(self.get_data(path), path)
        return compile(Rewrite().visit(tree), path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in PACKAGES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _Loader(fullname, spec.origin)
        return spec


# ---------------------------------------------------------------- per cell, in IPython

def _follow_cells(shell, log: Path) -> None:
    """After each cell, append {"source", "flops", "products", "largest", ...} to ``log``."""
    state = {"source": ""}

    def started(info=None):
        state["source"] = getattr(info, "raw_cell", "") or ""
        COUNT.reset()

    def finished(result=None):
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"source": state["source"], **COUNT.snapshot()}) + "\n")

    shell.ast_transformers.append(Rewrite())
    shell.events.register("pre_run_cell", started)
    shell.events.register("post_run_cell", finished)


def install(log: str | Path | None = None, timing: bool = False) -> Count:
    """Count every matrix product from now on (before the course's modules are imported), and,
    in IPython with a ``log`` file, each cell's total. Returns the running :class:`Count`."""
    if any(course in sys.modules for course in PACKAGES):
        raise RuntimeError("install() must run before lib, exercises or labs is imported: "
                           "modules imported before are not rewritten")
    COUNT.timing = timing
    sys.dont_write_bytecode = True
    _patch_numpy()
    setattr(builtins, NAME, sys.modules[__name__])
    sys.meta_path.insert(0, _Finder())
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and log is not None:
        _follow_cells(shell, Path(log))
    return COUNT


def startup_file(folder: Path, log: Path, timing: bool = False) -> Path:
    """Write an IPython profile into ``folder`` whose start-up installs the count, each cell's
    total going to ``log``; run a kernel with ``IPYTHONDIR=folder`` (and this checkout on its
    ``PYTHONPATH``) to count its cells."""
    startup = Path(folder) / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    path = startup / "00-count-matrix-work.py"
    path.write_text(f"from benchmarks import flops\nflops.install({str(log)!r}, timing={timing!r})\n",
                    encoding="utf-8")
    return path


def read_cells(log: Path, notebook: dict) -> list:
    """[{"cell": n, "id", "first_line", "flops", "products", "largest", ...}] for the notebook's code
    cells (n as JupyterLab shows it), matched in order with the cells logged by their source."""
    from .cells import code_cells

    logged = [json.loads(line) for line in Path(log).read_text(encoding="utf-8").splitlines() if line.strip()]
    sources = [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
               for c in notebook["cells"] if c["cell_type"] == "code"]
    out, at = [], 0
    for cell, source in zip(code_cells(notebook), sources):
        for i in range(at, len(logged)):
            if logged[i]["source"].strip() == source.strip():
                out.append({**cell, **{k: logged[i][k] for k in ("flops", "products", "largest", "seconds", "by_type")}})
                at = i + 1
                break
    return out


def count_notebook(solved: Path, python, env: dict, workdir: Path, timing: bool = False) -> list:
    """:func:`read_cells` of the solved notebook run top to bottom in a fresh kernel of ``python``
    with the count installed (and each product timed, with ``timing``)."""
    import tempfile

    from .cells import run_notebook

    with tempfile.TemporaryDirectory(prefix="bench-count-", dir=workdir) as tmp:
        tmp = Path(tmp)
        log = tmp / "cells.jsonl"
        startup_file(tmp / "ipython", log, timing=timing)
        run_notebook(solved, python, {**env, "IPYTHONDIR": str(tmp / "ipython")}, workdir)
        return read_cells(log, json.loads(Path(solved).read_text(encoding="utf-8")))


# ---------------------------------------------------------------- labs

def totals_by_type(snapshots) -> dict:
    """{dtype: [flops, seconds]} summed over counted snapshots."""
    out: dict = {}
    for snap in snapshots:
        for key, (flops, seconds) in snap["by_type"].items():
            then = out.setdefault(key, [0, 0.0])
            then[0] += flops
            then[1] += seconds
    return out


def count_labs(names=None, quick: bool = False) -> list:
    """[{"lab", "first_visit": [{"control", "value", "flops", ...}], "update": [...]}] for every
    lab (or those named): each change of :func:`benchmarks.labs.visit_sweep`, counted, with the
    drawing left out (it makes no matrix product)."""
    from . import labs

    rows = []
    for name, function in labs.select(names).items():
        def counted(_visit, control, value, change):
            COUNT.reset()
            took = change()
            return {"control": control, "value": repr(value), "took": took, **COUNT.snapshot()}

        done = labs.visit_sweep(function, counted, quick, views_mode="hold")
        rows.append({"lab": name, **{visit: [r for v, _c, _x, r in done if v == visit and r["took"]]
                                     for visit in ("first_visit", "update")}})
    return rows


def main(argv=None) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchmarks.flops", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["labs"])
    p.add_argument("--labs", help="comma-separated labs; default all")
    p.add_argument("--quick", action="store_true", help="the short sweep of values")
    p.add_argument("--time", action="store_true", help="time each product too")
    args = p.parse_args(argv)
    install(timing=args.time)
    import matplotlib
    matplotlib.use("Agg")
    rows = count_labs([n for n in (args.labs or "").split(",") if n], quick=args.quick)
    print(json.dumps({"labs": rows, "by_type": totals_by_type(c for r in rows for v in ("first_visit", "update")
                                                                for c in r[v])}))


if __name__ == "__main__":
    main()
