"""Questions of notebook 01, "Positional encoding: where each word stands"."""

from __future__ import annotations

import numpy as np

from lib.positional import sinusoidal

from engine.core.definition import Question

NOTEBOOK = "01_positional_encoding"


PREDICT_SHUFFLE = Question(
    id="pos-predict-shuffle",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Self-attention with no causal mask and no position information runs on \u201ccat dog car\u201d "
           "and then on \u201ccar dog cat\u201d. Is cat's output vector different the second time?",
    choices=[
        "Yes: cat moved from first to last, so its output changes",
        "No: it is exactly the same, only it appears in another row",
        "It changes a little, because cat now comes after the others",
        "It cannot be said without the weights",
    ],
    answer=1,
    explanation="Cat's query is scored against the same three keys, and the weighted average "
                "runs over the same three values: only their order in the sum differs, and a "
                "sum does not care about order. So cat's output is the same vector, in another "
                "row. This holds for any weights, which is why attention needs positions. With a "
                "causal mask it would change: cat, moved to the end, would then see the other words "
                "before it (the lab's causal mask toggle shows it).",
    reveals=[
        r"\bsame vector\b",
        r"\b(does not|doesn't) care about (the |word )?order\b",
        r"\b(ignores?|cannot see|can't see|is blind to) (the |word )?order\b",
        r"\btreats? (a text|its input) as a \*?(set|bag)\b",
    ],
)

NUMBER_PE01 = Question(
    id="pos-number-pe01",
    notebook=NOTEBOOK,
    kind="number",
    prompt="With d_model = 2, position `pos` gets the vector [sin(pos), cos(pos)]. "
           "How long is that vector at position 5?",
    answer=1.0,
    tol=1e-3,
    explanation="Its length is the square root of sin\u00b2(5) + cos\u00b2(5), and sin\u00b2 + cos\u00b2 = 1 "
                "for every angle: 1 at position 5, and at every other position. Each pair of the table "
                "is a point on a circle of radius 1; the cell below prints the lengths.",
    reveals=[
        r"\bsin\u00b2\s*(\(\w+\)\s*)?\+\s*cos\u00b2\s*(\(\w+\)\s*)?=\s*1\b",
        r"\bcircle of radius 1\b",
    ],
)

SHAPE_TEN_TOKENS = Question(
    id="pos-shape-ten-tokens",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="A text has 10 tokens and d_model = 8. What shape is its position table?",
    answer=(10, 8),
    explanation="One row per position and one column per number of the word vector, so it "
                "can be added to the (10, 8) word vectors element by element.",
)

NUMBER_LAST_SPEED = Question(
    id="pos-number-last-speed",
    notebook=NOTEBOOK,
    kind="number",
    prompt="With d_model = 4 there are two pairs. Pair 0 turns 1 radian per position. "
           "How many radians per position does the last pair turn? (A fraction like 1/3 is fine.)",
    answer=0.01,
    tol=1e-6,
    explanation="The last pair has 2i = d \u2212 2 = 2, so it turns at 10000^(\u22122/4), one "
                "over the square root of 10000, which is one hundredth of a radian per position.",
    reveals=[
        r"10,?000\s*\^\s*\(?\s*[−-]\s*2\s*/\s*4\b",
        r"(?<![\d.])1\s*/\s*100(?![\d.,])",
        r"\bone hundredth\b",
        r"(?<![\d.])0\.010*(?!\d) radians",
    ],
)

NUMBER_SCALE_64 = Question(
    id="pos-number-scale-64",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A model has d_model = 64 and draws its word rows with a spread of 1/\u221ad_model, so a "
           "word row is about 1 long. Before the position row is added, each word row is multiplied "
           "by \u221ad_model. About how long is a word row then?",
    answer=8.0,
    tol=0.1,
    explanation="Multiplying a vector by a number multiplies its length by that number: about "
                f"1 \u00d7 \u221a64 = 8, against {np.sqrt(64 / 2):.2f} for a position row, "
                "\u221a(d_model/2). The cell below draws such rows.",
    reveals=[
        r"(\u221a\s*|\bsqrt\s*\(\s*|\bsquare root of )64\s*\)?\s*(=|is)\s*8\b",
        r"\bsqrt\(d_model\)\s*=\s*8\b",
        r"\blength becomes about \u221ad_model\b",
    ],
)

