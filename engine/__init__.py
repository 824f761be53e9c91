"""The engine: what runs any course of notebooks with labs and checked exercises, and knows none.

Five packages in layers, each importing only the ones below it (``.importlinter``):

- ``engine.notebook``: the one module notebooks import from (``____``, ``begin``, ``check``,
  ``hint``, ``solution``, ``ask``, ``skip_ahead``, ``progress_view``, ``review``,
  ``course_release``, ...); ``python -m engine`` (``engine/__main__.py``): solve, write and
  validate notebooks' exercise cells, list a course, make the instructors' report;
- ``engine.ui`` (the widgets a notebook shows), ``engine.kit`` (what labs are built from: the
  figure view, the layout, the "use my function" switch, results computed at build time) and
  ``engine.report`` (the instructors' report and dashboard), side by side;
- ``engine.core``: no widgets, plain values: the data types of exercises and questions, the
  course's inventory and registry, the checker, the learner's progress;
- ``engine.presentation``: how everything is written: numbers, HTML in the theme's colours,
  tables, the page support of every widget.

A course is a package of its own that declares itself to the engine
(:mod:`engine.core.course`); the engine imports nothing of it by its code. See ``README.md`` here.
"""
