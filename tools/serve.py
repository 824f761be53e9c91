"""The HTTP server of `./course serve`: the built site, served to a class by aiohttp's web server.

aiohttp was chosen by measuring (docs/instructors.md, The server; `./course bench --only
classroom`): it answers a class of learners opening the site at once over HTTP/1.1 keep-alive,
sends files with the operating system's sendfile, answers `Range` with 206 and `If-None-Match` /
`If-Modified-Since` with 304 (its FileResponse), and closes a connection that sends no request,
or only part of one, within IDLE_SECONDS (a slow or idle client cannot hold the server).
`./course serve` runs WORKERS copies of it, one per core, on one listening socket.

What this module adds to aiohttp's file responses:

- the sub-path (`--base-path /course/`: /course redirects to /course/, nothing outside it is
  served), folders answered by their index.html (no folder is ever listed);
- nothing outside the site: a path with `..`, a hidden name (`.git`), a NUL byte (400), or a
  symbolic link whose target lies outside the site folder is not served;
- `Cache-Control`: a file whose name holds a hash of its bytes (JupyterLab's `1.a8fa7b2.js`, the
  course wheel `transformer_course-0.1.0+g55c9922c91-…whl`, `weights-14b0d71634b2.npz`) is
  `immutable` for a year; every other file (index.html, jupyter-lite.json, the lock file, the
  Pyodide runtime) is `no-cache`: the browser keeps it but asks each time (304 when unchanged),
  so a new release is never mixed with an old one;
- the `.gz` copy the build writes beside a file (tools/compress.py), sent when the browser
  accepts gzip, never for a `Range` request (the byte range is of the file itself);
- a build swapping a new site folder in (tools/site_swap.py) while a request is looked up: the
  request is answered from the old site or the new one, never with a 404 (Site.find);
- the files of at most KEPT_BYTES (and the first HEAD_BYTES of larger ones) answered from memory,
  checked against the file with one `stat` per request; their 304s, 412s and ranges are decided
  by tools/conditions.py as aiohttp's FileResponse decides them for the files it sends;
- `X-Content-Type-Options: nosniff`, the MIME types Pyodide needs, and a listen queue (BACKLOG)
  sized for a class opening the site at once.

The listening socket is opened first (:class:`Server`), so a busy port is found before any build.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import email.utils
import math
import os
import re
import resource
import signal
import socket
import stat
import threading
import time
from pathlib import Path

from aiohttp import hdrs, web

from tools.conditions import decide

IDLE_SECONDS = 20.0        # a connection with no request, or half a request, is closed after this
WORKERS = min(os.cpu_count() or 1, 4)   # processes of `./course serve`, one per core
SWAP_WAITS = (0.001, 0.01, 0.1, 0.5)   # seconds to wait for a site folder swapped in two renames
SWAPPING = "swapping"
BACKLOG = 1024             # connections waiting to be accepted (a class of 200 opens ~1,200 at once)
KEPT_BYTES = 1 << 20       # a file (or gzip copy) this small is read once and answered from memory
HEAD_BYTES = 1 << 16       # of a larger file, its first bytes (a page's 16-byte checks ask for those)
CACHE_BYTES = 96 << 20     # memory for those per worker process; the least recently asked for go first
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".ipynb": "application/json", ".whl": "application/zip",
         ".zip": "application/zip", ".npz": "application/octet-stream", ".html": "text/html",
         ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon",
         ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".txt": "text/plain",
         ".md": "text/markdown", ".py": "text/x-python", ".tar": "application/x-tar"}
# A file name with a hash of the file's bytes in it: a part of 7 to 64 hex digits, at least one of
# them a digit (after a "g", as in the course wheel's version), between dots, dashes, pluses or
# underscores. A part of letters only ("/defaced-notes.ipynb") is a word, not a hash. The
# expression finds 7 characters around a digit with up to 57 more on either side (so a part of up
# to 121 may match too); its bounded repeats keep a long address cheap to match. The nginx and
# caddy configurations of docs/instructors.md use the same expression (tests/test_serve.py).
HASHED_NAME = (r"[/._+-]g?[0-9a-f]{0,57}(?:[0-9][0-9a-f]{6}|[0-9a-f][0-9][0-9a-f]{5}|"
               r"[0-9a-f]{2}[0-9][0-9a-f]{4}|[0-9a-f]{3}[0-9][0-9a-f]{3}|[0-9a-f]{4}[0-9][0-9a-f]{2}|"
               r"[0-9a-f]{5}[0-9][0-9a-f]|[0-9a-f]{6}[0-9])[0-9a-f]{0,57}[._+-][^/]*$")


def content_hashed(name: str) -> bool:
    """True when a file's name holds a hash of its bytes (HASHED_NAME)."""
    return re.search(HASHED_NAME, "/" + name) is not None


