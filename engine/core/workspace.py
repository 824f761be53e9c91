"""The learner's workspace: the folder that holds their notebooks (and their progress file).

In JupyterLite it is the browser's drive, ``/drive``, whatever sub-folder a notebook runs in.
Elsewhere it is the nearest folder, walking up from the current one, that holds the course's
first notebook (:attr:`engine.core.course.Course.start`, ``00_start_here.ipynb``), else the
current folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from .course import current

DRIVE = "/drive"


def in_browser_drive() -> bool:
    """True when the browser's persistent drive is mounted (JupyterLite)."""
    return os.path.isdir(DRIVE)


def workspace_root() -> Path:
    """The folder holding the learner's notebooks (see the module's docstring)."""
    if in_browser_drive():
        return Path(DRIVE)
    try:
        here = Path.cwd().resolve()
    except OSError:                          # the current folder was removed
        return Path(".")
    start = current().start
    for folder in (here, *here.parents):
        if (folder / start).is_file():
            return folder
    return here
