"""The course's labs, one package per notebook (``start``, ``positional``, ``ffn``, ``norms``,
``decoder``, ``trained``) with one module per lab, built from the engine's kit (``engine.kit``).
See ``labs/README.md``.

The modules ``questions``, ``testout``, ``progress_view``, ``review`` and ``release_view`` are
old module paths, kept for notebooks saved from earlier releases: each imports its names from
``exercises.compat``.
Importing this package, or a lab's model, imports nothing heavy: each view imports ipywidgets
and matplotlib itself.
"""
