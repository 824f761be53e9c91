"""The dependency rules of ARCHITECTURE.md hold: import-linter checks the contracts in
.importlinter (layers lib <- exercises.core <- exercises.definitions <- exercises.ui <- labs;
lib on numpy alone; no widgets below the exercise UI)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


IMPORT_EVERYTHING = """
import importlib, pkgutil, sys
for package in ("lib", "exercises", "labs"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)
print("imported", len(sys.modules))
"""


def test_importing_every_course_module_prints_and_writes_nothing(tmp_path):
    """No import has a side effect: importing all of lib, exercises and labs (the compatibility
    module lib.exercises included) prints nothing and writes no file, here into an empty home and
    working folder."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("imported ") and result.stdout.count("\n") == 1, result.stdout[:2000]
    assert result.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".mpl") == []


def test_the_compatibility_module_begins_at_the_first_check_not_at_import(tmp_path):
    """lib.exercises (for notebooks of earlier releases) calls begin() when such a notebook first
    asks for a check, not when it is imported."""
    script = """
import exercises.ui.notebook as notebook
calls = []
notebook.begin = lambda: calls.append("begin")
import lib.exercises
assert calls == [], calls
import numpy as np
def row_mean(x):
    return x.mean(axis=-1, keepdims=True)
lib.exercises.check("row-mean", {"row_mean": row_mean, "np": np})
assert calls == ["begin"], calls
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
