"""The instructors' progress report over a folder of exported progress files.

``python -m exercises report FOLDER [--csv OUT.csv]`` (or ``./course report FOLDER``) reads
every file directly in FOLDER, keeps the learners' exports and lists every other file as
skipped, with the reason. It writes a CSV with one row per learner and exercise of the course
(exercises from the registry, so those never started are listed too) and prints a summary.

Which files are kept:

- a progress export of this course whose checksum matches: kept;
- an export with no checksum (from an older version of the course, or a raw
  ``course-progress.json``): kept, and named in the summary as unchecked;
- not JSON, truncated, not a progress file of this course, a newer format: skipped;
- checksum does not match (edited or damaged after export): skipped;
- the same bytes as a file already read: skipped as an identical copy;
- the same learner twice (same typed name, case and spacing ignored; with no name, the same
  browser's id, which also matches a named export from that browser): the newest export is
  kept, the others are skipped;
- anything else in the folder (sub-folders, other files): skipped.

One bad file never stops the report. An empty folder is not an error: the CSV then holds only
its header and the exit code is 0. The exit code is 2 when FOLDER is not a folder or the CSV
cannot be written.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import export
from .progress import FORMAT, STATUS_LABELS, STATUSES, VERSION, is_progress_record, status_of

CSV_COLUMNS = ["learner", "notebook", "exercise", "status", "attempts", "hints_used",
               "solution_revealed", "exported_at", "file"]
DEFAULT_CSV = "progress-report.csv"


@dataclass
class Export:
    """One learner's export that made it into the report."""

    path: Path
    data: dict
    learner: str            # as shown in the report
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


def _read(path: Path) -> Export:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Skip(f"could not be read ({exc.strerror or exc})") from None
    looks_json = path.suffix.lower() == ".json"
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        if looks_json:
            raise Skip("malformed: not valid JSON (damaged or truncated)") from None
        raise Skip("not a progress export") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        if looks_json:
            raise Skip("not a progress file of this course (JSON of another kind)")
        raise Skip("not a progress export")
    version = data.get("version")
    if isinstance(version, int) and version > VERSION:
        raise Skip(f"written by a newer version of the course (format version {version}); "
                   "update this checkout")
    if not is_progress_record(data):
        raise Skip("malformed: a progress file with missing or damaged parts")
    try:
        for entry in data["exercises"].values():
            status_of(entry)
    except (TypeError, ValueError):
        raise Skip("malformed: an exercise entry has values of the wrong kind") from None
    block = data.get("export")
    if isinstance(block, dict) and block.get("course") not in (None, export.COURSE_ID):
        raise Skip(f"an export of another course ({block.get('course')!r})")
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
    exported_at = str(block.get("exported_at", "")) if isinstance(block, dict) else ""
    return Export(path=path, data=data, learner=export.display_name(data) or f"(no name) {path.name}",
                  key=key, exported_at=exported_at, checked=seal == export.OK,
                  digest=hashlib.sha256(raw).hexdigest())


def _when(item: Export):
    """Sort key for 'newest': export time (UTC), then the record's own time, then file name."""
    try:
        stamp = datetime.datetime.strptime(item.exported_at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        stamp = datetime.datetime.min
    return (stamp, str(item.data.get("updated", "")), item.path.name)


def build(folder, exclude=()) -> Report:
    """Read ``folder`` (not recursively) into a :class:`Report`; never raises for a bad file."""
    folder = Path(folder)
    report = Report(folder=folder)
    excluded = {Path(p).resolve() for p in exclude}
    by_digest: dict[str, Export] = {}
    by_learner: dict[str, list[Export]] = {}
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.resolve() in excluded:
            continue
        if path.is_dir():
            report.skipped.append((path.name + "/", "a folder (only files directly in the folder are read)"))
            continue
        try:
            item = _read(path)
        except Skip as why:
            report.skipped.append((path.name, str(why)))
            continue
        if item.digest in by_digest:
            report.skipped.append((path.name, f"duplicate: identical to {by_digest[item.digest].path.name}"))
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
                      f"the newest, {newest.path.name}, is used")
            if key.startswith("name:") and export.learner_of(older.data)[1] != export.learner_of(newest.data)[1]:
                reason += (" (it came from another browser: if these are two people, ask them to"
                           " export again with different names)")
            report.skipped.append((older.path.name, reason))
        report.exports.append(newest)
    report.exports.sort(key=lambda e: (e.learner.casefold(), e.path.name))
    report.skipped.sort()
    unchecked = [e.path.name for e in report.exports if not e.checked]
    if unchecked:
        report.notes.append("no checksum (an older export or a raw progress file), used unchecked: "
                            + ", ".join(unchecked))
    return report


