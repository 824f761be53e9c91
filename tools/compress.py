"""gzip copies of the site's text and WebAssembly files, written by the build beside each file
(`pyodide.asm.wasm.gz` beside `pyodide.asm.wasm`).

A server sends the `.gz` copy to a browser that accepts gzip (`./course serve`, nginx's
`gzip_static on`, caddy's `precompressed gzip`: docs/instructors.md, Serving a classroom), so a first visit
costs about half the bytes, without the server compressing anything while a class waits. Wheels,
zip archives and the trained model's arrays are compressed already and get no copy; nor does a
file the copy would not make at least 10 % smaller.
"""

import gzip
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SUFFIXES = {".js", ".mjs", ".wasm", ".json", ".css", ".html", ".svg", ".ipynb", ".txt", ".map",
            ".md", ".py", ".ttf", ".eot", ".ico"}
SMALLEST = 1024            # bytes: smaller files are not worth a second request path
LEVEL = 9                  # written once per build, read by every learner


def _compress(path: Path) -> int:
    """Write path.gz when it saves at least 10 %; the bytes saved (0 when not written)."""
    data = path.read_bytes()
    packed = gzip.compress(data, compresslevel=LEVEL, mtime=0)
    if len(packed) > 0.9 * len(data):
        return 0
    target = path.with_name(path.name + ".gz")
    target.write_bytes(packed)
    stat = path.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return len(data) - len(packed)


def compressible(site: Path) -> list[Path]:
    return sorted(p for p in Path(site).rglob("*")
                  if p.suffix.lower() in SUFFIXES and not p.is_symlink() and p.is_file()
                  and p.stat().st_size >= SMALLEST)


def write_gzip_copies(site: Path) -> int:
    """Write the .gz copies of every compressible file of the site; return the bytes saved."""
    with ThreadPoolExecutor(max_workers=2) as pool:      # zlib lets go of the GIL
        return sum(pool.map(_compress, compressible(site)))