PREDICT_SHIFT = Question(
    id="pos-predict-shift",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the sinusoidal table, pair i of row p is the point (sin p\u03c9\u1d62, cos p\u03c9\u1d62). Is "
           "there one matrix, the same for every row, that takes every row p to row p + k?",
    choices=[
        "Yes: it turns each pair i by k\u00b7\u03c9\u1d62, and it is built from k alone",
        "No: sine and cosine are not linear, so no matrix can move a row",
        "No: every row p needs a matrix of its own, built from p and k",
        "Yes: it adds k\u00b7\u03c9\u1d62 to both numbers of each pair i",
    ],
    answer=0,
    explanation="sin((p + k)\u03c9) = sin p\u03c9 cos k\u03c9 + cos p\u03c9 sin k\u03c9 and cos((p + k)\u03c9) = "
                "cos p\u03c9 cos k\u03c9 \u2212 sin p\u03c9 sin k\u03c9: the new pair is made from the old one "
                "with the numbers cos k\u03c9 and sin k\u03c9, which hold k but not p. Sine and cosine are not "
                "linear in p, but the new pair is linear in the old pair: a turn by k\u00b7\u03c9\u1d62, "
                "whatever p is, so one fixed matrix, built from k alone, moves every row k positions on. "
                "A matrix cannot add a constant. The cells below measure the turns and try the matrix.",
    reveals=[
        r"\bwhatever \*?p\*? is\b",
        r"\bnever on \*?p\b",
        r"\bbuilt from \*?k\*? alone\b",
        r"\bhold k but not p\b",
    ],
)

PREDICT_ADDED_SCORE = Question(
    id="pos-predict-added-score",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Positions are added to the words, and one head scores cat's query against dog's key, with "
           "dog 3 positions before cat: at positions 3 and 0, then at 103 and 100, then at 203 and 200. "
           "How do the three scores compare?",
    choices=[
        "Equal: a step along the table is one fixed turn, wherever it starts",
        "Different: the words' and the positions' numbers meet in the score",
        "Equal: the same two words at the same distance get one score",
        "Falling: the further into the text, the weaker every score",
    ],
    answer=1,
    explanation="The score of (x + p) against (y + q) splits into four terms: the words' own, two that pair "
                "one word with the other's position, and the positions' own. Only the first stays the same "
                "when the pair moves along the text; the cross terms pair cat and dog with absolute "
                "positions, and the head's weights can make even the positions' own term change. So the "
                "same two words at the same distance score differently. The cell below prints the four terms.",
    reveals=[
        r"\bsame two words at the same distance score differently\b",
        r"\bcross terms? pairs? (cat|a word|one word)\b",
        r"\bsplits into four terms\b",
    ],
)

PREDICT_ROPE = Question(
    id="pos-predict-rope",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="With rotary positions, one query and one key are scored twice: key at 2 and query "
           "at 5, then key at 12 and query at 15. How do the two scores compare?",
    choices=[
        "The second is larger: later positions turn further",
        "They are equal: both pairs are 3 positions apart",
        "The second is smaller: far from the start, the scores fade",
        "Nothing can be said: the angles are different",
    ],
    answer=1,
    explanation="Both vectors turn; what remains in their dot product is only the difference "
                "of the two turns, which depends only on the distance and not on where the pair "
                "sits. The cells below show why, in two lines, and the lab shows the two scores.",
    reveals=[
        r"\bdepends? only on the distance\b",
        r"\bdepends on the (two )?positions only through\b",
        r"\bdifference of the two turns\b",
        r"\bboth pairs are (three|3) positions apart\b",
    ],
)

