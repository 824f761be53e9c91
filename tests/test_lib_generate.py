"""lib.generate: cached decoding equals a full rerun and PyTorch's forward pass, greedy continuations
equal PyTorch's, the sampling rules equal a PyTorch version of them, the work per token is the
counted matrix work, and the cache's bytes are lib.params' formula."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from lib import generate, model
from lib.attention import KVCache
from lib.params import ModelConfig, kv_cache_per_token

ROOT = Path(__file__).resolve().parents[1]
# Cached and full logits differ by float32 rounding alone (the products are summed in another
# order): 8.6e-6 at most on the held-out text, whose largest logit is about 22.
CACHED_TOLERANCE = 5e-5
PROMPTS = ("copy b d a |", "reverse h c f g |", "count 3", "down 8", "2 plus 5 is", "the big cats",
           "copy a b | a b . copy g e h |")


@pytest.fixture(scope="module")
def torch_model():
    """The committed weights in the training script's PyTorch model, in float32 as trained."""
    from training import train
    with np.load(model.FOLDER / "weights.npz") as arrays:
        return train.model_from_numpy_weights(model.info()["config"], dict(arrays), dtype=torch.float32)


def token_by_token(ids, **details):
    """The logits of every token of ids, each run alone after the cache of the ones before."""
    caches = generate.new_caches()
    return np.concatenate([generate.cached_forward(ids[i:i + 1], caches, **details) for i in range(len(ids))])


# ---------------------------------------------------------------- the cache gives the same logits

def test_cached_logits_token_by_token_equal_a_full_rerun_and_pytorch_s_forward(torch_model):
    ids = model.heldout().ids
    full, cached = model.forward(ids), token_by_token(ids)
    assert cached.shape == full.shape == (256, 55) and cached.dtype == np.float32
    assert np.abs(cached - full).max() < CACHED_TOLERANCE
    with torch.no_grad():
        theirs = torch_model(torch.tensor(ids)[None])[0].numpy()
    assert np.abs(cached - theirs).max() < 1e-4
    assert np.abs(full).max() > 10                                  # real logits, not near-zero ones
    # sharp enough to catch a cache that turns the new token's query and key at position 0
    # instead of its own (RoPE without the offset): logits far from the full rerun's
    from lib.block import block
    from lib.positional import rope
    caches = generate.new_caches()
    generate.cached_forward(ids[:42], caches)
    x = model.embed(ids[42:43])
    for b, cache in zip(model.weights().blocks, caches):
        x = block(x, b, cache=cache, positions=lambda q, offset=0: rope(q))
    assert np.abs(model.output_logits(x)[0] - full[42]).max() > 1.0


def test_cached_logits_in_chunks_and_with_other_details_equal_the_full_rerun():
    ids = model.heldout_texts()[3].ids[:120]
    for details in ({}, {"positions": False}, {"base": 500.0, "pairing": "neighbours"}, {"norm": "layer", "eps": 0.1}):
        caches = generate.new_caches()
        parts = [generate.cached_forward(ids[a:b], caches, **details) for a, b in ((0, 50), (50, 51), (51, 120))]
        assert np.abs(np.concatenate(parts) - model.forward(ids, **details)).max() < CACHED_TOLERANCE, details
        assert [c.length for c in caches] == [120] * 4


def test_the_cache_holds_each_block_s_turned_keys_and_values_of_every_token():
    ids = model.heldout().ids[:30]
    caches = generate.new_caches()
    generate.cached_forward(ids, caches)
    w, trace = model.weights(), model.forward(ids, trace=True)
    from lib.norm import rms_norm
    from lib.positional import rope
    for i, (cache, b) in enumerate(zip(caches, w.blocks)):
        read = rms_norm(trace.streams[i], b.attention_norm_gain)                   # (30, 96)
        keys = rope((read @ b.Wk).reshape(30, 4, 24).swapaxes(0, 1))              # (4, 30, 24)
        values = (read @ b.Wv).reshape(30, 4, 24).swapaxes(0, 1)
        assert cache.keys.shape == cache.values.shape == (4, 30, 24)
        assert np.allclose(cache.keys, keys, atol=1e-5) and np.allclose(cache.values, values, atol=1e-5)


