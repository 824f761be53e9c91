"""The built site: what it holds and how its Pyodide lock is written (no browser)."""

import hashlib
import html
import json
import zipfile

from conftest import notebooks, CONTENT
from engine.core import inventory, release
from tools import lock as locks

KERNEL = "@jupyterlite/pyodide-kernel-extension:kernel"


def kernel_settings(site):
    config = json.loads((site / "jupyter-lite.json").read_text())
    return config["jupyter-config-data"]["litePluginSettings"][KERNEL]


def served_lock(site):
    return json.loads((site / "static/pyodide-lock/pyodide-lock.json").read_text())


def test_every_notebook_is_in_the_site(online_site):
    site, _ = online_site
    for notebook in notebooks():
        relative = notebook.relative_to(CONTENT)
        assert (site / "files" / relative).is_file(), f"{relative} is missing from the site"
        listing = json.loads((site / "api/contents" / relative.parent / "all.json").read_text())
        assert relative.name in {item["name"] for item in listing["content"]}


def test_site_has_no_source_maps_and_stays_small(online_site):
    site, report = online_site
    maps = [p for p in site.rglob("*.map")]
    assert maps == [], f"source maps were shipped: {maps[:3]}"
    assert report["megabytes"] < 40, f"the site weighs {report['megabytes']} MB"


def test_lock_registers_the_course_wheel_with_its_imports(online_site):
    site, _ = online_site
    entry = served_lock(site)["packages"]["transformer-course"]
    assert set(entry["imports"]) == {"engine", "lib", "exercises", "labs", "presentation"}
    assert set(entry["depends"]) == {"numpy", "matplotlib", "ipywidgets"}
    wheel = site / "static/pyodide-lock" / entry["file_name"]
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"]
    names = set(zipfile.ZipFile(wheel).namelist())
    library = {p.relative_to(CONTENT.parent).as_posix() for d in ("engine", "lib", "exercises", "labs", "presentation")
               for p in (CONTENT.parent / d).rglob("*.py") if "__pycache__" not in p.parts}
    # the instructors' report runs on the instructor's machine only: not in what learners load
    report = {n for n in library if n.startswith("engine/report/")}
    assert report and not report & names, sorted(report & names)[:3]
    library -= report
    library |= {f"lib/trained/{p.name}" for p in (CONTENT.parent / "lib" / "trained").glob("*.json")}
    library |= {"lib/trained/served.json"}
    assert library and library <= names, f"missing from the wheel: {sorted(library - names)[:5]}"
    release = {n for n in names if n.startswith("exercises/_release/")}
    assert "exercises/_release/manifest.json" in release
    shipped = zipfile.ZipFile(wheel).read("exercises/_release/inventory.json").decode()
    assert shipped == inventory.to_json(inventory.scan(CONTENT))       # what the registry reads there


def test_the_site_serves_the_stamped_notebooks_in_one_hashed_zip_beside_the_wheel_not_in_it(online_site):
    """A fresh copy of a newer notebook comes from the zip the manifest in the wheel names; the
    wheel every notebook preloads holds no notebook."""
    site, _ = online_site
    lock_dir = site / "static/pyodide-lock"
    wheel = lock_dir / served_lock(site)["packages"]["transformer-course"]["file_name"]
    with zipfile.ZipFile(wheel) as archive:
        manifest = json.loads(archive.read("exercises/_release/manifest.json"))
        assert [n for n in archive.namelist() if n.endswith(".ipynb")] == []
    name = manifest[release.ARCHIVE]
    served = lock_dir / name
    data = served.read_bytes()
    assert name == f"release-notebooks-{hashlib.sha256(data).hexdigest()[:12]}.zip"
    assert sorted(lock_dir.glob("release-notebooks-*.zip")) == [served]
    expected = sorted(p.relative_to(CONTENT).as_posix() for p in notebooks())
    assert sorted(manifest["notebooks"]) == expected
    with zipfile.ZipFile(served) as archive:
        assert archive.namelist() == expected
        assert {entry.date_time for entry in archive.infolist()} == {(2026, 1, 1, 0, 0, 0)}
        for path in expected:
            notebook = json.loads(archive.read(path))
            assert notebook["metadata"]["course"]["release"] == {
                "fingerprint": manifest["notebooks"][path], "version": manifest["version"]}, path
            assert notebook["cells"] == json.loads((CONTENT / path).read_text())["cells"], path


