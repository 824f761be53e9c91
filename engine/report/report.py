"""The instructors' progress report over a folder of exported progress files.

:func:`build` reads every entry directly in a folder and decides, for each, what becomes of it
(:data:`OUTCOMES`): **used** (the export a learner is graded on), **superseded** (an older
export of the same learner), **duplicate** (the same bytes as a file already read) or
**skipped** (anything else, with the reason). Nothing is left out silently: every file is in
:attr:`Report.files`, which the command writes as a CSV of its own.

Learners are told apart by their browser's id (``learner.id`` of an export, see
:mod:`engine.core.export`), not by the name they typed: two exports from two browsers are two
learners, even with one name (both are flagged as a name conflict), and an export typed with a
classmate's name is never taken for the classmate. Exports from one browser are one learner; the
newest counts. Files without an id (from before ids, or a raw ``course-progress.json``) are
told apart by name as they always were (case, spacing and Unicode spelling ignored), or by file
when they have no name either, and flagged.

Which files are skipped: links, folders, pipes, devices (see :mod:`engine.report.untrusted`:
nothing is followed, nothing can block); empty, larger than :data:`MAX_FILE_BYTES`, not JSON,
truncated, nested too deeply, not a progress file of this course, a newer format, values of the
wrong kind; exports whose checksum does not match. Exports without a checksum (older ones, raw
progress files) are used and named as unchecked.

Every byte of a learner's file is untrusted. One bad file never stops the report: whatever goes
wrong while looking at it, even before it is opened, skips that file with the reason. Text that
comes from a file (names, ids, dates, file names) is shown with its control characters written
as escapes (``\\x1b``), and the CSV writes it so no spreadsheet runs it
(:mod:`engine.report.spreadsheet`).

The tables: :func:`rows` (one row per learner and item of the course, :data:`CSV_COLUMNS`),
:func:`gradebook` (one row per learner, :func:`gradebook_columns`), :func:`file_rows` (one row
per file, :data:`FILE_COLUMNS`); :func:`summary_text` is the terminal's summary.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from engine.core import export
from engine.core.progress import RENAMED_SECTIONS, STATUS_LABELS, VERSION, record_format, renamed_sections, status_of
from engine.presentation.numbers import plural

from . import spreadsheet, untrusted
from .report_entries import (exercise_status, question_status, skip_ahead_status, skipped_ahead, wrong_kind,
                             yes_no)
from .report_who import folder_entries, id_cell, join_records, joined_browsers

CSV_COLUMNS = ["learner", "learner_id", "notebook", "kind", "item", "status", "attempts",
               "hints_used", "solution_revealed", "skipped_ahead", "exported_at", "file", "flags"]
FILE_COLUMNS = ["file", "outcome", "learner", "learner_id", "exported_at", "reason"]
GRADEBOOK_FIRST = ["learner", "learner_id", "flags", "exported_at", "file", "exercises_passed",
                   "exercises", "questions_right", "questions", "skipped_ahead_past", "retired_exercises_passed"]
# Columns whose text a spreadsheet could take for a number or a date (Excel mode keeps them text).
TEXT_COLUMNS = ("learner", "learner_id", "skipped_ahead", "exported_at", "file")
OUTCOMES = ("used", "superseded", "duplicate", "skipped")
DEFAULT_CSV = "progress-report.csv"
MAX_FILE_BYTES = 1_000_000   # a progress export is a few kilobytes; anything this big is not one

# An exercise's status in the report: the progress view's four, and two more. "skipped ahead":
# not passed, in a notebook whose skip-ahead set the learner passed (the notebook counts as
# done). "started": hints opened, no answer checked yet.
EXERCISE_STATUSES = ("passed", "passed-after-solution", "skipped-ahead", "attempted", "started",
                     "not-started")
EXERCISE_LABELS = {**STATUS_LABELS, "skipped-ahead": "skipped ahead", "started": "started"}
_HEADERS = {**EXERCISE_LABELS, "passed-after-solution": "after solution"}   # the summary's columns
QUESTION_LABELS = ("right", "wrong", "not answered")
SKIP_AHEAD_LABELS = ("passed", "attempted", "not taken")

@dataclass
class Export:
    """One learner's export that made it into the report."""

    path: Path
    data: dict
    name: str               # as typed (NFC, spaces collapsed); "" when there is none
    ident: str              # the browser's id (escaped); "" in files from before ids
    learner: str            # as shown in the report (control characters escaped)
    exported_at: str        # "" when unknown
    checked: bool           # the checksum was there and matched
    digest: str             # sha256 of the file's bytes
    flags: list[str] = field(default_factory=list)             # what the instructor should know
    superseded: list["Export"] = field(default_factory=list)   # this learner's older exports
    joined: list["Export"] = field(default_factory=list)       # the newest of the learner's other browsers
    relative: str = ""      # the file's path in the folder read ("alice/export.json" with --recursive)
    _rows: list[dict] | None = None

    @property
    def file(self) -> str:
        """The file's name as the report shows it (its path in the folder, escaped)."""
        return export.printable(self.relative or self.path.name)


