"""Where the learner's progress is kept, said under the setup cell when the kernel has no drive.

On a site served over plain HTTP (not ``https://``, not this computer's own address) the kernel
has no drive and keeps the progress record in the browser's storage instead
(:mod:`engine.core.page_store`), a moment after the setup cell ran. This view, shown by
``begin()`` there, says so once that is done, and says plainly, with what to do, when the
browser keeps nothing for the site.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from engine.core import page_store
from engine.presentation.access import course_root
from engine.presentation.html import box, headline


def storage_html(current: dict) -> str:
    """The view's HTML for a :func:`engine.core.page_store.state`; "" while it is pending."""
    kind = current.get("state")
    if kind == "kept":
        return box("info", headline("info", "Your progress is kept in this browser")
                   + html.escape(page_store.message(current)), "course-storage course-storage-kept")
    if kind == "failed":
        return box("fail", headline("fail", "Your progress will not be kept")
                   + html.escape(page_store.message(current)), "course-storage course-storage-failed")
    return ""


def storage_status() -> widgets.VBox:
    """The widget: empty until the browser's storage answers, then what it means for the learner."""
    text = widgets.HTML()
    text.add_class("course-storage-status")
    page_store.on_change(lambda current: setattr(text, "value", storage_html(current)))
    root = course_root(widgets.VBox([text]), "course-storage-view")
    root.text = text
    return root


__all__ = ["storage_html", "storage_status"]
