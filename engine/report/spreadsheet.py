"""CSV files whose cells a spreadsheet shows as text, never runs as formulas.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or a line
break) as a formula, and a formula can fetch a web address, read other cells and send them
along. Text from learners' files (names, ids, dates, file names) goes into the report's CSV,
so every cell follows OWASP's rule for CSV injection:

- every field is quoted, and a double quote inside it doubled (``csv.QUOTE_ALL``);
- a cell that starts with a formula character gets a leading ``'`` (:func:`neutralise`);
- so does every formula character after a character a spreadsheet may be told to split cells
  on (``,`` ``;`` ``|`` tab, space, a line break) or a double quote, spaces between included:
  ``Ada;=HYPERLINK(...)`` becomes ``Ada;'=HYPERLINK(...)``, so even a spreadsheet that splits
  ``;`` inside quoted fields meets no formula.

``excel=True`` writes for Microsoft Excel, which reads a CSV as the legacy code page unless it
starts with a byte order mark, and turns ``0042`` into the number 42 and ``2026-03-01`` into a
date whatever the quotes say: the file starts with the UTF-8 byte order mark, and the columns
named as text are written as Excel's text constants, ``="0042"`` (:func:`excel_text`). Such a
cell is a formula whose whole content is one quoted string, so it can only show that string;
the string itself is neutralised first. Other spreadsheets read such files too (LibreOffice
shows the text constant's value, or the ``="..."`` as typed if its "evaluate formulas" is off).
"""

from __future__ import annotations

import csv
import functools
import io
import re

BOM = "\ufeff"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
# A formula character at the start, or after a separator or quote (spaces between allowed).
_FORMULA = re.compile(r"""(^|[,;|\t\r\n "])(\s*)([=+\-@])""")
EXCEL_TEXT_LIMIT = 255        # Excel's longest string constant in a formula


@functools.lru_cache(maxsize=65536)
def _neutralised(text: str) -> str:
    text = _FORMULA.sub(r"\1\2'\3", text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def neutralise(value):
    """``value`` with a ``'`` before every formula start (see the module's docstring); numbers
    and other non-text values as they are. ``"=1+1"`` -> ``"'=1+1"``, ``"a, -b"`` -> ``"a, '-b"``."""
    return _neutralised(value) if type(value) is str else value


def excel_text(value) -> str:
    """Excel's text constant for ``value`` (neutralised first): ``"0042"`` -> ``'="0042"'``.
    Quotes are doubled; text longer than Excel allows in a constant is cut, marked with "..."."""
    text = str(neutralise(value)).replace('"', '""')
    if len(text) > EXCEL_TEXT_LIMIT:
        text = text[:EXCEL_TEXT_LIMIT - 3].rstrip('"') + "..."
    return f'="{text}"'


def csv_text(header: list[str], rows, excel: bool = False, text_columns=()) -> str:
    """The CSV of ``rows`` (lists in ``header``'s order): every field quoted and neutralised;
    with ``excel``, a byte order mark first and the columns in ``text_columns`` as text
    constants (see the module's docstring)."""
    buffer = io.StringIO()
    if excel:
        buffer.write(BOM)
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\r\n" if excel else "\n")
    writer.writerow([neutralise(name) for name in header])
    as_text = [i for i, name in enumerate(header) if name in text_columns] if excel else []
    for row in rows:
        cells = [_neutralised(value) if type(value) is str else value for value in row]
        for i in as_text:
            if cells[i] != "":
                cells[i] = excel_text(row[i])
        writer.writerow(cells)
    return buffer.getvalue()
