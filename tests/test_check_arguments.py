"""Nothing the learner's function is given may change, however it is shaped
(engine/core/sandbox.py, engine/core/checker.py): arrays inside objects (the capstone's
BlockWeights, the trained model's Weights), dataclasses, named tuples, lists and dictionaries are
locked or copied, and compared after the call; a change anywhere is reported with the place it
happened, written as code ("w.Wq", "weights.blocks[0].Wq", "blocks"), with the learner's line,
and the feedback says what the argument is ("the list of blocks", not "the array").
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

from engine.core import budget, sandbox
from engine.core.checker import evaluate, evaluate_source
from engine.core.cell import run_cell
from engine.core.definition import Case, Contract, Exercise
from engine.core.registry import get_exercise


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.setattr(budget, "CALL_SECONDS", 1.0)


# ---------------------------------------------------------------- the capstone's weights object

CAPSTONE = get_exercise("capstone-block")
FIRST_LINE = "    n, d = x.shape\n"


def _capstone_with(lines: str) -> str:
    """The capstone's solution with ``lines`` run right after its first line (line 7)."""
    source = CAPSTONE.solution_source
    assert FIRST_LINE in source
    return source.replace(FIRST_LINE, FIRST_LINE + lines, 1)


# (what the code does to the weights, the part reported, the line reported). The attribute names
# are the attention's and the norms', which every version of BlockWeights has.
WRITES_INTO_THE_WEIGHTS = {
    "/=": ("    w.Wq /= 2\n", "w.Wq", "line 7: w.Wq /= 2"),
    "*=": ("    w.Wk *= 1.5\n", "w.Wk", "line 7: w.Wk *= 1.5"),
    "np.exp(..., out=...)": ("    np.exp(w.attention_norm_gain, out=w.attention_norm_gain)\n", "w.attention_norm_gain",
                             "line 7: np.exp(w.attention_norm_gain, out=w.attention_norm_gain)"),
    "a write through a reshape": ("    flat = w.Wo.reshape(-1)\n    flat[0] = 0.0\n", "w.Wo", "line 8: flat[0] = 0.0"),
    "a write through a slice": ("    w.Wv[:, 0] = 0.0\n", "w.Wv", "line 7: w.Wv[:, 0] = 0.0"),
    ".sort()": ("    w.ffn_norm_gain.sort()\n", "w.ffn_norm_gain", "line 7: w.ffn_norm_gain.sort()"),
    "an attribute set anew": ("    w.Wv = w.Wv * 0.5\n", "w.Wv", "line 7: w.Wv = w.Wv * 0.5"),
    "the number of heads set anew": ("    w.heads = w.heads + 0\n    w.heads = 2 * w.heads\n", "w.heads",
                                     "line 8: w.heads = 2 * w.heads"),
    "an attribute added": ("    w.scale = 2.0\n", "w.scale", "line 7: w.scale = 2.0"),
}


@pytest.mark.parametrize("form", list(WRITES_INTO_THE_WEIGHTS))
def test_every_change_to_the_capstones_weights_is_caught_with_its_place_and_line(form):
    lines, part, location = WRITES_INTO_THE_WEIGHTS[form]
    fb = evaluate_source(CAPSTONE, _capstone_with(lines))
    assert fb.kind == "inplace", fb.text()
    assert f"changed its argument `w`: `{part}`" in fb.text(), fb.text()
    assert "the BlockWeights object `w` you pass in" in fb.text() and "the array" not in fb.text()
    assert fb.location == location, fb.text()
    assert f"`{part}" in fb.hint and "caller's own data" in fb.hint


def test_the_weights_handed_to_the_function_are_copies_with_every_array_locked():
    w = CAPSTONE.fixed_cases()[0].args[1]
    given = sandbox.copied(w)
    sandbox.read_only(given)
    assert type(given) is type(w) and given is not w
    arrays = {name: value for name, value in vars(given).items() if isinstance(value, np.ndarray)}
    assert len(arrays) >= 8
    for name, array in arrays.items():
        assert not array.flags.writeable, name
        assert not np.shares_memory(array, getattr(w, name)), name
        assert getattr(w, name).flags.writeable, "the original is left as it was"


