"""Questions of notebook 01, "Attention: how each token reads the others"."""

from __future__ import annotations

import math

from engine.core.definition import Question

NOTEBOOK = "01_attention"


PREDICT_DOT_LENGTH = Question(
    id="att-predict-dot-length",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A query q = [2, 1] is scored against two keys: A = [1, 0] points close to the query's "
           "direction; B = [0, 3] points further away from it, and is longer. Which key gets the higher "
           "score q\u00b7k?",
    choices=[
        "A, which points closer to the query's direction",
        "B, which is longer",
        "Both the same: each is one step from the query's direction",
        "Both the same: a score measures the angle alone",
    ],
    answer=1,
    explanation="q\u00b7A = 2 \u00d7 1 + 1 \u00d7 0 = 2 and q\u00b7B = 2 \u00d7 0 + 1 \u00d7 3 = 3. A dot product is "
                "|q| |k| cos(angle): the direction counts, and so do the lengths, and B's length makes up "
                "for its wider angle. The cell below computes both.",
    reveals=[
        r"\|q\|\s*\|k\|\s*cos",
        r"\bB's length makes up\b",
        r"\bB, which is longer\b",
    ],
)

PREDICT_SPREAD = Question(
    id="att-predict-spread",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A query and a key each hold d numbers, every one drawn at random with mean 0 and spread "
           "(standard deviation) 1, so their score q\u00b7k is random too. As d grows from 16 to 1,024, "
           "how does the spread of the score change?",
    choices=[
        "It stays about 1, the spread of each number",
        "It grows like \u221ad: from about 4 to about 32",
        "It grows like d: from about 16 to about 1,024",
        "It shrinks like 1/\u221ad, as more numbers average out",
    ],
    answer=1,
    explanation="q\u00b7k adds d products, each with mean 0 and variance 1; the variances of independent terms "
                "add up, so the sum has variance d and spread \u221ad. The lab below measures it.",
    reveals=[
        r"\bgrows? like \u221ad\b",
        r"\bvariance d\b",
        r"\bspread \u221ad\b",
    ],
)

NUMBER_HEAD_SCALE = Question(
    id="att-number-head-scale",
    notebook=NOTEBOOK,
    kind="number",
    prompt="The course's trained model has d_model = 96 and 4 heads, each with a slice of its own of the "
           "queries and the keys. By what number is each head's score q\u00b7k divided? (Two decimals are "
           "enough.)",
    answer=math.sqrt(24),
    tol=0.01,
    explanation="Each head's queries and keys are 96 / 4 = 24 numbers long, so each score adds 24 products and "
                "spreads about \u221a24: it is divided by \u221a24 \u2248 4.90, not by \u221a96.",
    reveals=[
        r"\u221a\s*24\b",
        r"\b96\s*/\s*4\s*=\s*24\b",
    ],
)

NUMBER_MASK_THIRD = Question(
    id="att-number-mask-third",
    notebook=NOTEBOOK,
    kind="number",
    prompt="Four tokens, the causal mask, and every score equal. What weight does the third token (row 2) put "
           "on the first token (column 0)? (A fraction like 1/4 is fine.)",
    answer=1 / 3,
    tol=1e-3,
    explanation="Row 2 may look at columns 0, 1 and 2 only; the future, column 3, gets e^\u2212\u221e = 0. Three "
                "equal scores give three equal weights: 1/3 each.",
    reveals=[
        r"(?<![\d.])1\s*/\s*3(?![\d.])",
        r"\bthree equal (scores|weights)\b",
    ],
)

PREDICT_RANGE = Question(
    id="att-predict-range",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Can a number of a head's output (its weighted mean of the values, before W_O) be larger than "
           "the largest number in the same column of the values?",
    choices=[
        "No: the weights are at least 0 and sum to 1",
        "Yes: when one weight is close to 1",
        "Yes: when the scores are large",
        "Yes: when some values are negative",
    ],
    answer=0,
    explanation="Each weight is at least 0 and they sum to 1, so every number of the output is a convex "
                "combination of the numbers in its column: it lies between their smallest and their "
                "largest. The cell below checks it on random values.",
    reveals=[
        r"\bconvex combination\b",
        r"\bbetween (their|the column's|its column's) smallest and (their|its) largest\b",
        r"\bweights are at least 0 and sum to 1\b",
    ],
)

PREDICT_TWO_PLACES = Question(
    id="att-predict-two-places",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="To continue \u201c9 minus 4 is\u201d, the token \u201cis\u201d needs both numbers. Can one head "
           "give 0.9 of its weight to \u201c9\u201d and 0.9 to \u201c4\u201d at the same time?",
    choices=[
        "No: one head's weights on all the tokens sum to 1",
        "Yes: if both scores are large enough",
        "Yes: if the two numbers stand far apart",
        "No: a head only looks at the token just before",
    ],
    answer=0,
    explanation="One head's weights for a token are at least 0 and sum to 1 over every token it sees, so "
                "0.9 and 0.9, 1.8 together, are out of reach: raising the score of one number takes weight "
                "from the other. Two heads have a total of 1 each. The lab below shows both.",
    reveals=[
        r"\b1\.8 together\b",
        r"\btakes weight from the other\b",
        r"\bshare one total of 1\b",
    ],
)

