"""The course's labs, one package per notebook (``start``, ``positional``, ``ffn``, ``norms``,
``decoder``, ``trained``) with one module per lab, and the kit they are built from (``kit``).
See ``labs/README.md``.

The modules ``questions``, ``testout``, ``progress_view``, ``review`` and ``release_view`` are
kept for notebooks saved from earlier releases; what they name lives in ``exercises.ui``.
Importing this package, or a lab's model, imports nothing heavy: each view imports ipywidgets
and matplotlib itself.
"""
