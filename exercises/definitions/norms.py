"""Exercises and questions of notebook 03, "Normalisation and residual connections"."""

from __future__ import annotations

import numpy as np

from lib.norm import layer_norm as _layer_norm, rms_norm as _rms_norm

from exercises.core.definition import Case, Contract, Exercise, Mistake, Question, Variant, in_float32

NOTEBOOK = "03_norms_and_residuals"


def _random_shape(rng, min_last: int = 2) -> tuple[int, ...]:
    lead = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    return lead + (int(rng.integers(min_last, 9)),)


# ---------------------------------------------------------------- layer_norm

def _layer_norm_reference(x, eps=1e-5):
    """LayerNorm computed in float64, returned in x's number type: float32 cannot carry the
    spread of tokens far from 0 (at mean 1000 it keeps about 3 digits of it)."""
    x = np.asarray(x)
    out = _layer_norm(x.astype(np.float64), eps=eps)
    return out.astype(np.float32) if x.dtype == np.float32 else out


def _around(mean, spread, d):
    """A token of d numbers with the given mean whose variance is exactly spread ** 2."""
    return mean + spread * np.where(np.arange(d) % 2, -1.0, 1.0)[None, :]


LAYER_NORM_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d), d >= 1 numbers per token",
          "eps": "a number >= 0 added to the variance, 1e-5 unless given"},
    returns="the normalised tokens, shape (..., d)",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
    defaults={"eps": 1e-5},
    edges={"variance 0": "tokens whose numbers are all equal",
           "variance near eps": "a token whose variance is about eps (and one ten times larger)",
           "variance below eps": "a token whose variance is far below eps",
           "one number": "a token of a single number",
           "offset": "a token far from 0 (mean 1000)",
           "float32 offset": "float32 tokens far from 0 (mean 1000), whose spread float32 keeps to "
                             "about 3 digits: compared to 1 part in 1000",
           "batch": "a batch of texts"},
)


def _layer_norm_fixed() -> list[Case]:
    return [
        Case((np.array([[1.0, 1.0, 5.0, 5.0], [2.0, 4.0, 6.0, 8.0]]),), "the example", visible=True),
        Case((np.full((2, 4), 3.0),), "constant rows (their variance is 0)", covers=("variance 0",)),
        Case((np.array([[1.0, 1.001, 0.999, 1.0005, 0.9995]]),),
             "a token whose numbers are nearly equal (variance far below eps)",
             covers=("variance below eps",)),
        Case((np.concatenate([_around(0.5, np.sqrt(1e-5), 6), _around(-0.25, np.sqrt(1e-4), 6)]),),
             "tokens whose variance is eps, and ten times eps", covers=("variance near eps",)),
        Case((np.sin(np.arange(80.0)).reshape(2, 5, 8) * 3.0 + 1.0,), "a batch of 2 sentences of 5 tokens",
             covers=("batch",)),
        Case((np.array([[2.5, -1.0, 0.5, 7.0, 3.0, -4.0, 1.0]]),), "one token of odd length"),
        Case((np.array([[4.0], [-2.5]]),), "tokens of a single number", covers=("one number",)),
        Case((np.array([[1000.5, 1001.5, 999.0, 1002.0, 1000.0]]),), "a token far from 0",
             covers=("offset",)),
        Case((np.array([[0.3, -0.2, 0.05, 0.1]]),), "a larger eps", kwargs={"eps": 0.1}),
        Case((_around(2.0, np.sqrt(1e-3), 4),), "eps = 0.001 and a variance of 0.001",
             kwargs={"eps": 1e-3}),
        in_float32(Case((np.cos(np.arange(18.0)).reshape(3, 6) * 2.0 - 0.5,), "float32 tokens")),
        Case((np.array([[1000.5, 1001.5, 999.0, 1002.0, 1000.0, 998.5],
                        [1000.2, 999.9, 1000.1, 999.8, 1000.3, 999.6]], dtype=np.float32),),
             "float32 tokens far from 0 (mean 1000)", covers=("float32 offset", "float32"), rtol=1e-3, atol=1e-3),
    ]


def _layer_norm_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        shape = _random_shape(rng)
        cases.append(Case((rng.normal(rng.uniform(-3, 3), rng.uniform(0.5, 4), shape),),
                          f"random numbers, shape {shape}"))
    return cases


def _centred(x):
    return x - x.mean(axis=-1, keepdims=True)


def _var(x):
    return x.var(axis=-1, keepdims=True)


def _std_plus_eps(x, eps=1e-5):
    return _centred(x) / (np.sqrt(_var(x)) + eps)


def _no_eps(x, eps=1e-5):
    return _centred(x) / np.sqrt(_var(x))


def _no_sqrt(x, eps=1e-5):
    return _centred(x) / (_var(x) + eps)


def _fixed_eps(x, eps=1e-5):
    return _layer_norm(x, eps=1e-5)


def _eps_squared(x, eps=1e-5):
    return _centred(x) / np.sqrt(_var(x) + eps ** 2)


def _eps_floor(x, eps=1e-5):
    return _centred(x) / np.sqrt(np.maximum(_var(x), eps))


def _sample_variance(x, eps=1e-5):
    return _centred(x) / np.sqrt(x.var(axis=-1, keepdims=True, ddof=1) + eps)


def _whole_array(x, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var() + eps)


