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
    assert {"labs", "png_settings", "target_ms", "target_p95_ms", "target_vs_naive", "target_vs_full",
            "all_meet_targets", "missed", "profiles"} <= set(labs)
    assert (labs["target_ms"], labs["target_p95_ms"], labs["target_vs_naive"], labs["target_vs_full"]) == (16.7, 33.3, 8.0, 4.0)
    (lab,) = labs["labs"]
    assert lab["lab"] == "start.temperature_lab"
    for key in ("update", "first_visit", "full", "naive", "naive_rebuild", "build", "encode"):
        assert _is_stat(lab[key]), key
    assert set(lab["first_slider"]) == {"update", "first_visit", "full", "naive"}
    assert lab["controls"] == [{"control": "temperature", "kind": "slider", "values": lab["update"]["n"],
                                "first_slider": True}]
    for visit in ("update", "first_visit"):
        assert lab["full_draws"][visit]["of"] == lab["update"]["n"]
        assert 0 <= lab["full_draws"][visit]["full"] <= lab["full_draws"][visit]["of"]
    assert lab["full_draws"]["update"]["full"] == 0               # the temperature lab only blits
    assert lab["speedup_vs_naive"] > 0 and lab["speedup_vs_full"] > 0
    assert isinstance(lab["meets_ms_target"], bool) and isinstance(lab["meets_ratio_target"], bool)
    settings = {p["setting"]: p for p in labs["png_settings"]}
    assert len(settings) == 3 and all(_is_stat(p["encode"]) and p["kb"] > 0 for p in settings.values())
    for profile in labs["profiles"]:
        assert {"lab", "changes", "ms_per_change", "percent_of_time", "own_time_top"} <= set(profile)
    printed = capsys.readouterr().out
    assert "| start.temperature_lab |" in printed and "PNG encoding" in printed


def test_the_webassembly_workload_runs_in_cpython_and_gives_its_times():
    from benchmarks import wasm

    scope = {}
    exec(wasm.workload(2), scope)                  # the same source Pyodide runs
    assert len(scope["times"]) == 2 and all(t > 0 for t in scope["times"])


def test_the_report_shows_full_draws_the_browser_estimate_and_the_drag():
    from benchmarks import report

    stat = {"median_ms": 10.0, "p95_ms": 12.0, "n": 5}
    lab = {"lab": "norms.stack_lab", "update": stat, "first_visit": stat, "full": {**stat, "median_ms": 50.0},
           "naive": {**stat, "median_ms": 120.0}, "naive_rebuild": stat, "encode": {**stat, "median_ms": 1.5},
           "first_slider": {}, "full_draws": {"update": {"full": 1, "of": 5}, "first_visit": {"full": 3, "of": 5}},
           "speedup_vs_naive": 12.0, "speedup_vs_full": 5.0, "meets_ms_target": True, "meets_ratio_target": True}
    results = {"sections": {
        "labs": {"labs": [lab], "png_settings": [], "target_ms": 16.7, "target_p95_ms": 33.3,
                 "target_vs_naive": 8.0, "target_vs_full": 4.0},
        "wasm": {"factor": 3.0, "cpython_ms": 20.0, "pyodide_ms": 60.0, "repeats": 5, "pyodide_version": "3.14.2",
                 "pyodide_package": "314.0.6", "cpython_version": "3.11.7", "node_version": "v20"},
        "browser": {"target_ms": 50.0, "drag_steps": 20, "drag_target_ms": 150.0,
                    "floor": {**stat, "median_ms": 7.5}, "labs": {"stack": {
                        **stat, "notebook": "03.ipynb", "meets_target": True, "above_floor_ms": 2.5,
                        "drag": {"settle": {**stat, "median_ms": 90.0}, "images": 4, "meets_target": True}}}}}}
    text = "\n".join(report.tables(results))
    assert "| norms.stack_lab | 5 | 10.0 | 12.0 | 1 of 5 (3 of 5) |" in text
    assert "| 1.5 | met |" in text                           # the PNG encoding, then the verdict
    assert "Pure-Python factor: **3.0**" in text and "| stack | 03.ipynb | 5 | 10.0 | 12.0 | 2.5 | met | 90.0 |" in text
    assert "| *floor* (nothing drawn) | – | 5 | 7.5 | 12.0 |" in text


