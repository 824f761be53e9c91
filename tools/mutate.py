"""Mutation testing, one engine for lib and for the exercise checks: would the tests notice if
the code were a little wrong?

    ./course mutate                       # every lib/ module against its own test file
    ./course mutate norm ffn              # some modules only  (or: python -m tools.mutate norm ffn)
    ./course mutate exercises.definitions.norms   # that module's reference functions, scored
    ./course mutate --exercises           # also every definitions (and retired) module's references (report only)
    ./course mutate --solutions           # every exercise's solution against its check's fixed cases
    ./course mutate --solutions row-mean  # one exercise's (--list prints its mutants)
    ./course mutate --list norm           # print norm's mutants, run nothing
    ./course mutate --report survivors.md --json results.json --min-score 95

A mutant is one small edit of a source (:func:`mutants`): a byte range replaced, so it keeps the
code's formatting, with an id that stays the same when other lines move. One finder makes them,
with one of two sets of edits (:class:`Edits`): ``LIBRARY``, the slips a programmer makes
(operators, comparisons, constants, axes, a dropped keyword or statement...), and ``SOLUTION``,
those and the slips a learner makes in an exercise (a term left out, a sibling function, another
variable, the other axis, a result written into an argument...). Two ways to run them:

- a module against its test file (lib/X.py against tests/test_lib_X.py, else tests/test_X.py;
  --tests X=FILE to choose): pytest in forked children, each in its own copy of the repository;
  a mutant is killed when a test fails, errors or times out;
- an exercise's solution against its check's fixed cases, in this process (:func:`judge`); a
  mutant is killed when the check rejects it. tests/test_check_mutants.py requires all of them.

Mutants listed in tools/equivalent-mutants.txt (``ID  reason``) change no behaviour and are left
out of the score: killed / (mutants - equivalent). Forking needs a POSIX system.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tools" / "equivalent-mutants.txt"
NOT_LIBRARY = {"__init__", "exercises"}     # lib/exercises.py only keeps old notebooks working


# ---------------------------------------------------------------- the edits

COMPARE = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
           ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
           ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
          ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
UFUNCS = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.divide",
          ast.Pow: "np.power"}
UNARY_UFUNCS = {"exp", "sqrt", "sin", "cos", "log", "abs", "negative", "square", "tanh"}
SIBLINGS = {"sum": "mean", "mean": "sum", "max": "min", "min": "max", "amax": "amin", "amin": "amax",
            "sin": "cos", "cos": "sin", "tril": "triu", "triu": "tril", "exp": "expm1", "log": "log1p",
            "maximum": "minimum", "minimum": "maximum", "zeros": "ones", "ones": "zeros",
            "zeros_like": "ones_like", "ones_like": "zeros_like", "var": "std", "std": "var",
            "argmax": "argmin", "argmin": "argmax", "argsort": "sort"}
NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv)
FLOATS = {"zero": lambda v: 0.0, "double": lambda v: v * 2, "tenth": lambda v: v / 10}


@dataclass(frozen=True)
class Edits:
    """Which edits the finder makes. Both sets: an operator swapped (``ops``), a comparison
    loosened or negated, and/or, a unary -, not or ~ dropped, an integer +1 and -1 (axes too), a
    float to each of ``floats`` (:data:`FLOATS`; 0.0 to 1.0), True/False (keepdims too), a keyword argument left
    out, two neighbouring arguments of a call exchanged, an if/ternary condition forced True and
    False, a statement replaced by pass (an expression, raise, assert, continue, break, or an
    assignment to a bound name), a returned value replaced by None, a slice bound that is not a
    constant +1 and -1. ``learner`` adds: the sides of a -, /, ** or @ exchanged (operands); one
    side of an operation left out (term); axis= set to each of ``axes``; neighbouring items of a
    tuple or list exchanged; a slice bound or step left out; a call replaced by its only argument
    or a method call by its object (call); a NumPy function swapped for its sibling (func, sum
    mean, max min, ...); a variable replaced by another of the function's (name); the result
    written into an argument or a view of one (inplace: ``np.subtract(a, b, out=a)``, ``x += y``).
    Strings, f-strings, docstrings and annotations are left alone."""
    ops: dict
    floats: tuple
    axes: tuple = ()
    learner: bool = False


LIBRARY = Edits(ops={ast.Add: ["-"], ast.Sub: ["+"], ast.Mult: ["/"], ast.Div: ["*"], ast.FloorDiv: ["/"],
                     ast.Mod: ["/"], ast.Pow: ["*"], ast.MatMult: ["*"], ast.BitAnd: ["|"], ast.BitOr: ["&"],
                     ast.BitXor: ["|"]},
                floats=("zero", "double"))
SOLUTION = Edits(ops={ast.Add: ["-"], ast.Sub: ["+"], ast.Mult: ["/", "@"], ast.Div: ["*", "//"],
                      ast.FloorDiv: ["/"], ast.Mod: ["//"], ast.Pow: ["*"], ast.MatMult: ["*"]},
                 floats=("zero", "double", "tenth"), axes=("None", "0", "1", "-1", "-2"), learner=True)


@dataclass
class Mutant:
    """One edit of a source: bytes start:end (of its UTF-8 text) become ``new``."""
    module: str          # lib.norm, or an exercise's id
    func: str            # layer_norm, BlockWeights.__post_init__, <module>
    kind: str
    start: int
    end: int
    new: str
    line: int            # first and last edited line, counted from 1
    end_line: int
    before: str = ""     # the edited line(s), before and after
    after: str = ""
    id: str = ""         # module:line:kind:hash
    status: str = "not run"
    reason: str = ""     # why it is equivalent, if it is listed as such

    def apply(self, source: str) -> str:
        """The whole mutated source."""
        data = source.encode()
        return (data[:self.start] + self.new.encode() + data[self.end:]).decode()

    def diff(self) -> str:
        return "\n".join([f"- {line}" for line in self.before.splitlines()]
                         + [f"+ {line}" for line in self.after.splitlines()])


class _Finder(ast.NodeVisitor):
    """Walks a source's AST and records one Mutant per edit of ``edits`` (see :class:`Edits`)."""

    def __init__(self, module: str, data: bytes, only: set | None, edits: Edits):
        self.module, self.data, self.only, self.edits = module, data, only, edits
        self.starts = [0]                            # the byte offset of each line's start
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.found: list[Mutant] = []
        self.scope: list[str] = []
        self.bound: list[set] = [set()]          # names bound in each function
        self.params: list[set] = [set()]         # names holding an argument or a view of one
        self.label: str | None = None            # "axis" or "keepdims" inside that keyword

    # ---- positions and recording
    def span(self, node) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset, self.starts[node.end_lineno - 1] + node.end_col_offset)

    def text(self, node) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode()

    def add(self, kind: str, start: int, end: int, new: str) -> None:
        if self.only is not None and (not self.scope or self.scope[0] not in self.only):
            return
        if self.data[start:end].decode() != new:
            line, end_line = (self.data.count(b"\n", 0, at) + 1 for at in (start, end))
            self.found.append(Mutant(self.module, ".".join(self.scope) or "<module>", kind,
                                     start, end, new, line, end_line))

    def replace(self, kind: str, node, new: str) -> None:
        self.add(kind, *self.span(node), new)

    def token(self, kind: str, left, right, old: str, new: str) -> None:
        """Replace the operator ``old`` written between two operands."""
        start, end = self.span(left)[1], self.span(right)[0]
        pattern = r"\s+".join(rf"\b{w}\b" if w.isalpha() else re.escape(w) for w in old.split())
        found = re.search(pattern.encode(), self.data[start:end])
        if found:
            self.add(kind, start + found.start(), start + found.end(), new)

    def exchange(self, pairs) -> None:
        """Swap each pair of neighbouring items (arguments, tuple items), keeping what is between."""
        for a, b in pairs:
            if isinstance(a, ast.Starred) or isinstance(b, ast.Starred) or self.text(a) == self.text(b):
                continue
            (start, a_end), (b_start, end) = self.span(a), self.span(b)
            self.add("swap", start, end, self.text(b) + self.data[a_end:b_start].decode() + self.text(a))

    def aliases_argument(self, node) -> bool:
        return isinstance(node, ast.Name) and node.id in self.params[-1]

    # ---- scopes: the module, functions, classes (docstrings and annotations skipped)
    def body(self, statements) -> None:
        for i, stmt in enumerate(statements):
            docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            if not docstring:
                self.visit(stmt)

    def visit_Module(self, node):
        self.body(node.body)

    def visit_FunctionDef(self, node):
        args = node.args
        self.scope.append(node.name)                   # defaults count as the function's own
        for default in args.defaults + [d for d in args.kw_defaults if d] + node.decorator_list:
            self.visit(default)
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.bound.append(set(names)), self.params.append(set(names))
        self.body(node.body)
        self.scope.pop(), self.bound.pop(), self.params.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scope.append(node.name)
        self.body(node.body)
        self.scope.pop()

    def visit_AnnAssign(self, node):
        if node.value:
            self.visit(node.value)

    def visit_JoinedStr(self, node):
        pass

    # ---- expressions
    def number(self, node, value) -> None:
        if isinstance(value, bool):
            self.replace(self.label if self.label == "keepdims" else "bool", node, str(not value))
        elif isinstance(value, int):
            kind = "axis" if self.label == "axis" else "const"
            self.replace(kind, node, repr(value + 1))
            self.replace(kind, node, repr(value - 1))
        elif isinstance(value, float):
            for new in ([repr(FLOATS[f](value)) for f in self.edits.floats] if value else [repr(1.0)]):
                self.replace("float", node, new)

    def axis(self, node) -> None:
        if self.label == "axis":
            for value in self.edits.axes:
                self.replace("axis", node, value)

    def visit_Constant(self, node):
        self.axis(node)
        self.number(node, node.value)

    def visit_Name(self, node):
        if self.edits.learner and isinstance(node.ctx, ast.Load) and len(self.bound) > 1 and node.id in self.bound[-1]:
            for other in sorted(self.bound[-1] - {node.id}):
                self.replace("name", node, other)

    def visit_UnaryOp(self, node):
        operand = node.operand
        if isinstance(node.op, ast.USub) and isinstance(operand, ast.Constant) \
                and type(operand.value) in (int, float):
            self.axis(node)
            self.number(node, -operand.value)            # -1 is one constant: 0 and -2
            self.replace("unary", node, self.text(operand))
            return
        if not isinstance(node.op, ast.UAdd):
            start = self.span(node)[0]
            length = len(re.match(rb"not\s*|-\s*|~\s*", self.data[start:start + 8]).group())
            self.add("unary", start, start + length, "")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        op = type(node.op)
        for new in self.edits.ops.get(op, ()):
            self.token("op", node.left, node.right, SYMBOL[op], new)
        if self.edits.learner and op in self.edits.ops:
            left, right = self.text(node.left), self.text(node.right)
            if op in NON_COMMUTATIVE and left != right:
                self.replace("operands", node, f"({right}) {SYMBOL[op]} ({left})")
            self.replace("term", node, f"({left})")
            self.replace("term", node, f"({right})")
            for target in (node.left, node.right):
                if op in UFUNCS and self.aliases_argument(target):
                    self.replace("inplace", node, f"{UFUNCS[op]}({left}, {right}, out={target.id})")
        self.generic_visit(node)

    def visit_Compare(self, node):
        operands = [node.left] + node.comparators
        for i, op in enumerate(node.ops):
            self.token("compare", operands[i], operands[i + 1], *COMPARE[type(op)])
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:]):
            self.token("boolop", left, right, old, new)
        self.generic_visit(node)

    def visit_Call(self, node):
        label, self.label = self.label, None
        items = sorted(node.args + node.keywords, key=lambda n: (n.lineno, n.col_offset))
        for i, item in enumerate(items):            # f(a, name=b) -> f(a): the comma goes with it
            if not (isinstance(item, ast.keyword) and item.arg):
                continue
            if i > 0:
                self.add("kwarg", self.span(items[i - 1])[1], self.span(item)[1], "")
            elif i + 1 < len(items):
                self.add("kwarg", self.span(item)[0], self.span(items[i + 1])[0], "")
            else:
                self.replace("kwarg", item, "")
        self.exchange(zip(node.args, node.args[1:]))
        if self.edits.learner:
            self.learner_call(node)
        self.generic_visit(node)
        self.label = label

    def learner_call(self, node) -> None:
        func = node.func
        if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            self.replace("call", node, f"({self.text(node.args[0])})")
        if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name)
                                                    and func.value.id in ("np", "numpy", "math")):
            self.replace("call", node, f"({self.text(func.value)})")
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in SIBLINGS:
            start = self.span(func)[1] - len(name)
            self.add("func", start, start + len(name), SIBLINGS[name])
        if name in UNARY_UFUNCS and isinstance(func, ast.Attribute) and len(node.args) == 1 \
                and not node.keywords and self.aliases_argument(node.args[0]):
            target = node.args[0].id
            self.replace("inplace", node, f"{self.text(func)}({target}, out={target})")

    def visit_Tuple(self, node):
        if self.edits.learner and isinstance(node.ctx, ast.Load):
            self.exchange(zip(node.elts, node.elts[1:]))
        self.generic_visit(node)

    visit_List = visit_Tuple

    def visit_keyword(self, node):
        label, self.label = self.label, node.arg if node.arg in ("axis", "keepdims") else None
        if isinstance(node.value, ast.Name):
            self.axis(node.value)
        self.visit(node.value)
        self.label = label

    def visit_IfExp(self, node):
        self.replace("branch", node.test, "True")
        self.replace("branch", node.test, "False")
        self.generic_visit(node)

    def visit_Slice(self, node):
        for bound in (node.lower, node.upper):
            if bound is not None and not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                self.replace("slice", bound, f"({self.text(bound)} + 1)")
                self.replace("slice", bound, f"({self.text(bound)} - 1)")
            if bound is not None and self.edits.learner:
                self.replace("slice", bound, "")
        if node.step is not None and self.edits.learner:
            self.replace("slice", node.step, "1")
        self.generic_visit(node)

    # ---- statements
    def visit_If(self, node):
        self.replace("branch", node.test, "True")
        self.replace("branch", node.test, "False")
        self.visit(node.test)
        self.body(node.body)
        self.body(node.orelse)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self.replace("return", node.value, "None")
        self.generic_visit(node)

    def drop(self, node):
        self.replace("drop", node, "pass")
        self.generic_visit(node)

    visit_Expr = visit_Raise = visit_Assert = visit_Continue = visit_Break = drop

    def visit_Assign(self, node):
        names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        new_name = any(isinstance(t, (ast.Name, ast.Tuple)) for t in node.targets) \
            and not all(name in self.bound[-1] for name in names)
        if not new_name:                   # a rebinding: dropping it keeps the old value
            self.replace("drop", node, "pass")
        value, target = node.value, node.targets[0]
        if self.edits.learner and len(node.targets) == 1 and isinstance(target, ast.Name) \
                and isinstance(value, ast.BinOp) and isinstance(value.left, ast.Name) \
                and value.left.id == target.id and self.aliases_argument(value.left) and type(value.op) in UFUNCS:
            self.replace("inplace", node, f"{target.id} {SYMBOL[type(value.op)]}= {self.text(value.right)}")
        self.generic_visit(node)
        self.track_views(node)
        self.bound[-1].update(names)

    def track_views(self, node) -> None:
        """Names assigned an argument or a slice of one (a, b = x[:h], x[h:]) hold views of it."""
        pairs = []
        for target in node.targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs += zip(target.elts, node.value.elts)
            else:
                pairs.append((target, node.value))
        for target, value in pairs:
            if isinstance(target, ast.Name):
                base = value.value if isinstance(value, ast.Subscript) else value
                if isinstance(base, ast.Name) and base.id in self.params[-1]:
                    self.params[-1].add(target.id)
                else:
                    self.params[-1].discard(target.id)

    def visit_AugAssign(self, node):
        op = type(node.op)
        for new in self.edits.ops.get(op, ()):
            self.token("op", node.target, node.value, SYMBOL[op] + "=", new + "=")
        self.drop(node)

    def visit_For(self, node):
        self.bound[-1].update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        self.generic_visit(node)


