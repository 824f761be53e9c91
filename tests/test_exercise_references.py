"""Every exercise's reference, retired ones included, against lib's own functions.

tests/test_exercises.py drives the current exercises from their definitions; the references of
retired exercises (kept so that notebooks saved from earlier releases still check them) are run
here too, and every reference whose body is more than one lib call is compared with the lib
functions it stands for on non-square shapes, one token and its default arguments.
"""

import pkgutil
from functools import partial
from types import SimpleNamespace

import numpy as np
import pytest

from engine.core import budget, inventory, registry
from exercises.definitions import decoder, mixture, norms, positional, trained
from exercises.retired import decoder as retired_decoder, ffn as retired_ffn
from exercises.retired import norms as retired_norms, positional as retired_positional, trained as retired_trained
from lib.attention import causal_weights
from lib.block import block, random_block_weights
from lib.ffn import ffn as lib_ffn
from lib.moe import route
from lib.norm import layer_norm, rms_norm
from lib.params import ModelConfig, block_parameters, count_parameters
from lib.positional import rope

from exercise_answers import mistake_feedback, try_variant, wrong_answers

EVERY = sorted(registry.all_exercises(retired=True), key=lambda e: e.id)
RETIRED = [e for e in EVERY if e.retired]


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.delenv("COURSE_STRICT", raising=False)
    monkeypatch.setattr(budget, "CALL_SECONDS", 1.0)


def test_the_registry_keeps_retired_exercises():
    assert {e.id for e in RETIRED} >= {"decoder-stack", "pre-norm-update", "leave-out-blocks"}
    assert not set(e.id for e in RETIRED) & set(e.id for e in registry.all_exercises())
    assert {e.id for e in EVERY} == {e.id for e in RETIRED} | {e.id for e in registry.all_exercises()}


def test_the_retired_exercises_live_apart_each_with_its_notebooks_definitions():
    """Every module of exercises.retired is named like the definitions module of a notebook (the
    registry loads it with that notebook: a module named otherwise would never be loaded), holds
    retired exercises of that notebook only, and together they are every retired exercise."""
    import exercises.retired as package

    modules = {nb.definitions.rpartition(".")[2]: nb.stem for nb in inventory.notebooks() if nb.definitions}
    found = [info.name for info in pkgutil.iter_modules(package.__path__)]
    assert len(found) >= 2 and set(found) <= set(modules), (found, modules)
    held = []
    for name in found:
        module = registry.retired_module(f"exercises.definitions.{name}")
        assert module.__name__ == f"exercises.retired.{name}"
        assert {e.notebook for e in module.DEFINITIONS} == {modules[name]}
        held += [e.id for e in module.DEFINITIONS]
    assert sorted(held) == [e.id for e in RETIRED]
    assert registry.retired_module("exercises.definitions.start") is None


def test_the_registry_refuses_a_retired_exercise_among_the_definitions_and_a_live_one_among_the_retired():
    live, old = registry.get_exercise("layer-norm-fix"), registry.get_exercise("layer-norm")
    with pytest.raises(ValueError, match=r"exercises.definitions.norms holds retired exercises \(layer-norm\)"):
        registry.definitions_of(SimpleNamespace(__name__="exercises.definitions.norms", DEFINITIONS=[live, old]),
                                retired=False)
    with pytest.raises(ValueError, match=r"exercises.retired.norms holds live exercises \(layer-norm-fix\)"):
        registry.definitions_of(SimpleNamespace(__name__="exercises.retired.norms", DEFINITIONS=[old, live]),
                                retired=True)
    assert registry.definitions_of(SimpleNamespace(__name__="m", DEFINITIONS=[old]), retired=True) == [old]


@pytest.mark.parametrize("ex", RETIRED, ids=lambda e: e.id)
def test_a_retired_exercise_still_accepts_its_solution(ex):
    for seed in range(3):
        fb = try_variant(ex, rng=np.random.default_rng(seed))
        assert fb.passed, fb.text()


def _as_expected(fb, answer):
    assert not fb.passed and fb.kind == answer.kind, fb.text()
    assert all(word.lower() in fb.text().lower() for word in answer.expect), fb.text()


