"""Questions of notebook 04, "The decoder block and the stack"."""

from __future__ import annotations

from lib.params import ModelConfig, block_parameters, kv_cache_per_token

from engine.core.definition import Question

NOTEBOOK = "04_decoder_block"


PREDICT_SIZE = Question(
    id="decoder-predict-size",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Four tokens of four numbers go through one pre-norm block: norm, attention, add; norm, "
           "FFN, add. Each norm rescales the copy it makes to size 1 (root mean square). The tokens "
           "enter with a typical size below 1. Their size when they leave the block is...",
    choices=["the same as when they entered: the norms keep it", "exactly 1: the norms set it",
             "larger than when they entered", "close to 0"],
    answer=2,
    explanation="The norms only rescale the copies that attention and the FFN read. The stream "
                "itself is never normalised inside the block: each half adds its result to it, "
                "so it almost always leaves larger than it came in (the cell after the lab counts "
                "how often over many random draws). The lab below shows every step's size.",
    reveals=[
        r"\bstream itself is never normali[sz]ed\b",
        r"\bnorms? only rescales? the cop(y|ies)\b",
        r"\badds? (almost |nearly )?(always )?makes? the stream larger\b",
        r"\b(almost|nearly) always leaves? larger\b",
        r"\blarger than its input in (nearly|almost) every draw\b",
    ],
)

SHAPE_SCORES = Question(
    id="decoder-shape-scores",
    notebook=NOTEBOOK,
    kind="shape",
    prompt="A batch of B = 2 texts of L = 8 tokens, d_model = 16, split into 2 heads. What is the "
           "shape of the attention scores, one score per pair of positions in every head?",
    answer=(2, 2, 8, 8),
    explanation="Each head compares its 8 queries with its 8 keys: an 8 × 8 grid per head, per "
                "text, so (B, heads, L, L) = (2, 2, 8, 8). The causal mask is one 8 × 8 grid that "
                "every head of every text shares.",
)

PREDICT_COLLAPSE = Question(
    id="decoder-predict-collapse",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A sentence of 8 words goes through 48 attention layers with nothing else: no residual "
           "add, no norms, no FFN. At the top, the 8 words' vectors are...",
    choices=["as different from each other as at the start", "all nearly the same vector",
             "exactly zero", "each still equal to its own input"],
    answer=1,
    # The last three sentences are pinned by tests/test_content_04.py, which runs the flow lab's
    # model (labs.decoder.flow_model) with the residual add but no norms, with the FFN too, with
    # small output projections, and with the residual add and the norms.
    explanation="Every attention layer replaces each word by an average of the words it sees. "
                "Averages of averages become more and more alike, so after many layers every "
                "position holds nearly the same vector and the sentence is lost. Whether the "
                "residual add stops this depends on how much each block adds: with the lab's "
                "weights and no norms, each block adds about as much as the stream holds, the "
                "stream grows block after block, and what the words share dwarfs what tells them "
                "apart. A norm before each part, or output projections that start small, keeps each "
                "addition small next to the stream, and the add then keeps the words apart; try "
                "each in the lab.",
    reveals=[
        r"\baverages? of averages\b",
        r"\b(all )?(nearly |almost )?the same vector\b",
        r"\baverages? the (sentence|words) (away|into one)\b",
        r"\bsentence is lost\b",
    ],
)

# No longer asked in the notebook (notebook 03 asks the same thing); kept for saved notebooks.
PREDICT_ZERO_FFN = Question(
    id="decoder-predict-zero-ffn",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the hand example the token [0, 4] leaves the attention half as [-1, 5]. Suppose "
           "the FFN returned [0, 0] whatever it read. What would leave the block?",
    choices=["[-1, 5]", "[0, 0]", "[-1, 1], the normalised copy", "[0, 4], the input"],
    answer=0,
    explanation="The FFN's result is added to the stream: [-1, 5] + [0, 0] = [-1, 5]. A part that "
                "returns zeros leaves the stream untouched, which is why a block whose weights are "
                "still small barely changes its input.",
    reveals=[
        r"\[-1, 5\] \+ \[0, 0\]",
        r"\breturns zeros leaves the stream untouched\b",
    ],
)

