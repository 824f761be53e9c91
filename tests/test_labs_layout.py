"""The controls every lab is built from (engine/kit/layout.py) and what every lab makes of them:
native controls with names a screen reader can read, state shown without colour, slider
tracks that fit their range, and the course's page support in every lab.

What these widgets look like and do in a browser is checked in tests/test_browser_access.py.
"""

import importlib

import ipywidgets as widgets
import pytest
from ipywidgets.widgets.widget import _instances

from engine.core import inventory
from engine.kit import layout, number_box
from engine.presentation import access


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


def test_every_slider_gets_a_track_for_its_range_and_a_number_box(built):
    for name, root in built.items():
        boxes = {}
        for pair in walk(root):
            if number_box.PAIR_CLASS in getattr(pair, "_dom_classes", ()):
                slider, box, message = pair.children
                boxes[slider.model_id] = box
                assert number_box.BOX_CLASS in box._dom_classes and number_box.MESSAGE_CLASS in message._dom_classes
                assert isinstance(box, widgets.Text) and not slider.readout, (name, slider.description)
        for control in walk(root):
            if isinstance(control, (widgets.SelectionSlider, widgets.FloatLogSlider)):
                # a fixed width would share it between the description and the track
                assert control.layout.width == "auto", (name, control.description)
            if not isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider,
                                        widgets.SelectionSlider)):
                continue
            assert control.model_id in boxes, (name, control.description)
            assert boxes[control.model_id].value == number_box.grid_of(control).write(control.value), name
            if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
                assert control.layout.width == "auto", name
                assert ("course-track-long" in control._dom_classes) == \
                    (layout.positions(control) > layout.LONG_TRACK), name


def type_into(pair, text):
    """Type ``text`` into a slider's number box as the browser sends it (on Enter or on leaving)."""
    box = pair.children[1]
    box.value = text
    return box.value, pair.children[2].value


def test_a_number_box_takes_a_value_in_the_format_it_shows():
    base = layout.log_slider(value=10_000, base=10, min=2, max=6, step=0.25, description="RoPE base",
                             readout_format=",.0f")
    pair = layout.controls(base).children[0]
    assert pair.children[1].value == "10,000"
    assert type_into(pair, "100,000") == ("100,000", "") and base.value == 100_000
    assert type_into(pair, "1e3") == ("1,000", "") and base.value == 1000
    shown, why = type_into(pair, "100,001")
    assert base.value == 1000 and shown == "1,000" and "100,000" in why and "177,828" in why
    shown, why = type_into(pair, "10")
    assert base.value == 1000 and "goes from 100 to 1,000,000" in why and "below" in why
    assert type_into(pair, "hundred")[1] and base.value == 1000
    base.value = 316.22776601683796            # the slider moved: the message goes, the box follows
    assert pair.children[1].value == "316" and pair.children[2].value == ""


def test_a_number_box_refuses_a_value_off_the_grid_with_the_reason():
    d_model = layout.slider("int", value=768, min=64, max=4096, step=64, description="d_model")
    pair = layout.controls(d_model).children[0]
    shown, why = type_into(pair, "100")
    assert d_model.value == 768 and shown == "768"
    assert "d_model moves in steps of 64: 100 lies between 64 and 128." in why
    assert type_into(pair, "1,024") == ("1024", "") and d_model.value == 1024
    shown, why = type_into(pair, "12.5")
    assert d_model.value == 1024 and "whole numbers" in why


def test_a_pick_one_slider_takes_a_label_or_a_value_typed():
    factor = layout.pick_slider([("\u00d70.5", 0.5), ("\u00d71", 1.0), ("\u00d72", 2.0)], 1.0, "scale factor")
    pair = layout.controls(factor).children[0]
    assert pair.children[1].value == "\u00d71"
    assert type_into(pair, "2") == ("\u00d72", "") and factor.value == 2.0
    assert type_into(pair, "x0.5") == ("\u00d70.5", "") and factor.value == 0.5
    shown, why = type_into(pair, "3")
    assert factor.value == 0.5 and shown == "\u00d70.5" and "\u00d72" in why and "not one of them" in why


def test_slider_values_reach_the_lab_on_the_grid():
    """The browser adds steps in floating point; the kernel hands the lab the grid's value."""
    share = layout.slider("float", value=0.0, min=-3.0, max=3.0, step=0.1, description="input")
    share.value = 2.000000000000001
    assert share.value == 2.0 and repr(share.value) == "2.0"
    share.value = 0.30000000000000004
    assert repr(share.value) == "0.3"
    base = layout.log_slider(value=100, base=10, min=2, max=6, step=0.25, description="base")
    base.value = 10 ** 2.2500000001
    assert base.value == 10 ** 2.25
    assert number_box.snap(2.000000000000001, -3, 0.1, 3) == 2.0 and number_box.snap(7, 0, 2, 5) == 4


def test_a_typed_whole_number_entry_shows_its_thousands():
    vocab = layout.number_entry(32000, 1, 1_000_000, "vocabulary")
    name, box, message = vocab.children
    assert name.value == "vocabulary" and box.value == "32,000"
    box.value = "50,257"
    assert vocab.value == 50257 and box.value == "50,257" and message.value == ""
    box.value = "2,000,000"
    assert vocab.value == 50257 and box.value == "50,257" and "1,000,000" in message.value


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
        assert files[f"engine/presentation/{name}"] == (access.HERE / name).read_bytes()
