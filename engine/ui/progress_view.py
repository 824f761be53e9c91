"""The progress view: every notebook's exercises with their status, plus export, import, reset.

Export writes a file for the instructor's report (``python -m engine report``): the
record, the name the learner typed, the time and a checksum (see engine/core/export.py)."""

from __future__ import annotations

import base64
import html
import json

import ipywidgets as widgets

from engine.core import export as export_file
from engine.core import page_store, progress, skip_ahead
from engine.core.progress import STATUS_LABELS, STATUSES, Progress, status_of
from engine.core.registry import exercises_by_notebook
from engine.presentation import html as style
from engine.presentation import tables
from engine.presentation.access import course_root
from engine.presentation.numbers import plural

# status -> (symbol, colour)
_MARKS = {
    "passed": ("\u2714", "pass"),
    "passed-after-solution": ("\u2714", "info"),
    "attempted": ("\u25d0", "blank"),
    "not-started": ("\u25cb", "muted"),
}


def progress_table_html() -> str:
    """The table of all notebooks' exercises (from the registry) and their status."""
    record = Progress.load()
    rows = []
    counts = {s: 0 for s in STATUSES}
    for stem, title, exercises in exercises_by_notebook():
        head = f"<b>{html.escape(stem[:2])}</b> {html.escape(title)}"
        if label := skip_ahead.status_label(stem, record):
            head += f' <span class="course-skipped-ahead">\u2714 {html.escape(label)}</span>'
        # The name again in a row of its own, shown instead of the Notebook column on a phone
        # (access.css), where three columns do not fit.
        rows.append(tables.ruled_row([tables.ruled_cell(head, colspan=2)], "course-progress-heading",
                                     data={"notebook": stem}))
        if not exercises:
            cells = [tables.ruled_cell(head),
                     tables.ruled_cell("<i>exercises arrive with this notebook</i>", colspan=2)]
            rows.append(tables.ruled_row(cells, "course-progress-notebook", data={"notebook": stem}))
            continue
        for i, ex in enumerate(exercises):
            entry = record.exercise(ex.id)
            status = status_of(entry)
            counts[status] += 1
            tries = entry.get("attempts", 0)
            extra = f" ({plural(tries, 'try', 'tries')})" if tries and status != "not-started" else ""
            rows.append(tables.ruled_row([
                tables.ruled_cell(head if i == 0 else ""),
                tables.ruled_cell(f"{html.escape(ex.title)} {style.code(ex.id)}"),
                tables.ruled_cell(f"{style.mark(*_MARKS[status])} {STATUS_LABELS[status]}{extra}",
                                 f"course-status course-status-{status}"),
            ], "course-progress-row", data={"notebook": stem, "exercise": ex.id}))
    total = sum(counts.values())
    done = counts["passed"] + counts["passed-after-solution"]
    summary = (f"{done} of {total} exercises passed ({counts['passed-after-solution']} after "
               f"opening the solution); {plural(record.questions_answered(), 'question')} answered.")
    return (f'<div class="course-progress" style="{style.TEXT} {style.FONT}">'
            f'<p class="course-progress-summary">{html.escape(summary)}</p>'
            + tables.ruled_table(["Notebook", "Exercise", "Status"], rows, "course-progress-table")
            + style.note(_saved_where()) + "</div>")


def _saved_where() -> str:
    """Where the record is kept, in a few words (see :mod:`engine.core.page_store`)."""
    kind = page_store.state()["state"]
    if kind in ("pending", "kept"):
        return "Saved in this browser's storage for this site"
    if kind == "failed":
        return "Kept only until this page is reloaded: this browser keeps no data for this site"
    return f"Saved in {progress.progress_path()}"


def _message(status: str, text: str) -> str:
    return style.box(status, html.escape(text), "course-progress-message")


def progress_view() -> widgets.VBox:
    """The widget: table, Refresh, Export (download link), Import (upload), Reset (with confirmation)."""
    table = widgets.HTML()
    table.add_class("course-progress-view-table")
    message = widgets.HTML()
    message.add_class("course-progress-messages")
    refresh = widgets.Button(description="Refresh", layout=widgets.Layout(width="auto"))
    refresh.add_class("course-progress-refresh")
    export = widgets.Button(description="Export my progress", layout=widgets.Layout(width="auto"))
    export.add_class("course-progress-export")
    name = widgets.Text(value=progress.learner()["name"], placeholder="your name or student ID",
                        description="Export as", layout=widgets.Layout(width="auto", max_width="360px"))
    name.add_class("course-progress-learner")
    upload = widgets.FileUpload(accept=".json,application/json", multiple=False,
                                description="Import progress", layout=widgets.Layout(width="auto"))
    upload.add_class("course-progress-import")
    reset = widgets.Button(description="Reset progress", layout=widgets.Layout(width="auto"))
    reset.add_class("course-progress-reset")
    confirm = widgets.Button(description="Yes, forget everything", button_style="danger",
                             layout=widgets.Layout(width="auto", display="none"))
    confirm.add_class("course-progress-reset-confirm")
    cancel = widgets.Button(description="Keep it", layout=widgets.Layout(width="auto", display="none"))
    link = widgets.HTML()
    link.add_class("course-progress-download")

    def render(note: str = "", status: str = "pass") -> None:
        table.value = progress_table_html()
        notes = [_message("blank", n) for n in progress.notices()]
        if note:
            notes.append(_message(status, note))
        message.value = "".join(notes)

    def on_export(_b=None) -> None:
        text = progress.export_text(learner=name.value)
        data = json.loads(text)
        file = export_file.file_name(data)
        payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
        who = export_file.display_name(data)
        if export_file.learner_of(data)[0]:
            note = f"Exported as {who}. Send the downloaded file to your instructor if asked."
        else:
            note = (f"Exported with no name, as {who}. If your instructor collects these files, "
                    "type your name or student ID above and export again.")
        link.value = style.link(f"data:application/json;base64,{payload}", f"Download {file}", download=file)
        render(note)

    def on_upload(change) -> None:
        files = change["new"]
        if not files:
            return
        item = files[0]
        try:
            text = bytes(item["content"]).decode("utf-8")
            progress.import_text(text)
        except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
            render(f"Could not import that file: {exc}", "fail")
        else:
            render(f"Imported {item.get('name', 'the file')} and merged it with your progress.")

    def on_reset(_b=None) -> None:
        confirm.layout.display = None
        cancel.layout.display = None
        message.value = _message("blank", "Reset forgets every check, answer, hint and solution. Sure?")

    def on_confirm(_b=None) -> None:
        progress.reset()
        confirm.layout.display = cancel.layout.display = "none"
        render("Progress reset.")

    def on_cancel(_b=None) -> None:
        confirm.layout.display = cancel.layout.display = "none"
        render()

    refresh.on_click(lambda _b: render())
    export.on_click(on_export)
    upload.observe(on_upload, names="value")
    reset.on_click(on_reset)
    confirm.on_click(on_confirm)
    cancel.on_click(on_cancel)
    render()
    buttons = widgets.HBox([refresh, export, upload, reset, confirm, cancel],
                           layout=widgets.Layout(flex_flow="row wrap"))
    root = course_root(widgets.VBox([table, name, buttons, link, message]), "course-progress-view")
    root.render = render
    root.refresh_button, root.export_button, root.upload = refresh, export, upload
    root.reset_button, root.confirm_button, root.cancel_button = reset, confirm, cancel
    root.table, root.message, root.link, root.name = table, message, link, name
    return root
