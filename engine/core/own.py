"""The learner's own functions, remembered once their check passes, for the labs to run.

``check`` calls :func:`note_check` after every check of a function exercise: a pass remembers
the very function object that passed (in this kernel only: nothing is saved to disk, a restart
forgets it); a failed attempt after a pass forgets it again and leaves a one-line reason.

A lab that uses a function the learner has written describes it with a :class:`Use`: which
exercise it comes from, the course's function it replaces (with the same signature the lab's
model expects) and, when the learner's signature differs, an ``adapt`` that wraps the learner's
function into that signature. :func:`guarded` returns that wrapped function with a guard: it
runs the learner's code on copies of the arguments and raises :class:`UnusableFunction` (never
anything else) when the code raises, returns no number array, the wrong shape, or NaN/infinity
where the course's function gives finite numbers. :func:`run_model` catches it, runs the model on
the course's function instead, and returns the reason in one line for the lab's view to show
(``engine/kit/own_function.py``).

Nothing here imports widgets; the models stay pure functions of the implementation they get.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

_PASSED: dict[str, Callable] = {}      # exercise id -> the learner's function that passed
_LOST: dict[str, str] = {}             # exercise id -> why a function that passed was dropped
_LISTENERS: list = []                  # weak references to callbacks(ex_id)


class UnusableFunction(Exception):
    """The learner's function cannot be used in a lab; the message says why, in one line."""


class NotUsedHere(UnusableFunction):
    """The lab's current setting is outside what the learner's function does (e.g. a gated FFN
    for a function that counts plain ones): not a fault of their code."""


class Outcome(NamedTuple):
    """What :func:`run_model` ran. ``own``: the learner's function ran. ``kind``: "own", "course"
    (the course's function was asked for), "fallback" (the learner's was asked for but is not
    available, or failed here; ``note`` says why) or "not-here" (this setting uses none)."""
    result: Any
    own: bool
    note: str
    kind: str


@dataclass(frozen=True)
class Use:
    """How a lab uses the function of one exercise.

    exercise:  the exercise id (its ``name`` is the learner's function).
    reference: the course's function, in the signature the lab's model calls.
    label:     how the badge names the course's function, e.g. ``"lib.norm.layer_norm"``.
    adapt:     learner's function -> a function in the reference's signature (None: the same).
    """

    exercise: str
    reference: Callable
    label: str
    adapt: Callable[[Callable], Callable] | None = None

    @property
    def name(self) -> str:
        from .registry import get_exercise

        return get_exercise(self.exercise).name

    @property
    def title(self) -> str:
        """The exercise's title, as its notebook shows it."""
        from .registry import get_exercise

        return get_exercise(self.exercise).title


# ---------------------------------------------------------------- remembering

def remember(ex_id: str, func: Callable) -> None:
    _PASSED[ex_id] = func
    _LOST.pop(ex_id, None)
    _notify(ex_id)


def forget(ex_id: str, reason: str = "") -> None:
    had = _PASSED.pop(ex_id, None) is not None
    if had and reason:
        _LOST[ex_id] = reason
    if had:
        _notify(ex_id)


def forget_all() -> None:
    """Forget every remembered function (for tests, and like a kernel restart)."""
    ids = list(_PASSED) + list(_LOST)
    _PASSED.clear()
    _LOST.clear()
    for ex_id in ids:
        _notify(ex_id)


def passed_function(ex_id: str) -> Callable | None:
    """The learner's function that passed the check of ``ex_id`` in this kernel, or None."""
    return _PASSED.get(ex_id)


def lost_reason(ex_id: str) -> str:
    """Why a function that had passed is no longer used ("" if none was dropped)."""
    return _LOST.get(ex_id, "")


def note_check(exercise, obj, feedback) -> None:
    """Called by ``check`` after evaluating: remember a passing function, forget a failing one."""
    if getattr(exercise, "kind", "function") != "function":
        return
    if feedback.passed and callable(obj):
        remember(exercise.id, obj)
    elif feedback.attempted and exercise.id in _PASSED:
        forget(exercise.id, f"your {exercise.name} no longer passes its check "
                            f"({feedback.headline.lower()})")


