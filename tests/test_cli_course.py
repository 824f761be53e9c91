"""The instructor's commands fail in one sentence, never with a traceback, and ship nothing wrong:
./course, python -m tools.site (build, serve, check), tools.lab, and python -m engine solve."""

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import CACHE, CONTENT, ROOT
from tools import guard, lab, pyodide_dist
from tools import site as site_tool
from tools.addresses import machine_addresses
from tools.browser import free_port
from tools.processes import stop

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(*args, cwd=ROOT, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


def one_sentence_failure(done):
    """The command failed with a message, not a traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.stderr.strip(), "no message"
    return done.stderr.strip()


# ---------------------------------------------------------------- ./course and its help

def test_course_help_exits_0_and_an_unknown_command_exits_2():
    done = subprocess.run([str(ROOT / "course"), "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    for command in ("serve", "test", "build", "check", "solve", "lab", "report", "new", "bench", "mutate",
                    "test-under-load"):
        assert f"./course {command}" in done.stdout
    done = subprocess.run([str(ROOT / "course"), "nonsense"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Unknown command: nonsense" in done.stderr


def test_each_site_command_lists_only_its_own_options():
    build = run("-m", "tools.site", "build", "--help").stdout
    serve = run("-m", "tools.site", "serve", "--help").stdout
    for option in ("--port", "--host", "--base-path", "--no-build"):
        assert option not in build and option in serve
    for option in ("--output", "--pyodide", "--ship-anyway"):
        assert option in build and option in serve
    done = run("-m", "tools.site", "build", "--base-path", "/x/")
    assert done.returncode == 2 and "unrecognized arguments: --base-path" in done.stderr
    assert run("-m", "tools.lab", "--help").returncode == 0


# ---------------------------------------------------------------- serve

def test_serve_on_a_busy_port_says_so_before_building(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.perf_counter()
        done = run("-m", "tools.site", "serve", "--port", str(port), "--output", str(tmp_path / "site"))
    message = one_sentence_failure(done)
    assert message == (f"Port {port} is already in use (another ./course serve, or another program): stop it "
                       "and serve again. Learners' saved notebooks and progress belong to the exact address "
                       f"they opened (port {port} included): at another port (--port {port + 1}) they find blank "
                       "notebooks until each one moves their work with the start page's Export and Import.")
    assert not (tmp_path / "site").exists(), "it built before finding the port busy"
    assert time.perf_counter() - started < 20


def test_serve_on_an_address_of_another_machine_says_so(tmp_path):
    done = run("-m", "tools.site", "serve", "--host", "192.0.2.7", "--port", str(free_port()),
               "--output", str(tmp_path / "site"), "--no-build")
    assert "not an address of this machine" in one_sentence_failure(done)


@pytest.fixture
def serving(tmp_path):
    """serving(*args) -> (process, base URL) of `python -m tools.site serve --no-build` on a tiny site."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!DOCTYPE html><title>landing</title><h1>the landing page</h1>")
    (site / "jupyter-lite.json").write_text("{}")
    for folder in ("static", "files"):
        (site / folder).mkdir()
        (site / folder / "a.txt").write_text("a file")
    processes = []

    def start(*args):
        port = free_port()
        process = subprocess.Popen([sys.executable, "-m", "tools.site", "serve", "--no-build", "--output",
                                    str(site), "--port", str(port), *args], cwd=ROOT, env=ENV,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(process)
        first = process.stdout.readline()  # "The course is being served from ..."
        assert "being served" in first, first + process.stderr.read()
        lines = []
        while not lines or "Press Ctrl+C to stop." not in lines[-1]:
            lines.append(process.stdout.readline())
        return process, port, first + "".join(lines)

    yield start
    for process in processes:
        stop(process)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_the_sub_path_without_its_slash_redirects(serving):
    _process, port, printed = serving("--base-path", "/course/")
    assert f"http://127.0.0.1:{port}/course/" in printed
    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(f"http://127.0.0.1:{port}/course?x=1", timeout=10)
    assert redirect.value.code == 301 and redirect.value.headers["Location"] == "/course/?x=1"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/course", timeout=10) as page:
        assert "the landing page" in page.read().decode()
    with pytest.raises(urllib.error.HTTPError) as outside:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/elsewhere/index.html", timeout=10)
    assert outside.value.code == 404


def test_host_serves_every_network_and_prints_the_addresses_learners_type(serving):
    _process, port, printed = serving("--host", "0.0.0.0")
    ips = machine_addresses(socket.AF_INET)
    assert ips, "this machine has no address on a network"
    for ip in ips:
        assert f"    http://{ip}:{port}/\n" in printed
        assert not ipaddress.ip_address(ip).is_loopback
        with urllib.request.urlopen(f"http://{ip}:{port}/", timeout=10) as page:
            assert page.status == 200 and "the landing page" in page.read().decode()
    assert "Anyone who can reach this machine on the network can open it" in printed


def test_serve_lists_no_folder(serving):
    _process, port, _printed = serving()
    for folder in ("static/", "files/"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/{folder}", timeout=10)
        assert refused.value.code == 404, folder


@pytest.mark.parametrize("port", ["70000", "0", "eighty"])
def test_a_port_that_is_no_port_is_one_sentence(port, tmp_path):
    done = run("-m", "tools.site", "serve", "--port", port, "--output", str(tmp_path / "site"), "--no-build")
    message = one_sentence_failure(done)
    assert message.splitlines()[-1].endswith(f"argument --port: '{port}' is not a port: give a whole number "
                                             "from 1 to 65535, such as 8000")


def test_serve_rebuilds_the_kind_of_site_last_built_there(tmp_path, monkeypatch):
    output = tmp_path / "out"
    output.mkdir()
    monkeypatch.setattr(site_tool, "BUILDS", tmp_path / "builds.json")
    tarball = tmp_path / "pyodide.tgz"
    tarball.write_bytes(b"")
    site_tool.remember(output.resolve(), tarball)
    built, served = [], []
    monkeypatch.setattr(site_tool, "build", lambda out, pyodide, ship_anyway=False: built.append(pyodide)
                        or {"release": {"version": "v"}, "self_hosted": bool(pyodide), "pyodide": pyodide,
                            "seconds": 0, "megabytes": 0, "output": out, "missing": []})
    monkeypatch.setattr(site_tool, "serve", lambda server, *args, **kwargs: served.append(server)
                        or server.server_close())
    site_tool.main(["serve", "--output", str(output), "--port", str(free_port())])
    assert built == [str(tarball.resolve())] and len(served) == 1
    site_tool.remember(output.resolve(), None)  # the next build used the CDN
    site_tool.main(["serve", "--output", str(output), "--port", str(free_port())])
    assert built[-1] is None


def test_every_build_summary_says_self_hosted_or_cdn(online_site, self_hosted_site):
    online = site_tool.summary(online_site[1])
    assert "(CDN: learners' browsers load Pyodide from https://cdn.jsdelivr.net/pyodide/v314.0.6/full/)" in online
    assert "WARNING" not in online
    hosted = site_tool.summary(self_hosted_site[1])
    assert "(self-hosted, with Pyodide from " in hosted
    assert "so no notebook of this course can run on this site" in hosted  # the npm core
    assert pyodide_dist.DOWNLOAD in hosted


# ---------------------------------------------------------------- build: what ships

def content_copy(tmp_path):
    copy = tmp_path / "content"
    shutil.copytree(CONTENT, copy)
    return copy


def test_the_shipped_content_passes_the_guard():
    done = run("-m", "tools.site", "check")
    assert done.returncode == 0, done.stderr
    assert "fit to ship" in done.stdout


def test_build_refuses_stored_outputs_and_filled_exercises(tmp_path):
    content = content_copy(tmp_path)
    notebook = json.loads((content / "01_positional_encoding.ipynb").read_text())
    first_code = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code")
    notebook["cells"][first_code]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hi"}]
    notebook["cells"][first_code]["execution_count"] = 1
    (content / "01_positional_encoding.ipynb").write_text(json.dumps(notebook))
    solved = run("-m", "engine", "solve", str(CONTENT / "02_feed_forward.ipynb"), str(tmp_path / "02.ipynb"))
    assert solved.returncode == 0, solved.stderr
    shutil.copy(tmp_path / "02.ipynb", content / "02_feed_forward.ipynb")
    found = dict(guard.problems(content))
    assert len(guard.problems(content)) == 2, "one problem per cause"
    assert found["01_positional_encoding.ipynb"] == f"stored outputs in cell {first_code + 1}"
    assert found["02_feed_forward.ipynb"].startswith("exercise cells ")
    assert found["02_feed_forward.ipynb"].endswith("filled in (no ____ blank left)")
    output = tmp_path / "site"
    with pytest.raises(site_tool.BuildError) as refused:
        site_tool.build(output, content=content)
    message = str(refused.value)
    assert "Not building: 2 problem(s)" in message and "--ship-anyway" in message
    assert "01_positional_encoding.ipynb: stored outputs" in message
    assert not output.exists(), "nothing may be built"


def test_check_and_build_refuse_an_exercise_cell_that_differs_from_its_definition(tmp_path):
    """The learner's code is written once, in the definition: a shipped exercise cell that
    differs from it (blanks still in) is refused until `python -m engine cells` writes it."""
    content = content_copy(tmp_path)
    path = content / "03_norms_and_residuals.ipynb"
    notebook = json.loads(path.read_text())
    index, cell = next((i, c) for i, c in enumerate(notebook["cells"])
                       if c["metadata"].get("course", {}).get("exercise") == "rms-norm-16bit")
    cell["source"] = "".join(cell["source"]).replace("then apply the learned gain", "then the gain")
    path.write_text(json.dumps(notebook))
    assert guard.problems(content) == [("03_norms_and_residuals.ipynb",
                                        f"cell {index + 1}: exercise 'rms-norm-16bit' differs from its template")]
    with pytest.raises(site_tool.BuildError, match="Not building: 1 problem"):
        site_tool.build(tmp_path / "site", content=content)
    written = run("-m", "engine", "cells", str(content))
    assert written.returncode == 0, written.stderr
    assert "1 exercise cell(s) written (rms-norm-16bit)" in written.stdout
    assert guard.problems(content) == []
    assert path.read_bytes() == (CONTENT / path.name).read_bytes()


def test_ship_anyway_builds_and_warns_loudly(tmp_path, capsys):
    content = content_copy(tmp_path)
    notebook = json.loads((content / "00_start_here.ipynb").read_text())
    exercise = next(c for c in notebook["cells"] if "exercise" in c["metadata"].get("tags", []))
    exercise["source"] = "".join(exercise["source"]).replace("____", "0")
    (content / "00_start_here.ipynb").write_text(json.dumps(notebook))
    report = site_tool.build(tmp_path / "site", content=content, ship_anyway=True)
    warning = capsys.readouterr().err
    assert "WARNING: shipping what the guard refuses" in warning
    assert "00_start_here.ipynb: exercise cell" in warning and "!" * 78 in warning
    assert report["shipped_anyway"] and (tmp_path / "site" / "files" / "00_start_here.ipynb").is_file()


def test_build_refuses_an_output_it_must_not_replace_or_cannot_write(tmp_path):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "thesis.txt").write_text("my thesis")
    for output, expected in [
        (ROOT, "it holds the course itself"),
        (ROOT.parent, "it holds the course itself"),
        (CONTENT / "site", "inside the notebooks' folder"),
        (tmp_path / "papers", "it is not empty and holds no site built before"),
        (tmp_path / "a-file", "it is a file"),
        (tmp_path / "a-file" / "site", "Cannot write the site into"),
    ]:
        done = run("-m", "tools.site", "build", "--output", str(output))
        assert expected in one_sentence_failure(done), output
    assert (tmp_path / "papers" / "thesis.txt").read_text() == "my thesis"


def test_a_missing_pyodide_path_is_one_sentence(tmp_path):
    done = run("-m", "tools.site", "build", "--output", str(tmp_path / "site"),
               "--pyodide", str(tmp_path / "nowhere.tar.bz2"))
    message = one_sentence_failure(done)
    assert message.startswith("The Pyodide distribution ") and "does not exist" in message
    assert not (tmp_path / "site").exists()


# ---------------------------------------------------------------- self-hosted archives

def npm_folder(tarball, tmp_path):
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path / "npm", filter="data")
    return tmp_path / "npm" / "package"


