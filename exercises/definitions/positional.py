"""Exercises of notebook 01, "Positional encoding: where each word stands".

Its questions are in :mod:`exercises.definitions.questions.positional`."""

from __future__ import annotations

import numpy as np

from lib.positional import rope as _rope
from lib.positional import sinusoidal as _sinusoidal

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.questions import positional as questions

NOTEBOOK = "01_positional_encoding"


# ---------------------------------------------------------------- the sinusoidal table

TABLE_CONTRACT = Contract(
    args={"length": "a whole number >= 1 (a Python int or a NumPy integer): the positions",
          "d_model": "an even whole number >= 2: the numbers per position"},
    returns="the table, shape (length, d_model), of floats",
    dtypes=(),
    edges={"one position": "a single position",
           "one pair": "d_model = 2, a single pair of columns",
           "long": "positions in the hundreds, where even the slow pairs turn visibly",
           "wide": "d_model in the hundreds, whose last pairs turn ten thousand times slower",
           "numpy ints": "sizes given as NumPy integers (as np.arange and shapes give them)",
           "non-square": "length differs from d_model and from d_model / 2"},
)


def _table_fixed() -> list[Case]:
    return [
        Case((3, 4), "the example", visible=True),
        Case((1, 2), "one position, d_model = 2", covers=("one position", "one pair")),
        Case((16, 2), "d_model = 2, one pair only", covers=("one pair",)),
        Case((10, 8), "10 tokens at d_model = 8", covers=("non-square",)),
        Case((5, 64), "a wide table, d_model = 64"),
        Case((40, 6), "a long text"),
        Case((300, 10), "300 positions", covers=("long",)),
        Case((7, 512), "d_model = 512", covers=("wide",)),
        Case((np.int32(9), np.int32(12)), "sizes given as NumPy integers", covers=("numpy ints",)),
    ]


def _table_case(rng) -> Case:
    length, d_model = int(rng.integers(1, 30)), 2 * int(rng.integers(1, 21))
    return Case((length, d_model), f"random sizes, {length} positions, d_model = {d_model}")


_HALVES = ("Each of your rows holds all its sines, then all its cosines. In this table they alternate: the "
           "sine and the cosine of one pair sit side by side (columns 2i and 2i + 1). `reshape` reads the last "
           "axis fastest, so the axis that holds a pair's sine and cosine must be the last one.")

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
    contract=TABLE_CONTRACT,
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
    mistakes=[
        Mistake("halves", {1: "np.stack([np.sin(angles), np.cos(angles)], axis=1)"}, _HALVES),
        Mistake("swapped", {1: "np.stack([np.cos(angles), np.sin(angles)], axis=-1)"},
                "Sine and cosine are swapped: the even columns (0, 2, ...) hold the sine of the "
                "angle and the odd columns the cosine, so position 0 starts as [0, 1, 0, 1, ...]."),
        Mistake("sine twice", {1: "np.stack([np.sin(angles), np.sin(angles)], axis=-1)"},
                "Your odd columns repeat the sines of the even columns. Each pair holds the sine of "
                "its angle and then its cosine."),
        Mistake("stacked in front", {1: "np.stack([np.sin(angles), np.cos(angles)])"},
                "Your new axis comes first, so `reshape` reads every sine of every position before any cosine, "
                "and the rows get the wrong numbers. `reshape` reads the last axis fastest: stack along the "
                "last axis, so that each angle's sine and cosine sit side by side."),
        Mistake("pairs down the rows", {0: "speeds[:, None] * np.arange(length)"},
                "Your angles have one row per pair and one column per position, the other way "
                "round: the reshape then deals them out to the wrong places. Positions go down the "
                "rows (a column of positions) and pairs across (a row of speeds)."),
        Mistake("no column", {0: "np.arange(length) * speeds"},
                "Your angles are not a grid of every position with every speed: `*` pairs numbers "
                "along matching axes, and fails when their lengths differ. Make the positions a "
                "column, shape (length, 1), against the row of speeds."),
        Mistake("divided", {0: "np.arange(length)[:, None] / speeds"},
                "Your angles grow from pair to pair; they should shrink. The angle is the position "
                "times the pair's speed, and the speeds get smaller to the right."),
        Mistake("counted from 1", {0: "np.arange(1, length + 1)[:, None] * speeds"},
                "Your first row is position 1's. The table starts at position 0, whose row is "
                "[0, 1, 0, 1, ...]: the positions are 0, 1, ..., length \u2212 1."),
    ],
    without_loops=("Build every angle in one expression: the positions as a column against the row of "
                   "speeds give the whole (length, d_model/2) grid at once, and `np.sin` and `np.cos` "
                   "of that grid, side by side on a new last axis, give every pair's two numbers."),
)


