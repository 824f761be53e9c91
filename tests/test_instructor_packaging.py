"""The course package: described by pyproject.toml, its wheel built with `python -m build`,
reproducible and named after its content; the lock entries read from the wheels' own metadata;
and the course (lib, exercises, labs, presentation) kept apart from the tools, tests, benchmarks and training."""

import ast
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tools import lock as locks
from tools import site as site_tool
from tools import wheel

ROOT = Path(__file__).resolve().parents[1]
COURSE = ("engine", "lib", "exercises", "labs", "presentation")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The course wheel as the site build makes it (with release data added)."""
    extra = {"exercises/_release/manifest.json": b'{"version": "test"}'}
    return wheel.build_wheel(tmp_path_factory.mktemp("wheel"), extra_files=extra), extra


def test_the_wheel_is_built_by_the_backend_pyproject_names(built):
    path, extra = built
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL"))
        generator = archive.read(f"{info}/WHEEL").decode()
        stamps = {entry.date_time for entry in archive.infolist()}
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert "Generator: setuptools" in generator
    assert stamps == {(2026, 1, 1, 0, 0, 0)}
    expected = set(wheel.wheel_files(extra_files=extra))
    assert expected == set(wheel.source_files()) | {wheel.SERVED_INDEX} | set(extra)
    assert {n for n in names if ".dist-info/" not in n} == expected
    meta = wheel.metadata(path)
    assert meta["name"] == project["project"]["name"] == "transformer-course"
    assert meta["requires"] == project["project"]["dependencies"]
    assert set(meta["imports"]) == set(COURSE)
    files = wheel.wheel_files(extra_files=extra)
    assert meta["version"] == f"{project['project']['version']}+g{wheel.content_hash(files)}"
    assert path.name == f"transformer_course-{meta['version']}-py3-none-any.whl"


TEST_ONLY = ("tests/", "conftest.py", "answers", ".toml", "engine/core/testing.py")


def test_nothing_test_only_ships_in_the_wheel(built):
    """What checks the checker stays with the tests (tests/exercise_answers.py and
    tests/data/answers/): the wheel every learner's browser loads holds no wrong answers or other
    formulations written as ``wrong=`` or ``alternatives=`` fixtures, no answers data and no test
    helper module."""
    path, _extra = built
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if ".dist-info/" not in n]
        assert not [n for n in names if any(part in n for part in TEST_ONLY)]
        fixtures = [f"{name}:{node.lineno} {keyword.arg}=" for name in names if name.endswith(".py")
                    for node in ast.walk(ast.parse(archive.read(name))) if isinstance(node, ast.Call)
                    for keyword in node.keywords if keyword.arg in ("wrong", "alternatives")]
    assert fixtures == []
    assert any(n.startswith("exercises/definitions/") for n in names), "the definitions do ship"
    assert any(n.startswith("exercises/retired/") for n in names), \
        "the retired exercises ship too: notebooks saved from earlier releases check them in the browser"


def test_the_trained_models_arrays_are_served_beside_the_wheel_not_inside_it(built):
    """Every notebook preloads the wheel; the 2 MB of arrays only notebook 05 needs are files of
    their own, named by their hash, which the wheel's served.json describes and its entry point
    tells lib how to fetch."""
    import hashlib
    import json

    from lib import files

    path, _ = built
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        index = json.loads(archive.read(wheel.SERVED_INDEX))
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert not [n for n in names if n.startswith("lib/trained/") and n.endswith(".npz")]
    assert "labs/decoder/precomputed.npz" in names      # notebook 04's 2 kB of looked-up results ship inside
    assert "lib/trained/placement_stacks.npz" not in names      # notebook 03's 40 kB are served beside it
    served = wheel.served_files()
    assert sorted(index) == sorted(p.name for p in served.values()) == [
        "heldout_texts.npz", "placement_runs.npz", "placement_stacks.npz", "precomputed.npz", "reference.npz",
        "training_record.npz", "weights.npz"]
    for name, source in served.items():
        entry = index[source.name]
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        assert entry["file"] == name == f"{source.stem}-{digest[:12]}.npz"
        assert (entry["sha256"], entry["bytes"]) == (digest, source.stat().st_size)
        assert {k: tuple(v) for k, v in entry["arrays"].items()} == files.shapes_in(source)
    assert f"[{files.GROUP}]\nsite = engine.core.site_files:fetch" in entry_points


def test_the_same_files_give_the_same_bytes_and_a_change_a_new_name(built, tmp_path):
    path, extra = built
    again = wheel.build_wheel(tmp_path / "again", extra_files=extra)
    assert again.name == path.name and again.read_bytes() == path.read_bytes()
    copy = tmp_path / "checkout"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy)
    for package in COURSE:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "_release"))
    (copy / "lib" / "norm.py").write_text((copy / "lib" / "norm.py").read_text() + "\n# changed\n")
    changed = wheel.build_wheel(tmp_path / "changed", root=copy, extra_files=extra)
    assert changed.name != path.name
    assert wheel.metadata(changed)["version"].startswith("0.1.0+g")


def test_lock_entries_are_read_from_each_wheels_metadata(built):
    path, _ = built
    added = [path, *site_tool.fetch_added_wheels()]
    lock = locks.online_lock(added)
    for wheel_path in added:
        meta = wheel.metadata(wheel_path)
        entry = lock["packages"][locks.normalise(meta["name"])]
        assert entry["version"] == meta["version"] and entry["file_name"] == wheel_path.name
        assert entry["imports"] == meta["imports"]
        assert entry["depends"] == [locks.normalise(r) for r in meta["requires"]
                                    if locks.normalise(r) in lock["packages"]]
        assert entry["sha256"] == locks.sha256_of(wheel_path)
    ipywidgets = lock["packages"]["ipywidgets"]
    # Its JupyterLab front-end packages are not Python the kernel loads: left out.
    assert ipywidgets["depends"] == ["comm", "ipython", "traitlets"]
    assert {"widgetsnbextension", "jupyterlab-widgets"} <= {
        locks.normalise(r) for r in wheel.metadata(added[1])["requires"]}


def imports_of(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_the_course_imports_no_tests_and_nothing_edits_sys_path():
    for package in COURSE:
        for path in (ROOT / package).rglob("*.py"):
            bad = [m for m in imports_of(path) if m.split(".")[0] in ("tests", "conftest", "exercise_answers")
                   or m.split(".")[0].startswith("test_")]
            assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
    edits = ("sys.path." + "insert", "sys.path." + "append")  # not spelled out: this file is checked too
    for folder in ("tools", "benchmarks", "training", "tests", *COURSE):
        for path in (ROOT / folder).rglob("*.py"):
            if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue          # a hidden cache, not the course's code (./course bench's benchmarks/.noblas/ venv)
            text = path.read_text(encoding="utf-8")
            assert not any(edit in text for edit in edits), path


def test_the_import_contract_catches_the_course_importing_a_tool(tmp_path):
    for name in (*COURSE, "tools", "benchmarks", "training"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path)
    labs = tmp_path / "labs" / "__init__.py"
    labs.write_text(labs.read_text() + "\nimport tools.site  # not allowed\n")
    linter = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(linter), "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "1 broken" in done.stdout and "labs is not allowed to import tools" in done.stdout
    assert "labs -> tools.site" in done.stdout