LAYER_NORM = Exercise(
    id="layer-norm",
    notebook=NOTEBOOK,
    title="LayerNorm over the last axis",
    name="layer_norm",
    template='''def layer_norm(x, eps=1e-5):
    """Each token (the last axis of x) rescaled to mean 0 and standard deviation 1."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / ____
''',
    solution=["np.sqrt(var + eps)"],
    reference=_layer_norm_reference,
    contract=LAYER_NORM_CONTRACT,
    fixed=_layer_norm_fixed,
    draw=_layer_norm_draw,
    hints=[
        "After subtracting the mean, divide by the spread of each token's numbers: the "
        "standard deviation, which is the square root of the variance.",
        "A token whose numbers are all equal has variance 0, and 0 / 0 is NaN. The small "
        "number `eps` is there to keep the division safe; it belongs inside the square root.",
        "`var` already has one number per token, kept as a column, so it lines up with "
        "`x - mean` without any reshaping.",
    ],
    mistakes=[
        Mistake("no eps",
                "Without `eps`, a token whose numbers are all equal gives 0 / 0 = NaN. Add "
                "`eps` to the variance before taking the square root.",
                impl=_no_eps),
        Mistake("eps outside the root",
                "You added `eps` after the square root. The convention (PyTorch's too) adds it "
                "to the variance, inside the root; the two differ when the variance is tiny.",
                impl=_std_plus_eps),
        Mistake("no square root",
                "You divided by the variance itself. Its square root, the standard deviation, "
                "is what brings the numbers to a spread of 1.",
                impl=_no_sqrt),
        Mistake("fixed eps",
                "You wrote the number 1e-5 instead of using the argument `eps`, so a caller who "
                "asks for another eps does not get it.",
                impl=_fixed_eps),
        Mistake("eps squared",
                "Your result is LayerNorm with eps squared (1e-10 instead of 1e-5): right while "
                "the variance is large, wrong for a token whose variance is about eps. Add `eps` "
                "itself to the variance, inside the square root.",
                impl=_eps_squared),
        Mistake("eps as a floor",
                "You used eps as a floor (the larger of the variance and eps). LayerNorm adds eps "
                "to the variance: the two differ for a token whose variance is near eps.",
                impl=_eps_floor),
        Mistake("sample variance",
                "You used the sample variance (divided by d \u2212 1). LayerNorm divides the "
                "squared distances by d, as `x.var()` does by default.",
                impl=_sample_variance),
        Mistake("whole array",
                "You took the variance of the whole array. Each token is normalised by its own "
                "variance, over its last axis.",
                impl=_whole_array),
    ],
    wrong=[
        Variant({0: "np.sqrt(var)"}, ["NaN", "eps"], "nan"),
        Variant({0: "(np.sqrt(var) + eps)"}, ["hidden test", "inside the root"], "values"),
        Variant({0: "(var + eps)"}, ["row 0", "standard deviation"], "values"),
        Variant({0: "np.sqrt(var + 1e-5)"}, ["hidden test", "argument"], "values"),
        Variant({0: "np.sqrt(var + eps ** 2)"}, ["hidden test", "eps squared", "about eps"], "values"),
        Variant({0: "np.sqrt(np.maximum(var, eps))"}, ["hidden test", "floor"], "values"),
        Variant({0: "np.sqrt(var + 1e-6)"}, ["hidden test", "variance far below eps",
                                              "the ones it gets wrong", "variance is eps"], "values"),
        Variant({0: "np.sqrt(x.var() + eps)"}, ["row 0", "whole array"], "values"),
        Variant({0: "np.sqrt(x.var(axis=-1, keepdims=True, ddof=1) + eps)"}, ["row 0", "d \u2212 1"],
                "values"),
        Variant({0: "np.sqrt(vr + eps)"}, ["NameError", "line 5"], "error"),
        Variant(source='''def layer_norm(x, eps=1e-5):
    x -= x.mean(axis=-1, keepdims=True)
    x /= np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return x
''', expect=["changed its argument `x`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "(var + eps) ** 0.5"}),
        Variant({0: "np.sqrt(x.var(axis=-1, keepdims=True) + eps)"}),
        Variant({0: "np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)"}),
        Variant({0: "np.power(eps + var, 0.5)"}),
        Variant(source='''def layer_norm(x, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    centred /= np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    return centred
'''),
    ],
    rtol=1e-4,
    atol=1e-6,
    skills="write LayerNorm over the last axis, with eps inside the square root",
)


# ---------------------------------------------------------------- rms_norm

def _rms_norm_reference(x, gain, eps=1e-5):
    return _rms_norm(x, gain, eps=eps)


RMS_NORM_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d), d >= 1 numbers per token",
          "gain": "the learned gain, shape (d,), any numbers (negative ones too)",
          "eps": "a number >= 0 added to the mean square, 1e-5 unless given"},
    returns="the normalised tokens times the gain, shape (..., d)",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
    defaults={"eps": 1e-5},
    edges={"zeros": "a token of zeros",
           "mean square near eps": "a token whose mean square is about eps (and one ten times larger)",
           "offset": "a token far from 0 (RMSNorm keeps its offset)",
           "square": "as many tokens as numbers per token",
           "batch": "a batch of texts"},
)


def _rms_norm_fixed() -> list[Case]:
    return [
        Case((np.array([[-1.1, 0.1, -0.2, -0.5], [3.0, -1.0, 2.0, 0.0]]), np.array([1.0, 1.0, 2.0, 0.5])),
             "the example", visible=True),
        Case((np.full((2, 3), -2.0), np.array([0.5, 1.0, 3.0])), "constant rows"),
        Case((np.zeros((1, 4)), np.ones(4)), "a token of zeros (eps keeps it finite)", covers=("zeros",)),
        Case((np.array([[4.0, 5.0, 6.0, 5.0]]), np.array([1.5, -1.0, 0.2, 2.0])),
             "a token far from 0 (RMSNorm does not subtract the mean)", covers=("offset",)),
        Case((np.concatenate([_around(0.0, np.sqrt(1e-5), 4), _around(0.0, np.sqrt(1e-4), 4),
                              np.array([[1e-3, 3e-3, -2e-3, 4e-3]])]), np.array([1.0, -0.5, 2.0, 1.5])),
             "tokens whose mean square is eps, ten times eps and a little above",
             covers=("mean square near eps",)),
        Case((np.cos(np.arange(60.0)).reshape(2, 5, 6) * 2.0, np.linspace(0.5, 2.0, 6)),
             "a batch of 2 sentences of 5 tokens", covers=("batch",)),
        Case((np.sin(np.arange(16.0)).reshape(4, 4) + 0.5, np.array([0.5, 1.5, -1.0, 2.0])),
             "4 tokens of 4 numbers", covers=("square",)),
        Case((np.array([[1e-3, -2e-3, 5e-4]]), np.array([1.0, 2.0, 1.0])), "a larger eps",
             kwargs={"eps": 1e-2}),
        in_float32(Case((np.sin(np.arange(15.0)).reshape(3, 5) * 3.0, np.linspace(-1.0, 2.0, 5)),
                        "float32 tokens and gain")),
    ]


