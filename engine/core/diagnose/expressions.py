"""Slips inside one line of the cell: the line's right expression changed the way slips change
it, each change with its words, in the learner's terms ("`+` where `*` was wanted", "`np.abs`
where `np.maximum(0, ...)` was wanted", "`base` replaced by `1 / base`", "`axis=-1` left out").

:func:`variants` makes the changed expressions of a line of the solution (its right-hand side);
:mod:`engine.core.diagnose.steps` evaluates them with the values the line reads (the arguments
and the earlier steps) and keeps the first whose values are the learner's on every fixed case.
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator

# An operator, its code and what it does, in words.
OPERATORS = {ast.Add: ("+", "added"), ast.Sub: ("-", "subtracted"), ast.Mult: ("*", "multiplied"),
             ast.Div: ("/", "divided"), ast.FloorDiv: ("//", "divided and rounded down"),
             ast.MatMult: ("@", "a matrix product"), ast.Pow: ("**", "raised to a power")}
ORDERED = (ast.Sub, ast.Div, ast.FloorDiv, ast.MatMult, ast.Pow)      # whose two sides matter

# NumPy functions a slip exchanges for a sibling.
SIBLINGS = [("sum", "mean"), ("mean", "median"), ("max", "min"), ("argmax", "argmin"), ("argsort", "sort"),
            ("tril", "triu"), ("sin", "cos"), ("exp", "log"), ("maximum", "minimum"), ("log", "log2"),
            ("log", "log10"), ("sum", "prod"), ("var", "std"), ("cumsum", "sum")]

# What a slip may wrap around a value: (code with {} for the value, words with {} for its code).
WRAPS = [("({}) ** 2", "`{}` squared"), ("np.sqrt({})", "the square root of `{}`"),
         ("np.abs({})", "`{}` without its signs (`np.abs`)"), ("np.exp({})", "an `np.exp` too many, of `{}`"),
         ("np.log({})", "a log too many, of `{}`"), ("(-({}))", "`{}` with its sign flipped"),
         ("(1 / ({}))", "one over `{}` (`1 / ...`)"), ("(2 * ({}))", "`{}` doubled"),
         ("(({}) / 2)", "`{}` halved"), ("np.round({}, 2)", "`{}` rounded to 2 decimals"),
         ("np.round({})", "`{}` rounded to whole numbers"), ("np.round({}, 1)", "`{}` rounded to 1 decimal"),
         ("np.round({}, 3)", "`{}` rounded to 3 decimals"), ("np.floor({})", "`{}` rounded down to whole numbers"),
         ("np.trunc({})", "`{}` cut to whole numbers (as `.astype(int)` does)"),
         ("np.degrees({})", "`{}` turned into degrees (`np.degrees`): NumPy's sine and cosine take radians"),
         ("(2 * np.pi * ({}))", "`{}` times 2\u03c0: read as turns, where NumPy's sine and cosine take radians"),
         ("np.asarray({}).T", "`{}` transposed")]

# What a slip puts in place of an element-by-element function of a value z.
REPLACEMENTS = [("{}", None),                           # the call left out: said as such, tried first
                ("np.abs({})", "`np.abs(...)` (the size of every number)"),
                ("np.minimum(0, {})", "`np.minimum(0, ...)` (the negative part)"),
                ("np.maximum(0.01 * ({0}), {0})", "a leaky ReLU"), ("np.maximum(0.1 * ({0}), {0})", "a leaky ReLU"),
                ("np.maximum(0, {}) ** 2", "a squared ReLU"), ("np.tanh({})", "`np.tanh(...)`"),
                ("np.maximum(0, {})", "a ReLU (`np.maximum(0, ...)`)"),
                ("1 / (1 + np.exp(-({})))", "the sigmoid"), ("({0}) / (1 + np.exp(-({0})))", "SiLU")]

Variant = tuple[str, str]       # (the changed expression's code, the change in words)


def code(node: ast.AST) -> str:
    return ast.unparse(node)


def _replace(tree: ast.expr, target: ast.AST, new: ast.AST) -> str:
    """The code of ``tree`` with ``target`` (a node of it) replaced by ``new``."""
    if tree is target:
        return code(new)
    twin = copy.deepcopy(tree)
    for original, copied_node in zip(ast.walk(tree), ast.walk(twin)):   # the same walk, node for node
        if original is target:
            return code(_Replacer(copied_node, new).visit(twin))
    return code(tree)


class _Replacer(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.AST):
        self.target, self.new = target, new

    def visit(self, node):
        if node is self.target:
            return self.new
        return super().visit(node)


def _rounded_up(nodes) -> list[ast.AST]:
    """The ``//`` of every ``-(-a // b)`` among ``nodes``: a division rounded up, not down."""
    return [n.operand for n in nodes if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
            and isinstance(n.operand, ast.BinOp) and isinstance(n.operand.op, ast.FloorDiv)
            and isinstance(n.operand.left, ast.UnaryOp) and isinstance(n.operand.left.op, ast.USub)]


