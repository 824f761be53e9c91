"""Running an exercise's cell outside a notebook and checking it (for the tests): with its
solution, with a variant's fills, or as shipped with its blanks."""

from __future__ import annotations

from .cell import run_cell
from .checker import Feedback, evaluate
from .definition import Exercise, Variant


def try_variant(ex: Exercise, variant: Variant | None = None, rng=None) -> Feedback:
    """Fill the exercise's blanks (solution, or a variant), run the cell and check it."""
    source = ex.solution_source if variant is None else ex.variant_source(variant)
    return evaluate(ex, run_cell(source, ex.context, ex.id), rng=rng)


def try_template(ex: Exercise) -> Feedback:
    """Run the cell as shipped, blanks in place, and check it."""
    return evaluate(ex, run_cell(ex.template, ex.context, ex.id))
