"""The instructors' dashboard: the progress report as one web page that needs nothing else.

``python -m engine report FOLDER --html`` writes it (see :mod:`engine.report.command`).
:func:`page` turns a :class:`~engine.report.report.Report` into one HTML document with its
styles inline and its charts as inline SVG: no script, no font, no image, nothing fetched (its
Content-Security-Policy forbids any request), so it opens from a USB stick as well as from a
shared drive. Every string from a learner's file is escaped (it is text, never markup).

What it shows, in order: the class's progress per notebook; who may need help, by the rule of
:data:`STUCK_CHECKS`, :data:`SOLUTIONS` and :data:`BEHIND` (stated on the page); the exercises
and questions, hardest first; a heatmap of learners × exercises whose every cell holds a short
code as well as a colour (colours from the Okabe-Ito set, told apart with any colour vision);
learners who typed one name; every file not used, with the reason.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import statistics

from engine.core import export
from engine.presentation.numbers import plural

from . import report
from .report import EXERCISE_LABELS, Export, Report, course_items, learner_rows

STUCK_CHECKS = 4     # an exercise checked this many times or more without passing it
SOLUTIONS = 3        # this many solutions opened or more
BEHIND = 0.5         # passed fewer exercises than this fraction of the class's median learner

# Exercise status -> (CSS class, code in the cell, background, text colour). Blues for done,
# orange and yellow for under way, white for nothing yet.
CELLS = {
    "passed": ("s-p", "\u2713", "#0072b2", "#ffffff"),
    "passed-after-solution": ("s-ps", "\u2713S", "#56b4e9", "#000000"),
    "skipped-ahead": ("s-k", "SA", "#c6e2f5", "#000000"),
    "attempted": ("s-a", "\u2717", "#e69f00", "#000000"),
    "started": ("s-h", "H", "#f0e442", "#000000"),
    "not-started": ("s-n", "\u00b7", "#ffffff", "#595959"),
}
_BY_LABEL = {EXERCISE_LABELS[status]: status for status in CELLS}
_MEANINGS = {
    "passed": "passed",
    "passed-after-solution": "passed after opening the solution",
    "skipped-ahead": "not passed, but the notebook's skip-ahead set was passed",
    "attempted": "checked without passing (the number: how many checks)",
    "started": "hints opened, no answer checked",
    "not-started": "not started",
}


def e(text) -> str:
    """Text from anywhere, safe in HTML: control characters escaped, markup characters too."""
    return html.escape(export.printable(text, 400), quote=True)


def _pct(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)} %" if whole else "-"


def _mean(values) -> str:
    values = list(values)
    return f"{sum(values) / len(values):.1f}" if values else "-"


def _table(caption: str, header: list[str], body: list[list[str]], cls: str = "") -> str:
    """A table with a caption; ``body``'s cells are HTML already (escape before), the first of
    each row a row header."""
    head = "".join(f'<th scope="col">{h}</th>' for h in header)
    rows = "".join("<tr>" + f'<th scope="row">{row[0]}</th>' + "".join(f"<td>{c}</td>" for c in row[1:])
                   + "</tr>" for row in body)
    return (f'<table class="{cls}"><caption>{caption}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")


# ---------------------------------------------------------------- what the page computes

def _status(row: dict) -> str:
    return _BY_LABEL[row["status"]]


def _done(row: dict) -> bool:
    return _status(row) in ("passed", "passed-after-solution", "skipped-ahead")


def help_reasons(rep: Report) -> list[tuple[Export, list[str]]]:
    """The learners who may need help, each with the rules they meet (as HTML phrases), those
    meeting the most rules first."""
    passed = {id(item): sum(_status(r) in ("passed", "passed-after-solution")
                            for r in learner_rows(item) if r["kind"] == "exercise") for item in rep.exports}
    median = statistics.median(passed.values()) if passed else 0
    out = []
    for item in rep.exports:
        rows = [r for r in learner_rows(item) if r["kind"] == "exercise"]
        reasons = []
        stuck = [r for r in rows if _status(r) == "attempted" and r["attempts"] >= STUCK_CHECKS]
        if stuck:
            reasons.append("stuck on " + ", ".join(f"{e(r['item'])} ({r['attempts']} checks)" for r in stuck))
        opened = [r for r in rows if r["solution_revealed"] == "yes"]
        if len(opened) >= SOLUTIONS:
            reasons.append(f"opened {len(opened)} solutions (" + ", ".join(e(r["item"]) for r in opened) + ")")
        if passed[id(item)] < BEHIND * median:
            reasons.append(f"passed {plural(passed[id(item)], 'exercise')}; the class's median learner passed {median:g}")
        if reasons:
            out.append((item, reasons))
    return sorted(out, key=lambda pair: -len(pair[1]))   # most reasons first, then name order


def exercise_stats(rep: Report) -> list[list[str]]:
    """Per exercise, hardest first (lowest pass rate, then most checks): its cells."""
    n = len(rep.exports)
    stats = []
    for index, it in enumerate(course_items()):
        if it.kind != "exercise":
            continue
        rows = [learner_rows(item)[index] for item in rep.exports]
        passed = sum(_status(r) in ("passed", "passed-after-solution") for r in rows)
        tried = [r["attempts"] for r in rows if r["attempts"] > 0]
        stuck = sum(_status(r) == "attempted" for r in rows)
        hints = sum(r["hints_used"] > 0 for r in rows)
        solutions = sum(r["solution_revealed"] == "yes" for r in rows)
        stats.append(((passed / n if n else 0, -sum(tried)), [
            f"<code>{e(it.id)}</code>", e(it.notebook[:2]), f"{passed} of {n} ({_pct(passed, n)})",
            str(stuck), _mean(tried), f"{hints} ({_pct(hints, n)})", f"{solutions} ({_pct(solutions, n)})"]))
    return [cells for _key, cells in sorted(stats, key=lambda s: s[0])]


def question_stats(rep: Report) -> list[list[str]]:
    """Per question, hardest first (lowest share of right answers among those given)."""
    stats = []
    for index, it in enumerate(course_items()):
        if it.kind != "question":
            continue
        rows = [learner_rows(item)[index] for item in rep.exports]
        right = sum(r["status"] == "right" for r in rows)
        wrong = sum(r["status"] == "wrong" for r in rows)
        tries = [r["attempts"] for r in rows if r["attempts"] > 0]
        revealed = sum(r["solution_revealed"] == "yes" for r in rows)
        answered = right + wrong
        stats.append(((right / answered if answered else 2, -wrong), [
            f"<code>{e(it.id)}</code>", e(it.notebook[:2]), f"{right} of {answered} ({_pct(right, answered)})",
            str(wrong), str(len(rows) - answered), _mean(tries), str(revealed)]))
    return [cells for _key, cells in sorted(stats, key=lambda s: s[0])]


def notebook_stats(rep: Report) -> list[tuple[str, int, dict[str, int]]]:
    """Per notebook with exercises: (its title, learners who finished it, exercise statuses counted)."""
    from engine.core.registry import exercises_by_notebook

    out = []
    for stem, title, exercises in exercises_by_notebook():
        if not exercises:
            continue
        counts = dict.fromkeys(CELLS, 0)
        finished = 0
        for item in rep.exports:
            mine = [r for r in learner_rows(item) if r["kind"] == "exercise" and r["notebook"] == stem]
            for r in mine:
                counts[_status(r)] += 1
            finished += all(map(_done, mine))
        out.append((f"{stem[:2]} {title}", finished, counts))
    return out


# ---------------------------------------------------------------- the parts of the page

def _bar(counts: dict[str, int]) -> str:
    """A stacked bar of exercise statuses, as inline SVG with its numbers as its text."""
    total = sum(counts.values()) or 1
    x, parts, said = 0.0, [], []
    for status, n in counts.items():
        if not n:
            continue
        width = 240 * n / total
        parts.append(f'<rect x="{x:.1f}" y="0" width="{width:.1f}" height="18" class="{CELLS[status][0]}"/>')
        said.append(f"{EXERCISE_LABELS[status]} {_pct(n, total)}")
        x += width
    label = e("; ".join(said))
    return (f'<svg class="bar" width="242" height="20" viewBox="-1 -1 242 20" role="img" aria-label="{label}">'
            f'<title>{label}</title>{"".join(parts)}<rect class="frame" x="0" y="0" width="240" height="18"/></svg>')


def _legend() -> str:
    items = "".join(f'<li><span class="cell {cls}">{code}</span> {e(_MEANINGS[status])}</li>'
                    for status, (cls, code, _bg, _fg) in CELLS.items())
    return f'<ul class="legend">{items}</ul>'


def _cell(row: dict) -> str:
    status = _status(row)
    cls, code, _bg, _fg = CELLS[status]
    if status == "attempted" and row["attempts"]:
        code += str(row["attempts"])
    return f'<td class="{cls}">{code}</td>'


def heatmap(rep: Report) -> str:
    """Learners × exercises: one row per learner, every cell a code and a colour."""
    items = [(i, it) for i, it in enumerate(course_items()) if it.kind == "exercise"]
    groups: dict[str, int] = {}
    for _i, it in items:
        groups[it.notebook] = groups.get(it.notebook, 0) + 1
    top = '<th scope="col" rowspan="2">Learner</th><th scope="col" rowspan="2">Passed</th>' + "".join(
        f'<th scope="colgroup" colspan="{n}">{e(stem[:2])}</th>' for stem, n in groups.items())
    second = "".join(f'<th scope="col"><span class="ex">{e(it.id)}</span></th>' for _i, it in items)
    body = []
    for item in rep.exports:
        mine = learner_rows(item)
        passed = sum(_status(mine[i]) in ("passed", "passed-after-solution") for i, _it in items)
        who = e(report.shown_learner(item, rep))
        body.append(f'<tr><th scope="row">{who}</th><td class="num">{passed}</td>'
                    + "".join(_cell(mine[i]) for i, _it in items) + "</tr>")
    return ('<div class="scroll" role="region" aria-labelledby="heatmap" tabindex="0">'
            f'<table class="heat"><thead><tr>{top}</tr><tr>{second}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a;
       background: #ffffff; margin: 0; }
main { max-width: 1200px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.6em; margin: 0.4em 0; } h2 { font-size: 1.25em; margin: 1.6em 0 0.4em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #c8c8c8; padding: 3px 6px; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
thead th { background: #f0f0f0; }
td.num, .heat td { text-align: center; }
code { font: 0.92em ui-monospace, Menlo, Consolas, monospace; }
.scroll { overflow: auto; max-height: 75vh; border: 1px solid #c8c8c8; }
.scroll:focus { outline: 3px solid #0072b2; outline-offset: 2px; }
.heat { margin: 0; font-size: 13px; }
.heat thead th { position: sticky; top: 0; z-index: 1; }
.heat thead tr + tr th { top: 1.9em; }
.heat tbody th { position: sticky; left: 0; background: #ffffff; max-width: 16em; z-index: 0; }
.heat td { min-width: 2.4em; white-space: nowrap; }
.ex { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; font-weight: 500; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.cell { display: inline-block; min-width: 2em; text-align: center; border: 1px solid #8c8c8c; }
.bar rect { stroke: #ffffff; stroke-width: 1; }
.bar rect.frame { fill: none; stroke: #595959; }
.note { color: #4a4a4a; }
@media print {
  @page { size: A4 landscape; margin: 10mm; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  body { font-size: 11px; }
  main { max-width: none; padding: 0; }
  th, td { overflow-wrap: normal; word-break: normal; hyphens: manual; }
  .scroll { overflow: visible; max-height: none; border: 0; }
  .heat { font-size: 9px; }
  .heat thead th, .heat tbody th { position: static; }
  .heat tbody th { max-width: none; white-space: nowrap; }
  .heat td { min-width: 0; padding: 1px 2px; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
  h2 { break-after: avoid; }
}
""" + "".join(f".{cls} {{ background: {bg}; color: {fg}; fill: {bg}; }}\n"
              for cls, _code, bg, fg in CELLS.values())


