"""The instructors' report over a folder of exported progress files, on their own machine.

- ``report``: read the folder, decide what becomes of each file, and the tables (one row per
  learner and item, one per learner, one per file);
- ``untrusted`` (reading a learner's file that may be anything) and ``spreadsheet`` (CSV text no
  spreadsheet runs);
- ``dashboard``: the report as one self-contained web page;
- ``command``: ``python -m engine report FOLDER`` (``./course report``).

No widgets: this runs on the instructor's machine, never in a learner's kernel.
"""
