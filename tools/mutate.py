"""The command line of the mutation tool: ``./course mutate`` (``python -m tools.mutate``).

What it does and how: :mod:`tools.mutation`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tools import mutation
from tools.mutation.generate import ROOT, load_equivalents, mark_equivalents
from tools.mutation.runner import run, score, survivors_report, table
from tools.mutation.targets import (
    REFERENCES,
    RETIRED,
    library_targets,
    reference_targets,
    solution_targets,
)

# ---------------------------------------------------------------- command line

def arguments(argv):
    parser = argparse.ArgumentParser(prog="./course mutate", description=mutation.__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="module names in the package (default: all of lib/), or exercises.definitions.X "
                             "(or exercises.retired.X) for the reference functions of the exercise checks in "
                             "that module")
    parser.add_argument("--exercises", action="store_true",
                        help="also the exercise checks' reference functions (reported, not scored)")
    parser.add_argument("--solutions", action="store_true",
                        help="the exercises' solutions (the modules named are then exercise ids; default: "
                             "every exercise) against their checks' fixed cases, instead of lib")
    parser.add_argument("--tests", action="append", default=[], metavar="MODULE=FILE[,FILE]",
                        help="run a module against other test files")
    parser.add_argument("--jobs", type=int, default=2, help="test runs at a time (default 2)")
    parser.add_argument("--list", action="store_true", help="print the mutants and run nothing")
    parser.add_argument("--report", type=Path, help="write the surviving mutants, with diffs, as Markdown")
    parser.add_argument("--json", type=Path, help="write every mutant and its status as JSON")
    parser.add_argument("--min-score", type=float, help="exit 1 if a scored module is below this percentage")
    parser.add_argument("--again", type=Path, metavar="JSON",
                        help="a --json file of an earlier run: its killed mutants are taken as killed and "
                             "only the others run (after adding tests, never after changing them)")
    parser.add_argument("--equivalents", type=Path, help="default: tools/equivalent-mutants.txt")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    parser.add_argument("--package", default="lib", help="the package of the modules (default: lib)")
    parser.add_argument("--pytest-args", default="", help="more arguments for each pytest run")
    return parser.parse_args(argv)


def collect(args) -> list:
    """The targets with their mutants, each marked with its reason if listed as equivalent."""
    root = args.root.resolve()
    overrides = dict(item.split("=", 1) for item in args.tests)
    if args.solutions:
        targets = solution_targets(args.modules)
    else:
        references = [m for m in args.modules if m.startswith((REFERENCES + ".", RETIRED + "."))]
        modules = [m.removeprefix(args.package + ".") for m in args.modules if m not in references]
        targets = library_targets(root, args.package, modules, overrides) if modules or not references else []
        targets += reference_targets(root, references, scored=True) if references else []
    if args.exercises:
        targets += reference_targets(root)
    equivalent = load_equivalents(args.equivalents or root / "tools" / "equivalent-mutants.txt")
    for t in targets:
        t.mutants = t.find(root)
        mark_equivalents(t.mutants, equivalent)
    if args.again:
        def key(mutant_id):                          # module and hash: the line may have moved
            return mutant_id.split(":")[0], mutant_id.split(":")[-1]
        killed = {key(m["id"]): m["status"] for m in json.loads(args.again.read_text(encoding="utf-8"))
                  if m["status"] in ("killed", "timeout")}
        for m in (m for t in targets for m in t.mutants if key(m.id) in killed):
            m.status = killed[key(m.id)]
    named = {t.module for t in targets}
    for module, digest in equivalent:
        if module in named:
            print(f"warning: the equivalent mutant {module}:{digest} no longer exists", file=sys.stderr)
    return targets


def main(argv=None) -> int:
    args = arguments(argv)
    targets = collect(args)
    if args.list:
        for m in (m for t in targets for m in t.mutants):
            print(f"{m.id}  [{m.func}]" + (f"  equivalent: {m.reason}" if m.reason else "") + f"\n{m.diff()}\n")
        return 0
    began = time.monotonic()
    cpu = run(args.root.resolve(), targets, args.jobs, args.pytest_args.split())
    for m in (m for t in targets for m in t.mutants if m.reason and m.status in ("killed", "timeout")):
        print(f"warning: {m.id} is listed as equivalent but was {m.status}", file=sys.stderr)
    scores = [score(t) for t in targets]
    print(table(scores))
    forked = any(not t.exercise for t in targets)
    forked = f" with {args.jobs} workers ({cpu:.0f} s of CPU in the test runs)" if forked else ""
    print(f"\n{time.monotonic() - began:.0f} s{forked}")
    if args.report:
        args.report.write_text(survivors_report(targets), encoding="utf-8")
    if args.json:
        fields = ("module", "func", "kind", "line", "id", "status", "reason", "before", "after")
        args.json.write_text(json.dumps([{k: getattr(m, k) for k in fields} for t in targets for m in t.mutants],
                                        indent=1), encoding="utf-8")
    worst = min((s.percent if t.baseline == "passed" else 0.0 for s, t in zip(scores, targets) if t.scored),
                default=100.0)
    return 1 if args.min_score is not None and worst < args.min_score else 0


if __name__ == "__main__":
    if __package__ in (None, ""):          # python tools/mutate.py: keep the repository off sys.path
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "tools"]
    sys.exit(main())
