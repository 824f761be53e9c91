"""Questions of notebook 06, "The block at work" (tests/test_content_06.py runs what each answer claims)."""

from __future__ import annotations

from engine.core.definition import Question

NOTEBOOK = "06_block_at_work"


PREDICT_SAMPLING = Question(
    id="work-predict-sampling",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Continue two prompts by drawing each token from the model's probabilities (temperature 1) "
           "instead of taking the most probable one, with ten different seeds: \"copy b d a |\" and "
           "\"the big cat\". What happens?",
    choices=["both continue differently with every seed",
             "the copy comes out the same with every seed; the sentence about the cat changes",
             "the sentence about the cat comes out the same; the copy changes",
             "both come out the same with every seed: the seed only matters at high temperature"],
    answer=1,
    explanation="Drawing changes a continuation only where the model leaves room. After \"copy b d a |\" "
                "the next letters are fixed by the rule, and the model gives each of them nearly all the "
                "probability, so any draw lands on it. After \"the big cat\" the language allows many verbs "
                "and objects; the model spreads its probability over them, and each seed picks other words.",
    reveals=[r"\bonly where the model leaves room\b", r"\bthe copy comes out the same\b",
             r"\bany draw lands on it\b"],
)

PREDICT_CACHE_WORK = Question(
    id="work-predict-cache-work",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="With a KV cache, the model computes only the new token's query, key and value, and the new "
           "query reads every cached key. How does the work for the n-th token grow with n?",
    choices=["it does not grow: every token costs the same",
             "a fixed part, plus a part in proportion to n (the scores and the mean of n values)",
             "in proportion to n\u00b2, as reading the whole text does",
             "it shrinks: later tokens reuse more of the cache"],
    answer=1,
    explanation="The projections, the FFN and the output layer see one token, whatever n: a fixed "
                "cost. Only attention depends on the text's length: one score per cached key and a "
                "weighted mean of n values, so it grows in proportion to n. Rerunning the whole text, as "
                "the model reads it in one pass, costs n times a cached step.",
    reveals=[r"\bfixed part, plus a part in proportion to n\b", r"\bonly attention depends on the text's length\b"],
)

PREDICT_HEADS_ORDER = Question(
    id="work-predict-heads-order",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="To copy \"b d a\" after the bar, the model needs a head that looks at the token after the "
           "earlier \"b\" (an induction head), and that head needs each letter to carry the letter "
           "before it (a previous-token head, in an earlier block). Which forms first during training?",
    choices=["the previous-token head, long before the induction head",
             "the induction head, long before the previous-token head",
             "both at the same step",
             "neither: the model copies without such heads"],
    answer=0,
    explanation="The previous-token head is useful on its own (the word before predicts much in this "
                "language), so it forms early. The induction head is useful only once the previous-token "
                "head writes what it reads, so it forms later, over the same checkpoints in which copying "
                "takes off.",
    reveals=[r"\bprevious-token head is useful on its own\b", r"\bthe previous-token head, long before\b",
             r"\bforms? (early|first)\b"],
)

PREDICT_LENS = Question(
    id="work-predict-lens",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Read each block's stream through the output layer while the model copies \"b d a e\". After "
           "which block does the right next letter first get most of the probability?",
    choices=["already in the embedding", "after block 1", "after block 2", "after block 3", "only after block 4"],
    answer=2,
    explanation="Block 2 holds the induction head: before it no head has found the letter to copy, so the "
                "stream cannot name it. After block 2 it can, and the later blocks only make it surer.",
    reveals=[r"\bblock 2 holds the induction head\b", r"\bafter block 2 it can\b"],
)

PREDICT_PLACEMENT = Question(
    id="work-predict-placement",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Train the tiny model for 300 steps at learning rate 0.01 without warm-up, once with the norms "
           "before each part (pre-norm) and once after each add (post-norm). Which ends with the lower loss?",
    choices=["pre-norm", "post-norm", "the same, within the noise of a run"],
    answer=0,
    explanation="Pre-norm keeps a clean path from the loss to every block: the residual adds pass the "
                "gradient on unchanged. Post-norm divides it at every norm, so the same learning rate moves "
                "the early weights less well; warm-up helps post-norm most.",
    reveals=[r"\bpre-norm keeps a clean path\b", r"\bwarm-up helps post-norm most\b"],
)

QUESTIONS = [PREDICT_SAMPLING, PREDICT_CACHE_WORK, PREDICT_HEADS_ORDER, PREDICT_LENS, PREDICT_PLACEMENT]
