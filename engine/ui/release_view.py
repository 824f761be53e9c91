"""The course's release, and a way to the new version of an older notebook.

``course_release()`` (start notebook) shows the running release, its build date and which of the
learner's notebooks are older than the shipped ones. ``announce()`` (run once per kernel when a
notebook's setup cell calls ``begin``) shows the same notice only when a notebook is
older and the learner has not chosen to keep it. The learner's own copy is never changed: the
new version is written beside it as a fresh copy.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from engine.core import release
from engine.core.progress import Progress
from engine.core.workspace import workspace_root
from engine.presentation.access import course_root
from engine.presentation.html import box, link, text_span

from .display import show


def _keep(path, shipped):
    """Remember that the learner keeps their copy of ``path`` for the release ``shipped``."""
    record = Progress.load()
    record.keep_release(path, shipped)
    record.save()


def _notebook_row(item, root):
    path, shipped = item["path"], item["shipped"]
    label = widgets.HTML(text_span(f"<b>{html.escape(path)}</b>: your copy comes from "
                                   "an older release of the course."))
    fresh = widgets.Button(description="Open the new version as a fresh copy", layout=widgets.Layout(width="auto"))
    fresh.add_class("course-release-fresh")
    keep = widgets.Button(description="Keep working on my copy", layout=widgets.Layout(width="auto"))
    keep.add_class("course-release-keep")
    result = widgets.HTML("")
    result.add_class("course-release-result")

    def on_fresh(_button=None):
        try:
            new_path = release.save_new_version(path, root)
        except OSError as error:
            result.value = text_span(f"Could not write the new version ({html.escape(str(error))}).")
            return
        fresh.disabled = keep.disabled = True
        result.value = text_span(f"The new version is in {link(new_path, new_path, new_tab=True)}; "
                                 "your copy and your progress are unchanged.")

    def on_keep(_button=None):
        _keep(path, shipped)
        fresh.disabled = keep.disabled = True
        result.value = text_span("Kept. The new version stays available here, in the start notebook.")

    fresh.on_click(on_fresh)
    keep.on_click(on_keep)
    row = widgets.VBox([label, widgets.HBox([fresh, keep], layout=widgets.Layout(flex_flow="row wrap")), result])
    row.add_class("course-release-notebook")
    return row


def _panel(items, heading, root):
    head = widgets.HTML(box("info", heading, "course-release-heading"))
    return course_root(widgets.VBox([head, *[_notebook_row(item, root) for item in items]]), "course-release")


def course_release(root=None):
    """The release the course runs, when it was built, and the learner's older notebooks."""
    info = release.manifest()
    if info is None:
        text = ("This copy of the course runs from its source folder, not from a built site, "
                "so it has no release number; every notebook is the one on disk.")
        return _panel([], html.escape(text), root)
    root = root if root is not None else workspace_root()
    older = release.outdated_notebooks(root, info)
    summary = (f"Course release <b>{html.escape(info['version'])}</b>, built {html.escape(info['built'])}. ")
    if older:
        summary += (f"{len(older)} of your notebooks {'is' if len(older) == 1 else 'are'} older than this "
                    "release. Your copy stays as it is; you can open the new version beside it.")
    else:
        summary += "All your notebooks are the current version."
    return _panel(older, summary, root)


def announce(root=None):
    """Show the older-notebook notice, once, if there is anything the learner has not decided."""
    info = release.manifest()
    if info is None:
        return None
    root = root if root is not None else workspace_root()
    record = Progress.load()
    older = [item for item in release.outdated_notebooks(root, info)
             if record.kept_release(item["path"]) != item["shipped"]]
    if not older:
        return None
    panel = _panel(older, f"The course was updated (release <b>{html.escape(info['version'])}</b>, built "
                          f"{html.escape(info['built'])}), and some of your notebooks are from an older "
                          "release:", root)
    show(panel)
    return panel
