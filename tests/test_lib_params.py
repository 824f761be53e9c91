"""lib.params: the curriculum's counts and memory figures, checked on the course's examples and on
the published models the calculator offers (``labs.decoder.models``)."""

from dataclasses import replace

import numpy as np
import pytest

from labs.decoder.models import REAL_MODELS, RealModel
from lib.params import (DETAILS, ModelConfig, beyond_plain, block_parameters, count_parameters, doubled,
                        equal_count_gated_width, ffn_parameters, ffn_width, gap_steps, gated_width,
                        kv_cache_per_token, mebibytes, simple_version, training_memory)

SMALL = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12)
MIXTURE = replace(SMALL, experts=8, top_k=2)


def test_the_course_model():
    one = block_parameters(SMALL)
    assert (one.attention, one.ffn, one.norms, one.total) == (2_359_296, 4_718_592, 1_536, 7_079_424)
    assert round(one.attention / one.total, 3) == 0.333 and round(one.ffn / one.total, 3) == 0.667
    count = count_parameters(SMALL)
    assert count.total == 109_529_856 and count.blocks == 84_953_088 and count.embedding == 24_576_000
    shares = count.shares()
    assert [round(100 * shares[p], 1) for p in ("embedding", "attention", "ffn")] == [22.4, 25.8, 51.7]
    assert count.norms == 19_200
    assert round(mebibytes(count.total, 2), 1) == 208.9
    assert round(count_parameters(replace(SMALL, layers=24)).total / 1e6) == 194
    assert round(count_parameters(replace(SMALL, d_model=1536, d_ff=6144)).total / 1e6) == 389


def test_feed_forward_counts():
    assert ffn_parameters(768, 3072) == 4_718_592
    assert ffn_parameters(768, 2048, gated=True) == 4_718_592
    assert ffn_parameters(6, 12, biases=True) == 162
    assert [gated_width(768), gated_width(128), gated_width(960)] == [2048, 352, 2560]


def test_mixture_of_experts_counts():
    one = block_parameters(MIXTURE)
    assert one.router == 6_144 and one.total == 40_115_712 and one.active == 11_804_160
    count = count_parameters(MIXTURE)
    assert round(count.total / 1e6) == 506 and round(count.active / 1e6) == 166
    assert round(mebibytes(count.total, 2)) == 965 and round(mebibytes(count.total, 1)) == 483
    assert round(mebibytes(count_parameters(SMALL).total, 2)) == 209
    assert round(count.total / count_parameters(SMALL).total, 1) == 4.6
    assert round(count.active / count_parameters(SMALL).total, 1) == 1.5


def test_gpt2_small_gap_closes_with_the_embedding():
    simple = count_parameters(simple_version(REAL_MODELS["GPT-2 Small"].config))
    assert round(simple.blocks / 1e6, 1) == 85.0
    assert round(simple.embedding / 1e6, 1) == 38.6
    assert round((simple.blocks + simple.embedding) / 1e6, 1) == 123.6


def test_simple_block_counts_of_the_other_models():
    blocks = {name: count_parameters(simple_version(model.config)).blocks for name, model in REAL_MODELS.items()}
    assert round(blocks["GPT-2 Large"] / 1e6, 1) == 707.9
    assert round(blocks["LLaMA-7B"] / 1e9, 1) == 5.0
    assert round(blocks["DeepSeek-V3"] / 1e9, 1) == 28.7           # far below 671 B: experts


def test_full_configurations_reproduce_published_sizes():
    exact = {"GPT-2 Small": 124_439_808, "GPT-2 Medium": 354_823_168, "GPT-2 Large": 774_030_080,
             "LLaMA-7B": 6_738_415_616, "SmolLM2-360M": 361_821_120}
    for name, total in exact.items():
        model = REAL_MODELS[name]
        assert count_parameters(model.config).total == total
        assert abs(total / model.published - 1) < 0.01
    deepseek = REAL_MODELS["DeepSeek-V3"]
    count = count_parameters(deepseek.config)
    assert round(count.total / 1e9) == 671 == round(deepseek.published / 1e9)
    assert round(count.active / 1e9) == 38 and deepseek.published_active == 37e9   # published rounds down


