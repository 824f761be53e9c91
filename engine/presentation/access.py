"""What makes the course's widgets usable by keyboard, by screen reader and on a narrow screen.

ipywidgets draws its controls without some of what assistive technology needs: a slider's
handle has no accessible name, a widget's HTML cannot carry ``aria-live``, a figure's image
has no ``alt``, radio buttons are not grouped for the arrow keys. Every course widget (a lab,
a question, the controls under a check, the progress, review, skip-ahead and release views)
carries :func:`support`, a hidden output holding two files of this folder:

- ``access.css``: a visible focus ring, controls that wrap on a narrow screen, slider tracks
  of a fixed minimum width, plots that scale to the width (and come before the controls on a
  short screen);
- ``access.js``: run once per page, it names each slider after its description, makes each
  verdict and result a polite live region, gives each lab's image the lab's verdict as its
  text alternative (kept up to date), groups radio buttons, keeps JupyterLab's command
  shortcuts from taking the keys a focused control needs, and tells each lab's figure view
  the size it is shown at, so the kernel draws the figure for it.

The root of each such widget has the class ``course-widget``, which both files select on.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

ROOT_CLASS = "course-widget"
HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def _file(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def style() -> str:
    """The course's widget CSS (``access.css``)."""
    return _file("access.css")


def script() -> str:
    """The page script (``access.js``); running it twice does nothing the second time."""
    return _file("access.js")


_support = None


def support():
    """The hidden ``Output`` widget that brings the CSS and the script into the page.

    One widget per kernel, shown inside every course widget's root: the script installs itself
    once per page, whichever course widget appears first.
    """
    global _support
    import ipywidgets as widgets

    if _support is None or getattr(_support, "comm", None) is None:
        holder = widgets.Output(layout=widgets.Layout(display="none"))
        holder.add_class("course-access")
        holder.outputs = (
            {"output_type": "display_data", "metadata": {},
             "data": {"text/html": f"<style>{style()}</style>", "text/plain": ""}},
            {"output_type": "display_data", "metadata": {},
             "data": {"application/javascript": script(), "text/plain": ""}},
        )
        _support = holder
    return _support


def on_enter(field, callback) -> None:
    """Call ``callback()`` when Enter is pressed in ``field`` (a ``Text`` widget).

    The browser side of a text box sends the message ``{"event": "submit"}`` on Enter, after the
    typed value; ``Text.on_submit`` (deprecated) listens for the same message."""
    def listen(_widget, content, _buffers):
        if isinstance(content, dict) and content.get("event") == "submit":
            callback()
    field.on_msg(listen)


def course_root(box, *classes):
    """Mark ``box`` as the root of a course widget (``course-widget`` and ``classes``) and add
    :func:`support` as its last child. Returns ``box``."""
    box.add_class(ROOT_CLASS)
    for name in classes:
        box.add_class(name)
    box.children = tuple(box.children) + (support(),)
    return box


__all__ = ["ROOT_CLASS", "course_root", "on_enter", "script", "style", "support"]
