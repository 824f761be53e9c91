"""This course, as the engine runs it (``engine.core.course``): its name and where its parts are.

``pyproject.toml`` declares :data:`COURSE` as the entry point ``transformer-course`` of the group
``engine.courses``; the engine finds the course through it, and through it the exercise
definitions each notebook names (``exercises.definitions``), the labs (``labs``), the notebooks
(``content/`` in a checkout) and the release the site build writes into the course's wheel
(``exercises/_release/``).
"""

from pathlib import Path

from engine.core.course import Course

HERE = Path(__file__).resolve().parent

COURSE = Course(
    name="transformer-course",
    definitions="exercises.definitions",
    retired="exercises.retired",
    labs="labs",
    content=HERE.parent / "content",
    release=HERE / "_release",
    start="00_start_here.ipynb",
    export_id="transformer-block",
    packages=("lib", "labs", "exercises", "presentation"),
)
