"""A changed line of the solution evaluated within bounds: a slip's change may turn a product of
sizes into a power (``top_k ** expert``, a whole number of millions of digits that Python would
compute for minutes) or ask NumPy for an array of billions of numbers (``np.arange(n ** 2)``).
Neither can be stopped once it has started, so both are refused before they start.

:func:`bounded` rewrites every ``a ** b`` of an expression as ``_power(a, b)``, which refuses an
exponent larger than :data:`EXPONENT`; :func:`namespace` gives NumPy as ``np`` with its
functions that make arrays of a given size refusing more than :data:`NUMBERS` numbers.
"""

from __future__ import annotations

import ast
import math

import numpy as np

EXPONENT = 64               # the largest exponent a changed line may raise to
NUMBERS = 10_000_000        # the most numbers an array made by a changed line may hold


class TooLarge(ValueError):
    """A changed line asked for a power or an array too large to compute."""


def _power(base, exponent):
    if np.any(np.abs(np.asarray(exponent, dtype=float)) > EXPONENT):
        raise TooLarge("an exponent too large")
    return base ** exponent


class _Powers(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.copy_location(
                ast.Call(ast.Name("_power", ast.Load()), [node.left, node.right], []), node)
        return node


def bounded(expression: str):
    """``expression`` compiled for :func:`eval`, its powers bounded."""
    tree = _Powers().visit(ast.parse(expression, mode="eval"))
    return compile(ast.fix_missing_locations(tree), "<a changed line>", "eval")


def _count(value) -> float:
    """How many numbers a size (an int or a tuple of ints) asks for; 0 for anything else."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, (int, np.integer)) for v in value):
        return float(math.prod(int(v) for v in value))
    return 0.0


def _arange_count(*args) -> float:
    """How many numbers ``np.arange(*args)`` makes (start, stop, step as NumPy reads them)."""
    try:
        start, stop, step = (0.0, float(args[0]), 1.0) if len(args) == 1 else \
            (float(args[0]), float(args[1]), float(args[2]) if len(args) > 2 else 1.0)
        return max(0.0, math.ceil((stop - start) / step))
    except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError):
        return 0.0


def _asked(name: str, args, kwargs) -> float:
    """How many numbers NumPy's ``name(*args, **kwargs)`` makes, as far as its sizes say."""
    if name == "arange":
        return _arange_count(*args)
    if name in ("eye", "tri") and args:
        return _count(args[0]) * _count(args[1] if len(args) > 1 and args[1] is not None else args[0])
    return max([_count(a) for a in args] + [_count(v) for v in kwargs.values()] + [0.0])


def _sized(name: str):
    make = getattr(np, name)

    def checked(*args, **kwargs):
        asked = _asked(name, args, kwargs)
        if asked > NUMBERS:
            raise TooLarge(f"an array of {asked:.0f} numbers")
        return make(*args, **kwargs)
    return checked


class _NumPy:
    """NumPy, with the functions that make an array of a given size checked first."""

    SIZED = ("arange", "zeros", "ones", "empty", "full", "eye", "tile", "repeat", "linspace", "tri")

    def __getattr__(self, name: str):
        if name in self.SIZED:
            return _sized(name)
        return getattr(np, name)


def namespace(space: dict) -> dict:
    """A copy of ``space`` (the names a line reads) in which the line's NumPy and powers are
    bounded."""
    bound = dict(space)
    for name, value in space.items():
        if value is np:
            bound[name] = _NumPy()
    bound["_power"] = _power
    return bound
