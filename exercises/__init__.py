"""The course's exercises and questions, as data, and how the engine finds them:

- ``exercises.definitions``: the exercises and questions of each notebook, one module per
  notebook (its metadata names it);
- ``exercises.retired``: the retired exercises (replaced by reworked ones, kept only so that
  notebooks saved from earlier releases still check), one module per notebook that has some;
- ``exercises.course``: the course as the engine finds it (its name, these two packages, the labs
  package, the notebooks), declared as an entry point in ``pyproject.toml``;
- ``exercises.compat``: the table of old module paths notebooks saved from earlier releases
  import, and what they need (``exercises.ui``, ``exercises.core`` hold some of those paths).

The engine that checks them is ``engine`` (``engine.core.definition`` holds the data types).
Importing any module here has no side effect. ``README.md`` here is the guide to writing
exercises; ``python -m engine`` solves, validates and lists them.
"""
