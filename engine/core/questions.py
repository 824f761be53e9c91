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
        return ok, ("Right." if ok else f"{exact(value)} is not it yet.")
    shape = parse_shape(answer) if isinstance(answer, str) else tuple(int(n) for n in answer)
    ok = shape == tuple(question.answer)
    if ok:
        return True, "Right."
    if len(shape) != len(question.answer):
        return False, (f"{shape} has {plural(len(shape), 'axis', 'axes')}; the answer has "
                       f"{len(question.answer)}.")
    return False, f"{shape} has the right number of axes, but not the right sizes."
