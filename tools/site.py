"""Build and serve the course site.

    python -m tools.site build [--pyodide PATH] [--output DIR]
    python -m tools.site serve [--port N] [--base-path /sub/] [--no-build] [--pyodide PATH]

`build` runs `jupyter lite build` (settings in jupyter_lite_config.json), then adds
what makes `import lib` and `import labs` work in every notebook: the course
wheel, ipywidgets and comm, registered in the Pyodide lock file the site serves,
and preloaded with numpy and matplotlib when the kernel starts.

With --pyodide PATH (a folder or tarball of a Pyodide 314.0.6 distribution) the
site is self-hosted: it loads nothing from outside. Pure-Python wheels the
distribution lacks are fetched from PyPI at build time.
"""

import argparse
import functools
import http.server
import json
import mimetypes
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import lock as locks
from tools import pyodide_dist, release
from tools.wheel import build_wheel

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"
LOCK_DIR = "static/pyodide-lock"
ADDED_FROM_PYPI = ("ipywidgets", "comm")  # versions pinned in requirements.txt
PRELOAD = ["numpy", "matplotlib", "ipywidgets", "transformer-course", "comm", "ipython", "jedi"]
KERNEL_BOOT = ["micropip", "ipython", "jedi", "comm", "traitlets"]
# Notebooks are saved every few seconds, so a check can read what the learner typed since a
# cell ran (exercises/core/saved.py) and never judge code that changed since.
AUTOSAVE_SECONDS = 5
SETTINGS_OVERRIDES = {"@jupyterlab/docmanager-extension:plugin": {"autosaveInterval": AUTOSAVE_SECONDS}}


def pinned_versions(requirements=ROOT / "requirements.txt"):
    """{'ipywidgets': '8.1.9', ...} from the == pins in requirements.txt."""
    pins = {}
    for line in requirements.read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[locks.normalise(name)] = version.strip()
    return pins


def fetch_added_wheels():
    """ipywidgets and comm wheels at the versions requirements.txt pins."""
    pins = pinned_versions()
    entries = []
    for name in ADDED_FROM_PYPI:
        version = pins[name]
        entries.append({"name": name, "version": version,
                        "file_name": f"{name}-{version}-py3-none-any.whl"})
    return list(pyodide_dist.fetch_pure_wheels(entries, CACHE / "wheels").values())


def run_lite_build(output, contents):
    """`jupyter lite build` of the notebooks in contents into output, from scratch.

    It runs in a fresh working folder because JupyterLite keeps its build state in
    the working folder: two builds (a test and an instructor's serve) never share it.
    """
    shutil.rmtree(output, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="lite-build-") as workdir:
        result = subprocess.run(
            [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(ROOT),
             "--contents", str(contents), "--output-dir", str(output)],
            cwd=workdir, capture_output=True, text=True,
        )
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-5000:] + result.stderr[-5000:])
        raise SystemExit(f"jupyter lite build failed (exit {result.returncode})")


def patch_lite_settings(output, settings):
    """Merge settings into the Pyodide kernel's entry of the site's jupyter-lite.json, and the
    JupyterLab settings of :data:`SETTINGS_OVERRIDES` into its settings overrides."""
    path = output / "jupyter-lite.json"
    config = json.loads(path.read_text())
    data = config.setdefault("jupyter-config-data", {})
    data["appName"] = "The transformer block, part by part"
    plugin = data.setdefault("litePluginSettings", {}).setdefault(KERNEL_SETTINGS, {})
    plugin.update(settings)
    overrides = data.setdefault("settingsOverrides", {})
    for name, values in SETTINGS_OVERRIDES.items():
        overrides.setdefault(name, {}).update(values)
    path.write_text(json.dumps(config, indent=2) + "\n")


