"""Exported progress files (checksum, learner) and the instructors' report over a folder of them."""

import base64
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exercises.core import export, progress, report
from exercises.core.registry import all_exercises, all_questions, notebooks_with_skip_ahead

ROOT = Path(__file__).resolve().parents[1]
N_EXERCISES = len(all_exercises())
N_ROWS = N_EXERCISES + len(all_questions()) + len(notebooks_with_skip_ahead())  # per learner


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(path))
    progress.notices()
    return path


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "collected"
    path.mkdir()
    return path


def learner_export(name, passed=(), attempted=(), revealed=(), hints=None, now=None):
    """An export of a fresh record, as the learner's browser would write it."""
    progress.Progress().save()   # a fresh record, with no learner yet
    for ex_id in attempted:
        progress.record_check(ex_id, False, "values")
    for ex_id in revealed:
        progress.record_check(ex_id, False, "values")
        progress.record_reveal(ex_id)
    for ex_id in passed:
        progress.record_check(ex_id, True, "pass")
    for ex_id, level in (hints or {}).items():
        progress.record_hint(ex_id, level)
    text = progress.export_text(learner=name)
    if now is not None:  # the same export made at another time
        data = json.loads(text)
        data.pop("export")
        text = json.dumps(export.seal(data, now=now), indent=1, sort_keys=True)
    return text


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def skipped(rep):
    return dict(rep.skipped)


# ---------------------------------------------------------------- the export file

def test_export_carries_learner_course_time_and_a_valid_checksum():
    progress.record_check("row-mean", True, "pass")
    data = json.loads(progress.export_text(learner="  Ada   Lovelace "))
    assert data["learner"]["name"] == "Ada Lovelace" and len(data["learner"]["id"]) == 12
    block = data["export"]
    assert block["course"] == export.COURSE_ID and block["version"] == progress.VERSION
    assert block["exported_at"].endswith("Z") and block["checksum"].startswith("sha256:")
    assert export.verify(data) == export.OK
    data["exercises"]["row-mean"]["attempts"] = 7
    assert export.verify(data) == export.MISMATCH
    del data["export"]["checksum"]
    assert export.verify(data) == export.MISSING


def test_name_and_id_are_kept_for_the_next_export_and_survive_reset():
    first = json.loads(progress.export_text(learner="s1234"))
    progress.reset()
    again = json.loads(progress.export_text())  # no name given: the stored one
    assert again["learner"] == first["learner"]
    blank = json.loads(progress.export_text(learner=""))
    assert blank["learner"]["name"] == "" and blank["learner"]["id"] == first["learner"]["id"]
    assert export.display_name(blank) == "anonymous-" + first["learner"]["id"]


def test_import_accepts_own_export_and_old_files_but_not_edited_ones():
    progress.record_check("row-mean", True, "pass")
    text = progress.export_text(learner="Ada")
    progress.reset()
    progress.import_text(text)
    assert progress.exercise_entry("row-mean")["passed"]
    assert "export" not in progress.load().data
    assert progress.notices() == []
    old = progress.empty_record()  # an export from before checksums
    old["exercises"]["stable-softmax"] = {"attempts": 2}
    progress.import_text(json.dumps(old))
    assert progress.exercise_entry("stable-softmax")["attempts"] == 2
    assert any("no checksum" in n for n in progress.notices())
    edited = json.loads(text)
    edited["exercises"]["row-mean"]["attempts"] = 99
    with pytest.raises(ValueError, match="checksum"):
        progress.import_text(json.dumps(edited))
    progress.import_text(text, replace=True)
    assert progress.learner()["name"] == "Ada"


# ---------------------------------------------------------------- the report

def test_good_files_give_one_row_per_learner_and_exercise(folder):
    (folder / "ada.json").write_text(learner_export("Ada", passed=["row-mean"], hints={"row-mean": 2},
                                                    attempted=["layer-norm"]))
    (folder / "bob.json").write_text(learner_export("Bob", revealed=["stable-softmax"],
                                                    passed=["stable-softmax", "row-mean"]))
    rep = report.build(folder)
    assert rep.skipped == [] and rep.notes == []
    assert [e.learner for e in rep.exports] == ["Ada", "Bob"]
    rows = csv_rows(report.csv_text(rep))
    assert list(rows[0]) == report.CSV_COLUMNS
    assert len(rows) == 2 * N_ROWS
    by = {(r["learner"], r["item"]): r for r in rows if r["kind"] == "exercise"}
    assert by["Ada", "row-mean"]["status"] == "passed" and by["Ada", "row-mean"]["hints_used"] == "2"
    assert by["Ada", "layer-norm"]["status"] == "attempted" and by["Ada", "layer-norm"]["attempts"] == "1"
    assert by["Ada", "swiglu"]["status"] == "not started" and by["Ada", "swiglu"]["attempts"] == "0"
    assert by["Bob", "stable-softmax"]["status"] == "passed after the solution"
    assert by["Bob", "stable-softmax"]["solution_revealed"] == "yes"
    assert by["Ada", "row-mean"]["solution_revealed"] == "no"
    assert {r["notebook"] for r in rows} >= {"00_start_here", "03_norms_and_residuals"}
    text = report.summary_text(rep)
    assert "2 learners, 0 files skipped" in text
    assert "00 row-mean" in text and "2 of 2" in text
    line = [ln for ln in text.splitlines() if "00 stable-softmax" in ln][0]
    assert line.split()[2:6] == ["1", "of", "2", "1"]  # passed (after the solution: 1 of them)


