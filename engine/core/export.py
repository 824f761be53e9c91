"""Exported progress files: who they belong to, when they were made, and a checksum.

An export is the learner's progress record (see :mod:`engine.core.progress`) with two more
top-level entries::

    "learner": {"name": "Ada L. (s1234)", "id": "3f9c0a1b7e42"},
    "export": {"course": "transformer-block", "version": 1,
               "exported_at": "2026-03-01T14:05:09Z", "release": "...",
               "checksum": "sha256:<64 hex digits>"}

``export.course`` is the course's ``export_id`` (:func:`course_id`). ``learner.name`` is what the
learner typed in the progress view (may be empty), in Unicode's composed form (NFC), so one name typed on two keyboards is one name; ``learner.id`` is a random
code made once per progress record and kept by the browser. The instructors' report tells
learners apart by that id (two learners may type one name), and exports without a name are
shown as ``anonymous-<id>``.

The checksum is SHA-256 over the canonical JSON of the whole document without the
``checksum`` field itself (keys sorted, no spaces, ASCII only). It catches accidental edits
and truncated files. It is not a signature: anyone can recompute it after changing the file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import unicodedata
import uuid

from .course import current

CHECKSUM_PREFIX = "sha256:"

# What verify() says about a file's checksum.
OK, MISSING, MISMATCH = "ok", "missing", "mismatch"


def course_id() -> str:
    """What an export names as its course: the course's ``export_id`` ("transformer-block")."""
    return current().export_id


def canonical(data: dict) -> str:
    """The text the checksum is computed over: ``data`` without ``export.checksum``."""
    body = dict(data)
    if isinstance(body.get("export"), dict):
        body["export"] = {k: v for k, v in body["export"].items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def checksum(data: dict) -> str:
    return CHECKSUM_PREFIX + hashlib.sha256(canonical(data).encode("ascii")).hexdigest()


# Characters that must never reach a terminal or a report as they are: controls (ESC starts the
# terminal's escape sequences), format characters (bidi overrides reorder a line), lone
# surrogates (not text at all) and line/paragraph separators.
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def printable(text, limit: int = 200) -> str:
    """``text`` safe to show: every unsafe character written as its escape (``\\x1b``,
    ``\\u202e``), at most ``limit`` characters of it (a cut is marked with "...")."""
    text = str(text)
    if text.isprintable():    # no control, format or separator character: nothing to escape
        return text if len(text) <= limit else text[:limit] + "..."
    out, length = [], 0
    for ch in text:
        if unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            code = ord(ch)
            ch = (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                  else f"\\U{code:08x}")
        if length + len(ch) > limit:
            return "".join(out) + "..."
        out.append(ch)
        length += len(ch)
    return "".join(out)


def new_learner_id() -> str:
    """12 hex digits that start with a letter (a to f): no spreadsheet takes one for a number, as
    LibreOffice does with 318675e37645 (1.8E+308) or 968345217633."""
    ident = uuid.uuid4().hex[:12]
    return "abcdef"[int(ident[0], 16) % 6] + ident[1:] if ident[0].isdigit() else ident


def clean_name(name) -> str:
    """A learner's name as stored: a string in composed form (NFC: "e" + U+0301 becomes "é"),
    spaces collapsed, at most 80 characters."""
    if not isinstance(name, str):
        return ""
    return " ".join(unicodedata.normalize("NFC", name).split())[:80]


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def seal(record: dict, release: str | None = None, now: str | None = None) -> dict:
    """A copy of ``record`` ready to export: export block added, checksum last."""
    data = {k: v for k, v in record.items() if k != "export"}
    learner = data.get("learner") if isinstance(data.get("learner"), dict) else {}
    data["learner"] = {"name": clean_name(learner.get("name")),
                       "id": str(learner.get("id") or new_learner_id())}
    merged = learner.get("merged")
    if isinstance(merged, list) and merged:            # the browsers whose progress this one took in
        data["learner"]["merged"] = [str(i)[:64] for i in merged if isinstance(i, str)][:100]
    data["export"] = {"course": course_id(), "version": data.get("version"),
                      "exported_at": now or utc_now(), "release": release}
    data["export"]["checksum"] = checksum(data)
    return data


def verify(data: dict) -> str:
    """:data:`OK`, :data:`MISSING` (no checksum: an older export, or a raw progress file) or
    :data:`MISMATCH` (changed or damaged after it was exported)."""
    block = data.get("export")
    if not isinstance(block, dict) or "checksum" not in block:
        return MISSING
    return OK if block["checksum"] == checksum(data) else MISMATCH


def learner_of(data: dict) -> tuple[str, str]:
    """``(name, id)`` of an export; empty strings when absent (an id is at most 64 characters)."""
    learner = data.get("learner") if isinstance(data.get("learner"), dict) else {}
    name = clean_name(learner.get("name"))
    ident = learner.get("id")
    return name, ident.strip()[:64] if isinstance(ident, str) else ""


def display_name(data: dict) -> str:
    """How reports show the learner: the typed name, else ``anonymous-<id>``, else ``""``;
    with any control character written as an escape (see :func:`printable`)."""
    name, ident = learner_of(data)
    if name:
        return printable(name)
    return f"anonymous-{printable(ident)}" if ident else ""


def file_name(data: dict) -> str:
    """The download name: ``course-progress-<name>-<id>-<date>-<time>.json``, for example
    ``course-progress-ada-lovelace-3f9c0a1b7e42-2026-03-01-1405.json``.

    The name keeps the letters, marks and digits of any script (``li-wei``, ``李伟``, ``zoë``,
    ``हिन्दी``) in lower case, every run of other characters a ``-``, at most 40 characters; the
    browser's id makes two learners' files differ whatever they typed, and the time (UTC, to the
    minute) one learner's exports of one day."""
    name, ident = learner_of(data)
    kept = "".join(ch if unicodedata.category(ch)[0] in "LMN" else " " for ch in name.lower())
    slug = "-".join(kept.split())[:40].strip("-")
    ident = "-".join(re.findall(r"[A-Za-z0-9]+", ident))[:16]
    block = data.get("export") if isinstance(data.get("export"), dict) else {}
    stamp = re.findall(r"\d+", str(block.get("exported_at", "")))[:5]
    when = "-".join(stamp[:3]) + ("-" + "".join(stamp[3:5]) if len(stamp) == 5 else "")
    parts = ["course-progress"] + [p for p in (slug, ident, when) if p]
    return "-".join(parts) + ".json"
