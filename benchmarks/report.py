"""The results as tables (Markdown, which reads well in a terminal too) and docs/performance.md.

The words are in benchmarks/report_template.md, one part per name; the code here computes the
values that fill them (string.Template)."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
NOTES = Path(__file__).resolve().parent / "NOTES.md"
TEMPLATE = Path(__file__).resolve().parent / "report_template.md"


def _parts(path: Path) -> dict[str, str]:
    """{NAME: text} of the template file: each part after a line ``<!-- NAME -->``, without the
    blank lines at its end."""
    found = re.split(r"(?m)^<!-- ([A-Z_]+) -->\n", path.read_text(encoding="utf-8"))[1:]
    return {name: text.rstrip("\n") for name, text in zip(found[::2], found[1::2])}


PARTS = _parts(TEMPLATE)
WHOLE_LINE = re.compile(r"\$\{?(\w+)\}?")


def _text(name: str, **values) -> list[str]:
    """The template part ``name`` filled with ``values``, as lines. A line that is only ``$key``
    with a list for ``key`` becomes that list's lines (none when it is empty)."""
    lines = []
    for line in PARTS[name].split("\n"):
        whole = WHOLE_LINE.fullmatch(line)
        if whole and isinstance(values.get(whole.group(1)), list):
            lines += values[whole.group(1)]
        else:
            lines.append(Template(line).substitute(values))
    return lines


def _line(name: str, **values) -> str:
    """A one-line template part filled with ``values``."""
    (line,) = _text(name, **values)
    return line


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


def _rows(rows) -> list[str]:
    """Markdown table rows (the header is the template's)."""
    return ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _sec(ms) -> str:
    return "–" if ms is None else f"{ms / 1000:.2f}"


def _mflop(flops) -> str:
    if flops is None:
        return "–"
    return "0" if flops == 0 else ("< 1" if flops < 1e6 else f"{flops / 1e6:,.0f}")



def _runs(section: dict) -> str:
    """How many times each lab was run: "once", "twice", "3 times" (1 for results that do not say)."""
    runs = max((r.get("runs", 1) for r in section.get("labs", [])), default=1)
    return {1: "once", 2: "twice"}.get(runs, f"{runs} times")


def _cell(c: dict) -> str:
    """A cell as the tables name it: its place among all cells, and [its number after Run All]."""
    return f"{c['position']} ([{c['cell']}])" if c.get("position") else f"[{c['cell']}]"


def stat_ratio(slow: dict, fast: dict):
    if not slow or not fast or not slow.get("median_ms") or not fast.get("median_ms"):
        return None
    return slow["median_ms"] / fast["median_ms"]


# ---------------------------------------------------------------- the browser's NumPy

def noblas_tables(n: dict, every_cell: bool = True) -> list[str]:
    """The browser's NumPy: labs, cells (those that miss, a summary per notebook, and every cell
    when ``every_cell``), the throughput and the budgets."""
    out = _text("NOBLAS_HEADING") + [""]
    if "skipped" in n:
        return out + _text("SKIPPED", why=n["skipped"]) + [""]
    t = {k: f"{v:g}" for k, v in n["targets"].items()}
    out += _noblas_intro(n, t) + [""]
    out += _text("NOBLAS_LABS", runs=_runs(n), rows=_rows(_noblas_lab_row(r) for r in n["labs"]), **t) + [""]
    if n.get("live_training"):
        out += _live_training(n["live_training"]) + [""]
    out += _text("NOBLAS_NOTEBOOKS", rows=_rows(_notebook_row(nb, n.get("factor")) for nb in n["cells"]), **t) + [""]
    missed = [[nb["notebook"]] + _cell_row(c) for nb in n["cells"] for c in nb["cells"]
              if c.get("meets_target") is False]
    if missed:
        out += _text("CELLS_MISSED", rows=_rows(missed), **t) + [""]
    elif n.get("factor"):
        out += _text("CELLS_WITHIN", **t) + [""]
    if every_cell:
        for nb in n["cells"]:
            out += _text("EVERY_CELL", notebook=nb["notebook"], rows=_rows(map(_cell_row, nb["cells"])), **t) + [""]
    if (n.get("throughput") or {}).get("flops_per_s"):
        out += [_throughput(n["throughput"], n.get("budgets"), n.get("factor")), ""]
    return out