def test_a_truncated_archive_is_refused_and_its_good_copy_then_used(pyodide_npm_tarball, tmp_path):
    cache = tmp_path / "cache"
    archive = tmp_path / "pyodide-314.0.6.tgz"
    data = pyodide_npm_tarball.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(pyodide_dist.DistributionError) as refused:
        pyodide_dist.find_distribution(archive, cache)
    assert "truncated" in str(refused.value) and pyodide_dist.DOWNLOAD in str(refused.value)
    assert list((cache / "pyodide-dist").iterdir()) == [], "a partial unpacking was left behind"
    archive.write_bytes(data)  # the good file, under the same name
    found = pyodide_dist.find_distribution(archive, cache)
    with tarfile.open(archive) as tar:
        wasm = tar.getmember("package/pyodide.asm.wasm").size
    assert (found / "pyodide.asm.wasm").stat().st_size == wasm
    assert (found / "python_stdlib.zip").is_file()


def test_a_file_that_is_not_an_archive_is_refused(tmp_path):
    fake = tmp_path / "pyodide-314.0.6.tar.bz2"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2000))
    with pytest.raises(pyodide_dist.DistributionError, match="is not a Pyodide archive"):
        pyodide_dist.find_distribution(fake, tmp_path / "cache")


def test_another_version_or_a_missing_file_is_refused(pyodide_npm_tarball, tmp_path):
    folder = npm_folder(pyodide_npm_tarball, tmp_path)
    package = json.loads((folder / "package.json").read_text())
    package["version"] = "0.27.7"
    (folder / "package.json").write_text(json.dumps(package))
    with pytest.raises(pyodide_dist.DistributionError) as refused:
        pyodide_dist.find_distribution(folder, tmp_path / "cache")
    assert "is Pyodide 0.27.7, but this course's kernel runs Pyodide 314.0.6" in str(refused.value)
    package["version"] = "314.0.6"
    (folder / "package.json").write_text(json.dumps(package))
    (folder / "python_stdlib.zip").unlink()
    with pytest.raises(pyodide_dist.DistributionError, match="lacks python_stdlib.zip"):
        pyodide_dist.find_distribution(folder, tmp_path / "cache")
    shutil.copy(folder / "pyodide-lock.json", folder / "python_stdlib.zip")  # not a zip
    with pytest.raises(pyodide_dist.DistributionError, match="python_stdlib.zip is damaged"):
        pyodide_dist.find_distribution(folder, tmp_path / "cache")


