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


def table_layout_mistakes(angles: int, pairs: int, divided: bool = True) -> list[Mistake]:
    """The slips in the table's angles and its layout, for a template whose blank number
    ``angles`` builds the grid of angles from the speeds and blank ``pairs`` the sines and cosines
    (shared by the live exercise and the one it replaced, whose blanks are numbered otherwise).
    ``divided``: include the angles divided by the speeds (where the speeds are not the learner's
    own: else it gives the numbers of speeds with the sign of their exponent flipped)."""
    mistakes = [
        Mistake("halves", {pairs: "np.stack([np.sin(angles), np.cos(angles)], axis=1)"}, _HALVES),
        Mistake("swapped", {pairs: "np.stack([np.cos(angles), np.sin(angles)], axis=-1)"},
                "Sine and cosine are swapped: the even columns (0, 2, ...) hold the sine of the "
                "angle and the odd columns the cosine, so position 0 starts as [0, 1, 0, 1, ...]."),
        Mistake("sine twice", {pairs: "np.stack([np.sin(angles), np.sin(angles)], axis=-1)"},
                "Your odd columns repeat the sines of the even columns. Each pair holds the sine of "
                "its angle and then its cosine."),
        Mistake("stacked in front", {pairs: "np.stack([np.sin(angles), np.cos(angles)])"},
                "Your new axis comes first, so `reshape` reads every sine of every position before any cosine, "
                "and the rows get the wrong numbers. `reshape` reads the last axis fastest: stack along the "
                "last axis, so that each angle's sine and cosine sit side by side."),
        Mistake("pairs down the rows", {angles: "speeds[:, None] * np.arange(length)"},
                "Your angles have one row per pair and one column per position, the other way "
                "round: the reshape then deals them out to the wrong places. Positions go down the "
                "rows (a column of positions) and pairs across (a row of speeds)."),
        Mistake("no column", {angles: "np.arange(length) * speeds"},
                "Your angles are not a grid of every position with every speed: `*` pairs numbers "
                "along matching axes, and fails when their lengths differ. Make the positions a "
                "column, shape (length, 1), against the row of speeds."),
        Mistake("counted from 1", {angles: "np.arange(1, length + 1)[:, None] * speeds"},
                "Your first row is position 1's. The table starts at position 0, whose row is "
                "[0, 1, 0, 1, ...]: the positions are 0, 1, ..., length \u2212 1."),
    ]
    if divided:
        mistakes.insert(6, Mistake("divided", {angles: "np.arange(length)[:, None] / speeds"},
                                   "Your angles grow from pair to pair; they should shrink. The angle is the "
                                   "position times the pair's speed, and the speeds get smaller to the right."))
    return mistakes


TABLE_WITHOUT_LOOPS = ("Build every angle in one expression: the positions as a column against the row of "
                       "speeds give the whole (length, d_model/2) grid at once, and `np.sin` and `np.cos` "
                       "of that grid, side by side on a new last axis, give every pair's two numbers.")

