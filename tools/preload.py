"""Does a built site preload every module its notebooks and the course import?

The site's kernel loads, when it starts, the packages jupyter-lite.json names
(``loadPyodideOptions.packages``, from ``PRELOAD`` in tools/site.py) and everything they depend on
in the site's lock file (``static/pyodide-lock/pyodide-lock.json``); each lock entry says which
top-level modules it provides (``imports``). A module a notebook imports that no preloaded
package provides, and that is not in the browser's standard library, fails in the browser only
(with ``ModuleNotFoundError``, or a download at the learner's first run), never under CPython.

The modules needed are read, not listed: the ``import`` statements of every code cell of every
notebook the site ships (``files/``), and of every module of the course wheel the site serves.

    python -m tools.preload SITE_DIR     # one sentence per module the site does not preload
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import sys
import zipfile
from pathlib import Path

from tools.lock import dependency_closure, normalise
from tools.wheel import PACKAGES

LOCK = "static/pyodide-lock/pyodide-lock.json"
STDLIB_ZIP = "static/pyodide/python_stdlib.zip"


def _python(source: str) -> str:
    """A cell's code as Python (IPython's magics and shell escapes turned into calls)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


def imported_modules(source: str, cell: bool = True) -> set[str]:
    """The top-level modules the code imports (absolute imports, wherever they stand); a
    notebook's ``cell`` may use IPython's syntax, a module's code may not."""
    try:
        tree = ast.parse(_python(source) if cell else source)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def notebook_imports(notebook: dict) -> dict[str, list[int]]:
    """{module: the cells that import it (numbered from 1, markdown cells included)}."""
    found: dict[str, list[int]] = {}
    for number, cell in enumerate(notebook.get("cells", []), 1):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            for module in imported_modules("".join(source) if isinstance(source, list) else source):
                found.setdefault(module, []).append(number)
    return found


def wheel_imports(wheel: Path) -> dict[str, list[str]]:
    """{module: the wheel's files that import it}, the wheel's own packages left out."""
    found: dict[str, list[str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if name.endswith(".py"):
                for module in imported_modules(archive.read(name).decode("utf-8"), cell=False):
                    found.setdefault(module, []).append(name)
    return {m: files for m, files in found.items() if m not in PACKAGES}


def preloaded_modules(lock: dict, packages: list[str]) -> set[str]:
    """The top-level modules the preloaded packages (and all they depend on) provide."""
    entries = lock["packages"]
    return {module.replace("-", "_") for name in dependency_closure(entries, packages)
            for module in entries[name].get("imports", [])}


def _compiled(name: str) -> bool:
    """True for a standard-library module CPython builds from C (Pyodide builds these into its
    interpreter, so its python_stdlib.zip does not hold them)."""
    if name in sys.builtin_module_names:
        return True
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None) or ""
    return origin in ("built-in", "frozen") or origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


# Modules the Pyodide runtime itself registers when it starts (the page's JavaScript globals and
# Pyodide's own JavaScript API): in no archive, yet always importable in the browser.
RUNTIME_MODULES = {"js", "pyodide_js"}


def standard_library(stdlib_zip: Path | None = None) -> set[str]:
    """The standard library's top-level modules the browser's Python has.

    With Pyodide's ``python_stdlib.zip``: the modules it holds, and the ones CPython compiles from C.
    A pure-Python module missing from it (tkinter, venv, ...) is missing from the browser. The
    runtime's own modules (:data:`RUNTIME_MODULES`) are always there. Without it (a site that loads Pyodide from the CDN): CPython's own list.
    """
    names = set(sys.stdlib_module_names) | RUNTIME_MODULES
    if stdlib_zip is None:
        return names
    with zipfile.ZipFile(stdlib_zip) as archive:
        held = {n.split("/")[0].removesuffix(".pyc").removesuffix(".py") for n in archive.namelist()}
    return {n for n in names if n in held or _compiled(n)} | held | RUNTIME_MODULES


def missing_modules(needed: dict[str, list], provided: set[str], stdlib: set[str]) -> dict[str, list]:
    """Of ``needed`` ({module: where}), those neither provided nor in the standard library."""
    return {m: where for m, where in sorted(needed.items())
            if m.replace("-", "_") not in provided and m not in stdlib}


def course_wheel(site: Path, lock: dict) -> Path | None:
    """The course wheel the site serves beside its lock (the entry that provides ``lib``)."""
    for entry in lock["packages"].values():
        if set(entry.get("imports", [])) & set(PACKAGES) and "/" not in entry["file_name"]:
            return site / Path(LOCK).parent / entry["file_name"]
    return None


def unserved_modules(site: Path, lock: dict) -> set[str]:
    """Modules the site cannot load at all: those of lock entries whose file it does not hold, or
    that depend on one (a self-hosted site built from an incomplete distribution, such as
    Pyodide's core: the build warns, and the landing page tells learners)."""
    folder, entries = site / Path(LOCK).parent, lock["packages"]
    absent = {name for name, entry in entries.items()
              if "://" not in entry["file_name"] and not (folder / entry["file_name"]).is_file()}
    return {module.replace("-", "_") for name, entry in entries.items()
            if dependency_closure(entries, [name]) & absent for module in entry.get("imports", [])}


def site_problems(site, stdlib_zip=None) -> list[str]:
    """One sentence per module the site's notebooks or course wheel import that the site does
    not preload; [] when it preloads them all. Modules of packages the site's own distribution
    lacks are left out: no preload list can mend those (see :func:`unserved_modules`)."""
    site = Path(site)
    config = json.loads((site / "jupyter-lite.json").read_text(encoding="utf-8"))
    settings = config["jupyter-config-data"]["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    packages = [normalise(p) for p in settings["loadPyodideOptions"]["packages"]]
    lock = json.loads((site / LOCK).read_text(encoding="utf-8"))
    if stdlib_zip is None and (site / STDLIB_ZIP).is_file():
        stdlib_zip = site / STDLIB_ZIP
    provided = preloaded_modules(lock, packages) | unserved_modules(site, lock)
    stdlib = standard_library(stdlib_zip)
    advice = (f"the site preloads {', '.join(packages)} and what they depend on; add the package that "
              "provides it to PRELOAD in tools/site.py, or remove the import")
    problems = []
    files = site / "files"
    for path in sorted(files.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        needed = notebook_imports(json.loads(path.read_text(encoding="utf-8")))
        for module, cells in missing_modules(needed, provided, stdlib).items():
            where = ", ".join(str(c) for c in cells)
            problems.append(f"{path.relative_to(files).as_posix()} imports {module} (cell {where}), which "
                            f"the browser's Python does not have at start: {advice}.")
    wheel = course_wheel(site, lock)
    if wheel is None:
        problems.append(f"The site serves no course wheel beside {LOCK}: rebuild it with python -m tools.site build.")
    else:
        for module, names in missing_modules(wheel_imports(wheel), provided, stdlib).items():
            problems.append(f"The course wheel's {names[0]} imports {module}, which the browser's Python "
                            f"does not have at start: {advice}.")
    return problems


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    problems = site_problems(args[0])
    print("\n".join(problems) if problems else f"{args[0]}: every module the notebooks and the course "
          "import is preloaded or in the standard library.", file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