# ---------------------------------------------------------------- one RoPE rotation

def _rope_reference(x, position, base=10000.0):
    return _rope(x, base, "halves", offset=position)


ROPE_CONTRACT = Contract(
    args={"x": "one vector of floats, shape (d,), d even and >= 2",
          "position": "a whole number >= 0 (a Python int or a NumPy integer)",
          "base": "a positive number, 10000.0 unless given"},
    returns="the turned vector, shape (d,)",
    ndims=(1,), dtypes=("float64", "float32"),
    defaults={"base": 10000.0},
    edges={"position 0": "position 0, where nothing turns",
           "far": "a far position (1000), where the slow pairs have turned too",
           "one pair": "d = 2, a single pair",
           "wide": "a head of 32 numbers or more",
           "numpy int": "the position as a NumPy integer"},
)


def _rope_fixed() -> list[Case]:
    query = np.random.default_rng(2026).normal(0, 1, 32)
    return [
        Case((np.array([1.0, 2.0, 3.0, 4.0]), 2), "the example", visible=True),
        Case((np.array([0.3, -1.2, 0.8, 2.5, -0.4, 1.1]), 0), "position 0: nothing turns",
             covers=("position 0",)),
        Case((np.array([0.6, -0.9]), 3), "d = 2, a single pair", covers=("one pair",)),
        Case((query, 5), "head size 32 at position 5", covers=("wide",)),
        Case((np.array([1.5, -0.5, 0.25, 2.0, 0.75, -1.25]), 1000), "a far position, 1000",
             covers=("far",)),
        Case((np.array([0.7, 0.1, -0.3, 0.9, 1.2, -0.6, 0.4, 0.2]), 7), "base 100",
             kwargs={"base": 100.0}),
        Case((np.array([0.5, -1.5, 2.5, 1.0, -2.0, 0.75]), 1), "position 1"),
        Case((np.array([2.0, -1.0, 0.5, 1.5]), np.int32(37)), "the position as a NumPy integer",
             covers=("numpy int",)),
        in_float32(Case((np.array([0.25, 1.5, -0.75, 0.5, -2.0, 1.0, 0.125, -0.5]), 11),
                        "float32 numbers at position 11")),
    ]


def _rope_case(rng) -> Case:
    d, position = 2 * int(rng.integers(1, 17)), int(rng.integers(0, 200))
    return Case((rng.normal(0.0, 1.0, d), position),
                f"random vector of {d} numbers at position {position}")


_WIDTH = ("Your table has the wrong width. A table of width d_model has d_model/2 pairs, and its "
          "pair i turns at base^(\u22122i/d_model); RoPE's pair i turns at base^(\u2212i/(d/2)). "
          "Compare the two exponents: they are the same speeds only when d_model is d, len(x).")

ROPE_ROTATION = Exercise(
    id="rope-rotation", notebook=NOTEBOOK, title="Rotary positions for one vector, from the table", name="rope_one",
    template='''def rope_one(x, position, base=10000.0):
    """Rotary positions for one vector x of even length d at `position`.
    Pair i is (x[i], x[i + d/2]); it turns by position * base ** (-i / (d/2)) radians.
    Its cosine and sine are read from a row of the sinusoidal table, not computed here."""
    half = len(x) // 2
    row = ____                    # a row of sinusoidal(length, d_model, base): which table, which row?
    sin, cos = ____, ____         # the sine and the cosine of each pair's angle, `half` of each
    a, b = x[:half], x[half:]     # first and second number of every pair
    return np.concatenate([a * cos - b * sin, a * sin + b * cos])
''',
    solution=["sinusoidal(position + 1, len(x), base)[position]", "row[0::2]", "row[1::2]"],
    reference=_rope_reference,
    contract=ROPE_CONTRACT,
    fixed=_rope_fixed,
    draw=three_of(_rope_case),
    context="import numpy as np\nfrom engine.core.blank import ____\nfrom lib.positional import sinusoidal\n",
    hints=[
        "Row p of a sinusoidal table holds the sine and the cosine of p times each of its pairs' "
        "speeds, and a table of width d_model has d_model/2 pairs turning at base^(\u22122i/d_model). "
        "RoPE's pair i turns at base^(\u2212i/(d/2)). For which width are those the same speeds?",
        "The exponents match when d_model is d = len(x): then the table has one pair for each pair of x. The "
        "row of position p is row p, so the table needs p + 1 rows at least, and the same `base` as the turn.",
        "In the table the even columns (0, 2, 4, ...) hold the sines and the odd columns the "
        "cosines: every other number of the row, starting at 0 or at 1.",
    ],
    mistakes=[
        Mistake("half as wide", {0: "sinusoidal(position + 1, half, base)[position]"}, _WIDTH),
        Mistake("twice as wide", {0: "sinusoidal(position + 1, 2 * len(x), base)[position]"}, _WIDTH),
        Mistake("base ignored", {0: "sinusoidal(position + 1, len(x))[position]"},
                "Your result is right for the usual base 10000 but not for another `base`: pass "
                "the argument `base` on to the table."),
        Mistake("one position late", {0: "sinusoidal(position + 2, len(x), base)[position + 1]"},
                "Your vector turned as if it stood one position later. Row p of the table holds "
                "the angles of position p, counting from row 0."),
        Mistake("row 0", {0: "sinusoidal(position + 1, len(x), base)[0]"},
                "Nothing turned: row 0 is position 0, whose angles are all 0. Take the row of `position`."),
        Mistake("swapped", {1: "row[1::2]", 2: "row[0::2]"},
                "Sine and cosine are swapped: in the table the even columns hold the sines and "
                "the odd columns the cosines."),
        Mistake("sine twice", {2: "row[0::2]"},
                "Your cosines are the sines again: the even columns hold the sines, the odd "
                "columns (1, 3, 5, ...) the cosines."),
        Mistake("wrong way", {1: "-row[0::2]"},
                "Your pairs turn the wrong way (clockwise): the sines went in with their sign "
                "flipped. The last line already has the signs of a turn by the angle; take the "
                "sines as the table holds them."),
        Mistake("halves of the row", {1: "row[:half]", 2: "row[half:]"},
                "The table does not keep its sines in its first half: it alternates, the sine of "
                "pair i in column 2i and its cosine in column 2i + 1. Take every other number."),
    ],
)


