"""Command line: ``python -m exercises solve SRC DEST`` (and ``list``, ``validate``,
``report FOLDER [--csv OUT.csv]``)."""

from __future__ import annotations

import argparse
import sys

from .core import notebooks
from .core.registry import all_exercises, all_questions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exercises")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("solve", help="write the solved copy of a notebook or of every notebook in a folder")
    p.add_argument("src")
    p.add_argument("dest")
    v = sub.add_parser("validate", help="check the exercise/check cell conventions of notebooks")
    v.add_argument("paths", nargs="+")
    sub.add_parser("list", help="list the exercises and questions of the course")
    r = sub.add_parser("report", help="progress report over a folder of learners' exported progress files")
    r.add_argument("folder", help="folder holding the exported files (read not recursively)")
    r.add_argument("--csv", default="progress-report.csv", metavar="OUT.csv",
                   help="where to write the table (default: progress-report.csv; '-' for standard output)")
    args = parser.parse_args(argv)

    if args.command == "report":
        from .core import report

        return report.main(args.folder, args.csv)

    if args.command == "solve":
        try:
            done = notebooks.solve_path(args.src, args.dest)
        except (OSError, ValueError, KeyError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for path, ids in done:
            print(f"{path}: {len(ids)} exercise(s) solved" + (f" ({', '.join(ids)})" if ids else ""))
        return 0
    if args.command == "validate":
        from pathlib import Path

        bad = 0
        for arg in args.paths:
            root = Path(arg)
            files = sorted(root.rglob("*.ipynb")) if root.is_dir() else [root]
            for f in files:
                if ".ipynb_checkpoints" in f.parts:
                    continue
                for problem in notebooks.validate_notebook(notebooks.read(f)):
                    print(f"{f}: {problem}")
                    bad += 1
        return 1 if bad else 0
    for ex in all_exercises():
        print(f"exercise {ex.notebook} {ex.id}: {ex.title}")
    for q in all_questions():
        print(f"question {q.notebook} {q.id} ({q.kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
