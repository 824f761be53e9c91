"""Retired exercises of notebook 01, "Positional encoding: where each word stands": scale-then-add
(replaced by rope-distance). Kept so that notebooks saved from earlier releases still check them
(see :mod:`exercises.retired`); what they share with the live exercises is imported from
:mod:`exercises.definitions.positional`."""

from __future__ import annotations

import numpy as np

from lib.positional import add_positions as _add_positions, sinusoidal as _sinusoidal

from engine.core.definition import Case, Exercise, Mistake, in_float32, three_of
from exercises.definitions.positional import NOTEBOOK


# ---------------------------------------------------------------- scale, then add

def _embed_reference(words, table):
    return _add_positions(words, table)


def _embed_fixed() -> list[Case]:
    table4, table8 = _sinusoidal(16, 4), _sinusoidal(16, 8)
    example = np.array([[-0.77, -0.62, 0.91, -0.28],
                        [0.12, 0.5, -0.3, 0.8],
                        [0.4, -0.1, 0.2, 0.05]])
    fixed = np.random.default_rng(101)
    return [
        Case((example, table4), "the example", visible=True),
        Case((np.array([[0.35, -0.15, 0.6, 0.45]]), table4), "a text of one word"),
        Case((np.zeros((4, 8)), table8), "words that are all zero"),
        Case((np.round(fixed.normal(0, 0.3, (16, 8)), 2), table8), "a text as long as the table"),
        Case((np.round(fixed.normal(0, 0.1, (5, 64)), 3), _sinusoidal(16, 64)), "d_model = 64"),
        Case((np.round(fixed.normal(0, 0.4, (2, 3, 8)), 2), table8), "a batch of 2 texts"),
        Case((np.round(fixed.normal(0, 0.5, (6, 6)), 2), _sinusoidal(12, 6)),
             "a text of 6 words at d_model = 6"),
        in_float32(Case((np.round(fixed.normal(0, 0.5, (3, 10)), 2), _sinusoidal(8, 10)), "float32 words")),
    ]


def _embed_case(rng) -> Case:
    length, d_model = int(rng.integers(1, 17)), 2 * int(rng.integers(1, 17))
    return Case((rng.normal(0.0, 0.5, (length, d_model)), _sinusoidal(16, d_model)),
                f"random words, {length} of {d_model} numbers")


EMBED = Exercise(
    id="scale-then-add", notebook=NOTEBOOK, title="Scale the words, then add the positions", name="embed",
    template='''def embed(words, table):
    """The model's input: the words times sqrt(d_model), plus one position row per word.
    words: (length, d_model), in the order of the text; table: (max_length, d_model)."""
    length, d_model = words.shape[-2:]
    return ____ * words + ____
''',
    solution=["np.sqrt(d_model)", "table[:length]"],
    reference=_embed_reference,
    fixed=_embed_fixed,
    draw=three_of(_embed_case),
    hints=[
        "Two steps: make the words stronger by a factor that depends on the width, then add "
        "the position rows. For d_model = 4 the factor is 2.",
        "The table was built once for the longest text. A text of `length` words uses its "
        "rows 0, 1, ..., length \u2212 1, in order: a slice of the first rows.",
    ],
    mistakes=[
        Mistake("no scale", {0: "1"},
                "The words are added as they are. Multiply them by the square root of d_model "
                "first, so the word is not drowned by its position."),
        Mistake("d_model", {0: "d_model"},
                "You multiplied by d_model itself; the factor is its square root."),
        Mistake("scaled positions", {0: "1", 1: "np.sqrt(d_model) * table[:length]"},
                "You scaled the positions instead of the words. The factor multiplies the words; "
                "the position rows are added as they are."),
        Mistake("one row", {1: "table[length]"},
                "`table[length]` is a single row (the position just after the text), added to "
                "every word. Each word needs its own row: the first `length` rows."),
        Mistake("row 0", {1: "table[0]"},
                "Every word got the row of position 0. Each word needs the row of its own "
                "position: the first `length` rows of the table."),
        Mistake("whole table", {1: "table"},
                "The table has one row per position up to the longest text, more rows than "
                "this text has words. Take only as many rows as there are words."),
        Mistake("length from the wrong axis", {1: "table[:d_model]"},
                "Your code works when the text has exactly d_model words, and fails otherwise: the number of "
                "rows you take from the table comes from the words' last axis, which counts the numbers per "
                "word (d_model). The text's length is the number of rows of `words`, its second-to-last axis."),
    ],
    retired=True,      # replaced by rope-distance; kept so that saved notebooks still check it
)


DEFINITIONS = [EMBED]
