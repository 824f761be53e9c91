"""The course's exercise system, in four layers (each imports only the layers below it, and
``lib`` and ``presentation``; import-linter checks this, see ``.importlinter``):

- ``engine.core``: exercises and questions as data types, the registry, the checker, the
  learner's progress record and its file, exports and the instructors' report, review,
  skip-ahead sets, releases. No widgets, no HTML: every function returns plain values.
- ``exercises.definitions``: the exercises and questions of each notebook, as data, one module
  per notebook.
- ``exercises.retired``: the retired exercises (replaced by reworked ones, kept only so that
  notebooks saved from earlier releases still check), one module per notebook that has some.
- ``engine.ui``: what a notebook shows (feedback, hint and solution buttons, question
  widgets, the progress, review, skip-ahead and release views), built with ``presentation``.
  The only part that imports ipywidgets or IPython.

A notebook's setup cell reads ``from engine.notebook import ____, ask, begin, check, hint,
solution`` then ``begin()``. Importing any module here has no side effect: nothing is
registered, displayed or written until a function is called. ``README.md`` here is the guide to
writing exercises; ``python -m engine`` solves, validates and lists them, and makes the
instructors' report.
"""