def _parse(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


# What a slip does to a whole number (a size, a count, a position): never a wrap that could make
# a size far too large to allocate.
WHOLE_WRAPS = [("({} + 1)", "`{}` + 1 (one too many)"), ("({} - 1)", "`{}` - 1 (one too few)"),
               ("(2 * {})", "`{}` doubled"), ("({} // 2)", "`{}` halved")]


def variants(expression: str, names: list[str], whole: frozenset = frozenset(),
             flags: frozenset = frozenset()) -> Iterator[Variant]:
    """The changed expressions of ``expression`` (the code of a line's right-hand side), simplest
    first. ``names`` are the names in scope there (arguments and earlier steps), for a name put
    where another was wanted; ``whole`` those of them that hold a whole number (a size), which
    only change by one or by a factor 2; ``flags`` those that hold True or False, which change
    only into their opposite or another flag."""
    tree = _parse(expression)
    nodes = list(ast.walk(tree))
    for node in nodes:                                   # the two outcomes of a choice exchanged
        if isinstance(node, ast.IfExp):
            twin = ast.IfExp(node.test, node.orelse, node.body)
            yield (_replace(tree, node, twin),
                   f"the two outcomes of `{_short(code(node))}` the other way round")
    upward = _rounded_up(nodes)
    for node in nodes:                                   # an operator exchanged, two sides swapped
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            old, old_words = OPERATORS[type(node.op)]
            if node in upward:
                old_words = "divided and rounded up, as `-(-a // b)` does"
            for kind, (new, new_words) in OPERATORS.items():
                if kind is not type(node.op):
                    yield (_replace(tree, node, ast.BinOp(node.left, kind(), node.right)),
                           f"`{new}` where `{old}` was wanted ({new_words} where {old_words} was wanted)")
            if type(node.op) in ORDERED:
                yield (_replace(tree, node, ast.BinOp(node.right, node.op, node.left)),
                       f"the two sides of `{old}` the other way round (`{code(node.right)} {old} {code(node.left)}`)")
    for node in nodes:                                   # a sibling function, a call left out
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            for a, b in SIBLINGS:
                for old, new in ((a, b), (b, a)):
                    if name == old:
                        twin = copy.deepcopy(node)
                        twin.func.attr = new
                        yield _replace(tree, node, twin), f"`{new}` where `{old}` was wanted"
    for node in nodes:
        if isinstance(node, ast.Call) and node.keywords:
            for k, keyword in enumerate(node.keywords):
                twin = copy.deepcopy(node)
                del twin.keywords[k]
                yield _replace(tree, node, twin), f"`{code(keyword)}` left out"
                if keyword.arg == "axis":
                    yield from _axes(tree, node, k)
    for node in nodes:
        if isinstance(node, ast.Call):
            values = [a for a in node.args if not isinstance(a, ast.Constant)]
            if len(values) == 1 and _elementwise(node):
                z = code(values[0])
                for pattern, words in REPLACEMENTS:
                    new = pattern.format(z)
                    said = f"`{code(node.func)}(...)` left out, `{_short(z)}` used as it is" if words is None \
                        else f"{words} where `{_short(code(node))}` was wanted"
                    yield _replace(tree, node, _parse(new)), said
            if len(node.args) >= 2 and not node.keywords:
                for i in range(len(node.args) - 1):
                    twin = copy.deepcopy(node)
                    twin.args[i], twin.args[i + 1] = twin.args[i + 1], twin.args[i]
                    yield (_replace(tree, node, twin),
                           f"the arguments `{code(node.args[i])}` and `{code(node.args[i + 1])}` of "
                           f"`{code(node.func)}` the other way round")
    for node in nodes:                                   # a term or a factor left out
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            sign = OPERATORS[type(node.op)][0]
            yield _replace(tree, node, node.left), f"`{sign} {_short(code(node.right))}` left out"
            yield _replace(tree, node, node.right), f"`{_short(code(node.left))} {sign}` left out"
    for node in nodes:                                   # a subscript: a slice moved, an index on another axis
        if isinstance(node, ast.Subscript):
            yield from _subscripts(tree, node)
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    for node in nodes:                                   # a constant changed
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            index = _index_around(node, parents)
            for new in _constants(node.value):
                changed = _replace(tree, node, ast.Constant(new))
                if index is None:
                    yield changed, f"{new!r} where {node.value!r} was wanted"
                else:                                    # an index: said as the whole subscript, -1 and all
                    yield changed, f"`{_indexed(index, node, new)}` where `{code(index)}` was wanted"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            yield _replace(tree, node, node.operand), f"the minus sign of `{code(node)}` left out"
            if code(node) in ("-np.inf", "-(np.inf)"):
                for fill in ("np.nan", "-1e4", "-1e9", "0.0"):
                    yield _replace(tree, node, _parse(fill)), f"`{fill}` where `{code(node)}` was wanted"
    used = sorted({n.id for n in nodes if isinstance(n, ast.Name) and n.id in names})
    for name in used:                                    # a name: another in its place, or changed everywhere
        for other in names:
            if other != name and (name in whole) == (other in whole) and (name in flags) == (other in flags):
                yield _renamed(tree, name, other), f"`{other}` where `{name}` was wanted"
        if name in flags:
            yield _renamed(tree, name, f"(not {name})"), f"`not {name}` where `{name}` was wanted"
            continue
        for pattern, words in (WHOLE_WRAPS if name in whole else WRAPS):
            yield _renamed(tree, name, pattern.format(name)), words.format(name)
    yield from _one_occurrence(tree, nodes, names, whole, flags)
    sizes = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in SIZED]                   # a size passed to np.zeros, np.arange...
    inside = {id(sub) for call in sizes for arg in call.args for sub in ast.walk(arg)}
    for node in nodes:                                   # a part of the line changed as a whole
        if isinstance(node, (ast.Call, ast.BinOp, ast.Subscript)) and node is not tree and id(node) not in inside:
            for pattern, words in WRAPS:
                yield _replace(tree, node, _parse(pattern.format(code(node)))), words.format(_short(code(node)))
    for pattern, words in WRAPS:
        yield pattern.format(expression), words.format(_short(expression))


