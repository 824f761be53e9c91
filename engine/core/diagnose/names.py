"""Causes the code itself shows, read from its text or from the error it raised: the Python loops
of a cell (where the exercise asks for none), ``np.max`` given two arrays (``np.maximum`` was
meant), a misspelt name (with the close name Python's own "Did you mean" would suggest)."""

from __future__ import annotations

import ast
import builtins
import linecache


def loops_in(func) -> list[tuple[int, str]]:
    """The Python loops of the cell that defined ``func`` (``for``, ``while``, comprehensions):
    (line number, the line) each, in order; [] when there is none or the source cannot be read."""
    code = getattr(func, "__code__", None)
    if code is None:
        return []
    lines = linecache.getlines(code.co_filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return []
    kinds = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
    found = sorted({node.lineno if not isinstance(node, ast.comprehension) else node.target.lineno
                    for node in ast.walk(tree) if isinstance(node, kinds)})
    return [(n, lines[n - 1].strip()) for n in found if 0 < n <= len(lines)]


BUILTIN_REDUCTIONS = {"sum": ("adds", "its rows together", "x.sum(axis=0)", ".sum(axis=...)"),
                      "max": ("compares", "its rows with each other", "the rows themselves", ".max(axis=...)"),
                      "min": ("compares", "its rows with each other", "the rows themselves", ".min(axis=...)")}


def builtin_reduction(func) -> str | None:
    """For code that calls Python's own ``sum``, ``max`` or ``min`` (not NumPy's) in the function:
    what it does to an array of rows, and NumPy's reduction that takes an axis."""
    code = getattr(func, "__code__", None)
    if code is None or code.co_name == "<lambda>":
        return None
    lines = linecache.getlines(code.co_filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILTIN_REDUCTIONS \
                and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], (ast.List, ast.Tuple,
                                                                                                 ast.GeneratorExp)):
            name = node.func.id
            verb, what, like, method = BUILTIN_REDUCTIONS[name]
            return (f"Your code calls Python's own `{name}` (line {node.lineno}): given an array of rows it "
                    f"{verb} {what}, down the first axis ({like}), never the numbers within each row. "
                    f"NumPy's `{method}` says which axis to work along.")
    return None


# NumPy's reductions whose second positional argument is an axis, and what the learner who
# passes two arrays to one of them meant.
PAIRWISE = {"max": "maximum", "amax": "maximum", "min": "minimum", "amin": "minimum"}


def reduction_for_pairwise(line: str) -> str | None:
    """The hint for ``np.max(a, b)`` (or min) with two arrays, on the line ``line``: NumPy reads
    ``b`` as an axis; the element-by-element larger of two arrays is ``np.maximum``."""
    try:
        tree = ast.parse(line.strip().removeprefix("return ").strip() or "0")
    except SyntaxError:
        try:
            tree = ast.parse(line.split("=", 1)[-1].strip())
        except SyntaxError:
            return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in PAIRWISE and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("np", "numpy") and len(node.args) >= 2
                and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, int)
                         and not isinstance(node.args[0], ast.Constant))):
            name, pairwise = node.func.attr, PAIRWISE[node.func.attr]
            return (f"`np.{name}` takes one array and gives its {'largest' if 'max' in name else 'smallest'} "
                    f"number (its second argument is an axis). The {'larger' if 'max' in name else 'smaller'} "
                    f"of two arrays, number by number, is `np.{pairwise}`.")
    return None


MOVE_COST, CASE_COST = 2, 1       # Python's own costs for its "Did you mean" (a case flip is cheaper)


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with Python's costs: an insertion, a deletion or another letter
    costs MOVE_COST, the same letter in the other case CASE_COST."""
    row = [j * MOVE_COST for j in range(len(b) + 1)]
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i * MOVE_COST
        for j, y in enumerate(b, 1):
            change = 0 if x == y else CASE_COST if x.lower() == y.lower() else MOVE_COST
            previous, row[j] = row[j], min(row[j] + MOVE_COST, row[j - 1] + MOVE_COST, previous + change)
    return row[-1]


def close_name(missing: str, names) -> str | None:
    """The name of ``names`` closest to ``missing``, if close enough, as Python 3.10 and later
    choose it for "Did you mean" (the same costs and the same limit, which grows with the two
    names' lengths); the same answer on every Python the course runs on."""
    best, best_distance = None, None
    for name in sorted(set(names)):
        if name == missing or name.startswith("__"):
            continue
        limit = (len(missing) + len(name) + 3) * MOVE_COST // 6
        distance = _edit_distance(missing, name)
        if distance <= limit and (best_distance is None or distance < best_distance):
            best, best_distance = name, distance
    return best


def misspelt_name(exc: BaseException) -> str | None:
    """For a ``NameError``: the name that is not defined and the close name of those the code
    could use where it was raised (the function's variables, its namespace, the builtins)."""
    if not isinstance(exc, NameError) or isinstance(exc, UnboundLocalError):
        return None
    missing = getattr(exc, "name", None)
    if not missing:
        return None
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    names = set(dir(builtins))
    if tb is not None:
        frame = tb.tb_frame
        names |= set(frame.f_locals) | set(frame.f_globals) | set(frame.f_code.co_varnames)
    close = close_name(missing, names)
    if close:
        return (f"`{missing}` is not defined: did you mean `{close}`? A misspelt name is read as "
                "another name, one that was never given a value.")
    return (f"`{missing}` is not defined where your function looks for it: spell it as where it "
            "was given its value, or run the cell that defines it first.")