def _notebooks(rep: Report) -> str:
    n = len(rep.exports)
    return ("<h2>Progress per notebook</h2>"
            + _table("Exercises of each notebook, all learners together. A learner has finished a "
                     "notebook when every exercise of it is passed or its skip-ahead set was passed.",
                     ["Notebook", "Learners who finished it", "Exercise statuses"],
                     [[e(title), f"{done} of {n} ({_pct(done, n)})", _bar(counts)]
                      for title, done, counts in notebook_stats(rep)])
            + _legend())


def _help(rep: Report) -> str:
    rule = (f"<p>A learner is listed when they checked an exercise {STUCK_CHECKS} or more times "
            f"without passing it, opened the solutions of {SOLUTIONS} or more exercises, or passed "
            f"fewer than {BEHIND:.0%} as many exercises as the class's median learner.</p>")
    helped = help_reasons(rep)
    if not helped:
        return f"<h2>Who may need help</h2>{rule}<p>No learner meets these rules.</p>"
    return (f"<h2>Who may need help</h2>{rule}"
            + _table(f"{len(helped)} of {len(rep.exports)} learners, with the rules they meet", ["Learner", "Why"],
                     [[e(report.shown_learner(item, rep)), "; ".join(why)] for item, why in helped]))


def _exercises(rep: Report) -> str:
    return ("<h2>Exercises, hardest first</h2>"
            + _table("Lowest pass rate first. Checks: the mean number of checks of the learners who "
                     "checked it at least once.",
                     ["Exercise", "Notebook", "Passed", "Checked, not passed", "Checks", "Opened hints",
                      "Opened the solution"], exercise_stats(rep)))


