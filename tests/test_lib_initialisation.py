"""lib.initialisation: how a model's weights start and what its blocks do at step 0."""

import math

import numpy as np
import pytest

from lib.initialisation import RULES, _drawn, gain_per_matrix, initial_blocks, output_std, start_of_training
from lib.norm import root_mean_square


def test_gain_per_matrix_is_std_times_root_fan_in():
    assert gain_per_matrix(0.02, 768) == pytest.approx(0.02 * math.sqrt(768))
    x = np.random.default_rng(0).standard_normal(768)
    w = np.random.default_rng(1).normal(0.0, 0.02, (768, 768))
    assert root_mean_square(x @ w) / root_mean_square(x) == pytest.approx(gain_per_matrix(0.02, 768), rel=0.05)


def test_output_std_of_each_rule():
    assert output_std("all", 0.02, 12) == 0.02
    assert output_std("gpt2", 0.02, 12) == pytest.approx(0.02 / math.sqrt(24))
    assert output_std("zero", 0.02, 12) == 0.0
    with pytest.raises(ValueError, match="rule"):
        output_std("xavier", 0.02, 12)
    with pytest.raises(ValueError):
        output_std("gpt2", 0.02, 0)


def test_rules_draw_the_same_numbers_and_scale_only_wo_and_w2():
    blocks = {rule: list(initial_blocks(2, 8, 32, 2, rule=rule, seed=5)) for rule in RULES}
    for a, b in zip(blocks["all"], blocks["gpt2"]):
        for name in ("Wq", "Wk", "Wv", "W_up"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert np.allclose(b.Wo, a.Wo / math.sqrt(4)) and np.allclose(b.W_down, a.W_down / math.sqrt(4))
    assert all(not z.Wo.any() and not z.W_down.any() for z in blocks["zero"])
    assert np.std(blocks["all"][0].W_up) == pytest.approx(0.02, rel=0.1)


def test_start_of_training_orders_the_rules_and_zero_is_the_identity():
    runs = start_of_training(layers=3, d_model=32, d_ff=128, heads=4, length=6)
    assert set(runs) == set(RULES)
    assert np.all(runs["zero"].changes == 0) and np.allclose(runs["zero"].sizes, runs["zero"].sizes[0])
    assert np.all(runs["gpt2"].changes < runs["all"].changes)
    assert runs["all"].sizes[0] == pytest.approx(1.0)
    small = start_of_training(layers=2, d_model=32, d_ff=128, heads=4, stream_rms=0.02, rules=("gpt2",))
    assert small["gpt2"].sizes[0] == pytest.approx(0.02)


def _drawn_by_hand(layers, d, f, seed, dtype=np.float64):
    """Per block, Wq, Wk, Wv, Wo, W_up, W_down as the docstring says they are drawn: each with its
    shape reversed, then transposed."""
    blocks = []
    for i in range(layers):
        rng = np.random.default_rng(seed + i)
        blocks.append([rng.standard_normal((d, d), dtype=dtype).T for _ in range(4)]
                      + [rng.standard_normal((f, d), dtype=dtype).T, rng.standard_normal((d, f), dtype=dtype).T])
    return blocks


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_initial_blocks_follow_the_documented_draw_order_exactly(rule, dtype):
    d, f, layers, std = 4, 6, 2, 0.03
    out = output_std(rule, std, layers)
    got = list(initial_blocks(layers, d, f, 2, rule=rule, std=std, seed=7, dtype=dtype))
    assert len(got) == layers
    for w, (q, k, v, o, w1, w2) in zip(got, _drawn_by_hand(layers, d, f, 7, dtype)):
        assert w.heads == 2
        for name, expected in [("Wq", q * std), ("Wk", k * std), ("Wv", v * std), ("Wo", o * out),
                               ("W_up", w1 * std), ("W_down", w2 * out)]:
            assert getattr(w, name).dtype == dtype and np.array_equal(getattr(w, name), expected), name
        assert w.W_gate is None and w.b_up is None and w.attention_norm_gain is None


def test_initial_blocks_defaults_are_one_head_gpt2_scaling_and_seed_zero():
    [w] = initial_blocks(1, 4, 6)
    q, _k, _v, o, _w1, w2 = _drawn_by_hand(1, 4, 6, 0)[0]
    assert w.heads == 1
    assert np.array_equal(w.Wq, q * 0.02)
    out = 0.02 / math.sqrt(2)
    assert np.array_equal(w.Wo, o * out) and np.array_equal(w.W_down, w2 * out)


@pytest.mark.parametrize("layers", [0, 2.0, "2"])
def test_initial_blocks_refuse_a_number_of_layers_that_is_not_a_positive_whole_number(layers):
    with pytest.raises(ValueError, match="layers should be a whole number"):
        list(initial_blocks(layers, 4, 6))


def _start_by_hand(layers, d, f, heads, length, stream_rms, std, rule, seed):
    """A stream through the blocks of initial_blocks(seed + 1): pre-norm LayerNorm, GELU, causal."""
    from lib.block import block

    x = np.random.default_rng(seed).standard_normal((length, d))
    x = x * stream_rms / root_mean_square(x)
    sizes, changes = [root_mean_square(x)], []
    for w in initial_blocks(layers, d, f, heads, rule=rule, std=std, seed=seed + 1):
        new = block(x, w, placement="pre", norm="layer", activation="gelu", causal=True)
        changes.append(root_mean_square(new - x) / root_mean_square(x))
        sizes.append(root_mean_square(new))
        x = new
    return np.array(sizes), np.array(changes)


def test_start_of_training_is_the_stream_through_the_initial_blocks():
    runs = start_of_training(layers=3, d_model=8, d_ff=12, heads=2, length=5, stream_rms=0.7, std=0.3, seed=4)
    for rule in RULES:
        sizes, changes = _start_by_hand(3, 8, 12, 2, 5, 0.7, 0.3, rule, 4)
        assert runs[rule].sizes.shape == (4,) and runs[rule].changes.shape == (3,)
        assert np.allclose(runs[rule].sizes, sizes, rtol=1e-12, atol=0)
        assert np.allclose(runs[rule].changes, changes, rtol=1e-12, atol=1e-300)
    assert runs["all"].changes.min() > 0.01          # std 0.3 blocks change the stream visibly


def test_start_of_training_defaults_are_gpt2_small_one_stream_of_sixteen_tokens(monkeypatch):
    """The defaults, seen by what reaches the draws and the blocks (ones instead of random
    numbers, and identity blocks, so that GPT-2 Small's sizes cost nothing)."""
    import lib.initialisation as initialisation

    draws, seen = [], []

    def ones(layers, d, f, seed, dtype):
        draws.append((layers, d, f, seed, dtype))
        for _ in range(layers):
            yield [np.ones((d, d))] * 4 + [np.ones((d, f)), np.ones((f, d))]

    def identity(x, w, **options):
        seen.append((x.copy(), w.heads, w.Wq[0, 0], w.W_up.shape, w.Wo[0, 0], options))
        return x

    monkeypatch.setattr(initialisation, "_drawn", ones)
    monkeypatch.setattr(initialisation, "block", identity)
    runs = start_of_training()
    assert list(runs) == list(RULES) and draws == [(12, 768, 3072, 1, np.float64)]
    assert len(seen) == 12 * len(RULES) and runs["gpt2"].sizes.shape == (13,)
    stream = np.random.default_rng(0).standard_normal((16, 768))
    assert np.allclose(seen[0][0], stream / root_mean_square(stream), rtol=1e-12, atol=0)
    by_rule = dict(zip(RULES, seen[:len(RULES)]))
    for rule, (_x, heads, wq, w1_shape, wo, options) in by_rule.items():
        assert heads == 12 and wq == 0.02 and w1_shape == (768, 3072)
        assert wo == output_std(rule, 0.02, 12)
        assert options == {"norm": "layer", "activation": "gelu", "causal": True}


def test_start_of_training_in_float32_is_the_float32_stream_through_the_float32_blocks():
    runs = start_of_training(layers=3, d_model=8, d_ff=12, heads=2, length=5, stream_rms=0.7, std=0.3, seed=4,
                             dtype=np.float32)
    x = np.random.default_rng(4).standard_normal((5, 8))
    x = (x * (0.7 / root_mean_square(x))).astype(np.float32)
    from lib.block import block

    for rule in RULES:
        stream, sizes, changes = x, [root_mean_square(x)], []
        for w in initial_blocks(3, 8, 12, 2, rule=rule, std=0.3, seed=5, dtype=np.float32):
            new = block(stream, w, placement="pre", norm="layer", activation="gelu", causal=True)
            assert new.dtype == np.float32
            changes.append(root_mean_square(new - stream) / root_mean_square(stream))
            sizes.append(root_mean_square(new))
            stream = new
        assert np.array_equal(runs[rule].sizes, sizes) and np.array_equal(runs[rule].changes, changes)
        assert runs[rule].sizes.dtype == np.float32
    assert np.all(runs["zero"].changes == 0)                 # exactly the identity in float32 too


@pytest.mark.parametrize("dtype", [np.float16, int, "double precision"])
def test_start_of_training_refuses_a_number_type_it_cannot_draw(dtype):
    with pytest.raises(ValueError, match="dtype should be np.float64 or np.float32"):
        start_of_training(layers=1, d_model=4, d_ff=4, heads=1, dtype=dtype)


def test_start_of_training_refuses_no_layers():
    with pytest.raises(ValueError, match="layers should be a whole number"):
        start_of_training(layers=0, d_model=4, d_ff=4, heads=1)


def test_initial_blocks_check_the_number_of_layers_first():
    with pytest.raises(ValueError, match="layers should be a whole number"):
        list(initial_blocks(0, 0, 6))


def test_the_drawn_matrices_keep_their_columns_contiguous_and_the_generators_numbers():
    """Without BLAS (the browser's NumPy) x @ W reads W column by column: each column contiguous is
    what makes GPT-2 Small's blocks of notebook 04 fast there (benchmarks/NOTES.md); the numbers
    are default_rng(seed + i)'s, in the documented order, each matrix drawn with its shape reversed
    and transposed (so no copy puts it in column order)."""
    for i, drawn in enumerate(_drawn(2, 6, 10, seed=3)):
        generator = np.random.default_rng(3 + i)
        for matrix, shape in zip(drawn, [(6, 6)] * 4 + [(6, 10), (10, 6)]):
            assert matrix.flags.f_contiguous and matrix.shape == shape
            assert np.array_equal(matrix, generator.standard_normal(shape[::-1]).T)
    block = next(initial_blocks(1, 6, 10, seed=3))
    assert all(getattr(block, name).flags.f_contiguous for name in ("Wq", "Wk", "Wv", "Wo", "W_up", "W_down"))


# ---------------------------------------------------------------- no norm, the branches damped

def test_damped_blocks_scale_wo_and_w_down_alone():
    from lib.block import random_stack
    from lib.initialisation import damped
    blocks = random_stack(3, 8, 16, seed=2)
    for scale in (0.0, 0.25, 1.0):
        for before, after in zip(blocks, damped(blocks, scale)):
            assert np.array_equal(after.Wo, before.Wo * scale) and np.array_equal(after.W_down, before.W_down * scale)
            assert all(np.array_equal(getattr(after, n), getattr(before, n)) for n in ("Wq", "Wk", "Wv", "W_up"))
    with pytest.raises(ValueError, match="scale should be a number of at least 0"):
        damped(blocks, -1)


def test_with_damped_branches_and_no_norm_the_words_stay_apart():
    """Notebook 04's 48 random blocks and sentence (the layer-flow lab's), no norm anywhere: the
    words' mean cosine similarity after 48 blocks, with and without the FFN, at each scale of Wo
    and W_down, against every part on with pre-norm (0.818)."""
    from labs.decoder import layer_flow
    from lib.initialisation import norm_free_flow, output_std, similarity

    x, blocks = layer_flow.flow_inputs(True)[0], layer_flow._stack(0)
    found = {}
    for scale in (1.0, 0.3, output_std("gpt2", 1.0, 48), 0.1, 0.02, 0.0):
        without = norm_free_flow(x, blocks, scale, use_ffn=False)
        with_ffn = norm_free_flow(x, blocks, scale, activation="gelu")
        found[round(scale, 3)] = (round(without.similarity[-1], 3), round(with_ffn.similarity[-1], 3))
        assert without.sizes.shape == without.similarity.shape == (49,)
        assert with_ffn.similarity[0] == similarity(x)
    assert found == {1.0: (1.0, 1.0), 0.3: (0.878, 0.949), 0.102: (0.596, 0.541), 0.1: (0.589, 0.535),
                     0.02: (0.277, 0.279), 0.0: (round(similarity(x), 3),) * 2}
    every_part = layer_flow._flow(tuple([True] * len(layer_flow.PARTS)), 48, 0)["alike"][-1]
    assert round(every_part, 3) == 0.818
    assert all(found[s][1] < every_part for s in (0.102, 0.1, 0.02))      # further apart than with the norms
    sizes = norm_free_flow(x, blocks, 1.0).sizes
    assert sizes[-1] > 1e9 and norm_free_flow(x, blocks, 0.02).sizes[-1] < 1.3


def test_similarity_of_rows():
    from lib.initialisation import similarity
    assert similarity(np.array([[1.0, 0.0], [2.0, 0.0]])) == 1.0
    assert similarity(np.array([[1.0, 0.0], [0.0, 3.0]])) == 0.0
    assert similarity(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])) == pytest.approx(-1 / 3)
