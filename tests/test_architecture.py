"""The dependency rules of ARCHITECTURE.md hold, and ARCHITECTURE.md is true to the code.

import-linter checks the contracts in .importlinter: the engine imports nothing of the course;
inside it the notebook facade and the command line above the widgets, the lab kit and the
report, above the core, above presentation; the course's labs above its exercises above lib;
lib on NumPy and the standard library alone, with no exception; no widgets below the engine's UI.
grimp (the import graph import-linter builds) finds import cycles, and what lib imports from
outside. Notebooks import only engine.notebook, labs.<topic> and lib, and every older path a
saved notebook imports is in the one table of old paths (exercises/compat.py)."""

import ast
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "lib", "labs", "exercises", "presentation")      # the packages the wheel ships


def test_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


BY_NAME = ("import_module", "__import__", "spec_from_file_location", "module_from_spec", "entry_points", "EntryPoint")


def imports_by_name(path: Path) -> list[int]:
    """The lines of ``path`` that import a module named by a value (importlib.import_module,
    __import__, importlib.util, or an entry point of the installed packages' metadata), which
    import-linter cannot see."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in BY_NAME:
                found.append(node.lineno)
    return found


def test_only_the_plugin_loaders_import_a_module_by_name():
    """Four modules import a module named by a value, each on purpose, each an edge no contract
    checks: the engine finds the course through the entry point it declares
    (engine/core/course.py) and loads the definitions module each notebook names from the
    package the course names (engine/core/registry.py, one place); lib finds its fetcher
    (lib/files.py) and the names that left it (lib/deprecated/moved.py) through the entry points
    pyproject.toml declares. Any other would be an edge no one sees."""
    found = {path.relative_to(ROOT).as_posix(): lines for package in PACKAGES
             for path in sorted((ROOT / package).rglob("*.py")) if (lines := imports_by_name(path))}
    assert sorted(found) == ["engine/core/course.py", "engine/core/registry.py", "lib/deprecated/moved.py",
                             "lib/files.py"], found
    assert len(found["engine/core/registry.py"]) == 1


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


def test_no_module_of_the_engine_or_the_course_imports_itself_through_others():
    """A file-level import cycle in the engine, lib, labs, exercises or presentation (a imports b,
    b imports a, directly or through other modules), function-level imports included: each one
    found is listed as a -> b -> a."""
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles = import_cycles(graph, set(PACKAGES))
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
for package in ("engine", "lib", "exercises", "labs", "presentation"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)
print("imported", len(sys.modules))
"""


