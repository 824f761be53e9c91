"""nginx and caddy serving a built site with the configurations of docs/instructors.md (its
"Larger classes: nginx or caddy"), for the test that runs them (tests/test_serve.py) and the classroom benchmark
(benchmarks/classroom.py), which puts `./course serve` beside nginx.

docs/instructors.md holds one ```nginx block (a `server { }` for Debian's /etc/nginx/sites-enabled/) and
one ```caddyfile block (a whole Caddyfile), written for a site in SITE_ROOT on port 8000. Here
they run as they are, with only the folder and the port replaced, nginx inside a main
configuration like Debian's nginx.conf (its events, mime.types and sendfile), each process in
the foreground, its files in a working folder of its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tools.processes import stop

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "docs" / "instructors.md"     # where the configurations are written
SITE_ROOT = "/srv/course/_output"
PORT = "8000"
KINDS = ("nginx", "caddy")
BLOCKS = {"nginx": "nginx", "caddy": "caddyfile"}

NGINX_MAIN = """\
{user}worker_processes auto;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
daemon off;
events {{ worker_connections 768; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    access_log off;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
{server}
}}
"""


def documented_config(kind: str, document: Path = DOCUMENT) -> str:
    """docs/instructors.md's configuration for kind ("nginx" or "caddy"), as written there."""
    text = document.read_text(encoding="utf-8")
    found = re.findall(rf"^```{BLOCKS[kind]}\n(.*?)^```", text, flags=re.S | re.M)
    if len(found) != 1:
        raise LookupError(f"{document.name} holds {len(found)} ```{BLOCKS[kind]} blocks, not one")
    return found[0]


def program(kind: str) -> str | None:
    return shutil.which(kind) or next((p for p in (f"/usr/sbin/{kind}", f"/usr/bin/{kind}")
                                       if os.access(p, os.X_OK)), None)


def _configured(kind: str, site: Path, port: int) -> str:
    text = documented_config(kind)
    if SITE_ROOT not in text or PORT not in text:
        raise LookupError(f"docs/instructors.md's {kind} configuration names no {SITE_ROOT} or port {PORT}")
    return text.replace(SITE_ROOT, str(Path(site).resolve())).replace(PORT, str(port))


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} stopped: {log.read_text(errors='replace')[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args[0]} did not listen on port {port} within {seconds:g} s")


@contextlib.contextmanager
def running(kind: str, site: Path, port: int, work: Path, pids: list | None = None):
    """kind serving site on 127.0.0.1:port with the configuration of docs/instructors.md; yields the base URL
    (and appends its process id to pids, when given)."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    log = work / "output.log"
    if kind == "nginx":
        user = "user root;\n" if os.geteuid() == 0 else ""   # the site may be in a private folder
        server = _configured("nginx", site, port).replace(f"listen {port}", f"listen 127.0.0.1:{port}")
        (work / "nginx.conf").write_text(NGINX_MAIN.format(user=user, work=work, server=server))
        command = [program("nginx"), "-p", str(work), "-c", str(work / "nginx.conf")]
        env = os.environ
    elif kind == "caddy":
        config = _configured("caddy", site, port).replace(f":{port} {{", f":{port} {{\n\tbind 127.0.0.1", 1)
        config = config.replace("{\n", "{\n\tadmin off\n", 1)     # no admin port beside the test's
        (work / "Caddyfile").write_text(config)
        command = [program("caddy"), "run", "--config", str(work / "Caddyfile"), "--adapter", "caddyfile"]
        env = {**os.environ, "HOME": str(work), "XDG_DATA_HOME": str(work / "data"),
               "XDG_CONFIG_HOME": str(work / "config")}
    else:
        raise ValueError(kind)
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    if pids is not None:
        pids.append(process.pid)
    try:
        _wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop(process)
