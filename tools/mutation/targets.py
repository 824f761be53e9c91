"""What is mutated, against what: lib/ modules against their test files, the exercise checks'
reference functions, and exercises' solutions against their checks (judged in this process)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .generate import LIBRARY, NOT_LIBRARY, SOLUTION, Mutant, mutants

# ---------------------------------------------------------------- what is mutated, against what

@dataclass
class Target:
    """One source to mutate and what should catch its mutants: a file and its test files, or an
    exercise's solution and its check."""
    path: Path | None                # relative to the root (None: an exercise's solution)
    tests: list                      # test files relative to the root ([] when it has none)
    only: set | None = None          # mutate only these top-level functions
    scored: bool = True              # False: reported, but not held to --min-score
    mutants: list = field(default_factory=list)
    baseline: str = "not run"
    seconds: float = 0.0
    lines: dict = field(default_factory=dict)   # line -> ids of the tests that run it ("": every test)
    exercise: object = None          # the exercise whose solution is mutated

    @property
    def module(self) -> str:
        return self.exercise.id if self.exercise else ".".join(self.path.with_suffix("").parts)

    def source(self, root: Path) -> str:
        return self.exercise.solution_source if self.exercise else (root / self.path).read_text(encoding="utf-8")

    def find(self, root: Path) -> list:
        """The target's mutants: a programmer's slips in a file, a learner's in a solution."""
        return mutants(self.source(root), self.module, self.only, SOLUTION if self.exercise else LIBRARY)

    def tests_for(self, mutant: Mutant) -> set | None:
        """The ids of the tests that run the mutant's lines; None: the whole file (a line also
        runs at import or in a fixture no test's id is known for)."""
        ids = set().union(*(self.lines.get(n, ()) for n in range(mutant.line, mutant.end_line + 1)))
        return None if "" in ids else ids


def library_targets(root: Path, package: str, modules: list, overrides: dict) -> list:
    """lib/X.py against tests/test_lib_X.py, else tests/test_X.py (a leading _ dropped)."""
    if not modules:
        modules = sorted(p.stem for p in (root / package).glob("*.py") if p.stem not in NOT_LIBRARY)
    targets = []
    for name in modules:
        path = Path(package) / (name if name.endswith(".py") else f"{name}.py")
        if not (root / path).is_file():
            known = sorted(p.stem for p in (root / package).glob("*.py") if p.stem not in NOT_LIBRARY)
            raise SystemExit(f"There is no module {name!r} in {package}/: choose among {', '.join(known)} "
                             f"(or {REFERENCES}.NAME for an exercise module's reference functions).")
        stem = path.stem.lstrip("_")
        chosen = overrides.get(name) or overrides.get(path.stem)
        candidates = [f"tests/test_{package}_{stem}.py", f"tests/test_{stem}.py"]
        tests = chosen.split(",") if chosen else [c for c in candidates if (root / c).exists()][:1]
        targets.append(Target(path, tests))
    return targets


REFERENCES = "exercises.definitions"       # the modules of the exercise checks' reference functions
RETIRED = "exercises.retired"              # and those of the retired exercises' checks
REFERENCE_TESTS = ["tests/test_exercises.py", "tests/test_exercise_references.py"]


def reference_targets(root: Path, modules: list | None = None, scored: bool = False) -> list:
    """The exercise checks' reference functions, each definitions module (and each module of
    the retired exercises) against tests/test_exercises.py and tests/test_exercise_references.py:
    the top-level functions named ``*_reference`` or passed as ``reference=`` and defined in that
    module, unless their body is one call of a lib function (lib's own run covers that).
    modules: dotted names (default: every definitions module and every retired module)."""
    folder = root.joinpath(*REFERENCES.split("."))
    if modules:
        paths = [root.joinpath(*name.split(".")).with_suffix(".py") if name.startswith(RETIRED + ".")
                 else folder / f"{name.rpartition('.')[2]}.py" for name in modules]
    else:
        paths = [p for package in (REFERENCES, RETIRED)
                 for p in sorted(root.joinpath(*package.split(".")).glob("*.py")) if p.stem != "__init__"]
    targets = []
    for path in paths:
        if not path.exists():
            package = ".".join(path.parent.relative_to(root).parts)
            known = sorted(p.stem for p in path.parent.glob("*.py") if p.stem != "__init__")
            raise SystemExit(f"There is no module {package}.{path.stem}: choose among "
                             f"{', '.join(known)}.")
        tree = ast.parse(path.read_bytes())
        from_lib = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and (node.module or "").split(".")[0] == "lib" for alias in node.names}
        named = {n.value.id for n in ast.walk(tree)
                 if isinstance(n, ast.keyword) and n.arg == "reference" and isinstance(n.value, ast.Name)}
        own = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
               and (f.name in named or f.name.endswith("_reference")) and not _one_call_of(f, from_lib)}
        if own or modules:
            targets.append(Target(path.relative_to(root), list(REFERENCE_TESTS), own, scored=scored))
    return targets


def solution_targets(ids: list) -> list:
    """Every exercise's solution (or those of ``ids``), each against its check's fixed cases."""
    from engine.core.registry import all_exercises, get_exercise

    chosen = [get_exercise(i) for i in ids] if ids else all_exercises()
    return [Target(None, ["its check's fixed cases"], exercise=e) for e in chosen if e.kind == "function"]


def solution_mutants(exercise) -> list:
    """The mutants of an exercise's solution (a learner's slips), named after the exercise."""
    return mutants(exercise.solution_source, exercise.id, edits=SOLUTION)


def judge(exercise, source: str):
    """The check's verdict on ``source`` (a whole exercise cell) from the fixed cases alone: the
    cases every run has, so a mutant they reject is rejected whatever random cases are drawn."""
    from engine.core.cell import run_cell
    from engine.core.checker import Feedback, evaluate_fixed

    try:
        namespace = run_cell(source, exercise.context, exercise.id)
    except Exception as exc:  # noqa: BLE001 - a mutant that cannot even run its cell is rejected
        return Feedback(exercise.id, "error", [f"{type(exc).__name__}: {exc}"])
    return evaluate_fixed(exercise, namespace)


def run_solutions(targets: list) -> None:
    """Judge every mutant of the solutions in this process; set the statuses."""
    for target in targets:
        source = target.exercise.solution_source
        target.baseline = "passed" if judge(target.exercise, source).passed else "failed (the solution)"
        for m in target.mutants:
            if target.baseline == "passed" and m.status == "not run":
                m.status = "survived" if judge(target.exercise, m.apply(source)).passed else "killed"


def _one_call_of(function: ast.FunctionDef, names: set) -> bool:
    """Whether the function's body is ``return name(...)`` for one of ``names``."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call)
            and isinstance(body[0].value.func, ast.Name) and body[0].value.func.id in names)
