"""The trained model (lib/model.py, lib/trained/): NumPy against PyTorch's recorded logits and a
live PyTorch forward pass of the same weights, the baselines, and every ablation setting.

PyTorch is a test dependency only: the browser never imports it (checked below)."""

import itertools
import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

from lib import model
from lib.params import count_parameters

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ids():
    return model.heldout().ids


@pytest.fixture(scope="module")
def logits(ids):
    return model.forward(ids)


# ---------------------------------------------------------------- what ships

def test_shipped_files_are_small_and_float32():
    files = list((ROOT / "lib" / "trained").iterdir())
    assert {f.name for f in files} >= {"weights.npz", "reference.npz", "model.json"}
    # the weights 1.7 MB, the held-out texts 0.4 MB, the results looked up 1.3 MB, the record of training
    # 0.2 MB and the placement runs: each fetched by the notebooks that use it alone
    assert sum(f.stat().st_size for f in files) < 3.8 * 2 ** 20
    with np.load(model.FOLDER / "weights.npz") as data:
        assert all(data[name].dtype == np.float32 for name in data.files)
        total = sum(data[name].size for name in data.files)
    assert total == model.info()["parameters"] == count_parameters(model.config()).total


def test_training_record():
    record = model.info()
    assert record["framework"].startswith("PyTorch ")
    assert record["settings"]["seed"] == 2026 and record["threads"] == 2
    assert 0 < record["seconds"] < 15 * 60                 # the limit on 2 cores
    curve = record["loss_curve"]
    assert curve[-1]["step"] == record["settings"]["steps"]
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]
    assert record["config"]["rope_pairing"] == "halves" and record["config"]["rope_base"] == 10000.0
    assert record["config"]["eps"] == 1e-5 and record["config"]["tied"]
    assert record["heldout"]["tokens"] == len(model.heldout().ids) == record["config"]["context"]


def test_nothing_the_browser_imports_mentions_torch():
    for package in ("engine", "lib", "labs", "exercises", "presentation"):
        for path in (ROOT / package).rglob("*.py"):
            assert "import torch" not in path.read_text(encoding="utf-8"), path


def test_heldout_text_is_the_generators_and_unseen():
    from training import corpus
    record = model.info()
    ids, kinds = corpus.text(random.Random(record["heldout"]["seed"]), record["heldout"]["tokens"])
    assert np.array_equal(model.heldout().ids, ids) and np.array_equal(model.heldout().kinds, kinds)
    assert record["vocab"] == corpus.VOCAB and record["kinds"] == corpus.KINDS
    assert record["heldout"]["seed"] != record["settings"]["seed"]


def test_encode_decode_round_trip(ids):
    text = model.decode(ids[:30])
    assert np.array_equal(model.encode(text), ids[:30])
    with pytest.raises(ValueError, match="zebra"):
        model.encode("the zebra")


# ---------------------------------------------------------------- NumPy against PyTorch

def test_numpy_reproduces_the_recorded_logits_on_the_whole_text(ids, logits):
    recorded = model.heldout().logits
    assert logits.shape == recorded.shape == (len(ids), len(model.vocab()))
    assert np.abs(logits - recorded).max() < 1e-4
    assert np.abs(recorded).max() > 1.0                     # real logits, not near-zero ones


def _torch_model():
    """The committed weights in the training script's own PyTorch model, in float64."""
    from training import train
    with np.load(model.FOLDER / "weights.npz") as arrays:
        return train.model_from_numpy_weights(model.info()["config"], dict(arrays))


def test_numpy_matches_a_live_pytorch_forward_of_the_same_weights(ids, logits):
    import torch
    torch_model = _torch_model()
    from training import corpus
    other, _kinds = corpus.text(random.Random(12345), 100)
    with torch.no_grad():
        for text, ours in ((ids, logits), (np.array(other), model.forward(other))):
            theirs = torch_model(torch.tensor(np.asarray(text))[None])[0].numpy()
            assert np.abs(ours - theirs).max() < 1e-4
    # the comparison is sharp enough to catch a wrong convention
    with torch.no_grad():
        theirs = torch_model(torch.tensor(np.asarray(ids))[None])[0].numpy()
    assert np.abs(model.forward(ids, pairing="neighbours") - theirs).max() > 1e-2
    assert np.abs(model.forward(ids, base=100_000.0) - theirs).max() > 1e-4
    assert np.abs(model.forward(ids, norm="layer") - theirs).max() > 1e-2