def _rms_norm_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        shape = _random_shape(rng)
        cases.append(Case((rng.normal(0.0, rng.uniform(0.5, 3), shape), rng.normal(1.0, 0.5, shape[-1])),
                          f"random numbers, shape {shape}"))
    return cases


def _ms(x):
    return (x ** 2).mean(axis=-1, keepdims=True)


def _rms_no_gain(x, gain, eps=1e-5):
    return _rms_norm(x, eps=eps)


def _rms_centred(x, gain, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * gain


def _rms_var(x, gain, eps=1e-5):
    return x / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * gain


def _rms_no_sqrt(x, gain, eps=1e-5):
    return x / (_ms(x) + eps) * gain


def _rms_abs_mean(x, gain, eps=1e-5):
    return x / np.sqrt(np.abs(x).mean(axis=-1, keepdims=True) ** 2 + eps) * gain


def _rms_sum(x, gain, eps=1e-5):
    return x / np.sqrt((x ** 2).sum(axis=-1, keepdims=True) + eps) * gain


def _rms_eps_outside(x, gain, eps=1e-5):
    return x / (np.sqrt(_ms(x)) + eps) * gain


def _rms_eps_floor(x, gain, eps=1e-5):
    return x / np.sqrt(np.maximum(_ms(x), eps)) * gain


def _rms_eps_squared(x, gain, eps=1e-5):
    return x / np.sqrt(_ms(x) + eps ** 2) * gain


def _rms_fixed_eps(x, gain, eps=1e-5):
    return _rms_norm(x, gain, eps=1e-5)


def _rms_no_keepdims(x, gain, eps=1e-5):
    return x / np.sqrt((x ** 2).mean(axis=-1) + eps) * gain


_RMS_KEEPDIMS = ("Your code works only when there are as many tokens as numbers per token: the "
                 "mean of the squares has one number per token, and without `keepdims=True` it "
                 "loses its axis and no longer lines up with the tokens' rows.")

RMS_NORM = Exercise(
    id="rms-norm",
    notebook=NOTEBOOK,
    title="RMSNorm with its gain",
    name="rms_norm",
    template='''def rms_norm(x, gain, eps=1e-5):
    """Each token (the last axis) divided by its root mean square, then times the gain."""
    ms = ____       # the mean of the squares: one number per token, kept as a column
    return ____     # rescale each token, then apply the learned gain (one number per column)
''',
    solution=["(x ** 2).mean(axis=-1, keepdims=True)", "x / np.sqrt(ms + eps) * gain"],
    reference=_rms_norm_reference,
    contract=RMS_NORM_CONTRACT,
    fixed=_rms_norm_fixed,
    draw=_rms_norm_draw,
    hints=[
        "Root mean square, read from the inside out: square every number, average the squares "
        "over the token's numbers (the last axis), take the square root.",
        "The first blank is the middle step only (square, then average with keepdims). The "
        "second divides x by the root of that, with `eps` added inside the root as in LayerNorm.",
        "The gain has one number per column, shape (d,), so multiplying the rescaled x by it "
        "scales each column of every token; nothing is subtracted anywhere.",
    ],
    mistakes=[
        Mistake("no gain",
                "The rescaling is right but the gain is missing: multiply the result by `gain`.",
                impl=_rms_no_gain),
        Mistake("centred",
                "You subtracted each token's mean: that is LayerNorm. RMSNorm only divides, so a "
                "token far from 0 keeps its offset.",
                impl=_rms_centred),
        Mistake("variance",
                "You used the variance, which subtracts the mean before squaring. RMSNorm "
                "averages the squares of the numbers themselves.",
                impl=_rms_var),
        Mistake("no sqrt",
                "You divided by the mean of the squares itself; its square root is the typical "
                "size of a number.",
                impl=_rms_no_sqrt),
        Mistake("mean of absolute values",
                "You averaged the sizes |x| and then squared; RMSNorm squares first, then averages.",
                impl=_rms_abs_mean),
        Mistake("sum of squares",
                "You added up the squares; RMSNorm averages them (their sum divided by d).",
                impl=_rms_sum),
        Mistake("eps outside the root",
                "You added `eps` after the square root. It belongs inside, added to the mean of "
                "the squares; the two differ for a token whose mean square is near eps.",
                impl=_rms_eps_outside),
        Mistake("eps as a floor",
                "You used eps as a floor (the larger of the mean square and eps). RMSNorm adds eps "
                "to the mean square: the two differ for a token whose mean square is near eps.",
                impl=_rms_eps_floor),
        Mistake("eps squared",
                "Your result is RMSNorm with eps squared (1e-10 instead of 1e-5): right for "
                "ordinary tokens, wrong for a token whose mean square is about eps. Add `eps` "
                "itself.",
                impl=_rms_eps_squared),
        Mistake("fixed eps",
                "You wrote the number 1e-5 instead of using the argument `eps`, so a caller who "
                "asks for another eps does not get it.",
                impl=_rms_fixed_eps),
        Mistake("missing keepdims", _RMS_KEEPDIMS, impl=_rms_no_keepdims),
    ],
    wrong=[
        Variant({1: "x / np.sqrt(ms + eps)"}, ["row 0", "gain"], "values"),
        Variant({0: "x.var(axis=-1, keepdims=True)"}, ["row 0", "variance"], "values"),
        Variant({1: "x / (ms + eps) * gain"}, ["row 0", "square root"], "values"),
        Variant({0: "(x ** 2).mean(axis=-1)"}, ["ValueError", "keepdims", "as many tokens"], "error"),
        Variant({0: "(x ** 2).mean(axis=0, keepdims=True)"}, ["row 0", "expected"], "values"),
        Variant({1: "x / np.sqrt(ms) * gain"}, ["NaN"], "nan"),
        Variant({0: "(x ** 2).sum(axis=-1, keepdims=True)"}, ["row 0", "averages them"], "values"),
        Variant({1: "x / (np.sqrt(ms) + eps) * gain"}, ["hidden test", "inside"], "values"),
        Variant({1: "x / np.sqrt(np.maximum(ms, eps)) * gain"}, ["hidden test", "floor"], "values"),
        Variant({1: "x / np.sqrt(ms + eps ** 2) * gain"}, ["hidden test", "eps squared"], "values"),
        Variant({1: "x / np.sqrt(ms + 1e-5) * gain"}, ["hidden test", "argument `eps`"], "values"),
        Variant({1: "x / np.sqrt(ms + 1e-8) * gain"}, ["hidden test", "gets wrong", "mean square is eps"],
                "values"),
        Variant({1: "np.multiply(x, gain / np.sqrt(ms + eps), out=x)"},
                ["changed its argument `x`", "caller"], "inplace"),
    ],
    alternatives=[
        Variant({0: "np.mean(x * x, axis=-1, keepdims=True)"}),
        Variant({0: "np.square(x).mean(-1)[..., None]", 1: "gain * x / (ms + eps) ** 0.5"}),
        Variant({1: "x * (1.0 / np.sqrt(ms + eps)) * gain"}),
        Variant({0: "np.einsum('...i,...i->...', x, x)[..., None] / x.shape[-1]"}),
    ],
    rtol=1e-4,
    atol=1e-6,
    skills="write RMSNorm: divide by the root mean square, then apply the gain",
)


# ---------------------------------------------------------------- pre-norm update

def _pre_norm_reference(x, f, norm):
    return x + f(norm(x))


_W_EXAMPLE = np.array([[0.5, -0.2, 0.1, 0.0], [0.3, 0.4, -0.6, 0.2],
                       [-0.1, 0.2, 0.3, -0.5], [0.2, 0.0, 0.4, 0.3]])


def _example_f(h):
    return h @ _W_EXAMPLE


def _zeros_f(h):
    return np.zeros_like(h)


def _layer(seed: int, d: int):
    w = np.random.default_rng(seed).normal(0.0, d ** -0.5, (d, d))
    return lambda h: np.tanh(h @ w)


def _rms(x):
    return _rms_norm(x)


def _ln(x):
    return _layer_norm(x)


PRE_NORM_CONTRACT = Contract(
    args={"x": "the stream, shape (..., d)", "f": "a layer: a function of an array like x",
          "norm": "a norm: a function of an array like x"},
    returns="the new stream, shape (..., d)",
    ndims=(2, 3),
    dtypes=("float64", "float32"),
    edges={"zero layer": "a layer that returns zeros", "large": "a large stream",
           "batch": "a batch of texts", "both norms": "RMSNorm and LayerNorm"},
)


def _pre_norm_fixed() -> list[Case]:
    return [
        Case((np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.5, 2.5, 0.0]]), _example_f, _rms),
             "the example", visible=True, covers=("both norms",)),
        Case((np.array([[3.0, 1.0], [-2.0, 5.0]]), _zeros_f, _ln), "f returns zeros", covers=("zero layer",)),
        Case((np.array([[10.0, 20.0, 30.0, 40.0, 50.0]]), _layer(3, 5), _ln),
             "a large stream (the norm must not touch it)", covers=("large",)),
        Case((np.sin(np.arange(48.0)).reshape(2, 4, 6) * 4.0, _layer(4, 6), _rms),
             "a batch of 2 sentences of 4 tokens", covers=("batch",)),
        in_float32(Case((np.cos(np.arange(15.0)).reshape(3, 5) * 2.0, _layer(5, 5), _ln),
                        "a float32 stream")),
    ]


