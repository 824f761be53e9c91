"""Questions of notebook 01, "Positional encoding: where each word stands"."""

from __future__ import annotations

from lib.positional import sinusoidal

from engine.core.definition import Question

NOTEBOOK = "01_positional_encoding"


PREDICT_SHUFFLE = Question(
    id="pos-predict-shuffle",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Self-attention, with no position information, runs on \u201ccat dog car\u201d and "
           "then on \u201ccar dog cat\u201d. Is cat's output vector different the second time?",
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
                "row. This holds for any weights, which is why attention needs positions.",
    reveals=[
        r"\bsame vector\b",
        r"\b(does not|doesn't) care about (the |word )?order\b",
        r"\b(ignores?|cannot see|can't see|is blind to) (the |word )?order\b",
        r"\btreats? (a text|its input) as a \*?set\b",
    ],
)

NUMBER_PE01 = Question(
    id="pos-number-pe01",
    notebook=NOTEBOOK,
    kind="number",
    prompt="With d_model = 2, position `pos` gets the vector [sin(pos), cos(pos)]. "
           "What is PE[0][1], the second number of position 0's vector?",
    answer=1.0,
    tol=1e-6,
    explanation="PE[0][1] is cos(0), and the cosine of 0 is 1. Position 0's vector is [0, 1]; "
                "the cell below prints it.",
    reveals=[
        r"\b(cos\s*\(\s*0\s*\)|cosine of 0)\s*(=|is)\s*1\b",
        r"\bPE\[0\]\[1\]\s*(=|is)\s*1(\.0+)?\b",
        r"\bPE\[0\]\s*=\s*\[0(\.0+)?,\s*1(\.0+)?\b",
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
    prompt="A model has d_model = 64. Before the position row is added, each word vector is "
           "multiplied by sqrt(d_model). By which number?",
    answer=8.0,
    tol=1e-6,
    explanation="The square root of 64 is 8, because 8 \u00d7 8 = 64.",
    reveals=[
        r"(√\s*|\bsqrt\s*\(\s*|\bsquare root of )64\s*\)?\s*(=|is)\s*8\b",
        r"\b8\s*[×x]\s*8\s*=\s*64\b",
        r"\bsqrt\(d_model\)\s*=\s*8\b",
    ],
)

PREDICT_SHIFT = Question(
    id="pos-predict-shift",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the sinusoidal table, pair i of row p is the point (sin p\u03c9\u1d62, cos p\u03c9\u1d62). What "
           "takes it to the same pair of row p + k?",
    choices=[
        "A turn by k\u00b7\u03c9\u1d62, the same whatever p is: one fixed matrix moves every row k "
        "positions on",
        "A turn whose angle grows with p: rows far into the text need larger turns",
        "Adding k\u00b7\u03c9\u1d62 to both of its numbers",
        "No fixed rule: every row p needs a map of its own",
    ],
    answer=0,
    explanation="sin((p + k)\u03c9) = sin p\u03c9 cos k\u03c9 + cos p\u03c9 sin k\u03c9 and cos((p + k)\u03c9) = "
                "cos p\u03c9 cos k\u03c9 \u2212 sin p\u03c9 sin k\u03c9: the new pair is made from the old one "
                "with the numbers cos k\u03c9 and sin k\u03c9, which hold k but not p. So every pair turns "
                "by k\u00b7\u03c9\u1d62 whatever p is, and one fixed matrix, built from k alone, moves every "
                "row k positions on. The cells below measure the turns and try the matrix.",
    reveals=[
        r"\bwhatever \*?p\*? is\b",
        r"\bnever on \*?p\b",
        r"\bbuilt from \*?k\*? alone\b",
        r"\bhold k but not p\b",
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
                "of the two turns, which depends on the distance and not on where the pair "
                "sits. The lab and the cell after it show the two scores.",
    reveals=[
        r"\bdepends? only on the distance\b",
        r"\bonly the distance (matters|counts)\b",
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
                "counts and attention sees almost a set of words again: each word's output moves "
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
             PREDICT_SCALE, PREDICT_SHIFT, PREDICT_ROPE]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("pos-out-order", NOTEBOOK, "predict",
             "Self-attention without any position information reads \u201cdog bites man\u201d and then "
             "\u201cman bites dog\u201d. What happens to the output for \u201cdog\u201d?",
             choices=["It is the same vector, now in another row",
                      "It changes, because \u201cdog\u201d is now the subject",
                      "It becomes zero",
                      "It depends on the causal mask only"],
             answer=0,
             explanation="Without positions attention treats its input as a set of words.",
             reveals=[r"\bsame vector\b",
                      r"\b(does not|doesn't) care about (the |word )?order\b",
                      r"\b(ignores?|cannot see|can't see|is blind to) (the |word )?order\b",
                      r"\btreats? (a text|its input) as a \*?set\b"]),
    Question("pos-out-table-entry", NOTEBOOK, "number",
             "In the sinusoidal table with d_model = 4 (base 10000), what is PE[1, 1], the row of "
             "position 1, column 1? Two decimals are enough.",
             answer=float(sinusoidal(2, 4)[1, 1]), tol=0.005,
             explanation="Column 1 is the cosine of the fast pair at position 1."),
    Question("pos-out-rope-shape", NOTEBOOK, "shape",
             "Rotary positions are applied to queries of shape (2, 6, 16): a batch of 2, 6 "
             "tokens, 16 numbers each. What shape comes out?",
             answer=(2, 6, 16),
             explanation="RoPE turns pairs of numbers in place: it changes no shape."),
    Question("pos-out-rope-distance", NOTEBOOK, "predict",
             "With rotary positions, the score between a query at position m and a key at "
             "position n depends on the positions only through\u2026",
             choices=["m \u2212 n, how far apart they are", "m alone", "m + n",
                      "nothing: RoPE leaves scores unchanged"],
             answer=0,
             explanation="Turning both by their own angle leaves the angle between them: m \u2212 n.",
             reveals=[r"\bdepends? only on the distance\b",
                      r"\bdifference of the two turns\b",
                      r"\bm\s*[−-]\s*n\b"]),
]
