"""The dependency rules of ARCHITECTURE.md hold: import-linter checks the contracts in
.importlinter (layers lib | presentation <- exercises.core <- exercises.definitions <- exercises.retired
<- exercises.ui <- labs; lib on numpy alone; presentation on neither lib, exercises nor labs; no widgets below the
exercise UI, and none in presentation's plain-text and HTML modules), and no module of the course
imports itself through others (grimp, the import graph import-linter builds)."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def imports_by_name(path: Path) -> list[int]:
    """The lines of ``path`` that import a module named by a value (importlib.import_module,
    __import__, importlib.util), which import-linter cannot see."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__", "spec_from_file_location", "module_from_spec"):
                found.append(node.lineno)
    return found


def test_only_the_registry_imports_a_module_by_name():
    """The one import by name in the course is the registry loading the definitions module each
    notebook names and the retired module of the same name; .importlinter allows it as two plain
    edges (exercises.core.registry -> exercises.definitions, -> exercises.retired) that
    lint-imports sees. Any other would be an edge no contract checks."""
    found = {path.relative_to(ROOT).as_posix(): lines for package in ("lib", "exercises", "labs", "presentation")
             for path in sorted((ROOT / package).rglob("*.py")) if (lines := imports_by_name(path))}
    assert list(found) == ["exercises/core/registry.py"] and len(found["exercises/core/registry.py"]) == 1
    contracts = (ROOT / ".importlinter").read_text()
    source = (ROOT / "exercises" / "core" / "registry.py").read_text()
    for package in ("definitions", "retired"):
        assert f"exercises.core.registry -> exercises.{package}" in contracts
        assert f"import exercises.{package} as {package}_package" in source


def import_cycles(graph, packages):
    """Every file-level import cycle among the modules of ``packages`` in a grimp graph, each as
    the shortest chain of modules from a module back to itself (one chain per set of modules)."""
    found = {}
    for module in sorted(m for m in graph.modules if m.split(".")[0] in packages):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.split(".")[0] in packages and graph.chain_exists(importer=imported, imported=module):
                chain = (module, *graph.find_shortest_chain(importer=imported, imported=module))
                found.setdefault(frozenset(chain), chain)
    return list(found.values())


COURSE = ("lib", "labs", "exercises", "presentation")


def test_no_module_of_the_course_imports_itself_through_others():
    """A file-level import cycle in lib, labs, exercises or presentation (a imports b, b imports a,
    directly or through other modules), function-level imports included: each one found is
    listed as a -> b -> a."""
    import grimp

    graph = grimp.build_graph(*COURSE, cache_dir=None)
    cycles = import_cycles(graph, set(COURSE))
    assert cycles == [], "\n".join(" -> ".join(chain) for chain in cycles)


def test_the_cycle_finder_finds_a_cycle_through_three_modules_and_none_in_a_chain():
    import grimp

    graph = grimp.ImportGraph()
    for importer, imported in (("lib.a", "lib.b"), ("lib.b", "lib.c"), ("lib.c", "lib.a"), ("lib.c", "lib.d"),
                               ("labs.x", "lib.a")):
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph, {"lib", "labs"}) == [("lib.a", "lib.b", "lib.c", "lib.a")]
    graph.remove_import(importer="lib.c", imported="lib.a")
    assert import_cycles(graph, {"lib", "labs"}) == []


IMPORT_EVERYTHING = """
import importlib, pkgutil, sys
for package in ("lib", "exercises", "labs", "presentation"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)
print("imported", len(sys.modules))
"""


def test_importing_every_course_module_prints_and_writes_nothing(tmp_path):
    """No import has a side effect: importing all of lib, exercises, labs and presentation (the
    compatibility module lib.exercises included) prints nothing and writes no file, here into an
    empty home and working folder."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("imported ") and result.stdout.count("\n") == 1, result.stdout[:2000]
    assert result.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".mpl") == []


def test_the_compatibility_module_begins_at_the_first_check_not_at_import(tmp_path):
    """lib.exercises (for notebooks of earlier releases) calls begin() when such a notebook first
    asks for a check, not when it is imported."""
    script = """
