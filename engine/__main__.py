"""Command line: ``python -m engine solve SRC DEST`` (and ``cells PATH...``, ``list``,
``validate``, ``report FOLDER [--csv OUT.csv] [--html [PAGE.html]] [--excel] [--recursive] [--force]``), for the
course this Python runs (:func:`engine.core.course.current`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .core import notebooks
from .core.course import current
from .core.registry import all_exercises, all_questions


def not_a_notebook(path: Path) -> str | None:
    """Why ``path`` is not a Jupyter notebook, or None when it is one."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return f"{path} could not be read ({exc.strerror or exc})"
    try:
        nb = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return f"{path} is not a Jupyter notebook (not JSON text)"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or "nbformat" not in nb:
        return f"{path} is not a Jupyter notebook (JSON without cells and nbformat)"
    return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def solve_problem(src: Path, dest: Path, shipped: Path | None = None) -> str | None:
    """Why ``solve SRC DEST`` must not run (one sentence), or None. ``shipped``: the notebooks the
    site ships (by default the course's, ``content/`` in a checkout)."""
    shipped = current().content if shipped is None else shipped
    if not src.exists():
        return f"{src} does not exist"
    target = dest.resolve()
    if shipped.is_dir() and _inside(target, shipped.resolve()):
        return (f"{dest} is inside content/, the notebooks the site ships: solved copies there would be "
                "shipped to learners with the answers filled in. Write them elsewhere, for example "
                "./course solve content solved")
    if src.is_dir():
        if target == src.resolve():
            return f"{dest} is the folder being solved: its notebooks would be overwritten with their solutions"
        found = [p for p in sorted(src.rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]
        if not found:
            return f"{src} holds no notebook (.ipynb)"
        for path in found:
            if problem := not_a_notebook(path):
                return problem
        return None
    if problem := not_a_notebook(src):
        return problem
    if dest.is_dir() or str(dest).endswith(("/", "\\")):
        target = (dest / src.name).resolve()
    if target == src.resolve():
        return f"{dest} is the notebook being solved: it would be overwritten with its solution"
    return None


def _notebook_files(paths) -> list[Path]:
    """The notebooks named, or found under the folders named (checkpoints left out)."""
    files = []
    for arg in paths:
        root = Path(arg)
        files += sorted(root.rglob("*.ipynb")) if root.is_dir() else [root]
    return [f for f in files if ".ipynb_checkpoints" not in f.parts]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("solve", help="write the solved copy of a notebook or of every notebook in a folder",
                       description="Write the solved copy of a notebook, or of every notebook in a folder "
                       "(same relative paths under DEST). Never writes into content/ or over its input.")
    p.add_argument("src", help="a notebook, or a folder of notebooks")
    p.add_argument("dest", help="the solved notebook, or a folder for the solved copies")
    c = sub.add_parser("cells", help="write every exercise cell of notebooks from its definition's template",
                       description="Write every exercise cell of the notebooks (a notebook, or every notebook "
                       "under a folder) from its definition's template: the definition is where the learner's "
                       "code is written, and the notebook's cell is made from it.")
    c.add_argument("paths", nargs="+")
    v = sub.add_parser("validate", help="check the exercise/check cell conventions of notebooks")
    v.add_argument("paths", nargs="+")
    sub.add_parser("list", help="list the exercises and questions of the course")
    r = sub.add_parser("report", help="progress report over a folder of learners' exported progress files",
                       description="Read the progress files learners exported (directly in FOLDER) and write "
                       "OUT.csv (one row per learner and item), OUT-gradebook.csv (one row per learner) and "
                       "OUT-files.csv (every file of the folder and what became of it), and print a summary.")
    r.add_argument("folder", help="folder holding the exported files (only the files directly in it, "
                   "unless --recursive)")
    r.add_argument("--recursive", action="store_true",
                   help="also read the files in each sub-folder (one level down), as an LMS's \"download "
                   "all submissions\" gives them: one folder per learner")
    r.add_argument("--csv", default="progress-report.csv", metavar="OUT.csv",
                   help="where to write the long table; the other two go beside it (default: "
                   "progress-report.csv; '-' prints the long table alone on standard output)")
    r.add_argument("--html", nargs="?", const=True, metavar="PAGE.html",
                   help="also write the dashboard, one self-contained web page (default: OUT.html)")
    r.add_argument("--excel", action="store_true",
                   help="write the CSVs for Microsoft Excel: a byte order mark, ids and dates kept as text")
    r.add_argument("--force", action="store_true", help="replace the outputs if they already exist")
    args = parser.parse_args(argv)

    if args.command == "report":
        from .report import command as report_command

        return report_command.main(args.folder, args.csv, force=args.force, excel=args.excel, html=args.html,
                                   recursive=args.recursive)

    if args.command == "solve":
        src, dest = Path(args.src), Path(args.dest)
        if problem := solve_problem(src, dest):
            print(f"error: {problem}.", file=sys.stderr)
            return 1
        try:
            done = notebooks.solve_path(src, dest)
        except (OSError, ValueError, KeyError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for path, ids in done:
            print(f"{path}: {len(ids)} exercise(s) solved" + (f" ({', '.join(ids)})" if ids else ""))
        return 0
    if args.command == "cells":
        for f in _notebook_files(args.paths):
            try:
                nb, changed = notebooks.write_exercise_cells(notebooks.read(f))
            except (OSError, ValueError, KeyError) as exc:
                print(f"error: {f}: {exc}", file=sys.stderr)
                return 1
            if changed:
                notebooks.write(nb, f)
            print(f"{f}: " + (f"{len(changed)} exercise cell(s) written ({', '.join(changed)})" if changed
                              else "every exercise cell is its definition's template"))
        return 0
    if args.command == "validate":
        bad = 0
        for f in _notebook_files(args.paths):
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
