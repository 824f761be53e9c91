"""The instructors' progress report over a folder of exported progress files.

``python -m exercises report FOLDER [--csv OUT.csv] [--force]`` (or ``./course report FOLDER``)
reads every file directly in FOLDER, keeps the learners' exports and lists every other file as
skipped, with the reason. It writes a CSV with one row per learner and item of the course:
each exercise and each question (from the registry, so those never started are listed too) and
each notebook's test-out set; and it prints a summary. An existing CSV is replaced only with
``--force``.

Which files are kept:

- a progress export of this course whose checksum matches: kept;
- an export with no checksum (from an older version of the course, or a raw
  ``course-progress.json``): kept, and named in the summary as unchecked;
- empty, larger than :data:`MAX_FILE_BYTES`, not JSON, truncated, nested too deeply, not a
  progress file of this course, a newer format, values of the wrong kind: skipped;
- checksum does not match (edited or damaged after export): skipped;
- the same bytes as a file already read: skipped as an identical copy;
- the same learner twice (same typed name, case and spacing ignored; with no name, the same
  browser's id, which also matches a named export from that browser): the newest export is
  kept, the others are skipped;
- anything else in the folder (sub-folders, pipes, other files): skipped.

Every byte of a learner's file is untrusted. One bad file never stops the report: whatever
goes wrong while reading it skips that file with the reason. Text that comes from a file
(names, ids, dates, file names) is shown with its control characters written as escapes
(``\\x1b``), so nothing a learner types can drive the instructor's terminal, and every CSV cell
that would start with ``=``, ``+``, ``-`` or ``@`` gets a leading ``'``, so a spreadsheet shows
it as text instead of running it as a formula (OWASP's rule for CSV injection).

An empty folder is not an error: the CSV then holds only its header and the exit code is 0.
The exit code is 2 when FOLDER is not a folder, or the CSV exists (without ``--force``) or
cannot be written.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import export
from .progress import FORMAT, STATUS_LABELS, VERSION, status_of

CSV_COLUMNS = ["learner", "notebook", "kind", "item", "status", "attempts", "hints_used",
               "solution_revealed", "tested_out", "exported_at", "file"]
DEFAULT_CSV = "progress-report.csv"
MAX_FILE_BYTES = 1_000_000   # a progress export is a few kilobytes; anything this big is not one
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# An exercise's status in the report: the progress view's four, and two more. "tested out":
# not passed, in a notebook whose test-out set the learner passed (the notebook counts as
# done). "started": hints opened, no answer checked yet.
EXERCISE_STATUSES = ("passed", "passed-after-solution", "tested-out", "attempted", "started",
                     "not-started")
EXERCISE_LABELS = {**STATUS_LABELS, "tested-out": "tested out", "started": "started"}
_HEADERS = {**EXERCISE_LABELS, "passed-after-solution": "after solution"}   # the summary's columns
QUESTION_LABELS = ("right", "wrong", "not answered")
TEST_OUT_LABELS = ("passed", "attempted", "not taken")

# The fields the report reads, and the kind each must have when present.
_COUNTS = ("attempts", "hints", "checks", "misses", "tries")
_FLAGS = ("passed", "passed_after_solution", "solution_revealed", "correct", "revealed")


@dataclass
class Export:
    """One learner's export that made it into the report."""

    path: Path
    data: dict
    learner: str            # as shown in the report (control characters escaped)
    key: str                # what makes two exports "the same learner"
    exported_at: str        # "" when unknown
    checked: bool           # the checksum was there and matched
    digest: str             # sha256 of the file's bytes


@dataclass
class Report:
    folder: Path
    exports: list[Export] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (file name, reason)
    notes: list[str] = field(default_factory=list)