def _pre_norm_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        shape = _random_shape(rng, min_last=3)
        norm = _rms if rng.random() < 0.5 else _ln
        cases.append(Case((rng.normal(rng.uniform(-2, 2), rng.uniform(0.5, 5), shape),
                           _layer(int(rng.integers(1_000_000)), shape[-1]), norm),
                          f"random stream, shape {shape}"))
    return cases


PRE_NORM = Exercise(
    id="pre-norm-update",
    notebook=NOTEBOOK,
    title="The pre-norm update",
    name="pre_norm_update",
    template='''def pre_norm_update(x, f, norm):
    """One pre-norm step: f reads a normalised copy of the stream x, and what f returns is
    added to x. (norm and f are functions: norm(x) normalises, f(h) is the layer.)"""
    return ____
''',
    solution=["x + f(norm(x))"],
    reference=_pre_norm_reference,
    contract=PRE_NORM_CONTRACT,
    fixed=_pre_norm_fixed,
    draw=_pre_norm_draw,
    hints=[
        "Read the docstring as three moves: make a normalised copy of the stream, let the layer "
        "read that copy, then add the layer's output to the stream.",
        "The stream itself is never normalised in pre-norm: only the copy that f reads is. "
        "What you add to must be the plain x.",
    ],
    mistakes=[
        Mistake("post-norm",
                "That is post-norm: you added first and normalised the sum, so the stream itself "
                "was rescaled. In pre-norm only the copy that f reads is normalised.",
                impl=lambda x, f, norm: norm(x + f(x))),
        Mistake("no residual",
                "The layer's output replaced the stream instead of being added to it: the plain "
                "x must be kept and the output added on.",
                impl=lambda x, f, norm: f(norm(x))),
        Mistake("added to the normalised copy",
                "You added the layer's output to the normalised copy, so the stream was rescaled "
                "after all. Add it to the plain x.",
                impl=lambda x, f, norm: norm(x) + f(norm(x))),
        Mistake("f reads the raw stream",
                "f read the raw stream, so the layer sees numbers of whatever size the stream has "
                "grown to. Give f the normalised copy.",
                impl=lambda x, f, norm: x + f(x)),
        Mistake("normalised the output",
                "You normalised what f returned; the norm goes on f's input.",
                impl=lambda x, f, norm: x + norm(f(x))),
    ],
    wrong=[
        Variant({0: "norm(x + f(x))"}, ["row 0", "post-norm"], "values"),
        Variant({0: "f(norm(x))"}, ["row 0", "replaced the stream"], "values"),
        Variant({0: "norm(x) + f(norm(x))"}, ["row 0", "plain x"], "values"),
        Variant({0: "x + f(x)"}, ["row 0", "raw stream"], "values"),
        Variant({0: "x + norm(f(x))"}, ["row 0", "f's input"], "values"),
        Variant(source='''def pre_norm_update(x, f, norm):
    x += f(norm(x))
    return x
''', expect=["changed its argument `x`", "caller"], kind="inplace"),
    ],
    alternatives=[
        Variant({0: "f(norm(x)) + x"}),
        Variant(source='''def pre_norm_update(x, f, norm):
    h = norm(x)
    return x + f(h)
'''),
        Variant({0: "np.add(x, f(norm(x)))"}),
    ],
    rtol=1e-5,
    atol=1e-6,
    skills="write the pre-norm update x + f(norm(x))",
    retired=True,      # replaced by nudge-growth; kept so that saved notebooks still check it
)