def test_the_cache_is_keyed_by_content_not_name(pyodide_npm_tarball):
    found = pyodide_dist.find_distribution(pyodide_npm_tarball, CACHE)
    assert found.parent.name == pyodide_dist.file_hash(pyodide_npm_tarball)[:16]


# ---------------------------------------------------------------- lab

def test_lab_works_on_a_copy_and_keeps_the_learners_edits(tmp_path):
    workspace = tmp_path / "_lab"
    copied = lab.sync_copy(CONTENT, workspace)
    assert {p.name for p in copied} >= {p.name for p in CONTENT.glob("*.ipynb")}
    (workspace / "00_start_here.ipynb").write_text("my edits")
    again = lab.sync_copy(CONTENT, workspace)
    assert again == [] and (workspace / "00_start_here.ipynb").read_text() == "my edits"


def test_lab_passes_allow_root_only_as_root():
    assert "--allow-root" in lab.command(Path("/x"), [], as_root=True)
    assert "--allow-root" not in lab.command(Path("/x"), [], as_root=False)
    assert lab.command(Path("/x"), ["--allow-root"], as_root=True).count("--allow-root") == 1
    assert "--ServerApp.root_dir=/x" in lab.command(Path("/x"), [], as_root=False)


def test_lab_gives_jupyterlab_the_sites_settings(tmp_path):
    """`./course lab` starts JupyterLab with the defaults the site sets (overrides.json): a
    JupyterLab started with its command line reports them as its settings' defaults."""
    overrides = json.loads((ROOT / "overrides.json").read_text())
    port = free_port()
    env = {**lab.bound_environment(), "JUPYTER_PLATFORM_DIRS": "1", "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    cmd = lab.command(tmp_path, ["--no-browser", f"--port={port}", "--ip=127.0.0.1", "--ServerApp.token=",
                                 "--ServerApp.password="], as_root=hasattr(os, "geteuid") and os.geteuid() == 0)
    with open(tmp_path / "server.log", "w") as log:
        process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        found = {}
        deadline = time.monotonic() + 120
        for plugin in overrides:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab/api/settings/{plugin}", timeout=5) as r:
                        found[plugin] = json.load(r)["schema"]["properties"]
                    break
                except OSError:
                    assert process.poll() is None and time.monotonic() < deadline, \
                        (tmp_path / "server.log").read_text()[-3000:]
                    time.sleep(0.5)
        for plugin, values in overrides.items():
            assert {name: found[plugin][name]["default"] for name in values} == values, plugin
    finally:
        stop(process)


