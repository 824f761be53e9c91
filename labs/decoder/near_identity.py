"""Blocks that start near the identity (notebook 04): with every matrix drawn small, as a model's
weights start, a stack of pre-norm blocks passes its input through almost unchanged. A model
without a view: the notebook plots its numbers.
"""

from __future__ import annotations

import numpy as np

from lib.block import decoder, random_block_weights
from lib.weights import random_weights

from .layer_flow import FLOW_D, FLOW_FF, FLOW_HEADS


def near_identity_model(n_blocks: int = 4, scale: float = 0.02, seed: int = 2) -> dict:
    """8 tokens of 16 numbers (drawn at scale 0.35 from ``seed``) through ``n_blocks`` pre-norm blocks
    whose matrices are all drawn at ``scale`` (0.02 is GPT-2's starting scale), no final norm.
    Returns the average length of a token before and after each block and the largest change of
    any number per block."""
    x, = random_weights([(8, FLOW_D)], seed=seed, scale=0.35)
    blocks = [random_block_weights(FLOW_D, FLOW_FF, FLOW_HEADS, seed=seed + 1 + i, scale=scale)
              for i in range(int(n_blocks))]
    streams = decoder(x, blocks, final_norm=False).streams
    lengths = np.array([np.linalg.norm(s, axis=-1).mean() for s in streams])
    changes = np.array([np.abs(b - a).max() for a, b in zip(streams, streams[1:])])
    return {"lengths": lengths, "changes": changes, "largest_number": float(np.abs(x).max())}
