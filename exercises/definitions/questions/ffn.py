"""Questions of notebook 02, "The feed-forward network: widen, bend, narrow"."""

from __future__ import annotations

from lib.params import equal_count_gated_width

from engine.core.definition import Question

NOTEBOOK = "02_feed_forward"


PREDICT_ALONE = Question(
    id="ffn-predict-alone",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="The FFN computes ReLU(X @ W_up + b_up) @ W_down + b_down, where X holds three tokens, cat, dog "
           "and car, one per row. Then you run it on cat alone. Compared with cat's row when all "
           "three went through together, cat's result is...",
    choices=["exactly the same", "slightly different", "completely different"],
    answer=0,
    explanation="Every step works on one row at a time: `X @ W_up` gives each row its own hidden "
                "units, the bias and ReLU act number by number, and `@ W_down` again works row by row. "
                "Nothing ever mixes rows, so cat's result cannot depend on dog or car. That is "
                "what position-wise means; mixing the tokens is attention's job.",
    reveals=[
        r"\b(each|every) (position|token|row)\b[^.]{0,40}\b(its|their) own\b",
        r"\bposition-?wise\b",
        r"\bone (row|token|position) at a time\b",
        r"\bnothing (ever )?mixes (the )?(rows|tokens)\b",
        r"\bno token ever sees another\b",
    ],
)

SHAPE_HIDDEN = Question(
    id="ffn-shape-hidden",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="X is (3, 2): three tokens of two numbers. W_up is (2, 4). What shape is the hidden "
           "layer X @ W_up + b_up?",
    answer=(3, 4),
    explanation="(3, 2) @ (2, 4) gives (3, 4): one row per token, as before, and now 4 numbers "
                "in each row, one per hidden unit. The bias b_up (4 numbers) is added to every row.",
)

NUMBER_ON = Question(
    id="ffn-number-cat-on",
    notebook=NOTEBOOK,
    kind="number",
    prompt="cat = [2, 0]. With W_up = [[1, -1, 0, 1], [0, 1, -1, 1]] and b_up = [0, 0, 1, -2], cat's "
           "four hidden units before ReLU are cat @ W_up + b_up. How many are on (above 0) after ReLU?",
    answer=2,
    tol=0.0,
    explanation="cat @ W_up takes 2 times W_up's first row: [2, -2, 0, 2]. Adding b_up gives "
                "[2, -2, 1, 0]. ReLU keeps 2 and 1 and turns -2 into 0; the last unit is exactly "
                "0, which is not above 0. So two units are on.",
    reveals=[
        r"\[\s*2(\.0)?,\s*-2(\.0)?,\s*1(\.0)?,\s*0(\.0)?\s*\]",
        r"\b(2|two)( of 4)? units (are )?on\b",
        r"\bunits on:? 2 of 4\b",
    ],
)

PREDICT_NO_ACTIVATION = Question(
    id="ffn-predict-no-activation",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Take the ReLU out, so the FFN is (x @ W_up + b_up) @ W_down + b_down, and make it 64 hidden units "
           "wide instead of 4. Tokens still have 2 numbers. Compared with a single 2 x 2 matrix "
           "plus a bias, the 64-wide layer can compute...",
    choices=["nothing more: it is a 2 x 2 matrix plus a bias",
             "a little more, because it has more parameters",
             "much more: 64 units can draw 64 bends"],
    answer=0,
    explanation="A matrix product plus a bias, followed by another, is again one matrix product plus a "
                "bias: the two matrices collapse into one, a 2 x 2 matrix here, whatever the width in "
                "between. Extra width without an activation adds parameters but no new behaviour: in this "
                "FFN the bends come from the activation alone (a gated FFN, later, multiplies two "
                "projections, and that product bends too). Which matrix and which bias, the exercise below "
                "works out.",
    reveals=[
        r"\bcollapses? into one\b",
        r"\bbuys exactly what a \S+ × \S+ matrix plus a bias buys\b",
    ],
)

