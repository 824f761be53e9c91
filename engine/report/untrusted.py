"""Files of a folder that nobody vouches for, looked at without following a link or blocking.

The instructors' report reads a folder of files that learners sent. Any of them may be a
symbolic link (to itself, to nothing, to a pipe, to a file outside the folder), a pipe whose
read never returns, a device, or a file of any size. This module says, for each entry of the
folder, why it is not read (:func:`refusal`), and reads the rest (:func:`read_capped`):

- no symbolic link is followed: each is refused, with what it points to;
- only regular files are opened, without following a link (``O_NOFOLLOW``) and without
  waiting (``O_NONBLOCK``), and what was opened is checked again (``fstat``): a file swapped
  for a link or a pipe after the folder was listed is refused too;
- at most ``limit`` bytes are read; a larger file is refused by its size, unread.

Every reason is a phrase that completes "skipped: ...", with the file's own text escaped.
"""

from __future__ import annotations

import errno
import os
import stat

from engine.core.export import printable

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_NOT_FOLLOWED = "a symbolic link (the report follows none)"


class Refused(Exception):
    """A file that is not read; the message says why."""


def _kind(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def link_refusal(path: str, folder: str) -> str:
    """Why the symbolic link ``path`` in ``folder`` (a real path) is not followed: where it
    points. Nothing is opened; a loop, a missing target or an unreachable one is said so."""
    try:
        target = printable(os.readlink(path), 120)
    except OSError:
        target = "?"
    try:
        info = os.stat(path)                 # follows the link, but opens nothing: cannot block
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{_NOT_FOLLOWED} that points to itself, in a loop ({target})"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"{_NOT_FOLLOWED} that points to nothing: {target} does not exist"
        return f"{_NOT_FOLLOWED} whose target cannot be reached ({printable(exc.strerror or exc)})"
    real = os.path.realpath(path)
    inside = real.startswith(folder.rstrip(os.sep) + os.sep)
    kind = _kind(info.st_mode) or "a file"
    where = "in the folder" if inside else "outside the folder"
    return f"{_NOT_FOLLOWED} to {kind} {where} ({target})"


def refusal(entry: os.DirEntry, folder: str, limit: int) -> str | None:
    """Why the folder entry is not read (a link, a folder, a pipe, a device, more than ``limit``
    bytes), or None for a regular file to read. ``folder`` is the folder's real path. Never
    follows a link, never opens anything."""
    info = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return link_refusal(entry.path, folder)
    kind = _kind(info.st_mode)
    if kind == "a folder":
        return "a folder (only files directly in the folder are read)"
    if kind:
        return f"not a regular file ({kind}), so it is not opened"
    if info.st_size > limit:
        return str(_too_large(size_text(info.st_size), limit))
    return None


def size_text(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,} bytes"


def _too_large(size: str, limit: int) -> Refused:
    return Refused(f"too large to be a progress export ({size}; exports are a few kilobytes, "
                   f"and files over {size_text(limit)} are not read)")


def read_capped(path: str, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; :class:`Refused` for a
    link, anything that is not a regular file, a larger file, or one that cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(_NOT_FOLLOWED + ", put there while the report ran") from None
        raise Refused(f"could not be read ({printable(exc.strerror or exc)})") from None
    try:
        info = os.fstat(fd)
        if kind := _kind(info.st_mode):
            raise Refused(f"not a regular file ({kind}), so it is not read")
        if info.st_size > limit:
            raise _too_large(size_text(info.st_size), limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise Refused(f"could not be read ({printable(exc.strerror or exc)})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise _too_large("over " + size_text(limit), limit)
    return b"".join(chunks)
