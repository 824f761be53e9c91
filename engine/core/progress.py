"""The learner's progress: one record, :class:`Progress`, with a method for each kind of entry.

The record wraps the JSON document of the progress file (:mod:`engine.core.progress_file`:
where it lives, its format, reading and writing). Its sections, and the methods that change them:

- ``exercises``: per exercise id, its checks, attempts, misses, hints seen, whether the solution
  was opened and whether it passed (:meth:`~Progress.record_check`, :meth:`~Progress.record_hint`,
  :meth:`~Progress.record_reveal`);
- ``questions``: per question id, the answer, whether it was right, whether the answer was shown
  (:meth:`~Progress.record_answer`, :meth:`~Progress.record_question_reveal`);
- ``review``: per exercise or question id, its tries in the review (:meth:`~Progress.record_review`);
- ``skip_ahead``: per notebook, its skip-ahead attempts (:meth:`~Progress.record_skip_ahead`;
  files of earlier releases name this section ``test_out``, read as ``skip_ahead``);
- ``release_choices``: per notebook path, the release whose new version the learner chose not to
  open (:meth:`~Progress.keep_release`);
- ``learner``: the name typed for exports and a random id (:meth:`~Progress.name_learner`).

A record changes in memory; :meth:`~Progress.save` writes it. For one change, the module's
functions (``record_check(...)``, ``exercise_entry(...)``, ...) load, change and save in one
call. :func:`export_text` and :func:`import_text` move a record between browsers and to the
instructor's report. Loading and saving never raise: problems become :func:`notices`. The file's
names a view needs (:func:`progress_path`, :func:`notices`, :func:`record_format`, ``VERSION``) can be
imported from here too.

Plain Python (no numpy), so it also runs where the course's numerical code cannot.
"""

from __future__ import annotations

import copy
import json

from . import export, page_store
from .progress_file import (VERSION, empty_record, is_progress_record, notice, notices, now, progress_path,
                            read, record_format, write)
from .registry import exercises_by_notebook
from .release import manifest

STATUSES = ("passed", "passed-after-solution", "attempted", "not-started")
STATUS_LABELS = {
    "passed": "passed",
    "passed-after-solution": "passed after the solution",
    "attempted": "attempted",
    "not-started": "not started",
}
# Checks that are no attempt: the blanks still in place, the function not found (its cell never
# ran in this kernel), the cell changed since it ran, the name holding a function that is not the
# learner's (nothing was judged).
NO_ATTEMPT = ("blank", "missing", "changed", "not-yours")
# Checks that give no verdict, so no miss either: those, and a cell that stopped before it
# defined the function (an attempt that could not be judged).
NO_VERDICT = NO_ATTEMPT + ("not-run",)
# Sections kept for the later notebooks' tools; an import keeps the better entry of each.
TOOL_SECTIONS = ("review", "skip_ahead", "release_choices")
# Sections earlier releases wrote under another name: {old name: name}.
RENAMED_SECTIONS = {"test_out": "skip_ahead"}


def status_of(entry: dict) -> str:
    """One of :data:`STATUSES` for an exercise's entry."""
    if entry.get("passed"):
        return "passed-after-solution" if entry.get("passed_after_solution") else "passed"
    if entry.get("attempts", 0) > 0 or entry.get("solution_revealed"):
        return "attempted"
    return "not-started"


