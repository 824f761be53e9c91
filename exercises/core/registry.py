"""Definitions of exercises and questions, and the course-wide registry.

Each notebook has one module in this package (``start.py`` for 00, ...) that
builds its :class:`Exercise` and question objects and passes them to
:func:`register`. :data:`NOTEBOOKS` lists every notebook of the course with the
module that holds its definitions, so the progress view and the tests know all
exercises even before a notebook is opened.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

BLANK_TOKEN = "____"

# (notebook file stem, title, module with its exercise definitions)
NOTEBOOKS: list[tuple[str, str, str]] = [
    ("00_start_here", "Start here", "exercises.definitions.start"),
    ("01_positional_encoding", "Positional encoding: attention cannot see order",
     "exercises.definitions.positional"),
    ("02_feed_forward", "The feed-forward network: each position on its own",
     "exercises.definitions.ffn"),
    ("03_norms_and_residuals",
     "Normalisation and residual connections: keeping deep stacks stable",
     "exercises.definitions.norms"),
    ("04_decoder_block", "The decoder block and the stack", "exercises.definitions.decoder"),
    ("05_trained_model", "Inside a trained model", "exercises.definitions.trained"),
]


@dataclass
class Case:
    """One input for a function exercise.

    ``args`` are passed to the learner's function and the reference alike.
    ``visible`` marks the example the notebook shows: only for it does the
    feedback print expected numbers. ``label`` says in words what the case is
    ("a constant row", "one token"), for the feedback on hidden cases.
    """

    args: tuple
    label: str = ""
    visible: bool = False
    kwargs: dict = field(default_factory=dict)


@dataclass
class Mistake:
    """A known wrong answer and the hint that matches it.

    ``impl`` computes what the mistaken code would return for the same
    arguments; when the learner's result matches it, ``hint`` is shown.
    ``error`` is a regular expression matched against the message of an
    exception the learner's code raised (e.g. ``"broadcast"``).
    """

    name: str
    hint: str
    impl: Callable | None = None
    error: str | None = None


@dataclass
class Variant:
    """A filled-in version of an exercise cell, used by the tests.

    ``fills`` maps blank number (0-based) to source text; blanks not named
    keep their solution. ``source`` replaces the whole cell instead.
    ``expect`` holds words the feedback must contain (case-insensitive) and
    ``kind`` the feedback kind (``"values"``, ``"shape"``, ...).
    """

    fills: dict[int, str] | Sequence[str] = field(default_factory=dict)
    expect: Sequence[str] = ()
    kind: str | None = None
    source: str | None = None


@dataclass
class Exercise:
    """One fill-in-the-blank exercise: the single source of its solution, hints and check.

    ``template`` is the exercise cell's source exactly as the notebook ships it,
    with blanks written ``____``; ``solution`` holds one fill per blank, in
    order. ``name`` is the function or variable the check looks up in the
    learner's namespace. For ``kind="function"``, ``reference`` is the
    correct function and ``cases(rng)`` returns the inputs (fixed ones, then
    fresh random ones drawn with ``rng``). For ``kind="value"``, ``expected()``
    returns the correct value.
    """

    id: str
    notebook: str
    title: str
    template: str
    solution: Sequence[str]
    name: str
    hints: Sequence[str]
    kind: str = "function"
    reference: Callable | None = None
    cases: Callable[[Any], list[Case]] | None = None
    expected: Callable[[], Any] | None = None
    mistakes: Sequence[Mistake] = ()
    wrong: Sequence[Variant] = ()
    alternatives: Sequence[Variant] = ()
    rtol: float = 1e-6
    atol: float = 1e-8
    context: str = "import numpy as np\nfrom exercises.core.blank import ____\n"
    skills: str = ""

    def __post_init__(self) -> None:
        n = count_blanks(self.template)
        if n != len(self.solution):
            raise ValueError(
                f"exercise {self.id!r}: {n} blanks in the template but "
                f"{len(self.solution)} solution fills"
            )
        if self.kind not in ("function", "value"):
            raise ValueError(f"exercise {self.id!r}: unknown kind {self.kind!r}")

    @property
    def solution_source(self) -> str:
        return fill_blanks(self.template, self.solution)

    def variant_source(self, variant: Variant) -> str:
        if variant.source is not None:
            return variant.source
        fills = list(self.solution)
        items = variant.fills.items() if isinstance(variant.fills, dict) else enumerate(variant.fills)
        for i, text in items:
            fills[i] = text
        return fill_blanks(self.template, fills)


@dataclass
class Question:
    """A question answered in a widget.

    ``kind`` is ``"predict"`` (multiple choice: ``choices`` and the index of the
    right one in ``answer``), ``"number"`` (``answer`` a float, within ``tol``
    absolute or ``rtol`` relative) or ``"shape"`` (``answer`` a tuple of ints).
    ``explanation`` appears once an answer is locked in.
    """

    id: str
    notebook: str
    kind: str
    prompt: str
    answer: Any
    explanation: str = ""
    choices: Sequence[str] = ()
    tol: float = 0.0
    rtol: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("predict", "number", "shape"):
            raise ValueError(f"question {self.id!r}: unknown kind {self.kind!r}")
        if self.kind == "predict" and not (0 <= int(self.answer) < len(self.choices)):
            raise ValueError(f"question {self.id!r}: answer index out of range")
        if self.kind == "shape":
            self.answer = tuple(int(n) for n in self.answer)


_BLANK_RE = re.compile(r"(?<![A-Za-z0-9_])____(?![A-Za-z0-9_])")


def count_blanks(source: str) -> int:
    return len(_BLANK_RE.findall(source))


def fill_blanks(source: str, fills: Sequence[str]) -> str:
    """Replace the blanks of ``source`` in order with ``fills``."""
    parts = _BLANK_RE.split(source)
    if len(parts) - 1 != len(fills):
        raise ValueError(f"{len(parts) - 1} blanks but {len(fills)} fills")
    out = [parts[0]]
    for text, rest in zip(fills, parts[1:]):
        out.append(str(text))
        out.append(rest)
    return "".join(out)


_EXERCISES: dict[str, Exercise] = {}
_QUESTIONS: dict[str, Question] = {}
_LOADED = False


def register(*items: Exercise | Question) -> None:
    """Add exercises or questions to the registry (ids unique across the course)."""
    for item in items:
        table = _EXERCISES if isinstance(item, Exercise) else _QUESTIONS
        other = _QUESTIONS if table is _EXERCISES else _EXERCISES
        old = table.get(item.id)
        if (old is not None and old is not item and old.notebook != item.notebook) or item.id in other:
            raise ValueError(f"id {item.id!r} is already used")
        table[item.id] = item


def load_all() -> None:
    """Import every notebook's definitions module that exists."""
    global _LOADED
    if _LOADED:
        return
    for _stem, _title, module in NOTEBOOKS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    _LOADED = True