NUMBER_FAIR = Question(
    id="ffn-number-fair-share",
    notebook=NOTEBOOK,
    kind="number",
    prompt="4,096 tokens are each sent to their top 2 of 8 experts. If the router were perfectly "
           "fair, how many tokens would each expert receive?",
    answer=1024,
    tol=0.5,
    explanation="Each token makes 2 visits, so there are 4,096 × 2 = 8,192 visits to share among "
                "8 experts: 1,024 each.",
    reveals=[
        r"\b4,?096\s*[×x]\s*2\s*/\s*8\b",
    ],
)

PREDICT_ROUTING_RULES = Question(
    id="ffn-predict-routing-rules",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Three routers read the example token's 8 scores and keep 2 experts each. A: the top 2, "
           "then a softmax over just those two scores. B: a softmax over "
           "all 8 scores, then the 2 largest kept as they are. C: the sigmoid of every score, then the "
           "2 largest, divided by their sum. Compared with each other, the three routers...",
    choices=["send the token to the same two experts, with the same weights",
             "send the token to the same two experts, with different weights",
             "may send the token to different experts"],
    answer=1,
    explanation="Softmax and sigmoid both grow with the score, so all three routers rank the experts "
                "in the order of their scores and keep the same two. Only the weights differ: B's "
                "are two parts of a softmax over all 8, which leaves the other 6 their parts, so the "
                "two add up to less than 1; C's sigmoids flatten large scores, so the second expert "
                "counts for much more than under A.",
    reveals=[
        r"\bsame two experts\b",
        r"\brank the experts in the order of their scores\b",
        r"\bkeep the same (two|experts)\b",
    ],
)

QUESTIONS = [PREDICT_ALONE, SHAPE_HIDDEN, NUMBER_ON, PREDICT_NO_ACTIVATION, PREDICT_ROUTING_RULES, NUMBER_FAIR]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("ffn-out-rows-used", NOTEBOOK, "number",
             "An FFN with ReLU has 3,072 hidden units. For one token, 1,100 of them are above 0 before "
             "the ReLU. How many rows of W_down (3,072 \u00d7 d_model) take part in that token's output?",
             answer=1100, tol=0.0,
             explanation="A unit that is off gives 0 after the ReLU, and 0 times its row of W_down adds "
                         "nothing: only the 1,100 units that are on bring in their rows."),
    Question("ffn-out-token-flops", NOTEBOOK, "number",
             "A plain FFN has d_model = 512 and d_ff = 2,048, and no biases. How many floating-point "
             "operations (FLOPs) do its two matrix products cost for one token?",
             answer=float(2 * 2 * 512 * 2048), tol=0.0,
             explanation="Each weight multiplies one number and adds the product to a running sum: two "
                          "FLOPs per weight, and the two matrices hold 2 \u00d7 512 \u00d7 2,048 weights."),
    Question("ffn-out-gated-width", NOTEBOOK, "number",
             "A model replaces its plain FFN (ReLU, d_ff = 4 \u00d7 d_model, no biases) by a gated one "
             "(three matrices, no biases) with the same number of parameters. At d_model = 1,536, how "
             "wide is the gated FFN's hidden layer?",
             answer=float(equal_count_gated_width(4 * 1536)), tol=0.0,
             explanation="Two matrices of 1,536 \u00d7 6,144 hold as much as three of 1,536 \u00d7 w when "
                         "3w = 2 \u00d7 6,144: w = 4,096."),
    Question("ffn-out-mixture-cost", NOTEBOOK, "predict",
             "A mixture block holds 16 experts, each exactly as large as the dense model's FFN, and sends "
             "each token to its top 2. Against the dense FFN, the experts' weights in memory and the "
             "expert arithmetic one token costs are\u2026",
             choices=["\u00d716 in memory and \u00d72 per token",
                      "\u00d716 in memory and \u00d716 per token",
                      "\u00d72 in memory and \u00d72 per token",
                      "\u00d716 in memory and \u00d71 per token"],
             answer=0,
             explanation="Every expert must be stored, since any token may go to any of them, but a token "
                         "runs only its 2.",
             reveals=[r"\bany token may go to any of them\b"]),
]