# ---------------------------------------------------------------- a nudge through pre-norm and post-norm layers

def _rms_of(v):
    return np.sqrt(np.mean(np.asarray(v) ** 2))


def _run_both(x, nudge, layers, step):
    a, b = x, x + nudge
    for f in layers:
        a, b = step(a, f), step(b, f)
    return a, b


def _placed(norm, placement):
    if placement == "pre":
        return lambda h, f: h + f(norm(h))
    return lambda h, f: norm(h + f(h))


def _nudge_reference(x, nudge, layers, norm, placement):
    a, b = _run_both(x, nudge, layers, _placed(norm, placement))
    return _rms_of(a - b) / _rms_of(nudge)


def _tanh_layer(w):
    return lambda h: np.tanh(h @ w)


NUDGE_W = np.array([[0.5, -0.2, 0.1, 0.0], [0.3, 0.4, -0.6, 0.2],
                    [-0.1, 0.2, 0.3, -0.5], [0.2, 0.0, 0.4, 0.3]])
NUDGE_X = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.5, 2.5, 0.0]])
NUDGE = np.full((2, 4), 0.001)


def example_layer(h):
    """The layer of the check's example: tanh(h @ W), W the 4 x 4 matrix ``NUDGE_W``."""
    return np.tanh(h @ NUDGE_W)


def _random_tanh_layers(rng, d, n, gain):
    return [_tanh_layer(rng.normal(0.0, gain / np.sqrt(d), (d, d))) for _ in range(n)]


NUDGE_CONTRACT = Contract(
    args={"x": "the stream, shape (..., d): tokens of d >= 2 numbers",
          "nudge": "a small change of the stream (numbers of 0.01 or less), the same shape as x",
          "layers": "a list of layers, each a function f(h) of an array like x (the list may be empty)",
          "norm": "a norm: norm(h) normalises each token of h",
          "placement": "\"pre\" or \"post\""},
    returns="the growth: the root mean square of the gap at the top over that of the nudge, "
            "one number > 0",
    ndims=(2, 3),
    dtypes=("float64",),
    edges={"post": "post-norm layers",
           "repeated": "the same layer more than once in the list (as `[layer] * 3` builds it)",
           "no layers": "no layers at all (the change arrives as it left: 1)",
           "zero layers": "layers that return zeros, pre-norm and post-norm",
           "layernorm": "LayerNorm as the norm",
           "large": "a large stream (numbers in the tens)",
           "batch": "a batch of texts",
           "one token": "a text of one token",
           "uneven nudge": "a nudge whose numbers differ from each other"},
)


def _nudge_fixed() -> list[Case]:
    fixed = np.random.default_rng(31)
    x6 = np.sin(np.arange(18.0)).reshape(3, 6) * 2.0
    wave = 1e-3 * np.cos(np.arange(18.0)).reshape(3, 6)
    return [
        Case((NUDGE_X.copy(), NUDGE.copy(), [example_layer] * 3, _rms, "pre"), "the example", visible=True,
             covers=("repeated",)),
        Case((NUDGE_X.copy(), NUDGE.copy(), [example_layer] * 3, _rms, "post"), "the example with post-norm",
             covers=("post",)),
        Case((x6, wave, [], _ln, "pre"), "no layers at all (the change arrives as it left: 1)",
             covers=("no layers", "uneven nudge")),
        Case((x6, wave, [_zeros_f] * 4, _ln, "pre"), "layers that return zeros, pre-norm",
             covers=("zero layers", "layernorm")),
        Case((x6, wave, [_zeros_f] * 4, _rms, "post"), "layers that return zeros, post-norm",
             covers=("zero layers",)),
        Case((x6 * 10.0, 10.0 * wave, _random_tanh_layers(fixed, 6, 5, 2.0), _ln, "post"),
             "a large stream, LayerNorm, post-norm", covers=("large", "layernorm")),
        Case((np.cos(np.arange(40.0)).reshape(2, 4, 5), 1e-3 * np.sin(np.arange(40.0)).reshape(2, 4, 5),
              _random_tanh_layers(fixed, 5, 6, 1.5), _rms, "pre"), "a batch of 2 texts of 4 tokens",
             covers=("batch",)),
        Case((np.array([[0.5, -1.0, 2.0, 1.5, -0.25]]), 1e-3 * np.array([[1.0, -2.0, 0.5, 3.0, -1.5]]),
              _random_tanh_layers(fixed, 5, 4, 2.5), _ln, "pre"), "a text of one token, LayerNorm, pre-norm",
             covers=("one token", "layernorm")),
    ]


