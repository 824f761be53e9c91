"""Exported progress files: who they belong to, when they were made, and a checksum.

An export is the learner's progress record (see :mod:`exercises.core.progress`) with two more
top-level entries::

    "learner": {"name": "Ada L. (s1234)", "id": "3f9c0a1b7e42"},
    "export": {"course": "transformer-block", "version": 1,
               "exported_at": "2026-03-01T14:05:09Z", "release": "...",
               "checksum": "sha256:<64 hex digits>"}

``learner.name`` is what the learner typed in the progress view (may be empty); ``learner.id``
is a random code made once per progress record and kept by the browser, so exports without a
name can still be told apart (they are shown as ``anonymous-<id>``).

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

COURSE_ID = "transformer-block"
CHECKSUM_PREFIX = "sha256:"

# What verify() says about a file's checksum.
OK, MISSING, MISMATCH = "ok", "missing", "mismatch"


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
    out, length = [], 0
    for ch in str(text):
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
    return uuid.uuid4().hex[:12]


def clean_name(name) -> str:
    """A learner's name as stored: a string, spaces collapsed, at most 80 characters."""
    if not isinstance(name, str):
        return ""
    return " ".join(name.split())[:80]


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def seal(record: dict, release: str | None = None, now: str | None = None) -> dict:
    """A copy of ``record`` ready to export: export block added, checksum last."""
    data = {k: v for k, v in record.items() if k != "export"}
    learner = data.get("learner") if isinstance(data.get("learner"), dict) else {}
    data["learner"] = {"name": clean_name(learner.get("name")),
                       "id": str(learner.get("id") or new_learner_id())}
    data["export"] = {"course": COURSE_ID, "version": data.get("version"),
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
    """The download name: ``course-progress-<learner>-<date>.json``."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", display_name(data)).strip("-").lower()[:40]
    stamp = str(data.get("export", {}).get("exported_at", ""))[:10]
    parts = ["course-progress"] + [p for p in (slug, stamp) if p]
    return "-".join(parts) + ".json"
