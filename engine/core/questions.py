"""Grading of questions (predict, number, shape), without any widget."""

from __future__ import annotations

import math
import re

from engine.presentation.numbers import exact, plural
from engine.presentation.reading import read_number as parse_number   # numbers typed in an answer box

from .definition import Question

_SHAPE_RE = re.compile(r"^[\(\[]?\s*(\d+(?:\s*[,x×\s]\s*\d+)*)?\s*,?\s*[\)\]]?$")


def parse_shape(text: str) -> tuple[int, ...]:
    """Read a shape typed as "3,4", "(3, 4)", "3 4", "[3, 4]", "3x4" or "(5,)".

    Raises ``ValueError`` with a plain explanation when the text is not a shape.
    """
    t = str(text).strip()
    if not t:
        raise ValueError("Type a shape, for example 3, 4.")
    m = _SHAPE_RE.match(t)
    if not m:
        raise ValueError(f"{t!r} is not a shape: write whole numbers separated by commas, "
                         "for example 3, 4.")
    body = m.group(1) or ""
    return tuple(int(n) for n in re.split(r"[,x×\s]+", body) if n)


def grade(question: Question, answer) -> tuple[bool, str]:
    """(correct, message) for an answer; raises ``ValueError`` if it cannot be read."""
    if question.kind == "predict":
        index = int(answer)
        if not 0 <= index < len(question.choices):
            raise ValueError("Pick one of the choices.")
        ok = index == int(question.answer)
        return ok, ("Right." if ok else
                    f"Not quite: the answer is \u201c{question.choices[int(question.answer)]}\u201d.")
    if question.kind == "number":
        value = parse_number(answer) if isinstance(answer, str) else float(answer)
        target = float(question.answer)
        ok = math.isclose(value, target, rel_tol=question.rtol, abs_tol=question.tol)
        return ok, ("Right." if ok else f"{exact(value)} is not it yet{_how_far(value, target)}.")
    shape = parse_shape(answer) if isinstance(answer, str) else tuple(int(n) for n in answer)
    ok = shape == tuple(question.answer)
    if ok:
        return True, "Right."
    if len(shape) != len(question.answer):
        return False, (f"{shape} has {plural(len(shape), 'axis', 'axes')}; the answer has "
                       f"{len(question.answer)}.")
    if sorted(shape) == sorted(question.answer):
        if len(shape) == 2:
            return False, f"{shape} has the right sizes, but swapped: which axis comes first?"
        return False, f"{shape} has the right sizes, but in the wrong order: which axis comes where?"
    return False, f"{shape} has the right number of axes, but not the right sizes."


# How far a number is from the answer, in bands that do not give the answer away: the largest
# relative gap (a fraction of the answer) each phrase covers.
_NEAR = ((0.01, "within 1 %"), (0.1, "within 10 %"), (0.25, "within 25 %"))


def _how_far(value: float, target: float) -> str:
    """": close, within 1 % of the answer, but too small", ": too large, by a factor between 2
    and 10", ...: the direction and size of a wrong number's gap, or "" (the answer or it 0)."""
    if target == 0 or value == 0:
        return ""
    if (value < 0) != (target < 0):
        return ": its sign is not the answer's"
    gap = abs(value - target) / abs(target)
    side = "too large" if abs(value) > abs(target) else "too small"
    for limit, words in _NEAR:
        if gap <= limit:
            return f": close, {words} of the answer, but {side}"
    ratio = max(abs(value), abs(target)) / min(abs(value), abs(target))
    if ratio <= 2:
        return f": {side}, but within a factor of 2"
    if ratio <= 10:
        return f": {side}, by a factor between 2 and 10"
    return f": {side}, by more than a factor of 10"
