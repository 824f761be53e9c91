"""The course's exercise system, in three layers (each imports only the layers below it):

- ``exercises.core``: exercises and questions as data types, the registry, the checker, the
  learner's progress, exports and the instructor's report, review, skip-ahead sets, releases.
  No widgets, no display: every function returns plain values.
- ``exercises.definitions``: the exercises and questions of each notebook, as data, one module
  per notebook.
- ``exercises.ui``: what a notebook shows (feedback, hint and solution buttons, question
  widgets, the progress, review, skip-ahead and release views). The only part that imports
  ipywidgets or IPython.

A notebook's setup cell imports the ``exercises.ui`` names it uses; importing any module here has
no side effect (nothing is displayed or written until a function is called).
"""