def _retired(rep: Report) -> str:
    passed: dict[str, list[str]] = {}
    for item in rep.exports:
        for ex_id in report.retired_passed(learner_rows(item)):
            passed.setdefault(ex_id, []).append(report.shown_learner(item, rep))
    if not passed:
        return ""
    stems = report.retired_exercises()
    return ("<h2>Retired exercises</h2>"
            "<p>Exercises the course has since replaced, passed in notebooks saved before the update. "
            "They are not counted above; the gradebook lists them per learner "
            "(<code>retired_exercises_passed</code>).</p>"
            + _table("Passes on retired exercises", ["Exercise", "Notebook", "Learners who passed it"],
                     [[f"<code>{e(ex_id)}</code>", e(stems[ex_id][:2]), f"{len(who)}: " + e(", ".join(who))]
                      for ex_id, who in sorted(passed.items())]))


def _heatmap(rep: Report) -> str:
    return ('<h2 id="heatmap">Every learner and exercise</h2>'
            "<p>One row per learner (name order), one column per exercise, grouped by notebook. "
            "Each cell holds a code; its colour repeats it.</p>"
            + _legend() + (heatmap(rep) if rep.exports else "<p>No learner yet.</p>"))


def _questions(rep: Report) -> str:
    rows = question_stats(rep)
    if not rows:
        return ""
    return ("<h2>Questions, hardest first</h2>"
            + _table("Lowest share of right answers first. Tries: the mean of those who answered.",
                     ["Question", "Notebook", "Right", "Wrong", "Not answered", "Tries", "Answer shown"], rows))


