"""What a notebook shows: with ``engine.kit`` and ``engine.presentation.access``, the only part of
the engine that imports ipywidgets and IPython.

- ``feedback`` (a check's feedback, hint and solution buttons), ``questions`` (question widgets),
  ``progress_view``, ``review``, ``skip_ahead``, ``release_view``, ``storage_view``: the widgets;
- ``display`` (showing output). Boxes, code spans, tables, colours and the page support of every
  widget come from ``engine.presentation``.

Notebooks import these from one place, ``engine.notebook``; its setup cell reads::

    from engine.notebook import ____, ask, begin, check, hint, solution
    begin()
"""
