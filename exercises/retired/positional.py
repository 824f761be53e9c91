"""Retired exercises of notebook 01, "Positional encoding: where each word stands": scale-then-add
(replaced by rope-distance), sinusoidal-table (by position-table, which also asks for the pairs'
speeds) and rope-distance (by rope-signed-distance, which asks for the distances before the key
too). Kept so that notebooks saved from earlier releases still check them (see
:mod:`exercises.retired`); what they share with the live exercises is imported from
:mod:`exercises.definitions.positional`."""

from __future__ import annotations

import numpy as np

from lib.positional import add_positions as _add_positions, rope as _rope, sinusoidal as _sinusoidal

from engine.core.definition import Case, Exercise, Mistake, in_float32, three_of
from exercises.definitions.positional import (NOTEBOOK, TABLE_WITHOUT_LOOPS, _table_case, _table_fixed,
                                              distance_case, distance_fixed, table_layout_mistakes)


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


# ---------------------------------------------------------------- the sinusoidal table, its speeds given

SINUSOIDAL_TABLE = Exercise(
    id="sinusoidal-table", notebook=NOTEBOOK, title="The sinusoidal table, without a loop", name="position_table",
    template='''def position_table(length, d_model):
    """The sinusoidal position table: one row per position, shape (length, d_model).
    Columns 2i and 2i + 1 hold the sine and the cosine of the position times pair i's speed."""
    speeds = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)   # one per pair, shape (d_model/2,)
    angles = ____       # every position times every speed, shape (length, d_model/2)
    pairs = ____        # the sine and the cosine of every angle, laid out for the reshape below
    return pairs.reshape(length, d_model)
''',
    solution=["np.arange(length)[:, None] * speeds", "np.stack([np.sin(angles), np.cos(angles)], axis=-1)"],
    reference=_sinusoidal,
    fixed=_table_fixed,
    draw=three_of(_table_case),
    hints=[
        "Row p, column k of the angles is position p times speeds[k]: every position with every "
        "speed. A product of a column with a row gives such a grid at once, because NumPy stretches "
        "each along the axis where it has length 1.",
        "`reshape` reads an array's numbers in order, the last axis fastest. For a row to read sine, "
        "cosine, sine, cosine, ..., the sine and the cosine of one angle must sit next to each "
        "other on the last axis: `pairs` has shape (length, d_model/2, 2).",
        "`np.arange(length)[:, None]` is the positions as a column. `np.stack([u, v], axis=...)` puts two "
        "arrays of the same shape side by side along a new axis; axis=-1 makes it the last one.",
    ],
    mistakes=table_layout_mistakes(angles=0, pairs=1),
    without_loops=TABLE_WITHOUT_LOOPS,
    retired=True,      # replaced by position-table; kept so that saved notebooks still check it
)


# ---------------------------------------------------------------- scores at distances 0 to max_distance

def _scores_after(query, key, max_distance, start=3):
    """The reference: the key at position ``start``, the query t positions after it, for t = 0,
    1, ..., max_distance (the score depends on the distance only, so the key may stand anywhere)."""
    scores = [_rope(query, offset=start + t) @ _rope(key, offset=start) for t in range(int(max_distance) + 1)]
    return np.array(scores, dtype=float).reshape(-1) / np.sqrt(len(query))


ROPE_DISTANCE = Exercise(
    id="rope-distance", notebook=NOTEBOOK, title="Every distance at once", name="scores_by_distance",
    template='''def scores_by_distance(query, key, max_distance):
    """The scaled score q.k / sqrt(d) of `query` against `key` with rotary positions, when the
    query stands t positions after the key, for t = 0, 1, ..., max_distance.
    Returns max_distance + 1 scores. Use `rope` (from lib.positional); no loop is needed."""
    turned = ____     # row t: the query turned for position t, shape (max_distance + 1, d)
    return ____       # one scaled score per row
''',
    solution=["rope(np.tile(query, (max_distance + 1, 1)))", "turned @ key / np.sqrt(len(key))"],
    reference=_scores_after,
    fixed=distance_fixed,
    draw=three_of(distance_case),
    context="import numpy as np\nfrom engine.core.blank import ____\nfrom lib.positional import rope\n",
    hints=[
        "The score depends only on how far apart the two positions are, so you may put the key "
        "wherever it is simplest. At which position does a turn change nothing?",
        "`rope` turns row i of a (length, d) array for position i, so an array whose rows are all "
        "copies of the query comes back turned for positions 0, 1, 2, ... `np.tile(v, (n, 1))` "
        "stacks n copies of a vector v as rows.",
        "With the key at position 0 it stays as it is. A matrix product of the turned rows with "
        "the key gives one dot product per row; divide by the square root of the head size.",
    ],
    mistakes=[
        Mistake("key after the query", {0: "rope(np.tile(key, (max_distance + 1, 1)))",
                                        1: "turned @ query / np.sqrt(len(key))"},
                "You turned the key and left the query still: that puts the key t positions "
                "after the query, the other direction. Turn the query; keep the key at position 0."),
        Mistake("nothing turned", {0: "np.tile(query, (max_distance + 1, 1))"},
                "Every score equals the one at distance 0: either nothing was turned, or the query "
                "and the key were turned by the same angle. Turn the query's copies for positions "
                "0, 1, 2, ... and keep the key at position 0."),
        Mistake("not scaled", {1: "turned @ key"},
                "These are the raw dot products. The scaled score divides each by the square root "
                "of the head size, len(query)."),
        Mistake("divided by d", {1: "turned @ key / len(key)"},
                "You divided by the head size itself. The scaled score divides by its square root, "
                "as attention does."),
        Mistake("neighbours", {0: "rope(np.tile(query, (max_distance + 1, 1)), pairing='neighbours')"},
                "Your numbers are paired as neighbours (2i with 2i + 1). The course pairs halves, "
                "number i with number i + d/2, which is `rope`'s default."),
        Mistake("one distance short", {0: "rope(np.tile(query, (max_distance, 1)))"},
                "Your result has one score too few. Distances 0, 1, ..., max_distance are "
                "max_distance + 1 of them, so that many copies of the query are turned."),
        Mistake("only the last distance", {0: "rope(query, offset=max_distance)"},
                "You got a single score, the one at distance max_distance: `rope` turns a single "
                "vector for one position only. Turn a stack of copies of the query, one row per "
                "distance; `rope` turns row t for position t."),
    ],
    retired=True,      # replaced by rope-signed-distance; kept so that saved notebooks still check it
)


DEFINITIONS = [EMBED, SINUSOIDAL_TABLE, ROPE_DISTANCE]