# ---------------------------------------------------------------- solve

@pytest.mark.parametrize("case", ["png", "json", "same-file", "same-folder", "into-content", "missing"])
def test_solve_refuses_what_would_do_harm(case, tmp_path):
    notebook = tmp_path / "nb.ipynb"
    shutil.copy(CONTENT / "00_start_here.ipynb", notebook)
    before = notebook.read_bytes()
    args, expected = {
        "png": ((tmp_path / "photo.png", tmp_path / "out.ipynb"), "is not a Jupyter notebook (not JSON text)"),
        "json": ((tmp_path / "data.json", tmp_path / "out.ipynb"), "JSON without cells and nbformat"),
        "same-file": ((notebook, notebook), "it would be overwritten with its solution"),
        "same-folder": ((tmp_path, tmp_path), "its notebooks would be overwritten"),
        "into-content": ((notebook, CONTENT / "solved.ipynb"), "is inside content/"),
        "missing": ((tmp_path / "none.ipynb", tmp_path / "out.ipynb"), "does not exist"),
    }[case]
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    (tmp_path / "data.json").write_text('{"a": 1}')
    done = run("-m", "engine", "solve", *map(str, args), cwd=tmp_path)
    message = one_sentence_failure(done)
    assert message.startswith("error: ") and expected in message and message.count("\n") == 0
    assert notebook.read_bytes() == before
    assert not (tmp_path / "out.ipynb").exists() and not (CONTENT / "solved.ipynb").exists()


