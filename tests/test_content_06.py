"""Notebook 06: the figures as the notebook prints them, every sentence of its prose and every
question's answer that states a quantity or a direction checked by running what it names."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from engine.core.registry import get_question
from lib import generate, model
from lib.circuits import keys_without
from labs.block_at_work.live_training import live_training_model
from labs.block_at_work.logit_lens import lens_model
from labs.block_at_work import training_scrub
from labs.block_at_work.training_scrub import named_heads

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "06_block_at_work.ipynb"
FIGURES = {"greedy", "sampling-draws", "cache-match", "decoding-work", "cache-bytes", "named-heads"}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


@pytest.fixture(scope="module")
def prose():
    cells = json.loads((ROOT / "content" / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    return " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures) and all(figures[name].strip() for name in FIGURES)


def test_the_greedy_copy_prints_each_letter_with_its_probability(figures):
    rows = [line.split() for line in figures["greedy"].strip().splitlines()]
    out = generate.greedy(model.encode("copy b d a |"), 6, stop=".")
    assert [r[0] for r in rows] == [model.vocab()[i] for i in out.ids] == ["b", "d", "a", "."]
    np.testing.assert_allclose([float(r[1]) for r in rows], out.probabilities, atol=5e-5)


def test_sampling_changes_the_sentence_and_not_the_copy(figures):
    question = get_question("work-predict-sampling")
    assert question.choices[question.answer].startswith("the copy comes out the same")
    copy, cat = figures["sampling-draws"].strip().splitlines()
    assert copy.startswith("'copy b d a |': 1 continuation in 10 draws")
    kinds = int(re.search(r": (\d+) different", cat).group(1))
    assert kinds > 1
    draws = {model.decode(generate.generate(model.encode("the big cat"), 10, temperature=1.0, seed=s, stop=".").ids)
             for s in range(10)}
    assert len(draws) == kinds


def test_cached_decoding_gives_the_logits_of_a_full_rerun(figures):
    line = figures["cache-match"]
    difference = float(re.search(r"logits ([\d.e+-]+),", line).group(1))
    assert difference < 1e-4
    for text in ("copy b d a e | b d a e .", "count 3 4 5 6 7 . the big cats chase the dog ."):
        ids = model.encode(text)
        caches = generate.new_caches()
        first = generate.cached_forward(ids[:3], caches)                   # a prompt, then one token at a time
        rest = [generate.cached_forward([token], caches) for token in ids[3:]]
        np.testing.assert_allclose(np.concatenate([first, *rest]), model.forward(ids), atol=1e-4, rtol=0)


def test_with_a_cache_only_attention_grows_and_a_rerun_costs_n_cached_steps(figures, prose):
    rows = [line.replace(",", "").split() for line in figures["decoding-work"].strip().splitlines()[1:]]
    for n, cached, attention, rerun, ratio in ([int(x) for x in row] for row in rows):
        work = generate.decoding_work(n)
        assert (cached, attention, rerun) == (work.total, work.attention, generate.decoding_work(n, cached=False).total)
        assert rerun == n * cached and ratio == n
        assert attention == n * generate.decoding_work(1).attention
        assert cached - attention == generate.decoding_work(1).total - generate.decoding_work(1).attention
    assert "only the attention column grows with n, in proportion to it" in prose
    assert "exactly n times the cached step" in prose
    question = get_question("work-predict-cache-work")
    assert "fixed part, plus a part in proportion to n" in question.choices[question.answer]


def test_the_caches_bytes_are_the_memory_tables_formula(figures):
    text = figures["cache-bytes"].replace(",", "")
    formula, measured = (int(x) for x in re.findall(r"(\d+) bytes", text))
    assert formula == measured == generate.kv_cache_bytes(model.config().context)


def test_the_heads_form_in_the_order_the_question_gives(figures, prose):
    heads = named_heads()
    question = get_question("work-predict-heads-order")
    assert question.choices[question.answer].startswith("the previous-token head, long before")
    assert heads["previous_from"] < heads["induction_from"]
    text = figures["named-heads"]
    assert f"previous-token head: block 1, head 4, from step {heads['previous_from']}" in text
    assert f"induction head:      block 2, head 2, from step {heads['induction_from']}" in text
    thresholds = (training_scrub.PREVIOUS_FROM, training_scrub.INDUCTION_FROM, training_scrub.COPY_FROM)
    assert thresholds == (0.3, 0.25, 0.5)
    assert ("the previous-token score passing 0.3, the induction score passing 0.25, the copy accuracy 0.5"
            in prose)


def test_without_the_previous_token_head_the_induction_pattern_falls_apart(figures):
    intact, without = (float(x) for x in re.findall(r": (\d\.\d\d)", figures["named-heads"]))
    probe = model.encode("copy b d a e | b d a e .")
    assert intact == pytest.approx(keys_without(probe, None, (1, 1)).induction.item(), abs=0.005)
    assert without == pytest.approx(keys_without(probe, (0, 3), (1, 1)).induction.item(), abs=0.005)
    assert without < intact / 2


def test_block_2_first_makes_the_copy_answerable_as_the_question_says():
    question = get_question("work-predict-lens")
    assert question.choices[question.answer] == f"after block {lens_model('copy')['block']}"
    assert "Block 2 holds the induction head" in question.explanation and named_heads()["induction"][0] == 1


def test_pre_norm_ends_lower_than_post_norm_as_the_question_says():
    question = get_question("work-predict-placement")
    pre, post = live_training_model("pre", 0.01, False), live_training_model("post", 0.01, False)
    assert question.choices[question.answer] == "pre-norm" and pre["now"] < post["now"]
