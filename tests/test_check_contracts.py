"""Every promise of an exercise's contract, drawn at random (Hypothesis): for inputs across the
whole contract (every number of axes and number type it promises, sizes from 1 up, numbers from
tiny to huge where the contract admits them, defaults used and overridden, lists with repeated
items), the official solution and the reference agree, and the checker passes the solution on
that input. One strategy per exercise, written from its contract; derandomized, so the same
examples run every time, and small, so the whole file takes seconds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.core import budget
from engine.core.cell import run_cell
from engine.core.checker import evaluate
from engine.core.definition import FLOAT32_ATOL, FLOAT32_RTOL, Case
from engine.core.registry import all_exercises, get_exercise
from engine.core.sandbox import copied

EXERCISES = [ex.id for ex in all_exercises() if ex.kind == "function"]
PROPERTY = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    monkeypatch.setattr(budget, "CALL_SECONDS", 5.0)


# ---------------------------------------------------------------- building blocks

def sizes(low=1, high=6):
    return st.integers(low, high)


def dtypes(*names):
    return st.sampled_from([np.dtype(n) for n in names])


def whole(value):
    """A Python int or a NumPy integer of the same value (the contracts promise both)."""
    return st.sampled_from([int, np.int64, np.int32]).map(lambda kind: kind(value))


@st.composite
def numbers(draw, shape, dtype, scale=None, offset=0.0):
    """An array of finite numbers of a drawn scale (1e-3 to 1e3 unless given)."""
    seed = draw(st.integers(0, 2 ** 32 - 1))
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 1e3])) if scale is None else scale
    values = np.random.default_rng(seed).normal(offset, scale, shape)
    return values.astype(dtype)


def tolerance(args, ex):
    """The tolerance a case of these arguments is compared to: float32's when any array is float32."""
    if any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args):
        return FLOAT32_RTOL, FLOAT32_ATOL
    return ex.rtol, ex.atol


# ---------------------------------------------------------------- one strategy per exercise

@st.composite
def row_mean(draw):
    ndim = draw(st.sampled_from([2, 3, 4]))
    shape = tuple(draw(sizes(1, 5)) for _ in range(ndim))
    return (draw(numbers(shape, draw(dtypes("float64", "float32")),
                         scale=draw(st.sampled_from([1e-3, 1.0, 1e6])))),), {}


@st.composite
def softmax(draw):
    ndim = draw(st.sampled_from([2, 3]))
    shape = tuple(draw(sizes(1, 6)) for _ in range(ndim))
    return (draw(numbers(shape, draw(dtypes("float64", "float32")),
                         scale=draw(st.sampled_from([1e-3, 1.0, 30.0, 1e3, 1e4])))),), {}


@st.composite
def position_table(draw):
    return (draw(sizes(1, 300).flatmap(whole)), draw(st.integers(1, 256).map(lambda k: 2 * k).flatmap(whole))), {}


@st.composite
def rope_one(draw):
    d = 2 * draw(sizes(1, 32))
    kwargs = draw(st.sampled_from([{}, {"base": 100.0}, {"base": 1e5}, {"base": 2.5}]))
    x = draw(numbers((d,), draw(dtypes("float64", "float32")), scale=1.0))
    return (x, draw(st.integers(0, 2000).flatmap(whole))), kwargs


@st.composite
def scores_by_distance(draw):
    d, dtype = 2 * draw(sizes(1, 32)), draw(dtypes("float64", "float32"))
    return (draw(numbers((d,), dtype, scale=1.0)), draw(numbers((d,), dtype, scale=1.0)),
            draw(st.integers(0, 400).flatmap(whole))), {}


@st.composite
def one_matrix(draw):
    d, f, out, dtype = draw(sizes(1, 6)), draw(sizes(1, 8)), draw(sizes(1, 6)), draw(dtypes("float64", "float32"))
    return (draw(numbers((d, f), dtype)), draw(numbers((f,), dtype)), draw(numbers((f, out), dtype)),
            draw(numbers((out,), dtype))), {}


