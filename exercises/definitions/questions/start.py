"""Questions of notebook 00, "Start here"."""

from __future__ import annotations

import numpy as np

from lib.attention import softmax

from engine.core.definition import Question

NOTEBOOK = "00_start_here"

SOFTMAX_SCORES = np.array([2.0, 1.0, 0.1])


def _two_decimals(values) -> str:
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


def _from_lowest(scores):
    """Each score minus the lowest, divided by the total of those: a rule that is not softmax."""
    shifted = scores - scores.min()
    return shifted / shifted.sum()


PREDICT_SOFTMAX = Question(
    id="start-predict-softmax",
    notebook=NOTEBOOK,
    kind="predict",
    prompt=f"Three words have the scores {[float(v) for v in SOFTMAX_SCORES]}. "
           "What does softmax make of them?",
    choices=[
        f"Each score over the scores' total: {_two_decimals(SOFTMAX_SCORES / SOFTMAX_SCORES.sum())}",
        f"Each score's exp over the exps' total: {_two_decimals(softmax(SOFTMAX_SCORES))}",
        f"Everything to the highest score: {_two_decimals(SOFTMAX_SCORES == SOFTMAX_SCORES.max())}",
        "Each score minus the lowest, over their total: "
        f"{_two_decimals(_from_lowest(SOFTMAX_SCORES))}",
    ],
    answer=1,
    explanation="Softmax takes exp of each score and divides by the total of those, so the weights "
                "add up to 1. "
                "exp turns a gap of one point into a factor of e: two weights' ratio is "
                "exp(score \u2212 other score), whatever the scores are, so adding the same "
                "number to every score changes nothing. Every word keeps some weight and "
                "the highest score gets the most: here about "
                + ", ".join(f"{w:.2f}" for w in softmax(SOFTMAX_SCORES)[:-1])
                + f" and {softmax(SOFTMAX_SCORES)[-1]:.2f}, the first "
                + f"{softmax(SOFTMAX_SCORES)[0] / softmax(SOFTMAX_SCORES)[1]:.2f} times the second. "
                "Dividing the raw scores by their total keeps their ratios instead (the first "
                + f"{SOFTMAX_SCORES[0] / SOFTMAX_SCORES[1]:g} times the second), which would "
                "break for negative scores; measuring from the lowest score gives that word no weight "
                "at all; and a hard pick is what softmax approaches only when the scores are far apart.",
    reveals=[
        r"\b(add|adds|adding) up to (1|one)\b",
        r"\bsum(s|ming)? to (1|one)\b",
        r"\bkeeps? some weight\b",
        r"\bgaps? between (the )?scores\b",
        r"\bratio is exp\b",
    ],
)

NUMBER_EQUAL = Question(
    id="start-number-equal-scores",
    notebook=NOTEBOOK,
    kind="number",
    prompt="Five scores are all equal. Which weight does softmax give each of them?",
    answer=0.2,
    tol=1e-3,
    explanation="Equal scores give equal exponentials, so each gets 1/5 = 0.2 whatever the "
                "common score is. The softmax you write below is checked on rows like that too.",
    reveals=[
        r"\bequal scores (give|get) equal\b",
        r"(?<![\d.])1\s*/\s*5(?![\d.])",
    ],
)

SHAPE_ROW_MEAN = Question(
    id="start-shape-row-mean",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="`x` has shape (4, 2, 3). Which shape does `row_mean(x)` give?",
    answer=(4, 2, 1),
    explanation="The last axis is averaged, and keepdims leaves it in place with length 1: "
                "(4, 2, 3) becomes (4, 2, 1), one average for each of the 4 x 2 rows.",
)

QUESTIONS = [PREDICT_SOFTMAX, NUMBER_EQUAL, SHAPE_ROW_MEAN]
