"""Stamp a release: fingerprint every shipped notebook and describe the build.

The site is built from a staged copy of content/ in which every notebook carries
`metadata.course.release` (its fingerprint and the release version). The manifest goes into
the course wheel, in the course's release folder (exercises/_release/, which exercises/course.py
names), so a kernel knows which release it runs (engine.core.release). So does the course's
inventory (exercises/_release/inventory.json: the notebooks, their labs, exercises and
questions, read from them by engine.core.inventory), which the registry reads in the browser,
where the wheel holds no content/.

The stamped notebooks themselves stay out of the wheel, which every notebook loads before its
first cell runs: they are needed only when a learner asks for a fresh copy of a newer notebook.
The site serves them beside the wheel as one zip (:func:`notebooks_archive`), named by a hash of
its bytes, and the manifest names it (:data:`ARCHIVE`); engine.core.release fetches it then.
"""

import hashlib
import io
import json
import os
import shutil
import time
import zipfile
from pathlib import Path

from engine.core import inventory
from engine.core.release import ARCHIVE
from exercises.course import COURSE

RELEASE = COURSE.release.relative_to(COURSE.content.parent).as_posix()     # "exercises/_release"
ARCHIVE_STEM = "release-notebooks"          # the served zip of the stamped notebooks
ARCHIVE_TIME = (2026, 1, 1, 0, 0, 0)        # the time stamp of every entry in it


# What a notebook's fingerprint leaves out: what running or re-saving it changes without changing
# what learners get (the kernel's version and the editor's settings), and the stamp the build adds.
VOLATILE_METADATA = ("language_info", "widgets", "toc", "vscode", "varInspector", "celltoolbar", "colab")


def normalised(notebook: dict) -> dict:
    """What of a notebook (parsed JSON) learners get: its cells' types, sources, tags and the
    course's metadata, and the notebook's metadata less VOLATILE_METADATA and the release stamp.
    Indentation, key order, line endings and outputs do not count."""
    meta = {k: v for k, v in (notebook.get("metadata") or {}).items() if k not in VOLATILE_METADATA}
    if isinstance(meta.get("course"), dict):
        meta["course"] = {k: v for k, v in meta["course"].items() if k != "release"}
    cells = []
    for cell in notebook.get("cells") or []:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        cell_meta = cell.get("metadata") or {}
        cells.append({"type": cell.get("cell_type"), "source": source.replace("\r\n", "\n"),
                      "tags": cell_meta.get("tags") or [], "course": cell_meta.get("course")})
    return {"metadata": meta, "cells": cells}


def fingerprint(path):
    """A short hash of what learners get of a notebook in content/ (:func:`normalised`): a change
    of its metadata alone (running it, re-saving it in another editor) makes no new release."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    text = json.dumps(normalised(notebook), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_time(content_dir=None):
    """The release's date: SOURCE_DATE_EPOCH when set (the deploy's commit time), else the time the
    newest notebook of content_dir was last changed. Never the build's own time, which would give
    the course wheel a new name at every build of the same content (its name holds a hash of
    what it holds, this date included)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None and content_dir is not None:
        times = [p.stat().st_mtime for p in Path(content_dir).rglob("*.ipynb") if not p.is_symlink()]
        epoch = max(times) if times else 0
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(int(float(epoch if epoch is not None else 0))))


def _not_shipped(folder, names):
    """What the staged copy leaves out: checkpoints, caches, local progress, links, hidden files."""
    return {n for n in names if n in (".ipynb_checkpoints", "__pycache__") or n.startswith(".")
            or n.startswith("course-progress.json") or os.path.islink(os.path.join(folder, n))}


def stage_contents(content_dir, staging_dir):
    """Copy content_dir to staging_dir with every notebook stamped; return the manifest. No link
    is followed or copied (the guard refuses them before: tools/guard.py)."""
    content_dir, staging_dir = Path(content_dir), Path(staging_dir)
    shutil.rmtree(staging_dir, ignore_errors=True)
    shutil.copytree(content_dir, staging_dir, symlinks=True, ignore=_not_shipped)
    notebooks = {p.relative_to(staging_dir).as_posix(): fingerprint(p)
                 for p in sorted(staging_dir.rglob("*.ipynb"))}
    version = hashlib.sha256(json.dumps(notebooks, sort_keys=True).encode()).hexdigest()[:10]
    for path, print_ in notebooks.items():
        file = staging_dir / path
        notebook = json.loads(file.read_text(encoding="utf-8"))
        course = notebook.setdefault("metadata", {}).setdefault("course", {})
        course["release"] = {"fingerprint": print_, "version": version}
        file.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"version": version, "built": build_time(content_dir), "notebooks": notebooks}


def notebooks_archive(manifest, staging_dir) -> tuple[str, bytes]:
    """(the name the site serves it under, its bytes): one zip of the stamped notebooks of the
    manifest, each at its path in content/. The same notebooks always give the same bytes (names
    sorted, one fixed time and permissions for every entry), and the name holds a hash of them
    ("release-notebooks-1a2b3c4d5e6f.zip"), so a new release gets a new name."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(manifest["notebooks"]):
            entry = zipfile.ZipInfo(path, date_time=ARCHIVE_TIME)
            entry.compress_type, entry.external_attr, entry.create_system = zipfile.ZIP_DEFLATED, 0o644 << 16, 3
            archive.writestr(entry, (Path(staging_dir) / path).read_bytes(), compresslevel=9)
    data = buffer.getvalue()
    return f"{ARCHIVE_STEM}-{hashlib.sha256(data).hexdigest()[:12]}.zip", data


def wheel_files(manifest, staging_dir, archive_name):
    """{path in the wheel: bytes}: the manifest, naming the served zip of the stamped notebooks
    (archive_name, :func:`notebooks_archive`), and the course's inventory, under the course's
    release folder (:data:`RELEASE`)."""
    shipped = {**manifest, ARCHIVE: archive_name}
    return {f"{RELEASE}/manifest.json": json.dumps(shipped, indent=1).encode(),
            f"{RELEASE}/{inventory.INDEX}": inventory.to_json(inventory.scan(staging_dir, COURSE)).encode()}