def _nudge_draw(rng) -> list[Case]:
    cases = []
    for _ in range(3):
        d, tokens, n = int(rng.integers(3, 9)), int(rng.integers(1, 6)), int(rng.integers(1, 9))
        placement = "pre" if rng.random() < 0.5 else "post"
        norm = _rms if rng.random() < 0.5 else _ln
        cases.append(Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (tokens, d)),
                           1e-3 * rng.normal(size=(tokens, d)),
                           _random_tanh_layers(rng, d, n, rng.uniform(0.5, 3.0)), norm, placement),
                          f"random: {n} layers on {tokens} tokens of {d} numbers, {placement}-norm"))
    return cases


def _swapped(x, nudge, layers, norm, placement):
    return _nudge_reference(x, nudge, layers, norm, "post" if placement == "pre" else "pre")


def _steps(pre=None, post=None):
    """The experiment with one placement's step written wrongly: ``pre`` and ``post`` make the
    mistaken step from the norm."""
    def run(x, nudge, layers, norm, placement):
        make = pre if placement == "pre" else post
        step = make(norm) if make is not None else _placed(norm, placement)
        a, b = _run_both(x, nudge, layers, step)
        return _rms_of(a - b) / _rms_of(nudge)
    return run


def _measured(measure):
    def run(x, nudge, layers, norm, placement):
        a, b = _run_both(x, nudge, layers, _placed(norm, placement))
        return measure(a, b, nudge)
    return run


NUDGE_GROWTH = Exercise(
    id="nudge-growth",
    notebook=NOTEBOOK,
    title="A small change through pre-norm and post-norm layers",
    name="nudge_growth",
    template='''def nudge_growth(x, nudge, layers, norm, placement):
    """How many times larger a small change of the input is when it reaches the top.

    x and x + nudge both go through the layers (functions f(h)), each layer wrapped in the
    placement "pre" or "post" (the two orders of add and norm above); norm(h) normalises.
    The answer is the root mean square of the gap between the two runs at the top, divided
    by the root mean square of the nudge."""
    def step(h, f):
        if placement == "pre":
            return ____
        return ____

    a, b = x, x + nudge
    for f in layers:
        a, b = step(a, f), step(b, f)
    return ____
''',
    solution=["h + f(norm(h))", "norm(h + f(h))",
              "np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(nudge ** 2))"],
    reference=_nudge_reference,
    contract=NUDGE_CONTRACT,
    fixed=_nudge_fixed,
    draw=_nudge_draw,
    hints=[
        "Pre-norm normalises only the copy that the layer reads, and adds the layer's result to "
        "the plain stream. Post-norm adds first, then normalises the sum, so the stream itself "
        "is rescaled.",
        "Both runs went through the same layers. What reached the top is the gap between them: "
        "one run minus the other, a grid of the same shape as the nudge.",
        "A root mean square is the square root of the mean of the squares. Divide the gap's by "
        "the nudge's: 1 means the change arrived as large as it left, above 1 that it grew.",
    ],
    mistakes=[
        Mistake("swapped",
                "Your pre-norm and post-norm steps are swapped. Pre-norm: the layer reads a "
                "normalised copy and its result is added to the plain stream. Post-norm: add, then "
                "normalise the sum.",
                impl=_swapped),
        Mistake("no residual",
                "In your pre-norm step the layer's result replaced the stream instead of being "
                "added to it: keep the plain stream and add the result on.",
                impl=_steps(pre=lambda norm: lambda h, f: f(norm(h)))),
        Mistake("raw read",
                "In your pre-norm step the layer reads the raw stream. Give it the normalised "
                "copy; only the copy is normalised, never the stream you add to.",
                impl=_steps(pre=lambda norm: lambda h, f: h + f(h))),
        Mistake("added to the copy",
                "In your pre-norm step the layer's result was added to the normalised copy, so the "
                "stream itself was rescaled after all. Add it to the plain stream h.",
                impl=_steps(pre=lambda norm: lambda h, f: norm(h) + f(norm(h)))),
        Mistake("post without norm",
                "In your post-norm step nothing is normalised: post-norm adds the layer's result to "
                "the stream, then normalises the sum.",
                impl=_steps(post=lambda norm: lambda h, f: h + f(h))),
        Mistake("post without residual",
                "In your post-norm step the layer's result replaced the stream: post-norm "
                "normalises the sum of the stream and the layer's result.",
                impl=_steps(post=lambda norm: lambda h, f: norm(f(h)))),
        Mistake("upside down",
                "Your ratio is upside down: a change that grew must give a number above 1. "
                "Divide the gap at the top by the nudge, not the other way round.",
                impl=_measured(lambda a, b, n: _rms_of(n) / _rms_of(a - b))),
        Mistake("not divided",
                "You returned the size of the gap at the top. Divide it by the size of the nudge, "
                "so that the answer says how many times larger the change became.",
                impl=_measured(lambda a, b, n: _rms_of(a - b))),
        Mistake("sizes compared",
                "You compared the sizes of the two runs, not the runs themselves: two grids of the "
                "same size can still differ everywhere. Take the root mean square of their "
                "difference.",
                impl=_measured(lambda a, b, n: abs(_rms_of(a) - _rms_of(b)) / _rms_of(n))),
        Mistake("mean size",
                "You compared the average sizes |gap| and |nudge|. The answer compares root mean "
                "squares: square every number, average, then take the square root.",
                impl=_measured(lambda a, b, n: np.mean(np.abs(a - b)) / np.mean(np.abs(n)))),
        Mistake("not rooted",
                "Your answer is the square of the right one: you compared the mean squares. Take "
                "the square root of each before dividing.",
                impl=_measured(lambda a, b, n: _rms_of(a - b) ** 2 / _rms_of(n) ** 2)),
    ],
    wrong=[
        Variant({0: "norm(h + f(h))", 1: "h + f(norm(h))"}, ["expected", "swapped"], "values"),
        Variant({0: "f(norm(h))"}, ["expected", "replaced the stream"], "values"),
        Variant({0: "h + f(h)"}, ["expected", "raw stream"], "values"),
        Variant({0: "norm(h) + f(norm(h))"}, ["expected", "plain stream h"], "values"),
        Variant({1: "h + f(h)"}, ["hidden test", "nothing is normalised"], "values"),
        Variant({1: "norm(f(h))"}, ["hidden test", "normalises the sum"], "values"),
        Variant({2: "np.sqrt(np.mean(nudge ** 2)) / np.sqrt(np.mean((a - b) ** 2))"},
                ["expected", "upside down"], "values"),
        Variant({2: "np.sqrt(np.mean((a - b) ** 2))"}, ["expected", "size of the nudge"], "values"),
        Variant({2: "abs(np.sqrt(np.mean(a ** 2)) - np.sqrt(np.mean(b ** 2))) / np.sqrt(np.mean(nudge ** 2))"},
                ["expected", "difference"], "values"),
        Variant({2: "np.mean(np.abs(a - b)) / np.mean(np.abs(nudge))"}, ["expected", "root mean squares"],
                "values"),
        Variant({2: "np.mean((a - b) ** 2) / np.mean(nudge ** 2)"}, ["expected", "square of the right one"],
                "values"),
        Variant(source='''def nudge_growth(x, nudge, layers, norm, placement):
    def step(h, f):
        if placement == "pre":
            h += f(norm(h))
            return h
        return norm(h + f(h))

    a, b = x, x + nudge
    for f in layers:
        a, b = step(a, f), step(b, f)
    return np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(nudge ** 2))
''', expect=["changed its argument `x`", "caller", "new array"], kind="inplace"),
    ],
    alternatives=[
        Variant({2: "np.linalg.norm(a - b) / np.linalg.norm(nudge)"}),
        Variant({0: "f(norm(h)) + h", 2: "np.sqrt(((a - b) ** 2).mean() / (nudge ** 2).mean())"}),
        Variant(source='''def nudge_growth(x, nudge, layers, norm, placement):
    def rms(v):
        return np.sqrt(np.mean(v ** 2))
    a, b = x, x + nudge
    for f in layers:
        if placement == "pre":
            a, b = a + f(norm(a)), b + f(norm(b))
        else:
            a, b = norm(a + f(a)), norm(b + f(b))
    return rms(a - b) / rms(nudge)
'''),
    ],
    rtol=1e-6,
    atol=1e-9,
    skills="wrap a layer pre-norm or post-norm and measure how far a small change travels",
)


