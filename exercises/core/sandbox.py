"""The learner's function as the checker runs it: on copies of the inputs, which are then
compared with untouched ones, and with random cases that depend only on the code.

:func:`seed_for` gives the seed of an answer's random cases, computed from the exercise and
the answer's code (its bytecode, constants and the learner's functions it calls, never its
file name or line numbers): the same code gets the same cases, hence the same verdict, on
every run, and different code gets other cases, so memorised outputs do not help.

:func:`copied` copies a call's arguments and :func:`read_only` locks their arrays, so that a
write into one stops the code where it happens; :func:`changed_arguments` compares them, after
the call, with the originals. :func:`requested_size` says how large an array a memory error asked
for. The time budget is :mod:`exercises.core.budget`.
"""

from __future__ import annotations

import copy
import hashlib
import math
import types
from typing import Any, Callable

import numpy as np

from .budget import is_learners


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


def read_only(value) -> None:
    """Make every array inside ``value`` (nested in tuples, lists and dicts) read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, (tuple, list)):
        for item in value:
            read_only(item)
    elif isinstance(value, dict):
        for item in value.values():
            read_only(item)


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
