"""The results as tables (Markdown, which reads well in a terminal too) and docs/performance.md."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTES = Path(__file__).resolve().parent / "NOTES.md"


def _ms(s: dict | None, key="median_ms") -> str:
    if not s or s.get(key) is None:
        return "–"
    v = s[key]
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def _s(s: dict | None) -> str:
    return "–" if not s or s.get("median_ms") is None else f"{s['median_ms'] / 1000:.1f}"


def _ok(flag) -> str:
    return "–" if flag is None else ("met" if flag else "**missed**")


def _x(value) -> str:
    return "–" if value is None else f"{value:.1f}×"


def _table(header, rows) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _model_target(m: dict) -> str:
    """The model's target sentence: which rows it is judged on, their ratio, met or missed."""
    kept = m.get("kept_memory")
    where = (f"judged with memory kept, as in the browser: NumPy / PyTorch = {kept['numpy_over_torch_float32']}; "
             f"with the default allocator {m['numpy_over_torch_float32']}" if kept and m.get("target_judged_on") == "memory kept"
             else f"NumPy / PyTorch = {m['numpy_over_torch_float32']}")
    return (f"Target within {m.get('target_ratio', 1.5)}× of PyTorch CPU float32 (default threads, same run; "
            f"{where}): {_ok(m['meets_target'])}.")


def _sec(ms) -> str:
    return "–" if ms is None else f"{ms / 1000:.2f}"


def _mflop(flops) -> str:
    if flops is None:
        return "–"
    return "0" if flops == 0 else ("< 1" if flops < 1e6 else f"{flops / 1e6:,.0f}")


def _verdict(flag) -> str:
    return "–" if flag is None else ("met" if flag else "**missed**")


def _runs(section: dict) -> str:
    """How many times each lab was run: "once", "twice", "3 times" (1 for results that do not say)."""
    runs = max((r.get("runs", 1) for r in section.get("labs", [])), default=1)
    return {1: "once", 2: "twice"}.get(runs, f"{runs} times")


