"""Every lab's verdict against its own model, at a grid of settings of its controls.

For every lab the notebooks call (the course's inventory, through ``benchmarks.labs``), the lab is
built and driven headlessly: its opening state, each control over its values one at a time, and
random settings of all of them together. At each setting the verdict the learner reads is taken
from the verdict widget, every number in it is read back (``tests/wording.py``) and matched to a
number of the model's output the view shows (``lab.model``), within the rounding its writing
allows: a verdict that speaks of a run the plot does not show, a stale number or a number typed
into the text fails. The same verdicts follow the wording rules: one plural rule, distances
with their sign, "position k" only for a token's position.
"""

from __future__ import annotations

import dataclasses
import gc
import html
import itertools
import numbers
import re

import numpy as np
import pytest

import wording

RANDOM_SETTINGS = 4       # random settings of all the controls together, per lab
QUICK = True              # the benchmark sweep's quick grid (4 values of the first slider)


def _lab_ids():
    from benchmarks.labs import all_labs
    return list(all_labs())


def lab_object(root):
    """The view object whose root widget is ``root`` (it keeps the model it shows as ``model``)."""
    for holder in gc.get_referrers(root):
        if isinstance(holder, dict) and holder.get("root") is root:
            holder = next((o for o in gc.get_referrers(holder) if getattr(o, "__dict__", None) is holder), None)
        if holder is not None and getattr(holder, "root", None) is root and hasattr(holder, "model"):
            return holder
    raise LookupError("no lab object holds this root widget")


