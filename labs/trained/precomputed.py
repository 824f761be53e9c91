"""Results that no learner's input changes, computed when the course is built and looked up after.

Many numbers of notebook 05 and of its labs are the trained model's runs on the held-out texts
with a setting the learner picks from a fixed list: a block left out, another RoPE base, another
ε. Each takes whole forward passes, and in the browser (NumPy without BLAS) a cell or a lab's
first visit would wait seconds for them. So each such function is decorated with
:func:`precomputed`: its body is the computation, and for the inputs the course ships it is run
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
import time
from functools import lru_cache, wraps

import numpy as np

from lib import files, model

FILE = "precomputed.npz"
FUNCTIONS: dict = {}             # name -> (the function, uncached; a function listing its shipped arguments)


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


def key(name: str, arguments: dict) -> str:
    """The key of ``name``'s result for ``arguments`` (a dict of plain values) on today's inputs."""
    text = json.dumps({"function": name, "arguments": arguments, "inputs": inputs_digest()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@lru_cache(maxsize=1)
def stored() -> dict:
    """{key: {field: array}} of every result in ``precomputed.npz``, or {} when the file is neither
    here nor served (then every call computes live). The file holds, for each function, its
    results' keys ("<function>/keys", (N,)) and each field of its N results stacked
    ("<function>/<field>", (N, ...))."""
    try:
        with files.load(FILE) as data:
            arrays = {name: np.asarray(data[name]) for name in data.files}
    except files.FileUnavailable:
        return {}
    found: dict = {}
    for name, keys in arrays.items():
        if not name.endswith("/keys"):
            continue
        function = name.removesuffix("/keys")
        fields = {member.removeprefix(f"{function}/"): array for member, array in arrays.items()
                  if member.startswith(f"{function}/") and member != name}
        for array in fields.values():
            array.setflags(write=False)
        for row, entry in enumerate(keys.tolist()):
            found[entry] = {field: array[row] for field, array in fields.items()}
    return found


def precomputed(arguments):
    """Decorate a function of plain arguments that returns {field: array or number}: a call looks its
    result up in ``precomputed.npz`` by :func:`key`, and computes it (and keeps it) on a miss.
    ``arguments()`` lists the keyword arguments of every call the course ships, the ones
    ``python -m training.precomputed`` computes. Numbers come back as Python floats, arrays
    read-only."""
    def decorate(function):
        name = f"{function.__module__}.{function.__qualname__}"
        FUNCTIONS[name] = (function, arguments)

        @lru_cache(maxsize=256)
        def looked_up(frozen):
            found = stored().get(key(name, dict(frozen)))
            if found is None:
                found = {field: np.asarray(value) for field, value in function(**dict(frozen)).items()}
                for array in found.values():
                    array.setflags(write=False)
            return {field: float(array) if array.ndim == 0 else array for field, array in found.items()}

        @wraps(function)
        def call(**kwargs):
            return dict(looked_up(tuple(sorted(kwargs.items()))))

        call.live, call.cache_clear = function, looked_up.cache_clear
        return call
    return decorate


def build(path=None, log=print) -> dict:
    """Compute every precomputed function for every shipped argument and write ``precomputed.npz``
    (to ``path``, by default lib/trained/); returns {function name: number of results}. The
    functions are those of the modules imported (``labs.trained`` imports every lab's)."""
    arrays, counts = {}, {}
    for name, (function, arguments) in FUNCTIONS.items():
        start, listed = time.perf_counter(), arguments()
        keys, results = [], []
        for kwargs in listed:
            keys.append(key(name, dict(sorted(kwargs.items()))))
            results.append({field: np.asarray(value) for field, value in function(**kwargs).items()})
        arrays[f"{name}/keys"] = np.array(keys)
        for field in results[0]:
            arrays[f"{name}/{field}"] = np.stack([result[field] for result in results])
        counts[name] = len(listed)
        log(f"{name}: {len(listed)} results in {time.perf_counter() - start:.1f} s")
    target = path or files.FOLDER / FILE
    np.savez_compressed(target, **arrays)
    log(f"wrote {target} ({target.stat().st_size / 1e3:,.0f} kB)")
    return counts
