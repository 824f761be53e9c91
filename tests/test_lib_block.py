"""lib.block: the six-step example, PyTorch's encoder layer, every switch, the stack and the checks."""

import numpy as np
import pytest
import torch

from lib.block import (BlockWeights, block, block_steps, decoder, norm_placement_experiment,
                       random_block_weights, six_step_setup, six_steps)
from lib.norm import rms_norm, root_mean_square
from lib.positional import rope

rng = np.random.default_rng(31)


def test_six_steps_reproduce_the_curriculum():
    steps = six_steps()
    assert len(steps) == 7 and all(grid.shape == (4, 4) for _, grid in steps)
    sizes = [round(float(root_mean_square(grid)), 2) for _, grid in steps]
    assert sizes == [0.74, 1.00, 0.95, 1.41, 1.00, 1.21, 2.05]
    out = steps[-1][1]
    assert np.allclose(np.round(out[0], 2), [0.12, -0.58, -2.73, -1.31])
    assert np.allclose(np.round(out, 2), [[0.12, -0.58, -2.73, -1.31], [1.27, 0.36, -2.66, -2.75],
                                          [0.04, 1.72, 3.77, 1.26], [0.42, 1.59, 4.37, 0.77]])
    X, weights = six_step_setup()
    assert np.allclose(X, np.round(X, 1)) and weights.W1.shape == (4, 16)
    assert [name for name, _ in steps] == ["input", "norm before attention", "attention", "add attention",
                                           "norm before FFN", "feed-forward", "add FFN"]


def test_hand_example_of_the_stack():
    W1 = np.array([[1.0, -1.0, 0.0, 1.0], [0.0, 1.0, -1.0, 1.0]])
    W2 = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0], [0.5, 0.5]])
    eye = np.eye(2)
    weights = BlockWeights(eye, eye, eye, eye, W1=W1, W2=W2, b1=np.array([0.0, 0.0, 1.0, -2.0]))
    out = block(np.array([[0.0, 4.0]]), weights, norm="layer", activation="relu")
    assert np.allclose(out, [[-1.0, 7.0]], atol=1e-4)
    streams = decoder(np.array([[0.0, 4.0]]), [weights] * 3, norm="layer", activation="relu").streams
    assert len(streams) == 4 and np.allclose(streams[1], [[-1, 7]], atol=1e-4)


def _torch_layer(weights, norm_first, gains):
    d, f = weights.d_model, weights.d_ff
    layer = torch.nn.TransformerEncoderLayer(d, weights.heads, f, dropout=0.0, activation="gelu",
                                             batch_first=True, norm_first=norm_first, bias=False,
                                             dtype=torch.float64)
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.tensor(np.concatenate([weights.Wq.T, weights.Wk.T, weights.Wv.T])))
        layer.self_attn.out_proj.weight.copy_(torch.tensor(weights.Wo.T))
        layer.linear1.weight.copy_(torch.tensor(weights.W1.T))
        layer.linear2.weight.copy_(torch.tensor(weights.W2.T))
        layer.norm1.weight.copy_(torch.tensor(gains[0]))
        layer.norm2.weight.copy_(torch.tensor(gains[1]))
    return layer.train()          # train mode (dropout 0) keeps PyTorch on its plain, readable path


@pytest.mark.parametrize("placement", ["pre", "post"])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_transformer_encoder_layer(placement, causal):
    d, f, heads, length = 12, 24, 3, 5
    w = random_block_weights(d, f, heads, seed=4, scale=0.3)
    gains = rng.normal(1, 0.2, (2, d))
    w.attention_norm, w.ffn_norm = gains
    x = rng.normal(size=(2, length, d))
    layer = _torch_layer(w, placement == "pre", gains)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=torch.float64) if causal else None
    expected = layer(torch.tensor(x), src_mask=mask, is_causal=causal).detach().numpy()
    ours = block(x, w, placement=placement, norm="layer", causal=causal, activation="gelu")
    assert np.allclose(ours, expected, atol=1e-6, rtol=0)


def test_pre_norm_block_is_its_two_lines():
    w = random_block_weights(8, 32, 2, seed=1, scale=0.35)
    x = rng.normal(size=(6, 8))
    from lib.attention import attention
    from lib.ffn import ffn
    h = x + attention(rms_norm(x), w.Wq, w.Wk, w.Wv, w.Wo, heads=2, causal=True)
    h = h + ffn(rms_norm(h), w.W1, None, w.W2, None, activation="gelu")
    assert np.allclose(block(x, w), h)


def test_gated_block_uses_swiglu():
    w = random_block_weights(8, 20, 2, seed=2, scale=0.3, gated=True)
    assert w.gated and w.W_gate.shape == (8, 20)
    x = rng.normal(size=(4, 8))
    from lib.ffn import swiglu
    steps = dict(block_steps(x, w, use_attention=False))
    assert np.allclose(steps["feed-forward"], swiglu(rms_norm(x), w.W_gate, w.W1, w.W2))


