"""The answers the tests put through the exercise checks, and the way they run them.

An exercise's known mistakes are declared once, in its definition (``Exercise.mistakes``); the
tests run each as a learner's answer. Everything else they try lives here, under tests/, and
never ships: ``tests/data/answers/<notebook>.toml`` holds, per exercise, the words (and kind)
the feedback on some mistakes must also have (``mistakes``, by name), wrong answers beyond the
mistakes (``wrong``) and other correct formulations (``alternatives``). An answer's code is
written as a mistake's is: ``fills`` by blank number, or a whole ``source``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from engine.core.cell import run_cell
from engine.core.checker import Feedback, evaluate
from engine.core.definition import Code, Exercise

ANSWERS = Path(__file__).resolve().parent / "data" / "answers"


@dataclass(frozen=True)
class Answer:
    """One answer to an exercise: its code, the words its feedback must contain (any case) and
    the feedback's kind (None: any). ``mistake`` names the known mistake whose feedback the
    row describes (its code is then the mistake's own)."""

    exercise: str
    code: Code | None
    expect: tuple[str, ...] = ()
    kind: str | None = None
    mistake: str | None = None
    notebook: str = ""


def _code(row: dict) -> Code:
    if "source" in row:
        return row["source"]
    return {int(number): text for number, text in row["fills"].items()}


@cache
def _rows() -> dict[str, list[Answer]]:
    found = {"mistakes": [], "wrong": [], "alternatives": []}
    for path in sorted(ANSWERS.glob("*.toml")):
        for ex_id, table in tomllib.loads(path.read_text(encoding="utf-8")).items():
            for row in table.get("mistakes", []):
                found["mistakes"].append(Answer(ex_id, None, tuple(row["expect"]), row.get("kind"),
                                                row["name"], path.stem))
            for row in table.get("wrong", []):
                found["wrong"].append(Answer(ex_id, _code(row), tuple(row["expect"]), row.get("kind"),
                                             notebook=path.stem))
            for row in table.get("alternatives", []):
                found["alternatives"].append(Answer(ex_id, _code(row), notebook=path.stem))
    return found


def mistake_feedback() -> list[Answer]:
    """What the feedback on some known mistakes must contain, beyond their hint."""
    return list(_rows()["mistakes"])


def wrong_answers(ex_id: str | None = None) -> list[Answer]:
    """Wrong answers beyond the known mistakes (of one exercise, or of all)."""
    return [a for a in _rows()["wrong"] if ex_id in (None, a.exercise)]


def alternatives(ex_id: str | None = None) -> list[Answer]:
    """Other correct formulations (of one exercise, or of all)."""
    return [a for a in _rows()["alternatives"] if ex_id in (None, a.exercise)]


def try_variant(ex: Exercise, code: Code | None = None, rng=None) -> Feedback:
    """Run the exercise's cell with its solution, or with ``code`` (fills or a whole source),
    and check it."""
    source = ex.solution_source if code is None else ex.variant_source(code)
    return evaluate(ex, run_cell(source, ex.context, ex.id), rng=rng)


def try_template(ex: Exercise) -> Feedback:
    """Run the cell as shipped, blanks in place, and check it."""
    return evaluate(ex, run_cell(ex.template, ex.context, ex.id))


def checked_in_notebook(ex_id: str, code) -> str:
    """The feedback of the notebook's ``check`` (engine.notebook, as a learner's check cell calls
    it) on ``code``: fills by blank number, or a whole source."""
    from engine.core.registry import get_exercise
    from engine.notebook import check

    ex = get_exercise(ex_id)
    source = ex.variant_source(code) if isinstance(code, dict) else code
    return check(ex_id, run_cell(source, ex.context, ex.id)).feedback