@pytest.mark.parametrize("name, content, reason", [
    ("truncated.json", None, "not valid JSON"),
    ("garbage.json", b"{not json at all", "not valid JSON"),
    ("binary.json", b"\xff\xfe\x00\x01", "not valid JSON"),
    ("list.json", b"[1, 2, 3]", "not a progress file of this course"),
    ("other.json", b'{"cells": [], "nbformat": 4}', "not a progress file of this course"),
    ("damaged.json", b'{"format": "transformer-course-progress", "version": 1, "exercises": [],'
                     b' "questions": {}}', "missing or damaged parts"),
    ("wrongkind.json", b'{"format": "transformer-course-progress", "version": 1, "exercises":'
                       b' {"row-mean": {"attempts": "many"}}, "questions": {}}', "wrong kind"),
    ("future.json", b'{"format": "transformer-course-progress", "version": 9, "exercises": {},'
                    b' "questions": {}}', "newer version"),
])
def test_corrupt_files_are_skipped_with_the_reason_and_the_rest_reported(folder, name, content, reason):
    good = learner_export("Ada", passed=["row-mean"])
    (folder / "ada.json").write_text(good)
    (folder / name).write_bytes(content if content is not None else good[: len(good) // 2].encode())
    rep = report.build(folder)
    assert [e.learner for e in rep.exports] == ["Ada"]
    assert reason in skipped(rep)[name]
    assert f"{name}: " in report.summary_text(rep)


def test_checksum_mismatch_is_skipped(folder):
    data = json.loads(learner_export("Ada", attempted=["row-mean"]))
    data["exercises"]["row-mean"]["passed"] = True  # an "accidental" edit
    (folder / "ada.json").write_text(json.dumps(data, indent=1))
    data = json.loads(learner_export("Bob"))
    data["learner"]["name"] = "Carol"
    (folder / "bob.json").write_text(json.dumps(data))
    data = json.loads(learner_export("Dan"))
    data["export"]["course"] = "another-course"
    data["export"]["checksum"] = export.checksum(data)
    (folder / "dan.json").write_text(json.dumps(data))
    rep = report.build(folder)
    assert rep.exports == []
    assert "checksum does not match" in skipped(rep)["ada.json"]
    assert "checksum does not match" in skipped(rep)["bob.json"]
    assert "another course" in skipped(rep)["dan.json"]


def test_empty_folder(folder):
    rep = report.build(folder)
    assert rep.exports == [] and rep.skipped == []
    assert report.csv_text(rep) == ",".join(report.CSV_COLUMNS) + "\n"
    assert "folder is empty" in report.summary_text(rep)


def test_duplicates_keep_the_newest_export_and_skip_identical_copies(folder):
    old = learner_export("Ada Lovelace", attempted=["row-mean"], now="2026-03-01T10:00:00Z")
    new = learner_export("ada  lovelace", passed=["row-mean"], now="2026-03-02T09:00:00Z")
    (folder / "z-old.json").write_text(old)
    (folder / "a-new.json").write_text(new)
    (folder / "a-new (1).json").write_text(new)  # the same download twice
    rep = report.build(folder)
    assert [e.path.name for e in rep.exports] in (["a-new (1).json"], ["a-new.json"])
    kept = rep.exports[0].path.name
    other = ({"a-new.json", "a-new (1).json"} - {kept}).pop()
    reasons = skipped(rep)
    assert reasons[other] == f"duplicate: identical to {kept}"
    assert "older export" in reasons["z-old.json"] and kept in reasons["z-old.json"]
    assert "another browser" in reasons["z-old.json"]  # two separate records, same name
    rows = csv_rows(report.csv_text(rep))
    assert {r["status"] for r in rows if r["item"] == "row-mean"} == {"passed"}


def test_anonymous_exports_are_told_apart_and_matched_to_their_browser(folder):
    progress.record_check("row-mean", False, "values")
    early = json.loads(progress.export_text(learner=""))
    early.pop("export")
    (folder / "early.json").write_text(json.dumps(export.seal(early, now="2026-01-01T00:00:00Z")))
    progress.record_check("row-mean", True, "pass")
    (folder / "named.json").write_text(progress.export_text(learner="Ada"))  # same browser
    (folder / "someone.json").write_text(learner_export(""))  # another browser, no name
    rep = report.build(folder)
    learners = [e.learner for e in rep.exports]
    assert "Ada" in learners and len(learners) == 2
    assert [n for n in learners if n != "Ada"][0].startswith("anonymous-")
    assert "older export of learner 'Ada'" in skipped(rep)["early.json"]
    late = json.loads((folder / "named.json").read_text())  # Ada's browser, later, no name
    late.pop("export")
    late["learner"]["name"] = ""
    (folder / "late.json").write_text(json.dumps(export.seal(late, now="2099-01-01T00:00:00Z")))
    rep = report.build(folder)
    assert "Ada" in [e.learner for e in rep.exports]
    assert [e.path.name for e in rep.exports if e.learner == "Ada"] == ["late.json"]
    assert "named.json" in skipped(rep)


def test_foreign_files_are_listed_as_skipped(folder):
    (folder / "ada.json").write_text(learner_export("Ada"))
    (folder / "notes.txt").write_text("remember to grade")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (folder / "sub").mkdir()
    (folder / "sub" / "bob.json").write_text(learner_export("Bob"))
    rep = report.build(folder)
    assert [e.learner for e in rep.exports] == ["Ada"]
    reasons = skipped(rep)
    for name in ("notes.txt", "photo.png", ".DS_Store"):
        assert reasons[name] == "not a progress export"
    assert "folder" in reasons["sub/"]


def test_old_exports_without_checksum_are_used_and_named(folder):
    old = progress.empty_record()
    old["exercises"]["row-mean"] = {"attempts": 3, "passed": True, "passed_after_solution": False,
                                    "hints": 1}
    (folder / "course-progress.json").write_text(json.dumps(old, indent=1, sort_keys=True))
    (folder / "ada.json").write_text(learner_export("Ada"))
    rep = report.build(folder)
    assert rep.skipped == []
    assert [e.learner for e in rep.exports] == ["(no name) course-progress.json", "Ada"]
    assert [e.checked for e in rep.exports] == [False, True]
    assert any("no checksum" in n and "course-progress.json" in n for n in rep.notes)
    rows = csv_rows(report.csv_text(rep))
    row = [r for r in rows if r["file"] == "course-progress.json" and r["item"] == "row-mean"][0]
    assert row["status"] == "passed" and row["attempts"] == "3" and row["hints_used"] == "1"
    assert row["exported_at"] == ""
    assert "no checksum" in report.summary_text(rep)


# ---------------------------------------------------------------- the command

def run(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "exercises", "report", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_cli_end_to_end(folder, tmp_path):
    (folder / "ada.json").write_text(learner_export("Ada", passed=["row-mean"]))
    (folder / "bob.json").write_text(learner_export("Bob", attempted=["layer-norm"]))
    (folder / "broken.json").write_text("{")
    out = tmp_path / "out" / "class.csv"
    out.parent.mkdir()
    done = run(str(folder), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "2 learners, 1 file skipped" in done.stdout and "broken.json" in done.stdout
    assert "Per learner" in done.stdout and "Per exercise" in done.stdout
    assert f"written to {out}" in done.stdout
    rows = csv_rows(out.read_text())
    assert len(rows) == 2 * N_ROWS

    # default CSV name, in the current folder; a CSV written into the folder is not read back
    done = run("collected", "--csv", "collected/report.csv", cwd=tmp_path)
    again = run("collected", "--csv", "collected/report.csv", "--force", cwd=tmp_path)
    assert done.returncode == again.returncode == 0
    assert "report.csv" not in again.stdout.split("CSV (")[0]
    done = run("collected", cwd=tmp_path)
    assert (tmp_path / report.DEFAULT_CSV).is_file()

    # CSV on standard output, summary on standard error
    done = run(str(folder), "--csv", "-", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(",".join(report.CSV_COLUMNS))
    assert "2 learners" in done.stderr


def test_cli_empty_and_missing_folder(folder, tmp_path):
    out = tmp_path / "empty.csv"
    done = run(str(folder), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 0
    assert "folder is empty" in done.stdout
    assert out.read_text() == ",".join(report.CSV_COLUMNS) + "\n"
    done = run(str(tmp_path / "nowhere"), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 2 and "not a folder" in done.stderr


# ---------------------------------------------------------------- from the progress view

def test_progress_view_export_is_accepted_by_the_report(folder):
    from exercises.ui.progress_view import progress_view

    progress.record_check("row-mean", True, "pass")
    progress.record_hint("stable-softmax", 1)
    view = progress_view()
    assert "course-progress-learner" in view.name._dom_classes
    view.name.value = "Grace H. (s42)"
    view.export_button.click()
    file_name = view.link.value.split('download="')[1].split('"')[0]
    assert file_name.startswith("course-progress-grace-h-s42-") and file_name.endswith(".json")
    payload = view.link.value.split("base64,")[1].split('"')[0]
    (folder / file_name).write_bytes(base64.b64decode(payload))
    assert "Exported as Grace H. (s42)" in view.message.value

    rep = report.build(folder)
    assert rep.skipped == [] and rep.notes == []
    assert [e.learner for e in rep.exports] == ["Grace H. (s42)"] and rep.exports[0].checked
    by = {r["item"]: r for r in csv_rows(report.csv_text(rep)) if r["kind"] == "exercise"}
    assert by["row-mean"]["status"] == "passed" and by["stable-softmax"]["hints_used"] == "1"

    assert progress_view().name.value == "Grace H. (s42)"  # remembered
    view.name.value = ""
    view.export_button.click()
    assert "no name" in view.message.value and "anonymous-" in view.message.value
