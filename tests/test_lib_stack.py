"""lib.stack: random rotations, a vector through a stack of layers in every mode (by hand), overflow
and underflow as results, and the residual stream's bookkeeping."""

import itertools
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from lib.norm import layer_norm, rms_norm, root_mean_square
from lib.stack import MODES, random_rotations, residual_stream, run_stack, start_vector

pytestmark = pytest.mark.filterwarnings("error")        # an overflow is a result, never a warning


# ---------------------------------------------------------------- the draws

def test_random_rotations_are_orthogonal_and_seeded():
    q = random_rotations(5, 8, seed=3)
    assert q.shape == (5, 8, 8)
    assert np.allclose(q @ q.transpose(0, 2, 1), np.eye(8), atol=1e-12)
    assert np.array_equal(q, random_rotations(5, 8, seed=3))
    assert np.array_equal(random_rotations(9, 8, seed=3)[:5], q)       # a prefix of a longer draw
    assert not np.allclose(q, random_rotations(5, 8, seed=4))
    assert random_rotations(2, seed=0).shape == (2, 8, 8)               # d = 8 by default


def test_each_rotation_is_the_q_of_a_normal_matrix_with_a_positive_diagonal_r():
    generator = np.random.default_rng(6)
    for q in random_rotations(4, 5, seed=6):
        drawn = generator.normal(size=(5, 5))                # the draws, in order
        r = q.T @ drawn                                      # drawn = q r
        assert np.allclose(np.tril(r, -1), 0, atol=1e-12) and (np.diag(r) > 0).all()


def test_about_half_of_the_rotations_are_reflections():
    signs = np.sign(np.linalg.det(random_rotations(400, 3, seed=0)))
    assert 150 < (signs < 0).sum() < 250


def test_start_vector_is_one_normal_draw():
    assert np.array_equal(start_vector(5, seed=9), np.random.default_rng(9).normal(size=5))
    assert start_vector(seed=1).shape == (8,)