POSITION_TABLE = Exercise(
    id="position-table", notebook=NOTEBOOK, title="The sinusoidal table, from its formula, without a loop",
    name="position_table",
    template='''def position_table(length, d_model):
    """The sinusoidal position table: one row per position, shape (length, d_model).
    Columns 2i and 2i + 1 hold the sine and the cosine of the position times pair i's speed."""
    speeds = ____       # pair i's speed, radians per position, for i = 0, 1, ..., d_model/2 - 1
    angles = ____       # every position times every speed, shape (length, d_model/2)
    pairs = ____        # the sine and the cosine of every angle, laid out for the reshape below
    return pairs.reshape(length, d_model)
''',
    solution=["10000.0 ** (-np.arange(0, d_model, 2) / d_model)", "np.arange(length)[:, None] * speeds",
              "np.stack([np.sin(angles), np.cos(angles)], axis=-1)"],
    reference=_sinusoidal,
    contract=TABLE_CONTRACT,
    fixed=_table_fixed,
    draw=three_of(_table_case),
    hints=[
        "Read the speed off the formula: PE[pos, 2i] is the sine of pos / 10000^(2i/d_model), so pair i "
        "turns at 10000^(\u22122i/d_model) radians per position. The exponent holds 2i, the column of "
        "the pair's sine: 0, 2, 4, ..., d_model \u2212 2.",
        "Row p, column i of the angles is position p times speeds[i]: every position with every "
        "speed. A product of a column with a row gives such a grid at once, because NumPy stretches "
        "each along the axis where it has length 1.",
        "`reshape` reads an array's numbers in order, the last axis fastest. For a row to read sine, "
        "cosine, sine, cosine, ..., the sine and the cosine of one angle must sit next to each "
        "other on the last axis: `pairs` has shape (length, d_model/2, 2).",
    ],
    mistakes=[
        Mistake("i for 2i", {0: "10000.0 ** (-np.arange(d_model // 2) / d_model)"},
                "Your speeds fall too slowly from pair to pair: the exponent of pair i is 2i/d_model, "
                "and `np.arange(d_model // 2)` counts i, not 2i. The last pair should turn at "
                "10000^(\u2212(d_model \u2212 2)/d_model)."),
        Mistake("growing angles", {0: "10000.0 ** (np.arange(0, d_model, 2) / d_model)"},
                "Your angles grow from pair to pair; they should shrink. The angle is the position times "
                "the pair's speed, 10000 to the power \u22122i/d_model radians per position, less for "
                "every later pair: the exponent is negative."),
        Mistake("odd exponents", {0: "10000.0 ** (-np.arange(1, d_model, 2) / d_model)"},
                "Your exponents are the odd numbers 1, 3, 5, ... over d_model, so even pair 0 turns "
                "slower than one radian per position. Pair i's exponent is 2i/d_model, counted 0, 2, 4, ..."),
        Mistake("turns for radians", {0: "10000.0 ** (-np.arange(0, d_model, 2) / d_model) * 2 * np.pi"},
                "Your speeds are 2\u03c0 times too large. The formula's angle, pos / 10000^(2i/d_model), is in "
                "radians already: nothing turns it from turns into radians."),
        Mistake("over d_model - 2", {0: "10000.0 ** (-np.arange(0, d_model, 2) / (d_model - 2))"},
                "Your exponent divides by d_model \u2212 2, so your last pair turns at exactly 1/10000 radians "
                "per position (and d_model = 2 divides by 0). The formula divides 2i by d_model."),
        Mistake("over the length", {0: "10000.0 ** (-np.arange(0, d_model, 2) / length)"},
                "Your exponent divides by the length of the text. The speeds do not depend on the text: "
                "the formula divides 2i by d_model, the width."),
        Mistake("logarithms", {0: "-np.arange(0, d_model, 2) / d_model * np.log(10000.0)"},
                "Your speeds are the logarithms of the speeds (negative numbers): the speed is the "
                "exponential of that, 10000^(\u22122i/d_model). Use `**`, or `np.exp` of what you wrote."),
        Mistake("exponent without brackets", {0: "10000.0 ** -np.arange(0, d_model, 2) / d_model"},
                "`**` binds tighter than `/`: `10000.0 ** -a / d_model` raises 10000 to the power \u2212a "
                "and only then divides by d_model. The whole exponent, \u22122i/d_model, needs brackets."),
        *table_layout_mistakes(angles=1, pairs=2, divided=False),
    ],
    without_loops=TABLE_WITHOUT_LOOPS,
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
        Mistake("sine of the table", {1: "np.sin(row[0::2])", 2: "np.cos(row[1::2])"},
                "The table already holds the sines and the cosines, not the angles: `np.sin` and "
                "`np.cos` of its numbers give something else. Take them from the row as they are."),
        Mistake("halves of the row", {1: "row[:half]", 2: "row[half:]"},
                "The table does not keep its sines in its first half: it alternates, the sine of "
                "pair i in column 2i and its cosine in column 2i + 1. Take every other number."),
    ],
)


# ---------------------------------------------------------------- scores at every signed distance

def _scores_by_distance(query, key, max_distance, start=3):
    """The reference: the scaled score with the query t positions after the key (t < 0: before
    it), for t = -max_distance, ..., max_distance. The key stands at ``start`` + max_distance, so
    that both positions are at least ``start`` (the score depends on t only)."""
    n = int(max_distance)
    key_at = start + n
    scores = [_rope(query, offset=key_at + t) @ _rope(key, offset=key_at) for t in range(-n, n + 1)]
    return np.array(scores, dtype=float).reshape(-1) / np.sqrt(len(query))


ROPE_DISTANCE_CONTRACT = Contract(
    args={"query": "one query vector of floats, shape (d,), d even and >= 2",
          "key": "one key vector of the same size, shape (d,)",
          "max_distance": "a whole number >= 0 (a Python int or a NumPy integer)"},
    returns="the scaled scores at distances -max_distance, ..., max_distance, shape (2 max_distance + 1,)",
    ndims=(1,), dtypes=("float64", "float32"),
    edges={"distance 0": "max_distance = 0: a single score, where nothing turns",
           "one pair": "d = 2, a single pair",
           "far": "distances in the hundreds, where even the slowest pairs have turned",
           "wide": "a head of 64 numbers",
           "numpy int": "max_distance as a NumPy integer (as shapes and np.arange give it)"},
)


def distance_fixed() -> list[Case]:
    """The fixed cases of the distance exercises (this one and the one it replaced)."""
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


def distance_case(rng) -> Case:
    d, n = 2 * int(rng.integers(1, 33)), int(rng.integers(1, 60))
    return Case((rng.normal(0.0, 1.0, d), rng.normal(0.0, 1.0, d), n),
                f"random query and key of {d} numbers, distances up to {n}")


