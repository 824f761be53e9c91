"""`./course serve`'s HTTP server (tools/serve.py) on a small site, and nginx and caddy with the
configurations of docs/instructors.md: keep-alive, ranges, 304s, cache headers, the build's gzip copies,
nothing outside the site, timeouts for idle and half-sent requests, a listen queue for a class.
Not timed: a slow machine makes nothing here fail, it only waits longer."""

import gzip
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from tools import serve, static_hosts
from tools.compress import write_gzip_copies

HASHED_JS = "build/1.a8fa7b2.js"
WHEEL = "static/pyodide-lock/transformer_course-0.1.0+g55c9922c91-py3-none-any.whl"
BIG = "static/big.bin"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve") / "site"
    files = {"index.html": "<!DOCTYPE html><title>landing</title>" + "<p>the landing page</p>" * 100,
             "jupyter-lite.json": '{"jupyter-config-data": {}}' + " " * 2000,
             "lab/index.html": "<!DOCTYPE html><title>lab</title>" + "<p>lab</p>" * 300,
             HASHED_JS: "export const x = 1;\n" * 500,
             "static/pyodide/pyodide.mjs": "export const loadPyodide = 1;\n" * 200,
             "static/pyodide-lock/pyodide-lock.json": '{"packages": {}}' + " " * 3000}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "static/pyodide/pyodide.asm.wasm").write_bytes(b"\0asm" + bytes(range(256)) * 200)
    (root / WHEEL).write_bytes(b"PK\x03\x04" + os.urandom(5000))
    (root / BIG).write_bytes(os.urandom(serve.KEPT_BYTES + 300_000))      # sent from disk, not memory
    (root / "static/defaced-notes.ipynb").write_text("{}")                # a word of hex letters, no hash
    (root / "static/empty-folder").mkdir()
    write_gzip_copies(root)
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET")
    (root / "static/secret.txt").symlink_to(outside / "secret.txt")
    (root / "static/shared").symlink_to(outside)
    (root / "static/inside.html").symlink_to(root / "index.html")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]")
    return root


@pytest.fixture(scope="module")
def server(site):
    running = serve.Server(site, port=0, base_path="/course/", idle_seconds=2).start()
    yield running
    running.close()


def get(port, path, headers=None, method="GET", connection=None):
    conn = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    if connection is None:
        conn.close()
    return response, body


