"""The record of the trained model while it learned (lib/trained/training_record.npz, written by
training/train.py through training/record.py, read by lib/training_record.py): current with the
training script's settings, its last checkpoint what lib computes for the committed weights, and
recording changes nothing of the training."""

import math

import numpy as np
import pytest
import torch

from lib import circuits, files, model, training_record
from training import record as recording
from training import train

RECORD = training_record.record()


def test_the_record_is_served_beside_the_weights_and_small():
    from tools.wheel import served_files, source_files

    assert "training_record.npz" in {path.name for path in served_files().values()}
    assert "lib/trained/training_record.npz" not in source_files()          # not in the wheel every notebook loads
    assert (files.FOLDER / training_record.FILE).stat().st_size < 300_000
    assert files.WHAT["training_record.npz"] == "the record of the trained model while it learned"


def test_the_record_holds_every_checkpoint_of_the_training_script_s_settings():
    settings = train.SETTINGS
    assert RECORD.steps.tolist() == [0, *range(settings["log_every"], settings["steps"] + 1, settings["log_every"])]
    assert np.array_equal(RECORD.probes, recording.probe_ids())
    assert RECORD.map_steps.tolist() == list(recording.MAP_STEPS)
    checkpoints, probes, n = len(RECORD.steps), len(recording.PROBES), RECORD.probes.shape[1]
    layers, heads = model.config().layers, model.config().heads
    assert RECORD.loss.shape == RECORD.accuracy.shape == (checkpoints, len(model.info()["kinds"]))
    assert RECORD.previous.shape == RECORD.induction.shape == (checkpoints, probes, layers, heads)
    assert RECORD.k.shape == RECORD.q.shape == RECORD.v.shape == (checkpoints, layers, heads, layers, heads)
    assert RECORD.maps.shape == (len(recording.MAP_STEPS), probes, layers, heads, n, n)
    texts = model.heldout_texts()
    assert RECORD.counts.tolist() == np.bincount(np.concatenate([t.kinds[1:] for t in texts]), minlength=9).tolist()
    assert RECORD.kinds == model.info()["kinds"]
    assert 0 < RECORD.seconds[1] < RECORD.seconds[0] < 3 * 60 * 60


def test_the_last_checkpoint_is_what_lib_computes_for_the_committed_weights():
    """The record's numbers at the last step, computed from PyTorch's logits and weights while it
    trained, against lib's functions on the committed weights (float16: 3 significant digits)."""
    texts = model.heldout_texts()
    logits, ids, kinds = (np.array([getattr(t, f) for t in texts]) for f in ("logits", "ids", "kinds"))
    scores = circuits.kind_scores(logits, ids, kinds)
    assert np.allclose(RECORD.loss[-1], scores.loss, rtol=2e-3, atol=1e-4)
    assert np.allclose(RECORD.accuracy[-1], scores.accuracy, rtol=2e-3)
    for p, probe in enumerate(RECORD.probes):
        maps = circuits.attention_maps(probe)
        heads = circuits.head_scores(maps, probe)
        assert np.allclose(RECORD.previous[-1, p], heads.previous, atol=2e-3)
        assert np.allclose(RECORD.induction[-1, p], heads.induction, atol=2e-3)
        assert np.allclose(training_record.maps_at(RECORD.steps[-1])[p], maps, atol=1e-3)
    composed = circuits.composition(model.weight_arrays(), model.config().heads)
    for kind in ("k", "q", "v"):
        assert np.allclose(getattr(RECORD, kind)[-1], getattr(composed, kind), atol=1e-3, equal_nan=True), kind


def test_step_0_is_the_model_as_initialised():
    """Nothing learned: every kind of prediction within 0.25 of ln(55) = 4.01, the loss of a
    uniform guess; heads
    spread their weight; composition at the level of random matrices."""
    assert np.allclose(RECORD.loss[0], math.log(55), atol=0.25)
    assert RECORD.accuracy[0].max() < 0.2
    n = RECORD.probes.shape[1]
    even = np.mean(1 / np.arange(2, n + 1))                               # a head spreading its weight evenly
    assert np.allclose(RECORD.previous[0], even, atol=0.01)
    assert np.nanmax(RECORD.k[0]) < 0.3


def test_recording_a_checkpoint_draws_nothing_and_changes_no_weight():
    torch.manual_seed(0)
    m = train.Decoder(train.CONFIG)
    train.initialise(m, 0.02, train.CONFIG["layers"])
    texts = model.heldout_texts()[:2]
    recorder = recording.Recorder(train.CONFIG, (np.array([t.ids for t in texts]), np.array([t.kinds for t in texts])),
                                  train.numpy_weights, train.rope)
    before = {name: p.detach().clone() for name, p in m.named_parameters()}
    state = torch.get_rng_state()
    recorder.checkpoint(0, m)
    assert torch.equal(torch.get_rng_state(), state) and torch.is_grad_enabled()
    assert all(torch.equal(p, before[name]) and p.grad is None for name, p in m.named_parameters())
    assert recorder.rows["steps"] == [0] and len(recorder.maps) == 1


