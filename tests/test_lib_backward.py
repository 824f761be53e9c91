"""lib.backward: every gradient of the hand-written backward pass equals PyTorch's automatic
differentiation of the same stack, step by step and for a whole stack, pre-norm and post-norm."""

import math

import numpy as np
import pytest
import torch

from lib.backward import (attention_backward, block_backward, ffn_backward, gelu_derivative, placement_gradients,
                          rms_norm_backward, stack_gradients)
from lib.block import BlockWeights, decoder, norm_placement_experiment, random_stack
from lib.weights import random_weights

NAMES = ("Wq", "Wk", "Wv", "Wo", "W_up", "W_down")


def t(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def torch_rms(x, eps=1e-5):
    return x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps)


def torch_attention(a, Wq, Wk, Wv, Wo, causal=True):
    q, k, v = a @ Wq, a @ Wk, a @ Wv
    scores = (q / math.sqrt(q.shape[-1])) @ k.T
    if causal:
        future = torch.triu(torch.ones(len(a), len(a), dtype=torch.bool), 1)
        scores = scores.masked_fill(future, -math.inf)
    return torch.softmax(scores, -1) @ v @ Wo


def torch_ffn(a, W_up, W_down):
    return torch.nn.functional.gelu(a @ W_up) @ W_down            # exact GELU (erf)


def torch_stack(x, blocks, target, placement, eps=1e-5):
    """The loss of lib.backward.stack_gradients, in PyTorch: (loss, input, weights per block)."""
    x = t(x, grad=True)
    weights = [[t(getattr(b, n), grad=True) for n in NAMES] for b in blocks]
    h = x
    for w in weights:
        for part, args in ((torch_attention, w[:4]), (torch_ffn, w[4:])):
            h = h + part(torch_rms(h, eps), *args) if placement == "pre" else torch_rms(h + part(h, *args), eps)
    loss = 0.5 * ((torch_rms(h, eps) - t(target)) ** 2).mean()
    loss.backward()
    return float(loss.detach()), x, weights


def close(ours, theirs):
    theirs = theirs.detach().numpy()
    return np.allclose(ours, theirs, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(theirs).max()))


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_a_stack_s_gradients_equal_pytorch_s(placement):
    blocks = random_stack(4, 8, 20, seed=3)
    x, target = random_weights([(6, 8), (6, 8)], seed=9, scale=1.0)
    g = stack_gradients(x, blocks, target, placement)
    loss, x_t, weights = torch_stack(x, blocks, target, placement)
    assert g.loss == pytest.approx(loss, rel=1e-12)
    for ours, theirs in zip(g.weights, weights):
        assert set(ours) == set(NAMES)
        for name, w in zip(NAMES, theirs):
            assert ours[name].shape == w.shape and close(ours[name], w.grad), (placement, name)
    assert close(g.streams[0], x_t.grad)
    assert len(g.streams) == len(blocks) + 1 and len(g.weights) == len(blocks)


def test_the_gradient_after_each_block_equals_pytorch_s():
    """streams[i] is the gradient with respect to the stream after block i: PyTorch's, with the
    stream after block i made a leaf."""
    blocks = random_stack(3, 8, 16, seed=5)
    x, target = random_weights([(5, 8), (5, 8)], seed=2, scale=1.0)
    g = stack_gradients(x, blocks, target, "pre")
    streams = decoder(x, blocks, placement="pre", final_norm=False).streams
    for i in range(len(blocks) + 1):
        _loss, leaf, _w = torch_stack(streams[i], blocks[i:], target, "pre")
        assert close(g.streams[i], leaf.grad), i


def test_each_reverse_step_equals_pytorch_s():
    rng = np.random.default_rng(0)
    x, d_out = rng.normal(size=(5, 8)) * 3.0, rng.normal(size=(5, 8))
    x_t = t(x, grad=True)
    torch_rms(x_t, 1e-3).backward(t(d_out))
    assert close(rms_norm_backward(x, d_out, eps=1e-3), x_t.grad)

    w = random_stack(1, 8, 12, seed=7)[0]
    for causal in (True, False):
        a = t(x, grad=True)
        Ws = [t(getattr(w, n), grad=True) for n in NAMES[:4]]
        torch_attention(a, *Ws, causal=causal).backward(t(d_out))
        d_a, grads = attention_backward(x, w, d_out, causal=causal)
        assert close(d_a, a.grad) and all(close(grads[n], W.grad) for n, W in zip(NAMES[:4], Ws))

    a = t(x, grad=True)
    Ws = [t(getattr(w, n), grad=True) for n in NAMES[4:]]
    torch_ffn(a, *Ws).backward(t(d_out))
    d_a, grads = ffn_backward(x, w, d_out)
    assert close(d_a, a.grad) and all(close(grads[n], W.grad) for n, W in zip(NAMES[4:], Ws))

    u = t(np.linspace(-6, 6, 41), grad=True)
    torch.nn.functional.gelu(u).sum().backward()
    assert close(gelu_derivative(u.detach().numpy()), u.grad)