NUMBER_PARAMETERS = Question(
    id="att-number-params",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A layer of width d_model = 96 has W_Q, W_K, W_V and W_O, each 96 \u00d7 96, with no biases. How "
           "many numbers do the four hold when the layer has 4 heads of 24?",
    answer=4 * 96 * 96,
    tol=0.0,
    explanation="The heads do not add matrices: each head uses 24 of the 96 columns of W_Q, W_K and W_V and "
                "24 of the rows of W_O. The four hold 4 \u00d7 96 \u00d7 96 = 36,864 numbers with 1 head, 4 "
                "heads or 96.",
    reveals=[
        r"\b4\s*[\u00d7x\u00b7*]\s*96\s*(\u00b2|\^\s*2|[\u00d7x\u00b7*]\s*96)",
        r"\badds? no (new )?matri(x|ces)\b",
        r"\bheads (do not add matrices|only share out the columns)\b",
    ],
)

SHAPE_WEIGHTS = Question(
    id="att-shape-weights",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="One attention layer with 4 heads reads a text of 11 tokens. What shape are its attention weights?",
    answer=(4, 11, 11),
    explanation="One grid per head, and in each grid one row per query and one column per key: "
                "(4, 11, 11).",
    reveals=[
        r"\b(one|a) grid (of (scores|weights) )?per head\b",
        r"\beach head keeps (a grid of scores of its own|its own \(n, n\) weights)\b",
    ],
)

PREDICT_OV = Question(
    id="att-predict-ov",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A head puts all of token i's weight on token j. What decides the vector the head adds to "
           "token i's stream?",
    choices=[
        "Token j's vector and the head's W_V and W_O",
        "Both tokens' vectors, through W_Q and W_K",
        "Token i's own vector and the head's W_V and W_O",
        "The score of i against j and the head's W_O",
    ],
    answer=0,
    explanation="With all the weight on j, the head adds x_j W_V W_O: token j's vector moved through the OV "
                "circuit, the same vector whichever token reads it. Where the head looks (QK) decides only "
                "how much of each token's moved vector a token gets.",
    reveals=[
        r"\bwhichever token reads it\b",
        r"\bx_j W_V W_O\b",
        r"\bToken j's vector and the head's W_V and W_O\b",
    ],
)

QUESTIONS = [PREDICT_DOT_LENGTH, PREDICT_SPREAD, NUMBER_HEAD_SCALE, NUMBER_MASK_THIRD, PREDICT_RANGE,
             PREDICT_TWO_PLACES, NUMBER_PARAMETERS, SHAPE_WEIGHTS, PREDICT_OV]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("att-out-spread", NOTEBOOK, "number",
             "A query and a key hold 400 numbers each, all drawn independently with mean 0 and spread 1. "
             "About what is the spread (standard deviation) of their score q\u00b7k, before any division?",
             answer=20.0, tol=1.0,
             explanation="q\u00b7k adds 400 products of variance 1: variance 400, spread \u221a400 = 20.",
             reveals=[r"\u221a\s*400\b"]),
    Question("att-out-axis", NOTEBOOK, "predict",
             "Attention scores are kept in an array of shape (batch, heads, queries, keys). Along which "
             "axis does the softmax run?",
             choices=["The last axis, the keys", "Axis 2, the queries", "Axis 1, the heads",
                      "Axis 0, the texts of the batch"],
             answer=0,
             explanation="One query's weights, in one head of one text, are spread over the keys it may see: "
                         "the softmax runs along the keys.",
             reveals=[r"\bspread over the keys\b"]),
    Question("att-out-last-weight", NOTEBOOK, "number",
             "A text of 5 tokens, the causal mask, and every score equal. What weight does the last token "
             "put on the first? (A fraction like 1/4 is fine.)",
             answer=0.2, tol=1e-3,
             explanation="The last token sees all 5 tokens, itself included, and equal scores share its weight "
                         "evenly: 1/5 each.",
             reveals=[r"(?<![\d.])1\s*/\s*5(?![\d.])"]),
    Question("att-out-rank", NOTEBOOK, "number",
             "A model has d_model = 512 and 8 heads, each with a slice of its own of the queries and the "
             "keys. What is the largest rank that one head's W_Q,h W_K,h\u1d40 (512 \u00d7 512) can have?",
             answer=64, tol=0.0,
             explanation="W_Q,h and W_K,h are 512 \u00d7 64 each (512 / 8 = 64 columns), and a product through 64 "
                         "numbers has rank at most 64.",
             reveals=[r"\b512\s*/\s*8\b", r"\brank at most 64\b"]),
    Question("att-out-range", NOTEBOOK, "predict",
             "A head's values have first numbers 3, \u22121 and 5. Which of these could be the first number of "
             "its output for some token, before W_O?",
             choices=["4", "6", "\u22122", "\u22121.5"],
             answer=0,
             explanation="The output is a weighted mean with weights of at least 0 that sum to 1: it lies "
                         "between \u22121 and 5.",
             reveals=[r"\bbetween \u22121 and 5\b"]),
]