def _live_training(lt: dict) -> list[str]:
    """The live-training lab's steps a second and frames: OpenBLAS, no BLAS and the estimate."""
    from .training import FRAME_TARGET_MS

    estimate = lt.get("estimate") or {}
    shown = [("OpenBLAS", lt.get("openblas")), ("no BLAS", lt.get("noblas"))]
    if estimate.get("factor"):
        shown.append((f"browser estimate (× {estimate['factor']:g})", estimate))
    rows = [[name, f"{m['steps_per_second']['pre']:,.0f}", f"{m['steps_per_second']['post']:,.0f}",
             f"{m['frame_median_ms']:.1f}", f"{m['frame_p95_ms']:.1f}"] for name, m in shown if m]
    verdict = {True: _line("LIVE_TRAINING_MET"), False: _line("LIVE_TRAINING_MISSED")}.get(estimate.get("meets_target"), "")
    steps = (lt.get("noblas") or lt.get("openblas") or {}).get("steps_per_frame", "a few")
    return _text("LIVE_TRAINING", steps_per_frame=steps, target_ms=f"{FRAME_TARGET_MS:g}", rows=_rows(rows),
                 verdict=verdict)


def _noblas_intro(n: dict, t: dict) -> list[str]:
    factor = n.get("factor")
    return _text("NOBLAS", noblas_version=n["numpy"]["noblas"]["version"], noblas_blas=n["numpy"]["noblas"]["blas"],
                 openblas_version=n["numpy"]["openblas"]["version"],
                 factor=_line("FACTOR", factor=factor) if factor else _line("NO_FACTOR"),
                 quick=" " + _line("QUICK") if n.get("quick") else "", **t)


def _noblas_lab_row(r: dict) -> list:
    o, b = r["openblas"], r["noblas"]
    first = [{"median_ms": x.get("first_visit_slowest_ms")} for x in (o, b)]
    return [r["lab"], _ms(b["first_visit"]), _ms(first[0]), _ms(first[1]), _x(stat_ratio(first[1], first[0])),
            _ms({"median_ms": r.get("first_visit_estimate_ms")}), _ok(r.get("first_visit_meets_target")),
            _mflop(r.get("first_visit_flops_max")),
            _ms(o["update"]), _ms(b["update"]), _x(stat_ratio(b["update"], o["update"])),
            _ms({"median_ms": r.get("update_estimate_ms")}), _ok(r.get("update_meets_target")),
            _mflop(r.get("update_flops_max"))]


def _notebook_row(notebook: dict, factor) -> list:
    cells = notebook["cells"]
    slowest = max(cells, key=lambda c: c.get("noblas_ms") or 0, default=None)
    misses = [c for c in cells if c.get("meets_target") is False]
    return [notebook["notebook"], len(cells), f"{notebook['openblas_total_s']:.2f}",
            f"{notebook['noblas_total_s']:.2f}", f"{_cell(slowest)}: {_sec(slowest.get('noblas_ms'))}" if slowest else "–",
            len(misses) if factor else "–"]


def _cell_row(c: dict) -> list:
    return [_cell(c), f"`{c['first_line'].replace('|', '/')}`", _sec(c.get("openblas_ms")),
            _sec(c.get("noblas_ms")),
            _x(stat_ratio({"median_ms": c.get("noblas_ms")}, {"median_ms": c.get("openblas_ms")})),
            _sec(c.get("estimate_ms")), _ok(c.get("meets_target")), _mflop(c.get("flops"))]


