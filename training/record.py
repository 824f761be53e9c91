"""What ``train.py`` records while the model learns, at every checkpoint: lib/trained/training_record.npz.

At step 0 (the model as initialised) and every ``log_every`` steps, with gradients off and
nothing drawn at random (so the training itself runs exactly as without the record, and its
weights come out bit for bit the same), it keeps:

* the loss and accuracy by kind of prediction on the eight held-out texts
  (``lib.circuits.kind_scores``; the copy accuracy is the "copy" kind's);
* every head's attention weights on the fixed probe texts ``PROBES`` (a copy task each),
  summed up per head as its previous-token and induction scores (``lib.circuits.head_scores``),
  and as full maps at the steps ``MAP_STEPS``;
* the K-, Q- and V-composition of every pair of heads in different blocks
  (``lib.circuits.composition``, from the weights alone).

The scores are computed by the course's own functions in ``lib.circuits`` from PyTorch's logits
and weights, so the record's last checkpoint is what those functions give for the committed
weights (``tests/test_training_record.py``). Small numbers are kept as float16: 0.3 % rounding.
"""

import math
import time

import numpy as np
import torch

from lib import circuits
from training import corpus

# Copy tasks of the toy language, their letters all different within a sentence.
PROBES = ("copy b d a e | b d a e . copy h c f g | h c f g .",
          "reverse b d a | a d b . copy g e h c f | g e h c f .")
MAP_STEPS = (0, 100, 200, 400, 600, 800, 850, 900, 950, 1000, 1200, 1800)


def probe_ids():
    """The probe texts as token ids, one row each: (probes, n), all of the same length."""
    return np.array([[corpus.INDEX[w] for w in text.split()] for text in PROBES], dtype=np.int64)


def attention_weights(model, ids, rope):
    """Every head's attention weights on each text of ``ids`` (texts, n), as the model's blocks
    compute them (queries and keys of the normalised stream, RoPE, scaled, causal softmax):
    (texts, layers, heads, n, n)."""
    x = model.embedding(ids)
    maps = []
    for block in model.blocks:
        h = block.attention_norm(x)
        b, t, d = h.shape
        q, k = (w(h).view(b, t, block.heads, d // block.heads).transpose(1, 2) for w in (block.Wq, block.Wk))
        q, k = rope(q, block.base), rope(k, block.base)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // block.heads)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        maps.append(scores.masked_fill(future, -math.inf).softmax(-1))
        x = block(x)
    return torch.stack(maps, dim=1)


class Recorder:
    """Keeps one row per checkpoint; ``save`` writes them. texts: (ids, kinds), (texts, n) arrays
    of the held-out texts; numpy_weights: the training script's ``numpy_weights``."""

    def __init__(self, config, texts, numpy_weights, rope):
        self.config, self.numpy_weights, self.rope = config, numpy_weights, rope
        self.ids, self.kinds = (np.asarray(a) for a in texts)
        self.probes = probe_ids()
        self.rows = {name: [] for name in ("steps", "loss", "accuracy", "previous", "induction", "k", "q", "v")}
        self.maps, self.seconds = [], 0.0

    @torch.no_grad()
    def checkpoint(self, step, model):
        """Record the model as it is after ``step`` steps (0: as initialised)."""
        start = time.perf_counter()
        logits = model(torch.tensor(self.ids)).numpy()                            # (texts, n, vocab)
        scores = circuits.kind_scores(logits, self.ids, self.kinds, len(corpus.KINDS))
        maps = attention_weights(model, torch.tensor(self.probes), self.rope).numpy()   # (probes, L, H, n, n)
        heads = [circuits.head_scores(m, ids) for m, ids in zip(maps, self.probes)]
        composed = circuits.composition(self.numpy_weights(model), self.config["heads"])
        row = {"steps": step, "loss": scores.loss, "accuracy": scores.accuracy,
               "previous": [h.previous for h in heads], "induction": [h.induction for h in heads],
               "k": composed.k, "q": composed.q, "v": composed.v}
        for name, value in row.items():
            self.rows[name].append(value)
        if step in MAP_STEPS:
            self.maps.append(maps)
        self.counts = scores.counts
        self.seconds += time.perf_counter() - start

    def save(self, path, training_seconds):
        """Write the record to ``path``, with the seconds training took in all and recording of them."""
        arrays = {name: np.array(rows, dtype=np.int16 if name == "steps" else np.float16)
                  for name, rows in self.rows.items()}
        np.savez_compressed(path, **arrays, counts=self.counts.astype(np.int16), probes=self.probes.astype(np.int8),
                            map_steps=np.array(MAP_STEPS, dtype=np.int16), maps=np.array(self.maps, dtype=np.float16),
                            seconds=np.array([training_seconds, self.seconds], dtype=np.float32))
