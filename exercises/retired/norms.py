"""Retired exercises of notebook 03, "Normalisation and residual connections": layer-norm (replaced by
layer-norm-fix), rms-norm (by rms-norm-16bit), pre-norm-update (by nudge-growth) and nudge-growth (by
relative-growth). Kept so that
notebooks saved from earlier releases still check them (see :mod:`exercises.retired`); what they
share with the live exercises is imported from :mod:`exercises.definitions.norms`."""

from __future__ import annotations

import numpy as np

from engine.core.definition import Case, Exercise, Hint, Mistake, in_float32, three_of
from exercises.definitions.norms import (NOTEBOOK, NUDGE_W, _RMS_KEEPDIMS, _layer_norm_fix_case,
                                         _layer_norm_fix_fixed, _layer_norm_reference, _ln, _nudge_case,
                                         _nudge_fixed, _nudge_reference, _random_shape, _rms,
                                         _rms_16_reference, _rms_cases, _tanh_layer, _zeros_f)


LAYER_NORM = Exercise(
    id="layer-norm", notebook=NOTEBOOK, title="LayerNorm over the last axis", name="layer_norm",
    template='''def layer_norm(x, eps=1e-5):
    """Each token (the last axis of x) rescaled to mean 0 and standard deviation 1."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / ____
''',
    solution=["np.sqrt(var + eps)"],
    reference=_layer_norm_reference,
    fixed=_layer_norm_fix_fixed,
    draw=three_of(_layer_norm_fix_case),
    hints=[
        "After subtracting the mean, divide by the spread of each token's numbers: the "
        "standard deviation, which is the square root of the variance.",
        "A token whose numbers are all equal has variance 0, and 0 / 0 is NaN. The small "
        "number `eps` is there to keep the division safe; it belongs inside the square root.",
        Hint("`var` already has one number per token, kept as a column, so it lines up with "
             "`x - mean` without any reshaping.", about="shape"),
    ],
    mistakes=[
        Mistake("eps outside the root", {0: "(np.sqrt(var) + eps)"},
                "You added `eps` after the square root. The convention (PyTorch's too) adds it "
                "to the variance, inside the root; the two differ when the variance is tiny."),
        Mistake("eps added after the division", {0: "np.sqrt(var) + eps"},
                "`/` is worked out before `+`: your line divides by the square root of the variance and then "
                "adds eps to every result, so a token whose numbers are all equal still gives 0 / 0 = NaN. Put "
                "brackets around the whole divisor, with eps added to the variance inside the root."),
        Mistake("no square root", {0: "(var + eps)"},
                "You divided by the variance itself. Its square root, the standard deviation, "
                "is what brings the numbers to a spread of 1."),
        Mistake("eps as a floor", {0: "np.sqrt(np.maximum(var, eps))"},
                "You used eps as a floor (the larger of the variance and eps). LayerNorm adds eps "
                "to the variance: the two differ for a token whose variance is near eps."),
        Mistake("sample variance", {0: "np.sqrt(x.var(axis=-1, keepdims=True, ddof=1) + eps)"},
                "You used the sample variance (divided by d \u2212 1). LayerNorm divides the "
                "squared distances by d, as `x.var()` does by default."),
        Mistake("whole array", {0: "np.sqrt(x.var() + eps)"},
                "You took the variance of the whole array. Each token is normalised by its own "
                "variance, over its last axis."),
    ],
    rtol=1e-4, atol=1e-6,
    retired=True,
)


def _rms_norm_fixed() -> list[Case]:
    return [
        Case((np.array([[-1.1, 0.1, -0.2, -0.5], [3.0, -1.0, 2.0, 0.0]]), np.array([1.0, 1.0, 2.0, 0.5])),
             "the example", visible=True),
    ] + _rms_cases("sentences")


def _rms_norm_case(rng) -> Case:
    shape = _random_shape(rng)
    return Case((rng.normal(0.0, rng.uniform(0.5, 3), shape), rng.normal(1.0, 0.5, shape[-1])),
                f"random numbers, shape {shape}")