def _conflicts(rep: Report) -> str:
    if not rep.conflicts:
        return "<h2>Learners who typed one name</h2><p>None: every name belongs to one browser.</p>"
    return ("<h2>Learners who typed one name</h2>"
            "<p>Different browsers exported under one name: each is reported on their own, told apart "
            "by the start of the browser's id shown after the name. Ask who is who.</p>"
            + _table("Name conflicts", ["Name", "Browser ids and files"],
                     [[e(group[0].learner), "<br>".join(
                         f"<code>{e(i.ident or '(none)')}</code> in <code>{e(i.file)}</code>"
                         for i in group)] for group in rep.conflicts]))


def _files(rep: Report) -> str:
    if not rep.skipped:
        return "<h2>Files not used</h2><p>None: every file in the folder is a learner's newest export.</p>"
    return ("<h2>Files not used</h2>"
            + _table(f"{len(rep.skipped)} files, with what became of each", ["File", "What happened", "Why"],
                     [[f"<code>{e(f.file)}</code>", e(f.outcome), e(f.reason)]
                      for f in rep.files if f.outcome != "used"]))


SECTIONS = (_notebooks, _help, _exercises, _retired, _heatmap, _questions, _conflicts, _files)


def _opening(rep: Report, outputs: dict[str, str] | None) -> str:
    n, not_used, conflicts = len(rep.exports), len(rep.skipped), len(rep.conflicts)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f'<p>{n} learner{"s" * (n != 1)} from the files in <code>{e(rep.folder)}</code>, read {when}. '
            f"{not_used} file{'s' * (not_used != 1)} not used, {conflicts} name "
            f"conflict{'s' * (conflicts != 1)} (both at the end of the page).</p>")
    said = {"csv": "one row per learner and item", "gradebook": "the gradebook, one row per learner",
            "files": "every file of the folder and what became of it"}
    beside = [f"<code>{e(name)}</code> ({said[key]})" for key, name in (outputs or {}).items() if key in said]
    return text + (f"<p>Beside this page: {'; '.join(beside)}.</p>" if beside else "")


def page(rep: Report, outputs: dict[str, str] | None = None) -> str:
    """The dashboard of ``rep`` as one HTML document; ``outputs`` names the files written beside
    it (``{"csv": ..., "gradebook": ..., "files": ...}``), to be mentioned."""
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    policy = f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    body = _opening(rep, outputs) + "".join(section(rep) for section in SECTIONS)
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>Progress report</title>"
            f"<style>{STYLE}</style></head>"
            f"<body><main><h1>Progress report</h1>{body}</main></body></html>\n")
