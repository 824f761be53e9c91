"""Notebook 01, positional encoding: its structure, and the syllabus figures it prints.

The figures are pinned through what the notebook's own cells print when it runs in a real
kernel (the cells marked with metadata.course.figure).
"""

import json
import re

import numpy as np
import pytest

from conftest import CONTENT
from engine.core.registry import all_exercises, all_questions
from lib.positional import sinusoidal

NAME = "01_positional_encoding.ipynb"
STEM = NAME[:-6]


@pytest.fixture(scope="module")
def notebook():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_format_and_setup(notebook):
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] == 5
    assert notebook["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                                  "language": "python"}
    assert all("id" in cell for cell in notebook["cells"])
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert "setup" in code[0]["metadata"].get("tags", [])
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


def test_rhythm_predict_then_lab_then_exercises_then_you_can_now(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    first_ask = next(i for i, s in enumerate(sources) if s.startswith('ask("pos-predict-shuffle")'))
    first_lab = next(i for i, s in enumerate(sources) if "shuffle_lab()" in s)
    first_exercise = next(i for i, c in enumerate(notebook["cells"]) if "exercise" in c["metadata"].get("tags", []))
    assert first_ask < first_lab < first_exercise
    for lab in ("shuffle_lab()", "position_table_lab()", "rotary_lab()"):
        assert sum(lab in s for s in sources) == 1
    assert sources[-1].startswith("## You can now")
    exercises = [ex.id for ex in all_exercises() if ex.notebook == STEM]
    assert len(exercises) >= 3
    for ex_id in exercises:
        assert f"**{ex_id}**" in sources[-1]                 # the closing list matches the exercises
    questions = [q for q in all_questions() if q.notebook == STEM]
    assert len(questions) >= 3
    for q in questions:
        assert sum(s.strip() == f'ask("{q.id}")' for s in sources) == 1
    assert any("<details><summary>" in s for s in sources)


def test_questions_come_before_the_figures_they_ask_about(notebook):
    cells = notebook["cells"]
    sources = [_source(c) for c in cells]
    position = {c.get("metadata", {}).get("course", {}).get("figure"): i for i, c in enumerate(cells)}
    for question, figure in [("pos-number-pe01", "pe-d2"), ("pos-shape-ten-tokens", "pe-shape"),
                             ("pos-number-last-speed", "last-speed"), ("pos-number-scale-64", "embedding-rows"),
                             ("pos-predict-scale", "scaling"), ("pos-predict-shift", "shift-angles"),
                             ("pos-predict-added-score", "added-score"), ("pos-predict-rope", "rope-derivation"),
                             ("pos-predict-rope", "rope-scores")]:
        asked = sources.index(f'ask("{question}")')
        assert asked < position[figure], question


def test_prose_does_not_type_the_figures(notebook):
    prose = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    for typed in ("0.217", "0.765", "(10, 8)", "0.38", "1.54", "0.24", "1.82", "0.44", "0.72",
                  "1/100", "0.01", "factor is 8", "= 8", "1.389", "0.076", "2.8", "1414", "60,611",
                  "55%", "48%", "79%", "0.36", "1.46", "0.86", "-0.018", "12 pairs", "27.7", "19.6",
                  "0.100", "0.029", "0.65", "25.587", "0.393", "0.3789", "-0.681", "0.970", "471", "35,333",
                  "305,971", "0.359", "0.291", "7.97", "5.66"):
        assert typed not in prose, typed


def test_figure_cells_are_marked(notebook):
    marked = {c["metadata"]["course"]["figure"] for c in notebook["cells"]
              if c["cell_type"] == "code" and "figure" in c["metadata"].get("course", {})}
    assert marked == {"shuffle", "causal", "causal-order", "counting", "pe-d2", "pe-shape", "last-speed",
                      "row-lengths", "pe-slice", "embedding-rows", "scaling", "shift-angles", "shift-matrix",
                      "add-angles", "added-score", "rope-head-size", "rope-derivation", "rope-scores", "rope-base",
                      "rope-grid", "rope-pairings", "rope-length"}


# ---------------------------------------------------------------- the pinned figures

def test_shuffle_figure(figures):
    lines = figures["shuffle"].splitlines()
    assert "positions added: False" in lines[0]
    assert lines[0].endswith("cat 0.00, dog 0.00, car 0.00")
    changes = [float(x) for x in re.findall(r"\w+ (\d+\.\d+)", lines[1].split(":", 2)[-1])]
    assert len(changes) == 3 and all(c > 0.5 for c in changes)


def test_causal_mask_figure(figures):
    assert "words each row averages over: [1 2 3 4 5]" in figures["causal"]


def test_d2_vector_and_pe01(figures):
    """pos-number-pe01 asks for the length of [sin 5, cos 5]: the cell prints rows 0 to 5, each 1 long."""
    text = figures["pe-d2"]
    assert "column 0 is sin(pos) and column 1 is cos(pos): True" in text
    assert "the length of each row: [1. 1. 1. 1. 1. 1.]" in text
    from engine.core.registry import get_question
    question = get_question("pos-number-pe01")
    assert "position 5" in question.prompt and question.answer == pytest.approx(np.hypot(np.sin(5), np.cos(5)))


def test_shape_for_ten_tokens(figures):
    assert figures["pe-shape"].strip() == "(10, 8)"


def test_last_pair_speed(figures):
    text = figures["last-speed"]
    assert "d_model =   4: the last pair turns 0.010000 radians per position" in text
    assert "d_model =   8: the last pair turns 0.001000 radians per position" in text
    sine, reference = re.findall(r":\s*(\S+)\n", text)[-2:]
    assert sine == reference                                   # the table's pair is sin(1/100)


def test_table_built_once_and_sliced(figures):
    assert "whole table: (16, 8)   this text: (3, 8)" in figures["pe-slice"]
    assert "same as a table built for 3 rows: True" in figures["pe-slice"]


def test_the_factor_is_printed_under_the_scale_question(figures):
    """pos-number-scale-64 asks how long a word row of about 1 is after the factor at d_model = 64:
    the cell below it prints the factor, 8, and the length."""
    line = next(line for line in figures["embedding-rows"].splitlines() if line.startswith("d_model =  64"))
    assert "times sqrt(d_model) = 8: " in line
    scaled = float(re.search(r"= 8: (\d+\.\d+)", line).group(1))
    from engine.core.registry import get_question
    question = get_question("pos-number-scale-64")
    assert abs(scaled - question.answer) <= question.tol


def test_rope_scores(figures):
    text = figures["rope-scores"]
    assert "lengths kept: True" in text
    assert "key at  2, query at  5 (3 apart): score 0.217" in text
    assert "key at 12, query at 15 (3 apart): score 0.217" in text
    assert "key at  2, query at  8 (6 apart): score -0.765" in text


# ---------------------------------------------------------------- what the causal mask can tell

def _moved(text, start):
    """The changes printed on the line of the causal-order figure that starts with ``start``."""
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [float(x) for x in line.split("moved by ")[1].split(", ")]


def _layers_line(layers, masked, sentence):
    return f"{layers:<10} {'masked' if masked else 'no mask':<7} -> {sentence}:"


def test_without_the_mask_no_words_output_moves_while_its_rows_do(figures):
    """"Without the mask no word's output moves, after one layer or two"; "row by row, the unmasked
    layer's rows 0 and 2 moved ... only because they now hold other words"."""
    text = figures["causal-order"]
    for layers in ("one layer", "two layers"):
        for sentence in ("dog cat car", "car dog cat"):
            assert _moved(text, _layers_line(layers, False, sentence)) == [0, 0, 0]
    rows = _moved(text, "row by row instead, one layer, no mask -> car dog cat")
    assert rows[1] == 0 and min(rows[0], rows[2]) > 0.5


def test_one_masked_layer_tells_a_reversal_but_not_the_order_of_the_words_before_car(figures):
    text = figures["causal-order"]
    assert min(_moved(text, _layers_line("one layer", True, "car dog cat"))) > 0.05   # every word moved
    cat, dog, car = _moved(text, _layers_line("one layer", True, "dog cat car"))
    assert car == 0 and cat > 0.01 and 0 < dog < 1e-3                              # "dog's barely"
    weight = float(re.search(r"dog's weight on cat (\S+)", text).group(1))
    assert weight < 1e-3                                                            # "almost no weight"
    assert _moved(text, _layers_line("two layers", True, "dog cat car"))[2] > 0.01  # a second layer moves car


def test_the_words_outputs_are_compared_as_the_shuffle_lab_compares_them():
    """The cell measures word by word "as the lab's bars do": its one-layer numbers are the shuffle
    lab's bars with the causal mask, and without it."""
    from lib.attention import attention
    from lib.weights import random_weights
    from labs.positional import shuffle
    words, *weights = random_weights([(3, 4)] + [(4, 4)] * 8, seed=104,
                                     scale=[0.5] + [2.0, 2.0, 0.6, 0.6] * 2, decimals=2)
    assert np.array_equal(words, shuffle.X) and np.array_equal(weights[0], shuffle.WQ)   # the lab's
    for order in shuffle.PERMUTATIONS:
        for causal in (False, True):
            before = words + attention(words, *weights[:4], causal=causal)
            after = words[list(order)] + attention(words[list(order)], *weights[:4], causal=causal)
            per_word = np.linalg.norm(after[np.argsort(order)] - before, axis=-1)
            np.testing.assert_allclose(per_word, shuffle.shuffle_model(order, causal=causal).change,
                                       atol=1e-12)


def test_the_last_row_after_one_layer_differs_only_by_rounding():
    from lib.attention import attention
    from lib.weights import random_weights
    words, *weights = random_weights([(3, 4)] + [(4, 4)] * 8, seed=104,
                                     scale=[0.5] + [2.0, 2.0, 0.6, 0.6] * 2, decimals=2)
    one = lambda x: attention(x, *weights[:4], causal=True)                               # noqa: E731
    assert np.linalg.norm(one(words[[1, 0, 2]])[2] - one(words)[2]) < 1e-12


# ---------------------------------------------------------------- the order of the sections

def _index(sources, start):
    return next(i for i, s in enumerate(sources) if s.startswith(start))


def test_the_motivation_comes_before_the_formula_and_predictions_before_their_answers(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    assert _index(sources, "## Why not just add 1, 2, 3?") < _index(sources, "## The sinusoidal table")
    rope_asked = sources.index('ask("pos-predict-rope")')
    answer = _index(sources, "Why, in two lines.")
    assert rope_asked < answer and "depends on the positions only through" in sources[answer]
    assert not any("distance" in s for s in sources[_index(sources, "## Rotary positions"):rope_asked])
    shape_asked = sources.index('ask("pos-shape-ten-tokens")')
    assert shape_asked < next(i for i, s in enumerate(sources) if s.startswith("One row per position"))
    scale_asked = sources.index('ask("pos-predict-scale")')
    assert scale_asked < next(i for i, s in enumerate(sources) if "scaling_lab()" in s)
    # the position-table lab prints the last pair's speed once d_model is 4: asked before it
    speed_asked = sources.index('ask("pos-number-last-speed")')
    assert speed_asked < next(i for i, s in enumerate(sources) if "position_table_lab()" in s)
    lead_in = re.sub(r"\s+", " ", "\n".join(sources[_index(sources, "## Lab: the scale factor"):scale_asked]))
    assert "how much of the input is the word" not in lead_in and "dial" not in lead_in


def test_what_answers_an_exercise_comes_after_its_check(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    table_check = sources.index('check("position-table")')
    assert _index(sources, "<details><summary>If you are stuck") > table_check
    distance_check = sources.index('check("rope-signed-distance")')
    grid = next(i for i, c in enumerate(notebook["cells"])
                if c["metadata"].get("course", {}).get("figure") == "rope-grid")
    deeper = _index(sources, "<details><summary>Deeper: RoPE")
    assert distance_check < grid < deeper
    assert sources.index('check("rope-rotation")') < distance_check


def test_the_scale_exercise_is_retired_and_still_checks_old_notebooks(notebook):
    from engine.core.registry import exercises_by_notebook, get_exercise
    from exercise_answers import try_template, try_variant
    old = get_exercise("scale-then-add")
    assert old.retired and old.notebook == STEM
    assert "scale-then-add" not in [ex.id for ex in all_exercises()]
    assert all(ex.id != "scale-then-add" for _s, _t, exs in exercises_by_notebook() for ex in exs)
    assert "scale-then-add" not in json.dumps(notebook)
    assert try_variant(old).passed and try_template(old).kind == "blank"
    assert not try_variant(old, old.mistakes[0].code).passed
    assert "about as long as a position row" not in " ".join(old.hints)


# ---------------------------------------------------------------- why not 1, 2, 3; the table's rows

def test_counting_grows_without_limit_while_table_rows_keep_their_length(figures):
    counted = [float(x) for x in re.findall(r"length\s+(\d+\.\d)", figures["counting"])]
    assert len(counted) == 5 and all(a < b for a, b in zip(counted, counted[1:])) and counted[-1] > 1000
    rows = re.findall(r"has length (\d\.\d+)", figures["row-lengths"])
    assert len(rows) == 5 and set(rows) == {"2.000"}
    assert "sqrt(d_model / 2) = 2.000" in figures["row-lengths"]


def test_the_last_pair_of_a_wide_table_turns_about_a_ten_thousandth_of_a_radian(figures):
    line = next(line for line in figures["last-speed"].splitlines() if line.startswith("d_model = 512"))
    speed = float(re.search(r"turns (\S+) radians", line).group(1))
    once_round = int(re.search(r"once round in ([\d,]+) positions", line).group(1).replace(",", ""))
    assert 0.5e-4 < speed < 2e-4 and 10_000 < once_round < 100_000       # "tens of thousands"


def test_left_columns_change_fast_and_right_columns_slowly():
    table = sinusoidal(64, 8)
    change = np.abs(np.diff(table, axis=0)).mean(axis=0)
    assert change[0] > 10 * change[-2] and all(a > b for a, b in zip(change[0::2], change[2::2]))


# ---------------------------------------------------------------- scaling the words

def test_fresh_rows_drawn_at_one_over_root_d_are_about_one_long(figures):
    *lines, others = figures["embedding-rows"].strip().splitlines()
    lines = [re.sub(r"sqrt\(d_model\) = [\d.]+:", "sqrt(d_model)", line) for line in lines]
    unit, gpt2 = (float(x) for x in re.findall(r"\) (\d+\.\d+)", others))
    position_768 = np.sqrt(768 / 2)
    assert unit > position_768 and gpt2 < position_768 / 10       # "longer", "much smaller"
    for line in lines:
        d = int(re.search(r"d_model =\s+(\d+)", line).group(1))
        word, scaled, position = (float(x) for x in re.findall(r"(?:length|sqrt\(d_model\)) (\d+\.\d+)", line))
        assert abs(word - 1) < 0.05 and abs(scaled - np.sqrt(d)) < 0.05 * np.sqrt(d)
        assert position == pytest.approx(np.sqrt(d / 2), abs=0.01) and position > word


def test_the_stuck_box_asks_for_the_decisions_instead_of_giving_the_fills(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    box = sources[_index(sources, "<details><summary>If you are stuck")]
    for fill in ("[:, None]", "np.arange(length)[", "axis=-1", "new last axis", "np.stack(["):
        assert fill not in box, fill
    assert "which\nof `np.arange(length)` and `speeds` needs a new axis" in box
    assert "try each place for the new axis" in box


def test_the_word_share_is_the_words_squared_length_over_both_parts_added(notebook):
    """The prose and the lab say |w|² / (|w|² + |p|²), which is what the lab computes, and which
    differs from a share of |w + p|² (the input's own squared length)."""
    from labs.positional import scaling
    prose = _prose(notebook)
    assert "|w|² / (|w|² + |p|²)" in prose and "shares of its squared length" not in prose
    for factor in (0.5, 2.0, 8.0):
        words = scaling.X * factor
        positions = scaling.course_table(len(scaling.WORDS), scaling.D_MODEL)[:len(scaling.WORDS)]
        share = (words ** 2).sum() / ((words ** 2).sum() + (positions ** 2).sum())
        assert scaling.scaling_model(factor).word_share == pytest.approx(share, rel=1e-12)
        if factor == 2.0:                                  # 55% of |w|² + |p|², 56% of |w + p|²
            assert abs((words ** 2).sum() / ((words + positions) ** 2).sum() - share) > 0.005
    assert "input's squared length" not in scaling.scaling_model(2.0).verdict


def test_scaling_figure_pins_what_the_outputs_follow(figures):
    rows = [re.findall(r"(\d+)%", line) for line in figures["scaling"].strip().splitlines()]
    factors = [float(re.search(r"factor\s+(\S+):", line).group(1)) for line in figures["scaling"].strip().splitlines()]
    share, by_word, by_place = ([int(r[i]) for r in rows] for i in range(3))
    assert factors == [0.25, 1.0, 2.0, 8.0, 16.0]
    assert share == sorted(share) and by_place == sorted(by_place)
    assert by_word[1:] == sorted(by_word[1:], reverse=True)               # from x1 on
    assert by_word[0] > by_place[0] and by_word[-1] < by_place[-1]         # positions, then words
    assert 40 < share[2] < 60                                              # about even at x2
    assert by_word[2] > 50 and by_place[2] > 50           # moved by more than half, either way matched


def test_what_the_factor_does_is_said_without_an_intent(notebook):
    prose = _prose(notebook)
    assert "meant to" not in prose
    assert ("a reordering moves the outputs by more than half an output's length whether they are "
            "matched by word or by place") in prose


# ---------------------------------------------------------------- rotary positions, deeper

def test_rope_turns_each_head_on_its_own(figures):
    assert "d_model 96, 4 heads: each head's queries and keys have 24 numbers, so RoPE turns 12 pairs " \
           "per head (d = 24)" in figures["rope-head-size"]


def test_every_diagonal_of_the_score_grid_is_one_score(figures):
    lines = figures["rope-grid"].strip().splitlines()
    assert len(lines) == 4
    found = {}
    for line in lines:
        distance = int(re.search(r"distance\s+(-?\d+):", line).group(1))
        low, high = re.search(r"from (\S+) to (\S+)$", line).groups()
        assert low == high
        found[distance] = float(low)
    assert "distance  3: 17 scores, from 0.217" in figures["rope-grid"]
    assert abs(found[3] - found[-3]) > 0.1                     # "the other sign, ... other scores"


def test_the_two_pairings_are_one_model_reordered(figures):
    text = figures["rope-pairings"]
    same = float(re.search(r"largest difference over all 20 x 20 scores (\S+)", text).group(1))
    other = float(re.search(r"not reordered:\s+the score is \S+; largest difference (\S+)", text).group(1))
    assert same < 1e-12 and other > 0.1
    assert "the same score 0.217" in text and "reordering q is reordering the columns of W_q: True" in text


def test_the_slowest_pair_has_not_gone_round_within_training_lengths(figures):
    angles = [float(x) for x in re.findall(r"turns (\S+) radians", figures["rope-length"])]
    assert len(angles) == 2 and angles[0] < angles[1] < 2 * np.pi


def test_the_remedies_for_longer_texts_change_the_speeds_as_the_text_says(figures):
    """Position interpolation slows every pair by s, so over s times the trained length the slowest
    pair turns as far as over the trained length; NTK-aware scaling keeps the fastest pair and
    slows the slowest by exactly s."""
    text = figures["rope-length"]
    rows = {}
    for line in text.splitlines():
        found = re.match(r"(as trained|position interpolation|NTK-aware)\D*.*fastest pair (\S+), slowest (\S+) "
                         r"radians per position; over 8,192 positions the slowest turns (\S+)$", line)
        if found:
            rows[found.group(1)] = [float(found.group(i).rstrip(",")) for i in (2, 3, 4)]
    trained, interpolated, ntk = rows["as trained"], rows["position interpolation"], rows["NTK-aware"]
    over_2048 = float(re.search(r"over 2,048 positions the slowest pair turns (\S+)", text).group(1))
    assert interpolated[0] == pytest.approx(trained[0] / 4) and interpolated[2] == pytest.approx(over_2048)
    assert ntk[0] == trained[0] and ntk[1] == pytest.approx(trained[1] / 4, rel=1e-3)
    from lib.positional import rope_angles
    for d in (8, 32, 128):                                      # exactly s, at every head size
        for s in (2, 4, 16):
            speeds = rope_angles([1], d, 10000 * s ** (d / (d - 2)))[0]
            assert speeds[0] == 1 and speeds[-1] == pytest.approx(rope_angles([1], d)[0][-1] / s)


# ---------------------------------------------------------------- a step along the table is a turn

def test_a_step_of_k_rows_turns_every_pair_by_k_times_its_speed_wherever_it_starts(figures):
    lines = figures["shift-angles"].strip().splitlines()
    expected = lines[0].split(":", 1)[1].strip()
    assert lines[0].startswith("3 times each pair's speed") and expected == "[3.    0.3   0.03  0.003]"
    assert len(lines) == 4 and all(line.split("turned", 1)[1].strip() == expected for line in lines[1:])
    for d_model in (2, 8, 64):                                    # the claim, beyond the printed rows
        table = sinusoidal(3000, d_model)
        speeds = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
        for k in (1, 7, 250):
            for p in (0, 1, 999, 2700):
                here, there = table[p].reshape(-1, 2), table[p + k].reshape(-1, 2)
                turned = np.arctan2(there[:, 0] * here[:, 1] - there[:, 1] * here[:, 0],
                                    (here * there).sum(axis=1))
                wrapped = np.angle(np.exp(1j * k * speeds))          # k times the speed, in (-pi, pi]
                np.testing.assert_allclose(turned, wrapped, atol=1e-9)


def test_one_matrix_built_from_k_alone_moves_every_row_k_positions_on(figures):
    text = figures["shift-matrix"]
    assert "for all 1,097 rows" in text
    assert float(re.search(r"largest difference (\S+)$", text.strip()).group(1)) < 1e-12
    matrix = np.array([[float(x) for x in line.strip(" []").split()] for line in text.splitlines()[1:5]])
    assert np.count_nonzero(matrix[:2, 2:]) == np.count_nonzero(matrix[2:, :2]) == 0   # one turn per pair
    for block in (matrix[:2, :2], matrix[2:, 2:]):                                      # each one a turn
        np.testing.assert_allclose(block @ block.T, np.eye(2), atol=2e-3)


def test_rotary_turns_read_their_sines_and_cosines_from_the_table_of_their_own_width():
    """The rope-rotation exercise's premise: row p of sinusoidal(p + 1, d, base) holds the sines
    (even columns) and cosines (odd columns) of RoPE's angles at position p, for a head of size d."""
    from lib.positional import rope_angles
    for d in (2, 6, 32):
        for base in (100.0, 10000.0, 500000.0):
            for p in (0, 1, 17, 1000):
                row = sinusoidal(p + 1, d, base)[p]
                angles = rope_angles([p], d, base)[0]
                np.testing.assert_allclose(row[0::2], np.sin(angles), atol=1e-12)
                np.testing.assert_allclose(row[1::2], np.cos(angles), atol=1e-12)


def test_the_exercises_need_what_the_prose_above_them_does_not_write_out(notebook):
    """The table exercise leaves the grid's axes and the sines' and cosines' layout to the learner,
    the rotary one which table and which of its columns; the prose gives the formulas, not these."""
    from engine.core.registry import get_exercise
    sources = [_source(c) for c in notebook["cells"]]
    above_table = "\n".join(sources[:sources.index('check("position-table")') - 1])
    above_rope = "\n".join(sources[:sources.index('check("rope-rotation")') - 1])
    for shown in ("[:, None]", "stack(", "np.outer", "np.dstack", "np.arange(0, d_model, 2)", "arange(0, d_model"):
        assert shown not in above_table, shown
    for shown in ("len(x), base)", "position + 1", "[0::2]", "[1::2]"):
        assert shown not in above_rope.replace(get_exercise("rope-rotation").template, ""), shown


# ---------------------------------------------------------------- the deeper box and the references

def _prose(notebook):
    return re.sub(r"\s+", " ", "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown"))


def test_the_scaled_input_is_named_as_the_original_transformers_recipe(notebook):
    prose = _prose(notebook)
    assert "The original transformer computes its input as `word * sqrt(d_model) + PE[pos]`" in prose
    assert "Many models compute" not in prose


def test_a_wrong_pairing_is_called_loud_as_notebook_05_measures_it(notebook):
    """01 says the wrong pairing raises no error and that in a trained model the perplexity
    comes out more than ten times as large; notebook 05's mismatch lab, run with that pairing, agrees (a loud mismatch)."""
    from labs.trained.mismatch import LOUD, mismatch_model
    prose = _prose(notebook)
    assert "without saying so" not in prose
    assert ("notebook 05 runs its model with the wrong pairing, and its perplexity comes out more than ten "
            "times as large") in prose
    wrong = mismatch_model(pairing="neighbours")
    assert wrong.status == "loud" and wrong.ratio > max(LOUD, 10.0), wrong.verdict


def test_the_remedies_are_named_for_what_they_are_and_in_the_references(notebook):
    prose = _prose(notebook)
    assert "measure it for several ways of encoding positions" in prose
    for method in ("*position interpolation* divides every position by *s*",
                   "*NTK-aware scaling* raises the base", "*YaRN* leaves as they are the fast pairs"):
        assert method in prose, method
    references = re.sub(r"\s+", " ", _source(next(c for c in notebook["cells"]
                                                   if _source(c).startswith("## References"))))
    assert "Positional Interpolation" in references and "YaRN" in references
    assert "behind this notebook" not in references


def test_the_capstone_runs_the_learners_rope_one_read_from_the_table(tmp_path, monkeypatch):
    """Notebook 05's capstone reads rope_one from the learner's saved notebook 01 and runs it in
    the exercise's context, which must hold the sinusoidal table the new template reads."""
    from engine.core.notebooks import read, solve_notebook, write
    from engine.core.parts import course_parts
    from exercises.definitions.trained import PARTS, your_parts
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    solved, _ids = solve_notebook(read(CONTENT / NAME))
    write(solved, tmp_path / NAME)
    parts = your_parts(tmp_path)
    assert re.search(r"rope_one\s+yours, from 01_positional_encoding.ipynb", parts.report), parts.report
    course = course_parts(PARTS)[1]
    assert parts.rope_one is not course
    x = np.random.default_rng(5).normal(size=24)
    for position in (0, 3, 40):
        np.testing.assert_allclose(parts.rope_one(x, position), course(x, position), atol=1e-12)


def test_the_notation_the_ways_and_the_turns_are_said_exactly(notebook):
    """i is the pair index and k the shift; the notebook shows two of the ways to encode
    positions; the first word's output goes through the output matrix; a turn keeps the length
    but not the direction; the speeds decide the table's width, not its row."""
    from engine.core.registry import get_exercise, get_question
    sources = [_source(c) for c in notebook["cells"]]
    prose = _prose(notebook)
    texts = sources + [get_exercise("position-table").template, get_question("pos-number-last-speed").explanation]
    texts += get_exercise("rope-rotation").hints + [m.hint for m in get_exercise("rope-rotation").mistakes]
    for text in texts:
        assert not re.search(r"\b2k\b|\bpair k\b|\(k = 0\)|column `k`", text), text
    assert "columns 2i and 2i + 1" in prose and "Row *p* + *k* holds the same pair *k* positions further on" in prose
    assert "shows two of the ways models encode positions" in prose and "the two ways" not in prose
    assert "its own value, passed through the output matrix" in prose
    assert "never changes a vector's length" not in prose
    assert "A turn also keeps a vector's length" in prose and "only its direction turns with the position" in prose
    assert "decide its width; what a row of the table stands for decides the row" in prose


def test_the_distance_check_names_the_cell_of_its_query_and_key(notebook):
    cells = notebook["cells"]
    sources = [_source(c) for c in cells]
    assert "query and key drawn from seed 2026 in the code cell under the rotary lab" in _prose(notebook)
    lab = next(i for i, s in enumerate(sources) if "rotary_lab()" in s)
    under = next(i for i in range(lab + 1, len(cells)) if cells[i]["cell_type"] == "code")
    assert "default_rng(2026)" in sources[under]
    assert re.search(r"^query = ", sources[under], re.M) and re.search(r"^key = ", sources[under], re.M)


def test_a_wrong_pairing_turns_other_numbers_together(notebook):
    """Halves pair number 0 with number 16 in a head of 32, neighbours with number 1."""
    from lib.positional import rope
    assert "number 0 turns with number 1 instead of number 16" in _prose(notebook)
    e = np.zeros((2, 32))
    e[:, 0] = 1.0                                                   # number 0 alone, at positions 0, 1
    for pairing, partner in (("halves", 16), ("neighbours", 1)):
        turned = rope(e, pairing=pairing)[1]
        assert set(np.flatnonzero(np.abs(turned) > 1e-12)) == {0, partner}, pairing


# ---------------------------------------------------------------- the order of words, said without its answer

def test_the_openings_state_no_conclusion_about_word_order(notebook):
    """Neither 00's description of this notebook nor this notebook's opening says that attention
    ignores word order: pos-predict-shuffle asks it."""
    from engine.core.registry import get_question
    question = get_question("pos-predict-shuffle")
    start = json.loads((CONTENT / "00_start_here.ipynb").read_text(encoding="utf-8"))
    texts = [_source(c) for c in start["cells"] if "01_positional_encoding.ipynb" in _source(c)]
    texts.append(_source(notebook["cells"][0]))
    for text in texts:
        squeezed = re.sub(r"\s+", " ", text)
        for pattern in question.reveals:
            assert not re.search(pattern, squeezed, re.IGNORECASE), (pattern, squeezed[:200])
    assert "nothing in it mentions" not in texts[-1]


def test_the_questions_about_order_rule_out_the_causal_mask():
    """With a causal mask a word's output does change when the words are reordered (the causal
    figure's masked lines): every question about order says there is no mask."""
    from exercises.definitions.questions.positional import SKIP_AHEAD
    from engine.core.registry import get_question
    for question in (get_question("pos-predict-shuffle"), next(q for q in SKIP_AHEAD if q.id == "pos-out-pooled")):
        assert "no causal mask" in question.prompt, question.id
    assert "causal mask it would change" in get_question("pos-predict-shuffle").explanation


def test_the_shuffle_lab_text_introduces_the_function_its_badge_names(notebook):
    sources = [_source(c) for c in notebook["cells"]]
    lab = next(i for i, s in enumerate(sources) if "shuffle_lab()" in s)
    assert "name `position_table`" in sources[lab - 1] and "you write it later in this notebook" in sources[lab - 1]
    from labs.positional.shuffle import TABLE_USE
    from engine.core.registry import get_exercise
    assert get_exercise(TABLE_USE.exercise).name == "position_table" and not get_exercise(TABLE_USE.exercise).retired


# ---------------------------------------------------------------- sinusoids do not extrapolate

def test_the_table_is_said_not_to_solve_unseen_positions_and_rows_past_training_are_new(notebook):
    """"past the longest text of its training a model meets rows, combinations of angles, that it
    never saw": for a table trained up to 512 positions, every row from 512 to 2,047 is far from
    each of the rows 0 to 511, although every number stays within [-1, 1]."""
    prose = _prose(notebook)
    assert "They do not solve the second problem, though." in prose
    assert "models that add this table do get worse there (Press et al." in prose
    for d_model in (16, 64, 512):
        table = sinusoidal(2048, d_model)
        seen, unseen = table[:512], table[512:]
        assert np.abs(table).max() <= 1.0
        nearest = np.sqrt(((unseen[:, None, :] - seen[None, :, :]) ** 2).sum(-1)).min(axis=1)
        assert nearest.min() > 0.05, d_model


def test_the_prose_does_not_say_a_position_overwrites_or_drowns_the_word(notebook):
    prose = _prose(notebook)
    for word in (r"(?<!not )overwrit", r"drown", r"made of a word"):
        assert not re.search(word, prose), word
    from labs.positional import scaling
    assert "decides how much of the input is the word" not in scaling.__doc__


# ---------------------------------------------------------------- adding is nearly concatenating

def test_word_and_position_rows_are_nearly_perpendicular_and_the_sums_stay_apart(figures):
    text = figures["add-angles"]
    rows = re.findall(r"d_model =\s+(\d+): mean \|cos\| between a word row and a position row (\S+); "
                      r"between two random directions about (\S+)", text)
    assert [int(d) for d, _m, _r in rows] == [64, 256]
    (_, low64, rand64), (_, low256, rand256) = rows
    assert float(low256) < float(low64) < 0.15 and float(low256) < 0.06       # "the closer to perpendicular"
    for measured, random_pair in ((low64, rand64), (low256, rand256)):
        assert abs(float(measured) - float(random_pair)) <= 0.1 * float(random_pair)   # "as unrelated directions"
    gap = float(re.search(r"9 sums, the nearest two (\S+) apart", text).group(1))
    assert gap > 0.1
    import itertools
    for seed in range(20):                                    # "rows drawn at random never are" equal
        words = np.random.default_rng(seed).normal(0, 0.5, (3, 4))
        sums = (words[:, None, :] + sinusoidal(3, 4)[None]).reshape(9, 4)
        assert min(np.linalg.norm(s - t) for s, t in itertools.combinations(sums, 2)) > 1e-6


# ---------------------------------------------------------------- positions inside the score

def test_the_position_rows_share_directions_with_the_words_less_so_in_a_wider_model(figures, notebook):
    """Pair by pair nearly perpendicular, but the 512 position rows keep 99% of their squared length
    in part of the directions, and a word row has about that part's share of its squared length
    there: a substantial share at 64, a smaller one at 256 ("adding them is not writing them side
    by side"; "the shared part is smaller there")."""
    found = re.findall(r"99% of their squared length in (\d+) of (\d+) directions; "
                       r"a word row has (\d+)% of its squared length in those \1", figures["add-angles"])
    assert [int(d) for _u, d, _s in found] == [64, 256]
    shares = []
    for used, d_model, share in found:
        used, d_model, share = int(used), int(d_model), int(share) / 100
        assert used < 0.6 * d_model                                  # "in part of the model's directions"
        assert abs(share - used / d_model) < 0.03                    # "about as large a share ... as the part"
        shares.append((used / d_model, share))
    (part64, share64), (part256, share256) = shares
    assert share64 > 0.3 and part256 < part64 and share256 < share64
    prose = _prose(notebook)
    assert "adding them is not writing them side by side" in prose
    assert "nearly writing them side by side" not in prose


def test_the_fast_hand_comes_close_to_its_start_but_never_back(figures):
    """"never comes back exactly to where it started, but it comes close again and again"."""
    text = figures["last-speed"]
    m = re.search(r"within 0.05 radians of its start at position (\d+): (\S+) radians away; "
                  r"closest up to 999: (\S+), never 0", text)
    first, gap, closest = int(m.group(1)), float(m.group(2)), float(m.group(3))
    assert first < 100 and 0 < closest <= gap < 0.05
    angles = np.arange(1, 100_000) % (2 * np.pi)
    assert np.minimum(angles, 2 * np.pi - angles).min() > 0
    assert (np.minimum(angles, 2 * np.pi - angles) < 0.05).sum() > 100       # "again and again"


def test_weights_made_of_turns_give_a_positions_term_that_depends_only_on_the_distance(figures):
    """A block-diagonal matrix of 2 x 2 turns (the shift matrix) between two position rows: the
    positions' term is one number at every place, for any shift and width, unlike random weights."""
    line = figures["added-score"].strip().splitlines()[-1]
    values = re.search(r"the positions' term at the three places (.+)$", line).group(1).split(", ")
    assert len(values) == 3 and len(set(values)) == 1
    for d_model in (8, 64):
        table = sinusoidal(400, d_model)
        speeds = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
        for k in (-3, 5):
            A = np.zeros((d_model, d_model))
            for i, t in enumerate(k * speeds):
                A[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
            for gap in (0, 3, 7):
                terms = [table[n + gap] @ A @ table[n] for n in (0, 100, 250)]
                assert max(terms) - min(terms) < 1e-9


def _added_terms(text):
    rows = []
    for line in text.strip().splitlines():
        if "terms" not in line:
            continue
        m, n = (int(v) for v in re.search(r"cat at\s+(\d+), dog at\s+(\d+)", line).groups())
        terms = [float(v) for v in re.search(r"terms\s+(.+?)\s+score", line).group(1).split()]
        score = float(re.search(r"score\s+(\S+)", line).group(1))
        plain = float(re.search(r"p_m·p_n (\S+)$", line).group(1))
        rows.append((m, n, terms, score, plain))
    return rows


def test_the_added_score_splits_into_four_terms_and_only_the_words_term_keeps_its_place(figures):
    rows = _added_terms(figures["added-score"])
    assert [(m - n, n) for m, n, *_ in rows] == [(3, 0), (3, 100), (3, 200)]
    words = {t[0] for _m, _n, t, _s, _p in rows}
    assert len(words) == 1                                             # the words' own term stays
    for k in (1, 2, 3):                                                # the others move
        assert len({t[k] for _m, _n, t, _s, _p in rows}) == 3
    for _m, _n, terms, score, _p in rows:
        assert abs(sum(terms) - score) < 2e-3
    scores = [s for *_r, s, _p in rows]
    assert max(scores) - min(scores) > 0.5                             # "score differently"
    assert len({p for *_r, p in rows}) == 1                            # p_m . p_n the same


def test_the_plain_dot_product_of_two_position_rows_depends_only_on_their_distance():
    for d_model in (4, 64, 512):
        table = sinusoidal(400, d_model)
        speeds = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
        for m, n in ((3, 0), (103, 100), (250, 260), (7, 7)):
            assert table[m] @ table[n] == pytest.approx(np.cos((m - n) * speeds).sum(), abs=1e-9)


def test_through_a_heads_weights_the_same_words_at_the_same_distance_score_differently():
    """Not a property of one draw: for every one of 20 random heads and word pairs, the scores at
    positions (3, 0), (103, 100) and (203, 200) differ."""
    table = sinusoidal(256, 64)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x, y = rng.normal(0, 1, (2, 64))
        W_q, W_k = rng.normal(0, 1 / 8, (2, 64, 64))
        A = W_q @ W_k.T / 8
        scores = [(x + table[n + 3]) @ A @ (y + table[n]) for n in (0, 100, 200)]
        assert max(scores) - min(scores) > 0.05, seed


def test_the_rope_derivation_holds_and_gives_one_score_wherever_the_pair_stands(figures):
    text = figures["rope-derivation"]
    gaps = [float(v) for v in re.findall(r"differs by (\S+);", text)]
    scores = set(re.findall(r"score (\S+)$", text, re.M))
    assert len(gaps) == 3 and max(gaps) < 1e-12 and len(scores) == 1
    from lib.positional import rope
    rng = np.random.default_rng(11)
    for d in (2, 8, 64):
        q, k = rng.normal(size=(2, d))
        for m, n, shift in ((3, 0, 100), (0, 5, 37), (40, 2, 1000)):
            assert rope(q, offset=m) @ rope(k, offset=n) == pytest.approx(
                rope(q, offset=m + shift) @ rope(k, offset=n + shift), abs=1e-9)
        assert abs(rope(q, offset=7) @ rope(k, offset=3) - rope(q, offset=3) @ rope(k, offset=7)) > 1e-6


def test_the_tables_turn_is_ropes_turn_read_cosine_first():
    """"written as (cos, sin), cosine first, a pair of the table turns the same way as (a, b) does
    here, anticlockwise; the clock draws the sine across, and so shows that same turn clockwise"."""
    from lib.positional import rope
    omega = 1.0
    for p, k in ((0, 1), (5, 3), (40, 7)):
        point = np.array([np.cos(p * omega), np.sin(p * omega)])
        np.testing.assert_allclose(rope(point, offset=k), [np.cos((p + k) * omega), np.sin((p + k) * omega)],
                                   atol=1e-12)
        before = np.array([np.sin(p * omega), np.cos(p * omega)])          # the clock: sine across
        after = np.array([np.sin((p + k) * omega), np.cos((p + k) * omega)])
        assert before[0] * after[1] - before[1] * after[0] == pytest.approx(-np.sin(k * omega))  # clockwise
    prose = _prose(notebook_cells())
    assert "written as (cos, sin), cosine first" in prose and "shows that same turn clockwise" in prose


def notebook_cells():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))


def test_the_tied_start_keeps_the_output_scores_small():
    """"small rows keep the output scores small": a stream of d numbers of size about 1 (as a norm
    leaves it) against rows of spread 1/sqrt(d) gives scores of spread about 1, against sqrt(d)
    for rows of spread 1."""
    rng = np.random.default_rng(4)
    d = 768
    stream = rng.normal(0, 1, (64, d))
    small, unit = rng.normal(0, 1 / np.sqrt(d), (2000, d)), rng.normal(0, 1, (2000, d))
    assert 0.9 < (stream @ small.T).std() < 1.1 and (stream @ unit.T).std() > 0.9 * np.sqrt(d)
    assert "there small rows\nkeep the output scores small" in _source(next(
        c for c in notebook_cells()["cells"] if _source(c).startswith("## Scale the word, then add")))


def test_the_pairings_are_named_with_the_code_that_uses_them(notebook):
    prose = _prose(notebook)
    assert "as GPT-NeoX and the Hugging Face code of LLaMA do; the RoFormer paper and Meta's own LLaMA code pair neighbours" in prose


# ---------------------------------------------------------------- the base

def test_what_the_base_does_is_printed_and_holds_beyond_the_labs_vectors(figures):
    lines = figures["rope-base"].strip().splitlines()
    rounds = [int(re.search(r"once round in\s+([\d,]+) positions", line).group(1).replace(",", "")) for line in lines]
    steps = [float(re.search(r"moves (\S+) per step", line).group(1)) for line in lines]
    assert [re.search(r"base\s+([\d,]+):", line).group(1) for line in lines] == ["100", "10,000", "100,000"]
    assert rounds[0] < rounds[1] < rounds[2]                   # a larger base: slower slow pairs
    assert steps[0] > steps[1]                                 # base 100: the curve moves more
    from labs.decoder.models import REAL_MODELS
    assert "RoPE base 100,000" in REAL_MODELS["SmolLM2-360M"].note
    from lib.positional import rope                            # on average over queries and keys too
    rng = np.random.default_rng(8)

    def mean_step(base, q, k):
        curve = [rope(q, base, offset=max(t, 0)) @ rope(k, base, offset=max(-t, 0)) for t in range(-31, 32)]
        return np.abs(np.diff(curve)).mean()
    draws = [rng.normal(size=(2, 32)) for _ in range(60)]
    assert np.mean([mean_step(100.0, q, k) for q, k in draws]) > 1.1 * np.mean([mean_step(1e4, q, k) for q, k in draws])


# ---------------------------------------------------------------- the exercises that need a decision

def test_the_replaced_exercises_are_retired_and_still_check_old_notebooks(notebook):
    from engine.core.registry import get_exercise
    from exercise_answers import try_template, try_variant
    for old_id, new_id in (("sinusoidal-table", "position-table"), ("rope-distance", "rope-signed-distance")):
        old, new = get_exercise(old_id), get_exercise(new_id)
        assert old.retired and not new.retired and old.name == new.name and old.notebook == STEM
        assert old_id not in [ex.id for ex in all_exercises()] and f'"{old_id}"' not in json.dumps(notebook)
        assert try_variant(old).passed and try_template(old).kind == "blank"
        assert not try_variant(old, old.mistakes[0].code).passed
    assert "10000.0 ** (" not in get_exercise("position-table").template       # the speeds are the learner's
    assert "____" in get_exercise("position-table").template.splitlines()[3]


def test_the_signed_distance_exercise_needs_both_sides_of_the_key():
    """At distance t and -t the scores differ, so an answer that mirrors one side fails."""
    from engine.core.registry import get_exercise
    ex = get_exercise("rope-signed-distance")
    example = next(c for c in ex.fixed_cases() if c.visible)
    scores = ex.reference(*example.args)
    n = example.args[2]
    assert scores.shape == (2 * n + 1,)
    assert not np.allclose(scores[:n], scores[n + 1:][::-1])
    from labs.positional.rotary import rope_model                     # the lab's right plot: t = -31 ... 31
    lab = rope_model()
    np.testing.assert_allclose(ex.reference(*example.args[:2], 31), lab.curve, atol=1e-12)


# ---------------------------------------------------------------- the skip-ahead set

def test_the_skip_ahead_set_covers_the_notebook_and_its_answers_are_computed():
    from exercises.definitions.questions.positional import SKIP_AHEAD
    from lib.positional import rope
    items = {q.id: q for q in SKIP_AHEAD}
    assert set(items) == {"pos-out-pooled", "pos-out-table-cell", "pos-out-word-share", "pos-out-rope-swap",
                          "pos-out-rope-pairs"}
    assert items["pos-out-table-cell"].answer == pytest.approx(np.cos(10 * 10000 ** (-2 / 6)))
    rng = np.random.default_rng(0)                     # the word's share, drawn as the prompt says
    words = rng.normal(0, 1 / 16, (2000, 256))
    share = (words ** 2).sum(1).mean() / ((words ** 2).sum(1).mean() + (sinusoidal(1, 256)[0] ** 2).sum())
    assert abs(share - items["pos-out-word-share"].answer) < items["pos-out-word-share"].tol
    for seed in range(10):                             # swapping the two positions changes the score
        q, k = np.random.default_rng(seed).normal(size=(2, 64))
        before, after = rope(q, offset=7) @ rope(k, offset=3), rope(q, offset=3) @ rope(k, offset=7)
        assert abs(before - after) > 1e-6 and abs(before + after) > 1e-6
    assert items["pos-out-rope-pairs"].answer == 64 // 2
    from lib.attention import attention                # the pooled average is the same for any weights
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x, *w = rng.normal(size=(3, 8)), *rng.normal(size=(4, 8, 8))
        order = [2, 1, 0]
        assert np.allclose(attention(x, *w, causal=False).mean(0), attention(x[order], *w, causal=False).mean(0))
    assert items["pos-out-pooled"].answer == 0


def test_no_skip_ahead_choice_is_more_detailed_than_the_others():
    from exercises.definitions.questions.positional import SKIP_AHEAD
    for q in SKIP_AHEAD:
        if q.kind == "predict":
            lengths = [len(c) for c in q.choices]
            assert max(lengths) < 1.35 * min(lengths), (q.id, lengths)
            assert len(q.choices[q.answer]) < max(lengths) or lengths.count(max(lengths)) > 1, q.id


def test_the_wording_says_exactly_what_holds(notebook):
    """Attention averages value vectors; a text without positions is a bag of words (a repeated
    word counts); a shuffle under the mask moves some bars, not all (car's stays in dog cat car);
    the table may be built once or row by row; the shift property was a hope; rotary positions add
    nothing to the words; R(t) multiplies a column from the left."""
    prose = _prose(notebook)
    for said in ("weighted average of the value vectors of the words", "as a *bag* of words",
                 "some bars now rise even without positions", "A model need not build a table",
                 "It was a hope, not a measured result", "reported that learned position vectors gave nearly",
                 "Most models still give the words their positions, added to the words or, as rotary positions do",
                 "here multiplying the pair as a column from the left", "a fixed penalty that grows with it, or a learned one",
                 "For the lab's three words, the larger the factor", "gives no reason for the factor"):
        assert said in prose, said
    for unsaid in ("as a *set* of words", "Most models still add positions", "were chosen for",
                   "the more slowly every later pair turns"):
        assert unsaid not in prose, unsaid
    from lib.attention import attention
    rng = np.random.default_rng(3)
    words, weights = rng.normal(size=(3, 4)), rng.normal(0, 0.3, size=(4, 4, 4))
    twice = np.vstack([words, words[:1]])                             # cat dog car cat: the bag counts cat twice
    assert not np.allclose(attention(twice, *weights, causal=False)[0], attention(words, *weights, causal=False)[0])
    order = [1, 0, 2]                                                  # dog cat car, masked: car's output stays
    after = attention(words[order], *weights, causal=True)[np.argsort(order)]
    before = attention(words, *weights, causal=True)
    assert np.allclose(after[2], before[2]) and not np.allclose(after[:2], before[:2])
