"""Running the learner's function for a check: within a time budget, with its inputs watched,
and with random cases that depend only on the code.

A learner's loop that never ends must not freeze the notebook. In the browser the kernel runs
in Pyodide, which has no signals and no threads, and a static site cannot interrupt it, so the
budget is kept by a tracing hook (:func:`sys.settrace`): on every line of the learner's own
code it looks at the clock, and past the deadline it raises :class:`OutOfTime` inside that
code. The hook traces only the learner's frames (the course's, NumPy's and Python's own code
run at full speed), so the official solutions run about as fast as without it. A NumPy call
that runs long inside C cannot be stopped by a hook: the inputs of every check are small, so
only a mistaken shape makes such a call long, and an array too large for memory raises a
``MemoryError`` that :func:`resource_problem` turns into plain words. The recursion limit is
lowered to a few hundred frames above the check's own for the call, so deep recursion stops
long before it could overflow the browser's stack.

:func:`seed_for` gives the seed of an answer's random cases, computed from the exercise and
the answer's code (its bytecode, constants and the learner's functions it calls, never its
file name or line numbers): the same code gets the same cases, hence the same verdict, on
every run, and different code gets other cases, so memorised outputs do not help.

:func:`changed_arguments` compares what the function was given with an untouched copy.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import sys
import time
import types
from typing import Any, Callable

import numpy as np

CALL_SECONDS = 3.0       # one call of the learner's function
CHECK_SECONDS = 12.0     # all the calls of one check together
RECURSION_ROOM = 300     # frames the learner's code may add on top of the check's own


class OutOfTime(BaseException):
    """Raised inside the learner's code when its time is up. A ``BaseException``, so that an
    ``except Exception`` in that code does not swallow it. ``seconds`` is the limit that was
    passed; ``total`` is True when it was the whole check's."""

    def __init__(self, seconds: float, total: bool = False):
        super().__init__(f"did not finish in {seconds:g} s")
        self.seconds = seconds
        self.total = total