def _throughput(tp: dict, budgets: dict | None, factor) -> str:
    """The no-BLAS throughput sentence, and the budgets it gives when there are some."""
    def each(kind):
        return " or ".join(f"{v / 1e6:,.0f} MFLOP in {k}" for k, v in budgets[kind].items())
    spent = (" " + _line("BUDGETS", factor=factor, cell=each("cell"), first_visit=each("first_visit"),
                         update=each("update")) if budgets else "")
    return _line("THROUGHPUT", gflop_per_s=f"{tp['flops_per_s'] / 1e9:.2f}", gflop=f"{tp['flops'] / 1e9:,.1f}",
                 seconds=f"{tp['seconds']:.1f}", budgets=spent,
                 kinds=", ".join(f"{k} {v / 1e9:.2f}" for k, v in sorted(tp["by_type"].items())))


# ---------------------------------------------------------------- the other sections

def _labs(L: dict) -> list[str]:
    target = L.get("target_ms", 16.7)
    out = _text("LABS", target_ms=target, target_p95_ms=L.get("target_p95_ms", 33.3),
                target_vs_naive=L.get("target_vs_naive", 8), target_vs_full=L.get("target_vs_full", 4),
                rows=_rows(_lab_row(r, target) for r in L["labs"])) + [""]
    if L.get("load_average_after"):
        out += _text("LOAD_AVERAGE", load=L["load_average_after"]) + [""]
    if L.get("png_settings"):
        out += _text("PNG", rows=_rows([p["setting"], _ms(p["encode"]), _ms(p["encode"], "p95_ms"), p["kb"]]
                                       for p in L["png_settings"])) + [""]
    return out


def _lab_row(r: dict, target) -> list:
    fd = r.get("full_draws", {})
    upd, fv = fd.get("update", {}), fd.get("first_visit", {})
    missed = [x for x, ok in ((f"≤ {target} ms", r["meets_ms_target"]), ("ratios", r["meets_ratio_target"]))
              if not ok]
    return [r["lab"], r["update"]["n"], _ms(r["update"]), _ms(r["update"], "p95_ms"),
            f"{upd.get('full', '–')} of {upd.get('of', '–')} ({fv.get('full', '–')} of {fv.get('of', '–')})",
            _ms(r["first_visit"]), _ms(r.get("full")), _ms(r["naive"]),
            _x(r["speedup_vs_naive"]), _x(r.get("speedup_vs_full")), _ms(r.get("encode")),
            "met" if not missed else "**missed** (" + ", ".join(missed) + ")"]


def _wasm(w: dict) -> list[str]:
    out = _text("WASM_HEADING") + [""]
    if "skipped" in w:
        return out + _text("SKIPPED", why=w["skipped"]) + [""]
    ms = {key: _ms({"median_ms": w.get(key)}) for key in ("cpython_ms", "pyodide_ms", "cpython_fastest_ms",
                                                         "pyodide_fastest_ms")}
    out += _text("WASM", **{**w, **ms})
    if "compiled_parts" in w:
        rows = [[name, _ms({"median_ms": p["cpython_ms"]}), _ms({"median_ms": p.get("cpython_fastest_ms")}),
                 _ms({"median_ms": p["pyodide_ms"]}), _ms({"median_ms": p.get("pyodide_fastest_ms")}), p["factor"]]
                for name, p in w["compiled_parts"].items()]
        out += [""] + _text("COMPILED", rows=_rows(rows), **w)
    return out + [""]


def _browser(b: dict) -> list[str]:
    out = _text("BROWSER_HEADING") + [""]
    if "skipped" in b:
        return out + _text("SKIPPED", why=b["skipped"]) + [""]
    out += _text("BROWSER", drag_steps=b.get("drag_steps", 20)) + [""]
    floor = b.get("floor")
    rows = []
    if floor:
        out += _text("FLOOR") + [""]
        rows += _text("FLOOR_ROW", n=floor["n"], median=_ms(floor), p95=_ms(floor, "p95_ms"))
    rows += _rows(_browser_row(name, r) for name, r in b["labs"].items())
    out += _text("BROWSER_TABLE", target_ms=b.get("target_ms", 50), drag_target_ms=b.get("drag_target_ms", 150),
                 rows=rows) + [""]
    if b.get("breakdown"):
        out += _breakdown(b["breakdown"]) + [""]
    return out