def test_the_cache_s_bytes_are_lib_params_kv_cache_formula():
    ids = model.heldout().ids
    caches = generate.new_caches()
    for n, chunk in ((1, ids[:1]), (64, ids[1:64]), (256, ids[64:])):
        generate.cached_forward(chunk, caches)
        per_token = kv_cache_per_token(model.config())
        assert per_token == 4 * 2 * 96 == 768
        assert generate.cache_bytes(caches) == generate.kv_cache_bytes(n) == per_token * n * 4
    assert generate.kv_cache_bytes(256) == 786_432
    assert generate.kv_cache_bytes(10, bytes_per_number=2) == 15_360
    gpt2 = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=50257, heads=12)
    assert generate.kv_cache_bytes(1024, 2, gpt2) == 18_432 * 1024 * 2


def test_caches_of_the_wrong_number_or_shape_are_refused_in_words():
    ids = model.heldout().ids[:5]
    with pytest.raises(ValueError, match="one KVCache per block"):
        generate.cached_forward(ids, generate.new_caches(3))
    cache = KVCache()
    cache.append(np.zeros((4, 3, 24)), np.zeros((4, 3, 24)))
    with pytest.raises(ValueError, match=r"new keys should differ only in n, got shape \(2, 1, 24\)"):
        cache.append(np.zeros((2, 1, 24)), np.zeros((2, 1, 24)))


# ---------------------------------------------------------------- greedy continuations

def torch_greedy(torch_model, prompt, steps):
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(steps):
            ids.append(int(torch_model(torch.tensor(ids)[None])[0, -1].argmax()))
    return ids[len(prompt):]


@pytest.mark.parametrize("text", PROMPTS)
def test_greedy_continuations_equal_pytorch_s_with_the_cache_and_without(text, torch_model):
    prompt = model.encode(text)
    cached, rerun = generate.greedy(prompt, 24), generate.greedy(prompt, 24, cache=False)
    assert cached.ids.tolist() == rerun.ids.tolist() == torch_greedy(torch_model, prompt, 24)
    assert np.abs(cached.logits - rerun.logits).max() < CACHED_TOLERANCE
    assert np.array_equal(cached.chosen_from, np.ones(24))
    assert np.array_equal(cached.ids, cached.logits.argmax(axis=1))


def test_greedy_copies_the_letters_and_says_how_sure_it_is():
    out = generate.greedy(model.encode("copy b d a |"), 4)
    assert model.decode(out.ids) == "b d a ."
    assert (out.probabilities > 0.99).all()
    expected = model.probabilities(model.forward(model.encode("copy b d a | b d a"))[-4:].astype(np.float64))
    assert np.allclose(out.probabilities, expected[np.arange(4), out.ids], atol=1e-5)
    assert out.distributions.shape == out.logits.shape == (4, 55) and out.ids.dtype == np.int64


# ---------------------------------------------------------------- sampling

def torch_distribution(logits, temperature, top_k, top_p):
    """The temperature, top-k and top-p rules as common PyTorch generation code writes them."""
    scores = torch.tensor(logits, dtype=torch.float64) / temperature
    if top_k is not None:
        scores = scores.masked_fill(scores < torch.topk(scores, top_k)[0][-1], -float("inf"))
    if top_p is not None:
        ordered, index = torch.sort(scores, descending=False)
        cumulative = ordered.softmax(-1).cumsum(-1)
        remove = cumulative <= 1 - top_p
        remove[-1] = False                                             # keep at least one
        scores = scores.masked_fill(remove.scatter(0, index, remove), -float("inf"))
    return scores.softmax(-1).numpy()


def test_the_sampling_rules_equal_pytorch_s():
    rng = np.random.default_rng(5)
    rows = [rng.normal(0, 3, 55) for _ in range(40)] + list(model.heldout().logits[:40])
    settings = [(1.0, None, None), (0.5, None, None), (2.0, None, None), (1.0, 5, None), (1.0, None, 0.9),
                (0.7, 10, 0.8), (1.3, 1, None), (1.0, None, 0.05), (1.0, 55, 1.0), (0.8, 3, 0.5)]
    for logits in rows:
        for temperature, top_k, top_p in settings:
            ours = generate.next_token_distribution(logits, temperature, top_k, top_p)
            theirs = torch_distribution(logits, temperature, top_k, top_p)
            assert np.allclose(ours, theirs, atol=1e-12), (temperature, top_k, top_p)
            assert ours.sum() == pytest.approx(1.0, abs=1e-12)