def rows(report: Report) -> list[dict]:
    """One row per learner and registered exercise (see :data:`CSV_COLUMNS`)."""
    from .registry import exercises_by_notebook

    out = []
    for item in report.exports:
        entries = item.data["exercises"]
        for stem, _title, exercises in exercises_by_notebook():
            for ex in exercises:
                entry = entries.get(ex.id, {})
                out.append({
                    "learner": item.learner, "notebook": stem, "exercise": ex.id,
                    "status": STATUS_LABELS[status_of(entry)],
                    "attempts": _count(entry.get("attempts")),
                    "hints_used": _count(entry.get("hints")),
                    "solution_revealed": "yes" if entry.get("solution_revealed") else "no",
                    "exported_at": item.exported_at, "file": item.path.name,
                })
    return out


def _count(value) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def csv_text(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(report))
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


def summary_text(report: Report) -> str:
    """The readable summary: learners, exercises, skipped files."""
    from .registry import exercises_by_notebook

    n = len(report.exports)
    skipped = len(report.skipped)
    lines = [f"Progress report for {report.folder}: {n} learner{'' if n == 1 else 's'}, "
             f"{skipped} file{'' if skipped == 1 else 's'} skipped."]
    if n == 0 and skipped == 0:
        lines.append("The folder is empty: there is nothing to report yet. Learners export their "
                     "progress from the progress view in 00 Start here; put those files here.")
    table = rows(report)
    if n:
        labels = [STATUS_LABELS[s] for s in STATUSES]
        per_learner = []
        for item in report.exports:
            mine = [r["status"] for r in table if r["learner"] == item.learner]
            per_learner.append([item.learner] + [mine.count(label) for label in labels]
                               + [item.exported_at or "?"])
        lines += ["", "Per learner (exercises by status):"]
        lines += _table(["learner"] + labels + ["exported (UTC)"], per_learner)
        per_exercise = []
        for stem, _title, exercises in exercises_by_notebook():
            for ex in exercises:
                mine = [r["status"] for r in table if r["exercise"] == ex.id]
                passed = mine.count(labels[0]) + mine.count(labels[1])
                per_exercise.append([f"{stem[:2]} {ex.id}", f"{passed} of {n}",
                                     mine.count(labels[1]), mine.count(labels[2]),
                                     mine.count(labels[3])])
        lines += ["", "Per exercise (learners; 'passed' includes those who passed after the solution):"]
        lines += _table(["exercise", "passed", "after the solution", labels[2], labels[3]], per_exercise)
    if report.skipped:
        lines += ["", "Skipped files:"]
        lines += [f"  {name}: {reason}" for name, reason in report.skipped]
    if report.notes:
        lines += ["", "Notes:"] + [f"  {note}" for note in report.notes]
    return "\n".join(lines)


def main(folder, csv_path=DEFAULT_CSV) -> int:
    """The command: write the CSV (``-`` for standard output) and print the summary."""
    folder = Path(folder)
    if not folder.is_dir():
        print(f"error: {folder} is not a folder", file=sys.stderr)
        return 2
    to_stdout = csv_path == "-"
    report = build(folder, exclude=() if to_stdout else (csv_path,))
    text = csv_text(report)
    if to_stdout:
        sys.stdout.write(text)
        print(summary_text(report), file=sys.stderr)
        return 0
    try:
        Path(csv_path).write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        print(summary_text(report))
        print(f"error: could not write {csv_path} ({exc.strerror or exc})", file=sys.stderr)
        return 2
    print(summary_text(report))
    print(f"\nCSV ({len(text.splitlines()) - 1} rows) written to {csv_path}")
    return 0