class Progress:
    """The learner's whole record. ``data`` is the JSON document, in the file's format."""

    def __init__(self, data: dict | None = None):
        self.data = renamed_sections(data) if data is not None else empty_record()

    @classmethod
    def load(cls) -> "Progress":
        """The record in the progress file (an empty one if there is none); never raises.

        In a browser kernel with no drive, the first load also brings back the record the
        browser keeps for this site, a moment later (:mod:`engine.core.page_store`)."""
        record = cls(read())
        page_store.restore(record.data, _merged_records, _settle)
        return record

    def save(self, replace: bool = False) -> bool:
        """Write the record to the progress file; False (with a notice) if it cannot be written.

        In a browser kernel with no drive, the record is also merged into the one the browser
        keeps for this site (``replace``: stored as it is, for a reset or a replacing import)."""
        written = write(self.data)
        page_store.mirror(self.data, _merged_records, _settle, replace=replace)
        return written

    # ------------------------------------------------------------ sections

    def _section(self, name: str) -> dict:
        """The section, created (or replaced, if damaged) so it can be changed."""
        section = self.data.get(name)
        if not isinstance(section, dict):
            section = self.data[name] = {}
        return section

    def _entry(self, name: str, key: str) -> dict:
        """A copy of one entry of a section ({} when there is none)."""
        section = self.data.get(name)
        value = section.get(key) if isinstance(section, dict) else None
        return dict(value) if isinstance(value, dict) else {}

    def _change(self, name: str, key: str, change, start: dict | None = None) -> dict:
        section = self._section(name)
        entry = section.get(key)
        if not isinstance(entry, dict):
            entry = section[key] = dict(start or {})
        change(entry)
        return dict(entry)

    # ------------------------------------------------------------ exercises

    def exercise(self, ex_id: str) -> dict:
        return self._entry("exercises", ex_id)

    def status(self, ex_id: str) -> str:
        """One of :data:`STATUSES`."""
        return status_of(self.exercise(ex_id))

    def record_check(self, ex_id: str, passed: bool, kind: str, code: str | None = None) -> dict:
        """One run of an exercise's check; ``kind`` is the feedback's. Kinds in
        :data:`NO_ATTEMPT` are no attempt, and those in :data:`NO_VERDICT` no miss. ``code``
        names the code judged (a fingerprint, or None when unknown): the code judged last time,
        judged again (a notebook run from the top once more), is the same try, no new one."""

        def change(e: dict) -> None:
            e["checks"] = e.get("checks", 0) + 1
            e["last"] = kind
            new_try = kind not in NO_ATTEMPT and (code is None or e.get("judged") != code)
            if kind not in NO_ATTEMPT and code is not None:
                e["judged"] = code
            if new_try:
                e["attempts"] = e.get("attempts", 0) + 1
                e.setdefault("first_attempt", now())
            if passed:
                if not e.get("passed"):
                    e["passed"] = True
                    e["passed_at"] = now()
                    e["passed_after_solution"] = bool(e.get("solution_revealed"))
            elif kind not in NO_VERDICT and new_try:
                e["misses"] = e.get("misses", 0) + 1

        return self._change("exercises", ex_id, change)

    def record_hint(self, ex_id: str, level: int) -> dict:
        """The learner has seen the exercise's hints up to ``level`` (never lowered)."""

        def change(e: dict) -> None:
            e["hints"] = max(int(e.get("hints", 0)), int(level))

        return self._change("exercises", ex_id, change)

    def record_reveal(self, ex_id: str) -> dict:
        """The exercise's solution was shown."""

        def change(e: dict) -> None:
            if not e.get("solution_revealed"):
                e["solution_revealed"] = True
                e["revealed_at"] = now()

        return self._change("exercises", ex_id, change)

    # ------------------------------------------------------------ questions

    def question(self, q_id: str) -> dict:
        return self._entry("questions", q_id)

    def questions_answered(self) -> int:
        return len(self.data["questions"])

    def record_answer(self, q_id: str, answer, correct: bool, lock: bool = False) -> dict:
        """One answer to a question. With ``lock``, the first recorded answer stays."""

        def change(e: dict) -> None:
            e["tries"] = e.get("tries", 0) + 1
            if lock and "answer" in e:
                return
            e["answer"] = answer
            e["correct"] = bool(correct)
            e["answered_at"] = now()
            if correct:
                e["ever_correct"] = True

        return self._change("questions", q_id, change)

    def record_question_reveal(self, q_id: str) -> dict:
        """The question's answer was shown."""

        def change(e: dict) -> None:
            e["revealed"] = True

        return self._change("questions", q_id, change)

    # ------------------------------------------------------------ review

    def review(self, item_id: str) -> dict:
        return self._entry("review", item_id)

    def record_review(self, item_id: str, kind: str, passed: bool) -> dict:
        """One try of an exercise or question (``kind``) in the review."""

        def change(e: dict) -> None:
            e["tries"] = int(e.get("tries", 0)) + 1
            e["last"] = "pass" if passed else "fail"
            e["last_at"] = now()
            if passed and not e.get("passed"):
                e["passed"] = True
                e["passed_at"] = now()

        return self._change("review", item_id, change, start={"kind": kind})

    # ------------------------------------------------------------ skip-ahead

    def skip_ahead(self, stem: str) -> dict:
        return self._entry("skip_ahead", stem)

    def record_skip_ahead(self, stem: str, right: int, total: int) -> dict:
        """One submitted skip-ahead set: passed when every answer is right."""

        def change(e: dict) -> None:
            e["attempts"] = int(e.get("attempts", 0)) + 1
            e["last_score"] = [int(right), int(total)]
            e["last_at"] = now()
            if total and right == total and not e.get("passed"):
                e["passed"] = True
                e["passed_at"] = now()

        return self._change("skip_ahead", stem, change)

    # ------------------------------------------------------------ release choices

    def kept_release(self, path: str) -> str | None:
        """The fingerprint of the release whose new version of ``path`` the learner declined."""
        choices = self.data.get("release_choices")
        return choices.get(path) if isinstance(choices, dict) else None

    def keep_release(self, path: str, fingerprint: str) -> None:
        """The learner keeps working on their copy of ``path`` for this release."""
        self._section("release_choices")[path] = fingerprint

    # ------------------------------------------------------------ learner

    def learner(self) -> dict:
        """``{"name", "id"}`` for exports (see :mod:`engine.core.export`); "" when unset."""
        info = self.data.get("learner")
        info = info if isinstance(info, dict) else {}
        return {"name": export.clean_name(info.get("name")), "id": str(info.get("id") or "")}

    def name_learner(self, name: str | None) -> bool:
        """Set the name exports carry (None keeps the stored one, "" exports without a name) and
        give the record an id if it has none. True when the record changed."""
        stored = self.data.get("learner") if isinstance(self.data.get("learner"), dict) else {}
        wanted = {**stored, "name": export.clean_name(stored.get("name") if name is None else name),
                  "id": str(stored.get("id") or export.new_learner_id())}
        if wanted == stored:
            return False
        self.data["learner"] = wanted
        return True

    # ------------------------------------------------------------ the whole record

    def summary(self) -> list[dict]:
        """One row per exercise of the course (from the registry), with its status."""
        rows = []
        for stem, title, exercises in exercises_by_notebook():
            for ex in exercises:
                entry = self.exercise(ex.id)
                rows.append({"notebook": stem, "notebook_title": title, "id": ex.id,
                             "title": ex.title, "status": status_of(entry),
                             "attempts": entry.get("attempts", 0)})
        return rows

    def merge(self, other: "Progress") -> None:
        """Bring in another record, keeping the better result of the two for every entry."""
        theirs = other.data
        if not isinstance(self.data.get("learner"), dict) and isinstance(theirs.get("learner"), dict):
            self.data["learner"] = theirs["learner"]
        self._remember_merged(theirs.get("learner"))
        exercises = self.data["exercises"]
        for ex_id, entry in theirs["exercises"].items():
            exercises[ex_id] = _better_exercise(exercises.get(ex_id, {}), entry)
        for q_id, entry in theirs["questions"].items():
            self.data["questions"].setdefault(q_id, entry)
        for name in TOOL_SECTIONS:
            incoming = theirs.get(name)
            if not isinstance(incoming, dict):
                continue
            ours = self._section(name)
            for key, value in incoming.items():
                if key not in ours or (_passed(value) and not _passed(ours[key])):
                    ours[key] = value

    def _remember_merged(self, theirs) -> None:
        """Note the ids of the browsers whose record this one took in (``learner.merged``), so the
        report counts one learner with two browsers once (:mod:`exercises.core.report`)."""
        mine = self.data.get("learner")
        if not isinstance(mine, dict) or not isinstance(theirs, dict):
            return
        ids = [theirs.get("id")] + list(theirs.get("merged") or [])
        known = list(mine.get("merged") or [])
        new = [i for i in ids if isinstance(i, str) and i and i != mine.get("id") and i not in known]
        if new:
            mine["merged"] = known + new

    def replace_with(self, other: "Progress") -> None:
        """Take another record's entries instead of this one's; the learner stays who they are."""
        learner = self.data.get("learner")
        self.data = other.data
        if isinstance(learner, dict):
            self.data["learner"] = learner

    def reset(self) -> None:
        """Forget all progress; the learner's name and id for exports are kept."""
        learner = self.data.get("learner")
        self.data = empty_record()
        if isinstance(learner, dict):
            self.data["learner"] = learner


