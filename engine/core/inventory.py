"""The course's inventory: its notebooks in order and, in each, the labs it shows, the exercises
it checks and the questions it asks, all read from the notebooks themselves.

A notebook says what it is in its own cells and metadata, and nowhere else:

- its **title** is its first heading, less the number in front (``# 01 Positional encoding``);
- its **definitions** (exercises and questions) are the module of the course's definitions
  package its metadata names: ``"metadata": {"course": {"definitions": "positional"}}`` is
  ``exercises.definitions.positional``;
- its **labs** are the ``*_lab`` functions its code cells import from a package of the course's
  labs and call (``from labs.positional import shuffle_lab`` then ``shuffle_lab()``);
- its **exercises** are its cells tagged ``exercise`` (``metadata.course.exercise``), its
  **questions** the ids its ``ask("...")`` calls name, and it has a **skip-ahead set** when a
  cell calls ``skip_ahead("<its stem>")``.

Every list of the course is derived from this one: the registry's notebooks, the notebooks nbval
runs, the labs the lab tests, benchmarks and browser tests drive, the landing page. In a checkout
the inventory is read from the course's notebooks (``content/``); in the browser, where the
course wheel holds no notebooks, from the index the site build writes into the wheel
(``inventory.json`` in the course's release folder, see :mod:`engine.core.course` and
``tools/release.py``). Plain Python (json, ast): the progress view loads it in a bare Pyodide too.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from .course import Course, current

INDEX = "inventory.json"            # in the course's release folder, written by the site build


@dataclass(frozen=True)
class Notebook:
    """One notebook of the course, as its cells and metadata describe it."""
    path: str                      # relative to content/, "01_positional_encoding.ipynb"
    heading: str                   # its first heading, "01 Positional encoding: where each word stands"
    summary: str                   # the paragraph after it, in plain text
    definitions: str | None        # "exercises.definitions.positional", or None
    labs: tuple[str, ...] = ()     # "labs.positional.shuffle_lab", in the order it first calls them
    exercises: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    skip_ahead: bool = False

    @property
    def stem(self) -> str:
        """The notebook's id: its file name without ``.ipynb``, "01_positional_encoding"."""
        return self.path.rsplit("/", 1)[-1].removesuffix(".ipynb")

    @property
    def title(self) -> str:
        """The heading without the number in front: "Positional encoding: where each word stands"."""
        return re.sub(r"^\d+\s+", "", self.heading)


# ---------------------------------------------------------------- reading one notebook

def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _plain(markdown: str) -> str:
    """Markdown inline text as plain text: links, emphasis and code marks removed."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|`)", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    return " ".join(text.split())


def _heading(cells: list, fallback: str) -> tuple[str, str]:
    """(first heading, the paragraph after it) of the first markdown cell with text."""
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        blocks = [b.strip() for b in re.split(r"\n\s*\n", _source(cell)) if b.strip()]
        if not blocks:
            continue
        heading = _plain(blocks[0].lstrip("#")) if blocks[0].startswith("#") else fallback
        rest = [b for b in blocks[1:] if not b.startswith("#")]
        return heading, _plain(rest[0]) if rest else ""
    return fallback, ""


def _calls(tree: ast.AST, name: str) -> list[str]:
    """The string first arguments of every call of ``name(...)`` in the tree."""
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def _code_trees(cells: list):
    """The parsed code cells (a cell Python cannot read, an IPython magic, is skipped)."""
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        try:
            yield ast.parse(_source(cell))
        except SyntaxError:
            continue


def read_notebook(notebook: dict, path: str, course: Course | None = None) -> Notebook:
    """The inventory entry of one notebook (parsed JSON) at ``path`` (relative to content/) of
    ``course`` (by default the course this Python runs)."""
    course = course or current()
    cells = [c for c in notebook.get("cells", []) if isinstance(c, dict)]
    stem = path.rsplit("/", 1)[-1].removesuffix(".ipynb")
    heading, summary = _heading(cells, stem.replace("_", " "))
    definitions = ((notebook.get("metadata") or {}).get("course") or {}).get("definitions")
    imported, labs, questions, skip = {}, [], [], False
    for tree in _code_trees(cells):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(course.labs + "."):
                for alias in node.names:
                    if alias.name.endswith("_lab"):
                        imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported:
                lab = imported[node.func.id]
                if lab not in labs:
                    labs.append(lab)
        questions += [q for q in dict.fromkeys(_calls(tree, "ask")) if q not in questions]
        skip = skip or stem in _calls(tree, "skip_ahead")
    exercises = [c.get("metadata", {}).get("course", {}).get("exercise") for c in cells
                 if c.get("cell_type") == "code" and "exercise" in c.get("metadata", {}).get("tags", [])]
    return Notebook(path=path, heading=heading, summary=summary,
                    definitions=f"{course.definitions}.{definitions}" if definitions else None,
                    labs=tuple(labs), exercises=tuple(e for e in exercises if e),
                    questions=tuple(questions), skip_ahead=skip)


# ---------------------------------------------------------------- the whole course

def notebook_paths(content) -> list[Path]:
    """Every notebook under ``content``, checkpoints left out, in order of their paths."""
    content = Path(content)
    return sorted(p for p in content.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def scan(content, course: Course | None = None) -> list[Notebook]:
    """The inventory of the notebooks in the folder ``content`` of ``course`` (by default the
    course this Python runs), in order of their paths."""
    content = Path(content)
    found = []
    for path in notebook_paths(content):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{path} cannot be read as a notebook ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} is not a notebook (JSON that is not an object)")
        found.append(read_notebook(data, path.relative_to(content).as_posix(), course))
    stems = [nb.stem for nb in found]
    repeated = sorted({s for s in stems if stems.count(s) > 1})
    if repeated:
        raise ValueError(f"two notebooks share the name {repeated[0]!r} in {content}: a notebook's "
                         "file name is its id, so each must be unique")
    return found


def to_json(notebooks: list[Notebook]) -> str:
    """The index the site build ships: every notebook's entry, in order."""
    return json.dumps([asdict(nb) for nb in notebooks], indent=1, ensure_ascii=False) + "\n"


def from_json(text: str) -> list[Notebook]:
    return [Notebook(**{k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()})
            for entry in json.loads(text)]


@lru_cache(maxsize=1)
def notebooks() -> tuple[Notebook, ...]:
    """The course's notebooks: from the site build's index in the course wheel, else (in a
    checkout) from its notebooks (``content/``)."""
    course = current()
    index = course.release / INDEX
    if index.is_file():
        return tuple(from_json(index.read_text(encoding="utf-8")))
    if course.content.is_dir():
        return tuple(scan(course.content))
    raise FileNotFoundError(f"The course's notebooks cannot be listed: there is no {index} (written "
                            f"into the course wheel by the site build) and no {course.content} (a checkout).")


def notebook(stem: str) -> Notebook:
    """The notebook whose stem is ``stem``."""
    for nb in notebooks():
        if nb.stem == stem:
            return nb
    raise KeyError(f"no notebook {stem!r} in the course")


def labs() -> list[str]:
    """Every lab the notebooks call, in course order: "labs.positional.shuffle_lab"."""
    return [lab for nb in notebooks() for lab in nb.labs]


def lab_packages() -> list[str]:
    """The lab packages the notebooks call labs from, in course order: "positional" (of "labs")."""
    found, prefix = [], current().labs + "."
    for lab in labs():
        package = lab.removeprefix(prefix).split(".")[0]
        if package not in found:
            found.append(package)
    return found
