"""Names from earlier releases of the course, kept so that notebooks learners saved from them
still run (``tests/saved_notebooks/``). Nothing in the course uses them; this package is the one
place that knows them.

- ``names``: weights renamed to the library's one naming scheme (see ``lib``). ``BlockWeights``,
  ``lib.ffn.WorkedExample`` and ``lib.model.Weights`` still answer to the earlier names: ``w.W1``
  reads ``w.W_up``, ``BlockWeights(..., W1=...)`` fills ``W_up``.
- ``moved``: names that left ``lib``, found where they live now through the entry points the
  course declares (``lib.params.REAL_MODELS``, the published models, now lives with the
  parameter calculator in ``labs.decoder.models``; ``lib.exercises``' names in the engine).

Importing this package imports nothing.
"""
