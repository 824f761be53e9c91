"""lib.params: the curriculum's counts, memory figures and the real-model table."""

from dataclasses import replace

import numpy as np
import pytest

from lib.params import (COURSE_EXAMPLE, DETAILS, REAL_MODELS, TRAINED_MODEL, ModelConfig, Preset, beyond_plain,
                        block_parameters, count_parameters, doubled, ffn_parameters, gap_steps, gated_width,
                        mebibytes, presets, simple_version, trained_preset, trained_stored)

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


# ---------------------------------------------------------------- the calculator's models

def test_presets_are_the_course_example_the_real_models_and_the_trained_model():
    table = presets()
    assert list(table)[0] == COURSE_EXAMPLE and set(REAL_MODELS) <= set(table)
    assert all(isinstance(preset, Preset) for preset in table.values())
    example = table[COURSE_EXAMPLE]
    assert count_parameters(example.config).total == 109_529_856 and example.published is None
    for name, real in REAL_MODELS.items():
        assert table[name] == Preset(real.config, real.published, real.published_active, real.note)
    assert (TRAINED_MODEL in table) == (trained_preset() is not None)


def test_the_trained_model_preset_is_counted_exactly_by_its_weights_file():
    from lib import model

    config = trained_preset()
    if not (model.FOLDER / "weights.npz").exists():
        assert config is None and trained_stored() is None
        return
    assert config == model.config() and config.gated and config.tied
    with np.load(model.FOLDER / "weights.npz") as stored:
        numbers = sum(stored[name].size for name in stored.files)
    assert trained_stored() == numbers == count_parameters(config).total
    assert presets()[TRAINED_MODEL].published == numbers


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