def noblas_tables(n: dict, every_cell: bool = True) -> list[str]:
    """The browser's NumPy: labs, cells (those that miss, a summary per notebook, and every cell
    when ``every_cell``), the throughput and the budgets."""
    out = ["### The browser's NumPy: every lab and every cell without BLAS, and the browser estimate", ""]
    if "skipped" in n:
        return out + [f"Skipped: {n['skipped']}", ""]
    t = n["targets"]
    nb = n["numpy"]["noblas"]
    factor = n.get("factor")
    out += [f"NumPy {nb['version']} built from source with BLAS {nb['blas']} (as Pyodide builds it) against "
            f"PyPI's NumPy {n['numpy']['openblas']['version']} with OpenBLAS, one BLAS thread, same run, in turns. "
            "*Browser estimate*: the no-BLAS median × the larger of the two WebAssembly factors (their table)"
            + (f" ({factor})." if factor else " (not measured in this run: no estimate).")
            + f" Targets on the estimate: a lab's first visit ≤ {t['first_visit_ms']:g} ms, an update ≤ "
            f"{t['update_ms']:g} ms (one frame), a notebook cell ≤ {t['cell_s']:g} s. *Matrix work*: the "
            "floating-point operations of the matrix products counted in the largest change of that kind "
            "(`benchmarks/flops.py`), in millions." + (" A quick run: one run of each notebook, fewer values."
                                                     if n.get("quick") else ""), ""]
    rows = []
    for r in n["labs"]:
        o, b = r["openblas"], r["noblas"]
        first = [{"median_ms": x.get("first_visit_slowest_ms")} for x in (o, b)]
        rows.append([r["lab"], _ms(b["first_visit"]), _ms(first[0]), _ms(first[1]), _x(stat_ratio(first[1], first[0])),
                     _ms({"median_ms": r.get("first_visit_estimate_ms")}), _verdict(r.get("first_visit_meets_target")),
                     _mflop(r.get("first_visit_flops_max")),
                     _ms(o["update"]), _ms(b["update"]), _x(stat_ratio(b["update"], o["update"])),
                     _ms({"median_ms": r.get("update_estimate_ms")}), _verdict(r.get("update_meets_target")),
                     _mflop(r.get("update_flops_max"))])
    out += ["#### Labs, ms", "",
            "A lab's *first visits* are judged on the slowest (a learner meets each setting's first visit "
            "once), its *updates* on their median (as the labs table above judges them). Each lab is run "
            f"{_runs(n)} in fresh processes of each interpreter, by turns, and each figure is the least "
            "of its runs: other work on the machine only ever adds time.", ""]
    out += _table(["lab", "first visit, median without BLAS", "slowest, OpenBLAS", "slowest, no BLAS", "ratio",
                   "browser estimate", f"≤ {t['first_visit_ms']:g} ms", "matrix work, MFLOP",
                   "update, median, OpenBLAS", "no BLAS", "ratio", "browser estimate", f"≤ {t['update_ms']:g} ms",
                   "matrix work, MFLOP"], rows) + [""]
    out += ["#### Notebooks: every code cell, solved, run top to bottom in a fresh kernel, s", "",
            "A cell is named by its place in the notebook, every cell counted from 1, and in brackets by "
            "the number JupyterLab shows beside it after *Run All* in a fresh kernel.", ""]
    rows = []
    for notebook in n["cells"]:
        cells = notebook["cells"]
        slowest = max(cells, key=lambda c: c.get("noblas_ms") or 0, default=None)
        misses = [c for c in cells if c.get("meets_target") is False]
        rows.append([notebook["notebook"], len(cells), f"{notebook['openblas_total_s']:.2f}",
                     f"{notebook['noblas_total_s']:.2f}",
                     f"{_cell(slowest)}: {_sec(slowest.get('noblas_ms'))}" if slowest else "–",
                     len(misses) if factor else "–"])
    out += _table(["notebook", "code cells", "all cells, OpenBLAS", "no BLAS", "slowest cell without BLAS",
                   f"cells over {t['cell_s']:g} s (estimate)"], rows) + [""]
    missed = [(notebook["notebook"], c) for notebook in n["cells"] for c in notebook["cells"]
              if c.get("meets_target") is False]
    cell_header = ["cell", "begins with", "OpenBLAS", "no BLAS", "ratio", "browser estimate",
                   f"≤ {t['cell_s']:g} s", "matrix work, MFLOP"]

    def cell_row(c):
        return [_cell(c), f"`{c['first_line'].replace('|', '/')}`", _sec(c.get("openblas_ms")),
                _sec(c.get("noblas_ms")), _x(stat_ratio({"median_ms": c.get("noblas_ms")}, {"median_ms": c.get("openblas_ms")})),
                _sec(c.get("estimate_ms")), _verdict(c.get("meets_target")), _mflop(c.get("flops"))]

    if missed:
        out += ["#### The cells that miss the target", ""]
        out += _table(["notebook"] + cell_header, [[nb] + cell_row(c) for nb, c in missed]) + [""]
    elif factor:
        out += [f"Every cell's browser estimate is within {t['cell_s']:g} s.", ""]
    if every_cell:
        for notebook in n["cells"]:
            out += [f"<details><summary>{notebook['notebook']}: every cell</summary>", ""]
            out += _table(cell_header, [cell_row(c) for c in notebook["cells"]]) + ["", "</details>", ""]
    tp = n.get("throughput") or {}
    if tp.get("flops_per_s"):
        kinds = ", ".join(f"{k} {v / 1e9:.2f}" for k, v in sorted(tp["by_type"].items()))
        out += [f"**No-BLAS throughput**: {tp['flops_per_s'] / 1e9:.2f} GFLOP/s, the {tp['flops'] / 1e9:,.1f} GFLOP "
                f"of every matrix product of every lab change and every cell over their {tp['seconds']:.1f} s, "
                f"each product timed on its own ({kinds} GFLOP/s by number type)."]
        if n.get("budgets"):
            b = n["budgets"]

            def each(kind):
                return " or ".join(f"{v / 1e6:,.0f} MFLOP in {k}" for k, v in b[kind].items())
            out[-1] += (f" **Budgets** (the most matrix work that fits in a target under the browser estimate: "
                        f"the target ÷ the factor {n['factor']} × the throughput of its number type): a cell "
                        f"{each('cell')}, a first visit {each('first_visit')}, an update {each('update')}; "
                        "`tests/test_matrix_budget.py` holds every cell and lab change to them "
                        "(`benchmarks/budget.json`).")
        out += [""]
    return out


