"""The trained model (lib/model.py, lib/trained/): NumPy against PyTorch's recorded logits and a
live PyTorch forward pass of the same weights, the baselines, and every ablation setting.

PyTorch is a test dependency only: the browser never imports it (checked below)."""

import itertools
import json
import random
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
    assert sum(f.stat().st_size for f in files) < 3 * 2 ** 20
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
    for package in ("lib", "labs"):
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


def test_the_fused_forward_pass_gives_the_logits_of_the_blocks_run_one_by_one(ids):
    """forward() without a trace computes the blocks in one fused piece (for the labs' speed);
    it must give what lib.block.block gives, block after block, in every setting."""
    from lib.block import block

    short = ids[:96]
    for skip, details in (((), {}), ((0, 2), {}), ((), {"positions": False}),
                          ((1,), {"pairing": "neighbours", "base": 100.0}),
                          ((), {"norm": "layer", "eps": 0.0}), ((3,), {"norm": "layer", "eps": 1.0})):
        options = model._options(**details)
        x = model.embed(short)
        for i, weights in enumerate(model.weights().blocks):
            if i not in skip:
                x = block(x, weights, **options)
        by_blocks = model.output_logits(x, norm=options["norm"], eps=options["eps"])
        assert np.abs(model.forward(short, skip=skip, **details) - by_blocks).max() < 1e-12
