"""What the three labs of notebook 05 share: the trained model (``lib.model``) run on its
held-out texts, cached, and perplexity per kind of prediction.

The perplexities pool every held-out text (``lib.model.heldout_texts``, 8 texts of 256 tokens),
so each kind rests on dozens of predictions or more; one watched prediction, the streams and the
logits' changes are those of the first text (``lib.model.heldout``). Every forward pass is kept
(read-only), so moving a control back to a setting already seen costs nothing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lib import model

# The kinds of prediction shown, as (label, names of the kinds in lib/trained/model.json).
GROUPS = (("verbs", ("verb",)), ("counting", ("count",)), ("copy", ("copy",)),
          ("reverse", ("reverse",)), ("sums and differences", ("sum", "difference")),
          ("all texts", None))
TRAINED = ("halves", 10000.0, "rms", 1e-5)      # pairing, base, norm and eps as trained
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
def texts() -> tuple:
    """Every held-out text (``lib.model.heldout_texts``), the first being ``held_out()``'s."""
    return model.heldout_texts()


@lru_cache(maxsize=8)
def _trace(text: int):
    t = model.forward(texts()[text].ids, trace=True)
    for array in t:
        array.setflags(write=False)
    return t


def trace():
    """The whole model's run on the first held-out text with every stream kept
    (``lib.model.forward`` with trace=True), read-only."""
    return _trace(0)


@lru_cache(maxsize=8)
def _whole_streams(text: int) -> tuple:
    """The whole model as trained on held-out text number ``text``: the stream before the first
    block and after each block, read-only (the same numbers as ``lib.model.forward``)."""
    streams = [model.embed(texts()[text].ids)]                          # each (n, d)
    for run_block in model.blocks():
        streams.append(run_block(streams[-1]))
    for stream in streams:
        stream.setflags(write=False)
    return tuple(streams)


def _logits(text: int, skip, positions, pairing, base, norm, eps):
    """The logits (n, vocab) of held-out text number ``text`` for one setting."""
    ids = texts()[text].ids
    if positions and (pairing, base, norm, eps) == TRAINED:
        # The blocks before the first one left out compute what they always do: start from the
        # whole model's stream there (kept, computed once per text) and run only the rest.
        start = min(skip, default=len(model.blocks()))
        x = _whole_streams(text)[start]
        for number, run_block in enumerate(model.blocks()):
            if number >= start and number not in skip:
                x = run_block(x)
        return model.output_logits(x)
    return model.forward(ids, skip=skip, positions=positions, pairing=pairing, base=base, norm=norm, eps=eps)


@lru_cache(maxsize=64)
def run(skip=(), positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5):
    """The logits (n, vocab), probabilities (n, vocab) and per-prediction losses (n - 1,) of the
    model on the first held-out text for one setting of ``lib.model.forward`` (cached, read-only)."""
    logits = _logits(0, skip, positions, pairing, base, norm, eps)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probs = model.probabilities(logits)
        losses = model.token_losses(logits, held_out()[0])
    for array in (logits, probs, losses):
        array.setflags(write=False)
    return logits, probs, losses


@lru_cache(maxsize=64)
def pooled_losses(skip=(), positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5):
    """The per-prediction losses of every held-out text for one setting, one after the other
    (8 x 255,), read-only; the first text's come from ``run``."""
    parts = [run(skip, positions, pairing, base, norm, eps)[2]]
    for text in range(1, len(texts())):
        logits = _logits(text, skip, positions, pairing, base, norm, eps)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            parts.append(model.token_losses(logits, texts()[text].ids))
    losses = np.concatenate(parts)
    losses.setflags(write=False)
    return losses


@lru_cache(maxsize=1)
def pooled_masks() -> dict:
    """For each label of GROUPS, a mask over the pooled predictions of ``pooled_losses``."""
    names = model.info()["kinds"]
    kinds = np.array([names[k] for text in texts() for k in text.kinds[1:]])
    return {label: (np.ones(len(kinds), dtype=bool) if members is None else np.isin(kinds, members))
            for label, members in GROUPS}


def counts() -> dict:
    """How many predictions each label of GROUPS rests on, over every held-out text."""
    return {label: int(mask.sum()) for label, mask in pooled_masks().items()}


def perplexities(losses) -> dict:
    """Perplexity (exp of the mean loss) per label of GROUPS, from ``pooled_losses``; NaN for a
    kind no text has. Notebooks saved from earlier releases read the names of those days too:
    "whole text" (now "all texts"), "sums" and "differences" (now one kind); they are kept."""
    masks = {**pooled_masks(), **_earlier_masks()}
    with np.errstate(over="ignore", invalid="ignore"):
        return {label: float(np.exp(losses[mask].mean())) if mask.any() else float("nan")
                for label, mask in masks.items()}


@lru_cache(maxsize=1)
def _earlier_masks() -> dict:
    names = model.info()["kinds"]
    kinds = np.array([names[k] for text in texts() for k in text.kinds[1:]])
    return {"whole text": np.ones(len(kinds), dtype=bool), "sums": kinds == "sum",
            "differences": kinds == "difference"}


def context(position: int) -> str:
    """The words before prediction ``position`` (which guesses token position + 1)."""
    ids = held_out()[0]
    start = max(0, position + 1 - CONTEXT_WORDS)
    return ("\u2026 " if start > 0 else "") + model.decode(ids[start:position + 1])
