"""The exercises and questions of each notebook, one module per notebook (each notebook names
its module in its metadata, ``"course": {"definitions": "norms"}``; see
``engine.core.inventory``), its questions in the module of the same name in
:mod:`exercises.definitions.questions`.

Each module is data only: it builds :class:`~engine.core.definition.Exercise` objects and
names them in ``DEFINITIONS`` (in the order the notebook uses them), followed by its notebook's
questions, and, for notebooks 01 to 05, the skip-ahead questions in ``SKIP_AHEAD``. Importing a
module registers nothing: :func:`engine.core.registry.load_all` does that.

These are the live course only: the exercises a newer release replaced are in
:mod:`exercises.retired`, which imports what they share from here (never the reverse)."""
