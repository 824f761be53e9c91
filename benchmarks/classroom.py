"""A class opening the site at once: `./course serve` beside nginx (and caddy) in the same run.

    python -m benchmarks --only classroom [--learners 200]

1. What a browser fetches on a first visit is recorded in Chromium, with a fresh profile, on a
   self-hosted site built from Pyodide's core (the one Pyodide this machine can have): the landing
   page until both of its checks have answered, then notebook 00 in JupyterLab until its kernel is
   idle. Every request to the site is kept, in order, with its `Range` header and whether it
   bypassed the cache (`cache: "no-store"`, which the Fetch standard sends as
   `Cache-Control: no-cache`).
2. Each server serves that site in turn (`python -m tools.site serve --no-build`, nginx and caddy
   with the configurations of docs/instructors.md: tools/static_hosts.py) to N simulated learners who all start
   at once. Each learner replays the requests in order over at most 6 keep-alive connections, as
   a browser does, with a browser's `Accept-Encoding` (`identity` for a range, as the Fetch
   standard says); a range answered with the whole file is read to its 16th byte and its
   connection dropped, as the page's `reader.cancel()` does. A request on a kept-alive
   connection that the server had closed is sent again once on a new one, as browsers do.
3. A second visit of one learner is replayed through a browser's cache rules: a response with
   `max-age` (or `immutable`) is not asked for again, one without `Cache-Control` is fresh for a
   tenth of its age (browsers' heuristic), the rest is asked for with `If-None-Match` /
   `If-Modified-Since`; requests that bypass the cache are sent as they are.

Reported per server: the time until all N learners are done, the median learner's time, the CPU
time the server's processes used (a figure the machine's other work moves less), failed
requests (a connection refused, reset or stalled for 60 s, or another status than Chromium got),
learners with a failure, connections per learner (most), megabytes per learner, the second
visit's bytes, ranges answered 206 and conditional requests answered 304. One Python process
plays all the learners: where it is the limit (its own CPU), every server's time is that
process's, so read the times as ratios of the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.browser import page_snippets
from tools.processes import stop

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))
CONNECTIONS = 6            # per learner, as browsers open per host
STALL_SECONDS = 60.0
BROWSER_ENCODINGS = "gzip, deflate, br, zstd"
KERNEL_IDLE_SECONDS = 240


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------- what a browser fetches

def record_first_visit(site: Path, chromium: str) -> list[dict]:
    """The requests Chromium makes to the site on a first visit (landing page, then notebook 00
    until its kernel is idle): [{"path", "range", "no_store", "status"}] in order."""
    from playwright.sync_api import sync_playwright

    from tools.browser import CHROMIUM_ARGS
    from tools.serve import Server

    server = Server(site, port=0).start()
    base = f"http://127.0.0.1:{server.port}/"
    recorded = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            context = browser.new_context()
            context.on("request", lambda request: recorded.append(request) if request.url.startswith(base) else None)
            page = context.new_page()
            page.goto(base)
            page.wait_for_selector("#runtime-check[data-result]", timeout=120_000)
            page.wait_for_selector("#storage-check[data-result]", timeout=120_000)
            page.goto(base + "lab/index.html?path=00_start_here.ipynb")
            page.wait_for_function(SNIPPETS["KERNEL_STARTED_AND_IDLE"], polling=100,
                                   timeout=KERNEL_IDLE_SECONDS * 1000)
            page.wait_for_load_state("networkidle", timeout=KERNEL_IDLE_SECONDS * 1000)
            entries = []
            for request in recorded:
                response = request.response()
                if response is not None and response.from_service_worker:
                    continue        # answered by the service worker: it reached the network as the worker's own
                headers = request.all_headers()
                entries.append({"path": "/" + request.url[len(base):], "range": headers.get("range"),
                                "no_store": "no-cache" in (headers.get("cache-control") or ""),
                                "status": response.status if response is not None else None})
            context.close()
            browser.close()
    finally:
        server.close()
    return entries


# ---------------------------------------------------------------- one simulated browser

class Failed(Exception):
    pass


async def _read_response(reader, method: str, cut_at: int | None):
    """(status, headers, bytes read, whole body read); cut_at: stop after that many body bytes."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    version, status = lines[0].split(" ", 2)[:2]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    status, got = int(status), len(head)
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return status, headers, got, True, version
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            got += len(size_line) + size + 2
            await reader.readexactly(size + 2)
            if size == 0:
                return status, headers, got, True, version
    length = int(headers.get("content-length", "0"))
    want = length if cut_at is None else min(length, cut_at)
    left = want
    while left:
        chunk = await reader.read(min(left, 1 << 20))
        if not chunk:
            raise Failed("the connection closed mid-body")
        left -= len(chunk)
    return status, headers, got + want, want == length, version