@st.composite
def swiglu(draw):
    lead = tuple(draw(sizes(1, 4)) for _ in range(draw(st.sampled_from([1, 2]))))
    d, f, dtype = draw(sizes(1, 6)), draw(sizes(1, 8)), draw(dtypes("float64", "float32"))
    gate = draw(st.sampled_from([1.0, 300.0]))             # gate numbers in the hundreds: e^z overflows
    return (draw(numbers(lead + (d,), dtype, scale=1.0)), draw(numbers((d, f), dtype, scale=gate)),
            draw(numbers((d, f), dtype, scale=1.0)), draw(numbers((f, d), dtype, scale=1.0))), {}


@st.composite
def top2_weights(draw):
    experts = draw(sizes(2, 16))
    values = draw(st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=experts, max_size=experts, unique=True))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e-1]))
    dtype = draw(dtypes("float64", "float32"))
    over = draw(st.sampled_from([{}, {"over": "kept"}, {"over": "all"}]))
    return (np.array(values, dtype=np.float64).astype(dtype) * dtype.type(scale),), over


@st.composite
def moe_block_counts(draw):
    experts = draw(sizes(1, 300))
    return (draw(sizes(1, 4096).flatmap(whole)), draw(sizes(1, 16384).flatmap(whole)),
            draw(whole(experts)), draw(st.integers(1, experts).flatmap(whole))), {}


@st.composite
def ffn_width(draw):
    return (draw(sizes(1, 8192).flatmap(whole)), draw(sizes(1, 4).flatmap(whole)), draw(st.booleans()),
            draw(sizes(1, 1024).flatmap(whole))), {}


@st.composite
def layer_norm(draw):
    lead = tuple(draw(sizes(1, 4)) for _ in range(draw(st.sampled_from([0, 1, 2]))))     # (d,) too: one token
    d = draw(sizes(1, 8))
    dtype = draw(dtypes("float64", "float32"))
    offset = draw(st.sampled_from([0.0, -3.0, 1000.0]))
    spread = draw(st.sampled_from([1e-4, 3e-3, 1.0, 5.0] if dtype == np.float64 else [1.0, 5.0]))
    kwargs = draw(st.sampled_from([{}, {"eps": 0.0}, {"eps": 1e-3}, {"eps": 0.1}]))
    return (draw(numbers(lead + (d,), dtype, scale=spread, offset=offset)),), kwargs


@st.composite
def rms_norm(draw):
    """Tokens in float64, float32 or float16, of any size a float16 holds (up to 65,504)."""
    lead = tuple(draw(sizes(1, 4)) for _ in range(draw(st.sampled_from([1, 2]))))
    d, dtype = draw(sizes(1, 8)), draw(dtypes("float64", "float32", "float16"))
    offset = draw(st.sampled_from([0.0, 1000.0]))
    kwargs = draw(st.sampled_from([{}, {"eps": 0.0}, {"eps": 1e-2}, {"eps": 1e-6}]))
    scale = draw(st.sampled_from([1e-3, 1.0, 10.0, 300.0, 1e4]))
    x = np.clip(draw(numbers(lead + (d,), np.float64, scale=scale, offset=offset)), -6e4, 6e4).astype(dtype)
    if kwargs.get("eps") == 0.0:
        x = x + dtype.type(0.5)                 # eps = 0 promises nothing for a token of zeros
    return (x, draw(numbers((d,), dtype, scale=1.0))), kwargs


def _tanh_layer(w):
    return lambda h: np.tanh(h @ w)


def _rms(h):
    return h / np.sqrt((h ** 2).mean(axis=-1, keepdims=True) + 1e-5)


def _ln(h):
    centred = h - h.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + 1e-5)


@st.composite
def nudge_growth(draw):
    lead = tuple(draw(sizes(1, 4)) for _ in range(draw(st.sampled_from([1, 2]))))
    d = draw(sizes(2, 6))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    distinct = [_tanh_layer(rng.normal(0.0, 1.5 / np.sqrt(d), (d, d))) for _ in range(draw(sizes(1, 3)))]
    layers = draw(st.sampled_from(["none", "distinct", "repeated"]))
    layers = {"none": [], "distinct": distinct, "repeated": [distinct[0]] * 3 + distinct}[layers]
    x = rng.normal(0.0, draw(st.sampled_from([0.5, 3.0, 20.0])), lead + (d,))
    nudge = 1e-3 * rng.normal(size=lead + (d,))
    return (x, nudge, layers, draw(st.sampled_from([_rms, _ln])), draw(st.sampled_from(["pre", "post"]))), {}