def normal_base_path(base_path: str) -> str:
    return "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"


def _text(status: int, text: str, **headers) -> web.Response:
    return web.Response(status=status, text=text + "\n", headers={
        "X-Content-Type-Options": "nosniff", "Cache-Control": REVALIDATE, **headers})


class Site:
    """The request handler: the files of the site folder `root`, under `base_path`.

    A file is looked up once per worker (find: nothing outside the site) and read in a worker
    thread; then its answers come from memory (:class:`_Entry`), checked against the file with
    one `stat` per request (a changed file, or a new site swapped in, is read again)."""

    def __init__(self, root, base_path="/"):
        self.root = Path(root)
        self.base_path = normal_base_path(base_path)
        self._folder = _Folder(None)
        self._was_in_place = False                   # a site folder was found at root before
        self._top = os.path.abspath(root)
        self._entries: collections.OrderedDict[str, _Entry] = collections.OrderedDict()
        self._kept = 0                                      # bytes held by _entries
        self._loading: dict[str, asyncio.Future] = {}

    def find(self, relative: str) -> tuple[str | None, str, os.stat_result | None]:
        """(the path of the file to send, or None; "folder", or why not, for the 404's text; its
        stat). A build may swap the site folder while a path is looked up (tools/site_swap.py):
        then a file opened in the old folder is named by where that folder went (or as deleted)
        and fails the check below, so the path is looked up again in the folder now in place;
        SWAPPING when no folder stayed in place long enough to tell."""
        parts = [p for p in relative.split("/") if p]
        if any(p.startswith(".") or "\\" in p for p in parts):
            return None, "Not found", None
        for _ in range(3):
            folder = self.folder()
            if folder is None:
                break
            found = _find_in(folder.path, parts)
            if found[0] is not None or self.folder() is folder:
                return found                         # found, or missing from the folder in place
        return None, SWAPPING, None

    def folder(self) -> _Folder | None:
        """The site folder in place now, held open while it stays in place (so no other folder
        can take its inode number: a swap is always seen as a change); None when there is none."""
        try:
            info = os.stat(self.root)
        except OSError:
            return None
        if (info.st_dev, info.st_ino) != self._folder.key:
            if self._folder.key is not None:         # the files kept in memory were the old site's
                self._entries.clear()
                self._kept = 0
            self._folder.close()
            self._folder = _Folder(self.root)
            self._was_in_place = True
        return self._folder

    async def find_in_place(self, relative: str) -> tuple[str | None, str, os.stat_result | None]:
        """find(), waiting a moment while no site folder is in place: between the two renames of
        a swap where the system cannot exchange two folders in one step."""
        found = self.find(relative)
        for wait in SWAP_WAITS:
            if found[1] != SWAPPING or not self._was_in_place:      # no site folder ever was
                break
            await asyncio.sleep(wait)
            found = self.find(relative)
        return (None, "Not found", None) if found[1] == SWAPPING else found

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            return _text(405, "Method not allowed", Allow="GET, HEAD")
        path = request.path
        entry = self._entries.get(path)
        if entry is not None:
            copy = entry.choose(request, check=True)
            if copy is not None:
                self._entries.move_to_end(path)
                return _respond(request, copy)
            self._keep(path, None)                   # changed on disk: look it up again
        elif path in self._loading:                  # being read for another request: wait for it
            entry = await asyncio.shield(self._loading[path])
            if entry is not None:
                return _respond(request, entry.choose(request, check=False))
        return await self._look_up(request, path)

    async def _look_up(self, request: web.BaseRequest, path: str) -> web.StreamResponse:
        if "\x00" in path:
            return _text(400, "Bad request")
        query = f"?{request.query_string}" if request.query_string else ""
        if self.base_path != "/" and path == self.base_path.rstrip("/"):
            return _text(301, "Moved", Location=self.base_path + query)
        if not path.startswith(self.base_path):
            return _text(404, "Not found")
        relative = path[len(self.base_path):]
        real, why, info = await self.find_in_place(relative)
        if why == "folder":
            if not path.endswith("/"):
                return _text(301, "Moved", Location=path.rsplit("/", 1)[-1] + "/" + query)
            relative += "/index.html"
            real, why, info = await self.find_in_place(relative)
        if real is None:
            return _text(404, why)
        where = os.path.join(self._top, *[part for part in relative.split("/") if part])
        entry = await self._load(path, where, real)
        if entry is None:
            return _text(404, "Not found")           # gone since it was found
        return _respond(request, entry.choose(request, check=False))

    def _load(self, path: str, where: str, real: str) -> asyncio.Future:
        """The entry of `path` read in a worker thread (once, however many ask at the same time)."""
        loading = self._loading.get(path)
        if loading is None:
            loading = asyncio.get_running_loop().run_in_executor(None, _Entry.read, where, real)
            self._loading[path] = loading

            def loaded(done):
                del self._loading[path]
                if not done.cancelled() and done.exception() is None and done.result() is not None:
                    self._keep(path, done.result())
            loading.add_done_callback(loaded)
        return asyncio.shield(loading)

    def _keep(self, path: str, entry: _Entry | None) -> None:
        """Keep `entry` for `path` (None: forget it), within CACHE_BYTES."""
        old = self._entries.pop(path, None)
        if old is not None:
            self._kept -= old.bytes
        if entry is not None:
            self._entries[path] = entry
            self._kept += entry.bytes
        while self._kept > CACHE_BYTES and self._entries:
            self._kept -= self._entries.popitem(last=False)[1].bytes


