"""The learner's function as the checker runs it: on copies of the inputs, which are then
compared with untouched ones, and with random cases that depend only on the code.

:func:`seed_for` gives the seed of an answer's random cases, computed from the exercise and
the answer's code (its bytecode, constants and the learner's functions it calls, never its
file name or line numbers): the same code gets the same cases, hence the same verdict, on
every run, and different code gets other cases, so memorised outputs do not help.

:func:`copied` copies a call's arguments and :func:`read_only` locks their arrays, so that a
write into one stops the code where it happens; :func:`changed_arguments` compares them, after
the call, with the originals. Both reach inside whatever an argument is: arrays in lists,
tuples and dictionaries, and in the attributes of objects (a dataclass of weights), so a change
anywhere (a write into an array, a list's ``pop``, an attribute set anew) is found, with the
place it happened written as code (:class:`Change`: ``w.blocks[0].W_up``). :func:`requested_size` says how large an array a memory error asked
for. The time budget is :mod:`engine.core.budget`.
"""

from __future__ import annotations

import copy
import hashlib
import math
import types
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from engine.presentation import numbers

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

def _is_record(value) -> bool:
    """True for an object whose attributes are its data (a dataclass such as
    ``lib.block.BlockWeights``, or any plain object): not a function, class, module or array."""
    if callable(value) or isinstance(value, (type, types.ModuleType, np.ndarray, np.generic)):
        return False
    return hasattr(value, "__dict__") or bool(_slots(type(value)))


def _slots(cls) -> list[str]:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [n for n in slots if n not in ("__dict__", "__weakref__")]
    return names


def _fields(value) -> dict:
    """The attributes of a record, by name (its ``__dict__`` and its slots)."""
    found = dict(getattr(value, "__dict__", {}))
    for name in _slots(type(value)):
        if hasattr(value, name):
            found[name] = getattr(value, name)
    return found


def _is_named_tuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields") and hasattr(type(value), "_make")


def describe(value, name: str) -> str:
    """What an argument is, in words: "the array `x`", "the list of blocks", "the BlockWeights
    object `w`"."""
    if isinstance(value, np.ndarray):
        return f"the array `{name}`"
    if isinstance(value, list):
        return f"the list of {name}" if name.isalpha() and name.endswith("s") else f"the list `{name}`"
    if isinstance(value, dict):
        return f"the dictionary `{name}`"
    if isinstance(value, tuple):
        return f"the {type(value).__name__} `{name}`" if _is_named_tuple(value) else f"the tuple `{name}`"
    if isinstance(value, (set, frozenset)):
        return f"the set `{name}`"
    if _is_record(value):
        return f"the {type(value).__name__} object `{name}`"
    return f"`{name}`"


@dataclass(frozen=True)
class Change:
    """Where an argument no longer holds what it was given. ``argument`` is its name, ``path``
    the part that changed, written as code ("w.blocks[0].W_up", "blocks", "x"); ``before`` and
    ``after`` that part as given and as the call left it."""

    argument: str
    path: str
    before: Any = None
    after: Any = None
    described: str = ""         # the whole argument in words: "the list of blocks"
    within: Any = None          # what holds the part that changed (None: the argument itself)

    @property
    def what(self) -> str:
        """The change in words: "`blocks` held 4 items and now holds 3", "`w.Wq` no longer holds
        the numbers it was given"."""
        before, after = self.before, self.after
        if isinstance(before, (list, tuple, dict)) and type(before) is type(after) and len(before) != len(after):
            item = "key" if isinstance(before, dict) else "item"
            return (f"`{self.path}` held {numbers.plural(len(before), item)} and now holds "
                    f"{numbers.plural(len(after), item)}")
        if isinstance(before, np.ndarray) and isinstance(after, np.ndarray) \
                and before.shape == after.shape and before.dtype == after.dtype:
            return f"`{self.path}` no longer holds the numbers it was given"
        if before is ABSENT:
            return f"`{self.path}` was added"
        if after is ABSENT:
            return f"`{self.path}` was removed"
        return f"`{self.path}` no longer holds what it was given"


ABSENT = object()      # an attribute or a key that one side has and the other has not


