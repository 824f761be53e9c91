"""The course wheel (engine, lib, exercises, labs, presentation) the browser kernel loads, built with
`python -m build`.

pyproject.toml describes the package. The wheel is built from a copy of the packages with the
release data added (exercises/_release/), so the checkout itself never changes, and its
version gets a local label with a hash of everything it holds (0.1.0+g1a2b3c4d5e): a changed
library gets a new file name, so no browser serves a stale copy. The same files always give the
same bytes: fixed permissions and a fixed time stamp (SOURCE_DATE_EPOCH) for every entry.

Every notebook loads the wheel before its first cell runs, so what only notebook 05 needs stays
out of it: the trained model's arrays (``SERVED``: lib/trained/*.npz, 2 MB) are files the site
serves beside the wheel, each named with a hash of its bytes (:func:`served_files`), and the
wheel holds ``lib/trained/served.json``, which names them, with their sizes, SHA-256 and array
shapes (:func:`served_index`); lib fetches them the first time it needs them (``lib/files.py``).
"""

import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "lib", "exercises", "labs", "presentation")
# The files pyproject.toml's package-data ships besides the modules.
DATA = {"lib/trained": ("*.json",), "labs/decoder": ("precomputed.npz",),
        "engine/presentation": ("access.css", "access.js"), "engine/core": ("page_store.js",)}
SERVED = {"lib/trained": ("*.npz",)}       # served by the site beside the wheel, not inside it
# The instructors' report and dashboard run on the instructor's machine (./course report), never
# in a learner's browser: the wheel every notebook loads before its first cell leaves them out.
INSTRUCTORS_ONLY = ("engine/report",)
SERVED_INDEX = "lib/trained/served.json"
FIXED_EPOCH = "1767225600"  # 2026-01-01 00:00 UTC: the time stamp of every entry


def source_files(root=ROOT):
    """{path in the wheel: bytes} of every module and data file of the course packages, less
    :data:`INSTRUCTORS_ONLY`."""
    files = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if ("__pycache__" not in path.parts and "_release" not in path.parts
                    and not name.startswith(tuple(f"{folder}/" for folder in INSTRUCTORS_ONLY))):
                files[name] = path.read_bytes()
    for folder, patterns in DATA.items():
        for pattern in patterns:
            for path in sorted((root / folder).glob(pattern)):
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return dict(sorted(files.items()))


def served_files(root=ROOT):
    """{name the site serves it under: its path} of every file of ``SERVED``, the name holding a
    hash of its bytes ("weights-1a2b3c4d5e6f.npz"), so a changed file gets a new name."""
    found = {}
    for folder, patterns in SERVED.items():
        for pattern in patterns:
            for path in sorted((root / folder).glob(pattern)):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
                found[f"{path.stem}-{digest}{path.suffix}"] = path
    return found


def served_index(served):
    """The bytes of ``lib/trained/served.json``: for each served file's own name, the name it is
    served under, its size, SHA-256 and the shapes of the arrays it holds (lib/files.py reads it)."""
    from lib.files import shapes_in

    index = {}
    for name, path in served.items():
        data = path.read_bytes()
        index[path.name] = {"file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                            "arrays": {k: list(v) for k, v in shapes_in(path).items()}}
    return (json.dumps(index, indent=1, sort_keys=True) + "\n").encode("utf-8")


def wheel_files(root=ROOT, extra_files=None):
    """{path in the wheel: bytes} of everything the wheel holds: the course's modules and data,
    the index of the files served beside it, and ``extra_files`` (made at build time)."""
    return {**source_files(root), SERVED_INDEX: served_index(served_files(root)), **(extra_files or {})}


def content_hash(files):
    """A short hash of the files' names and bytes."""
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:10]


def _stage(folder, files, version, root):
    """Write pyproject.toml (with the version set) and the files into folder."""
    project = (root / "pyproject.toml").read_text(encoding="utf-8")
    project, count = re.subn(r'(?m)^version = "([^"+]+)"$', f'version = "{version}"', project)
    if count != 1:
        raise SystemExit("pyproject.toml must hold one line 'version = \"X.Y.Z\"' in [project]")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(project, encoding="utf-8")
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o644)


def base_version(root=ROOT):
    match = re.search(r'(?m)^version = "([^"+]+)"$', (root / "pyproject.toml").read_text(encoding="utf-8"))
    return match.group(1)


def build_wheel(out_dir, root=ROOT, extra_files=None):
    """Build the course wheel into out_dir and return its path.

    extra_files: {path in the wheel: bytes} made at build time (the release data).
    """
    files = wheel_files(root, extra_files)
    version = f"{base_version(root)}+g{content_hash(files)}"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-wheel-") as tmp:
        staged = Path(tmp) / "src"
        _stage(staged, files, version, root)
        env = {**os.environ, "SOURCE_DATE_EPOCH": FIXED_EPOCH, "PYTHONDONTWRITEBYTECODE": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp, str(staged)],
            cwd=tmp, env=env, capture_output=True, text=True,
        )
        built = sorted(Path(tmp).glob("*.whl"))
        if result.returncode != 0 or len(built) != 1:
            sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
            raise SystemExit("Building the course wheel failed (python -m build, output above). "
                             "Is the 'build' package of requirements.txt installed?")
        path = out_dir / built[0].name
        shutil.move(built[0], path)
    return path


def metadata(wheel_path):
    """What a wheel says about itself: {"name", "version", "requires", "imports"}.

    name and version from its METADATA, requires from its Requires-Dist (names only, extras
    and markers left out), imports from top_level.txt, or else from the packages and
    modules at the top of the archive.
    """
    with zipfile.ZipFile(wheel_path) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode("utf-8"))
        if f"{info}/top_level.txt" in names:
            imports = archive.read(f"{info}/top_level.txt").decode("utf-8").split()
        else:
            imports = sorted({n.split("/")[0] for n in names if n.count("/") == 1 and n.endswith("/__init__.py")}
                             | {n[:-3] for n in names if "/" not in n and n.endswith(".py")})
    requires = []
    for line in meta.get_all("Requires-Dist") or []:
        if ";" in line and "extra" in line.split(";", 1)[1]:
            continue
        requires.append(re.match(r"\s*([A-Za-z0-9._-]+)", line).group(1))
    return {"name": meta["Name"], "version": meta["Version"], "requires": requires,
            "imports": [i for i in imports if i]}
