"""Small input checks shared by the library, each raising a ValueError that names what was expected."""

import numpy as np


KEPT_FLOAT_TYPES = (np.float32, np.float64)


def as_float_array(value, name):
    """Return ``value`` as a float array: a float32 or float64 array keeps its type (as NumPy's own
    functions do: a model trained in float32 runs in float32), anything else numeric becomes
    float64. Complain if it holds something that is not a number."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype in KEPT_FLOAT_TYPES:
        return np.asarray(value)
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} should be an array of numbers, got {type(value).__name__}") from error


def check_ndim(array, name, allowed):
    """Require ``array.ndim`` to be one of ``allowed``, e.g. (2, 3)."""
    if array.ndim not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        axes = "axis" if tuple(allowed) == (1,) else "axes"          # "1 axis", "2 or 3 axes"
        raise ValueError(f"{name} should have {wanted} {axes}, got shape {array.shape}")


def check_matrix(matrix, name, rows=None, columns=None, rows_reason="", columns_reason=""):
    """Return ``matrix`` as a 2-D float array, checking its number of rows and columns if given."""
    matrix = as_float_array(matrix, name)
    if matrix.ndim != 2:
        raise ValueError(f"{name} should be a matrix (2 axes), got shape {matrix.shape}")
    if rows is not None and matrix.shape[0] != rows:
        raise ValueError(f"{name} should have {rows} rows{rows_reason}, got shape {matrix.shape}")
    if columns is not None and matrix.shape[1] != columns:
        raise ValueError(f"{name} should have {columns} columns{columns_reason}, got shape {matrix.shape}")
    return matrix


def check_vector(vector, name, length, reason=""):
    """Return ``vector`` as a 1-D float array of exactly ``length`` numbers (no broadcasting)."""
    vector = as_float_array(vector, name)
    if vector.shape != (length,):
        raise ValueError(f"{name} should have shape ({length},){reason}, got shape {vector.shape}")
    return vector


def check_choice(value, name, options):
    """Require ``value`` to be one of ``options`` (strings)."""
    if value not in options:
        listed = ", ".join(repr(option) for option in options)
        raise ValueError(f"{name} should be one of {listed}, got {value!r}")
    return value


def check_positive_int(value, name, even=False):
    """Require a whole number above zero (and even, if asked)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} should be a whole number of at least 1, got {value!r}")
    if even and value % 2:
        raise ValueError(f"{name} should be even (numbers are taken in pairs), got {value}")
    return int(value)


def check_non_negative(value, name):
    """Require a number that is zero or more (an epsilon, a scale)."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or not value >= 0:
        raise ValueError(f"{name} should be a number of at least 0, got {value!r}")
    return float(value)
