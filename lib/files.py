"""Where the trained model's arrays are read from: ``lib/trained/`` here, the course site in the browser.

``lib.model`` reads three files of arrays: ``weights.npz`` (1.7 MB), ``heldout_texts.npz``
(0.4 MB) and ``reference.npz``; notebook 05's labs a fourth, ``precomputed.npz``, results of the
model computed when the course is built (``labs/trained/precomputed.py``). ``lib.training_record``
reads ``training_record.npz`` (the model while it learned, 0.2 MB) and ``lib.placement_runs``
``placement_runs.npz`` (loss curves of small models with the norm in other places); notebook 03's
placement lab ``placement_stacks.npz`` (its 50 stacks, ``labs/norms/precomputed.py``). In a checkout
they are in ``lib/trained/``. The course site leaves them out of the course wheel every notebook
loads before its first cell runs (only the notebooks that read them need them): the site build
serves each as a file of its own beside the wheel and writes what it serves into the wheel, as
``lib/trained/served.json``:

    {"weights.npz": {"file": "weights-1a2b3c4d5e6f.npz", "bytes": 1673980,
                     "sha256": "...", "arrays": {"embedding": [166, 128], ...}}, ...}

The first time one of them is needed, :func:`load` asks the *fetcher* for its bytes,
checks their SHA-256 and opens them. Fetching is the browser's business, not NumPy's nor the
standard library's, so this module does not do it: the fetcher is a function
``fetch(file name) -> bytes`` that the course package declares as an entry point, in the group
:data:`GROUP` (``pyproject.toml``; it is ``engine.core.site_files.fetch``). A fetcher that
fails, or no fetcher at all, gives a :class:`FileUnavailable` that says so in plain words.

    from lib import files
    with files.load("weights.npz") as arrays:       # an open NpzFile
        embedding = arrays["embedding"]
    files.shapes("weights.npz")                     # {"embedding": (166, 128), ...}, nothing loaded
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parent / "trained"
SERVED = "served.json"                     # in FOLDER: written into the course wheel by the site build
GROUP = "transformer_course.fetch"         # the entry point group of the fetcher
WHAT = {"weights.npz": "the trained model's weights", "heldout_texts.npz": "the held-out texts",
        "reference.npz": "the held-out text and PyTorch's logits on it",
        "precomputed.npz": "the trained model's results computed when the course was built",
        "training_record.npz": "the record of the trained model while it learned",
        "placement_runs.npz": "the loss curves of the placement runs"}


class FileUnavailable(OSError):
    """One of the trained model's files is neither here nor to be had from the course site."""


@lru_cache(maxsize=1)
def served() -> dict:
    """What the course site serves in place of ``lib/trained/``'s arrays (``served.json``), or {}."""
    path = FOLDER / SERVED
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def fetcher():
    """The fetcher declared in the entry point group :data:`GROUP`, or None."""
    found = metadata.entry_points(group=GROUP)
    return next(iter(found)).load() if found else None


def _fetched(name: str) -> bytes:
    """The bytes of the served file standing for ``name``, fetched and checked."""
    what = WHAT.get(name, name)
    entry = served().get(name)
    if entry is None:
        raise FileUnavailable(f"{what} ({name}) are not in this installation of the course: neither in "
                              f"{FOLDER} nor among the files its site serves.")
    fetch = fetcher()
    if fetch is None:
        raise FileUnavailable(f"{what} ({name}) are served by the course site, and this Python has no way "
                              "to fetch them (no fetcher is installed): open the notebook from the course site.")
    try:
        data = fetch(entry["file"])
    except Exception as error:  # noqa: BLE001 - any failure of the fetch is the learner's to read
        raise FileUnavailable(f"Could not fetch {what} ({entry['file']}, {entry['bytes'] / 1e6:.1f} MB) from the "
                              f"course site: {error}. Check the connection and run the cell again; if it "
                              "keeps failing, tell your instructor (the site may be incomplete).") from None
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise FileUnavailable(f"The copy of {what} fetched from the course site ({entry['file']}, {len(data):,} "
                              f"bytes) is not the one this course was built with (expected {entry['bytes']:,} "
                              "bytes of another content): reload the page; if it keeps happening, tell "
                              "your instructor.")
    return data


def load(name: str):
    """np.load of one of the trained model's files: ``lib/trained/<name>`` if it is there, else the
    copy the course site serves, fetched (:func:`_fetched`). Use it in a ``with``."""
    path = FOLDER / name
    if path.is_file():
        return np.load(path)
    return np.load(io.BytesIO(_fetched(name)))


HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def shapes_in(path) -> dict:
    """{array name: shape} of a ``.npz`` file, from each array's header (no array is read)."""
    stat = Path(path).stat()
    return dict(_shapes_in(str(path), stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=8)
def _shapes_in(path: str, _modified: int, _size: int) -> dict:
    """:func:`shapes_in`, read once for each version of the file (its time and size)."""
    found = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            with archive.open(member) as stream:
                version = np.lib.format.read_magic(stream)
                read = HEADERS.get(version)
                if read is None:
                    raise ValueError(f"{path}: {member} is a .npy file of version {version}, not 1.0 or 2.0")
                shape, _order, _dtype = read(stream)
            found[member.removesuffix(".npy")] = tuple(shape)
    return found


def shapes(name: str) -> dict:
    """{array name: shape} of one of the trained model's files, nothing fetched or loaded: from
    the file here, else from what the site build recorded."""
    path = FOLDER / name
    if path.is_file():
        return shapes_in(path)
    entry = served().get(name)
    if entry is None:
        raise FileUnavailable(f"{WHAT.get(name, name)} ({name}) are not in this installation of the course.")
    return {array: tuple(shape) for array, shape in entry["arrays"].items()}


__all__ = ["FOLDER", "GROUP", "FileUnavailable", "fetcher", "load", "served", "shapes", "shapes_in"]
