"""The blank, ``____``, that exercise cells leave for the learner to fill.

A blank stands for "not written yet". It absorbs arithmetic, comparisons,
indexing, calls and NumPy functions (every one of them gives the blank back),
so a notebook whose blanks are still in place runs from top to bottom without
an error; the check after the exercise then reports "not attempted".
"""

from __future__ import annotations

import numpy as np

__all__ = ["Blank", "BLANK", "____", "contains_blank", "mentions_blank"]


class Blank:
    """The singleton placeholder ``____``."""

    _instance: "Blank | None" = None
    __array_priority__ = 1_000_000

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "____"

    __str__ = __repr__

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """What a cell shows when its result is a blank (a function whose blank is not filled yet)."""
        printer.text("____  (a blank not filled yet: fill every ____ in the exercise cell and run it, "
                     "then run this cell again)")

    def __format__(self, spec: str) -> str:
        return "____"

    def __reduce__(self):
        return (Blank, ())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # NumPy: any ufunc or array function that meets a blank gives a blank.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return self

    def __array_function__(self, func, types, args, kwargs):
        return self

    # Attribute access, calls and indexing give the blank back.
    def __getattr__(self, name: str):
        if name.startswith("_"):  # dunders, IPython's _repr_*_ and _ipython_* probes
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __setitem__(self, key, value):
        pass

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __iter__(self):
        return iter(())

    def __hash__(self) -> int:
        return hash("____")

    def _absorb(self, *args, **kwargs):
        return self

    # Comparisons give the blank too (so ``____ == 3`` is not "False").
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _absorb

    __add__ = __radd__ = __sub__ = __rsub__ = _absorb
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _absorb
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _absorb
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _absorb
    __divmod__ = __rdivmod__ = _absorb
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _absorb
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _absorb
    __neg__ = __pos__ = __abs__ = __invert__ = _absorb
    __round__ = __trunc__ = __floor__ = __ceil__ = _absorb

    def __float__(self):
        raise TypeError("this value is still a blank (____): fill it in first")

    __int__ = __complex__ = __float__


BLANK = Blank()
____ = BLANK


def contains_blank(value, _depth: int = 0) -> bool:
    """True when ``value`` is the blank or holds one (in a container or object array)."""
    if value is BLANK:
        return True
    if _depth > 4:
        return False
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return any(v is BLANK for v in value.flat)
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(contains_blank(v, _depth + 1) for v in value)
    if isinstance(value, dict):
        return any(contains_blank(v, _depth + 1) for v in value.values())
    return False


def _code_mentions(code, name: str, depth: int = 0) -> bool:
    if name in code.co_names or name in code.co_varnames or name in code.co_freevars:
        return True
    if depth > 6:
        return False
    return any(
        _code_mentions(c, name, depth + 1) for c in code.co_consts if hasattr(c, "co_names")
    )


def mentions_blank(func) -> bool:
    """True when the code of ``func`` (or a function nested in it) refers to ``____``."""
    code = getattr(func, "__code__", None)
    if code is None:
        code = getattr(getattr(func, "__call__", None), "__code__", None)
    return bool(code is not None and _code_mentions(code, "____"))
