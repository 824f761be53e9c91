"""What ran in this kernel: for each name an exercise checks, the latest cell run that defined it,
or tried to and stopped first.

A notebook kernel reports each cell run twice: when it starts (its text and, in JupyterLab, the
cell's id) and when it ends (its prompt number and the error that stopped it, if any). Fed with
these (``engine.notebook.begin`` connects a :class:`RunLog` to IPython's ``pre_run_cell``
and ``post_run_cell`` events), the log keeps, per watched name, the latest run that

- bound the name to a new object (a ``def`` or an assignment that ran), or
- holds a ``def name(`` or ``name =`` line but stopped before it ran (a ``SyntaxError`` stops a
  cell before any of its lines runs), or
- ran in the cell that last defined the name.

So a check can tell the object it is about to judge from the code the learner last ran
(:mod:`engine.core.which_run`). Plain Python: no IPython, no numpy.
"""

from __future__ import annotations

import re
import time
import traceback
from dataclasses import dataclass

_MISSING = object()


@dataclass(frozen=True)
class Run:
    """One cell run that concerns a name.

    number:   the log's count of cell runs in this kernel (1 for the first it saw)
    count:    the prompt number the notebook shows for the run (``[12]``), None if unknown
    cell_id:  the notebook cell's id, when the front end sends it (JupyterLab does)
    source:   the cell's text as it ran
    started:  when it started (``time.time()``)
    error:    why it stopped, e.g. "SyntaxError on line 3: '(' was never closed" ("" if it
              ran to the end)
    defined:  the run bound the name (False: it stopped before, or no longer defines it)
    """

    number: int
    count: int | None
    cell_id: str | None
    source: str
    started: float
    error: str = ""
    defined: bool = True

    @property
    def label(self) -> str:
        """How the notebook shows the run: its prompt number, "[12]"."""
        return f"[{self.count}]" if self.count is not None else f"run {self.number} of this kernel"


def _defining_lines(name: str) -> re.Pattern:
    escaped = re.escape(name)
    return re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{escaped}[ \t]*\("
                      rf"|^{escaped}[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)


def defines(source: str, name: str) -> bool:
    """True when ``source`` holds a ``def name(`` line or a top-level ``name = ...`` line, read
    as text (so it works on code Python cannot read)."""
    return bool(_defining_lines(name).search(source or ""))


def _cell_line(error: BaseException) -> int | None:
    """The line of the cell where ``error`` was raised: the cell's code runs as the first
    ``<module>`` frame of the traceback."""
    if isinstance(error, SyntaxError):
        return error.lineno
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.name == "<module>":
            return frame.lineno
    return None


def describe_error(error: BaseException) -> str:
    """"SyntaxError on line 3: '(' was never closed": the error that stopped a cell, in one
    line."""
    name = type(error).__name__
    message = error.msg if isinstance(error, SyntaxError) else str(error)
    message = " ".join(str(message or "").split())
    if len(message) > 100:
        message = message[:97] + "..."
    line = _cell_line(error)
    where = f" on line {line}" if line else ""
    return f"{name}{where}: {message}" if message else f"{name}{where}"


class RunLog:
    """The latest run of each watched name (see the module's docstring)."""

    def __init__(self, names):
        self.names = tuple(dict.fromkeys(names))
        self._patterns = {name: _defining_lines(name) for name in self.names}
        self._latest: dict[str, Run] = {}    # name -> latest run that concerns it
        self._defined: dict[str, Run] = {}   # name -> latest run that bound it
        self._pending = None
        self._number = 0

    # -------------------------------------------------------------- fed by the kernel

    def started(self, source: str, cell_id: str | None, namespace: dict) -> None:
        """A cell starts running in ``namespace``."""
        if self._pending is not None:      # a run whose end was never reported
            self.finished(None, None)
        self._number += 1
        before = {name: namespace.get(name, _MISSING) for name in self.names}
        self._pending = (self._number, source or "", cell_id or None, time.time(), namespace, before)

    def finished(self, count: int | None, error: BaseException | None) -> None:
        """The cell that started last has ended, with prompt number ``count`` and ``error``
        (the exception that stopped it, or None)."""
        if self._pending is None:
            return
        number, source, cell_id, started, namespace, before = self._pending
        self._pending = None
        for name in self.names:
            now = namespace.get(name, _MISSING)
            bound = now is not before[name] and now is not _MISSING
            written = bool(self._patterns[name].search(source))
            earlier = self._defined.get(name)
            same_cell = bool(cell_id and earlier is not None and earlier.cell_id == cell_id)
            if not (bound or written or same_cell or now is not before[name]):
                continue
            defined = bound or (written and error is None and now is not _MISSING)
            run = Run(number, count, cell_id, source, started,
                      describe_error(error) if error is not None else "", defined)
            self._latest[name] = run
            if defined:
                self._defined[name] = run

    # -------------------------------------------------------------- read by a check

    def latest(self, name: str) -> Run | None:
        """The latest run that defined ``name``, or tried to."""
        return self._latest.get(name)

    def defined_by(self, name: str) -> Run | None:
        """The latest run that bound ``name``: the one whose object the kernel holds."""
        return self._defined.get(name)

    @property
    def running(self) -> int | None:
        """The number of the run in progress (the check's own cell), if any."""
        return self._pending[0] if self._pending is not None else None


__all__ = ["Run", "RunLog", "defines", "describe_error"]
