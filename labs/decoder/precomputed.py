"""Notebook 04's results that no learner's input changes, computed when the course is built and
looked up after (the machinery is ``engine.kit.precomputed``'s).

The near-identity cell runs 12 blocks of GPT-2 Small's size started three ways
(``lib.initialisation.start_of_training``): 85 million random numbers drawn and a dozen wide
products per block, seconds in the browser, for a result that is always the same. It is computed
by ``python -m training.precomputed`` and kept in ``labs/decoder/precomputed.npz`` (a few kB,
inside the course wheel: notebook 04 fetches nothing). Its key hashes the source of the modules
that compute it (:func:`sources`), so a change to any of them makes the stored result a miss,
computed live, and ``tests/test_precomputed.py`` fails until the file is written again.
"""

from __future__ import annotations

from pathlib import Path

from lib import attention, block, ffn, initialisation, norm

from engine.kit.precomputed import source_store

FOLDER = Path(__file__).resolve().parent


def sources() -> dict:
    """{module name: its source file} of the code that computes the stored results:
    ``lib.initialisation``, the block and what it runs, and the module of the decorated function
    (read as a file: it imports this module)."""
    found = {module.__name__: Path(module.__file__) for module in (initialisation, block, attention, ffn, norm)}
    return {**found, "labs.decoder.near_identity": FOLDER / "near_identity.py"}


# sources() looked up at each call, so that a test may put other files in its place
STORE, inputs_digest = source_store(FOLDER, lambda: sources())
precomputed = STORE.precomputed
