"""A second, tiny course run by the same engine: one notebook on averages, one lab, one exercise.

It proves that the engine (``engine/``) runs a course it knows nothing of: this package imports
nothing of the transformer course, and the engine has no line for it. It tells the engine what it
is the way every course does, with a :class:`~engine.core.course.Course`: declared as an entry
point in ``pyproject.toml`` when the course is installed, or named by the environment variable
``ENGINE_COURSE=averages:COURSE`` when it is only on ``PYTHONPATH`` (as in the tests).
"""

from pathlib import Path

from engine.core.course import Course

HERE = Path(__file__).resolve().parent

COURSE = Course(
    name="averages-course",
    definitions="averages.definitions",
    labs="averages.labs",
    content=HERE.parent / "content",
    release=HERE / "_release",
    start="01_averages.ipynb",
    packages=("averages",),
)