def _breakdown(d: dict) -> list[str]:
    """The slowest lab's key press, stage by stage, beside the floor's: {"lab", "stages": {stage:
    [lab, floor, difference]}, "about": {stage: what it spans}}."""
    rows = [[stage, d["about"].get(stage, ""), *(f"{v:.1f}" for v in values)] for stage, values in d["stages"].items()]
    return _text("BREAKDOWN", lab=d["lab"], rows=_rows(rows))


def _browser_row(name: str, r: dict) -> list:
    d = r.get("drag") or {}
    above = f"{r['above_floor_ms']:.1f}" if "above_floor_ms" in r else "–"
    return [name, r["notebook"], r["n"], _ms(r), _ms(r, "p95_ms"), above, _ok(r["meets_target"]),
            _ms(d.get("settle")), _ms(d.get("settle"), "p95_ms"), d.get("images", "–"), _ok(d.get("meets_target"))]


def _notebooks(n: dict) -> list[str]:
    rows = [[r["notebook"], _s(r["shipped"]), _s(r["solved"]),
             "yes" if r["shipped"]["passed"] and r["solved"]["passed"] else "**no**"] for r in n["notebooks"]]
    return _text("NOTEBOOKS", rows=_rows(rows), total_s=n["total_s"], verdict=_ok(n["meets_target"])) + [""]


def _site(site: dict) -> list[str]:
    rows = []
    if "build" in site:
        rows += _text("SITE_BUILD", build_s=_s(site["build"]), site_mb=f"{site['site_bytes'] / 1e6:.1f}")
    for label, size in site["course_adds"].items():
        rows += _text("SITE_ADDS", label=label, kb=f"{size / 1e3:.0f}")
    rows += _text("SITE_ADDS_ALL", mb=f"{site['course_adds_bytes'] / 1e6:.2f}", verdict=_ok(site["meets_target"]))
    pre = site.get("preloaded")
    if pre:
        for label, size in pre["parts"].items():
            rows += _text("PRELOADED", label=label, kb=f"{size / 1e3:.0f}")
        rows += _text("PRELOADED_ALL", kb=f"{pre['bytes'] / 1e3:.0f}", verdict=_ok(site.get("preload_meets_target")),
                      target_kb=f"{site.get('preload_target_bytes', 600_000) / 1e3:.0f}")
    return _text("SITE", rows=rows) + [""]


def _classroom(c: dict) -> list[str]:
    from .classroom import table as classroom_table
    return _text("CLASSROOM", rows=classroom_table(c)[1:]) + [""]


def _imports(imp: dict) -> list[str]:
    rows = [[f"`{label}`", _ms(r), _ms(r, "p95_ms"), r["n"]] for label, r in imp["imports"].items()]
    return _text("IMPORTS", rows=_rows(rows), verdict=_ok(imp["meets_target"])) + [""]


def _model(m: dict) -> list[str]:
    out = _text("MODEL_HEADING", tokens=m["tokens"]) + [""]
    kept = m.get("kept_memory")
    if "block" in m:
        out += _text("MODEL_TIMING", block=m["block"], pause_s=m["pause_s"],
                     kept=" " + _line("KEPT_TIMING") if kept else "") + [""]
    rows = []
    for prefix, label in (("", "default threads"), ("one_thread_", "one thread each")):
        if prefix + "numpy" in m:
            rows += _text("MODEL_ROWS", label=label, openblas=m.get(prefix + "threads", {}).get("openblas", "?"),
                          **_forward_values(m, prefix))
    if kept:
        rows += _text("KEPT_ROWS", **_forward_values(kept, ""))
    differences = ", ".join(f"{kind} {m[f'max_abs_difference_vs_torch_{kind}']:.1e}"
                            for kind in ("float32", "float64") if f"max_abs_difference_vs_torch_{kind}" in m)
    judged = (_line("JUDGED_KEPT", kept=kept["numpy_over_torch_float32"], default=m["numpy_over_torch_float32"])
              if kept and m.get("target_judged_on") == "memory kept"
              else _line("JUDGED_DEFAULT", default=m["numpy_over_torch_float32"]))
    return out + _text("MODEL", rows=rows, torch_version=m["torch_version"], torch_threads=m["torch_threads"],
                       differences=differences, target_ratio=m.get("target_ratio", 1.5), judged=judged,
                       verdict=_ok(m["meets_target"])) + [""]


