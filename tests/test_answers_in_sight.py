"""No answer in sight: nothing a learner sees above a question or an exercise gives its answer away.

For every question (predict, number, shape, the skip-ahead sets' too) and every exercise that a
shipped notebook asks, everything shown above it must be free of its answer: the markdown, the
code, what the cells printed, the labs as they first appear (their verdicts, tables, titles and
controls, read from the widgets' state, and the words drawn in their figures), each question above
as it is shown (its prompt and every one of its choices, the wrong ones too: a learner reads them
all) and what it shows once it is answered (its answer and explanation). The questions of a
skip-ahead set are all shown at once: each must also be free of the answer of every other one of
its set, prompts and choices alike. The answer is:

- for a predict question, its ``reveals`` patterns (regular expressions kept with its definition
  in ``exercises/definitions/``: the words that state the right choice's claim);
- for a number or shape question, the number or shape in its printed forms (4,718,592, 4718592,
  4.7 M; (4, 2, 1), 4 × 2 × 1) when it is distinctive enough to search for (a whole number of
  four digits or more, or three significant digits), and its ``reveals``; for a shape question
  also the shape its prompt starts from, when it has three axes or more (text above that works
  the question's own case settles it);
- for an exercise, its solution fills (spaces ignored; a bare name or constant left aside) and
  the expected output of its visible example, in the forms the course prints numbers and arrays.

Which questions and exercises a notebook asks, and where, comes from its cells, each read as the
course's inventory reads a notebook (``ask("id")``, ``skip_ahead("stem")``, the exercise cells),
and the registry.
The notebooks run once per session, shared with the figure tests (``executed_notebook`` in
conftest.py). A failure names the question or exercise, the cell above it (numbered from 1, as
JupyterLab counts) and the text that reveals it.
"""

from __future__ import annotations

import html
import re
from typing import Callable, NamedTuple

import nbformat
import numpy as np
import pytest

from conftest import CONTENT, notebooks
from engine.core import inventory, registry
from engine.core.definition import Exercise, Question
from engine.presentation.numbers import array as array_text, exact, number

BARE = re.compile(r"-?[\w.]+")          # a fill that is one name or constant: found everywhere


# ---------------------------------------------------------------- what a notebook asks, and where

class Asked(NamedTuple):
    cell: int                            # index of the cell that asks it (0-based)
    item: Question | Exercise
    skip_ahead: bool = False

    @property
    def label(self) -> str:
        if isinstance(self.item, Exercise):
            return f"exercise {self.item.id!r}"
        return f"{'skip-ahead ' if self.skip_ahead else ''}{self.item.kind} question {self.item.id!r}"


def asked(notebook, path: str) -> list[Asked]:
    """Every question and exercise the notebook at ``path`` (relative to content/) asks, at the
    cell that asks it: each cell read on its own as the course's inventory reads a notebook."""
    found = []
    for index, cell in enumerate(notebook.cells):
        entry = inventory.read_notebook({"cells": [cell]}, path)
        found += [Asked(index, registry.get_exercise(ex_id)) for ex_id in entry.exercises]
        found += [Asked(index, registry.get_question(q_id)) for q_id in entry.questions]
        if entry.skip_ahead:
            found += [Asked(index, q, skip_ahead=True) for q in registry.skip_ahead_questions(entry.stem)]
    return found


def _items():
    """(notebook path, Asked) for every question and exercise of every shipped notebook."""
    items = []
    for path in notebooks():
        name = path.relative_to(CONTENT).as_posix()
        items += [(name, item) for item in asked(nbformat.read(path, as_version=4), name)]
    return items


# ---------------------------------------------------------------- what the learner sees

class Seen(NamedTuple):
    cell: int                            # index of the cell it belongs to (0-based)
    where: str                           # "markdown", "code", "output", "lab", ...
    text: str
    question: str = ""                   # the question whose prompt or choices this is, if any