def mutants(source: str, module: str = "<source>", only: set | None = None, edits: Edits = LIBRARY) -> list[Mutant]:
    """Every mutant of ``source`` (Python text) that still parses, in source order, with stable ids.

    only: the names of the top-level functions to mutate (None: all of the source).
    An id is ``module:line:kind:hash``; the hash depends on the module, the function, the kind,
    the edited line(s) before and after, and how many identical edits come before, so it stays
    the same when other lines move.
    """
    data = source.encode()
    finder = _Finder(module, data, only, edits)
    finder.visit(ast.parse(data))
    found, seen, counts = [], set(), {}
    for m in sorted(finder.found, key=lambda m: (m.start, m.end, m.kind, m.new)):
        if (m.start, m.end, m.new) in seen:
            continue
        seen.add((m.start, m.end, m.new))
        first = data.rfind(b"\n", 0, m.start) + 1
        last = data.find(b"\n", m.end)
        last = len(data) if last < 0 else last
        m.before = data[first:last].decode()
        m.after = (data[first:m.start] + m.new.encode() + data[m.end:last]).decode()
        try:
            ast.parse(m.apply(source))
        except SyntaxError:                  # e.g. a keyword dropped after a bracketed argument
            continue
        key = (m.func, m.kind, " ".join(m.before.split()), " ".join(m.after.split()))
        counts[key] = counts.get(key, 0) + 1
        digest = hashlib.sha1(repr((module,) + key + (counts[key],)).encode()).hexdigest()[:8]
        m.id = f"{module}:{m.line}:{m.kind}:{digest}"
        found.append(m)
    return found


