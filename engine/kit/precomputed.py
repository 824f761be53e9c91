"""Results that no learner's input changes, computed when the course is built and looked up after.

Some cells and labs run computations whose inputs the course fixes (a setting picked from a fixed
list, GPT-2 Small's sizes) and which take seconds in the browser, where NumPy has no BLAS. Each
such function is decorated with a :class:`Store`'s ``precomputed``: its body is the computation,
and for the inputs the course ships it is run once, when the course is built (``build``), and its
result kept in the store's file of arrays. A call looks its result up there and computes it live
when it is not there.

A result is found by a key: the SHA-256 of the function's name, its arguments and the store's
*inputs digest*, a hash of everything the functions read (data files, or the source of the
modules that compute them), so a result computed from other inputs is never read back: it is a
miss, computed live. A course keeps its stores with its labs; this course's are notebook 05's
(``labs.trained.precomputed``, served beside the trained model's weights), notebook 03's
(``labs.norms.precomputed``, served beside them too) and notebook 04's
(``labs.decoder.precomputed``, in the course wheel), the last two keyed by the source of the
code that computes them.

    STORE = Store("results.npz", load=lambda name: np.load(FOLDER / name), digest=lambda: "...")

    @STORE.precomputed(lambda: [{"size": 768}])      # the arguments the course ships
    def _run(size):
        return {"sizes": ..., "change": 0.1}         # {field: array or number}

    _run(size=768)                                   # looked up; another size is computed live
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import lru_cache, wraps

import numpy as np

from engine.presentation.numbers import fixed


def source_digest(sources: dict) -> str:
    """The SHA-256 of source files, {module name: path}, name and bytes of each: the inputs digest
    of a store whose results the code in those files computes, so that a change to any of them
    makes every stored result a miss."""
    digest = hashlib.sha256()
    for name, path in sources.items():
        digest.update(name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def source_store(folder, sources, file="precomputed.npz"):
    """The store of ``file`` in ``folder`` (a Path) for results computed by the code in the source
    files ``sources()`` lists ({module name: path}), and its inputs digest: ``source_digest`` of
    those files, computed once per process. Returns (store, the digest function)."""
    @lru_cache(maxsize=1)
    def inputs_digest() -> str:
        return source_digest(sources())

    return Store(file, load=lambda name: np.load(folder / name), digest=inputs_digest, folder=folder), inputs_digest


class Store:
    """One file of precomputed results: ``file`` (its name), ``load(file)`` (an open NpzFile, or one
    of the exceptions ``missing`` when the file is not to be had: then every call computes live),
    ``digest()`` (the inputs digest of the key) and ``folder`` (where :meth:`build` writes it)."""

    def __init__(self, file, *, load, digest, folder, missing=(FileNotFoundError,)):
        self.file, self.load, self.digest, self.folder, self.missing = file, load, digest, folder, missing
        self.functions: dict = {}   # name -> (the function, uncached; a function listing its shipped arguments)
        self.stored = lru_cache(maxsize=1)(self._read)

    def key(self, name: str, arguments: dict) -> str:
        """The key of ``name``'s result for ``arguments`` (a dict of plain values) on today's inputs."""
        text = json.dumps({"function": name, "arguments": arguments, "inputs": self.digest()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _read(self) -> dict:
        """{key: {field: array}} of every result in the file, or {} when it is not to be had. The
        file holds, for each function, its results' keys ("<function>/keys", (N,)) and each field
        of its N results stacked ("<function>/<field>", (N, ...))."""
        try:
            with self.load(self.file) as data:
                arrays = {name: np.asarray(data[name]) for name in data.files}
        except self.missing:
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

    def precomputed(self, arguments):
        """Decorate a function of plain keyword arguments that returns {field: array or number}: a
        call looks its result up by :meth:`key`, and computes it (and keeps it) on a miss.
        ``arguments()`` lists the keyword arguments of every call the course ships, the ones
        :meth:`build` computes. Numbers come back as Python floats, arrays read-only."""
        def decorate(function):
            name = f"{function.__module__}.{function.__qualname__}"
            self.functions[name] = (function, arguments)

            @lru_cache(maxsize=256)
            def looked_up(frozen):
                found = self.stored().get(self.key(name, dict(frozen)))
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

    def shipped(self) -> list:
        """[(function name, keyword arguments)] of every result the course ships in this store."""
        return [(name, kwargs) for name, (_function, arguments) in self.functions.items() for kwargs in arguments()]

    def build(self, path=None, log=print) -> dict:
        """Compute every function of the store for every shipped argument and write the file (to
        ``path``, by default ``folder``/``file``); returns {function name: number of results}. The
        functions are those of the modules imported."""
        arrays, counts = {}, {}
        for name, (function, arguments) in self.functions.items():
            start, listed = time.perf_counter(), arguments()
            keys, results = [], []
            for kwargs in listed:
                keys.append(self.key(name, dict(sorted(kwargs.items()))))
                results.append({field: np.asarray(value) for field, value in function(**kwargs).items()})
            arrays[f"{name}/keys"] = np.array(keys)
            for field in results[0]:
                arrays[f"{name}/{field}"] = np.stack([result[field] for result in results])
            counts[name] = len(listed)
            log(f"{name}: {len(listed)} results in {fixed(time.perf_counter() - start, 1)} s")
        target = path or self.folder / self.file
        np.savez_compressed(target, **arrays)
        log(f"wrote {target} ({fixed(target.stat().st_size / 1e3, 0, grouped=True)} kB)")
        return counts
