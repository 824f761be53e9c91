"""The JavaScript the tools and the browser tests evaluate in the page lives in .js files beside
them, read by tools.browser.page_snippets: every name the code asks for is there, every snippet
is asked for, and every snippet is valid JavaScript once its placeholders are filled."""

import importlib
import re
import subprocess
from pathlib import Path

import pytest

from tools.browser import page_snippets

ROOT = Path(__file__).resolve().parent.parent
NAMED = re.compile(r"""SNIPPETS\[["']([A-Z_]+)["']\]""")
PLACEHOLDER = re.compile(r"__([A-Z_]+)__")
READS = re.compile(r"""(?m)^SNIPPETS = page_snippets\(Path\(__file__\)\.with_suffix\(".js"\)""")


def _readers() -> dict[str, Path]:
    """{module name: its file} of every module of ours that reads the snippets of the .js beside it."""
    found = {}
    for folder in ("tools", "benchmarks", "tests"):
        for path in sorted((ROOT / folder).glob("*.py")):
            if READS.search(path.read_text(encoding="utf-8")):
                found[path.stem if folder == "tests" else f"{folder}.{path.stem}"] = path   # tests/ is on the path
    return found


READERS = _readers()


def test_the_tools_and_the_browser_tests_read_their_snippets():
    assert {"tools.browser", "tools.site_run", "test_browser_access"} <= set(READERS)


def _names_in(paths) -> set[str]:
    return {name for path in paths for name in NAMED.findall(path.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("name", READERS)
def test_every_snippet_the_code_names_is_in_its_file(name):
    module = importlib.import_module(name)
    named = _names_in([READERS[name]])
    assert named, f"{module.__name__} names no snippet"
    assert named <= set(module.SNIPPETS), f"not in {module.__name__}'s .js: {sorted(named - set(module.SNIPPETS))}"


@pytest.mark.parametrize("name", READERS)
def test_every_snippet_in_a_file_is_named_by_the_code(name):
    module = importlib.import_module(name)
    source = READERS[name].with_suffix(".js").read_text(encoding="utf-8")
    used = _names_in([READERS[name]]) | set(PLACEHOLDER.findall(source))
    assert set(module.SNIPPETS) <= used, f"never named: {sorted(set(module.SNIPPETS) - used)}"


@pytest.mark.parametrize("name", READERS)
def test_no_placeholder_is_left_unfilled(name):
    module = importlib.import_module(name)
    left = {snippet: PLACEHOLDER.findall(code) for snippet, code in module.SNIPPETS.items() if PLACEHOLDER.search(code)}
    assert not left


@pytest.mark.parametrize("name", READERS)
def test_every_snippet_is_a_valid_javascript_expression(name, tmp_path):
    module = importlib.import_module(name)
    for snippet, code in module.SNIPPETS.items():           # Node.js reads the syntax
        path = tmp_path / f"{snippet}.js"
        path.write_text(f"({code});\n", encoding="utf-8")
        checked = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
        assert checked.returncode == 0, f"{snippet}: {checked.stderr}"


def test_a_placeholder_with_no_value_fails_loudly(tmp_path):
    path = tmp_path / "snippets.js"
    path.write_text("// --- FIRST\n() => __NOWHERE__\n", encoding="utf-8")
    with pytest.raises(KeyError, match="NOWHERE"):
        page_snippets(path)


def test_a_snippet_reads_its_values_and_the_snippets_above_it(tmp_path):
    path = tmp_path / "snippets.js"
    path.write_text("// a comment\n// --- ONE\n// what ONE does\nx => x + __STEP__\n"
                    "// --- TWO\nx => (__ONE__)(x) * 2\n", encoding="utf-8")
    assert page_snippets(path, STEP="1") == {"ONE": "x => x + 1", "TWO": "x => (x => x + 1)(x) * 2"}
