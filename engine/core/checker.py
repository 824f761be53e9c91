"""Checking a learner's answer against the reference, and the feedback it gives.

:func:`evaluate` is pure: it runs the learner's function (or reads their value) on the
exercise's fixed cases and on random ones drawn for this very code, compares with the reference
and returns a :class:`Feedback`, plain data with a plain-text form. It records nothing and
displays nothing: ``check`` in :mod:`engine.notebook` records the result and shows it
(its HTML is built in :mod:`engine.ui.feedback`). :func:`evaluate_source` first runs the code
of the exercise's cell as the learner typed it (the review does this).

For every case the learner's function gets copies of the inputs (:mod:`engine.core.sandbox`),
within a time budget (:mod:`engine.core.budget`); after the call the copies are compared with
the untouched inputs, so a function that changes its argument does not pass. The same code always meets the
same random cases, so it gets the same verdict on every run.

A failed check names a known mistake only when the learner's code behaved like that mistake on
every fixed case (the same numbers, or an error where the mistake raises one); otherwise it says
what was observed and guesses nothing.

The parts: :mod:`engine.core.verdict` (the :class:`Feedback`), :mod:`engine.core.compare` (a
result against the reference's, in words), :mod:`engine.core.calls` (the learner's function run on
the cases), :mod:`engine.core.failures` (errors, timeouts, changed inputs), and
:mod:`engine.core.diagnose` (the slip a wrong result shows).
"""

from __future__ import annotations

import numpy as np

from engine.presentation import numbers

from . import diagnose
from .blank import contains_blank, mentions_blank
from .budget import OutOfTime
from .calls import MISSING, RAISED, Runner, agree, mistaken, reference, solved
from .cell import run_cell
from .compare import case_name, close, compare, describe, tolerance
from .definition import Case, Exercise
from .failures import STOP_A_RUNAWAY, STATE_HINT, changed_input, error, error_location, timeout
from .registry import get_exercise
from .sandbox import copied, same, seed_for
from .verdict import HEADLINES, Feedback


# ---------------------------------------------------------------- evaluate

