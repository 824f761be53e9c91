"""The controls every lab is built from (labs/kit/layout.py) and what every lab makes of them:
native controls with names a screen reader can read, state shown without colour, slider
tracks that fit their range, and the course's page support in every lab.

What these widgets look like and do in a browser is checked in tests/test_browser_access.py.
"""

import importlib

import ipywidgets as widgets
import pytest
from ipywidgets.widgets.widget import _instances
from ipywidgets.widgets.widget_link import Link

from exercises.core import inventory
from labs.kit import layout
from presentation import access


def every_lab():
    """{"<package>.<name>": function} for every ``*_lab`` the notebooks call (the course's
    inventory)."""
    found = {}
    for lab in inventory.labs():
        module, _, name = lab.rpartition(".")
        found[lab.removeprefix("labs.")] = getattr(importlib.import_module(module), name)
    return found


def walk(widget):
    """The widget and everything inside it, the widgets shown in an Output included."""
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from walk(child)
    for output in getattr(widget, "outputs", ()) or ():
        ref = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
        if ref:
            yield _instances[ref["model_id"]]


@pytest.fixture(scope="module")
def built():
    return {name: make() for name, make in every_lab().items()}


def test_there_are_labs_in_every_notebook(built):
    assert {name.split(".")[0] for name in built} == set(inventory.lab_packages())
    assert all(nb.labs for nb in inventory.notebooks()) and len(built) >= 18


def test_every_lab_is_a_course_widget_with_the_page_support(built):
    for name, root in built.items():
        assert {"course-lab", access.ROOT_CLASS} <= set(root._dom_classes), name
        assert root.children[-1] is access.support(), name


def test_no_lab_keeps_a_state_in_a_colour_alone(built):
    """On/off is a check box (a tick), one of a few a radio button (a dot): no toggle buttons,
    whose state is a shade."""
    for name, root in built.items():
        kinds = {type(w).__name__ for w in walk(root)}
        assert not kinds & {"ToggleButton", "ToggleButtons"}, name


def test_every_control_has_a_name_to_read_out(built):
    named = (widgets.Checkbox, widgets.RadioButtons, widgets.Dropdown, widgets.IntSlider, widgets.FloatSlider,
             widgets.FloatLogSlider, widgets.SelectionSlider, widgets.BoundedIntText, widgets.BoundedFloatText)
    for name, root in built.items():
        for control in walk(root):
            if not isinstance(control, named):
                continue
            if "course-number-box" in control._dom_classes:        # named after its slider
                continue
            assert control.description.strip(), f"{name}: a {type(control).__name__} without a name"


def test_every_slider_gets_a_track_for_its_range_and_a_number_box_past_100_values(built):
    for name, root in built.items():
        boxes = {}
        for pair in walk(root):
            if "course-slider-with-box" in getattr(pair, "_dom_classes", ()):
                slider, box = pair.children
                boxes[slider.model_id] = box
        for control in walk(root):
            if isinstance(control, (widgets.SelectionSlider, widgets.FloatLogSlider)):
                # a fixed width would share it between the description and the track
                assert control.layout.width == "auto", (name, control.description)
            if not isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
                continue
            count = layout.positions(control)
            assert control.layout.width == "auto", name
            assert ("course-track-long" in control._dom_classes) == (count > layout.LONG_TRACK), name
            assert (control.model_id in boxes) == (count > layout.NUMBER_BOX), (name, control.description)


def test_a_number_box_is_linked_to_its_slider_in_the_browser():
    slider = layout.slider("int", value=-1, min=-1, max=255, description="token")
    row = layout.controls(slider)
    pair = row.children[0]
    assert "course-slider-with-box" in pair._dom_classes
    box = pair.children[1]
    assert isinstance(box, widgets.BoundedIntText) and (box.min, box.max, box.value) == (-1, 255, -1)
    links = [w for w in list(_instances.values()) if isinstance(w, Link)
             and w.source[0] is slider and w.target[0] is box]
    assert {link.source[1] for link in links} == {"min", "max", "step", "value"}
    assert layout.positions(slider) == 257
    few = layout.slider("float", value=0.5, min=0.0, max=1.0, step=0.05, description="share")
    assert layout.controls(few).children == (few,) and layout.positions(few) == 21


def test_switch_choice_and_menu_are_native_controls():
    on = layout.switch("causal mask", True, "each word sees only the earlier ones")
    assert isinstance(on, widgets.Checkbox) and on.value is True and on.description == "causal mask"
    pick = layout.choice([("ReLU", "relu"), ("GELU", "gelu")], description="activation")
    assert isinstance(pick, widgets.RadioButtons) and pick.orientation == "horizontal" and pick.value == "relu"
    menu = layout.menu([("float64", 8), ("float16", 2)], 2, "numbers stored as")
    assert isinstance(menu, widgets.Dropdown) and menu.layout.width == "auto" and menu.value == 2


def test_the_page_support_carries_the_style_and_the_script_once_per_kernel():
    holder = access.support()
    assert holder is access.support() and holder.layout.display == "none"
    data = [output["data"] for output in holder.outputs]
    assert data[0]["text/html"] == f"<style>{access.style()}</style>"
    assert data[1]["application/javascript"] == access.script()
    script = access.script()
    for what in ("aria-labelledby", "aria-live", "radiogroup", ".alt", "window.courseAccess", "keydown"):
        assert what in script or what.strip(".") in script, what
    assert "prefers-reduced-motion" in access.style() and ":focus-visible" in access.style()
    holder.close()
    assert access.support() is not holder                 # a closed one is made again


def test_the_page_support_files_ship_in_the_course_wheel():
    """access.css and access.js are data files: the wheel the browser installs must carry them."""
    from tools import wheel

    files = wheel.source_files()
    for name in ("access.css", "access.js"):
        assert files[f"presentation/{name}"] == (access.HERE / name).read_bytes()
