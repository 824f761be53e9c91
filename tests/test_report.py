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

from engine.core import export, progress
from engine.report import report
from engine.core.registry import all_exercises, all_questions, notebooks_with_skip_ahead

ROOT = Path(__file__).resolve().parents[1]
N_EXERCISES = len(all_exercises())
N_ROWS = N_EXERCISES + len(all_questions()) + len(notebooks_with_skip_ahead())  # per learner
HEADER = ",".join(f'"{c}"' for c in report.CSV_COLUMNS) + "\n"


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
    assert block["course"] == export.course_id() and block["version"] == progress.VERSION
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
                                                    attempted=["layer-norm-fix"]))
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
    assert by["Ada", "layer-norm-fix"]["status"] == "attempted" and by["Ada", "layer-norm-fix"]["attempts"] == "1"
    assert by["Ada", "swiglu"]["status"] == "not started" and by["Ada", "swiglu"]["attempts"] == "0"
    assert by["Bob", "stable-softmax"]["status"] == "passed after the solution"
    assert by["Bob", "stable-softmax"]["solution_revealed"] == "yes"
    assert by["Ada", "row-mean"]["solution_revealed"] == "no"
    assert {r["notebook"] for r in rows} >= {"00_start_here", "03_norms_and_residuals"}
    text = report.summary_text(rep)
    assert "2 learners, 0 files not used" in text
    assert "00 row-mean" in text and "2 of 2" in text
    line = [ln for ln in text.splitlines() if "00 stable-softmax" in ln][0]
    assert line.split()[2:6] == ["1", "of", "2", "1"]  # passed (after the solution: 1 of them)


def test_a_skip_ahead_set_passed_now_or_in_an_earlier_release_counts_its_notebook_done(folder):
    """A set passed in this release (the file's "skip_ahead" section) or in an earlier one (its
    "test_out" section, as those releases wrote it) gives the same rows."""
    from engine.core import skip_ahead

    skip_ahead.record_attempt("01_positional_encoding", 4, 4)
    now = json.loads(progress.export_text(learner="Ada"))
    assert "skip_ahead" in now and "test_out" not in now
    earlier = {k: v for k, v in now.items() if k not in ("export", "skip_ahead")}
    earlier["test_out"] = now["skip_ahead"]
    (folder / "ada.json").write_text(json.dumps(now))
    (folder / "bob.json").write_text(json.dumps(export.seal({**earlier, "learner": {"name": "Bob", "id": "b0b"}})))
    rep = report.build(folder)
    assert rep.skipped == [] and [e.checked for e in rep.exports] == [True, True]
    rows = csv_rows(report.csv_text(rep))
    for learner in ("Ada", "Bob"):
        mine = [r for r in rows if r["learner"] == learner and r["notebook"] == "01_positional_encoding"]
        [row] = [r for r in mine if r["kind"] == "skip-ahead"]
        assert row["item"] == "skip-ahead" and row["status"] == "passed" and row["attempts"] == "1"
        assert {r["status"] for r in mine if r["kind"] == "exercise"} == {"skipped ahead"}
        assert len({r["skipped_ahead"] for r in mine}) == 1 and mine[0]["skipped_ahead"][:2] == "20"
    assert "Skip-ahead sets (learners" in report.summary_text(rep)


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
    assert report.csv_text(rep) == HEADER
    assert "folder is empty" in report.summary_text(rep)