def _signature(info: os.stat_result) -> tuple:
    """What tells one version of a file from another: which file, its size and its times."""
    return info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _read(path: str, follow: bool = True) -> tuple[os.stat_result, bytes] | None:
    """(stat, bytes) of a regular file: all its bytes when at most KEPT_BYTES, else its first
    HEAD_BYTES (none when it changed while read); None when it is not a regular file or cannot
    be read."""
    flags = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    for wait in (*SWAP_WAITS, None) if follow else (None,):
        try:
            file = open(path, "rb", opener=lambda name, mode: os.open(name, mode | flags))
            break
        except FileNotFoundError:                # found a moment ago: a folder swapped in two renames?
            if wait is None:
                return None
            time.sleep(wait)                     # in a worker thread, not the event loop
        except OSError:
            return None
    with file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        wanted = info.st_size if info.st_size <= KEPT_BYTES else HEAD_BYTES
        data = file.read(wanted)
        same = len(data) == wanted and _signature(os.fstat(file.fileno())) == _signature(info)
        return info, data if same else b""


class _Copy:
    """A file as it was read: where it is, what identifies it (_signature), its validators (the
    ETag and Last-Modified aiohttp's FileResponse gives it), the headers of its answers, and the
    bytes held (`data`: the whole file, or its first HEAD_BYTES; the rest is sent from disk)."""

    __slots__ = ("path", "signature", "size", "modified", "etag", "headers", "data")

    def __init__(self, path: str, info: os.stat_result, data: bytes, headers: dict):
        self.path, self.signature, self.size, self.data = path, _signature(info), info.st_size, data
        self.modified = math.ceil(info.st_mtime)                  # Last-Modified, whole seconds
        self.etag = f"{info.st_mtime_ns:x}-{info.st_size:x}"
        self.headers = {**headers, "ETag": f'"{self.etag}"', "Accept-Ranges": "bytes",
                        "Last-Modified": email.utils.formatdate(self.modified, usegmt=True)}


