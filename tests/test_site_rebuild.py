"""A rebuild while learners work: the course wheel's name depends on what it holds only, and the
new site keeps the previous build's wheel, its zip of notebooks and arrays, so a kernel that read
the old lock just before the swap still finds them (and nothing piles up over builds). The build
writes a gzip copy beside every compressible file, and the lengths the landing page's checks
compare."""

import gzip
import json
import shutil
import zipfile

from conftest import CONTENT
from engine.core import release
from tools import site as site_tool
from tools.site_swap import KEPT
from tools.wheel import served_files

LOCK = "static/pyodide-lock"


def wheel_of(site):
    lock = json.loads((site / LOCK / "pyodide-lock.json").read_text())
    return lock["packages"]["transformer-course"]["file_name"]


def arrays_of(site):
    return sorted(p.name for p in (site / LOCK).glob("*.npz"))


def notebooks_zip_of(site):
    """The served zip of the release's notebooks that the manifest in the site's wheel names."""
    with zipfile.ZipFile(site / LOCK / wheel_of(site)) as wheel:
        return json.loads(wheel.read("exercises/_release/manifest.json"))[release.ARCHIVE]


def test_a_rebuild_keeps_the_previous_builds_wheel_and_notebooks_zip_and_only_those(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    site = tmp_path / "site"
    site_tool.build(site, content=content)
    first, first_zip = wheel_of(site), notebooks_zip_of(site)
    assert json.loads((site / LOCK / KEPT).read_text()) == []
    # (An unchanged rebuild makes the same manifest, so the same wheel name: tests/test_instructor_content.py.)

    notebook = json.loads((content / "00_start_here.ipynb").read_text())
    notebook["cells"][0]["source"] = ["# Start here, reworded\n"] + notebook["cells"][0]["source"][1:]
    (content / "00_start_here.ipynb").write_text(json.dumps(notebook, indent=1))
    site_tool.build(site, content=content)
    second, second_zip = wheel_of(site), notebooks_zip_of(site)
    assert second != first and second_zip != first_zip
    assert (site / LOCK / first).is_file(), "the previous build's wheel is gone"
    assert (site / LOCK / first_zip).is_file(), "the previous build's notebooks are gone"
    assert json.loads((site / LOCK / KEPT).read_text()) == sorted([first, first_zip])
    assert sorted(p.name for p in (site / LOCK).glob("release-notebooks-*")) == sorted([first_zip, second_zip])

    notebook["cells"][0]["source"] = ["# Start here, reworded again\n"] + notebook["cells"][0]["source"][1:]
    (content / "00_start_here.ipynb").write_text(json.dumps(notebook, indent=1))
    site_tool.build(site, content=content)
    assert (site / LOCK / second).is_file() and not (site / LOCK / first).exists()
    assert (site / LOCK / second_zip).is_file() and not (site / LOCK / first_zip).exists()
    assert json.loads((site / LOCK / KEPT).read_text()) == sorted([second, second_zip])
    assert sorted(p.name for p in (site / LOCK).glob("release-notebooks-*")) == sorted([second_zip, notebooks_zip_of(site)])
    served = sorted(served_files())
    assert arrays_of(site) == served, "the arrays did not change: each is served once, none kept twice"


def test_every_compressible_file_has_a_gzip_copy_with_its_time(online_site):
    site, _ = online_site
    for name in ("index.html", "jupyter-lite.json", "lab/index.html", "static/course/course-check.js",
                 "build/schemas/all.json"):
        original, copy = site / name, site / f"{name}.gz"
        assert copy.is_file(), name
        assert gzip.decompress(copy.read_bytes()) == original.read_bytes(), name
        assert copy.stat().st_mtime_ns == original.stat().st_mtime_ns, name
    assert not list((site / LOCK).glob("*.whl.gz")), "wheels are compressed already"


def test_the_landing_page_knows_each_checked_files_length(online_site):
    site, _ = online_site
    config = json.loads((site / "static/course/course-config.json").read_text())
    wheel = f"{LOCK}/{wheel_of(site)}"
    assert config["sizes"][wheel] == (site / wheel).stat().st_size
    assert all((site / path).stat().st_size == size for path, size in config["sizes"].items())