def _cell(c: dict) -> str:
    """A cell as the tables name it: its place among all cells, and [its number after Run All]."""
    return f"{c['position']} ([{c['cell']}])" if c.get("position") else f"[{c['cell']}]"


def stat_ratio(slow: dict, fast: dict):
    if not slow or not fast or not slow.get("median_ms") or not fast.get("median_ms"):
        return None
    return slow["median_ms"] / fast["median_ms"]


def tables(results: dict) -> list[str]:
    out = []
    s = results["sections"]
    if "labs" in s:
        L = s["labs"]
        out += ["### Labs (CPython, headless): control change to updated output, ms", ""]
        out += [f"Targets: median ≤ {L.get('target_ms', 16.7)} ms (one frame at 60 Hz) and p95 ≤ "
                f"{L.get('target_p95_ms', 33.3)} ms; at least {L.get('target_vs_naive', 8)}× faster than the naive "
                f"`interact` rebuild and {L.get('target_vs_full', 4)}× faster than a full draw on every change. "
                "*Full draws* counts the updates that drew the whole figure (the others restored the cached "
                "background and drew only the changing artists), in the measured pass and, in brackets, "
                "on the first visit of each value. What these labs would take in the browser, with its NumPy, "
                "is estimated in the table of the browser's NumPy below.", ""]
        rows = []
        for r in L["labs"]:
            fd = r.get("full_draws", {})
            upd, fv = fd.get("update", {}), fd.get("first_visit", {})
            missed = [x for x, ok in ((f"≤ {L.get('target_ms', 16.7)} ms", r["meets_ms_target"]),
                                      ("ratios", r["meets_ratio_target"])) if not ok]
            rows.append([r["lab"], r["update"]["n"], _ms(r["update"]), _ms(r["update"], "p95_ms"),
                         f"{upd.get('full', '–')} of {upd.get('of', '–')} ({fv.get('full', '–')} of {fv.get('of', '–')})",
                         _ms(r["first_visit"]), _ms(r.get("full")), _ms(r["naive"]),
                         _x(r["speedup_vs_naive"]), _x(r.get("speedup_vs_full")), _ms(r.get("encode")),
                         "met" if not missed else "**missed** (" + ", ".join(missed) + ")"])
        out += _table(["lab", "changes", "median", "p95", "full draws", "first visit median", "full-draw way median",
                       "naive median", "vs naive", "vs full draw", "PNG encoding median", "target"], rows)
        out += [""]
        if L.get("load_average_after"):
            out += [f"Load average when the labs section ended: {L['load_average_after']}.", ""]
        if L.get("png_settings"):
            out += ["### PNG encoding, every lab's final picture, ms and kB", ""]
            out += _table(["way of writing the PNG", "median", "p95", "mean size, kB"],
                          [[p["setting"], _ms(p["encode"]), _ms(p["encode"], "p95_ms"), p["kb"]]
                           for p in L["png_settings"]]) + [""]
    if "wasm" in s:
        w = s["wasm"]
        out += ["### WebAssembly factors: the same workloads in Pyodide under Node and in CPython, ms", ""]
        if "skipped" in w:
            out += [f"Skipped: {w['skipped']}", ""]
        else:
            fastest = lambda key: _ms({"median_ms": w.get(key)})          # noqa: E731
            out += _table(["runtime", "median", "fastest", "runs"],
                          [[f"CPython {w['cpython_version']} (this machine)", _ms({"median_ms": w["cpython_ms"]}),
                            fastest("cpython_fastest_ms"), w["repeats"]],
                           [f"Pyodide {w['pyodide_version']} (npm pyodide@{w['pyodide_package']}, Node {w['node_version']})",
                            _ms({"median_ms": w["pyodide_ms"]}), fastest("pyodide_fastest_ms"), w["repeats"]]])
            out += ["", f"Pure-Python factor: **{w['factor']}** (Pyodide / CPython, fastest run over fastest run: "
                    "medians move with the machine's load)."]
            if "compiled_parts" in w:
                out += ["", "Compiled code called from Python, no NumPy, ms:", ""]
                out += _table(["part", "CPython, median", "fastest", "Pyodide, median", "fastest", "factor"],
                              [[name, _ms({"median_ms": p["cpython_ms"]}), _ms({"median_ms": p.get("cpython_fastest_ms")}),
                                _ms({"median_ms": p["pyodide_ms"]}), _ms({"median_ms": p.get("pyodide_fastest_ms")}),
                                p["factor"]] for name, p in w["compiled_parts"].items()])
                out += ["", f"Compiled-code factor: **{w['compiled_factor']}** (the geometric mean of the parts' "
                        f"factors). The browser estimates use the larger factor, **{w['estimate_factor']}**."]
            out += [""]
    if "noblas" in s:
        out += noblas_tables(s["noblas"])
    if "browser" in s:
        b = s["browser"]
        out += ["### In Chromium (local JupyterLab, CPython kernel), ms", ""]
        if "skipped" in b:
            out += [f"Skipped: {b['skipped']}", ""]
        else:
            out += ["Key press: one arrow key on the lab's first slider to the new plot on screen. Drag: "
                    f"{b.get('drag_steps', 20)} steps of the slider sent as fast as the page takes them; *settles* is the "
                    "time from the last step to the plot showing the last value, *images* how many plots "
                    "the page showed during the drag (ipywidgets drops values superseded while one is in flight).", ""]
            floor = b.get("floor")
            if floor:
                out += ["*Floor*: the same key press on a slider that only swaps one ready-made picture of a "
                        "lab's size for another, sent as the labs send theirs, with nothing computed or drawn: "
                        "what the page, the server and the kernel's messages cost on their own. *Above the "
                        "floor* is the lab's median minus the floor's, both from this run.", ""]
            rows = []
            if floor:
                rows.append(["*floor* (nothing drawn)", "–", floor["n"], _ms(floor), _ms(floor, "p95_ms"), "–",
                             "–", "–", "–", "–", "–"])
            for name, r in b["labs"].items():
                d = r.get("drag") or {}
                above = f"{r['above_floor_ms']:.1f}" if "above_floor_ms" in r else "–"
                rows.append([name, r["notebook"], r["n"], _ms(r), _ms(r, "p95_ms"), above, _ok(r["meets_target"]),
                             _ms(d.get("settle")), _ms(d.get("settle"), "p95_ms"), d.get("images", "–"),
                             _ok(d.get("meets_target"))])
            out += _table(["lab", "notebook", "presses", "key press median", "p95", "above the floor",
                           f"≤ {b.get('target_ms', 50)} ms", "drag settles, median", "p95",
                           "images per drag (median)", f"≤ {b.get('drag_target_ms', 150)} ms"], rows) + [""]
    if "notebooks" in s:
        n = s["notebooks"]
        out += ["### Notebooks under nbval (whole pytest run), s", ""]
        rows = [[r["notebook"], _s(r["shipped"]), _s(r["solved"]),
                 "yes" if r["shipped"]["passed"] and r["solved"]["passed"] else "**no**"] for r in n["notebooks"]]
        rows.append(["**all, both forms**", f"**{n['total_s']} s in all**", "", _ok(n["meets_target"]) + " (≤ 90 s)"])
        out += _table(["notebook", "shipped", "solved", "passed"], rows) + [""]
    if "site" in s:
        site = s["site"]
        out += ["### Site", ""]
        rows = []
        if "build" in site:
            rows.append(["`jupyter lite build` (tools.site.build), s", _s(site["build"]), ""])
            rows.append(["whole site, MB", f"{site['site_bytes'] / 1e6:.1f}", "mostly JupyterLab's own files"])
        for label, size in site["course_adds"].items():
            rows.append([f"course adds: {label}, kB", f"{size / 1e3:.0f}", ""])
        rows.append(["**course adds in all, MB**", f"**{site['course_adds_bytes'] / 1e6:.2f}**",
                     _ok(site["meets_target"]) + " (≤ 5 MB)"])
        pre = site.get("preloaded")
        if pre:
            for label, size in pre["parts"].items():
                rows.append([f"loaded before notebook 00's first cell runs: {label}, kB", f"{size / 1e3:.0f}", ""])
            rows.append(["**the course's own bytes before notebook 00's first cell runs, kB**",
                         f"**{pre['bytes'] / 1e3:.0f}**",
                         _ok(site.get("preload_meets_target")) + f" (≤ {site.get('preload_target_bytes', 600_000) / 1e3:.0f} kB)"])
        out += _table(["what", "value", "note"], rows) + [""]
    if "classroom" in s:
        from .classroom import table as classroom_table
        out += ["### A class opening the site at once (`./course serve` beside nginx, same run)", ""]
        out += classroom_table(s["classroom"])[1:] + [""]
    if "imports" in s:
        imp = s["imports"]
        out += ["### Imports in a fresh CPython process, ms", ""]
        rows = [[f"`{label}`", _ms(r), _ms(r, "p95_ms"), r["n"]] for label, r in imp["imports"].items()]
        out += _table(["statement", "median", "p95", "runs"], rows)
        out += ["", f"Target `import lib, labs` ≤ 500 ms: {_ok(imp['meets_target'])}.", ""]
    if "model" in s:
        m = s["model"]
        out += [f"### Trained model: forward pass over the held-out text ({m['tokens']} tokens), ms", ""]
        rows = []
        for prefix, label in (("", "default threads"), ("one_thread_", "one thread each")):
            if prefix + "numpy" not in m:
                continue
            t = m.get(prefix + "threads", {})
            rows += [[f"NumPy (lib.model.forward), {label}", _ms(m[prefix + "numpy"]), _ms(m[prefix + "numpy"], "p95_ms"),
                      f"OpenBLAS threads {t.get('openblas', '?')}"],
                     [f"PyTorch CPU float32, {label}", _ms(m[prefix + "torch_float32"]),
                      _ms(m[prefix + "torch_float32"], "p95_ms"), f"NumPy / PyTorch = {m[prefix + 'numpy_over_torch_float32']}"],
                     [f"PyTorch CPU float64, {label}", _ms(m[prefix + "torch_float64"]),
                      _ms(m[prefix + "torch_float64"], "p95_ms"), f"NumPy / PyTorch = {m[prefix + 'numpy_over_torch_float64']}"]]
        kept = m.get("kept_memory")
        if kept:
            rows += [["NumPy (lib.model.forward), default threads, memory kept", _ms(kept["numpy"]),
                      _ms(kept["numpy"], "p95_ms"), "fresh process"],
                     ["PyTorch CPU float32, default threads, memory kept", _ms(kept["torch_float32"]),
                      _ms(kept["torch_float32"], "p95_ms"), f"NumPy / PyTorch = {kept['numpy_over_torch_float32']}"],
                     ["PyTorch CPU float64, default threads, memory kept", _ms(kept["torch_float64"]),
                      _ms(kept["torch_float64"], "p95_ms"), f"NumPy / PyTorch = {kept['numpy_over_torch_float64']}"]]
        if "block" in m:
            out += [f"Each library is timed {m['block']} calls in a row, after a pause of {m['pause_s']} s, in turn "
                    "(not one call each by turns: a library's worker threads keep spinning for a while after a "
                    "call and, on a machine with few cores, slow the other library's next call)."
                    + (" *Memory kept*: the same, in a fresh process whose allocator keeps the memory it frees, "
                       "as WebAssembly's memory in the browser is kept (glibc otherwise returns large freed "
                       "blocks and maps new pages for the next large array)." if kept else ""), ""]
        out += _table(["forward", "median", "p95", "ratio"], rows)
        differences = ", ".join(f"{kind} {m[f'max_abs_difference_vs_torch_{kind}']:.1e}"
                                for kind in ("float32", "float64") if f"max_abs_difference_vs_torch_{kind}" in m)
        out += ["", f"PyTorch {m['torch_version']} ({m['torch_threads']} threads by default). Largest difference "
                f"of the logits from PyTorch's: {differences}. " + _model_target(m), ""]
    return out


