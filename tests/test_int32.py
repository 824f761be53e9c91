"""The course's integer arithmetic with 32-bit integers, as the browser runs it.

The browser's Python is 32-bit WebAssembly (Pyodide), where NumPy's default integer is int32:
``np.arange(n)``, ``np.array([768, 12])``, a sum of booleans, ``np.argsort`` all give int32 there
and int64 here. A count made from them wraps around past 2,147,483,647 in the browser only. These
tests hand the course's functions the integers the browser would hand them (NumPy int32 scalars,
``np.arange(..., dtype=np.int32)`` arrays) and require the very results Python's integers give,
with every NumPy overflow turned into an error.
"""

import dataclasses
import warnings

import numpy as np
import pytest

from labs.decoder import models
from lib import attention, model, moe, params, positional

LARGEST = np.iinfo(np.int32).max
# LLaMA 3.1 405B's sizes (d 16,384, FFN 53,248, 126 blocks, vocabulary 128,256): every one fits in
# 32 bits, its products do not.
BIG = dict(d_model=16384, layers=126, d_ff=53248, vocab=128256, heads=128)


def strict(function, *args, **kwargs):
    """Call with every NumPy overflow and every warning raised as an error."""
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args, **kwargs)


def as_int32(value):
    """What the browser's NumPy holds for a whole number: np.int32 (None and booleans unchanged)."""
    if isinstance(value, bool) or value is None or not isinstance(value, (int, np.integer)):
        return value
    assert value <= LARGEST, f"{value} does not fit in 32 bits: the browser could not hold it either"
    return np.int32(value)


def whole(value):
    """A Python int: exact at any size, in the browser too."""
    return type(value) is int


def config_as_int32(config):
    return {f.name: as_int32(getattr(config, f.name)) for f in dataclasses.fields(config)}


PRESETS = models.presets()


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_count_of_a_preset_given_32_bit_sizes_is_the_python_count(name):
    config = PRESETS[name].config
    narrow = strict(params.ModelConfig, **config_as_int32(config))
    count, expected = strict(params.count_parameters, narrow), params.count_parameters(config)
    fields = [f.name for f in dataclasses.fields(expected)] + ["total", "active", "blocks", "norms"]
    for field in fields:
        assert getattr(count, field) == getattr(expected, field) and whole(getattr(count, field)), field
    assert strict(params.gap_steps, narrow) == params.gap_steps(config)
    for what in ("depth", "width"):
        doubled = strict(params.count_parameters, strict(params.doubled, narrow, what))
        assert doubled.total == params.count_parameters(params.doubled(config, what)).total
        assert whole(doubled.total)
    memory = strict(params.mebibytes, as_int32(min(expected.total, LARGEST)), as_int32(4))
    assert memory == params.mebibytes(min(expected.total, LARGEST), 4)


def test_counting_functions_given_32_bit_sizes_count_past_two_billion():
    d, d_ff = as_int32(BIG["d_model"]), as_int32(BIG["d_ff"])
    for gated in (False, True):
        for biases in (False, True):
            count = strict(params.ffn_parameters, d, d_ff, gated, biases)
            expected = params.ffn_parameters(BIG["d_model"], BIG["d_ff"], gated, biases)
            assert count == expected and whole(count)
    assert params.ffn_parameters(BIG["d_model"], BIG["d_ff"], gated=True) > LARGEST
    config = strict(params.ModelConfig, **{k: as_int32(v) for k, v in BIG.items()})
    assert all(whole(getattr(config, k)) for k in BIG)
    total = strict(params.count_parameters, config).total
    by_hand = (BIG["vocab"] * BIG["d_model"] + BIG["d_model"]
               + BIG["layers"] * (4 * BIG["d_model"] ** 2 + 2 * BIG["d_model"] * BIG["d_ff"] + 2 * BIG["d_model"]))
    assert total == by_hand and whole(total)
    for function in (params.gated_width, params.equal_count_gated_width):
        width = strict(function, d, as_int32(64))
        assert width == function(BIG["d_model"], 64) and whole(width)