def _internal_dirs() -> tuple[str, ...]:
    """Folders whose code is the course's, NumPy's or Python's, never the learner's."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    dirs = [os.path.join(root, d) + os.sep for d in ("lib", "labs", "exercises")]
    dirs.append(os.path.dirname(np.__file__) + os.sep)
    for prefix in {sys.prefix, sys.base_prefix, getattr(sys, "exec_prefix", sys.prefix)}:
        dirs.append(os.path.join(prefix, "lib") + os.sep)
    dirs.append(os.path.dirname(os.__file__) + os.sep)
    return tuple(dirs)


_INTERNAL = _internal_dirs()
_LEARNERS: dict[str, bool] = {}


def is_learners(filename: str) -> bool:
    """True for code the learner wrote: a notebook cell (its file name is made up, such as
    ``<cell row-mean #3>`` or an IPython cell's temporary file), not a file of the course,
    NumPy or Python."""
    known = _LEARNERS.get(filename)
    if known is None:
        if filename.startswith("<frozen"):
            known = False
        else:
            path = os.path.abspath(filename) if not filename.startswith("<") else filename
            known = not path.startswith(_INTERNAL)
        _LEARNERS[filename] = known
    return known


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


class Budget:
    """The time one check may spend in the learner's code: ``per_call`` seconds for each call
    and ``total`` for all of them."""

    def __init__(self, per_call: float | None = None, total: float | None = None):
        self.per_call = CALL_SECONDS if per_call is None else per_call
        self.total = CHECK_SECONDS if total is None else total
        self.used = 0.0

    def call(self, func: Callable, *args, **kwargs):
        """``func(*args, **kwargs)``, stopped with :class:`OutOfTime` past the deadline."""
        left = self.total - self.used
        if left <= 0:
            raise OutOfTime(self.total, total=True)
        limit, total = (self.per_call, False) if self.per_call <= left else (left, True)
        clock = time.monotonic
        start = clock()
        deadline = start + limit

        def line(frame, event, arg):
            if clock() > deadline:
                raise OutOfTime(self.total if total else self.per_call, total)
            return line

        def call(frame, event, arg):
            if clock() > deadline:
                raise OutOfTime(self.total if total else self.per_call, total)
            return line if is_learners(frame.f_code.co_filename) else None

        previous = sys.gettrace()
        recursion = sys.getrecursionlimit()
        sys.setrecursionlimit(min(recursion, _depth() + RECURSION_ROOM))
        sys.settrace(call)
        try:
            return func(*args, **kwargs)
        finally:
            sys.settrace(previous)
            sys.setrecursionlimit(recursion)
            self.used += clock() - start


# ---------------------------------------------------------------- errors in plain words

def resource_problem(exc: BaseException) -> str | None:
    """"recursion" or "memory" when ``exc`` says the code ran out of stack or memory."""
    if isinstance(exc, RecursionError):
        return "recursion"
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, ValueError) and any(words in str(exc) for words in (
            "array is too big", "Maximum allowed dimension exceeded", "maximum supported dimension")):
        return "memory"
    return None


def requested_size(exc: BaseException) -> str:
    """What a memory error asked for, in words: "an array of shape (1000000, 1000000), 7.3 TiB"."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    if shape is None or dtype is None:
        return "an array far larger than the inputs"
    nbytes = float(np.prod(shape, dtype=float)) * np.dtype(dtype).itemsize
    units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    power = min(int(math.log(max(nbytes, 1.0), 1024)), len(units) - 1)
    return f"an array of shape {tuple(int(n) for n in shape)}, {nbytes / 1024 ** power:.1f} {units[power]}"


# ---------------------------------------------------------------- inputs left as they were

def same(a: Any, b: Any) -> bool:
    """True when ``a`` still equals its untouched copy ``b`` (arrays: same shape, type and
    numbers, NaN equal to NaN; containers item by item; functions by identity)."""
    if isinstance(b, np.ndarray):
        if not isinstance(a, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in b)
    if isinstance(b, (set, frozenset)):
        return a == b
    if callable(b):
        return a is b
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - something that cannot be compared counts as unchanged
        return True


def changed_arguments(given: tuple, kwargs: dict, originals: tuple, original_kwargs: dict) -> list:
    """Positions (ints) and names (strs) of the arguments that differ from their originals."""
    changed: list = [i for i, (a, b) in enumerate(zip(given, originals)) if not same(a, b)]
    changed += [k for k in original_kwargs if not same(kwargs.get(k), original_kwargs[k])]
    return changed


def argument_names(func: Callable, count: int) -> list[str]:
    """The names of the first ``count`` positional parameters of ``func`` ("argument 2" when
    they cannot be read)."""
    try:
        import inspect
        names = [p.name for p in inspect.signature(func).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"argument {i + 1}" for i in range(count)]


# ---------------------------------------------------------------- the seed of an answer

def _constant(value, seen) -> bytes:
    if isinstance(value, types.CodeType):
        return _code(value, seen)
    if isinstance(value, frozenset):            # its order may change from run to run
        return b"frozenset" + b",".join(sorted(_constant(v, seen) for v in value))
    if isinstance(value, tuple):
        return b"(" + b",".join(_constant(v, seen) for v in value) + b")"
    return repr(value).encode()


def _code(code: types.CodeType, seen) -> bytes:
    parts = [code.co_code, repr((code.co_names, code.co_varnames, code.co_freevars)).encode()]
    parts += [_constant(c, seen) for c in code.co_consts]
    return b"|".join(parts)


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _value(value, seen) -> bytes:
    """Bytes for a value the code reads: functions by their code, numbers and strings (and
    tuples of them) by their value, anything that can change in place (an array, a list, a
    dict) by its type and shape only, so that code which fills such a container keeps its
    seed from one run to the next."""
    if isinstance(value, types.FunctionType):
        return _function(value, seen)
    if isinstance(value, np.ndarray):
        return repr(("ndarray", value.shape, value.dtype.str)).encode()
    if isinstance(value, (int, float, complex, str, bytes, bool, type(None), np.generic)):
        return repr(value).encode()
    if isinstance(value, tuple):
        return b"(" + b",".join(_value(v, seen) for v in value) + b")"
    return type(value).__qualname__.encode()


def _function(func: types.FunctionType, seen: set) -> bytes:
    if id(func) in seen:
        return b"<again>"
    seen.add(id(func))
    if not is_learners(func.__code__.co_filename):
        return f"{func.__module__}.{func.__qualname__}".encode()
    parts = [_code(func.__code__, seen), _value(func.__defaults__, seen),
             _value(tuple(sorted((func.__kwdefaults__ or {}).items())), seen)]
    for cell in func.__closure__ or ():
        try:
            parts.append(_value(cell.cell_contents, seen))
        except ValueError:                      # a cell not filled yet
            parts.append(b"<empty>")
    for name in sorted(_names(func.__code__)):  # what it reads from the notebook: helpers, constants
        if name in func.__globals__:
            value = func.__globals__[name]
            if not isinstance(value, types.ModuleType):
                parts.append(name.encode() + b"=" + _value(value, seen))
    return b"\n".join(parts)


def fingerprint(obj: Any) -> bytes:
    """Bytes that depend only on what ``obj`` computes: for a function of the learner's, its
    bytecode and constants, its defaults and closure, and the helpers and constants it reads
    from the notebook; for anything else callable, its qualified name."""
    seen: set = set()
    if isinstance(obj, types.FunctionType):
        return _function(obj, seen)
    if isinstance(obj, types.MethodType):
        return b"method " + _value(obj.__func__, seen)
    call = getattr(type(obj), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(obj, type):
        return b"callable " + _function(call, seen)
    inner = getattr(obj, "func", None)           # functools.partial
    if inner is not None and callable(inner):
        return b"partial " + fingerprint(inner) + _value(tuple(getattr(obj, "args", ())), seen) \
            + _value(tuple(sorted((getattr(obj, "keywords", None) or {}).items())), seen)
    return f"{type(obj).__module__}.{getattr(obj, '__qualname__', type(obj).__qualname__)}".encode()


def seed_for(exercise_id: str, obj: Any) -> int:
    """The seed of the random cases for this answer to this exercise."""
    digest = hashlib.sha256(exercise_id.encode() + b"\0" + fingerprint(obj)).digest()
    return int.from_bytes(digest[:8], "little")


def copied(value, memo: dict | None = None):
    """A deep copy of the arguments of a call: arrays, lists, tuples, dicts and sets are copied
    (two arguments that were one array stay one array), while functions and other callables
    stay the very same objects (a block of the model, a layer passed as an argument)."""
    memo = {} if memo is None else memo
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, np.ndarray):
        out = value.copy()
    elif isinstance(value, list):
        out = memo[key] = []
        out.extend(copied(v, memo) for v in value)
    elif isinstance(value, tuple):
        out = tuple(copied(v, memo) for v in value)
    elif isinstance(value, dict):
        out = memo[key] = {}
        out.update((k, copied(v, memo)) for k, v in value.items())
    elif isinstance(value, (set, frozenset)):
        out = type(value)(copied(v, memo) for v in value)
    elif callable(value) or isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
        out = value
    else:
        out = copy.deepcopy(value)
    memo[key] = out
    return out
