"""The mutants of a source: the edits (a programmer's slips, a learner's), the finder that
makes them with ids that survive moved lines, and the list of equivalent mutants."""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
