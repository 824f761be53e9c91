"""lib.circuits: attention maps against PyTorch's, the head scores and the composition scores on
grids and matrices whose answers are known, and loss by kind against lib.model's losses."""

import numpy as np
import pytest
import torch

from lib import circuits, model

PROBE = "copy b d a e | b d a e . copy h c f g | h c f g ."


def test_attention_maps_are_pytorch_s_weights_of_the_same_model():
    from training import train
    from training.record import attention_weights
    with np.load(model.FOLDER / "weights.npz") as arrays:
        torch_model = train.model_from_numpy_weights(model.info()["config"], dict(arrays))
    ids = model.encode(PROBE)
    ours = circuits.attention_maps(ids)
    with torch.no_grad():
        theirs = attention_weights(torch_model, torch.tensor(ids)[None], train.rope)[0].numpy()
    assert ours.shape == theirs.shape == (4, 4, 22, 22)
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.allclose(ours.sum(-1), 1, atol=1e-5) and not np.triu(ours, 1).any()
    # sharp: without positions the maps are others
    assert np.abs(circuits.attention_maps(ids, positions=False) - theirs).max() > 0.1


def test_induction_targets_mark_the_token_after_each_earlier_occurrence():
    targets = circuits.induction_targets([0, 1, 2, 0, 1])
    assert [tuple(map(int, t)) for t in np.argwhere(targets)] == [(3, 1), (4, 2)]
    assert not circuits.induction_targets([0, 0]).any()
    assert not circuits.induction_targets([5, 3, 5]).any()              # the token after is the previous token
    both = circuits.induction_targets([7, 1, 7, 2, 7])                  # two earlier occurrences of 7
    assert np.flatnonzero(both[4]).tolist() == [1] and not both[2].any()
    ids = model.encode(PROBE)
    rows = np.flatnonzero(circuits.induction_targets(ids).any(axis=1))
    assert model.decode(ids[rows]) == "b d a e copy | h c f g ."


def grid(n, looks):
    """(1, 1, n, n) weights: row t all on column looks(t), or on itself when that is None."""
    g = np.zeros((1, 1, n, n))
    for t in range(n):
        g[0, 0, t, looks(t) if looks(t) is not None else t] = 1.0
    return g


def test_head_scores_of_ideal_heads():
    ids = model.encode(PROBE)
    n, targets = len(ids), circuits.induction_targets(ids)
    previous = circuits.head_scores(grid(n, lambda t: t - 1 if t else None), ids)
    assert previous.previous[0, 0] == 1.0 and previous.induction[0, 0] < 0.1
    induction = circuits.head_scores(grid(n, lambda t: int(np.argmax(targets[t])) if targets[t].any() else None), ids)
    assert induction.induction[0, 0] == 1.0 and induction.previous[0, 0] < 0.1
    even = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    scores = circuits.head_scores(even[None, None], ids)
    assert scores.previous[0, 0] == pytest.approx(np.mean(1 / np.arange(2, n + 1)))
    assert circuits.head_scores(grid(3, lambda t: None), [1, 2, 3]).induction[0, 0] != \
        circuits.head_scores(grid(3, lambda t: None), [1, 2, 3]).induction[0, 0]           # NaN: no row has a target


def test_the_trained_model_has_previous_token_heads_in_block_1_and_an_induction_head_in_block_2():
    ids = model.encode(PROBE)
    scores = circuits.head_scores(circuits.attention_maps(ids), ids)
    assert scores.previous.shape == scores.induction.shape == (4, 4)
    assert np.unravel_index(np.argmax(scores.previous), (4, 4)) == (0, 3)
    assert np.unravel_index(np.argmax(scores.induction), (4, 4)) == (1, 1)


def test_kind_scores_are_lib_model_s_losses_grouped_by_kind():
    texts = model.heldout_texts()
    logits, ids, kinds = (np.array([getattr(t, f) for t in texts]) for f in ("logits", "ids", "kinds"))
    scores = circuits.kind_scores(logits, ids, kinds)
    names = model.info()["kinds"]
    losses = np.concatenate([model.token_losses(t.logits, t.ids) for t in texts])
    which = np.concatenate([t.kinds[1:] for t in texts])
    for k, name in enumerate(names):
        assert scores.loss[k] == pytest.approx(losses[which == k].mean(), rel=1e-9), name
        assert scores.counts[k] == (which == k).sum()
    assert scores.counts.sum() == 8 * 255
    copy = names.index("copy")
    right = np.concatenate([t.logits[:-1].argmax(-1) == t.ids[1:] for t in texts])[which == copy]
    assert scores.accuracy[copy] == right.mean() == 1.0
    one = circuits.kind_scores(texts[0].logits, texts[0].ids, texts[0].kinds)
    assert one.counts.sum() == 255 and np.isnan(circuits.kind_scores(logits[:, :3], ids[:, :3], kinds[:, :3]).loss).any()


