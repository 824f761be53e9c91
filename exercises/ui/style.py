"""How the course's output looks in a notebook: boxes, code spans, tables, in the theme's colours.

Every piece of HTML the course shows (feedback, hints, questions, the progress view, labs'
badges and tables) is built from these, so one change here restyles all of them, and the light
and dark themes both work (the colours are JupyterLab's CSS variables, with fallbacks).
Learner-provided text always goes through ``html.escape`` (via ``inline``, ``code``, ``table``).
"""

from __future__ import annotations

import html

TEXT = "color: var(--jp-ui-font-color1, inherit);"

COLOURS = {
    "pass": "var(--jp-success-color1, #1b7f3b)",
    "fail": "var(--jp-error-color1, #c62828)",
    "blank": "var(--jp-warn-color1, #b26a00)",
    "info": "var(--jp-info-color1, #0072b2)",
}
ICONS = {"pass": "\u2714", "fail": "\u2718", "blank": "\u2026", "info": "\u2139"}


def box_style(status: str) -> str:
    """The inline style of a box whose left border says its status (pass, fail, blank, info)."""
    return (
        f"border-left: 4px solid {COLOURS[status]}; padding: 6px 10px; margin: 4px 0;"
        " background: var(--jp-layout-color2, transparent);"
        " color: var(--jp-ui-font-color1, inherit);"
        " font-family: var(--jp-ui-font-family, sans-serif);"
        " font-size: var(--jp-ui-font-size1, 13px); line-height: 1.45;"
    )


def box(status: str, body_html: str, css_class: str = "", extra_style: str = "") -> str:
    """A status box around HTML that is already safe (built with the functions here)."""
    cls = f' class="{html.escape(css_class)}"' if css_class else ""
    return f'<div{cls} style="{box_style(status)}{extra_style}">{body_html}</div>'


def code(text: str) -> str:
    """Text shown as code, escaped."""
    return ('<code style="font-family: var(--jp-code-font-family, monospace);'
            ' background: var(--jp-layout-color3, transparent); padding: 0 3px;">'
            f"{html.escape(str(text))}</code>")


def inline(text: str) -> str:
    """Escaped text in which `backticked` parts are shown as code."""
    parts = str(text).split("`")
    return "".join(code(p) if i % 2 else html.escape(p) for i, p in enumerate(parts))


def plain(text: str) -> str:
    """Escaped text in the theme's text colour."""
    return f'<div style="{TEXT}">{html.escape(str(text))}</div>'


def table(rows, header=None, css_class: str = "course-numbers", mono_columns=(1,)) -> str:
    """A small table in the theme's colours; every cell is escaped text. ``mono_columns`` are
    shown in the code font (numbers line up)."""
    cell = "padding: 1px 12px 1px 0; vertical-align: top;"
    mono = " font-family: var(--jp-code-font-family, monospace);"
    head = ""
    if header:
        head = "<tr>" + "".join(f'<th scope="col" style="{cell} text-align: left;">{html.escape(str(h))}</th>'
                                for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f'<td style="{cell}{mono if i in mono_columns else ""}">'
                                    f"{html.escape(str(c))}</td>" for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return (f'<table class="{html.escape(css_class)}" style="{TEXT} border-collapse: collapse;'
            f' font-size: var(--jp-ui-font-size1, 13px);">{head}{body}</table>')