def plain(markup: str) -> str:
    """The text of an HTML fragment, as it reads (its styles and scripts left out)."""
    markup = re.sub(r"<(style|script)\b.*?</\1>", " ", markup, flags=re.DOTALL | re.IGNORECASE)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def _ref(value) -> str:
    return value[len("IPY_MODEL_"):] if isinstance(value, str) and value.startswith("IPY_MODEL_") else ""


def widget_texts(state: dict, model_id: str, figure_texts: dict) -> list[str]:
    """The texts a widget and its children show as they stand in the executed notebook's widget
    state: HTML and labels, descriptions, options, text boxes, slider values, and the words
    drawn in a lab figure's image. Hidden widgets (display none) show nothing."""
    model = state.get(model_id)
    if model is None:
        return []
    values = model["state"]
    layout = state.get(_ref(values.get("layout")), {}).get("state", {})
    if layout.get("display") == "none" or layout.get("visibility") == "hidden":
        return []
    texts = []
    name = model["model_name"]
    if name in ("HTMLModel", "HTMLMathModel", "LabelModel"):
        texts.append(plain(values.get("value", "")))
    elif name in ("TextModel", "TextareaModel"):
        texts += [values.get("value", ""), values.get("placeholder", "")]
    elif name.endswith("SliderModel") or name.endswith("IntTextModel") or name.endswith("FloatTextModel"):
        texts.append(str(values.get("value", "")))
    elif name == "ImageModel":
        texts += figure_texts.get(model_id, [])
    if isinstance(values.get("description"), str):
        texts.append(values["description"])
    texts += [str(label) for label in values.get("_options_labels", ())]
    for child in values.get("children", ()):
        texts += widget_texts(state, _ref(child), figure_texts)
    for output in values.get("outputs", ()):
        texts += output_texts(output, state, figure_texts)
    return [t for t in texts if t and t.strip()]


def output_texts(output, state: dict, figure_texts: dict) -> list[str]:
    """What one output of a code cell shows: printed text, a widget (as it stands), HTML as text."""
    if output.get("output_type") == "stream":
        return [output.get("text", "")]
    if output.get("output_type") == "error":
        return [f"{output.get('ename', '')}: {output.get('evalue', '')}"]
    data = output.get("data", {})
    view = data.get("application/vnd.jupyter.widget-view+json")
    if view:
        return widget_texts(state, view["model_id"], figure_texts)
    for kind, read in (("text/html", plain), ("text/markdown", str), ("text/plain", str)):
        if kind in data:
            return [read(data[kind])]
    return []


def shown_once_answered(item: Asked) -> str:
    """What a question shows once the learner has answered it: the answer and its explanation.
    Skip-ahead sets and exercises show nothing of the kind."""
    q = item.item
    if item.skip_ahead or not isinstance(q, Question):
        return ""
    answer = q.choices[int(q.answer)] if q.kind == "predict" else (
        str(q.answer) if q.kind == "shape" else exact(q.answer))
    return f"the answer is {answer}. {q.explanation}"


def seen(notebook, path: str, figure_texts: dict) -> list[Seen]:
    """Everything an executed notebook shows, cell by cell, in order. A cell that asks questions
    counts for their prompts and their choices, each choice on its own (a wrong choice that states
    another question's answer gives it away as well as a right one). Once answered, a question
    shows its answer and explanation."""
    state = notebook.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    state = state.get("state", {})
    questions = {}
    for item in asked(notebook, path):
        if isinstance(item.item, Question):
            questions.setdefault(item.cell, []).append(item)
    out = []
    for index, cell in enumerate(notebook.cells):
        out.append(Seen(index, cell.cell_type, cell.source))
        if index in questions:
            for item in questions[index]:
                q_id = item.item.id
                out.append(Seen(index, f"the prompt of {q_id!r}", item.item.prompt, q_id))
                out += [Seen(index, f"choice {number} of {q_id!r}", choice, q_id)
                        for number, choice in enumerate(item.item.choices)]
                shown = shown_once_answered(item)
                if shown:
                    out.append(Seen(index, f"what {q_id!r} shows once answered", shown, q_id))
            continue
        for output in cell.get("outputs", ()):
            widget = "application/vnd.jupyter.widget-view+json" in output.get("data", {})
            out += [Seen(index, "lab or widget" if widget else "output", text)
                    for text in output_texts(output, state, figure_texts)]
    return out