RMS_NORM = Exercise(
    id="rms-norm", notebook=NOTEBOOK, title="RMSNorm with its gain", name="rms_norm",
    template='''def rms_norm(x, gain, eps=1e-5):
    """Each token (the last axis) divided by its root mean square, then times the gain."""
    ms = ____       # the mean of the squares: one number per token, kept as a column
    return ____     # rescale each token, then apply the learned gain (one number per column)
''',
    solution=["(x ** 2).mean(axis=-1, keepdims=True)", "x / np.sqrt(ms + eps) * gain"],
    reference=_rms_16_reference,
    fixed=_rms_norm_fixed,
    draw=three_of(_rms_norm_case),
    hints=[
        "Root mean square, read from the inside out: square every number, average the squares "
        "over the token's numbers (the last axis), take the square root.",
        "The first blank is the middle step only (square, then average with keepdims). The "
        "second divides x by the root of that, with `eps` added inside the root as in LayerNorm.",
        "The gain has one number per column, shape (d,), so multiplying the rescaled x by it "
        "scales each column of every token; nothing is subtracted anywhere.",
    ],
    mistakes=[
        Mistake("centred",
                {1: "(x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * gain"},
                "You subtracted each token's mean: that is LayerNorm. RMSNorm only divides, so a "
                "token far from 0 keeps its offset."),
        Mistake("variance", {0: "x.var(axis=-1, keepdims=True)"},
                "You used the variance, which subtracts the mean before squaring. RMSNorm "
                "averages the squares of the numbers themselves."),
        Mistake("no sqrt", {1: "x / (ms + eps) * gain"},
                "You divided by the mean of the squares itself; its square root is the typical "
                "size of a number."),
        Mistake("mean of absolute values", {0: "np.abs(x).mean(axis=-1, keepdims=True) ** 2"},
                "You averaged the sizes |x| and then squared; RMSNorm squares first, then averages."),
        Mistake("sum of squares", {0: "(x ** 2).sum(axis=-1, keepdims=True)"},
                "You added up the squares; RMSNorm averages them (their sum divided by d)."),
        Mistake("eps outside the root", {1: "x / (np.sqrt(ms) + eps) * gain"},
                "You added `eps` after the square root. It belongs inside, added to the mean of "
                "the squares; the two differ for a token whose mean square is near eps."),
        Mistake("eps as a floor", {1: "x / np.sqrt(np.maximum(ms, eps)) * gain"},
                "You used eps as a floor (the larger of the mean square and eps). RMSNorm adds eps "
                "to the mean square: the two differ for a token whose mean square is near eps."),
        Mistake("missing keepdims", {0: "(x ** 2).mean(axis=-1)"}, _RMS_KEEPDIMS),
    ],
    rtol=1e-4, atol=1e-6,
    retired=True,
)


def _pre_norm_reference(x, f, norm):
    return x + f(norm(x))


def _example_f(h):
    return h @ NUDGE_W


def _layer(seed: int, d: int):
    return _tanh_layer(np.random.default_rng(seed).normal(0.0, d ** -0.5, (d, d)))


def _pre_norm_fixed() -> list[Case]:
    return [
        Case((np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.5, 2.5, 0.0]]), _example_f, _rms),
             "the example", visible=True),
        Case((np.array([[3.0, 1.0], [-2.0, 5.0]]), _zeros_f, _ln), "f returns zeros"),
        Case((np.array([[10.0, 20.0, 30.0, 40.0, 50.0]]), _layer(3, 5), _ln),
             "a large stream (the norm must not touch it)"),
        Case((np.sin(np.arange(48.0)).reshape(2, 4, 6) * 4.0, _layer(4, 6), _rms),
             "a batch of 2 sentences of 4 tokens"),
        in_float32(Case((np.cos(np.arange(15.0)).reshape(3, 5) * 2.0, _layer(5, 5), _ln), "a float32 stream")),
    ]


def _pre_norm_case(rng) -> Case:
    shape = _random_shape(rng, min_last=3)
    norm = _rms if rng.random() < 0.5 else _ln
    return Case((rng.normal(rng.uniform(-2, 2), rng.uniform(0.5, 5), shape),
                 _layer(int(rng.integers(1_000_000)), shape[-1]), norm),
                f"random stream, shape {shape}")