def first_change(after: Any, before: Any, path: str = "", argument: str = "", within: Any = None) -> Change | None:
    """The first place where ``after`` differs from its untouched copy ``before`` (arrays: shape,
    type and numbers, NaN equal to NaN; lists, tuples and dictionaries item by item; records
    such as a dataclass attribute by attribute; functions by identity), or None."""
    argument = argument or path
    change = lambda: Change(argument, path, before, after, within=within)  # noqa: E731
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray) or after.shape != before.shape or after.dtype != before.dtype:
            return change()
        equal = np.array_equal(after, before, equal_nan=before.dtype.kind in "fc")
        return None if equal else change()
    if isinstance(before, (list, tuple)):
        if type(after) is not type(before) or len(after) != len(before):
            return change()
        names = before._fields if _is_named_tuple(before) else None
        for i, (a, b) in enumerate(zip(after, before)):
            found = first_change(a, b, f"{path}.{names[i]}" if names else f"{path}[{i}]", argument, before)
            if found:
                return found
        return None
    if isinstance(before, dict):
        if not isinstance(after, dict):
            return change()
        for key in before:
            found = first_change(after.get(key, ABSENT), before[key], f"{path}[{key!r}]", argument, before)
            if found:
                return found
        extra = [key for key in after if key not in before]
        return Change(argument, f"{path}[{extra[0]!r}]", ABSENT, after[extra[0]], within=before) if extra else None
    if before is ABSENT or after is ABSENT:
        return change()
    if isinstance(before, (set, frozenset)):
        return None if after == before else change()
    if _is_record(before):
        if type(after) is not type(before):
            return change()
        now, then = _fields(after), _fields(before)
        for name in list(then) + [n for n in now if n not in then]:
            found = first_change(now.get(name, ABSENT), then.get(name, ABSENT), f"{path}.{name}", argument, before)
            if found:
                return found
        return None
    if callable(before):
        return None if after is before else change()
    if isinstance(before, float) and math.isnan(before):
        return None if isinstance(after, float) and math.isnan(after) else change()
    try:
        return None if bool(after == before) else change()
    except Exception:  # noqa: BLE001 - something that cannot be compared counts as unchanged
        return None


def same(a: Any, b: Any) -> bool:
    """True when ``a`` still equals its untouched copy ``b`` (see :func:`first_change`)."""
    return first_change(a, b) is None


def read_only(value, seen: set | None = None) -> None:
    """Make every array inside ``value`` read-only: in tuples, lists and dictionaries, and in the
    attributes of records (a dataclass of weights), however deep."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, (tuple, list)):
        for item in value:
            read_only(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            read_only(item, seen)
    elif _is_record(value):
        for item in _fields(value).values():
            read_only(item, seen)


def changed_arguments(given: tuple, kwargs: dict, originals: tuple, original_kwargs: dict,
                      names: list[str]) -> list[Change]:
    """Where the arguments differ from their originals, one :class:`Change` per argument that
    changed (``names``: the positional arguments' names)."""
    pairs = [(names[i], a, b) for i, (a, b) in enumerate(zip(given, originals))]
    pairs += [(k, kwargs.get(k, ABSENT), original_kwargs[k]) for k in original_kwargs]
    changed = []
    for name, after, before in pairs:
        change = first_change(after, before, name, name)
        if change is not None:
            changed.append(dataclasses.replace(change, described=describe(before, name)))
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
    """A deep copy of the arguments of a call: arrays, lists, tuples (named ones too), dicts,
    sets and records (a dataclass of weights, any plain object: attribute by attribute) are
    copied, two arguments that were one array staying one array, while functions and other
    callables stay the very same objects (a block of the model, a layer passed as an
    argument)."""
    memo = {} if memo is None else memo
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, np.ndarray):
        out = value.copy()
    elif isinstance(value, list):
        out = memo[key] = []
        out.extend(copied(v, memo) for v in value)
    elif _is_named_tuple(value):
        out = type(value)._make(copied(v, memo) for v in value)
    elif isinstance(value, tuple):
        out = tuple(copied(v, memo) for v in value)
    elif isinstance(value, dict):
        out = memo[key] = {}
        out.update((k, copied(v, memo)) for k, v in value.items())
    elif isinstance(value, (set, frozenset)):
        out = type(value)(copied(v, memo) for v in value)
    elif callable(value) or isinstance(value, (int, float, complex, str, bytes, bool, type(None), np.generic)):
        out = value
    elif _is_record(value):
        out = memo[key] = copy.copy(value)
        for name, item in _fields(value).items():
            object.__setattr__(out, name, copied(item, memo))
    else:
        out = copy.deepcopy(value)
    memo[key] = out
    return out
