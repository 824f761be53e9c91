"""The course's inventory (engine/core/inventory.py) and the proof that every suite covers the
whole course.

What exists is found here without the inventory and without any list: the notebooks in content/,
every ``*_lab`` function defined in a lab package (the packages walked), every exercise and
question in the definitions modules (walked). Each must be covered by every suite that concerns
it, read from the lists those suites iterate:

- every notebook: nbval, as shipped and solved (tests/test_notebooks.py), and the browser tests
  (tests/test_browser_live.py, tests/test_browser_access.py); its definitions module is loaded;
- every lab: called by a notebook (so nbval runs it and the browser tests, which require every lab
  a notebook calls on the page, drive it), driven by the lab tests (tests/test_labs_layout.py,
  tests/test_figure_view.py through benchmarks.labs, tests/test_labs_packages.py) and by the
  benchmarks (benchmarks/labs.py; benchmarks/browser.py times one lab of every notebook);
- every exercise not retired: checked in its notebook (nbval runs the solved copy strictly) and by
  tests/test_exercises.py, tests/test_check_mutants.py and tests/test_exercise_references.py;
- every question: asked in its notebook (or, kept for them, in the notebooks saved from earlier
  releases that tests/test_saved_notebooks.py runs) and registered (tests/test_questions.py and the
  report iterate the registry); every skip-ahead set: shown in its notebook;
- every exercise, question and skip-ahead question a notebook asks: free of answers in sight above
  it (tests/test_answers_in_sight.py).
"""

import importlib
import inspect
import json
import pkgutil
from dataclasses import replace
from pathlib import Path

import pytest

import labs
from conftest import CONTENT
from engine.core import inventory, registry
from engine.core.definition import Exercise, Question

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- what exists, found without lists

def existing_notebooks() -> set[str]:
    return {p.relative_to(CONTENT).as_posix() for p in CONTENT.rglob("*.ipynb")
            if ".ipynb_checkpoints" not in p.parts}


def existing_labs() -> dict:
    """{function: "module.name"} of every ``*_lab`` function a lab module defines."""
    found = {}
    for info in pkgutil.walk_packages(labs.__path__, "labs."):
        if info.name.startswith("engine.kit") or info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.endswith("_lab") and inspect.isfunction(value) and value.__module__ == module.__name__:
                found[value] = f"{module.__name__}.{name}"
    return found


def definitions_modules() -> dict:
    """{module name: module} of every module of exercises.definitions that defines something."""
    import exercises.definitions as package

    found = {}
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        if hasattr(module, "DEFINITIONS"):
            found[info.name] = module
    return found


def existing_items() -> tuple[list[Exercise], list[Question], dict]:
    """(exercises not retired, questions, {notebook stem: skip-ahead questions}) of every
    definitions module."""
    exercises, questions, skip = [], [], {}
    for module in definitions_modules().values():
        exercises += [d for d in module.DEFINITIONS if isinstance(d, Exercise) and not d.retired]
        questions += [d for d in module.DEFINITIONS if isinstance(d, Question)]
        for q in getattr(module, "SKIP_AHEAD", ()):
            skip.setdefault(q.notebook, []).append(q)
    return exercises, questions, skip


def function(lab: str):
    module, _, name = lab.rpartition(".")
    return getattr(importlib.import_module(module), name)


NOTEBOOKS = inventory.notebooks()
BY_STEM = {nb.stem: nb for nb in NOTEBOOKS}


# ---------------------------------------------------------------- the inventory itself

def test_the_inventory_reads_each_notebook_from_its_cells_and_metadata():
    start = BY_STEM["00_start_here"]
    assert (start.path, start.title, start.definitions) == ("00_start_here.ipynb", "Start here",
                                                           "exercises.definitions.start")
    assert start.labs == ("labs.start.temperature_lab",) and not start.skip_ahead
    assert start.exercises == ("row-mean", "stable-softmax")
    assert "start-predict-softmax" in start.questions
    positional = BY_STEM["01_positional_encoding"]
    assert positional.title == "Positional encoding: where each word stands"
    assert positional.heading.startswith("01 ") and positional.skip_ahead
    assert positional.labs[0] == "labs.positional.shuffle_lab" and len(positional.labs) == 4
    assert [nb.path for nb in NOTEBOOKS] == sorted(existing_notebooks())


