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
