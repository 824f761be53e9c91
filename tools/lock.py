"""Write the Pyodide lock file the course site serves.

Pyodide loads packages by name from a lock file (`pyodide-lock.json`). The site
serves its own copy, next to the course wheel, with three changes to Pyodide's:

- entries for the course wheel (`import lib`, `import labs`), ipywidgets and comm,
  so a plain import loads them from any folder, with no `%pip` cell;
- the distribution's own packages point at where they really are: the Pyodide CDN
  (online build) or the site's copy of a supplied distribution (self-hosted build);
- pure-Python wheels fetched from PyPI get the sha256 of the file actually served.

Relative file names are resolved by Pyodide against the lock file's folder.
"""

import copy
import hashlib
import json
import re
from pathlib import Path

PYODIDE_VERSION = "314.0.6"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
BASE_LOCK = Path(__file__).resolve().parent / "pyodide" / f"pyodide-lock-{PYODIDE_VERSION}.json"

# What each added wheel provides and needs (names as in the lock).
ADDED_PACKAGES = {
    "transformer-course": {"imports": ["lib", "exercises", "labs"], "depends": ["numpy", "matplotlib", "ipywidgets"]},
    "ipywidgets": {"imports": ["ipywidgets"], "depends": ["comm", "ipython", "traitlets"]},
    "comm": {"imports": ["comm"], "depends": ["traitlets"]},
}


def normalise(name):
    """PEP 503 normalised package name: 'Prompt_Toolkit' -> 'prompt-toolkit'."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def wheel_name_version(path):
    """('transformer-course', '0.1.0+g12ab') from a wheel's file name."""
    name, version = Path(path).name.split("-")[:2]
    return normalise(name), version


def load_base_lock(path=BASE_LOCK):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def added_entry(wheel_path):
    """The lock entry for one wheel the site serves from the lock's own folder."""
    name, version = wheel_name_version(wheel_path)
    spec = ADDED_PACKAGES[name]
    return {
        "name": name, "version": version, "file_name": Path(wheel_path).name,
        "install_dir": "site", "sha256": sha256_of(wheel_path), "package_type": "package",
        "imports": spec["imports"], "depends": spec["depends"], "unvendored_tests": False,
    }


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
    for wheel in added_wheels:
        entry = added_entry(wheel)
        lock["packages"][entry["name"]] = entry
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
    for wheel in added_wheels:
        entry = added_entry(wheel)
        lock["packages"][entry["name"]] = entry
    return lock


def missing_packages(lock, dist_files, fetched_wheels, names):
    """Of the given names, those whose wheel the self-hosted site cannot serve."""
    missing = []
    for name in sorted(names):
        entry = lock["packages"][name]
        file_name = Path(entry["file_name"]).name
        if name not in ADDED_PACKAGES and name not in fetched_wheels and file_name not in dist_files:
            missing.append(name)
    return missing
