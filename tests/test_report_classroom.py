"""The report keeps every pass and every learner: a huge count never stops `report --html` (its
file is named and skipped, the rest reported); passes on retired exercises are in every output;
browser ids never turn into numbers in a spreadsheet; a learner who brought one browser's
progress into another is one learner, namesakes stay two; `--recursive` reads an LMS's folder
per learner; the dashboard prints every learner, unclipped, names whole, colours kept."""

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from engine.report import dashboard
from engine.core import export, progress
from engine.report import report, report_who
from engine.core.registry import all_exercises
from tools.browser import page_snippets

LIVE = [ex.id for ex in all_exercises()]
RETIRED = sorted(ex.id for ex in all_exercises(retired=True) if ex.retired)

# The JavaScript these tests evaluate in the page: tests/test_report_classroom.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    progress.notices()


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "collected"
    path.mkdir()
    return path


def sealed(name, ident, passed=(), now="2026-03-01T10:00:00Z", merged=None, entries=None):
    record = progress.empty_record()
    record["exercises"] = {ex: {"attempts": 1, "passed": True} for ex in passed}
    record["exercises"].update(entries or {})
    record["learner"] = {"name": name, "id": ident, **({"merged": merged} if merged else {})}
    return json.dumps(export.seal(record, now=now))


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "engine", "report", *args], cwd=cwd,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120)


