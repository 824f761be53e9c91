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


def tables(results: dict) -> list[str]:
    out = []
    s = results["sections"]
    if "labs" in s:
        out += ["### Labs (CPython, headless): control change to updated output, ms", ""]
        rows = []
        for r in s["labs"]["labs"]:
            rows.append([r["lab"], r["update"]["n"],
                         _ms(r["update"]), _ms(r["update"], "p95_ms"), _ms(r["first_visit"]), _ms(r["first_slider"]["update"]),
                         _ms(r["savefig"]), _ms(r["naive"]), _ms(r["naive_rebuild"]),
                         _x(r["speedup_vs_naive"]), _x(r["speedup_vs_savefig"]),
                         "met" if r["meets_ms_target"] and r["meets_ratio_target"] else
                         "**missed** (" + ", ".join(x for x, ok in (("≤ 50 ms", r["meets_ms_target"]),
                                                                   ("≥ 3×", r["meets_ratio_target"])) if not ok) + ")"])
        out += _table(["lab", "changes", "median", "p95", "first visit median", "first slider median", "savefig way median",
                       "naive median", "naive: rebuild alone", "vs naive", "vs savefig", "target"], rows)
        out += [""]
    if "browser" in s:
        b = s["browser"]
        out += ["### In Chromium (local JupyterLab, CPython kernel): slider key press to new plot on screen, ms", ""]
        if "skipped" in b:
            out += [f"Skipped: {b['skipped']}", ""]
        else:
            rows = [[name, r["notebook"], r["n"], _ms(r), _ms(r, "p95_ms"), _ok(r["meets_target"])]
                    for name, r in b["labs"].items()]
            out += _table(["lab", "notebook", "presses", "median", "p95", "target ≤ 150 ms"], rows) + [""]
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
        out += _table(["what", "value", "note"], rows) + [""]
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
        out += _table(["forward", "median", "p95", "ratio"], rows)
        out += ["", f"PyTorch {m['torch_version']} ({m['torch_threads']} threads by default); largest difference from "
                f"PyTorch float64: {m['max_abs_difference_vs_torch_float64']:.1e}. Target within 2× of "
                f"PyTorch CPU (default threads, the faster of its two number types: NumPy / PyTorch = "
                f"{m.get('numpy_over_fastest_torch')}): {_ok(m['meets_target'])}.", ""]
    return out


def machine_lines(m: dict) -> list[str]:
    blas = m.get("blas") or [{}]
    build = ", ".join(str(blas[0].get(k)) for k in ("name", "version") if blas[0].get(k)) or "unknown"
    env = ", ".join(f"{k}={v}" for k, v in m.get("blas_env", {}).items()) or "none set"
    return [f"- CPU: {m.get('cpu', 'unknown')}, {m.get('cores')} cores ({m.get('cores_usable', '?')} usable), "
            f"{m.get('memory_gb', '?')} GB memory; load average at start {m.get('load_average_at_start')} "
            "(the machine was shared)",
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
             f"{results['seconds']:.0f} s in all.", "", "## Machine", ""]
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