class _Entry:
    """A file of the site (`plain`) and the gzip copy the build wrote beside it (`packed`, or None:
    tools/compress.py), as last read; `where` is its path under the site folder as asked for."""

    __slots__ = ("where", "plain", "packed", "bytes")

    def __init__(self, where: str, plain: _Copy, packed: _Copy | None):
        self.where, self.plain, self.packed = where, plain, packed
        self.bytes = 1024 + len(plain.data) + (len(packed.data) if packed is not None else 0)

    @classmethod
    def read(cls, where: str, real: str) -> _Entry | None:
        """Read the file `real` (found at `where`) and its gzip copy: a regular file, not a link,
        with the file's own modification time (a file changed after the build has no valid copy)."""
        plain = _read(real)
        if plain is None:
            return None
        name = os.path.basename(real)
        headers = {"X-Content-Type-Options": "nosniff",
                   "Cache-Control": IMMUTABLE if content_hashed(name) else REVALIDATE,
                   "Content-Type": TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")}
        packed = _read(real + ".gz", follow=False)
        if packed is not None and packed[0].st_mtime_ns == plain[0].st_mtime_ns:
            headers["Vary"] = "Accept-Encoding"
            packed = _Copy(real + ".gz", *packed, {**headers, "Content-Encoding": "gzip"})
        else:
            packed = None
        return cls(where, _Copy(real, *plain, headers), packed)

    def choose(self, request: web.BaseRequest, check: bool) -> _Copy | None:
        """The copy to answer with: the gzip copy for a browser that accepts gzip, never for a
        range (the byte range is of the file itself). With check: None when the path no longer
        leads to the file read (one stat; the gzip copy read with a file is that file's copy)."""
        if check:
            try:
                if _signature(os.stat(self.where)) != self.plain.signature:
                    return None
            except OSError:
                return None
        headers = request.headers
        if (self.packed is not None and hdrs.RANGE not in headers
                and "gzip" in headers.get(hdrs.ACCEPT_ENCODING, "").lower()):
            return self.packed
        return self.plain


def _respond(request: web.BaseRequest, copy: _Copy) -> web.StreamResponse:
    status, first, last = decide(request, copy.etag, copy.modified, copy.size)
    if status == 304:
        return web.Response(status=304, headers=copy.headers)
    if status == 412:
        return _text(412, "Precondition failed")
    if status == 416:
        return _text(416, "Range not satisfiable", **{"Content-Range": f"bytes */{copy.size}"})
    if last >= len(copy.data):                   # bytes not held: aiohttp's FileResponse, with sendfile
        return _File(copy.path, headers=copy.headers,
                     whole=status == 200 and hdrs.RANGE in request.headers)
    if status == 206:
        return web.Response(status=206, body=copy.data[first:last + 1], headers={
            **copy.headers, "Content-Range": f"bytes {first}-{last}/{copy.size}"})
    return web.Response(body=copy.data, headers=copy.headers)


class _Folder:
    """A site folder held open (`key`: its device and inode; `path`: its real path when opened)."""

    def __init__(self, root):
        self.key, self.path, self._fd = None, None, None
        if root is None:
            return
        try:
            self._fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            info = os.fstat(self._fd)
        except OSError:
            self.close()
            return
        self.key, self.path = (info.st_dev, info.st_ino), os.path.realpath(root)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()


def _find_in(root: str | None, parts: list[str]) -> tuple[str | None, str, os.stat_result | None]:
    """find() in the site folder whose real path is `root` (None: no folder)."""
    if not root:
        return None, "Not found", None
    real = _real_path(os.path.join(root, *parts))
    if real is None or (real != root and not real.startswith(root + os.sep)):
        return None, "Not found", None               # missing, or a link leading out of the site
    try:
        info = os.stat(real)
    except OSError:
        return None, "Not found", None
    if stat.S_ISDIR(info.st_mode):
        return real, "folder", info
    return (real, "", info) if stat.S_ISREG(info.st_mode) else (None, "Not found", None)


def _real_path(path: str) -> str | None:
    """The path with every link resolved (None when nothing is there): on Linux in three system
    calls (open the path itself, read its name back from /proc), elsewhere os.path.realpath."""
    try:
        fd = os.open(path, _O_PATH)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}") if _PROC else os.path.realpath(path)
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)


_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_PROC = os.path.isdir("/proc/self/fd")


