"""lib.train: Adam steps with the course's backward pass equal PyTorch's Adam on the same stack and
texts, the task is what it says, and a run learns, with switches that matter."""

import math

import numpy as np
import pytest
import torch

from lib import train
from lib.block import random_stack

NAMES = train.NAMES


def torch_rms(x):
    return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-5)


def torch_loss(x, weights, target, placement):
    """½ · mean((RMSNorm(top) - target)²) of the stack in PyTorch (one head, causal, exact GELU)."""
    h = torch.tensor(x)
    future = torch.triu(torch.ones(len(x), len(x), dtype=torch.bool), 1)

    def attention(a, Wq, Wk, Wv, Wo):
        scores = ((a @ Wq) / math.sqrt(Wq.shape[1])) @ (a @ Wk).T
        return torch.softmax(scores.masked_fill(future, -math.inf), -1) @ (a @ Wv) @ Wo

    def ffn(a, W_up, W_down):
        return torch.nn.functional.gelu(a @ W_up) @ W_down

    for w in weights:
        for part, args in ((attention, w[:4]), (ffn, w[4:])):
            h = h + part(torch_rms(h), *args) if placement == "pre" else torch_rms(h + part(h, *args))
    return 0.5 * ((torch_rms(h) - torch.tensor(target)) ** 2).mean()


@pytest.mark.parametrize("placement, warmup", [("pre", 0), ("post", 0), ("pre", 4)])
def test_training_steps_equal_pytorch_s_adam_on_the_same_stack_and_texts(placement, warmup):
    run = train.LiveTraining(depth=2, placement=placement, lr=0.02, warmup=warmup, seed=3)
    weights = [[torch.tensor(getattr(b, n), requires_grad=True) for n in NAMES] for b in run.blocks]
    optimiser = torch.optim.Adam([w for ws in weights for w in ws], lr=0.02, betas=(0.9, 0.999), eps=1e-8)
    texts = np.random.default_rng(3 + 1)                        # the run's texts, drawn alike
    for step in range(1, 7):
        x, target = train.draw(run.task, texts)
        for group in optimiser.param_groups:
            group["lr"] = 0.02 * min(1.0, step / warmup) if warmup else 0.02
        loss = torch_loss(x, weights, target, placement)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        assert run.step() == pytest.approx(loss.item(), rel=1e-10)
    for block, theirs in zip(run.blocks, weights):
        for name, w in zip(NAMES, theirs):
            assert np.allclose(getattr(block, name), w.detach().numpy(), rtol=1e-8, atol=1e-12), name
    assert run.adam.steps == 6 and len(run.losses) == 6


def test_the_first_adam_step_moves_every_weight_by_about_the_learning_rate():
    blocks = random_stack(1, 8, 16, seed=0)
    rng = np.random.default_rng(1)
    grads = [{n: rng.normal(size=getattr(blocks[0], n).shape) for n in NAMES}]
    state = train.adam_start(blocks)
    moved, after = train.adam_step(blocks, grads, state, lr=0.01)
    for n in NAMES:
        change = getattr(moved[0], n) - getattr(blocks[0], n)
        g = grads[0][n]
        assert np.allclose(change, -0.01 * g / (np.abs(g) + 1e-8), rtol=1e-12, atol=0), n
        assert np.allclose(change, -0.01 * np.sign(g), rtol=1e-3), n
        assert np.array_equal(state.first[0][n], np.zeros_like(change))           # the old state is unchanged
        assert np.allclose(after.first[0][n], 0.1 * grads[0][n]) and np.allclose(after.second[0][n], 0.001 * grads[0][n] ** 2)
    assert after.steps == 1 and state.steps == 0


def test_the_learning_rate_with_and_without_warm_up():
    assert [train.learning_rate(s, 0.01, 100) for s in (1, 50, 100, 400)] == pytest.approx([1e-4, 0.005, 0.01, 0.01])
    assert train.learning_rate(1, 0.01) == train.learning_rate(1000, 0.01, 0) == 0.01


def test_the_task_asks_for_the_previous_token():
    task = train.copy_task(seed=2)
    assert task.table.shape == (8, 16) and task.positions.shape == (8, 16)
    assert np.allclose(np.sqrt((task.table ** 2).mean(-1)), 1)
    rng = np.random.default_rng(0)
    x, target = train.draw(task, rng)
    tokens = np.random.default_rng(0).integers(8, size=8)
    assert np.allclose(x, task.table[tokens] + task.positions)
    assert np.allclose(target[1:], task.table[tokens[:-1]]) and np.allclose(target[0], task.table[tokens[0]])