# ---------------------------------------------------------------- questions

PREDICT_STACK = Question(
    id="norms-predict-stack",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A vector goes through 30 layers. Each layer multiplies it by a random matrix that "
           "halves its length (a gain of 0.5). No residual add, no normalisation. After 30 "
           "layers its numbers are...",
    choices=["about the same size as at the start", "almost exactly zero", "huge",
             "somewhere in between: about half their starting size"],
    answer=1,
    explanation="Each layer halves the length, and 30 halvings multiply it by 0.5^30, about one "
                "in a billion. Nothing holds the size in place, so it vanishes; a gain above 1 "
                "makes it explode the same way. The lab below shows both, and what stops them.",
    reveals=[
        r"\bvanish(es|ed|ing)?\b",
        r"0\.5\s*\^\s*30\b",
        r"\bone in a billion\b",
    ],
)

NUMBER_FIVE = Question(
    id="norms-number-five",
    notebook=NOTEBOOK,
    kind="number",
    prompt="LayerNorm the token [1, 1, 5, 5] (gamma 1, beta 0, ignore eps). Its mean is 3 and its "
           "standard deviation is 2. What does each 5 become?",
    answer=1.0,
    tol=0.01,
    explanation="(5 - 3) / 2 = 1, and each 1 becomes (1 - 3) / 2 = -1: the token becomes "
                "[-1, -1, 1, 1], with mean 0 and standard deviation 1.",
    reveals=[
        r"\(\s*5\s*[−-]\s*3\s*\)\s*/\s*2\b",
        r"\[\s*-1,\s*-1,\s*1,\s*1\s*\]",
        r"-1\.0+ -1\.0+ \+1\.0+ \+1\.0+",
    ],
)

NUMBER_MEANS = Question(
    id="norms-number-means",
    notebook=NOTEBOOK,
    kind="number",
    prompt="A batch has shape (2, 5, 8): 2 sentences of 5 tokens, 8 numbers per token. How many "
           "separate means does LayerNorm compute?",
    answer=10,
    tol=0.0,
    explanation="One per token: LayerNorm averages the last axis only, so it computes 2 x 5 = 10 "
                "means (and 10 standard deviations), each over 8 numbers.",
    reveals=[
        r"\b2\s*[x×]\s*5\s*=\s*10\b",
        r"\b10 (separate )?means\b",
        r"\bone (mean )?per token\b",
    ],
)

NUMBER_LENGTH = Question(
    id="norms-number-length",
    notebook=NOTEBOOK,
    kind="number",
    prompt="After LayerNorm (gamma 1, beta 0), a token of 8 numbers has mean 0 and standard "
           "deviation 1. What is its length, the square root of the sum of its squares? "
           "Two decimals are enough.",
    answer=float(np.sqrt(8.0)),
    tol=0.01,
    explanation="Standard deviation 1 with mean 0 means the average square is 1, so the 8 squares "
                "add up to 8 and the length is the square root of 8, about 2.83. That is the "
                "line every post-norm run of the stack lab sits on.",
    reveals=[
        r"(√\s*|\bsqrt\s*\(\s*|\bsquare root of )8\b",
        r"\bsquares add up to 8\b",
    ],
)

PREDICT_ZERO_F = Question(
    id="norms-predict-zero-f",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A pre-norm line reads `x = x + f(layer_norm(x))`. For one token x = [3, 1], and f "
           "returns [0, 0] whatever it reads. What is x after the line?",
    choices=["[3, 1]: unchanged", "[1, -1]: the normalised copy", "[0, 0]",
             "[4, 2]: one is added to each number"],
    answer=0,
    explanation="The norm only rescales the copy that f reads; the stream itself is the plain x, "
                "and adding zeros leaves it as it was. A part that returns nothing lets the "
                "stream pass through untouched, so a pre-norm block whose parts start out "
                "returning very little starts close to doing nothing (notebook 04 shows when "
                "that is the case).",
    reveals=[
        r"\bstream itself is (the plain x|never normali[sz]ed)\b",
        r"\badding zeros leaves\b",
        r"\breturns (nothing|zeros?)\b[^.]{0,40}\b(untouched|unchanged|as it was)\b",
    ],
)