def test_layer_norm_biases_tied_and_positions_each_change_the_count():
    base = count_parameters(SMALL).total
    assert count_parameters(replace(SMALL, norm="layer")).total - base == 25 * 768
    assert count_parameters(replace(SMALL, tied=False)).total - base == 32000 * 768
    assert count_parameters(replace(SMALL, context=1024, learned_positions=True)).total - base == 1024 * 768
    assert count_parameters(replace(SMALL, biases=True)).total - base == 12 * (4 * 768 + 3072 + 768)
    assert count_parameters(replace(SMALL, heads=12, kv_heads=4)).attention < count_parameters(SMALL).attention


def test_gap_steps_of_gpt2_add_up_to_its_full_count():
    config = REAL_MODELS["GPT-2 Small"].config
    steps = gap_steps(config)
    names = [what for what, _a, _t in steps]
    assert names[:3] == ["blocks alone (4·d² + 2·d·d_ff + 2·d each)", "embedding table (vocab × d)", "final norm"]
    added = dict((w, a) for w, a, _t in steps)
    assert (added[names[0]], added[names[1]], added["final norm"]) == (84_953_088, 38_597_376, 768)
    assert added["learned position table (context × d)"] == 1024 * 768
    assert names[3:] == ["learned position table (context × d)", "biases in attention and FFN",
                         "LayerNorm shifts (a second vector per norm)"]
    assert steps[-1][2] == count_parameters(config).total == 124_439_808
    assert all(total == sum(a for _w, a, _t in steps[:i + 1]) for i, (_w, _a, total) in enumerate(steps))


@pytest.mark.parametrize("name", list(REAL_MODELS))
def test_gap_steps_end_at_the_full_count_and_name_only_known_details(name):
    config = REAL_MODELS[name].config
    steps = gap_steps(config)
    assert steps[-1][2] == count_parameters(config).total
    assert {what for what, _a, _t in steps[3:]} <= {what for what, _fields in DETAILS}
    plain = ModelConfig(d_model=64, layers=2, d_ff=256, vocab=100)
    assert len(gap_steps(plain)) == 3 and gap_steps(plain)[-1][2] == count_parameters(plain).total


def test_doubling_the_depth_or_the_width():
    config = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000)
    deep, wide = doubled(config, "depth"), doubled(config, "width")
    assert deep.layers == 24 and (wide.d_model, wide.d_ff) == (1536, 6144)
    assert (count_parameters(deep).total, count_parameters(wide).total) == (194_482_944, 388_929_024)
    deepseek = REAL_MODELS["DeepSeek-V3"].config
    assert doubled(deepseek, "depth").dense_layers == 6
    wide = doubled(deepseek, "width")
    assert wide.expert_d_ff == 4096 and wide.attention_per_block == 4 * 187_107_328
    with pytest.raises(ValueError, match="what should be one of 'depth', 'width', got 'height'"):
        doubled(config, "height")


def test_beyond_plain_names_what_a_plain_count_leaves_out():
    assert beyond_plain(SMALL) == [] and beyond_plain(replace(SMALL, kv_heads=12)) == []
    assert beyond_plain(REAL_MODELS["LLaMA-7B"].config) == ["a gated FFN", "a separate output layer"]
    assert beyond_plain(REAL_MODELS["GPT-2 Small"].config) == ["biases", "LayerNorm shifts",
                                                               "a learned position table"]
    assert beyond_plain(REAL_MODELS["SmolLM2-360M"].config) == ["a gated FFN", "shared keys and values"]
    assert "experts" in beyond_plain(MIXTURE) and "its own attention" in beyond_plain(REAL_MODELS["DeepSeek-V3"].config)


# ---------------------------------------------------------------- boundaries and details