def test_importing_every_course_module_prints_and_writes_nothing(tmp_path):
    """No import has a side effect: importing all of the engine, lib, exercises, labs and
    presentation (the old module paths included) prints nothing and writes no file, here into an
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
import engine.notebook as notebook
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


def module_file(name: str) -> Path:
    """The file of the module ``name`` in this checkout: ``a/b.py`` or ``a/b/__init__.py``."""
    path = ROOT / name.replace(".", "/")
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"


def test_the_old_module_paths_are_aliases_of_the_compatibility_module_and_nothing_else():
    """Notebooks saved from earlier releases import from old module paths (exercises/compat.py
    lists them): each outside lib is a module (or a package's __init__) that imports exactly its
    names from exercises.compat, and no other module of the course does."""
    from exercises.compat import OLD_PATHS

    aliases = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_bytes())
            found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "exercises.compat"]
            if found:
                parts = path.relative_to(ROOT).with_suffix("").parts
                aliases[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = (tree, found)
    assert set(aliases) == {name for name in OLD_PATHS if not name.startswith("lib.")}
    for name, (tree, found) in aliases.items():
        imported = {alias.name for node in found for alias in node.names}
        assert imported == set(OLD_PATHS[name]), name
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "ImportFrom"}, (name, kinds)                  # no def, no class
        assert len(module_file(name).read_text().splitlines()) <= 8, name


def test_the_old_names_of_lib_are_entry_points_to_where_they_live_now():
    """lib imports nothing of the course, not even for compatibility: pyproject.toml declares
    every name of an old path inside lib (exercises/compat.py) as an entry point of the group
    lib/deprecated/moved.py reads, and each loads the object the table says."""
    from importlib import metadata

    import labs.decoder.models
    from exercises import compat
    from lib.deprecated.moved import GROUP

    declared = {entry.name: entry for entry in metadata.entry_points(group=GROUP)}
    wanted = {f"{path}.{name}" for path, names in compat.OLD_PATHS.items() if path.startswith("lib.")
              for name in names}
    assert set(declared) == wanted
    for name, entry in declared.items():
        expected = labs.decoder.models.REAL_MODELS if name == "lib.params.REAL_MODELS" else \
            getattr(compat, name.rpartition(".")[2])
        assert entry.load() is expected, name
    import lib.exercises
    import lib.params

    assert lib.exercises.check is compat.check and lib.params.REAL_MODELS is labs.decoder.models.REAL_MODELS
    with pytest.raises(AttributeError, match="has no attribute 'ask'"):
        lib.exercises.ask


def test_lib_imports_only_numpy_and_the_standard_library_with_no_exception():
    """Every import of every module of lib, function-level ones included, is of lib itself, NumPy
    or the standard library; and .importlinter makes no exception to any contract."""
    import grimp

    graph = grimp.build_graph("lib", cache_dir=None)
    outside = {(module, imported) for module in graph.modules if module.split(".")[0] == "lib"
               for imported in graph.find_modules_directly_imported_by(module)
               if imported.split(".")[0] not in {"lib", "numpy", *sys.stdlib_module_names}}
    assert outside == set()
    assert "ignore_imports" not in (ROOT / ".importlinter").read_text()


def notebook_imports(path: Path) -> dict[str, set[str]]:
    """{module path: the names imported from it} of the code cells of the notebook at ``path``."""
    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if isinstance(node, ast.ImportFrom):
                found.setdefault(node.module, set()).update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    found.setdefault(alias.name, set())
    return found


def current_path(module: str) -> bool:
    """True for what a notebook may import today: engine.notebook, a lab package (labs.<topic>),
    lib and its modules, NumPy and the standard library."""
    parts = module.split(".")
    return (module == "engine.notebook" or (parts[0] == "labs" and len(parts) == 2)
            or (parts[0] == "lib" and module not in OLD_LIB) or parts[0] == "numpy"
            or parts[0] in sys.stdlib_module_names)


OLD_LIB = ("lib.exercises",)
CONTENT_NOTEBOOKS = sorted((ROOT / "content").glob("*.ipynb"))
SAVED_NOTEBOOKS = sorted((ROOT / "tests" / "saved_notebooks").glob("release-*/*.ipynb"))


@pytest.mark.parametrize("path", CONTENT_NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_imports_only_the_engine_facade_its_lab_packages_and_lib(path):
    assert [module for module in notebook_imports(path) if not current_path(module)] == []


@pytest.mark.parametrize("path", SAVED_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_old_path_a_saved_notebook_imports_is_in_the_table(path):
    """What a notebook saved from an earlier release imports from outside today's paths is in
    exercises/compat.py: an old path (an alias of the table) or a module kept where it is, with
    every name the notebook imports from it."""
    from exercises.compat import KEPT, OLD_PATHS

    table = {**OLD_PATHS, **KEPT}
    for module, names in notebook_imports(path).items():
        if not current_path(module):
            assert module in table, f"{module} is imported by {path.name} and not in exercises/compat.py"
            assert names <= set(table[module]), (module, names - set(table[module]))
        elif module.split(".")[0] == "lib":          # a name that left a module of lib is in the table
            defined = vars(importlib.import_module(module))
            left = {name for name in names if name not in defined}
            assert left <= set(OLD_PATHS.get(module, ())), (module, left)


def test_the_saved_notebooks_of_every_release_are_kept():
    assert {p.parent.name for p in SAVED_NOTEBOOKS} >= {"release-a346fad", "release-6fd94497c0", "release-1db0772"}


def test_the_old_command_line_says_where_it_went(tmp_path):
    """python -m lib.exercises was the command line of earlier releases: it now fails, naming the
    command that replaced it, instead of doing nothing."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(tmp_path / ".mpl")}
    result = subprocess.run([sys.executable, "-m", "lib.exercises", "solve", "in.ipynb", "out.ipynb"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stdout == ""
    assert "use python -m engine solve in.ipynb out.ipynb" in result.stderr
    assert "./course solve in.ipynb out.ipynb" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.ipynb").exists()


PLAIN_PRESENTATION = """
import sys
import engine.core.checker, engine.report.report, engine.presentation.numbers, engine.presentation.html, engine.presentation.tables
heavy = sorted(name for name in ("ipywidgets", "IPython", "matplotlib") if name in sys.modules)
print(heavy)
"""


def test_the_engine_core_and_plain_presentation_load_no_widgets(tmp_path):
    """The engine's core writes its numbers with engine.presentation.numbers; that module, the
    HTML pieces, the tables and the report load no ipywidgets, IPython or matplotlib (the
    contracts say so statically; this imports them)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", PLAIN_PRESENTATION], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]", result.stdout


DEFINITIONS_LINES = 3_400       # exercises/definitions/*.py: the live course (eight notebooks)
RETIRED_LINES = 1_250           # exercises/retired/*.py: compatibility code, which must not grow unseen (nudge-growth and
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


# ---------------------------------------------------------------- ARCHITECTURE.md is true

DOCUMENTS = ("ARCHITECTURE.md", "engine/README.md")
OURS = ("engine", "lib", "labs", "exercises", "presentation", "tools", "benchmarks", "training")
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_<]\w*>?)+")
EXTENSIONS = (".py", ".md", ".json", ".toml", ".css", ".js", ".ipynb", ".npz", ".txt", ".tmpl")


def cited(document: str) -> list[str]:
    """Every text in backticks in ``document``, code blocks left out."""
    text = re.sub(r"```.*?```", "", (ROOT / document).read_text(encoding="utf-8"), flags=re.S)
    return sorted(set(re.findall(r"`([^`\n]+)`", text)))


def sources() -> str:
    """The text of every module of ours and of pyproject.toml."""
    return "\n".join([(ROOT / "pyproject.toml").read_text()] + [path.read_text(encoding="utf-8") for package in OURS
                                                               for path in (ROOT / package).rglob("*.py")])


def named_by_the_code(path: str) -> bool:
    """True for a file the code writes or reads by name (the build's release folder, served.json):
    its name is a string in a module of ours."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return f'"{name}"' in sources()


def defined_anywhere(name: str) -> bool:
    """True when a function or class ``name`` is defined in one of our packages."""
    for package in OURS:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_bytes())):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                    return True
    return False


def resolves(dotted: str) -> bool:
    """True when ``dotted`` is a module of ours, or a name inside one (a class's attribute or
    dataclass field too); ``<topic>`` stands for any sub-package."""
    parts = dotted.split(".")
    if "<" in dotted:
        head = parts[:next(i for i, p in enumerate(parts) if p.startswith("<"))]
        return (ROOT.joinpath(*head)).is_dir() and any((ROOT.joinpath(*head)).glob("*/__init__.py"))
    for split in range(len(parts), 0, -1):
        module = ".".join(parts[:split])
        try:
            found = importlib.import_module(module)
        except ImportError:
            continue
        for name in parts[split:]:
            fields = getattr(found, "__dataclass_fields__", {})
            if not hasattr(found, name) and name not in fields:
                return False
            found = getattr(found, name, None)
        return True
    return False


def problems(span: str) -> list[str]:
    """What in one text in backticks names a module, name, file or command that does not exist."""
    found = []
    command = re.match(r"python -m ([\w.]+)", span)
    if command:
        spec = importlib.util.find_spec(command.group(1))
        if spec is None or (spec.submodule_search_locations and not importlib.util.find_spec(f"{spec.name}.__main__")):
            found.append(f"no module {command.group(1)}.__main__" if spec else f"no module {command.group(1)}")
    script = re.match(r"\./course (\w[\w-]*)", span)
    if script and not re.search(rf"^\s*([\w|-]+\|)?{script.group(1)}(\|[\w|-]+)?\)",
                                (ROOT / "course").read_text(), flags=re.M):
        found.append(f"no command ./course {script.group(1)}")
    imported = re.match(r"from ([\w.]+) import ([\w, ]+)$", span)
    if imported:
        found += [f"no {imported.group(1)}.{n.strip()}" for n in imported.group(2).split(",")
                  if not resolves(f"{imported.group(1)}.{n.strip()}")]
    for module, attribute in re.findall(r"([\w.]+):(\w+)", span):
        if module.split(".")[0] in OURS and not resolves(f"{module}.{attribute}"):
            found.append(f"no {module}:{attribute}")
    if " " in span or command or imported:
        return found
    call = re.fullmatch(r"(\w+)\(.*\)", span)
    if call and not defined_anywhere(call.group(1)):
        found.append(f"no function {call.group(1)}")
    path = span.split(" ")[0]
    if "/" not in path and path.endswith(EXTENSIONS):          # a file name alone: some file of ours
        if not any(ROOT.glob(f"[!.]*/**/{path}")) and not (ROOT / path).exists() and not named_by_the_code(path):
            found.append(f"no file {path}")
    elif "/" in path:
        pattern = re.sub(r"<[^>]+>", "*", path.rstrip("/"))
        if not any(ROOT.glob(pattern)) and not (ROOT / pattern).exists() and not named_by_the_code(path):
            found.append(f"no file {path}")
    elif DOTTED.fullmatch(re.sub(r"\(.*\)$", "", span)) and span.split(".")[0] in OURS:
        if not resolves(re.sub(r"\(.*\)$", "", span)) and f'[project.entry-points."{span}"]' not in sources():
            found.append(f"no {span}")
    return found


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_module_name_file_and_command_the_architecture_cites_exists(document):
    found = {span: issues for span in cited(document) if (issues := problems(span))}
    assert found == {}


def test_the_citation_check_finds_what_does_not_exist():
    assert problems("engine.core.registry.definitions_module") == []
    assert problems("engine.core.course.Course.release") == []
    assert problems("engine.core.registry.no_such_function") == ["no engine.core.registry.no_such_function"]
    assert problems("engine/core/nowhere.py") == ["no file engine/core/nowhere.py"]
    assert problems("labs/<topic>/<lab>.py") == []
    assert problems("python -m engine cells content") == []
    assert problems("python -m exercises") == ["no module exercises.__main__"]
    assert problems("python -m lib.exercises solve") == []
    assert problems("./course lab") == [] and problems("./course nope") == ["no command ./course nope"]
    assert problems("from labs.norms import stack_lab") == []
    assert problems("from labs.norms import nothing_here") == ["no labs.norms.nothing_here"]
    assert problems('"lib.params.REAL_MODELS" = "labs.decoder.models:REAL_MODELS"') == []
    assert problems("begin()") == [] and problems("never_defined()") == ["no function never_defined"]
    assert problems("access.css") == [] and problems("nowhere.css") == ["no file nowhere.css"]
    assert problems("engine.courses") == [] and problems("engine.nowhere") == ["no engine.nowhere"]
