"""The learner's progress: a small JSON file in the learner's workspace.

Where the file lives (first rule that applies):

1. the path in the environment variable ``COURSE_PROGRESS_FILE``;
2. ``/drive/course-progress.json`` when ``/drive`` exists (JupyterLite: the
   browser-persisted workspace, whatever sub-folder the kernel runs in);
3. ``course-progress.json`` in the nearest folder, walking up from the current
   directory, that holds ``00_start_here.ipynb``;
4. ``course-progress.json`` in the current directory.

A missing file is an empty record. A file that cannot be read or parsed is
reported, kept aside as ``<name>.corrupt`` when possible, and replaced by a
fresh record; reading and writing never raise.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

FILE_NAME = "course-progress.json"
FORMAT = "transformer-course-progress"
VERSION = 1
STATUSES = ("passed", "passed-after-solution", "attempted", "not-started")
STATUS_LABELS = {
    "passed": "passed",
    "passed-after-solution": "passed after the solution",
    "attempted": "attempted",
    "not-started": "not started",
}

_notices: list[str] = []


def progress_path() -> Path:
    env = os.environ.get("COURSE_PROGRESS_FILE")
    if env:
        return Path(env)
    if os.path.isdir("/drive"):
        return Path("/drive") / FILE_NAME
    if sys.platform == "emscripten":  # in the browser, but its storage is not mounted
        _notice("This browser tab cannot keep files (a private window, or site storage is "
                "blocked), so your progress lasts only until the page is reloaded.")
    try:
        here = Path.cwd().resolve()
    except OSError:
        return Path(FILE_NAME)
    for folder in (here, *here.parents):
        if (folder / "00_start_here.ipynb").is_file():
            return folder / FILE_NAME
    return here / FILE_NAME


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())


def empty_record() -> dict:
    return {"format": FORMAT, "version": VERSION, "updated": _now(),
            "exercises": {}, "questions": {}}


def _valid(data) -> bool:
    return (
        isinstance(data, dict)
        and data.get("format") == FORMAT
        and isinstance(data.get("exercises"), dict)
        and isinstance(data.get("questions"), dict)
        and all(isinstance(v, dict) for v in data["exercises"].values())
        and all(isinstance(v, dict) for v in data["questions"].values())
    )


def notices(clear: bool = True) -> list[str]:
    """Messages about problems with the progress file since the last call."""
    out = list(_notices)
    if clear:
        _notices.clear()
    return out


def _notice(message: str) -> None:
    if message not in _notices:
        _notices.append(message)


def load() -> dict:
    """The progress record; never raises."""
    path = progress_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return empty_record()
    except (OSError, UnicodeDecodeError) as exc:
        _notice(f"Could not read your progress file {path} ({exc}); starting a fresh one.")
        _replace_corrupt(path)
        return empty_record()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not _valid(data):
        _notice(f"Your progress file {path} was damaged, so a fresh one was started "
                f"(the old one was kept as {path.name}.corrupt).")
        _replace_corrupt(path)
        return empty_record()
    return data


def _replace_corrupt(path: Path) -> None:
    try:
        backup = path.with_name(path.name + ".corrupt")
        backup.write_bytes(path.read_bytes())
    except OSError:
        pass
    save(empty_record())


def save(data: dict) -> bool:
    """Write the record; reports (never raises) when the file cannot be written."""
    path = progress_path()
    data["updated"] = _now()
    text = json.dumps(data, indent=1, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if str(path).startswith("/drive/"):
            # The browser drive: one plain write (renames are round trips there).
            path.write_text(text, encoding="utf-8")
        else:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        return True
    except OSError as exc:
        _notice(f"Could not save your progress to {path} ({exc}).")
        return False


def _update(section: str, key: str, change) -> dict:
    data = load()
    entry = data[section].setdefault(key, {})
    change(entry)
    save(data)
    return entry


def record_check(ex_id: str, passed: bool, kind: str) -> dict:
    """Record one run of an exercise's check. ``kind`` "blank" is not an attempt."""

    def change(e: dict) -> None:
        e["checks"] = e.get("checks", 0) + 1
        e["last"] = kind
        if kind != "blank":
            e["attempts"] = e.get("attempts", 0) + 1
            e.setdefault("first_attempt", _now())
        if passed:
            if not e.get("passed"):
                e["passed"] = True
                e["passed_at"] = _now()
                e["passed_after_solution"] = bool(e.get("solution_revealed"))
        elif kind != "blank":
            e["misses"] = e.get("misses", 0) + 1

    return _update("exercises", ex_id, change)


def record_hint(ex_id: str, level: int) -> dict:
    def change(e: dict) -> None:
        e["hints"] = max(int(e.get("hints", 0)), int(level))

    return _update("exercises", ex_id, change)


def record_reveal(ex_id: str) -> dict:
    def change(e: dict) -> None:
        if not e.get("solution_revealed"):
            e["solution_revealed"] = True
            e["revealed_at"] = _now()

    return _update("exercises", ex_id, change)