def test_multi_query_and_grouped_query_attention_narrow_only_keys_and_values():
    d, heads = 768, 12
    for kv_heads in (1, 4, 12):                                   # 1: multi-query; 12: every head its own
        config = replace(SMALL, kv_heads=kv_heads)
        kv_width = d // heads * kv_heads
        assert count_parameters(config).attention == 12 * (2 * d * d + 2 * d * kv_width)
    with_biases = replace(SMALL, kv_heads=1, biases=True)
    assert block_parameters(with_biases).attention == 2 * d * d + 2 * d * 64 + 2 * d + 2 * 64


def test_every_expert_may_be_chosen():
    every = replace(SMALL, experts=8, top_k=8)
    one = block_parameters(every)
    assert one.ffn_active == one.ffn == 8 * ffn_parameters(768, 3072)
    assert count_parameters(every).active == count_parameters(every).total


def test_ffn_counts_with_biases_plain_and_gated():
    assert ffn_parameters(6, 12, biases=True) == 2 * 6 * 12 + 12 + 6
    assert ffn_parameters(6, 12, gated=True, biases=True) == 3 * 6 * 12 + 2 * 12 + 6
    assert ffn_parameters(6, 12, gated=True) == 3 * 6 * 12 and ffn_parameters(6, 12) == 2 * 6 * 12
    gated = replace(SMALL, gated=True, biases=True)
    assert block_parameters(gated).ffn == ffn_parameters(768, 3072, gated=True, biases=True)


def test_norms_hold_a_gain_and_for_layer_norm_a_shift():
    assert block_parameters(SMALL).norms == 2 * 768 and count_parameters(SMALL).final_norm == 768
    layer = replace(SMALL, norm="layer")
    assert block_parameters(layer).norms == 4 * 768 and count_parameters(layer).final_norm == 2 * 768
    assert count_parameters(layer).norms == 12 * 4 * 768 + 2 * 768


def test_shares_count_the_output_layer_and_positions_with_the_embedding():
    for config in (replace(SMALL, tied=False), replace(SMALL, context=1024, learned_positions=True),
                   REAL_MODELS["DeepSeek-V3"].config):
        count = count_parameters(config)
        shares = count.shares()
        assert sum(shares.values()) == pytest.approx(1.0)
        assert shares["embedding"] * count.total == pytest.approx(count.embedding + count.positions + count.output)
        assert shares["norms"] * count.total == pytest.approx(count.norms)
        assert shares["router"] * count.total == pytest.approx(count.router)
    untied = count_parameters(replace(SMALL, tied=False))
    assert untied.output == untied.embedding == 32000 * 768 and untied.positions == 0


def test_deepseek_counted_by_hand():
    d, c = 7168, REAL_MODELS["DeepSeek-V3"].config
    shared = 129280 * d * 2 + 61 * 187_107_328 + 3 * 3 * d * 18432 + 61 * 2 * d + d
    count = count_parameters(c)
    assert count.total == shared + 58 * (257 * 3 * d * 2048 + d * 256)            # 256 routed + 1 shared
    assert count.active == shared + 58 * (9 * 3 * d * 2048 + d * 256)             # 8 routed + 1 shared
    assert count.router == 58 * d * 256
    dense = block_parameters(c, moe=False)
    assert dense.ffn == dense.ffn_active == 3 * d * 18432 and dense.router == 0
    assert block_parameters(c).active == block_parameters(c).total - 256 * 3 * d * 2048 + 8 * 3 * d * 2048


def test_a_mixture_without_an_expert_width_uses_d_ff_and_dense_layers_stop_at_the_depth():
    one = block_parameters(MIXTURE)
    assert one.ffn == 8 * ffn_parameters(768, 3072) and one.router == 768 * 8
    assert count_parameters(replace(MIXTURE, dense_layers=30)).total == count_parameters(SMALL).total
    two_dense = count_parameters(replace(MIXTURE, dense_layers=2))
    assert two_dense.ffn == 2 * ffn_parameters(768, 3072) + 10 * one.ffn
    shared = block_parameters(replace(MIXTURE, shared_experts=1, expert_d_ff=512))
    assert shared.ffn == 9 * ffn_parameters(768, 512) and shared.ffn_active == 3 * ffn_parameters(768, 512)


