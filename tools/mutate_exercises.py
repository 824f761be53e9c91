"""Mutants of an exercise's solution: small changes a learner could make, each of which a sound
check must reject (unless it changes nothing, when it is listed as equivalent with a reason).

    python -m tools.mutate_exercises row-mean             # print the mutants of one exercise
    python -m tools.mutate_exercises --all --count        # how many mutants each exercise has

:func:`mutants` takes Python source and returns every mutant of it. Each is one small edit of
the text (a byte range and its replacement), so a mutant keeps the learner's formatting and its
diff is one line. The kinds:

    op        an operator swapped: + -, * /, / * and //, ** *, @ *, * @, // /, % //
    operands  the two sides of a -, /, ** or @ exchanged (b - a)
    term      one side of a binary operation left out (a + b -> a, -> b)
    compare   < <=, > >=, == !=, in / not in, is / is not, and / or
    unary     a unary -, not or ~ dropped
    const     an integer +1 and -1; a float -> 0, twice and a tenth of itself; 0.0 -> 1.0
    axis      axis= set to each of None, 0, 1, -1, -2
    keepdims  keepdims= flipped
    kwarg     a keyword argument left out (the default is used)
    swap      two neighbouring positional arguments of a call, or items of a tuple or list (an
              index pair, a shape), exchanged
    slice     a slice bound +1 and -1, or left out; a step left out
    call      a call replaced by its only argument, or a method call by its object (np.sqrt(v) -> v)
    func      a NumPy function or method swapped for its sibling: sum mean, max min, sin cos,
              tril triu, exp expm1, log log1p, maximum minimum, zeros ones, var std, argmax argmin
    name      a variable read in a function replaced by another of its arguments or variables
    return    a returned value replaced by None
    drop      a statement replaced by pass (an expression, or an assignment to a bound name)
    branch    an if / ternary condition replaced by True, and by False
    inplace   the result written into an argument (or a view of one): a - b ->
              np.subtract(a, b, out=a), np.exp(a) -> np.exp(a, out=a), x = x + y -> x += y

Strings, docstrings and annotations are left alone. Ids are ``kind:hash``, the hash taken from
the kind, the edited line before and after, and how many identical edits came before, so an id
stays the same when other lines move.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from dataclasses import dataclass

from tools.source_edits import SourceEdits

OPS = {ast.Add: ("+", ["-"]), ast.Sub: ("-", ["+"]), ast.Mult: ("*", ["/", "@"]),
       ast.Div: ("/", ["*", "//"]), ast.FloorDiv: ("//", ["/"]), ast.Mod: ("%", ["//"]),
       ast.Pow: ("**", ["*"]), ast.MatMult: ("@", ["*"])}
NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv)
COMPARE = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
           ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"),
           ast.IsNot: ("is not", "is"), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in")}
UFUNCS = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.divide",
          ast.Pow: "np.power"}
AUGMENTED = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.Pow: "**="}
UNARY_UFUNCS = {"exp", "sqrt", "sin", "cos", "log", "abs", "negative", "square", "tanh"}
SIBLINGS = {"sum": "mean", "mean": "sum", "max": "min", "min": "max", "amax": "amin", "amin": "amax",
            "sin": "cos", "cos": "sin", "tril": "triu", "triu": "tril", "exp": "expm1", "log": "log1p",
            "maximum": "minimum", "minimum": "maximum", "zeros": "ones", "ones": "zeros",
            "zeros_like": "ones_like", "ones_like": "zeros_like", "var": "std", "std": "var",
            "argmax": "argmin", "argmin": "argmax", "argsort": "sort"}
AXES = ["None", "0", "1", "-1", "-2"]


@dataclass
class Mutant:
    kind: str
    line: int            # the first edited line, counted from 1
    before: str          # the edited line(s) before and after the edit
    after: str
    source: str          # the whole mutated source
    id: str = ""

    def diff(self) -> str:
        return "\n".join([f"- {line}" for line in self.before.splitlines()]
                         + [f"+ {line}" for line in self.after.splitlines()])


class _Finder(SourceEdits):
    """Walks the source's AST and records (kind, start, end, replacement) edits."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.edits: list[tuple[str, int, int, str]] = []
        self.params: list[set[str]] = [set()]      # names that hold (a view of) an argument
        self.bound: list[set[str]] = [set()]
        self.label: str | None = None

    def add(self, kind: str, start: int, end: int, new: str) -> None:
        if self.data[start:end].decode() != new:
            self.edits.append((kind, start, end, new))

    def aliases_argument(self, node) -> bool:
        """A name holding an argument or a view of one (x, or a = x[:half])."""
        return isinstance(node, ast.Name) and node.id in self.params[-1]

    # ---- scopes
    def body(self, statements) -> None:
        for i, stmt in enumerate(statements):
            docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str)
            if not docstring:
                self.visit(stmt)

    def visit_Module(self, node) -> None:
        self.body(node.body)

    def visit_FunctionDef(self, node) -> None:
        args = node.args
        for default in args.defaults + [d for d in args.kw_defaults if d]:
            self.visit(default)
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.params.append(set(names))
        self.bound.append(set(names))
        self.body(node.body)
        self.params.pop()
        self.bound.pop()

    def visit_Lambda(self, node) -> None:
        self.visit(node.body)

    def visit_AnnAssign(self, node) -> None:
        if node.value:
            self.visit(node.value)

    def visit_JoinedStr(self, node) -> None:
        pass

    # ---- expressions
    def number(self, node, value) -> None:
        if isinstance(value, bool):
            self.replace("keepdims" if self.label == "keepdims" else "const", node, str(not value))
        elif isinstance(value, int):
            kind = "axis" if self.label == "axis" else "const"
            self.replace(kind, node, repr(value + 1))
            self.replace(kind, node, repr(value - 1))
        elif isinstance(value, float):
            news = [repr(0.0), repr(value * 2), repr(value / 10)] if value else [repr(1.0)]
            for new in news:
                self.replace("const", node, new)

    def visit_Constant(self, node) -> None:
        if self.label == "axis":
            self.axis(node)
        if isinstance(node.value, (int, float)):
            self.number(node, node.value)

    def axis(self, node) -> None:
        for value in AXES:
            self.replace("axis", node, value)

    def visit_Name(self, node) -> None:
        if isinstance(node.ctx, ast.Load) and len(self.bound) > 1 and node.id in self.bound[-1]:
            for other in sorted(self.bound[-1] - {node.id}):
                self.replace("name", node, other)

    def visit_UnaryOp(self, node) -> None:
        operand = node.operand
        if isinstance(node.op, ast.USub) and isinstance(operand, ast.Constant) \
                and isinstance(operand.value, (int, float)) and not isinstance(operand.value, bool):
            if self.label == "axis":
                self.axis(node)
            self.number(node, -operand.value)
            self.replace("unary", node, self.text(operand))
            return
        if not isinstance(node.op, ast.UAdd):
            self.replace("unary", node, self.text(operand))
        self.generic_visit(node)

    def visit_BinOp(self, node) -> None:
        old, news = OPS.get(type(node.op), (None, []))
        left, right = self.text(node.left), self.text(node.right)
        for new in news:
            self.token("op", node.left, node.right, old, new)
        if isinstance(node.op, NON_COMMUTATIVE) and left != right:
            self.replace("operands", node, f"({right}) {old} ({left})")
        if old is not None:
            self.replace("term", node, f"({left})")
            self.replace("term", node, f"({right})")
        ufunc = UFUNCS.get(type(node.op))
        if ufunc:
            for target in (node.left, node.right):
                if self.aliases_argument(target):
                    self.replace("inplace", node, f"{ufunc}({left}, {right}, out={target.id})")
        self.generic_visit(node)

    def visit_Compare(self, node) -> None:
        operands = [node.left] + node.comparators
        for i, op in enumerate(node.ops):
            old, new = COMPARE[type(op)]
            self.token("compare", operands[i], operands[i + 1], old, new)
        self.generic_visit(node)

    def visit_BoolOp(self, node) -> None:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:]):
            self.token("compare", left, right, old, new)
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        label, self.label = self.label, None
        items = sorted(node.args + node.keywords, key=lambda n: (n.lineno, n.col_offset))
        for i, item in enumerate(items):
            if isinstance(item, ast.keyword) and item.arg:          # drop `, name=value`
                if i > 0:
                    self.add("kwarg", self.span(items[i - 1])[1], self.span(item)[1], "")
                elif i + 1 < len(items):
                    self.add("kwarg", self.span(item)[0], self.span(items[i + 1])[0], "")
                else:
                    self.replace("kwarg", item, "")
        for a, b in zip(node.args, node.args[1:]):
            if not isinstance(a, ast.Starred) and not isinstance(b, ast.Starred) \
                    and self.text(a) != self.text(b):
                (start, a_end), (b_start, end) = self.span(a), self.span(b)
                gap = self.data[a_end:b_start].decode()
                self.add("swap", start, end, self.text(b) + gap + self.text(a))
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
        self.generic_visit(node)
        self.label = label

    def visit_Tuple(self, node) -> None:
        if isinstance(node.ctx, ast.Load):
            for a, b in zip(node.elts, node.elts[1:]):
                if not isinstance(a, ast.Starred) and not isinstance(b, ast.Starred) \
                        and self.text(a) != self.text(b):
                    (start, a_end), (b_start, end) = self.span(a), self.span(b)
                    gap = self.data[a_end:b_start].decode()
                    self.add("swap", start, end, self.text(b) + gap + self.text(a))
        self.generic_visit(node)

    visit_List = visit_Tuple

    def visit_keyword(self, node) -> None:
        label, self.label = self.label, node.arg if node.arg in ("axis", "keepdims") else None
        if node.arg == "axis" and isinstance(node.value, ast.Name):
            self.axis(node.value)
        self.visit(node.value)
        self.label = label

    def visit_IfExp(self, node) -> None:
        self.replace("branch", node.test, "True")
        self.replace("branch", node.test, "False")
        self.generic_visit(node)

    def visit_Slice(self, node) -> None:
        for bound in (node.lower, node.upper):
            if bound is None:
                continue
            if not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                self.replace("slice", bound, f"({self.text(bound)} + 1)")
                self.replace("slice", bound, f"({self.text(bound)} - 1)")
            self.replace("slice", bound, "")
        if node.step is not None:
            self.replace("slice", node.step, "1")
        self.generic_visit(node)

    # ---- statements
    def visit_If(self, node) -> None:
        self.replace("branch", node.test, "True")
        self.replace("branch", node.test, "False")
        self.visit(node.test)
        self.body(node.body)
        self.body(node.orelse)

    def visit_Return(self, node) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self.replace("return", node.value, "None")
        self.generic_visit(node)

    def drop(self, node) -> None:
        self.replace("drop", node, "pass")
        self.generic_visit(node)

    visit_Expr = visit_Continue = visit_Break = drop

    def visit_Assign(self, node) -> None:
        names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if all(name in self.bound[-1] for name in names):   # a rebinding: dropping keeps the old value
            self.replace("drop", node, "pass")
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(value, ast.BinOp) \
                and isinstance(value.left, ast.Name) and value.left.id == node.targets[0].id \
                and self.aliases_argument(value.left) and type(value.op) in AUGMENTED:
            self.replace("inplace", node, f"{value.left.id} {AUGMENTED[type(value.op)]} {self.text(value.right)}")
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
            if not isinstance(target, ast.Name):
                continue
            base = value.value if isinstance(value, ast.Subscript) else value
            if isinstance(base, ast.Name) and base.id in self.params[-1]:
                self.params[-1].add(target.id)
            else:
                self.params[-1].discard(target.id)

    def visit_AugAssign(self, node) -> None:
        old, news = OPS.get(type(node.op), (None, []))
        for new in news:
            if new != "//" or old == "/":
                self.token("op", node.target, node.value, old + "=", new + "=")
        self.drop(node)

    def visit_For(self, node) -> None:
        self.bound[-1].update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        self.generic_visit(node)


