"""What a notebook shows: the only part of the exercise system that imports ipywidgets and IPython.

- ``notebook``: what the setup cell imports (``____``, ``ask``, ``begin``, ``check``, ``hint``,
  ``solution``);
- ``feedback`` (a check's feedback, hint and solution buttons), ``questions`` (question widgets),
  ``progress_view``, ``review``, ``skip_ahead``, ``release_view``, ``storage_view``: the widgets;
- ``display`` (showing output). Boxes, code spans, tables, colours and the page support of every
  widget come from ``presentation``.

A notebook's setup cell reads::

    from exercises.ui.notebook import ____, ask, begin, check, hint, solution
    begin()
"""