# ---------------------------------------------------------------- new

@pytest.mark.parametrize("name,expected", [
    ("Attention", "cannot name a notebook: use lower-case letters"),
    ("2nd_part", "cannot name a notebook"),
    ("norms", "'norms' is taken: labs/norms"),
    ("start", "'start' is taken"),
    ("class", "'class' cannot name a notebook: it is one of Python's keywords"),
    ("lambda", "'lambda' cannot name a notebook: it is one of Python's keywords"),
    ("match", "'match' cannot name a notebook: it is one of Python's keywords"),
    ("type", "'type' cannot name a notebook: it is one of Python's keywords"),
])
def test_new_refuses_a_bad_or_taken_name_in_one_sentence(name, expected, tmp_path):
    before = sorted(p.name for p in CONTENT.iterdir())
    message = one_sentence_failure(run("-m", "tools.new", name))
    assert message.startswith("error: ") and expected in message and message.count("\n") == 0
    assert sorted(p.name for p in CONTENT.iterdir()) == before


# ---------------------------------------------------------------- other commands' failures

def test_bench_from_a_json_that_is_missing_or_not_a_run_is_one_sentence(tmp_path):
    message = one_sentence_failure(run("-m", "benchmarks", "--from-json", str(tmp_path / "missing.json"),
                                       "--no-docs"))
    assert message == (f"Cannot read {tmp_path / 'missing.json'} (No such file or directory): give the JSON "
                       "a run saved, such as benchmarks/results/latest.json.")
    (tmp_path / "other.json").write_text('{"sections": {"labs": {}}}')
    message = one_sentence_failure(run("-m", "benchmarks", "--from-json", str(tmp_path / "other.json"), "--no-docs"))
    assert message.startswith(f"{tmp_path / 'other.json'} is not the JSON of a benchmark run")
    assert message.count("\n") == 0


def test_mutate_an_unknown_module_is_one_sentence():
    message = one_sentence_failure(run("-m", "tools.mutate", "nosuchmodule", "--list"))
    assert message.startswith("There is no module 'nosuchmodule' in lib/: choose among ")
    assert "norm" in message and message.count("\n") == 0
    message = one_sentence_failure(run("-m", "tools.mutate", "exercises.definitions.nope", "--list"))
    assert message.startswith("There is no module exercises.definitions.nope: choose among ")


