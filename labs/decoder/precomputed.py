"""Notebook 04's results that no learner's input changes, computed when the course is built and
looked up after (the machinery is ``labs.kit.precomputed``'s).

The near-identity cell runs 12 blocks of GPT-2 Small's size started three ways
(``lib.initialisation.start_of_training``): 85 million random numbers drawn and a dozen wide
products per block, seconds in the browser, for a result that is always the same. It is computed
by ``python -m training.precomputed`` and kept in ``labs/decoder/precomputed.npz`` (a few kB,
inside the course wheel: notebook 04 fetches nothing). Its key hashes the source of the modules
that compute it (:data:`SOURCES`), so a change to any of them makes the stored result a miss,
computed live, and ``tests/test_precomputed.py`` fails until the file is written again.
"""

from __future__ import annotations

import hashlib
import importlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..kit.precomputed import Store

FILE = "precomputed.npz"
FOLDER = Path(__file__).resolve().parent
# The modules whose code computes the stored results: lib's block and what it runs, and the
# module of the decorated functions.
SOURCES = ("lib.initialisation", "lib.block", "lib.attention", "lib.ffn", "lib.norm", "labs.decoder.near_identity")


@lru_cache(maxsize=1)
def inputs_digest() -> str:
    """The SHA-256 of the source files of :data:`SOURCES` (name and bytes of each)."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(name.encode())
        digest.update(Path(importlib.import_module(name).__file__).read_bytes())
    return digest.hexdigest()


def _load(name):
    return np.load(FOLDER / name)


STORE = Store(FILE, load=lambda name: _load(name), digest=lambda: inputs_digest(), folder=FOLDER)
precomputed = STORE.precomputed