def test_pytorch_rope_is_the_course_rope():
    import torch

    from lib.positional import rope
    from training import train
    x = np.random.default_rng(0).normal(size=(2, 3, 7, 24))
    theirs = train.rope(torch.tensor(x), 10000.0).numpy()
    assert np.allclose(theirs, rope(x, pairing="halves"), atol=1e-12)


# ---------------------------------------------------------------- it learned

def test_beats_the_bigram_baseline_by_a_wide_margin(ids, logits):
    ours = model.perplexity(logits, ids)
    bigram = model.perplexity(model.bigram_logits(ids), ids)
    assert ours < 0.7 * bigram < 0.7 * len(model.vocab())
    decided = ~np.isin(model.heldout().kinds[1:],
                       [model.info()["kinds"].index(k) for k in ("free", "grammar")])
    assert model.perplexity(logits, ids, decided) < 1.5
    assert model.perplexity(model.bigram_logits(ids), ids, decided) > 3.0


def test_bigram_probabilities():
    p = model.bigram_probabilities()
    assert np.allclose(p.sum(axis=1), 1) and (p > 0).all()
    counts = model.heldout().bigram
    assert counts.sum() > 100_000


def test_removing_positions_hurts_order_dependent_predictions(ids, logits):
    order = model.order_mask()
    assert order.sum() > 20
    without = model.forward(ids, positions=False)
    with_rope, no_rope = model.perplexity(logits, ids, order), model.perplexity(without, ids, order)
    assert no_rope > 3 * with_rope
    reverse = model.heldout().kinds[1:] == model.info()["kinds"].index("reverse")
    assert model.perplexity(without, ids, reverse) > 3 * model.perplexity(logits, ids, reverse)


def test_first_block_matters_most(ids, logits):
    ppl = [model.perplexity(model.forward(ids, skip={i}), ids) for i in range(4)]
    assert np.argmax(ppl) == 0 and ppl[0] > len(model.vocab())     # worse than guessing
    assert min(ppl) > model.perplexity(logits, ids)


def test_base_mismatch_is_quiet_and_pairing_mismatch_is_loud(ids, logits):
    full = model.perplexity(logits, ids)
    assert model.perplexity(model.forward(ids, base=100_000.0), ids) < 1.1 * full
    assert model.perplexity(model.forward(ids, pairing="neighbours"), ids) > 1.5 * full
    assert model.perplexity(model.forward(ids, positions=False), ids) > 1.5 * full


# ---------------------------------------------------------------- every setting runs

def test_every_ablation_setting_runs(ids):
    short = ids[:64]
    for skip in itertools.chain.from_iterable(itertools.combinations(range(4), r) for r in range(5)):
        for positions in (True, False):
            out = model.forward(short, skip=skip, positions=positions)
            assert out.shape == (64, 55) and np.isfinite(out).all()
    for pairing, norm, base, eps in itertools.product(("halves", "neighbours"), ("rms", "layer"),
                                                      (100.0, 10000.0, 1e6), (0.0, 1e-8, 1e-5, 1.0)):
        assert np.isfinite(model.forward(short, pairing=pairing, norm=norm, base=base, eps=eps)).all()
    with pytest.raises(ValueError):
        model.forward(short, pairing="diagonal")
    with pytest.raises(ValueError):
        model.forward(short, norm="batch")


def test_skipping_every_block_reads_out_the_embedding(ids):
    out = model.forward(ids[:20], skip=range(4))
    assert np.allclose(out, model.output_logits(model.embed(ids[:20])))


def test_trace_adds_up(ids, logits):
    t = model.forward(ids, trace=True)
    assert np.allclose(t.logits, logits)
    assert t.streams.shape == (5, len(ids), 96) and t.gates.shape == (4, len(ids), 256)
    for i in range(4):
        assert np.allclose(t.streams[i + 1], t.streams[i] + t.attention_adds[i] + t.ffn_adds[i])
    skipped = model.forward(ids, trace=True, skip={2})
    assert np.isnan(skipped.gates[2]).all() and not skipped.attention_adds[2].any()
    for grids in skipped[:4]:                             # float32 throughout, a skipped block too
        assert grids.dtype == np.float32


