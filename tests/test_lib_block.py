"""lib.block: the six-step example, PyTorch's encoder layer, every switch, the stack and the checks."""

import numpy as np
import pytest
import torch

from lib.block import (BlockWeights, Step, Sublayer, block, block_steps, block_trace, decoder,
                       norm_placement_experiment, random_block_weights, random_stack, six_step_setup,
                       six_steps)
from lib.norm import rms_norm, root_mean_square
from lib.positional import rope

rng = np.random.default_rng(31)


def test_six_steps_reproduce_the_worked_example():
    steps = six_steps()
    assert len(steps) == 7 and all(grid.shape == (4, 4) for _, grid in steps)
    sizes = [round(float(root_mean_square(grid)), 2) for _, grid in steps]
    assert sizes == [0.74, 1.00, 0.95, 1.41, 1.00, 1.21, 2.05]
    out = steps[-1][1]
    assert np.allclose(np.round(out[0], 2), [0.12, -0.58, -2.73, -1.31])
    assert np.allclose(np.round(out, 2), [[0.12, -0.58, -2.73, -1.31], [1.27, 0.36, -2.66, -2.75],
                                          [0.04, 1.72, 3.77, 1.26], [0.42, 1.59, 4.37, 0.77]])
    X, weights = six_step_setup()
    assert np.allclose(X, np.round(X, 1)) and weights.W_up.shape == (4, 16)
    assert [name for name, _ in steps] == ["input", "norm before attention", "attention", "add attention",
                                           "norm before FFN", "feed-forward", "add FFN"]


def test_hand_example_of_the_stack():
    W_up = np.array([[1.0, -1.0, 0.0, 1.0], [0.0, 1.0, -1.0, 1.0]])
    W_down = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0], [0.5, 0.5]])
    eye = np.eye(2)
    weights = BlockWeights(eye, eye, eye, eye, W_up=W_up, W_down=W_down, b_up=np.array([0.0, 0.0, 1.0, -2.0]))
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
        layer.linear1.weight.copy_(torch.tensor(weights.W_up.T))
        layer.linear2.weight.copy_(torch.tensor(weights.W_down.T))
        layer.norm1.weight.copy_(torch.tensor(gains[0]))
        layer.norm2.weight.copy_(torch.tensor(gains[1]))
    return layer.train()          # train mode (dropout 0) keeps PyTorch on its plain, readable path


@pytest.mark.parametrize("placement", ["pre", "post"])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_transformer_encoder_layer(placement, causal):
    d, f, heads, length = 12, 24, 3, 5
    w = random_block_weights(d, f, heads, seed=4, scale=0.3)
    gains = rng.normal(1, 0.2, (2, d))
    w.attention_norm_gain, w.ffn_norm_gain = gains
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
    h = h + ffn(rms_norm(h), w.W_up, None, w.W_down, None, activation="gelu")
    assert np.allclose(block(x, w), h)


def test_gated_block_uses_swiglu():
    w = random_block_weights(8, 20, 2, seed=2, scale=0.3, gated=True)
    assert w.gated and w.W_gate.shape == (8, 20)
    x = rng.normal(size=(4, 8))
    from lib.ffn import swiglu
    steps = block_trace(x, w, use_attention=False)
    assert np.allclose(steps[Step.FFN], swiglu(rms_norm(x), w.W_gate, w.W_up, w.W_down))