PRE_NORM = Exercise(
    id="pre-norm-update", notebook=NOTEBOOK, title="The pre-norm update", name="pre_norm_update",
    template='''def pre_norm_update(x, f, norm):
    """One pre-norm step: f reads a normalised copy of the stream x, and what f returns is
    added to x. (norm and f are functions: norm(x) normalises, f(h) is the layer.)"""
    return ____
''',
    solution=["x + f(norm(x))"],
    reference=_pre_norm_reference,
    fixed=_pre_norm_fixed,
    draw=three_of(_pre_norm_case),
    hints=[
        "Read the docstring as three moves: make a normalised copy of the stream, let the layer "
        "read that copy, then add the layer's output to the stream.",
        "The stream itself is never normalised in pre-norm: only the copy that f reads is. "
        "What you add to must be the plain x.",
    ],
    mistakes=[
        Mistake("post-norm", {0: "norm(x + f(x))"},
                "That is post-norm: you added first and normalised the sum, so the stream itself "
                "was rescaled. In pre-norm only the copy that f reads is normalised."),
        Mistake("no residual", {0: "f(norm(x))"},
                "The layer's output replaced the stream instead of being added to it: the plain "
                "x must be kept and the output added on."),
        Mistake("added to the normalised copy", {0: "norm(x) + f(norm(x))"},
                "You added the layer's output to the normalised copy, so the stream was rescaled "
                "after all. Add it to the plain x."),
        Mistake("f reads the raw stream", {0: "x + f(x)"},
                "f read the raw stream, so the layer sees numbers of whatever size the stream has "
                "grown to. Give f the normalised copy."),
        Mistake("normalised the output", {0: "x + norm(f(x))"},
                "You normalised what f returned; the norm goes on f's input."),
    ],
    rtol=1e-5, atol=1e-6,
    retired=True,
)


NUDGE_GROWTH = Exercise(
    id="nudge-growth", notebook=NOTEBOOK, name="nudge_growth",
    title="A small change through pre-norm and post-norm layers",
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
    fixed=_nudge_fixed,
    draw=three_of(_nudge_case),
    hints=[
        "Pre-norm normalises only the copy that the layer reads, and adds the layer's result to the plain "
        "stream. Post-norm adds first, then normalises the sum, so the stream itself is rescaled.",
        "Both runs went through the same layers. What reached the top is the gap between them: "
        "one run minus the other, a grid of the same shape as the nudge.",
        "A root mean square is the square root of the mean of the squares. Divide the gap's by "
        "the nudge's: 1 means the change arrived as large as it left, above 1 that it grew.",
    ],
    mistakes=[
        Mistake("swapped", {0: "norm(h + f(h))", 1: "h + f(norm(h))"},
                "Your pre-norm and post-norm steps are swapped. Pre-norm: the layer reads a normalised copy "
                "and its result is added to the plain stream. Post-norm: add, then normalise the sum."),
        Mistake("no residual", {0: "f(norm(h))"},
                "In your pre-norm step the layer's result replaced the stream instead of being "
                "added to it: keep the plain stream and add the result on."),
        Mistake("raw read", {0: "h + f(h)"},
                "In your pre-norm step the layer reads the raw stream. Give it the normalised "
                "copy; only the copy is normalised, never the stream you add to."),
        Mistake("added to the copy", {0: "norm(h) + f(norm(h))"},
                "In your pre-norm step the layer's result was added to the normalised copy, so the "
                "stream itself was rescaled after all. Add it to the plain stream h."),
        Mistake("post without norm", {1: "h + f(h)"},
                "In your post-norm step nothing is normalised: post-norm adds the layer's result to "
                "the stream, then normalises the sum."),
        Mistake("post without residual", {1: "norm(f(h))"},
                "In your post-norm step the layer's result replaced the stream: post-norm "
                "normalises the sum of the stream and the layer's result."),
        Mistake("upside down", {2: "np.sqrt(np.mean(nudge ** 2)) / np.sqrt(np.mean((a - b) ** 2))"},
                "Your ratio is upside down: a change that grew must give a number above 1. "
                "Divide the gap at the top by the nudge, not the other way round."),
        Mistake("not divided", {2: "np.sqrt(np.mean((a - b) ** 2))"},
                "You returned the size of the gap at the top. Divide it by the size of the nudge, "
                "so that the answer says how many times larger the change became."),
        Mistake("sizes compared",
                {2: "abs(np.sqrt(np.mean(a ** 2)) - np.sqrt(np.mean(b ** 2))) / np.sqrt(np.mean(nudge ** 2))"},
                "You compared the sizes of the two runs, not the runs themselves: two grids of the same size "
                "can still differ everywhere. Take the root mean square of their difference."),
        Mistake("mean size", {2: "np.mean(np.abs(a - b)) / np.mean(np.abs(nudge))"},
                "You compared the average sizes |gap| and |nudge|. The answer compares root mean "
                "squares: square every number, average, then take the square root."),
        Mistake("not rooted", {2: "np.mean((a - b) ** 2) / np.mean(nudge ** 2)"},
                "Your answer is the square of the right one: you compared the mean squares. Take "
                "the square root of each before dividing."),
    ],
    rtol=1e-6, atol=1e-9,
    retired=True,
)


DEFINITIONS = [LAYER_NORM, RMS_NORM, PRE_NORM, NUDGE_GROWTH]