def served_arrays_problems(site):
    """What is wrong with the trained model's arrays the site serves beside the course wheel."""
    lock = served_lock(site)
    lock_dir = site / "static/pyodide-lock"
    wheel = lock_dir / lock["packages"]["transformer-course"]["file_name"]
    with zipfile.ZipFile(wheel) as archive:
        index = json.loads(archive.read("lib/trained/served.json"))
        inside = [n for n in archive.namelist() if n.startswith("lib/trained/") and n.endswith(".npz")]
    problems = [f"{n} is inside the wheel" for n in inside]
    for name in ("weights.npz", "heldout_texts.npz", "reference.npz", "precomputed.npz"):
        entry = index.get(name)
        if entry is None:
            problems.append(f"{name} is not in served.json")
            continue
        served = lock_dir / entry["file"]
        source = CONTENT.parent / "lib" / "trained" / name
        if not served.is_file():
            problems.append(f"{entry['file']} is not in the site")
        elif served.read_bytes() != source.read_bytes() or hashlib.sha256(served.read_bytes()).hexdigest() != entry["sha256"]:
            problems.append(f"{entry['file']} is not {source}")
    return problems


def test_the_site_serves_the_trained_models_arrays_beside_the_wheel(online_site):
    site, _ = online_site
    assert served_arrays_problems(site) == []


def test_notebook_00_preloads_at_most_600_kB_of_the_courses_own_bytes(online_site):
    """Before notebook 00's first cell runs, the page has the notebook and the kernel has loaded
    the packages it preloads; of those bytes, the course's own (the notebook and the course
    wheel) stay within 600 kB: the trained model's arrays are not among them."""
    from benchmarks.system import preloaded_course_bytes

    site, _ = online_site
    found = preloaded_course_bytes(site)
    wheel = served_lock(site)["packages"]["transformer-course"]["file_name"]
    assert set(found["parts"]) == {f"course wheel ({wheel})", "notebook 00_start_here.ipynb"}
    assert found["bytes"] == sum(found["parts"].values()) <= 600_000, found