# ---------------------------------------------------------------- what would give an answer away

class Clue(NamedTuple):
    """One way an answer can show: ``found`` searches a text whose spaces are squeezed (every
    run of spaces and line breaks one space) and returns the match or None."""

    what: str                                  # in words, for the failure message
    found: Callable[[str], re.Match | None]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _pattern_clue(what: str, pattern: str) -> Clue:
    return Clue(f"{what} /{pattern}/", re.compile(pattern, re.IGNORECASE).search)


def _code_clue(what: str, code: str) -> Clue:
    """Code, spaces ignored (`x @ W1+b1` is found as `x@W1 + b1`), never inside a longer name
    (`score(stream)` is not found in `example_score(stream)`)."""
    bare = re.sub(r"\s+", "", code)
    spaced = r"\s*".join(re.escape(ch) for ch in bare)
    before = r"(?<![\w.])" if re.match(r"\w", bare) else ""
    after = r"(?!\w)" if re.search(r"\w$", bare) else ""
    return Clue(f"{what} `{code}`", re.compile(before + spaced + after).search)


def significant_digits(form: str) -> int:
    return len(re.sub(r"^[-\u22120.,]*", "", re.sub(r"e[+-]?\d+$", "", form)).replace(".", "").replace(",", ""))


def number_forms(value) -> list[str]:
    """The ways the course (and Python) print ``value`` that are distinctive enough to search
    for: a whole number of four digits or more (4,718,592, 4718592, 4.7 M), or a form with three
    significant digits or more (2.83, 2.828, 0.540). Small numbers (8, 0.2, 55) are found
    everywhere and give nothing away on their own; a question about one states its giveaway in
    ``reveals``."""
    value = float(value)
    if not np.isfinite(value):
        return []
    forms = set()
    if value.is_integer():
        n = int(value)
        if abs(n) >= 1000:
            forms |= {f"{n:,}", str(n)}
            for scale, unit in ((1e9, "B"), (1e6, "M")):
                if abs(n) >= scale:
                    forms |= {f"{n / scale:.1f} {unit}", f"{n / scale:.2f} {unit}"}
                    break
        return sorted(forms)
    for digits in range(3, 7):
        forms |= {f"{value:.{digits}g}", f"{value:.{digits - 1}f}"}
    forms |= {repr(value), exact(value)}
    return sorted(f for f in forms if significant_digits(f) >= 3 and "e" not in f)


def _number_clue(what: str, form: str) -> Clue:
    body = re.escape(form).replace(r"\ ", r"\s?")
    sign = "" if form.startswith("-") else r"\-\u2212"
    compiled = re.compile(rf"(?<![\w.,{sign}]){body}(?!\w|[.,]\d)")
    return Clue(f"{what} {form}", compiled.search)


def shape_clues(shape: tuple) -> list[Clue]:
    """(4, 2, 1) as a tuple, (4, 2, 1), or as a product of sizes, 4 × 2 × 1 (or 4 x 2 x 1)."""
    numbers = [str(n) for n in shape]
    if len(numbers) == 1:
        tuple_form = rf"\(\s*{numbers[0]}\s*,\s*\)"
    else:
        tuple_form = r"\(\s*" + r"\s*,\s*".join(numbers) + r"\s*\)"
    clues = [Clue(f"the shape {tuple(shape)}", re.compile(tuple_form).search)]
    if len(numbers) > 1:
        product = r"(?<![\w.])" + r"\s*[×x]\s*".join(numbers) + r"(?![\w.])"
        clues.append(Clue(f"the shape as {' × '.join(numbers)}", re.compile(product).search))
    return clues


