"""Build, check and serve the course site.

    python -m tools.site build [--pyodide PATH] [--output DIR] [--ship-anyway]
    python -m tools.site serve [--port N] [--host ADDRESS] [--base-path /sub/] [--no-build] ...
    python -m tools.site check

`build` runs `jupyter lite build` (its options in jupyter_lite_config.json; the site's settings
in jupyter-lite.json, the course's title, and overrides.json, JupyterLab's settings such as the
autosave interval, as jupyterlite/demo keeps them), then adds what makes `import lib` and
`import labs` work in every notebook: the course wheel, ipywidgets and comm, registered in the
Pyodide lock file the site serves, and preloaded with numpy and matplotlib when the kernel
starts; the trained model's arrays, served beside the wheel and fetched only when notebook 05
first needs them (tools/wheel.py, lib/files.py); the release's stamped notebooks, one zip beside
the wheel, fetched only for a learner's fresh copy (tools/release.py, engine/core/release.py); and
the course's landing page at the site root. Only what each build computes is written
into the site's settings: the address of its lock file (named by a hash of it), the packages to
preload and, for a self-hosted site, where Pyodide is. It refuses notebooks that must not ship (stored
outputs, exercises filled in: tools/guard.py), which `check` looks for alone.

With --pyodide PATH (a folder or tarball of a Pyodide 314.0.6 distribution) the
site is self-hosted: it loads nothing from outside. Pure-Python wheels the
distribution lacks are fetched from PyPI at build time. A distribution without the
packages the notebooks need (Pyodide's core only) is refused unless --ship-anyway.

A build writes into a new folder beside the output and swaps it into place when complete,
one build of an output at a time (tools/site_swap.py): a running `serve` never serves a
half-built site.
"""

import argparse
import errno
import json
import mimetypes
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import compress, guard, landing, release, site_swap
from tools import lock as locks
from tools import pyodide_dist
from tools.addresses import reachable_addresses
from tools.serve import WORKERS, Server, content_hashed, normal_base_path
from tools.wheel import build_wheel, served_files

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
BUILDS = CACHE / "builds.json"      # what kind of site each output folder last got
LITE_SETTINGS = json.loads((ROOT / "jupyter-lite.json").read_text(encoding="utf-8"))["jupyter-config-data"]
LAB_SETTINGS = json.loads((ROOT / "overrides.json").read_text(encoding="utf-8"))
TITLE = LITE_SETTINGS["appName"]
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"
LOCK_DIR = "static/pyodide-lock"
ADDED_FROM_PYPI = ("ipywidgets", "comm")  # versions pinned in requirements.txt
PRELOAD = ["numpy", "matplotlib", "ipywidgets", "transformer-course", "comm", "ipython", "jedi"]
KERNEL_BOOT = ["micropip", "ipython", "jedi", "comm", "traitlets"]
# Notebooks are saved every few seconds (overrides.json), so a check can read what the learner
# typed since a cell ran (engine/core/saved.py) and never judge code that changed since.
AUTOSAVE_SECONDS = LAB_SETTINGS["@jupyterlab/docmanager-extension:plugin"]["autosaveInterval"]
NOTEBOOKS_NEED = ["numpy", "matplotlib", "ipywidgets", "transformer-course"]


class BuildError(SystemExit):
    """A build that cannot go on; the message says why and what to do, in one sentence."""


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
    wheels = pyodide_dist.fetch_pure_wheels(entries, CACHE / "wheels")
    missing = [name for name in ADDED_FROM_PYPI if name not in wheels]
    if missing:
        raise BuildError(f"Could not download {', '.join(missing)} from PyPI (needed once, then kept in "
                         f"{CACHE / 'wheels'}): check the internet connection and build again.")
    return list(wheels.values())


def run_lite_build(output, contents):
    """`jupyter lite build` of the notebooks in contents into output (a new, empty folder).

    It runs in a fresh working folder because JupyterLite keeps its build state in
    the working folder: two builds (a test and an instructor's serve) never share it.
    """
    with tempfile.TemporaryDirectory(prefix="lite-build-") as workdir:
        result = subprocess.run(
            [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(ROOT),
             "--contents", str(contents), "--output-dir", str(output)],
            cwd=workdir, capture_output=True, text=True,
        )
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-5000:] + result.stderr[-5000:])
        raise BuildError(f"jupyter lite build failed (exit {result.returncode}, its output above).")


