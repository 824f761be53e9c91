"""A Pyodide distribution supplied by an instructor, for a site that needs no internet.

Accepted: a folder holding `pyodide.mjs` and `pyodide-lock.json` (for example the
full distribution unpacked), or a tarball of one (`.tar.bz2` from Pyodide's
releases, `.tgz` of the npm package `pyodide`, which holds only the core).

A tarball is unpacked once into the cache, under a name made from a hash of its bytes, so a
replaced archive is never mistaken for the one before; it is unpacked into a temporary folder
and moved into place only when complete and checked. What is checked: the files the kernel
cannot start without, and the version (the kernel of this course runs Pyodide
`PYODIDE_VERSION`). Every problem ends the build with one sentence (`DistributionError`).
"""

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

from tools.lock import PYODIDE_VERSION, normalise

PURE_WHEEL_TAGS = ("-py3-none-any.whl", "-py2.py3-none-any.whl")
REQUIRED = ("pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
FULL_ARCHIVE = f"pyodide-{PYODIDE_VERSION}.tar.bz2"
DOWNLOAD = f"https://github.com/pyodide/pyodide/releases/download/{PYODIDE_VERSION}/{FULL_ARCHIVE}"


class DistributionError(SystemExit):
    """The supplied Pyodide cannot be used; the message says why and what to do."""


def file_hash(path, chunk=1 << 20):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path, target: Path) -> None:
    """Unpack archive into target, which appears only when the archive was read to its end."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=target.parent))
    try:
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(staging, filter="data")
        except tarfile.ReadError as exc:
            if "truncated" in str(exc) or "unexpected end" in str(exc):
                raise DistributionError(f"{archive} is truncated (the download did not finish): "
                                        f"download it again ({DOWNLOAD}).") from None
            raise DistributionError(f"{archive} is not a Pyodide archive (not a .tar.bz2 or .tgz "
                                    "file): give the downloaded archive, or the folder it unpacks "
                                    "to, to --pyodide.") from None
        except (EOFError, zlib.error, lzma.LZMAError, OSError, tarfile.TarError) as exc:
            raise DistributionError(f"{archive} is damaged or truncated ({type(exc).__name__}: "
                                    f"{exc}): download it again ({DOWNLOAD}).") from None
        check(_root_of(staging, archive), archive)
        try:
            os.replace(staging, target)
        except OSError:
            if not target.is_dir():             # else another build unpacked it meanwhile
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _root_of(folder: Path, shown) -> Path:
    found = sorted(folder.rglob("pyodide.mjs"), key=lambda p: len(p.parts))
    if not found:
        raise DistributionError(f"{shown} holds no Pyodide (no pyodide.mjs): give --pyodide the "
                                f"distribution archive {FULL_ARCHIVE} or the folder it unpacks to.")
    return found[0].parent


def check(dist_dir: Path, shown) -> None:
    """Raise DistributionError unless dist_dir holds a usable Pyodide of the right version."""
    missing = [name for name in REQUIRED if not (dist_dir / name).is_file()]
    if missing:
        raise DistributionError(f"{shown} lacks {', '.join(missing)}: it is not a complete Pyodide "
                                f"distribution; download {FULL_ARCHIVE} again ({DOWNLOAD}).")
    try:
        packages = json.loads((dist_dir / "pyodide-lock.json").read_text(encoding="utf-8"))["packages"]
        if not isinstance(packages, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise DistributionError(f"{shown}: its pyodide-lock.json is damaged; download the "
                                "distribution again.") from None
    version = _version(dist_dir)
    if version != PYODIDE_VERSION:
        raise DistributionError(f"{shown} is Pyodide {version}, but this course's kernel runs Pyodide "
                                f"{PYODIDE_VERSION}: use {FULL_ARCHIVE} ({DOWNLOAD}).")
    if (dist_dir / "pyodide.asm.wasm").read_bytes()[:4] != b"\0asm":
        raise DistributionError(f"{shown}: pyodide.asm.wasm is damaged; download the distribution again.")
    if not zipfile.is_zipfile(dist_dir / "python_stdlib.zip"):
        raise DistributionError(f"{shown}: python_stdlib.zip is damaged or truncated; download the "
                                "distribution again.")


def _version(dist_dir: Path) -> str:
    """The distribution's version: its package.json says it; else the loader's own text."""
    try:
        return str(json.loads((dist_dir / "package.json").read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    loader = (dist_dir / "pyodide.mjs").read_text(encoding="utf-8", errors="replace")
    return PYODIDE_VERSION if f'"{PYODIDE_VERSION}"' in loader else "of an unknown version"


def find_distribution(path, cache_dir):
    """Return the checked folder that holds pyodide.mjs, unpacking a tarball into cache_dir first."""
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise DistributionError(f"The Pyodide distribution {path} does not exist: give --pyodide the "
                                f"path of the downloaded {FULL_ARCHIVE} (or of the folder it unpacks to).")
    if path.is_file():
        target = Path(cache_dir) / "pyodide-dist" / file_hash(path)[:16]
        if not target.is_dir():
            _unpack(path, target)
        return _root_of(target, path)
    root = _root_of(path, path)
    check(root, path)
    return root


def copy_distribution(dist_dir, dest):
    """Copy the distribution into the site, leaving out source maps and docs."""
    ignore = shutil.ignore_patterns("*.map", "*.d.ts", "*.html", "package.json", "README.md")
    shutil.copytree(dist_dir, dest, ignore=ignore, dirs_exist_ok=True)
    return {p.name for p in Path(dest).iterdir() if p.is_file()}


def is_pure(file_name):
    return file_name.endswith(PURE_WHEEL_TAGS)


def _pip_download(specs, dest, python_version):
    """True if pip fetched every spec as a pure-Python wheel into dest."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
         "--only-binary=:all:", "--python-version", python_version, "--implementation", "py",
         "--abi", "none", "--platform", "any", "--dest", str(dest), *specs],
        capture_output=True, text=True,
    )
    return result.returncode == 0


def fetch_pure_wheels(entries, cache_dir, python_version="3.14"):
    """Download the named pure-Python wheels from PyPI, each at its lock version.

    entries: lock entries ({name, version, file_name}). Returns {normalised name: wheel path}
    for those PyPI has under the same file name; the others are left out (and
    reported by the caller as missing).
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    todo = [e for e in entries if not (cache_dir / e["file_name"]).exists()]
    specs = [f"{e['name']}=={e['version']}" for e in todo]
    if todo:
        # Downloaded beside the cache, then moved in whole: a build running at the same time
        # never takes a half-written wheel for a cached one.
        with tempfile.TemporaryDirectory(prefix=".downloading-", dir=cache_dir) as fresh:
            if not _pip_download(specs, fresh, python_version):
                for spec in specs:  # one at a time, to keep those that exist
                    _pip_download([spec], fresh, python_version)
            for wheel in Path(fresh).glob("*.whl"):
                os.replace(wheel, cache_dir / wheel.name)
    return {normalise(e["name"]): cache_dir / e["file_name"] for e in entries
            if (cache_dir / e["file_name"]).exists()}
