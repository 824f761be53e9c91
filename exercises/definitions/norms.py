"""Exercises of notebook 03, "Normalisation and residual connections".

Its questions are in :mod:`exercises.definitions.questions.norms`."""

from __future__ import annotations

import numpy as np

from lib.norm import layer_norm as _layer_norm, rms_norm as _rms_norm

from engine.core.definition import Case, Contract, Exercise, Mistake, in_float32, three_of
from exercises.definitions.questions import norms as questions

NOTEBOOK = "03_norms_and_residuals"


def _random_shape(rng, min_last: int = 2, one_token: bool = False) -> tuple[int, ...]:
    """A random shape (..., d) with one or two leading axes (none at all, now and then, when
    ``one_token``: a single token of shape (d,))."""
    lead = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(0 if one_token else 1, 3))))
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


# The earlier exercise: the blank was the denominator.


# ---------------------------------------------------------------- layer_norm: fix a draft that is right for one token only

LAYER_NORM_FIX_CONTRACT = Contract(
    args={"x": "one token (d,), a text (tokens, d) or a batch of texts (texts, tokens, d); "
               "d >= 1 numbers per token",
          "eps": "a number >= 0 added to the variance, 1e-5 unless given"},
    returns="the normalised tokens, x's shape",
    ndims=(1, 2, 3), dtypes=("float64", "float32"),
    defaults={"eps": 1e-5},
    edges={"one token": "a single token, shape (d,), on which the draft is right",
           "square": "as many tokens as numbers per token (statistics that lost their axis still "
                     "line up, wrongly)",
           "batch": "a batch of texts, three axes",
           "variance 0": "tokens whose numbers are all equal",
           "variance near eps": "a token whose variance is about eps (and one ten times larger)",
           "variance below eps": "a token whose variance is far below eps",
           "one number": "tokens of a single number",
           "offset": "a token far from 0 (mean 1000)",
           "float32 offset": "float32 tokens far from 0 (mean 1000), whose spread float32 keeps to "
                             "about 3 digits: compared to 1 part in 1000"},
)


