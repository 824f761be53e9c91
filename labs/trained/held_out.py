"""What the three labs of notebook 05 share: the trained model (``lib.model``) run on its
held-out text, cached, and perplexity per kind of prediction.

Every forward pass is kept (read-only), so moving a control back to a setting already seen costs
nothing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lib import model

# The kinds of prediction shown, as (label, names of the kinds in lib/trained/model.json).
GROUPS = (("verbs", ("verb",)), ("counting", ("count",)), ("copy", ("copy",)),
          ("reverse", ("reverse",)), ("sums", ("sum",)), ("differences", ("difference",)),
          ("whole text", None))
CONTEXT_WORDS = 9          # words of context shown before a watched prediction


@lru_cache(maxsize=1)
def held_out():
    """The held-out text as (ids, masks, watched, target_kinds): its tokens (n,); for each label
    of GROUPS a mask over the n - 1 predictions; the positions of the predictions the text
    decides (not free, grammar or end); and each prediction's kind."""
    h = model.heldout()
    names = model.info()["kinds"]
    target_kinds = [names[k] for k in h.kinds[1:]]
    masks = {}
    for label, kinds in GROUPS:
        masks[label] = (np.ones(len(target_kinds), dtype=bool) if kinds is None
                        else np.array([k in kinds for k in target_kinds]))
    watched = np.flatnonzero(~np.isin(target_kinds, ["free", "grammar", "end"]))  # decided ones
    return h.ids, masks, watched, target_kinds


@lru_cache(maxsize=1)
def trace():
    """The whole model's run on the held-out text with every stream kept (``lib.model.forward``
    with trace=True), read-only."""
    t = model.forward(held_out()[0], trace=True)
    for array in t:
        array.setflags(write=False)
    return t


@lru_cache(maxsize=64)
def run(skip=(), positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5):
    """The logits (n, vocab), probabilities (n, vocab) and per-prediction losses (n - 1,) of the
    model on the held-out text for one setting of ``lib.model.forward`` (cached, read-only)."""
    ids = held_out()[0]
    if skip and positions and (pairing, base, norm, eps) == ("halves", 10000.0, "rms", 1e-5):
        # The blocks before the first one left out compute what they always do: start from the
        # whole model's stream there and run only the rest.
        x = trace().streams[min(skip)]
        for number, run_block in enumerate(model.blocks()):
            if number >= min(skip) and number not in skip:
                x = run_block(x)
        logits = model.output_logits(x)
    else:
        logits = model.forward(ids, skip=skip, positions=positions, pairing=pairing, base=base,
                               norm=norm, eps=eps)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probs = model.probabilities(logits)
        losses = model.token_losses(logits, ids)
    for array in (logits, probs, losses):
        array.setflags(write=False)
    return logits, probs, losses


def perplexities(losses) -> dict:
    """Perplexity (exp of the mean loss) per label of GROUPS; NaN for a kind the text lacks."""
    masks = held_out()[1]
    with np.errstate(over="ignore", invalid="ignore"):
        return {label: float(np.exp(losses[mask].mean())) if mask.any() else float("nan")
                for label, mask in masks.items()}


def context(position: int) -> str:
    """The words before prediction ``position`` (which guesses token position + 1)."""
    ids = held_out()[0]
    start = max(0, position + 1 - CONTEXT_WORDS)
    return ("\u2026 " if start > 0 else "") + model.decode(ids[start:position + 1])