def test_reading_a_step_without_maps_or_values_of_another_length_is_refused():
    assert training_record.maps_at(0).shape == RECORD.maps.shape[1:]
    with pytest.raises(ValueError, match="step should be one of the steps with maps, 0, 100"):
        training_record.maps_at(50)
    with pytest.raises(ValueError, match="one number per checkpoint"):
        training_record.first_step([0.1, 0.2], 0.5)
    copy = RECORD.accuracy[:, RECORD.kinds.index("copy")]
    found = training_record.first_step(copy, 0.5)
    assert copy[RECORD.steps.tolist().index(found)] >= 0.5 > copy[RECORD.steps < found].max()
    assert training_record.first_step(copy, 2.0) is None


# ---------------------------------------------------------------- what the record shows

def _series(values, steps):
    return {int(s): round(float(v), 2) for s, v in zip(RECORD.steps, values) if s in steps}


def test_copying_appears_between_steps_400_and_1050():
    """The copy predictions sit at ln 8 = 2.08 (a letter, any of the 8) until step 400; their
    accuracy reaches 0.5 at step 850 (0.495 at 800) and 0.9 at step 1050 (0.899 at 1000), and is 1 from step 1450 on. Counting,
    grammar and sentence ends are learned by step 100, sums and differences by step 500."""
    kinds = RECORD.kinds
    copy = RECORD.accuracy[:, kinds.index("copy")]
    assert np.allclose(RECORD.loss[(RECORD.steps >= 150) & (RECORD.steps <= 400), kinds.index("copy")], math.log(8),
                       atol=0.06)
    assert training_record.first_step(copy, 0.5) == 850 and training_record.first_step(copy, 0.9) == 1050
    assert (copy[RECORD.steps >= 1450] >= 0.99).all()
    for kind, step in (("count", 100), ("grammar", 100), ("sum", 500), ("difference", 500)):
        assert training_record.first_step(RECORD.accuracy[:, kinds.index(kind)], 0.9) <= step, kind


def test_a_previous_token_head_forms_first_in_block_1_then_an_induction_head_in_block_2():
    """Block 1's head 4 becomes a previous-token head by step 100 (0.13, an even spread, to over
    0.4 on both probes) and stays the strongest of its block; block 2's head 2 becomes an
    induction head between steps 850 and 1000 (below 0.16 until step 850, 0.26 and 0.29 on the two probes at 950, never below 0.22 after),
    while the copy accuracy goes from 0.56 to 0.90, and ends the strongest induction head."""
    previous, induction = RECORD.previous[:, :, 0, 3], RECORD.induction[:, :, 1, 1]     # (steps, probes)
    assert (previous[0] < 0.14).all() and (previous[RECORD.steps >= 100] > 0.36).all()
    assert (RECORD.previous[RECORD.steps >= 100, :, 0, :].argmax(axis=-1) == 3).all()
    assert (induction[RECORD.steps <= 850] < 0.16).all() and (induction[RECORD.steps >= 950] >= 0.22).all()
    for p in range(2):
        assert training_record.first_step(induction[:, p], 0.25) == 950
        assert np.unravel_index(np.argmax(RECORD.induction[-1, p]), (4, 4)) == (1, 1)
    copy = _series(RECORD.accuracy[:, RECORD.kinds.index("copy")], (850, 1000))
    assert copy == {850: 0.56, 1000: 0.9}


def test_the_weights_alone_do_not_single_out_the_pair_by_k_composition():
    """K-composition from the weights (RoPE left out) of block 1's head 4 into block 2's head 2
    peaks at 0.31-0.32 around steps 200-400, before the induction head forms, and ends at 0.17,
    about the mean of all pairs (0.15); Q-composition of the same pair is the largest of block 1
    into block 2 at the end (0.27)."""
    pair = RECORD.k[:, 0, 3, 1, 1]
    assert 200 <= RECORD.steps[np.argmax(pair)] <= 400 and 0.3 < pair.max() < 0.33
    assert round(pair[-1], 2) == 0.17 and round(float(np.nanmean(RECORD.k[-1])), 2) == 0.15
    final_q = RECORD.q[-1, 0, :, 1, :]
    assert np.unravel_index(np.argmax(final_q), (4, 4)) == (3, 1) and round(final_q.max(), 2) == 0.27