def test_the_docstring_s_worked_numbers():
    d = generate.next_token_distribution
    assert np.round(d([2, 1, 0, -1]), 3).tolist() == [0.644, 0.237, 0.087, 0.032]
    assert np.round(d([2, 1, 0, -1], 0.5), 3).tolist() == [0.865, 0.117, 0.016, 0.002]
    assert np.round(d([2, 1, 0, -1], top_k=2), 3).tolist() == [0.731, 0.269, 0, 0]
    assert np.round(d([2, 1, 0, -1], top_p=0.85), 3).tolist() == [0.731, 0.269, 0, 0]
    assert np.round(d([2, 1, 0, -1], top_p=0.6), 3).tolist() == [1, 0, 0, 0]
    assert d([1, 3, 3, 0], 0).tolist() == [0, 1, 0, 0]                 # greedy: the first of ties
    assert d([1, 3, 3, 0], 1, top_k=1).tolist() == [0, 0.5, 0.5, 0]    # tied with the k-th: kept
    assert generate.pick([0.5, 0.3, 0.2], 0.6) == 1
    assert [generate.pick([0.5, 0.3, 0.2], u) for u in (0.0, 0.4999, 0.5, 0.7999, 0.8, 0.99999)] == [0, 0, 1, 1, 2, 2]
    assert generate.pick([0.0, 1.0, 0.0], 0.0) == 1 and generate.pick([0.0, 1.0, 0.0], 0.999) == 1


def test_picks_follow_the_distribution():
    distribution = generate.next_token_distribution(model.heldout().logits[10], 1.5, top_k=6)
    rng = np.random.default_rng(0)
    counts = np.bincount([generate.pick(distribution, u) for u in rng.random(20_000)], minlength=55)
    assert set(np.flatnonzero(counts)) <= set(np.flatnonzero(distribution))
    assert np.abs(counts / 20_000 - distribution).max() < 0.015


def test_a_seed_gives_the_same_continuation_and_each_token_its_drawn_probability():
    prompt = model.encode("the big cat")
    first = generate.generate(prompt, 40, temperature=1.2, top_p=0.95, seed=11)
    again = generate.generate(prompt, 40, temperature=1.2, top_p=0.95, seed=11)
    other = generate.generate(prompt, 40, temperature=1.2, top_p=0.95, seed=12)
    rerun = generate.generate(prompt, 40, temperature=1.2, top_p=0.95, seed=11, cache=False)
    assert first.ids.tolist() == again.ids.tolist() == rerun.ids.tolist() != other.ids.tolist()
    rng = np.random.default_rng(11)                                   # one uniform number per token, in order
    for row, token, u in zip(first.distributions, first.ids, rng.random(40)):
        assert generate.pick(row, u) == token
    assert np.allclose(first.chosen_from, first.distributions[np.arange(40), first.ids])
    assert np.allclose(first.distributions, [generate.next_token_distribution(r, 1.2, None, 0.95)
                                             for r in first.logits])
    assert (first.chosen_from > 0).all() and (first.probabilities < 1).any()


def test_generation_stops_after_the_stop_token_and_at_zero_steps():
    prompt = model.encode("copy b d a |")
    assert model.decode(generate.greedy(prompt, 20, stop=".").ids) == "b d a ."
    assert model.decode(generate.greedy(prompt, 20, stop=model.encode(".")[0]).ids) == "b d a ."
    none = generate.greedy(prompt, 0)
    assert none.ids.shape == (0,) and none.logits.shape == (0, 55) and none.probabilities.shape == (0,)


def test_a_text_may_fill_the_context_and_no_more():
    prompt = model.heldout().ids[:250]
    assert len(generate.greedy(prompt, 6).ids) == 6
    with pytest.raises(ValueError, match="steps should be a whole number from 0 to 6, got 7"):
        generate.greedy(prompt, 7)
    with pytest.raises(ValueError, match="at most the model's context, 256 tokens, got 257"):
        generate.greedy(np.zeros(257, dtype=int), 1)


