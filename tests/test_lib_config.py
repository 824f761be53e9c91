"""lib.config: a model's sizes and design choices, checked as they are given."""

from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

from lib.config import ModelConfig

SMALL = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12)


@pytest.mark.parametrize("changes, expected", [
    (dict(heads=5), "heads should divide d_model = 768"),
    (dict(kv_heads=5), "kv_heads should divide heads = 12"),
    (dict(norm="batch"), "norm should be one of 'rms', 'layer'"),
    (dict(learned_positions=True), "context should be the longest text"),
    (dict(experts=8, top_k=9), "top_k should be between 1 and experts = 8"),
    (dict(layers=0), "layers should be a whole number of at least 1"),
])
def test_bad_configurations_are_rejected(changes, expected):
    with pytest.raises(ValueError, match=expected):
        replace(SMALL, **changes)


@pytest.mark.parametrize("changes, expected", [
    (dict(kv_heads=0), "kv_heads should divide heads = 12, got kv_heads=0"),
    (dict(experts=8, top_k=0), "top_k should be between 1 and experts = 8, got 0"),
    (dict(d_model=0), "d_model should be a whole number of at least 1"),
    (dict(d_ff=0), "d_ff should be a whole number of at least 1"),
    (dict(vocab=0), "vocab should be a whole number of at least 1"),
    (dict(heads=0), "heads should be a whole number of at least 1"),
])
def test_more_bad_configurations_are_rejected(changes, expected):
    with pytest.raises(ValueError, match=expected):
        replace(SMALL, **changes)


def test_model_config_defaults_one_head_and_no_experts():
    odd = ModelConfig(d_model=3, layers=1, d_ff=4, vocab=5)             # one head divides any width
    assert odd.heads == 1 and odd.kv_heads is None and odd.top_k == 0 and odd.experts == 0
    assert (odd.context, odd.learned_positions, odd.gated, odd.tied, odd.biases, odd.norm) == \
        (None, False, False, True, False, "rms")
    assert (odd.shared_experts, odd.expert_d_ff, odd.dense_layers, odd.attention_per_block,
            odd.cache_per_block) == (0, None, 0, None, None)               # no mixture, every block alike
    with pytest.raises(ValueError, match="top_k should be between 1 and experts = 4, got 0"):
        ModelConfig(d_model=4, layers=1, d_ff=4, vocab=5, experts=4)      # a mixture must say its top_k


def test_the_edges_of_kv_heads_and_top_k_are_accepted_and_one_past_them_refused():
    """One set of keys and values for all heads (multi-query attention) and every head its own are
    both allowed, none is not; a mixture may route each token to one expert or to all of them."""
    assert replace(SMALL, kv_heads=1).kv_heads == 1 and replace(SMALL, kv_heads=12).kv_heads == 12
    with pytest.raises(ValueError, match="kv_heads should divide heads = 12, got kv_heads=0"):
        replace(SMALL, kv_heads=0)
    for top_k in (1, 8):
        assert replace(SMALL, experts=8, top_k=top_k).top_k == top_k
    for top_k in (0, 9):
        with pytest.raises(ValueError, match=f"top_k should be between 1 and experts = 8, got {top_k}"):
            replace(SMALL, experts=8, top_k=top_k)


def test_sizes_given_as_numpy_integers_are_kept_as_python_integers():
    """The browser's NumPy counts in int32, which wraps past 2**31: every size is stored as a
    Python int, whatever integer type it was given as."""
    config = ModelConfig(d_model=np.int32(96), layers=np.int64(4), d_ff=np.int32(256), vocab=np.int16(55),
                         heads=np.int32(4), kv_heads=np.int32(2), context=np.int32(256), experts=np.int32(4),
                         top_k=np.int32(2), shared_experts=np.int32(1), expert_d_ff=np.int32(64),
                         dense_layers=np.int32(1), attention_per_block=np.int32(100),
                         cache_per_block=np.int32(576))
    names = ("d_model", "layers", "d_ff", "vocab", "heads", "kv_heads", "context", "experts", "top_k",
             "shared_experts", "expert_d_ff", "dense_layers", "attention_per_block", "cache_per_block")
    assert all(type(getattr(config, name)) is int for name in names)


def test_a_configuration_cannot_be_changed_in_place():
    with pytest.raises(FrozenInstanceError):
        SMALL.d_model = 1
    assert replace(SMALL) == SMALL and hash(replace(SMALL)) == hash(SMALL)
