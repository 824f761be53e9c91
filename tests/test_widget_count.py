"""The kernel keeps only the widgets on show, and few of them (engine/presentation/access.py): a cell run
again closes the course widgets its earlier run made, every widget under them included; a lab's
and a question's widgets share their layouts and styles, and a shared one refuses a change. After
a page reload the front end asks the kernel for every widget it holds, and the more there are the
longer it takes (tests/test_browser_access.py reloads every notebook)."""

import pytest

from engine.presentation import access


def _open_widgets() -> int:
    from ipywidgets.widgets.widget import _instances
    return len(_instances)


def _run_cell(monkeypatch, cell, request, make):
    monkeypatch.setattr(access, "running_cell", lambda: (cell, request))
    return make()


def test_a_lab_s_cell_run_again_leaves_as_many_widgets_in_the_kernel_as_one_run():
    from labs.start import temperature_lab

    monkeypatch = pytest.MonkeyPatch()
    try:
        first = _run_cell(monkeypatch, "cell-a", "request-1", temperature_lab)
        after_one = _open_widgets()
        for request in ("request-2", "request-3"):
            latest = _run_cell(monkeypatch, "cell-a", request, temperature_lab)
        assert _open_widgets() == after_one
        assert first.comm is None and latest.comm is not None           # the earlier lab is closed
        other = _run_cell(monkeypatch, "cell-b", "request-4", temperature_lab)   # another cell: both stay
        assert latest.comm is not None and other.comm is not None
    finally:
        monkeypatch.undo()
    access.close_tree(latest)
    access.close_tree(other)


def test_closing_a_cell_s_widgets_closes_everything_under_them_but_what_they_share():
    from labs.norms import stack_lab

    monkeypatch = pytest.MonkeyPatch()
    try:
        root = _run_cell(monkeypatch, "cell-c", "request-1", stack_lab)
        under = []
        todo = [root]
        while todo:
            widget = todo.pop()
            if widget in under:
                continue
            under.append(widget)
            todo += list(getattr(widget, "children", ()) or ()) + access._shown_in(widget)
        again = _run_cell(monkeypatch, "cell-c", "request-2", stack_lab)
    finally:
        monkeypatch.undo()
    support = access.support()
    closed = [w for w in under if w is not support]
    assert closed and all(w.comm is None for w in closed)               # the image and its size box too
    assert support.comm is not None and again.comm is not None
    assert all(w.layout.comm is not None for w in (again, *again.children))   # shared layouts stay open
    access.close_tree(again)


def test_a_lab_s_widgets_share_their_layouts_and_a_shared_layout_refuses_a_change():
    from labs.positional import rotary_lab

    root = rotary_lab()
    layouts = set()
    todo = [root]
    while todo:
        widget = todo.pop()
        layouts.add(id(widget.layout))
        todo += list(getattr(widget, "children", ()) or ()) + access._shown_in(widget)
    shared = [w for w in (root, *root.children) if getattr(w.layout, "_course_shared", False)]
    assert shared and len(layouts) <= 12                                 # a few settings, many widgets
    with pytest.raises(AttributeError, match="shared by many course widgets"):
        shared[0].layout.display = "none"
    access.close_tree(root)


def test_a_number_question_s_answer_button_keeps_a_layout_of_its_own_to_show_and_hide():
    from engine.core.inventory import notebooks
    from engine.core.registry import get_question
    from engine.ui.questions import ask

    number = next(q for nb in notebooks() for q in nb.questions if get_question(q).kind == "number")
    root = ask(number)
    reveal = [w for w in _walk(root) if "course-reveal-button" in getattr(w, "_dom_classes", ())]
    assert reveal
    for button in reveal:
        assert not getattr(button.layout, "_course_shared", False)
        button.layout.display = "none"                                   # its own: it may change
    access.close_tree(root)


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _walk(child)
