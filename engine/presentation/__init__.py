"""How the engine writes what it shows: numbers in words, HTML in the notebook's theme, tables, and
the support every course widget needs in the page. Everything else in the engine, and a course's
labs, use it; it imports nothing of either.

- ``numbers``: numbers and lists in plain text (``number``, ``fixed``, ``percent``, ``count``,
  ``word_list``, ...), the same everywhere in the course. Plain Python: no widgets, no IPython,
  no matplotlib (``engine.core`` writes its feedback with it);
- ``html``: boxes, code spans, plain text, notes and links in the theme's colours;
- ``tables``: a small table of numbers and a ruled table;
- ``access``: the root of a course widget (``course_root``), which brings ``access.css`` and
  ``access.js`` into the page (a focus ring, controls that wrap, verdicts read out by screen
  readers). The only module that imports ipywidgets, and only when called.

Importing any of these has no side effect.
"""