class Browser:
    """One learner's browser: up to CONNECTIONS keep-alive connections to host:port."""

    def __init__(self, host: str, port: int, prefix: str = ""):
        self.host, self.port, self.prefix = host, port, prefix.rstrip("/")
        self.connections = 0
        self.idle: list = []
        self.cache: dict[str, dict] = {}

    async def _connection(self):
        if self.idle:
            return self.idle.pop(), True
        self.connections += 1
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 16)
        return (reader, writer), False

    async def get(self, path: str, rng: str | None = None, extra: dict | None = None) -> dict:
        """Send one GET; {status, bytes, headers}; raise Failed on a network failure."""
        lines = [f"GET {self.prefix}{path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 "User-Agent: classroom-benchmark", "Accept: */*", "Connection: keep-alive",
                 f"Accept-Encoding: {'identity' if rng else BROWSER_ENCODINGS}"]
        if rng:
            lines.append(f"Range: {rng}")
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode()
        for attempt in (1, 2):
            conn, reused = await self._connection()
            reader, writer = conn
            try:
                writer.write(request)
                status, headers, got, whole, version = await asyncio.wait_for(
                    _read_response(reader, "GET", 16 if rng else None), STALL_SECONDS)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError,
                    Failed, asyncio.TimeoutError) as error:
                writer.close()
                if reused and attempt == 1 and not isinstance(error, asyncio.TimeoutError):
                    continue                 # a kept-alive connection the server had closed
                raise Failed(f"{type(error).__name__}: {error}") from None
            keep = whole and headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
            if keep:
                self.idle.append(conn)
            else:
                writer.close()
            return {"status": status, "bytes": got + len(request), "headers": headers}
        raise Failed("no answer")

    def close(self) -> None:
        for _reader, writer in self.idle:
            writer.close()
        self.idle = []


def _fresh(headers: dict) -> bool:
    """Whether a browser would use its cached copy without asking (max-age, or the heuristic)."""
    control = headers.get("cache-control", "").lower()
    if "no-cache" in control or "no-store" in control:
        return False
    age = re.search(r"max-age=(\d+)", control)
    if age:
        return int(age[1]) > 0
    modified, date = headers.get("last-modified"), headers.get("date")
    if modified and date:
        try:
            old = email.utils.parsedate_to_datetime(modified)
            now = email.utils.parsedate_to_datetime(date)
        except (TypeError, ValueError):
            return False
        return (now - old).total_seconds() / 10 > 60      # fresh for well past this second visit
    return False


async def visit(browser: Browser, requests: list[dict], second: bool = False) -> dict:
    """Replay a visit's requests over the browser's connections; what it cost."""
    result = {"requests": 0, "failed": 0, "bytes": 0, "206": 0, "ranges": 0, "304": 0, "conditional": 0,
              "errors": []}
    queue = list(requests)

    async def one(entry):
        path, rng = entry["path"], entry["range"]
        extra = {"Cache-Control": "no-cache", "Pragma": "no-cache"} if entry["no_store"] else {}
        if second and not rng and not entry["no_store"]:
            cached = browser.cache.get(path)
            if cached and _fresh(cached):
                return
            if cached and (cached.get("etag") or cached.get("last-modified")):
                if cached.get("etag"):
                    extra["If-None-Match"] = cached["etag"]
                if cached.get("last-modified"):
                    extra["If-Modified-Since"] = cached["last-modified"]
                result["conditional"] += 1
        result["requests"] += 1
        try:
            got = await browser.get(path, rng, extra)
        except Failed as error:
            result["failed"] += 1
            result["errors"].append(f"{path}: {error}")
            return
        result["bytes"] += got["bytes"]
        status = got["status"]
        if rng and entry.get("status") == 206:
            result["ranges"] += 1
            result["206"] += status == 206
        result["304"] += status == 304
        if not rng and status == 200:
            browser.cache[path] = got["headers"]
        expected = 200 if entry.get("status") in (None, 304) else entry["status"]   # 304: Chromium's own cache
        if status // 100 != expected // 100 and not (status == 304 and second) and not (rng and status == 200):
            result["failed"] += 1
            result["errors"].append(f"{path}: {status} where Chromium got {expected}")

    async def worker():
        while queue:
            await one(queue.pop(0))

    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    return result


async def classroom(port: int, requests: list[dict], learners: int, prefix: str = "") -> dict:
    """N learners opening the site at once, then one learner's second visit."""
    browsers = [Browser("127.0.0.1", port, prefix) for _ in range(learners)]
    start = time.perf_counter()
    done = []

    async def learner(browser):
        result = await visit(browser, requests)
        result["seconds"] = time.perf_counter() - start
        done.append(result)
        return result

    results = await asyncio.gather(*(learner(b) for b in browsers))
    total = time.perf_counter() - start
    second = await visit(browsers[0], requests, second=True)
    for browser in browsers:
        browser.close()
    times = sorted(r["seconds"] for r in results)
    return {
        "learners": learners, "all_done_s": round(total, 2), "median_learner_s": round(statistics.median(times), 2),
        "failed_requests": sum(r["failed"] for r in results),
        "learners_with_a_failure": sum(1 for r in results if r["failed"]),
        "connections_per_learner_max": max(b.connections for b in browsers),
        "connections": sum(b.connections for b in browsers),
        "mb_per_learner": round(statistics.mean(r["bytes"] for r in results) / 1e6, 2),
        "ranges": sum(r["ranges"] for r in results), "ranges_206": sum(r["206"] for r in results),
        "second_visit_bytes": second["bytes"], "second_visit_requests": second["requests"],
        "second_visit_conditional": second["conditional"], "second_visit_304": second["304"],
        "second_visit_failed": second["failed"],
        "errors": sorted(set(e for r in results for e in r["errors"]))[:10] + second["errors"][:5],
    }


# ---------------------------------------------------------------- the servers

def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) a process and its children have used so far (Linux /proc)."""
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    total = 0
    for each in [str(pid)] + found:
        try:
            fields = open(f"/proc/{each}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def course_server(site: Path, port: int, pids: list):
    """`./course serve --no-build` on the site, in its own process (as instructors run it)."""
    process = subprocess.Popen([sys.executable, "-m", "tools.site", "serve", "--no-build", "--output", str(site),
                                "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    pids.append(process.pid)
    try:
        for line in process.stdout:
            if "Press Ctrl+C" in line:
                break
        else:
            raise RuntimeError("./course serve did not start")
        yield
    finally:
        stop(process, timeout=30)


def servers(site: Path, work: Path):
    """(name, context manager yielding once it serves on the port given) for each server here."""
    from tools import static_hosts

    found = [("./course serve", lambda port, pids: course_server(site, port, pids))]
    for kind in static_hosts.KINDS:
        if static_hosts.program(kind):
            found.append((kind, lambda port, pids, kind=kind: static_hosts.running(kind, site, port, work / kind, pids)))
    return found


def site_for_the_run(log) -> Path:
    """A self-hosted site built from Pyodide's core (the npm package, fetched once)."""
    from tools import site as site_tool

    tarball = ROOT / ".cache" / "pyodide-314.0.6.tgz"
    if not tarball.exists():
        import urllib.request

        tarball.parent.mkdir(exist_ok=True)
        with urllib.request.urlopen("https://registry.npmjs.org/pyodide/-/pyodide-314.0.6.tgz", timeout=120) as r:
            tarball.write_bytes(r.read())
    output = Path(tempfile.mkdtemp(prefix="classroom-bench-")) / "site"
    log(f"  building a self-hosted site (Pyodide's core) into {output}...")
    site_tool.build(output, tarball, ship_anyway=True)
    return output


def run(learners: int = 200, log=print, site: Path | None = None) -> dict:
    from tools.browser import find_chromium

    chromium = find_chromium()
    if chromium is None:
        return {"skipped": "no Chromium to record what a browser fetches"}
    site = site or site_for_the_run(log)
    log("  recording a first visit in Chromium...")
    requests = record_first_visit(site, chromium)
    log(f"  {len(requests)} requests, {sum(1 for r in requests if r['range'])} of them ranges")
    rows = []
    with tempfile.TemporaryDirectory(prefix="classroom-servers-") as work:
        for name, serving in servers(site, Path(work)):
            port = free_port()
            log(f"  {learners} learners at once: {name}...")
            pids = []
            with serving(port, pids):
                row = asyncio.run(classroom(port, requests, learners))
                row["server_cpu_s"] = round(cpu_seconds(pids[0]), 1)
            row["server"] = name
            rows.append(row)
            log("    " + row_line(row))
    nginx = next((r for r in rows if r["server"] == "nginx"), None)
    for row in rows:
        row["vs_nginx"] = round(row["all_done_s"] / nginx["all_done_s"], 2) if nginx else None
    return {"learners": learners, "requests_per_visit": len(requests),
            "ranges_per_visit": sum(1 for r in requests if r["range"]), "rows": rows,
            "goal": "0 failed requests, <= 12 connections per learner, every range 206, a second visit "
                    "< 1 MB with 304s, all done within 1.5 x nginx's time"}


def row_line(row: dict) -> str:
    ratio = f", {row['vs_nginx']} x nginx" if row.get("vs_nginx") else ""
    return (f"{row['server']}: all done {row['all_done_s']} s{ratio} (median learner {row['median_learner_s']} s), "
            f"{row['failed_requests']} failed requests ({row['learners_with_a_failure']} learners), "
            f"server CPU {row.get('server_cpu_s', '?')} s, "
            f"{row['connections_per_learner_max']} connections per learner, {row['mb_per_learner']} MB per learner, "
            f"{row['ranges_206']} of {row['ranges']} ranges 206, second visit {row['second_visit_bytes'] / 1e3:.1f} kB "
            f"({row['second_visit_304']} of {row['second_visit_conditional']} conditional requests 304)")


def table(section: dict) -> list[str]:
    if "skipped" in section:
        return [f"Classroom: skipped ({section['skipped']})"]
    lines = [f"Classroom: {section['learners']} learners opening the site at once "
             f"({section['requests_per_visit']} requests each, {section['ranges_per_visit']} of them ranges)",
             "| server | all done, s | × nginx | median learner, s | server CPU, s | failed requests | "
             "learners with a failure | connections per learner | MB per learner | ranges 206 | second visit, kB | 304s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in section["rows"]:
        lines.append(f"| {r['server']} | {r['all_done_s']} | {r['vs_nginx'] or '–'} | {r['median_learner_s']} | "
                     f"{r.get('server_cpu_s', '–')} | {r['failed_requests']} | {r['learners_with_a_failure']} | {r['connections_per_learner_max']} | "
                     f"{r['mb_per_learner']} | {r['ranges_206']} of {r['ranges']} | "
                     f"{r['second_visit_bytes'] / 1e3:.1f} | {r['second_visit_304']} of "
                     f"{r['second_visit_conditional']} |")
    return lines


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--site", type=Path, help="a site built before (default: build one)")
    args = parser.parse_args()
    section = run(args.learners, site=args.site)
    print("\n".join(table(section)))
    print(json.dumps(section, indent=1))