def mutants(source: str) -> list[Mutant]:
    """Every mutant of ``source`` that Python can still read, each with a stable id."""
    data = source.encode()
    finder = _Finder(data)
    finder.visit(ast.parse(data))
    found, seen, counts = [], set(), {}
    for kind, start, end, new in sorted(finder.edits, key=lambda e: (e[1], e[2], e[0], e[3])):
        if (start, end, new) in seen:
            continue
        seen.add((start, end, new))
        mutated = data[:start] + new.encode() + data[end:]
        try:
            ast.parse(mutated)
        except SyntaxError:
            continue
        first = data.rfind(b"\n", 0, start) + 1
        last = data.find(b"\n", end)
        last = len(data) if last < 0 else last
        before = data[first:last].decode()
        after = (data[first:start] + new.encode() + data[end:last]).decode()
        key = (kind, " ".join(before.split()), " ".join(after.split()))
        counts[key] = counts.get(key, 0) + 1
        digest = hashlib.sha1(repr(key + (counts[key],)).encode()).hexdigest()[:10]
        found.append(Mutant(kind, data.count(b"\n", 0, start) + 1, before, after, mutated.decode(),
                            f"{kind}:{digest}"))
    return found


def main(argv=None) -> int:
    import argparse

    from exercises.core.registry import all_exercises, get_exercise

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exercises", nargs="*")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--count", action="store_true")
    args = parser.parse_args(argv)
    chosen = all_exercises() if args.all else [get_exercise(e) for e in args.exercises]
    for ex in chosen:
        found = mutants(ex.solution_source)
        if args.count:
            print(f"{ex.id}: {len(found)}")
            continue
        for m in found:
            print(f"{ex.id} {m.id}  line {m.line}\n{m.diff()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
