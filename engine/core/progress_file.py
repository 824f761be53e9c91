"""The progress file: where it lives, its format, and reading and writing it without ever raising.

The file is ``course-progress.json`` (format ``"<course>-progress"``, :func:`record_format`,
version 1)::

    {"format": "transformer-course-progress", "version": 1, "updated": "2026-03-01T14:05:09",
     "exercises": {"row-mean": {...}}, "questions": {...},
     "review": {...}, "skip_ahead": {...}, "release_choices": {...}, "learner": {...}}

Only ``exercises`` and ``questions`` are always there; :class:`engine.core.progress.Progress`
says what each section holds. Where the file lives (first rule that applies):

1. the path in the environment variable ``COURSE_PROGRESS_FILE``;
2. ``course-progress.json`` at the root of the learner's workspace
   (:func:`engine.core.workspace.workspace_root`: ``/drive`` in JupyterLite, else next to
   the course's first notebook, else the current folder). In a browser kernel with no drive (a
   site served over plain HTTP) that folder lives in memory, and
   :mod:`engine.core.page_store` keeps the record in the browser's storage too.

A missing file is an empty record. A file that cannot be read or parsed is reported, kept
aside as ``<name>.corrupt`` when possible, and replaced by a fresh record. Problems are not
raised but collected as :func:`notices`, plain sentences for the learner.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from . import page_store
from .course import current
from .workspace import workspace_root

FILE_NAME = "course-progress.json"
VERSION = 1

_notices: list[str] = []


def now() -> str:
    """The local time as the file records it: ``"2026-03-01T14:05:09"``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())


def record_format() -> str:
    """The ``format`` of this course's progress file: "transformer-course-progress"."""
    return current().progress_format


def empty_record() -> dict:
    """The document of a learner who has done nothing yet."""
    return {"format": record_format(), "version": VERSION, "updated": now(), "exercises": {}, "questions": {}}


def is_progress_record(data) -> bool:
    """True when ``data`` (parsed JSON) is a progress record of this course."""
    return (
        isinstance(data, dict)
        and data.get("format") == record_format()
        and isinstance(data.get("exercises"), dict)
        and isinstance(data.get("questions"), dict)
        and all(isinstance(v, dict) for v in data["exercises"].values())
        and all(isinstance(v, dict) for v in data["questions"].values())
    )


def progress_path() -> Path:
    """Where the progress file is (see the module's docstring)."""
    env = os.environ.get("COURSE_PROGRESS_FILE")
    if env:
        return Path(env)
    if page_store.state()["state"] == "failed":  # no drive, and no storage in the browser either
        notice(page_store.message())
    return workspace_root() / FILE_NAME


def notices(clear: bool = True) -> list[str]:
    """Messages about problems with the progress file since the last call."""
    out = list(_notices)
    if clear:
        _notices.clear()
    return out


def notice(message: str) -> None:
    """Keep a message for the learner (once) until :func:`notices` collects it."""
    if message not in _notices:
        _notices.append(message)


def read() -> dict:
    """The progress document; an empty record when there is none or it is damaged. Never raises."""
    path = progress_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return empty_record()
    except (OSError, UnicodeDecodeError) as exc:
        notice(f"Could not read your progress file {path} ({exc}); starting a fresh one.")
        _replace_corrupt(path)
        return empty_record()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not is_progress_record(data):
        notice(f"Your progress file {path} was damaged, so a fresh one was started "
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
    write(empty_record())


def write(data: dict) -> bool:
    """Write the document (stamping ``updated``); False, with a notice, when it cannot be written."""
    path = progress_path()
    data["updated"] = now()
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
        notice(f"Could not save your progress to {path} ({exc}).")
        return False
