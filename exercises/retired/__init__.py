"""The retired exercises: exercises a newer release replaced with reworked ones, kept only so
that notebooks saved by learners from earlier releases still check (their verdicts, hints, known
mistakes and feedback unchanged). They are compatibility code, not the course: no current
notebook has a cell for them, and the registry leaves them out of the course's lists
(:func:`engine.core.registry.all_exercises` gives them only when asked).

One module per notebook, named like that notebook's module of :mod:`exercises.definitions`
(``exercises.retired.norms`` holds notebook 03's retired exercises), with the same form: its
exercises in ``DEFINITIONS``, each ``retired=True``. The registry loads it with the notebook's
definitions, so a retired exercise is still found by its id. What a retired exercise shares
with a live one (cases, helpers, known mistakes) stays with the live one and is imported from
:mod:`exercises.definitions`; nothing there imports from here. To retire an exercise, move its
definition here, with ``retired=True``, and take its cell out of the notebook."""