class Skip(Exception):
    """A file that is not taken into the report; the message is the reason."""


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,} bytes"


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, reading no more than the cap; only regular files."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise Skip("not a regular file (a pipe, device or socket)")
        if info.st_size > MAX_FILE_BYTES:
            raise Skip(f"too large to be a progress export ({_size(info.st_size)}; exports are a few "
                       f"kilobytes, and files over {_size(MAX_FILE_BYTES)} are not read)")
        with open(path, "rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise Skip(f"could not be read ({export.printable(exc.strerror or exc)})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise Skip(f"too large to be a progress export (over {_size(MAX_FILE_BYTES)})")
    return raw


def _no_constants(name):
    raise ValueError(f"{name} is not a JSON number")


def _parse(raw: bytes, looks_json: bool):
    if not raw.strip():
        raise Skip("empty: the file holds nothing (the download may not have finished; "
                   "ask the learner to export again)")
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_constant=_no_constants)
    except RecursionError:
        raise Skip("malformed: nested too deeply to be a progress export") from None
    except MemoryError:
        raise Skip("too large to read") from None
    except (UnicodeDecodeError, ValueError):
        if looks_json:
            raise Skip("malformed: not valid JSON (damaged or truncated)") from None
        raise Skip("not a progress export") from None


def _wrong_kind(data: dict) -> str | None:
    """What in a progress record has the wrong kind of value, or None."""
    for section in ("exercises", "questions"):
        if not isinstance(data.get(section), dict) or not all(isinstance(v, dict) for v in data[section].values()):
            return f"its {section!r} section"
    test_out = data.get("test_out", {})
    if not isinstance(test_out, dict) or not all(isinstance(v, dict) for v in test_out.values()):
        return "its 'test_out' section"
    for section in ("exercises", "questions", "test_out"):
        for key, entry in data.get(section, {}).items():
            for name in _COUNTS:
                value = entry.get(name, 0)
                if type(value) is not int or value < 0:
                    return f"{section} entry {export.printable(key, 40)!r}: {name!r}"
            for name in _FLAGS:
                if not isinstance(entry.get(name, False), bool):
                    return f"{section} entry {export.printable(key, 40)!r}: {name!r}"
    return None


def _read(path: Path) -> Export:
    raw = _read_bytes(path)
    looks_json = path.suffix.lower() == ".json"
    data = _parse(raw, looks_json)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        if looks_json:
            raise Skip("not a progress file of this course (JSON of another kind)")
        raise Skip("not a progress export")
    version = data.get("version")
    if isinstance(version, int) and version > VERSION:
        raise Skip(f"written by a newer version of the course (format version {version}); "
                   "update this checkout")
    if not isinstance(data.get("exercises"), dict) or not isinstance(data.get("questions"), dict):
        raise Skip("malformed: a progress file with missing or damaged parts")
    wrong = _wrong_kind(data)
    if wrong:
        raise Skip(f"malformed: values of the wrong kind in {wrong}")
    block = data.get("export")
    if isinstance(block, dict) and block.get("course") not in (None, export.COURSE_ID):
        raise Skip(f"an export of another course ({export.printable(block.get('course'), 60)!r})")
    seal = export.verify(data)
    if seal == export.MISMATCH:
        raise Skip("checksum does not match: the file was edited or damaged after it was exported")
    name, ident = export.learner_of(data)
    if name:
        key = "name:" + name.casefold()
    elif ident:
        key = "id:" + ident
    else:
        key = "file:" + path.name
    exported_at = export.printable(block.get("exported_at", ""), 40) if isinstance(block, dict) else ""
    return Export(path=path, data=data,
                  learner=export.display_name(data) or f"(no name) {export.printable(path.name)}",
                  key=key, exported_at=exported_at, checked=seal == export.OK,
                  digest=hashlib.sha256(raw).hexdigest())


