"""The built site: what it holds and how its Pyodide lock is written (no browser)."""

import hashlib
import json
import zipfile
from pathlib import Path

from conftest import notebooks, CONTENT
from tools import lock as locks

KERNEL = "@jupyterlite/pyodide-kernel-extension:kernel"


def kernel_settings(site):
    config = json.loads((site / "jupyter-lite.json").read_text())
    return config["jupyter-config-data"]["litePluginSettings"][KERNEL]


def served_lock(site):
    return json.loads((site / "static/pyodide-lock/pyodide-lock.json").read_text())


def test_every_notebook_is_in_the_site(online_site):
    site, _ = online_site
    for notebook in notebooks():
        relative = notebook.relative_to(CONTENT)
        assert (site / "files" / relative).is_file(), f"{relative} is missing from the site"
        listing = json.loads((site / "api/contents" / relative.parent / "all.json").read_text())
        assert relative.name in {item["name"] for item in listing["content"]}


def test_site_has_no_source_maps_and_stays_small(online_site):
    site, report = online_site
    maps = [p for p in site.rglob("*.map")]
    assert maps == [], f"source maps were shipped: {maps[:3]}"
    assert report["megabytes"] < 40, f"the site weighs {report['megabytes']} MB"


def test_lock_registers_the_course_wheel_with_its_imports(online_site):
    site, _ = online_site
    entry = served_lock(site)["packages"]["transformer-course"]
    assert entry["imports"] == ["lib", "exercises", "labs"]
    assert set(entry["depends"]) == {"numpy", "matplotlib", "ipywidgets"}
    wheel = site / "static/pyodide-lock" / entry["file_name"]
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]
    names = set(zipfile.ZipFile(wheel).namelist())
    library = {p.relative_to(CONTENT.parent).as_posix() for d in ("lib", "labs")
               for p in (CONTENT.parent / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert library and library <= names, f"missing from the wheel: {sorted(library - names)[:5]}"


def test_online_lock_points_pyodide_packages_at_the_cdn(online_site):
    site, _ = online_site
    packages = served_lock(site)["packages"]
    numpy = packages["numpy"]
    assert numpy["version"] == "2.4.6"
    assert numpy["file_name"] == locks.CDN_URL + "numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl"
    assert packages["matplotlib"]["version"] == "3.10.8"
    for name in ("ipywidgets", "comm"):
        wheel = site / "static/pyodide-lock" / packages[name]["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == packages[name]["sha256"]


def test_online_site_preloads_the_course_and_serves_its_own_lock(online_site):
    site, _ = online_site
    settings = kernel_settings(site)
    options = settings["loadPyodideOptions"]
    lock_file = site / "static/pyodide-lock/pyodide-lock.json"
    version = hashlib.sha256(lock_file.read_bytes()).hexdigest()[:12]
    assert options["lockFileURL"] == f"./static/pyodide-lock/pyodide-lock.json?v={version}"
    assert {"numpy", "matplotlib", "ipywidgets", "transformer-course"} <= set(options["packages"])
    assert "pyodideUrl" not in settings, "the default build must use Pyodide's CDN"


def test_notebooks_ask_for_the_kernel_named_python():
    for notebook in notebooks():
        spec = json.loads(notebook.read_text())["metadata"]["kernelspec"]
        assert spec["name"] == "python", f"{notebook.name}: kernelspec {spec['name']!r}"


def test_self_hosted_site_needs_nothing_from_outside(self_hosted_site):
    site, report = self_hosted_site
    settings = kernel_settings(site)
    assert settings["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert settings["disablePyPIFallback"] is True
    assert (site / "static/pyodide/pyodide.asm.wasm").is_file()
    lock = served_lock(site)
    lock_dir = site / "static/pyodide-lock"
    needed = locks.dependency_closure(lock["packages"], ["ipython", "jedi", "comm", "ipywidgets", "micropip"])
    for name in needed:
        entry = lock["packages"][name]
        assert "://" not in entry["file_name"], f"{name} would be fetched from outside"
        wheel = (lock_dir / entry["file_name"]).resolve()
        assert wheel.is_file(), f"{name}: {entry['file_name']} is not in the site"
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"], name
    # The npm core has no numpy: the build says so and does not preload what it lacks.
    assert "numpy" not in report["preload"] and "transformer-course" not in report["preload"]
    assert "ipywidgets" in report["preload"]


def test_dependency_closure_follows_depends():
    packages = {"a": {"depends": ["B_c"]}, "b-c": {"depends": ["d"]}, "d": {"depends": []},
                "e": {"depends": []}}
    assert locks.dependency_closure(packages, ["a"]) == {"a", "b-c", "d"}
