"""The course's landing page, written at the site root (index.html) by the build.

It shows the course's title, the notebooks in order with what each covers (the first heading
and first paragraph of each notebook, from the course's inventory: exercises/core/inventory.py), and a start button that opens 00 in JupyterLab. Its
script (landing_page/landing.js, no outside code) checks that Python can be loaded from where
the site says it is (the kernel settings in jupyter-lite.json), and says in plain words what
happened and what to ask the instructor for when it cannot: the CDN unreachable (a school
network, offline), or a self-hosted site built from Pyodide's core only.
"""

import html
import json
import shutil
from pathlib import Path
from string import Template
from urllib.parse import quote

from exercises.core import inventory

ASSETS = Path(__file__).resolve().parent / "landing_page"
ASSET_DIR = "static/course"          # where the page's stylesheet and script go in the site
START = "00_start_here.ipynb"


def lab_link(relative: str) -> str:
    return f"lab/index.html?path={quote(relative)}"


def notebooks_html(content: Path) -> tuple[str, str]:
    """(the <li> items of the notebooks, the link of the start button)."""
    items, first = [], None
    for notebook in inventory.scan(content):
        first = first or notebook.path
        items.append(f'      <li><a href="{html.escape(lab_link(notebook.path))}">{html.escape(notebook.heading)}</a>'
                     + (f"\n        <p>{html.escape(notebook.summary)}</p>" if notebook.summary else "") + "</li>")
    start = START if (content / START).is_file() else first or ""
    return "\n".join(items), lab_link(start)


def _script_json(value) -> str:
    """JSON safe inside a <script> element (no "</script>" can appear in it)."""
    text = json.dumps(value, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write(output: Path, content: Path, title: str, config: dict) -> Path:
    """Write index.html (replacing JupyterLite's redirect to the launcher) and its assets.

    config: what the page's check needs: {"defaultPyodideUrl", "kernelSettings" (the key of
    the kernel's settings in jupyter-lite.json), "needs" (package names the notebooks need),
    "kind" ("cdn" or "self-hosted")}.
    """
    items, start = notebooks_html(content)
    page = Template((ASSETS / "index.html").read_text(encoding="utf-8")).substitute(
        title=html.escape(title), notebooks=items, start=html.escape(start),
        assets=ASSET_DIR, config=_script_json(config),
    )
    target = output / ASSET_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name in ("landing.css", "landing.js"):
        shutil.copy2(ASSETS / name, target / name)
    index = output / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
