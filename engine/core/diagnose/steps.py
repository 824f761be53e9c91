"""Where in the learner's own steps a wrong result first goes wrong, in the names the exercise
cell gives them: "Your `mean` is right; `var` is the first of your steps that is not (on the
example above: 4 where 1.25 was expected)". A step is a name the cell's function assigns once, at
the top of its body (``ms = ____``, ``sin, cos = ...``, ``stored = ____``); the learner's values are
read at the function's last line (or where it stopped, when it raised) and compared with the
solution's, step by step, in the order the cell assigns them. When every step is right, the line
that turns them into the result is what is wrong.

The wrong step (or the combining line) is then read for its slip: first as the solution's own line
changed the way slips change it (:mod:`engine.core.diagnose.expressions`: "`+` where `*` was
wanted"), then by the families of slips, as a result of its own.
"""

from __future__ import annotations

import ast
import inspect
import time
import warnings
from types import SimpleNamespace

import numpy as np

from engine.core.definition import Case
from engine.presentation.numbers import exact

from .bounded import bounded, namespace
from .expressions import variants
from .observed import describe
from .slips import RAISED, Probe, as_numbers

SECONDS = 1.5          # the most the changed lines of one diagnosis may take


def _function(source: str, name: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name), None)


def _targets(node: ast.stmt) -> list[tuple[str, int | None]]:
    """(name, place in a tuple or None) of a top-level assignment's names."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return []
    if isinstance(target, ast.Name):
        return [(target.id, None)]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [(e.id, i) for i, e in enumerate(target.elts)]
    return []


# Methods that change the list (or array) they are called on: a name they change is no step.
GROWS = {"append", "extend", "insert", "pop", "remove", "fill", "sort", "update", "setdefault", "clear"}


def lines(source: str, name: str) -> dict[str, tuple[str, int | None]]:
    """{step: (the code of its right-hand side, its place in a tuple)} for the names function
    ``name`` of ``source`` assigns once, at the top of its body, and never changes after."""
    function = _function(source, name)
    if function is None:
        return {}
    written: dict[str, int] = {}
    for node in ast.walk(function):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store):
                    written[leaf.id] = written.get(leaf.id, 0) + 1
            if isinstance(target, (ast.Subscript, ast.Attribute)):
                base = target.value
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    written[base.id] = written.get(base.id, 0) + 2
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.attr in GROWS:
            written[node.func.value.id] = written.get(node.func.value.id, 0) + 2   # built up later
    found = {}
    for node in function.body:
        for step, place in _targets(node):
            if written.get(step) == 1 and step != "____":
                found[step] = (ast.unparse(node.value), place)
    return found


def step_names(ex) -> list[str]:
    """The steps of the exercise cell's function, in order (see :func:`lines`)."""
    if getattr(ex, "kind", "function") != "function":
        return []
    return list(lines(ex.template, ex.name))


def part_names(ex) -> list[str]:
    """The names of the parts of a result returned as a tuple of steps (``return stored, used``),
    else []."""
    function = _function(ex.template, ex.name)
    for node in function.body if function is not None else ():
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) \
                and all(isinstance(e, ast.Name) for e in node.value.elts):
            return [e.id for e in node.value.elts]
    return []


def _only_steps(source: str, name: str, steps: list[str]) -> bool:
    """True when the function's body is its docstring, its steps and a last ``return``: then,
    with every step right, only the last line can be wrong."""
    function = _function(source, name)
    body = function.body if function is not None else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body) and isinstance(body[-1], ast.Return) and all(
        _targets(node) and all(step in steps for step, _place in _targets(node)) for node in body[:-1])


def returned(source: str, name: str) -> str | None:
    """The code of the function's last line when it returns an expression."""
    function = _function(source, name)
    last = function.body[-1] if function is not None and function.body else None
    return ast.unparse(last.value) if isinstance(last, ast.Return) and last.value is not None else None