def test_blocks_as_functions_compose_to_the_forward_pass(ids, logits):
    x = model.embed(ids)
    for block in model.blocks():
        x = block(x)
    assert np.allclose(model.output_logits(x), logits)


def test_perplexity_helpers(ids, logits):
    losses = model.token_losses(logits, ids)
    assert losses.shape == (len(ids) - 1,) and (losses >= 0).all()
    assert np.isclose(model.perplexity(logits, ids), np.exp(losses.mean()))
    uniform = np.zeros((10, 55))
    assert np.isclose(model.perplexity(uniform, ids[:10]), 55)
    assert np.allclose(model.probabilities(logits).sum(-1), 1)


def test_config_is_a_model_config():
    c = model.config()
    count = count_parameters(c)
    assert (c.d_model, c.layers, c.heads, c.d_ff, c.vocab) == (96, 4, 4, 256, 55)
    assert c.gated and c.tied and c.norm == "rms"
    assert count.embedding == 55 * 96 and count.output == 0
    assert count.attention == 4 * 4 * 96 * 96 and count.ffn == 4 * 3 * 96 * 256
    assert count.norms == 9 * 96
    json.dumps(model.info())                                  # plain JSON all the way


# ---------------------------------------------------------------- read once, read-only

def test_files_are_read_once_and_their_arrays_cannot_be_changed():
    assert model.info() is model.info() and model.weights() is model.weights() and model.heldout() is model.heldout()
    assert model.weight_arrays() is model.weight_arrays()
    w, h = model.weights(), model.heldout()
    for array in (w.embedding, w.final_norm_gain, w.blocks[0].Wq, w.blocks[3].W_gate, h.ids, h.logits, h.bigram):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    assert w.embedding.dtype == np.float32 and h.ids.dtype == np.int64 and h.bigram.dtype == np.int64


def test_weights_fill_every_block_field_from_the_file_under_its_own_name():
    """The file's key of block i's array is "<i>.<field>", the BlockWeights field it fills."""
    with np.load(model.FOLDER / "weights.npz") as data:
        files = set(data.files)
        for i, block in enumerate(model.weights().blocks):
            fields = {"Wq", "Wk", "Wv", "Wo", "W_gate", "W_up", "W_down", "attention_norm_gain", "ffn_norm_gain"}
            assert {name for name in files if name.startswith(f"{i}.")} == {f"{i}.{field}" for field in fields}
            for field in fields:
                assert np.array_equal(getattr(block, field), data[f"{i}.{field}"]), (i, field)
            assert block.heads == 4 and block.gated
        assert files == {"embedding", "final_norm_gain"} | {f"{i}.{f}" for i in range(4) for f in fields}
        assert np.array_equal(model.weights().final_norm_gain, data["final_norm_gain"])


def test_decode_and_vocab():
    words = model.vocab()
    assert len(words) == 55 and model.decode([0, 1]) == f"{words[0]} {words[1]}"
    assert model.encode(f"{words[3]} {words[7]}").tolist() == [3, 7]
    assert model.encode("").tolist() == [] and model.encode("").dtype == np.int64


# ---------------------------------------------------------------- every detail reaches every part

def test_norm_and_eps_reach_the_final_norm(ids):
    short = ids[:40]
    for details in (dict(norm="layer"), dict(eps=0.5), dict(norm="layer", eps=0.0)):
        t = model.forward(short, trace=True, **details)
        expected = model.output_logits(t.streams[-1], norm=details.get("norm", "rms"), eps=details.get("eps", 1e-5))
        assert np.allclose(t.logits, expected, rtol=1e-12, atol=1e-12)
        assert np.allclose(model.forward(short, **details), t.logits)


def test_blocks_take_the_same_details_as_forward(ids):
    short = ids[:40]
    details = dict(positions=False, norm="layer", eps=0.01)
    x = model.embed(short)
    for block in model.blocks(**details):
        x = block(x)
    assert np.allclose(model.output_logits(x, norm="layer", eps=0.01), model.forward(short, **details))


