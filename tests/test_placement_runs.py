"""The placement runs (lib/trained/placement_runs.npz, written by training/placement_runs.py, read by
lib/placement_runs.py): current with the script's settings and list of runs, one run trained again
gives the stored curve, the outcomes are what the curves show, and what they show."""

import json

import numpy as np
import pytest
import torch

from lib import files, placement_runs
from training import placement_runs as script

RUNS = placement_runs.runs()


def test_the_file_is_served_beside_the_weights_and_small():
    from tools.wheel import served_files, source_files

    assert "placement_runs.npz" in {path.name for path in served_files().values()}
    assert "lib/trained/placement_runs.npz" not in source_files()
    assert (files.FOLDER / placement_runs.FILE).stat().st_size < 100_000


def test_the_file_is_current_with_the_script_s_settings_and_runs():
    assert RUNS.settings == json.loads(json.dumps(script.SETTINGS)), (
        "lib/trained/placement_runs.npz was written with other settings: run `.venv/bin/python -m training.placement_runs`")
    listed = list(zip(RUNS.variants.tolist(), RUNS.warmup.tolist(), RUNS.depths.tolist(), RUNS.seeds.tolist()))
    assert listed == [tuple(run) for run in script.runs()]
    assert set(RUNS.variants) == set(placement_runs.VARIANTS) == set(script.VARIANTS)
    points = script.SETTINGS["steps"] // script.SETTINGS["every"]
    assert RUNS.curves.shape == (len(listed), points) and RUNS.steps.tolist() == list(range(10, 10 * points + 1, 10))
    text = script.training_text()
    assert RUNS.unigram_loss == pytest.approx(script.unigram_loss(text), rel=1e-12) == pytest.approx(3.569, abs=1e-3)
    assert RUNS.bigram_loss == pytest.approx(script.bigram_loss(text), rel=1e-12) == pytest.approx(1.939, abs=1e-3)
    assert RUNS.seconds.shape == (len(listed),) and (RUNS.seconds > 0).all()


def test_one_run_trained_again_gives_the_stored_curve():
    """The cheapest run (2 blocks), trained again with the script's own function and settings."""
    torch.set_num_threads(script.SETTINGS["threads"])
    torch.use_deterministic_algorithms(True)
    try:
        row = RUNS.index("pre", False, 2, 1)
        curve = script.train("pre", False, 2, 1, script.training_text())
    finally:
        torch.use_deterministic_algorithms(False)
    np.testing.assert_allclose(curve, RUNS.curves[row], rtol=1e-5)


def test_outcomes_follow_the_curves():
    b = 1.9
    assert placement_runs.outcome([4.0, 3.9, 3.6, 3.4, 3.4, 3.4, 3.4], b) == "stalled"
    assert placement_runs.outcome([4.0, 3.0, 2.0, 1.8, 2.0, 2.0, 2.0], b) == "stalled"      # the last 5: 1.96
    assert placement_runs.outcome([4.0, 3.0, 2.0, 1.5, 1.5, 1.5, 1.5], b) == "learned"
    assert placement_runs.outcome([4.0, 3.0, np.nan, np.nan, np.nan, np.nan, np.nan], b) == "diverged"
    assert placement_runs.final_loss([9, 1, 2, 3, 4, 5]) == 3.0
    rows = placement_runs.summary()
    assert len(rows) == len(set(zip(RUNS.variants, RUNS.warmup, RUNS.depths)))
    for row in rows:
        assert sum(row.outcomes.values()) == len(script.SEEDS)
    with pytest.raises(ValueError, match="no run of 'pre', warm-up True, depth 99"):
        RUNS.index("pre", True, 99, 1)


def finals(variant, warmup, depth):
    return [round(placement_runs.final_loss(RUNS.curves[RUNS.index(variant, warmup, depth, seed)]), 2)
            for seed in script.SEEDS]


def reached(variant, warmup, depth, level=2.5):
    return [placement_runs.steps_to(RUNS.curves[RUNS.index(variant, warmup, depth, seed)], level) for seed in script.SEEDS]


def test_post_norm_without_warm_up_stalls_at_depth_and_the_rest_learn():
    """What lib/placement_runs.py's docstring says, from the stored curves."""
    rows = {(s.variant, s.warmup, s.depth): s for s in placement_runs.summary()}
    assert sum(s.outcomes["diverged"] for s in rows.values()) == 0
    assert rows["post", False, 12].outcomes == {"learned": 1, "stalled": 2, "diverged": 0}
    assert finals("post", False, 12) == [3.27, 3.39, 1.72] and reached("post", False, 12) == [None, None, 270]
    assert finals("post", True, 12) == [1.64, 1.68, 1.55] and reached("post", True, 12) == [230, 250, 210]
    others = [s for key, s in rows.items() if key != ("post", False, 12)]
    assert all(s.outcomes["learned"] == 3 for s in others)
    assert reached("pre", False, 12) == [60, 70, 70] and finals("pre", False, 12) == [1.41, 1.40, 1.40]
    assert reached("pre", True, 12) == [130, 130, 140]
    assert reached("damped", False, 12) == [40, 50, 50] and rows["damped", False, 12].final == pytest.approx(1.42, abs=0.005)
    assert rows["rezero", False, 12].final == pytest.approx(1.46, abs=0.005)
    assert round(RUNS.bigram_loss, 2) == 1.94 and round(RUNS.unigram_loss, 2) == 3.57
