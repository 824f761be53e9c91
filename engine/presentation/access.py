"""What makes the course's widgets usable by keyboard, by screen reader and on a narrow screen.

ipywidgets draws its controls without some of what assistive technology needs: a slider's
handle has no accessible name, a widget's HTML cannot carry ``aria-live``, a figure's image
has no ``alt``, radio buttons are not grouped for the arrow keys. Every course widget (a lab,
a question, the controls under a check, the progress, review, skip-ahead and release views)
carries :func:`support`, a hidden output holding two files of this folder:

- ``access.css``: a visible focus ring, controls that wrap on a narrow screen, slider tracks
  of a fixed minimum width, plots that scale to the width under the controls, a lab's output
  never in a scrolling box, a progress table that fits a phone;
- ``access.js``: run once per page, it names each slider after its description, makes each
  verdict and result a polite live region, gives each lab's image the lab's verdict as its
  text alternative (kept up to date), groups radio buttons, keeps JupyterLab's command
  shortcuts from taking the keys a focused control needs, tells each lab's figure view the
  size it is shown at, so the kernel draws the figure for it, and sends Enter in an answer box
  together with the box's text (:func:`on_enter`).

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
        answer_reloads_late()
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


# ---------------------------------------------------------------- a reloaded page

RESTORE_DELAY = 2.5          # s the kernel waits before it sends a reloaded page its widgets


def answer_reloads_late() -> None:
    """Answer a reloaded page's request for every widget's state (ipywidgets' control comm,
    ``request_states``) :data:`RESTORE_DELAY` s after it comes, from a thread of its own.

    Why: after a reload, each widget output of the notebook waits for its model for 2 s,
    looking every 100 ms (jupyterlab_widgets 3.0.17's ``get_model``), and gives up without a
    last look; one that gives up after the page has taken in the kernel's answer shows "Error
    displaying widget: model not found" for good, and all of a notebook's outputs start waiting
    together. On a busy machine the answer came near the end of those 2 s often enough to hit
    whole notebooks (tests/test_browser_access.py reloads every one). Answered later, every
    output that waited has given up before the page has the models, and the page draws it
    again once they are in, as it does for any output that gave up early.

    Also answered on the comm the request came on (ipywidgets answers on the last one opened,
    which a second page opened meanwhile would take). Nothing happens without threads (Pyodide:
    its kernel does not outlive the page). Installed once, when the first course widget is made."""
    import threading

    from ipywidgets import Widget

    if getattr(Widget, "_course_answers_late", False) or not hasattr(threading, "Timer"):
        return
    try:
        threading.Thread(target=lambda: None).start()        # a Python without threads refuses here
    except RuntimeError:
        return
    original = Widget._handle_control_comm_msg.__func__

    def handle(cls, msg):
        data = msg.get("content", {}).get("data", {})
        if data.get("method") != "request_states":
            return original(cls, msg)
        comm = _comm(msg.get("content", {}).get("comm_id")) or cls._control_comm
        timer = threading.Timer(RESTORE_DELAY, _send_states, args=(comm,))
        timer.daemon = True
        timer.start()

    Widget._handle_control_comm_msg = classmethod(handle)
    Widget._course_answers_late = True


def _comm(comm_id):
    try:
        from comm import get_comm_manager

        return get_comm_manager().get_comm(comm_id) if comm_id else None
    except Exception:  # noqa: BLE001 - no comm manager: the last control comm opened answers
        return None


def _send_states(comm) -> None:
    """Send ``comm`` every widget's state, as ipywidgets answers ``request_states``."""
    from ipywidgets.widgets.widget import _instances, _remove_buffers

    states = {}
    for widget in list(_instances.values()):
        states[widget.model_id] = {"model_name": widget._model_name, "model_module": widget._model_module,
                                   "model_module_version": widget._model_module_version,
                                   "state": widget.get_state(drop_defaults=False)}
    states, paths, buffers = _remove_buffers(states)
    comm.send({"method": "update_states", "states": states, "buffer_paths": paths}, buffers=buffers)


def on_enter(field, callback):
    """Call ``callback(typed)`` when Enter is pressed in ``field`` (a ``Text`` widget), ``typed``
    being the text in the box when Enter was pressed. Returns the field's hidden partner, a
    ``Text`` to put beside it (in the same course widget).

    ipywidgets sends a box's typed value and its Enter (``{"event": "submit"}``) as separate
    messages, and holds a value back while an earlier one of the box is still on its way: a value
    typed fast, then Enter, would be judged as the box held it a few keys earlier. So
    ``access.js`` sends Enter as a value of the partner, "<stamp> <typed text>": the text judged
    travels with the Enter. Without the page script, ipywidgets' own Enter calls
    ``callback(field.value)``."""
    import ipywidgets as widgets

    field.add_class("course-enter")
    sent = widgets.Text(layout=widgets.Layout(display="none"))
    sent.add_class("course-enter-sent")

    def listen(_widget, content, _buffers):
        if isinstance(content, dict) and content.get("event") == "submit":
            callback(field.value)

    def on_sent(change):
        stamp, space, typed = change["new"].partition(" ")
        if stamp and space:
            callback(typed)
    field.on_msg(listen)
    sent.observe(on_sent, names="value")
    return sent


def course_root(box, *classes, share: bool = False):
    """Mark ``box`` as the root of a course widget (``course-widget`` and ``classes``) and add
    :func:`support` as its last child. Returns ``box``.

    A cell run again replaces its output: the course widgets its earlier run made are closed
    (:func:`replace_earlier_run`), so the kernel keeps only the widgets on show. ``share``: the
    widgets under ``box`` never change their layout or style (a lab's), so those are shared
    (:func:`share_layouts`)."""
    box.add_class(ROOT_CLASS)
    for name in classes:
        box.add_class(name)
    if share:
        share_layouts(box)
    box.children = tuple(box.children) + (support(),)
    replace_earlier_run(box)
    return box


# ---------------------------------------------------------------- fewer widgets in the kernel

# (layout or style class, its settings) -> one instance shared by every widget with those settings
_shared: dict = {}


def _settings(part) -> tuple:
    """The settings of a layout or style, without the model's own names."""
    return tuple(sorted((key, repr(value)) for key, value in part.get_state().items() if not key.startswith("_")))


def _frozen(cls):
    """``cls`` (a Layout or style class) whose instances refuse a change of their settings once
    shared: a shared layout changed for one widget would change every widget that shares it."""
    if "_course_frozen" not in vars(cls):
        def __setattr__(self, name, value):
            if getattr(self, "_course_shared", False) and name in self.keys and not name.startswith("_"):
                raise AttributeError(f"this {cls.__name__} is shared by many course widgets: give the widget a "
                                     f"layout of its own before changing its {name}")
            super(frozen, self).__setattr__(name, value)
        frozen = type(cls.__name__, (cls,), {"__setattr__": __setattr__, "_course_frozen": True,
                                              "__module__": __name__})
        cls._course_frozen_class = frozen
    return cls._course_frozen_class


def shared(part):
    """The shared instance with the settings of ``part`` (a widget's layout or style), made
    from it the first time (again if the kernel closed it)."""
    key = (type(part).__name__, type(part).__module__, _settings(part))
    known = _shared.get(key)
    if known is None or getattr(known, "comm", None) is None:
        state = {k: v for k, v in part.get_state().items() if not k.startswith("_")}
        known = _frozen(type(part))(**state)
        known._course_shared = True
        _shared[key] = known
    return known


def share_layouts(root) -> int:
    """Give every widget under ``root`` the shared layout and style with its settings, and close
    the ones it had: a lab's thirty controls, boxes and texts otherwise bring sixty more widgets
    into the kernel, each sent to the page when the lab is made and again when the page is
    reloaded. A widget marked ``_course_own_layout`` (one whose layout its code changes) keeps
    its own. Returns how many were closed."""
    from ipywidgets import Widget

    closed, seen, todo = 0, set(), [root]
    while todo:
        widget = todo.pop()
        if id(widget) in seen or getattr(widget, "_course_shared", False):
            continue
        seen.add(id(widget))
        for name in () if getattr(widget, "_course_own_layout", False) else ("layout", "style"):
            part = getattr(widget, name, None) if name in widget.keys else None
            if isinstance(part, Widget) and not getattr(part, "_course_shared", False):
                setattr(widget, name, shared(part))
                part.close()
                closed += 1
        todo += list(getattr(widget, "children", ()) or ())
        todo += _shown_in(widget)
    return closed


def _shown_in(widget) -> list:
    """The widgets an ``Output`` shows (a figure view's image and size box)."""
    from ipywidgets.widgets.widget import _instances

    found = []
    for output in getattr(widget, "outputs", ()) or ():
        shown = (output.get("data") or {}).get("application/vnd.jupyter.widget-view+json") \
            if isinstance(output, dict) else None
        if shown and shown.get("model_id") in _instances:
            found.append(_instances[shown["model_id"]])
    return found


# {cell id: (id of the request that ran it, [the course widgets that run made])}
_made_by_cell: dict = {}


def running_cell():
    """(cell id, request id) of the cell the kernel is running now, or None.

    JupyterLab and JupyterLite send the cell's id in the request's metadata (``cellId``); a
    widget made outside a cell's run (a button's click) or by a front end that sends no cell id
    belongs to no cell."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # noqa: BLE001 - no kernel, or one that keeps no parent: no cell
        return None
    if not isinstance(parent, dict):
        return None
    header, metadata = parent.get("header") or {}, parent.get("metadata") or {}
    if header.get("msg_type") != "execute_request" or not metadata.get("cellId") or not header.get("msg_id"):
        return None
    return str(metadata["cellId"]), str(header["msg_id"])


def replace_earlier_run(root) -> None:
    """Remember ``root`` as made by the cell running now; if that cell made course widgets in
    an earlier run, close them and every widget under them (the front end shows this run's
    output in their place). Without this every run of a lab's cell left its widgets in the
    kernel, and after a page reload the front end asks the kernel for every widget it holds:
    a notebook whose cells ran twice took twice as long to restore, long enough for its outputs
    to lose the front end's race against its own 2-second wait for them ("model not found")."""
    run = running_cell()
    if run is None:
        return
    cell, request = run
    earlier = _made_by_cell.get(cell)
    if earlier is not None and earlier[0] != request:
        for old in earlier[1]:
            close_tree(old)
        earlier = None
    if earlier is None:
        earlier = _made_by_cell[cell] = (request, [])
    earlier[1].append(root)


def close_tree(root) -> None:
    """Close ``root`` and every widget it holds (children, layout, style, the widgets shown in an
    ``Output``), except the page support and the layouts and styles shared by course widgets."""
    from ipywidgets import Widget

    keep = {id(_support)} | ({id(_support.layout)} if _support is not None else set())
    seen, todo = set(), [root]
    while todo:
        widget = todo.pop()
        if id(widget) in seen or id(widget) in keep or getattr(widget, "_course_shared", False):
            continue
        seen.add(id(widget))
        for name in widget.keys:
            value = getattr(widget, name, None)
            values = value if isinstance(value, (list, tuple)) else [value]
            todo += [v for v in values if isinstance(v, Widget)]
        todo += _shown_in(widget)
        widget.close()


__all__ = ["RESTORE_DELAY", "ROOT_CLASS", "answer_reloads_late", "close_tree", "course_root", "on_enter",
           "replace_earlier_run", "running_cell", "script", "share_layouts", "shared", "style", "support"]