def test_a_block_backwards_gives_the_gradients_of_its_own_output():
    """block_backward on its own: d_out is any gradient at the block's output."""
    w = random_stack(1, 8, 16, seed=11)[0]
    x, d_out = random_weights([(4, 8), (4, 8)], seed=4, scale=1.0)
    for placement in ("pre", "post"):
        x_t = t(x, grad=True)
        Ws = [t(getattr(w, n), grad=True) for n in NAMES]
        h = x_t
        for part, args in ((torch_attention, Ws[:4]), (torch_ffn, Ws[4:])):
            h = h + part(torch_rms(h), *args) if placement == "pre" else torch_rms(h + part(h, *args))
        h.backward(t(d_out))
        d_x, grads = block_backward(x, w, d_out, placement)
        assert close(d_x, x_t.grad) and all(close(grads[n], W.grad) for n, W in zip(NAMES, Ws)), placement


def test_what_the_backward_pass_does_not_cover_is_refused_in_words():
    w = random_stack(1, 8, 16, seed=1)[0]
    x = np.ones((3, 8))
    two_heads = BlockWeights(w.Wq, w.Wk, w.Wv, w.Wo, W_up=w.W_up, W_down=w.W_down, heads=2)
    gains = BlockWeights(w.Wq, w.Wk, w.Wv, w.Wo, W_up=w.W_up, W_down=w.W_down, ffn_norm_gain=np.ones(8))
    for weights in (two_heads, gains):
        with pytest.raises(ValueError, match="one head, a plain FFN without biases, norms without gains"):
            block_backward(x, weights, x)
    with pytest.raises(ValueError, match=r"shape \(length, d\), one text"):
        block_backward(np.ones((2, 3, 8)), w, np.ones((2, 3, 8)))
    with pytest.raises(ValueError, match="placement"):
        block_backward(x, w, x, placement="sandwich")
    with pytest.raises(ValueError, match=r"target should have x's shape \(3, 8\)"):
        stack_gradients(x, [w], np.ones((2, 8)))


def test_the_placement_gradients_run_the_placement_experiment_s_stack():
    """Same blocks and input as lib.block.norm_placement_experiment (whose forward run it repeats),
    a loss at the top, and one size per block and per point of the stream."""
    g = placement_gradients(6, seed=4)
    blocks = random_stack(6, seed=4)
    x, = random_weights([(8, 16)], seed=4, scale=1.0)
    target, = random_weights([(8, 16)], seed=4 + 6 + 2, scale=1.0)
    for placement in ("pre", "post"):
        full = stack_gradients(x, blocks, target, placement)
        assert g[placement].loss == pytest.approx(full.loss, rel=1e-12)
        sizes = [np.sqrt(np.mean(np.concatenate([v.ravel() for v in d.values()]) ** 2)) for d in full.weights]
        assert np.allclose(g[placement].blocks, sizes, rtol=1e-12)
        assert np.allclose(g[placement].streams, [np.sqrt(np.mean(d ** 2)) for d in full.streams], rtol=1e-12)
        assert g[placement].blocks.shape == (6,) and g[placement].streams.shape == (7,)
    sizes = norm_placement_experiment(6, seed=4)["pre"].sizes
    streams = decoder(x, blocks, placement="pre", final_norm=False).streams
    assert np.allclose(sizes, [np.sqrt(np.mean(s ** 2)) for s in streams])


def test_the_default_eps_any_lead_axes_and_lists_are_pytorch_s_too():
    """RMSNorm backwards with the default eps (1e-5, which matters for a token of tiny numbers),
    on a batch of texts (three axes), and on nested lists; GELU's slope keeps float32."""
    rng = np.random.default_rng(3)
    for x in (rng.normal(size=(5, 8)) * 3e-3, rng.normal(size=(2, 5, 8))):
        d_out = rng.normal(size=x.shape)
        x_t = t(x, grad=True)
        torch_rms(x_t).backward(t(d_out))
        assert close(rms_norm_backward(x, d_out), x_t.grad), x.shape
        assert close(rms_norm_backward(x.tolist(), d_out.tolist()), x_t.grad)
    u = np.linspace(-3, 3, 7)
    assert np.array_equal(gelu_derivative(u.tolist()), gelu_derivative(u))
    assert gelu_derivative(u.astype(np.float32)).dtype == np.float32


def test_another_eps_and_lists_give_pytorch_s_gradients():
    blocks = random_stack(2, 8, 12, seed=6)
    x, target = random_weights([(4, 8), (4, 8)], seed=8, scale=1.0)
    for placement in ("pre", "post"):
        g = stack_gradients(x, blocks, target, placement, eps=0.5)
        loss, x_t, weights = torch_stack(x, blocks, target, placement, eps=0.5)
        assert g.loss == pytest.approx(loss, rel=1e-12)
        assert close(g.streams[0], x_t.grad) and all(close(g.weights[i][n], w.grad) for i in range(2)
                                                     for n, w in zip(NAMES, weights[i]))
        listed = stack_gradients(x.tolist(), blocks, target.tolist(), placement, eps=0.5)
        assert listed.loss == g.loss and np.array_equal(listed.streams[0], g.streams[0])
        d_x, _ = block_backward(x.tolist(), blocks[0], g.streams[1].tolist(), placement, eps=0.5)
        assert close(d_x, torch.tensor(block_backward(x, blocks[0], g.streams[1], placement, eps=0.5)[0]))


def test_the_placement_gradients_default_to_the_lab_s_48_blocks():
    default, explicit = placement_gradients(), placement_gradients(48, 16, 64, 8, seed=1)
    assert default["pre"].blocks.shape == (48,)
    for placement in ("pre", "post"):
        assert np.array_equal(default[placement].blocks, explicit[placement].blocks)
