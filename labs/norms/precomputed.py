"""Notebook 03's results that no learner's input changes, computed when the course is built and
looked up after (the machinery is ``engine.kit.precomputed``'s).

The placement cell compares pre-norm and post-norm on 50 stacks of 48 random blocks
(``lib.block.norm_placement_experiment``): 4,800 block runs whose exact GELU calls
``math.erfc`` once per number, seconds in the browser for a result that is always the same. It
is computed by ``python -m training.precomputed`` and kept in ``lib/trained/placement_stacks.npz``
(40 kB), which the course site serves beside the wheel, fetched the first time notebook 03 needs
it (``lib.files``), so no other notebook loads it. Its key hashes the source of the modules that compute it
(:func:`sources`), so a change to any of them makes the stored result a miss, computed live, and
``tests/test_precomputed.py`` fails until the file is written again.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lib import attention, block, ffn, files, norm, weights

from engine.kit.precomputed import Store, source_digest

FOLDER = Path(__file__).resolve().parent
FILE = "placement_stacks.npz"


def sources() -> dict:
    """{module name: its source file} of the code that computes the stored results: the block and
    what it runs, the random weights, and the module of the decorated function (read as a file:
    it imports this module)."""
    found = {module.__name__: Path(module.__file__) for module in (block, attention, ffn, norm, weights)}
    return {**found, "labs.norms.placement": FOLDER / "placement.py"}


@lru_cache(maxsize=1)
def inputs_digest() -> str:
    """The SHA-256 of the source files :func:`sources` lists, once per process."""
    return source_digest(sources())


# The lambdas look files.load and inputs_digest up at each call, so that a test can replace them.
STORE = Store(FILE, load=lambda name: files.load(name), digest=lambda: inputs_digest(), folder=files.FOLDER,
              missing=(files.FileUnavailable,))
precomputed = STORE.precomputed