def test_composition_of_matrices_built_to_compose():
    """Block 2's head 1 reads with its keys exactly what block 1's head 1 writes: K-composition
    1/sqrt(2), the most two matrices of rank 2 can reach; its queries read a part of the stream
    no head writes: Q-composition 0. A head that writes nothing composes with nothing: 0."""
    d, size, rng = 8, 2, np.random.default_rng(0)
    arrays = {}
    for i in range(2):
        arrays.update({f"{i}.{name}": rng.normal(size=(d, d)) for name in ("Wq", "Wk", "Wv", "Wo")})
        arrays[f"{i}.attention_norm_gain"] = np.ones(d)
    arrays["0.Wo"][:] = 0
    arrays["0.Wo"][:size, :size] = np.eye(size)                          # head 1 writes into numbers 0, 1
    arrays["0.Wv"][:, :size] = np.eye(d)[:, :size]
    arrays["1.Wk"][:, :size] = np.eye(d)[:, :size]                       # block 2's head 1 keys read 0, 1
    arrays["1.Wq"][:, :size] = np.eye(d)[:, 6:]                          # and its queries read 6, 7
    c = circuits.composition(arrays, heads=d // size)
    assert c.k.shape == (2, 4, 2, 4) and np.isnan(c.k[1]).all() and np.isnan(c.k[0, :, 0]).all()
    assert c.k[0, 0, 1, 0] == pytest.approx(2 ** -0.5) and c.q[0, 0, 1, 0] == pytest.approx(0.0, abs=1e-12)
    assert (c.k[0, 1:, 1] == 0).all() and (c.v[0, 1:, 1] == 0).all()    # heads 2-4 of block 1 write nothing
    arrays["1.attention_norm_gain"] = np.full(d, 3.0)                     # the scores are norm ratios
    assert np.allclose(circuits.composition(arrays, heads=4).k, c.k, equal_nan=True)


def test_composition_of_the_trained_model_is_the_frobenius_ratio_of_its_circuits():
    arrays = model.weight_arrays()
    c = circuits.composition(arrays, heads=4)
    w = model.weights().blocks
    g1, g2 = w[0].attention_norm_gain[:, None], w[1].attention_norm_gain[:, None]
    ov = (g1 * w[0].Wv)[:, 48:72] @ w[0].Wo[48:72]                        # block 1, head 3
    qk = (g2 * w[1].Wq)[:, 24:48] @ (g2 * w[1].Wk)[:, 24:48].T           # block 2, head 2
    norm = np.linalg.norm
    assert c.k[0, 2, 1, 1] == pytest.approx(norm(qk @ ov.T) / (norm(qk) * norm(ov)), rel=1e-6)
    assert c.q[0, 2, 1, 1] == pytest.approx(norm(ov @ qk) / (norm(qk) * norm(ov)), rel=1e-6)
    assert np.isfinite(c.k[0, :, 1:]).all() and np.isnan(c.k[3]).all()
    assert ((c.k[np.isfinite(c.k)] > 0) & (c.k[np.isfinite(c.k)] < 1)).all()


def test_block_2_s_induction_head_reads_block_1_s_heads_3_and_4_with_its_keys():
    """Run without block 1's head 3 (or 4), block 2's head 2 keys lose what they need: its induction
    score on the probe falls from 0.33 to 0.05 (0.15); without heads 1 or 2 it stays at 0.33.
    Run without the whole attention of block 1 but keeping its FFN's add as it was, the keys keep
    it: what the heads wrote reaches block 2's keys through block 1's FFN, which the composition
    of the weights alone does not see."""
    ids = model.encode(PROBE)
    alone = circuits.keys_without(ids, None, (1, 1))
    assert alone.induction.shape == (1, 1)
    assert alone.induction[0, 0] == pytest.approx(circuits.head_scores(circuits.attention_maps(ids), ids).induction[1, 1],
                                                  abs=1e-6)
    found = [round(float(circuits.keys_without(ids, (0, h), (1, 1)).induction[0, 0]), 2) for h in range(4)]
    assert found == [0.33, 0.33, 0.05, 0.15]
    # the keys from the stream without block 1's attention add, its FFN's add kept
    trace = model.forward(ids, trace=True)
    w = model.weights().blocks[1]
    from lib.attention import causal_weights
    from lib.norm import rms_norm
    from lib.positional import rope
    queries = rope(rms_norm(trace.streams[1], w.attention_norm_gain) @ w.Wq[:, 24:48])
    for stream, expected in ((trace.streams[1] - trace.attention_adds[0], 0.33),
                             (trace.streams[1] - trace.ffn_adds[0], 0.21)):
        keys = rope(rms_norm(stream, w.attention_norm_gain) @ w.Wk[:, 24:48])
        maps = causal_weights(queries @ keys.T / np.sqrt(24))
        assert round(float(circuits.head_scores(maps[None, None], ids).induction[0, 0]), 2) == expected
    with pytest.raises(ValueError, match="head should be in a block before the reader's"):
        circuits.keys_without(ids, (1, 0), (1, 1))
