"""A time budget for the learner's code, kept where there are no signals and no threads.

A learner's loop that never ends must not freeze the notebook. In the browser the kernel runs
in Pyodide, which has no signals and no threads, and a static site cannot interrupt it, so the
budget is kept by a hook that Python calls on every line of the learner's own code: it looks at
the clock, and past the deadline it raises :class:`OutOfTime` inside that code. The hook watches
only the learner's frames (the course's, NumPy's and Python's own code run at full speed), so the
official solutions run about as fast as without it.

The stop cannot be swallowed. A loop such as ``while True: try: ... except: continue`` catches
the first :class:`OutOfTime`; so past the deadline the hook raises again on every line the
learner's code runs, the handler's own lines included, until control has left the learner's
frames. Where Python has :mod:`sys.monitoring` (3.12 and later, Pyodide included) the hook is a
monitoring tool, which stays on when it raises. On Python 3.11 it is a tracing hook
(:func:`sys.settrace`), which Python switches off as soon as it raises; there the hook is armed
again when the caught stop is let go (the end of the ``except`` block) and on the next call or
return, by a profiling hook (:func:`sys.setprofile`), which Python leaves on. Whatever the
learner's code does with the stops, a call that was stopped ends in :class:`OutOfTime`.

A NumPy call that runs long inside C cannot be stopped by a hook: the inputs of every check are
small, so only a mistaken shape makes such a call long, and an array too large for memory raises
a ``MemoryError`` that :func:`resource_problem` names. The recursion limit is lowered to a few
hundred frames above the caller's for the call, so deep recursion stops long before it could
overflow the browser's stack.

Plain Python only: this module runs, and is tested, in a Pyodide without NumPy too.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import weakref
from typing import Callable

from .course import current

CALL_SECONDS = 3.0       # one call of the learner's function
CHECK_SECONDS = 12.0     # all the calls of one check together
RECURSION_ROOM = 300     # frames the learner's code may add on top of the check's own


class OutOfTime(BaseException):
    """Raised inside the learner's code when its time is up. A ``BaseException``, so that an
    ``except Exception`` in that code does not swallow it. ``seconds`` is the limit that was
    passed; ``total`` is True when it was the whole check's. ``where`` is (file name, line,
    first line of the function) of the learner's line the first stop of the call was raised at.
    """

    def __init__(self, seconds: float, total: bool = False, where: tuple | None = None):
        super().__init__(f"did not finish in {seconds:g} s")
        self.seconds = seconds
        self.total = total
        self.where = where

    def __del__(self):
        # A stop let go while its call still runs was caught and dropped by the learner's code:
        # the tracing hook (Python 3.11), switched off when it raised, is armed again.
        watch = _watch
        if watch is not None and watch.hook == "trace":
            _arm_trace(sys._getframe(1))


def _internal_dirs() -> tuple[str, ...]:
    """Folders whose code is the engine's, the course's, NumPy's or Python's, never the learner's."""
    engine = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [engine + os.sep]
    for package in current().packages:
        spec = importlib.util.find_spec(package)
        dirs += [os.path.join(folder, "") for folder in (spec and spec.submodule_search_locations) or ()]
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


# ---------------------------------------------------------------- the watch over one call

class _Watch:
    """The deadline of the call being run, and how often its stop was raised."""

    def __init__(self, deadline: float, seconds: float, total: bool, hook: str, outer, each_line=None):
        self.deadline, self.seconds, self.total = deadline, seconds, total
        self.each_line = each_line    # called with (file name, line, frame) before each of the learner's lines
        self.hook = hook          # "monitoring" or "trace"
        self.outer = outer        # the frame of Budget.call: the learner's frames are above it
        self.stops = 0
        self.waited = 0               # lines let run past the deadline (see _trace_line)
        self.where: tuple | None = None

    def stop(self, frame=None) -> OutOfTime:
        """A new stop, raised in ``frame`` (the learner's)."""
        if self.where is None and frame is not None:
            self.where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_firstlineno)
        self.stops += 1
        return OutOfTime(self.seconds, self.total, self.where)


_watch: _Watch | None = None     # the call being watched, if any
_clock = time.monotonic


# -- Python 3.12 and later: a sys.monitoring tool, which stays on when its callback raises

_MONITORING = getattr(sys, "monitoring", None)
_TOOL_IDS = (4, 3, 5, 2)         # the ids sys.monitoring leaves free for tools like this one
_tool: int | None = None


def _event(code, *_where):
    """Every jump, call and resumed generator of the code while a call is watched."""
    if not is_learners(code.co_filename):
        return _MONITORING.DISABLE          # not the learner's: never called there again
    watch = _watch
    if watch is not None and _clock() > watch.deadline:
        raise watch.stop(sys._getframe(1))
    return None


def _line_event(code, line):
    """Every line of the code while a call is watched."""
    if not is_learners(code.co_filename):
        return _MONITORING.DISABLE
    watch = _watch
    if watch is not None:
        if _clock() > watch.deadline:
            raise watch.stop(sys._getframe(1))
        if watch.each_line is not None:
            watch.each_line(code.co_filename, line, sys._getframe(1))
    return None


def _start_monitoring() -> bool:
    """Take a free tool id and watch the events; False when every id is taken."""
    global _tool
    for tool in _TOOL_IDS:
        try:
            _MONITORING.use_tool_id(tool, "course time budget")
        except ValueError:
            continue
        events = _MONITORING.events
        watched = events.LINE | events.JUMP | events.PY_START | events.PY_RESUME
        for event in (events.JUMP, events.PY_START, events.PY_RESUME):
            _MONITORING.register_callback(tool, event, _event)
        _MONITORING.register_callback(tool, events.LINE, _line_event)
        _MONITORING.set_events(tool, watched)
        _tool = tool
        return True
    return False