def rows_of(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_a_huge_attempts_count_is_skipped_by_name_and_html_is_written(folder, tmp_path):
    (folder / "honest.json").write_text(sealed("Ada", "a1b2c3d4e5f6", passed=LIVE[:2]))
    record = progress.empty_record()
    record["exercises"] = {LIVE[0]: {"attempts": 10 ** 4000, "passed": True}}
    record["learner"] = {"name": "Huge", "id": "b1b2c3d4e5f6"}
    (folder / "huge.json").write_text(json.dumps(record))            # no checksum: used unchecked
    out = tmp_path / "out"
    out.mkdir()
    done = run(str(folder), "--csv", str(out / "r.csv"), "--html", cwd=out)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    files = {r["file"]: r for r in rows_of(out / "r-files.csv")}
    assert files["huge.json"]["outcome"] == "skipped"
    assert "'attempts' (a number of over 4,000 digits, not a count)" in files["huge.json"]["reason"]
    assert files["honest.json"]["outcome"] == "used"
    assert (out / "r.html").read_text().count("Ada") >= 1
    assert "huge.json" in done.stdout


def test_passes_on_retired_exercises_are_in_every_output(folder, tmp_path):
    assert RETIRED, "the course has retired exercises"
    kept = RETIRED[:2]
    (folder / "early.json").write_text(sealed("Early Bird", "c1b2c3d4e5f6", passed=kept))
    (folder / "late.json").write_text(sealed("Late Comer", "d1b2c3d4e5f6", passed=LIVE[:1]))
    out = tmp_path / "out"
    out.mkdir()
    done = run(str(folder), "--csv", str(out / "r.csv"), "--html", cwd=out)
    assert done.returncode == 0, done.stderr
    long = [r for r in rows_of(out / "r.csv") if r["learner"] == "Early Bird" and r["kind"] == "retired exercise"]
    assert sorted(r["item"] for r in long) == kept and all(r["status"] == "passed" for r in long)
    book = {r["learner"]: r for r in rows_of(out / "r-gradebook.csv")}
    assert book["Early Bird"]["retired_exercises_passed"] == ", ".join(kept)
    assert book["Late Comer"]["retired_exercises_passed"] == ""
    assert "Retired exercises passed" in done.stdout and f"{kept[0]} (" in done.stdout
    page = (out / "r.html").read_text()
    assert "<h2>Retired exercises</h2>" in page and kept[0] in page and "Early Bird" in page


def test_new_browser_ids_never_look_like_numbers():
    import re
    made = {export.new_learner_id() for _ in range(20_000)}
    assert all(re.fullmatch(r"[a-f][0-9a-f]{11}", i) for i in made)
    assert not [i for i in made if report_who.NUMBER_LIKE.fullmatch(i)]


@pytest.mark.parametrize("ident", ["318675e37645", "968345217633", "000000000042"])
def test_an_old_id_that_looks_like_a_number_is_text_in_the_default_csv(folder, ident):
    (folder / "one.json").write_text(sealed("Old Id", ident, passed=LIVE[:1]))
    rep = report.build(folder)
    for text in (report.csv_text(rep), report.gradebook_text(rep), report.files_text(rep)):
        ids = {r["learner_id"] for r in csv.DictReader(io.StringIO(text))}
        assert ids == {"'" + ident}, ids
    assert {r["learner_id"] for r in csv.DictReader(io.StringIO(report.gradebook_text(rep, excel=True).lstrip(
        "\ufeff")))} == {f'="{ident}"'}
    assert report.id_cell("a1b2c3d4e5f6") == "a1b2c3d4e5f6"


def test_a_learner_who_imported_another_browsers_progress_is_one_learner(folder):
    """At school (browser A) the learner passed two exercises; at home (browser B) one more, then
    imported A's export in B's progress view: B's record remembers A's id, and the report joins
    the two files into one learner with the three passes. Two namesakes with no import stay two."""
    progress.Progress().save()
    progress.record_check(LIVE[2], True, "pass")
    home = progress.Progress.load()
    home.name_learner("Sam Lee")
    home.save()
    school_text = sealed("Sam Lee", "a0a0a0a0a0a0", passed=LIVE[:2])
    progress.import_text(school_text)
    merged = progress.Progress.load().data["learner"]
    assert merged["merged"] == ["a0a0a0a0a0a0"] and merged["id"] != "a0a0a0a0a0a0"
    (folder / "school.json").write_text(school_text)
    home_text = progress.export_text()
    assert json.loads(home_text)["learner"]["merged"] == ["a0a0a0a0a0a0"]
    (folder / "home.json").write_text(home_text)
    (folder / "namesake.json").write_text(sealed("Sam Lee", "b0b0b0b0b0b0", passed=LIVE[:1]))
    rep = report.build(folder)
    assert len(rep.exports) == 2
    joined = next(e for e in rep.exports if e.ident == merged["id"])
    passed = [r["item"] for r in report.learner_rows(joined) if r["status"] == "passed"]
    assert sorted(passed) == sorted(LIVE[:3])
    assert any(f.startswith("joined with browser id(s) a0a0a0a0a0a0") for f in joined.flags)
    assert {f.file: f.outcome for f in rep.files}["school.json"] == "superseded"
    assert len(rep.conflicts) == 1 and len(rep.conflicts[0]) == 2       # the namesake: still flagged


def test_recursive_reads_a_folder_per_learner(folder, tmp_path):
    for n, name in enumerate(("Ana", "Ben", "Cleo")):
        student = folder / f"{name}_{1000 + n}_assignsubmission_file"
        student.mkdir()
        (student / "course-progress-export.json").write_text(sealed(name, f"e{n}b2c3d4e5f6", passed=LIVE[:n + 1]))
    (folder / "loose.json").write_text(sealed("Dee", "f1b2c3d4e5f6"))
    flat = report.build(folder)
    assert [e.learner for e in flat.exports] == ["Dee"]
    assert all(r.reason.endswith("--recursive reads the files of each sub-folder") for r in flat.files
               if r.outcome == "skipped")
    deep = report.build(folder, recursive=True)
    assert sorted(e.learner for e in deep.exports) == ["Ana", "Ben", "Cleo", "Dee"]
    assert {e.file for e in deep.exports} >= {"Ana_1000_assignsubmission_file/course-progress-export.json"}
    out = tmp_path / "out"
    out.mkdir()
    done = run(str(folder), "--recursive", "--csv", str(out / "r.csv"), cwd=out)
    assert done.returncode == 0 and "4 learners" in done.stdout, done.stdout + done.stderr


def test_the_dashboard_prints_every_learner_whole_in_colour(folder, tmp_path, browser):
    for n in range(40):
        (folder / f"l{n}.json").write_text(sealed(f"Ahmed Dubois {n:03d}", f"a{n:03d}0c3d4e5f6",
                                                  passed=LIVE[: n % len(LIVE)]))
    page_path = tmp_path / "dashboard.html"
    page_path.write_text(dashboard.page(report.build(folder)))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(page_path.as_uri())
        page.emulate_media(media="print")
        found = page.evaluate(SNIPPETS["PRINTED_HEATMAP"])
        assert found["overflow"] == "visible" and found["maxHeight"] == "none", found
        assert found["rows"] == 40 and not found["clipped"], found
        assert found["tallest"] < 2 * found["line"] + 4, found        # a name on one line, not a letter a line
        assert found["adjust"] == "exact", found
        pdf = page.pdf(format="A4", landscape=True, print_background=True)
        assert pdf.startswith(b"%PDF")
    finally:
        context.close()