# ---------------------------------------------------------------- scores by distance

def _scores_by_distance(query, key, max_distance, start=3):
    """The reference: the key at position ``start``, the query t positions after it (the score
    depends on the distance only, so the key may stand anywhere)."""
    scores = [_rope(query, offset=start + t) @ _rope(key, offset=start) for t in range(int(max_distance) + 1)]
    return np.array(scores, dtype=float).reshape(-1) / np.sqrt(len(query))


ROPE_DISTANCE_CONTRACT = Contract(
    args={"query": "one query vector of floats, shape (d,), d even and >= 2",
          "key": "one key vector of the same size, shape (d,)",
          "max_distance": "a whole number >= 0 (a Python int or a NumPy integer)"},
    returns="the scaled scores at distances 0, 1, ..., max_distance, shape (max_distance + 1,)",
    ndims=(1,), dtypes=("float64", "float32"),
    edges={"distance 0": "max_distance = 0: a single score, where nothing turns",
           "one pair": "d = 2, a single pair",
           "far": "distances in the hundreds, where even the slowest pairs have turned",
           "wide": "a head of 64 numbers",
           "numpy int": "max_distance as a NumPy integer (as shapes and np.arange give it)"},
)


def _distance_fixed() -> list[Case]:
    lab = np.random.default_rng(2026)
    query, key = lab.normal(0, 1, 32), lab.normal(0, 1, 32)       # the lab's query, then its key
    fixed = np.random.default_rng(303)
    return [
        Case((query, key, 6), "the example", visible=True),
        Case((np.array([0.8, -0.6]), np.array([0.5, 1.2]), 8), "d = 2, a single pair", covers=("one pair",)),
        Case((np.array([0.5, -1.0, 2.0, 0.25]), np.array([1.5, 0.5, -0.5, 1.0]), 0),
             "distance 0 only", covers=("distance 0",)),
        Case((fixed.normal(0, 1, 8), fixed.normal(0, 1, 8), 300), "distances up to 300", covers=("far",)),
        Case((fixed.normal(0, 1, 64), fixed.normal(0, 1, 64), 12), "head size 64", covers=("wide",)),
        Case((fixed.normal(0, 1, 6), fixed.normal(0, 1, 6), np.int32(9)),
             "the largest distance as a NumPy integer", covers=("numpy int",)),
        in_float32(Case((fixed.normal(0, 1, 10), fixed.normal(0, 1, 10), 15), "float32 query and key")),
    ]


def _distance_case(rng) -> Case:
    d, n = 2 * int(rng.integers(1, 33)), int(rng.integers(1, 60))
    return Case((rng.normal(0.0, 1.0, d), rng.normal(0.0, 1.0, d), n),
                f"random query and key of {d} numbers, distances up to {n}")


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
    reference=_scores_by_distance,
    contract=ROPE_DISTANCE_CONTRACT,
    fixed=_distance_fixed,
    draw=three_of(_distance_case),
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
)

DEFINITIONS = [SINUSOIDAL_TABLE, ROPE_ROTATION, ROPE_DISTANCE, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
