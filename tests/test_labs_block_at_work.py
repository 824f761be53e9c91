"""The labs of notebook 06 (labs/block_at_work/): each model's numbers against lib/, and each view
driven over its controls, redrawn in place."""

import asyncio
import threading

import numpy as np
import pytest

from lib import generate, model
from lib.train import LiveTraining, current_token_loss
from lib.training_record import maps_at, record
from labs.block_at_work.generation import PROMPTS, STEPS, GenerationLab, generation_model
from labs.block_at_work.live_training import (MAX_STEPS, STEPS_PER_FRAME, WARMUP, WINDOW, LiveTrainingLab,
                                              live_training_model, training_summary)
from labs.block_at_work.logit_lens import ANSWERABLE, TEXTS, LensLab, lens_model
from labs.block_at_work.training_scrub import ScrubLab, named_heads, scrub_model


# ---------------------------------------------------------------- generation

def test_greedy_copies_the_letters_with_the_models_own_probabilities():
    m = generation_model("copy b d a |")
    assert m.words == ["b", "d", "a", "."]
    text = np.concatenate([model.encode("copy b d a |"), m.ids[:-1]])
    p = model.probabilities(model.forward(text).astype(np.float64))[-len(m.ids):]
    np.testing.assert_allclose(m.probabilities, p[np.arange(len(m.ids)), m.ids], rtol=1e-5)
    np.testing.assert_array_equal(m.chosen_from, 1.0)
    assert (m.kept == 1).all()
    assert m.joint == pytest.approx(np.prod(m.probabilities))


def test_sampling_follows_its_settings():
    greedy = generation_model("the big cat")
    assert generation_model("the big cat", 1.5, 1, 1.0, 4).words == greedy.words      # top-1 is greedy
    drawn = [tuple(generation_model("the big cat", 1.0, 0, 1.0, seed).words) for seed in range(10)]
    assert len(set(drawn)) > 1
    assert generation_model("the big cat", 1.0, 0, 1.0, 3).words == list(drawn[3])          # seeded
    five = generation_model("the big cat", 2.0, 5, 1.0, 1)
    assert (five.kept <= 5).all() and (five.chosen_from >= five.probabilities - 1e-12).any()
    narrow = generation_model("the big cat", 1.0, 0, 0.3, 2)
    wide = generation_model("the big cat", 1.0, 0, 1.0, 2)
    assert narrow.kept.max() <= wide.kept.min() or narrow.kept.sum() < wide.kept.sum()
    for m in (greedy, five, narrow):
        assert len(m.words) <= STEPS and np.isfinite(m.probabilities).all()


def test_generation_is_sensible_at_any_setting():
    for args in (("no such prompt",), (PROMPTS[2], float("nan")), (PROMPTS[3], 5.0, 55, 0.05, 9),
                 (PROMPTS[4], float("inf"), -3, float("nan"))):
        m = generation_model(*args)
        assert m.words and m.verdict and "nan" not in m.verdict.lower()


def test_the_generation_view_redraws_in_place_over_every_control():
    lab = GenerationLab()
    fig, image = lab.view.figure, lab.view.image
    for control, values in ((lab.prompt, PROMPTS), (lab.temperature, (2.0, 0.0, 1.0)),
                            (lab.top_k, [v for _l, v in lab.top_k.options]), (lab.top_p, (0.1, 1.0)),
                            (lab.seed, (9, 0))):
        for value in values:
            control.value = value
            assert lab.view.figure is fig and lab.view.image is image
            assert lab.model == generation_model(lab.prompt.value, lab.temperature.value, lab.top_k.value,
                                                 lab.top_p.value, lab.seed.value)
            assert [t.get_text() for t in lab.words[:len(lab.model.words)]] == lab.model.words
            assert lab.model.verdict.split(".")[0] in lab.verdict.value.replace("&#x27;", "'")


# ---------------------------------------------------------------- the training record

def test_the_named_heads_are_the_records_previous_token_and_induction_heads():
    heads = named_heads()
    assert heads["previous"] == (0, 3) and heads["induction"] == (1, 1)
    assert heads["previous_from"] < heads["copy_from"] <= heads["induction_from"]
    assert 850 <= heads["induction_from"] <= 1000


def test_the_scrub_model_reads_the_record_at_every_checkpoint():
    r = record()
    for index, step in enumerate(r.steps):
        for probe in range(len(r.probes)):
            m = scrub_model(int(step), probe)
            assert m.step == step and m.index == index
            assert m.copy_accuracy == r.accuracy[index, r.kinds.index("copy")]
            assert m.previous_score == r.previous[index, probe, 0, 3]
            assert m.induction_score == r.induction[index, probe, 1, 1]
            assert m.maps_step <= step and m.maps_step in r.map_steps
            np.testing.assert_array_equal(m.induction_map, maps_at(m.maps_step)[probe, 1, 1])
    assert scrub_model(10_000, 7).step == r.steps[-1] and scrub_model(-5, -1).step == 0