def test_one_browsers_exports_keep_the_newest_and_identical_copies_are_skipped(folder):
    progress.record_check("row-mean", False, "values")
    old = json.loads(progress.export_text(learner="Ada Lovelace"))
    old.pop("export")
    (folder / "z-old.json").write_text(json.dumps(export.seal(old, now="2026-03-01T10:00:00Z")))
    progress.record_check("row-mean", True, "pass")
    new = json.loads(progress.export_text(learner="ada  lovelace"))   # the same browser, later
    new.pop("export")
    text = json.dumps(export.seal(new, now="2026-03-02T09:00:00Z"))
    (folder / "a-new.json").write_text(text)
    (folder / "a-new (1).json").write_text(text)  # the same download twice
    rep = report.build(folder)
    assert [e.path.name for e in rep.exports] in (["a-new (1).json"], ["a-new.json"])
    kept = rep.exports[0].path.name
    other = ({"a-new.json", "a-new (1).json"} - {kept}).pop()
    reasons = skipped(rep)
    assert reasons[other] == f"duplicate: identical to {kept}"
    assert "older export of learner 'ada lovelace'" in reasons["z-old.json"] and kept in reasons["z-old.json"]
    assert rep.conflicts == []
    assert rep.exports[0].flags == ["older exports not used: z-old.json"]
    rows = csv_rows(report.csv_text(rep))
    assert {r["status"] for r in rows if r["item"] == "row-mean"} == {"passed"}
    assert {r["flags"] for r in rows} == {"older exports not used: z-old.json"}


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
    return subprocess.run([sys.executable, "-m", "engine", "report", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_cli_end_to_end(folder, tmp_path):
    (folder / "ada.json").write_text(learner_export("Ada", passed=["row-mean"]))
    (folder / "bob.json").write_text(learner_export("Bob", attempted=["layer-norm-fix"]))
    (folder / "broken.json").write_text("{")
    out = tmp_path / "out" / "class.csv"
    out.parent.mkdir()
    done = run(str(folder), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "2 learners, 1 file not used" in done.stdout and "broken.json" in done.stdout
    assert "Per learner" in done.stdout and "Per exercise" in done.stdout
    assert f"Written: {out} ({2 * N_ROWS} rows, one per learner and item)" in done.stdout
    rows = csv_rows(out.read_text())
    assert len(rows) == 2 * N_ROWS
    book = csv_rows((out.parent / "class-gradebook.csv").read_text())
    assert [r["learner"] for r in book] == ["Ada", "Bob"]
    files = csv_rows((out.parent / "class-files.csv").read_text())
    assert [(r["file"], r["outcome"]) for r in files] == [("ada.json", "used"), ("bob.json", "used"),
                                                          ("broken.json", "skipped")]

    # default CSV name, in the current folder; a CSV written into the folder is not read back
    done = run("collected", "--csv", "collected/report.csv", cwd=tmp_path)
    again = run("collected", "--csv", "collected/report.csv", "--force", cwd=tmp_path)
    assert done.returncode == again.returncode == 0
    assert "report.csv" not in again.stdout.split("Written:")[0]   # its own outputs are not read back
    assert "report-files.csv" not in again.stdout.split("Written:")[0]
    done = run("collected", cwd=tmp_path)
    assert (tmp_path / report.DEFAULT_CSV).is_file()
    assert (tmp_path / "progress-report-gradebook.csv").is_file()

    # CSV on standard output, summary on standard error
    done = run(str(folder), "--csv", "-", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(HEADER)
    assert "2 learners" in done.stderr


def test_cli_empty_and_missing_folder(folder, tmp_path):
    out = tmp_path / "empty.csv"
    done = run(str(folder), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 0
    assert "folder is empty" in done.stdout
    assert out.read_text() == HEADER
    done = run(str(tmp_path / "nowhere"), "--csv", str(out), cwd=tmp_path)
    assert done.returncode == 2 and "not a folder" in done.stderr


# ---------------------------------------------------------------- from the progress view

def test_progress_view_export_is_accepted_by_the_report(folder):
    from engine.ui.progress_view import progress_view

    progress.record_check("row-mean", True, "pass")
    progress.record_hint("stable-softmax", 1)
    view = progress_view()
    assert "course-progress-learner" in view.name._dom_classes
    view.name.value = "Grace H. (s42)"
    view.export_button.click()
    file_name = view.link.value.split('download="')[1].split('"')[0]
    ident = progress.learner()["id"]
    assert file_name.startswith(f"course-progress-grace-h-s42-{ident}-") and file_name.endswith(".json")
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


# ---------------------------------------------------------------- who is who: the browser's id

def sealed_record(name, ident, passed=(), now="2026-03-01T10:00:00Z"):
    """An export as a browser with id ``ident`` writes it (``ident`` None: a file from before ids)."""
    record = progress.empty_record()
    record["exercises"] = {ex: {"attempts": 1, "passed": True} for ex in passed}
    record["learner"] = {"name": name, "id": ident}
    data = export.seal(record, now=now)
    if ident is None:
        del data["learner"]["id"]
        data["export"]["checksum"] = export.checksum(data)
    return json.dumps(data)


EIGHT = [ex.id for ex in all_exercises()][:8]


def test_one_name_from_two_browsers_is_two_learners_flagged_as_a_conflict(folder):
    (folder / "li-1.json").write_text(sealed_record("Li Wei", "111111111111", passed=EIGHT[:3]))
    (folder / "li-2.json").write_text(sealed_record("li  wei", "222222222222", passed=EIGHT[:1],
                                                    now="2026-03-05T10:00:00Z"))
    rep = report.build(folder)
    assert sorted(e.ident for e in rep.exports) == ["111111111111", "222222222222"]
    assert rep.skipped == []
    assert [sorted(e.ident for e in group) for group in rep.conflicts] == [["111111111111", "222222222222"]]
    book = csv_rows(report.gradebook_text(rep))
    # all-digit ids (made before ids began with a letter) start with ' in the default CSV
    assert sorted((r["learner_id"], r["exercises_passed"]) for r in book) == [("'111111111111", "3"),
                                                                                ("'222222222222", "1")]
    assert all(r["flags"].startswith("name conflict: 2 learners exported as") for r in book)
    assert "Name conflicts" in report.summary_text(rep)
    assert "Li Wei [11111111]" in report.summary_text(rep)


def test_a_forged_export_with_a_classmates_name_does_not_replace_the_classmate(folder):
    (folder / "ada.json").write_text(sealed_record("Ada Lovelace", "aaaaaaaaaaaa", passed=EIGHT))
    (folder / "forged.json").write_text(sealed_record("Ada Lovelace", "ffffffffffff",
                                                      now="2026-03-09T23:59:59Z"))
    rep = report.build(folder)
    book = {r["learner_id"]: r for r in csv_rows(report.gradebook_text(rep))}
    assert book["aaaaaaaaaaaa"]["exercises_passed"] == "8"
    assert book["ffffffffffff"]["exercises_passed"] == "0"
    assert "name conflict" in book["aaaaaaaaaaaa"]["flags"] and "name conflict" in book["ffffffffffff"]["flags"]


def test_every_file_not_used_is_in_the_files_csv_and_in_its_learners_flags(folder):
    (folder / "ada-1.json").write_text(sealed_record("Ada", "aaaaaaaaaaaa", now="2026-03-01T10:00:00Z"))
    (folder / "ada-2.json").write_text(sealed_record("Ada L.", "aaaaaaaaaaaa", passed=EIGHT[:2],
                                                     now="2026-03-02T10:00:00Z"))
    (folder / "ada-2 (1).json").write_bytes((folder / "ada-2.json").read_bytes())
    (folder / "notes.txt").write_text("grade by Friday")
    rep = report.build(folder)
    files = {r["file"]: r for r in csv_rows(report.files_text(rep))}
    assert sorted(files) == ["ada-1.json", "ada-2 (1).json", "ada-2.json", "notes.txt"]
    assert files["ada-1.json"]["outcome"] == "superseded" and files["ada-1.json"]["learner_id"] == "aaaaaaaaaaaa"
    assert sorted(files[n]["outcome"] for n in ("ada-2.json", "ada-2 (1).json")) == ["duplicate", "used"]
    assert files["notes.txt"]["outcome"] == "skipped" and files["notes.txt"]["reason"] == "not a progress export"
    used = [f for f in files.values() if f["outcome"] == "used"]
    assert len(used) == 1 and used[0]["learner"] == "Ada L."
    (book,) = csv_rows(report.gradebook_text(rep))
    assert "older exports not used: ada-1.json" in book["flags"] and book["file"] == used[0]["file"]
    assert "also exported as 'Ada' from this browser" in book["flags"]
    assert {r["flags"] for r in csv_rows(report.csv_text(rep))} == {book["flags"]}


def test_names_are_nfc_normalised_so_two_spellings_are_one_name(folder):
    assert export.clean_name("Zoe\u0301  Wu") == "Zo\u00e9 Wu"
    (folder / "old-nfd.json").write_text(sealed_record("Zoe\u0301", None, now="2026-03-01T10:00:00Z"))
    (folder / "old-nfc.json").write_text(sealed_record("Zo\u00e9", None, passed=EIGHT[:1],
                                                       now="2026-03-02T10:00:00Z"))
    rep = report.build(folder)
    assert [e.learner for e in rep.exports] == ["Zo\u00e9"]      # one learner, as before ids
    assert "superseded" in skipped(rep)["old-nfd.json"]
    assert "no browser id" in rep.exports[0].flags[0]
    rows = csv_rows(report.csv_text(rep))
    assert {r["learner"] for r in rows} == {"Zo\u00e9"}


def test_old_exports_without_an_id_are_keyed_by_name_and_never_replace_a_learner_with_one(folder):
    (folder / "new.json").write_text(sealed_record("Ada", "aaaaaaaaaaaa", passed=EIGHT))
    (folder / "old.json").write_text(sealed_record("ADA", None, now="2026-03-09T10:00:00Z"))
    rep = report.build(folder)
    assert sorted((e.ident, e.path.name) for e in rep.exports) == [("", "old.json"), ("aaaaaaaaaaaa", "new.json")]
    flags = {e.path.name: e.flags for e in rep.exports}
    assert any("no browser id" in f for f in flags["old.json"])
    assert all(any("name conflict" in f for f in fl) for fl in flags.values())


def test_the_gradebook_has_one_row_per_learner_and_the_long_tables_statuses(folder):
    (folder / "ada.json").write_text(learner_export("Ada", passed=["row-mean"], attempted=["layer-norm-fix"]))
    (folder / "bob.json").write_text(learner_export("Bob", revealed=["stable-softmax"]))
    rep = report.build(folder)
    header = report.gradebook_columns()
    book = csv_rows(report.gradebook_text(rep))
    assert list(book[0]) == header and len(header) == len(report.GRADEBOOK_FIRST) + N_ROWS
    long = csv_rows(report.csv_text(rep))
    for row in book:
        mine = [r for r in long if r["learner_id"] == row["learner_id"]]
        assert [row[c] for c in header[len(report.GRADEBOOK_FIRST):]] == [r["status"] for r in mine]
    by = {r["learner"]: r for r in book}
    assert by["Ada"]["exercise row-mean"] == "passed" and by["Ada"]["exercise layer-norm-fix"] == "attempted"
    assert by["Ada"]["exercises_passed"] == "1" and by["Ada"]["exercises"] == str(N_EXERCISES)
    assert by["Bob"]["exercise stable-softmax"] == "attempted"


def test_excel_output_has_a_bom_and_keeps_ids_and_dates_as_text(folder, tmp_path):
    (folder / "s007.json").write_text(sealed_record("0042", "012345678901", passed=EIGHT[:1]))
    (folder / "evil.json").write_text(sealed_record('=1+1;"', "3e10aaaaaaaa"))
    done = run(str(folder), "--csv", str(tmp_path / "x.csv"), "--excel", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    raw = (tmp_path / "x.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = csv_rows(raw.decode("utf-8-sig"))
    by = {r["learner_id"]: r for r in rows}
    assert by['="012345678901"']["learner"] == '="0042"'
    assert by['="012345678901"']["exported_at"] == '="2026-03-01T10:00:00Z"'
    assert all(r["attempts"].isdigit() for r in rows)                  # counts stay numbers
    assert by['="3e10aaaaaaaa"']["learner"] == '="\'=1+1;"""'       # neutralised, then a text constant
    for name in ("x-gradebook.csv", "x-files.csv"):
        text = (tmp_path / name).read_bytes()
        assert text.startswith(b"\xef\xbb\xbf") and b'"=""0042"""' in text


def test_export_file_names_never_collide_and_carry_the_browsers_id():
    names = set()
    for name in ("李伟", "王芳", "Ли Вэй", "", "Ada", "Ada"):
        progress.Progress().save()
        data = json.loads(progress.export_text(learner=name))
        file = export.file_name(data)
        assert data["learner"]["id"] in file and file.endswith(".json")
        names.add(file)
    assert len(names) == 6
    data = export.seal({"learner": {"name": "李伟", "id": "3f9c0a1b7e42"}}, now="2026-03-01T14:05:09Z")
    assert export.file_name(data) == "course-progress-李伟-3f9c0a1b7e42-2026-03-01-1405.json"


# ---------------------------------------------------------------- failures, in one sentence

def big_folder(folder, learners=30):
    for i in range(learners):
        (folder / f"l{i}.json").write_text(sealed_record(f"Learner {i}", f"{i:012d}"))


def test_a_reader_that_stops_reading_gets_no_traceback(folder, tmp_path):
    big_folder(folder, 500)      # the CSV and the summary both overflow the pipe's 64 kB
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in (["--csv", "-"], ["--csv", str(tmp_path / "o.csv"), "--force"]):
        command = subprocess.Popen([sys.executable, "-m", "engine", "report", str(folder), *args],
                                   cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = command.stdout.readline()          # like `| head -1`: one line, then the pipe is closed
        command.stdout.close()
        error = command.stderr.read().decode()
        command.wait(timeout=120)
        assert first and "Traceback" not in error and "BrokenPipe" not in error, error
        assert command.returncode == 0


@pytest.mark.parametrize("case", ["missing folder", "a file, not a folder", "output folder missing",
                                  "output is a folder", "outputs exist", "same file twice"])
def test_every_failure_is_one_sentence(folder, tmp_path, case):
    (folder / "ada.json").write_text(learner_export("Ada"))
    (tmp_path / "exists.csv").write_text("mine\n")
    (tmp_path / "a-file").write_text("")
    args = {"missing folder": [str(tmp_path / "nowhere")],
            "a file, not a folder": [str(tmp_path / "a-file")],
            "output folder missing": [str(folder), "--csv", str(tmp_path / "no" / "such" / "x.csv")],
            "output is a folder": [str(folder), "--csv", str(tmp_path)],
            "outputs exist": [str(folder), "--csv", str(tmp_path / "exists.csv")],
            "same file twice": [str(folder), "--csv", str(tmp_path / "x.csv"), "--html", str(tmp_path / "x-files.csv")],
            }[case]
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith("."), done.stderr
    assert (tmp_path / "exists.csv").read_text() == "mine\n"


@pytest.mark.parametrize("problem, code", [(ValueError("a bug"), 2), (KeyboardInterrupt(), 130),
                                           (MemoryError(), 2)])
def test_an_unforeseen_stop_is_one_sentence(folder, tmp_path, monkeypatch, capsys, problem, code):
    from engine.report import command as report_command

    def stop(*args, **kwargs):
        raise problem

    monkeypatch.setattr(report, "build", stop)
    assert report_command.main(folder, str(tmp_path / "x.csv")) == code
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert not (tmp_path / "x.csv").exists()
