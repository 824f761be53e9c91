"""Tables in a notebook, in the theme's colours: a small table of numbers (a lab's numbers under
its plot) and a ruled table (the progress view's rows of notebooks and exercises).

    table([("mean", "0.25")], header=["", "value"])      -> <table class="course-numbers" ...>
    ruled_table(["Notebook", "Status"], [ruled_row([ruled_cell("00"), ruled_cell("done")])],
                "course-progress-table")

Every cell given as text is escaped; ``ruled_cell`` takes HTML that is already safe (built with
:mod:`engine.presentation.html`).
"""

from __future__ import annotations

import html

from .html import CODE_FONT, TEXT, attributes


def table(rows, header=None, css_class: str = "course-numbers", mono_columns=(1,)) -> str:
    """A small table in the theme's colours; every cell is escaped text. ``mono_columns`` are
    shown in the code font (numbers line up)."""
    cell = "padding: 1px 12px 1px 0; vertical-align: top;"
    mono = f" {CODE_FONT}"
    head = ""
    if header:
        head = "<tr>" + "".join(f'<th scope="col" style="{cell} text-align: left;">{html.escape(str(h))}</th>'
                                for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f'<td style="{cell}{mono if i in mono_columns else ""}">'
                                    f"{html.escape(str(c))}</td>" for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return (f'<table class="{html.escape(css_class)}" style="{TEXT} border-collapse: collapse;'
            f' font-size: var(--jp-ui-font-size1, 13px);">{head}{body}</table>')


RULED_CELL = ("padding: 3px 10px; border-bottom: 1px solid var(--jp-border-color2, #ccc);"
              f" text-align: left; vertical-align: top; {TEXT}")


def ruled_cell(body_html: str, css_class: str = "", colspan: int = 1) -> str:
    """A cell of a :func:`ruled_table`, around HTML that is already safe."""
    span = f' colspan="{int(colspan)}"' if colspan > 1 else ""
    return f'<td style="{RULED_CELL}"{attributes(css_class)}{span}>{body_html}</td>'


def ruled_row(cells_html, css_class: str = "", data: dict | None = None) -> str:
    """A row of :func:`ruled_cell` cells; ``data`` becomes ``data-*`` attributes."""
    return f"<tr{attributes(css_class, data)}>{''.join(cells_html)}</tr>"


def ruled_table(header, rows_html, css_class: str) -> str:
    """A table with a line under every row: escaped header texts, rows from :func:`ruled_row`."""
    head = "".join(f'<th style="{RULED_CELL}">{html.escape(str(h))}</th>' for h in header)
    return (f'<table class="{html.escape(css_class)}" style="border-collapse: collapse;">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows_html)}</tbody></table>")
