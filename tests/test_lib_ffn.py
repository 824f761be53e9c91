"""lib.ffn against PyTorch's activations, the worked FFN of notebook 02, SwiGLU, the collapse
without an activation, single tokens and the checks."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lib.ffn import (ACTIVATIONS, activation_function, collapse, ffn, gelu, gelu_tanh, hidden_units, identity, relu,
                     sigmoid, silu, swiglu, worked_example)

rng = np.random.default_rng(11)
X = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 2.0]])              # cat, dog, car
W_up = np.array([[1.0, -1.0, 0.0, 1.0], [0.0, 1.0, -1.0, 1.0]])
b_up = np.array([0.0, 0.0, 1.0, -2.0])
W_down = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0], [0.5, 0.5]])
b_down = np.zeros(2)


@pytest.mark.parametrize("ours, theirs", [
    (relu, F.relu), (gelu, lambda t: F.gelu(t, approximate="none")),
    (gelu_tanh, lambda t: F.gelu(t, approximate="tanh")), (silu, F.silu),
])
def test_activations_match_torch(ours, theirs):
    x = np.concatenate([rng.normal(0, 3, (64, 8)).ravel(), [-40.0, -8.0, 0.0, 8.0, 40.0]])
    assert np.allclose(ours(x), theirs(torch.tensor(x)).numpy(), atol=1e-6, rtol=0)
    assert ours(x[:12].reshape(4, 3)).shape == (4, 3)


def test_gelu_is_exact():
    x = np.linspace(-6, 6, 101)
    expected = F.gelu(torch.tensor(x)).numpy()
    assert np.max(np.abs(gelu(x) - expected)) < 1e-14
    assert gelu(np.float64(1.0)) == pytest.approx(0.8413447460685429)
    assert gelu(-30.0) == pytest.approx(-30.0 * 4.906713927148764e-198, rel=1e-12)   # Φ(-30) kept, not 0
    assert gelu([[1.0, -1.0]]).dtype == np.float64 and gelu([[1.0, -1.0]]).shape == (1, 2)


def test_sigmoid_is_the_logistic_function_without_overflow():
    x = np.array([-800.0, -2.0, 0.0, 2.0, 800.0])
    assert np.allclose(sigmoid(x), torch.sigmoid(torch.tensor(x)).numpy(), atol=0, rtol=1e-12)
    assert sigmoid(0.0) == 0.5


def test_every_activation_keeps_float32():
    x = np.linspace(-4, 4, 17)
    for name, function in ACTIVATIONS.items():
        assert function(x.astype(np.float32)).dtype == np.float32, name
        assert np.allclose(function(x.astype(np.float32)), function(x), atol=1e-6, rtol=1e-5), name


def test_sigmoid_in_float32_keeps_its_precision_without_a_warning():
    x = np.array([-800.0, -80.0, -20.0, -2.0, 0.0, 2.0, 20.0, 80.0, 800.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                         # no overflow anywhere
        ours = sigmoid(x.astype(np.float32))
    assert ours.dtype == np.float32
    assert np.allclose(ours, sigmoid(x), atol=0, rtol=1e-6)                   # e^-80 = 1.8e-35 kept too


def test_silu_figures():
    assert np.allclose(np.round(silu(np.array([-3.0, 0.0, 3.0])), 2), [-0.14, 0.00, 2.86])
    assert np.isfinite(silu(np.array([-1000.0, 1000.0]))).all()


def test_worked_ffn_of_notebook_02():
    hidden = hidden_units(X, W_up, b_up)
    assert hidden.shape == (3, 4)
    assert np.allclose(hidden[0], [2, -2, 1, 0])                 # cat before ReLU
    assert (relu(hidden[0]) > 0).sum() == 2                     # two units on
    out = ffn(X, W_up, b_up, W_down, b_down, activation="relu")
    assert np.allclose(out[0], relu(hidden[0]) @ W_down)
    assert np.allclose(ffn(X[:1], W_up, b_up, W_down, b_down), out[:1])     # cat alone: exactly its row
    assert np.allclose(ffn(X, W_up, None, W_down, None), relu(X @ W_up) @ W_down)


def test_without_activation_the_two_matrices_collapse_to_one():
    assert np.allclose(ffn(X, W_up, None, W_down, None, activation=None), X @ (W_up @ W_down))
    assert np.allclose(ffn(X, W_up, None, W_down, None, activation="none"), X @ (W_up @ W_down))


def test_ffn_matches_torch_linear_layers_for_each_activation():
    x = rng.normal(size=(2, 5, 6))
    w1, c1, w2, c2 = rng.normal(size=(6, 12)), rng.normal(size=12), rng.normal(size=(12, 6)), rng.normal(size=6)
    t = lambda a: torch.tensor(a)
    for name, act in [("relu", F.relu), ("gelu", F.gelu), ("gelu_tanh", lambda z: F.gelu(z, approximate="tanh")),
                      ("silu", F.silu)]:
        expected = F.linear(act(F.linear(t(x), t(w1.T), t(c1))), t(w2.T), t(c2)).numpy()
        assert np.allclose(ffn(x, w1, c1, w2, c2, activation=name), expected, atol=1e-6, rtol=0)
    assert np.allclose(ffn(x, w1, c1, w2, c2, activation=np.tanh), np.tanh(x @ w1 + c1) @ w2 + c2)


def test_swiglu_matches_its_formula_in_torch():
    x, gate, up, down = (rng.normal(size=s) for s in [(4, 8), (8, 20), (8, 20), (20, 8)])
    t = lambda a: torch.tensor(a)
    expected = ((F.silu(t(x) @ t(gate)) * (t(x) @ t(up))) @ t(down)).numpy()
    assert np.allclose(swiglu(x, gate, up, down), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("call, expected", [
    (lambda: ffn(X, W_up.T, b_up, W_down, b_down), r"W_up should have 2 rows to match x's last axis.*got shape \(4, 2\)"),
    (lambda: ffn(X, W_up, b_up[:3], W_down, b_down), r"b_up should have shape \(4,\).*got shape \(3,\)"),
    (lambda: ffn(X, W_up, b_up, W_down[:3], b_down), r"W_down should have 4 rows to match W_up's 4 columns.*got shape \(3, 2\)"),
    (lambda: ffn(X, W_up, b_up, W_down, np.zeros(3)), r"b_down should have shape \(2,\)"),
    (lambda: ffn(X, W_up, b_up, W_down, b_down, activation="tanh"), "activation should be one of 'relu', 'gelu'.*got 'tanh'"),
    (lambda: swiglu(X, W_up, W_up[:, :3], W_down), r"W_up should have 4 columns like W_gate"),
    (lambda: swiglu(X, W_up, W_up, W_down.T), r"W_down should have 4 rows"),
    (lambda: ffn(X, W_up[0], b_up, W_down, b_down), r"W_up should be a matrix \(2 axes\), got shape \(4,\)"),
    (lambda: ffn(3.0, W_up, b_up, W_down, b_down), r"x should have shape \(..., d_model\), got a single number"),
    (lambda: swiglu(3.0, W_up, W_up, W_down), r"x should have shape \(..., d_model\), got a single number"),
    (lambda: swiglu(X, W_up.T, W_up, W_down), r"W_gate should have 2 rows to match x's last axis \(2 numbers per token\)"),
    (lambda: swiglu(X, W_up, W_up.T, W_down), r"W_up should have 2 rows to match x's last axis"),
    (lambda: hidden_units(X, W_up, np.ones(5)), r"b_up should have shape \(4,\) to match W_up's 4 columns"),
    (lambda: ffn(X, W_up, b_up, W_down, np.ones(3)), r"b_down should have shape \(2,\) to match W_down's 2 columns"),
    (lambda: swiglu(X, W_up, W_up, W_down.T), r"W_down should have 4 rows to match the hidden width 4 of W_gate and W_up"),
    (lambda: collapse(W_up[0], b_up, W_down, b_down), r"W_up should be a matrix \(2 axes\), got shape \(4,\)"),
    (lambda: gelu_tanh("x"), "x should be an array of numbers"),
    (lambda: sigmoid("x"), "x should be an array of numbers"),
    (lambda: silu("x"), "x should be an array of numbers"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


def test_activation_by_name():
    assert activation_function("silu") is silu
    assert {name: activation_function(name) for name in ACTIVATIONS} == ACTIVATIONS
    assert activation_function(np.tanh) is np.tanh
    assert activation_function(None) is identity and activation_function("none") is identity
    assert identity([[1, 2]]).tolist() == [[1.0, 2.0]] and identity([1]).dtype == np.float64


# ---------------------------------------------------------------- single tokens, the worked example, collapse

def test_a_single_token_of_shape_d_gives_shape_d_out():
    x, w1, c1, w2, c2 = rng.normal(size=5), rng.normal(size=(5, 9)), rng.normal(size=9), rng.normal(size=(9, 3)), rng.normal(size=3)
    assert hidden_units(x, w1, c1).shape == (9,) and np.allclose(hidden_units(x, w1, c1), x @ w1 + c1)
    for activation in ("relu", "gelu", None):
        out = ffn(x, w1, c1, w2, c2, activation=activation)
        assert out.shape == (3,) and np.allclose(out, ffn(x[None], w1, c1, w2, c2, activation=activation)[0])
    gate, up, down = rng.normal(size=(5, 9)), rng.normal(size=(5, 9)), rng.normal(size=(9, 5))
    assert swiglu(x, gate, up, down).shape == (5,)
    assert np.allclose(swiglu(x, gate, up, down), swiglu(x[None], gate, up, down)[0])


def test_worked_example_numbers():
    e = worked_example()
    assert e.tokens == ("cat", "dog", "car")
    assert [a.tolist() for a in (e.X, e.W_up, e.b_up, e.W_down, e.b_down)] == [a.tolist() for a in (X, W_up, b_up, W_down, b_down)]
    hidden = hidden_units(e.X, e.W_up, e.b_up)
    assert hidden[0].tolist() == [2, -2, 1, 0] and int((hidden[0] > 0).sum()) == 2
    e.X[0, 0] = 99                                                 # fresh arrays every call
    assert worked_example().X[0, 0] == 2


def test_collapse_matches_the_ffn_without_activation():
    e = worked_example()
    W, b = collapse(e.W_up, e.b_up, e.W_down, e.b_down)
    assert W.tolist() == [[1.5, -0.5], [1.5, 0.5]] and b.tolist() == [-2.0, 0.0]
    r = np.random.default_rng(4)
    W1_, b1_, W2_, b2_ = r.normal(size=(5, 20)), r.normal(size=20), r.normal(size=(20, 3)), r.normal(size=3)
    x = r.normal(size=(2, 7, 5))
    for first, second in ((b1_, b2_), (None, b2_), (b1_, None), (None, None)):
        W, b = collapse(W1_, first, W2_, second)
        assert W.shape == (5, 3) and b.shape == (3,)
        assert np.max(np.abs(ffn(x, W1_, first, W2_, second, activation=None) - (x @ W + b))) < 1e-12
    with pytest.raises(ValueError, match="W_down should have 20 rows to match W_up's 20 columns"):
        collapse(W1_, b1_, np.ones((3, 3)), None)
    with pytest.raises(ValueError, match=r"b_up should have shape \(20,\)"):
        collapse(W1_, np.ones(5), W2_, None)
    with pytest.raises(ValueError, match=r"b_down should have shape \(3,\)"):
        collapse(W1_, None, W2_, np.ones(5))


def test_smooth_activations_take_lists():
    values = [-2.0, -0.5, 0.0, 1.5]
    for function in (gelu_tanh, sigmoid, silu):
        assert np.array_equal(function(values), function(np.array(values))), function.__name__
    W, b = collapse(W_up.tolist(), b_up, W_down, b_down)
    assert np.array_equal(W, W_up @ W_down)