def first_wrong(ex, probes, yours, solution, func, close, explain) -> tuple[str, bool] | None:
    """(sentence, named): where the learner's steps first differ from the solution's, over the
    probes' cases, and whether the sentence names a slip. ``yours(case)`` and ``solution(case)``
    give {step: value} (None when the call fails); ``func`` is the solution's function;
    ``close(a, b, case)`` compares two values; ``explain`` is the families' reading of a result.
    None when the cell has no steps, or they cannot be compared."""
    names = step_names(ex)
    if not names:
        return None
    mine = {id(p.case): yours(p.case) for p in probes}
    right = {id(p.case): solution(p.case) for p in probes}
    if any(v is None for v in right.values()) or all(v is None for v in mine.values()):
        return None
    solved = lines(ex.solution_source, ex.name)
    clock = _Clock()
    compared = []
    for name in names:
        pairs = [(p, (mine[id(p.case)] or {}).get(name), right[id(p.case)].get(name)) for p in probes]
        judged = [(p, a, b) for p, a, b in pairs if a is not None]
        if any(as_numbers(b) is None for _p, _a, b in pairs):
            continue                                     # a step that is not numbers: not judged here
        if not judged:
            return None                                  # the learner's code never got to this step
        if any(as_numbers(a) is None for _p, a, _b in judged):
            return None
        differs = [(p, a, b) for p, a, b in judged if not close(a, b, p.case)]
        if not differs and any(p.got is RAISED for p, a, _b in pairs if a is None):
            return _stopped(compared, name)              # right where it got a value; never where it raised
        if not differs:
            compared.append(name)
            continue
        before = f"Your {_listed(compared)} {'is' if len(compared) == 1 else 'are'} right; " if compared else ""
        seen = next(((a, b) for p, a, b in differs if p.case.visible), None)
        sentence = f"{before}`{name}` is the first of your steps that is not{_quote(seen) if seen else ''}."
        scope = [n for n in names[:names.index(name)]]
        if name in solved:
            line, place = solved[name]
            change = _changed_line(line, place, scope, judged, right, func, close, clock)
            if change:
                return f"{sentence} It is what the line gives with {change}.", True
        step = SimpleNamespace(id=ex.id, name=name, kind="function", template="", contract=ex.contract,
                               reference=_step_reference(solution, name))
        said = explain(step, [Probe(p.case, a, b) for p, a, b in judged], close)
        if said:
            return f"{sentence} In `{name}`: {said[0].lower()}{said[1:]}", True
        seen = describe(step, [_judged(p, a, b, close) for p, a, b in judged], lambda _case: (1e-9, 1e-12))
        return (f"{sentence} In `{name}`, {seen[len('What the check sees: '):]}" if seen else sentence), False
    if not compared or not _only_steps(ex.template, ex.name, names):
        return None                                      # something else between the steps and the result
    line = returned(ex.solution_source, ex.name)
    wrong = any(p.numeric and not p.right for p in probes)
    change = _changed_line(line, None, names, [(p, p.got, p.expected) for p in probes if p.numeric],
                           right, func, close, clock) if line and wrong else None
    listed = f"Your {_listed(compared)} {_are(len(compared))} right"
    them = "it" if len(compared) == 1 else "them"
    if change:
        return f"{listed}; the line that turns {them} into the result gives yours with {change}.", True
    return f"{listed}: what is wrong is the line that turns {them} into the result.", False


def _stopped(compared, name) -> tuple[str, bool] | None:
    """Where the code raised before giving step ``name`` a value on some case (and the step is
    right where it got one): no step from there on is said to be right."""
    if not compared:
        return None
    return (f"Your {_listed(compared)} {_are(len(compared))} right; on a test where your code raised "
            f"the error, `{name}` never got a value: its line is where to look.", False)