@st.composite
def relative_growth(draw):
    """nudge_growth's inputs, and a stream never all zero (the contract's x): the growth is then
    measured against it."""
    (x, nudge, layers, norm, placement), kwargs = draw(nudge_growth())
    if not np.any(x):
        x = x + 1.0
    return (x, nudge, layers, norm, placement), kwargs


@st.composite
def cached_causal_weights(draw):
    ndim, keys = draw(st.sampled_from([2, 3, 4])), draw(sizes(1, 7))
    queries = draw(sizes(1, keys))
    lead = tuple(draw(sizes(1, 3)) for _ in range(ndim - 2))
    return (draw(numbers(lead + (queries, keys), draw(dtypes("float64", "float32")),
                         scale=draw(st.sampled_from([1e-3, 1.0, 1e3])))),), {}


@st.composite
def grouped_parameters(draw):
    kv_heads = draw(sizes(1, 8))
    heads = kv_heads * draw(sizes(1, 8))
    d = heads * draw(sizes(1, 64))
    sizes_drawn = (d, draw(sizes(1, 96)), draw(sizes(1, 16384)), draw(sizes(1, 100_000)), heads, kv_heads)
    kind = draw(st.sampled_from([int, np.int64]))          # counts pass 2**31: no int32 sizes promised
    return tuple(kind(n) for n in sizes_drawn), {}


def _reads(ahead):
    """A model whose output at i is its token plus the mean of the ``ahead`` tokens after it."""
    def run(x):
        out = x.copy()
        for i in range(len(x)):
            later = x[i + 1:i + 1 + ahead]
            out[i] = x[i] + (later.mean(axis=0) if len(later) else 0.0)
        return out
    return run


def _linear(seed, d):
    w = np.random.default_rng(seed).normal(size=(d, d))
    return lambda x: np.tanh(x @ w) - x.sum(axis=0)


@st.composite
def future_leak(draw):
    length, d = draw(sizes(1, 6)), draw(sizes(1, 5))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    run = draw(st.sampled_from([_reads(0), _reads(1), _reads(3), _linear(seed, d)]))
    return (run, np.random.default_rng(seed).normal(size=(length, d))), {}