PREDICT_PLACEMENT = Question(
    id="norms-predict-placement",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="Two stacks of 48 random blocks differ only in where the norm sits. A tiny change is "
           "made to the input at the bottom. How large is the difference at the top?",
    choices=["about as large as at the start, in both stacks",
             "larger with pre-norm, smaller with post-norm",
             "smaller with pre-norm, larger with post-norm",
             "zero in both: the norms remove it"],
    answer=1,
    explanation="With pre-norm, an untouched path of additions runs from the bottom to the top, "
                "so the change survives and grows with the stream. With post-norm the stream "
                f"itself is rescaled twice per block, {2 * 48} times in all, and each rescaling "
                "can squeeze the change: in most random stacks it arrives smaller than it left, and "
                "in almost every one smaller than with pre-norm (the cell after the lab counts "
                "how often). A gradient travels the same path backwards, which is why deep "
                "post-norm stacks are hard to train.",
    reveals=[
        r"\b(larger|amplified|grows?)\b[^.]{0,20}\bwith pre-norm\b",
        r"\b(smaller|shrunk|squeezed?)\b[^.]{0,20}\bwith post-norm\b",
        r"\buntouched path of additions\b",
        r"\brescaling can squeeze\b",
    ],
)

# No longer asked in the notebook (the labs before it show the stream growing like the square
# root of the depth, which answers it); kept for saved notebooks.
PREDICT_STREAM = Question(
    id="norms-predict-stream",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A stream of size 0.9 passes 12 pre-norm blocks; each adds a vector of size 1.0 to it. "
           "About how large is the stream at the top?",
    choices=["about 12.9", "about 3 or 4", "about 1", "about 0.9: the norms keep it there"],
    answer=1,
    explanation="The additions point in unrelated directions, so they partly cancel: sizes add "
                "like the sides of a right-angled triangle, not like numbers on a line. The lab "
                "below measures it.",
    reveals=[
        r"\bright[- ]angled triangle\b",
        r"\b(unrelated|independent) directions\b",
        r"\bpartly cancel\b",
    ],
)

PREDICT_STREAM_WHY = Question(
    id="norms-predict-stream-why",
    notebook=NOTEBOOK,
    kind="predict",
    prompt="A stream of size 0.9 passes 12 pre-norm blocks, and each block adds a vector of size "
           "1.0 to it. The stream ends far smaller than 0.9 + 12 \u00d7 1.0. Why?",
    choices=["Each block's norm shrinks what the block adds",
             "The additions point in unrelated directions, so their squares add up, not their sizes",
             "Later blocks add less and less",
             "The additions cancel each other almost completely"],
    answer=1,
    explanation="Each block reads the stream through a random matrix, so its addition points in a "
                "direction that has little to do with the stream's. Sizes of vectors at right "
                "angles add like the sides of a right-angled triangle: the squares add up. Each "
                "addition here has size 1.0, so nothing shrinks them, and they do not cancel out: "
                "after 12 blocks the stream is several times larger than it started. The lab "
                "below lets you make the additions agree.",
    reveals=[
        r"\bsquares add up\b(?! to\b)",
        r"\bpoints? in (unrelated|independent|random) directions\b",
        r"\bright[- ]angled triangle\b",
        r"\b(like|as) the square root of the (depth|number of)\b",
        r"√\s*depth\b",
    ],
)

DEFINITIONS = [LAYER_NORM, RMS_NORM, PRE_NORM, NUDGE_GROWTH, PREDICT_STACK, NUMBER_FIVE, NUMBER_MEANS, NUMBER_LENGTH,
               PREDICT_ZERO_F, PREDICT_PLACEMENT, PREDICT_STREAM, PREDICT_STREAM_WHY]


# ---------------------------------------------------------------- skip-ahead set (exercises/ui/skip_ahead.py)

SKIP_AHEAD = [
    Question("norms-out-layer-norm", NOTEBOOK, "number",
             "LayerNorm (eps = 1e-5, no gain or shift) of the token [1, 3]: what is its first "
             "number? Two decimals are enough.",
             answer=float(_layer_norm(np.array([1.0, 3.0]))[0]), tol=0.005,
             explanation="Mean 2, standard deviation 1: (1 \u2212 2) / 1."),
    Question("norms-out-rms-norm", NOTEBOOK, "number",
             "RMSNorm (eps = 1e-5, gain 1) of the token [3, 4]: what is its first number? Two "
             "decimals are enough.",
             answer=float(_rms_norm(np.array([3.0, 4.0]))[0]), tol=0.005,
             explanation="The root mean square of 3 and 4 is \u221a12.5; RMSNorm divides by it and "
                         "subtracts nothing."),
    Question("norms-out-pre-norm", NOTEBOOK, "predict",
             "Which line is a pre-norm layer, as in most recent models?",
             choices=["x \u2190 x + f(norm(x))", "x \u2190 norm(x + f(x))", "x \u2190 f(norm(x))",
                      "x \u2190 norm(f(x))"],
             answer=0,
             explanation="Pre-norm normalises only the copy the layer reads; the stream is kept.",
             reveals=[r"x\s*(←|=)\s*x\s*\+\s*f\(\s*(layer_?)?norm\(\s*x\s*\)\s*\)"]),
    Question("norms-out-axis", NOTEBOOK, "predict",
             "LayerNorm in a transformer computes its mean and variance over\u2026",
             choices=["each token's own numbers (the last axis)",
                      "each column, across the tokens of the batch",
                      "the whole batch at once",
                      "the positions of one sentence"],
             answer=0,
             explanation="Each token is normalised by itself, so the batch never matters.",
             reveals=[r"\blast axis\b",
                      r"\beach token's own numbers\b",
                      r"\baxis\s*=?\s*-1\b"]),
]