def load_equivalents(path: Path = EQUIVALENTS) -> dict:
    """{(module, hash): reason} from the lines ``module:line:kind:hash  reason`` of ``path``."""
    found = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                mutant_id, _, reason = line.partition(" ")
                parts = mutant_id.split(":")
                found[(parts[0], parts[-1])] = reason.strip()
    return found


def mark_equivalents(found: list, equivalents: dict) -> None:
    """Give each mutant listed in ``equivalents`` its reason (and take it off that dict)."""
    for m in found:
        m.reason = equivalents.pop((m.module, m.id.split(":")[-1]), "")


# ---------------------------------------------------------------- what is mutated, against what

@dataclass
class Target:
    """One source to mutate and what should catch its mutants: a file and its test files, or an
    exercise's solution and its check."""
    path: Path | None                # relative to the root (None: an exercise's solution)
    tests: list                      # test files relative to the root ([] when it has none)
    only: set | None = None          # mutate only these top-level functions
    scored: bool = True              # False: reported, but not held to --min-score
    mutants: list = field(default_factory=list)
    baseline: str = "not run"
    seconds: float = 0.0
    lines: dict = field(default_factory=dict)   # line -> ids of the tests that run it ("": every test)
    exercise: object = None          # the exercise whose solution is mutated

    @property
    def module(self) -> str:
        return self.exercise.id if self.exercise else ".".join(self.path.with_suffix("").parts)

    def source(self, root: Path) -> str:
        return self.exercise.solution_source if self.exercise else (root / self.path).read_text(encoding="utf-8")

    def find(self, root: Path) -> list:
        """The target's mutants: a programmer's slips in a file, a learner's in a solution."""
        return mutants(self.source(root), self.module, self.only, SOLUTION if self.exercise else LIBRARY)

    def tests_for(self, mutant: Mutant) -> set | None:
        """The ids of the tests that run the mutant's lines; None: the whole file (a line also
        runs at import or in a fixture no test's id is known for)."""
        ids = set().union(*(self.lines.get(n, ()) for n in range(mutant.line, mutant.end_line + 1)))
        return None if "" in ids else ids


