"""``python -m benchmarks [--quick] [--only labs,browser,...]``: run, print, save, document."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("labs", "wasm", "noblas", "browser", "notebooks", "site", "classroom", "imports", "model")
RESULTS = Path(__file__).resolve().parent / "results"
DOCS = ROOT / "docs" / "performance.md"


def _load():
    return [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None


def _names(text):
    return [t for t in (text or "").split(",") if t]


def parse(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer values and repeats (about a minute or two)")
    p.add_argument("--only", help=f"comma-separated sections to run: {', '.join(SECTIONS)}")
    p.add_argument("--skip", help="comma-separated sections to leave out")
    p.add_argument("--labs", help="comma-separated labs (e.g. temperature,norms.stack_lab); default all")
    p.add_argument("--notebooks", help="comma-separated notebook stems; default all")
    p.add_argument("--noblas-wheel", type=Path, metavar="WHEEL",
                   help="a NumPy wheel of the pinned version built with BLAS off, used instead of building one "
                        "(benchmarks/noblas.py)")
    p.add_argument("--learners", type=int, default=200,
                   help="the classroom section: learners opening the site at once (default 200)")
    p.add_argument("--output", type=Path, default=RESULTS, help="folder for the JSON (default benchmarks/results)")
    p.add_argument("--docs", type=Path, default=DOCS, help="the Markdown page to regenerate")
    p.add_argument("--no-docs", action="store_true", help="do not write the Markdown page")
    p.add_argument("--from-json", type=Path, metavar="JSON",
                   help="run nothing: print and document the results saved in JSON (e.g. results/latest.json)")
    return p.parse_args(argv)


def saved_results(path: Path) -> dict:
    """The results saved by a run (--from-json), or one sentence saying why they cannot be read."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"Cannot read {path} ({exc.strerror or exc}): give the JSON a run saved, such as "
                         f"{RESULTS.relative_to(ROOT)}/latest.json.") from None
    except (ValueError, UnicodeDecodeError):
        raise SystemExit(f"{path} is not JSON: give the JSON a run saved, such as "
                         f"{RESULTS.relative_to(ROOT)}/latest.json.") from None
    if not isinstance(results, dict) or not isinstance(results.get("sections"), dict):
        raise SystemExit(f"{path} is not the JSON of a benchmark run (no sections): give one from "
                         f"{RESULTS.relative_to(ROOT)}/.")
    return results


def run(argv=None) -> dict:
    args = parse(argv)
    from . import browser, browser_estimate, labs, report, system, wasm

    chosen = _names(args.only) or list(SECTIONS)
    chosen = [s for s in chosen if s not in _names(args.skip)]
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    if "noblas" in chosen and "wasm" not in chosen:         # its browser estimate needs the factors
        chosen = [c for c in SECTIONS if c in chosen or c == "wasm"]
    if args.from_json:
        results = saved_results(args.from_json)
        try:
            tables = report.tables(results)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError):
            raise SystemExit(f"{args.from_json} is not the JSON of a benchmark run (its results do not have "
                             "the expected fields): give one from benchmarks/results/.") from None
        print("\n".join(tables))
        if not args.no_docs:
            args.docs.parent.mkdir(parents=True, exist_ok=True)
            args.docs.write_text(report.markdown(results))
            print(f"Markdown: {args.docs}")
        return results
    quick = args.quick
    log = lambda text: print(text, flush=True)  # noqa: E731
    started = time.perf_counter()
    results = {"schema": 1, "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
               "quick": quick, "sections_run": chosen, "machine": system.machine(), "sections": {}}
    s = results["sections"]
    if "labs" in chosen:
        log("labs (headless CPython)...")
        rows, png = labs.run(_names(args.labs), quick=quick, log=log)
        missing = [r["lab"] for r in rows if not (r["meets_ms_target"] and r["meets_ratio_target"])]
        profiles = [labs.profile(name, quick=True) for name in missing]
        s["labs"] = {"labs": rows, "png_settings": png, "target_ms": labs.TARGET_MS,
                     "target_p95_ms": labs.TARGET_P95_MS, "target_vs_naive": labs.TARGET_NAIVE,
                     "target_vs_full": labs.TARGET_FULL, "load_average_after": _load(),
                     "all_meet_targets": not missing, "missed": missing, "profiles": profiles}
    if "wasm" in chosen:
        log("WebAssembly factor (Pyodide under Node against CPython)...")
        try:
            s["wasm"] = wasm.run(repeats=5 if quick else 15, log=log)
        except Exception as error:  # noqa: BLE001 - a missing Node is reported, not fatal
            s["wasm"] = {"skipped": f"{type(error).__name__}: {error}"}
    if "noblas" in chosen:
        log("the browser's NumPy (every lab and every cell under OpenBLAS and without BLAS)...")
        w = s.get("wasm", {})
        s["noblas"] = browser_estimate.run(w.get("estimate_factor"), quick=quick,
                                           labs=_names(args.labs), notebooks=_names(args.notebooks),
                                           wheel=args.noblas_wheel, log=log)
    if "browser" in chosen:
        log("browser (Chromium against a local JupyterLab)...")
        try:
            s["browser"] = browser.run(presses=5 if quick else 25, drags=2 if quick else 5, log=log)
        except Exception as error:  # noqa: BLE001 - a missing browser is reported, not fatal
            s["browser"] = {"skipped": f"{type(error).__name__}: {error}"}
    if "notebooks" in chosen:
        log("notebooks (nbval, shipped and solved)...")
        s["notebooks"] = system.run_notebooks(_names(args.notebooks), log=log)
    if "site" in chosen:
        log("site (jupyter lite build)..." if not quick else "site (sizes; the build is left out in --quick)...")
        s["site"] = system.run_site(build=not quick, log=log)
    if "classroom" in chosen:
        from . import classroom
        log(f"classroom ({args.learners} learners opening the site at once: ./course serve, nginx, caddy)...")
        s["classroom"] = classroom.run(args.learners if not quick else min(args.learners, 50), log=log)
    if "imports" in chosen:
        log("imports (fresh CPython processes)...")
        s["imports"] = system.run_imports(repeats=3 if quick else 10)
    if "model" in chosen:
        log("trained model (NumPy against PyTorch CPU)...")
        s["model"] = system.run_model(repeats=5 if quick else 60)
    results["seconds"] = round(time.perf_counter() - started, 1)

    args.output.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(results, indent=1) + "\n"
    (args.output / f"bench-{stamp}.json").write_text(text)
    (args.output / "latest.json").write_text(text)
    print()
    print("\n".join(report.tables(results)))
    print(f"JSON: {args.output / 'latest.json'}")
    if not args.no_docs:
        section = s.get("noblas", {})
        if not quick and "budgets" in section and not (args.labs or args.notebooks):
            budget = browser_estimate.budget_file(section, results["started"])
            browser_estimate.BUDGET.write_text(json.dumps(budget, indent=1) + "\n")
            print(f"Budgets: {browser_estimate.BUDGET}")
        if set(chosen) == set(SECTIONS):
            args.docs.parent.mkdir(parents=True, exist_ok=True)
            args.docs.write_text(report.markdown(results))
            print(f"Markdown: {args.docs}")
        else:
            print(f"{args.docs} left as it was: only a full set of sections regenerates it")
    return results


if __name__ == "__main__":
    run()