PREDICT_FINAL_NORM = Question(
    id="decoder-predict-final-norm",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In the hand example the token [0, 4] leaves its block as [-1, 7], and the decoder's "
           "final norm (LayerNorm with its small ε, gain 1, shift 0) comes next. Which tokens of two "
           "numbers come out of that norm as something other than about [-1, 1] or [1, -1]?",
    choices=["none: every token of two numbers comes out as one of those two",
             "those whose two numbers are equal: they come out as [0, 0]",
             "those whose numbers are far apart, like [-1, 7]",
             "those with a negative number, like [-1, 7]"],
    answer=1,
    explanation="Unlike the norms inside a block, the final norm rescales the stream itself. "
                "Minus its mean, a token of two numbers is [-s, s], s half their difference; divided "
                "by its standard deviation s it is [-1, 1] or [1, -1], however far apart the two "
                "were. Only when the two are equal is s = 0: the token minus its mean is [0, 0], and "
                "ε keeps the division finite. So [-1, 7] leaves as [-1, 1], and with two numbers the "
                "final norm hides what the blocks did; the cell below prints the stream before it.",
    reveals=[
        r"\[-1, 7\][^.]{0,80}\[-1, 1\]",
        r"\bequal[^.]{0,60}\[0, 0\]",
        r"\bafter the final norm:? -1\.00 \+1\.00\b",
    ],
)

NUMBER_NORMS = Question(
    id="decoder-number-norms",
    notebook=NOTEBOOK,
    kind="number",
    prompt="How many norms does a model with 3 pre-norm blocks have, counting the final norm?",
    answer=7,
    tol=0.0,
    explanation="Two per block (one before attention, one before the FFN) make 6, and the final "
                "norm after the last block makes 7.",
    reveals=[
        r"\+\s*1\s*final\s*=\s*7\b",
        r"\bmakes? 7\b",
    ],
)

NUMBER_WIDTH = Question(
    id="decoder-number-width",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A block has 4·d² attention parameters and 2·d·d_ff in its FFN, with d_ff = 4·d. If d "
           "doubles (and d_ff with it), by how much is the block's count multiplied? Ignore the norms.",
    answer=4,
    tol=0.01,
    explanation="Every term is a product of two widths: 4·d² + 8·d² = 12·d². Doubling d multiplies "
                "d² by 4. Doubling the number of blocks only multiplies the blocks' count by 2: "
                "depth is cheap, width is quadratic.",
    reveals=[
        r"\bd² by 4\b",
        r"\bwidth is quadratic\b",
        r"\bmultiplies every d\s*[×x]\s*d matrix by 4\b",
        r"\b12\s*·\s*d²",
    ],
)