def set_kernel_settings(output, settings):
    """Merge what this build computed (its lock file's address, the packages to preload, where a
    self-hosted Pyodide is) into the Pyodide kernel's entry of the site's jupyter-lite.json; the
    static settings are already there, from the committed jupyter-lite.json and overrides.json."""
    path = output / "jupyter-lite.json"
    config = json.loads(path.read_text())
    data = config.setdefault("jupyter-config-data", {})
    data.setdefault("litePluginSettings", {}).setdefault(KERNEL_SETTINGS, {}).update(settings)
    path.write_text(json.dumps(config, indent=2) + "\n")


def build_self_hosted_lock(output, dist_dir, added):
    """Copy the supplied Pyodide into the site and write a lock that needs no outside host.

    Returns (lock, preload, settings, missing): missing names the packages of the kernel
    and the notebooks the site cannot serve (all the notebooks' own with Pyodide's core only).
    """
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
    settings = {"pyodideUrl": "./static/pyodide/pyodide.mjs", "disablePyPIFallback": True}
    return lock, preload, settings, missing


def check_output(output: Path, content: Path) -> None:
    """Refuse an output folder the build must not replace, or cannot write."""
    content = content.resolve()
    for precious in (ROOT, content):
        if output == precious or output in precious.parents:
            raise BuildError(f"Refusing to build into {output}: it holds the course itself (the build "
                             "replaces its output folder); choose another folder with --output.")
    if content in output.parents:
        raise BuildError(f"Refusing to build into {output}: it is inside the notebooks' folder "
                         f"{content}; choose another folder with --output.")
    if output.is_file():
        raise BuildError(f"Cannot build into {output}: it is a file; choose a folder with --output.")
    if output.is_dir() and any(output.iterdir()) and not (output / "jupyter-lite.json").is_file():
        raise BuildError(f"Refusing to build into {output}: it is not empty and holds no site built "
                         "before (the build replaces its output folder); choose a new or empty folder "
                         "with --output.")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=output.parent):
            pass
    except OSError as exc:
        raise BuildError(f"Cannot write the site into {output} ({exc.strerror or exc}); choose another "
                         "folder with --output.") from None


def check_content(content: Path, ship_anyway=False, warn=print):
    """Refuse (or, with ship_anyway, warn loudly about) notebooks that must not ship."""
    found = guard.problems(content)
    if not found:
        return []
    listed = guard.describe(found)
    never = guard.unshippable(found)
    if ship_anyway and never:
        raise BuildError(f"Not building, even with --ship-anyway: {len(never)} thing(s) in {content} no build "
                         f"can ship:\n{guard.describe(never)}")
    if not ship_anyway:
        raise BuildError(f"Not building: {len(found)} problem(s) in the notebooks of {content} would "
                         f"be shipped to every learner:\n{listed}\n{guard.HOW_TO_FIX}\n(To ship them "
                         "as they are anyway, build with --ship-anyway.)")
    banner = "!" * 78
    warn(f"{banner}\nWARNING: shipping what the guard refuses (outputs, filled-in exercises, widget "
         f"state, broken checks...), as asked (--ship-anyway):\n{listed}\nEvery learner gets them as "
         f"they are.\n{banner}")
    return found


def notebook_packages_lacking(dist_dir: Path) -> list[str]:
    """The compiled packages the notebooks need (numpy, matplotlib and theirs) that a Pyodide
    distribution does not hold: all of them in Pyodide's core alone. (Pure-Python ones
    come from PyPI at build time.)"""
    packages = json.loads((dist_dir / "pyodide-lock.json").read_text(encoding="utf-8"))["packages"]
    needed = locks.dependency_closure(packages, NOTEBOOKS_NEED)
    return sorted(name for name in needed
                  if not pyodide_dist.is_pure(packages[name]["file_name"])
                  and not (dist_dir / Path(packages[name]["file_name"]).name).is_file())


def check_distribution(dist_dir: Path, shown, ship_anyway=False, warn=print) -> None:
    """Refuse (or, with ship_anyway, warn loudly about) a Pyodide on which no notebook runs."""
    lacking = notebook_packages_lacking(dist_dir)
    if not lacking:
        return
    what = (f"the Pyodide distribution {shown} lacks {', '.join(lacking)} (Pyodide's core only?), so "
            "no notebook of this course would run on the site (the kernel starts, the first cell fails)")
    if not ship_anyway:
        raise BuildError(f"Not building: {what}. Build with the full distribution, {pyodide_dist.FULL_ARCHIVE} "
                         f"({pyodide_dist.DOWNLOAD}), or add --ship-anyway to build it all the same.")
    warn(f"{'!' * 78}\nWARNING: building as asked (--ship-anyway), but {what}.\n{'!' * 78}")