def test_simple_version_keeps_the_sizes_and_drops_every_detail():
    deepseek = REAL_MODELS["DeepSeek-V3"].config
    simple = simple_version(deepseek)
    assert simple == ModelConfig(d_model=7168, layers=61, d_ff=18432, vocab=129280, heads=128, context=131072)


def test_memory_and_widths():
    assert mebibytes(2 ** 20) == 2.0 and mebibytes(2 ** 20, 4) == 4.0 and mebibytes(3 * 2 ** 19, 1) == 1.5
    assert gated_width(100) == 288 and gated_width(100, 1) == 267 and gated_width(3, 1) == 8
    with pytest.raises(ValueError, match="multiple should be a whole number of at least 1"):
        gated_width(768, 0)
    with pytest.raises(ValueError, match="d_model should be a whole number of at least 1"):
        gated_width(0)


def test_ffn_width_is_the_narrowest_multiple_that_holds_the_budget():
    assert ffn_width(768) == 3072 and ffn_width(768, 1) == 1536                 # 4·d and 2·d plain
    assert ffn_width(768, 1, gated=True) == 1024 and ffn_width(960, 2, True, 256) == 2560
    assert ffn_width(4096, 2, True, 256) == 11008 == REAL_MODELS["LLaMA-7B"].config.d_ff
    assert ffn_width(960, 2, True, 256) == REAL_MODELS["SmolLM2-360M"].config.d_ff
    for d, times, gated, multiple in [(100, 1, True, 1), (128, 2, True, 32), (64, 3, False, 64), (7, 5, True, 4),
                                      (4096, 2, True, 256), (1, 1, True, 1)]:
        width = ffn_width(d, times, gated, multiple)
        budget = times * 4 * d * d
        assert width % multiple == 0 and ffn_parameters(d, width, gated) >= budget
        assert ffn_parameters(d, width - multiple, gated) < budget               # one multiple less falls short
    assert ffn_width(np.int32(96), np.int64(2), True, np.int32(8)) == 256
    assert ffn_width(2, 1, gated=True) == 3                                       # by default any width
    for d in (64, 100, 768, 4096):
        assert gated_width(d, 256) == ffn_width(d, 2, True, 256)
    for bad, message in ((dict(d_model=0), "d_model"), (dict(d_model=8, times=0), "times"),
                         (dict(d_model=8, multiple=0), "multiple")):
        with pytest.raises(ValueError, match=f"{message} should be a whole number of at least 1"):
            ffn_width(**bad)


def test_equal_count_gated_width():
    assert equal_count_gated_width(3072, 32) == 2048 == gated_width(768)
    assert equal_count_gated_width(512, 32) == 352 == gated_width(128)
    for d in (64, 96, 960, 4096):
        assert equal_count_gated_width(4 * d, 32) == gated_width(d, 32)
    assert equal_count_gated_width(10) == 7 and equal_count_gated_width(9) == 6      # 2/3 of d_ff, up
    for d_ff in (300, 301, 1000):
        width = equal_count_gated_width(d_ff)
        assert ffn_parameters(64, width, gated=True) >= ffn_parameters(64, d_ff) > ffn_parameters(64, width - 1, gated=True)
    with pytest.raises(ValueError, match="d_ff should be a whole number of at least 1"):
        equal_count_gated_width(0)
    with pytest.raises(ValueError, match="multiple should be a whole number of at least 1"):
        equal_count_gated_width(10, 0)


def test_real_models_carry_their_published_sizes_and_notes():
    for name, model in REAL_MODELS.items():
        assert model.note and (model.published_active is None) == (name != "DeepSeek-V3")
    assert RealModel(SMALL, 1.0).published_active is None and RealModel(SMALL, 1.0).note == ""