@pytest.mark.parametrize("ex", RETIRED, ids=lambda e: e.id)
def test_a_retired_exercise_still_recognises_its_known_mistakes(ex):
    expected = {a.mistake: a for a in mistake_feedback() if a.exercise == ex.id}
    for mistake in ex.mistakes:
        fb = try_variant(ex, mistake.code)
        assert not fb.passed and fb.hint == mistake.hint, fb.text()
        if mistake.name in expected:
            _as_expected(fb, expected[mistake.name])


@pytest.mark.parametrize("ex,index", [(e, i) for e in RETIRED for i in range(len(wrong_answers(e.id)))],
                         ids=lambda v: v.id if hasattr(v, "id") else str(v))
def test_a_retired_exercise_still_rejects_its_wrong_answers(ex, index):
    answer = wrong_answers(ex.id)[index]
    _as_expected(try_variant(ex, answer.code), answer)


# ---------------------------------------------------------------- decoder

def test_causal_reference_is_lib_causal_weights_for_a_batch_of_any_length():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (5, 5), (3, 4, 4), (2, 1, 1), (4, 2, 2)]:
        scores = rng.normal(size=shape)
        np.testing.assert_allclose(retired_decoder._causal_reference(scores), causal_weights(scores))


def test_the_cached_reference_is_lib_causal_weights_and_the_last_rows_of_the_square():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (1, 6), (2, 5), (5, 5), (3, 2, 4), (2, 3, 4, 7)]:
        scores = rng.normal(size=shape)
        cached = decoder._cached_causal_reference(scores)
        np.testing.assert_allclose(cached, causal_weights(scores))
        queries, keys = shape[-2:]
        square = np.concatenate([rng.normal(size=shape[:-2] + (keys - queries, keys)), scores], axis=-2)
        np.testing.assert_allclose(cached, retired_decoder._causal_reference(square)[..., -queries:, :])


def _linear(w):
    return lambda h: h @ w


def test_decoder_reference_is_the_pre_norm_loop_with_a_final_norm():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4))
    attend, mix = _linear(rng.normal(size=(4, 4))), _linear(rng.normal(size=(4, 4)))
    norm = partial(layer_norm, eps=1e-5)
    for n_blocks in range(4):
        h = x
        for _ in range(n_blocks):
            h = h + attend(norm(h))
            h = h + mix(norm(h))
        np.testing.assert_allclose(retired_decoder._decoder_reference(x, n_blocks, attend, mix, norm), norm(h))
    one = x[:1]
    np.testing.assert_allclose(retired_decoder._decoder_reference(one, 0, attend, mix, norm), norm(one))


def test_leak_reference_measures_how_far_each_row_moves_when_later_rows_change():
    causal = lambda h: np.cumsum(h, axis=0)        # noqa: E731
    np.testing.assert_array_equal(retired_decoder._leak_reference(causal, np.ones((4, 3))), np.zeros(4))
    weights = np.array([1.0, -2.0, 0.5])
    looks_ahead = lambda h: h + h.sum(axis=0) * weights     # noqa: E731
    x = np.arange(15).reshape(5, 3)                # integers: the reference works on floats
    np.testing.assert_allclose(retired_decoder._leak_reference(looks_ahead, x), 2.0 * np.arange(4, -1, -1))
    np.testing.assert_array_equal(retired_decoder._leak_reference(looks_ahead, np.ones((1, 3))), [0.0])


def test_count_reference_is_lib_count_parameters():
    for d, layers, d_ff, vocab in [(4, 1, 16, 10), (8, 3, 12, 50), (6, 2, 24, 7)]:
        expected = count_parameters(ModelConfig(d_model=d, layers=layers, d_ff=d_ff, vocab=vocab)).total
        assert retired_decoder._count_reference(d, layers, d_ff, vocab) == expected


# ---------------------------------------------------------------- ffn

def test_sublayer_reference_adds_lib_ffn_to_the_stream():
    rng = np.random.default_rng(2)
    for tokens in (1, 3):
        x = rng.normal(size=(tokens, 4))
        W_up, b_up, W_down, b_down = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=(6, 4)), rng.normal(size=4)
        np.testing.assert_allclose(retired_ffn._sublayer_reference(x, W_up, b_up, W_down, b_down),
                                   x + lib_ffn(x, W_up, b_up, W_down, b_down))


