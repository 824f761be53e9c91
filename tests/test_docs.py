"""The way in: a short README that lists every notebook and points to the guides, and guides whose
links lead somewhere."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "ARCHITECTURE.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_reads_in_five_minutes():
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


def test_the_readme_names_both_commands_and_the_three_guides():
    text = README.read_text(encoding="utf-8")
    assert "    ./course serve\n" in text and "    ./course test\n" in text
    for guide in ("docs/learners.md", "docs/instructors.md", "docs/authors.md"):
        assert f"]({guide})" in text, guide


def test_the_readme_lists_every_notebook_of_content_by_its_title():
    rows = re.findall(r"^\| (\d\d) ([^|]+?) \|", README.read_text(encoding="utf-8"), flags=re.M)
    notebooks = sorted((ROOT / "content").glob("*.ipynb"))
    assert [number for number, _ in rows] == [path.name[:2] for path in notebooks]
    for (number, title), path in zip(rows, notebooks):
        source = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
        heading = ("".join(source) if isinstance(source, list) else source).splitlines()[0]
        assert heading.removeprefix("# ").removeprefix(f"{number} ").split(":")[0] == title.strip(), path.name


def test_every_relative_link_of_the_guides_leads_to_a_file():
    broken = []
    for guide in GUIDES:
        for target in LINK.findall(guide.read_text(encoding="utf-8")):
            if re.match(r"^(https?:|mailto:|#)", target):
                continue
            path = (guide.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{guide.relative_to(ROOT)}: {target}")
    assert broken == []
