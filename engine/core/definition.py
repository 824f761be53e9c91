"""What an exercise and a question are: the data types each notebook's definitions module builds
(in the course's definitions package), and the blanks ``____`` of an exercise cell.

An :class:`Exercise` holds everything about one fill-in-the-blank exercise (its cell, solution,
hints, reference, the :class:`Contract` its function is promised, its cases and known
mistakes); a :class:`Question` one question answered in a widget. :func:`fill_blanks` turns a
template and its fills into the code of the cell.

Another version of the cell (a known mistake's, or a learner's answer in the tests) is written
as its *code*: a dict ``{blank number: text}`` (0-based; the blanks it does not name keep their
solution), or the whole source of the cell as a string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .cell import run_cell


@dataclass
class Case:
    """One input for a function exercise.

    ``args`` are passed to the learner's function and the reference alike.
    ``visible`` marks the example the notebook shows: only for it does the
    feedback print expected numbers. ``label`` says in words what the case is
    ("a constant row", "one token"), for the feedback on hidden cases; a label
    starting with "random" marks a case drawn afresh for each answer.
    ``covers`` names the edges of the exercise's :class:`Contract` the case
    reaches. ``rtol`` and ``atol``, when given, replace the exercise's
    tolerances for this case (a float32 case is compared more loosely).
    """

    args: tuple
    label: str = ""
    visible: bool = False
    kwargs: dict = field(default_factory=dict)
    covers: tuple = ()
    rtol: float | None = None
    atol: float | None = None

    @property
    def random(self) -> bool:
        return self.label.startswith("random")


FLOAT32_RTOL, FLOAT32_ATOL = 1e-4, 1e-5


def three_of(case: Callable[[Any], Case]) -> Callable[[Any], list[Case]]:
    """A ``draw`` for an exercise: three random cases, each made by ``case(rng)`` in turn."""
    return lambda rng: [case(rng) for _ in range(3)]


def in_float32(case: Case, label: str | None = None) -> Case:
    """The same case with every float64 array argument turned into float32 (the number type
    many models compute in), compared to float32 precision."""
    import numpy as np   # here, not above: the progress view imports this module without NumPy

    args = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
                 for a in case.args)
    return Case(args, label or f"{case.label}, in float32", False, dict(case.kwargs),
                tuple(case.covers) + ("float32",), FLOAT32_RTOL, FLOAT32_ATOL)


@dataclass(frozen=True)
class Contract:
    """What an exercise's function is promised, read from its docstring, and therefore what
    its fixed cases must reach (the tests check each point against the cases).

    ``args`` says in words what each argument is, in the order of the signature.
    ``ndims`` lists the numbers of axes the first argument may have (each must appear in a
    fixed case); ``dtypes`` the number types of the array arguments (each must appear).
    ``defaults`` are the signature's default arguments: some fixed case uses each default and
    another passes a different value. ``edges`` names, tag -> words, the edges of the promise a
    fixed case must reach (its ``covers`` holds the tag): extreme ranges, numbers around a
    default constant, one token, tiny probabilities. ``square`` names axes of the first
    argument that are equal by definition (the (L, L) grid of scores); every other axis of some
    fixed case differs in length from all the others, so no axis mistake can hide.
    """

    args: Mapping[str, str]
    returns: str
    ndims: Sequence[int] = ()
    dtypes: Sequence[str] = ("float64",)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    edges: Mapping[str, str] = field(default_factory=dict)
    square: tuple = ()


def signature_contract(function: Callable) -> Contract:
    """The part of a contract a function's signature states: its arguments, by name, and their
    default values (what a retired exercise keeps; the promise in words is the live one's)."""
    import inspect

    parameters = inspect.signature(function).parameters.values()
    return Contract(args={p.name: "" for p in parameters}, returns="",
                    defaults={p.name: p.default for p in parameters if p.default is not p.empty})


Code = Mapping[int, str] | str     # fills by blank number, or the cell's whole source


class Hint(str):
    """A hint of an exercise's ladder, declared to be about one thing a check can see the code do
    right (``about``: ``"shape"``, the shape of the result: which axis to reduce, ``keepdims``).
    A failed check whose results had the right shape on every fixed case does not show it by
    itself (:func:`engine.core.hints.hint_after_miss`); the hint button still does. It is the
    hint's text everywhere else. A plain string is a hint about nothing in particular: it is never
    passed over, whatever words it uses."""

    about: str

    def __new__(cls, text: str, about: str = "") -> "Hint":
        hint = super().__new__(cls, text)
        hint.about = about
        return hint


@dataclass
class Mistake:
    """A known wrong answer, declared once: the mistaken code and the hint that matches it.

    ``code`` is the cell as the mistaken learner wrote it: the fills that differ from the
    solution, ``{blank number: text}``, or the whole source when the mistake is not in the
    blanks. The checker runs that code once as the exercise cell (:meth:`Exercise.mistaken`)
    and calls what it defines on every fixed case; only when the learner's function behaves
    alike on all of them (the same numbers, or both raising) is ``hint`` shown, so a hint names
    a cause the code showed, not a guess from the first error it happened to raise. The tests
    run the same code as a learner's answer and require the check to reject it with this hint.
    """

    name: str
    code: Code
    hint: str


@dataclass
class Exercise:
    """One fill-in-the-blank exercise: the single source of its solution, hints and check.

    ``template`` is the exercise cell's source exactly as the notebook ships it,
    with blanks written ``____``; ``solution`` holds one fill per blank, in
    order. ``name`` is the function or variable the check looks up in the
    learner's namespace. For ``kind="function"``, ``reference`` is the
    correct function, ``contract`` what it is promised, ``fixed()`` returns
    the fixed cases (the example first) and ``draw(rng)`` fresh random ones.
    For ``kind="value"``, ``expected()`` returns the correct value. ``mistakes`` are the known
    wrong answers, each with its hint.

    ``retired`` marks an exercise a newer release replaced, defined in the course's retired package: its
    check still works for notebooks saved from earlier releases (``get_exercise`` finds it), but it
    is no longer listed with the course's exercises (progress, review, the command line). A retired
    exercise may leave out its ``contract``: the check then reads the arguments' names and defaults
    from the reference's signature (:func:`signature_contract`), all the diagnosis of a wrong answer
    uses.

    ``without_loops``, for an exercise whose statement asks for no Python loop ("the sinusoidal
    table, without a loop"), is the hint on how to do without one: code that gives the right
    numbers with a ``for`` or ``while`` loop or a comprehension is then not passed; its feedback
    says the numbers are right and the condition is not met (``checker``, kind "condition").
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
    fixed: Callable[[], list[Case]] | None = None
    draw: Callable[[Any], list[Case]] | None = None
    contract: Contract | None = None
    expected: Callable[[], Any] | None = None
    mistakes: Sequence[Mistake] = ()
    rtol: float = 1e-6
    atol: float = 1e-8
    context: str = "import numpy as np\nfrom engine.core.blank import ____\n"
    retired: bool = False
    without_loops: str = ""      # the exercise asks for no Python loop: how to do without one

    def __post_init__(self) -> None:
        n = count_blanks(self.template)
        if n != len(self.solution):
            raise ValueError(
                f"exercise {self.id!r}: {n} blanks in the template but "
                f"{len(self.solution)} solution fills"
            )
        if self.kind not in ("function", "value"):
            raise ValueError(f"exercise {self.id!r}: unknown kind {self.kind!r}")
        names = [m.name for m in self.mistakes]
        if len(set(names)) != len(names):
            raise ValueError(f"exercise {self.id!r}: two mistakes share a name")
        for mistake in self.mistakes:
            if self.variant_source(mistake.code) == self.solution_source:
                raise ValueError(f"exercise {self.id!r}: mistake {mistake.name!r} is the solution")
        if self.retired and self.contract is None and self.reference is not None:
            self.contract = signature_contract(self.reference)
        self._fixed: list[Case] | None = None
        self._mistaken: dict[int, Any] = {}

    def fixed_cases(self) -> list[Case]:
        """The fixed cases, built once: their arrays are made read-only, as nothing may change
        them (the checker hands the learner's function copies)."""
        if self._fixed is None:
            import numpy as np   # only exercises with cases need it

            cases = list(self.fixed()) if self.fixed else []
            for case in cases:
                for value in (*case.args, *case.kwargs.values()):
                    if isinstance(value, np.ndarray):
                        value.flags.writeable = False
            self._fixed = cases
        return self._fixed

    def cases(self, rng) -> list[Case]:
        """The fixed cases, then the random ones drawn with ``rng``."""
        return self.fixed_cases() + (list(self.draw(rng)) if self.draw else [])

    @property
    def solution_source(self) -> str:
        return fill_blanks(self.template, self.solution)

    def variant_source(self, code: Code) -> str:
        """The cell's source for ``code``: the template filled with those fills (the other blanks
        with their solution), or ``code`` itself when it is a whole source."""
        if isinstance(code, str):
            return code
        fills = list(self.solution)
        for i, text in code.items():
            if not 0 <= int(i) < len(fills):
                raise ValueError(f"exercise {self.id!r} has no blank number {i}")
            fills[int(i)] = text
        return fill_blanks(self.template, fills)

    def mistaken(self, number: int):
        """What mistake ``number``'s code defines when it runs as the exercise cell (after the
        context): the mistaken function, or value. Run once, then kept. Raises what the code
        raises."""
        if number not in self._mistaken:
            source = self.variant_source(self.mistakes[number].code)
            self._mistaken[number] = run_cell(source, self.context, f"{self.id} mistake {number}")[self.name]
        return self._mistaken[number]


@dataclass
class Question:
    """A question answered in a widget.

    ``kind`` is ``"predict"`` (multiple choice: ``choices`` and the index of the
    right one in ``answer``), ``"number"`` (``answer`` a float, within ``tol``
    absolute or ``rtol`` relative) or ``"shape"`` (``answer`` a tuple of ints).
    ``explanation`` appears once an answer is locked in.

    ``reveals`` says what would give the answer away if a learner read it above the question:
    regular expressions (case ignored, any run of spaces and line breaks read as one space) for
    the words that state the right choice's claim, or the reasoning that yields the number.
    ``tests/test_answers_in_sight.py`` looks for them, and for a number or shape answer in its
    printed forms, in everything the notebook shows above the question; each predict question
    needs at least one, and each must match where the course does give the answer (the
    explanation, the right choice or the notebook below the question).
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
    reveals: Sequence[str] = ()

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
