"""Running a target's tests against each mutant, in forked children with a copy of the
repository each, and the scores that come of it."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .generate import Mutant
from .targets import Target, run_solutions

# ---------------------------------------------------------------- running the tests

class _Recorder:
    """The pytest plugin of each run: keeps only the ``wanted`` tests (None: all) and, when
    tracing, records which test runs which line of the traced file. A line run by a fixture
    counts for every test that uses the fixture; lines run anywhere else outside a test (at
    import, at collection) count as "" (every test)."""

    def __init__(self, wanted: set | None, traced: str | None):
        self.wanted, self.traced = wanted, traced
        self.current, self.lines, self.users = "", {}, {}

    def pytest_collection_modifyitems(self, items):
        if self.wanted is not None:
            items[:] = [item for item in items if item.nodeid in self.wanted]
        for item in items:
            for name in getattr(item, "fixturenames", ()):
                self.users.setdefault(f"fixture {name}", set()).add(item.nodeid)

    def _during(self, name):
        previous, self.current = self.current, name
        try:
            return (yield)
        finally:
            self.current = previous

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        return (yield from self._during(item.nodeid))

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        return (yield from self._during(f"fixture {fixturedef.argname}"))

    def trace(self, frame, event, arg):
        return self.line if frame.f_code.co_filename == self.traced else None

    def line(self, frame, event, arg):
        if event == "line":
            self.lines.setdefault(frame.f_lineno, set()).add(self.current)
        return self.line

    def tests_per_line(self) -> dict:
        """{line: sorted test ids}, fixtures replaced by the tests that use them."""
        def tests(who):           # a fixture no collected test uses counts for every test
            return self.users.get(who, {""}) if who.startswith("fixture ") else {who}
        return {n: sorted(set().union(*(tests(who) for who in ids))) for n, ids in self.lines.items()}


def _child(repo: Path, target: Target, wanted, trace_file, pytest_args) -> None:
    """In the forked process: run the target's tests in ``repo``; exit with pytest's code."""
    code = 99
    try:
        os.setpgid(0, 0)
        os.chdir(repo)
        os.environ["PYTHONPATH"] = os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])
        sys.dont_write_bytecode = True
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1), os.dup2(null, 2)
        recorder = _Recorder(wanted, str(repo / target.path) if trace_file else None)
        if trace_file:
            sys.settrace(recorder.trace)
        code = int(pytest.main([*target.tests, "-x", "-q", "--tb=no", "-p", "no:cacheprovider",
                                "-o", "addopts=", "-o", f"pythonpath={repo}", *pytest_args],
                                plugins=[recorder]))
        sys.settrace(None)
        if trace_file:
            Path(trace_file).write_text(json.dumps(recorder.tests_per_line()))
    finally:
        os._exit(code)


@dataclass
class Job:
    target: Target
    mutant: Mutant | None            # None: the traced baseline run
    wanted: set | None               # the test ids to run (None: the whole file)


class Pool:
    """Runs jobs in forked children, ``size`` at a time, each child in its own copy of the
    repository with the job's mutant written into it."""

    def __init__(self, root: Path, size: int, pytest_args: list):
        self.root, self.pytest_args, self.cpu = root, pytest_args, 0.0
        self.tmp = Path(tempfile.mkdtemp(prefix="mutate-")).resolve()
        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "node_modules", "_output", ".cache",
                                        "test-artifacts")
        self.free = [shutil.copytree(root, self.tmp / f"repo{i}", ignore=ignore) for i in range(size)]

    def trace_file(self, target: Target) -> Path:
        return self.tmp / f"{target.module}.lines.json"

    def start(self, job: Job) -> tuple:
        repo = self.free.pop()
        if job.mutant:
            original = (self.root / job.target.path).read_text(encoding="utf-8")
            (repo / job.target.path).write_text(job.mutant.apply(original), encoding="utf-8")
        trace = None if job.mutant else str(self.trace_file(job.target))
        pid = os.fork()
        if pid == 0:
            _child(repo, job.target, job.wanted, trace, self.pytest_args)
        return pid, (repo, job, time.monotonic())

    def finish(self, repo: Path, job: Job) -> None:
        shutil.copyfile(self.root / job.target.path, repo / job.target.path)
        self.free.append(repo)

    def run(self, jobs: list, timeout, on_done) -> None:
        """Run every job; on_done(job, exit code or None for a timeout, seconds) as each ends,
        which may return more jobs to run."""
        queue, running = list(jobs), {}
        try:
            while queue or running:
                while queue and self.free:
                    pid, state = self.start(queue.pop(0))
                    running[pid] = state
                pid, status, usage = os.wait4(-1, os.WNOHANG)
                if pid == 0:
                    self.kill_late(running, timeout)
                    time.sleep(0.01)
                    continue
                repo, job, started = running.pop(pid)
                self.finish(repo, job)
                self.cpu += usage.ru_utime + usage.ru_stime
                code = os.waitstatus_to_exitcode(status)
                queue += on_done(job, None if code == -signal.SIGKILL else code, time.monotonic() - started) or []
        finally:
            for pid in running:
                os.killpg(pid, signal.SIGKILL)

    @staticmethod
    def kill_late(running: dict, timeout) -> None:
        for pid, (_repo, job, started) in running.items():
            if time.monotonic() - started > timeout(job.target):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _imports(path: Path) -> set:
    """The top-level names a Python file imports (absolute imports only)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def preload(root: Path, targets: list) -> None:
    """Import, once, whatever the tests import from outside the repository (numpy, torch,
    pytest, and what the repository's own modules they use import), so that each forked run
    starts warm. Nothing of the repository itself is imported."""
    os.environ.setdefault("OMP_NUM_THREADS", "1"), os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    own = {p.stem for p in root.iterdir() if p.is_dir() or p.suffix == ".py"}
    files = [root / f for t in targets for f in [t.path, *t.tests]]
    files += [p for p in (root / "conftest.py", root / "tests" / "conftest.py") if p.exists()]
    seen, outside = set(), {"pytest"}
    while files:
        path = files.pop()
        if path in seen or not path.exists():
            continue
        seen.add(path)
        for name in _imports(path):
            if name.split(".")[0] not in own:
                outside.add(name.split(".")[0])
            else:                                    # follow the repository's own modules
                base = root.joinpath(*name.split("."))
                files += [base.with_suffix(".py"), base / "__init__.py"]
    for name in sorted(outside):
        with contextlib.suppress(Exception):
            __import__(name)
    with tempfile.TemporaryDirectory() as tmp:      # pytest's plugins (and what they import late)
        (Path(tmp) / "test_warm_up.py").write_text("def test_nothing():\n    pass\n")
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            pytest.main([tmp, "-q", "-p", "no:cacheprovider"])
    tested = {t.path.parts[0] for t in targets}
    assert not tested & set(sys.modules), "the package under test must not be imported before forking"


def run(root: Path, targets: list, jobs: int, pytest_args: list) -> float:
    """Run every target's baseline, then its mutants; sets statuses; returns the CPU seconds of
    the forked test runs."""
    run_solutions([t for t in targets if t.exercise])
    testable = [t for t in targets if t.tests and not t.exercise]
    if not testable:
        return 0.0
    preload(root, testable)
    pool, began, done = Pool(root, jobs, pytest_args), time.monotonic(), []

    def baseline_done(job, code, seconds):
        target = job.target
        target.baseline, target.seconds = ("passed" if code == 0 else f"failed (pytest exit {code})"), seconds
        if code == 0:
            lines = json.loads(pool.trace_file(target).read_text())
            target.lines = {int(n): set(ids) for n, ids in lines.items()}

    def mutant_done(job, code, seconds):
        if code == 0 and job.wanted is not None:
            # It survived the tests that ran its lines: run the whole file too, since a cached
            # function (lru_cache) runs its lines only in the first test that calls it.
            return [Job(job.target, job.mutant, None)]
        job.mutant.status = "survived" if code == 0 else "timeout" if code is None else "killed"
        done.append(job)
        if len(done) % 50 == 0:
            print(f"  {len(done)}/{len(queue)} mutants run, {time.monotonic() - began:.0f} s",
                  file=sys.stderr, flush=True)

    try:
        pool.run([Job(t, None, None) for t in testable], lambda t: 1800, baseline_done)
        queue = [Job(t, m, t.tests_for(m)) for t in testable if t.baseline == "passed"
                 for m in t.mutants if m.status not in ("killed", "timeout")]
        queue = [job for job in queue if job.wanted is None or job.wanted]   # the rest stay "not run"
        print(f"{sum(len(t.mutants) for t in targets)} mutants, {len(queue)} on lines the tests run",
              file=sys.stderr, flush=True)
        pool.run(queue, lambda t: 5 + 3 * t.seconds, mutant_done)
    finally:
        pool.close()
    return pool.cpu


# ---------------------------------------------------------------- results

@dataclass
class Score:
    module: str
    tests: str
    mutants: int
    killed: int
    equivalent: int
    survived: int        # of which never run: not_run
    not_run: int
    note: str

    @property
    def percent(self) -> float:
        counted = self.mutants - self.equivalent
        return 100.0 * self.killed / counted if counted else 100.0


def score(target: Target) -> Score:
    ms = target.mutants
    killed = sum(m.status in ("killed", "timeout") for m in ms)
    equivalent = sum(bool(m.reason) and m.status in ("survived", "not run") for m in ms)
    not_run = sum(m.status == "not run" and not m.reason for m in ms)
    note = "" if target.baseline == "passed" else "no test file" if not target.tests else target.baseline
    name = target.module + ("" if target.only is None else " (references)")
    return Score(name, ", ".join(target.tests) or "-", len(ms), killed, equivalent,
                 len(ms) - killed - equivalent, not_run, note)


def table(scores: list) -> str:
    """The scores as a Markdown table, one row per module and a total."""
    rows = ["| module | tests | mutants | killed | equivalent | survived | score |",
            "|---|---|--:|--:|--:|--:|--:|"]
    for s in scores:
        survived = f"{s.survived}" + (f" ({s.not_run} on lines no test runs)" if s.not_run else "")
        note = f" {s.note}" if s.note else ""
        rows.append(f"| {s.module} | {s.tests} | {s.mutants} | {s.killed} | {s.equivalent} | {survived} "
                    f"| {s.percent:.1f} %{note} |")
    total = [sum(getattr(s, name) for s in scores) for name in ("mutants", "killed", "equivalent", "survived")]
    rows.append(f"| total | | {total[0]} | {total[1]} | {total[2]} | {total[3]} | |")
    return "\n".join(rows)


def survivors_report(targets: list) -> str:
    out = ["# Surviving mutants", "", "Written by tools/mutate.py: each mutant's id, function and diff.", ""]
    for t in targets:
        alive = [m for m in t.mutants if m.status in ("survived", "not run") and not m.reason]
        out += [f"## {t.module} ({len(alive)} surviving, tests: {', '.join(t.tests) or 'none'})", ""]
        for m in alive:
            out += [f"- `{m.id}` in `{m.func}`" + (" (no test runs this line)" if m.status == "not run" else ""),
                    "", "  ```diff", *["  " + line for line in m.diff().splitlines()], "  ```", ""]
    return "\n".join(out)
