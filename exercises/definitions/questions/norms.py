"""Questions of notebook 03, "Normalisation and residual connections"."""

from __future__ import annotations

import numpy as np

from lib.norm import layer_norm, rms_norm

from engine.core.definition import Question

NOTEBOOK = "03_norms_and_residuals"


PREDICT_STACK = Question(
    id="norms-predict-stack",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A vector goes through 30 layers. Each layer multiplies it by a random matrix that "
           "halves its length (a scale of 0.5). No residual add, no normalisation. After 30 "
           "layers its numbers are...",
    choices=["about the same size as at the start", "almost exactly zero", "huge",
             "somewhere in between: about half their starting size"],
    answer=1,
    explanation="Each layer halves the length, and 30 halvings multiply it by 0.5^30, about one "
                "in a billion. Nothing holds the size in place, so it vanishes; a scale above 1 "
                "makes it explode the same way. The lab below shows both, and what stops them.",
    reveals=[
        r"\bvanish(es|ed|ing)?\b",
        r"0\.5\s*\^\s*30\b",
        r"\bone in a billion\b",
    ],
)

NUMBER_FIVE = Question(
    id="norms-number-five",
    notebook=NOTEBOOK,
    kind="number",
    prompt="LayerNorm the token [1, 1, 5, 5] (gain 1, bias 0, ignore eps). Its mean is 3 and its "
           "standard deviation is 2. What does each 5 become?",
    answer=1.0,
    tol=0.01,
    explanation="(5 - 3) / 2 = 1, and each 1 becomes (1 - 3) / 2 = -1: the token becomes "
                "[-1, -1, 1, 1], with mean 0 and standard deviation 1.",
    reveals=[
        r"\(\s*5\s*[−-]\s*3\s*\)\s*/\s*2\b",
        r"\[\s*-1,\s*-1,\s*1,\s*1\s*\]",
        r"-1\.0+ -1\.0+ \+1\.0+ \+1\.0+",
    ],
)

NUMBER_MEANS = Question(
    id="norms-number-means",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A batch has shape (2, 5, 8): 2 sentences of 5 tokens, 8 numbers per token. How many "
           "separate means does LayerNorm compute?",
    answer=10,
    tol=0.0,
    explanation="One per token: LayerNorm averages the last axis only, so it computes 2 x 5 = 10 "
                "means (and 10 standard deviations), each over 8 numbers.",
    reveals=[
        r"\b2\s*[x×]\s*5\s*=\s*10\b",
        r"\b10 (separate )?means\b",
        r"\bone (mean )?per token\b",
    ],
)

NUMBER_LENGTH = Question(
    id="norms-number-length",
    notebook=NOTEBOOK,
    kind="number",
    prompt="After LayerNorm (gain 1, bias 0), a token of 8 numbers has mean 0 and standard "
           "deviation 1. What is its length, the square root of the sum of its squares? "
           "Two decimals are enough.",
    answer=float(np.sqrt(8.0)),
    tol=0.01,
    explanation="Standard deviation 1 with mean 0 means the average square is 1, so the 8 squares "
                "add up to 8 and the length is the square root of 8, about 2.83. That is the "
                "line every post-norm run of the stack lab sits on.",
    reveals=[
        r"(√\s*|\bsqrt\s*\(\s*|\bsquare root of )8\b",
        r"\bsquares add up to 8\b",
    ],
)

PREDICT_ZERO_F = Question(
    id="norms-predict-zero-f",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A pre-norm line reads `x = x + f(layer_norm(x))`. For one token x = [3, 1], and f "
           "returns [0, 0] whatever it reads. What is x after the line?",
    choices=["[3, 1]: unchanged", "[1, -1]: the normalised copy", "[0, 0]",
             "[4, 2]: one is added to each number"],
    answer=0,
    explanation="The norm only rescales the copy that f reads; the stream itself is the plain x, "
                "and adding zeros leaves it as it was. A part that returns nothing lets the "
                "stream pass through untouched, so a pre-norm block whose parts start out "
                "returning very little starts close to doing nothing (notebook 04 shows when "
                "that is the case).",
    reveals=[
        r"\bstream itself is (the plain x|never normali[sz]ed)\b",
        r"\badding zeros leaves\b",
        r"\breturns (nothing|zeros?)\b[^.]{0,40}\b(untouched|unchanged|as it was)\b",
    ],
)

