"""Running the learner's function on the cases of one check, within one budget
(:mod:`engine.core.budget`), on read-only copies of the inputs (:mod:`engine.core.sandbox`); and
the reference's and the known mistakes' results on the same cases, computed once."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from . import diagnose
from .budget import Budget, OutOfTime
from .cell import run_cell
from .compare import close
from .definition import Case, Exercise
from .sandbox import argument_names, changed_arguments, copied, read_only

MISSING = object()
RAISED = diagnose.RAISED   # what a call that raised is recorded as, when comparing behaviours


@dataclass
class Call:
    """One call of the learner's function: what it returned or raised, and what it changed
    (``wrote``: the error the code met when it wrote into a read-only argument)."""

    value: object = MISSING
    error: BaseException | None = None
    changed: list = field(default_factory=list)
    wrote: BaseException | None = None

    @property
    def behaviour(self):
        return RAISED if self.error is not None else self.value


class Runner:
    """Runs one learner's function on the cases of one check, within one budget."""

    def __init__(self, ex: Exercise, func):
        self.ex, self.func, self.budget = ex, func, Budget()
        self.calls: dict[int, Call] = {}
        self.results: list = []              # (case, the result returned, an untouched copy)

    def _names(self, case: Case) -> list[str]:
        return argument_names(self.func, len(case.args))

    def call(self, case: Case) -> Call:
        """Call on copies of the case's inputs (the case itself stays untouched), every array in
        them read-only, however deep (in a list, in an object's attributes): a write into one,
        through any view of it, stops the code where it happens. Everything else (a list's
        items, an object's attributes) is compared with the originals after the call.
        OutOfTime propagates."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        read_only((args, kwargs))
        try:
            value = self._run(args, kwargs)
        except ValueError as exc:
            if "read-only" not in str(exc):
                return Call(error=exc)
            return self._wrote(case, exc)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            return Call(error=exc, changed=changed_arguments(args, kwargs, case.args, case.kwargs,
                                                              self._names(case)))
        return Call(value=value, changed=changed_arguments(args, kwargs, case.args, case.kwargs,
                                                            self._names(case)))

    def _run(self, args, kwargs, each_line=None):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return self.budget.watched(each_line, self.func, *args, **kwargs)

    def _wrote(self, case: Case, write: BaseException) -> Call:
        """The code met a read-only array: run it on writable copies. If it then runs, the array
        was one of its arguments: say which changed. If it fails again, the read-only array was
        its own (``np.broadcast_to`` makes such views), and that error is the outcome."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        try:
            self._run(args, kwargs)
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            return Call(error=exc)
        changed = changed_arguments(args, kwargs, case.args, case.kwargs, self._names(case))
        return Call(changed=changed or [None], wrote=write)

    def line_of_change(self, case: Case) -> tuple[str, int] | None:
        """(file name, line) of the learner's line that changed an argument on ``case``: the
        call is run again, and the arguments compared with the originals before each line."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        read_only((args, kwargs))
        names = self._names(case)
        state = {"line": None, "changed": False, "culprit": None}

        def look(line):            # blame the last line that took the arguments from as given to changed
            changed = bool(changed_arguments(args, kwargs, case.args, case.kwargs, names))
            if changed and not state["changed"]:
                state["culprit"] = state["line"]
            state["changed"], state["line"] = changed, line

        try:
            self._run(args, kwargs, lambda filename, lineno, _frame: look((filename, lineno)))
        except Exception:  # noqa: BLE001 - the learner's code may raise anything
            pass
        look(None)
        return state["culprit"] if state["changed"] else None

    def steps(self, case: Case, names) -> dict | None:
        """The values the learner's function holds under ``names`` (the exercise's steps, such
        as ``mean`` and ``var``) on ``case``, as they are at its last line (or where it raised);
        None when it runs out of time."""
        args, kwargs = copied(case.args), copied(case.kwargs)
        read_only((args, kwargs))
        code, wanted, seen = getattr(self.func, "__code__", None), tuple(names), {}

        def look(_filename, _line, frame) -> None:
            if frame is not None and frame.f_code is code:
                values = frame.f_locals
                for name in wanted:
                    if name in values:
                        value = values[name]
                        seen[name] = value.copy() if isinstance(value, np.ndarray) else value

        try:
            self._run(args, kwargs, look)
        except OutOfTime:
            return None
        except Exception:  # noqa: BLE001 - the steps it took before it raised
            pass
        return seen

    def outcome(self, index: int, case: Case) -> Call:
        if index not in self.calls:
            self.calls[index] = self.call(case)
        return self.calls[index]


# The reference's and the known mistakes' results on fixed cases, kept with the case itself (an id
# alone could be taken again by another case, once an exercise made for a test is gone).
_EXPECTED: dict[int, tuple[Case, object]] = {}
_MISTAKEN: dict[tuple[int, int], tuple[Case, object]] = {}


def _kept(store: dict, key, case: Case, ex: Exercise, compute):
    entry = store.get(key)
    if entry is not None and entry[0] is case:
        return entry[1]
    value = compute()
    if any(case is c for c in ex.fixed_cases()):
        store[key] = (case, value)
    return value


def reference(ex: Exercise, case: Case):
    def compute():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return ex.reference(*copied(case.args), **copied(case.kwargs))
    return _kept(_EXPECTED, id(case), case, ex, compute)


def mistaken(ex: Exercise, number: int, case: Case):
    """What mistake ``number`` gives on ``case`` (:data:`RAISED` if it raises)."""
    def compute():
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                return ex.mistaken(number)(*copied(case.args), **copied(case.kwargs))
        except Exception:  # noqa: BLE001 - a mistake that raises is modelled as raising
            return RAISED
    return _kept(_MISTAKEN, (id(ex.mistakes[number]), id(case)), case, ex, compute)


def agree(a, b, ex: Exercise, case: Case) -> bool:
    if a is RAISED or b is RAISED:
        return a is b
    if a is None or b is None:
        return a is b
    return close(a, b, ex, case)


_SOLVED: dict[int, tuple[Exercise, object]] = {}


def solved(ex: Exercise):
    """The function the exercise's solution defines (its cell with the blanks filled), run once."""
    entry = _SOLVED.get(id(ex))
    if entry is None or entry[0] is not ex:
        entry = _SOLVED[id(ex)] = (ex, run_cell(ex.solution_source, ex.context, f"{ex.id} solution")[ex.name])
    return entry[1]
