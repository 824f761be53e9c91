"""docs/performance.md as benchmarks/report.py renders it from benchmarks/report_template.md, for a
stored benchmark run (tests/data/benchmark_results.json, every section present) and for runs that
skipped sections or measured no WebAssembly factor."""

import copy
import json
import re
from pathlib import Path

import pytest

from benchmarks import report

RESULTS = json.loads((Path(__file__).resolve().parent / "data" / "benchmark_results.json").read_text(encoding="utf-8"))
HEADINGS = ["# Performance", "## Machine", "## Results",
            "### Labs (CPython, headless): control change to updated output, ms",
            "### PNG encoding, every lab's final picture, ms and kB",
            "### WebAssembly factors: the same workloads in Pyodide under Node and in CPython, ms",
            "### The browser's NumPy: every lab and every cell without BLAS, and the browser estimate",
            "#### Labs, ms", "#### The live-training lab at work (notebook 06)", "#### Notebooks: every code cell, solved, run top to bottom in a fresh kernel, s",
            "#### The cells that miss the target", "### In Chromium (local JupyterLab, CPython kernel), ms",
            "### Notebooks under nbval (whole pytest run), s", "### Site",
            "### A class opening the site at once (`./course serve` beside nginx, same run)",
            "### Imports in a fresh CPython process, ms",
            "### Trained model: forward pass over the held-out text (256 tokens), ms",
            "### Profiles of the labs that miss a target (cProfile, shipped way)"]


def _variants() -> dict[str, dict]:
    """The stored run, and runs that exercise the page's other wordings."""
    skipped = copy.deepcopy(RESULTS)
    skipped.update(quick=True, rerun={"labs": ["2026-12-02 12:00", [1.0, 1.5, 2.0]]})
    for name in ("wasm", "browser", "noblas"):
        skipped["sections"][name] = {"skipped": f"RuntimeError: no {name}"}
    skipped["sections"]["labs"]["profiles"] = []
    no_factor = copy.deepcopy(RESULTS)
    noblas = no_factor["sections"]["noblas"]
    noblas.update(factor=None, quick=True)
    for cell in noblas["cells"][0]["cells"]:
        cell["meets_target"] = None
    for key in ("budgets",):
        noblas.pop(key)
    no_factor["sections"]["browser"].pop("floor")
    for key in ("build", "preloaded"):
        no_factor["sections"]["site"].pop(key)
    for key in ("kept_memory", "block"):
        no_factor["sections"]["model"].pop(key)
    within = copy.deepcopy(RESULTS)
    for cell in within["sections"]["noblas"]["cells"][0]["cells"]:
        cell["meets_target"] = True
    within["sections"]["noblas"]["live_training"]["estimate"].update(frame_median_ms=40.2, meets_target=False)
    return {"stored": RESULTS, "skipped": skipped, "no factor": no_factor, "cells within": within}


def _tables(page: str) -> list[list[str]]:
    """The page's tables, each as its lines (header, separator, rows)."""
    return [block.split("\n") for block in re.findall(r"(?m)(?:^\|.*\|\n?)+", page)]


def test_the_page_has_its_sections_in_order():
    lines = report.markdown(RESULTS).split("\n")
    headings = [line for line in lines if line.startswith("#")]
    assert [h for h in headings if h in HEADINGS] == HEADINGS
    assert lines[-1] == "" and lines[-2] != ""                     # one newline at the end


@pytest.mark.parametrize("name", _variants())
def test_every_table_has_a_header_and_rows_of_its_width(name):
    page = report.markdown(_variants()[name])
    tables = _tables(page)
    assert len(tables) >= 5
    for table in tables:
        table = [line for line in table if line]
        width = table[0].count(" | ") + 1
        assert table[1] == "|" + "|".join(["---"] * width) + "|", table[:2]
        assert len(table) > 2 and all(row.count(" | ") + 1 == width for row in table[2:]), table


@pytest.mark.parametrize("name", _variants())
def test_no_placeholder_of_the_template_is_left_in_the_page(name):
    page = report.markdown(_variants()[name])
    assert not re.search(r"\$\{?[a-z_]+", page)


def test_the_figures_of_the_stored_run_are_in_their_tables():
    page = report.markdown(RESULTS)
    assert "Run: 2026-12-02 11:25 UTC, full run, 779 s in all. The browser section was run again" in page
    assert "The wasm and noblas sections were run again on their own at 2026-12-02 12:30 UTC" in page
    assert "| norms.stack_lab | 10 | 6.1 | 7.9 | 0 of 10 (2 of 10) |" in page
    assert "**missed** (≤ 16.7 ms, ratios) |" in page
    assert "| CPython 3.11.7 (this machine) | 20.0 | 19.0 | 45 |" in page
    assert "| trained.mismatch_lab | 500 | 60.0 | 600 | 10.0× | 1200 | **missed** | 2,639 |" in page
    assert "| *floor* (nothing drawn) | – | 5 | 7.5 | 9.8 |" in page
    assert "| **all, both forms** | **17.0 s in all** |  | met (≤ 90 s) |" in page
    assert "| **course adds in all, MB** | **1.45** | met (≤ 5 MB) |" in page
    assert "| PyTorch CPU float32, one thread each | 9.0 | 11.7 | NumPy / PyTorch = 3.3 |" in page
    assert "- **norms.stack_lab** (21.5 ms per change under the profiler): draw 50.0%, model 30.0%." in page
    assert "| browser estimate (× 1.99) | 241 | 251 | 19.9 | 24.9 |" in page
    assert "for the slowest lab (several-heads) beside the floor" in page
    assert "| to page | that message made to received in the page: the kernel's output, the server | 27.3 | 12.3 | 15.0 |" in page
    assert "3 steps and then a redraw per frame" in page and "a frame ≤ 33.3 ms" in page
    assert "The estimated frame meets the target." in page
    assert "**The estimated frame misses the target.**" in report.markdown(_variants()["cells within"])
    assert page.endswith(report.NOTES.read_text().strip() + "\n")


def test_a_run_without_a_factor_says_so_and_judges_no_cell():
    page = report.markdown(_variants()["no factor"])
    assert "(their table) (not measured in this run: no estimate). Targets on the estimate" in page
    assert "in millions. A quick run: one run of each notebook, fewer values." in page
    assert "The cells that miss the target" not in page and "Every cell's browser estimate" not in page


def test_skipped_sections_say_why_in_one_line():
    page = report.markdown(_variants()["skipped"])
    for name in ("wasm", "browser", "noblas"):
        assert f"Skipped: RuntimeError: no {name}\n" in page
    assert "The labs section was run again on its own" in page and "### Profiles" not in page


def test_every_part_of_the_template_is_used(monkeypatch):
    used = set()
    fill = report._text
    monkeypatch.setattr(report, "_text", lambda name, **values: used.add(name) or fill(name, **values))
    for results in _variants().values():
        report.markdown(results)
    assert used == set(report.PARTS)


def test_a_value_missing_from_the_template_fails_loudly():
    with pytest.raises(KeyError, match="total_s"):
        report._text("NOTEBOOKS", rows=[], verdict="met")