def listen(callback: Callable[[str], Any]) -> None:
    """Call ``callback(exercise_id)`` whenever a function is remembered or forgotten.

    Bound methods are held weakly, so a lab that is gone is not kept alive.
    """
    try:
        ref = weakref.WeakMethod(callback)
    except TypeError:
        ref = (lambda cb=callback: cb)
    _LISTENERS.append(ref)


def _notify(ex_id: str) -> None:
    alive = []
    for ref in _LISTENERS:
        callback = ref()
        if callback is None:
            continue
        alive.append(ref)
        try:
            callback(ex_id)
        except Exception:  # noqa: BLE001 - one broken view must not stop the others or the check
            pass
    _LISTENERS[:] = alive


# ---------------------------------------------------------------- running it safely

def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 90:
        text = text[:87] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def guarded(use: Use, func: Callable) -> Callable:
    """``func`` (the learner's) in the reference's signature, raising only :class:`UnusableFunction`.

    Each call runs the learner's code on deep copies of the arguments (so it cannot change the
    lab's data), then compares the result's type, shape and finiteness with the reference's for
    the same arguments. The values themselves are the learner's: the lab shows what their code
    computes.
    """
    name = use.name
    inner = use.adapt(func) if use.adapt is not None else func

    def call(*args, **kwargs):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = inner(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except UnusableFunction:
            raise
        except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
            raise UnusableFunction(f"your {name} raised {_one_line(exc)}") from None
        with np.errstate(all="ignore"):
            expected = use.reference(*args, **kwargs)
        if np.isscalar(expected) and not isinstance(expected, (np.ndarray,)):
            try:
                value = float(got)
            except (TypeError, ValueError):
                raise UnusableFunction(f"your {name} returned {type(got).__name__}, not a number") from None
            if not np.isfinite(value) and np.isfinite(float(expected)):
                raise UnusableFunction(f"your {name} returned {value}") from None
            return int(value) if isinstance(expected, (int, np.integer)) and value.is_integer() else value
        try:
            arr = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            raise UnusableFunction(f"your {name} returned {type(got).__name__}, not an array of numbers") from None
        exp = np.asarray(expected)
        if arr.shape != exp.shape:
            raise UnusableFunction(f"your {name} returned shape {arr.shape} where {exp.shape} was needed")
        if np.any(~np.isfinite(arr) & np.isfinite(exp)):
            raise UnusableFunction(f"your {name} returned NaN or infinity here")
        return arr

    call.__name__ = f"your_{name}"
    return call


def choose(use: Use, want_own: bool) -> tuple[Callable, bool, str]:
    """``(function, is_own, note)``: the guarded learner's function if wanted and available,
    else the reference; ``note`` says why the learner's is not used ("" when it is, or when
    it was not asked for)."""
    func = passed_function(use.exercise)
    if want_own and func is not None:
        return guarded(use, func), True, ""
    if want_own:
        return use.reference, False, lost_reason(use.exercise) or f"your {use.name} has not passed its check"
    return use.reference, False, ""


def run_model(build: Callable[[Callable], Any], use: Use, want_own: bool = True) -> Outcome:
    """``build(function)`` on the learner's function if possible, else on the reference.

    Returns an :class:`Outcome`. An :class:`UnusableFunction` raised while building (the
    learner's code raised, or gave a wrong shape or non-finite numbers) makes it rebuild on the
    reference, with the reason as the note. Any other exception is the lab's own and propagates.
    """
    func, is_own, note = choose(use, want_own)
    if not is_own:
        return Outcome(build(func), False, note, "fallback" if want_own else "course")
    try:
        return Outcome(build(func), True, "", "own")
    except NotUsedHere as reason:
        return Outcome(build(use.reference), False, str(reason), "not-here")
    except UnusableFunction as reason:
        return Outcome(build(use.reference), False, str(reason), "fallback")


__all__ = ["NotUsedHere", "Outcome", "UnusableFunction", "Use", "choose", "forget", "forget_all", "guarded",
           "listen", "lost_reason", "note_check", "passed_function", "remember", "run_model"]
