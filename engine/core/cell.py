"""Running the code of a notebook cell outside the notebook: the one way the course does it
(the review runs the code a learner typed again; the tests run exercise cells).

The code runs in a fresh namespace, after ``context`` (the imports the notebook's setup cell
would have made). Its source is registered with :mod:`linecache` under a name of its own, so a
traceback, and :func:`engine.core.checker.error_location`, can quote the learner's line.
"""

from __future__ import annotations

import itertools
import linecache

_runs = itertools.count(1)


def run_cell(source: str, context: str = "", name: str = "cell") -> dict:
    """Execute ``context`` then ``source`` in a fresh namespace, as a notebook cell would, and
    return the namespace. Raises whatever the code raises (``SyntaxError`` included)."""
    namespace: dict = {"__name__": "__main__"}
    if context:
        exec(compile(context, "<setup>", "exec"), namespace)
    filename = f"<cell {name} #{next(_runs)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace
