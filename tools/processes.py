"""Stopping a server or browser process the tools, tests and benchmarks started."""

from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen, timeout: float = 20) -> int:
    """Ask ``process`` to end (SIGTERM), wait up to ``timeout`` seconds, then kill it and wait.
    Returns its exit code."""
    process.terminate()
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