PREDICT_PLACEMENT = Question(
    id="norms-predict-placement",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Two stacks of 48 random blocks differ only in where the norm sits. A tiny change is "
           "made to the input at the bottom. How large is the difference at the top?",
    choices=["about as large as at the start, in both stacks",
             "larger with pre-norm, smaller with post-norm",
             "smaller with pre-norm, larger with post-norm",
             "zero in both: the norms remove it"],
    answer=1,
    explanation="With pre-norm, an untouched path of additions runs from the bottom to the top, "
                "so the change survives and grows with the stream. With post-norm the stream "
                f"itself is rescaled twice per block, {2 * 48} times in all, and each rescaling "
                "can squeeze the change: in most random stacks it arrives smaller than it left, and "
                "in almost every one smaller than with pre-norm (the cell after the lab counts "
                "how often). What the gradient, which crosses the same blocks the other way, does "
                "is computed after the exercise below.",
    reveals=[
        r"\b(larger|amplified|grows?)\b[^.]{0,20}\bwith pre-norm\b",
        r"\b(smaller|shrunk|squeezed?)\b[^.]{0,20}\bwith post-norm\b",
        r"\buntouched path of additions\b",
        r"\brescaling can squeeze\b",
    ],
)

# No longer asked in the notebook (the labs before it show the stream growing like the square
# root of the depth, which answers it); kept for saved notebooks.
PREDICT_STREAM = Question(
    id="norms-predict-stream",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A stream of size 0.9 passes 12 pre-norm blocks; each adds a vector of size 1.0 to it. "
           "About how large is the stream at the top?",
    choices=["about 12.9", "about 3 or 4", "about 1", "about 0.9: the norms keep it there"],
    answer=1,
    explanation="The additions point in unrelated directions, so they partly cancel: sizes add "
                "like the sides of a right-angled triangle, not like numbers on a line. The lab "
                "below measures it.",
    reveals=[
        r"\bright[- ]angled triangle\b",
        r"\b(unrelated|independent) directions\b",
        r"\bpartly cancel\b",
    ],
)

# No longer asked in the notebook (its wrong choices went against the prompt's own premise, each
# block adding 1.0); kept for saved notebooks. Asked now: PREDICT_STREAM_SUM.
PREDICT_STREAM_WHY = Question(
    id="norms-predict-stream-why",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A stream of size 0.9 passes 12 pre-norm blocks, and each block adds a vector of size "
           "1.0 to it. The stream ends far smaller than 0.9 + 12 \u00d7 1.0. Why?",
    choices=["Each block's norm shrinks what the block adds",
             "The additions point in unrelated directions, so their squares add up, not their sizes",
             "Later blocks add less and less",
             "The additions cancel each other almost completely"],
    answer=1,
    explanation="Each block reads the stream through a random matrix, so its addition points in a "
                "direction that has little to do with the stream's. Sizes of vectors at right "
                "angles add like the sides of a right-angled triangle: the squares add up. Each "
                "addition here has size 1.0, so nothing shrinks them, and they do not cancel out: "
                "after 12 blocks the stream is several times larger than it started. The lab "
                "below lets you make the additions agree.",
    reveals=[
        r"\bsquares add up\b(?! to\b)",
        r"\bpoints? in (unrelated|independent|random) directions\b",
        r"\bright[- ]angled triangle\b",
    ],
)

PREDICT_STREAM_SUM = Question(
    id="norms-predict-stream-sum",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A stream of size 0.9 passes 12 pre-norm blocks, and each block adds a vector of size "
           "1.0 to it (each block reads the stream through a random matrix). The stream ends far "
           "smaller than 0.9 + 12 \u00d7 1.0, though still several times larger than it started. Why?",
    choices=["The norm before each block rescales the stream to size 1, so each block starts again "
             "from a stream of size 1",
             "The additions point in unrelated directions, so their squares add up, not their sizes",
             "Each addition points against the stream as often as along it, and the two kinds cancel "
             "in pairs",
             "The additions of neighbouring blocks point in nearly opposite directions, so most of "
             "each one undoes the one before"],
    answer=1,
    explanation="Each block reads the stream through a random matrix, so its addition points in a "
                "direction that has little to do with the stream's. Sizes of vectors at right "
                "angles add like the sides of a right-angled triangle: the squares add up, so after "
                "12 blocks the stream is about \u221a(0.9\u00b2 + 12), several times its start. The "
                "norm rescales only the copy a block reads, never the stream itself, and the additions "
                "are aimed neither against the stream nor against each other: unrelated directions "
                "only keep them from lining up. The lab below lets you make the additions agree.",
    reveals=[
        r"\bsquares add up\b(?! to\b)",
        r"\bpoints? in (unrelated|independent|random) directions\b",
        r"\bright[- ]angled triangle\b",
        r"\b(like|as) the square root of the (depth|number of)\b",
        r"√\s*depth\b",
    ],
)

