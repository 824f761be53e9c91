"""The course the engine runs: what it is called and where its parts are, as the course says.

The engine knows no course by name. A course is a Python distribution that declares a
:class:`Course` as an entry point of the group :data:`GROUP`, in its ``pyproject.toml``::

    [project.entry-points."engine.courses"]
    transformer-course = "exercises.course:COURSE"

and :func:`current` finds it the first time something asks (nothing is looked up on import).
Entry points are the standard plugin mechanism of Python packages: they are in the metadata of
the installed wheel, so a browser kernel that installed the course's wheel finds its course
before any cell has run, and so does a notebook saved from an earlier release.

Where several courses are installed in one Python, the environment variable :data:`CHOOSE`
names the one to run: a course's entry point name (``transformer-course``), or a course not
installed at all, written as an entry point's value (``my_course:COURSE``, importable from
``PYTHONPATH``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

GROUP = "engine.courses"
CHOOSE = "ENGINE_COURSE"


@dataclass(frozen=True)
class Course:
    """A course, as the engine needs to know it.

    ``name``: the course's id, "transformer-course"; also the name of the learner's record in
    the browser's storage (:mod:`engine.core.page_store`) and, with ``-progress``, the format of
    their progress file (:mod:`engine.core.progress_file`).
    ``definitions``: the package of its exercises and questions, one module per notebook
    ("exercises.definitions"); a notebook's metadata names its module (``"course":
    {"definitions": "norms"}``) and the registry loads it from this package.
    ``labs``: the package of its labs, one package per notebook ("labs"; a notebook calls
    ``from labs.norms import stack_lab``).
    ``content``: its notebooks, in a checkout (an installed wheel has none).
    ``release``: where the site build writes the release into the course's wheel: the inventory
    and the manifest, which names the zip of the notebooks as shipped that the site serves beside
    the wheel (a folder inside one of the course's packages).
    ``start``: the file name of its first notebook, which marks the learner's workspace.
    ``retired``: the package of its retired exercises, or None.
    ``export_id``: what an exported progress file names as its course (``name`` unless given).
    ``packages``: its top-level packages, whose code is the course's, never the learner's (the
    time budget tells them apart, :mod:`engine.core.budget`).
    """
    name: str
    definitions: str
    labs: str
    content: Path
    release: Path
    start: str
    retired: str | None = None
    export_id: str = ""
    packages: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.export_id:
            object.__setattr__(self, "export_id", self.name)

    @property
    def progress_format(self) -> str:
        """The ``format`` of the learner's progress file: "transformer-course-progress"."""
        return f"{self.name}-progress"


@lru_cache(maxsize=1)
def current() -> Course:
    """The course this Python runs (see the module's docstring). Raises LookupError, in words,
    when there is none, or several and :data:`CHOOSE` names none of them."""
    chosen = os.environ.get(CHOOSE, "").strip()
    if ":" in chosen:
        entry = metadata.EntryPoint(name=chosen, value=chosen, group=GROUP)
    else:
        installed = {entry.name: entry for entry in metadata.entry_points(group=GROUP)}
        if chosen and chosen not in installed:
            raise LookupError(f"{CHOOSE}={chosen} names no installed course (installed: "
                              f"{', '.join(sorted(installed)) or 'none'})")
        if not chosen and len(installed) != 1:
            raise LookupError("No course is installed in this Python (no entry point in the group "
                              f"{GROUP!r}): install the course's package" if not installed else
                              f"Several courses are installed ({', '.join(sorted(installed))}): set {CHOOSE} "
                              "to the one to run")
        entry = installed[chosen] if chosen else next(iter(installed.values()))
    course = entry.load()
    if not isinstance(course, Course):
        raise LookupError(f"{entry.value} is not a Course (engine.core.course.Course)")
    return course


__all__ = ["CHOOSE", "GROUP", "Course", "current"]
