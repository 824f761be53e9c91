"""What a notebook shows: feedback with hint and solution buttons, question widgets, the
skip-ahead set, and the progress, review and release views. This is the only part of the course
that imports ipywidgets and IPython. A notebook's setup cell reads::

    from exercises.ui.notebook import ____, ask, begin, check, hint, solution
    begin()
"""
