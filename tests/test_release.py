"""Releases: notebooks stamped at build time, older copies found, fresh copies written beside them."""

import hashlib
import io
import json
import os
import zipfile

import pytest

from engine.core import release, site_files
from tools import release as stamping
from tools.serve import content_hashed

REAL_FETCH = site_files.fetch


def write_notebook(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook = {"cells": [{"cell_type": "markdown", "id": "a1", "metadata": {}, "source": text}],
                "metadata": {"kernelspec": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


@pytest.fixture
def site(monkeypatch):
    """{name: bytes} the course site serves beside the wheel, which the kernel's fetch answers
    from (engine.core.site_files.fetch, as in the browser: an OSError for a file it lacks)."""
    served = {}

    def fetch(name):
        if name not in served:
            raise OSError(f"the site answered 404 Not Found for {name}")
        return served[name]
    monkeypatch.setattr(site_files, "fetch", fetch)
    return served


@pytest.fixture
def built(tmp_path, monkeypatch, site):
    """build(texts) -> a staged release of notebooks with those texts, installed as the running one:
    its release folder as the site build writes it into the wheel, its zip of notebooks served."""
    def build(texts, name):
        content = tmp_path / f"content-{name}"
        for path, text in texts.items():
            write_notebook(content / path, text)
        staged = tmp_path / f"staged-{name}"
        manifest = stamping.stage_contents(content, staged)
        archive, data = stamping.notebooks_archive(manifest, staged)
        site[archive] = data
        release_dir = tmp_path / f"release-{name}"
        for wheel_path, data in stamping.wheel_files(manifest, staged, archive).items():
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
    running = release.manifest()
    assert {k: v for k, v in running.items() if k != release.ARCHIVE} == manifest
    assert running[release.ARCHIVE].startswith("release-notebooks-")


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


def test_the_notebooks_zip_is_the_same_bytes_for_the_same_notebooks_and_named_by_their_hash(built, tmp_path):
    manifest, staged = built({"sub/01_x.ipynb": "one", "00_start_here.ipynb": "start"}, "a")
    name, data = stamping.notebooks_archive(manifest, staged)
    assert (name, data) == stamping.notebooks_archive(manifest, staged)
    assert name == f"release-notebooks-{hashlib.sha256(data).hexdigest()[:12]}.zip"
    assert content_hashed(name)                    # served immutable, kept over a rebuild like the wheel
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["00_start_here.ipynb", "sub/01_x.ipynb"]
        assert {(e.date_time, e.external_attr >> 16) for e in archive.infolist()} == {((2026, 1, 1, 0, 0, 0), 0o644)}
        assert archive.read("sub/01_x.ipynb") == (staged / "sub/01_x.ipynb").read_bytes()
    os.utime(staged / "sub/01_x.ipynb", (0, 0))    # a file's own time never reaches the zip
    assert stamping.notebooks_archive(manifest, staged)[1] == data
    changed, staged_b = built({"sub/01_x.ipynb": "one, corrected", "00_start_here.ipynb": "start"}, "b")
    assert stamping.notebooks_archive(changed, staged_b)[0] != name


def test_a_fresh_copy_comes_from_the_served_zip_and_the_wheel_holds_no_notebook(built, site, tmp_path,
                                                                                 monkeypatch):
    manifest, staged = built({"01_x.ipynb": "one"}, "a")
    assert not (release.release_dir() / "notebooks").exists()
    fetched = []
    serve = site_files.fetch
    monkeypatch.setattr(site_files, "fetch", lambda name: fetched.append(name) or serve(name))
    workspace = tmp_path / "learner"
    workspace.mkdir()
    assert release.save_new_version("01_x.ipynb", workspace) == "01_x (new version).ipynb"
    assert fetched == [release.manifest()[release.ARCHIVE]]
    assert (workspace / "01_x (new version).ipynb").read_bytes() == (staged / "01_x.ipynb").read_bytes()


def test_a_release_folder_holding_the_notebooks_is_read_without_fetching(built, site, tmp_path):
    """A release folder with the notebooks themselves (a checkout, the layout of earlier builds)."""
    built({"01_x.ipynb": "one"}, "a")
    site.clear()                                    # nothing served: a fetch would fail
    write_notebook(release.release_dir() / "notebooks" / "01_x.ipynb", "one, from the folder")
    workspace = tmp_path / "learner"
    workspace.mkdir()
    new = release.save_new_version("01_x.ipynb", workspace)
    assert json.loads((workspace / new).read_text())["cells"][0]["source"] == "one, from the folder"


def test_a_failed_fetch_gives_the_words_and_writes_nothing(built, site, tmp_path):
    built({"01_x.ipynb": "one"}, "a")
    site.clear()                                    # the site lost the zip (or is unreachable)
    workspace = tmp_path / "learner"
    workspace.mkdir()
    with pytest.raises(OSError) as raised:
        release.save_new_version("01_x.ipynb", workspace)
    assert str(raised.value) == ("the course site did not send this release's notebooks: the site answered "
                                 f"404 Not Found for {release.manifest()[release.ARCHIVE]}")
    assert list(workspace.iterdir()) == []


def test_outside_the_browser_the_real_fetch_gives_the_words(built, monkeypatch, tmp_path):
    built({"01_x.ipynb": "one"}, "a")
    monkeypatch.setattr(site_files, "fetch", REAL_FETCH)
    with pytest.raises(OSError, match="^the course site did not send this release's notebooks: only the course "
                       r"site's kernel \(in the browser\) can fetch the site's files$"):
        release.save_new_version("01_x.ipynb", tmp_path)


@pytest.mark.parametrize("served", [b"not a zip at all", "a zip without it"])
def test_a_zip_without_the_notebook_gives_the_words(built, site, tmp_path, served):
    built({"01_x.ipynb": "one"}, "a")
    name = release.manifest()[release.ARCHIVE]
    if served == "a zip without it":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("02_y.ipynb", "{}")
        served = buffer.getvalue()
    site[name] = served
    with pytest.raises(OSError, match=f"^the notebooks the course site sent \\({name}\\) do not hold a readable "
                       "01_x.ipynb: reload the page and try again.$"):
        release.save_new_version("01_x.ipynb", tmp_path)
    assert list(tmp_path.glob("01_x*")) == []


def test_the_view_shows_why_no_fresh_copy_was_written(built, site, tmp_path, monkeypatch):
    from engine.ui import release_view

    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    _, old = built({"01_x.ipynb": "one"}, "a")
    workspace = tmp_path / "learner"
    workspace.mkdir()
    (workspace / "01_x.ipynb").write_bytes((old / "01_x.ipynb").read_bytes())
    built({"01_x.ipynb": "one, corrected"}, "b")
    site.clear()
    row = release_view.course_release(workspace).children[1]
    row.children[1].children[0].click()
    assert "Could not write the new version (the course site did not send this release&#x27;s notebooks: " \
           "the site answered 404 Not Found" in row.children[2].value
    assert not row.children[1].children[0].disabled          # the learner may try again
    assert sorted(p.name for p in workspace.iterdir()) == ["01_x.ipynb"]


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