def test_top2_reference_puts_lib_route_shares_on_the_two_chosen_experts():
    for scores in ([1.0, 3.0, 2.0, -1.0], [0.5, 0.2, 0.9], [2, 0, 1, 5, 3]):
        routing = route(np.asarray(scores, dtype=float), top_k=2)
        expected = np.zeros(len(scores))
        expected[routing.experts] = routing.shares
        got = mixture._top2_reference(scores)
        np.testing.assert_allclose(got, expected)
        assert np.count_nonzero(got) == 2 and np.isclose(got.sum(), 1.0)


def test_moe_and_block_references_are_lib_block_parameters():
    for d, d_ff, experts, top_k in [(4, 8, 4, 2), (6, 10, 8, 1), (5, 7, 3, 3)]:
        count = block_parameters(ModelConfig(d_model=d, layers=1, d_ff=d_ff, vocab=1, experts=experts,
                                             top_k=top_k))
        np.testing.assert_array_equal(mixture._moe_reference(d, d_ff, experts, top_k), [count.total, count.active])
    for d, d_ff, gated in [(4, 16, False), (6, 10, True), (3, 5, 1)]:
        expected = block_parameters(ModelConfig(d_model=d, layers=1, d_ff=d_ff, vocab=1, gated=bool(gated))).total
        assert retired_ffn._block_reference(d, d_ff, gated) == expected


# ---------------------------------------------------------------- norms

def test_pre_norm_reference_adds_f_of_the_normalised_stream():
    rng = np.random.default_rng(3)
    f = _linear(rng.normal(size=(5, 5)))
    for tokens in (1, 4):
        x = rng.normal(size=(tokens, 5))
        np.testing.assert_allclose(retired_norms._pre_norm_reference(x, f, layer_norm), x + f(layer_norm(x)))


def _growth(x, nudge, layers, norm, pre):
    a, b = x, x + nudge
    for f in layers:
        a, b = (a + f(norm(a)), b + f(norm(b))) if pre else (norm(a + f(a)), norm(b + f(b)))
    return np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(nudge ** 2))


def test_nudge_reference_is_the_growth_of_the_gap_through_either_placement():
    rng = np.random.default_rng(4)
    layers = [norms._tanh_layer(rng.normal(size=(4, 4))) for _ in range(3)]
    norm = partial(rms_norm, gain=np.ones(4))
    x = rng.normal(size=(3, 4))
    nudge = rng.normal(scale=1e-3, size=(3, 4))
    for placement in ("pre", "post"):
        expected = _growth(x, nudge, layers, norm, placement == "pre")
        np.testing.assert_allclose(norms._nudge_reference(x, nudge, layers, norm, placement), expected)
    assert norms._nudge_reference(x, nudge, [], norm, "pre") == pytest.approx(1.0)


def test_relative_reference_is_the_gap_s_growth_over_the_stream_s_growth():
    """relative-growth: the gap's growth divided by the stream's (the unnudged run's) growth, with
    either placement; with no layers, or layers that return zeros under pre-norm, exactly 1."""
    rng = np.random.default_rng(14)
    layers = [norms._tanh_layer(rng.normal(size=(4, 4))) for _ in range(5)]
    norm = partial(rms_norm, gain=np.ones(4))
    x = 3.0 * rng.normal(size=(2, 3, 4))
    nudge = rng.normal(scale=1e-3, size=(2, 3, 4))
    for placement in ("pre", "post"):
        a = x
        for f in layers:
            a = a + f(norm(a)) if placement == "pre" else norm(a + f(a))
        stream_growth = np.sqrt(np.mean(a ** 2)) / np.sqrt(np.mean(x ** 2))
        expected = _growth(x, nudge, layers, norm, placement == "pre") / stream_growth
        np.testing.assert_allclose(norms._relative_reference(x, nudge, layers, norm, placement), expected)
    assert norms._relative_reference(x, nudge, [], norm, "post") == pytest.approx(1.0)
    assert norms._relative_reference(x, nudge, [norms._zeros_f] * 3, norm, "pre") == pytest.approx(1.0)


# ---------------------------------------------------------------- positional

def test_scores_by_distance_are_lib_rope_scores_over_the_root_of_d():
    """At every signed distance t = m - n, from -max_distance to max_distance."""
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=8), rng.normal(size=8)
    for max_distance in (0, 1, 5):
        expected = [rope(q, offset=max(t, 0)) @ rope(k, offset=max(-t, 0)) / np.sqrt(8)
                    for t in range(-max_distance, max_distance + 1)]
        got = positional._scores_by_distance(q, k, max_distance)
        assert got.shape == (2 * max_distance + 1,)
        np.testing.assert_allclose(got, expected, atol=1e-12)
        after = retired_positional._scores_after(q, k, max_distance)          # the retired exercise's
        np.testing.assert_allclose(after, expected[max_distance:], atol=1e-12)