PREDICT_GPT2 = Question(
    id="decoder-predict-gpt2-gap",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Counted the simple way (four d × d attention matrices, two FFN matrices, two norms per "
           "block), GPT-2 Small's 12 blocks hold only about two thirds of its published 124 M "
           "parameters. What holds most of the rest?",
    choices=["the embedding table: one row of 768 numbers for each of its 50,257 tokens",
             "the biases of attention and the FFN: 4 · 768 + 3,072 + 768 numbers in each block",
             "the table of learned positions: one row of 768 numbers for each of 1,024 positions",
             "nothing: the published figure rounds a count of about 85 M up to 124 M"],
    answer=0,
    # GPT-2 Small's figures, pinned by tests/test_content_04.py against its configuration in the
    # calculator's models (labs.decoder.models) and the counts of lib.params.
    explanation="50,257 × 768 is about 38.6 M numbers, almost the whole gap. The position table "
                "(1,024 × 768), the biases and LayerNorm's shifts add the remaining 889,344.",
    reveals=[
        r"\bembedding table closes\b",
        r"(?<![\d.,])38,?597,?376(?!\d)",
        r"(?<![\d.])38\.6\s?M\b",
        r"\b50,?257\s*[×x]\s*768\b",
    ],
)


NUMBER_KV_CACHE = Question(
    id="decoder-number-kv-cache",
    notebook=NOTEBOOK,
    kind="number",
    prompt="LLaMA-7B has 32 blocks of width d = 4,096, and each of its 32 heads has its own keys and "
           "values. While it generates, every block keeps each token's key and value, in bfloat16 "
           "(2 bytes a number). How many bytes does one token add to this cache? Give a number "
           "of bytes, not of KiB or MiB.",
    answer=2 * 32 * 4096 * 2,
    rtol=1e-9,
    # Pinned by tests/test_content_04.py against lib.params.kv_cache_per_token and LLaMA-7B's
    # configuration in labs.decoder.models.
    explanation="A key of 4,096 numbers and a value of 4,096 numbers in each of 32 blocks, at 2 bytes "
                "each: 2 × 32 × 4,096 × 2 = 524,288 bytes, half a MiB for every token of the text. The "
                "cell below multiplies it out for a whole context and for the other models.",
    reveals=[r"\b2\s*[×x]\s*32\s*[×x]\s*4,?096\b", r"\b512(\.0)?\s?KiB\b", r"\bhalf a MiB\b"],
)

FLOAT32_TRAINING = 4 + 4 + 8                # weight, gradient, AdamW's two averages, in float32
MIXED_TRAINING = 2 + 2 + 4 + 8              # bfloat16 weight and gradient, float32 copy and averages

PREDICT_TRAINING = Question(
    id="decoder-predict-training-memory",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Training with the AdamW optimiser keeps, for every weight, its gradient and two running "
           "averages (of the gradient and of its square). With every number in float32, training "
           "holds, besides the activations, how much memory in all (weights included) compared "
           "with the weights alone?",
    choices=["the same in all: the gradients and averages are written over the weights",
             "twice as much in all", "four times as much in all", "ten times as much in all"],
    answer=2,
    explanation="Four numbers per weight instead of one: the weight, its gradient and AdamW's two "
                f"averages, 4 + 4 + 8 = {FLOAT32_TRAINING} bytes per parameter. Keeping weights and "
                "gradients in bfloat16 does not shrink this: the updates are then added to a float32 "
                f"copy of the weights, and the total is {MIXED_TRAINING} bytes per parameter too "
                "(2 + 2 + 4 + 8). Computing in 16 bits saves elsewhere: the activations, and time.",
    reveals=[r"\b16 bytes (per|a|for each) (parameter|weight)\b", r"\b4 \+ 4 \+ 8\b",
             r"\bfour numbers per weight\b"],
)

QUESTIONS = [PREDICT_SIZE, SHAPE_SCORES, PREDICT_COLLAPSE, PREDICT_ZERO_FFN, PREDICT_FINAL_NORM,
             NUMBER_NORMS, NUMBER_WIDTH, PREDICT_GPT2, NUMBER_KV_CACHE, PREDICT_TRAINING]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("decoder-out-scores-shape", NOTEBOOK, "shape",
             "Attention with 4 heads over a batch of 2 texts of 10 tokens: what is the shape of "
             "the score array (one score per head, query and key)?",
             answer=(2, 4, 10, 10),
             explanation="Batch, heads, then a 10 \u00d7 10 grid of query-key pairs."),
    Question("decoder-out-cached", NOTEBOOK, "predict",
             "A decoder has cached the keys and values of 6 tokens (positions 0 to 5) and now computes "
             "2 new tokens at once (positions 6 and 7). Which keys may the second new token read?",
             choices=["positions 0 to 7: the cached ones, the first new one and its own",
                      "positions 0 to 6: every key before its own, not its own",
                      "positions 6 and 7: only the keys computed in this step",
                      "positions 0 to 5: only the keys kept in the cache"],
             answer=0,
             explanation="Query i of the new tokens is position i + 6; it may read every key up to "
                         "its own position, its own included, wherever the key was computed.",
             reveals=[r"\bi\s*\+\s*(Lk\s*[−-]\s*Lq|6)\b[^.]{0,60}\bown\b"]),
    Question("decoder-out-grouped-block", NOTEBOOK, "number",
             "One pre-norm block at d_model = 512 whose 8 query heads share 2 sets of keys and values, "
             "with a plain FFN of width 2,048, no biases and two RMSNorm gains: how many parameters?",
             answer=float(block_parameters(ModelConfig(d_model=512, layers=1, d_ff=2048, vocab=1, heads=8,
                                                       kv_heads=2)).total),
             rtol=1e-9,
             explanation="Wq and Wo are 512 \u00d7 512; Wk and Wv are 512 \u00d7 128 (2 sets of 64 "
                         "numbers); the FFN's two matrices 512 \u00d7 2,048; two gains of 512."),
    Question("decoder-out-identity", NOTEBOOK, "predict",
             "What makes each block of a deep pre-norm stack start close to doing nothing, whatever "
             "the width?",
             choices=["drawing the output projections Wo and W_down small, or at zero",
                      "drawing every matrix at a standard deviation of 0.02",
                      "a norm after each add as well as before each part",
                      "a large \u03b5 in the norms, so that each copy is read small"],
             answer=0,
             explanation="A block only adds to the stream, and what it adds comes out of Wo and W_down: "
                         "small there, the block adds little. A standard deviation of 0.02 multiplies "
                         "a vector's size by about 0.02 \u00d7 \u221a(rows), which is not small at "
                         "a width of a few thousand.",
             reveals=[r"\bwhat it adds comes out of Wo and W_down\b"]),
    Question("decoder-out-kv-bytes", NOTEBOOK, "number",
             "A model of 24 blocks of width 1,024, each of its 16 heads with its own keys and values, "
             "keeps its KV cache in bfloat16. How many bytes does one token add to the cache? Give a "
             "number of bytes.",
             answer=float(2 * kv_cache_per_token(ModelConfig(d_model=1024, layers=24, d_ff=4096, vocab=1,
                                                             heads=16))),
             rtol=1e-9,
             explanation="A key and a value of 1,024 numbers in each of 24 blocks, 2 bytes each: "
                         "2 \u00d7 24 \u00d7 1,024 \u00d7 2 = 98,304 bytes."),
]