class _File(web.FileResponse):
    """aiohttp's file response, sending exactly the file it is given (the choice of a .gz copy
    is made above, where its modification time and the request's Range are known); `whole`: the
    whole file although the request has a Range (conditions.decide ignored it: a failed If-Range,
    a HEAD, several ranges), which aiohttp's response would otherwise apply. A file found a moment ago
    and missing now is looked for again a moment later (a site folder swapped in two renames)."""

    def __init__(self, path, headers, whole=False):
        super().__init__(path, headers=headers)
        self._whole = whole

    async def prepare(self, request):
        if self._whole:
            headers = request.headers.copy()
            headers.popall(hdrs.RANGE, None)
            headers.popall(hdrs.IF_RANGE, None)
            request = request.clone(headers=headers)
        return await super().prepare(request)

    def _make_response(self, request, accept_encoding):
        for wait in SWAP_WAITS:
            try:
                return super()._make_response(request, accept_encoding)
            except FileNotFoundError:
                time.sleep(wait)                     # in a worker thread, not the event loop
        return super()._make_response(request, accept_encoding)

    def _get_file_path_stat_encoding(self, accept_encoding):
        return super()._get_file_path_stat_encoding("")


def _die_with_parent() -> None:
    """Linux: this process gets SIGTERM when its parent ends (a worker never outlives the server)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)      # PR_SET_PDEATHSIG


def _exit_on_signal(signum, frame):
    raise KeyboardInterrupt


def raise_open_file_limit() -> None:
    """Let the server hold as many connections as the system allows this process (the soft
    limit is often 1,024, a few learners' worth of keep-alive connections)."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, 65536), hard))
    except (ValueError, OSError):
        pass


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) and listening; OSError when the port is busy or the
    address is not this machine's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(infos[0][4])
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class Server:
    """The site folder `root` served on (host, port); the port is taken at once (port 0: a free
    one). serve_forever() serves until Ctrl+C or close(); start() serves from a thread."""

    def __init__(self, root, port=8000, host="127.0.0.1", base_path="/", idle_seconds=IDLE_SECONDS, workers=1):
        raise_open_file_limit()
        self.site = Site(root, base_path)
        self.workers = max(1, int(workers))
        self.idle_seconds = idle_seconds
        self.socket = listening_socket(host, port)
        self.server_address = self.socket.getsockname()[:2]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._done = threading.Event()

    @property
    def port(self) -> int:
        return self.server_address[1]

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        handler = web.Server(self.site, access_log=None, keepalive_timeout=self.idle_seconds,
                             timeout_ceil_threshold=1)
        runner = web.ServerRunner(handler, handle_signals=False, shutdown_timeout=1)
        await runner.setup()
        await web.SockSite(runner, self.socket, backlog=BACKLOG).start()
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def _serve_here(self) -> None:
        try:
            asyncio.run(self._serve())
        except KeyboardInterrupt:
            pass
        finally:
            self._started.set()
            self._done.set()

    def serve_forever(self) -> None:
        """Serve until Ctrl+C, SIGTERM or close(): in this process and, with workers > 1, in
        workers - 1 forked copies of it on the same listening socket (each its own event loop, so
        a class is served on every core, as nginx's worker processes do)."""
        children = []
        workers = self.workers if threading.current_thread() is threading.main_thread() else 1
        try:
            for _ in range(workers - 1):
                pid = os.fork()
                if pid == 0:                              # a worker: dies with the server
                    _die_with_parent()
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    try:
                        self._serve_here()
                    finally:
                        os._exit(0)
                children.append(pid)
            if children:
                signal.signal(signal.SIGTERM, _exit_on_signal)
            self._serve_here()
        finally:
            for pid in children:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
            self.socket.close()

    def start(self) -> "Server":
        """Serve from a background thread (one worker); return once the server answers."""
        self.workers = 1
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        self._started.wait(30)
        return self

    def close(self) -> None:
        """Stop serving (from any thread) and free the port."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(10)
        elif self._loop is not None:
            self._done.wait(10)                       # served from a thread of the caller's
        self.socket.close()

    # the names of socketserver's servers, which tests and tools used before
    shutdown = server_close = close

