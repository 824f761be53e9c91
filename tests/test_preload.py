"""The built site preloads every module its notebooks and the course import (tools/preload.py).

The modules are read from the import statements of every code cell the site ships and of every
module of the course wheel it serves; the browser's standard library is read from Pyodide's own
python_stdlib.zip (the npm package's). Nothing is listed by hand.
"""

import json
import shutil
import tarfile

import pytest

from tools import preload


@pytest.fixture(scope="module")
def pyodide_stdlib(pyodide_npm_tarball, tmp_path_factory):
    """Pyodide 314.0.6's python_stdlib.zip, from the npm package."""
    target = tmp_path_factory.mktemp("pyodide-stdlib") / "python_stdlib.zip"
    with tarfile.open(pyodide_npm_tarball) as tar:
        target.write_bytes(tar.extractfile("package/python_stdlib.zip").read())
    return target


def site_copy(site, folder):
    """What the check reads of a site: its settings, its lock with the wheels beside it, its notebooks."""
    shutil.copy(site / "jupyter-lite.json", folder / "jupyter-lite.json")
    shutil.copytree(site / "static" / "pyodide-lock", folder / "static" / "pyodide-lock")
    shutil.copytree(site / "files", folder / "files")
    return folder


def add_cell(notebook_path, source):
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "added", "metadata": {},
                              "outputs": [], "source": source})
    notebook_path.write_text(json.dumps(notebook), encoding="utf-8")
    return len(notebook["cells"])


def test_the_site_preloads_every_module_its_notebooks_and_the_course_import(online_site, pyodide_stdlib):
    site, _ = online_site
    assert preload.site_problems(site, pyodide_stdlib) == []
    # What was checked was read from the site itself.
    from_notebooks = set().union(*(preload.notebook_imports(json.loads(p.read_text(encoding="utf-8")))
                                   for p in (site / "files").rglob("*.ipynb")))
    assert {"numpy", "lib", "labs", "engine"} <= from_notebooks
    lock = json.loads((site / preload.LOCK).read_text(encoding="utf-8"))
    from_course = preload.wheel_imports(preload.course_wheel(site, lock))
    assert {"numpy", "matplotlib", "ipywidgets", "IPython"} <= set(from_course)
    own = {"engine", "lib", "labs", "exercises", "presentation"}
    assert not own & set(from_course), "the course's own packages need no preload"


def test_a_notebook_importing_a_module_the_site_does_not_preload_fails_the_check(
        online_site, pyodide_stdlib, tmp_path):
    site = site_copy(online_site[0], tmp_path)
    cell = add_cell(site / "files" / "02_feed_forward.ipynb",
                    "%matplotlib inline\nimport scipy.linalg\nfrom pandas import DataFrame\n\n"
                    "def later():\n    import tkinter\n    from . import sibling    # relative: the notebook's own\n"
                    "    import js, pyodide_js               # the runtime's own: always there\n")
    problems = preload.site_problems(site, pyodide_stdlib)
    named = sorted(p.split(" imports ")[1].split(" ")[0] for p in problems)
    # scipy and pandas are in Pyodide's lock but not preloaded; tkinter is not in Pyodide at all.
    assert named == ["pandas", "scipy", "tkinter"], problems
    assert all(p.startswith(f"02_feed_forward.ipynb imports ") and f"(cell {cell})" in p for p in problems)
    assert "add the package that provides it to PRELOAD in tools/site.py" in problems[0]


def test_a_package_left_out_of_the_preload_list_fails_the_check(online_site, pyodide_stdlib, tmp_path):
    site = site_copy(online_site[0], tmp_path)
    config = json.loads((site / "jupyter-lite.json").read_text(encoding="utf-8"))
    options = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"]["loadPyodideOptions"]
    options["packages"] = [p for p in options["packages"] if p not in ("matplotlib", "transformer-course")]
    (site / "jupyter-lite.json").write_text(json.dumps(config), encoding="utf-8")
    problems = preload.site_problems(site, pyodide_stdlib)
    assert any(p.startswith("The course wheel's engine/") and " imports matplotlib," in p for p in problems), problems
    assert any(p.startswith("00_start_here.ipynb imports engine (cell 3") for p in problems), problems


def test_imports_are_read_from_the_code_only():
    source = ('print("import os")  # import sys\n'
              "from .local import x\n"
              "import numpy.linalg as la, json\n"
              "!pip install nothing\n"
              "if False:\n    from IPython.display import display\n")
    assert preload.imported_modules(source) == {"numpy", "json", "IPython"}
    assert preload.imported_modules("def broken(:\n") == set()


def test_the_browsers_standard_library_is_pyodides(pyodide_stdlib):
    stdlib = preload.standard_library(pyodide_stdlib)
    assert {"json", "math", "zlib", "dataclasses", "unicodedata", "hashlib"} <= stdlib   # zipped or compiled
    assert not {"tkinter", "venv", "ensurepip", "idlelib"} & stdlib
