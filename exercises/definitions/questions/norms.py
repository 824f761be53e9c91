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
        r"\b1\s*/\s*(√|sqrt)\s*\(?\s*(0\.81|0\.9\s*²)\s*\+\s*48",
    ],
)

QUESTIONS = [PREDICT_STACK, NUMBER_FIVE, NUMBER_MEANS, NUMBER_LENGTH, PREDICT_ZERO_F, PREDICT_PLACEMENT,
             PREDICT_GRADIENT, PREDICT_STREAM, PREDICT_STREAM_WHY, NUMBER_LATE_SHARE]


# ---------------------------------------------------------------- skip-ahead set (engine/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("norms-out-layer-norm", NOTEBOOK, "number",
             "LayerNorm (eps = 1e-5, no gain or shift) of the token [1, 3]: what is its first "
             "number? Two decimals are enough.",
             answer=float(layer_norm(np.array([1.0, 3.0]))[0]), tol=0.005,
             explanation="Mean 2, standard deviation 1: (1 \u2212 2) / 1."),
    Question("norms-out-rms-norm", NOTEBOOK, "number",
             "RMSNorm (eps = 1e-5, gain 1) of the token [3, 4]: what is its first number? Two "
             "decimals are enough.",
             answer=float(rms_norm(np.array([3.0, 4.0]))[0]), tol=0.005,
             explanation="The root mean square of 3 and 4 is \u221a12.5; RMSNorm divides by it and "
                         "subtracts nothing."),
    Question("norms-out-pre-norm", NOTEBOOK, "predict",
             "Which line is a pre-norm layer, as in most recent models?",
             choices=["x \u2190 x + f(norm(x))", "x \u2190 norm(x + f(x))", "x \u2190 f(norm(x))",
                      "x \u2190 norm(f(x))"],
             answer=0,
             explanation="Pre-norm normalises only the copy the layer reads; the stream is kept.",
             reveals=[r"x\s*(←|=)\s*x\s*\+\s*f\(\s*(layer_?)?norm\(\s*x\s*\)\s*\)"]),
    Question("norms-out-axis", NOTEBOOK, "predict",
             "LayerNorm in a transformer computes its mean and variance over\u2026",
             choices=["each token's own numbers (the last axis)",
                      "each column, across the tokens of the batch",
                      "the whole batch at once",
                      "the positions of one sentence"],
             answer=0,
             explanation="Each token is normalised by itself, so the batch never matters.",
             reveals=[r"\blast axis\b",
                      r"\beach token's own numbers\b",
                      r"\baxis\s*=?\s*-1\b"]),
]
