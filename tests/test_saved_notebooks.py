"""Notebooks saved by learners from earlier releases still run after an update.

A learner's saved notebook keeps the imports and calls of the release it came from (for example
``from lib.exercises import ____, check, hint, solution`` in its setup cell), so every name those
notebooks use must keep working. Each saved notebook runs top to bottom in a real kernel, with
every check strict: the learner's finished work still passes.
"""

from pathlib import Path

import pytest

from conftest import run_nbval
from test_notebooks import assert_passed

SAVED = Path(__file__).parent / "saved_notebooks"
NOTEBOOKS = sorted(SAVED.glob("release-*/*.ipynb"))


def test_there_are_saved_notebooks_of_an_earlier_release():
    assert len(NOTEBOOKS) >= 6


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_a_notebook_saved_from_an_earlier_release_still_runs(notebook, tmp_path):
    copy = tmp_path / notebook.name
    copy.write_bytes(notebook.read_bytes())
    assert_passed(run_nbval(copy, tmp_path, tmp_path / "progress.json", strict=True))
