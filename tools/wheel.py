"""Pack `lib/` and `labs/` into one pure-Python wheel the browser kernel can load.

The wheel is written with `zipfile` directly: it holds only the packages' files
(sources and data), so no build backend is needed, and the same files always give
the same bytes.
"""

import base64
import hashlib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lib", "exercises", "labs")
DIST_NAME = "transformer_course"
VERSION = "0.1.0"
REQUIRES = ("numpy", "matplotlib", "ipywidgets")
FIXED_DATE = (2026, 1, 1, 0, 0, 0)


def source_files(root=ROOT):
    """Every file of the course packages (code and data such as trained weights), sorted.

    Returns (path in wheel, bytes) pairs; caches and compiled files are left out.
    """
    files = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            files.append((path.relative_to(root).as_posix(), path.read_bytes()))
    return files


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def build_wheel(out_dir, root=ROOT, extra_files=None):
    """Write the course wheel into out_dir and return its path.

    extra_files: {path in the wheel: bytes} made at build time (the release data).
    The version carries a short hash of the contents (a local version label), so a
    changed library gets a new file name and no browser serves a stale copy.
    """
    files = source_files(root) + sorted((extra_files or {}).items())
    content_hash = hashlib.sha256(b"".join(n.encode() + d for n, d in files)).hexdigest()[:10]
    version = f"{VERSION}+g{content_hash}"
    info = f"{DIST_NAME}-{version}.dist-info"
    metadata = "\n".join(
        ["Metadata-Version: 2.1", f"Name: {DIST_NAME}", f"Version: {version}",
         "Summary: The course: its NumPy library (lib), exercise system (exercises) and labs (labs)",
         *[f"Requires-Dist: {name}" for name in REQUIRES], ""]
    )
    wheel_meta = "Wheel-Version: 1.0\nGenerator: tools.wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    top_level = "\n".join(PACKAGES) + "\n"
    files += [(f"{info}/METADATA", metadata.encode()), (f"{info}/WHEEL", wheel_meta.encode()),
              (f"{info}/top_level.txt", top_level.encode())]
    record = "\n".join([_record_line(n, d) for n, d in files] + [f"{info}/RECORD,,", ""])
    files.append((f"{info}/RECORD", record.encode()))

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{DIST_NAME}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            entry.external_attr = 0o644 << 16
            zf.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    return path