def evaluate(exercise: Exercise | str, namespace: dict, rng=None) -> Feedback:
    """Check the learner's answer found in ``namespace``; returns the feedback.

    The random cases are drawn with ``rng`` when given; otherwise with a generator seeded from
    the exercise and the answer's code, so the same code always gets the same verdict."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    obj = namespace.get(ex.name, MISSING)
    if obj is MISSING:
        return Feedback(ex.id, "missing", [
            f"I cannot find `{ex.name}` yet. Run the exercise cell above "
            "(Shift+Enter), then run this check again."])
    if contains_blank(obj):
        return Feedback(ex.id, "blank", [
            "The blank `____` is still in place. Replace it with your code, run the "
            "exercise cell, then this check."])
    if ex.kind == "value":
        return _evaluate_value(ex, obj)
    return _evaluate_function(ex, obj, rng)


def _evaluate_value(ex: Exercise, got) -> Feedback:
    case = Case(args=(), label="your value", visible=True)
    exp = ex.expected()
    problem = compare(got, exp, case, ex)
    if problem is None:
        return Feedback(ex.id, "pass", [f"`{ex.name}` is right."], cases=1)
    problem.details = [d.replace("On the example above", f"For `{ex.name}`") for d in problem.details]
    for number, mistake in enumerate(ex.mistakes):
        try:
            if close(got, ex.mistaken(number), ex):
                problem.hint = mistake.hint
                break
        except Exception:  # noqa: BLE001 - a mistake whose code raises matches no value
            continue
    return problem


def _blank_feedback(ex: Exercise) -> Feedback:
    return Feedback(ex.id, "blank", [
        "Your function still holds a blank `____`. Replace it with code, run the exercise "
        "cell, then this check."])


def _evaluate_function(ex: Exercise, func, rng, fixed_only: bool = False) -> Feedback:
    if not callable(func):
        return Feedback(ex.id, "type", [
            f"`{ex.name}` should be a function, but it is {describe(func)}."])
    if rng is None:
        rng = np.random.default_rng(seed_for(ex.id, func))
    cases = ex.fixed_cases() if fixed_only else ex.cases(rng)
    run = Runner(ex, func)
    try:
        for index, case in enumerate(cases):
            problem = _judge(run, index, case)
            if problem is not None:
                if mentions_blank(func) or (problem.kind == "blank"):
                    return _blank_feedback(ex)
                if problem.kind in ("values", "shape", "nan", "none", "type", "error"):
                    _diagnose(problem, run, case)
                return problem
    except OutOfTime as over:
        if mentions_blank(func):
            return _blank_feedback(ex)
        return timeout(ex, over, case)
    fixed = sum(1 for c in cases if not c.random)
    if ex.without_loops:
        loops = diagnose.loops_in(func)
        if loops:
            return _loop_used(ex, loops, len(cases))
    return Feedback(ex.id, "pass", [
        f"{'All ' + numbers.plural(len(cases), 'test') if len(cases) > 1 else 'The one test'} passed: "
        f"{numbers.plural(fixed, 'fixed case')} and {numbers.plural(len(cases) - fixed, 'random one')} "
        "drawn for this code."], cases=len(cases))


def _loop_used(ex: Exercise, loops: list[tuple[int, str]], tests: int) -> Feedback:
    """Right numbers from code with a Python loop, where the exercise asks for none: not a pass
    (the skill the exercise names, the whole grid at once, is not shown), and said plainly."""
    lineno, line = loops[0]
    return Feedback(ex.id, "condition", [
        f"Your function gives the right numbers on all {numbers.plural(tests, 'test')}, but the "
        f"exercise asks for it without a loop, and your code loops in Python "
        f"({numbers.plural(len(loops), 'loop')}). The right numbers are a good start: now let "
        "NumPy do the looping."], hint=ex.without_loops, location=f"line {lineno}: {line}")


def _judge(run: Runner, index: int, case: Case) -> Feedback | None:
    ex = run.ex
    where = case_name(case)
    outcome = run.outcome(index, case)
    if outcome.changed:          # a change to the arguments comes first: it may be why the code failed
        return changed_input(ex, run, outcome, case, where)
    if outcome.error is not None:
        return error(ex, outcome.error, where)
    got = outcome.value
    if contains_blank(got):
        return Feedback(ex.id, "blank")
    problem = compare(got, reference(ex, case), case, ex)
    if problem is not None:
        return problem
    try:
        first = copied(got)
    except Exception:  # noqa: BLE001 - a result that cannot be copied is not followed further
        return None
    again = run.call(case)                       # the same input once more
    if again.error is not None or again.changed or not same(got, first) \
            or not agree(again.value, first, ex, case):
        return Feedback(ex.id, "state", [
            f"Called a second time with the same input ({where[0].lower() + where[1:]}), your "
            "function gave a different result."], hint=STATE_HINT)
    for earlier, value, kept in run.results:     # earlier results must stay as they were returned
        if not same(value, kept):
            return Feedback(ex.id, "state", [
                f"Your function changed the result it had returned for {case_name(earlier)} "
                f"when it was called again on {where}: the caller's earlier result is altered."],
                hint=STATE_HINT)
    run.results.append((case, got, first))
    return None


def _diagnose(fb: Feedback, run: Runner, failing: Case) -> None:
    """Name the known mistake the learner's code behaved like on every fixed case (and on the
    failing case); else the slip its results show (:func:`engine.core.diagnose.explain`);
    and say on which fixed cases it was right."""
    ex = run.ex
    fixed = ex.fixed_cases()
    probes = list(enumerate(fixed))
    if not any(failing is c for c in fixed):
        probes.append((len(fixed), failing))
    try:
        seen = [run.outcome(i, c).behaviour for i, c in probes]
    except OutOfTime:
        return
    for number, mistake in enumerate(ex.mistakes):
        if all(agree(got, mistaken(ex, number, case), ex, case)
               for got, (_i, case) in zip(seen, probes)):
            fb.hint = mistake.hint
            return
    observed = [diagnose.Probe(case, got, reference(ex, case)) for got, (_i, case) in zip(seen, probes)]
    if fb.kind in ("values", "shape", "nan"):       # an error, None or a wrong type says what to fix itself
        fb.hint = diagnose.explain(ex, observed[:len(fixed)], lambda a, b, case: close(a, b, ex, case)) \
            or diagnose.builtin_reduction(run.func)
    if fb.kind in ("values", "shape", "nan", "error"):      # where in the learner's own steps it goes wrong
        _locate(fb, run, observed[:len(fixed)])
    if fb.hint is None and fb.kind == "values":     # no slip fits: what the result observably is
        facts = diagnose.describe(ex, observed, lambda case: tolerance(ex, case), _rerun(run))
        if facts:
            fb.details.append(facts)
    fb.right = diagnose.settled(observed[:len(fixed)])
    wrong = [case for got, (_i, case) in zip(seen, probes[:len(fixed)])
             if got is RAISED or not agree(got, reference(ex, case), ex, case)]
    if wrong and len(wrong) < len(fixed):
        labels = ["the example" if c.visible else c.label for c in wrong]
        shown = labels[:4] + ([numbers.plural(len(labels) - 4, "other")] if len(labels) > 4 else [])
        listed = shown[0] if len(shown) == 1 else "; ".join(shown[:-1]) + " and " + shown[-1]
        fb.details.append(f"Of the {len(fixed)} fixed tests it gets {len(fixed) - len(wrong)} right; "
                          f"the ones it gets wrong: {listed}.")


def _locate(fb: Feedback, run: Runner, probes: list) -> None:
    """The first of the learner's steps (the names the cell assigns) that differs from the
    solution's, explained when a slip fits it: the hint when there is none yet, else a detail."""
    ex = run.ex
    names = diagnose.step_names(ex)
    try:
        solution = Runner(ex, solved(ex))
    except Exception:  # noqa: BLE001 - a solution that does not run names no step
        return
    if not names:                     # a function of one line: that line, changed as slips change it
        said = diagnose.wrong_line(ex, probes, solution.func, lambda a, b, case: close(a, b, ex, case))
        found = (said, True) if said else None
    else:
        found = diagnose.first_wrong_step(
            ex, probes, lambda case: run.steps(case, names), lambda case: solution.steps(case, names),
            solution.func, lambda a, b, case: close(a, b, ex, case), diagnose.explain)
    if found is None:
        return
    sentence, named = found
    if named and fb.hint is not None and fb.kind == "error":     # the step says why it raised
        fb.details.append(fb.hint)
        fb.hint = sentence
    elif named and fb.hint is None:
        fb.hint = sentence
    else:
        fb.details.append(sentence)