def library_targets(root: Path, package: str, modules: list, overrides: dict) -> list:
    """lib/X.py against tests/test_lib_X.py, else tests/test_X.py (a leading _ dropped)."""
    if not modules:
        modules = sorted(p.stem for p in (root / package).glob("*.py") if p.stem not in NOT_LIBRARY)
    targets = []
    for name in modules:
        path = Path(package) / (name if name.endswith(".py") else f"{name}.py")
        if not (root / path).is_file():
            known = sorted(p.stem for p in (root / package).glob("*.py") if p.stem not in NOT_LIBRARY)
            raise SystemExit(f"There is no module {name!r} in {package}/: choose among {', '.join(known)} "
                             f"(or {REFERENCES}.NAME for an exercise module's reference functions).")
        stem = path.stem.lstrip("_")
        chosen = overrides.get(name) or overrides.get(path.stem)
        candidates = [f"tests/test_{package}_{stem}.py", f"tests/test_{stem}.py"]
        tests = chosen.split(",") if chosen else [c for c in candidates if (root / c).exists()][:1]
        targets.append(Target(path, tests))
    return targets


REFERENCES = "exercises.definitions"       # the modules of the exercise checks' reference functions
RETIRED = "exercises.retired"              # and those of the retired exercises' checks
REFERENCE_TESTS = ["tests/test_exercises.py", "tests/test_exercise_references.py"]