def test_the_scrub_view_moves_its_cursors_and_maps_in_place():
    lab = ScrubLab()
    fig, image = lab.view.figure, lab.view.image
    for step in (record().steps[-1], 950, 0):
        for probe in (1, 0):
            lab.step.value, lab.probe.value = int(step), probe
            assert lab.view.figure is fig and lab.view.image is image
            assert lab.cursors[0].get_xdata()[0] == step
            np.testing.assert_array_equal(np.asarray(lab.ind_mesh.get_array()).ravel(),
                                          lab.model.induction_map.ravel())
            assert f"Step {step}:" in lab.verdict.value


# ---------------------------------------------------------------- the logit lens

def test_the_last_stream_through_the_lens_is_the_models_output():
    for text in TEXTS:
        m = lens_model(text)
        ids = m.ids
        p = model.probabilities(model.forward(ids).astype(np.float64))[m.rows, ids[m.rows + 1]]
        np.testing.assert_allclose(m.p[-1], p, rtol=1e-5, atol=1e-7)
        assert m.p.shape == (model.config().layers + 1, len(m.rows))
        first = np.flatnonzero(m.mean >= ANSWERABLE)
        assert m.block == (int(first[0]) if first.size else None)


def test_block_2_first_makes_the_copy_answerable():
    m = lens_model("copy")
    assert m.block == 2 and m.mean[1] < ANSWERABLE <= m.mean[2]
    assert lens_model("no such text").text == "copy"


def test_the_lens_view_redraws_in_place_for_every_text():
    lab = LensLab()
    fig = lab.view.figure
    for text in [*TEXTS, "copy"]:
        lab.text.value = text
        assert lab.view.figure is fig and lab.model.text == text
        shown = np.ma.filled(lab.mesh.get_array(), np.nan).reshape(len(lab.model.p), -1)
        np.testing.assert_allclose(shown[:, :lab.model.p.shape[1]], lab.model.p)
        assert np.isnan(shown[:, lab.model.p.shape[1]:]).all()


# ---------------------------------------------------------------- live training

def test_the_whole_run_is_lib_trains_run():
    m = live_training_model("post", 0.03, True, steps=40)
    run = LiveTraining(placement="post", lr=0.03, warmup=WARMUP)
    np.testing.assert_array_equal(m.losses, run.advance(40))
    assert m.now == pytest.approx(np.mean(m.losses[-WINDOW:]))
    assert m.baseline == pytest.approx(current_token_loss(run.task))


def test_the_summary_is_sensible_before_any_step_and_after_a_divergence():
    assert "no step yet" in training_summary([], 0.76).verdict
    m = training_summary([0.5, float("nan")], 0.76)
    assert m.diverged and "diverged" in m.verdict


def where_no_loop_runs(function):
    """Run ``function`` in a thread of its own and return what it returns: in this test process a
    browser test may keep an event loop running in the main thread (Playwright's), and the lab
    plays its frames in whatever loop runs, so the lab's two ways are each tested where they apply."""
    out, errors = [], []

    def target():
        try:
            out.append(function())
        except BaseException as error:  # noqa: BLE001 - raised again in the test's own thread
            errors.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(300)
    if errors:
        raise errors[0]
    assert out, "the run did not finish within 300 s"
    return out[0]


def test_the_live_view_trains_a_few_steps_a_frame_and_keeps_the_run_before():
    where_no_loop_runs(_trains_a_few_steps_a_frame_and_keeps_the_run_before)


def _trains_a_few_steps_a_frame_and_keeps_the_run_before():
    lab = LiveTrainingLab()
    fig = lab.view.figure
    assert lab.model.steps == 0
    lab.frame()
    assert lab.model.steps == STEPS_PER_FRAME and len(lab.line.get_xdata()) == STEPS_PER_FRAME
    lab.toggle()                            # no event loop here: the rest of the run at once
    assert lab.model.steps == MAX_STEPS and not lab.running and lab.start.description == "start"
    assert lab.model.now < lab.model.baseline and lab.model.steps_per_second > 0
    lab.placement.value = "post"            # a new run; the last one stays to compare
    assert lab.model.steps == 0 and len(lab.before.get_xdata()) == MAX_STEPS and lab.view.figure is fig
    assert "post-norm" in lab.verdict.value
    lab.lr.value, lab.warmup.value = 0.1, True
    assert lab.run.lr == 0.1 and lab.run.warmup == WARMUP


def test_the_live_view_plays_in_an_event_loop_and_stops_on_a_second_press():
    async def play():
        lab = LiveTrainingLab()
        lab.toggle()
        assert lab.running and lab.start.description == "stop"
        while lab.model.steps < 4 * STEPS_PER_FRAME:
            await asyncio.sleep(0)
        lab.toggle()                        # stop
        await lab.task
        stopped = lab.model.steps
        await asyncio.sleep(0)
        assert lab.model.steps == stopped < MAX_STEPS and lab.start.description == "start"
        lab.toggle()                        # and on from there
        await lab.task
        return lab.model.steps

    assert where_no_loop_runs(lambda: asyncio.run(play())) == MAX_STEPS