def _index_around(node: ast.AST, parents: dict):
    """The subscript whose index ``node`` (a constant) is part of (``q.shape[-1]`` for the 1 of
    its -1), or None: a changed index is said whole, not as a bare number."""
    child, parent = node, parents.get(id(node))
    while isinstance(parent, (ast.UnaryOp, ast.Tuple)):
        child, parent = parent, parents.get(id(parent))
    return parent if isinstance(parent, ast.Subscript) and parent.slice is child else None


def _indexed(index: ast.Subscript, node: ast.Constant, new) -> str:
    """The code of ``index`` with the constant ``node`` of its index made ``new``, the index
    written plainly (``q.shape[0]``, not ``q.shape[-0]``)."""
    twin = _parse(_replace(index, node, ast.Constant(new)))

    def plain(part):                             # -(-1) as 1; anything else as it is
        if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
            inner = plain(part.operand)
            if isinstance(inner, ast.Constant) and isinstance(inner.value, (int, float)):
                return ast.Constant(-inner.value)
        if isinstance(part, ast.Tuple):
            return ast.Tuple([plain(p) for p in part.elts])
        return part

    twin.slice = plain(twin.slice)
    return code(twin)


def _one_occurrence(tree, nodes, names, whole, flags) -> Iterator[Variant]:
    """A name the line reads more than once, replaced by another in one place only, said with the
    call around it ("`shifted.sum(axis=-1)` where `e.sum(axis=-1)` was wanted")."""
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    found = [n for n in nodes if isinstance(n, ast.Name) and n.id in names]
    for node in found:
        if sum(n.id == node.id for n in found) < 2 or node.id in flags:
            continue
        around = node
        while id(around) in parents and not isinstance(around, ast.Call):
            around = parents[id(around)]
        for other in names:
            if other != node.id and (node.id in whole) == (other in whole) and other not in flags:
                new = ast.Name(other, ast.Load())
                yield (_replace(tree, node, new),
                       f"`{_short(_replace(around, node, new))}` where `{_short(code(around))}` was wanted")