PREDICT_SCALE = Question(
    id="pos-predict-scale",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="The words are multiplied by a factor before their position rows are added, and then "
           "the sentence is reordered. With a very large factor, what do attention's outputs do?",
    choices=[
        "Each word's output stays close to what it was, wherever the word goes: they follow the words",
        "The output at each place stays close to what it was, whatever word stands there: they "
        "follow the positions",
        "Nothing changes at all, whatever the factor",
        "They become random: the factor destroys the input",
    ],
    answer=0,
    explanation="A large factor makes the word most of the input, so the position row hardly "
                "counts and attention sees almost a bag of words again: each word's output moves "
                "little when the word moves, while the output at a fixed place changes with the "
                "word standing there. A small factor does the opposite. The lab and the cell after "
                "it show both.",
    reveals=[
        r"\b(mostly (the )?words?|makes? the words? most of the input"
        r"|(the )?words? (is|are|make up) most of the input)\b",
        r"\bfollows? the words\b",
    ],
)

QUESTIONS = [PREDICT_SHUFFLE, NUMBER_PE01, SHAPE_TEN_TOKENS, NUMBER_LAST_SPEED, NUMBER_SCALE_64,
             PREDICT_SCALE, PREDICT_SHIFT, PREDICT_ADDED_SCORE, PREDICT_ROPE]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("pos-out-pooled", NOTEBOOK, "predict",
             "A layer of self-attention with no causal mask and no position information reads \u201cdog "
             "bites man\u201d, then \u201cman bites dog\u201d. Each sentence is summed up as the average of "
             "the layer's output vectors. How do the two averages compare?",
             choices=["They are equal, whatever the layer's weights",
                      "They differ: a word's output depends on where it stands",
                      "They differ: the average weighs the first word most",
                      "They are equal only if every attention weight is equal"],
             answer=0,
             explanation="Without a mask or positions, each word's output is the same wherever the word "
                         "stands, only in another row, and an average ignores the order of its rows.",
             reveals=[r"\baverage ignores the order of its rows\b"]),
    Question("pos-out-table-cell", NOTEBOOK, "number",
             "A sinusoidal table has d_model = 6 (base 10,000). What is PE[10, 3], the number in row 10 "
             "(position 10), column 3? Two decimals are enough.",
             answer=float(sinusoidal(11, 6)[10, 3]), tol=0.005,
             explanation="Column 3 is the cosine of pair 1, which turns at 10000^(\u22122/6) radians per "
                         f"position: cos(10 \u00d7 {10000 ** (-2 / 6):.4f}) = {sinusoidal(11, 6)[10, 3]:.3f}."),
    Question("pos-out-word-share", NOTEBOOK, "number",
             "A model with d_model = 256 draws its word rows with a spread of 1/\u221ad_model, so each is "
             "about 1 long, and adds the sinusoidal rows to them with no factor. About what share of "
             "|w|\u00b2 + |p|\u00b2 is the word's? (A fraction or a percentage.)",
             answer=1 / (1 + 256 / 2), tol=0.0015,
             explanation="A sinusoidal row holds 128 pairs, each a point at distance 1 from 0: "
                         "|p|\u00b2 = 128, against |w|\u00b2 \u2248 1. The word's share is about 1/129, "
                         "under 1 %.",
             reveals=[r"\b1\s*/\s*129\b"]),
    Question("pos-out-rope-swap", NOTEBOOK, "predict",
             "With rotary positions and no causal mask, a query at position 7 and a key at position 3 "
             "score s. The same query and key are then put the other way round: the query at 3, the "
             "key at 7. The new score is\u2026",
             choices=["s again: the two are still 4 positions apart",
                      "not s in general: the key is now the later one",
                      "\u2212s: the turn between them goes the other way",
                      "larger than s: the query is now turned less far"],
             answer=1,
             explanation="The score is the query against the key turned by the difference of their "
                         "positions, with its sign: a turn by 4 steps one way is not a turn by 4 steps "
                         "the other way, and the score does not simply change sign either.",
             reveals=[r"\bwith its sign\b"]),
    Question("pos-out-rope-pairs", NOTEBOOK, "number",
             "A model has d_model = 512 and 8 attention heads of 64 numbers each, with rotary positions. "
             "How many pairs of numbers does RoPE turn in one head's query?",
             answer=32, tol=0.0,
             explanation="Each head's queries and keys are turned on their own: 64 numbers, so 32 pairs "
                         "per head, not 256.",
             reveals=[r"\b32 pairs per head\b"]),
]