# ---------------------------------------------------------------- deeper: the trained model's weights

class _Holder(NamedTuple):
    weights: object
    note: str


def _weights_exercise():
    """An exercise whose argument is the trained model's Weights (a named tuple holding a tuple
    of BlockWeights), inside another named tuple."""
    from lib import model

    def reference(held):
        return np.array([float(np.abs(b.Wq).sum()) for b in held.weights.blocks])

    return Exercise(
        id="test-trained-weights", notebook="05_trained_model", title="t", name="sizes",
        template="def sizes(held):\n    return ____\n", solution=["0"], hints=["a", "b"],
        reference=reference,
        contract=Contract(args={"held": "the trained weights"}, returns="one number per block"),
        fixed=lambda: [Case((_Holder(model.weights(), "trained"),), "the trained weights", visible=True)],
        draw=lambda rng: [])


@pytest.mark.parametrize("lines,part,location", [
    ("    held.weights.blocks[0].Wq[0, 0] = 0.0\n", "held.weights.blocks[0].Wq",
     "line 2: held.weights.blocks[0].Wq[0, 0] = 0.0"),
    ("    held.weights.blocks[1].Wq *= 0.5\n", "held.weights.blocks[1].Wq", "line 2: held.weights.blocks[1].Wq *= 0.5"),
    ("    held.weights.blocks[2].ffn_norm_gain = held.weights.blocks[2].ffn_norm_gain + 1\n",
     "held.weights.blocks[2].ffn_norm_gain", "line 2: held.weights.blocks[2].ffn_norm_gain = held.weights.blocks[2].ffn_norm_gain + 1"),
    ("    np.negative(held.weights.embedding, out=held.weights.embedding)\n", "held.weights.embedding",
     "line 2: np.negative(held.weights.embedding, out=held.weights.embedding)"),
], ids=["write into a block's array", "*= on a block's array", "a block's attribute set anew",
        "out= on the embedding"])
def test_a_change_deep_inside_the_trained_weights_is_reported_at_its_path(lines, part, location):
    ex = _weights_exercise()
    source = ("def sizes(held):\n" + lines +
              "    return np.array([float(np.abs(b.Wq).sum()) for b in held.weights.blocks])\n")
    fb = evaluate(ex, run_cell(source, ex.context, ex.id))
    assert fb.kind == "inplace", fb.text()
    assert f"changed its argument `held`: `{part}`" in fb.text(), fb.text()
    assert "the _Holder `held` you pass in" in fb.text()
    assert fb.location == location
    untouched = evaluate(ex, run_cell("def sizes(held):\n    return np.array([float(np.abs(b.Wq).sum()) "
                                      "for b in held.weights.blocks])\n", ex.context, ex.id))
    assert untouched.passed, untouched.text()


# ---------------------------------------------------------------- lists of blocks

LEAVE_ONE_OUT = get_exercise("leave-one-out")
SCORES_LINE = "    scores = []\n"


@pytest.mark.parametrize("lines,what,location", [
    ("    blocks.pop()\n", "`blocks` held 4 items and now holds 3", "line 7: blocks.pop()"),
    ("    blocks.append(blocks[0])\n", "`blocks` held 4 items and now holds 5", "line 7: blocks.append(blocks[0])"),
    ("    blocks.reverse()\n", "`blocks[0]` no longer holds what it was given", "line 7: blocks.reverse()"),
    ("    blocks[1] = blocks[0]\n", "`blocks[1]` no longer holds what it was given", "line 7: blocks[1] = blocks[0]"),
    ("    del blocks[0]\n", "`blocks` held 4 items and now holds 3", "line 7: del blocks[0]"),
    ("    blocks.append(blocks[0])\n    blocks.pop()\n    last = blocks.pop()\n", "`blocks` held 4 items and now holds 3",
     "line 9: last = blocks.pop()"),
], ids=["pop", "append", "reverse", "an item replaced", "del", "put back, then popped"])
def test_a_change_to_the_list_of_blocks_names_the_list_and_the_line(lines, what, location):
    fb = evaluate_source(LEAVE_ONE_OUT, LEAVE_ONE_OUT.solution_source.replace(SCORES_LINE, SCORES_LINE + lines, 1))
    assert fb.kind == "inplace", fb.text()
    assert f"changed its argument `blocks`: {what}" in fb.text(), fb.text()
    assert "the list of blocks you pass in" in fb.text() and "the array" not in fb.text()
    assert fb.location == location, fb.text()
    assert "new list" in fb.hint and "`items.pop()`" in fb.hint