PREDICT_GRADIENT = Question(
    id="norms-predict-gradient",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="The lab's two stacks of 48 blocks get a loss at the top. The gradient of the loss with "
           "respect to a block's weights, times the learning rate, is how far plain gradient descent "
           "moves them at each step. Compared with the last block's gradient, the first block's is...",
    choices=["about the same, with either placement: every block learns as fast",
             "smaller with post-norm, larger with pre-norm",
             "larger with post-norm, smaller with pre-norm",
             "far smaller with either placement: the gradient fades on its way down whatever the norm"],
    answer=1,
    explanation="Backwards, the gradient crosses the same blocks as the nudge did forwards, and fares "
                "the same way. Post-norm's rescalings squeeze it on its way down, so in most stacks "
                "the first block gets a smaller gradient than the last; pre-norm's untouched path of "
                "additions carries it down and the blocks add to it, so the first block gets more "
                "than the last. The cell below computes both.",
    reveals=[
        r"\bsmaller with post-norm, larger with pre-norm\b",
        r"\bfirst blocks? get small gradients\b",
        r"\bfirst block gets a smaller gradient\b",
        r"\bblock 1's gradient is larger than block 48's\b",
    ],
)

# No longer asked in the notebook (the cell just above it prints the same computation for 12
# blocks, so only 12 changed to 48); kept for saved notebooks. Asked now: NUMBER_FADING.
NUMBER_LATE_SHARE = Question(
    id="norms-number-late-share",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A stream of size 0.9 passes 48 pre-norm blocks, and each block adds a vector of size 1.0 "
           "at right angles to the stream. Block 48's addition is what share of the stream it "
           "produces? Give a percentage, such as 50%.",
    answer=float(1 / np.sqrt(0.9 ** 2 + 48)),
    tol=0.02,
    explanation=f"At right angles the squares add up: after 48 additions the stream has size "
                f"\u221a(0.9\u00b2 + 48) \u2248 {np.sqrt(0.9 ** 2 + 48):.2f}, and block 48's addition of 1.0 "
                f"is 1 / {np.sqrt(0.9 ** 2 + 48):.2f} \u2248 {1 / np.sqrt(0.9 ** 2 + 48):.0%} of it. Block 1's "
                f"addition was 1.0 of a stream of \u221a(0.9\u00b2 + 1) \u2248 {np.sqrt(0.9 ** 2 + 1):.2f}, "
                f"about {1 / np.sqrt(0.9 ** 2 + 1):.0%}: each later block changes the stream less.",
    reveals=[
        r"√\s*\(\s*0\.9\s*²\s*\+\s*48\s*\)",
    ],
)

FADING_BELOW = 0.10        # the share NUMBER_FADING asks about


def first_block_below(share=FADING_BELOW, start=0.9, addition=1.0) -> int:
    """The first block whose addition is less than ``share`` of the stream it produces, additions
    of size ``addition`` at right angles to a stream that starts at ``start``."""
    n = 1
    while addition / np.sqrt(start ** 2 + n * addition ** 2) >= share:
        n += 1
    return n


NUMBER_FADING = Question(
    id="norms-number-fading",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A stream of size 0.9 passes pre-norm blocks, and each block adds a vector of size 1.0 at "
           "right angles to the stream. From which block on is a block's addition less than 10 % of "
           "the stream it produces? Give the number of the block.",
    answer=first_block_below(),
    tol=0.0,
    explanation=f"After n additions at right angles the stream has size \u221a(0.9\u00b2 + n), and "
                f"block n's addition of 1.0 is 1 / \u221a(0.81 + n) of it. That falls below 10 % once "
                f"0.81 + n passes 100, from block {first_block_below()}: to halve a late block's share, "
                "the stack must be about four times as deep.",
    reveals=[
        r"\b1\s*/\s*(√|sqrt)\s*\(?\s*(0\.81|0\.9\s*²)\s*\+\s*n\b",
        r"\bbelow 10\s?% (once|from block)\b",
    ],
)


PREDICT_TRAINING = Question(
    id="norms-predict-training",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Small decoders of 2, 6 and 12 blocks are trained for 400 steps, three seeds each. With "
           "post-norm and no warm-up (the learning rate at its full value from the first step), "
           "what happens?",
    choices=["at 12 blocks the loss stops being a number (it diverges) in most seeds; at 2 and 6 "
             "blocks it learns",
             "at 12 blocks the loss stays above the bigram loss (it stalls) in most seeds; at 2 and 6 "
             "blocks it learns",
             "at every depth the loss stays above the bigram loss (it stalls) in most seeds, while "
             "pre-norm learns",
             "at every depth it learns, about as fast as with warm-up and as fast as pre-norm"],
    answer=1,
    explanation="No run diverged, at any depth or with any placement. Post-norm without warm-up "
                "learned at 2 and 6 blocks; at 12 blocks it stalled in 2 of its 3 seeds, and the "
                "third fell below the bigram loss only late in the run. With warm-up, all three "
                "seeds of 12 blocks learned. The cell below prints every setting.",
    reveals=[
        r"\b12 blocks\b[^.]{0,30}\bstall(s|ed)?\b",
        r"\bstalled in 2 of (its )?3 seeds\b",
        r"\bno run diverged\b",
    ],
)


