"""The ``report`` command: ``python -m engine report FOLDER`` (or ``./course report FOLDER``).

It reads the folder (:func:`engine.report.report.build`) and writes, next to each other:

- ``OUT.csv`` (``--csv``, default ``progress-report.csv``): one row per learner and item;
- ``OUT-gradebook.csv``: one row per learner, one column per item;
- ``OUT-files.csv``: every file of the folder and what became of it (used, superseded,
  duplicate, skipped) with the reason;
- with ``--html [PAGE.html]`` the dashboard (:mod:`engine.report.dashboard`), ``OUT.html`` unless
  named;

and prints the summary. ``--csv -`` prints the long CSV alone on standard output (and the
summary on standard error). ``--excel`` writes the CSVs for Microsoft Excel (a byte order mark,
ids and dates as text; :mod:`engine.report.spreadsheet`). Existing files are replaced only with
``--force``.

Every failure is one sentence on standard error, never a traceback: a folder that is not one or
cannot be read, an output that exists or cannot be written, an interrupted run, a reader that
stops reading (``report ... | head -1``). Exit codes: 0 when the report was written (an empty
folder too), 2 when it was not, 130 when interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engine.core import export

from . import report

DEFAULT_CSV = report.DEFAULT_CSV


def say(text: str, stream=None) -> None:
    """Print, never failing on a terminal that cannot show some character."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream)


def outputs(csv_path: str, html=None) -> dict[str, Path]:
    """Where each output goes: ``csv``, ``gradebook`` and ``files`` (unless the CSV goes to
    standard output) and ``html`` (when asked for: ``True`` for the default name)."""
    out: dict[str, Path] = {}
    base = Path(DEFAULT_CSV if csv_path == "-" else csv_path)
    if csv_path != "-":
        suffix = base.suffix or ".csv"
        out["csv"] = base
        out["gradebook"] = base.with_name(f"{base.stem}-gradebook{suffix}")
        out["files"] = base.with_name(f"{base.stem}-files{suffix}")
    if html:
        out["html"] = base.with_suffix(".html") if html is True else Path(html)
    return out


def _names(paths) -> str:
    shown = [export.printable(p) for p in paths]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def problem(folder: Path, out: dict[str, Path], force: bool) -> str | None:
    """Why the report cannot be written (one sentence), or None."""
    if not folder.is_dir():
        return f"{export.printable(folder)} is not a folder"
    paths = list(out.values())
    if len({os.path.abspath(p) for p in paths}) < len(paths):
        return f"two outputs would be the same file ({_names(paths)}): choose other names"
    for path in paths:
        if path.is_dir():
            return f"{export.printable(path)} is a folder: give a file name"
        if not path.parent.is_dir():
            return f"cannot write {export.printable(path)}: the folder {export.printable(path.parent)} does not exist"
    existing = [p for p in paths if os.path.lexists(p)]
    if existing and not force:
        verb = "exists" if len(existing) == 1 else "exist"
        return (f"{_names(existing)} already {verb}: add --force to replace, or choose another name "
                "with --csv NEW.csv")
    return None


def texts(rep: report.Report, out: dict[str, Path], excel: bool) -> dict[str, str]:
    """The text of each output."""
    made = {"csv": lambda: report.csv_text(rep, excel),
            "gradebook": lambda: report.gradebook_text(rep, excel),
            "files": lambda: report.files_text(rep, excel)}
    result = {key: made[key]() for key in out if key in made}
    if "html" in out:
        from . import dashboard

        result["html"] = dashboard.page(rep, {k: p.name for k, p in out.items() if k != "html"})
    return result


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then renamed)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8", newline="")
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def run(folder, csv_path: str = DEFAULT_CSV, force: bool = False, excel: bool = False, html=None,
        recursive: bool = False) -> int:
    folder = Path(folder)
    out = outputs(csv_path, html)
    if why := problem(folder, out, force):
        say(f"error: {why}.", sys.stderr)
        return 2
    try:
        rep = report.build(folder, exclude=out.values(), recursive=recursive)
    except OSError as exc:
        say(f"error: could not read the folder {export.printable(folder)} "
            f"({export.printable(exc.strerror or exc)}).", sys.stderr)
        return 2
    written = texts(rep, out, excel)
    to_stdout = csv_path == "-"
    if to_stdout:
        data = report.csv_text(rep, excel)
        sys.stdout.flush()
        stream = getattr(sys.stdout, "buffer", None)
        if stream is not None:   # UTF-8 whatever the terminal's encoding: this is data for a file
            stream.write(data.encode("utf-8"))
            stream.flush()
        else:
            sys.stdout.write(data)
    summary = sys.stderr if to_stdout else sys.stdout
    for key, text in written.items():
        try:
            _write(out[key], text)
        except OSError as exc:
            say(report.summary_text(rep), summary)
            say(f"error: could not write {export.printable(out[key])} "
                f"({export.printable(exc.strerror or exc)}).", sys.stderr)
            return 2
    say(report.summary_text(rep), summary)
    if written:
        say("", summary)
    for key, text in written.items():
        what = {"csv": f"{text.count(chr(10)) - 1} rows, one per learner and item",
                "gradebook": f"{len(rep.exports)} rows, one per learner",
                "files": f"{len(rep.files)} rows, one per file of the folder",
                "html": "the dashboard"}[key]
        say(f"Written: {export.printable(out[key])} ({what})", summary)
    return 0


def _quiet_stdout() -> None:
    """After the reader of standard output went away: send whatever is left nowhere, so that
    Python's own flush at exit finds nothing to complain about."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(folder, csv_path: str = DEFAULT_CSV, force: bool = False, excel: bool = False, html=None,
         recursive: bool = False) -> int:
    """:func:`run`, with whatever stops it said in one sentence."""
    try:
        return run(folder, csv_path, force, excel, html, recursive)
    except BrokenPipeError:            # report ... | head -1: the reader has what it wanted
        _quiet_stdout()
        return 0
    except KeyboardInterrupt:
        say("error: interrupted; files already written are complete, the others were not written.",
            sys.stderr)
        return 130
    except MemoryError:
        say("error: out of memory while making the report.", sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one sentence, never a traceback
        say(f"error: the report stopped on an unexpected problem ({type(exc).__name__}: "
            f"{export.printable(exc, 200)}).", sys.stderr)
        return 2
