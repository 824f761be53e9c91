"""The layout of labs/ (labs/README.md): one package per notebook re-exporting exactly the names
the notebooks import, one lab per module, distinct view names, and no widgets on import."""

import ast
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core import inventory

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = inventory.lab_packages()          # the packages the notebooks call labs from
NOTEBOOKS = ([ROOT / "content" / nb.path for nb in inventory.notebooks()]
             + sorted(ROOT.glob("tests/saved_notebooks/*/*.ipynb")))
def imported_names(notebooks=NOTEBOOKS) -> dict:
    """{package: the names notebooks import from it (``from labs.<package> import ...``)}, read
    from their code cells."""
    found = {}
    for path in notebooks:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                parts = (node.module or "").split(".") if isinstance(node, ast.ImportFrom) else []
                if len(parts) == 2 and parts[0] == "labs":
                    found.setdefault(parts[1], set()).update(alias.name for alias in node.names)
    return found


def lab_modules(package_name):
    package = importlib.import_module(f"labs.{package_name}")
    return [importlib.import_module(f"labs.{package_name}.{info.name}")
            for info in pkgutil.iter_modules(package.__path__)]


def test_the_notebooks_import_from_every_notebook_package():
    assert set(PACKAGES) <= set(imported_names())
    assert len(NOTEBOOKS) >= 12                       # today's six and the six saved ones


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_re_exports_exactly_what_the_notebooks_import(name):
    package = importlib.import_module(f"labs.{name}")
    wanted = imported_names()[name]
    assert set(package.__all__) == wanted
    public = {attr for attr, value in vars(package).items()
              if not attr.startswith("_") and not inspect.ismodule(value)}
    assert public == wanted
    for attr in wanted:
        assert getattr(package, attr) is not None


def test_the_expected_names_are_re_exported():
    names = imported_names()
    assert names["decoder"] == {"FLOW_D", "FLOW_FF", "FLOW_HEADS", "REAL_MODELS", "calculator_lab", "flow_inputs",
                                "flow_lab", "flow_model", "near_identity_model", "rand_demonstration",
                                "six_steps_lab", "size_of", "start_of_training"}
    assert names["trained"] == {"LOUD", "QUIET", "REAL_MODELS", "ablation_lab", "ablation_model", "example_block",
                                "head_summary", "heads_lab", "mismatch_lab", "mismatch_model",
                                "pooled_perplexities", "pooled_run", "stream_lab", "trace", "your_parts"}
    from engine.presentation.numbers import size
    from labs.decoder import size_of
    assert size_of is size and size_of(85_000_000) == "85.0 M"


@pytest.mark.parametrize("name", PACKAGES)
def test_one_lab_per_module(name):
    for module in lab_modules(name):
        labs = [attr for attr, value in vars(module).items()
                if attr.endswith("_lab") and inspect.isfunction(value) and value.__module__ == module.__name__]
        assert len(labs) <= 1, (module.__name__, labs)


def test_view_classes_have_distinct_names():
    seen = {}
    for name in PACKAGES:
        for module in lab_modules(name):
            for attr, value in vars(module).items():
                if inspect.isclass(value) and value.__module__ == module.__name__ and attr.endswith("Lab"):
                    assert attr not in seen, f"{attr} in {module.__name__} and {seen[attr]}"
                    seen[attr] = module.__name__
    assert {"ResidualStreamLab", "TrainedStreamLab", "CalculatorLab", "ShuffleLab"} <= set(seen)


def test_importing_every_lab_imports_no_widgets_and_no_matplotlib():
    modules = [f"labs.{name}.{info.name}" for name in PACKAGES
               for info in pkgutil.iter_modules([str(ROOT / "labs" / name)])]
    code = ("import importlib, sys\n"
            f"for name in {modules!r}: importlib.import_module(name)\n"
            "print(sorted(m for m in ('ipywidgets', 'matplotlib', 'IPython') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert len(modules) >= 20 and out.stdout.strip() == "[]"


# Counts in a verdict agree with their noun ("1 block", "2 blocks"), whatever the setting.
WRONG_NUMBER = re.compile(r"(?<![\d.,\-])(?<!\+ )1 (times|blocks|layers|additions|tokens|units|steps|points|positions|"
                          r"experts|words|parameters)\b|(?<![\d.])(?:[02-9]|\d{2,}) (block|layer|addition|step|point|"
                          r"unit|position)\b(?!['\u2019])")


def _lab_names():
    from benchmarks import labs

    return sorted(labs.all_labs())


@pytest.mark.parametrize("name", _lab_names())
def test_no_lab_verdict_puts_a_count_with_the_wrong_number_at_any_setting(name):
    from benchmarks import labs

    root = labs.all_labs()[name]()
    found = labs.controls(root)
    first = next((i for i, (kind, _w) in enumerate(found) if kind in ("slider", "selection-slider")), None)
    verdicts = [w for w in labs._walk(root) if "course-verdict" in getattr(w, "_dom_classes", ())]
    for index, (kind, widget) in enumerate(found):
        values = labs.sweep(kind, widget, index == first, quick=False)
        if kind == "slider":
            values = sorted(set(values) | {widget.min, widget.min + (widget.step or 1)})
        for value in values:
            try:
                widget.value = value
            except Exception:  # noqa: BLE001 - a value another control has made invalid
                continue
            for verdict in verdicts:
                text = re.sub(r"<[^>]+>", "", verdict.value)
                assert not WRONG_NUMBER.search(text), (name, widget.description, value, text)
    labs.close(root)