def machine_lines(m: dict) -> list[str]:
    blas = m.get("blas") or [{}]
    build = ", ".join(str(blas[0].get(k)) for k in ("name", "version") if blas[0].get(k)) or "unknown"
    env = ", ".join(f"{k}={v}" for k, v in m.get("blas_env", {}).items()) or "none set"
    return [f"- CPU: {m.get('cpu', 'unknown')}, {m.get('cores')} cores ({m.get('cores_usable', '?')} usable), "
            f"{m.get('memory_gb', '?')} GB memory; load average at start {m.get('load_average_at_start')} "
            "(1, 5 and 15 minutes)",
            f"- {m.get('platform')}",
            f"- Python {m['python']}, numpy {m['numpy']}, matplotlib {m['matplotlib']}, "
            f"ipywidgets {m.get('ipywidgets', '?')}, Pillow {m.get('pillow', '?')}",
            f"- BLAS: {build}; at run time OpenBLAS reports \"{m.get('blas_config', 'unknown').strip()}\" and "
            f"{m.get('blas_threads', 'unknown')} threads; thread variables in the environment: {env}"]


def markdown(results: dict) -> str:
    lines = ["# Performance", "",
             "Regenerated by `./course bench` (`python -m benchmarks`); do not edit by hand. The findings at the",
             "end come from `benchmarks/NOTES.md`. Each figure is the median (and 95th percentile) over",
             "repeated runs; each ratio compares two figures measured in the same run on the same machine.",
             "How each figure is measured is described in `benchmarks/` (module docstrings).", "",
             f"Run: {results['started']} UTC, {'quick' if results['quick'] else 'full'} run, "
             f"{results['seconds']:.0f} s in all."]
    for section, (started, load) in results.get("rerun", {}).items():
        several = " and " in section              # "wasm and noblas": sections run again together
        lines[-1] += (f" The {section} section{'s were' if several else ' was'} run again on {'their' if several else 'its'} "
                      f"own at {started} UTC (load average {load}) after the last change to the code "
                      f"{'they measure' if several else 'it measures'}; {'their' if several else 'its'} tables come "
                      "from that run.")
    lines += ["", "## Machine", ""]
    lines += machine_lines(results["machine"]) + ["", "## Results", ""]
    lines += tables(results)
    profiles = results["sections"].get("labs", {}).get("profiles", [])
    if profiles:
        lines += ["### Profiles of the labs that miss a target (cProfile, shipped way)", ""]
        for p in profiles:
            parts = ", ".join(f"{k.strip()} {v}%" for k, v in p["percent_of_time"].items() if v)
            own = ", ".join(f"{o['function']} {o['percent']}%" for o in p["own_time_top"][:5])
            lines += [f"- **{p['lab']}** ({p['ms_per_change']} ms per change under the profiler): {parts}. "
                      f"Most own time: {own}."]
        lines += [""]
    if NOTES.exists():
        lines += [NOTES.read_text().strip(), ""]
    return "\n".join(lines)