ROPE_SIGNED_DISTANCE = Exercise(
    id="rope-signed-distance", notebook=NOTEBOOK, title="Every distance at once, before and after",
    name="scores_by_distance",
    template='''def scores_by_distance(query, key, max_distance):
    """The scaled score q.k / sqrt(d) of `query` against `key` with rotary positions, at every
    distance t = (the query's position) - (the key's), for t = -max_distance, ..., max_distance.
    Returns 2 * max_distance + 1 scores, in that order. No loop is needed."""
    rows = max_distance + 1
    turned_q = rope(np.tile(query, (rows, 1)))    # row p: the query turned for position p
    turned_k = rope(np.tile(key, (rows, 1)))      # row p: the key turned for position p
    after = ____      # t = 0, 1, ..., max_distance: the query t positions after the key
    before = ____     # t = -max_distance, ..., -1: the query -t positions before the key
    return np.concatenate([before, after]) / np.sqrt(len(query))
''',
    solution=["turned_q @ turned_k[0]", "(turned_k[1:] @ turned_q[0])[::-1]"],
    reference=_scores_by_distance,
    contract=ROPE_DISTANCE_CONTRACT,
    fixed=distance_fixed,
    draw=three_of(distance_case),
    context="import numpy as np\nfrom engine.core.blank import ____\nfrom lib.positional import rope\n",
    hints=[
        "Only the distance t counts, so for each sign of t put one of the two vectors where a turn "
        "changes nothing, at position 0, and take the other from the rows turned for positions 0, 1, 2, ...",
        "For t >= 0 the query stands t positions after the key: the key at 0, the query turned for t. "
        "For t < 0 the key is the later one: the query at 0, the key turned for \u2212t.",
        "A matrix product of turned rows with one vector gives one dot product per row, in the order of "
        "the rows: for t < 0 that is t = \u22121, \u22122, ..., while the result lists t from "
        "\u2212max_distance upwards. `[::-1]` reverses an array.",
    ],
    mistakes=[
        Mistake("mirrored", {1: "(turned_q[1:] @ turned_k[0])[::-1]"},
                "Your scores at t < 0 repeat those at \u2212t: you turned the query again, which "
                "puts it after the key. The score depends on the distance with its sign. For t < 0 the "
                "query stands before the key: keep the query at position 0 and turn the key."),
        Mistake("not reversed", {1: "turned_k[1:] @ turned_q[0]"},
                "Your scores before the key run t = \u22121, \u22122, ..., \u2212max_distance; the "
                "result lists them from t = \u2212max_distance up to \u22121. Reverse them."),
        Mistake("sides swapped", {0: "turned_k @ turned_q[0]", 1: "(turned_q[1:] @ turned_k[0])[::-1]"},
                "Your scores at t and \u2212t are swapped: for t > 0 the query stands after the key, "
                "so the query is the one turned, with the key at position 0; for t < 0 the other way round."),
        Mistake("distance 0 twice", {1: "(turned_k @ turned_q[0])[::-1]"},
                "Your result has one score too many: distance 0 comes twice, once in `before` and once "
                "in `after`. `before` holds t = \u2212max_distance, ..., \u22121 only."),
        Mistake("key one position on", {0: "turned_q @ turned_k[1]"},
                "Your scores from t = 0 on are one position off: with the key turned for position 1, "
                "the query at p is p \u2212 1 after it. Keep the key at position 0, where nothing turns."),
        Mistake("sign flipped", {1: "-(turned_q[1:] @ turned_k[0])[::-1]"},
                "Your scores before the key are those after it with their sign flipped. The other sign "
                "of the distance turns the pair by the opposite angle, which does not flip the score. "
                "For t < 0 keep the query at position 0 and turn the key."),
        Mistake("after reversed", {0: "turned_q[::-1] @ turned_k[0]"},
                "Your scores after the key run from t = max_distance down to 0; the result lists them "
                "from t = 0 up to max_distance, the order of the turned rows."),
        Mistake("query one position on", {1: "(turned_k[1:] @ turned_q[1])[::-1]"},
                "Your scores before the key are one position off: with the query turned for position 1, "
                "the key at p is only p \u2212 1 after it. Keep the query at position 0, where nothing turns."),
        Mistake("scaled twice before", {1: "(turned_k[1:] @ turned_q[0])[::-1] / np.sqrt(len(query))"},
                "Your scores before the key are divided by the square root of the head size twice: the "
                "last line already divides every score."),
        Mistake("scaled twice", {0: "turned_q @ turned_k[0] / np.sqrt(len(query))"},
                "Your scores from t = 0 on are divided by the square root of the head size twice: the "
                "last line already divides every score."),
        Mistake("nothing turned", {0: "np.tile(query, (rows, 1)) @ key",
                                   1: "(np.tile(key, (rows, 1))[1:] @ query)[::-1]"},
                "Every score equals the one at distance 0: in each of your scores the query and the key "
                "stand at the same position (neither turned, or both turned for the same position, as "
                "on the diagonal of `turned_q @ turned_k.T`). Keep one of them at position 0 and take "
                "the other from the turned rows."),
    ],
)

DEFINITIONS = [POSITION_TABLE, ROPE_ROTATION, ROPE_SIGNED_DISTANCE, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
