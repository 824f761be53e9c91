"""The trained model while it learned: what ``training/train.py`` recorded at every checkpoint.

From step 0 (as initialised) to the last step, every 50 steps, the training script kept
(``training/record.py``) the loss and accuracy by kind of prediction on the eight held-out texts,
each head's previous-token and induction scores on two fixed probe texts with a copy task
(``lib.circuits.head_scores``), the K-, Q- and V-composition of every pair of heads in different
blocks (``lib.circuits.composition``), and every head's full attention maps on the probes at a
dozen steps. The file is lib/trained/training_record.npz, served beside the weights in the browser
and fetched the first time it is read (``lib.files``).

    r = record()
    r.steps                                       # (37,): 0, 50, ..., 1800
    r.accuracy[:, r.kinds.index("copy")]          # the copy accuracy at every checkpoint
    first_step(r.accuracy[:, r.kinds.index("copy")], 0.5)    # when copying appears
    r.previous[:, 0, 0, 3]                        # block 1's head 4 on the first probe, over training

What the record shows (tests/test_training_record.py pins it): counting, grammar and sentence ends
are learned by step 100, sums and differences by step 500. The copy predictions sit at ln 8 = 2.08
(a letter, any of the eight) until step 400; their accuracy reaches 0.5 at step 850 and 0.9 at
step 1050. Block 1's head 4 becomes a previous-token head first, by step 100 (score 0.13, an even
spread, to 0.44 and 0.43 on the two probes); block 2's head 2 becomes an induction head between
steps 850 and 1000 (below 0.16 until step 850, 0.26 and 0.29 at step 950, 0.33 and 0.45 at the
end), while the copy accuracy goes from 0.56 to 0.90. The composition of the weights alone does not single the pair out (its
K-composition ends at 0.17, the mean of all pairs 0.15); running the model does: without block 1's
head 3 or 4, block 2's head 2 loses its induction pattern (``lib.circuits.keys_without``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import files, model

FILE = "training_record.npz"


class TrainingRecord(NamedTuple):
    """The record (C checkpoints, 9 kinds of prediction, P probe texts of n tokens, L blocks of H
    heads, M steps with full maps). Numbers as float64, recorded as float16 (about 3 significant digits).

    steps: (C,) the step of each checkpoint, 0 for the model as initialised.
    kinds: the names of the kinds of prediction (``model.info()["kinds"]``); counts: (kinds,)
    how many predictions of each kind the eight held-out texts hold.
    loss, accuracy: (C, kinds) mean loss and share predicted right, by kind, on those texts.
    probes: (P, n) the probe texts' token ids.
    previous, induction: (C, P, L, H) each head's scores on each probe (``lib.circuits.HeadScores``).
    k, q, v: (C, L, H, L, H) composition of head [i, h] into the later head [j, g], NaN unless i < j.
    map_steps: (M,) the steps with full maps; maps: (M, P, L, H, n, n) every head's attention weights.
    seconds: (training in all, recording alone), the seconds the recorded run took."""
    steps: np.ndarray
    kinds: list
    counts: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    probes: np.ndarray
    previous: np.ndarray
    induction: np.ndarray
    k: np.ndarray
    q: np.ndarray
    v: np.ndarray
    map_steps: np.ndarray
    maps: np.ndarray
    seconds: np.ndarray


@lru_cache(maxsize=1)
def record() -> TrainingRecord:
    """The record of lib/trained/training_record.npz, read once; its arrays are read-only."""
    with files.load(FILE) as data:
        arrays = {name: np.asarray(data[name]) for name in data.files}
    fields = {name: (array.astype(np.int64) if array.dtype.kind == "i" else array.astype(np.float64))
              for name, array in arrays.items()}
    for array in fields.values():
        array.setflags(write=False)
    return TrainingRecord(kinds=list(model.info()["kinds"]), **fields)


def first_step(values, level):
    """The first recorded step at which ``values`` (C,), one per checkpoint, reach ``level``, or
    None if they never do. The copy accuracy [0.0, 0.1, 0.6, 1.0] at steps 0, 50, 100, 150
    reaches 0.5 at step 100."""
    values = np.asarray(values, dtype=np.float64)
    steps = record().steps
    if values.shape != steps.shape:
        raise ValueError(f"values should hold one number per checkpoint, shape {steps.shape}, got {values.shape}")
    reached = np.flatnonzero(values >= level)
    return int(steps[reached[0]]) if reached.size else None


def maps_at(step):
    """Every head's attention maps on the probes at ``step`` (one of ``record().map_steps``):
    (P, L, H, n, n)."""
    r = record()
    where = np.flatnonzero(r.map_steps == int(step))
    if not where.size:
        raise ValueError(f"step should be one of the steps with maps, {', '.join(map(str, r.map_steps))}; got {step!r}")
    return r.maps[where[0]]
