"""Write the Pyodide lock file the course site serves.

Pyodide loads packages by name from a lock file (`pyodide-lock.json`). The site
serves its own copy, next to the course wheel, with three changes to Pyodide's:

- entries for the course wheel (`import lib`, `exercises`, `labs`, `presentation`), ipywidgets
  and comm, so a plain import loads them from any folder, with no `%pip` cell. Each entry is
  read from the wheel's own metadata (name, version, top-level imports, Requires-Dist); of its
  requirements, `depends` keeps those the lock knows (ipywidgets' JupyterLab front-end packages
  are not Python the kernel loads: the site has them as JupyterLab extensions);
- the distribution's own packages point at where they really are: the Pyodide CDN
  (online build) or the site's copy of a supplied distribution (self-hosted build);
- pure-Python wheels fetched from PyPI get the sha256 of the file actually served.

Relative file names are resolved by Pyodide against the lock file's folder.

Why the lock is written here, by hand, and not by jupyterlite-pyodide-kernel's own
``PyodideLockAddon``: that addon builds the lock with the ``pyodide-lock`` package, and only
pyodide-lock 0.1.3 or newer can read the lock of Pyodide 314; pyodide-lock 0.1.3 needs Python
3.12 or newer, while the course builds on Python 3.11 too (the build machine's ``python3``, from
which ``./course`` makes ``.venv``), where pip installs 0.1.2 at most, which cannot read that
lock. The lock is plain JSON (a ``packages`` map of name to file, sha256,
imports and dependencies), so the few changes above are made on it directly. Once the build needs
Python 3.12 anyway, the addon (with pyodide-lock >= 0.1.3) can take this module's place.
"""

import copy
import hashlib
import json
import re
from pathlib import Path

from tools.wheel import metadata

PYODIDE_VERSION = "314.0.6"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
BASE_LOCK = Path(__file__).resolve().parent / "pyodide" / f"pyodide-lock-{PYODIDE_VERSION}.json"



def normalise(name):
    """PEP 503 normalised package name: 'Prompt_Toolkit' -> 'prompt-toolkit'."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_base_lock(path=BASE_LOCK):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def added_entry(wheel_path, known):
    """The lock entry for one wheel the site serves from the lock's own folder.

    known: the names the lock holds; requirements outside it are left out of "depends".
    """
    meta = metadata(wheel_path)
    return {
        "name": normalise(meta["name"]), "version": meta["version"], "file_name": Path(wheel_path).name,
        "install_dir": "site", "sha256": sha256_of(wheel_path), "package_type": "package",
        "imports": meta["imports"],
        "depends": [normalise(r) for r in meta["requires"] if normalise(r) in known],
        "unvendored_tests": False,
    }


def add_wheels(lock, wheels):
    """Put an entry for each wheel (served next to the lock) into lock["packages"]."""
    names = {normalise(metadata(w)["name"]) for w in wheels}
    known = set(lock["packages"]) | names
    for wheel in wheels:
        entry = added_entry(wheel, known)
        lock["packages"][entry["name"]] = entry
    return names


def dependency_closure(packages, roots):
    """Every package name reachable from roots through 'depends', roots included."""
    seen, todo = set(), [normalise(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen or name not in packages:
            continue
        seen.add(name)
        todo.extend(normalise(d) for d in packages[name]["depends"])
    return seen


def write_lock(lock, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def online_lock(added_wheels, base=None):
    """The lock of a site whose Pyodide packages come from the CDN."""
    lock = copy.deepcopy(base or load_base_lock())
    for entry in lock["packages"].values():
        if "://" not in entry["file_name"]:
            entry["file_name"] = CDN_URL + entry["file_name"]
    add_wheels(lock, added_wheels)
    return lock


def self_hosted_lock(added_wheels, dist_lock, dist_files, fetched_wheels, dist_prefix="../pyodide/"):
    """The lock of a site that serves everything itself.

    dist_lock: the supplied distribution's lock; dist_files: names of the files it
    holds; fetched_wheels: {name: path} of pure wheels fetched from PyPI and copied
    next to the lock. An entry whose file is in neither place keeps its relative
    name: loading it fails with a message that names the package.
    """
    lock = copy.deepcopy(dist_lock)
    for name, entry in lock["packages"].items():
        if name in fetched_wheels:
            entry["file_name"] = Path(fetched_wheels[name]).name
            entry["sha256"] = sha256_of(fetched_wheels[name])
        elif "://" not in entry["file_name"]:
            entry["file_name"] = dist_prefix + entry["file_name"]
    add_wheels(lock, added_wheels)
    return lock


def missing_packages(lock, dist_files, fetched_wheels, names):
    """Of the given names, those whose wheel the self-hosted site cannot serve."""
    missing = []
    for name in sorted(names):
        entry = lock["packages"][name]
        file_name = Path(entry["file_name"]).name
        served_beside_lock = "/" not in entry["file_name"]
        if not served_beside_lock and name not in fetched_wheels and file_name not in dist_files:
            missing.append(name)
    return missing
