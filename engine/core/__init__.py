"""The engine without widgets or HTML.

- what the course is: ``course`` (the course this Python runs, as it declares itself),
  ``inventory`` (its notebooks, and the labs, exercises and questions of each, read from the
  notebooks themselves);
- what an exercise is: ``definition`` (data types, blanks ``____`` in templates), ``blank`` (the
  placeholder object), ``registry`` (every notebook and what it defines);
- checking: ``cell`` (run a cell's code), ``checker`` (evaluate an answer into a ``Feedback``,
  ``verdict``), with ``compare`` (a result against the reference's, in words), ``calls`` (the
  learner's function run on the cases), ``failures`` (errors, timeouts, changed inputs),
  ``sandbox`` (the learner's function run on copies of its inputs, random cases seeded from its
  code), ``budget`` (a time budget for the learner's code, kept by a hook on its lines),
  ``diagnose`` (the slip a wrong result shows: a package, one module per family of slips), ``questions`` (grading), ``hints`` (hint
  ladder, solution lock), ``own`` (the learner's passing functions, for the labs), ``runs``
  (what ran in this kernel), ``saved`` (the learner's notebooks as saved), ``which_run`` (a
  check judges only code that ran), ``restart`` (what a new kernel does not hold);
- the learner's progress: ``progress`` (the record), ``progress_file`` (its file),
  ``page_store`` (the record in the browser's storage, where the kernel has no drive),
  ``workspace`` (where the learner's files are);
- tools built on them: ``review``, ``skip_ahead``, ``release``, ``export``, ``parts`` (a
  capstone built from the functions the learner wrote), ``site_files`` (a file the course site
  serves, fetched from the browser's kernel), ``notebooks`` (solve and validate notebook files).

Numbers in messages are written by ``engine.presentation.numbers``.
"""