def test_each_part_can_be_removed():
    w = random_block_weights(8, 32, 2, seed=3, scale=0.35)
    x = rng.normal(size=(5, 8))
    names = lambda **o: [name for name, _ in block_steps(x, w, **o)]
    assert names(use_attention=False) == ["input", "norm before FFN", "feed-forward", "add FFN"]
    assert names(use_ffn=False) == ["input", "norm before attention", "attention", "add attention"]
    assert names(placement="none") == ["input", "attention", "add attention", "feed-forward", "add FFN"]
    assert names(use_residual=False, placement="post") == ["input", "attention", "norm after attention",
                                                          "feed-forward", "norm after FFN"]
    assert np.allclose(block(x, w, use_attention=False, use_ffn=False), x)
    no_residual = dict(block_steps(x, w, use_residual=False, use_ffn=False))
    assert np.allclose(block(x, w, use_residual=False, use_ffn=False), no_residual["attention"])
    changed = x.copy()
    changed[-1] += 1.0                                       # change the last token only
    assert np.allclose(block(changed, w)[:-1], block(x, w)[:-1])                     # masked: no leak
    assert not np.allclose(block(changed, w, causal=False)[:-1], block(x, w, causal=False)[:-1])
    assert np.allclose(root_mean_square(block(x, w, placement="post"), axis=-1), 1.0, atol=1e-4)
    turned = block(x, w, positions=rope)
    assert turned.shape == x.shape and not np.allclose(turned, block(x, w))


def test_decoder_returns_every_stream_and_the_final_norm():
    blocks = [random_block_weights(8, 32, 2, seed=10 + i, scale=0.35) for i in range(3)]
    x = rng.normal(size=(2, 5, 8))
    result = decoder(x, blocks, norm="layer")
    assert len(result.streams) == 4
    assert np.allclose(result.streams[2], block(block(x, blocks[0], norm="layer"), blocks[1], norm="layer"))
    assert np.allclose(result.output.mean(-1), 0, atol=1e-12)
    assert np.allclose(decoder(x, blocks, final_norm=False).output, decoder(x, blocks).streams[-1])


def test_random_block_weights_are_reproducible():
    a, b = random_block_weights(8, 16, 2, seed=5, scale=0.1), random_block_weights(8, 16, 2, seed=5, scale=0.1)
    assert np.array_equal(a.W2, b.W2) and a.Wq.std() == pytest.approx(0.1, rel=0.3)


def test_pre_norm_amplifies_a_nudge_and_post_norm_shrinks_it():
    depth = 48
    traces = norm_placement_experiment(depth)
    pre, post = traces["pre"], traces["post"]
    assert len(pre.sizes) == depth + 1
    assert np.allclose(post.sizes[1:], 1.0, atol=1e-4)                        # pinned at 1
    assert np.sqrt(depth) / 2 < pre.sizes[-1] < 2 * np.sqrt(depth)            # about sqrt(depth)
    assert pre.amplification > 2 and post.amplification < 0.5


def test_norm_with_bias_needs_layer_norm():
    w = random_block_weights(4, 8, seed=0, scale=0.5)
    w.attention_norm_bias = np.zeros(4)
    with pytest.raises(ValueError, match="a norm bias needs norm='layer'"):
        block(np.ones((2, 4)), w)


E = np.eye(4)


@pytest.mark.parametrize("call, expected", [
    (lambda: BlockWeights(E, E, E, np.eye(3), W1=np.ones((4, 8)), W2=np.ones((8, 4))), "Wo should have 4 rows"),
    (lambda: BlockWeights(E, E, E, E, W1=np.ones((3, 8)), W2=np.ones((8, 4))), r"W1 should have 4 rows"),
    (lambda: BlockWeights(E, E, E, E, W1=np.ones((4, 8)), W2=np.ones((6, 4))), r"W2 should have 8 rows"),
    (lambda: BlockWeights(E, E, E, E, W1=np.ones((4, 8)), W2=np.ones((8, 4)), heads=3),
     "heads should divide d_model = 4 into equal slices, got heads=3"),
    (lambda: BlockWeights(E, E, E, E, W1=np.ones((4, 8)), W2=np.ones((8, 4)), attention_norm=np.ones(3)),
     r"attention_norm should have shape \(4,\)"),
    (lambda: block(np.ones((2, 5)), random_block_weights(4, 8, seed=0, scale=1)), r"x should have shape \(length, 4\)"),
    (lambda: block(np.ones((2, 4)), random_block_weights(4, 8, seed=0, scale=1), placement="middle"),
     "placement should be one of 'pre', 'post', 'none', got 'middle'"),
    (lambda: block(np.ones((2, 4)), random_block_weights(4, 8, seed=0, scale=1), norm="batch"),
     "norm should be one of 'rms', 'layer', got 'batch'"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()