def test_a_notebook_is_read_from_its_own_cells_whatever_they_hold():
    notebook = {"metadata": {"course": {"definitions": "extra"}}, "cells": [
        {"cell_type": "markdown", "source": ["# 07 Something *new*\n", "\n", "What it is, in `code`.\n"]},
        {"cell_type": "code", "source": "%matplotlib inline"},                  # not Python: skipped
        {"cell_type": "code", "source": "from labs.extra import one_lab, two_lab as two, a_model\n"
                                        "from engine.ui.skip_ahead import skip_ahead\n"
                                        "skip_ahead('07_new')\ntwo()\none_lab()\ntwo()\na_model()"},
        {"cell_type": "code", "metadata": {"tags": ["exercise"], "course": {"exercise": "ex-1"}},
         "source": "x = ____"},
        {"cell_type": "code", "source": "ask('q-1')\nask('q-2')\nask('q-1')"},
    ]}
    entry = inventory.read_notebook(notebook, "part/07_new.ipynb")
    assert entry.stem == "07_new" and entry.heading == "07 Something new" and entry.title == "Something new"
    assert entry.summary == "What it is, in code."
    assert entry.definitions == "exercises.definitions.extra"
    assert entry.labs == ("labs.extra.two_lab", "labs.extra.one_lab")       # in the order first called
    assert entry.exercises == ("ex-1",) and entry.questions == ("q-1", "q-2") and entry.skip_ahead
    bare = inventory.read_notebook({"cells": []}, "08_bare.ipynb")
    assert (bare.heading, bare.title, bare.definitions, bare.labs) == ("08 bare", "bare", None, ())


def test_the_index_the_site_ships_reads_back_as_the_same_inventory():
    assert tuple(inventory.from_json(inventory.to_json(list(NOTEBOOKS)))) == NOTEBOOKS


def test_where_there_is_no_content_folder_the_index_the_site_ships_is_read(tmp_path, monkeypatch):
    """In the browser the course wheel holds no content/: the registry reads the index the site
    build wrote into the wheel (inventory.json in the course's release folder, tools/release.py)."""
    index = tmp_path / "release" / "inventory.json"
    index.parent.mkdir()
    installed = replace(inventory.current(), content=tmp_path / "no-content", release=index.parent)
    monkeypatch.setattr(inventory, "current", lambda: installed)
    inventory.notebooks.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="cannot be listed"):
            inventory.notebooks()
        index.write_text(inventory.to_json(list(NOTEBOOKS)[:2]))
        assert [nb.stem for nb in inventory.notebooks()] == [nb.stem for nb in list(NOTEBOOKS)[:2]] != []
    finally:
        inventory.notebooks.cache_clear()