def get_exercise(ex_id: str) -> Exercise:
    if ex_id not in _EXERCISES:
        load_all()
    try:
        return _EXERCISES[ex_id]
    except KeyError:
        raise KeyError(f"no exercise with id {ex_id!r}") from None


def get_question(q_id: str) -> Question:
    if q_id not in _QUESTIONS:
        load_all()
    try:
        return _QUESTIONS[q_id]
    except KeyError:
        raise KeyError(f"no question with id {q_id!r}") from None


def all_exercises() -> list[Exercise]:
    """Every exercise of the course, in notebook order."""
    load_all()
    order = {stem: i for i, (stem, _t, _m) in enumerate(NOTEBOOKS)}
    return sorted(_EXERCISES.values(), key=lambda e: order.get(e.notebook, len(order)))


def all_questions() -> list[Question]:
    load_all()
    order = {stem: i for i, (stem, _t, _m) in enumerate(NOTEBOOKS)}
    return sorted(_QUESTIONS.values(), key=lambda q: order.get(q.notebook, len(order)))


def exercises_by_notebook() -> list[tuple[str, str, list[Exercise]]]:
    """``(stem, title, exercises)`` for every notebook, empty lists included."""
    exercises = all_exercises()
    return [(stem, title, [e for e in exercises if e.notebook == stem])
            for stem, title, _m in NOTEBOOKS]