def test_the_trained_model_is_pre_norm_causal_and_uses_rope_with_its_base(ids):
    short = ids[:30]
    t = model.forward(short, trace=True)
    changed = short.copy()
    changed[-1] = (changed[-1] + 1) % 55
    assert np.allclose(model.forward(changed)[:-1], t.logits[:-1])            # the future never leaks
    from lib.block import block
    from lib.positional import rope
    first = model.weights().blocks[0]
    pre = block(model.embed(short), first, placement="pre", causal=True, positions=rope)
    assert np.allclose(t.streams[1], pre)
    assert np.allclose(model.forward(short, base=500.0, trace=True).streams[1],
                       block(model.embed(short), first, positions=lambda q: rope(q, base=500.0)))


def test_skip_leaves_the_stream_and_traces_it(ids):
    short = ids[:20]
    t = model.forward(short, skip=[1, 3], trace=True)
    assert np.array_equal(t.streams[2], t.streams[1]) and np.array_equal(t.streams[4], t.streams[3])
    assert not np.array_equal(t.streams[1], t.streams[0])
    assert np.isnan(t.gates[1]).all() and not np.isnan(t.gates[0]).any() and t.gates.shape == (4, 20, 256)
    assert np.allclose(t.logits, model.forward(short, skip=(1, 3)))
    gate = model.weights().blocks[0].W_gate
    from lib.ffn import silu
    from lib.norm import rms_norm
    read = rms_norm(t.streams[0] + t.attention_adds[0], model.weights().blocks[0].ffn_norm_gain)
    assert np.allclose(t.gates[0], silu(read @ gate))


@pytest.mark.parametrize("details, expected", [
    (dict(pairing="diagonal"), "pairing should be one of 'halves', 'neighbours'"),
    (dict(norm="batch"), "norm should be one of 'rms', 'layer'"),
    (dict(eps=-1.0), "eps should be a number of at least 0"),
])
def test_bad_details_are_refused_in_plain_words(ids, details, expected):
    with pytest.raises(ValueError, match=expected):
        model.forward(ids[:5], **details)
    with pytest.raises(ValueError, match=expected):
        model.blocks(**details)[0](model.embed(ids[:5]))


def test_a_base_of_zero_gives_a_result_without_warnings(ids):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = model.forward(ids[:8], base=0.0)
    assert out.shape == (8, 55)


# ---------------------------------------------------------------- the numbers around the logits

def test_log_probabilities_are_stable_and_normalised():
    logits = np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    logp = model.log_probabilities(logits)
    assert np.isfinite(logp[0, :2]).all() and logp[0, 0] == pytest.approx(0.0) and logp[0, 1] == pytest.approx(-1000.0)
    assert np.allclose(np.exp(logp).sum(-1), 1) and np.allclose(logp[1], np.log(np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum()))
    assert np.allclose(model.log_probabilities([[0.0, 0.0]]), np.log([[0.5, 0.5]]))
    assert np.allclose(model.probabilities(logits), np.exp(logp))