def array_forms(value) -> list[str]:
    """An array as NumPy prints it (repr, str, a list), as the course prints it, and as a
    nested list of its numbers written short (`[[2], [6]]`, `[0.75, 0.5, 0.25, 0]`)."""
    arr = np.asarray(value)
    forms = {repr(arr), str(arr), str(arr.tolist()), array_text(arr)}
    if arr.dtype.kind == "f":
        for decimals in (2, 3, 4):
            forms.add(str(np.round(arr, decimals)))
            forms.add(_nested(arr, lambda v: number(v, decimals)))
            forms.add(_nested(arr, lambda v: f"{v:.{decimals}f}"))
    return sorted(forms)


def _nested(arr, write) -> str:
    if arr.ndim == 0:
        return write(float(arr))
    return "[" + ", ".join(_nested(row, write) for row in arr) + "]"


def output_clues(value, what: str) -> list[Clue]:
    """The clues of an exercise's expected output: a number in its distinctive forms, an array
    whole in its printed forms, and a short array's distinctive numbers one by one."""
    arr = np.asarray(value)
    if arr.ndim == 0 and arr.dtype.kind in "iuf":
        return [_number_clue(what, f) for f in number_forms(arr.item())]
    clues = [_code_clue(what, form) for form in array_forms(arr)]
    if arr.dtype.kind in "iuf" and arr.size <= 4:
        clues += [_number_clue(f"{what}, the number", f) for v in arr.ravel() for f in number_forms(v)]
    return clues


def prompt_shapes(q: Question) -> list[tuple]:
    """The shapes a shape question's prompt starts from, written as tuples, that are distinctive
    enough to search for (three axes or more; (3, 2) is found everywhere), other than its answer.
    Text above the question that names such a shape is working the question's own case ("the
    same code also works for a batch of shape (4, 2, 3)") and so settles it."""
    found = [tuple(int(n) for n in re.findall(r"\d+", t))
             for t in re.findall(r"\(\s*\d+(?:\s*,\s*\d+){2,}\s*\)", q.prompt)]
    return [shape for shape in dict.fromkeys(found) if shape != tuple(q.answer)]


def question_clues(q: Question) -> list[Clue]:
    clues = [_pattern_clue("its reveals pattern", p) for p in q.reveals]
    if q.kind == "number":
        clues += [_number_clue("its answer", f) for f in number_forms(q.answer)]
    elif q.kind == "shape":
        clues += shape_clues(q.answer)
        clues += [Clue(f"the shape {shape} its prompt asks about", clue.found)
                  for shape in prompt_shapes(q) for clue in shape_clues(shape)[:1]]
    return clues


def visible_output(exercise: Exercise):
    if exercise.kind == "value":
        return exercise.expected()
    case = next((c for c in exercise.fixed_cases() if c.visible), None)
    return None if case is None else exercise.reference(*case.args, **case.kwargs)


def exercise_clues(exercise: Exercise) -> list[Clue]:
    clues = [_code_clue("its solution fill", fill) for fill in exercise.solution
             if not BARE.fullmatch(fill.strip())]
    output = visible_output(exercise)
    if output is not None:
        clues += output_clues(output, "its example's expected output")
    return clues


def clues(item: Asked) -> list[Clue]:
    return exercise_clues(item.item) if isinstance(item.item, Exercise) else question_clues(item.item)


# ---------------------------------------------------------------- the check

def excerpt(text: str, match: re.Match, width: int = 70) -> str:
    start, end = max(match.start() - width, 0), min(match.end() + width, len(text))
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def beside(item: Asked, piece: Seen) -> bool:
    """Whether ``piece`` is shown in the very cell that asks ``item`` and belongs to another
    question of the same skip-ahead set, shown at the same time: its prompt or its choices (what a
    set's questions show once answered, never shown, is not in ``seen``)."""
    return (item.skip_ahead and piece.cell == item.cell and bool(piece.question)
            and piece.question != item.item.id and "once answered" not in piece.where)


