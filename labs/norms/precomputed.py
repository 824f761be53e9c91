"""Notebook 03's results that no learner's input changes, computed when the course is built and
looked up after (the machinery is ``engine.kit.precomputed``'s).

The placement cell compares pre-norm and post-norm on 50 stacks of 48 random blocks
(``lib.block.norm_placement_experiment``): 4,800 block runs whose exact GELU calls
``math.erfc`` once per number, seconds in the browser for a result that is always the same. It
is computed by ``python -m training.precomputed`` and kept in ``labs/norms/precomputed.npz`` (a
few kB, inside the course wheel). Its key hashes the source of the modules that compute it
(:func:`sources`), so a change to any of them makes the stored result a miss, computed live, and
``tests/test_precomputed.py`` fails until the file is written again.
"""

from __future__ import annotations

from pathlib import Path

from lib import attention, block, ffn, norm, weights

from engine.kit.precomputed import source_store

FOLDER = Path(__file__).resolve().parent


def sources() -> dict:
    """{module name: its source file} of the code that computes the stored results: the block and
    what it runs, the random weights, and the module of the decorated function (read as a file:
    it imports this module)."""
    found = {module.__name__: Path(module.__file__) for module in (block, attention, ffn, norm, weights)}
    return {**found, "labs.norms.placement": FOLDER / "placement.py"}


# sources() looked up at each call, so that a test may put other files in its place
STORE, inputs_digest = source_store(FOLDER, lambda: sources())
precomputed = STORE.precomputed
