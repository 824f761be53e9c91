"""Open the notebooks in a local JupyterLab (CPython kernel), on a working copy.

    python -m tools.lab [--edit-shipped] [JUPYTER LAB OPTIONS...]

By default JupyterLab opens _lab/, a copy of content/ made on first use (notebooks added to
content/ later are copied in too; a copy already there is never replaced), so running cells and
saving never touches what the site ships. --edit-shipped opens content/ itself, for authors:
`./course build` then refuses notebooks saved with outputs or filled-in blanks.
As root, JupyterLab is given --allow-root (it refuses to start as root otherwise).

JupyterLab and its kernels import the course from this checkout (PYTHONPATH), whichever checkout
.venv was installed from, and start the notebooks' kernel by its name, `python`
(tools/local_kernel.py), not `python3`.
"""

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"
WORKSPACE = ROOT / "_lab"
KERNEL_MANAGER = "--AsyncMappingKernelManager.kernel_manager_class=tools.local_kernel.NamedKernelManager"
# JupyterLab reads overrides.json, the defaults the site sets for JupyterLab's settings (the
# notebooks saved every 5 s, no output put in a scrolling box by itself), from this folder.
APP_SETTINGS = f"--LabApp.app_settings_dir={ROOT}"


def sync_copy(content=CONTENT, workspace=WORKSPACE) -> list[Path]:
    """Copy every file of content missing from workspace into it; return what was copied."""
    copied = []
    for path in sorted(content.rglob("*")):
        if path.is_dir() or ".ipynb_checkpoints" in path.parts:
            continue
        target = workspace / path.relative_to(content)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied.append(target)
    return copied


SITE_ONLY_EXTENSIONS = ("@jupyterlite",)   # the site's kernel; a local JupyterLab cannot load it


def lab_extensions(folder) -> str:
    """The JupyterLab option that loads the installed JupyterLab extensions but JupyterLite's
    (links to them in ``folder``, made afresh). JupyterLab loads the code of every extension it
    finds, even one turned off, and JupyterLite's fails to load outside JupyterLite: two
    errors in the console of every page."""
    from jupyter_core.paths import jupyter_path

    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for root in map(Path, jupyter_path("labextensions")):
        if not root.is_dir():
            continue
        for package in root.glob("**/package.json"):
            name = package.parent.relative_to(root)
            if len(name.parts) > 2 or name.parts[0] in SITE_ONLY_EXTENSIONS:
                continue
            link = folder / name
            if not link.exists() and not any(p.is_symlink() for p in link.parents):
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(package.parent, target_is_directory=True)
    return f"--LabApp.labextensions_path={folder}"


def command(folder, extra, as_root, extensions=None) -> list[str]:
    """The jupyter lab command line (``extensions``: :func:`lab_extensions`' option)."""
    args = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={folder}", KERNEL_MANAGER,
            APP_SETTINGS, *([extensions] if extensions else []), *extra]
    if as_root and "--allow-root" not in extra:
        args.append("--allow-root")
    return args


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="./course lab", description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edit-shipped", action="store_true",
                        help="open content/ itself (for authors editing the shipped notebooks)")
    args, extra = parser.parse_known_args(argv)
    if args.edit_shipped:
        folder = CONTENT
        print("JupyterLab opens content/, the notebooks the site ships. Save them without outputs "
              "and with every blank (____) in place: ./course build refuses anything else.")
    else:
        folder = WORKSPACE
        copied = sync_copy()
        print(f"JupyterLab opens {WORKSPACE.name}/, your working copy of the notebooks "
              f"({len(copied)} file(s) copied from content/ just now); content/, what the site "
              "ships, is never touched. To start afresh, delete _lab/.")
    cmd = command(folder, extra, as_root=hasattr(os, "geteuid") and os.geteuid() == 0,
                  extensions=lab_extensions(ROOT / ".cache" / "labextensions"))
    sys.stdout.flush()
    os.execve(cmd[0], cmd, bound_environment())


def bound_environment(environ=None) -> dict:
    """The environment with this checkout first on PYTHONPATH: JupyterLab and its kernels import
    engine/, lib/, exercises/, labs/, presentation/ and tools/ from here, not from wherever .venv's editable
    install points."""
    environ = dict(os.environ if environ is None else environ)
    rest = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *rest])
    return environ


if __name__ == "__main__":
    main()