def test_every_lab_of_the_lab_modules_is_found_with_its_controls():
    from benchmarks import labs

    found = labs.all_labs()
    assert "start.temperature_lab" in found and "norms.stack_lab" in found and "decoder.flow_lab" in found
    root = found["norms.stack_lab"]()
    kinds = [kind for kind, _widget in labs.controls(root)]
    assert kinds[0] == "slider" and "options" in kinds


def test_the_compiled_workload_runs_in_cpython_and_gives_each_parts_times():
    from benchmarks import wasm

    scope = {}
    exec(wasm.compiled(2), scope)                  # the same source Pyodide runs
    assert set(scope["parts"]) == {"zlib", "json", "re", "hashlib"}
    assert all(len(times) == 2 and all(t > 0 for t in times) for times in scope["parts"].values())
    assert "import hashlib" not in wasm.COMPILED   # OpenSSL's SHA-256 has no portable counterpart


def test_without_a_compiler_the_browsers_numpy_is_skipped_in_one_sentence(tmp_path, monkeypatch):
    from benchmarks import browser_estimate, noblas

    monkeypatch.setattr(noblas, "FOLDER", tmp_path)              # nothing built before
    monkeypatch.setattr(noblas, "compiler", lambda: None)
    found = browser_estimate.run(factor=2.0, quick=True, log=lambda _text: None)
    assert found == {"skipped": "No C compiler (cc, gcc or clang) was found to build NumPy without BLAS (e.g. "
                                "apt-get install build-essential), so the browser's NumPy is not measured."}
    assert "Skipped: No C compiler" in "\n".join(__import__("benchmarks.report").report.noblas_tables(found))


def test_a_wheel_that_has_blas_is_refused(tmp_path, monkeypatch):
    from benchmarks import noblas

    monkeypatch.setattr(noblas, "FOLDER", tmp_path)
    monkeypatch.setattr(noblas, "make_venv", lambda wheel, folder, log: folder / "python")
    monkeypatch.setattr(noblas, "describe", lambda python: {"version": "2.4.6", "blas": "scipy-openblas"})
    wheel = tmp_path / "numpy-2.4.6-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    try:
        noblas.ensure(wheel, log=lambda _text: None)
    except noblas.Unavailable as why:
        assert str(why).startswith(f"The NumPy in {wheel} is 2.4.6 with BLAS 'scipy-openblas'; the browser's is")
    else:
        raise AssertionError("a NumPy with BLAS was taken for the browser's")


def test_cells_are_numbered_as_jupyterlab_shows_them_after_run_all():
    from benchmarks.cells import code_cells

    notebook = {"cells": [{"cell_type": "markdown", "source": "# Title"},
                          {"cell_type": "code", "id": "a", "source": ["import numpy as np\n"]},
                          {"cell_type": "markdown", "source": "text"},
                          {"cell_type": "code", "id": "b", "source": "\n\nx = 1\ny = 2"}]}
    assert code_cells(notebook) == [{"cell": 1, "position": 2, "id": "a", "first_line": "import numpy as np"},
                                    {"cell": 2, "position": 4, "id": "b", "first_line": "x = 1"}]


def _noblas_section(factor):
    from benchmarks import browser_estimate

    stat = lambda ms: {"median_ms": ms, "p95_ms": ms * 1.2, "n": 4}               # noqa: E731
    section = {
        "numpy": {"openblas": {"version": "2.4.6", "blas": "scipy-openblas"}, "noblas": {"version": "2.4.6", "blas": "none"}},
        "factor": factor, "quick": False, "targets": {"cell_s": 2.0, "first_visit_ms": 100.0, "update_ms": 16.7},
        "labs": [{"lab": "trained.mismatch_lab",
                  "openblas": {"first_visit": stat(50.0), "update": stat(5.0), "first_visit_slowest_ms": 60.0},
                  "noblas": {"first_visit": stat(500.0), "update": stat(6.0), "first_visit_slowest_ms": 600.0},
                  "first_visit_flops_max": 2_638_872_576, "update_flops_max": 0}],
        "cells": [{"notebook": "05_trained_model.ipynb", "openblas_total_s": 0.5, "noblas_total_s": 3.1,
                   "cells": [{"cell": 1, "id": "a", "first_line": "import numpy as np", "openblas": [0.1, 0.2, 0.3],
                              "noblas": [0.1, 0.1, 0.1], "flops": 0},
                             {"cell": 2, "id": "b", "first_line": "table = mismatch | all", "openblas": [0.3],
                              "noblas": [3.0], "flops": 18_874_761_216}]}],
        "throughput": {"flops_per_s": 2_000_000_000, "flops": 10 ** 11, "seconds": 50.0,
                       "by_type": {"float32": 2_000_000_000}}}
    section["missed"] = browser_estimate.judge(section, factor)
    if factor:
        section["budgets"] = browser_estimate.budgets({"float32": 2_000_000_000, "float64": 500_000_000}, factor)
    return section