def _stop_monitoring() -> None:
    global _tool
    events = _MONITORING.events
    _MONITORING.set_events(_tool, 0)
    for event in (events.LINE, events.JUMP, events.PY_START, events.PY_RESUME):
        _MONITORING.register_callback(_tool, event, None)
    _MONITORING.free_tool_id(_tool)
    _tool = None


# -- Python 3.11: a tracing hook, switched off by Python when it raises, and armed again

def _trace_call(frame, event, arg):
    """The global tracing hook: a new frame is entered."""
    if not is_learners(frame.f_code.co_filename):
        return None
    watch = _watch
    if watch is not None and _clock() > watch.deadline:
        _watch_rearming()
        raise watch.stop(frame)
    return _trace_line


def _trace_line(frame, event, arg):
    """The hook of one of the learner's frames: a line is about to run. Past the deadline, a
    line inside a ``try`` (or ``with``) is let run, up to :data:`WAIT_LINES` of them, so that
    the stop is raised where no handler of this frame catches it, if the code gets there."""
    watch = _watch
    if event != "line" or watch is None:
        return _trace_line
    if _clock() > watch.deadline:
        if watch.waited < WAIT_LINES and _in_try(frame.f_code, frame.f_lasti):
            watch.waited += 1
            return _trace_line
        _watch_rearming()
        raise watch.stop(frame)
    if watch.each_line is not None:
        watch.each_line(frame.f_code.co_filename, frame.f_lineno, frame)
    return _trace_line


WAIT_LINES = 1000
_TRY_RANGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _in_try(code, offset: int) -> bool:
    """True when the instruction at ``offset`` is covered by one of the code's exception
    handlers (a ``try``, an ``except`` or a ``with`` block)."""
    ranges = _TRY_RANGES.get(code)
    if ranges is None:
        import dis
        parse = getattr(dis, "_parse_exception_table", None)
        ranges = _TRY_RANGES[code] = [(e.start, e.end) for e in parse(code)] if parse else []
    return any(start <= offset < end for start, end in ranges)


def _arm_trace(frame) -> None:
    """Switch the tracing hook on again, for new frames and for the learner's frames running
    between ``frame`` and the call being watched."""
    watch = _watch
    if watch is None or sys.gettrace() is _trace_call:
        return
    sys.settrace(_trace_call)
    while frame is not None and frame is not watch.outer:
        if is_learners(frame.f_code.co_filename):
            frame.f_trace = _trace_line
        frame = frame.f_back


def _rearm(frame, event, arg) -> None:
    """The profiling hook, once the stop was raised: on the next call or return, the tracing
    hook is armed again if the learner's code caught the stop."""
    _arm_trace(frame)


def _watch_rearming() -> None:
    if sys.getprofile() is not _rearm:
        sys.setprofile(_rearm)


# ---------------------------------------------------------------- the budget

class Budget:
    """The time one check may spend in the learner's code: ``per_call`` seconds for each call
    and ``total`` for all of them."""

    def __init__(self, per_call: float | None = None, total: float | None = None):
        self.per_call = CALL_SECONDS if per_call is None else per_call
        self.total = CHECK_SECONDS if total is None else total
        self.used = 0.0

    def call(self, func: Callable, *args, **kwargs):
        """``func(*args, **kwargs)``, stopped with :class:`OutOfTime` past the deadline. Once
        the stop was raised the call ends in :class:`OutOfTime`, even if the learner's code
        caught it and then returned or raised something else."""
        return self.watched(None, func, *args, **kwargs)

    def watched(self, each_line: Callable | None, func: Callable, *args, **kwargs):
        """:meth:`call`, with ``each_line(file name, line, frame)`` called before each line of
        the learner's code runs (the checker uses it to find the line that changed an argument,
        and to read the values of the learner's steps)."""
        global _watch
        left = self.total - self.used
        if left <= 0:
            raise OutOfTime(self.total, total=True)
        limit, total = (self.per_call, False) if self.per_call <= left else (left, True)
        start = _clock()
        previous = _watch
        owner = previous is None and _MONITORING is not None and _start_monitoring()
        hook = "monitoring" if _tool is not None else "trace"
        watch = _Watch(start + limit, self.total if total else self.per_call, total, hook, sys._getframe(),
                       each_line)
        trace, profile, unraisable = sys.gettrace(), sys.getprofile(), sys.unraisablehook
        recursion = sys.getrecursionlimit()

        def quiet(report):             # a stop raised in a generator being closed reaches no one
            if not isinstance(report.exc_value, OutOfTime):
                unraisable(report)

        sys.unraisablehook = quiet
        sys.setrecursionlimit(min(recursion, _depth() + RECURSION_ROOM))
        _watch = watch
        if hook == "trace":
            sys.settrace(_trace_call)
        try:
            result = func(*args, **kwargs)
        except OutOfTime:
            raise
        except BaseException:
            if watch.stops:            # the learner's code caught the stop and raised another error
                raise watch.stop() from None
            raise
        finally:
            _watch = previous
            if hook == "trace":
                sys.settrace(trace)
                sys.setprofile(profile)
            if owner:
                _stop_monitoring()
            sys.unraisablehook = unraisable
            sys.setrecursionlimit(recursion)
            self.used += _clock() - start
        if watch.stops:                # the learner's code caught the stop, then returned
            raise watch.stop()
        return result


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