# NumPy's functions whose arguments are sizes: a changed size could ask for far too much memory.
SIZED = {"arange", "zeros", "ones", "empty", "full", "eye", "tile", "repeat", "linspace", "reshape"}


# NumPy's functions that act on every number alone, which a slip replaces by another.
ELEMENTWISE = {"maximum", "minimum", "abs", "exp", "log", "tanh", "sqrt", "sin", "cos", "square", "negative"}


def _elementwise(node: ast.Call) -> bool:
    """A call of one of NumPy's element-by-element functions, or of a function of the cell's own
    (``silu(z)``)."""
    if isinstance(node.func, ast.Attribute):
        return node.func.attr in ELEMENTWISE and code(node.func.value) in ("np", "numpy")
    return isinstance(node.func, ast.Name)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _renamed(tree: ast.expr, name: str, new: str) -> str:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return _parse(new) if node.id == name else node
    return code(Rename().visit(copy.deepcopy(tree)))


def _moved(bound: ast.expr, step: int) -> ast.expr:
    """A slice's bound one further (``step`` 1) or one nearer (-1): a number written as one."""
    try:
        value = ast.literal_eval(bound)
    except ValueError:
        value = None
    if isinstance(value, int):
        return _parse(repr(value + step))
    return _parse(f"{code(bound)} {'+' if step > 0 else '-'} 1")


def _constants(value) -> list:
    found = [value + 1, value - 1, 2 * value, -value] if isinstance(value, int) else \
        [2 * value, value / 2, -value, value * 10, value / 10]
    return [v for v in dict.fromkeys(found) if v != value]


def _axes(tree: ast.expr, node: ast.Call, k: int) -> Iterator[Variant]:
    """The call's ``axis=`` keyword (its ``k``-th) given another axis, or none (the whole array)."""
    written = code(node.keywords[k].value)
    for axis in ("0", "1", "-1", "-2", "None"):
        if axis != written:
            twin = copy.deepcopy(node)
            twin.keywords[k].value = _parse(axis)
            along = "over the whole array" if axis == "None" else f"along axis {axis}"
            yield _replace(tree, node, twin), f"`axis={axis}` ({along}) where `axis={written}` was wanted"


def _subscripts(tree: ast.expr, node: ast.Subscript) -> Iterator[Variant]:
    """A slice's bound one further or nearer, its two sides exchanged (``[-2:]`` and ``[:-2]``),
    its step left out; an index taken on another axis (``[p]``, ``[:, p]``); the subscript left
    out."""
    index = node.slice
    written = code(node)[len(code(node.value)):]           # "[:, None]", "[-2:]"
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for k, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(part, field)
                for step in ((1, -1) if bound is not None else ()):
                    twin = copy.deepcopy(part)
                    setattr(twin, field, _moved(bound, step))
                    yield (_replace(tree, part, twin),
                           f"`[{code(twin)}]` where `[{code(part)}]` was wanted (a slice one off)")
            if part.lower is not None and part.upper is None:
                twin = ast.Slice(None, part.lower, part.step)
                yield _replace(tree, part, twin), f"`[{code(twin)}]` where `[{code(part)}]` was wanted"
            if part.upper is not None and part.lower is None:
                twin = ast.Slice(part.upper, None, part.step)
                yield _replace(tree, part, twin), f"`[{code(twin)}]` where `[{code(part)}]` was wanted"
    if not isinstance(index, (ast.Tuple, ast.Slice)):
        for axis_code in (f":, {code(index)}", f"..., {code(index)}"):
            yield (_replace(tree, node, _parse(f"({code(node.value)})[{axis_code}]")),
                   f"`[{axis_code}]` (along another axis) where `{written}` was wanted")
    yield _replace(tree, node, node.value), f"`{_short(code(node.value))}` as a whole, without `{written}`"