def wrong_line(ex, probes, func, close) -> str | None:
    """For a cell whose function is a single ``return`` line (no steps): the change of the
    solution's line that gives the learner's results on every probe, in words; else None."""
    if getattr(ex, "kind", "function") != "function" or step_names(ex) or not _only_steps(ex.template, ex.name, []):
        return None
    line = returned(ex.solution_source, ex.name)
    judged = [(p, p.got, p.expected) for p in probes if p.numeric]
    if not line or func is None or all(close(a, b, p.case) for p, a, b in judged):
        return None
    change = _changed_line(line, None, [], judged, {id(p.case): {} for p, _a, _b in judged}, func, close, _Clock())
    return f"Your result is what the right line gives with {change}." if change else None


class _Clock:
    def __init__(self):
        self.end = time.monotonic() + SECONDS

    @property
    def out(self) -> bool:
        return time.monotonic() > self.end


def _changed_line(line, place, scope, judged, right, func, close, clock) -> str | None:
    """The words of the first change of the solution's ``line`` whose values are the learner's on
    every judged case (and differ from the solution's somewhere)."""
    if func is None:
        return None
    spaces = [(p, yours, _scope(func, p.case, right[id(p.case)], scope)) for p, yours, _b in judged]
    if not spaces or any(space is None for _p, _y, space in spaces):
        return None
    known = [n for n in scope if n in spaces[0][2]] + list(inspect.signature(func).parameters)
    whole = frozenset(n for n in known if all(_whole(space.get(n)) for _p, _y, space in spaces))
    flags = frozenset(n for n in known if all(isinstance(space.get(n), (bool, np.bool_)) for _p, _y, space in spaces))
    solution = [_evaluated(bounded(line), space, place) for _p, _y, space in spaces]
    for text, words in variants(line, known, whole, flags):
        if clock.out:
            return None
        try:
            compiled = bounded(text)
        except SyntaxError:
            continue
        values = []
        for p, yours, space in spaces:
            value = _evaluated(compiled, space, place)
            if value is None or not close(yours, value, p.case):
                break
            values.append(value)
        else:
            if any(not close(v, s, p.case) for v, s, (p, _y, _s) in zip(values, solution, spaces)):
                return words
    return None


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _scope(func, case: Case, steps: dict, earlier: list[str]) -> dict | None:
    """The names a line of the solution reads: the arguments (by the solution's signature) and the
    earlier steps, over the cell's own namespace."""
    try:
        bound = inspect.signature(func).bind(*case.args, **case.kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    space = namespace(func.__globals__)
    space.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in bound.arguments.items()})
    space.update({k: steps[k] for k in earlier if k in steps})
    return space


def _evaluated(compiled, space: dict, place):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = eval(compiled, dict(space))    # noqa: S307 - the solution's own line, changed, bounded
        return value[place] if place is not None else value
    except Exception:  # noqa: BLE001 - a change that does not run on this case
        return None


def _judged(case_probe, yours, expected, close) -> Probe:
    """The probe of a step: the learner's value beside the solution's, ``right`` when they agree."""
    probe = Probe(case_probe.case, yours, expected)
    probe.right = probe.numeric and bool(close(yours, expected, case_probe.case))
    return probe


def _step_reference(solution, name):
    def reference(*args, **kwargs):
        values = solution(Case(tuple(args), "a step", kwargs=dict(kwargs)))
        return None if values is None else values.get(name)
    return reference


def _are(count: int) -> str:
    return "is" if count == 1 else "are both" if count == 2 else "are all"


def _listed(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _quote(seen) -> str:
    """" (on the example above: 4 where 1.25 was expected)": a number of the step, or its first
    differing number."""
    a, b = np.asarray(as_numbers(seen[0]), dtype=float), np.asarray(as_numbers(seen[1]), dtype=float)
    if a.shape != b.shape:
        return f" (on the example above its shape is {a.shape} where {b.shape} was expected)"
    with np.errstate(all="ignore"):
        bad = np.argwhere(~np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    if not len(bad):
        return ""
    i = tuple(int(k) for k in bad[0])
    return f" (on the example above: {exact(a[i])} where {exact(b[i])} was expected)"