def build(output=ROOT / "_output", pyodide=None, content=ROOT / "content", ship_anyway=False):
    """Build the whole site from the notebooks in content into output; return a short report.

    The site is built beside output and put in its place only when complete; builds of one
    output take turns (:mod:`tools.site_swap`)."""
    start = time.perf_counter()
    output, content = Path(output).resolve(), Path(content)
    if not content.is_dir():
        raise BuildError(f"No notebooks to build: {content} is not a folder.")
    warn = lambda text: print(text, file=sys.stderr)  # noqa: E731
    guarded = check_content(content, ship_anyway, warn=warn)
    check_output(output, content)
    # Before the long part: a bad archive, or one on which no notebook runs, ends the build at once.
    dist_dir = pyodide_dist.find_distribution(pyodide, CACHE) if pyodide else None
    if dist_dir is not None:
        check_distribution(dist_dir, pyodide, ship_anyway, warn=warn)
    with site_swap.exclusive(output):
        site = site_swap.staging_folder(output)
        try:
            manifest, preload, missing = _build_into(site, content, pyodide, dist_dir)
            site_swap.keep_previous(output, site, LOCK_DIR, content_hashed)
            site_swap.put_in_place(site, output)
        finally:
            shutil.rmtree(site, ignore_errors=True)
        remember(output, pyodide)
    size = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    return {"output": str(output), "seconds": round(time.perf_counter() - start, 1),
            "megabytes": round(size / 1e6, 1), "self_hosted": bool(pyodide), "preload": preload,
            "missing": missing, "release": manifest, "shipped_anyway": guarded,
            "pyodide": str(Path(pyodide).resolve()) if pyodide else locks.CDN_URL}


def _build_into(output: Path, content: Path, pyodide, dist_dir):
    """Build the site into output (a new, empty folder); return (manifest, preload, missing)."""
    with tempfile.TemporaryDirectory(prefix="course-content-") as staging:
        staged = Path(staging) / "content"
        manifest = release.stage_contents(content, staged)
        run_lite_build(output, staged)
        lock_dir = output / LOCK_DIR
        lock_dir.mkdir(parents=True, exist_ok=True)
        archive, notebooks = release.notebooks_archive(manifest, staged)   # beside the wheel, not in it
        (lock_dir / archive).write_bytes(notebooks)
        added = [build_wheel(lock_dir, extra_files=release.wheel_files(manifest, staged, archive))]
        for name, path in served_files().items():        # the trained model's arrays, beside the wheel
            shutil.copy2(path, lock_dir / name)
        for wheel in fetch_added_wheels():
            added.append(Path(shutil.copy2(wheel, lock_dir / wheel.name)))
        missing = []
        if pyodide:
            lock, preload, settings, missing = build_self_hosted_lock(output, dist_dir, added)
        else:
            lock, preload, settings = locks.online_lock(added), PRELOAD, {}
        locks.write_lock(lock, lock_dir / "pyodide-lock.json")
        # The query names this build's lock, so no browser cache serves a previous build's.
        version = locks.sha256_of(lock_dir / "pyodide-lock.json")[:12]
        settings["loadPyodideOptions"] = {
            "lockFileURL": f"./{LOCK_DIR}/pyodide-lock.json?v={version}", "packages": preload,
        }
        set_kernel_settings(output, settings)
        landing.write(output, staged, TITLE, {
            "defaultPyodideUrl": locks.CDN_URL + "pyodide.mjs", "kernelSettings": KERNEL_SETTINGS,
            "needs": NOTEBOOKS_NEED, "kind": "self-hosted" if pyodide else "cdn",
            "sizes": checked_sizes(output)})
    compress.write_gzip_copies(output)          # last: of every file as it ships
    return manifest, preload, missing


def checked_sizes(output: Path) -> dict[str, int]:
    """{path in the site: bytes} of the files the landing page's checks ask for (the Pyodide
    runtime and the wheels): a check that gets another length (a file cut short by a copy) says
    the file is damaged instead of Ready."""
    return {p.relative_to(output).as_posix(): p.stat().st_size
            for folder in (output / LOCK_DIR, output / "static" / "pyodide") if folder.is_dir()
            for p in sorted(folder.iterdir()) if p.suffix in (".whl", ".zip", ".wasm", ".mjs") and p.is_file()}