@pytest.mark.parametrize("bad, message", [
    (dict(prompt=[]), "prompt should be token ids"), (dict(prompt=[1.5, 2.0]), "prompt should be token ids"),
    (dict(prompt=[[1, 2]]), "prompt should be token ids"), (dict(prompt=[3, 55]), "from 0 to 54, got 3 to 55"),
    (dict(prompt=[-1, 3]), "from 0 to 54"), (dict(steps=-1), "steps should be a whole number"),
    (dict(steps=2.0), "steps should be a whole number"), (dict(temperature=-0.1), "temperature should be a number at least 0"),
    (dict(temperature="hot"), "temperature should be a number"), (dict(top_k=0), "top_k should be a whole number from 1 to 55"),
    (dict(top_k=56), "top_k should be a whole number from 1 to 55"), (dict(top_p=0.0), "top_p should be a number above 0"),
    (dict(top_p=1.5), "top_p should be a number above 0 and at most 1"), (dict(stop="zebra"), "zebra"),
])
def test_bad_settings_get_a_clear_message(bad, message):
    arguments = {"prompt": [2, 3], "steps": 3, **bad}
    with pytest.raises(ValueError, match=message):
        generate.generate(arguments.pop("prompt"), arguments.pop("steps"), **arguments)


def test_32_bit_token_ids_give_the_same_continuation():
    prompt = model.encode("copy b d a | b")
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        narrow = generate.generate(prompt.astype(np.int32), 12, top_k=np.int32(4), seed=np.int32(3), stop=np.int32(0))
    wide = generate.generate(prompt, 12, top_k=4, seed=3, stop=0)
    assert narrow.ids.tolist() == wide.ids.tolist() and np.array_equal(narrow.logits, wide.logits)
    assert generate.decoding_work(np.int32(256)).total == generate.decoding_work(256).total
    assert generate.kv_cache_bytes(np.int32(1 << 20), np.int32(4)) == 768 * 4 * (1 << 20)        # past 2**31


# ---------------------------------------------------------------- the work per new token

def test_the_work_per_token_grows_with_n_cached_and_with_n_squared_rerun():
    cached = [generate.decoding_work(n).total for n in (16, 64, 256)]
    rerun = [generate.decoding_work(n, cached=False).total for n in (16, 64, 256)]
    assert cached == [459_936, 496_800, 644_256]
    assert rerun == [7_358_976, 31_795_200, 164_929_536]
    assert [r // c for r, c in zip(rerun, cached)] == [16, 64, 256] and all(r % c == 0 for r, c in zip(rerun, cached))
    steps = np.diff([generate.decoding_work(n).total for n in range(1, 40)])
    assert (steps == 2 * 4 * 96).all()                                  # linear in n: 768 more per token
    second = np.diff([generate.decoding_work(n, cached=False).total for n in range(1, 40)], n=2)
    assert (second == 2 * 2 * 4 * 96).all()                             # quadratic in n
    work = generate.decoding_work(64)
    assert work == (4 * 4 * 96 * 96, 4 * 2 * 64 * 96, 4 * 3 * 96 * 256, 55 * 96)
    with pytest.raises(ValueError, match="n should be a whole number of at least 1"):
        generate.decoding_work(0)


COUNTED = r"""
import json
from benchmarks import flops
count = flops.install()
import numpy as np
from lib import generate, model
ids = model.heldout().ids
found = {}
for n in (16, 64, 256):
    caches = generate.new_caches()
    generate.cached_forward(ids[:n - 1], caches)
    count.reset()
    generate.cached_forward(ids[n - 1:n], caches)
    cached = count.flops
    count.reset()
    model.forward(ids[:n])
    found[n] = [cached, count.flops]
print(json.dumps(found))
"""


def test_the_work_per_token_is_the_matrix_work_the_benchmark_counts(tmp_path):
    """benchmarks/flops.py counts every matrix product's floating-point operations (two per
    multiply-add) in a fresh process: one cached step, and a full rerun, at n = 16, 64, 256."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", COUNTED], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for n in (16, 64, 256):
        assert found[str(n)] == [2 * generate.decoding_work(n).total, 2 * generate.decoding_work(n, cached=False).total]