def model_numbers(value, depth: int = 0) -> list[float]:
    """Every number in a model's output, however deep (dicts, sequences, named tuples, arrays)."""
    if depth > 6 or isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        return []
    if isinstance(value, numbers.Number):
        return [float(value.real) if isinstance(value, complex) else float(value)]
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf" or value.size > 200_000:
            return []
        return value.astype(float).ravel().tolist()
    if isinstance(value, dict):
        return [x for v in value.values() for x in model_numbers(v, depth + 1)]
    if hasattr(value, "_asdict"):
        return model_numbers(value._asdict(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return model_numbers({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth + 1)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [x for v in value for x in model_numbers(v, depth + 1)]
    return []


def unmatched(said: str, model) -> list[str]:
    """The numbers ``said`` states that no number of ``model`` would be written as."""
    values = np.array(sorted(set(x for x in model_numbers(model) if np.isfinite(x))))
    return [n.text for n in wording.stated_numbers(said) if not any(n.allows(x) for x in _near(values, n))]


def _near(values: np.ndarray, n: wording.Stated):
    """The model's values that could be written as ``n`` (all of them for a bound or a percentage)."""
    if n.bound or n.percent:
        return values
    low, high = np.searchsorted(values, [n.value - 2 * n.tolerance - 1e-9, n.value + 2 * n.tolerance + 1e-9])
    return values[low:high]


def text_of(value: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", value))


# ---------------------------------------------------------------- driving a lab

def settings(name: str, found: list):
    """(label, [(widget, value), ...]) for the settings to visit: each control over its values
    alone (back to its first value after), then random settings of all of them. The trained
    model's labs run the model over every held-out text per setting (seconds each on a loaded
    machine): there each control goes to the last of its values (the far end of a slider), one
    after the other and left there, with no random settings."""
    from benchmarks.labs import sweep
    first = next((i for i, (kind, _w) in enumerate(found) if kind in ("slider", "selection-slider")), None)
    trained = name.startswith("trained.")
    values = [sweep(kind, widget, index == first, quick=QUICK) for index, (kind, widget) in enumerate(found)]
    if trained:
        values = [options[-1:] for options in values]
    else:
        values = [options + [widget.value] for (_k, widget), options in zip(found, values)]
    for (kind, widget), options in zip(found, values):
        for value in options:
            yield f"{widget.description}={value!r}", [(widget, value)]
    rng = np.random.default_rng(sum(map(ord, name)))
    for n in range(0 if trained else RANDOM_SETTINGS):
        chosen = [(widget, options[int(rng.integers(len(options)))]) for (_k, widget), options in zip(found, values)]
        yield f"random setting {n}: " + ", ".join(f"{w.description}={v!r}" for w, v in chosen), chosen


def _fields(model):
    """A lab's model (a frozen dataclass, labs/README.md) as a dict of its fields, one level deep."""
    if dataclasses.is_dataclass(model):
        return {f.name: getattr(model, f.name) for f in dataclasses.fields(model)}
    return model._asdict() if hasattr(model, "_asdict") else model


def visited(name: str) -> tuple:
    """(label, verdict text, model) at every setting of the lab ``name``."""
    from benchmarks import labs
    seen = []
    views: list = []
    with labs.patched_views("hold", views):
        root = labs.all_labs()[name]()
        lab = lab_object(root)
        found = labs.controls(root)
        verdict = next(w for w in labs._walk(root) if "course-verdict" in getattr(w, "_dom_classes", ()))
        seen.append(("the opening state", text_of(verdict.value), _fields(lab.model)))
        for label, setting in settings(name, found):
            for widget, value in setting:
                try:
                    widget.value = value
                except Exception:  # noqa: BLE001 - a value another control has made invalid
                    continue
            seen.append((label, text_of(verdict.value), _fields(lab.model)))
        labs.close(root, views)
    return tuple(seen)


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("name", _lab_ids())
def test_every_verdict_states_numbers_the_lab_computed_in_the_course_wording(name):
    """One test per lab (its settings are visited once, whichever worker runs it): every number
    of every verdict is one of the model's, and every verdict follows the wording rules."""
    numbers_wrong, words_wrong = [], []
    for label, said, model in visited(name):
        assert said.strip(), f"{name}, {label}: no verdict"
        assert said.strip() == text_of(model["verdict"]).strip(), f"{name}, {label}: the verdict shown is not the model's"
        missing = unmatched(said, model)
        if missing:
            numbers_wrong.append(f"{label}: {', '.join(missing)} in {said!r}")
        problems = wording.disagreements(said) + wording.unsigned_distances(said)
        positions = {int(x) for key, value in model.items() if isinstance(key, str)
                     and any(word in key for word in ("pos", "row", "watch"))
                     for x in model_numbers(value) if float(x).is_integer()}
        problems += [p for p in wording.positions_named(said)
                     if int(re.search(r"\d+", p).group(0)) not in positions]
        if problems:
            words_wrong.append(f"{label}: {problems} in {said!r}")
    assert not numbers_wrong, f"{name}: numbers no model field holds:\n" + "\n".join(numbers_wrong[:12])
    assert not words_wrong, f"{name}: against the wording rules:\n" + "\n".join(words_wrong[:12])


def test_the_reading_of_numbers_finds_what_a_verdict_states():
    said = ("Query at m = 5, key at n = 2, the key 3 positions after the query (m \u2212 n = \u22123): "
            "score -0.447, 1,731 tokens (66.7%), 1.4e-09 over 30 layers, under 1% of 109.5 M, "
            "1,248.5 MiB; after \u201ccount 1 2\u201d the word \u201c3\u201d, in float16 with W_up.")
    stated = wording.stated_numbers(said)
    assert [n.text for n in stated] == ["5", "2", "3", "\u22123", "-0.447", "1,731", "66.7%", "1.4e-09", "30",
                                        "under 1%", "109.5 M", "1,248.5 MiB"]
    assert stated[3].value == -3 and stated[6].allows(0.6667) and not stated[6].allows(0.668)
    assert stated[7].allows(1.449e-9) and not stated[7].allows(1.46e-9)
    assert stated[9].allows(0.004) and not stated[9].allows(0.02)
    assert stated[10].allows(109_529_856) and not stated[10].allows(109_600_000)
    assert unmatched("the stream ends at 0.051 after 48 blocks", {"sizes": [1.13, 0.0510063], "depth": 48}) == []
    assert unmatched("its size reaches 8.5e+09", {"sizes": [1.13, 0.0510063]}) == ["8.5e+09"]


def test_the_wording_rules_catch_what_they_forbid():
    assert wording.disagreements("after 1 steps; 1 of 4 units is on; 2 number") == ["1 steps", "2 number"]
    assert not wording.disagreements("after 1 balancing step, 2 blocks, 1 of 4 units, 0.5 bytes")
    assert wording.unsigned_distances("Query at 5, key at 2, 3 apart") == ["3 apart"]
    assert wording.positions_named("at position 2 of the array") == ["position 2"]


def test_a_share_of_the_positions_is_not_a_position():
    assert wording.positions_named("the words make up 55% and the positions 45%.") == []
    assert wording.positions_named("the positions 4.5% of it; position 3") == ["position 3"]
    assert [n.text for n in wording.stated_numbers("12.6 GiB at 2 bytes")] == ["12.6 GiB", "2"]