def _forward_values(m: dict, prefix: str) -> dict:
    """The medians, 95th percentiles and ratios of one set of forward rows (keys ``prefix``...)."""
    values = {}
    for key, name in (("numpy", "numpy"), ("torch_float32", "float32"), ("torch_float64", "float64")):
        values[name], values[name + "_p95"] = _ms(m[prefix + key]), _ms(m[prefix + key], "p95_ms")
    for kind in ("32", "64"):
        values["ratio" + kind] = m[f"{prefix}numpy_over_torch_float{kind}"]
    return values


SECTIONS = {"labs": _labs, "wasm": _wasm, "noblas": noblas_tables, "browser": _browser, "notebooks": _notebooks,
            "site": _site, "classroom": _classroom, "imports": _imports, "model": _model}


def tables(results: dict) -> list[str]:
    """Every section's tables, in the order of SECTIONS."""
    s = results["sections"]
    return [line for name, lines in SECTIONS.items() if name in s for line in lines(s[name])]


# ---------------------------------------------------------------- the page

def machine_lines(m: dict) -> list[str]:
    blas = m.get("blas") or [{}]
    return _text("MACHINE", cpu=m.get("cpu", "unknown"), cores=m.get("cores"), cores_usable=m.get("cores_usable", "?"),
                 memory_gb=m.get("memory_gb", "?"), load=m.get("load_average_at_start"), platform=m.get("platform"),
                 python=m["python"], numpy=m["numpy"], matplotlib=m["matplotlib"],
                 ipywidgets=m.get("ipywidgets", "?"), pillow=m.get("pillow", "?"),
                 build=", ".join(str(blas[0].get(k)) for k in ("name", "version") if blas[0].get(k)) or "unknown",
                 blas_config=m.get("blas_config", "unknown").strip(), blas_threads=m.get("blas_threads", "unknown"),
                 env=", ".join(f"{k}={v}" for k, v in m.get("blas_env", {}).items()) or "none set")


def _reruns(results: dict) -> str:
    """The sentences saying which sections were run again on their own, each after a space."""
    return "".join(" " + _line("RERUN_SEVERAL" if " and " in section else "RERUN_ONE",  # "wasm and noblas"
                               section=section, started=started, load=load)
                   for section, (started, load) in results.get("rerun", {}).items())


def _profiles(profiles: list[dict]) -> list[str]:
    """The profiles of the labs that miss a target (none: no lines)."""
    if not profiles:
        return []
    lines = [_line("PROFILE", lab=p["lab"], ms_per_change=p["ms_per_change"],
                   parts=", ".join(f"{k.strip()} {v}%" for k, v in p["percent_of_time"].items() if v),
                   own=", ".join(f"{o['function']} {o['percent']}%" for o in p["own_time_top"][:5]))
             for p in profiles]
    return _text("PROFILES", profiles=lines) + [""]


def markdown(results: dict) -> str:
    return "\n".join(_text(
        "PAGE", started=results["started"], kind="quick" if results["quick"] else "full",
        seconds=f"{results['seconds']:.0f}", reruns=_reruns(results), machine=machine_lines(results["machine"]),
        results=tables(results), profiles=_profiles(results["sections"].get("labs", {}).get("profiles", [])),
        notes=[NOTES.read_text().strip(), ""] if NOTES.exists() else []))
