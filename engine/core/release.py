"""Which release of the course is running, and which of the learner's notebooks are older.

Each build of the site is a release. The build writes into every shipped notebook's metadata
``course.release = {"fingerprint": ..., "version": ...}`` (the fingerprint is a hash of the
notebook as written in ``content/``), and packs a manifest into the course's wheel itself (its
release folder, :attr:`engine.core.course.Course.release`), so a kernel started after a rebuild
knows the new release with no action from the learner. The shipped notebooks, needed only for a
fresh copy, stay out of the wheel every notebook loads: the site serves them beside it as one zip,
which the manifest names (:data:`ARCHIVE`), and :func:`save_new_version` fetches it
(:func:`engine.core.site_files.fetch`). A release folder that holds the notebooks themselves
(``notebooks/``, as built before) is read instead.

A learner's saved copy keeps the metadata of the release it came from. Comparing the two tells
which notebooks are older than the shipped ones; nothing here ever changes a learner's file.
Plain Python only (no numpy), so it works wherever the kernel starts.
"""

import io
import json
import zipfile
import zlib
from pathlib import Path

from . import site_files
from .course import current
from .workspace import workspace_root

NEW_VERSION_SUFFIX = " (new version)"
ARCHIVE = "notebooks_archive"      # the manifest's key: the name of the served zip of the notebooks


def release_dir() -> Path:
    """The folder of the running release: the course's release folder (in its wheel)."""
    return current().release


def manifest():
    """The running release: {"version", "built", "notebooks": {path: fingerprint}}, or None
    when running from a checkout that was not built into a site."""
    try:
        return json.loads((release_dir() / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def fingerprint_of(path):
    """The release fingerprint stored in a notebook file, or None (unreadable, or never built)."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
        return notebook["metadata"]["course"]["release"]["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def outdated_notebooks(root=None, release=None):
    """The learner's notebooks older than the running release, as a list of dicts
    {"path", "yours", "shipped"} (paths relative to the workspace, fingerprints)."""
    release = release or manifest()
    if release is None:
        return []
    root = Path(root) if root is not None else workspace_root()
    older = []
    for path, shipped in sorted(release["notebooks"].items()):
        yours = fingerprint_of(root / path)
        if yours is not None and yours != shipped:
            older.append({"path": path, "yours": yours, "shipped": shipped})
    return older


def fresh_copy_path(root, path):
    """A file name next to `path` that does not exist yet: '01_x (new version).ipynb', then
    '01_x (new version 2).ipynb', and so on."""
    original = Path(root) / path
    for n in range(1, 1000):
        label = NEW_VERSION_SUFFIX if n == 1 else f"{NEW_VERSION_SUFFIX[:-1]} {n})"
        candidate = original.with_name(original.stem + label + original.suffix)
        if not candidate.exists():
            return candidate
    raise FileExistsError(f"too many new-version copies of {path}")


def shipped_notebook(path) -> bytes:
    """The bytes of the notebook `path` as this release ships it: from the release folder's
    ``notebooks/`` when it has them, else from the zip the course site serves beside the wheel.
    Raises OSError, in plain words, when neither has it."""
    local = release_dir() / "notebooks" / path
    if local.is_file():
        return local.read_bytes()
    name = (manifest() or {}).get(ARCHIVE)
    if not name:
        raise OSError(f"this installation of the course does not hold the new version of {path}: "
                      "open the notebook from the course site.")
    try:
        data = site_files.fetch(name)
    except OSError as error:
        raise OSError(f"the course site did not send this release's notebooks: {error}") from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.read(path)
    except (zipfile.BadZipFile, KeyError, zlib.error, EOFError):
        raise OSError(f"the notebooks the course site sent ({name}) do not hold a readable {path}: "
                      "reload the page and try again.") from None


def save_new_version(path, root=None):
    """Write the shipped notebook `path` (:func:`shipped_notebook`) as a fresh copy beside the
    learner's own, which stays untouched. Returns the new file's path relative to the workspace;
    raises OSError, in plain words, when the shipped notebook cannot be had."""
    root = Path(root) if root is not None else workspace_root()
    shipped = shipped_notebook(path)
    target = fresh_copy_path(root, path)
    target.write_bytes(shipped)
    return target.relative_to(root).as_posix()