@pytest.mark.parametrize("call, expected", [
    (lambda: random_rotations(0, 4, seed=0), "n should be a whole number of at least 1"),
    (lambda: random_rotations(2, 0, seed=0), "d should be a whole number of at least 1"),
    (lambda: start_vector(2.5, seed=0), "d should be a whole number"),
    (lambda: run_stack(np.ones(8), random_rotations(2, seed=0), 1.0, "sideways"),
     "mode should be one of 'plain', 'residual'"),
    (lambda: run_stack(np.ones(8), "rotations", 1.0), "rotations should be an array of numbers"),
    (lambda: residual_stream(0), "n_blocks should be a whole number of at least 1"),
    (lambda: residual_stream(2, d=0), "d should be a whole number of at least 1"),
])
def test_bad_input_is_rejected(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


# ---------------------------------------------------------------- run_stack

def same(a, b):
    """Two StackRuns hold the same numbers (NaN where the other has NaN)."""
    return all(np.array_equal(u, v, equal_nan=True) if isinstance(u, np.ndarray) else u == v for u, v in zip(a, b))


def by_hand(x, rotations, step):
    """Lengths and step sizes of the stack x <- step(x, q), one q after the other."""
    lengths, steps = [np.linalg.norm(x)], []
    for q in rotations:
        new = step(x, q)
        steps.append(np.linalg.norm(new - x))
        x = new
        lengths.append(np.linalg.norm(x))
    return lengths, steps


@pytest.mark.parametrize("eps", [None, 0.5])                  # None: run_stack's default, 1e-5
def test_run_stack_modes_by_hand(eps):
    q = random_rotations(3, 8, seed=0)
    x = 0.01 * start_vector(8, seed=1)                        # small: eps makes a difference
    layer, rms = (lambda v: layer_norm(v, eps=eps or 1e-5)), (lambda v: rms_norm(v, eps=eps or 1e-5))
    steps = {
        "plain": lambda v, r: 0.7 * r @ v,
        "residual": lambda v, r: v + 0.7 * r @ v,
        "post-layer": lambda v, r: layer(v + 0.7 * r @ v),
        "pre-layer": lambda v, r: v + 0.7 * r @ layer(v),
        "post-rms": lambda v, r: rms(v + 0.7 * r @ v),
        "pre-rms": lambda v, r: v + 0.7 * r @ rms(v),
    }
    assert set(steps) == set(MODES)
    for mode, step in steps.items():
        lengths, sizes = by_hand(x, q, step)
        run = run_stack(x, q, 0.7, mode) if eps is None else run_stack(x, q, 0.7, mode, eps=eps)
        assert run.lengths == pytest.approx(lengths, rel=1e-12) and run.steps == pytest.approx(sizes, rel=1e-12)
        assert run.overflow_at is None and run.zero_at is None
    assert same(run_stack(x, q, 0.7), run_stack(x, q, 0.7, "plain"))            # plain by default


def test_modes_describe_their_step():
    assert MODES["plain"] == "x \u2190 f(x)" and MODES["residual"] == "x \u2190 x + f(x)"
    assert MODES["pre-layer"] == "x \u2190 x + f(LayerNorm(x))" and MODES["post-rms"] == "x \u2190 RMSNorm(x + f(x))"


@pytest.mark.parametrize("gain", [1, np.float32(0.5), Fraction(1, 2), Decimal("0.5")])
def test_the_gain_may_be_any_number(gain):
    q, x = random_rotations(3, 8, seed=0), start_vector(8, seed=0)
    assert np.array_equal(run_stack(x, q, gain).lengths, run_stack(x, q, float(gain)).lengths)


def test_run_stack_uses_the_norm_it_is_given():
    q, x = random_rotations(4, 8, seed=2), start_vector(8, seed=2)
    halve = lambda v, eps: v / 2                                           # noqa: E731
    assert same(run_stack(x, q, 1.0, "pre-rms", norm=halve), run_stack(x, q, 1.0, "pre-layer", norm=halve))
    lengths, _ = by_hand(x, q, lambda v, r: (v + r @ v) / 2)
    assert np.allclose(run_stack(x, q, 1.0, "post-rms", norm=halve).lengths, lengths)


def test_plain_stack_multiplies_the_length_by_the_gain():
    q = random_rotations(10, 8, seed=2)
    x = start_vector(8, seed=2)
    run = run_stack(x, q, 1.5, "plain")
    assert np.allclose(run.lengths, np.linalg.norm(x) * 1.5 ** np.arange(11))


def test_the_vector_is_stored_in_the_given_float_type_after_every_layer():
    q, x = random_rotations(3, 8, seed=5), start_vector(8, seed=5)
    lengths, _ = by_hand(x.astype(np.float16).astype(float), q,
                         lambda v, r: (0.9 * r @ v).astype(np.float16).astype(float))
    run = run_stack(x, q, 0.9, "plain", dtype=np.float16)
    assert np.array_equal(run.lengths, lengths)
    assert not np.array_equal(run.lengths, run_stack(x, q, 0.9, "plain").lengths)


def test_overflow_and_underflow_are_results():
    q = random_rotations(64, 8, seed=0)
    x = start_vector(8, seed=0)
    run = run_stack(x, q, 2.0, "plain", dtype=np.float16)
    k = run.overflow_at
    assert k is not None and np.isnan(run.lengths[k:]).all() and np.isfinite(run.lengths[:k]).all()
    assert np.isnan(run.steps[k - 1:]).all() and np.isfinite(run.steps[:k - 1]).all()
    assert run.lengths[k - 1] * 2 > 65504 / 8          # the next step passes float16's largest number
    assert run.zero_at is None
    run = run_stack(x, q, 0.3, "plain", dtype=np.float16)
    assert run.zero_at is not None and run.lengths[run.zero_at] == 0 and (run.lengths[:run.zero_at] > 0).all()
    assert run.overflow_at is None and np.isfinite(run.lengths).all()
    assert run_stack(x, q[:3], 0.0, "plain").zero_at == 1                # the first zero, not the last


def test_a_length_too_large_for_float64_is_an_overflow_even_when_the_numbers_are_finite():
    q, x = random_rotations(3, 8, seed=0), start_vector(8, seed=0)
    run = run_stack(x, q, 1e160, "plain")              # numbers near 1e160, their squares beyond 1e308
    assert run.overflow_at == 1 and np.isnan(run.lengths[1:]).all() and np.isnan(run.steps).all()


@pytest.mark.parametrize("mode, gain", list(itertools.product(MODES, (1e200, np.inf, np.nan, 0.0))))
def test_extreme_gains_never_raise_or_warn(mode, gain):
    q, x = random_rotations(64, 8, seed=0), start_vector(8, seed=0)
    run = run_stack(x, q, gain, mode)
    assert run.lengths[0] == pytest.approx(np.linalg.norm(x))


def test_a_vector_too_small_to_square_is_not_a_warning():
    q, x = random_rotations(3, 8, seed=0), 1e-170 * start_vector(8, seed=0)
    run = run_stack(x, q, 1.0, "pre-rms", eps=0.0)     # its squares round to 0: 0 / 0 in the norm
    assert run.overflow_at == 1


# ---------------------------------------------------------------- residual_stream

def stream_by_hand(n_blocks, d, start_size, addition_size, alignment, seed, eps):
    """The pre-norm stack as its docstring describes it, with lib's own draws."""
    x = start_vector(d, seed=seed + 10_000)
    x = x / root_mean_square(x) * start_size
    sizes, additions = [root_mean_square(x)], []
    for q in random_rotations(n_blocks, d, seed=seed):
        read = rms_norm(x, eps=eps)
        change = (1 - alignment) * (q @ read) + alignment * read
        change = change / root_mean_square(change) * addition_size
        x = x + change
        sizes.append(root_mean_square(x))
        additions.append(root_mean_square(change))
    return np.array(sizes), np.array(additions)


DEFAULTS = dict(n_blocks=12, d=64, start_size=0.9, addition_size=1.0, alignment=0.0, seed=0, eps=1e-5)


@pytest.mark.parametrize("options", [{}, dict(n_blocks=5, d=16, start_size=2.0, addition_size=0.5,
                                              alignment=0.3, seed=4, eps=0.5)])
def test_residual_stream_is_the_pre_norm_stack_of_its_docstring(options):
    sizes, additions = stream_by_hand(**(DEFAULTS | options))
    r = residual_stream(**options)
    assert r.sizes == pytest.approx(sizes, rel=1e-12) and r.additions == pytest.approx(additions, rel=1e-12)


def test_residual_stream_bookkeeping():
    r = residual_stream(12, seed=0)
    assert r.sizes[0] == pytest.approx(0.9) and np.allclose(r.additions, 1.0)
    assert np.allclose(r.aligned, 0.9 + np.arange(13))
    assert np.allclose(r.right_angles, np.sqrt(0.81 + np.arange(13)))
    assert np.allclose(r.shares, r.additions / r.sizes[1:])
    assert 3.0 < r.sizes[-1] < 4.5 < r.aligned[-1]           # far below the aligned 12.9
    assert r.shares[0] > r.shares[3] > r.shares[11]
    aligned = residual_stream(12, seed=0, alignment=1.0)
    assert np.allclose(aligned.sizes, aligned.aligned)
    assert np.array_equal(residual_stream(5, seed=0).sizes, r.sizes[:6])   # a prefix
    other = residual_stream(3, start_size=2.0, addition_size=0.5)
    assert np.allclose(other.aligned, [2.0, 2.5, 3.0, 3.5]) and np.allclose(other.right_angles ** 2, 4 + 0.25 * np.arange(4))


def test_alignment_is_kept_between_0_and_1():
    for outside, inside in ((1.5, 1.0), (-0.5, 0.0)):
        assert np.array_equal(residual_stream(6, alignment=outside).sizes, residual_stream(6, alignment=inside).sizes)