@st.composite
def perplexity_logits(draw):
    """Scores (n, V) for a text of n >= 2 tokens over V >= 2 words, float32 or float64, at a drawn
    spread; the rows at one level, at levels of their own (around +-1,000) or all equal."""
    n, vocab = draw(sizes(2, 9)), draw(sizes(2, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    logits = rng.normal(0.0, draw(st.sampled_from([1e-3, 1.0, 4.0, 12.0])), (n, vocab))
    levels = draw(st.sampled_from(["zero", "high", "rows apart", "equal"]))
    if levels == "high":
        logits += 1000.0
    elif levels == "rows apart":
        logits += rng.choice([-1000.0, 0.0, 1000.0], size=(n, 1))
    elif levels == "equal":
        logits = np.zeros((n, vocab))
    ids = rng.integers(0, vocab, size=n).astype(draw(dtypes("int64", "int32")))
    return (logits.astype(draw(dtypes("float64", "float32"))), ids), {}


def _toy_block(rng, d):
    w, v = rng.normal(0, 1 / np.sqrt(d), (d, d)), rng.normal(0, 0.5 / np.sqrt(d), (d, d))
    return lambda x: x + np.tanh(x @ w) @ v


SCORES = [lambda s: float(np.sqrt(np.mean(np.asarray(s) ** 2))), lambda s: float(np.mean(s)),
          lambda s: float(np.abs(s).max())]


@st.composite
def leave_one_out(draw):
    n, d = draw(sizes(1, 5)), draw(sizes(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    distinct = [_toy_block(rng, d) for _ in range(draw(sizes(1, 4)))]
    blocks = draw(st.sampled_from(["none", "distinct", "repeated"]))
    blocks = {"none": [], "distinct": distinct, "repeated": [distinct[0]] * 2 + distinct + [distinct[-1]]}[blocks]
    x = rng.normal(size=(n, d)).astype(draw(dtypes("float64", "float32")))
    return (x, blocks, draw(st.sampled_from(SCORES))), {}


def _biased_block(rng, d):
    w, v, b = rng.normal(0, 1 / np.sqrt(d), (d, d)), rng.normal(0, 0.5 / np.sqrt(d), (d, d)), rng.normal(0, 1, d)
    return lambda x: x + np.tanh(x @ w + b) @ v


@st.composite
def ablated(draw):
    n, d = draw(sizes(1, 5)), draw(sizes(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    make = draw(st.sampled_from([_toy_block, _biased_block]))
    distinct = [make(rng, d) for _ in range(draw(sizes(1, 4)))]
    blocks = draw(st.sampled_from([distinct, [distinct[0]] * 2 + distinct]))
    k = draw(st.integers(0, len(blocks) - 1))
    x = rng.normal(size=(n, d)).astype(draw(dtypes("float64", "float32")))
    return (x, blocks, draw(whole(k)), draw(st.sampled_from(["skip", "zero", "mean"]))), {}


@st.composite
def trained_block(draw):
    from lib.block import BlockWeights
    heads, size = draw(sizes(1, 3)), 2 * draw(sizes(1, 3))
    d, n, f = heads * size, draw(sizes(1, 7)), draw(sizes(1, 10))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    square = [rng.normal(0.0, d ** -0.5, (d, d)) for _ in range(4)]
    up, down = rng.normal(0.0, d ** -0.5, (d, f)), rng.normal(0.0, f ** -0.5, (f, d))    # the FFN's, in order
    w = BlockWeights(*square, up, down, W_gate=rng.normal(0.0, d ** -0.5, (d, f)),
                     attention_norm_gain=rng.uniform(0.5, 1.5, d), ffn_norm_gain=rng.uniform(0.5, 1.5, d),
                     heads=heads)
    return (rng.normal(0.0, draw(st.sampled_from([0.5, 3.0, 30.0])), (n, d)), w), {}


STRATEGIES = {"row-mean": row_mean, "stable-softmax": softmax, "position-table": position_table,
              "rope-rotation": rope_one, "rope-signed-distance": scores_by_distance, "one-matrix": one_matrix,
              "swiglu": swiglu, "top2-routing": top2_weights, "moe-counts": moe_block_counts,
              "ffn-width": ffn_width, "layer-norm-fix": layer_norm, "rms-norm-16bit": rms_norm,
              "relative-growth": relative_growth, "cached-causal-weights": cached_causal_weights,
              "future-leak-nudge": future_leak, "grouped-parameters": grouped_parameters,
              "perplexity-logits": perplexity_logits,
              "ablate-three-ways": ablated,
              "capstone-block": trained_block}


def from_the_definition(ex):
    """The strategy of an exercise with none written here (a new notebook's, `./course new`): the
    cases its definition makes, fixed ones and those its ``draw`` makes from a drawn seed."""
    def cases(seed):
        made = ex.fixed_cases() + (list(ex.draw(np.random.default_rng(seed))) if ex.draw else [])
        return made

    @st.composite
    def drawn(draw):
        case = draw(st.sampled_from(cases(draw(st.integers(0, 2 ** 32 - 1)))))
        return tuple(case.args), dict(case.kwargs or {})

    return drawn


def strategy(ex_id):
    """The strategy written here for the exercise, else the one its definition gives."""
    return STRATEGIES.get(ex_id) or from_the_definition(get_exercise(ex_id))


def test_every_strategy_written_here_is_of_an_exercise():
    assert set(STRATEGIES) <= set(EXERCISES)


def test_an_exercise_with_no_strategy_written_here_is_drawn_from_its_definitions_cases():
    ex = get_exercise("row-mean")
    found = []

    @PROPERTY
    @given(from_the_definition(ex)())
    def collect(drawn):
        found.append(drawn)

    collect()
    assert found and all(isinstance(args, tuple) and isinstance(kwargs, dict) for args, kwargs in found)
    fixed = [tuple(c.args) for c in ex.fixed_cases()]
    assert any(any(_same(args, f) for f in fixed) for args, _ in found), "no fixed case was drawn"


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))


def _case_tolerance(ex, args) -> tuple[float, float]:
    rtol, atol = tolerance(args, ex)
    first = args[0] if args and isinstance(args[0], np.ndarray) else None
    if ex.id == "layer-norm-fix" and first is not None and first.dtype == np.float32 \
            and np.abs(first.mean()) > 100 * max(float(first.std()), 1e-30):
        rtol, atol = 1e-3, 1e-3            # the contract: float32 tokens far from 0, to 1 part in 1000
    if first is not None and first.dtype == np.float16:
        rtol, atol = 1e-3, 1e-3            # the contract: float16 tokens, to float16's precision
    return rtol, atol


@pytest.mark.parametrize("ex_id", EXERCISES)
def test_the_solution_agrees_with_the_reference_and_passes_its_check_across_the_contract(ex_id):
    ex = get_exercise(ex_id)
    solution = run_cell(ex.solution_source, ex.context, ex.id)[ex.name]

    @PROPERTY
    @given(strategy(ex_id)())
    def agrees(drawn):
        args, kwargs = drawn
        rtol, atol = _case_tolerance(ex, args)
        with np.errstate(all="ignore"):
            expected = ex.reference(*copied(args), **copied(kwargs))
            got = solution(*copied(args), **copied(kwargs))
        assert np.allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                           rtol=rtol, atol=atol, equal_nan=True), (got, expected)
        case = Case(args, "drawn", visible=True, kwargs=kwargs, rtol=rtol, atol=atol)
        alone = dataclasses.replace(ex, fixed=lambda: [case], draw=None)
        fb = evaluate(alone, {ex.name: solution})
        assert fb.passed, fb.text()

    agrees()


# ---------------------------------------------------------------- promises the fixed cases now keep

def test_leaving_a_block_out_by_what_it_is_fails_on_a_list_that_repeats_a_block():
    """Notebook 03 builds its layer lists as `[layer] * 3`: leaving block i out by identity or
    equality drops every copy of it, which a fixed case now shows (the exercise is retired, its
    cases kept for saved notebooks; ablate-three-ways promises the same edge)."""
    from engine.core.checker import evaluate_fixed
    ex = get_exercise("leave-one-out")
    assert "repeated" in get_exercise("ablate-three-ways").contract.edges
    for fill in ("[b for b in blocks if b is not blocks[left_out]]", "[b for b in blocks if b != blocks[left_out]]",
                 "[b for b in blocks if b not in blocks[left_out:left_out + 1]]"):
        fb = evaluate_fixed(ex, run_cell(ex.variant_source({0: fill}), ex.context, ex.id))
        assert not fb.passed, fill
        assert "the same block three times in the list" in fb.text(), fb.text()


def test_the_variance_as_a_difference_of_means_fails_in_float32_far_from_0_and_is_told_why():
    """mean(x²) - mean(x)² cancels in float32 for tokens at mean 1000: the contract's float32
    edge rejects it, with the reason, while the two-pass formula passes within the 1 part in
    1000 the contract states; the reference is computed in float64 there."""
    from exercise_answers import try_variant
    ex = get_exercise("layer-norm-fix")
    case = next(c for c in ex.fixed_cases() if "float32 offset" in c.covers)
    x = case.args[0]
    assert x.dtype == np.float32 and abs(float(x.mean())) > 900 and (case.rtol, case.atol) == (1e-3, 1e-3)
    exact = (x.astype(np.float64) - x.astype(np.float64).mean(-1, keepdims=True)) \
        / np.sqrt(x.astype(np.float64).var(-1, keepdims=True) + 1e-5)
    assert np.allclose(ex.reference(x), exact, rtol=1e-6, atol=1e-6), "the reference is float64's, rounded"
    fb = try_variant(ex, {1: "(x ** 2).mean(axis=-1, keepdims=True) - mean ** 2"})
    assert not fb.passed and "float32 tokens far from 0 (mean 1000)" in fb.text()
    assert "cancellation" in fb.hint, fb.text()
    assert try_variant(ex).passed