def in_sight(item: Asked, shown: list[Seen]) -> list[str]:
    """One line per piece of text above ``item`` (or beside it, in its own skip-ahead set) that
    holds one of its clues."""
    found = []
    item_clues = clues(item)
    for piece in shown:
        if piece.cell > item.cell or (piece.cell == item.cell and not beside(item, piece)):
            if piece.cell > item.cell:
                break
            continue
        text = squeeze(piece.text)
        for clue in item_clues:
            match = clue.found(text)
            if match:
                found.append(f"  cell {piece.cell + 1} ({piece.where}): {clue.what} in {excerpt(text, match)!r}")
    return found


# ---------------------------------------------------------------- the tests

ITEMS = _items()


@pytest.fixture(scope="module")
def shown(executed_notebook):
    """shown(name) -> everything the executed notebook shows, cell by cell (cached)."""
    cache = {}

    def get(name):
        if name not in cache:
            executed = executed_notebook(name)
            cache[name] = seen(executed.notebook, name, executed.figure_texts)
        return cache[name]

    return get


@pytest.mark.parametrize("name,item", ITEMS, ids=[f"{name[:2]}-{item.item.id}" for name, item in ITEMS])
def test_no_answer_in_sight_above_a_question_or_an_exercise(shown, name, item):
    found = in_sight(item, shown(name))
    assert not found, (f"{item.label} (asked in cell {item.cell + 1} of {name}, counting cells from 1) has its "
                       f"answer in sight above it; move it ahead of what answers it, or reword the text:\n"
                       + "\n".join(found))


def _every_question():
    return registry.all_questions() + [q for stem in registry.notebooks_with_skip_ahead()
                                       for q in registry.skip_ahead_questions(stem)]


def test_every_question_and_exercise_says_what_would_give_it_away():
    """A predict question names its giveaways (``reveals``); a number or shape question has them
    or a distinctive printed answer; an exercise has a fill or an expected output to look for."""
    missing = [f"question {q.id!r} ({q.kind}): add `reveals` to its definition"
               for q in _every_question()
               if not question_clues(q) or (q.kind == "predict" and not q.reveals)]
    missing += [f"exercise {e.id!r}: no fill and no expected output to look for"
                for e in registry.all_exercises() if not exercise_clues(e)]
    assert not missing, "\n".join(missing)


def test_each_reveals_pattern_finds_the_answer_where_the_course_gives_it(shown):
    """A pattern that matches nothing would guard nothing: each must match the question's own
    explanation or right choice, or the notebook at or below the question."""
    where = {}
    for name, item in ITEMS:
        if isinstance(item.item, Question):
            where.setdefault(item.item.id, []).extend(
                squeeze(piece.text) for piece in shown(name) if piece.cell >= item.cell)
    dead = []
    for q in _every_question():
        given = [squeeze(q.explanation)] + ([squeeze(q.choices[int(q.answer)])] if q.kind == "predict" else [])
        given += where.get(q.id, [])
        dead += [f"{q.id}: /{pattern}/" for pattern in q.reveals
                 if not any(re.search(pattern, text, re.IGNORECASE) for text in given)]
    assert not dead, "reveals patterns that match nowhere the answer is given:\n" + "\n".join(dead)


