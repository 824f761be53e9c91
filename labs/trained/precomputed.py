"""Results that no learner's input changes, computed when the course is built and looked up after.

Many numbers of notebook 05 and of its labs are the trained model's runs on the held-out texts
with a setting the learner picks from a fixed list: a block left out, another RoPE base, another
ε. Each takes whole forward passes, and in the browser (NumPy without BLAS) a cell or a lab's
first visit would wait seconds for them. So each such function is decorated with
:func:`precomputed` (this module's store of ``engine.kit.precomputed``): its body is the computation, and for the inputs the course ships it is run
once, by ``python -m training.precomputed`` when the course is built, and its result kept in
``lib/trained/precomputed.npz`` (served beside the model's weights and fetched with them,
``lib.files``). A call looks its result up there and computes it live when it is not there.

A result is found by a key: the SHA-256 of the function's name, its arguments and the contents
of everything it reads (the weights, the held-out texts and the model's record), so a result
computed from other weights or texts is never read back: it is a miss, computed live.
``tests/test_precomputed.py`` checks that the file holds every shipped input's result for the
committed weights and that the results equal a live run.

    python -m training.precomputed              # writes lib/trained/precomputed.npz
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

import numpy as np

from lib import files, model

from engine.kit.precomputed import Store

FILE = "precomputed.npz"


@lru_cache(maxsize=1)
def inputs_digest() -> str:
    """The SHA-256 of everything the precomputed functions read: every weight array (name, shape,
    bytes), every held-out text (tokens, kinds, PyTorch's logits) and the model's record."""
    digest = hashlib.sha256()
    for name, array in sorted(model.weight_arrays().items()):
        digest.update(f"{name}{array.shape}{array.dtype}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    for text in model.heldout_texts():
        for array in (text.ids, text.kinds, text.logits):
            digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(json.dumps(model.info(), sort_keys=True).encode())
    return digest.hexdigest()


# The lambdas look files.load and inputs_digest up at each call, so that a test can replace them.
STORE = Store(FILE, load=lambda name: files.load(name), digest=lambda: inputs_digest(), folder=files.FOLDER,
              missing=(files.FileUnavailable,))
FUNCTIONS = STORE.functions      # name -> (the function, uncached; a function listing its shipped arguments)
key, stored, precomputed = STORE.key, STORE.stored, STORE.precomputed


def build(path=None, log=print) -> dict:
    """Compute every result of notebook 05's store and write ``precomputed.npz`` (to ``path``, by
    default lib/trained/); returns {function name: number of results}. The functions are those of
    the modules imported (``labs.trained`` imports every lab's)."""
    return STORE.build(path, log)
