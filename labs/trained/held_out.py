"""What the three labs of notebook 05 share: the trained model (``lib.model``) run on its
held-out texts, cached, and perplexity per kind of prediction.

The perplexities pool every held-out text (``lib.model.heldout_texts``, 8 texts of 256 tokens),
so each kind rests on dozens of predictions or more; one watched prediction, the streams and the
logits' changes are those of the first text (``lib.model.heldout``). Every forward pass is kept
(read-only), so moving a control back to a setting already seen costs nothing; and the pooled
results of every setting a lab or notebook 05 offers are computed when the course is built
(``precomputed``), so a first visit looks them up instead of running the model on 8 texts.
"""

from __future__ import annotations

import json
from functools import lru_cache
from itertools import product

import numpy as np

from lib import model

from .precomputed import precomputed
from .settings import BASES, EPSILONS

# The kinds of prediction shown, as (label, names of the kinds in lib/trained/model.json).
GROUPS = (("verbs", ("verb",)), ("counting", ("count",)), ("copy", ("copy",)),
          ("reverse", ("reverse",)), ("sums and differences", ("sum", "difference")),
          ("all texts", None))
TRAINED = ("halves", 10000.0, "rms", 1e-5)      # pairing, base, norm and eps as trained
CONTEXT_WORDS = 9          # words of context shown before a watched prediction
WATCHED_TOP = 5            # the most probable words kept for a watched prediction
LAYERS = 4                 # the trained model's blocks (lib/trained/model.json), for the settings listed below
# Notebook 05's tables: the blocks left out one at a time and the positions (its ablation table),
# and the mismatched details (its mismatch table).
NOTEBOOK_SETTINGS = ({}, *({"skip": (i,)} for i in range(LAYERS)), {"positions": False},
                     {"pairing": "neighbours"}, {"base": 100_000.0}, {"norm": "layer"}, {"eps": 1e-3}, {"eps": 0.1})


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


def setting(skip=(), positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5) -> dict:
    """One setting of ``lib.model.forward`` written one way only (the blocks left out sorted, the
    numbers as floats; without positions, the RoPE pairing and base, which change nothing then,
    as trained), so that equal settings find the same precomputed result."""
    if not positions:
        pairing, base = TRAINED[0], TRAINED[1]
    return {"skip": tuple(sorted({int(i) for i in skip})), "positions": bool(positions), "pairing": str(pairing),
            "base": float(base), "norm": str(norm), "eps": float(eps)}


def _notebook_settings() -> list:
    return [setting(**s) for s in NOTEBOOK_SETTINGS]


@precomputed(_notebook_settings)
def _pooled_run(skip, positions, pairing, base, norm, eps) -> dict:
    logits_of = [_logits(text, skip, positions, pairing, base, norm, eps) for text in range(len(texts()))]
    trained = [_logits(text, (), True, *TRAINED) for text in range(len(texts()))]    # the kept streams' output
    losses, top, same, change = [], [], [], []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for t, logits, whole in zip(texts(), logits_of, trained):
            losses.append(model.token_losses(logits, t.ids))                    # (n - 1,)
            top.append(model.probabilities(logits)[:-1].max(axis=-1))            # (n - 1,)
            same.append(logits.argmax(-1) == whole.argmax(-1))                  # (n,)
            change.append(np.abs(logits - whole).max(axis=-1))                  # (n,)
    return {"losses": np.concatenate(losses), "top": np.concatenate(top), "same": np.concatenate(same),
            "change": np.concatenate(change)}


def pooled_run(**details) -> dict:
    """The model run as set (the switches of ``lib.model.forward``: skip, positions, pairing,
    base, norm, eps) on every held-out text, one text after the other: for every prediction
    (8 x 255) the loss -log p(right word) ("losses") and the probability of the top word ("top");
    for every position (8 x 256) whether the top word is the trained model's ("same") and the
    largest change of a logit from the trained model's ("change"). Read-only; for notebook 05's
    settings, computed when the course was built."""
    return _pooled_run(**setting(**details))


def _lab_settings() -> list:
    """Every setting the ablation lab (any blocks left out, positions on or off) and the
    mismatched-details lab (its sliders' and switches' values) can ask for."""
    found = [setting(skip=tuple(i for i in range(LAYERS) if not keep[i]), positions=positions)
             for keep in product((True, False), repeat=LAYERS) for positions in (True, False)]
    found += [setting(positions=positions, pairing=pairing, base=base, norm=norm, eps=eps)
              for positions, pairing, base, norm, eps in product((True, False), ("halves", "neighbours"), BASES,
                                                                ("rms", "layer"), EPSILONS)]
    return list({json_key(s): s for s in found}.values())


def json_key(s: dict) -> str:
    """A setting as text, the same for equal settings."""
    return json.dumps(s, sort_keys=True)


@precomputed(_lab_settings)
def _setting_perplexities(skip, positions, pairing, base, norm, eps) -> dict:
    return perplexities(pooled_losses(skip, positions, pairing, base, norm, eps))


def setting_perplexities(**details) -> dict:
    """``perplexities(pooled_losses(...))`` of one setting (the switches of ``lib.model.forward``):
    the perplexity per label of GROUPS over every held-out text; computed when the course was
    built for every setting the labs offer."""
    return _setting_perplexities(**setting(**details))


def _mismatch_settings() -> list:
    return [s for s in _lab_settings() if not s["skip"]]


@precomputed(_mismatch_settings)
def _first_text_changes(skip, positions, pairing, base, norm, eps) -> dict:
    full_logits, logits = run()[0], run(skip, positions, pairing, base, norm, eps)[0]
    with np.errstate(invalid="ignore"):
        return {"gap": np.abs(logits - full_logits).max(axis=-1),
                "agree": float(np.mean(logits.argmax(-1) == full_logits.argmax(-1)))}


def first_text_changes(**details) -> dict:
    """On the first held-out text, with one setting: the largest change of a logit at each
    position ("gap", (n,)) and the share of positions whose top word is the trained model's
    ("agree"); computed when the course was built for every setting the mismatch lab offers."""
    return _first_text_changes(**setting(**details))


def _ablation_settings() -> list:
    return [s for s in _lab_settings() if (s["pairing"], s["base"], s["norm"], s["eps"]) == TRAINED]


@precomputed(_ablation_settings)
def _watched_words(skip, positions, pairing, base, norm, eps) -> dict:
    probs = run(skip, positions, pairing, base, norm, eps)[1][held_out()[2]]       # (watched, vocab)
    top = np.argsort(-probs, axis=-1)[:, :WATCHED_TOP]
    right = held_out()[0][held_out()[2] + 1]
    return {"top": top.astype(np.int16), "top_p": np.take_along_axis(probs, top, axis=-1),
            "right_p": probs[np.arange(len(right)), right]}


def watched_words(**details) -> dict:
    """At every watched prediction of the first held-out text (``held_out()[2]``), with one
    setting: the ``WATCHED_TOP`` most probable words, best first ("top", (watched, 5)), their
    probabilities ("top_p") and the right word's ("right_p", (watched,)); computed when the
    course was built for every setting the ablation lab offers."""
    return _watched_words(**setting(**details))


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