def test_gap_steps_add_each_detail_once_in_order():
    steps = {name: [(what, added) for what, added, _total in gap_steps(model.config)]
             for name, model in REAL_MODELS.items()}
    assert steps["LLaMA-7B"][3:] == [("separate output layer (untied)", 32000 * 4096),
                                     ("gated FFN (three matrices)", 32 * 4096 * 11008)]
    assert steps["SmolLM2-360M"][3:] == [("gated FFN (three matrices)", 32 * 960 * 2560),
                                         ("grouped-query attention (narrower Wk, Wv)", -32 * 2 * 960 * (960 - 320))]
    deepseek = [what for what, _added in steps["DeepSeek-V3"][3:]]
    assert deepseek == ["separate output layer (untied)", "gated FFN (three matrices)",
                        "latent attention (published count per block)", "mixture of experts (stored)"]
    assert steps["DeepSeek-V3"][5][1] == 61 * (187_107_328 - 4 * 7168 ** 2)
    layer_only = ModelConfig(d_model=8, layers=2, d_ff=32, vocab=10, norm="layer")
    assert gap_steps(layer_only)[3:] == [("LayerNorm shifts (a second vector per norm)", 5 * 8,       # 2 per block, 1 final
                                          count_parameters(layer_only).total)]


def test_doubled_keeps_what_is_not_doubled():
    wide = doubled(MIXTURE, "width")
    assert (wide.expert_d_ff, wide.attention_per_block, wide.layers, wide.experts) == (None, None, 12, 8)
    deep = doubled(replace(MIXTURE, dense_layers=1), "depth")
    assert (deep.layers, deep.dense_layers, deep.d_model) == (24, 2, 768)


def test_beyond_plain_names_every_extra():
    everything = replace(SMALL, gated=True, tied=False, biases=True, experts=4, top_k=1, norm="layer",
                         context=64, learned_positions=True, kv_heads=4, attention_per_block=10)
    assert beyond_plain(everything) == ["a gated FFN", "a separate output layer", "biases", "experts",
                                        "LayerNorm shifts", "a learned position table", "shared keys and values",
                                        "its own attention"]
    assert beyond_plain(replace(SMALL, kv_heads=None)) == []


def test_block_and_model_totals_add_their_parts():
    one = block_parameters(MIXTURE)
    assert one.total == one.attention + one.ffn + one.router + one.norms
    assert one.active == one.attention + one.ffn_active + one.router + one.norms
    count = count_parameters(replace(MIXTURE, tied=False, context=8, learned_positions=True))
    assert count.blocks == count.attention + count.ffn + count.router + count.block_norms
    assert count.total == count.embedding + count.positions + count.output + count.blocks + count.final_norm
    assert count.active == count.total - count.ffn + count.ffn_active


def test_configurations_and_counts_cannot_be_changed_in_place():
    import dataclasses

    count = count_parameters(SMALL)
    for frozen, field in [(SMALL, "d_model"), (count, "embedding"), (block_parameters(SMALL), "ffn"),
                          (REAL_MODELS["GPT-2 Small"], "published")]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(frozen, field, 1)
    assert len({SMALL, replace(SMALL), MIXTURE}) == 2                    # frozen, so they can be dict keys


def test_one_expert_is_still_a_mixture_beyond_the_plain_model():
    one = ModelConfig(d_model=4, layers=1, d_ff=4, vocab=5, experts=1, top_k=1)
    assert beyond_plain(one) == ["experts"]


def test_counts_are_whole_numbers_with_grouped_query_attention():
    count = count_parameters(REAL_MODELS["SmolLM2-360M"].config)
    assert all(type(getattr(count, name)) is int for name in ("attention", "ffn", "total", "active"))
    assert count.attention == 32 * (2 * 960 * 960 + 2 * 960 * 64 * 5)


def test_experts_of_a_gated_ffn_with_biases_count_the_gate_bias():
    config = ModelConfig(d_model=8, layers=3, d_ff=32, vocab=10, gated=True, biases=True, experts=4, top_k=2,
                         expert_d_ff=6, dense_layers=1)
    one_expert = 3 * 8 * 6 + 2 * 6 + 8                      # W_gate, W_up, W_down and the biases of each
    dense = 3 * 8 * 32 + 2 * 32 + 8
    assert block_parameters(config).ffn == 4 * one_expert
    assert count_parameters(config).ffn == dense + 2 * 4 * one_expert


