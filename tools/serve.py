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
- `X-Content-Type-Options: nosniff`, the MIME types Pyodide needs, and a listen queue (BACKLOG)
  sized for a class opening the site at once.

The listening socket is opened first (:class:`Server`), so a busy port is found before any build.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import resource
import signal
import socket
import stat
import threading
from pathlib import Path

from aiohttp import web

IDLE_SECONDS = 20.0        # a connection with no request, or half a request, is closed after this
WORKERS = min(os.cpu_count() or 1, 4)   # processes of `./course serve`, one per core
BACKLOG = 1024             # connections waiting to be accepted (a class of 200 opens ~1,200 at once)
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".ipynb": "application/json", ".whl": "application/zip",
         ".zip": "application/zip", ".npz": "application/octet-stream", ".html": "text/html",
         ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon",
         ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".txt": "text/plain",
         ".md": "text/markdown", ".py": "text/x-python", ".tar": "application/x-tar"}
# A file name with a hash of the file's bytes in it: a part of 7 to 64 hex digits (after a "g",
# as in the course wheel's version) between dots, dashes, pluses or underscores. The
# nginx and caddy configurations of docs/instructors.md use the same expression (tests/test_serve.py).
HASHED_NAME = r"[/._+-]g?[0-9a-f]{7,64}[._+-][^/]*$"


def content_hashed(name: str) -> bool:
    """True when a file's name holds a hash of its bytes (HASHED_NAME)."""
    return re.search(HASHED_NAME, "/" + name) is not None


def normal_base_path(base_path: str) -> str:
    return "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"


def _text(status: int, text: str, **headers) -> web.Response:
    return web.Response(status=status, text=text + "\n", headers={
        "X-Content-Type-Options": "nosniff", "Cache-Control": REVALIDATE, **headers})


class Site:
    """The request handler: the files of the site folder `root`, under `base_path`."""

    def __init__(self, root, base_path="/"):
        self.root = Path(root)
        self.base_path = normal_base_path(base_path)
        self._root = (None, "")

    def find(self, relative: str) -> tuple[str | None, str, os.stat_result | None]:
        """(the real path of the file to send, or None; "folder", or why not, for the 404's text;
        its stat)."""
        parts = [p for p in relative.split("/") if p]
        if any(p.startswith(".") or "\\" in p for p in parts):
            return None, "Not found", None
        root = self.real_root()                      # each time: a build swaps the folder in place
        real = _real_path(os.path.join(root, *parts))
        if real is None or (real != root and not real.startswith(root + os.sep)):
            return None, "Not found", None           # missing, or a link leading out of the site
        try:
            info = os.stat(real)
        except OSError:
            return None, "Not found", None
        if stat.S_ISDIR(info.st_mode):
            return real, "folder", info
        return (real, "", info) if stat.S_ISREG(info.st_mode) else (None, "Not found", None)

    def real_root(self) -> str:
        """The site folder's real path, resolved again whenever the folder was swapped."""
        try:
            key = os.stat(self.root).st_ino
        except OSError:
            return os.path.realpath(self.root)
        if self._root[0] != key:
            self._root = (key, os.path.realpath(self.root))
        return self._root[1]

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            return _text(405, "Method not allowed", Allow="GET, HEAD")
        path = request.path
        if "\x00" in path:
            return _text(400, "Bad request")
        query = f"?{request.query_string}" if request.query_string else ""
        if self.base_path != "/" and path == self.base_path.rstrip("/"):
            return _text(301, "Moved", Location=self.base_path + query)
        if not path.startswith(self.base_path):
            return _text(404, "Not found")
        real, why, info = self.find(path[len(self.base_path):])
        if why == "folder":
            if not path.endswith("/"):
                return _text(301, "Moved", Location=path.rsplit("/", 1)[-1] + "/" + query)
            real, why, info = self.find(path[len(self.base_path):] + "/index.html")
        if real is None:
            return _text(404, why)
        name = os.path.basename(real)
        headers = {"X-Content-Type-Options": "nosniff",
                   "Cache-Control": IMMUTABLE if content_hashed(name) else REVALIDATE,
                   "Content-Type": TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")}
        gz = _gzip_copy(real, info)
        if gz is not None:
            headers["Vary"] = "Accept-Encoding"
            if "gzip" in request.headers.get("Accept-Encoding", "").lower() and "Range" not in request.headers:
                headers["Content-Encoding"] = "gzip"
                real = gz
        return _File(real, headers=headers)


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


def _gzip_copy(real: str, original: os.stat_result) -> str | None:
    """The build's .gz copy of a file (tools/compress.py): a regular file, not a link, with the
    file's own modification time (a file changed after the build has no valid copy)."""
    try:
        copy = os.lstat(real + ".gz")
    except OSError:
        return None
    if stat.S_ISREG(copy.st_mode) and copy.st_mtime_ns == original.st_mtime_ns:
        return real + ".gz"
    return None


class _File(web.FileResponse):
    """aiohttp's file response, sending exactly the file it is given (the choice of a .gz copy
    is made above, where its modification time and the request's Range are known)."""

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