def reference_targets(root: Path, modules: list | None = None, scored: bool = False) -> list:
    """The exercise checks' reference functions, each definitions module (and each module of
    the retired exercises) against tests/test_exercises.py and tests/test_exercise_references.py:
    the top-level functions named ``*_reference`` or passed as ``reference=`` and defined in that
    module, unless their body is one call of a lib function (lib's own run covers that).
    modules: dotted names (default: every definitions module and every retired module)."""
    folder = root.joinpath(*REFERENCES.split("."))
    if modules:
        paths = [root.joinpath(*name.split(".")).with_suffix(".py") if name.startswith(RETIRED + ".")
                 else folder / f"{name.rpartition('.')[2]}.py" for name in modules]
    else:
        paths = [p for package in (REFERENCES, RETIRED)
                 for p in sorted(root.joinpath(*package.split(".")).glob("*.py")) if p.stem != "__init__"]
    targets = []
    for path in paths:
        if not path.exists():
            package = ".".join(path.parent.relative_to(root).parts)
            known = sorted(p.stem for p in path.parent.glob("*.py") if p.stem != "__init__")
            raise SystemExit(f"There is no module {package}.{path.stem}: choose among "
                             f"{', '.join(known)}.")
        tree = ast.parse(path.read_bytes())
        from_lib = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and (node.module or "").split(".")[0] == "lib" for alias in node.names}
        named = {n.value.id for n in ast.walk(tree)
                 if isinstance(n, ast.keyword) and n.arg == "reference" and isinstance(n.value, ast.Name)}
        own = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
               and (f.name in named or f.name.endswith("_reference")) and not _one_call_of(f, from_lib)}
        if own or modules:
            targets.append(Target(path.relative_to(root), list(REFERENCE_TESTS), own, scored=scored))
    return targets


def solution_targets(ids: list) -> list:
    """Every exercise's solution (or those of ``ids``), each against its check's fixed cases."""
    from engine.core.registry import all_exercises, get_exercise

    chosen = [get_exercise(i) for i in ids] if ids else all_exercises()
    return [Target(None, ["its check's fixed cases"], exercise=e) for e in chosen if e.kind == "function"]


def solution_mutants(exercise) -> list:
    """The mutants of an exercise's solution (a learner's slips), named after the exercise."""
    return mutants(exercise.solution_source, exercise.id, edits=SOLUTION)


def judge(exercise, source: str):
    """The check's verdict on ``source`` (a whole exercise cell) from the fixed cases alone: the
    cases every run has, so a mutant they reject is rejected whatever random cases are drawn."""
    from engine.core.cell import run_cell
    from engine.core.checker import Feedback, evaluate_fixed

    try:
        namespace = run_cell(source, exercise.context, exercise.id)
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot even run its cell is rejected
        return Feedback(exercise.id, "error", [f"{type(exc).__name__}: {exc}"])
    return evaluate_fixed(exercise, namespace)


def run_solutions(targets: list) -> None:
    """Judge every mutant of the solutions in this process; set the statuses."""
    for target in targets:
        source = target.exercise.solution_source
        target.baseline = "passed" if judge(target.exercise, source).passed else "failed (the solution)"
        for m in target.mutants:
            if target.baseline == "passed" and m.status == "not run":
                m.status = "survived" if judge(target.exercise, m.apply(source)).passed else "killed"


