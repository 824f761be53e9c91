"""A Pyodide distribution supplied by an instructor, for a site that needs no internet.

Accepted: a folder holding `pyodide.mjs` and `pyodide-lock.json` (for example the
full distribution unpacked), or a tarball of one (`.tar.bz2` from Pyodide's
releases, `.tgz` of the npm package `pyodide`, which holds only the core).
"""

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from tools.lock import normalise

PURE_WHEEL_TAGS = ("-py3-none-any.whl", "-py2.py3-none-any.whl")


def find_distribution(path, cache_dir):
    """Return the folder that holds pyodide.mjs, unpacking a tarball into cache_dir first."""
    path = Path(path).resolve()
    if not path.exists():
        raise SystemExit(f"Pyodide distribution not found: {path}")
    if path.is_file():
        target = Path(cache_dir) / "pyodide-dist" / path.name
        if not target.exists():
            target.mkdir(parents=True)
            with tarfile.open(path) as tar:
                tar.extractall(target, filter="data")
        path = target
    found = sorted(path.rglob("pyodide.mjs"), key=lambda p: len(p.parts))
    if not found or not (found[0].parent / "pyodide-lock.json").exists():
        raise SystemExit(f"No pyodide.mjs with a pyodide-lock.json beside it under {path}")
    return found[0].parent


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
    if todo and not _pip_download(specs, cache_dir, python_version):
        for spec in specs:  # one at a time, to keep those that exist
            _pip_download([spec], cache_dir, python_version)
    return {normalise(e["name"]): cache_dir / e["file_name"] for e in entries
            if (cache_dir / e["file_name"]).exists()}