def _layer_norm_fix_fixed() -> list[Case]:
    return [
        Case((np.array([[1.0, 1.0, 5.0, 5.0], [2.0, 4.0, 6.0, 8.0]]),), "the example", visible=True),
        Case((np.array([2.5, -1.0, 0.5, 7.0, 3.0]),), "one token of 5 numbers, shape (5,)",
             covers=("one token",)),
        Case((np.sin(np.arange(80.0)).reshape(2, 5, 8) * 3.0 + 1.0,), "a batch of 2 texts of 5 tokens",
             covers=("batch",)),
        Case((np.sin(np.arange(16.0)).reshape(4, 4) * 2.0 + np.arange(4.0)[:, None],),
             "4 tokens of 4 numbers", covers=("square",)),
        Case((np.full((2, 4), 3.0),), "constant rows (their variance is 0)", covers=("variance 0",)),
        Case((np.array([[1.0, 1.001, 0.999, 1.0005, 0.9995]]),),
             "a token whose numbers are nearly equal (variance far below eps)",
             covers=("variance below eps",)),
        Case((np.concatenate([_around(0.5, np.sqrt(1e-5), 6), _around(-0.25, np.sqrt(1e-4), 6)]),),
             "tokens whose variance is eps, and ten times eps", covers=("variance near eps",)),
        Case((np.array([[4.0], [-2.5], [0.5]]),), "tokens of a single number", covers=("one number",)),
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


def _layer_norm_fix_case(rng) -> Case:
    shape = _random_shape(rng, one_token=True)
    return Case((rng.normal(rng.uniform(-3, 3), rng.uniform(0.5, 4), shape),),
                f"random numbers, shape {shape}")


_LOST_AXIS = ("keep the averaged axis, with length 1 (`keepdims=True`), so that the statistics line "
              "up with the tokens' rows")

LAYER_NORM_FIX = Exercise(
    id="layer-norm-fix", notebook=NOTEBOOK, title="Fix a LayerNorm that is right for one token only", name="layer_norm",
    template='''def layer_norm(x, eps=1e-5):
    """Each token rescaled to mean 0 and standard deviation 1, using its own numbers only. x is
    one token (d,), a text (tokens, d) or a batch of texts (texts, tokens, d)."""
    mean = ____
    var = ____
    return (x - mean) / np.sqrt(var + eps)
''',
    solution=["x.mean(axis=-1, keepdims=True)", "x.var(axis=-1, keepdims=True)"],
    reference=_layer_norm_reference,
    contract=LAYER_NORM_FIX_CONTRACT,
    fixed=_layer_norm_fix_fixed,
    draw=three_of(_layer_norm_fix_case),
    hints=[
        "On the example's two tokens the draft gives each token four equal numbers. Ask which numbers "
        "`x.mean(axis=0)` averaged there: one token's own numbers, or one column across the tokens?",
        "A token's numbers are always the last axis of x, whatever comes before it: axis 0 for "
        "one token, axis 1 for a text, axis 2 for a batch. NumPy counts axes from the end too.",
        "The mean has one number per token. For `x - mean` to subtract each token's own mean from "
        "that token's row, " + _LOST_AXIS + ".",
    ],
    mistakes=[
        Mistake("the draft", {0: "x.mean(axis=0)", 1: "x.var(axis=0)"},
                "These are the draft's statistics: axis 0 holds a token's own numbers only when x is "
                "a single token. In a text it runs down the tokens, so each column was normalised "
                "across the tokens instead of each token by its own numbers."),
        Mistake("axis 1", {0: "x.mean(axis=1, keepdims=True)", 1: "x.var(axis=1, keepdims=True)"},
                "Axis 1 holds a token's numbers only in a text (tokens, d): in a batch (texts, tokens, "
                "d) it runs across the tokens, and a single token has no axis 1. Count from the end: "
                "the last axis is the token's numbers whatever comes before it."),
        Mistake("axis 2", {0: "x.mean(axis=2, keepdims=True)", 1: "x.var(axis=2, keepdims=True)"},
                "Axis 2 is the last axis only in a batch of three axes: a text (tokens, d) or a "
                "single token has no axis 2. Count from the end: the last axis is the token's "
                "numbers whatever comes before it."),
        Mistake("axis -2", {0: "x.mean(axis=-2, keepdims=True)", 1: "x.var(axis=-2, keepdims=True)"},
                "Axis -2 is the one before the last: in a text it runs down the tokens, so each column "
                "was normalised across the tokens (the draft's mistake again), and a single token has "
                "no axis -2. The token's numbers are the last axis."),
        Mistake("whole array", {0: "x.mean()", 1: "x.var()"},
                "You took the mean and variance of the whole array: right for a single token, but in "
                "a text every token must be rescaled by its own numbers, over the last axis."),
        Mistake("lost axis", {0: "x.mean(axis=-1)", 1: "x.var(axis=-1)"},
                "Your statistics have one number per token but lost the averaged axis, so `x - mean` "
                "lines them up with the columns instead of the rows: an error, or wrong numbers when "
                "there are as many tokens as numbers per token. " + _LOST_AXIS[0].upper()
                + _LOST_AXIS[1:] + "."),
        Mistake("variance lost its axis", {1: "x.var(axis=-1)"},
                "Your mean keeps its axis but your variance lost it, so the division lines the "
                "variances up with the columns: an error, or wrong numbers when there are as many "
                "tokens as numbers per token. Keep the axis for the variance too (`keepdims=True`)."),
        Mistake("sample variance", {1: "x.var(axis=-1, keepdims=True, ddof=1)"},
                "You used the sample variance (divided by d \u2212 1). LayerNorm divides the squared "
                "distances by d, as `x.var()` does by default."),
        Mistake("standard deviation", {1: "x.std(axis=-1, keepdims=True)"},
                "`var` should be the variance: the last line adds eps to it and takes the square "
                "root itself. You gave it the standard deviation, so it took a second root."),
    ],
    rtol=1e-4, atol=1e-6,
)


# ---------------------------------------------------------------- rms_norm for a stream stored in 16 bits

FLOAT16_RTOL = FLOAT16_ATOL = 1e-3      # float16 keeps about 3 decimal digits: a result handed back in
                                        # float16 is right to 1 part in 2,048, compared to 1 in 1,000


def _in_float16(case: Case, label: str, covers=()) -> Case:
    """The case with its arrays in float16, compared to float16's precision."""
    args = tuple(a.astype(np.float16) if isinstance(a, np.ndarray) else a for a in case.args)
    return Case(args, label, case.visible, dict(case.kwargs), tuple(covers), FLOAT16_RTOL, FLOAT16_ATOL)


def _rms_16_reference(x, gain, eps=1e-5):
    """RMSNorm computed in float64 and, for float16 tokens, handed back in float16 (as a model that
    stores its stream in 16 bits keeps it); float32 and float64 tokens as lib's RMSNorm gives them."""
    if np.asarray(x).dtype == np.float16:
        return _rms_norm(np.asarray(x, dtype=np.float64), np.asarray(gain, dtype=np.float64), eps=eps).astype(np.float16)
    return _rms_norm(x, gain, eps=eps)


EXAMPLE_16 = np.array([[300.0, -200.0, 100.0, 50.0], [-1.1, 0.1, -0.2, -0.5]])
EXAMPLE_16_GAIN = np.array([1.0, 1.0, 2.0, 0.5])

RMS_16_CONTRACT = Contract(
    args={"x": "tokens, shape (..., d), d >= 1 numbers per token, of any size a float16 holds "
               "(up to 65,504), stored in float64, float32 or float16",
          "gain": "the learned gain, shape (d,), any numbers (negative ones too)",
          "eps": "a number >= 0 added to the mean square, 1e-5 unless given"},
    returns="the normalised tokens times the gain, shape (..., d); from float16 tokens, right to "
            "float16's precision (1 part in 1,000)",
    ndims=(2, 3), dtypes=("float64", "float32", "float16"),
    defaults={"eps": 1e-5},
    edges={"large squares": "float16 numbers whose squares pass 65,504, float16's largest number",
           "small squares": "small float16 numbers whose squares fall below float16's smallest "
                            "ordinary number (6.1e-5), with eps = 1e-6",
           "largest": "float16 numbers near 65,504",
           "zeros": "a token of zeros",
           "mean square near eps": "a token whose mean square is about eps (and one ten times larger)",
           "offset": "a token far from 0 (RMSNorm keeps its offset)",
           "square": "as many tokens as numbers per token",
           "batch": "a batch of texts"},
)


def _rms_cases(texts: str) -> list[Case]:
    """The RMSNorm cases after the example, shared by both RMSNorm checks; ``texts`` is the word
    the batch case's label uses."""
    return [
        Case((np.full((2, 3), -2.0), np.array([0.5, 1.0, 3.0])), "constant rows"),
        Case((np.zeros((1, 4)), np.ones(4)), "a token of zeros (eps keeps it finite)", covers=("zeros",)),
        Case((np.array([[4.0, 5.0, 6.0, 5.0]]), np.array([1.5, -1.0, 0.2, 2.0])),
             "a token far from 0 (RMSNorm does not subtract the mean)", covers=("offset",)),
        Case((np.concatenate([_around(0.0, np.sqrt(1e-5), 4), _around(0.0, np.sqrt(1e-4), 4),
                              np.array([[1e-3, 3e-3, -2e-3, 4e-3]])]), np.array([1.0, -0.5, 2.0, 1.5])),
             "tokens whose mean square is eps, ten times eps and a little above",
             covers=("mean square near eps",)),
        Case((np.cos(np.arange(60.0)).reshape(2, 5, 6) * 2.0, np.linspace(0.5, 2.0, 6)),
             f"a batch of 2 {texts} of 5 tokens", covers=("batch",)),
        Case((np.sin(np.arange(16.0)).reshape(4, 4) + 0.5, np.array([0.5, 1.5, -1.0, 2.0])),
             "4 tokens of 4 numbers", covers=("square",)),
        Case((np.array([[1e-3, -2e-3, 5e-4]]), np.array([1.0, 2.0, 1.0])), "a larger eps",
             kwargs={"eps": 1e-2}),
        in_float32(Case((np.sin(np.arange(15.0)).reshape(3, 5) * 3.0, np.linspace(-1.0, 2.0, 5)),
                        "float32 tokens and gain")),
    ]


_RMS_KEEPDIMS = ("Your code works only when there are as many tokens as numbers per token: the "
                 "mean of the squares has one number per token, and without `keepdims=True` it "
                 "loses its axis and no longer lines up with the tokens' rows.")

def _rms_16_fixed() -> list[Case]:
    return [
        _in_float16(Case((EXAMPLE_16.copy(), EXAMPLE_16_GAIN.copy()), visible=True), "the example",
                    covers=("large squares",)),
    ] + _rms_cases("texts") + [
        _in_float16(Case((np.sin(np.arange(30.0)).reshape(2, 3, 5) * 900.0, np.linspace(2.0, -1.0, 5))),
                    "a batch of float16 tokens whose numbers reach 900", covers=("large squares", "batch")),
        _in_float16(Case((np.array([[2e-3, -1e-3, 3e-3, 5e-4], [1e-2, -4e-3, 6e-3, -8e-3]]), np.ones(4)),
                         kwargs={"eps": 1e-6}),
                    "small float16 numbers, eps = 1e-6", covers=("small squares",)),
        _in_float16(Case((np.array([[6.0e4, -3.2e4, 1.5e4, -5.0e4]]), np.array([1.0, 0.5, 2.0, 1.0]))),
                    "float16 numbers near 65,504", covers=("largest",)),
    ]


def _rms_16_draw(rng) -> list[Case]:
    """A random float64 case, then two in float16 whose numbers reach the hundreds and the thousands."""
    cases = []
    for size in (1, 400, 3000):
        shape = _random_shape(rng)
        x = np.clip(rng.normal(0.0, size * rng.uniform(0.5, 1.5), shape), -6e4, 6e4)
        case = Case((x, rng.normal(1.0, 0.5, shape[-1])), f"random numbers, shape {shape}")
        cases.append(case if size == 1 else _in_float16(
            case, f"random float16 numbers of size about {size}, shape {shape}"))
    return cases


RMS_NORM_16 = Exercise(
    id="rms-norm-16bit", notebook=NOTEBOOK, title="RMSNorm for tokens stored in 16 bits", name="rms_norm",
    template='''def rms_norm(x, gain, eps=1e-5):
    """Each token (the last axis) divided by its root mean square, then times the gain:
    x / sqrt(mean(x²) + eps) · gain. x may be stored in 16 bits (float16, whose largest number
    is 65,504): no step may overflow or round the small numbers away, whatever x's number type."""
    ms = ____       # the mean of the squares: one number per token, kept as a column
    return ____     # rescale each token, then apply the learned gain (one number per column)
''',
    solution=["(x.astype(np.float64) ** 2).mean(axis=-1, keepdims=True)", "x / np.sqrt(ms + eps) * gain"],
    reference=_rms_16_reference,
    contract=RMS_16_CONTRACT,
    fixed=_rms_16_fixed,
    draw=_rms_16_draw,
    hints=[
        "Run the formula as it stands on the example's first token: 300 squared is 90,000, past "
        "float16's largest number, so the square becomes infinity and every number of the token is "
        "then divided by infinity. The numbers themselves fit in float16; only their squares do not.",
        "Square a copy of x held in a wider number type: `astype` makes one. float32 already holds numbers up "
        "to about 3.4e38 and keeps small squares to 7 digits; float64 keeps every digit the course's own "
        "functions keep. Converting the squares afterwards is too late: they are already infinite.",
        "The mean of the squares then comes out in the wider type too, and so does x divided by its "
        "root: the gain multiplies that, one number per column, as before.",
    ],
    mistakes=[
        Mistake("squares in 16 bits", {0: "(x ** 2).mean(axis=-1, keepdims=True)"},
                "Your squares were computed in x's own number type. For float16 tokens a number "
                "above 255.9 has a square past 65,504, float16's largest number: it becomes infinity "
                "and the token comes out as zeros; and small numbers' squares lose their digits. "
                "Square a copy of x in a wider type (float32 or float64)."),
        Mistake("widened too late", {0: "(x ** 2).astype(np.float32).mean(axis=-1, keepdims=True)"},
                "You widened the squares, but only after squaring: a float16 number above 255.9 has "
                "already become infinity by then, and the token comes out as zeros. Widen x itself, "
                "then square the copy."),
        Mistake("no gain", {1: "x / np.sqrt(ms + eps)"},
                "The rescaling is right but the gain is missing: multiply the result by `gain`."),
        Mistake("variance", {0: "x.astype(np.float32).var(axis=-1, keepdims=True)"},
                "You used the variance, which subtracts the mean before squaring. RMSNorm "
                "averages the squares of the numbers themselves."),
        Mistake("no sqrt", {1: "x / (ms + eps) * gain"},
                "You divided by the mean of the squares itself; its square root is the typical "
                "size of a number."),
        Mistake("sum of squares", {0: "(x.astype(np.float32) ** 2).sum(axis=-1, keepdims=True)"},
                "You added up the squares; RMSNorm averages them (their sum divided by d)."),
        Mistake("eps outside the root", {1: "x / (np.sqrt(ms) + eps) * gain"},
                "You added `eps` after the square root. It belongs inside, added to the mean of "
                "the squares; the two differ for a token whose mean square is near eps."),
        Mistake("fixed eps", {1: "x / np.sqrt(ms + 1e-5) * gain"},
                "You wrote the number 1e-5 instead of using the argument `eps`, so a caller who "
                "asks for another eps does not get it."),
        Mistake("missing keepdims", {0: "(x.astype(np.float32) ** 2).mean(axis=-1)"}, _RMS_KEEPDIMS),
    ],
    rtol=1e-4, atol=1e-6,
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


def _zeros_f(h):
    return np.zeros_like(h)


def _rms(x):
    return _rms_norm(x)


def _ln(x):
    return _layer_norm(x)


def _random_tanh_layers(rng, d, n, gain):
    return [_tanh_layer(rng.normal(0.0, gain / np.sqrt(d), (d, d))) for _ in range(n)]


NUDGE_CONTRACT = Contract(
    args={"x": "the stream, shape (..., d): tokens of d >= 2 numbers",
          "nudge": "a small change of the stream (numbers of 0.01 or less), the same shape as x",
          "layers": "a list of layers, each a function f(h) of an array like x (the list may be empty)",
          "norm": "a norm: norm(h) normalises each token of h",
          "placement": "\"pre\" or \"post\""},
    returns="the growth: the root mean square of the gap at the top over that of the nudge, one number > 0",
    ndims=(2, 3), dtypes=("float64",),
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


def _nudge_case(rng) -> Case:
    d, tokens, n = int(rng.integers(3, 9)), int(rng.integers(1, 6)), int(rng.integers(1, 9))
    placement = "pre" if rng.random() < 0.5 else "post"
    norm = _rms if rng.random() < 0.5 else _ln
    return Case((rng.normal(0.0, rng.uniform(0.5, 3.0), (tokens, d)),
                 1e-3 * rng.normal(size=(tokens, d)),
                 _random_tanh_layers(rng, d, n, rng.uniform(0.5, 3.0)), norm, placement),
                f"random: {n} layers on {tokens} tokens of {d} numbers, {placement}-norm")


# ---------------------------------------------------------------- the same change, measured against the stream

def _relative_reference(x, nudge, layers, norm, placement):
    a, b = _run_both(x, nudge, layers, _placed(norm, placement))
    return (_rms_of(a - b) / _rms_of(a)) / (_rms_of(nudge) / _rms_of(x))


RELATIVE_CONTRACT = Contract(
    args={**NUDGE_CONTRACT.args, "x": "the stream, shape (..., d): tokens of d >= 2 numbers, not all zero"},
    returns="the change's share of the stream at the top over its share at the bottom (each share the root "
            "mean square of the change over that of the stream), one number > 0",
    ndims=(2, 3), dtypes=("float64",),
    edges={**NUDGE_CONTRACT.edges,
           "growing stream": "pre-norm layers under which the stream grows several times over",
           "stream not of size 1": "a stream whose root mean square is far from 1, post-norm"},
)


def _relative_fixed() -> list[Case]:
    fixed = np.random.default_rng(37)
    x = np.cos(np.arange(24.0)).reshape(4, 6) * 0.5
    return _nudge_fixed() + [
        Case((x, 1e-4 * np.sin(np.arange(24.0)).reshape(4, 6), _random_tanh_layers(fixed, 6, 12, 3.0), _rms, "pre"),
             "12 pre-norm layers under which the stream grows several times over", covers=("growing stream",)),
        Case((x * 40.0, 1e-3 * np.cos(np.arange(24.0) * 0.7).reshape(4, 6), _random_tanh_layers(fixed, 6, 3, 1.0),
              _ln, "post"), "a stream of size 20, three post-norm layers", covers=("stream not of size 1", "post")),
    ]


RELATIVE_GROWTH = Exercise(
    id="relative-growth", notebook=NOTEBOOK, name="relative_growth",
    title="A small change, measured against the stream it rides on",
    template='''def relative_growth(x, nudge, layers, norm, placement):
    """How much a small change of the input grows on its way to the top, leaving out the growth
    of the stream itself: 1 when the change keeps its share of the stream, above 1 when it grows
    faster than the stream, below 1 when it is squeezed.

    x is the stream, x + nudge the same stream nudged; both go through the layers (functions
    f(h)), each wrapped as the step below says; norm(h) normalises each token."""
    def step(h, f):
        return h + f(norm(h)) if placement == "pre" else norm(h + f(h))

    def rms(v):
        return np.sqrt(np.mean(v ** 2))

    a, b = x, x + nudge                  # the stream, and the stream nudged
    for f in layers:
        a, b = step(a, f), step(b, f)
    at_start = ____                      # the change at the bottom, measured as you chose
    at_top = ____                        # the same measure at the top
    return at_top / at_start
''',
    solution=["rms(nudge) / rms(x)", "rms(a - b) / rms(a)"],
    reference=_relative_reference,
    contract=RELATIVE_CONTRACT,
    fixed=_relative_fixed,
    draw=three_of(_nudge_case),
    hints=[
        "A change that only keeps its share of a growing stream grows with it. To leave that growth "
        "out, measure the change as a share of the stream it belongs to, at the bottom and again at "
        "the top.",
        "At the bottom the stream is x and the change is the nudge. At the top the stream is the run "
        "of x, `a`, and the change is what separates the two runs there.",
        "Each share is one root mean square over another, the change's over the stream's; `rms` is "
        "defined above the loop.",
    ],
    mistakes=[
        Mistake("raw growth", {0: "rms(nudge)", 1: "rms(a - b)"},
                "You measured the change by its own size, so its growth includes the stream's: a "
                "change that only keeps its share of a stream that grew ten times comes out ten "
                "times larger. Divide each change by the size of the stream it belongs to."),
        Mistake("stream at the top only", {0: "rms(nudge)"},
                "You measured the change at the top against the stream, but the nudge at the bottom "
                "by its own size, so the two shares are not the same measure. Divide the nudge by "
                "the size of x too."),
        Mistake("stream at the bottom only", {1: "rms(a - b)"},
                "You measured the nudge against the stream at the bottom, but the change at the top "
                "by its own size, so the stream's growth is counted after all. Divide the gap at the "
                "top by the size of the stream there, `a`."),
        Mistake("nudged runs", {0: "rms(nudge) / rms(x + nudge)", 1: "rms(a - b) / rms(b)"},
                "You measured against the nudged run. The stream is the run of x (`x` at the "
                "bottom, `a` at the top); the nudged run differs from it by the very change you "
                "measure."),
        Mistake("nudged run at the top", {1: "rms(a - b) / rms(b)"},
                "At the top you measured against the nudged run, at the bottom against x. The "
                "stream is the run of x (`x` at the bottom, `a` at the top); the nudged run differs "
                "from it by the very change you measure."),
        Mistake("nudged run at the bottom", {0: "rms(nudge) / rms(x + nudge)"},
                "At the bottom you measured the nudge against the nudged input, at the top against "
                "`a`. The stream is the run of x (`x` at the bottom, `a` at the top); the nudged run "
                "differs from it by the very change you measure."),
        Mistake("what the layers added", {1: "rms(a - b) / rms(a - x)"},
                "At the top you divided by what the layers added to the stream, `a - x`, not by the "
                "stream itself: the stream there is the whole run of x, `a`, x included."),
        Mistake("plain means", {0: "np.mean(nudge) / np.mean(x)", 1: "np.mean(a - b) / np.mean(a)"},
                "You compared plain means, in which positive and negative numbers cancel: a stream "
                "whose numbers average 0 has no size by that measure, and a share can even come out "
                "negative. Compare root mean squares, as `rms` computes them."),
        Mistake("standard deviations", {0: "np.std(nudge) / np.std(x)", 1: "np.std(a - b) / np.std(a)"},
                "You compared standard deviations, which subtract each array's mean first: a nudge of "
                "equal numbers, like the example's, has a standard deviation of 0, and the stream's "
                "offset is dropped. Compare root mean squares, as `rms` computes them."),
        Mistake("number by number", {0: "rms(nudge / x)", 1: "rms((a - b) / a)"},
                "You divided the change by the stream number by number, so a number of the stream "
                "close to 0 makes its share huge (or infinite). Take the size of the change and the "
                "size of the stream first, then divide one by the other."),
        Mistake("largest numbers", {0: "np.abs(nudge).max() / np.abs(x).max()",
                                    1: "np.abs(a - b).max() / np.abs(a).max()"},
                "You compared the largest numbers, which say how big one number is, not the whole "
                "change or stream. Compare root mean squares, as `rms` computes them."),
        Mistake("the stream's growth", {0: "rms(x)", 1: "rms(a)"},
                "Your answer is how much the stream grew, whatever the nudge did. Measure the "
                "change: the nudge at the bottom, the gap between the two runs at the top."),
        Mistake("sizes compared", {1: "abs(rms(a) - rms(b)) / rms(a)"},
                "At the top you compared the sizes of the two runs, not the runs themselves: two "
                "grids of the same size can still differ everywhere. Take the root mean square of "
                "their difference."),
        Mistake("mean size", {0: "np.mean(np.abs(nudge)) / np.mean(np.abs(x))",
                              1: "np.mean(np.abs(a - b)) / np.mean(np.abs(a))"},
                "You compared average sizes |v|. The shares compare root mean squares, as `rms` "
                "computes them: square every number, average, then take the square root."),
    ],
    rtol=1e-6, atol=1e-9,
)


DEFINITIONS = [LAYER_NORM_FIX, RMS_NORM_16, RELATIVE_GROWTH, *questions.QUESTIONS]
SKIP_AHEAD = questions.SKIP_AHEAD
