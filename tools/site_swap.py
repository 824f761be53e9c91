"""One build of a site folder at a time, and the new site put in place in one step.

A build writes into a new hidden folder beside its output (`.NAME.building-XXXX`) and, once
complete, swaps it with the output folder: on Linux in one atomic rename (renameat2 with
RENAME_EXCHANGE), elsewhere in two renames a moment apart. A server serving the output folder
(`./course serve`) serves the old site, then the new one, never a half-built or half-deleted
one; a failed build leaves the old site as it was. Builds of one output folder take turns: each
holds an exclusive lock (`.NAME.lock` beside it) from start to swap, and a second one waits.
"""

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2


@contextlib.contextmanager
def exclusive(output: Path, say=lambda text: print(text, file=sys.stderr, flush=True)):
    """Hold the build lock of output (waiting, with a message, while another build holds it)."""
    lock_path = output.parent / f".{output.name}.lock"
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"Another build of {output} is running; this one starts when it has finished.")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def staging_folder(output: Path) -> Path:
    """A new empty folder beside output to build into; leftovers of interrupted builds are
    removed first (call it while holding :func:`exclusive`)."""
    for old in output.parent.glob(f".{output.name}.building-*"):
        shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f".{output.name}.building-", dir=output.parent))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False                          # a file system or kernel without the exchange
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(b))


def put_in_place(built: Path, output: Path) -> None:
    """Make the complete site in `built` the output folder; the old one is removed."""
    if not output.exists():
        os.rename(built, output)
        return
    if _exchange(built, output):
        shutil.rmtree(built)                  # it now holds the old site
        return
    old = built.with_name(built.name + ".old")
    os.rename(output, old)
    os.rename(built, output)
    shutil.rmtree(old, ignore_errors=True)


KEPT = "kept-from-the-previous-build.json"


def keep_previous(output: Path, built: Path, folder: str, hashed) -> list[str]:
    """Copy into the new site `built` the files of output/folder that the previous build made and
    the new one does not have, when their names hold a hash of their bytes (`hashed(name)`): the
    course wheel, the zip of the release's notebooks and the trained model's arrays. A kernel that
    read the previous build's lock just before the swap still finds the wheel it names, and the
    notebooks and arrays that wheel names. Only the previous build's own files are kept (a list of
    what was kept over is written beside them), so nothing piles up across builds. Returns the
    names kept."""
    old, new = Path(output) / folder, Path(built) / folder
    if not new.is_dir():
        return []
    if not old.is_dir():
        (new / KEPT).write_text("[]\n", encoding="utf-8")
        return []
    try:
        carried = set(json.loads((old / KEPT).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        carried = set()
    kept = []
    for path in sorted(old.iterdir()):
        name = path.name
        if (name in carried or not hashed(name) or (new / name).exists() or path.is_symlink()
                or not path.is_file()):
            continue
        shutil.copy2(path, new / name)
        kept.append(name)
    (new / KEPT).write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    return kept
