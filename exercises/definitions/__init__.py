"""The exercises and questions of each notebook, one module per notebook (each notebook names
its module in its metadata, ``"course": {"definitions": "norms"}``; see
``exercises.core.inventory``).

Each module is data only: it builds :class:`~exercises.core.definition.Exercise` and
:class:`~exercises.core.definition.Question` objects and names them in ``DEFINITIONS`` (in the
order the notebook uses them) and, for notebooks 01 to 05, its skip-ahead questions in
``SKIP_AHEAD``. Importing a module registers nothing: :func:`exercises.core.registry.load_all`
does that."""