def test_each_part_can_be_removed():
    w = random_block_weights(8, 32, 2, seed=3, scale=0.35)
    x = rng.normal(size=(5, 8))
    steps = lambda **o: list(block_trace(x, w, **o))                     # noqa: E731
    S = Step
    assert steps(use_attention=False) == [S.INPUT, S.FFN_NORM, S.FFN, S.FFN_ADD]
    assert steps(use_ffn=False) == [S.INPUT, S.ATTENTION_NORM, S.ATTENTION, S.ATTENTION_ADD]
    assert steps(placement="none") == [S.INPUT, S.ATTENTION, S.ATTENTION_ADD, S.FFN, S.FFN_ADD]
    assert steps(use_residual=False, placement="post") == [S.INPUT, S.ATTENTION, S.ATTENTION_POST_NORM,
                                                           S.FFN, S.FFN_POST_NORM]
    assert np.allclose(block(x, w, use_attention=False, use_ffn=False), x)
    no_residual = block_trace(x, w, use_residual=False, use_ffn=False)
    assert np.allclose(block(x, w, use_residual=False, use_ffn=False), no_residual[Step.ATTENTION])
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
    assert np.array_equal(a.W_down, b.W_down) and a.Wq.std() == pytest.approx(0.1, rel=0.3)


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
    (lambda: BlockWeights(E, E, E, np.eye(3), W_up=np.ones((4, 8)), W_down=np.ones((8, 4))), "Wo should have 4 rows"),
    (lambda: BlockWeights(E, E, E, E, W_up=np.ones((3, 8)), W_down=np.ones((8, 4))), r"W_up should have 4 rows \(d_model = 4\)"),
    (lambda: BlockWeights(E, E, E, E, W_up=np.ones((4, 8)), W_down=np.ones((6, 4))),
     r"W_down should have 8 rows \(W_up's 8 columns\)"),
    (lambda: BlockWeights(np.ones((4, 6)), E, E, E, W_up=np.ones((4, 8)), W_down=np.ones((8, 4))),
     r"Wq should have 4 columns \(square: d_model = 4, taken from Wq's rows\)"),
    (lambda: BlockWeights(E, E, E, E, W_up=np.ones((4, 8)), W_down=np.ones((8, 4)), heads=3),
     "heads should divide d_model = 4 into equal slices, got heads=3"),
    (lambda: BlockWeights(E, E, E, E, W_up=np.ones((4, 8)), W_down=np.ones((8, 4)), attention_norm_gain=np.ones(3)),
     r"attention_norm_gain should have shape \(4,\)"),
    (lambda: block(np.ones((2, 5)), random_block_weights(4, 8, seed=0, scale=1)), r"x should have shape \(length, 4\)"),
    (lambda: block(np.ones((2, 4)), random_block_weights(4, 8, seed=0, scale=1), placement="middle"),
     "placement should be one of 'pre', 'post', 'none', got 'middle'"),
    (lambda: block(np.ones((2, 4)), random_block_weights(4, 8, seed=0, scale=1), norm="batch"),
     "norm should be one of 'rms', 'layer', got 'batch'"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


# ---------------------------------------------------------------- draws in their documented order

def test_random_block_weights_draw_in_the_documented_order():
    for gated in (False, True):
        w = random_block_weights(4, 6, 2, seed=9, scale=0.3, gated=gated)
        draw = np.random.default_rng(9)
        names = ["Wq", "Wk", "Wv", "Wo"] + (["W_gate"] if gated else []) + ["W_up", "W_down"]
        shapes = [(4, 4)] * 4 + [(4, 6)] * (2 if gated else 1) + [(6, 4)]
        for name, shape in zip(names, shapes):
            assert np.array_equal(getattr(w, name), draw.normal(0.0, 0.3, shape)), name
        assert w.heads == 2 and w.gated == gated and w.b_up is None and w.attention_norm_gain is None
    assert random_block_weights(4, 6, seed=9, scale=0.3).heads == 1


def test_six_step_setup_draws_rounded_numbers_in_the_documented_order():
    X, w = six_step_setup()
    draw = np.random.default_rng(28)
    expected = [draw.normal(0.0, scale, shape) for scale, shape in
                [(0.9, (4, 4))] + [(0.6, (4, 4))] * 4 + [(0.5, (4, 16)), (0.5, (16, 4))]]
    for got, want in zip([X, w.Wq, w.Wk, w.Wv, w.Wo, w.W_up, w.W_down], expected):
        assert np.array_equal(got, np.round(want, 1))
    assert w.heads == 1 and not w.gated and w.b_up is None
    X5, w5 = six_step_setup(5)
    assert np.array_equal(X5, np.round(np.random.default_rng(5).normal(0.0, 0.9, (4, 4)), 1))
    assert w5.W_up.shape == (4, 16) and not np.array_equal(w5.W_up, w.W_up)


def test_random_stack_draws_block_i_from_seed_plus_1_plus_i():
    for gain, heads in ((1.0, 1), (0.5, 2)):
        stack = random_stack(3, 16, 64, heads, seed=1, gain=gain)
        assert len(stack) == 3
        for i, weights in enumerate(stack):
            drawn = random_block_weights(16, 64, heads, seed=2 + i, scale=gain / 4)
            assert np.array_equal(weights.Wq, drawn.Wq) and np.array_equal(weights.W_up, drawn.W_up)
            assert np.allclose(weights.W_down, drawn.W_down * 0.5, rtol=1e-15) and weights.heads == heads
    assert all(np.array_equal(a.W_up, b.W_up) for a, b in zip(random_stack(5, seed=1), random_stack(2, seed=1)))
    small = random_stack(1, seed=0)[0]
    assert (small.d_model, small.d_ff, small.heads) == (16, 64, 1)                # the defaults
    with pytest.raises(ValueError, match="depth should be a whole number of at least 1"):
        random_stack(0, seed=0)


def test_each_matrix_of_a_random_stack_gives_back_about_gain_times_what_it_reads():
    x, h = np.random.default_rng(0).normal(size=(256, 16)), np.random.default_rng(1).normal(size=(256, 64))
    for gain in (0.5, 2.0):
        blocks = random_stack(8, seed=3, gain=gain)
        for reads, name in ((x, "Wq"), (x, "Wv"), (x, "W_up"), (h, "W_down")):
            ratio = np.mean([root_mean_square(reads @ getattr(w, name)) for w in blocks]) / root_mean_square(reads)
            assert ratio == pytest.approx(gain, rel=0.15), name


# ---------------------------------------------------------------- the placement experiment

def test_placement_experiment_is_a_nudged_input_through_the_random_stack():
    depth, seed = 5, 3
    blocks = random_stack(depth, 8, 16, seed=seed)
    x = np.random.default_rng(seed).normal(0.0, 1.0, (4, 8))
    direction = np.random.default_rng(seed + depth + 1).normal(0.0, 1.0, (4, 8))
    traces = norm_placement_experiment(depth, 8, 16, 4, seed=seed, nudge=1e-3, activation="relu")
    for placement, trace in traces.items():
        plain = decoder(x, blocks, placement=placement, final_norm=False, activation="relu").streams
        nudged = decoder(x + 1e-3 * direction, blocks, placement=placement, final_norm=False,
                         activation="relu").streams
        assert np.allclose(trace.sizes, [root_mean_square(s) for s in plain], rtol=1e-12)
        gaps = [root_mean_square(a - b) for a, b in zip(plain, nudged)]
        assert np.allclose(trace.gaps, gaps, rtol=1e-9)
        assert trace.amplification == pytest.approx(gaps[-1] / gaps[0], rel=1e-9)
    assert list(traces) == ["pre", "post"]


def test_placement_experiment_at_its_defaults():
    traces = norm_placement_experiment()
    pre, post = traces["pre"], traces["post"]
    assert len(pre.sizes) == len(pre.gaps) == 49
    assert pre.sizes[0] == post.sizes[0] == pytest.approx(0.9120906, abs=1e-7)
    assert pre.gaps[0] == pytest.approx(9.95217373e-07, rel=1e-6)                  # a nudge of 1e-6
    assert pre.sizes[-1] == pytest.approx(8.69920639, rel=1e-8)
    assert pre.amplification == pytest.approx(7.39701579, rel=1e-8)
    assert post.amplification == pytest.approx(0.0563441639, rel=1e-8)
    other = norm_placement_experiment(use_attention=False)["pre"]
    assert other.sizes[-1] != pytest.approx(pre.sizes[-1], rel=1e-3)


# ---------------------------------------------------------------- default epsilon, against PyTorch

def test_default_eps_of_the_block_and_the_decoder_matches_pytorch_on_low_variance_input():
    d, f, heads, length = 12, 24, 3, 5
    w = random_block_weights(d, f, heads, seed=4, scale=0.3)
    gains = rng.normal(1, 0.2, (2, d))
    w.attention_norm_gain, w.ffn_norm_gain = gains
    x = 1e-3 * rng.normal(size=(2, length, d))                      # variance 1e-6, below eps = 1e-5
    layer = _torch_layer(w, True, gains)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(length, dtype=torch.float64)
    expected = layer(torch.tensor(x), src_mask=mask, is_causal=True).detach().numpy()   # eps 1e-5
    assert np.allclose(block(x, w, norm="layer"), expected, atol=1e-9, rtol=0)
    final = rng.normal(1, 0.2, d)
    out = decoder(x, [w], norm="layer", final_norm_gain=final).output
    assert np.allclose(out, torch.nn.functional.layer_norm(torch.tensor(expected), (d,), torch.tensor(final),
                                                           None, 1e-5).numpy(), atol=1e-9, rtol=0)
    rms = decoder(x, [], final_norm_gain=final).output                  # RMSNorm by default
    assert np.allclose(rms, torch.nn.functional.rms_norm(torch.tensor(x), (d,), torch.tensor(final), 1e-5).numpy(),
                       atol=1e-9, rtol=0)
    assert np.allclose(decoder(x, [], eps=0.5).output, rms_norm(x, eps=0.5))


# ---------------------------------------------------------------- the block's parts and switches

def test_block_uses_biases_norm_shifts_and_the_activation():
    w = random_block_weights(6, 10, 2, seed=7, scale=0.4)
    w.b_up, w.b_down = rng.normal(size=10), rng.normal(size=6)
    w.attention_norm_bias, w.ffn_norm_bias = rng.normal(size=6), rng.normal(size=6)
    w.attention_norm_gain, w.ffn_norm_gain = rng.normal(1, 0.1, 6), rng.normal(1, 0.1, 6)
    x = rng.normal(size=(3, 6))
    from lib.attention import attention
    from lib.ffn import ffn
    from lib.norm import layer_norm
    h = x + attention(layer_norm(x, w.attention_norm_gain, w.attention_norm_bias, eps=0.1), w.Wq, w.Wk, w.Wv, w.Wo,
                      heads=2, causal=False)
    h = h + ffn(layer_norm(h, w.ffn_norm_gain, w.ffn_norm_bias, eps=0.1), w.W_up, w.b_up, w.W_down, w.b_down, activation="relu")
    assert np.allclose(block(x, w, norm="layer", eps=0.1, causal=False, activation="relu"), h)


def test_block_passes_positions_and_the_weights_function_to_attention():
    w = random_block_weights(8, 16, 2, seed=8, scale=0.4)
    x = rng.normal(size=(5, 8))
    uniform = lambda scores: np.full(scores.shape, 1 / scores.shape[-1])     # noqa: E731
    steps = block_trace(x, w, use_ffn=False, causal_weights=uniform, positions=rope)
    from lib.attention import attention
    expected = attention(steps[Step.ATTENTION_NORM], w.Wq, w.Wk, w.Wv, w.Wo, heads=2, causal_weights=uniform)
    assert np.allclose(steps[Step.ATTENTION], expected)
    assert np.allclose(block(x, w, causal=False, causal_weights=uniform), block(x, w, causal=False))


def test_post_norm_steps_and_a_part_left_out():
    w = random_block_weights(8, 32, 2, seed=3, scale=0.35)
    x = rng.normal(size=(5, 8))
    grids = block_trace(x, w, placement="post")
    assert list(grids) == [Step.INPUT, Step.ATTENTION, Step.ATTENTION_ADD, Step.ATTENTION_POST_NORM,
                           Step.FFN, Step.FFN_ADD, Step.FFN_POST_NORM]
    assert np.allclose(grids[Step.ATTENTION_ADD], x + grids[Step.ATTENTION])
    assert np.allclose(grids[Step.ATTENTION_POST_NORM], rms_norm(grids[Step.ATTENTION_ADD]))
    assert np.allclose(grids[Step.FFN_POST_NORM], block(x, w, placement="post"))
    assert np.array_equal(grids[Step.INPUT], x)
    assert np.allclose(block(x, w, placement="post", use_attention=False),
                       rms_norm(x + block_trace(x, w, placement="post", use_attention=False)[Step.FFN]))


def test_block_steps_show_each_step_by_its_label_in_order():
    x = rng.normal(size=(5, 8))
    w = random_block_weights(8, 32, 2, seed=3, scale=0.35)
    trace = block_trace(x, w, placement="post")
    shown = block_steps(x, w, placement="post")
    assert [label for label, _ in shown] == ["input", "attention", "add attention", "norm after attention",
                                             "feed-forward", "add FFN", "norm after FFN"]
    assert [label for label, _ in shown] == [step.label for step in trace]
    assert all(np.array_equal(a, b) for (_, a), b in zip(shown, trace.values()))
    assert [step for step in Step if step.is_norm] == [Step.ATTENTION_NORM, Step.ATTENTION_POST_NORM,
                                                        Step.FFN_NORM, Step.FFN_POST_NORM]


def test_block_weights_know_their_sizes():
    w = random_block_weights(8, 20, 2, seed=0, scale=0.1)
    assert (w.d_model, w.d_ff, w.gated) == (8, 20, False)
    assert BlockWeights(w.Wq.tolist(), w.Wk, w.Wv, w.Wo, w.W_up, w.W_down).Wq.dtype == np.float64


F4 = dict(W_up=np.ones((4, 8)), W_down=np.ones((8, 4)))


@pytest.mark.parametrize("call, expected", [
    (lambda: BlockWeights(E, np.ones((4, 3)), E, E, **F4), r"Wk should have 4 columns \(square: d_model = 4"),
    (lambda: BlockWeights(E, E, np.ones((3, 4)), E, **F4), r"Wv should have 4 rows \(square"),
    (lambda: BlockWeights(E, E, E, E, W_up=np.ones((4, 8)), W_down=np.ones((8, 3))), r"W_down should have 4 columns \(d_model = 4\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, W_gate=np.ones((4, 7))), r"W_gate should have 8 columns like W_up \(8\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, W_gate=np.ones((3, 8))), r"W_gate should have 4 rows \(d_model = 4\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, W_gate=np.ones((4, 8)), b_up=np.ones(8)), "b_up and b_down should be None for a gated"),
    (lambda: BlockWeights(E, E, E, E, **F4, W_gate=np.ones((4, 8)), b_down=np.ones(4)), "b_up and b_down should be None for a gated"),
    (lambda: BlockWeights(E, E, E, E, **F4, b_up=np.ones(4)), r"b_up should have shape \(8,\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, b_down=np.ones(8)), r"b_down should have shape \(4,\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, ffn_norm_bias=np.ones(8)), r"ffn_norm_bias should have shape \(4,\)"),
    (lambda: BlockWeights(E, E, E, E, **F4, heads=0), "heads should be a whole number of at least 1"),
    (lambda: block(np.ones((2, 3, 4, 4)), random_block_weights(4, 8, seed=0, scale=1)), r"x should have shape \(length, 4\)"),
    (lambda: block(np.ones(4), random_block_weights(4, 8, seed=0, scale=1)), r"got shape \(4,\)"),
])
def test_more_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


def test_six_steps_are_the_block_by_hand_without_epsilon():
    """Pre-norm, RMSNorm with no epsilon and no gain, one head without a mask, exact GELU."""
    from math import erf, sqrt

    X, w = six_step_setup()

    def norm(h):
        return h / np.sqrt(np.mean(h ** 2, axis=-1, keepdims=True))

    def attend(h):
        scores = (h @ w.Wq) @ (h @ w.Wk).T / 2.0
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return (weights / weights.sum(axis=-1, keepdims=True)) @ (h @ w.Wv) @ w.Wo

    gelu = np.vectorize(lambda v: 0.5 * v * (1.0 + erf(v / sqrt(2.0))))
    h = X + attend(norm(X))
    expected = h + gelu(norm(h) @ w.W_up) @ w.W_down
    assert np.allclose(six_steps()[-1][1], expected, rtol=1e-12, atol=1e-12)


def test_sublayer_adds_its_part_to_the_stream_by_default():
    x = rng.normal(size=(3, 4))
    out = Sublayer()(x, lambda h: 2.0 * h, rms_norm)
    assert np.allclose(out, x + 2.0 * rms_norm(x), rtol=1e-12, atol=0)
    assert np.allclose(Sublayer("post")(x, lambda h: 2.0 * h, rms_norm), rms_norm(3.0 * x), rtol=1e-12, atol=0)
    assert np.allclose(Sublayer("none", residual=False)(x, lambda h: 2.0 * h, rms_norm), 2.0 * x)


def test_block_takes_a_list_of_tokens():
    w = random_block_weights(4, 8, seed=2, scale=0.3)
    x = rng.normal(size=(3, 4))
    assert np.array_equal(block(x.tolist(), w), block(x, w))


def test_a_block_with_a_kv_cache_gives_the_last_rows_of_the_whole_text():
    """New tokens run through the same block with its attention's cache: the rows of the whole text
    run at once, pre-norm and post-norm, plain and gated FFN, with RoPE; a block without attention
    leaves its cache empty."""
    from lib.attention import KVCache
    x = rng.normal(size=(7, 8))
    for gated in (False, True):
        weights = random_block_weights(8, 16, 2, seed=4, scale=0.4, gated=gated)
        for placement in ("pre", "post", "none"):
            whole = block(x, weights, placement=placement, positions=rope)
            cache = KVCache()
            first = block(x[:4], weights, placement=placement, positions=rope, cache=cache)
            rest = block(x[4:], weights, placement=placement, positions=rope, cache=cache)
            assert np.allclose(np.concatenate([first, rest]), whole, atol=1e-12), (gated, placement)
            assert cache.length == 7
    cache = KVCache()
    block(x, weights, use_attention=False, cache=cache)
    assert cache.length == 0
