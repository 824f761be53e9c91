"""Start a new notebook: ``./course new NAME [--title TITLE]`` (or ``python -m tools.new``).

For a name such as ``sampling`` (lower case, a Python name) it writes six new files and edits
none:

    content/NN_sampling.ipynb           the notebook: heading and summary, setup cell, one lab,
                                        one exercise with its check, references, "You can now"
    exercises/definitions/sampling.py   the exercise (its cell, solution, hints, cases, known
                                        mistakes)
    labs/sampling/__init__.py           the names the notebook imports from the lab package
    labs/sampling/sampling.py           the lab: a pure model and a view redrawn in place
    tests/test_labs_sampling.py         the lab's tests
    tests/data/answers/NN_sampling.toml the exercise's wrong and other right answers, for its tests

NN is the number after the highest in content/. The notebook names its definitions module in
its metadata, and the course's inventory (engine/core/inventory.py) finds everything else in
its cells, so the registry, nbval, the lab, exercise and browser tests and the benchmarks take
the new notebook in with no list to extend. Each file is a working start (the whole test suite
passes with it) meant to be rewritten: the lab centres a row of numbers, the exercise asks for
that centring. The templates are in tools/new_notebook/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import re
import sys
from pathlib import Path
from string import Template

from engine.core import inventory

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "new_notebook"

EXERCISE_CELL = '''def centre(x):
    """Each row of x (its last axis) minus the row's mean."""
    return x - ____
'''
# Python's soft keywords on every Python the course runs on (3.11 lists no "type")
SOFT_KEYWORDS = set(keyword.softkwlist) | {"_", "case", "match", "type"}
SETUP_CELL = "import numpy as np\nfrom engine.notebook import ____, ask, begin, check, hint, solution\nbegin()"


def names(name: str, title: str | None, root: Path) -> dict:
    """The words the templates are filled with, or SystemExit with what is wrong with ``name``."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name.endswith("_"):
        raise SystemExit(f"{name!r} cannot name a notebook: use lower-case letters, digits and _, "
                         "starting with a letter (for example attention or layer_norms).")
    if keyword.iskeyword(name) or name in SOFT_KEYWORDS:
        raise SystemExit(f"{name!r} cannot name a notebook: it is one of Python's keywords, so the "
                         f"notebook's `from labs.{name} import ...` could not be trusted to run; choose another "
                         f"name (for example {name}_part).")
    taken = [path.relative_to(root).as_posix() for path in (
        root / "labs" / name, root / "exercises" / "definitions" / f"{name}.py",
        root / "tests" / f"test_labs_{name}.py") if path.exists()]
    stems = [p.stem for p in inventory.notebook_paths(root / "content")]
    taken += [f"content/{s}.ipynb" for s in stems if s.split("_", 1)[-1] == name]
    if taken:
        raise SystemExit(f"{name!r} is taken: {', '.join(taken)} already exist(s); choose another name.")
    numbers = [int(s[:2]) for s in stems if s[:2].isdigit()]
    number = f"{max(numbers, default=-1) + 1:02d}"
    return {"name": name, "hyphen": name.replace("_", "-"), "number": number, "stem": f"{number}_{name}",
            "Camel": "".join(part.capitalize() for part in name.split("_")),
            "title": title or name.replace("_", " ").capitalize(), "exercise_cell": EXERCISE_CELL}


def _cell(kind: str, source: str, key: str, **metadata) -> dict:
    cell = {"cell_type": kind, "id": hashlib.sha256(key.encode()).hexdigest()[:8],
            "metadata": metadata, "source": source.splitlines(True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def notebook(words: dict, root: Path) -> dict:
    """The new notebook: the kernel and language of the course's first notebook (Pyodide's kernel,
    named "python", when there is none yet)."""
    paths = inventory.notebook_paths(root / "content")
    like = json.loads(paths[0].read_text(encoding="utf-8"))["metadata"] if paths else {
        "kernelspec": {"display_name": "Python (Pyodide)", "language": "python", "name": "python"}}
    w = words
    sources = [
        ("markdown", f"# {w['number']} {w['title']}\n\nWhat this notebook shows, in one paragraph: the "
                     "landing page lists the notebook with its heading and this paragraph.", {}),
        ("code", SETUP_CELL, {"tags": ["setup"]}),
        ("markdown", "## Centring a row\n\nMove every number by the same amount with the slider. Their "
                     "mean moves with them; the numbers minus their mean stay where they are.", {}),
        ("code", f"from labs.{w['name']} import {w['name']}_lab\n\n{w['name']}_lab()", {}),
        ("markdown", "## Exercise: centre each row\n\nWrite `centre(x)`: each row of `x` (its last "
                     "axis) minus the row's own mean, the same shape as `x`. The check starts with "
                     "the example `centre(np.array([[1.0, 2.0, 6.0], [5.0, 4.0, 9.0]]))`, then "
                     "tries rows of one number, a batch of arrays and float32 numbers.", {}),
        ("code", EXERCISE_CELL.rstrip("\n"), {"tags": ["exercise"], "course": {"exercise": f"{w['hyphen']}-centre"}}),
        ("code", f'check("{w["hyphen"]}-centre")', {"tags": ["check"], "jupyter": {"source_hidden": True}}),
        ("markdown", "## References\n\n- S. Ioffe, C. Szegedy. *Batch Normalization: Accelerating Deep "
                     "Network Training by Reducing\n  Internal Covariate Shift.* ICML 2015.\n- J. L. Ba, "
                     "J. R. Kiros, G. E. Hinton. *Layer Normalization.* arXiv:1607.06450, 2016.", {}),
        ("markdown", "## You can now\n\n- centre each row of an array, its mean kept as a column with "
                     "`keepdims` (`centre`).", {}),
    ]
    cells = [_cell(kind, source, f"{w['stem']}:{i}", **meta) for i, (kind, source, meta) in enumerate(sources)]
    metadata = {"course": {"definitions": w["name"]}, "kernelspec": like["kernelspec"]}
    if "language_info" in like:
        metadata["language_info"] = like["language_info"]
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def files(words: dict, root: Path) -> dict:
    """{path: text} of the new files."""
    def fill(template: str) -> str:
        return Template((TEMPLATES / template).read_text(encoding="utf-8")).substitute(words)

    name = words["name"]
    return {
        root / "content" / f"{words['stem']}.ipynb": json.dumps(notebook(words, root), indent=1,
                                                                ensure_ascii=False) + "\n",
        root / "exercises" / "definitions" / f"{name}.py": fill("definitions.py.tmpl"),
        root / "labs" / name / "__init__.py": fill("lab_package.py.tmpl"),
        root / "labs" / name / f"{name}.py": fill("lab.py.tmpl"),
        root / "tests" / f"test_labs_{name}.py": fill("test_labs.py.tmpl"),
        root / "tests" / "data" / "answers" / f"{words['stem']}.toml": fill("answers.toml.tmpl"),
    }


def create(name: str, title: str | None = None, root: Path = ROOT) -> list[Path]:
    """Write the new notebook's files into the repository at ``root``; return their paths."""
    written = files(names(name, title, root), root)
    for path, text in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(written)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="./course new", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the notebook's name, lower case (attention, layer_norms)")
    parser.add_argument("--title", help="its heading, after the number (default: the name, capitalised)")
    args = parser.parse_args(argv)
    try:
        paths = create(args.name, args.title)
    except SystemExit as refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 1
    print("Wrote:\n" + "\n".join(f"  {p.relative_to(ROOT)}" for p in paths))
    print("Next: rewrite each file for the notebook's subject (docs/authors.md says how), "
          "then ./course test.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