def record_answer(q_id: str, answer, correct: bool, lock: bool = False) -> dict:
    def change(e: dict) -> None:
        e["tries"] = e.get("tries", 0) + 1
        if lock and "answer" in e:
            return
        e["answer"] = answer
        e["correct"] = bool(correct)
        e["answered_at"] = _now()
        if correct:
            e["ever_correct"] = True

    return _update("questions", q_id, change)


def record_question_reveal(q_id: str) -> dict:
    def change(e: dict) -> None:
        e["revealed"] = True

    return _update("questions", q_id, change)


def exercise_entry(ex_id: str) -> dict:
    return dict(load()["exercises"].get(ex_id, {}))


def question_entry(q_id: str) -> dict:
    return dict(load()["questions"].get(q_id, {}))


def status_of(entry: dict) -> str:
    """One of :data:`STATUSES` for an exercise's record."""
    if entry.get("passed"):
        return "passed-after-solution" if entry.get("passed_after_solution") else "passed"
    if entry.get("attempts", 0) > 0 or entry.get("solution_revealed"):
        return "attempted"
    return "not-started"


def summary() -> list[dict]:
    """One row per exercise of the course (from the registry), with its status."""
    from .registry import exercises_by_notebook

    data = load()
    rows = []
    for stem, title, exercises in exercises_by_notebook():
        for ex in exercises:
            entry = data["exercises"].get(ex.id, {})
            rows.append({"notebook": stem, "notebook_title": title, "id": ex.id,
                         "title": ex.title, "status": status_of(entry),
                         "attempts": entry.get("attempts", 0)})
    return rows


def learner() -> dict:
    """``{"name", "id"}`` of this record's learner (see :mod:`exercises.core.export`)."""
    from .export import clean_name

    info = load().get("learner")
    info = info if isinstance(info, dict) else {}
    return {"name": clean_name(info.get("name")), "id": str(info.get("id") or "")}


def export_text(learner: str | None = None) -> str:
    """The record as an export file: with the learner's name and id, the time and a checksum.

    ``learner`` is the name (or student ID) the learner typed; it is kept for the next export.
    ``None`` keeps the name already stored; ``""`` exports without a name.
    """
    from . import export

    data = load()
    stored = data.get("learner") if isinstance(data.get("learner"), dict) else {}
    wanted = {"name": export.clean_name(stored.get("name") if learner is None else learner),
              "id": str(stored.get("id") or export.new_learner_id())}
    if wanted != stored:
        data["learner"] = wanted
        save(data)
    try:
        from exercises.core.release import manifest

        release = (manifest() or {}).get("version")
    except Exception:  # the release manifest is optional
        release = None
    return json.dumps(export.seal(data, release=release), indent=1, sort_keys=True)


def _merge_exercise(a: dict, b: dict) -> dict:
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


def import_text(text: str, replace: bool = False) -> dict:
    """Bring in an exported progress file. Raises ``ValueError`` if it is not one.

    By default it is merged with the current record (the better result of the
    two is kept); ``replace=True`` swaps the record for it.
    """
    try:
        incoming = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"this is not a progress file (not JSON: {exc})") from None
    if not _valid(incoming):
        raise ValueError("this is not a progress file of this course")
    from . import export

    seal = export.verify(incoming)
    if seal == export.MISMATCH:
        raise ValueError("the file was changed or damaged after it was exported "
                         "(its checksum does not match)")
    if seal == export.MISSING:
        _notice("That file has no checksum (it comes from an older version of the course, "
                "or is not an export), so it was imported as it is.")
    incoming.pop("export", None)
    current = load()
    if replace:
        data = incoming
        if isinstance(current.get("learner"), dict):  # you stay who you are
            data["learner"] = current["learner"]
    else:
        data = current
        if not isinstance(data.get("learner"), dict) and isinstance(incoming.get("learner"), dict):
            data["learner"] = incoming["learner"]
        for ex_id, entry in incoming["exercises"].items():
            data["exercises"][ex_id] = _merge_exercise(data["exercises"].get(ex_id, {}), entry)
        for q_id, entry in incoming["questions"].items():
            data["questions"].setdefault(q_id, entry)
        for section in ("review", "test_out", "release_choices"):  # kept by the later notebooks' tools
            theirs = incoming.get(section)
            if isinstance(theirs, dict):
                mine = data.setdefault(section, {})
                for key, value in theirs.items():
                    better = isinstance(value, dict) and value.get("passed") and not (
                        isinstance(mine.get(key), dict) and mine[key].get("passed"))
                    if key not in mine or better:
                        mine[key] = value
    save(data)
    return data


def reset() -> None:
    """Forget all progress (the learner's name and id for exports are kept)."""
    keep = load().get("learner")
    data = empty_record()
    if isinstance(keep, dict):
        data["learner"] = keep
    save(data)