def test_the_calculator_given_32_bit_controls_counts_as_with_python_integers():
    from labs.decoder.calculator import calculator_model
    from labs.ffn.parameters import parameters_model

    settings = dict(d_model=16384, layers=126, heads=128, d_ff=53248, vocab=128256, experts=64, top_k=4)
    narrow = strict(calculator_model, **{k: as_int32(v) for k, v in settings.items()})
    wide = calculator_model(**settings)
    assert narrow.ok and narrow.total == wide.total > LARGEST
    for key in ("total", "active", "depth2", "width2"):
        assert getattr(narrow, key) == getattr(wide, key) and whole(getattr(narrow, key)), key
    assert narrow.verdict == wide.verdict
    block = strict(parameters_model, as_int32(16384), 8.0, True, as_int32(256))
    assert block == parameters_model(16384, 8.0, True, 256)
    assert all(whole(getattr(block, k)) for k in ("attention", "ffn", "norms", "total", "width", "d_ff"))


def test_positions_and_sizes_given_as_32_bit_integers_give_the_same_tables():
    assert np.array_equal(strict(positional.sinusoidal, as_int32(501), as_int32(8)), positional.sinusoidal(501, 8))
    positions = np.arange(0, 131072, 97, dtype=np.int32)          # up to DeepSeek-V3's context
    assert np.array_equal(strict(positional.rope_angles, positions, as_int32(64)),
                          positional.rope_angles(positions.astype(np.int64), 64))
    x = np.random.default_rng(0).normal(size=(6, 8))
    for offset in (3, 131066):
        assert np.array_equal(strict(positional.rope, x, offset=as_int32(offset)), positional.rope(x, offset=offset))
    assert np.array_equal(strict(attention.causal_mask, as_int32(7)), attention.causal_mask(7))


def test_the_trained_model_given_32_bit_token_ids_gives_the_same_numbers():
    ids = model.heldout().ids
    narrow = np.asarray(ids).astype(np.int32)          # what np.array(list_of_ids) is in the browser
    logits = model.forward(ids)
    assert np.array_equal(strict(model.forward, narrow), logits)
    assert np.array_equal(strict(model.embed, narrow), model.embed(ids))
    assert strict(model.perplexity, logits, narrow) == model.perplexity(logits, ids)
    assert np.array_equal(strict(model.token_losses, logits, narrow), model.token_losses(logits, ids))
    assert strict(model.decode, narrow) == model.decode(ids)
    skip = np.array([1, 2], dtype=np.int32)
    assert np.array_equal(strict(model.forward, narrow[:12], skip=skip), model.forward(ids[:12], skip=(1, 2)))


def test_routing_counts_with_32_bit_indices_and_sizes():
    scores = np.random.default_rng(1).normal(size=(40, 8))
    routing = strict(moe.route, scores, as_int32(2))
    assert np.array_equal(routing.experts, moe.route(scores, 2).experts)
    narrow = routing.experts.astype(np.int32)                    # np.argsort's indices in the browser
    counts = strict(moe.tokens_per_expert, narrow, as_int32(8))
    assert np.array_equal(counts, moe.tokens_per_expert(routing.experts, 8)) and counts.sum() == 80


def test_the_circuits_the_record_and_live_training_given_32_bit_integers_give_the_same_numbers():
    from lib import circuits, generate, train

    ids = model.encode("copy b d a e | b d a e . copy h c f g | h c f g .")
    narrow = ids.astype(np.int32)
    maps = circuits.attention_maps(ids)
    assert np.array_equal(strict(circuits.attention_maps, narrow), maps)
    wide_scores, narrow_scores = circuits.head_scores(maps, ids), strict(circuits.head_scores, maps, narrow)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(wide_scores, narrow_scores))
    assert np.array_equal(strict(circuits.induction_targets, narrow), circuits.induction_targets(ids))
    text = model.heldout()
    wide = circuits.kind_scores(text.logits, text.ids, text.kinds)
    thin = strict(circuits.kind_scores, text.logits, text.ids.astype(np.int32), text.kinds.astype(np.int32), as_int32(9))
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(wide, thin))
    assert np.array_equal(strict(circuits.keys_without, narrow, (np.int32(0), np.int32(3)), (np.int32(1), np.int32(1))),
                          circuits.keys_without(ids, (0, 3), (1, 1)))
    assert strict(generate.greedy, narrow[:6], as_int32(5)).ids.tolist() == generate.greedy(ids[:6], 5).ids.tolist()
    run = strict(train.LiveTraining, as_int32(2), seed=as_int32(4), warmup=as_int32(10), d_model=as_int32(16),
                 d_ff=as_int32(64), length=as_int32(8), vocab=as_int32(8))
    assert np.array_equal(strict(run.advance, as_int32(5)), train.LiveTraining(2, seed=4, warmup=10).advance(5))