def test_two_notebooks_with_one_name_are_refused(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01_same.ipynb").write_text(json.dumps({"cells": []}))
    with pytest.raises(ValueError, match="share the name '01_same'"):
        inventory.scan(tmp_path)


def test_the_registry_refuses_a_module_outside_the_definitions():
    with pytest.raises(ValueError, match="not a module of exercises.definitions"):
        registry.definitions_module("tools.site")
    with pytest.raises(ValueError, match="not a module of exercises.definitions"):
        registry.definitions_module("exercises.definitions.a.b")


# ---------------------------------------------------------------- every suite covers everything

def test_every_notebook_is_run_by_nbval_and_opened_in_the_browser():
    import test_browser_access
    import test_browser_live
    import test_notebooks

    existing = existing_notebooks()
    assert existing and {p.relative_to(CONTENT).as_posix() for p in test_notebooks.NOTEBOOKS} == existing
    assert set(test_browser_live.NOTEBOOKS) == existing
    assert set(test_browser_access.NOTEBOOKS) == existing


def test_every_definitions_module_is_named_by_a_notebook_and_every_name_exists():
    named = [nb.definitions for nb in NOTEBOOKS if nb.definitions]
    assert len(named) == len(set(named)), "two notebooks name one definitions module"
    assert set(definitions_modules()) == set(named)


def test_every_lab_is_called_by_a_notebook_and_driven_by_the_lab_tests_and_benchmarks():
    import test_labs_layout
    import test_labs_packages

    from benchmarks import browser
    from benchmarks import labs as lab_bench

    existing = existing_labs()
    called = {function(lab) for lab in inventory.labs()}
    assert len(existing) >= 18
    assert set(existing) <= called, f"no notebook calls {sorted(existing[f] for f in set(existing) - called)}"
    assert called <= set(existing), "a notebook calls a lab that no lab module defines"
    assert set(test_labs_layout.every_lab().values()) >= set(existing)
    assert set(lab_bench.all_labs().values()) >= set(existing)           # and tests/test_figure_view.py
    packages = {name.split(".")[1] for name in existing.values()}
    assert set(test_labs_packages.PACKAGES) >= packages
    timed = {notebook for notebook, _css in browser.timed_labs().values()}
    untimed = {nb.path for nb in NOTEBOOKS if nb.labs} - timed
    assert not untimed, (f"the browser benchmark times, in each notebook, the first lab whose first slider "
                         f"can be dragged {browser.DRAG_STEPS} steps: none in {sorted(untimed)}")


def test_every_exercise_is_checked_in_its_notebook_and_by_the_exercise_tests():
    import test_answers_in_sight
    import test_check_mutants
    import test_exercise_references
    import test_exercises

    exercises, _questions, _skip = existing_items()
    assert exercises
    for exercise in exercises:
        assert exercise.notebook in BY_STEM, f"{exercise.id}: no notebook {exercise.notebook}"
        assert exercise.id in BY_STEM[exercise.notebook].exercises, \
            f"{exercise.id} has no exercise cell in {exercise.notebook}"
    ids = {e.id for e in exercises}
    assert set(test_exercises.IDS) >= ids
    assert set(test_check_mutants.IDS) >= {e.id for e in exercises if e.kind == "function"}
    assert {e.id for e in test_exercise_references.EVERY} >= ids
    assert {(nb.path, ex_id) for nb in NOTEBOOKS for ex_id in nb.exercises} <= \
        {(path, item.item.id) for path, item in test_answers_in_sight.ITEMS}
    shown = [ex_id for nb in NOTEBOOKS for ex_id in nb.exercises]
    assert len(shown) == len(set(shown)) and set(shown) <= {e.id for e in registry.all_exercises()}


def saved_notebooks_ask() -> set[str]:
    """The questions asked by the notebooks saved from earlier releases (tests/saved_notebooks/,
    run by tests/test_saved_notebooks.py)."""
    asked = set()
    for path in (ROOT / "tests" / "saved_notebooks").rglob("*.ipynb"):
        asked |= set(inventory.read_notebook(json.loads(path.read_text(encoding="utf-8")), path.name).questions)
    return asked


def test_every_question_is_asked_in_its_notebook_and_registered():
    import test_answers_in_sight

    _exercises, questions, skip = existing_items()
    assert questions
    kept = saved_notebooks_ask()
    for question in questions:
        assert question.id in BY_STEM[question.notebook].questions or question.id in kept, \
            f"{question.id} is asked neither in {question.notebook} nor in a notebook saved from an earlier release"
    assert {q.id for q in registry.all_questions()} >= {q.id for q in questions}
    asked = {q for nb in NOTEBOOKS for q in nb.questions}
    assert asked <= {q.id for q in registry.all_questions()}, "a notebook asks a question no module defines"
    assert set(skip) == {nb.stem for nb in NOTEBOOKS if nb.skip_ahead}
    checked = {(path, item.item.id) for path, item in test_answers_in_sight.ITEMS}
    for nb in NOTEBOOKS:
        shown = set(nb.questions) | {q.id for q in skip.get(nb.stem, []) if nb.skip_ahead}
        assert {(nb.path, q) for q in shown} <= checked, f"{nb.path}: a question escapes the answers-in-sight test"


# ---------------------------------------------------------------- and each of those tests can fail

def _without(monkeypatch, stem, **fields):
    """The inventory as if notebook ``stem`` had ``fields`` instead of what its cells say."""
    changed = tuple(replace(nb, **fields) if nb.stem == stem else nb for nb in NOTEBOOKS)
    monkeypatch.setattr(inventory, "notebooks", lambda: changed)
    monkeypatch.setitem(BY_STEM, stem, next(nb for nb in changed if nb.stem == stem))


def test_a_lab_no_notebook_calls_fails_the_coverage_test(monkeypatch):
    norms = BY_STEM["03_norms_and_residuals"]
    _without(monkeypatch, norms.stem, labs=norms.labs[1:])
    with pytest.raises(AssertionError, match=r"no notebook calls \['labs.norms.stack.stack_lab'\]"):
        test_every_lab_is_called_by_a_notebook_and_driven_by_the_lab_tests_and_benchmarks()


def test_an_exercise_without_its_cell_fails_the_coverage_test(monkeypatch):
    _without(monkeypatch, "00_start_here", exercises=("stable-softmax",))
    with pytest.raises(AssertionError, match="row-mean has no exercise cell in 00_start_here"):
        test_every_exercise_is_checked_in_its_notebook_and_by_the_exercise_tests()


def test_a_question_no_notebook_asks_fails_the_coverage_test(monkeypatch):
    notebook = next(nb for nb in NOTEBOOKS if nb.questions)
    question = notebook.questions[0]
    kept = saved_notebooks_ask() - {question}          # as if no saved notebook asked it either
    monkeypatch.setitem(globals(), "saved_notebooks_ask", lambda: kept)
    _without(monkeypatch, notebook.stem, questions=tuple(q for q in notebook.questions if q != question))
    with pytest.raises(AssertionError, match=f"{question} is asked neither in {notebook.stem}"):
        test_every_question_is_asked_in_its_notebook_and_registered()


def test_a_notebook_a_suite_leaves_out_fails_the_coverage_test(monkeypatch):
    import test_browser_access

    monkeypatch.setattr(test_browser_access, "NOTEBOOKS", test_browser_access.NOTEBOOKS[1:])
    with pytest.raises(AssertionError):
        test_every_notebook_is_run_by_nbval_and_opened_in_the_browser()


def test_a_question_the_answers_in_sight_test_leaves_out_fails_the_coverage_test(monkeypatch):
    import test_answers_in_sight

    kept = [(path, item) for path, item in test_answers_in_sight.ITEMS if item.item.id != "pos-predict-shuffle"]
    monkeypatch.setattr(test_answers_in_sight, "ITEMS", kept)
    with pytest.raises(AssertionError, match="01_positional_encoding.ipynb: a question escapes"):
        test_every_question_is_asked_in_its_notebook_and_registered()
