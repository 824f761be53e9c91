"""No cell of a notebook changes what an earlier cell's code means when it runs again.

A learner runs a notebook from the top (Run All), then goes back to an exercise and runs its cell,
its check and the cell that tries it. Those cells then see every name as the LAST cell that bound
it left it, not as the cells above them did. So, in every shipped notebook:

- no code cell after an exercise's cell binds the exercise's name (an import, a ``def`` or an
  assignment): the check would judge that object, not the learner's function;
- no code cell binds a top-level name that an earlier code cell reads without binding it itself
  (it relies on a cell above it): run again, the earlier cell would read the later cell's value.
  A package imported again (``import lib.x`` after ``import lib.y``) is the same object.

Each cell is read with :mod:`ast` (IPython's ``%`` and ``!`` lines left out). A failure names the
notebook, the name and the cells (numbered from 1, as JupyterLab counts, markdown included).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import notebooks
from engine.core.notebooks import _source, exercise_id, read
from engine.core.registry import get_exercise

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _tree(cell: dict) -> ast.Module | None:
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in _source(cell).splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _top_level(node: ast.AST):
    """The nodes that run in the cell's own (module) scope: not inside a function, a class, a
    lambda or a comprehension (those have scopes of their own)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, _SCOPES):
            continue
        yield from _top_level(child)


def bindings(tree: ast.Module) -> dict[str, str]:
    """The names the cell binds at top level: {name: how}, how being "import MODULE" for
    ``import a.b`` (which binds ``a`` to the package itself) and "bound" otherwise."""
    found: dict[str, str] = {}
    for node in _top_level(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = "bound"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                found[alias.asname or top] = "bound" if alias.asname else f"import {top}"
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = "bound"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found[node.id] = "bound"
    return found


def reads_from_above(tree: ast.Module) -> set[str]:
    """The names the cell reads and binds nowhere in itself (not even as a parameter or a loop or
    comprehension variable): those it takes from cells above."""
    loaded, own = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else own).add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            own.update((a.asname or a.name).split(".")[0] for a in node.names)
    return loaded - own


def code_cells(nb: dict) -> list[tuple[int, dict, ast.Module]]:
    return [(i, cell, tree) for i, cell in enumerate(nb["cells"])
            if cell.get("cell_type") == "code" and (tree := _tree(cell)) is not None]


def exercise_names_bound_later(nb: dict) -> list[str]:
    """Every code cell after an exercise's cell that binds the exercise's name."""
    cells = code_cells(nb)
    problems = []
    for at, (i, cell, _tree_) in enumerate(cells):
        ex_id = exercise_id(cell)
        if ex_id is None:
            continue
        name = get_exercise(ex_id).name
        for j, _cell, tree in cells[at + 1:]:
            if name in bindings(tree):
                problems.append(f"`{name}`, exercise {ex_id!r} of cell {i + 1}, is bound again by cell {j + 1}")
    return problems


def names_rebound_under_earlier_readers(nb: dict) -> list[str]:
    """Every top-level name a code cell reads from above that a later code cell binds again
    (a package imported again, ``import lib.x`` after ``import lib.y``, is the same object)."""
    cells = [(i, bindings(tree), reads_from_above(tree)) for i, _cell, tree in code_cells(nb)]
    problems = []
    for at, (i, _bound, reads) in enumerate(cells):
        for name in sorted(reads):
            earlier = [bound[name] for _j, bound, _r in cells[:at] if name in bound]
            if not earlier:
                continue
            later = [j + 1 for j, bound, _r in cells[at + 1:]
                     if name in bound and not (bound[name].startswith("import ") and bound[name] == earlier[-1])]
            if later:
                problems.append(f"`{name}`, read by cell {i + 1}, is bound again by cell(s) {later}")
    return problems


NOTEBOOKS = notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_cell_after_an_exercise_binds_the_exercise_s_name(path: Path):
    assert exercise_names_bound_later(read(path)) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_cell_binds_again_a_name_an_earlier_cell_reads(path: Path):
    assert names_rebound_under_earlier_readers(read(path)) == []


def test_the_readers_and_binders_are_found_as_a_kernel_runs_them():
    """The parts the checks rest on: a cell's top-level bindings (not a function's locals or a
    comprehension's variable) and the names it takes from above."""
    tree = ast.parse("import lib.norm\nfrom lib.norm import rms_norm\nfor t in ts:\n    pass\n"
                     "y = [k for k in ks]\ndef g(a):\n    b = a\n    return b + z\n")
    assert bindings(tree) == {"lib": "import lib", "rms_norm": "bound", "t": "bound", "y": "bound", "g": "bound"}
    assert reads_from_above(tree) == {"ts", "ks", "z"}
    nb = {"cells": [{"cell_type": "code", "source": "W = 1"},
                    {"cell_type": "code", "source": "print(W)"},
                    {"cell_type": "code", "source": "W = 2"},
                    {"cell_type": "code", "source": "def rms_norm(x):\n    return x",
                     "metadata": {"tags": ["exercise"], "course": {"exercise": "rms-norm"}}},
                    {"cell_type": "code", "source": "from lib.norm import rms_norm"}]}
    assert names_rebound_under_earlier_readers(nb) == ["`W`, read by cell 2, is bound again by cell(s) [3]"]
    assert exercise_names_bound_later(nb) == ["`rms_norm`, exercise 'rms-norm' of cell 4, is bound again by cell 5"]