class FileRow(NamedTuple):
    """What became of one file of the folder (see :data:`FILE_COLUMNS`)."""

    file: str
    outcome: str            # one of OUTCOMES
    learner: str = ""
    learner_id: str = ""
    exported_at: str = ""
    reason: str = ""


@dataclass
class Report:
    folder: Path
    exports: list[Export] = field(default_factory=list)   # one per learner: the export used
    files: list[FileRow] = field(default_factory=list)    # every file of the folder
    conflicts: list[list[Export]] = field(default_factory=list)   # learners sharing one name
    notes: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """``(file, reason)`` of every file not used (superseded, duplicate or skipped)."""
        return [(f.file, f.reason) for f in self.files if f.outcome != "used"]


class Skip(Exception):
    """A file that is not taken into the report; the message is the reason."""


# ---------------------------------------------------------------- one file

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


def read_export(path: Path) -> Export:
    """The export in the regular file ``path``; :class:`Skip` (or
    :class:`~engine.report.untrusted.Refused`) with the reason when it is not one."""
    raw = untrusted.read_capped(str(path), MAX_FILE_BYTES)
    looks_json = path.suffix.lower() == ".json"
    data = _parse(raw, looks_json)
    if not isinstance(data, dict) or data.get("format") != record_format():
        if looks_json:
            raise Skip("not a progress file of this course (JSON of another kind)")
        raise Skip("not a progress export")
    version = data.get("version")
    if isinstance(version, int) and version > VERSION:
        raise Skip(f"written by a newer version of the course (format version {version}); "
                   "update this checkout")
    if not isinstance(data.get("exercises"), dict) or not isinstance(data.get("questions"), dict):
        raise Skip("malformed: a progress file with missing or damaged parts")
    wrong = wrong_kind(data)
    if wrong:
        raise Skip(f"malformed: values of the wrong kind in {wrong}")
    block = data.get("export")
    if isinstance(block, dict) and block.get("course") not in (None, export.course_id()):
        raise Skip(f"an export of another course ({export.printable(block.get('course'), 60)!r})")
    seal = export.verify(data)
    if seal == export.MISMATCH:
        raise Skip("checksum does not match: the file was edited or damaged after it was exported")
    name, ident = export.learner_of(data)
    exported_at = export.printable(block.get("exported_at", ""), 40) if isinstance(block, dict) else ""
    # The sections are renamed after the checksum, which covers the file as it was written.
    return Export(path=path, data=renamed_sections(data), name=name, ident=export.printable(ident),
                  learner=export.display_name(data) or f"(no name) {export.printable(path.name)}",
                  exported_at=exported_at, checked=seal == export.OK,
                  digest=hashlib.sha256(raw).hexdigest())


def _looked_at(entry: os.DirEntry, folder: str) -> Export:
    """The export in a folder entry; :class:`Skip` with the reason for anything else. Whatever
    goes wrong, even before the file is opened, becomes a reason."""
    try:
        reason = untrusted.refusal(entry, folder, MAX_FILE_BYTES)
        if reason:
            raise Skip(reason)
        return read_export(Path(entry.path))
    except (Skip, untrusted.Refused) as why:
        raise Skip(str(why)) from None
    except RecursionError:
        raise Skip("malformed: nested too deeply to be a progress export") from None
    except Exception as exc:  # noqa: BLE001 - a learner's file must never stop the report
        raise Skip(f"could not be read ({type(exc).__name__})") from None


