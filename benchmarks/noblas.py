"""NumPy as the browser runs it: the pinned version, built from source with BLAS off.

Pyodide builds NumPy with ``allow-noblas``: no OpenBLAS, so every matrix product runs NumPy's
own unblocked loops, several times slower than the OpenBLAS of PyPI's wheel. To time the course
under that NumPy, this module builds the version ``requirements.txt`` pins the same way, once::

    pip wheel --no-deps --no-binary numpy numpy==<pin> -Csetup-args=-Dblas=none \\
        -Csetup-args=-Dlapack=none -Csetup-args=-Dallow-noblas=true

It takes several minutes (over half an hour on a busy machine with 2 cores) and needs a C compiler;
the wheel and a virtual environment holding it are kept in ``benchmarks/.noblas/`` (git-ignored)
and reused. The environment holds NumPy alone: a ``.pth`` file adds the site-packages of the
Python that runs the benchmark *after* its own, so matplotlib, ipywidgets, ipykernel and the
rest are the very same files, and only NumPy differs. A wheel built before (of the pinned
version, BLAS off) can be given instead with ``--noblas-wheel PATH``.

    python -m benchmarks.noblas [--wheel PATH]    # build or reuse; print the interpreter's path
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import site
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(__file__).resolve().parent / ".noblas"
REQUIREMENTS = ROOT / "requirements.txt"
SETUP_ARGS = ("-Dblas=none", "-Dlapack=none", "-Dallow-noblas=true")


class Unavailable(Exception):
    """No NumPy without BLAS can be had here; the message says why in one sentence."""


def pinned(requirements: Path = REQUIREMENTS) -> str:
    """The NumPy version requirements.txt pins ("2.4.6")."""
    found = re.search(r"(?m)^numpy==([^\s#]+)", requirements.read_text(encoding="utf-8"))
    if not found:
        raise Unavailable(f"{requirements} pins no numpy version (a line numpy==X.Y.Z).")
    return found.group(1)


def tag(version: str) -> str:
    """What the build depends on: NumPy's version, this Python's and the machine's."""
    return f"numpy-{version}-cp{sys.version_info.major}{sys.version_info.minor}-{platform.machine()}"


def compiler() -> str | None:
    """The C compiler pip's build of NumPy would use, or None."""
    for name in (os.environ.get("CC", "").split()[:1] or []) + ["cc", "gcc", "clang"]:
        if shutil.which(name):
            return shutil.which(name)
    return None


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def describe(python) -> dict:
    """{"version", "blas", "lapack", "python"} of the NumPy that ``python`` imports."""
    code = ("import json, sys, numpy as np; d = np.show_config(mode='dicts')['Build Dependencies']; "
            "print(json.dumps({'version': np.__version__, 'blas': d.get('blas', {}).get('name'), "
            "'lapack': d.get('lapack', {}).get('name'), 'python': sys.version.split()[0], "
            "'file': np.__file__}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def build_wheel(version: str, into: Path, log=print) -> Path:
    """Build NumPy ``version`` from source with BLAS off into the folder ``into``; its path. pip's
    cache is left out, so no wheel it built before (with BLAS, perhaps) is taken instead."""
    cc = compiler()
    if cc is None:
        raise Unavailable("No C compiler (cc, gcc or clang) was found to build NumPy without BLAS "
                          "(e.g. apt-get install build-essential), so the browser's NumPy is not measured.")
    into.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-binary", "numpy",
               "--no-cache-dir", "--disable-pip-version-check", "-w", str(into), f"numpy=={version}"]
    command += [f"-Csetup-args={arg}" for arg in SETUP_ARGS]
    log_file = into / "build.log"
    log(f"  building NumPy {version} from source with BLAS off, as Pyodide builds it (once; this takes "
        f"several minutes, over half an hour on a busy 2-core machine), with {cc}; output in {log_file}...")
    start = time.perf_counter()
    with open(log_file, "w", encoding="utf-8") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise Unavailable(f"Building NumPy {version} without BLAS failed (exit {done.returncode}); "
                          f"the last lines of {log_file} say why.")
    wheels = sorted(into.glob(f"numpy-{version}-*.whl"))
    if not wheels:
        raise Unavailable(f"pip built no numpy-{version} wheel into {into} (see {log_file}).")
    log(f"  built {wheels[-1].name} in {(time.perf_counter() - start) / 60:.1f} minutes")
    return wheels[-1]


def _environment_line() -> str:
    """The .pth line that adds this Python's site-packages after the venv's own (NumPy first)."""
    dirs = [d for d in site.getsitepackages() + [site.getusersitepackages()] if Path(d).is_dir()]
    dirs += [p for p in sys.path if p.endswith("site-packages") and p not in dirs and Path(p).is_dir()]
    return "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs) + "\n"


def make_venv(wheel: Path, folder: Path, log=print) -> Path:
    """A virtual environment in ``folder`` holding ``wheel`` alone, the running Python's packages
    added after it; its interpreter."""
    if folder.exists():
        shutil.rmtree(folder)
    log(f"  making a virtual environment with that NumPy in {folder}...")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = venv_python(folder)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--target", purelib, str(wheel)], check=True)
    (Path(purelib) / "zz-course-environment.pth").write_text(_environment_line(), encoding="utf-8")
    return python


def _good(python: Path, version: str) -> dict | None:
    """describe(python) when it imports NumPy ``version`` with BLAS off, else None."""
    if not python.exists():
        return None
    try:
        found = describe(python)
    except (subprocess.CalledProcessError, ValueError, OSError):
        return None
    if found["version"] == version and found["blas"] == "none":
        return found
    return None


def ensure(wheel: Path | None = None, log=print) -> tuple[Path, dict]:
    """(interpreter, its NumPy described): the no-BLAS NumPy of the pinned version, built once or
    reused. Raises Unavailable with a one-sentence reason where it cannot be had."""
    version = pinned()
    folder = FOLDER / tag(version)
    python = venv_python(folder / "venv")
    if wheel is None:
        found = _good(python, version)
        if found:
            return python, found
        built = sorted((folder / "wheels").glob(f"numpy-{version}-*.whl"))
        wheel = built[-1] if built else build_wheel(version, folder / "wheels", log)
    elif not Path(wheel).is_file():
        raise Unavailable(f"The NumPy wheel {wheel} does not exist.")
    python = make_venv(Path(wheel), folder / "venv", log)
    found = _good(python, version)
    if not found:
        seen = describe(python)
        raise Unavailable(f"The NumPy in {wheel} is {seen['version']} with BLAS {seen['blas']!r}; the "
                          f"browser's is {version} with BLAS 'none' (build it without --noblas-wheel).")
    return python, found


def openblas() -> tuple[Path, dict]:
    """(interpreter, its NumPy described) of the Python running the benchmark (PyPI's NumPy)."""
    return Path(sys.executable), describe(sys.executable)


def environment(extra: dict | None = None) -> dict:
    """The environment a process under either NumPy gets: this checkout first on the path, one
    BLAS thread (the browser's kernel has one), nothing else changed."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def main(argv=None) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchmarks.noblas", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wheel", type=Path, help="a NumPy wheel of the pinned version built with BLAS off")
    args = p.parse_args(argv)
    try:
        python, found = ensure(args.wheel)
    except Unavailable as why:
        raise SystemExit(f"Skipped: {why}") from None
    print(f"{python}: NumPy {found['version']}, BLAS {found['blas']}, Python {found['python']}")


if __name__ == "__main__":
    main()
