"""lib.norm against torch.nn.functional.layer_norm and rms_norm (the default eps too), the
curriculum's figures and the norm chosen by name."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lib.norm import NORMS, layer_norm, normaliser, rms_norm, root_mean_square

rng = np.random.default_rng(7)


@pytest.mark.parametrize("shape", [(6,), (5, 8), (2, 5, 8)])
@pytest.mark.parametrize("eps", [1e-5, 0.0, 0.1])
def test_layer_norm_matches_torch(shape, eps):
    x, gain, bias = rng.normal(1, 3, shape), rng.normal(size=shape[-1]), rng.normal(size=shape[-1])
    for g, b in [(None, None), (gain, bias), (gain, None)]:
        expected = F.layer_norm(torch.tensor(x), (shape[-1],), None if g is None else torch.tensor(g),
                                None if b is None else torch.tensor(b), eps).numpy()
        assert np.allclose(layer_norm(x, g, b, eps), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("shape", [(6,), (5, 8), (2, 5, 8)])
@pytest.mark.parametrize("eps", [1e-5, 0.0, 0.1])
def test_rms_norm_matches_torch(shape, eps):
    x, gain = rng.normal(0, 2, shape), rng.normal(size=shape[-1])
    for g in (None, gain):
        expected = F.rms_norm(torch.tensor(x), (shape[-1],), None if g is None else torch.tensor(g),
                              eps).numpy()
        assert np.allclose(rms_norm(x, g, eps), expected, atol=1e-6, rtol=0)


def test_worked_figures():
    assert np.allclose(layer_norm([1.0, 1.0, 5.0, 5.0], eps=0.0), [-1, -1, 1, 1])
    pick = np.array([-1.1, 0.1, -0.2, -0.5])
    assert root_mean_square(pick) == pytest.approx(0.6144, abs=5e-5)
    assert np.allclose(np.round(rms_norm(pick), 3), [-1.790, 0.163, -0.326, -0.814])
    assert root_mean_square(rms_norm(pick, eps=0.0)) == pytest.approx(1.0)
    x = rng.normal(size=(2, 5, 8))                          # (2, 5, 8): 10 separate means
    assert np.allclose(layer_norm(x).mean(axis=-1), 0, atol=1e-12)
    assert layer_norm(x).mean(axis=-1).size == 10
    assert np.allclose(root_mean_square(x, axis=-1), np.sqrt((x ** 2).mean(-1)))


def test_each_token_is_normalised_on_its_own():
    x = rng.normal(size=(4, 6))
    assert np.allclose(layer_norm(x)[1], layer_norm(x[1]))
    assert np.allclose(rms_norm(x)[2], rms_norm(x[2:3])[0])


@pytest.mark.parametrize("call, expected", [
    (lambda: layer_norm(np.ones((3, 4)), gain=np.ones(3)), r"gain should have shape \(4,\).*got shape \(3,\)"),
    (lambda: layer_norm(np.ones((3, 4)), bias=np.ones((3, 4))), r"bias should have shape \(4,\)"),
    (lambda: rms_norm(np.ones((3, 4)), gain=np.ones(1)), r"gain should have shape \(4,\).*got shape \(1,\)"),
    (lambda: rms_norm(np.ones(4), eps=-1e-5), "eps should be a number of at least 0"),
    (lambda: layer_norm(np.ones(4), eps=-1e-5), "eps should be a number of at least 0"),
    (lambda: layer_norm(3.0), "x should have shape"),
    (lambda: rms_norm(3.0), "x should have shape"),
    (lambda: root_mean_square("abc"), "x should be an array of numbers"),
])
def test_bad_input_is_rejected_without_broadcasting(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


# ---------------------------------------------------------------- default epsilon, lists, the norm by name

def test_default_eps_matches_pytorch_on_low_variance_input():
    x = 1e-3 * rng.normal(size=(4, 8))                       # variance 1e-6: eps = 1e-5 matters
    gain = rng.normal(size=8)
    assert np.allclose(layer_norm(x), F.layer_norm(torch.tensor(x), (8,), eps=1e-5).numpy(), atol=1e-9, rtol=0)
    assert np.allclose(rms_norm(x, gain), F.rms_norm(torch.tensor(x), (8,), torch.tensor(gain), 1e-5).numpy(),
                       atol=1e-9, rtol=0)
    assert not np.allclose(rms_norm(x), rms_norm(x, eps=0.0), atol=1e-3)
    for kind, torch_norm in (("layer", lambda t, g: F.layer_norm(t, (8,), g, None, 1e-5)),
                             ("rms", lambda t, g: F.rms_norm(t, (8,), g, 1e-5))):
        expected = torch_norm(torch.tensor(x), torch.tensor(gain)).numpy()
        assert np.allclose(normaliser(kind)(x, gain), expected, atol=1e-9, rtol=0)


def test_lists_are_numbers_too():
    assert np.allclose(rms_norm([[3.0, 4.0]], eps=0.0), [[3, 4]] / np.sqrt(12.5))
    assert np.allclose(layer_norm([[1, 1, 5, 5]], eps=0.0), [[-1, -1, 1, 1]])
    assert root_mean_square([3, 4]) == pytest.approx(np.sqrt(12.5))
    assert np.allclose(root_mean_square([[3, 4], [0, 0]], axis=-1), [np.sqrt(12.5), 0])


def test_normaliser_is_the_norm_named_with_its_gain_shift_and_eps():
    x, gain, bias = rng.normal(size=(3, 6)), rng.normal(size=6), rng.normal(size=6)
    assert set(NORMS) == {"rms", "layer"} and NORMS["rms"] is rms_norm and NORMS["layer"] is layer_norm
    assert np.allclose(normaliser("layer", 0.1)(x, gain, bias), layer_norm(x, gain, bias, eps=0.1))
    assert np.allclose(normaliser("layer", 0.1)(x), layer_norm(x, eps=0.1))
    assert np.allclose(normaliser("rms", 0.1)(x, gain), rms_norm(x, gain, eps=0.1))
    assert np.allclose(normaliser("rms", 0.1)(x), rms_norm(x, eps=0.1))
    with pytest.raises(ValueError, match="a norm bias needs norm='layer' \\(RMSNorm has no shift\\)"):
        normaliser("rms")(x, gain, bias)
    with pytest.raises(ValueError, match="norm should be one of 'rms', 'layer', got 'batch'"):
        normaliser("batch")