def remember(output: Path, pyodide) -> None:
    """Note which kind of site output holds, so `serve` rebuilds the same kind."""
    try:
        builds = json.loads(BUILDS.read_text())
        builds = {k: v for k, v in builds.items() if Path(k).is_dir()}  # forget removed sites
    except (OSError, ValueError, AttributeError):
        builds = {}
    builds[str(output)] = {"pyodide": str(Path(pyodide).resolve()) if pyodide else None}
    try:
        BUILDS.parent.mkdir(parents=True, exist_ok=True)
        written = BUILDS.with_name(f".{BUILDS.name}.{os.getpid()}")
        written.write_text(json.dumps(builds, indent=1, sort_keys=True) + "\n")
        os.replace(written, BUILDS)           # whole, even with another build writing it
    except OSError:
        pass


def last_pyodide(output: Path):
    """The Pyodide path output was last built with (None: the CDN, or never built)."""
    try:
        return json.loads(BUILDS.read_text()).get(str(Path(output).resolve()), {}).get("pyodide")
    except (OSError, ValueError, AttributeError):
        return None


def summary(report) -> str:
    kind = (f"self-hosted, with Pyodide from {report['pyodide']}" if report["self_hosted"]
            else f"CDN: learners' browsers load Pyodide from {report['pyodide']}")
    lines = [f"Built release {report['release']['version']} of the site ({kind}) in "
             f"{report['seconds']} s: {report['megabytes']} MB in {report['output']}"]
    if report["missing"]:
        lines.append(f"WARNING: the supplied Pyodide lacks {', '.join(report['missing'])}, so no notebook "
                     "of this course can run on this site (the kernel starts, the first cell fails). "
                     f"Build with the full distribution, {pyodide_dist.FULL_ARCHIVE} ({pyodide_dist.DOWNLOAD}).")
    return "\n".join(lines)


# ---------------------------------------------------------------- serving

def open_server(output, port=8000, base_path="/", host="127.0.0.1"):
    """The HTTP server (tools/serve.py), its port taken (so a busy port is found before any
    build); not yet serving."""
    try:
        return Server(output, port=port, host=host, base_path=base_path, workers=WORKERS)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise BuildError(busy_port(port, host)) from None
        if exc.errno == errno.EACCES:
            raise BuildError(f"Not allowed to use port {port} (ports below 1024 need root): choose "
                             "another with --port 8000.") from None
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
            raise BuildError(f"Cannot serve on the address {host!r}: it is not an address of this "
                             "machine; use --host 127.0.0.1 (this machine only) or --host 0.0.0.0 "
                             "(every network).") from None
        raise BuildError(f"Cannot serve on {host}:{port} ({exc.strerror or exc}).") from None


def busy_port(port: int, host: str) -> str:
    """The busy-port sentence: what to do, and what serving on another port costs learners."""
    return (f"Port {port} is already in use (another ./course serve, or another program): stop it and "
            f"serve again. Learners' saved notebooks and progress belong to the exact address they "
            f"opened (port {port} included): at another port (--port {port + 1}) they find blank "
            "notebooks until each one moves their work with the start page's Export and Import.")


def site_urls(server, host, base_path) -> list[str]:
    """The addresses to open: for 0.0.0.0 or ::, this machine's IP addresses on its networks
    (:mod:`tools.addresses`; this machine's own, 127.0.0.1, when it has none)."""
    port, path = server.server_address[1], normal_base_path(base_path)
    shown = reachable_addresses(host) or ["127.0.0.1"]
    return [f"http://{f'[{a}]' if ':' in a else a}:{port}{path}" for a in shown]


def serve(server, urls, output, public=False):
    if isinstance(urls, str):
        urls = [urls]
    listed = "\n".join(f"    {url}" for url in urls)
    lines = [f"The course is being served from {output} at:\n\n{listed}\n"]
    if public:
        lines.append("Anyone who can reach this machine on the network can open it (the site only, "
                     "read-only); use --host 127.0.0.1 to keep it to this machine.\n")
        lines.append("Browsers give a plain http:// address of another computer no service worker: there the "
                     "course keeps learners' progress in their browser's own storage, and a check cannot "
                     "tell whether a cell changed since it ran (docs/instructors.md: Serving a classroom).\n")
    lines.append("Press Ctrl+C to stop.")
    print("\n".join(lines), flush=True)
    try:
        server.serve_forever()
    finally:
        server.close()


