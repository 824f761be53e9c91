"""Who is who in a folder of progress exports (:mod:`exercises.core.report`'s helpers that need
none of its tables): the files to look at, one level of sub-folders down with ``--recursive``
(an LMS's "download all submissions" gives a folder per learner); the browsers that are one
learner because the learner imported one's progress into the other (``learner.merged``,
:meth:`exercises.core.progress.Progress.merge`), and their records joined; a browser id as a
spreadsheet must show it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from engine.core import export


def folder_entries(folder: Path, recursive: bool) -> list[tuple[str, os.DirEntry, str]]:
    """(name as shown, entry, real path of its folder) of the files to look at: those directly
    in folder and, with ``recursive``, those directly in each of its sub-folders (an LMS's
    "download all submissions": one folder per learner). Links to folders are not followed."""
    real = os.path.realpath(folder)
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    found = []
    for entry in entries:
        if recursive and entry.is_dir(follow_symlinks=False):
            try:
                with os.scandir(entry.path) as inner:
                    found += [(f"{entry.name}/{e.name}", e, os.path.join(real, entry.name))
                              for e in sorted(inner, key=lambda e: e.name)]
            except OSError as exc:
                found.append((entry.name, entry, real + f"\0could not be listed ({exc.strerror})"))
            continue
        found.append((entry.name, entry, real))
    return found


def joined_browsers(by_learner: dict) -> list[list[tuple[str, str]]]:
    """Groups of browser ids that are one learner: an export remembers the ids of the browsers
    whose progress the learner imported into it (``learner.merged``, :meth:`Progress.merge`)."""
    parent: dict[str, str] = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for (kind, ident), items in by_learner.items():
        if kind != "id":
            continue
        root(ident)
        for item in items:
            merged = (item.data.get("learner") or {}).get("merged")
            for other in merged if isinstance(merged, list) else []:
                other = export.printable(other)[:64] if isinstance(other, str) else ""
                if other and ("id", other) in by_learner:
                    parent[root(other)] = root(ident)
    groups: dict[str, list] = {}
    for (kind, ident) in by_learner:
        if kind == "id":
            groups.setdefault(root(ident), []).append(("id", ident))
    return [g for g in groups.values() if len(g) > 1]


def join_records(used, others: list) -> None:
    """The learner's record as one: the better result of each entry of every browser's newest
    export (as the progress view's Import merges them), flagged."""
    from engine.core.progress import Progress

    record = Progress(json.loads(json.dumps(used.data)))
    for other in others:
        record.merge(Progress(json.loads(json.dumps(other.data))))
    used.data = record.data
    used.flags.append("joined with browser id(s) " + ", ".join(o.ident for o in others)
                      + ": the learner imported that browser's progress (one learner, not namesakes)")


NUMBER_LIKE = re.compile(r"\d+([eE][+-]?\d+)?")


def id_cell(ident):
    """A browser id as the default CSV writes it: an id a spreadsheet would read as a number (all
    digits, or digits with one e: LibreOffice turns 318675e37645 into 1.8E+308) starts with ', as
    a cell that would be a formula does (:mod:`exercises.core.spreadsheet`); ids made since are
    never such (:func:`exercises.core.export.new_learner_id`)."""
    return "'" + ident if isinstance(ident, str) and NUMBER_LIKE.fullmatch(ident) else ident