def _when(item: Export):
    """Sort key for 'newest': export time (UTC), then the record's own time, then file name."""
    try:
        stamp = datetime.datetime.strptime(item.exported_at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        stamp = datetime.datetime.min
    return (stamp, str(item.data.get("updated", "")), item.path.name)


def _read_safely(path: Path) -> Export:
    """:func:`_read`, with anything unforeseen turned into a reason to skip the file."""
    try:
        return _read(path)
    except Skip:
        raise
    except RecursionError:
        raise Skip("malformed: nested too deeply to be a progress export") from None
    except Exception as exc:  # noqa: BLE001 - a learner's file must never stop the report
        raise Skip(f"could not be read ({type(exc).__name__})") from None


def build(folder, exclude=()) -> Report:
    """Read ``folder`` (not recursively) into a :class:`Report`; never raises for a bad file."""
    folder = Path(folder)
    report = Report(folder=folder)
    excluded = {Path(p).resolve() for p in exclude}
    by_digest: dict[str, Export] = {}
    by_learner: dict[str, list[Export]] = {}
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        shown = export.printable(path.name)
        if path.resolve() in excluded:
            continue
        if path.is_dir():
            report.skipped.append((shown + "/", "a folder (only files directly in the folder are read)"))
            continue
        try:
            item = _read_safely(path)
        except Skip as why:
            report.skipped.append((shown, str(why)))
            continue
        if item.digest in by_digest:
            report.skipped.append((shown, "duplicate: identical to "
                                   + export.printable(by_digest[item.digest].path.name)))
            continue
        by_digest[item.digest] = item
        by_learner.setdefault(item.key, []).append(item)
    # An export with no name from the same browser (same id) as exactly one named learner's
    # export is that learner's.
    names_of_id: dict[str, set[str]] = {}
    for key, items in by_learner.items():
        if key.startswith("name:"):
            for item in items:
                names_of_id.setdefault(export.learner_of(item.data)[1], set()).add(key)
    for key in [k for k in by_learner if k.startswith("id:")]:
        names = names_of_id.get(key[3:], set())
        if len(names) == 1:
            by_learner[names.pop()].extend(by_learner.pop(key))
    for key, items in by_learner.items():
        items.sort(key=_when)
        newest = items[-1]
        if key.startswith("name:") and not export.learner_of(newest.data)[0]:
            newest.learner = [i for i in items if export.learner_of(i.data)[0]][-1].learner
        for older in items[:-1]:
            reason = (f"duplicate: an older export of learner {newest.learner!r}; "
                      f"the newest, {export.printable(newest.path.name)}, is used")
            if key.startswith("name:") and export.learner_of(older.data)[1] != export.learner_of(newest.data)[1]:
                reason += (" (it came from another browser: if these are two people, ask them to"
                           " export again with different names)")
            report.skipped.append((export.printable(older.path.name), reason))
        report.exports.append(newest)
    report.exports.sort(key=lambda e: (e.learner.casefold(), e.path.name))
    report.skipped.sort()
    unchecked = [export.printable(e.path.name) for e in report.exports if not e.checked]
    if unchecked:
        report.notes.append("no checksum (an older export or a raw progress file), used unchecked: "
                            + ", ".join(unchecked))
    return report


# ---------------------------------------------------------------- statuses

def _day(value) -> str:
    """The date of a time stamp written by the course (YYYY-MM-DD...), else ""."""
    match = re.match(r"\d{4}-\d{2}-\d{2}", value) if isinstance(value, str) else None
    return match.group(0) if match else ""


def tested_out(data: dict, stem: str) -> str:
    """"" if the learner did not pass notebook ``stem``'s test-out set, else the day (or "yes")."""
    entry = data.get("test_out", {}).get(stem, {})
    if not entry.get("passed"):
        return ""
    return _day(entry.get("passed_at")) or "yes"


def exercise_status(entry: dict, notebook_tested_out: bool) -> str:
    """One of :data:`EXERCISE_STATUSES` (the progress view's rules, then the report's two)."""
    status = status_of(entry)
    if status in ("passed", "passed-after-solution"):
        return status
    if notebook_tested_out:
        return "tested-out"
    if status == "not-started" and entry.get("hints", 0) > 0:
        return "started"
    return status


def question_status(entry: dict) -> str:
    if "answer" not in entry:
        return "not answered"
    return "right" if entry.get("correct") else "wrong"


def test_out_status(entry: dict) -> str:
    if entry.get("passed"):
        return "passed"
    return "attempted" if entry.get("attempts", 0) > 0 else "not taken"


def _yes(flag) -> str:
    return "yes" if flag else "no"


def learner_rows(item: Export) -> list[dict]:
    """One learner's rows (see :data:`CSV_COLUMNS`): every exercise and question of the course,
    and every notebook's test-out set. Cells hold text that is safe to print; the CSV
    neutralises formulas on top (:func:`csv_text`)."""
    from .registry import all_questions, exercises_by_notebook, notebooks_with_skip_ahead

    with_sets = set(notebooks_with_skip_ahead())
    questions = all_questions()
    data = item.data
    common = {"learner": item.learner, "exported_at": item.exported_at,
              "file": export.printable(item.path.name)}
    out = []
    for stem, _title, exercises in exercises_by_notebook():
        day = tested_out(data, stem)
        for ex in exercises:
            entry = data["exercises"].get(ex.id, {})
            out.append({**common, "notebook": stem, "kind": "exercise", "item": ex.id,
                        "status": EXERCISE_LABELS[exercise_status(entry, bool(day))],
                        "attempts": entry.get("attempts", 0), "hints_used": entry.get("hints", 0),
                        "solution_revealed": _yes(entry.get("solution_revealed")), "tested_out": day})
        for q in (q for q in questions if q.notebook == stem):
            entry = data["questions"].get(q.id, {})
            out.append({**common, "notebook": stem, "kind": "question", "item": q.id,
                        "status": question_status(entry), "attempts": entry.get("tries", 0),
                        "hints_used": "", "solution_revealed": _yes(entry.get("revealed")),
                        "tested_out": day})
        if stem in with_sets:
            entry = data.get("test_out", {}).get(stem, {})
            out.append({**common, "notebook": stem, "kind": "test-out", "item": "test-out",
                        "status": test_out_status(entry), "attempts": entry.get("attempts", 0),
                        "hints_used": "", "solution_revealed": "", "tested_out": day})
    return out


def rows(report: Report) -> list[dict]:
    """Every learner's rows, learner by learner (:func:`learner_rows`)."""
    return [row for item in report.exports for row in learner_rows(item)]


# ---------------------------------------------------------------- output

def neutralise(value):
    """A CSV cell a spreadsheet shows as text: a leading ' before =, +, -, @, tab or CR."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows(report):
        writer.writerow({key: neutralise(value) for key, value in row.items()})
    return buffer.getvalue()


def _table(header: list[str], body: list[list]) -> list[str]:
    cells = [header] + [[str(c) for c in row] for row in body]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return ["  " + line for line in lines]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_text(report: Report) -> str:
    """The readable summary: learners, exercises, questions, test-outs, skipped files."""
    n = len(report.exports)
    lines = [f"Progress report for {export.printable(report.folder)}: {_plural(n, 'learner')}, "
             f"{_plural(len(report.skipped), 'file')} skipped."]
    if n == 0 and not report.skipped:
        lines.append("The folder is empty: there is nothing to report yet. Learners export their "
                     "progress from the progress view in 00 Start here; put those files here.")
    if n:
        labels = [EXERCISE_LABELS[s] for s in EXERCISE_STATUSES]
        per_learner = []
        per_item: dict[tuple, list[str]] = {}   # (kind, notebook, item) -> every learner's status
        for item in report.exports:
            mine = learner_rows(item)
            for r in mine:
                per_item.setdefault((r["kind"], r["notebook"], r["item"]), []).append(r["status"])
            statuses = [r["status"] for r in mine if r["kind"] == "exercise"]
            answers = [r["status"] for r in mine if r["kind"] == "question"]
            outs = sorted({r["notebook"][:2] for r in mine if r["tested_out"]})
            per_learner.append([item.learner] + [statuses.count(label) for label in labels]
                               + [answers.count("right"), answers.count("wrong"),
                                  ", ".join(outs) or "-", item.exported_at or "?"])
        headers = [_HEADERS[s] for s in EXERCISE_STATUSES]
        lines += ["", "Per learner (exercises by status, where 'started' is hints opened and no answer "
                      "checked; questions answered right and wrong; notebooks tested out):"]
        lines += _table(["learner"] + headers + ["questions right", "wrong", "tested out of",
                                                 "exported (UTC)"], per_learner)
        by_kind: dict[str, list[list]] = {"exercise": [], "question": [], "test-out": []}
        for (kind, stem, name), mine in per_item.items():
            shown = f"{stem[:2]} {name}" if kind != "test-out" else stem
            if kind == "exercise":
                passed = mine.count(labels[0]) + mine.count(labels[1])
                by_kind[kind].append([shown, f"{passed} of {n}"] + [mine.count(label) for label in labels[1:]])
            else:
                kinds = QUESTION_LABELS if kind == "question" else TEST_OUT_LABELS
                by_kind[kind].append([shown] + [mine.count(label) for label in kinds])
        lines += ["", "Per exercise (learners; 'passed' includes those who passed after the solution):"]
        lines += _table(["exercise", "passed"] + headers[1:], by_kind["exercise"])
        if by_kind["question"]:
            lines += ["", "Per question (learners):"]
            lines += _table(["question", *QUESTION_LABELS], by_kind["question"])
        if by_kind["test-out"]:
            lines += ["", "Test-outs (learners; passing one counts its notebook as done):"]
            lines += _table(["notebook", *TEST_OUT_LABELS], by_kind["test-out"])
    if report.skipped:
        lines += ["", "Skipped files:"]
        lines += [f"  {name}: {reason}" for name, reason in report.skipped]
    if report.notes:
        lines += ["", "Notes:"] + [f"  {note}" for note in report.notes]
    return "\n".join(lines)


def _print(text: str, stream=None) -> None:
    """Print, never failing on a terminal that cannot show some character."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream)


def main(folder, csv_path=DEFAULT_CSV, force=False) -> int:
    """The command: write the CSV (``-`` for standard output) and print the summary."""
    folder = Path(folder)
    if not folder.is_dir():
        _print(f"error: {export.printable(folder)} is not a folder", sys.stderr)
        return 2
    to_stdout = csv_path == "-"
    if not to_stdout and Path(csv_path).exists() and not force:
        _print(f"error: {export.printable(csv_path)} already exists. Add --force to replace it, or "
               "choose another file with --csv NEW.csv", sys.stderr)
        return 2
    try:
        report = build(folder, exclude=() if to_stdout else (csv_path,))
    except OSError as exc:
        _print(f"error: could not read the folder {export.printable(folder)} "
               f"({export.printable(exc.strerror or exc)})", sys.stderr)
        return 2
    text = csv_text(report)
    if to_stdout:
        out = getattr(sys.stdout, "buffer", None)
        if out is not None:  # UTF-8 whatever the terminal's encoding: this is data for a file
            sys.stdout.flush()
            out.write(text.encode("utf-8"))
            out.flush()
        else:
            sys.stdout.write(text)
        _print(summary_text(report), sys.stderr)
        return 0
    try:
        Path(csv_path).write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        _print(summary_text(report))
        _print(f"error: could not write {export.printable(csv_path)} ({exc.strerror or exc})", sys.stderr)
        return 2
    _print(summary_text(report))
    _print(f"\nCSV ({len(text.splitlines()) - 1} rows) written to {export.printable(csv_path)}")
    return 0
