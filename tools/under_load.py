"""Run the browser tests several times in a row while other processes keep every CPU busy: a
test that passes here waits on the state it checks, not on time.

    python -m tools.under_load [N] [--load K] [-- PYTEST ARGS...]
    ./course test-under-load 5
    ./course test-under-load 3 -- tests/test_browser_access.py -k keyboard

N runs (default 5) of ``pytest tests/test_browser_*.py`` (or the pytest arguments after --), one
after the other, each while K busy processes (default: one per CPU) spin at the same priority.
It prints each run's result and time and exits with 0 only if every run passed. Each run's
output goes to test-artifacts/under-load/run-<i>.log.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TESTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_browser_*.py"))


def spin(stop) -> None:
    """Keep one CPU busy until ``stop`` is set."""
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def run_once(index: int, pytest_args: list[str], logs: Path) -> tuple[bool, float]:
    """One pytest run; (passed, seconds)."""
    log = logs / f"run-{index}.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                               cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    return code == 0, time.monotonic() - started


def last_line(path: Path) -> str:
    lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="./course test-under-load", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=5, help="how many runs in a row (default 5)")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2,
                        help="busy processes kept running meanwhile (default: one per CPU)")
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    pytest_args = argv[split + 1:]
    if args.runs < 1 or args.load < 0:
        parser.error("runs must be at least 1 and --load at least 0")
    pytest_args = pytest_args or DEFAULT_TESTS
    logs = ROOT / "test-artifacts" / "under-load"
    logs.mkdir(parents=True, exist_ok=True)
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.load)]
    for process in load:
        process.start()
    results = []
    try:
        for index in range(1, args.runs + 1):
            passed, seconds = run_once(index, pytest_args, logs)
            results.append(passed)
            print(f"run {index} of {args.runs}: {'passed' if passed else 'FAILED'} in {seconds / 60:.1f} min "
                  f"({last_line(logs / f'run-{index}.log')})", flush=True)
    finally:
        stop.set()
        for process in load:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
    busy = f"{args.load} busy process{'' if args.load == 1 else 'es'}"
    print(f"{sum(results)} of {len(results)} runs passed with {busy}; logs in {logs}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
