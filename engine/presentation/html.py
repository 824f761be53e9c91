"""How the course's output looks in a notebook: boxes, code spans, text and links, in the theme's
colours (tables are in :mod:`engine.presentation.tables`, built from the same styles).

Every piece of HTML the course shows (feedback, hints, questions, the progress, review,
skip-ahead and release views, labs' verdicts and badges) is built from these, so one change here
restyles all of them, and the light and dark themes both work (the colours are JupyterLab's CSS
variables, with fallbacks). Functions named ``..._html`` or taking ``body_html`` expect HTML that
is already safe; every other one escapes the text it is given (learner-provided text always goes
through ``html.escape``).
"""

from __future__ import annotations

import html

TEXT = "color: var(--jp-ui-font-color1, inherit);"
FONT = "font-family: var(--jp-ui-font-family, sans-serif);"
CODE_FONT = "font-family: var(--jp-code-font-family, monospace);"

COLOURS = {
    "pass": "var(--jp-success-color1, #1b7f3b)",
    "fail": "var(--jp-error-color1, #c62828)",
    "blank": "var(--jp-warn-color1, #b26a00)",
    "info": "var(--jp-info-color1, #0072b2)",
    "muted": "var(--jp-ui-font-color2, #757575)",
}
ICONS = {"pass": "\u2714", "fail": "\u2718", "blank": "\u2026", "info": "\u2139"}


def box_style(status: str) -> str:
    """The inline style of a box whose left border says its status (pass, fail, blank, info)."""
    return (
        f"border-left: 4px solid {COLOURS[status]}; padding: 6px 10px; margin: 4px 0;"
        " background: var(--jp-layout-color2, transparent);"
        f" {TEXT} {FONT}"
        " font-size: var(--jp-ui-font-size1, 13px); line-height: 1.45;"
    )


def attributes(css_class: str = "", data: dict | None = None) -> str:
    """An element's escaped ``class`` and ``data-*`` attributes, each with a leading space."""
    cls = f' class="{html.escape(css_class)}"' if css_class else ""
    return cls + "".join(f' data-{name}="{html.escape(str(value))}"' for name, value in (data or {}).items())


def box(status: str, body_html: str, css_class: str = "", extra_style: str = "",
        data: dict | None = None) -> str:
    """A status box around HTML that is already safe (built with the functions here);
    ``data`` becomes ``data-*`` attributes (for tests and browser checks to find the box)."""
    return f'<div{attributes(css_class, data)} style="{box_style(status)}{extra_style}">{body_html}</div>'


def headline(status: str, text: str) -> str:
    """A box's first line: the status icon and the text, bold, in the status colour."""
    return (f'<div style="font-weight: bold; color: {COLOURS[status]};">'
            f"{ICONS[status]} {html.escape(text)}</div>")


def mark(symbol: str, colour: str) -> str:
    """One symbol (a tick, a half circle) in bold, in one of :data:`COLOURS`."""
    return f'<span style="color: {COLOURS[colour]}; font-weight: bold;">{html.escape(symbol)}</span>'


def bullets(items_html) -> str:
    """A bulleted list of HTML items ("" for none)."""
    items = "".join(f"<li>{item}</li>" for item in items_html)
    return f'<ul style="margin: 4px 0 2px 0; padding-left: 20px;">{items}</ul>' if items else ""


def code(text: str) -> str:
    """Text shown as code, escaped."""
    return (f'<code style="{CODE_FONT} background: var(--jp-layout-color3, transparent); padding: 0 3px;">'
            f"{html.escape(str(text))}</code>")


def code_block(text: str) -> str:
    """Lines of code, escaped, in the code font."""
    return (f'<pre style="margin: 4px 0; {CODE_FONT} color: var(--jp-content-font-color1, inherit);">'
            f"{html.escape(str(text))}</pre>")


def code_textarea_css(css_class: str) -> str:
    """A ``<style>`` element giving the text areas inside ``css_class`` the code font."""
    return (f"<style>.{css_class} textarea {{ {CODE_FONT}"
            " font-size: var(--jp-code-font-size, 13px); line-height: 1.4; }</style>")


def inline(text: str) -> str:
    """Escaped text in which `backticked` parts are shown as code."""
    parts = str(text).split("`")
    return "".join(code(p) if i % 2 else html.escape(p) for i, p in enumerate(parts))


def plain(text: str) -> str:
    """Escaped text in the theme's text colour."""
    return text_block(html.escape(str(text)))


def strong(text: str) -> str:
    """Escaped text in bold, in the theme's text colour."""
    return text_block(f"<strong>{html.escape(str(text))}</strong>")


def text_block(body_html: str) -> str:
    """HTML that is already safe, as a block in the theme's text colour."""
    return f'<div style="{TEXT}">{body_html}</div>'


def text_span(body_html: str) -> str:
    """HTML that is already safe, inline, in the theme's text colour."""
    return f'<span style="{TEXT}">{body_html}</span>'


def note(text: str) -> str:
    """A small line of escaped text in the theme's secondary colour."""
    return (f'<p style="color: var(--jp-ui-font-color2, inherit); font-size: smaller;">'
            f"{html.escape(str(text))}</p>")


def link(href: str, text: str, download: str | None = None, new_tab: bool = False) -> str:
    """A link, escaped; ``download`` names the file a data link saves as."""
    extra = f' download="{html.escape(download)}"' if download else ""
    extra += ' target="_blank"' if new_tab else ""
    return (f'<a{extra} href="{html.escape(href)}" style="color: var(--jp-content-link-color, #0072b2);">'
            f"{html.escape(text)}</a>")