def test_the_committed_settings_reach_the_site_and_the_build_adds_only_what_it_computes(online_site):
    """jupyter-lite.json and overrides.json (committed) hold the site's static settings; the build
    writes only the hashed lock address and the packages to preload."""
    site, _ = online_site
    data = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    committed = json.loads((CONTENT.parent / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert data["appName"] == committed["appName"] == "The transformer block, part by part"
    overrides = json.loads((CONTENT.parent / "overrides.json").read_text())
    assert overrides["@jupyterlab/docmanager-extension:plugin"]["autosaveInterval"] == 5
    for plugin, values in overrides.items():
        assert data["settingsOverrides"][plugin] == values
    assert set(kernel_settings(site)) - {"pipliteUrls"} == {"loadPyodideOptions"}   # pipliteUrls: jupyter lite's
    assert set(kernel_settings(site)["loadPyodideOptions"]) == {"lockFileURL", "packages"}


def test_online_lock_points_pyodide_packages_at_the_cdn(online_site):
    site, _ = online_site
    packages = served_lock(site)["packages"]
    numpy = packages["numpy"]
    assert numpy["version"] == "2.4.6"
    assert numpy["file_name"] == locks.CDN_URL + "numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl"
    assert packages["matplotlib"]["version"] == "3.10.8"
    for name in ("ipywidgets", "comm"):
        wheel = site / "static/pyodide-lock" / packages[name]["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == packages[name]["sha256"]


def test_online_site_preloads_the_course_and_serves_its_own_lock(online_site):
    site, _ = online_site
    settings = kernel_settings(site)
    options = settings["loadPyodideOptions"]
    lock_file = site / "static/pyodide-lock/pyodide-lock.json"
    version = hashlib.sha256(lock_file.read_bytes()).hexdigest()[:12]
    assert options["lockFileURL"] == f"./static/pyodide-lock/pyodide-lock.json?v={version}"
    assert {"numpy", "matplotlib", "ipywidgets", "transformer-course"} <= set(options["packages"])
    assert "pyodideUrl" not in settings, "the default build must use Pyodide's CDN"


def test_no_shipped_cell_puts_its_output_in_a_scrolling_box():
    """JupyterLab shows an output in a 24em scrolling box when its cell's metadata says
    "scrolled": true (a lab's plot cut, the sentence under it hidden); no shipped cell says so,
    and the site's Notebook interface does not scroll tall outputs by itself (overrides.json)."""
    for notebook in notebooks():
        cells = json.loads(notebook.read_text())["cells"]
        marked = [i for i, cell in enumerate(cells) if "scrolled" in cell.get("metadata", {})]
        assert marked == [], f"{notebook.name}: cells {marked} carry 'scrolled' metadata"
    overrides = json.loads((CONTENT.parent / "overrides.json").read_text())
    assert overrides["@jupyter-notebook/notebook-extension:scroll-output"] == {"autoScrollOutputs": False}


def test_notebooks_ask_for_the_kernel_named_python():
    for notebook in notebooks():
        spec = json.loads(notebook.read_text())["metadata"]["kernelspec"]
        assert spec["name"] == "python", f"{notebook.name}: kernelspec {spec['name']!r}"


def test_self_hosted_site_needs_nothing_from_outside(self_hosted_site):
    site, report = self_hosted_site
    settings = kernel_settings(site)
    assert settings["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert settings["disablePyPIFallback"] is True
    assert (site / "static/pyodide/pyodide.asm.wasm").is_file()
    lock = served_lock(site)
    lock_dir = site / "static/pyodide-lock"
    needed = locks.dependency_closure(lock["packages"], ["ipython", "jedi", "comm", "ipywidgets", "micropip"])
    for name in needed:
        entry = lock["packages"][name]
        assert "://" not in entry["file_name"], f"{name} would be fetched from outside"
        wheel = (lock_dir / entry["file_name"]).resolve()
        assert wheel.is_file(), f"{name}: {entry['file_name']} is not in the site"
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"], name
    assert served_arrays_problems(site) == []       # the trained model's arrays, beside the wheel
    # The npm core has no numpy: the build says so and does not preload what it lacks.
    assert "numpy" not in report["preload"] and "transformer-course" not in report["preload"]
    assert "ipywidgets" in report["preload"]


def test_dependency_closure_follows_depends():
    packages = {"a": {"depends": ["B_c"]}, "b-c": {"depends": ["d"]}, "d": {"depends": []},
                "e": {"depends": []}}
    assert locks.dependency_closure(packages, ["a"]) == {"a", "b-c", "d"}


def test_the_site_root_is_the_course_landing_page(online_site, self_hosted_site):
    site, _ = online_site
    page = (site / "index.html").read_text()
    assert "<h1>The transformer block, part by part</h1>" in page
    titles = [first_heading(nb) for nb in notebooks()]
    positions = [page.index(html.escape(title)) for title in titles]
    assert positions == sorted(positions), "the notebooks are not in order"
    assert 'href="lab/index.html?path=00_start_here.ipynb">Start the course</a>' in page
    for asset in ("static/course/landing.css", "static/course/landing.js"):
        assert (site / asset).is_file() and asset in page
    assert "https://" not in page.replace("https://cdn.jsdelivr.net/pyodide/v314.0.6/full/pyodide.mjs", "")
    config = json.loads(page.split('id="course-config">')[1].split("</script>")[0])
    assert config["kind"] == "cdn" and config["defaultPyodideUrl"] == locks.CDN_URL + "pyodide.mjs"
    assert {"numpy", "matplotlib", "transformer-course"} <= set(config["needs"])
    hosted = (self_hosted_site[0] / "index.html").read_text()
    assert json.loads(hosted.split('id="course-config">')[1].split("</script>")[0])["kind"] == "self-hosted"


def first_heading(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return " ".join(source.strip().splitlines()[0].lstrip("# ").replace("*", "").replace("`", "").split())