# ---------------------------------------------------------------- command line

def port_number(text: str) -> int:
    """A port given on the command line: a whole number from 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give a whole number from 1 to 65535, "
                                         "such as 8000")
    return port


def parser():
    main_parser = argparse.ArgumentParser(prog="python -m tools.site", description=__doc__,
                                          formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = main_parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--output", default=str(ROOT / "_output"),
                        help="the folder to build into (default: _output/; it is replaced)")
    output.add_argument("--pyodide", metavar="PATH",
                        help="a Pyodide 314.0.6 distribution (the .tar.bz2 archive or its folder): "
                        "a self-hosted site that loads nothing from outside")
    output.add_argument("--ship-anyway", action="store_true",
                        help="build even when content/ holds what the guard refuses (./course check), "
                        "or --pyodide has only Pyodide's core, on which no notebook runs (warns "
                        "loudly; learners get it as it is)")
    commands.add_parser("build", parents=[output], help="build the site",
                        description="Build the static site into --output (default _output/).")
    serve_parser = commands.add_parser(
        "serve", parents=[output], help="build the site and serve it",
        description="Build the site (the same kind as the last build of --output: self-hosted "
        "with the same --pyodide, or CDN) and serve it over HTTP.")
    serve_parser.add_argument("--port", type=port_number, default=8000, help="the port (default 8000)")
    serve_parser.add_argument("--host", default="127.0.0.1",
                              help="the address to listen on (default 127.0.0.1: this machine only; "
                              "0.0.0.0 serves every network this machine is on, e.g. a classroom's)")
    serve_parser.add_argument("--base-path", default="/", help="serve under this sub-path, e.g. /course/")
    serve_parser.add_argument("--no-build", action="store_true", help="serve the existing build as it is")
    check_parser = commands.add_parser(
        "check", help="check the notebooks in content/ are fit to ship",
        description="Check that content/ holds nothing build refuses to ship: stored outputs, filled-in "
        "exercises, saved widget state, execution timestamps, another kernel than python, exercise "
        "and check cells that break the course's conventions, solution code pasted outside the exercise "
        "cells, stray Untitled files and Duplicate's copies, symbolic links, hidden files and folders "
        "(tools/guard.py).")
    check_parser.add_argument("--clear", action="store_true",
                              help="first remove outputs, execution counts, widget state and timings "
                              "from every notebook of content/")
    return main_parser


def main(argv=None):
    args = parser().parse_args(argv)
    mimetypes.add_type("text/javascript", ".mjs")
    if args.command == "check":
        if args.clear:
            cleared = [p for p in guard.notebooks_in(ROOT / "content") if guard.clear(p)]
            print(f"Cleared {len(cleared)} notebook(s)" + "".join(f"\n  {p.relative_to(ROOT)}" for p in cleared))
        found = guard.problems(ROOT / "content")
        if found:
            print(f"{len(found)} problem(s) in content/:\n{guard.describe(found)}\n{guard.HOW_TO_FIX}",
                  file=sys.stderr)
            raise SystemExit(1)
        print(f"content/: {len(guard.notebooks_in(ROOT / 'content'))} notebooks, fit to ship "
              "(no stored outputs, widget state or timings, every exercise as its definition writes it, "
              "with its blanks and its check, the python kernel, no stray files).")
        return
    server = None
    if args.command == "serve":
        server = open_server(args.output, args.port, args.base_path, args.host)
    try:
        pyodide = args.pyodide
        if args.command == "serve" and pyodide is None and not args.no_build:
            pyodide = last_pyodide(args.output)
            if pyodide:
                print(f"Rebuilding the self-hosted site, as last built into {args.output}, with Pyodide "
                      f"from {pyodide} (./course build without --pyodide goes back to the CDN).")
        if args.command == "build" or not args.no_build:
            print(summary(build(args.output, pyodide, ship_anyway=args.ship_anyway)), flush=True)
        elif not (Path(args.output) / "index.html").is_file():
            raise BuildError(f"Nothing to serve: {args.output} holds no built site; serve without "
                             "--no-build to build it first.")
    except BaseException:
        if server is not None:
            server.server_close()
        raise
    if server is not None:
        serve(server, site_urls(server, args.host, args.base_path), args.output,
              public=args.host not in ("127.0.0.1", "localhost", "::1"))


if __name__ == "__main__":
    main()