def test_token_losses_score_each_next_token():
    logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8], [0.2, 0.3, 0.5]]))
    ids = np.array([0, 1, 2])
    assert np.allclose(model.token_losses(logits, ids), [-np.log(0.25), -np.log(0.8)])
    assert model.perplexity(logits, ids) == pytest.approx(np.exp((-np.log(0.25) - np.log(0.8)) / 2))
    assert model.perplexity(logits, ids, mask=[False, True]) == pytest.approx(1 / 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.perplexity(np.array([[0.0, -2000.0], [0.0, 0.0]]), [0, 1]) == np.inf   # no overflow warning


def test_bigram_baseline_counts_pairs_with_smoothing():
    counts = model.heldout().bigram
    assert np.allclose(model.bigram_probabilities(), (counts + 1) / (counts + 1).sum(axis=1, keepdims=True))
    assert np.allclose(model.bigram_probabilities(0.5), (counts + 0.5) / (counts + 0.5).sum(axis=1, keepdims=True))
    logits = model.bigram_logits([3, 3, 5])
    assert logits.shape == (3, 55) and np.allclose(logits[2], np.log(model.bigram_probabilities()[5]))
    assert np.allclose(model.bigram_logits([4], smoothing=0.5), np.log(model.bigram_probabilities(0.5)[[4]]))


def test_order_mask_marks_the_predictions_whose_answer_depends_on_order():
    names, order = model.info()["kinds"], model.info()["order_kinds"]
    kinds = np.array([names.index("free"), names.index(order[0]), names.index("free"), names.index(order[-1])])
    assert model.order_mask(kinds).tolist() == [True, False, True]              # the first token has no prediction
    assert np.array_equal(model.order_mask(), model.order_mask(model.heldout().kinds))
    assert len(model.order_mask()) == len(model.heldout().ids) - 1


def test_heldout_texts_start_with_the_heldout_text_and_are_read_once():
    texts = model.heldout_texts()
    assert texts is model.heldout_texts() and texts[0] is model.heldout()
    with np.load(model.FOLDER / "heldout_texts.npz") as data:
        ids, kinds, logits = data["ids"], data["kinds"], data["logits"]
    assert len(texts) == 1 + len(ids) and len(ids) >= 1
    for i, text in enumerate(texts[1:]):
        assert isinstance(text, model.HeldOut)
        assert np.array_equal(text.ids, ids[i]) and text.ids.dtype == np.int64
        assert np.array_equal(text.kinds, kinds[i]) and text.kinds.dtype == np.int64
        assert np.array_equal(text.logits, logits[i]) and text.bigram is model.heldout().bigram
        assert text.logits.shape == (len(text.ids), model.info()["config"]["vocab"])
        for array in text[:3]:
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 0


def test_config_carries_the_recorded_context_and_tying(monkeypatch):
    recorded = model.info()["config"]
    assert model.config().context == recorded["context"] and model.config().tied == recorded["tied"]
    untied = {**model.info(), "config": {**recorded, "tied": False}}
    monkeypatch.setattr(model, "info", lambda: untied)
    assert model.config().tied is False


@pytest.mark.parametrize("details, expected", [
    (dict(pairing="diagonal"), "pairing should be one of 'halves', 'neighbours'"),
    (dict(norm="batch"), "norm should be one of 'rms', 'layer'"),
])
def test_blocks_refuse_a_bad_detail_before_running(details, expected):
    with pytest.raises(ValueError, match=expected):
        model.blocks(**details)


def test_skip_may_be_any_iterable_of_block_numbers(ids, logits):
    expected = model.forward(ids[:12], skip=(2, 3))
    for skip in (iter([2, 3]), (n for n in (3, 2)), np.array([2, 3], dtype=np.int32), {3, 2}):
        assert np.array_equal(model.forward(ids[:12], skip=skip), expected)


def test_a_skipped_block_adds_nothing_to_the_trace(ids):
    t = model.forward(ids[:8], skip=(1,), trace=True)
    layers, d = model.info()["config"]["layers"], model.info()["config"]["d_model"]
    assert t.attention_adds.shape == t.ffn_adds.shape == (layers, 8, d)
    assert not t.ffn_adds[1].any() and not t.attention_adds[1].any() and t.ffn_adds[0].any()


def test_probabilities_are_computed_in_float64_over_the_last_axis():
    logits = np.random.default_rng(3).normal(size=(2, 3, 5)).astype(np.float32) * 4
    rows = logits.reshape(6, 5).astype(np.float64)
    expected = rows - np.log(np.exp(rows).sum(axis=1, keepdims=True))
    logp = model.log_probabilities(logits)
    assert logp.dtype == np.float64 and np.allclose(logp.reshape(6, 5), expected, rtol=1e-13, atol=1e-13)
    assert np.allclose(model.probabilities(logits).reshape(6, 5), np.exp(expected), rtol=1e-6, atol=1e-7)


def test_a_mask_of_zeros_and_ones_is_read_as_true_and_false(ids, logits):
    mask = np.arange(len(ids) - 1) % 3 == 0
    assert model.perplexity(logits, ids, mask.astype(int)) == model.perplexity(logits, ids, mask)


def test_token_ids_may_be_whole_numbers_of_any_type(ids, logits):
    as_floats = ids[:12].astype(float)
    assert np.array_equal(model.embed(as_floats), model.embed(ids[:12]))
    assert np.array_equal(model.forward(as_floats), model.forward(ids[:12]))
    assert np.array_equal(model.token_losses(logits[:12], as_floats), model.token_losses(logits[:12], ids[:12]))
    assert np.array_equal(model.bigram_logits(as_floats), model.bigram_logits(ids[:12]))
