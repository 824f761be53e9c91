"""Slips in a count of parameters or operations: a product of the sizes counted too often, too
rarely, or with the wrong number of matrices (a term missing, one too many, doubled)."""

from __future__ import annotations

import itertools

import numpy as np

from .slips import Slip, arg_name, is_count, quote


def _monomials(names: list[str], degree: int):
    """Products of at most ``degree`` of the names: ("d",), ("d", "d_ff"), ..."""
    for k in range(1, degree + 1):
        yield from itertools.combinations_with_replacement(range(len(names)), k)


COEFFICIENTS = [1, -1, 2, -2, 3, -3, 4, -4]


def terms(ex, probes, numeric, close):
    """A count off by a product of the sizes (a term missing, one too many, doubled)."""
    cases = [p for p in numeric if p.yours.shape == p.wanted.shape and p.wanted.dtype.kind in "iuf"
             and np.all(np.isfinite(p.wanted)) and np.allclose(p.wanted, np.round(p.wanted))]
    if len(cases) != len(numeric) or not cases:
        return
    sized = [i for i, a in enumerate(cases[0].case.args) if is_count(a)]
    if not sized or not all(len(p.case.args) == len(cases[0].case.args) for p in cases):
        return
    names = [arg_name(ex, i) for i in sized]
    values = np.array([[float(p.case.args[i]) for i in sized] for p in cases])                        # (cases, sizes)
    gaps = np.array([np.ravel(p.yours.astype(float) - p.wanted.astype(float)) for p in cases])       # (cases, outputs)
    products = [(m, np.prod(values[:, list(m)], axis=1)) for m in _monomials(names, 3)]
    for out in range(gaps.shape[1]):
        gap = gaps[:, out]
        wrong = gap != 0
        if wrong.sum() < 2:
            continue
        found = None
        for (m, v), c in itertools.product(products, COEFFICIENTS):
            if np.array_equal(gap[wrong], c * v[wrong]):
                found = [(c, m)]
                break
        if found is None and wrong.sum() >= 3:
            found = _two_terms(gap[wrong], [(m, v[wrong]) for m, v in products], COEFFICIENTS)
        if found:
            said = " and ".join(_term_words(c, m, names) for c, m in found)
            which = "" if gaps.shape[1] == 1 else f"Your number at entry {out}: "
            where = "" if wrong.all() else f" on the {int(wrong.sum())} tests it gets wrong"
            seen = next((p for p in cases if p.case.visible), None)
            quoted = quote(seen.yours, seen.wanted) if seen is not None else ""
            yield Slip(f"{which or 'Your count: '}{said}{where}{quoted}: a part counted that should not "
                       "be, one left out, or one counted with the wrong number of matrices.")
            return


def _two_terms(gap, products, coefficients) -> list | None:
    """The first pair of terms (in the order of itertools.combinations, then of the coefficient
    pairs) with c1 * t1 + c2 * t2 equal to ``gap``, as [(c1, m1), (c2, m2)]; None if none is.
    Each c2 * t2 is looked up by its numbers instead of trying every pair: about 700 products
    instead of 200,000 comparisons for a count of six sizes."""
    scaled: dict[tuple, list] = {}
    for j, (_m, v) in enumerate(products):
        for b, c in enumerate(coefficients):
            scaled.setdefault(tuple((c * v).tolist()), []).append((j, b))
    candidates = sorted((i, j, a, b) for i, (_m, v) in enumerate(products) for a, c in enumerate(coefficients)
                        for j, b in scaled.get(tuple((gap - c * v).tolist()), ()) if j > i)
    for i, j, a, b in candidates:           # confirmed as the sum itself, as the pair search did
        c1, c2 = coefficients[a], coefficients[b]
        if np.array_equal(gap, c1 * products[i][1] + c2 * products[j][1]):
            return [(c1, products[i][0]), (c2, products[j][0])]
    return None


def _term_words(c: int, m: tuple, names: list[str]) -> str:
    product = " * ".join(names[i] for i in m)
    times = {1: "", 2: "twice ", 3: "three times ", 4: "four times "}[abs(c)]
    return f"{times}`{product}` {'too many' if c > 0 else 'too few'}"