def test_real_models_carry_their_published_heads_and_context():
    published = {"GPT-2 Small": (12, None, 1024), "GPT-2 Medium": (16, None, 1024),
                 "GPT-2 Large": (20, None, 1024), "LLaMA-7B": (32, None, 2048),
                 "SmolLM2-360M": (15, 5, 8192), "DeepSeek-V3": (128, None, 131072)}
    assert {name: (m.config.heads, m.config.kv_heads, m.config.context) for name, m in REAL_MODELS.items()} \
        == published


def test_the_kv_cache_holds_a_key_and_a_value_per_block_of_the_key_value_heads_only():
    gpt2, llama, smol, deepseek = (REAL_MODELS[n].config for n in
                                   ("GPT-2 Small", "LLaMA-7B", "SmolLM2-360M", "DeepSeek-V3"))
    assert kv_cache_per_token(gpt2) == 12 * 2 * 768 == 18_432
    assert kv_cache_per_token(llama) == 32 * 2 * 4096 == 262_144
    assert kv_cache_per_token(smol) == 32 * 2 * 5 * 64 == 20_480                  # 5 sets of 64 numbers
    assert kv_cache_per_token(replace(smol, kv_heads=None)) == 3 * kv_cache_per_token(smol)
    assert kv_cache_per_token(deepseek) == 61 * (512 + 64)                        # the latent and the rotary key
    assert kv_cache_per_token(replace(SMALL, kv_heads=1)) == 12 * 2 * 64          # one set for every head
    assert kv_cache_per_token(doubled(deepseek, "width")) == 2 * kv_cache_per_token(deepseek)
    assert kv_cache_per_token(doubled(smol, "depth")) == 2 * kv_cache_per_token(smol)


def test_training_with_adamw_holds_16_bytes_per_parameter_in_float32_and_in_mixed_precision():
    single, mixed = training_memory(109_529_856), training_memory(109_529_856, 2)
    assert (single.weights, single.gradients, single.master_copy, single.moments) == (
        438_119_424, 438_119_424, 0, 876_238_848)
    assert (mixed.weights, mixed.gradients, mixed.master_copy) == (219_059_712, 219_059_712, 438_119_424)
    assert single.total == mixed.total == 16 * 109_529_856 == 1_752_477_696
    assert training_memory(np.int32(1000), np.int32(4)).total == 16_000 and type(single.total) is int


def test_whole_numbers_become_exact_python_integers_and_nothing_else_changes():
    """A NumPy integer (32 bits in the browser) would wrap past 2**31: every count takes its
    sizes as Python ints. A flag and a fraction of a byte stay what they are."""
    from lib.params import _whole

    assert type(_whole(np.int32(7))) is int and _whole(np.int32(7)) == 7
    assert _whole(True) is True and _whole(0.5) == 0.5 and _whole(None) is None
    wide = ffn_parameters(np.int32(50_000), np.int32(200_000))          # 2 × 10**10: past 2**31
    assert type(wide) is int and wide == 2 * 50_000 * 200_000
    assert training_memory(1000, 0.5).weights == 500                   # 4-bit weights: half a byte each


def test_the_kv_cache_is_a_whole_number_and_a_master_copy_is_kept_below_four_bytes():
    assert type(kv_cache_per_token(SMALL)) is int and kv_cache_per_token(SMALL) == 12 * 2 * 768
    assert training_memory(100, 3).master_copy == 400 and training_memory(100, 4).master_copy == 0
    memory = training_memory(100, 2)
    with pytest.raises(AttributeError):
        memory.weights = 0                                             # a result, not to be changed


def test_the_published_models_are_still_reachable_where_they_used_to_be():
    from lib import params

    assert params.REAL_MODELS is REAL_MODELS                           # notebooks of earlier releases
    with pytest.raises(AttributeError, match="module 'lib.params' has no attribute 'NO_SUCH_NAME'"):
        params.NO_SUCH_NAME