# ---------------------------------------------------------------- who is who

def name_key(name: str) -> str:
    """What makes two typed names one: case, spacing and Unicode spelling ignored (NFKC)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _learner_key(item: Export) -> tuple[str, str]:
    if item.ident:
        return "id", item.ident
    if item.name:
        return "name", name_key(item.name)
    return "file", item.relative or item.path.name


def _when(item: Export):
    """Sort key for 'newest': export time (UTC), then the record's own time, then file name."""
    try:
        stamp = datetime.datetime.strptime(item.exported_at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        stamp = datetime.datetime.min
    return (stamp, str(item.data.get("updated", "")), item.path.name)


def _quoted(names) -> str:
    return ", ".join(repr(n) for n in names)


def _one_learner(kind: str, items: list[Export]) -> Export:
    """The export a learner is graded on (the newest), with the others as ``superseded`` and
    what the instructor should know as ``flags``."""
    items.sort(key=_when)
    used = items[-1]
    named = [i for i in items if i.name]
    if named and not used.name:   # a later export without a name: the learner keeps theirs
        used.name, used.learner = named[-1].name, named[-1].learner
    used.superseded = items[:-1]
    others = sorted({i.learner for i in named if name_key(i.name) != name_key(used.name)})
    if others:
        used.flags.append(f"also exported as {_quoted(others)} from this browser")
    if kind == "name":
        used.flags.append("no browser id (an older export or a raw progress file): told apart by name")
    elif kind == "file":
        used.flags.append("no name and no browser id: told apart by file")
    if not used.checked:
        used.flags.append("no checksum")
    if used.superseded:
        files = ", ".join(i.file for i in used.superseded)
        used.flags.append(f"older exports not used: {files}")
    return used


def _flag_conflicts(learners: list[Export]) -> list[list[Export]]:
    """Learners (told apart by browser) who typed one name: each flagged; the groups."""
    by_name: dict[str, list[Export]] = {}
    for item in learners:
        if item.name:
            by_name.setdefault(name_key(item.name), []).append(item)
    groups = [group for group in by_name.values() if len(group) > 1]
    for group in groups:
        ids = ", ".join(i.ident or f"none ({i.file})" for i in group)
        for item in group:
            item.flags.insert(0, f"name conflict: {len(group)} learners exported as {item.learner!r} "
                                 f"from different browsers (ids {ids})")
    return groups


def _inode(path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino)


def build(folder, exclude=(), recursive=False) -> Report:
    """Read ``folder`` (with ``recursive``, and its sub-folders one level down) into a
    :class:`Report`; never raises for a bad file. The files in ``exclude`` (the report's own
    outputs, when they are in the folder) are left out. Raises ``OSError`` only when the folder
    itself cannot be listed."""
    folder = Path(folder)
    report = Report(folder=folder)
    excluded = {node for node in map(_inode, exclude) if node}
    entries = folder_entries(folder, recursive)
    by_digest: dict[str, Export] = {}
    by_learner: dict[tuple[str, str], list[Export]] = {}
    for name, entry, real in entries:
        shown = export.printable(name)
        if "\0" in real:
            report.files.append(FileRow(shown + "/", "skipped", reason="a folder that " + real.split("\0")[1]))
            continue
        try:
            if excluded:
                info = entry.stat(follow_symlinks=False)
                if (info.st_dev, info.st_ino) in excluded:
                    continue
            item = _looked_at(entry, real)
            item.relative = name
        except Skip as why:
            folder_entry = str(why).startswith("a folder")
            reason = str(why) + ("; --recursive reads the files of each sub-folder" * (folder_entry and not recursive))
            report.files.append(FileRow(shown + "/" * folder_entry, "skipped", reason=reason))
            continue
        except OSError as exc:  # the entry vanished while it was looked at
            report.files.append(FileRow(shown, "skipped", reason=f"could not be read ({exc.strerror})"))
            continue
        if item.digest in by_digest:
            first = by_digest[item.digest]
            report.files.append(FileRow(shown, "duplicate", item.learner, item.ident, item.exported_at,
                                        "duplicate: identical to " + first.file))
            continue
        by_digest[item.digest] = item
        by_learner.setdefault(_learner_key(item), []).append(item)
    for group in joined_browsers(by_learner):
        newest = [max(by_learner[key], key=_when) for key in group]
        first = max(newest, key=_when)
        others = [item for item in newest if item is not first]
        for key in group:
            if key != ("id", first.ident):
                by_learner[("id", first.ident)] += by_learner.pop(key)
        first.joined = others
    for (kind, _key), items in by_learner.items():
        used = _one_learner(kind, items)
        joined = [o for i in items for o in i.joined]
        if joined:
            join_records(used, joined)
        report.exports.append(used)
        for older in used.superseded:
            report.files.append(FileRow(
                older.file, "superseded", used.learner, used.ident, older.exported_at,
                f"superseded: an older export of learner {used.learner!r}"
                + (f" (browser id {used.ident})" if used.ident else "")
                + f"; the newest, {used.file}, is used"))
    for item in list(report.exports):        # one learner's file must never stop the report
        try:
            learner_rows(item)
        except Exception as exc:  # noqa: BLE001 - its reason is said, the others are reported
            report.exports.remove(item)
            report.files.append(FileRow(item.file, "skipped", item.learner, item.ident, item.exported_at,
                                        f"could not be reported ({type(exc).__name__}: "
                                        f"{export.printable(exc, 120)})"))
    report.exports.sort(key=lambda e: (e.learner.casefold(), e.ident, e.path.name))
    report.conflicts = _flag_conflicts(report.exports)
    report.files += [FileRow(e.file, "used", e.learner, e.ident, e.exported_at,
                             "; ".join(["the learner's newest export", *e.flags])) for e in report.exports]
    report.files.sort(key=lambda f: (f.file, f.outcome))
    unchecked = [e.file for e in report.exports if not e.checked]
    if unchecked:
        report.notes.append("no checksum (an older export or a raw progress file), used unchecked: "
                            + ", ".join(unchecked))
    return report


# ---------------------------------------------------------------- statuses

class Item(NamedTuple):
    """One thing of the course a learner has a status for."""

    notebook: str
    kind: str               # "exercise", "question" or "skip-ahead"
    id: str                 # the exercise's or question's id; "skip-ahead" for a notebook's set


@functools.cache
def course_items() -> tuple[Item, ...]:
    """Every exercise and question of the course (from the registry) and every notebook's
    skip-ahead set, notebook by notebook."""
    from engine.core.registry import all_questions, exercises_by_notebook, notebooks_with_skip_ahead

    with_sets = set(notebooks_with_skip_ahead())
    questions = all_questions()
    items = []
    for stem, _title, exercises in exercises_by_notebook():
        items += [Item(stem, "exercise", ex.id) for ex in exercises]
        items += [Item(stem, "question", q.id) for q in questions if q.notebook == stem]
        if stem in with_sets:
            items.append(Item(stem, "skip-ahead", "skip-ahead"))
    return tuple(items)


@functools.cache
def retired_exercises() -> dict[str, str]:
    """{id: notebook stem} of the retired exercises: replaced in the course, still checked in
    notebooks saved before, so a learner's passes on them are kept in the report."""
    from engine.core.registry import all_exercises

    return {ex.id: ex.notebook for ex in all_exercises(retired=True) if ex.retired}


RETIRED = "retired exercise"


def learner_rows(item: Export) -> list[dict]:
    """One learner's rows (see :data:`CSV_COLUMNS`): every exercise and question of the course,
    and every notebook's skip-ahead set. Cells hold text that is safe to print; the CSV
    neutralises formulas on top (:mod:`engine.report.spreadsheet`). Made once per export."""
    if item._rows is not None:
        return item._rows
    data = item.data
    common = {"learner": item.learner, "learner_id": item.ident, "exported_at": item.exported_at,
              "file": item.file, "flags": "; ".join(item.flags)}
    exercises, questions, sets = data["exercises"], data["questions"], data.get("skip_ahead", {})
    days: dict[str, str] = {}
    out = []
    for it in course_items():
        day = days.get(it.notebook)
        if day is None:
            day = days[it.notebook] = skipped_ahead(data, it.notebook)
        if it.kind == "exercise":
            entry = exercises.get(it.id, {})
            status, attempts, hints, revealed = (EXERCISE_LABELS[exercise_status(entry, bool(day))],
                                                 entry.get("attempts", 0), entry.get("hints", 0),
                                                 yes_no(entry.get("solution_revealed")))
        elif it.kind == "question":
            entry = questions.get(it.id, {})
            status, attempts, hints, revealed = (question_status(entry), entry.get("tries", 0), "",
                                                 yes_no(entry.get("revealed")))
        else:
            entry = sets.get(it.notebook, {})
            status, attempts, hints, revealed = skip_ahead_status(entry), entry.get("attempts", 0), "", ""
        out.append(dict(common, notebook=it.notebook, kind=it.kind, item=it.id, status=status,
                        attempts=attempts, hints_used=hints, solution_revealed=revealed, skipped_ahead=day))
    for ex_id, stem in retired_exercises().items():       # after the course's items: only those tried
        entry = exercises.get(ex_id)
        if entry:
            out.append(dict(common, notebook=stem, kind=RETIRED, item=ex_id,
                            status=EXERCISE_LABELS[exercise_status(entry, False)],
                            attempts=entry.get("attempts", 0), hints_used=entry.get("hints", 0),
                            solution_revealed=yes_no(entry.get("solution_revealed")), skipped_ahead=""))
    item._rows = out
    return out


def retired_passed(rows_of_one: list[dict]) -> list[str]:
    """The retired exercises a learner passed (from :func:`learner_rows`)."""
    return [r["item"] for r in rows_of_one if r["kind"] == RETIRED and _passed(r["status"])]


def rows(report: Report) -> list[dict]:
    """Every learner's rows, learner by learner (:func:`learner_rows`)."""
    return [row for item in report.exports for row in learner_rows(item)]


def _passed(label: str) -> bool:
    return label in (EXERCISE_LABELS["passed"], EXERCISE_LABELS["passed-after-solution"])


def gradebook_columns() -> list[str]:
    """The gradebook's header: :data:`GRADEBOOK_FIRST`, then one column per item of the course
    (``exercise row-mean``, ``question start-predict-softmax``, ``skip-ahead 01_positional_encoding``)."""
    return GRADEBOOK_FIRST + [f"{it.kind} {it.notebook if it.kind == 'skip-ahead' else it.id}"
                              for it in course_items()]


def gradebook(report: Report) -> list[list]:
    """One row per learner (:func:`gradebook_columns`): who, the counts, every item's status."""
    out = []
    for item in report.exports:
        mine = learner_rows(item)
        exercises = [r["status"] for r in mine if r["kind"] == "exercise"]
        answers = [r["status"] for r in mine if r["kind"] == "question"]
        outs = sorted({r["notebook"] for r in mine if r["skipped_ahead"]})
        out.append([item.learner, item.ident, "; ".join(item.flags), item.exported_at,
                    item.file, sum(map(_passed, exercises)), len(exercises),
                    answers.count("right"), len(answers), ", ".join(outs), ", ".join(retired_passed(mine))]
                   + [r["status"] for r in mine if r["kind"] != RETIRED])
    return out


def file_rows(report: Report) -> list[list]:
    """One row per file of the folder (:data:`FILE_COLUMNS`): what became of it, and why."""
    return [list(f) for f in report.files]


# ---------------------------------------------------------------- output

def _ids_as_text(header: list[str], body, excel: bool):
    column = header.index("learner_id")
    for row in body:
        if not excel:
            row = list(row)
            row[column] = id_cell(row[column])
        yield row


def csv_text(report: Report, excel: bool = False) -> str:
    """The long CSV: one row per learner and item (:data:`CSV_COLUMNS`)."""
    body = ([row[c] for c in CSV_COLUMNS] for row in rows(report))
    return spreadsheet.csv_text(CSV_COLUMNS, _ids_as_text(CSV_COLUMNS, body, excel), excel, TEXT_COLUMNS)


def gradebook_text(report: Report, excel: bool = False) -> str:
    """The wide CSV: one row per learner (:func:`gradebook_columns`)."""
    header = gradebook_columns()
    return spreadsheet.csv_text(header, _ids_as_text(header, gradebook(report), excel), excel, TEXT_COLUMNS)


def files_text(report: Report, excel: bool = False) -> str:
    """The CSV of every file of the folder and what became of it (:data:`FILE_COLUMNS`)."""
    return spreadsheet.csv_text(FILE_COLUMNS, _ids_as_text(FILE_COLUMNS, file_rows(report), excel), excel,
                                TEXT_COLUMNS)


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


def shown_learner(item: Export, report: Report) -> str:
    """The learner's name, with the start of the browser's id when another learner typed it too."""
    if any(item in group for group in report.conflicts):
        return f"{item.learner} [{item.ident[:8] or item.file}]"
    return item.learner


def summary_text(report: Report) -> str:
    """The readable summary: learners, exercises, questions, skip-ahead sets, conflicts, files not used."""
    n = len(report.exports)
    lines = [f"Progress report for {export.printable(report.folder)}: {plural(n, 'learner')}, "
             f"{plural(len(report.skipped), 'file')} not used."]
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
                if r["kind"] != RETIRED:                 # said apart, below
                    per_item.setdefault((r["kind"], r["notebook"], r["item"]), []).append(r["status"])
            statuses = [r["status"] for r in mine if r["kind"] == "exercise"]
            answers = [r["status"] for r in mine if r["kind"] == "question"]
            outs = sorted({r["notebook"][:2] for r in mine if r["skipped_ahead"]})
            per_learner.append([shown_learner(item, report)] + [statuses.count(label) for label in labels]
                               + [answers.count("right"), answers.count("wrong"),
                                  ", ".join(outs) or "-", item.exported_at or "?"])
        headers = [_HEADERS[s] for s in EXERCISE_STATUSES]
        lines += ["", "Per learner (exercises by status, where 'started' is hints opened and no answer "
                      "checked; questions answered right and wrong; notebooks skipped ahead past):"]
        lines += _table(["learner"] + headers + ["questions right", "wrong", "skipped ahead past",
                                                 "exported (UTC)"], per_learner)
        by_kind: dict[str, list[list]] = {"exercise": [], "question": [], "skip-ahead": []}
        for (kind, stem, name), mine in per_item.items():
            shown = f"{stem[:2]} {name}" if kind != "skip-ahead" else stem
            if kind == "exercise":
                passed = mine.count(labels[0]) + mine.count(labels[1])
                by_kind[kind].append([shown, f"{passed} of {n}"] + [mine.count(label) for label in labels[1:]])
            else:
                kinds = QUESTION_LABELS if kind == "question" else SKIP_AHEAD_LABELS
                by_kind[kind].append([shown] + [mine.count(label) for label in kinds])
        lines += ["", "Per exercise (learners; 'passed' includes those who passed after the solution):"]
        lines += _table(["exercise", "passed"] + headers[1:], by_kind["exercise"])
        if by_kind["question"]:
            lines += ["", "Per question (learners):"]
            lines += _table(["question", *QUESTION_LABELS], by_kind["question"])
        if by_kind["skip-ahead"]:
            lines += ["", "Skip-ahead sets (learners; passing one counts its notebook as done):"]
            lines += _table(["notebook", *SKIP_AHEAD_LABELS], by_kind["skip-ahead"])
    retired = {}
    for item in report.exports:
        for ex_id in retired_passed(learner_rows(item)):
            retired.setdefault(ex_id, []).append(shown_learner(item, report))
    if retired:
        lines += ["", "Retired exercises passed (in notebooks saved before the course was updated; not "
                      "counted above):"]
        lines += [f"  {ex_id} ({retired_exercises()[ex_id][:2]}): {len(who)} learner(s): {', '.join(who)}"
                  for ex_id, who in sorted(retired.items())]
    if report.conflicts:
        lines += ["", "Name conflicts (learners from different browsers who typed one name; both are "
                      "reported, told apart by their browser's id):"]
        lines += [f"  {group[0].learner}: " + ", ".join(f"{i.ident or '(no id)'} in {i.file}"
                                                         for i in group) for group in report.conflicts]
    if report.skipped:
        lines += ["", "Files not used:"]
        lines += [f"  {name}: {reason}" for name, reason in report.skipped]
    if report.notes:
        lines += ["", "Notes:"] + [f"  {note}" for note in report.notes]
    return "\n".join(lines)
