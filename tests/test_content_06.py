"""Notebook 06: the figures as the notebook prints them, every sentence of its prose and every
question's answer that states a quantity or a direction checked by running what it names."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from engine.core.registry import get_question
from lib import generate, model
from lib.circuits import head_scores, keys_without
from lib.train import LiveTraining
from lib.training_record import record
from labs.block_at_work.live_training import WINDOW, live_training_model
from labs.block_at_work.logit_lens import TEXTS, lens_model
from labs.block_at_work import training_scrub
from labs.block_at_work.training_scrub import named_heads

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "06_block_at_work.ipynb"
FIGURES = {"greedy", "sampling-draws", "cache-match", "decoding-work", "cache-bytes", "named-heads",
           "k-composition", "lens-numbers", "norm-placement"}


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
    header, *lines = figures["greedy"].strip().splitlines()
    assert header.split() == ["token", "probability"]
    rows = [line.split() for line in lines]
    out = generate.greedy(model.encode("copy b d a |"), 6, stop=".")
    assert [r[0] for r in rows] == [model.vocab()[i] for i in out.ids] == ["b", "d", "a", "."]
    np.testing.assert_allclose([float(r[1]) for r in rows], out.probabilities, atol=5e-5)
    assert min(out.probabilities) > 0.99


def test_sampling_changes_the_sentence_and_not_the_copy(figures, prose):
    question = get_question("work-predict-sampling")
    assert question.choices[question.answer].startswith("the copy comes out the same")
    copy, cat = figures["sampling-draws"].strip().splitlines()
    assert copy.startswith("'copy b d a |': 1 continuation in 10 draws")
    kinds = int(re.search(r": (\d+) different", cat).group(1))
    assert kinds > 1
    draws = {model.decode(generate.generate(model.encode("the big cat"), 10, temperature=1.0, seed=s, stop=".").ids)
             for s in range(10)}
    assert len(draws) == kinds
    assert "each of its tokens has probability above 0.99" in prose


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
    table, sums = figures["decoding-work"].strip().split("\n\n")
    rows = [line.replace(",", "").split() for line in table.splitlines()[1:]]
    for n, cached, attention, rerun, ratio in ([int(x) for x in row] for row in rows):
        work = generate.decoding_work(n)
        assert (cached, attention, rerun) == (work.total, work.attention, generate.decoding_work(n, cached=False).total)
        assert rerun == n * cached and ratio == n
        assert attention == n * generate.decoding_work(1).attention
        assert cached - attention == generate.decoding_work(1).total - generate.decoding_work(1).attention
    one = generate.decoding_work(1)
    fixed, per_token = (int(x) for x in re.findall(r"[\d,]{3,}", sums.splitlines()[0].replace(",", "")))
    assert (fixed, per_token) == (one.total - one.attention, one.attention)
    assert "only attention grows, in proportion to n" in prose
    assert "costs exactly n times the cached step" in prose


def test_over_a_text_cached_attention_still_grows_with_the_square_of_its_length(figures, prose):
    *_, growth_line, line = figures["decoding-work"].strip().replace(",", "").splitlines()
    *lengths_and_work, ratio = re.findall(r"\d+(?:\.\d+)?", growth_line)
    per_token_attention = generate.decoding_work(1).attention
    for length, work in zip(lengths_and_work[::2], lengths_and_work[1::2]):
        assert int(work) == per_token_attention * int(length) * (int(length) + 1) // 2
    assert 3.9 < float(ratio) < 4.0 and "twice the length, close to four times the work" in prose
    n, with_cache, attention, share, rerun = (int(x) for x in re.findall(r"\d+", line))
    per_token = generate.decoding_work(1).attention
    assert attention == per_token * n * (n + 1) // 2                     # the square of the length, halved
    assert with_cache == sum(generate.decoding_work(k).total for k in range(1, n + 1))
    assert rerun == sum(generate.decoding_work(k, cached=False).total for k in range(1, n + 1)) > with_cache
    assert share == round(100 * attention / with_cache)
    for k in (2, 16, 64):                                                 # the rerun counts the masked half and
        rerun_k = generate.decoding_work(k, cached=False)                 # every position's logits
        assert rerun_k.attention == k * k * per_token
        assert rerun_k.output == k * generate.decoding_work(k).output
    assert "its attention work grows with the square of the length" in prose
    assert "all n × n scores, the masked half too, and logits at every position" in prose
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
    assert f"previous-token head: block 1, head 4, its score passes 0.3 at step {heads['previous_from']}" in text
    assert f"induction head:      block 2, head 2, its score passes 0.25 at step {heads['induction_from']}" in text
    assert f"copy accuracy passes 0.5 at step {heads['copy_from']}, before the induction score passes 0.25" in text
    r = record()
    assert text.strip().split("\n\n")[2] == (f"after the table the induction score goes on rising: "
                                             f"{heads['induction_curve'][-1]:.2f} at step {r.steps[-1]}, the last checkpoint")
    assert heads["induction_curve"][-1] > heads["induction_curve"][np.flatnonzero(r.steps <= heads["induction_from"] + 150)].max()
    thresholds = (training_scrub.PREVIOUS_FROM, training_scrub.INDUCTION_FROM, training_scrub.COPY_FROM)
    assert thresholds == (0.3, 0.25, 0.5)


def test_copying_passes_its_threshold_before_the_induction_head_and_both_move_together(figures, prose):
    heads, r = named_heads(), record()
    assert heads["copy_from"] < heads["induction_from"]
    assert "With these thresholds copying passes 0.5 before the induction head passes 0.25" in prose
    table = figures["named-heads"].strip().split("\n\n")[1].splitlines()[1:]
    copy = r.kinds.index("copy")
    steps = [int(row.split()[0]) for row in table]
    assert heads["copy_from"] in steps and heads["induction_from"] in steps
    for row in table:
        step, previous, induction, accuracy, loss = row.split()
        i = int(np.flatnonzero(r.steps == int(step))[0])
        np.testing.assert_allclose([float(previous), float(induction), float(accuracy), float(loss)],
                                   [heads["previous_curve"][i], heads["induction_curve"][i], r.accuracy[i, copy],
                                    r.loss[i, copy]], atol=0.006)
    # over the checkpoints between the two starts the copy accuracy, the copy loss and the induction score all move
    a, b = (int(np.flatnonzero(r.steps == s)[0]) for s in (heads["copy_from"], heads["induction_from"]))
    assert heads["induction_curve"][b] > 2 * heads["induction_curve"][a]
    assert r.accuracy[b, copy] > r.accuracy[a, copy] + 0.2 and r.loss[b, copy] < r.loss[a, copy] / 2


def test_without_the_previous_token_head_the_induction_score_falls_most_of_the_way_to_an_even_spread(figures, prose):
    lines = figures["k-composition"].strip().splitlines()
    probes = (model.encode("copy b d a e | b d a e ."), *record().probes)
    assert len(lines) == len(probes) == 3
    for line, probe in zip(lines, probes):
        assert line.startswith(repr(model.decode(probe)))
        intact, without, even = (float(x) for x in re.findall(r"\d\.\d\d", line.split(": ", 1)[1]))
        assert intact == pytest.approx(keys_without(probe, None, (1, 1)).induction.item(), abs=0.005)
        assert without == pytest.approx(keys_without(probe, (0, 3), (1, 1)).induction.item(), abs=0.005)
        n = len(probe)
        spread = head_scores(np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None], probe).induction
        assert even == pytest.approx(spread, abs=0.005)
        assert intact - without > without - even > 0                     # most of the way, not all of it
    assert "the score falls most of the way towards the even spread's" in prose
    assert "It does not reach it" in prose


def test_block_2_first_makes_the_copy_answerable_as_the_question_says():
    question = get_question("work-predict-lens")
    assert question.choices[question.answer] == f"after block {lens_model('copy').block}"
    assert "Block 2 holds the induction head" in question.explanation and named_heads()["induction"][0] == 1


def test_the_lens_numbers_are_the_labs_and_the_embedding_names_the_current_token(figures, prose):
    table, last = figures["lens-numbers"].strip().split("\n\n")
    for row, name in zip(table.splitlines()[1:], TEXTS, strict=True):
        m = lens_model(name)
        numbers = [float(x) for x in row.split()[1:1 + len(m.mean)]]
        np.testing.assert_allclose(numbers, m.mean, atol=5e-4)
        where = "the embedding" if m.block == 0 else f"block {m.block}" if m.block else "none"
        assert row.endswith(f"first at least {m.threshold}: {where}")
    assert lens_model("copy").threshold == 0.5 and "the first stream that makes it at least 0.5" in prose
    ids = model.encode(TEXTS["copy"][0])
    read = model.probabilities(model.output_logits(model.embed(ids)).astype(np.float64))
    assert model.config().tied and (read.argmax(axis=-1) == ids).all()
    assert "names the current token at 100% of the positions" in last
    assert f"mean probability {read[np.arange(len(ids)), ids].mean():.2f}" in last
    assert "the lens names the token itself, not the next one" in prose


def test_the_tiny_models_task_is_the_one_the_prose_describes(prose):
    run = LiveTraining()
    assert len(run.blocks) == 2 and run.task.table.shape == (8, 16) and run.task.positions.shape == (8, 16)
    assert all(block.heads == 1 and block.Wq.shape == (16, 16) for block in run.blocks)
    assert ("two blocks of one head, 16 numbers per token. A text is 8 tokens, each one of 8 random vectors"
            in prose)


def test_a_short_run_of_each_placement_prints_falling_losses_pre_norm_lower(figures, prose):
    pre_line, post_line, baseline_line = figures["norm-placement"].strip().splitlines()
    for line, placement in ((pre_line, "pre"), (post_line, "post")):
        run = live_training_model(placement, 0.01, False, steps=100)
        assert line == (f"{placement}-norm, 100 steps: mean loss {run.first:.3f} over the first {WINDOW}, "
                        f"{run.now:.3f} over the last {WINDOW}")
        assert run.now < run.first
    pre, post = (live_training_model(p, 0.01, False, steps=100) for p in ("pre", "post"))
    assert pre.now < post.now and "here pre-norm ends lower" in prose
    assert baseline_line == f"outputting each token's own vector: {pre.baseline:.3f}"


def test_pre_norm_ends_lower_than_post_norm_as_the_question_says():
    question = get_question("work-predict-placement")
    pre, post = live_training_model("pre", 0.01, False), live_training_model("post", 0.01, False)
    assert question.choices[question.answer] == "pre-norm" and pre.now < post.now
