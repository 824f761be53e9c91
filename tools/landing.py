"""The course's landing page, written at the site root (index.html) by the build.

It shows the course's title, the notebooks in order with what each covers (the first heading
and first paragraph of each notebook), and a start button that opens 00 in JupyterLab. Its
script (landing_page/landing.js, no outside code) checks that Python can be loaded from where
the site says it is (the kernel settings in jupyter-lite.json), and says in plain words what
happened and what to ask the instructor for when it cannot: the CDN unreachable (a school
network, offline), or a self-hosted site built from Pyodide's core only.
"""

import html
import json
import re
import shutil
from pathlib import Path
from string import Template
from urllib.parse import quote

ASSETS = Path(__file__).resolve().parent / "landing_page"
ASSET_DIR = "static/course"          # where the page's stylesheet and script go in the site
START = "00_start_here.ipynb"


def _plain(markdown: str) -> str:
    """Markdown inline text as plain text: links, emphasis and code marks removed."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|`)", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    return " ".join(text.split())


def describe(path: Path) -> tuple[str, str]:
    """(title, summary) of a notebook: its first heading and the paragraph after it."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        cells = []
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        blocks = [b.strip() for b in re.split(r"\n\s*\n", source) if b.strip()]
        if not blocks:
            continue
        title = _plain(blocks[0].lstrip("#")) if blocks[0].startswith("#") else path.stem
        rest = [b for b in blocks[1:] if not b.startswith("#")]
        return title, _plain(rest[0]) if rest else ""
    return path.stem.replace("_", " "), ""


def lab_link(relative: str) -> str:
    return f"lab/index.html?path={quote(relative)}"


def notebooks_html(content: Path) -> tuple[str, str]:
    """(the <li> items of the notebooks, the link of the start button)."""
    items, first = [], None
    for path in sorted(p for p in content.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts):
        relative = path.relative_to(content).as_posix()
        first = first or relative
        title, summary = describe(path)
        items.append(f'      <li><a href="{html.escape(lab_link(relative))}">{html.escape(title)}</a>'
                     + (f"\n        <p>{html.escape(summary)}</p>" if summary else "") + "</li>")
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
