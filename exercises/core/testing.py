"""Helpers to run an exercise cell outside a notebook (used by the tests)."""

from __future__ import annotations

import linecache

from .checker import Feedback, evaluate
from .registry import Exercise, Variant

_counter = [0]


def run_source(source: str, context: str = "", name: str = "cell") -> dict:
    """Execute ``context`` then ``source`` in a fresh namespace, as a notebook cell would.

    The source is registered with :mod:`linecache` so tracebacks can show its lines.
    """
    ns: dict = {"__name__": "__main__"}
    if context:
        exec(compile(context, "<setup>", "exec"), ns)
    _counter[0] += 1
    filename = f"<cell {name} #{_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ns)
    return ns


def try_variant(ex: Exercise, variant: Variant | None = None, rng=None) -> Feedback:
    """Fill the exercise's blanks (solution, or a variant), run the cell and check it."""
    source = ex.solution_source if variant is None else ex.variant_source(variant)
    ns = run_source(source, ex.context, ex.id)
    return evaluate(ex, ns, rng=rng)


def try_template(ex: Exercise) -> Feedback:
    """Run the cell as shipped, blanks in place, and check it."""
    return evaluate(ex, run_source(ex.template, ex.context, ex.id))
