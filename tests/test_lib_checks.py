"""lib._checks: the input checks every lib function shares, what each accepts and returns, and the
plain-words message of each refusal."""

import numpy as np
import pytest

from lib._checks import (as_float_array, check_choice, check_matrix, check_ndim, check_non_negative,
                         check_positive_int, check_vector)


def test_numbers_become_a_float_array():
    out = as_float_array([[1, 2], [3, 4]], "x")
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert as_float_array(3, "x").shape == ()


def test_float32_and_float64_keep_their_type_and_other_numbers_become_float64():
    for kind in (np.float32, np.float64):
        numbers = np.ones((2, 3), dtype=kind)
        assert as_float_array(numbers, "x") is numbers                          # no copy either
        assert as_float_array(kind(2.5), "x").dtype == kind
    for value in (np.ones(3, dtype=np.float16), np.arange(3), np.arange(3, dtype=np.int32), [1.5, 2], True):
        assert as_float_array(value, "x").dtype == np.float64


@pytest.mark.parametrize("value, kind", [("abc", "str"), ([[1, 2], [3]], "list"), ({"a": 1}, "dict")])
def test_something_that_is_not_numbers_is_named(value, kind):
    with pytest.raises(ValueError, match=f"^scores should be an array of numbers, got {kind}$"):
        as_float_array(value, "scores")


def test_check_ndim():
    check_ndim(np.ones((2, 3)), "x", (2, 3))
    check_ndim(np.ones((2, 3, 4)), "x", (2, 3))
    with pytest.raises(ValueError, match=r"^x should have 2 or 3 axes, got shape \(4,\)$"):
        check_ndim(np.ones(4), "x", (2, 3))


def test_check_matrix_returns_a_float_matrix_of_the_asked_size():
    out = check_matrix([[1, 2, 3], [4, 5, 6]], "W", rows=2, columns=3)
    assert out.dtype == np.float64 and out.shape == (2, 3)
    assert check_matrix(np.ones((5, 1)), "W").shape == (5, 1)                  # no size asked
    assert check_matrix(np.ones((2, 7)), "W", rows=2).shape == (2, 7)
    assert check_matrix(np.ones((7, 3)), "W", columns=3).shape == (7, 3)


@pytest.mark.parametrize("matrix, options, message", [
    (np.ones(4), {}, r"^W should be a matrix \(2 axes\), got shape \(4,\)$"),
    (np.ones((2, 2, 2)), {}, r"^W should be a matrix \(2 axes\), got shape \(2, 2, 2\)$"),
    (np.ones((3, 4)), dict(rows=4, rows_reason=" to match x"), r"^W should have 4 rows to match x, got shape \(3, 4\)$"),
    (np.ones((4, 3)), dict(rows=4, columns=4), r"^W should have 4 columns, got shape \(4, 3\)$"),
    (np.ones((4, 3)), dict(columns=4, columns_reason=" like Wq"), r"^W should have 4 columns like Wq"),
])
def test_check_matrix_refuses_the_wrong_shape(matrix, options, message):
    with pytest.raises(ValueError, match=message):
        check_matrix(matrix, "W", **options)


def test_check_vector_wants_exactly_that_length():
    assert check_vector([1, 2, 3], "gain", 3).dtype == np.float64
    for bad in (np.ones(2), np.ones((1, 3)), np.float64(1.0)):                 # no broadcasting
        with pytest.raises(ValueError, match=r"^gain should have shape \(3,\) to match x, got shape"):
            check_vector(bad, "gain", 3, " to match x")


def test_check_choice():
    assert check_choice("rms", "norm", ("rms", "layer")) == "rms"
    with pytest.raises(ValueError, match="^norm should be one of 'rms', 'layer', got 'batch'$"):
        check_choice("batch", "norm", ("rms", "layer"))


def test_check_positive_int():
    assert check_positive_int(1, "n") == 1 and check_positive_int(np.int32(7), "n") == 7
    assert type(check_positive_int(np.int64(7), "n")) is int
    assert check_positive_int(4, "d", even=True) == 4
    for bad in (0, -3, 2.0, True, "4", None):
        with pytest.raises(ValueError, match=f"^n should be a whole number of at least 1, got {bad!r}$"):
            check_positive_int(bad, "n")
    with pytest.raises(ValueError, match=r"^d should be even \(numbers are taken in pairs\), got 5$"):
        check_positive_int(5, "d", even=True)
    assert check_positive_int(5, "d") == 5


def test_check_non_negative():
    assert check_non_negative(0, "eps") == 0.0 and type(check_non_negative(0, "eps")) is float
    assert check_non_negative(np.float32(0.5), "eps") == 0.5
    for bad in (-1e-5, np.nan, [1e-5], "0.1"):
        with pytest.raises(ValueError, match="^eps should be a number of at least 0, got "):
            check_non_negative(bad, "eps")