# ---------------------------------------------------------------- trained

def test_perplexity_reference_is_exp_of_the_mean_loss_with_more_words_than_tokens():
    probs = np.array([[0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]])
    targets = [1, 3, 0]
    expected = np.exp(-np.mean(np.log([0.6, 0.25, 0.7])))
    assert retired_trained._perplexity_reference(probs, targets) == pytest.approx(expected)
    assert retired_trained._perplexity_reference(probs[:1], [2]) == pytest.approx(5.0)


def test_run_blocks_reference_skips_exactly_the_named_blocks_in_order():
    blocks = [lambda h: h + 1.0, lambda h: h * 3.0, lambda h: h - 2.0]
    x = np.array([[1.0, 2.0]])
    cases = {(): (x + 1) * 3 - 2, (0,): x * 3 - 2, (1,): x + 1 - 2, (2,): (x + 1) * 3, (0, 1, 2): x}
    for skip, expected in cases.items():
        np.testing.assert_allclose(trained._run_blocks_reference(x, blocks, set(skip)), expected)


def test_leave_one_out_reference_scores_the_stack_without_each_block():
    blocks = [lambda h: h + 1.0, lambda h: h * 3.0, lambda h: h - 2.0]
    score = lambda h: float(h.sum())     # noqa: E731
    x = np.array([1.0, 2.0])
    expected = [score(x * 3 - 2), score(x + 1 - 2), score((x + 1) * 3)]
    np.testing.assert_allclose(trained._leave_one_out_reference(x, blocks, score), expected)
    np.testing.assert_allclose(trained._leave_one_out_reference(x, blocks[:1], score), [score(x)])


def test_block_reference_is_lib_block_pre_rms_causal_with_rope():
    w = random_block_weights(4, 8, seed=6, scale=0.5)
    rng = np.random.default_rng(6)
    for tokens in (1, 3):
        x = rng.normal(size=(tokens, 4))
        expected = block(x, w, positions=partial(rope, pairing="halves"))
        np.testing.assert_allclose(trained._block_reference(x, w), expected)


def test_perplexity_reference_works_in_double_precision_on_float32_probabilities():
    probs = np.array([[0.1, 0.6, 0.3], [0.3, 0.3, 0.4]], dtype=np.float32)
    right = probs.astype(np.float64)[[0, 1], [1, 2]]
    assert retired_trained._perplexity_reference(probs, [1, 2]) == pytest.approx(np.exp(-np.mean(np.log(right))),
                                                                         rel=1e-12)


def test_ablated_reference_skips_zeroes_or_averages_what_the_block_adds():
    """ablate-three-ways: skipping block k is running the others; zeroing it hands on zeros, which
    residual blocks without a bias keep at zero; its mean adds each token the average addition,
    which for one token is its own (nothing changes)."""
    rng = np.random.default_rng(21)
    blocks = trained._toy_blocks(rng, 4, 3)
    x = rng.normal(size=(5, 4))
    for k in range(3):
        kept = [b for i, b in enumerate(blocks) if i != k]
        np.testing.assert_allclose(trained._ablated_reference(x, blocks, k, "skip"),
                                   trained._run_blocks_reference(x, kept, set()))
        assert not np.any(trained._ablated_reference(x, blocks, k, "zero"))
    before = blocks[0](x)
    added = blocks[1](before) - before
    expected = blocks[2](before + added.mean(axis=0))
    np.testing.assert_allclose(trained._ablated_reference(x, blocks, 1, "mean"), expected)
    one = x[:1]
    np.testing.assert_allclose(trained._ablated_reference(one, blocks, 1, "mean"),
                               trained._run_blocks_reference(one, blocks, set()))


def test_leave_one_out_reference_returns_floats_when_the_scores_are_whole_numbers():
    blocks = [lambda h: h + 1, lambda h: h * 2]
    got = trained._leave_one_out_reference(np.array([1, 2]), blocks, lambda h: int(h.sum()))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [6.0, 5.0])