def renamed_sections(data: dict) -> dict:
    """``data`` with the sections earlier releases named otherwise under today's names (an entry
    under both names keeps today's); changed in place and returned."""
    for old, new in RENAMED_SECTIONS.items():
        if isinstance(data, dict) and old in data:
            section = data.pop(old)
            if new not in data:
                data[new] = section
            elif isinstance(section, dict) and isinstance(data[new], dict):
                data[new] = {**section, **data[new]}
    return data


def _merged_records(stored: dict, mine: dict) -> dict:
    """Two records as one: ``mine`` with what only ``stored`` holds added, and the better result
    of each exercise (:meth:`Progress.merge`)."""
    if not is_progress_record(stored):
        return mine
    record = Progress(copy.deepcopy(mine))
    record.merge(Progress(stored))
    return record.data


def _without_stamp(data: dict) -> dict:
    return {key: value for key, value in data.items() if key != "updated"}


def _settle(stored: dict) -> None:
    """Take in the record the browser now keeps (see :meth:`Progress.save`): merged into the
    file, which is written only if that changes it."""
    if not is_progress_record(stored):
        return
    here = read()
    merged = _merged_records(stored, here)
    if _without_stamp(merged) != _without_stamp(here):
        write(merged)


def _passed(entry) -> bool:
    return isinstance(entry, dict) and bool(entry.get("passed"))