# ---------------------------------------------------------------- ./course itself

def course_copy(tmp_path):
    """A copy of the course (the script and its packages) elsewhere, as a course folder copied
    for a new term, with a bin/ of stand-ins: apt-get and `python3 -m venv` refuse, so a command
    that tries to install anything fails at once instead of installing."""
    copy = tmp_path / "course-copy"
    copy.mkdir()
    for name in ("course", "pyproject.toml", "requirements.txt", "requirements-test.txt",
                 "requirements-notebooks.txt", "jupyter-lite.json", "overrides.json", "jupyter_lite_config.json"):
        shutil.copy2(ROOT / name, copy / name)
    for name in ("tools", "engine", "exercises", "lib", "labs", "presentation", "benchmarks", "content"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "_release"))
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    (stand_ins / "apt-get").write_text("#!/bin/sh\necho 'apt-get refused by the test' >&2\nexit 1\n")
    (stand_ins / "python3").write_text(f"#!/bin/sh\n[ \"$1 $2\" = '-m venv' ] && {{ echo 'venv refused' >&2; exit 1; }}\n"
                                       f"exec {sys.executable} \"$@\"\n")
    for tool in stand_ins.iterdir():
        tool.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{stand_ins}:{env['PATH']}"
    return copy, env


def test_course_lab_help_prints_before_installing_anything(tmp_path):
    copy, env = course_copy(tmp_path)
    for command, usage in (("lab", "usage: ./course lab"), ("serve", "usage: python -m tools.site serve"),
                           ("solve", "usage: python -m engine solve"), ("mutate", "usage: ./course mutate")):
        done = subprocess.run([str(copy / "course"), command, "--help"], env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(usage), done.stdout
        assert not (copy / ".venv").exists(), f"{command} --help installed something"


def test_commands_run_the_checkout_they_are_in_not_the_one_dot_venv_was_installed_from(tmp_path):
    """A course folder copied with its .venv: .venv's editable install points at the old
    folder. `./course solve` must still guard this folder's content/, not the old one's."""
    copy, env = course_copy(tmp_path)
    venv = copy / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")  # the old install
    (venv / "bin" / "python").chmod(0o755)
    # The stamp ./course leaves after installing requirements.txt (so it installs nothing now).
    wanted = subprocess.run("cat requirements*.txt requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1",
                            shell=True, cwd=copy, capture_output=True, text=True).stdout.strip()
    (venv / ".installed-requirements.txt").write_text(wanted + "\n")
    spec = venv / "share" / "jupyter" / "kernels" / "python"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(venv / "bin" / "python")]}))
    done = subprocess.run([str(copy / "course"), "solve", "content/00_start_here.ipynb", "content/solved.ipynb"],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is inside content/, the notebooks the site ships" in done.stderr
    assert not (copy / "content" / "solved.ipynb").exists()
    probe = subprocess.run([str(copy / "course"), "report", "--help"], cwd=copy, env=env, capture_output=True,
                           text=True, timeout=60)
    assert probe.returncode == 0


def test_lab_and_its_kernels_import_this_checkout():
    env = lab.bound_environment({"PYTHONPATH": "/somewhere/else"})
    assert env["PYTHONPATH"].split(os.pathsep) == [str(ROOT), "/somewhere/else"]
    assert lab.KERNEL_MANAGER in lab.command(Path("/x"), [], as_root=False)


def test_a_local_jupyterlab_starts_the_kernel_the_notebooks_name(jupyter_server):
    """jupyter_client turns the name python into python3; the course's JupyterLab keeps it, so
    opening a notebook neither starts another kernel nor renames the notebook's."""
    base, _root = jupyter_server
    request = urllib.request.Request(base + "api/sessions", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"path": "probe.ipynb", "type": "notebook", "name": "",
                                                      "kernel": {"name": "python"}}).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        session = json.load(response)
    try:
        assert session["kernel"]["name"] == "python"
    finally:
        urllib.request.urlopen(urllib.request.Request(base + f"api/sessions/{session['id']}", method="DELETE"),
                               timeout=60)


# ---------------------------------------------------------------- builds at once

