"""Slips in what each row is reduced to, and along which axis: another of its statistics (the
median, the largest number, the sum of squares...), the computation along another axis or over
the whole array, each row times a number of its own (a division by each row's total missing)."""

from __future__ import annotations

import numpy as np

from engine.presentation.numbers import exact, word_list

from .slips import Slip, arg_name, first_array, reference

STATISTICS = [
    ("sum", lambda x: x.sum(axis=-1, keepdims=True)),
    ("mean", lambda x: x.mean(axis=-1, keepdims=True)),
    ("median", lambda x: np.median(x, axis=-1, keepdims=True)),
    ("largest number", lambda x: x.max(axis=-1, keepdims=True)),
    ("smallest number", lambda x: x.min(axis=-1, keepdims=True)),
    ("product", lambda x: x.prod(axis=-1, keepdims=True)),
    ("standard deviation", lambda x: x.std(axis=-1, keepdims=True)),
    ("variance", lambda x: x.var(axis=-1, keepdims=True)),
    ("mean of the absolute values", lambda x: np.abs(x).mean(axis=-1, keepdims=True)),
    ("sum of the absolute values", lambda x: np.abs(x).sum(axis=-1, keepdims=True)),
    ("mean of the squares", lambda x: (x * x).mean(axis=-1, keepdims=True)),
    ("sum of the squares", lambda x: (x * x).sum(axis=-1, keepdims=True)),
    ("root mean square", lambda x: np.sqrt((x * x).mean(axis=-1, keepdims=True))),
    ("first number", lambda x: x[..., :1]),
    ("last number", lambda x: x[..., -1:]),
    ("midpoint between the largest and the smallest number",
     lambda x: (x.max(axis=-1, keepdims=True) + x.min(axis=-1, keepdims=True)) / 2),
]


def reduction(ex, probes, numeric, close):
    """Each row reduced to another of its statistics than the expected one."""
    def per_row(p):
        x = first_array(p.case)
        return x is not None and x.ndim >= 1 and p.wanted.shape in (x.shape[:-1] + (1,), x.shape[:-1])

    if not numeric or not all(per_row(p) for p in numeric):
        return
    wanted = next((name for name, stat in STATISTICS
                   if all(close(np.asarray(stat(p.case.args[0])).reshape(p.wanted.shape), p.wanted, p.case)
                          for p in numeric)), None)
    instead = f"; the expected result is each row's {wanted}" if wanted else ""
    for name, stat in STATISTICS:
        if name != wanted:
            yield Slip(f"Your result is each row's {name}{instead}{{example}}.",
                       lambda p, stat=stat: np.asarray(stat(p.case.args[0])).reshape(p.wanted.shape))


def other_axis(ex, probes, numeric, close):
    """The reference's computation along another axis of the first array, or over all of it."""
    if ex.reference is None or not numeric or first_array(numeric[0].case) is None:
        return
    if not all(first_array(p.case) is not None and p.wanted.shape[:-1] == p.case.args[0].shape[:-1]
               for p in numeric):
        return

    def along(axis):
        def predict(p):
            x = p.case.args[0]
            if x.ndim < 2 or axis >= x.ndim - 1:
                return None
            out = reference(ex, p.case, np.moveaxis(x, axis, -1).copy(), *p.case.args[1:], **p.case.kwargs)
            out = np.moveaxis(out, -1, axis)
            return out if out.shape == p.yours.shape else None
        return predict

    name = arg_name(ex, 0)
    for axis in range(0, 3):
        yield Slip(f"Your function works along axis {axis} of `{name}` (down the columns) instead of "
                   f"along its last axis, the numbers of each row{{example}}. Count axes from the end "
                   "(`axis=-1`), so a batch works too.", along(axis))

    def whole(p):
        x = p.case.args[0]
        rest = [np.tile(a, x.size // x.shape[-1]) if isinstance(a, np.ndarray) and a.shape == x.shape[-1:] else a
                for a in p.case.args[1:]]                 # a gain of one number per column, for every column
        out = reference(ex, p.case, x.reshape(1, -1).copy(), *rest, **p.case.kwargs)
        if out.size == p.yours.size:
            return out.reshape(p.yours.shape)
        return np.broadcast_to(out.reshape(()), p.yours.shape) if out.size == 1 else None

    yield Slip(f"Your function treats the whole of `{name}` as one row: its numbers come from all the "
               "rows together{example}. Each row (the last axis) is computed on its own.", whole)


def _row_scales(p) -> np.ndarray:
    g, e = p.yours.astype(float), p.wanted.astype(float)
    return (g * e).sum(axis=-1, keepdims=True) / (e * e).sum(axis=-1, keepdims=True)


def row_factor(ex, probes, numeric, close):
    """Each row (the last axis) the expected row times a number of its own."""
    def predict(p):
        got, exp = p.yours, p.wanted
        if got.shape != exp.shape or exp.ndim == 0 or exp.dtype.kind != "f" or exp.shape[-1] < 2:
            return None
        scale = _row_scales(p)
        return exp.astype(float) * np.where(np.isfinite(scale), scale, 1.0)

    yield Slip(_row_factor_words, predict)


def _row_factor_words(wrong) -> str | None:
    scales = np.concatenate([np.ravel(_row_scales(p)) for p in wrong])
    scales = scales[np.isfinite(scales)]
    if scales.size < 2 or np.allclose(scales, scales[0], rtol=1e-6):
        return None
    ones = all(np.allclose(p.wanted.sum(axis=-1), 1.0) for p in wrong)
    seen = next((p for p in wrong if p.case.visible), None)
    quoted = ""
    if seen is not None:
        factors = np.ravel(_row_scales(seen))[:3]
        sums = np.ravel(seen.yours.astype(float).sum(-1))[:3]
        quoted = (f" (on the example above its rows sum to {word_list(exact(float(s)) for s in sums)})"
                  if ones else f" (on the example above: {word_list(exact(float(f)) for f in factors)})")
    if ones:
        return (f"Each row of yours is the expected row times a factor of its own: the expected rows "
                f"sum to 1, yours do not{quoted}. Divide each row by its own total.")
    return (f"Each row of yours is the expected row times a factor of its own{quoted}: a division "
            "(or a multiplication) of each row by a number of its own, such as its size or its "
            "total, is wrong, missing or one too many.")