def _better_exercise(a: dict, b: dict) -> dict:
    """Two entries of one exercise as one: the larger counts, a pass from either, and "after the
    solution" only if every pass came after it."""
    out = dict(a)
    for key in ("checks", "attempts", "misses", "hints"):
        if key in a or key in b:
            out[key] = max(int(a.get(key, 0)), int(b.get(key, 0)))
    out["solution_revealed"] = bool(a.get("solution_revealed") or b.get("solution_revealed"))
    if a.get("passed") or b.get("passed"):
        out["passed"] = True
        clean = [e for e in (a, b) if e.get("passed") and not e.get("passed_after_solution")]
        out["passed_after_solution"] = not clean
    for key, value in b.items():
        out.setdefault(key, value)
    return out


# ---------------------------------------------------------------- one change in one call


def load() -> Progress:
    """The record in the progress file; never raises."""
    return Progress.load()


def _change_and_save(change) -> dict:
    record = Progress.load()
    entry = change(record)
    record.save()
    return entry


def record_check(ex_id: str, passed: bool, kind: str, code: str | None = None) -> dict:
    return _change_and_save(lambda record: record.record_check(ex_id, passed, kind, code))


def record_hint(ex_id: str, level: int) -> dict:
    return _change_and_save(lambda record: record.record_hint(ex_id, level))


def record_reveal(ex_id: str) -> dict:
    return _change_and_save(lambda record: record.record_reveal(ex_id))


def record_answer(q_id: str, answer, correct: bool, lock: bool = False) -> dict:
    return _change_and_save(lambda record: record.record_answer(q_id, answer, correct, lock))


def record_question_reveal(q_id: str) -> dict:
    return _change_and_save(lambda record: record.record_question_reveal(q_id))


def exercise_entry(ex_id: str) -> dict:
    return Progress.load().exercise(ex_id)


def question_entry(q_id: str) -> dict:
    return Progress.load().question(q_id)


def learner() -> dict:
    return Progress.load().learner()


def summary() -> list[dict]:
    return Progress.load().summary()


def reset() -> None:
    """Forget all progress (the learner's name and id for exports are kept)."""
    record = Progress.load()
    record.reset()
    record.save(replace=True)


# ---------------------------------------------------------------- exports and imports


def export_text(learner: str | None = None) -> str:
    """The record as an export file: with the learner's name and id, the time and a checksum.

    ``learner`` is the name (or student ID) the learner typed; it is kept for the next export.
    ``None`` keeps the name already stored; ``""`` exports without a name.
    """
    record = Progress.load()
    if record.name_learner(learner):
        record.save()
    running = manifest()
    release = running.get("version") if isinstance(running, dict) else None
    return json.dumps(export.seal(record.data, release=release), indent=1, sort_keys=True)


def import_text(text: str, replace: bool = False) -> Progress:
    """Bring in an exported progress file. Raises ``ValueError`` if it is not one.

    By default it is merged with the current record (the better result of the two is kept);
    ``replace=True`` swaps the record for it. Returns the record as saved.
    """
    try:
        incoming = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"this is not a progress file (not JSON: {exc})") from None
    if not is_progress_record(incoming):
        raise ValueError("this is not a progress file of this course")
    seal = export.verify(incoming)
    if seal == export.MISMATCH:
        raise ValueError("the file was changed or damaged after it was exported "
                         "(its checksum does not match)")
    if seal == export.MISSING:
        notice("That file has no checksum (it comes from an older version of the course, "
               "or is not an export), so it was imported as it is.")
    incoming.pop("export", None)
    record = Progress.load()
    if replace:
        record.replace_with(Progress(incoming))
    else:
        record.merge(Progress(incoming))
    record.save(replace=replace)
    return record


__all__ = ["RENAMED_SECTIONS", "STATUSES", "STATUS_LABELS", "TOOL_SECTIONS", "VERSION", "Progress",
           "empty_record", "renamed_sections", "exercise_entry", "export_text", "import_text", "is_progress_record", "learner", "load",
           "notices", "progress_path", "question_entry", "record_answer", "record_format", "record_check", "record_hint",
           "record_question_reveal", "record_reveal", "reset", "status_of", "summary"]
