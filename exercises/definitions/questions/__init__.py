"""The questions of each notebook, one module per notebook, named as its exercises' module in
:mod:`exercises.definitions` (which lists them in its ``DEFINITIONS`` and ``SKIP_AHEAD``, so
that they are registered with its exercises).

Each module is data only: it builds :class:`~engine.core.definition.Question` objects and
names them in ``QUESTIONS`` (in the order the notebook asks them) and, for notebooks 01 to 05,
the skip-ahead set in ``SKIP_AHEAD``."""
