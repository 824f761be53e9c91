"""Slips in what the code reads: the example's own sizes written in, an argument changed as slips
change it (left out, negated, transposed, swapped with another, off by one), a default such as
``eps`` set otherwise."""

from __future__ import annotations

import numpy as np

from engine.presentation.numbers import exact, word_list

from .slips import SKIP, Slip, arg_name, as_numbers, input_sizes, is_count, reference


def example_only(ex, probes, numeric, close):
    """Right on the example above, wrong on every hidden test: the example's sizes written in."""
    visible = [p for p in probes if p.case.visible]
    hidden = [p for p in probes if not p.case.visible]
    if len(visible) != 1 or len(hidden) < 2:
        return
    got, exp = as_numbers(visible[0].got), as_numbers(visible[0].expected)
    if got is None or exp is None or got.shape != exp.shape or not close(got, exp, visible[0].case):
        return
    for p in hidden:
        g, e = as_numbers(p.got), as_numbers(p.expected)
        if g is not None and e is not None and g.shape == e.shape and close(g, e, p.case):
            return
    sizes = sorted({int(n) for a in visible[0].case.args for n in
                    (a.shape if isinstance(a, np.ndarray) else ([a] if is_count(a) else []))})
    written = f" (the example's sizes are {word_list(sizes)})" if sizes else ""
    yield Slip(f"Your function gives the right result on the example above and a wrong one on every "
               f"hidden test ({len(hidden)} of them): it depends on the example itself. Look for a size "
               f"or a number of the example written into your code{written} where it should be read "
               "from the input (its shape, its length, an argument).")


def _changes(ex, cases) -> list:
    """(argument number, change, words) for every change of an argument that slips make; a change
    is a function of the argument's value, or ("swap", j): argument j in its place."""
    found = []
    if not cases:
        return found
    first = cases[0]
    for i, arg in enumerate(first.args):
        name = arg_name(ex, i)
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
            found.append((i, lambda a: -a, f"with `-{name}` for `{name}` (a subtraction the wrong way "
                                           f"round, or a minus sign too many)"))
            if i == 0:
                continue
            found += [(i, np.ones_like, f"with `{name}` left out (as if it were all ones)"),
                      (i, np.zeros_like, f"with `{name}` left out (as if it were all zeros)"),
                      (i, np.abs, f"with `{name}` without its signs (`np.abs({name})`): its negative "
                                  f"numbers matter"),
                      (i, lambda a: a.T if a.ndim == 2 and a.shape[0] == a.shape[1] else SKIP,
                       f"with `{name}` transposed")]
            for j, other in enumerate(first.args):
                if j != i and isinstance(other, np.ndarray) and other.shape == arg.shape and other.dtype.kind == "f":
                    found.append((i, ("swap", j), f"with `{arg_name(ex, j)}` used where `{name}` was wanted"))
        elif isinstance(arg, np.ndarray) and arg.dtype.kind in "iu":
            found += [(i, lambda a: a - 1, f"with `{name} - 1` for `{name}` (one too low)"),
                      (i, lambda a: a + 1, f"with `{name} + 1` for `{name}` (one too high)")]
        elif is_count(arg):
            found += [(i, lambda v: v + 1, f"with `{name} + 1` for `{name}` (one too many, or counted from 1)"),
                      (i, lambda v: v - 1 if v >= 1 else SKIP, f"with `{name} - 1` for `{name}` (one too few)")]
            for j, other in enumerate(first.args):
                if j != i and is_count(other):
                    found.append((i, ("swap", j), f"with `{arg_name(ex, j)}` used where `{name}` was wanted"))
        elif isinstance(arg, list):
            found += [(i, lambda v: v[::-1] if len(v) > 1 else SKIP, f"with the items of `{name}` in reverse order"),
                      (i, lambda v: v[:-1] if v else SKIP, f"without the last item of `{name}`"),
                      (i, lambda v: v[1:] if v else SKIP, f"without the first item of `{name}`")]
        elif isinstance(arg, (str, bool)):
            values = {c.args[i] for c in cases if len(c.args) > i and isinstance(c.args[i], type(arg))}
            if isinstance(arg, bool):
                values = {True, False}
            for value in sorted(values, key=repr):
                found.append((i, lambda v, value=value: value,  # where it already is, the code must be right
                              f"with `{name}` = {value!r} whatever `{name}` is"))
    return found


def argument_changed(ex, probes, numeric, close):
    """The reference given one argument changed the way slips change it."""
    if ex.reference is None or not numeric:
        return
    for i, change, words in _changes(ex, [p.case for p in numeric]):
        def predict(p, i=i, change=change):
            args = list(p.case.args)
            if i >= len(args):
                return None
            new = args[change[1]] if isinstance(change, tuple) else change(args[i])
            if new is SKIP:
                return SKIP
            args[i] = new
            return reference(ex, p.case, *args, **p.case.kwargs)
        yield Slip(f"Your numbers are what the right computation gives {words}{{example}}.", predict)


def default(ex, probes, numeric, close):
    """The reference with a default argument set otherwise (eps missing, squared, fixed, ...)."""
    if ex.reference is None or ex.contract is None:
        return
    for name, value in ex.contract.defaults.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        given = lambda p, name=name, value=value: float(p.case.kwargs.get(name, value))  # noqa: E731
        tries = [(lambda v: 0.0, f"what {name} = 0 gives: {name} is missing, or where it changes nothing"),
                 (lambda v: v ** 2, f"what {name} squared gives"),
                 (lambda v: v ** 0.5, f"what the square root of {name} gives"),
                 (lambda v: 2 * v, f"what twice {name} gives: {name} is added twice"),
                 (lambda v: 10 * v, f"what ten times {name} gives"),
                 (lambda v: v / 10, f"what a tenth of {name} gives")]
        for c in sorted({float(value), 1e-3, 1e-6, 1e-8, 1e-10, 1e-12, 1.0}):
            tries.append((lambda v, c=c: c, f"what {name} = {exact(c)} gives, whatever {name} is "
                                            f"passed: use the argument `{name}`"))
        for change, words in tries:
            def predict(p, change=change, name=name, given=given):
                new = change(given(p))
                if new == given(p):
                    return None
                return reference(ex, p.case, *p.case.args, **{**p.case.kwargs, name: new})
            yield Slip(f"Your numbers are {words}{{example}}.", predict)


def example_size(ex, probes, numeric, close):
    """The expected numbers times a size over that size on the example (or the other way round):
    the example's size written into the code as a number."""
    visible = next((p for p in numeric if p.case.visible), None)
    if visible is None:
        return
    for code, written in input_sizes(visible.case, ex).items():
        if written <= 0:
            continue
        for power in (1, -1):
            def predict(p, code=code, power=power, written=written):
                n = input_sizes(p.case, ex).get(code)
                return None if n is None or n <= 0 else p.wanted * (n / written) ** power
            yield Slip(f"Your numbers are right where {code} is {int(written)}, as on the example "
                       f"above, and off by the factor {code} / {int(written)} elsewhere: the example's "
                       f"size {int(written)} is written into your code where it should be read from "
                       "the input (its shape, its length).", predict)
