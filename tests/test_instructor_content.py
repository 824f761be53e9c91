"""Nothing outside the course ships, and each thing content/ must not hold gets one sentence:
symbolic links (to a file, to a folder above, dangling), hidden folders and files, an unreadable
notebook, JupyterLab's Duplicate, solution code pasted outside the exercise cells; a build never
follows a link out of content/ (even with --ship-anyway); `./course check` names each, and a
build refused for them writes nothing. A notebook's metadata alone makes no new release, and the
course wheel's name depends on what it holds, not on when it was built."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import CONTENT, ROOT
from engine.core.notebooks import exercise_id, solve_notebook
from tools import guard, release
from tools import site as site_tool

START = "00_start_here.ipynb"


@pytest.fixture
def content(tmp_path):
    copy = tmp_path / "content"
    shutil.copytree(CONTENT, copy)
    return copy


def one_line_each(found, name):
    said = [problem for nb, problem in found if nb == name]
    assert len(said) == 1 and "\n" not in said[0] and "Traceback" not in said[0], said
    return said[0]


def refused_build(content, ship_anyway=False):
    output = content.parent / "site"
    with pytest.raises(site_tool.BuildError) as refused:
        site_tool.build(output, content=content, ship_anyway=ship_anyway)
    assert not output.exists(), "a refused build wrote a site"
    assert "Traceback" not in str(refused.value)
    return str(refused.value)


def test_a_link_to_a_file_outside_is_refused_even_when_shipping_anyway(content, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET answer key")
    (content / "notes.txt").symlink_to(secret)
    said = one_line_each(guard.problems(content), "notes.txt")
    assert said.startswith(f"a symbolic link (to {secret}): the build would ship what it points to")
    assert "notes.txt: a symbolic link" in refused_build(content, ship_anyway=True)


def test_a_link_to_a_folder_above_is_refused_and_never_copied(content):
    (content / "loop").symlink_to("..")
    said = one_line_each(guard.problems(content), "loop")
    assert said.startswith("a symbolic link (to ..)")
    message = refused_build(content, ship_anyway=True)
    assert "even with --ship-anyway" in message and "loop: a symbolic link" in message
    staged = content.parent / "staged"
    release.stage_contents(content, staged)                 # the staging copy on its own follows none
    assert not (staged / "loop").exists() and sorted(p.name for p in staged.iterdir()) == sorted(
        p.name for p in CONTENT.iterdir())


def test_a_dangling_link_is_one_sentence(content):
    (content / "gone.ipynb").symlink_to(content / "nowhere.ipynb")
    said = one_line_each(guard.problems(content), "gone.ipynb")
    assert said == f"a symbolic link to {content / 'nowhere.ipynb'}, which does not exist: delete it"
    assert "gone.ipynb: a symbolic link" in refused_build(content)


@pytest.mark.parametrize("folder", [".vscode", ".virtual_documents"])
def test_a_hidden_folder_is_one_sentence_and_what_is_inside_is_not_listed_again(content, folder):
    (content / folder).mkdir()
    (content / folder / "settings.json").write_text("{}")
    (content / folder / "00_start_here.ipynb").write_text("{}")
    found = guard.problems(content)
    said = one_line_each(found, folder)
    assert said.startswith("a hidden folder (an editor's or JupyterLab's own)")
    assert not [nb for nb, _ in found if nb.startswith(folder + "/")]
    assert f"{folder}: a hidden folder" in refused_build(content, ship_anyway=True)


def test_a_hidden_file_is_refused(content):
    (content / ".env").write_text("TOKEN=1")
    assert one_line_each(guard.problems(content), ".env").startswith("a hidden file")


def test_an_unreadable_notebook_is_one_sentence_even_when_shipping_anyway(content):
    (content / "01_positional_encoding.ipynb").write_text('{"cells": [')      # cut short
    said = one_line_each(guard.problems(content), "01_positional_encoding.ipynb")
    assert said == "cannot be read as a notebook (JSONDecodeError): restore it with git checkout, or delete it"
    message = refused_build(content, ship_anyway=True)
    assert "01_positional_encoding.ipynb: cannot be read as a notebook" in message


def test_a_notebook_without_read_permission_is_one_sentence(content, monkeypatch):
    """(Root reads every file, so the refusal the system gives is raised here in its place.)"""
    locked = content / START
    read = type(locked).read_text

    def refuse(path, *args, **kwargs):
        if path == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return read(path, *args, **kwargs)

    monkeypatch.setattr(type(locked), "read_text", refuse)
    assert one_line_each(guard.problems(content), START) == ("cannot be read (Permission denied): give it read "
                                                            "permission, or delete it")


def test_jupyterlabs_duplicate_is_refused(content):
    shutil.copy(content / START, content / "00_start_here-Copy1.ipynb")
    said = one_line_each(guard.problems(content), "00_start_here-Copy1.ipynb")
    assert said.startswith("a copy made by JupyterLab's Duplicate (learners would see the notebook twice)")


def test_check_names_each_thing_in_one_line(content, tmp_path):
    """`./course check` (python -m tools.site check) on a content/ with a link, a copy and a hidden
    folder: one line each, no traceback, exit 1."""
    (content / "loop").symlink_to("..")
    shutil.copy(content / START, content / "00_start_here-Copy1.ipynb")
    (content / ".vscode").mkdir()
    found = guard.problems(content)
    assert [nb for nb, _ in found] == ["loop", ".vscode", "00_start_here-Copy1.ipynb"] or \
        sorted(nb for nb, _ in found) == sorted(["loop", ".vscode", "00_start_here-Copy1.ipynb"])
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "content").symlink_to(content)      # check reads ROOT/content: run it on a copy's
    done = subprocess.run([sys.executable, "-c", "import sys; from tools import site; "
                           f"site.ROOT = __import__('pathlib').Path({str(checkout)!r}); site.main(['check'])"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    for name in ("loop: a symbolic link", ".vscode: a hidden folder", "00_start_here-Copy1.ipynb: a copy made"):
        assert name in done.stderr


def solved_cell(name):
    notebook = json.loads((CONTENT / name).read_text())
    solved, _ = solve_notebook(json.loads(json.dumps(notebook)))
    return next(c for c in solved["cells"] if exercise_id(c))


@pytest.mark.parametrize("kind", ["markdown", "code"])
def test_solution_code_pasted_outside_the_exercise_cells_is_refused(content, kind):
    name = "01_positional_encoding.ipynb"
    cell = solved_cell(name)
    notebook = json.loads((content / name).read_text())
    source = ["Here it is:\n", "```python\n", *cell["source"], "\n```"] if kind == "markdown" else cell["source"]
    pasted = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        pasted.update(outputs=[], execution_count=None)
    notebook["cells"].append(pasted)
    (content / name).write_text(json.dumps(notebook, indent=1))
    said = one_line_each(guard.problems(content), name)
    ex = cell["metadata"]["course"]["exercise"]
    assert said == f"cell {len(notebook['cells'])} holds the solution of {ex} outside its exercise cell: delete it"


def test_the_shipped_notebooks_hold_no_pasted_solution():
    for path in guard.notebooks_in(CONTENT):
        assert guard.pasted_solutions(json.loads(path.read_text())) == [], path.name


def test_a_change_of_metadata_alone_keeps_the_release(content, tmp_path):
    """What running a notebook and `./course check --clear` leave (language_info), another
    editor's indentation and key order: the same fingerprints and release version."""
    first = release.stage_contents(content, tmp_path / "a")
    notebook = json.loads((content / START).read_text())
    notebook["metadata"]["language_info"] = {"codemirror_mode": {"name": "ipython", "version": 3},
                                             "pygments_lexer": "ipython3", "version": "3.11.7"}
    (content / START).write_text(json.dumps(notebook, indent=2, sort_keys=True))
    second = release.stage_contents(content, tmp_path / "b")
    assert second["notebooks"] == first["notebooks"] and second["version"] == first["version"]
    notebook["cells"][0]["source"] = ["# 00 Start here, reworded\n"]
    (content / START).write_text(json.dumps(notebook, indent=1))
    third = release.stage_contents(content, tmp_path / "c")
    assert third["notebooks"][START] != first["notebooks"][START] and third["version"] != first["version"]


def test_the_release_date_is_the_contents_not_the_builds(content, tmp_path, monkeypatch):
    """Two builds of the same content, minutes apart, make the same manifest, so the same wheel
    name (its name is a hash of what it holds)."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = release.stage_contents(content, tmp_path / "a")
    monkeypatch.setattr(release.time, "time", lambda: 4_000_000_000.0)      # a build years later
    assert release.stage_contents(content, tmp_path / "b") == first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert release.stage_contents(content, tmp_path / "c")["built"] == "2023-11-14 22:13 UTC"