QUESTIONS = [PREDICT_STACK, NUMBER_FIVE, NUMBER_MEANS, NUMBER_LENGTH, PREDICT_ZERO_F, PREDICT_PLACEMENT,
             PREDICT_GRADIENT, PREDICT_TRAINING, PREDICT_STREAM, PREDICT_STREAM_WHY, PREDICT_STREAM_SUM,
             NUMBER_LATE_SHARE, NUMBER_FADING]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("norms-out-layer-norm", NOTEBOOK, "number",
             "LayerNorm (eps = 1e-5, no gain or shift) of the token [2, 4, 6, 8]: what is its first "
             "number? Two decimals are enough.",
             answer=float(layer_norm(np.array([2.0, 4.0, 6.0, 8.0]))[0]), tol=0.005,
             explanation="Mean 5, variance (9 + 1 + 1 + 9) / 4 = 5: (2 \u2212 5) / \u221a5 \u2248 \u22121.34."),
    Question("norms-out-axis", NOTEBOOK, "predict",
             "A batch of texts has shape (texts, tokens, numbers per token). LayerNorm in a "
             "transformer computes one mean and one variance for\u2026",
             choices=["each token, over its numbers (the last axis)",
                      "each feature, over the tokens of every text (the first two axes)",
                      "each text, over all its tokens' numbers (the last two axes)",
                      "each position, over the texts of the batch (the first axis)"],
             answer=0,
             explanation="Each token is normalised by its own numbers alone, so neither the other "
                         "tokens of its text nor the other texts of the batch change it.",
             reveals=[r"\beach token, over its numbers\b",
                      r"\bnormali[sz]ed by its own numbers\b"]),
    Question("norms-out-stream-growth", NOTEBOOK, "predict",
             "A pre-norm model of 48 blocks at initialisation: the stream starts at size 1 (its "
             "root mean square), and each block adds a vector of size about 1 in a direction "
             "unrelated to the stream's. About how large is the stream after the last block?",
             choices=["about 1: the norm before each block keeps it there",
                      "about 7: the squares of the additions add up",
                      "about 49: the sizes of the additions add up",
                      "about 0.1: the additions cancel each other"],
             answer=1,
             explanation="Additions in unrelated directions add like the sides of a right-angled "
                         "triangle: the squares add up, so the stream ends near \u221a(1 + 48) = 7. "
                         "The norms rescale only the copies the blocks read.",
             reveals=[r"\u221a\s*\(\s*1\s*\+\s*48\s*\)"]),
    Question("norms-out-float16", NOTEBOOK, "predict",
             "A token stored in float16 (largest number 65,504) holds the numbers 300, -200, 100 "
             "and 50. RMSNorm computes its squares in float16. What comes out?",
             choices=["the right result, since every one of the four numbers fits in float16",
                      "NaN in every place: the mean square rounds to 0, and 0 / 0 is NaN",
                      "zeros: 300\u00b2 overflows to infinity, and every number is divided by it",
                      "the right result to 2 significant digits: float16 rounds the squares"],
             answer=2,
             explanation="300\u00b2 = 90,000 is past 65,504 and becomes infinity; the mean of the "
                         "squares is then infinite, and each number divided by its root is 0. "
                         "Squaring a copy widened to 32 bits avoids it.",
             reveals=[r"\b90,?000\b[^.]{0,40}\b65,?504\b"]),
    Question("norms-out-qk-norm", NOTEBOOK, "predict",
             "Some recent models normalise each head's queries and keys before taking their scores "
             "(QK-norm). What does that prevent?",
             choices=["queries and keys that grow during training making the scores so large that "
                      "each row puts nearly all its weight on one key",
                      "the stream growing from block to block until the late blocks' additions are "
                      "a small share of it",
                      "a token reading the tokens after it, without the need for a causal mask",
                      "the softmax overflowing in 16 bits, without the need for its largest score "
                      "to be subtracted"],
             answer=0,
             explanation="Scores are dot products of queries and keys, so they grow with them, and "
                         "large scores make the softmax nearly one-hot. Normalised, the queries and "
                         "keys keep their size however the weights grow (a learned gain then sets "
                         "how sharp attention is). It does nothing for the stream, the mask or "
                         "the softmax's shift.",
             reveals=[r"\bnearly all (of a row's|its) weight on one key\b"]),
]
