"""Mutation testing of every exercise's check: each small change of an official solution (the
mutation engine's learner's slips, tools/mutation/: operators, axes, keepdims, constants, slice
bounds, argument order, dropped terms, swapped variables, in-place variants) must be rejected by
the exercise's fixed cases alone, so that it is rejected on every run whatever random cases are
drawn. A mutant that changes nothing a caller can see is listed, with the reason, in
tools/equivalent-mutants.txt; it must then pass, and a property-based search (Hypothesis) over
the exercise's own generator of random inputs must find no input on which it differs from the
reference.

The mutation score of each exercise is printed at the end of the run.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.core.cell import run_cell
from engine.core.checker import Feedback, evaluate
from engine.core.registry import all_exercises, get_exercise
from tools.mutation.generate import EQUIVALENTS as EQUIVALENTS_FILE
from tools.mutation.generate import load_equivalents
from tools.mutation.targets import judge, solution_mutants

EXERCISES = [ex for ex in all_exercises() if ex.kind == "function"]
IDS = [ex.id for ex in EXERCISES]
SCORES: dict[str, tuple[int, int, int]] = {}      # exercise id -> (mutants, killed, equivalent)
# {(exercise id, hash): reason} of the solutions' mutants listed as equivalent
EQUIVALENTS = {key: reason for key, reason in load_equivalents(EQUIVALENTS_FILE).items() if key[0] in set(IDS)}


def listed(mutant) -> bool:
    return (mutant.module, mutant.id.split(":")[-1]) in EQUIVALENTS


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@pytest.fixture(scope="module", autouse=True)
def _report(request):
    yield
    if not SCORES:
        return
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["", "Mutation scores of the exercise checks (killed by the fixed cases / non-equivalent):"]
    for ex_id, (total, killed, equivalent) in SCORES.items():
        score = 100.0 * killed / (total - equivalent) if total > equivalent else 100.0
        lines.append(f"  {ex_id:18} {total:4} mutants  {killed:4} killed  {equivalent:2} equivalent  "
                     f"{score:5.1f}%")
    totals = [sum(v[i] for v in SCORES.values()) for i in range(3)]
    lines.append(f"  {'all':18} {totals[0]:4} mutants  {totals[1]:4} killed  {totals[2]:2} equivalent")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        for line in lines:
            reporter.write_line(line)


def _namespace(ex, source):
    try:
        return run_cell(source, ex.context, ex.id), None
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot even run its cell is rejected
        return None, Feedback(ex.id, "error", [f"{type(exc).__name__}: {exc}"])


@pytest.mark.parametrize("ex_id", IDS)
def test_every_mutant_of_the_solution_is_rejected_by_the_fixed_cases(ex_id):
    ex = get_exercise(ex_id)
    found = solution_mutants(ex)
    assert len(found) >= 10, "the mutator found too few changes to try"
    survivors, wrongly_listed, killed, equivalent = [], [], 0, 0
    for mutant in found:
        fb = judge(ex, mutant.apply(ex.solution_source))
        if listed(mutant):
            equivalent += 1
            if not fb.passed:
                wrongly_listed.append(f"{mutant.id} is listed as equivalent but rejected: {fb.text()}")
        elif fb.passed:
            survivors.append(f"{mutant.id} (line {mutant.line}):\n{mutant.diff()}")
        else:
            killed += 1
    SCORES[ex.id] = (len(found), killed, equivalent)
    assert not survivors, "mutants that pass the fixed cases:\n\n" + "\n\n".join(survivors)
    assert not wrongly_listed, "\n".join(wrongly_listed)


def test_every_listed_equivalent_mutant_still_exists():
    existing = {(m.module, m.id.split(":")[-1]) for ex in EXERCISES for m in solution_mutants(ex)}
    stale = sorted(set(EQUIVALENTS) - existing)
    assert not stale, f"listed in {EQUIVALENTS_FILE.name} but no longer a mutant: {stale}"
    assert len(EQUIVALENTS) >= 10 and all(len(reason) > 20 for reason in EQUIVALENTS.values()), \
        "each needs its reason"


EQUIVALENT_MUTANTS = sorted(EQUIVALENTS)


@pytest.mark.parametrize("ex_id,digest", EQUIVALENT_MUTANTS)
def test_an_equivalent_mutant_agrees_with_the_reference_on_every_input_searched(ex_id, digest):
    ex = get_exercise(ex_id)
    mutant = next(m for m in solution_mutants(ex) if m.id.endswith(":" + digest))
    namespace, failed = _namespace(ex, mutant.apply(ex.solution_source))
    assert failed is None, failed.text()
    assert evaluate(ex, namespace).passed        # with the random cases this code is given

    @settings(max_examples=25, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(min_value=0, max_value=2 ** 63 - 1))
    def agrees(seed):
        fb = evaluate(ex, namespace, rng=np.random.default_rng(seed))
        assert fb.passed, fb.text()

    agrees()
