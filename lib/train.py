"""Training a tiny model live, with the course's own backward pass (``lib.backward``) and Adam.

The task: **copy the previous token.** A text is 8 tokens, each one of 8 random vectors of 16
numbers (RMS 1), with the sinusoidal position table added. At each position the model should
output the vector of the token before it (the first position: its own). The model is a stack of
``lib.block.random_stack`` blocks (RMSNorm without a gain, one causal attention head, GELU FFN),
read through a final RMSNorm; the loss is ½ · mean((RMSNorm(top) - target)²), the loss
``lib.backward.stack_gradients`` differentiates. To solve it, attention must learn to look one
position back: the previous-token head of the trained model (``lib.circuits``), grown here from
random weights.

Each step draws one text, computes the gradients and moves every weight by Adam's rule:

    m ← β₁ m + (1 - β₁) g          v ← β₂ v + (1 - β₂) g²          (running averages)
    W ← W - lr · m̂ / (√v̂ + ε)      m̂ = m / (1 - β₁ᵗ), v̂ = v / (1 - β₂ᵗ)  (t: the step)

with the learning rate rising linearly over the first ``warmup`` steps if asked. A model that
copies the current token instead (what the residual path gives for free) scores
``current_token_loss`` (0.76 for the default task); one that has learned the task scores near 0.

The switches matter as they do in deep models. The mean loss of the last 50 of 300 steps, over
seeds 0, 1 and 2: pre-norm at learning rate 0.01, 0.21 (0.47 at 0.03, three times larger);
post-norm at 0.01, 0.43, and with 50 steps of warm-up 0.30 (better in every seed), while pre-norm
with the same warm-up ends at 0.22.

    run = LiveTraining(placement="pre", lr=0.01)
    run.advance(30)          # 30 steps; their losses
    run.losses               # every loss so far
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ._checks import check_choice, check_non_negative, check_positive_int
from .backward import stack_gradients
from .block import random_stack
from .norm import rms_norm
from .positional import sinusoidal

NAMES = ("Wq", "Wk", "Wv", "Wo", "W_up", "W_down")       # the weights of a random stack's block


class CopyTask(NamedTuple):
    """table: (vocab, d) one vector per token, each of RMS 1; positions: (length, d) the
    sinusoidal position table added to a text's tokens."""
    table: np.ndarray
    positions: np.ndarray


def copy_task(d_model=16, length=8, vocab=8, *, seed=0):
    """The previous-token task: ``vocab`` token vectors drawn from ``default_rng(seed)`` and
    rescaled to RMS 1, and the sinusoidal table of ``length`` positions (``lib.positional``)."""
    d_model, length = check_positive_int(d_model, "d_model", even=True), check_positive_int(length, "length")
    table = np.random.default_rng(seed).normal(size=(check_positive_int(vocab, "vocab"), d_model))
    return CopyTask(rms_norm(table, eps=0.0), sinusoidal(length, d_model))


def draw(task, rng):
    """One text of the task from the generator ``rng``: (x, target), (length, d) each: x the
    tokens' vectors plus positions, target the previous token's vector at each position (the
    first token's own at position 0)."""
    tokens = rng.integers(len(task.table), size=len(task.positions))
    before = np.concatenate([tokens[:1], tokens[:-1]])
    return task.table[tokens] + task.positions, task.table[before]


def current_token_loss(task):
    """The expected loss of a model that outputs each token's own vector: 0 at position 0, and at
    the others ½ · mean((a - b)²) over every pair of tokens a, b drawn at random (0 when equal)."""
    table = task.table
    gaps = 0.5 * ((table[:, None, :] - table[None, :, :]) ** 2).mean(axis=-1)      # (vocab, vocab)
    length = len(task.positions)
    return float(gaps.mean() * (length - 1) / length)


class Adam(NamedTuple):
    """Adam's state: first, second: one dict per block, weight name -> the running average of its
    gradient and of its square (the weight's shape); steps: how many steps were taken."""
    first: list
    second: list
    steps: int


def adam_start(blocks):
    """Adam's state before the first step: every running average at zero."""
    zeros = [{name: np.zeros_like(getattr(b, name)) for name in NAMES} for b in blocks]
    return Adam(zeros, [dict(z) for z in zeros], 0)


def adam_step(blocks, gradients, state, lr, betas=(0.9, 0.999), eps=1e-8):
    """One Adam step: (new blocks, new state) from the blocks, their gradients (one dict per
    block, as ``lib.backward.Gradients.weights``) and the state (``Adam``). Nothing is changed in
    place. A weight of gradient g at the first step moves by lr · g / (|g| + eps): about lr,
    against the sign of g, whatever g's size."""
    (b1, b2), t = betas, state.steps + 1
    new_blocks, first, second = [], [], []
    for block, grads, m_old, v_old in zip(blocks, gradients, state.first, state.second):
        m = {name: b1 * m_old[name] + (1 - b1) * grads[name] for name in NAMES}
        v = {name: b2 * v_old[name] + (1 - b2) * grads[name] ** 2 for name in NAMES}
        moved = {name: getattr(block, name) - lr * (m[name] / (1 - b1 ** t)) / (np.sqrt(v[name] / (1 - b2 ** t)) + eps)
                 for name in NAMES}
        new_blocks.append(replace(block, **moved))
        first.append(m)
        second.append(v)
    return new_blocks, Adam(first, second, t)


def learning_rate(step, lr, warmup=0):
    """The learning rate at ``step`` (1, 2, ...): lr · step / warmup during the first ``warmup``
    steps, then lr (warmup 0: lr from the start). lr 0.01, warm-up 100: 0.0001 at step 1,
    0.005 at step 50, 0.01 from step 100 on."""
    return lr * min(1.0, step / warmup) if warmup else lr


class LiveTraining:
    """A run of the previous-token task that a lab advances a few steps at a time.

    depth blocks of ``random_stack(depth, d_model, d_ff, seed=seed)``; placement "pre" or "post";
    Adam with learning rate ``lr`` (warm-up over ``warmup`` steps, 0 for none); the task
    ``copy_task(d_model, length, vocab, seed=seed)`` and its texts drawn from
    ``default_rng(seed + 1)``. The same settings give the same losses."""

    def __init__(self, depth=2, placement="pre", lr=0.01, warmup=0, *, seed=0, d_model=16, d_ff=64, length=8,
                 vocab=8):
        self.placement = check_choice(placement, "placement", ("pre", "post"))
        self.lr, self.warmup = check_non_negative(lr, "lr"), check_positive_int(warmup, "warmup") if warmup else 0
        self.task = copy_task(d_model, length, vocab, seed=seed)
        self.blocks = random_stack(depth, d_model, check_positive_int(d_ff, "d_ff"), seed=seed)
        self.adam, self.rng, self.losses = adam_start(self.blocks), np.random.default_rng(seed + 1), []

    def step(self):
        """One step: draw a text, compute the loss and gradients, move the weights; return the loss."""
        x, target = draw(self.task, self.rng)
        g = stack_gradients(x, self.blocks, target, self.placement)
        rate = learning_rate(self.adam.steps + 1, self.lr, self.warmup)
        self.blocks, self.adam = adam_step(self.blocks, g.weights, self.adam, rate)
        self.losses.append(g.loss)
        return g.loss

    def advance(self, steps):
        """``steps`` steps; returns their losses, (steps,)."""
        return np.array([self.step() for _ in range(check_positive_int(steps, "steps"))])
