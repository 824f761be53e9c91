"""The course's landing page, written at the site root (index.html) by the build.

It shows the course's title, the notebooks in order with what each covers (the first heading and
first paragraph of each notebook, from the course's inventory: engine/core/inventory.py), and a
start button that opens 00 in JupyterLab; the site's icon (favicon.ico) is at its root. Its
checks (landing_page/course-check.js, no outside code) find whether Python can be loaded from
where the site says it is (the kernel settings in jupyter-lite.json), each file's first bytes
being what such a file starts with, and whether this browser can keep the learner's work for the
site; the page says in plain words what happened and what to do when something is wrong (the CDN
unreachable, a self-hosted site built from Pyodide's core only, a damaged file, site storage
blocked), and turns the start button off, with the reason beside it.

The build also adds to JupyterLab's own pages (lab/, notebooks/) a script that shows a notice
when a notebook's Python has not started within a few seconds, with what the same checks
find (landing_page/kernel-watch.js), and one that opens a notebook with JupyterLab's side panel
closed on a narrow screen (landing_page/side-panel.js).
"""

import html
import json
import shutil
from pathlib import Path
from string import Template
from urllib.parse import quote

from engine.core import inventory

ASSETS = Path(__file__).resolve().parent / "landing_page"
ASSET_DIR = "static/course"          # where the page's stylesheet and script go in the site
ASSETS_COPIED = ("landing.css", "landing.js", "course-check.js", "kernel-watch.js", "kernel-watch.css",
                 "side-panel.js", "work.js", "two-tabs.js")
CONFIG = "course-config.json"        # the checks' settings, for the pages that do not embed them
WATCHED_PAGES = ("lab/index.html", "notebooks/index.html")
FAVICON = "favicon.ico"                # the site's icon, at its root, where browsers look for it
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
    "kind" ("cdn" or "self-hosted"), "sizes" ({path in the site: bytes} of the files the checks
    ask for, to catch a file cut short)}.
    """
    items, start = notebooks_html(content)
    page = Template((ASSETS / "index.html").read_text(encoding="utf-8")).substitute(
        title=html.escape(title), notebooks=items, start=html.escape(start),
        assets=ASSET_DIR, config=_script_json(config),
    )
    target = output / ASSET_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name in ASSETS_COPIED:
        shutil.copy2(ASSETS / name, target / name)
    shutil.copy2(ASSETS / FAVICON, output / FAVICON)
    (target / CONFIG).write_text(json.dumps(config, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    index = output / "index.html"
    index.write_text(page, encoding="utf-8")
    for relative in WATCHED_PAGES:
        watch_kernel(output, relative)
    return index


def watch_kernel(output: Path, relative: str) -> None:
    """Add the kernel watch (its stylesheet and scripts) and the side panel's script to one of
    JupyterLab's pages."""
    page = output / relative
    if not page.is_file():
        return
    up = "../" * (len(Path(relative).parts) - 1)
    tags = (f'<link rel="icon" href="{up}{FAVICON}" sizes="16x16 32x32">\n'
            f'    <link rel="stylesheet" href="{up}{ASSET_DIR}/kernel-watch.css">\n'
            f'    <script src="{up}{ASSET_DIR}/course-check.js" defer></script>\n'
            f'    <script src="{up}{ASSET_DIR}/kernel-watch.js" defer></script>\n'
            f'    <script src="{up}{ASSET_DIR}/side-panel.js" defer></script>\n'
            f'    <script src="{up}{ASSET_DIR}/two-tabs.js" defer></script>\n')
    text = page.read_text(encoding="utf-8")
    if "kernel-watch.js" not in text:
        page.write_text(text.replace("</head>", f"    {tags}  </head>", 1), encoding="utf-8")