def test_the_browser_estimate_is_the_no_blas_median_times_the_factor_against_each_target():
    section = _noblas_section(2.0)
    lab, = section["labs"]
    assert (lab["first_visit_estimate_ms"], lab["first_visit_meets_target"]) == (1200.0, False)   # the slowest
    assert (lab["update_estimate_ms"], lab["update_meets_target"]) == (12.0, True)
    first, table = section["cells"][0]["cells"]
    assert (first["openblas_ms"], first["noblas_ms"], first["estimate_ms"], first["meets_target"]) == (200.0, 100.0, 200.0, True)
    assert (table["estimate_ms"], table["meets_target"]) == (6000.0, False)
    assert section["missed"] == [{"lab": "trained.mismatch_lab", "what": "first_visit", "estimate_ms": 1200.0},
                                 {"notebook": "05_trained_model.ipynb", "cell": 2, "estimate_ms": 6000.0}]
    # 2 s, 100 ms and 16.7 ms of the browser estimate: / 2.0 (the factor) x 2 GFLOP/s (float32), 0.5 (float64)
    assert section["budgets"] == {"cell": {"float32": 2_000_000_000, "float64": 500_000_000},
                                  "first_visit": {"float32": 100_000_000, "float64": 25_000_000},
                                  "update": {"float32": 16_700_000, "float64": 4_175_000}}
    assert _noblas_section(None)["cells"][0]["cells"][1]["meets_target"] is None        # no factor, no verdict


def test_the_report_shows_every_lab_and_the_cells_that_miss_beside_openblas():
    from benchmarks import report

    text = "\n".join(report.noblas_tables(_noblas_section(2.0)))
    assert ("| trained.mismatch_lab | 500 | 60.0 | 600 | 10.0× | 1200 | **missed** | 2,639 | 5.0 | 6.0 | 1.2× | 12.0 | "
            "met | 0 |" in text)
    assert "| 05_trained_model.ipynb | [2] | `table = mismatch / all` | 0.30 | 3.00 | 10.0× | 6.00 | **missed** | 18,875 |" in text
    assert "#### The cells that miss the target" in text and "<details><summary>05_trained_model.ipynb" in text
    assert ("a cell 2,000 MFLOP in float32 or 500 MFLOP in float64, a first visit 100 MFLOP in float32 or 25 MFLOP "
            "in float64, an update 17 MFLOP in float32 or 4 MFLOP in float64" in text)


def test_a_share_of_the_budget_adds_each_number_types_part():
    from benchmarks.browser_estimate import share

    budget = {"float32": 2_000, "float64": 500}
    assert share({"float32": [1_000, 0.1], "float64": [250, 0.2]}, budget) == 1.0
    assert share({"int64": 100}, budget) == 0.2                   # no budget of its own: the smallest
    assert share({}, budget) == 0


