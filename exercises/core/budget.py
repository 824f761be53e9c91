"""A time budget for the learner's code, kept where there are no signals and no threads.

A learner's loop that never ends must not freeze the notebook. In the browser the kernel runs
in Pyodide, which has no signals and no threads, and a static site cannot interrupt it, so the
budget is kept by a tracing hook (:func:`sys.settrace`): on every line of the learner's own
code it looks at the clock, and past the deadline it raises :class:`OutOfTime` inside that
code. The hook traces only the learner's frames (the course's, NumPy's and Python's own code
run at full speed), so the official solutions run about as fast as without it. A NumPy call
that runs long inside C cannot be stopped by a hook: the inputs of every check are small, so
only a mistaken shape makes such a call long, and an array too large for memory raises a
``MemoryError`` that :func:`resource_problem` names. The recursion limit is lowered to a few
hundred frames above the caller's for the call, so deep recursion stops long before it could
overflow the browser's stack.

Plain Python only: this module runs, and is tested, in a Pyodide without NumPy too.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

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
    numpy = sys.modules.get("numpy")
    if getattr(numpy, "__file__", None):
        dirs.append(os.path.dirname(numpy.__file__) + os.sep)
    for prefix in {sys.prefix, sys.base_prefix, getattr(sys, "exec_prefix", sys.prefix)}:
        dirs.append(os.path.join(prefix, "lib") + os.sep)
    dirs.append(os.path.dirname(os.__file__) + os.sep)
    return tuple(dirs)


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
            known = not path.startswith(_internal_dirs())
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