def test_the_current_token_loss_is_what_copying_the_current_token_scores():
    task = train.copy_task()
    rng = np.random.default_rng(5)
    losses = []
    for _ in range(4000):
        x, target = train.draw(task, rng)
        losses.append(0.5 * ((x - task.positions - target) ** 2).mean())
    assert train.current_token_loss(task) == pytest.approx(np.mean(losses), rel=0.02)
    assert train.current_token_loss(task) == pytest.approx(0.7618, abs=1e-4)


def test_a_run_learns_to_look_one_token_back():
    """Pre-norm at learning rate 0.01: within 300 steps the loss falls below what copying the
    current token scores, to under half of where it started; the same settings, the same losses."""
    run = train.LiveTraining()
    losses = run.advance(300)
    first, last = losses[:50].mean(), losses[-50:].mean()
    assert last < 0.5 * first and last < 0.5 * train.current_token_loss(run.task)
    assert np.array_equal(train.LiveTraining().advance(20), losses[:20])
    assert run.losses == losses.tolist()


def final_losses(seeds=(0, 1, 2), **settings):
    """The mean loss of the last 50 of 300 steps, one per seed."""
    return np.array([train.LiveTraining(seed=seed, **settings).advance(300)[-50:].mean() for seed in seeds])


def test_the_switches_matter_as_in_deep_models():
    """Over three seeds, 300 steps each (the means: pre-norm 0.21 at learning rate 0.01, 0.47 at 0.03;
    post-norm 0.43, with 50 steps of warm-up 0.30; pre-norm with warm-up 0.22): a learning rate
    three times larger learns far less; post-norm learns less than pre-norm at the same rate, and
    warm-up helps post-norm in every seed while pre-norm does as well without it."""
    pre, pre_fast = final_losses(lr=0.01), final_losses(lr=0.03)
    post, post_warm, pre_warm = final_losses(placement="post"), final_losses(placement="post", warmup=50), \
        final_losses(warmup=50)
    assert (pre_fast > 1.5 * pre).all()
    assert (post > pre).all() and (post_warm < post).all()
    assert abs(pre_warm.mean() - pre.mean()) < 0.03
    assert [round(float(a.mean()), 2) for a in (pre, pre_fast, post, post_warm, pre_warm)] == [0.21, 0.47, 0.43, 0.30, 0.22]


@pytest.mark.parametrize("bad, message", [(dict(placement="none"), "placement should be one of 'pre', 'post'"),
                                          (dict(lr=-1), "lr should be a number of at least 0"),
                                          (dict(warmup=-5), "warmup should be a whole number"),
                                          (dict(depth=0), "depth should be a whole number"),
                                          (dict(d_model=15), "d_model should be even")])
def test_bad_settings_are_refused_in_words(bad, message):
    with pytest.raises(ValueError, match=message):
        train.LiveTraining(**bad)
    with pytest.raises(ValueError, match="steps should be a whole number"):
        train.LiveTraining().advance(0)


COUNTED = r"""
import json
from benchmarks import flops
count = flops.install()
from lib import train
found = {}
for depth in (1, 2):
    run = train.LiveTraining(depth=depth)
    run.step()
    count.reset()
    run.step()
    found[depth] = dict(count.by_type)
print(json.dumps(found))
"""


def test_a_step_s_matrix_work_lets_a_frame_hold_many_steps(tmp_path):
    """The matrix products of one step, counted by benchmarks/flops.py (float64): 264,192 floating-
    point operations per block of 16 numbers on 8 tokens (forward, the backward pass's own forward
    and the backward pass), so at least 20 steps of 2 blocks fit the budget of one lab update."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", COUNTED], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {depth: by_type["float64"][0] for depth, by_type in found.items()} == {"1": 264_192, "2": 528_384}
    budget = json.loads((root / "benchmarks" / "budget.json").read_text(encoding="utf-8"))["budgets"]["update"]
    assert budget["float64"] >= 20 * 528_384, f"the update budget holds {budget['float64'] / 528_384:.1f} steps"
