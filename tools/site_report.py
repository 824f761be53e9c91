"""The report of a run of the built course (tools/site_run.py): Markdown tables of every
notebook's result, its labs' first answers, its checks' verdicts and each cell's time."""

from __future__ import annotations

from tools.site_plan import CourseRun, NotebookRun


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------- the report

def _s(seconds: float | None, digits: int = 2) -> str:
    return "–" if seconds is None else f"{seconds:.{digits}f}"


def notebook_line(run: NotebookRun) -> str:
    total = sum(c.seconds or 0 for c in run.cells)
    answered = sum(lab.seconds is not None for lab in run.labs)
    return (f"{run.path} ({run.form}): kernel {_s(run.kernel_seconds, 1)} s, {len(run.cells)} cells in "
            f"{total:.1f} s, {answered} of {len(run.labs)} labs answered, "
            f"{len(run.checks)} checks: {run.result}")


def kernel_sentence(kernel: dict | None) -> str:
    if not kernel:
        return "Kernel: none started."
    if "error" in kernel:
        return f"Kernel: its report could not be read ({kernel['error']})."
    bits = kernel.get("pointer_bits")
    numpy = f"NumPy {kernel['numpy']}" if kernel.get("numpy") else "no NumPy installed"
    return (f"Kernel: Python {kernel.get('python')} on {kernel.get('platform')} "
            f"({kernel.get('machine')}, {bits}-bit pointers, so NumPy's default integer is {bits} bits), "
            f"{numpy}.")


def summary_markdown(course: CourseRun) -> str:
    """The run as Markdown: the verdict, the kernel, one row per notebook, every lab's first
    answer, every check's verdict and, folded, every cell's time."""
    b = course.budgets
    lines = [f"## The course in the browser: {course.target}", ""]
    if course.passed:
        lines.append(f"**Passed**: {len(course.notebooks)} notebook runs, no problem.")
    else:
        lines.append(f"**Failed**: {len(course.problems)} problem(s).")
        lines += [""] + [f"- {_md(p)}" for p in course.problems]
    lines += ["", kernel_sentence(course.kernel) + f" Budgets: kernel start {b['kernel']:g} s, each cell "
              f"{b['cell']:g} s, each lab's first answer {b['lab']:g} s. Cells are numbered from 1, "
              "markdown cells included.", ""]
    lines += ["| notebook | copy | kernel ready, s | code cells run | all cells, s | slowest cell, s | "
              "labs answered | checks | result |", "|---|---|---|---|---|---|---|---|---|"]
    for run in course.notebooks:
        timed = [c for c in run.cells if c.seconds is not None]
        slowest = max(timed, key=lambda c: c.seconds, default=None)
        verdicts = {}
        for check in run.checks:
            verdicts[check.verdict] = verdicts.get(check.verdict, 0) + 1
        lines.append(
            f"| {_md(run.path)} | {run.form} | {_s(run.kernel_seconds, 1)} | {len(run.cells)} | "
            f"{sum(c.seconds for c in timed):.2f} | "
            f"{f'cell {slowest.cell}: {slowest.seconds:.2f}' if slowest else '–'} | "
            f"{sum(lab.seconds is not None for lab in run.labs)} of {len(run.labs)} | "
            f"{', '.join(f'{n} {v}' for v, n in verdicts.items()) or '–'} | "
            f"{run.result} |")
    labs = [(run, lab) for run in course.notebooks for lab in run.labs]
    if labs:
        lines += ["", "### Each lab's first answer", "",
                  "From the key press or click on one of its controls to the first change of its plot "
                  "or text.", "", "| notebook | copy | cell | lab | control | first answer, ms |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {_md(run.path)} | {run.form} | {lab.cell} | {_md(lab.name)} | {_md(lab.control)} | "
                  f"{'no answer' if lab.seconds is None else f'{lab.seconds * 1000:.0f}'} |"
                  for run, lab in labs]
    for run in course.notebooks:
        if not run.cells:
            continue
        total = sum(c.seconds or 0 for c in run.cells)
        lines += ["", f"<details><summary>{_md(run.path)} ({run.form}): each cell's time, "
                  f"{len(run.cells)} cells, {total:.1f} s</summary>", "",
                  "| cell | first line | s | error |", "|---|---|---|---|"]
        lines += [f"| {c.cell} | `{_md(one_line(c.line, 70)).replace('`', '')}` | "
                  f"{'over budget' if c.seconds is None else f'{c.seconds:.3f}'} | {_md(c.error or '')} |"
                  for c in run.cells]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped, HTML's angle brackets kept as text."""
    return str(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
