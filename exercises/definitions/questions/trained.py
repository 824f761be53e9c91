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

# No longer asked in the notebook (the ablation table above it leaves only block 2, and its right
# choice was the one with a number in it); kept for saved notebooks. Asked now: PREDICT_COPY_WHICH.
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
        r"\bsingle head of block 2\b",
        r"\bmore than half of its weight on (that|the) letter\b",
    ],
)

PREDICT_COPY_WHICH = Question(
    id="trained-predict-copy-which",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="In `copy b d a | b d a .` the row of the bar must write `b`, the row of that `b` must "
           "write `d`, and so on: the letter to write always stands in the first half. At the copy "
           "predictions, which heads put their weight on that letter?",
    choices=["one head of block 1, with most of its weight on the letter",
             "one head of block 2, with most of its weight on the letter",
             "two heads of block 2, with about half of the weight each",
             "all four heads of block 2, with about a quarter each"],
    answer=1,
    explanation="Block 2's head 2: at the copy predictions it puts more than half of its weight on "
                "the letter to write, more than twice as much as any other head (the cell after "
                "the lab prints every head). Block 1 could not aim so well: how far back the letter "
                "stands depends on how many letters the list has, and in block 1 a token knows only "
                "its own word and its position. A row that holds a letter can find it by what it "
                "holds instead, as the letter that came right after the earlier copy of its own; "
                "but a letter of the first half carries the letter before it only once a head of "
                "block 1 has looked one token back and written it into the stream. Block 2's heads "
                "are the first that can read that, and one of them does the whole job.",
    reveals=[
        r"\bblock 2'?s head 2\b",
        r"\bblock 2, head 2\b",
        r"\bone of them does the whole job\b",
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

PREDICT_ZEROED = Question(
    id="trained-predict-zeroed",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Take one block out by zeroing its output: it hands the next block a stream of zeros. "
           "Which block, taken out this way, raises the perplexity on a held-out text the most?",
    choices=["block 1, the first: every later block reads a stream it never saw",
             "block 4, the last: nothing after it can make up for it",
             "every block alike: the model is left knowing nothing at all",
             "none of them: the blocks after it write the stream again"],
    answer=2,
    explanation="Zeroing a block's output throws away the whole stream, what every block before it "
                "wrote included. RMSNorm of zeros is zeros, so every later part adds nothing, and "
                "the final norm and the output layer turn a stream of zeros into equal scores for "
                "all 55 words: perplexity 55, the uniform guess, exactly, whichever block it is. It "
                "says nothing about the block itself; skipping a block, or giving every token its "
                "average addition, keeps what the others wrote.",
    reveals=[
        r"\bequal scores for all 55 words\b",
        r"\bexactly,? whichever block\b",
        r"\bthrows away the whole stream\b",
    ],
)

QUESTIONS = [NUMBER_UNIFORM, PREDICT_STREAM, PREDICT_BLOCK, PREDICT_COPY_HEAD, PREDICT_COPY_WHICH,
             PREDICT_MISMATCH, PREDICT_ZEROED]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("trained-out-perplexity", NOTEBOOK, "number",
             "A model gives the right next token the probabilities 0.5, 0.25 and 0.5 on three "
             "tokens. What is its perplexity on them? Two decimals are enough.",
             answer=float(np.exp(-np.mean(np.log([0.5, 0.25, 0.5])))), tol=0.005,
             explanation="The exponential of the average negative log probability: "
                         "exp(-(ln 0.5 + ln 0.25 + ln 0.5) / 3), the geometric mean of 2, 4 and 2."),
    Question("trained-out-floor", NOTEBOOK, "number",
             "In a toy language, the word after `pick` is one of 4 colours, each as likely as the "
             "others, whatever came before. What is the best perplexity any model can reach on "
             "those words?",
             answer=4.0, tol=0.01,
             explanation="The best a model can do is give each colour 1/4: every loss is log 4, and "
                         "e to the log 4 is 4. No model can predict a fair pick better.",
             reveals=[r"\bgive each colour 1/4\b", r"\be to the log 4\b"]),
    Question("trained-out-check", NOTEBOOK, "predict",
             "You rewrite a trained model's forward pass for other code. Which test catches a quiet "
             "mistake, such as the wrong RoPE base, that leaves the model only a little worse?",
             choices=["comparing the logits with the original code's on whole texts, to a tolerance",
                      "running a batch of texts and checking that nothing raises an error",
                      "checking that the top word is right on a few short prompts",
                      "checking that the logits have one row per token and one column per word"],
             answer=0,
             explanation="A quiet mistake raises nothing, keeps every shape and most top words. Only "
                         "a comparison of the numbers themselves with reference logits, position by "
                         "position on whole texts, sees the logits that moved.",
             reveals=[r"\bcompar\w+ the logits with\b[^.]{0,40}\b(reference|original)\b"]),
    Question("trained-out-induction", NOTEBOOK, "number",
             "A model must write again a list of letters it read earlier in the text, the lists "
             "being of any length. Heads that find the letter to write by what the token before "
             "it holds need how many layers of attention at least?",
             answer=2.0, tol=0.0,
             explanation="One head must first write into each token the token before it (a "
                         "previous-token head); a head of a later layer can then match on that. Heads "
                         "of one layer all read the same stream, written before the layer, so one "
                         "layer cannot do both: two at least.",
             reveals=[r"\btwo at least\b", r"\bit needs two blocks\b"]),
    Question("trained-out-bfloat16", NOTEBOOK, "predict",
             "Why do large models compute in bfloat16 rather than float16 during training?",
             choices=["bfloat16 keeps float32's range, so large sums and tiny gradients stay finite",
                      "bfloat16 keeps more digits of each number than float16, so sums stay exact",
                      "bfloat16 takes half the memory of float16, so more of the model fits",
                      "bfloat16 needs no float32 copy of the weights, so training takes less memory"],
             answer=0,
             explanation="bfloat16 has float32's 8 exponent bits and gives up precision instead: its "
                         "largest number is about 3.4e38, float16's 65,504, and it rounds far less "
                         "to 0 at the small end. Both take 2 bytes, and both train with a float32 "
                         "copy of the weights.",
             reveals=[r"\bfloat32'?s (8 exponent bits|range)\b"]),
]