def test_the_browser_floor_swaps_two_ready_pictures_and_draws_nothing(tmp_path):
    from benchmarks import browser

    path = browser.write_floor_notebook(tmp_path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python"        # the course's kernel
    scope = {}
    exec("".join(notebook["cells"][0]["source"]), scope)
    image, slider, pictures = scope["image"], scope["slider"], scope["pictures"]
    assert image.format == "url" and bytes(pictures[0]).startswith(b"data:image/png;base64,")
    assert pictures[0] != pictures[1] and len(pictures[0]) > 10_000      # a whole lab's picture
    draws = scope["view"].renders
    assert image.value == pictures[slider.value % 2]                      # shown as the slider stands
    for value in (6, 7, 8, 7):
        slider.value = value
        assert image.value == pictures[value % 2]
    assert scope["view"].renders == draws                                 # nothing drawn on a key press


def test_the_model_table_shows_the_kept_memory_rows_and_how_the_calls_were_timed():
    from benchmarks import report

    stat = {"median_ms": 20.0, "p95_ms": 22.0, "n": 30}
    fast = {**stat, "median_ms": 5.0}
    model = {"tokens": 256, "torch_version": "2.13.0", "torch_threads": 2, "block": 5, "pause_s": 0.3,
             "numpy": stat, "torch_float32": fast, "torch_float64": fast, "threads": {"openblas": 2, "torch": 2},
             "numpy_over_torch_float32": 4.0, "numpy_over_torch_float64": 4.0,
             "max_abs_difference_vs_torch_float64": 1e-14, "target_ratio": 1.5, "meets_target": False,
             "kept_memory": {"numpy": {**stat, "median_ms": 10.0}, "torch_float32": fast, "torch_float64": fast,
                             "numpy_over_torch_float32": 2.0, "numpy_over_torch_float64": 2.0}}
    text = "\n".join(report.tables({"sections": {"model": model}}))
    assert "| NumPy (lib.model.forward), default threads, memory kept | 10.0 | 22.0 | fresh process |" in text
    assert "| PyTorch CPU float32, default threads, memory kept | 5.0 | 22.0 | NumPy / PyTorch = 2.0 |" in text
    assert "timed 5 calls in a row, after a pause of 0.3 s" in text and "**missed**" in text


def test_the_model_target_is_judged_with_memory_kept_when_that_was_measured():
    from benchmarks import report, system

    stat = {"median_ms": 5.0, "p95_ms": 6.0, "n": 60}
    default = {"tokens": 256, "torch_version": "2.13.0", "torch_threads": 2, "numpy": stat,
               "torch_float32": stat, "torch_float64": stat, "numpy_over_torch_float32": 2.1,
               "numpy_over_torch_float64": 1.2, "max_abs_difference_vs_torch_float32": 2e-5}
    kept = {**default, "kept_memory": {"numpy": stat, "torch_float32": stat, "torch_float64": stat,
                                       "numpy_over_torch_float32": 1.3, "numpy_over_torch_float64": 0.8}}
    assert system.judge_model(kept) == {"target_ratio": 1.5, "target_judged_on": "memory kept", "meets_target": True}
    assert system.judge_model(default)["meets_target"] is False
    text = "\n".join(report.tables({"sections": {"model": {**kept, **system.judge_model(kept)}}}))
    assert ("judged with memory kept, as in the browser: NumPy / PyTorch = 1.3; with the default allocator 2.1): met"
            in text)
    text = "\n".join(report.tables({"sections": {"model": {**default, **system.judge_model(default)}}}))
    assert "(default threads, same run; NumPy / PyTorch = 2.1): **missed**" in text
    assert "Largest difference of the logits from PyTorch's: float32 2.0e-05." in text


def test_model_timing_runs_each_function_in_rows_of_calls():
    from benchmarks import system

    order = []
    times = system._timed_blocks({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, 10)
    assert len(times["a"]) == len(times["b"]) == 10
    assert order == (["a"] * system.BLOCK + ["b"] * system.BLOCK) * 2


class _Handle:
    """A slider handle as the page shows it: its value and ends."""

    def __init__(self, now, low=0, high=10):
        self.values = {"aria-valuenow": str(now), "aria-valuemin": str(low), "aria-valuemax": str(high)}

    def get_attribute(self, name):
        return self.values[name]


def test_key_presses_go_two_right_two_left_and_turn_back_at_either_end():
    from benchmarks.browser import _next_key

    assert [_next_key(_Handle(5), i) for i in range(6)] == ["ArrowRight"] * 2 + ["ArrowLeft"] * 2 + ["ArrowRight"] * 2
    assert _next_key(_Handle(10), 0) == "ArrowLeft"          # at the right end: a right press changes nothing
    assert _next_key(_Handle(0), 2) == "ArrowRight"


def test_a_key_press_is_cut_into_stages_and_the_slowest_lab_set_beside_the_floor():
    from benchmarks.browser import STAGES, breakdown, stage_medians, stages

    marks = {"key": 1000.0, "busy": {"at": 1009.0, "date": 1004.0}, "picture": {"at": 1030.0, "date": 1016.0},
             "src": 1031.0, "load": 1034.0, "decoded": 1037.0, "frame": 1045.0}
    cut = stages(marks)
    assert list(cut) == [name for name, _ in STAGES]
    assert cut == {"to kernel": 4.0, "kernel": 12.0, "to page": 14.0, "to src": 1.0, "load": 3.0, "decode": 3.0,
                   "frame": 8.0}
    assert sum(cut.values()) == marks["frame"] - marks["key"]
    assert stages({**marks, "picture": None}) is None                    # the plot's message not seen
    floor = stage_medians([stages({**marks, "picture": {"at": 1020.0, "date": 1005.0}}), None])
    assert floor["kernel"] == 1.0 and floor["to page"] == 15.0
    out = {"floor": {"median_ms": 35.0, "stages": floor},
           "labs": {"fast": {"median_ms": 40.0, "stages": floor}, "slow": {"median_ms": 45.0, "stages": cut}}}
    told = breakdown(out)
    assert told["lab"] == "slow"
    assert told["stages"]["kernel"] == [12.0, 1.0, 11.0] and told["stages"]["to page"] == [14.0, 15.0, -1.0]


def test_each_lab_figure_is_the_least_of_its_runs_in_fresh_processes(monkeypatch):
    """A lab runs LAB_RUNS times under each interpreter, by turns, each in a fresh process; its
    first visits come from the run whose slowest first visit is least, its updates from the run
    whose median update is least (other work on the machine only ever adds time)."""
    from benchmarks import browser_estimate

    def result(slowest, median):
        return [{"first_visit": {"median_ms": slowest / 2}, "first_visit_slowest_ms": slowest,
                 "update": {"median_ms": median}, "update_slowest_ms": 3 * median}]

    answers = iter([result(40, 9), result(60, 5), result(30, 7), result(50, 4), result(35, 8), result(45, 6)])
    commands = []
    monkeypatch.setattr(browser_estimate, "_json_from", lambda command, env: commands.append(command[0]) or next(answers))
    pythons = {"openblas": ("python-a", {}), "noblas": ("python-b", {})}
    [row] = browser_estimate.time_labs(pythons, ["start.temperature_lab"], quick=False, log=lambda _t: None)
    assert browser_estimate.LAB_RUNS == 3 and row["runs"] == 3
    assert commands == ["python-a", "python-b"] * 3                          # by turns
    assert row["openblas"]["first_visit_slowest_ms"] == 30 and row["openblas"]["first_visit"]["median_ms"] == 15
    assert row["openblas"]["update"]["median_ms"] == 7 and row["openblas"]["update_slowest_ms"] == 21
    assert row["noblas"]["first_visit_slowest_ms"] == 45 and row["noblas"]["update"]["median_ms"] == 4
    answers = iter([result(40, 9), result(60, 5)])
    [row] = browser_estimate.time_labs(pythons, ["start.temperature_lab"], quick=True, log=lambda _t: None)
    assert row["runs"] == 1 and row["noblas"]["first_visit_slowest_ms"] == 60


def test_the_live_training_lab_is_timed_in_steps_a_second_and_frames():
    """A real (short) measurement in this interpreter: both placements train, and a frame of the
    running lab (its steps, then the redraw) is timed."""
    from benchmarks import training

    found = training.measure(quick=True)
    assert set(found["steps_per_second"]) == {"pre", "post"} and min(found["steps_per_second"].values()) > 0
    assert found["steps_per_frame"] == 3 and 0 < found["frame_median_ms"] <= found["frame_p95_ms"]


def test_the_live_training_estimate_divides_the_rate_and_multiplies_the_frame_by_the_factor():
    from benchmarks import training

    noblas = {"steps_per_second": {"pre": 300.0, "post": 250.0}, "steps_per_frame": 3,
              "frame_median_ms": 15.0, "frame_p95_ms": 20.0}
    judged = training.judge({"openblas": noblas, "noblas": noblas}, 2.0)
    assert judged["steps_per_second"] == {"pre": 150.0, "post": 125.0}
    assert (judged["frame_median_ms"], judged["frame_p95_ms"], judged["meets_target"]) == (30.0, 40.0, True)
    assert training.judge({"noblas": {**noblas, "frame_median_ms": 17.0}}, 2.0)["meets_target"] is False
    assert training.judge({"noblas": noblas}, None)["meets_target"] is None