def _one_call_of(function: ast.FunctionDef, names: set) -> bool:
    """Whether the function's body is ``return name(...)`` for one of ``names``."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call)
            and isinstance(body[0].value.func, ast.Name) and body[0].value.func.id in names)


# ---------------------------------------------------------------- running the tests

class _Recorder:
    """The pytest plugin of each run: keeps only the ``wanted`` tests (None: all) and, when
    tracing, records which test runs which line of the traced file. A line run by a fixture
    counts for every test that uses the fixture; lines run anywhere else outside a test (at
    import, at collection) count as "" (every test)."""

    def __init__(self, wanted: set | None, traced: str | None):
        self.wanted, self.traced = wanted, traced
        self.current, self.lines, self.users = "", {}, {}

    def pytest_collection_modifyitems(self, items):
        if self.wanted is not None:
            items[:] = [item for item in items if item.nodeid in self.wanted]
        for item in items:
            for name in getattr(item, "fixturenames", ()):
                self.users.setdefault(f"fixture {name}", set()).add(item.nodeid)

    def _during(self, name):
        previous, self.current = self.current, name
        try:
            return (yield)
        finally:
            self.current = previous

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        return (yield from self._during(item.nodeid))

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        return (yield from self._during(f"fixture {fixturedef.argname}"))

    def trace(self, frame, event, arg):
        return self.line if frame.f_code.co_filename == self.traced else None

    def line(self, frame, event, arg):
        if event == "line":
            self.lines.setdefault(frame.f_lineno, set()).add(self.current)
        return self.line

    def tests_per_line(self) -> dict:
        """{line: sorted test ids}, fixtures replaced by the tests that use them."""
        def tests(who):           # a fixture no collected test uses counts for every test
            return self.users.get(who, {""}) if who.startswith("fixture ") else {who}
        return {n: sorted(set().union(*(tests(who) for who in ids))) for n, ids in self.lines.items()}


def _child(repo: Path, target: Target, wanted, trace_file, pytest_args) -> None:
    """In the forked process: run the target's tests in ``repo``; exit with pytest's code."""
    code = 99
    try:
        os.setpgid(0, 0)
        os.chdir(repo)
        os.environ["PYTHONPATH"] = os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])
        sys.dont_write_bytecode = True
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1), os.dup2(null, 2)
        recorder = _Recorder(wanted, str(repo / target.path) if trace_file else None)
        if trace_file:
            sys.settrace(recorder.trace)
        code = int(pytest.main([*target.tests, "-x", "-q", "--tb=no", "-p", "no:cacheprovider",
                                "-o", "addopts=", "-o", f"pythonpath={repo}", *pytest_args],
                                plugins=[recorder]))
        sys.settrace(None)
        if trace_file:
            Path(trace_file).write_text(json.dumps(recorder.tests_per_line()))
    finally:
        os._exit(code)


@dataclass
class Job:
    target: Target
    mutant: Mutant | None            # None: the traced baseline run
    wanted: set | None               # the test ids to run (None: the whole file)


class Pool:
    """Runs jobs in forked children, ``size`` at a time, each child in its own copy of the
    repository with the job's mutant written into it."""

    def __init__(self, root: Path, size: int, pytest_args: list):
        self.root, self.pytest_args, self.cpu = root, pytest_args, 0.0
        self.tmp = Path(tempfile.mkdtemp(prefix="mutate-")).resolve()
        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "node_modules", "_output", ".cache",
                                        "test-artifacts")
        self.free = [shutil.copytree(root, self.tmp / f"repo{i}", ignore=ignore) for i in range(size)]

    def trace_file(self, target: Target) -> Path:
        return self.tmp / f"{target.module}.lines.json"

    def start(self, job: Job) -> tuple:
        repo = self.free.pop()
        if job.mutant:
            original = (self.root / job.target.path).read_text(encoding="utf-8")
            (repo / job.target.path).write_text(job.mutant.apply(original), encoding="utf-8")
        trace = None if job.mutant else str(self.trace_file(job.target))
        pid = os.fork()
        if pid == 0:
            _child(repo, job.target, job.wanted, trace, self.pytest_args)
        return pid, (repo, job, time.monotonic())

    def finish(self, repo: Path, job: Job) -> None:
        shutil.copyfile(self.root / job.target.path, repo / job.target.path)
        self.free.append(repo)

    def run(self, jobs: list, timeout, on_done) -> None:
        """Run every job; on_done(job, exit code or None for a timeout, seconds) as each ends,
        which may return more jobs to run."""
        queue, running = list(jobs), {}
        try:
            while queue or running:
                while queue and self.free:
                    pid, state = self.start(queue.pop(0))
                    running[pid] = state
                pid, status, usage = os.wait4(-1, os.WNOHANG)
                if pid == 0:
                    self.kill_late(running, timeout)
                    time.sleep(0.01)
                    continue
                repo, job, started = running.pop(pid)
                self.finish(repo, job)
                self.cpu += usage.ru_utime + usage.ru_stime
                code = os.waitstatus_to_exitcode(status)
                queue += on_done(job, None if code == -signal.SIGKILL else code, time.monotonic() - started) or []
        finally:
            for pid in running:
                os.killpg(pid, signal.SIGKILL)

    @staticmethod
    def kill_late(running: dict, timeout) -> None:
        for pid, (_repo, job, started) in running.items():
            if time.monotonic() - started > timeout(job.target):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _imports(path: Path) -> set:
    """The top-level names a Python file imports (absolute imports only)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def preload(root: Path, targets: list) -> None:
    """Import, once, whatever the tests import from outside the repository (numpy, torch,
    pytest, and what the repository's own modules they use import), so that each forked run
    starts warm. Nothing of the repository itself is imported."""
    os.environ.setdefault("OMP_NUM_THREADS", "1"), os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    own = {p.stem for p in root.iterdir() if p.is_dir() or p.suffix == ".py"}
    files = [root / f for t in targets for f in [t.path, *t.tests]]
    files += [p for p in (root / "conftest.py", root / "tests" / "conftest.py") if p.exists()]
    seen, outside = set(), {"pytest"}
    while files:
        path = files.pop()
        if path in seen or not path.exists():
            continue
        seen.add(path)
        for name in _imports(path):
            if name.split(".")[0] not in own:
                outside.add(name.split(".")[0])
            else:                                    # follow the repository's own modules
                base = root.joinpath(*name.split("."))
                files += [base.with_suffix(".py"), base / "__init__.py"]
    for name in sorted(outside):
        with contextlib.suppress(Exception):
            __import__(name)
    with tempfile.TemporaryDirectory() as tmp:      # pytest's plugins (and what they import late)
        (Path(tmp) / "test_warm_up.py").write_text("def test_nothing():\n    pass\n")
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            pytest.main([tmp, "-q", "-p", "no:cacheprovider"])
    tested = {t.path.parts[0] for t in targets}
    assert not tested & set(sys.modules), "the package under test must not be imported before forking"


def run(root: Path, targets: list, jobs: int, pytest_args: list) -> float:
    """Run every target's baseline, then its mutants; sets statuses; returns the CPU seconds of
    the forked test runs."""
    run_solutions([t for t in targets if t.exercise])
    testable = [t for t in targets if t.tests and not t.exercise]
    if not testable:
        return 0.0
    preload(root, testable)
    pool, began, done = Pool(root, jobs, pytest_args), time.monotonic(), []

    def baseline_done(job, code, seconds):
        target = job.target
        target.baseline, target.seconds = ("passed" if code == 0 else f"failed (pytest exit {code})"), seconds
        if code == 0:
            lines = json.loads(pool.trace_file(target).read_text())
            target.lines = {int(n): set(ids) for n, ids in lines.items()}

    def mutant_done(job, code, seconds):
        if code == 0 and job.wanted is not None:
            # It survived the tests that ran its lines: run the whole file too, since a cached
            # function (lru_cache) runs its lines only in the first test that calls it.
            return [Job(job.target, job.mutant, None)]
        job.mutant.status = "survived" if code == 0 else "timeout" if code is None else "killed"
        done.append(job)
        if len(done) % 50 == 0:
            print(f"  {len(done)}/{len(queue)} mutants run, {time.monotonic() - began:.0f} s",
                  file=sys.stderr, flush=True)

    try:
        pool.run([Job(t, None, None) for t in testable], lambda t: 1800, baseline_done)
        queue = [Job(t, m, t.tests_for(m)) for t in testable if t.baseline == "passed"
                 for m in t.mutants if m.status not in ("killed", "timeout")]
        queue = [job for job in queue if job.wanted is None or job.wanted]   # the rest stay "not run"
        print(f"{sum(len(t.mutants) for t in targets)} mutants, {len(queue)} on lines the tests run",
              file=sys.stderr, flush=True)
        pool.run(queue, lambda t: 5 + 3 * t.seconds, mutant_done)
    finally:
        pool.close()
    return pool.cpu


# ---------------------------------------------------------------- results

@dataclass
class Score:
    module: str
    tests: str
    mutants: int
    killed: int
    equivalent: int
    survived: int        # of which never run: not_run
    not_run: int
    note: str

    @property
    def percent(self) -> float:
        counted = self.mutants - self.equivalent
        return 100.0 * self.killed / counted if counted else 100.0


def score(target: Target) -> Score:
    ms = target.mutants
    killed = sum(m.status in ("killed", "timeout") for m in ms)
    equivalent = sum(bool(m.reason) and m.status in ("survived", "not run") for m in ms)
    not_run = sum(m.status == "not run" and not m.reason for m in ms)
    note = "" if target.baseline == "passed" else "no test file" if not target.tests else target.baseline
    name = target.module + ("" if target.only is None else " (references)")
    return Score(name, ", ".join(target.tests) or "-", len(ms), killed, equivalent,
                 len(ms) - killed - equivalent, not_run, note)


def table(scores: list) -> str:
    """The scores as a Markdown table, one row per module and a total."""
    rows = ["| module | tests | mutants | killed | equivalent | survived | score |",
            "|---|---|--:|--:|--:|--:|--:|"]
    for s in scores:
        survived = f"{s.survived}" + (f" ({s.not_run} on lines no test runs)" if s.not_run else "")
        note = f" {s.note}" if s.note else ""
        rows.append(f"| {s.module} | {s.tests} | {s.mutants} | {s.killed} | {s.equivalent} | {survived} "
                    f"| {s.percent:.1f} %{note} |")
    total = [sum(getattr(s, name) for s in scores) for name in ("mutants", "killed", "equivalent", "survived")]
    rows.append(f"| total | | {total[0]} | {total[1]} | {total[2]} | {total[3]} | |")
    return "\n".join(rows)


def survivors_report(targets: list) -> str:
    out = ["# Surviving mutants", "", "Written by tools/mutate.py: each mutant's id, function and diff.", ""]
    for t in targets:
        alive = [m for m in t.mutants if m.status in ("survived", "not run") and not m.reason]
        out += [f"## {t.module} ({len(alive)} surviving, tests: {', '.join(t.tests) or 'none'})", ""]
        for m in alive:
            out += [f"- `{m.id}` in `{m.func}`" + (" (no test runs this line)" if m.status == "not run" else ""),
                    "", "  ```diff", *["  " + line for line in m.diff().splitlines()], "  ```", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- command line

def arguments(argv):
    parser = argparse.ArgumentParser(prog="./course mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="module names in the package (default: all of lib/), or exercises.definitions.X "
                             "(or exercises.retired.X) for the reference functions of the exercise checks in "
                             "that module")
    parser.add_argument("--exercises", action="store_true",
                        help="also the exercise checks' reference functions (reported, not scored)")
    parser.add_argument("--solutions", action="store_true",
                        help="the exercises' solutions (the modules named are then exercise ids; default: "
                             "every exercise) against their checks' fixed cases, instead of lib")
    parser.add_argument("--tests", action="append", default=[], metavar="MODULE=FILE[,FILE]",
                        help="run a module against other test files")
    parser.add_argument("--jobs", type=int, default=2, help="test runs at a time (default 2)")
    parser.add_argument("--list", action="store_true", help="print the mutants and run nothing")
    parser.add_argument("--report", type=Path, help="write the surviving mutants, with diffs, as Markdown")
    parser.add_argument("--json", type=Path, help="write every mutant and its status as JSON")
    parser.add_argument("--min-score", type=float, help="exit 1 if a scored module is below this percentage")
    parser.add_argument("--again", type=Path, metavar="JSON",
                        help="a --json file of an earlier run: its killed mutants are taken as killed and "
                             "only the others run (after adding tests, never after changing them)")
    parser.add_argument("--equivalents", type=Path, help="default: tools/equivalent-mutants.txt")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    parser.add_argument("--package", default="lib", help="the package of the modules (default: lib)")
    parser.add_argument("--pytest-args", default="", help="more arguments for each pytest run")
    return parser.parse_args(argv)


def collect(args) -> list:
    """The targets with their mutants, each marked with its reason if listed as equivalent."""
    root = args.root.resolve()
    overrides = dict(item.split("=", 1) for item in args.tests)
    if args.solutions:
        targets = solution_targets(args.modules)
    else:
        references = [m for m in args.modules if m.startswith((REFERENCES + ".", RETIRED + "."))]
        modules = [m.removeprefix(args.package + ".") for m in args.modules if m not in references]
        targets = library_targets(root, args.package, modules, overrides) if modules or not references else []
        targets += reference_targets(root, references, scored=True) if references else []
    if args.exercises:
        targets += reference_targets(root)
    equivalent = load_equivalents(args.equivalents or root / "tools" / "equivalent-mutants.txt")
    for t in targets:
        t.mutants = t.find(root)
        mark_equivalents(t.mutants, equivalent)
    if args.again:
        def key(mutant_id):                          # module and hash: the line may have moved
            return mutant_id.split(":")[0], mutant_id.split(":")[-1]
        killed = {key(m["id"]): m["status"] for m in json.loads(args.again.read_text(encoding="utf-8"))
                  if m["status"] in ("killed", "timeout")}
        for m in (m for t in targets for m in t.mutants if key(m.id) in killed):
            m.status = killed[key(m.id)]
    named = {t.module for t in targets}
    for module, digest in equivalent:
        if module in named:
            print(f"warning: the equivalent mutant {module}:{digest} no longer exists", file=sys.stderr)
    return targets


def main(argv=None) -> int:
    args = arguments(argv)
    targets = collect(args)
    if args.list:
        for m in (m for t in targets for m in t.mutants):
            print(f"{m.id}  [{m.func}]" + (f"  equivalent: {m.reason}" if m.reason else "") + f"\n{m.diff()}\n")
        return 0
    began = time.monotonic()
    cpu = run(args.root.resolve(), targets, args.jobs, args.pytest_args.split())
    for m in (m for t in targets for m in t.mutants if m.reason and m.status in ("killed", "timeout")):
        print(f"warning: {m.id} is listed as equivalent but was {m.status}", file=sys.stderr)
    scores = [score(t) for t in targets]
    print(table(scores))
    forked = any(not t.exercise for t in targets)
    forked = f" with {args.jobs} workers ({cpu:.0f} s of CPU in the test runs)" if forked else ""
    print(f"\n{time.monotonic() - began:.0f} s{forked}")
    if args.report:
        args.report.write_text(survivors_report(targets), encoding="utf-8")
    if args.json:
        fields = ("module", "func", "kind", "line", "id", "status", "reason", "before", "after")
        args.json.write_text(json.dumps([{k: getattr(m, k) for k in fields} for t in targets for m in t.mutants],
                                        indent=1), encoding="utf-8")
    worst = min((s.percent if t.baseline == "passed" else 0.0 for s, t in zip(scores, targets) if t.scored),
                default=100.0)
    return 1 if args.min_score is not None and worst < args.min_score else 0


if __name__ == "__main__":
    if __package__ in (None, ""):          # python tools/mutate.py: keep the repository off sys.path
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "tools"]
    sys.exit(main())