def _rerun(run: Runner):
    """The learner's function called once more on other arguments, for the diagnosis: its result,
    or None when it raises or runs out of time."""
    def call(args, kwargs):
        try:
            outcome = run.call(Case(tuple(args), "the same input, reordered", kwargs=dict(kwargs)))
        except OutOfTime:
            return None
        return None if outcome.error is not None or outcome.changed else outcome.value
    return call


def evaluate_source(exercise: Exercise | str, source: str, rng=None) -> Feedback:
    """Run ``source`` as the exercise's cell (after its context), then check it. Code that
    Python cannot read, or that fails while the cell runs, gives "error" feedback."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    try:
        namespace = run_cell(source, ex.context, ex.id)
    except SyntaxError as exc:
        return Feedback(ex.id, "error", [f"Python cannot read line {exc.lineno}: {exc.msg}."])
    except Exception as exc:  # noqa: BLE001 - the learner's code may raise anything
        return Feedback(ex.id, "error", [f"Running your code: {type(exc).__name__}: {exc}"],
                        location=error_location(exc))
    return evaluate(ex, namespace, rng=rng)


def evaluate_fixed(exercise: Exercise | str, namespace: dict) -> Feedback:
    """The verdict of the fixed cases alone (the tests use it to show that the fixed cases,
    not the random ones, reject a wrong answer)."""
    ex = get_exercise(exercise) if isinstance(exercise, str) else exercise
    obj = namespace.get(ex.name, MISSING)
    if obj is MISSING or contains_blank(obj) or ex.kind != "function":
        return evaluate(ex, namespace)
    return _evaluate_function(ex, obj, None, fixed_only=True)


__all__ = ["HEADLINES", "STOP_A_RUNAWAY", "Feedback", "error_location", "evaluate", "evaluate_fixed", "evaluate_source"]
