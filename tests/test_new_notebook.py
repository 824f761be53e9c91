"""``./course new NAME`` (tools/new.py): a new notebook with one lab and one exercise, written into
a copy of the repository, passes the suites that concern it there, with no list edited.

The suites run in one pytest process in the copy, on what concerns the new notebook: nbval as
shipped and solved, the exercise tests and the mutants of its solution, the course-wide notebook
rules, no answer in sight above its exercise, the lab's own tests, its figure view, package
layout and number formats, the coverage test (tests/test_inventory.py: every notebook, lab,
exercise and question covered by every suite) and the import contracts. The browser tests and
tests/test_labs_layout.py (which builds every lab) find the new notebook the same way, through
the course's inventory; they are left out here for time.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("engine", "lib", "exercises", "labs", "presentation", "content", "tests", "tools", "benchmarks", "training",
          "conftest.py", "pytest.ini", ".importlinter", "pyproject.toml")
# the number after the highest notebook's, as ``./course new`` gives it
NUMBER = f"{max(int(p.name[:2]) for p in (ROOT / 'content').glob('[0-9][0-9]_*.ipynb')) + 1:02d}"
NEW = [f"content/{NUMBER}_demo_topic.ipynb", "exercises/definitions/demo_topic.py", "labs/demo_topic/__init__.py",
       "labs/demo_topic/demo_topic.py", "tests/test_labs_demo_topic.py", f"tests/data/answers/{NUMBER}_demo_topic.toml"]
SUITES = ["tests/test_labs_demo_topic.py", "tests/test_inventory.py", "tests/test_notebooks.py",
          "tests/test_exercises.py", "tests/test_check_mutants.py", "tests/test_content_00.py",
          "tests/test_figure_view.py", "tests/test_labs_packages.py", "tests/test_labs_number_formats.py",
          "tests/test_architecture.py", "tests/test_answers_in_sight.py"]
CHOSEN = "demo or test_inventory or import_contracts or (test_labs_packages and not verdict)"


def copy_of_the_repository(folder: Path) -> Path:
    copy = folder / "course"
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "_release")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=ignore)
        else:
            copy.mkdir(exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy


def files_of(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts}


def test_a_new_notebook_passes_the_suites_that_concern_it_with_no_list_edited(tmp_path):
    copy = copy_of_the_repository(tmp_path)
    before = files_of(copy)
    env = {**os.environ, "PYTHONPATH": str(copy), "MPLBACKEND": "Agg", "CI": "true",
           "COURSE_PROGRESS_FILE": str(tmp_path / "progress.json")}
    env.pop("COURSE_STRICT", None)
    made = subprocess.run([sys.executable, "-m", "tools.new", "demo_topic", "--title", "A demonstration"],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    after = files_of(copy)
    assert sorted(set(after) - set(before)) == sorted(NEW)
    assert all(after[name] == data for name, data in before.items()), "the scaffold edited a file"
    assert f"# {NUMBER} A demonstration" in after[f"content/{NUMBER}_demo_topic.ipynb"].decode()

    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-o", "addopts=",
                           *SUITES, "-k", CHOSEN], cwd=copy, env=env, capture_output=True, text=True, timeout=900)
    tail = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    summary = done.stdout.strip().splitlines()[-1]
    assert " failed" not in summary and " error" not in summary, tail
    passed = {line.split(" PASSED")[0] for line in done.stdout.splitlines() if " PASSED" in line}
    for test in (f"tests/test_notebooks.py::test_notebook_runs_as_shipped[{NUMBER}_demo_topic.ipynb]",
                 f"tests/test_notebooks.py::test_notebook_runs_solved_with_every_check_passing[{NUMBER}_demo_topic.ipynb]",
                 f"tests/test_exercises.py::test_notebook_follows_the_conventions[{NUMBER}_demo_topic.ipynb]",
                 "tests/test_check_mutants.py::test_every_mutant_of_the_solution_is_rejected_by_the_fixed_cases"
                 "[demo-topic-centre]",
                 f"tests/test_content_00.py::test_each_notebook_ends_with_its_references[{NUMBER}_demo_topic.ipynb]",
                 "tests/test_answers_in_sight.py::test_no_answer_in_sight_above_a_question_or_an_exercise"
                 f"[{NUMBER}-demo-topic-centre]",
                 "tests/test_figure_view.py::test_every_lab_shows_the_pixels_of_a_full_draw_after_every_change"
                 "[demo_topic.demo_topic_lab]",
                 "tests/test_labs_packages.py::test_each_package_re_exports_exactly_what_the_notebooks_import"
                 "[demo_topic]",
                 "tests/test_labs_number_formats.py::test_the_lab_module_writes_no_number_itself"
                 "[labs/demo_topic/demo_topic.py]",
                 "tests/test_inventory.py::test_every_lab_is_called_by_a_notebook_and_driven_by_the_lab_tests_and_"
                 "benchmarks",
                 "tests/test_architecture.py::test_import_contracts_hold"):
        assert test in passed, f"{test} did not run and pass:\n{tail}"
    assert len(passed) >= 60, summary
