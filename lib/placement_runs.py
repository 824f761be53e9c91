"""Where the norm sits, in training: the loss curves of ``training/placement_runs.py``.

Small decoders (width 32, 2 heads) were trained with PyTorch on the course's toy language (Adam
at 1e-3, 400 steps of 16 sequences of 32 tokens), every run the same but for four switches: the
norm's place (``VARIANTS``: pre-norm, post-norm, or no norm in the blocks with Wo and W_down
damped by GPT-2's 1/√(2 · blocks), or with ReZero's α starting at 0), warm-up over 150 steps on
or off (the stacks without norms: off), the depth (2, 6 or 12 blocks) and the seed (1, 2, 3).
Each curve is the training loss averaged over every 10 steps; a run whose loss stopped being a
number ends in NaN.
The file is lib/trained/placement_runs.npz, served beside the trained model in the browser and
fetched the first time it is read (``lib.files``).

    r = runs()
    r.curves[r.index("post", False, 12, 1)]        # post-norm, no warm-up, 12 blocks, seed 1
    outcome(r.curves[0], r.bigram_loss)            # "learned", "stalled" or "diverged"
    summary()                                      # one row per setting: outcomes over the seeds

What the runs show (every loss the mean of the last 50 steps; the bigram loss is 1.94, the
unigram loss 3.57): no run diverged. Post-norm without warm-up stalled at 12 blocks in 2 of 3
seeds (3.27 and 3.39; the third reached 1.72, and got below 2.5 only at step 270); with warm-up all
three learned (1.55-1.68, below 2.5 by steps 210-250), and at 2 and 6 blocks post-norm learned
with or without it. Every pre-norm run learned, without warm-up fastest (below 2.5 by steps
60-70 at 12 blocks, ending at 1.40); so did every run with no norm in the blocks: with Wo and
W_down damped, fastest of all (steps 40-50 at 12 blocks, 1.42), and with ReZero (1.46).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import files

FILE = "placement_runs.npz"
VARIANTS = {"pre": "pre-norm: x + f(RMSNorm(x))",
            "post": "post-norm: RMSNorm(x + f(x))",
            "damped": "no norm, Wo and W_down damped by 1/sqrt(2 x blocks)",
            "rezero": "no norm, x + a f(x) with a starting at 0 (ReZero)"}
OUTCOMES = ("learned", "stalled", "diverged")
FINAL_POINTS = 5            # a run's final loss: the mean of its curve's last points


class PlacementRuns(NamedTuple):
    """Every run (R of them): variants (R,) a key of VARIANTS; warmup (R,) bool; depths, seeds (R,);
    curves (R, P) the mean training loss over each block of ``settings["every"]`` steps (NaN
    once the loss was not finite); steps (P,) the last step of each block; unigram_loss: the loss
    of predicting every token by its frequency in the training text alone; bigram_loss: by how
    often it followed the token before it; settings: the script's settings; seconds (R,) each
    run's CPU time."""
    variants: np.ndarray
    warmup: np.ndarray
    depths: np.ndarray
    seeds: np.ndarray
    curves: np.ndarray
    steps: np.ndarray
    unigram_loss: float
    bigram_loss: float
    settings: dict
    seconds: np.ndarray

    def index(self, variant, warmup, depth, seed):
        """The row of one run."""
        found = np.flatnonzero((self.variants == variant) & (self.warmup == bool(warmup)) & (self.depths == depth)
                               & (self.seeds == seed))
        if not found.size:
            raise ValueError(f"no run of {variant!r}, warm-up {bool(warmup)}, depth {depth}, seed {seed}")
        return int(found[0])


@lru_cache(maxsize=1)
def runs() -> PlacementRuns:
    """The runs of lib/trained/placement_runs.npz, read once; arrays read-only."""
    with files.load(FILE) as data:
        a = {name: np.asarray(data[name]) for name in data.files}
    settings = json.loads(str(a["settings"]))
    steps = np.arange(1, a["curves"].shape[1] + 1) * settings["every"]
    out = PlacementRuns(a["variants"].astype(str), a["warmup"].astype(bool), a["depths"].astype(np.int64),
                        a["seeds"].astype(np.int64), a["curves"].astype(np.float64), steps,
                        float(a["unigram_loss"]), float(a["bigram_loss"]), settings, a["seconds"].astype(np.float64))
    for array in (out.variants, out.warmup, out.depths, out.seeds, out.curves, out.steps, out.seconds):
        array.setflags(write=False)
    return out


def steps_to(curve, level):
    """The first recorded step (a multiple of 10) at which a curve is below ``level``, or None."""
    below = np.flatnonzero(np.asarray(curve, dtype=np.float64) < level)
    return int(runs().steps[below[0]]) if below.size else None


def final_loss(curve, points=FINAL_POINTS):
    """The mean of a curve's last ``points`` points (NaN if the run diverged)."""
    return float(np.mean(np.asarray(curve, dtype=np.float64)[-points:]))


def outcome(curve, bigram_loss):
    """"diverged" if the loss stopped being a number; "stalled" if its final loss is still above
    the bigram loss (about 1.9 nats here: the run has not even learned which token follows which;
    every run that learns ends near 1.4-1.7); "learned" otherwise."""
    final = final_loss(curve)
    if not np.isfinite(final):
        return "diverged"
    return "stalled" if final > bigram_loss else "learned"


class Setting(NamedTuple):
    """One setting over its seeds: variant, warmup, depth; outcomes {outcome: how many seeds};
    final: the median final loss of the seeds that did not diverge (NaN if none)."""
    variant: str
    warmup: bool
    depth: int
    outcomes: dict
    final: float


def summary():
    """One Setting per (variant, warm-up, depth), in the file's order."""
    r = runs()
    rows = []
    for key in dict.fromkeys(zip(r.variants.tolist(), r.warmup.tolist(), r.depths.tolist())):
        chosen = (r.variants == key[0]) & (r.warmup == key[1]) & (r.depths == key[2])
        found = [outcome(curve, r.bigram_loss) for curve in r.curves[chosen]]
        finals = [final_loss(curve) for curve in r.curves[chosen]]
        kept = [f for f in finals if np.isfinite(f)]
        rows.append(Setting(*key, {o: found.count(o) for o in OUTCOMES}, float(np.median(kept)) if kept else np.nan))
    return rows
