"""The benchmark harness (benchmarks/) runs, in quick mode on one lab, and writes its JSON.

Only the shape of the results is checked here, never the timings."""

import json

from benchmarks.__main__ import run


def _is_stat(value):
    return (isinstance(value, dict) and set(value) == {"median_ms", "p95_ms", "n"}
            and value["n"] > 0 and value["p95_ms"] >= value["median_ms"] > 0)


def test_quick_run_on_one_lab_writes_its_table_as_json(tmp_path, capsys):
    results = run(["--quick", "--only", "labs", "--labs", "temperature", "--output", str(tmp_path),
                   "--no-docs"])
    saved = json.loads((tmp_path / "latest.json").read_text())
    assert saved == json.loads(json.dumps(results))
    assert len(list(tmp_path.glob("bench-*.json"))) == 1
    assert saved["quick"] is True and saved["sections_run"] == ["labs"]
    assert {"python", "numpy", "matplotlib", "cores"} <= set(saved["machine"])
    labs = saved["sections"]["labs"]
    assert {"labs", "target_ms", "target_ratio", "all_meet_targets", "missed", "profiles"} <= set(labs)
    (lab,) = labs["labs"]
    assert lab["lab"] == "start.temperature_lab"
    for key in ("update", "first_visit", "savefig", "naive", "naive_rebuild", "build"):
        assert _is_stat(lab[key]), key
    assert set(lab["first_slider"]) == {"update", "first_visit", "savefig", "naive"}
    assert lab["controls"] == [{"control": "temperature", "kind": "slider", "values": lab["update"]["n"],
                                "first_slider": True}]
    assert lab["speedup_vs_naive"] > 0 and lab["speedup_vs_savefig"] > 0
    assert isinstance(lab["meets_ms_target"], bool) and isinstance(lab["meets_ratio_target"], bool)
    for profile in labs["profiles"]:
        assert {"lab", "changes", "ms_per_change", "percent_of_time", "own_time_top"} <= set(profile)
    printed = capsys.readouterr().out
    assert "| start.temperature_lab |" in printed


def test_every_lab_of_the_lab_modules_is_found_with_its_controls():
    from benchmarks import labs

    found = labs.all_labs()
    assert "start.temperature_lab" in found and "norms.stack_lab" in found and "decoder.flow_lab" in found
    root = found["norms.stack_lab"]()
    kinds = [kind for kind, _widget in labs.controls(root)]
    assert kinds[0] == "slider" and "options" in kinds