def build_self_hosted_lock(output, pyodide_path, added):
    """Copy the supplied Pyodide into the site and write a lock that needs no outside host."""
    dist_dir = pyodide_dist.find_distribution(pyodide_path, CACHE)
    dist_files = pyodide_dist.copy_distribution(dist_dir, output / "static" / "pyodide")
    dist_lock = json.loads((dist_dir / "pyodide-lock.json").read_text())
    needed = locks.dependency_closure(dist_lock["packages"], KERNEL_BOOT + PRELOAD)
    to_fetch = [
        entry for name, entry in sorted(dist_lock["packages"].items())
        if name in needed and Path(entry["file_name"]).name not in dist_files
        and pyodide_dist.is_pure(entry["file_name"])
    ]
    fetched = pyodide_dist.fetch_pure_wheels(to_fetch, CACHE / "wheels")
    for wheel in fetched.values():
        shutil.copy2(wheel, output / LOCK_DIR / wheel.name)
    lock = locks.self_hosted_lock(added, dist_lock, dist_files, fetched)
    full_needed = locks.dependency_closure(lock["packages"], KERNEL_BOOT + PRELOAD)
    missing = locks.missing_packages(lock, dist_files, fetched, full_needed)
    preload = [name for name in PRELOAD
               if not set(missing) & locks.dependency_closure(lock["packages"], [name])]
    if missing:
        print(f"WARNING: the supplied Pyodide lacks {', '.join(missing)}; notebooks that "
              "need them will fail to import. Supply the full Pyodide distribution.",
              file=sys.stderr)
    settings = {"pyodideUrl": "./static/pyodide/pyodide.mjs", "disablePyPIFallback": True}
    return lock, preload, settings


def build(output=ROOT / "_output", pyodide=None, content=ROOT / "content"):
    """Build the whole site from the notebooks in content into output; return a short report."""
    start = time.perf_counter()
    output = Path(output).resolve()
    with tempfile.TemporaryDirectory(prefix="course-content-") as staging:
        staged = Path(staging) / "content"
        manifest = release.stage_contents(content, staged)
        run_lite_build(output, staged)
        lock_dir = output / LOCK_DIR
        added = [build_wheel(lock_dir, extra_files=release.wheel_files(manifest, staged))]
    for wheel in fetch_added_wheels():
        added.append(Path(shutil.copy2(wheel, lock_dir / wheel.name)))
    if pyodide:
        lock, preload, settings = build_self_hosted_lock(output, pyodide, added)
    else:
        lock, preload, settings = locks.online_lock(added), PRELOAD, {}
    locks.write_lock(lock, lock_dir / "pyodide-lock.json")
    # The query names this build's lock, so no browser cache serves a previous build's.
    version = locks.sha256_of(lock_dir / "pyodide-lock.json")[:12]
    settings["loadPyodideOptions"] = {
        "lockFileURL": f"./{LOCK_DIR}/pyodide-lock.json?v={version}", "packages": preload,
    }
    patch_lite_settings(output, settings)
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    return {"output": str(output), "seconds": round(time.perf_counter() - start, 1),
            "megabytes": round(size / 1e6, 1), "self_hosted": bool(pyodide), "preload": preload,
            "release": manifest}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site, optionally under a sub-path, with the MIME types Pyodide needs."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".whl": "application/zip", ".ipynb": "application/json"}
    base_path = "/"

    def translate_path(self, path):
        if not path.startswith(self.base_path):
            return str(Path(self.directory) / "__outside_base_path__")
        return super().translate_path("/" + path[len(self.base_path):])

    def log_message(self, format, *args):
        pass


def serve(output, port=8000, base_path="/", host="127.0.0.1"):
    base_path = "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"
    handler = functools.partial(type("Handler", (SiteHandler,), {"base_path": base_path}),
                                directory=str(output))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    url = f"http://{host}:{server.server_address[1]}{base_path}lab/index.html?path=00_start_here.ipynb"
    print(f"The course is being served at:\n\n    {url}\n\nPress Ctrl+C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.site", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["build", "serve"])
    parser.add_argument("--output", default=str(ROOT / "_output"))
    parser.add_argument("--pyodide", help="folder or tarball of a Pyodide 314.0.6 distribution "
                        "(self-hosted site, no internet needed)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--base-path", default="/", help="serve under this sub-path, e.g. /course/")
    parser.add_argument("--no-build", action="store_true", help="serve the existing build")
    args = parser.parse_args(argv)
    mimetypes.add_type("text/javascript", ".mjs")
    if args.command == "build" or not args.no_build:
        report = build(args.output, args.pyodide)
        print(f"Built release {report['release']['version']} of the site in {report['seconds']} s: "
              f"{report['megabytes']} MB in {report['output']}")
    if args.command == "serve":
        serve(args.output, args.port, args.base_path)


if __name__ == "__main__":
    main()