def test_two_builds_of_one_folder_at_once_take_turns(tmp_path):
    content = tmp_path / "content"
    content.mkdir()
    shutil.copy(CONTENT / "00_start_here.ipynb", content)
    output = tmp_path / "site"
    script = ("import sys; from tools.site import build, summary; "
              "print(summary(build(sys.argv[1], content=sys.argv[2])))")
    builds = [subprocess.Popen([sys.executable, "-c", script, str(output), str(content)], cwd=ROOT, env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outcomes = [build.communicate(timeout=600) for build in builds]
    for build, (out, err) in zip(builds, outcomes):
        assert build.returncode == 0 and "Traceback" not in err, err[-3000:]
        assert out.startswith("Built release ")
    assert sum("Another build of" in err for _out, err in outcomes) == 1, "the second one waited"
    assert (output / "index.html").is_file() and (output / "lab" / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.building-")] == []


def test_a_build_that_fails_leaves_the_previous_site_as_it_was(tmp_path, monkeypatch):
    output = tmp_path / "site"
    output.mkdir()
    (output / "jupyter-lite.json").write_text("{}")
    (output / "index.html").write_text("the previous site")

    def fails(folder, _contents):
        (Path(folder) / "half.txt").write_text("half a site")
        raise site_tool.BuildError("jupyter lite build failed (exit 1, its output above).")

    monkeypatch.setattr(site_tool, "run_lite_build", fails)
    with pytest.raises(site_tool.BuildError):
        site_tool.build(output)
    assert sorted(p.name for p in output.iterdir()) == ["index.html", "jupyter-lite.json"]
    assert (output / "index.html").read_text() == "the previous site"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.building-")] == []


@pytest.mark.parametrize("swap", ["exchange", "two renames"])
def test_a_served_site_is_never_half_replaced(tmp_path, monkeypatch, swap):
    """While a site folder is replaced again and again, every request is answered, from the old
    site or the new one, never a 404 of a half-deleted or half-built folder: with the folders
    exchanged in one step, and with the two renames of a system that cannot exchange them."""
    from tools import site_swap

    if swap == "two renames":
        monkeypatch.setattr(site_swap, "_exchange", lambda built, output: False)
    output = tmp_path / "site"

    def make(folder, label):
        (folder / "lab").mkdir(parents=True)
        for name in ("index.html", "lab/index.html", "jupyter-lite.json"):
            (folder / name).write_text(label)

    make(output, "release 0")
    server = site_tool.open_server(output, port=0, host="127.0.0.1")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    seen, done = [], threading.Event()

    def fetch():
        while not done.is_set():
            for name in ("index.html", "lab/index.html", "jupyter-lite.json", "lab/"):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=10) as page:
                        seen.append(page.read().decode())
                except urllib.error.HTTPError as error:
                    seen.append(f"HTTP {error.code}")

    readers = [threading.Thread(target=fetch) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for release in range(1, 30):
            with site_swap.exclusive(output):
                built = site_swap.staging_folder(output)
                make(built, f"release {release}")
                site_swap.put_in_place(built, output)
    finally:
        done.set()
        for reader in readers:
            reader.join()
        server.shutdown()
        server.server_close()
    assert seen and all(text.startswith("release ") for text in seen), sorted(set(seen))[:5]
    assert (output / "index.html").read_text() == "release 29"


def test_under_load_runs_the_tests_n_times_with_the_cpu_busy_and_fails_if_one_run_fails(tmp_path, capsys,
                                                                                          monkeypatch):
    from tools import under_load

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")      # a bare pytest starts in a second

    flaky = tmp_path / "test_once.py"          # passes the first time only: the second run fails
    flaky.write_text("from pathlib import Path\n\n\ndef test_once():\n"
                     f"    mark = Path({str(tmp_path / 'ran')!r})\n"
                     "    assert not mark.exists()\n    mark.touch()\n", encoding="utf-8")
    # -c os.devnull: the test file alone, without the course's configuration and conftest
    assert under_load.main(["2", "--load", "1", "--", "-c", os.devnull, "--rootdir", str(tmp_path), str(flaky)]) == 1
    printed = capsys.readouterr().out
    assert "run 1 of 2: passed" in printed and "run 2 of 2: FAILED" in printed
    assert "1 of 2 runs passed with 1 busy process;" in printed
