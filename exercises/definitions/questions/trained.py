"""Questions of notebook 05, "Inside a trained model"."""

from __future__ import annotations

import numpy as np

from engine.core.definition import Question

NOTEBOOK = "05_trained_model"


NUMBER_UNIFORM = Question(
    id="trained-number-uniform",
    notebook=NOTEBOOK,
    kind="number",
    prompt="The model's vocabulary has 55 words. A model that knows nothing gives each of them "
           "the same probability, 1/55, at every step. What is its perplexity?",
    answer=55,
    tol=0.5,
    explanation="Every right word gets probability 1/55, so every loss is -log(1/55) = log 55, "
                "and e to the power of log 55 is 55. Perplexity counts how many words the model "
                "is, on average, as unsure between as if it picked uniformly among them: a "
                "know-nothing model is unsure between all 55.",
    reveals=[
        r"\bas unsure between as if\b",
        r"\bunsure between all 55\b",
        r"\blog\s*\(?\s*55\b",
        r"\b(is|equals|counts) (the number of|how many) words\b",
    ],
)

PREDICT_BLOCK = Question(
    id="trained-predict-block",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Leave out one block of the four (the stream passes it unchanged) and keep the rest. "
           "Which block, left out on its own, raises the perplexity on the held-out texts the most?",
    choices=["block 1, the first", "block 2", "block 3", "block 4, the last",
             "about the same for every block"],
    answer=0,
    explanation="Block 1 sees the raw embeddings, and every later block was trained on a stream "
                "that block 1 had already shaped. Leave it out and every later block reads a "
                "stream it never saw in training, so every kind of prediction suffers. The later "
                "blocks are not mere refinements: each carries kinds of prediction of its own, and "
                "without it those fall apart (without block 2, copying and reversing; without "
                "block 4, the verbs). But each of those kinds is a small share of all the "
                "predictions, so the overall perplexity rises less. The cell after the lab prints "
                "the numbers.",
    reveals=[
        r"\bfirst block matters most\b",
        r"\bblock 1 sees the raw embeddings\b",
        r"\bblock whose absence hurts most\b",
    ],
)

PREDICT_STREAM = Question(
    id="trained-predict-stream",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Each token's stream starts as its row of the embedding table, whose numbers are small. "
           "Four blocks each add what their attention and FFN computed, and every part reads the "
           "stream through an RMSNorm. After the last block, the stream is...",
    choices=["about as small as the embedding: the norms keep it there",
             "about 1 in size: the norms set it",
             "many times larger than the embedding: it is mostly what the blocks wrote",
             "close to 0: the blocks cancel each other"],
    answer=2,
    explanation="The norms only rescale the copies the parts read; the stream itself is a running "
                "sum that nothing rescales until the final norm. The first block already adds "
                "vectors many times larger than the embedding row it started from, so at the top "
                "the stream is mostly what the blocks wrote into it. The cell after the lab prints "
                "each block's addition next to the stream it received.",
    reveals=[
        r"\bmostly what the blocks wrote\b",
        r"\bnothing rescales\b",
        r"\bstream itself is a running sum\b",
        r"\bmany times larger than the embedding\b",
    ],
)

PREDICT_COPY_HEAD = Question(
    id="trained-predict-copy-head",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In `copy b d a | b d a .` the row of the bar must write `b`, the row of that `b` must "
           "write `d`, and so on: the letter to write always stands in the first half. Which head "
           "do you expect to look back at it?",
    choices=["a head of block 1: only block 1 reads the letters as they were written",
             "a single head of block 2, with more than half of its weight on that letter",
             "the four heads of block 2 together, each with a small share",
             "a head of block 4, the last before the output"],
    answer=1,
    explanation="Block 2's head 2: at the copy predictions it puts more than half of its weight on "
                "the letter to write, more than twice as much as any other head (the cell after "
                "the lab prints every head). Block 1 could not aim so well: how far back the letter "
                "stands depends on how many letters the list has, and in block 1 a token knows only "
                "its own word and its position. A row that holds a letter can find it by what it "
                "holds instead, as the letter that came right after the earlier copy of its own; "
                "but a letter of the first half carries the letter before it only once a head of "
                "block 1 has looked one token back and written it into the stream. Block 2's heads "
                "are the first that can read that.",
    reveals=[
        r"\bblock 2'?s head 2\b",
        r"\bblock 2, head 2\b",
        r"\bsingle head of block 2\b",
        r"\bmore than half of its weight on (that|the) letter\b",
    ],
)

PREDICT_MISMATCH = Question(
    id="trained-predict-mismatch",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="You load the trained weights into code that differs from the training code in one "
           "detail about RoPE. Which mistake is the hardest to notice?",
    choices=["RoPE pairs neighbours (2i, 2i + 1) instead of halves (i, i + d/2)",
             "RoPE base 100,000 instead of 10,000",
             "no RoPE at all"],
    answer=1,
    explanation="Changing the base leaves the fastest pair turning as before and only slows the "
                "others, so part of every score is still right. Nothing raises, most answers stay "
                "the same, and the model is only a little worse. Pairing the wrong numbers or "
                "dropping RoPE scrambles or removes what every head learned to read, and any "
                "evaluation shows it at once.",
    reveals=[
        r"\bchanging the base leaves\b",
        r"\bquiet\b[^.]{0,60}\bthe base\b",
        r"\bonly slows the others\b",
    ],
)

QUESTIONS = [NUMBER_UNIFORM, PREDICT_STREAM, PREDICT_BLOCK, PREDICT_COPY_HEAD, PREDICT_MISMATCH]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("trained-out-perplexity", NOTEBOOK, "number",
             "A model gives the right next token the probabilities 0.5, 0.25 and 0.5 on three "
             "tokens. What is its perplexity on them? Two decimals are enough.",
             answer=float(np.exp(-np.mean(np.log([0.5, 0.25, 0.5])))), tol=0.005,
             explanation="The exponential of the average negative log probability: "
                         "exp(-(ln 0.5 + ln 0.25 + ln 0.5) / 3), the geometric mean of 2, 4 and 2."),
    Question("trained-out-uniform", NOTEBOOK, "number",
             "A model that spreads its probability evenly over a vocabulary of 1,000 tokens: what "
             "is its perplexity?",
             answer=1000.0, tol=0.5,
             explanation="Every token gets 1/1000, so the perplexity is 1000: as unsure as a "
                         "choice among a thousand."),
    Question("trained-out-skip", NOTEBOOK, "predict",
             "In a pre-norm model, what does leaving block k out mean?",
             choices=["the stream passes block k unchanged and goes on to block k + 1",
                      "block k's output is set to zero, stream included",
                      "the model stops after block k - 1",
                      "block k's weights are replaced by random ones"],
             answer=0,
             explanation="Each block only adds to the stream, so leaving one out is skipping its "
                         "two additions.",
             reveals=[r"\bstream passes (it|block k|the block|each block) unchanged\b",
                      r"\bskipping its (two )?additions\b"]),
    Question("trained-out-float16", NOTEBOOK, "number",
             "What is the largest finite number float16 can hold?",
             answer=float(np.finfo(np.float16).max), tol=0.5,
             explanation="65,504: a stream value beyond it becomes infinity in float16."),
]