# ---------------------------------------------------------------- dataclasses, dictionaries, sets

@dataclass
class Layer:
    weight: np.ndarray
    name: str
    extra: dict


def _layers_exercise():
    def reference(layers, table):
        return np.array([float(layer.weight.sum()) for layer in layers]) + table["shift"]

    def fixed():
        rng = np.random.default_rng(0)
        layers = [Layer(rng.normal(size=(2, 3)), f"layer {i}", {"scale": np.ones(3)}) for i in range(3)]
        return [Case((layers, {"shift": 1.0, "unused": [1, 2]}), "three layers", visible=True)]

    return Exercise(
        id="test-layers", notebook="00_start_here", title="t", name="sums",
        template="def sums(layers, table):\n    return ____\n", solution=["0"], hints=["a", "b"],
        reference=reference, fixed=fixed, draw=lambda rng: [],
        contract=Contract(args={"layers": "a list of Layer", "table": "a dictionary"}, returns="numbers"))


@pytest.mark.parametrize("lines,change,described", [
    ("    layers[0].weight[0, 0] = 5.0\n", "`layers`: `layers[0].weight` no longer holds the numbers", "the list of layers"),
    ("    layers[1].extra['scale'] *= 2\n", "`layers`: `layers[1].extra['scale']` no longer holds the numbers",
     "the list of layers"),
    ("    layers[2].name = 'renamed'\n", "`layers`: `layers[2].name` no longer holds what it was given", "the list of layers"),
    ("    layers.sort(key=lambda layer: layer.name, reverse=True)\n", "`layers`: `layers[0].weight", "the list of layers"),
    ("    table['shift'] = 0.0\n", "`table`: `table['shift']` no longer holds what it was given", "the dictionary `table`"),
    ("    table['new'] = 1\n", "`table`: `table['new']` was added", "the dictionary `table`"),
    ("    table.pop('unused')\n", "`table`: `table['unused']` was removed", "the dictionary `table`"),
    ("    table['unused'].append(3)\n", "`table`: `table['unused']` held 2 items and now holds 3", "the dictionary `table`"),
], ids=["an array in a dataclass in a list", "an array in a dict in a dataclass", "a dataclass attribute set anew",
        "list.sort", "a dict entry set anew", "a dict entry added", "dict.pop", "a list in a dict appended to"])
def test_a_change_anywhere_in_lists_dataclasses_and_dictionaries_is_found(lines, change, described):
    ex = _layers_exercise()
    source = ("def sums(layers, table):\n" + lines +
              "    return np.array([float(layer.weight.sum()) for layer in layers]) + table['shift']\n")
    fb = evaluate(ex, run_cell(source, ex.context, ex.id))
    assert fb.kind == "inplace", fb.text()
    assert f"changed its argument {change}" in fb.text(), fb.text()
    assert f"{described} you pass in" in fb.text()
    assert fb.location == "line 2: " + lines.strip()


def test_first_change_writes_the_place_as_code():
    first = sandbox.first_change
    w = CAPSTONE.fixed_cases()[0].args[1]
    moved = sandbox.copied(w)
    moved.Wq = moved.Wq + 1
    assert first(moved, w, "w").path == "w.Wq"
    nested = {"a": [np.zeros(2), (1, np.ones(3))]}
    changed = sandbox.copied(nested)
    changed["a"][1][1][2] = 7
    assert first(changed, nested, "d").path == "d['a'][1][1]"
    held = _Holder(weights=np.zeros(2), note="x")
    assert first(_Holder(np.ones(2), "x"), held, "h").path == "h.weights"
    assert first(sandbox.copied(nested), nested, "d") is None
    assert first([np.nan], [np.nan], "v") is None, "NaN equals NaN"