import exercises.ui.notebook as notebook
calls = []
notebook.begin = lambda: calls.append("begin")
import lib.exercises
assert calls == [], calls
import numpy as np
def row_mean(x):
    return x.mean(axis=-1, keepdims=True)
lib.exercises.check("row-mean", {"row_mean": row_mean, "np": np})
assert calls == ["begin"], calls
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_old_module_paths_are_aliases_of_the_compatibility_module_and_nothing_else():
    """Notebooks saved from earlier releases import from old module paths (exercises/ui/compat.py
    lists them); each is a module that imports exactly its names from exercises.ui.compat, and no
    other module of the course does."""
    from exercises.ui.compat import OLD_PATHS

    aliases = {}
    for package in ("lib", "exercises", "labs", "presentation"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_bytes())
            found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "exercises.ui.compat"]
            if found:
                aliases[".".join(path.relative_to(ROOT).with_suffix("").parts)] = (tree, found)
    assert set(aliases) == set(OLD_PATHS)
    for name, (tree, found) in aliases.items():
        imported = {alias.name for node in found for alias in node.names}
        assert imported - {"moved"} == set(OLD_PATHS[name]), name
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "Import", "ImportFrom", "If"}, (name, kinds)       # no def, no class
        assert len((ROOT / name.replace(".", "/")).with_suffix(".py").read_text().splitlines()) <= 8, name


def test_the_old_command_line_says_where_it_went(tmp_path):
    """python -m lib.exercises was the command line of earlier releases: it now fails, naming the
    command that replaced it, instead of doing nothing."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-m", "lib.exercises", "solve", "in.ipynb", "out.ipynb"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stdout == ""
    assert "use python -m exercises solve in.ipynb out.ipynb" in result.stderr
    assert "./course solve in.ipynb out.ipynb" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.ipynb").exists()


PLAIN_PRESENTATION = """
import sys
import exercises.core.checker, exercises.core.report, presentation.numbers, presentation.html, presentation.tables
heavy = sorted(name for name in ("ipywidgets", "IPython", "matplotlib") if name in sys.modules)
print(heavy)
"""


def test_the_exercise_core_and_plain_presentation_load_no_widgets(tmp_path):
    """The exercise core writes its numbers with presentation.numbers; that module, the HTML pieces
    and the tables load no ipywidgets, IPython or matplotlib (the contracts say so statically; this
    imports them)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", PLAIN_PRESENTATION], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]", result.stdout


DEFINITIONS_LINES = 3_000       # exercises/definitions/*.py: the live course
RETIRED_LINES = 1_104           # exercises/retired/*.py: compatibility code, which must not grow unseen (nudge-growth and
                                # leave-one-out retired with it)


def test_the_exercise_definitions_stay_data_and_within_their_size():
    """exercises/definitions/ (its questions/, which sit apart, not counted) is data: no more lines
    than DEFINITIONS_LINES, and exercises/retired/ no more than RETIRED_LINES; and no test fixture
    (``wrong=`` or ``alternatives=``) in any module of either (tests/test_instructor_packaging.py
    checks the same of the wheel as built)."""
    live = sorted((ROOT / "exercises" / "definitions").glob("*.py"))
    retired = sorted((ROOT / "exercises" / "retired").glob("*.py"))
    lines = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in live}
    assert len(lines) >= 6 and sum(lines.values()) <= DEFINITIONS_LINES, lines
    old = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in retired}
    assert len(old) >= 2 and sum(old.values()) <= RETIRED_LINES, old
    modules = live + retired
    fixtures = [f"{path.relative_to(ROOT)}:{node.lineno} {keyword.arg}=" for path in modules
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)
                for keyword in node.keywords if keyword.arg in ("wrong", "alternatives")]
    assert fixtures == []
