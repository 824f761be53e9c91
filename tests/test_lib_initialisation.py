"""lib.initialisation: how a model's weights start and what its blocks do at step 0."""

import math

import numpy as np
import pytest

from lib.initialisation import RULES, gain_per_matrix, initial_blocks, output_std, start_of_training
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
        for name in ("Wq", "Wk", "Wv", "W1"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert np.allclose(b.Wo, a.Wo / math.sqrt(4)) and np.allclose(b.W2, a.W2 / math.sqrt(4))
    assert all(not z.Wo.any() and not z.W2.any() for z in blocks["zero"])
    assert np.std(blocks["all"][0].W1) == pytest.approx(0.02, rel=0.1)


def test_start_of_training_orders_the_rules_and_zero_is_the_identity():
    runs = start_of_training(layers=3, d_model=32, d_ff=128, heads=4, length=6)
    assert set(runs) == set(RULES)
    assert np.all(runs["zero"].changes == 0) and np.allclose(runs["zero"].sizes, runs["zero"].sizes[0])
    assert np.all(runs["gpt2"].changes < runs["all"].changes)
    assert runs["all"].sizes[0] == pytest.approx(1.0)
    small = start_of_training(layers=2, d_model=32, d_ff=128, heads=4, stream_rms=0.02, rules=("gpt2",))
    assert small["gpt2"].sizes[0] == pytest.approx(0.02)