def test_the_check_names_the_cell_and_the_text_that_give_an_answer_away():
    """On a made-up executed notebook: a fill in the prose, an expected output in a lab's verdict
    and a predict question's claim drawn in a lab figure are each reported with their cell (as
    JupyterLab counts), and nothing is reported for what stands below."""
    lab = {"model_id": "root"}
    state = {
        "root": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_verdict", "IPY_MODEL_plot"]}},
        "verdict": {"model_name": "HTMLModel", "state": {"value": "<div>the rows give [[2.], [6.]]</div>"}},
        "plot": {"model_name": "ImageModel", "state": {}},
        "hidden": {"model_name": "HTMLModel", "state": {"value": "none of them zero", "layout": "IPY_MODEL_gone"}},
        "gone": {"model_name": "LayoutModel", "state": {"display": "none"}},
    }
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Use `x.sum(axis = -1, keepdims=True)` here."),
        nbformat.v4.new_code_cell("lab()", outputs=[nbformat.v4.new_output(
            "display_data", {"application/vnd.jupyter.widget-view+json": lab, "text/plain": "VBox()"})]),
        nbformat.v4.new_code_cell("hidden()", outputs=[nbformat.v4.new_output(
            "display_data", {"application/vnd.jupyter.widget-view+json": {"model_id": "hidden"}})]),
        nbformat.v4.new_code_cell('ask("start-predict-softmax")'),
        nbformat.v4.new_code_cell("", metadata={"tags": ["exercise"], "course": {"exercise": "row-mean"}}),
        nbformat.v4.new_markdown_cell("Softmax weights sum to 1; `x.sum(axis=-1, keepdims=True)` again."),
    ])
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state}}
    shown_here = seen(notebook, "99_made_up.ipynb", {"plot": ["softmax: every word keeps some weight"]})
    question, exercise = asked(notebook, "99_made_up.ipynb")
    assert [line.split(":")[0].strip() for line in in_sight(question, shown_here)] == ["cell 2 (lab or widget)"]
    report = in_sight(exercise, shown_here)
    assert [line.split(":")[0].strip() for line in report] == ["cell 1 (markdown)", "cell 2 (lab or widget)"]
    assert "x.sum(axis = -1, keepdims=True)" in report[0] and "[[2.], [6.]]" in report[1]


def test_a_shape_question_is_given_away_by_text_that_works_its_own_case():
    """Naming the prompt's own input shape above a shape question is found; a two-axis shape in a
    prompt is too common to search for, and the answer's own shape is searched for as the answer."""
    q = registry.get_question("start-shape-row-mean")
    assert prompt_shapes(q) == [(4, 2, 3)]
    text = squeeze("The row's numbers lie along the last axis, so the same\ncode also works for a batch of shape (4, 2, 3).")
    assert any(clue.found(text) for clue in question_clues(q))
    assert not any(clue.found("a batch of shape (4, 2, 5)") for clue in question_clues(q))
    assert prompt_shapes(registry.get_question("ffn-shape-hidden")) == []


def test_choices_count_as_seen_and_a_skip_ahead_set_is_checked_within_itself():
    """A wrong choice of a question above that states a later question's answer is found; so is a
    choice (or prompt) of another question of the same skip-ahead set, shown at the same time;
    the question's own choices are not held against it."""
    below = registry.get_question("start-number-equal-scores")          # reveals "equal scores give equal"
    above = Question("made-up-above", "00_start_here", "predict", "Which?", answer=0,
                     choices=["the right one", "a wrong one: equal scores give equal weights"],
                     reveals=[r"\bright one\b"])
    shown_here = [Seen(0, "the prompt of 'made-up-above'", above.prompt, above.id)]
    shown_here += [Seen(0, f"choice {n} of 'made-up-above'", c, above.id) for n, c in enumerate(above.choices)]
    shown_here.append(Seen(1, "the prompt of 'start-number-equal-scores'", below.prompt, below.id))
    report = in_sight(Asked(1, below), shown_here)
    assert [line.split(":")[0].strip() for line in report] == ["cell 1 (choice 1 of 'made-up-above')"]
    assert in_sight(Asked(0, below, skip_ahead=True), shown_here)            # beside it, in one set
    assert not in_sight(Asked(0, below, skip_ahead=False), shown_here)       # a cell of its own: not above
    own = [Seen(0, "choice 0 of 'start-number-equal-scores'", "equal scores give equal weights", below.id)]
    assert not in_sight(Asked(0, below, skip_ahead=True), own)               # its own choices
