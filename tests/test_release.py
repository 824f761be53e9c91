"""Releases: notebooks stamped at build time, older copies found, fresh copies written beside them."""

import json

import pytest

from engine.core import release
from tools import release as stamping


def write_notebook(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook = {"cells": [{"cell_type": "markdown", "id": "a1", "metadata": {}, "source": text}],
                "metadata": {"kernelspec": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


@pytest.fixture
def built(tmp_path, monkeypatch):
    """build(texts) -> a staged release of notebooks with those texts, installed as the running one."""
    def build(texts, name):
        content = tmp_path / f"content-{name}"
        for path, text in texts.items():
            write_notebook(content / path, text)
        staged = tmp_path / f"staged-{name}"
        manifest = stamping.stage_contents(content, staged)
        release_dir = tmp_path / f"release-{name}"
        for wheel_path, data in stamping.wheel_files(manifest, staged).items():
            target = release_dir / wheel_path.removeprefix(f"{stamping.RELEASE}/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        monkeypatch.setattr(release, "release_dir", lambda: release_dir)
        return manifest, staged
    return build


def test_staging_stamps_every_notebook_and_leaves_content_alone(built, tmp_path):
    manifest, staged = built({"00_start_here.ipynb": "start", "sub/01_x.ipynb": "one"}, "a")
    assert set(manifest["notebooks"]) == {"00_start_here.ipynb", "sub/01_x.ipynb"}
    stamped = json.loads((staged / "sub/01_x.ipynb").read_text())["metadata"]["course"]["release"]
    assert stamped == {"fingerprint": manifest["notebooks"]["sub/01_x.ipynb"], "version": manifest["version"]}
    original = json.loads((tmp_path / "content-a/sub/01_x.ipynb").read_text())
    assert "course" not in original["metadata"]
    assert release.manifest() == manifest


def test_fingerprints_follow_the_content(built):
    first, _ = built({"00_start_here.ipynb": "start", "01_x.ipynb": "one"}, "a")
    second, _ = built({"00_start_here.ipynb": "start", "01_x.ipynb": "one, corrected"}, "b")
    assert first["notebooks"]["00_start_here.ipynb"] == second["notebooks"]["00_start_here.ipynb"]
    assert first["notebooks"]["01_x.ipynb"] != second["notebooks"]["01_x.ipynb"]
    assert first["version"] != second["version"]


def test_older_copies_are_found_and_a_fresh_copy_never_overwrites(built, tmp_path):
    _, old = built({"00_start_here.ipynb": "start", "01_x.ipynb": "one"}, "a")
    workspace = tmp_path / "learner"
    workspace.mkdir()
    for name in ("00_start_here.ipynb", "01_x.ipynb"):  # the learner saved both under release a
        (workspace / name).write_bytes((old / name).read_bytes())
    built({"00_start_here.ipynb": "start", "01_x.ipynb": "one, corrected"}, "b")
    older = release.outdated_notebooks(workspace)
    assert [item["path"] for item in older] == ["01_x.ipynb"]
    mine = (workspace / "01_x.ipynb").read_bytes()
    first = release.save_new_version("01_x.ipynb", workspace)
    second = release.save_new_version("01_x.ipynb", workspace)
    assert (first, second) == ("01_x (new version).ipynb", "01_x (new version 2).ipynb")
    assert (workspace / "01_x.ipynb").read_bytes() == mine
    fresh = json.loads((workspace / first).read_text())
    assert fresh["cells"][0]["source"] == "one, corrected"
    # A fresh copy is current, so it is never reported as older.
    assert [item["path"] for item in release.outdated_notebooks(workspace)] == ["01_x.ipynb"]


def test_unreadable_or_unstamped_notebooks_are_not_reported(built, tmp_path):
    built({"01_x.ipynb": "one"}, "a")
    workspace = tmp_path / "learner"
    write_notebook(workspace / "01_x.ipynb", "a local copy with no release stamp")
    (workspace / "02_y.ipynb").write_text("{ not json")
    assert release.outdated_notebooks(workspace) == []


def test_a_checkout_that_was_never_built_has_no_release(monkeypatch, tmp_path):
    monkeypatch.setattr(release, "release_dir", lambda: tmp_path / "missing")
    assert release.manifest() is None
    assert release.outdated_notebooks(tmp_path) == []


def test_views_offer_the_new_version_and_remember_keeping_mine(built, tmp_path, monkeypatch):
    from engine.ui import release_view

    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    _, old = built({"01_x.ipynb": "one"}, "a")
    workspace = tmp_path / "learner"
    workspace.mkdir()
    (workspace / "01_x.ipynb").write_bytes((old / "01_x.ipynb").read_bytes())
    manifest, _ = built({"01_x.ipynb": "one, corrected"}, "b")
    panel = release_view.course_release(workspace)
    assert manifest["version"] in panel.children[0].value and "1 of your notebooks is older" in panel.children[0].value
    row = panel.children[1]
    fresh_button = row.children[1].children[0]
    fresh_button.click()
    assert (workspace / "01_x (new version).ipynb").exists()
    assert "unchanged" in row.children[2].value
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    assert release_view.announce(workspace) is not None   # still older: the learner has not chosen
    keep_button = release_view.announce(workspace).children[1].children[1].children[1]
    keep_button.click()
    assert release_view.announce(workspace) is None        # kept: no more notice for this release
    built({"01_x.ipynb": "one, corrected again"}, "c")
    assert release_view.announce(workspace) is not None    # a newer release asks again
