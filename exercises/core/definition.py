"""What an exercise and a question are: the data types each notebook's definitions module builds
(:mod:`exercises.definitions`), and the blanks ``____`` of an exercise cell.

An :class:`Exercise` holds everything about one fill-in-the-blank exercise (its cell, solution,
hints, reference, cases and known mistakes); a :class:`Question` one question answered in a
widget. :func:`fill_blanks` turns a template and its fills into the code of the cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence


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

    ``retired`` marks an exercise a newer release replaced: its check still works for notebooks
    saved from earlier releases (``get_exercise`` finds it), but it is no longer listed with the
    course's exercises (progress, review, the command line).
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
    retired: bool = False

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