def test_one_connection_carries_many_requests(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    for path in ("/course/", "/course/jupyter-lite.json", f"/course/{HASHED_JS}", "/course/lab/index.html"):
        response, _ = get(server.port, path, connection=conn)
        assert response.status == 200 and response.version == 11 and not response.will_close, path
    assert conn.sock is not None                       # the same socket throughout
    conn.close()


def test_a_range_is_answered_206_with_the_files_own_bytes_never_its_gzip_copy(server, site):
    response, body = get(server.port, "/course/static/pyodide/pyodide.mjs",
                         {"Range": "bytes=0-15", "Accept-Encoding": "gzip, deflate, br"})
    size = (site / "static/pyodide/pyodide.mjs").stat().st_size
    assert response.status == 206 and body == (site / "static/pyodide/pyodide.mjs").read_bytes()[:16]
    assert response.headers["Content-Range"] == f"bytes 0-15/{size}"
    assert response.headers.get("Content-Encoding") is None


def test_the_builds_gzip_copy_is_sent_to_a_browser_that_accepts_it(server, site):
    plain, whole = get(server.port, f"/course/{HASHED_JS}")
    packed, body = get(server.port, f"/course/{HASHED_JS}", {"Accept-Encoding": "gzip, deflate, br"})
    assert plain.headers.get("Content-Encoding") is None and whole == (site / HASHED_JS).read_bytes()
    assert packed.headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == whole
    assert len(body) < len(whole) / 5
    assert packed.headers["Content-Type"] == plain.headers["Content-Type"] == "text/javascript"
    assert packed.headers["Vary"] == plain.headers["Vary"] == "Accept-Encoding"
    assert packed.headers["ETag"] != plain.headers["ETag"]


def test_a_file_changed_after_the_build_is_never_sent_as_its_old_gzip_copy(server, site):
    page = site / "lab/index.html"
    assert (site / "lab/index.html.gz").exists()
    page.write_text(page.read_text().replace("<title>lab</title>", "<title>lab, edited</title>"))
    response, body = get(server.port, "/course/lab/index.html", {"Accept-Encoding": "gzip"})
    assert response.headers.get("Content-Encoding") is None and b"lab, edited" in body


def test_unchanged_files_answer_304_and_each_file_has_the_cache_rule_of_its_name(server):
    for path, rule in (("/course/", "no-cache"), ("/course/jupyter-lite.json", "no-cache"),
                       ("/course/static/pyodide-lock/pyodide-lock.json?v=1", "no-cache"),
                       ("/course/static/pyodide/pyodide.asm.wasm", "no-cache"),
                       (f"/course/{HASHED_JS}", "public, max-age=31536000, immutable"),
                       (f"/course/{WHEEL}", "public, max-age=31536000, immutable"),
                       ("/course/static/defaced-notes.ipynb", "no-cache"), (f"/course/{BIG}", "no-cache")):
        first, _ = get(server.port, path)
        assert first.headers["Cache-Control"] == rule, path
        assert first.headers["X-Content-Type-Options"] == "nosniff"
        again, body = get(server.port, path, {"If-None-Match": first.headers["ETag"]})
        assert again.status == 304 and body == b"", path
        since, _ = get(server.port, path, {"If-Modified-Since": first.headers["Last-Modified"]})
        assert since.status == 304, path


def test_a_hashed_name_holds_a_part_of_hex_digits_with_a_digit_among_them():
    for name in ("1.a8fa7b2.js", os.path.basename(WHEEL), "weights-14b0d71634b2.npz", "abcdef0.js",
                 "x-" + "a" * 63 + "1.js"):
        assert serve.content_hashed(name), name
    for name in ("defaced-notes.ipynb", "deadbeef.js", "index.html", "cafe-bad.js", "1.a8fa7b.js", "1.a8fa7b2"):
        assert not serve.content_hashed(name), name


@pytest.mark.parametrize("path", ["static/pyodide/pyodide.mjs", BIG])     # from memory, from disk
def test_conditions_and_ranges_are_answered_alike_from_memory_and_from_disk(server, site, path):
    url, whole = f"/course/{path}", (site / path).read_bytes()
    first, body = get(server.port, url)
    etag, size = first.headers["ETag"], len(whole)
    assert first.status == 200 and body == whole and first.headers["Accept-Ranges"] == "bytes"
    head, body = get(server.port, url, method="HEAD")
    assert head.status == 200 and body == b"" and head.headers["Content-Length"] == str(size)
    assert get(server.port, url, {"If-Match": '"other"'})[0].status == 412
    assert get(server.port, url, {"If-Match": etag})[0].status == 200
    assert get(server.port, url, {"If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"})[0].status == 412
    assert get(server.port, url, {"If-None-Match": f'"other", W/{etag}'})[0].status == 304
    for asked, status, expected in (("bytes=0-15", 206, whole[:16]), ("bytes=-10", 206, whole[-10:]),
                                    (f"bytes={size - 5}-", 206, whole[-5:]), ("bytes=0-3,8-9", 200, whole)):
        response, body = get(server.port, url, {"Range": asked})
        assert (response.status, body) == (status, expected), asked
    response, body = get(server.port, url, {"Range": "bytes=5-", "If-Range": etag})
    assert response.status == 206 and body == whole[5:]
    assert response.headers["Content-Range"] == f"bytes 5-{size - 1}/{size}"
    response, body = get(server.port, url, {"Range": "bytes=5-", "If-Range": '"other"'})
    assert response.status == 200 and body == whole
    response, _ = get(server.port, url, {"Range": f"bytes={size}-"})
    assert response.status == 416 and response.headers["Content-Range"] == f"bytes */{size}"


def test_a_file_rewritten_with_as_many_bytes_is_answered_with_its_new_bytes(server, site):
    page = site / "static/pyodide-lock/pyodide-lock.json"
    old = get(server.port, "/course/static/pyodide-lock/pyodide-lock.json")[1]
    assert old == get(server.port, "/course/static/pyodide-lock/pyodide-lock.json")[1] == page.read_bytes()
    page.write_bytes(old.replace(b"packages", b"PACKAGES"))
    assert get(server.port, "/course/static/pyodide-lock/pyodide-lock.json")[1] == page.read_bytes() != old


def test_pyodides_files_have_their_types(server):
    for path, kind in (("static/pyodide/pyodide.asm.wasm", "application/wasm"),
                       ("static/pyodide/pyodide.mjs", "text/javascript"), ("jupyter-lite.json", "application/json"),
                       (WHEEL, "application/zip")):
        assert get(server.port, f"/course/{path}")[0].headers["Content-Type"] == kind


@pytest.mark.parametrize("path,status", [
    ("/course/static/secret.txt", 404),           # a link to a file outside the site
    ("/course/static/shared/secret.txt", 404),    # through a link to a folder outside
    ("/course/.git/config", 404),
    ("/course/static/", 404),                      # no folder listing
    ("/course/static/empty-folder/", 404),
    ("/course/index.html%00.txt", 400),
    ("/course/%2e%2e/outside/secret.txt", 404),
    ("/elsewhere/index.html", 404),
])
def test_nothing_outside_the_site_is_served(server, path, status):
    response, body = get(server.port, path)
    assert response.status == status and b"TOP SECRET" not in body and b"Traceback" not in body


def test_a_link_inside_the_site_is_served_and_the_sub_path_redirects(server):
    assert get(server.port, "/course/static/inside.html")[0].status == 200
    moved, _ = get(server.port, "/course?x=1")
    assert moved.status == 301 and moved.headers["Location"] == "/course/?x=1"
    folder, _ = get(server.port, "/course/lab?path=a.ipynb")
    assert folder.status == 301 and folder.headers["Location"] == "lab/?path=a.ipynb"
    assert get(server.port, "/course/", method="POST")[0].status == 405


def test_a_file_opened_in_a_folder_swapped_out_meanwhile_is_looked_up_in_the_new_one(tmp_path, monkeypatch):
    """The swap happens between opening a file and reading its real path back: the old folder
    is then elsewhere (and deleted), so the file is found again in the folder now in place."""
    from tools import site_swap

    output, built = tmp_path / "site", tmp_path / "new"
    for folder, label in ((output, "old"), (built, "new")):
        folder.mkdir()
        (folder / "index.html").write_text(label)
    site = serve.Site(output)
    assert open(site.find("index.html")[0]).read() == "old"
    looked_up = []

    def swapped_meanwhile(path):                     # tools.serve._real_path, with the swap inside
        fd = os.open(path, os.O_RDONLY)
        try:
            if not looked_up:
                site_swap.put_in_place(built, output)
            looked_up.append(os.readlink(f"/proc/self/fd/{fd}"))
            return looked_up[-1]
        finally:
            os.close(fd)

    monkeypatch.setattr(serve, "_real_path", swapped_meanwhile)
    real, why, _ = site.find("index.html")
    assert not looked_up[0].startswith(str(output) + os.sep)        # the first look saw the old folder
    assert why == "" and real == str(output / "index.html") and open(real).read() == "new"


def test_the_listen_queue_holds_a_class(server):
    shown = subprocess.run(["ss", "-Hltn", f"sport = :{server.port}"], capture_output=True, text=True).stdout
    assert shown.split()[2] == str(serve.BACKLOG) and serve.BACKLOG >= 1024, shown


def closed_by_the_server(sock, seconds=60):
    """True when the server closes the connection (within seconds, a bound, not a measure)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_idle_and_half_sent_connections_neither_stop_the_server_nor_stay_forever(server):
    """300 connections that send nothing and 300 that send half a request (a slowloris): pages
    are still served to others, and the server closes them all after its idle time."""
    held = []
    try:
        for n in range(600):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            if n % 2:
                sock.sendall(b"GET /course/ HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(sock)
        for _ in range(20):
            response, body = get(server.port, "/course/")
            assert response.status == 200 and b"the landing page" in body
        assert all(closed_by_the_server(sock) for sock in held[:20] + held[-20:])
    finally:
        for sock in held:
            sock.close()


def test_course_serve_runs_a_worker_per_core_and_stops_them_all(site, tmp_path):
    port = static_hosts_free_port()
    process = subprocess.Popen([sys.executable, "-m", "tools.site", "serve", "--no-build", "--output", str(site),
                                "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        for line in process.stdout:
            if "Press Ctrl+C" in line:
                break
        children, deadline = [], time.monotonic() + 60
        while len(children) < serve.WORKERS - 1 and time.monotonic() < deadline:   # forked as it starts
            children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
            time.sleep(0.05)
        assert len(children) == serve.WORKERS - 1
        for _ in range(10):
            assert get(port, "/")[0].status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{pid}") and "Z" not in open(f"/proc/{pid}/stat").read().split()[2]
              for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in children if os.path.exists(f"/proc/{pid}")
                and open(f"/proc/{pid}/stat").read().split()[2] != "Z"], "a worker outlived the server"


def static_hosts_free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------- nginx and caddy, as docs/instructors.md says

def test_the_documented_configurations_use_the_servers_rule_for_hashed_names():
    for kind in static_hosts.KINDS:
        assert serve.HASHED_NAME in static_hosts.documented_config(kind), kind


@pytest.mark.parametrize("kind", static_hosts.KINDS)
def test_the_documented_configuration_serves_the_site_as_course_serve_does(kind, site, tmp_path):
    if static_hosts.program(kind) is None:
        message = f"{kind} is not installed (apt-get install {'nginx-light' if kind == 'nginx' else kind})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    served = tmp_path / "site"
    shutil.copytree(site, served, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    port = static_hosts_free_port()
    with static_hosts.running(kind, served, port, tmp_path / "work"):
        index, body = get(port, "/")
        assert index.status == 200 and b"the landing page" in body
        assert index.headers["Cache-Control"] == "no-cache" and index.headers["X-Content-Type-Options"] == "nosniff"
        hashed, _ = get(port, f"/{HASHED_JS}")
        assert hashed.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert get(port, f"/{WHEEL}")[0].headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert get(port, "/jupyter-lite.json")[0].headers["Cache-Control"] == "no-cache"
        assert get(port, "/static/defaced-notes.ipynb")[0].headers["Cache-Control"] == "no-cache"
        packed, body = get(port, f"/{HASHED_JS}", {"Accept-Encoding": "gzip"})
        assert packed.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == (served / HASHED_JS).read_bytes()
        part, body = get(port, "/static/pyodide/pyodide.asm.wasm", {"Range": "bytes=0-15", "Accept-Encoding": "identity"})
        assert part.status == 206 and body == (served / "static/pyodide/pyodide.asm.wasm").read_bytes()[:16]
        assert re.match(r"application/wasm", part.headers["Content-Type"])
        assert re.match(r"text/javascript", get(port, "/static/pyodide/pyodide.mjs")[0].headers["Content-Type"])
        again, _ = get(port, "/", {"If-None-Match": index.headers["ETag"]})
        assert again.status == 304
        assert get(port, "/static/")[0].status in (403, 404)
        if kind == "nginx":                 # caddy follows links: docs/instructors.md says to keep none
            assert get(port, "/static/secret.txt")[0].status in (403, 404)
        idle = socket.create_connection(("127.0.0.1", port))
        assert get(port, "/")[0].status == 200
        idle.close()
