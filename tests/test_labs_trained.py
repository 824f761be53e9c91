"""The labs of notebook 05 (models against lib.model, views driven over every control)."""

import itertools
import warnings

import numpy as np
import pytest

from labs.trained.ablation import AblationLab, ablation_model
from labs.trained.heads import heads_model
from labs.trained.held_out import GROUPS, held_out
from labs.trained.mismatch import BASE_MAX, BASE_MIN, EPS_MAX, EPS_MIN, GAP_FLOOR, MismatchLab, mismatch_model
from labs.trained.stream import TrainedStreamLab, stream_model
from lib import model
from engine.presentation.numbers import amount


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.fixture(scope="module")
def ids():
    return model.heldout().ids


def _pooled(**forward):
    """Perplexity per kind over all 8 held-out texts, computed here with lib.model alone."""
    names = model.info()["kinds"]
    losses, kinds = [], []
    for text in model.heldout_texts():
        losses.append(model.token_losses(model.forward(text.ids, **forward), text.ids))
        kinds += [names[k] for k in text.kinds[1:]]
    losses, kinds = np.concatenate(losses), np.array(kinds)
    groups = {"verbs": ["verb"], "counting": ["count"], "copy": ["copy"], "reverse": ["reverse"],
              "sums and differences": ["sum", "difference"]}
    out = {label: float(np.exp(losses[np.isin(kinds, members)].mean())) for label, members in groups.items()}
    out["all texts"] = float(np.exp(losses.mean()))
    counts = {label: int(np.isin(kinds, members).sum()) for label, members in groups.items()}
    return out, counts


# ---------------------------------------------------------------- held-out texts

def test_the_perplexities_pool_all_eight_texts_and_sums_go_with_differences():
    from labs.trained.held_out import counts, pooled_losses
    assert len(model.heldout_texts()) == 8
    assert len(pooled_losses()) == 8 * 255
    expected, n = _pooled()
    assert set(counts()) == {label for label, _k in GROUPS} == set(expected)
    assert counts()["all texts"] == 8 * 255
    for label, number in n.items():
        assert counts()[label] == number and number >= 30, label      # every bar rests on 30 or more
    m = ablation_model()
    assert {k: m.full[k] for k in expected} == pytest.approx(expected)
    lab = AblationLab()
    ticks = [t.get_text() for t in lab.view.figure.axes[0].get_xticklabels()] + \
        [t.get_text() for ax in lab.view.figure.axes for t in ax.get_xticklabels()]
    for label, number in counts().items():
        assert f"{label.replace('sums and differences', 'sums+diff')} ({number:,})" in ticks
    quiet = mismatch_model(base=20_000.0)
    assert quiet.now["all texts"] == pytest.approx(_pooled(base=20_000.0)[0]["all texts"])
    ids = model.heldout().ids
    first = model.forward(ids, base=20_000.0).argmax(-1) == model.forward(ids).argmax(-1)
    assert quiet.agree == pytest.approx(first.mean())
    assert (f"over the 8 held-out texts; on the first, the top word agrees at {quiet.agree:.0%} of "
            "positions") in quiet.verdict


def test_each_block_runs_once_per_text_for_the_whole_model_and_every_setting_that_leaves_blocks_out(monkeypatch):
    """The whole model's streams are kept per text, and a setting that leaves blocks out starts
    from the stream before the first one it leaves out: no block runs twice on the same input.
    The losses are those of plain forward passes."""
    from labs.trained import held_out as shared

    for cached in (shared._whole_streams, shared.run, shared.pooled_losses):
        cached.cache_clear()
    calls = []
    block = model.block
    monkeypatch.setattr(model, "block", lambda x, weights, **options: calls.append(1) or block(x, weights, **options))
    losses = {skip: shared.pooled_losses(skip) for skip in ((), (0,), (2,), (1, 3))}
    monkeypatch.undo()
    # the whole model 4 blocks per text; without block 1, blocks 2-4; without block 3, block 4;
    # without blocks 2 and 4, block 3
    assert len(calls) == len(shared.texts()) * (4 + 3 + 1 + 1)
    for skip, found in losses.items():
        assert np.array_equal(found, np.concatenate([model.token_losses(model.forward(t.ids, skip=skip), t.ids)
                                                     for t in shared.texts()])), skip


# ---------------------------------------------------------------- ablation model

def test_ablation_model_whole_model_against_lib(ids):
    m = ablation_model()
    assert m.skip == () and m.positions
    assert m.full["all texts"] == pytest.approx(_pooled()[0]["all texts"])
    assert m.full["all texts"] != pytest.approx(model.perplexity(model.forward(ids), ids))
    assert m.now == m.full
    assert "Leave something out" in m.verdict
    assert set(m.full) == {label for label, _k in GROUPS} | {"whole text", "sums", "differences"}
    assert m.full["whole text"] == m.full["all texts"]


def test_ablation_model_against_lib(ids):
    m = ablation_model((False, True, True, True))
    expected, _n = _pooled(skip={0})
    assert {k: m.now[k] for k in expected} == pytest.approx(expected)
    assert m.skip == (0,)
    assert "Without block 1" in m.verdict and amount(expected["all texts"]) in m.verdict


def test_ablation_watched_prediction(ids):
    watched = held_out()[2]
    for watch in (0, len(watched) // 2, len(watched) - 1, -5, 10 ** 6):
        m = ablation_model(watch=watch)
        position = m.position
        probs = model.probabilities(model.forward(ids))[position]
        assert m.right == ids[position + 1]
        assert m.right_full == pytest.approx(probs[m.right])
        assert m.top[0] == int(np.argmax(probs))
        assert m.kind not in ("free", "grammar", "end")
    assert ablation_model(watch=10 ** 6).watch == len(watched) - 1


def test_every_ablation_setting_runs():
    for keep in itertools.product((True, False), repeat=4):
        for positions in (True, False):
            m = ablation_model(keep, positions, watch=3)
            assert np.isfinite(m.now["all texts"]) and m.verdict
            if not all(keep) or not positions:
                assert "Without" in m.verdict
    m = ablation_model((False,) * 4, False)
    assert "block 1 and block 2 and block 3 and block 4 and the positions" in m.verdict


def test_leaving_out_the_first_block_hurts_most():
    ppl = [ablation_model(tuple(j != i for j in range(4))).now["all texts"] for i in range(4)]
    assert int(np.argmax(ppl)) == 0


# ---------------------------------------------------------------- mismatch model

def test_mismatch_model_as_trained():
    m = mismatch_model()
    assert m.status == "trained" and m.ratio == pytest.approx(1.0) and m.agree == 1.0
    assert m.largest == 0.0


@pytest.mark.parametrize("change,status", [({"pairing": "neighbours"}, "loud"),
                                           ({"positions": False}, "loud"),
                                           ({"base": 100_000.0}, "quiet")])
def test_mismatch_loud_and_quiet(ids, change, status):
    m = mismatch_model(**change)
    assert m.status == status, m.verdict
    logits = model.forward(ids, **change)
    assert m.now["all texts"] == pytest.approx(_pooled(**change)[0]["all texts"])
    assert m.largest == pytest.approx(np.abs(logits - model.forward(ids)).max())
    assert m.verdict.lower().startswith(status)


def test_mismatch_quiet_verdict_says_a_reference_comparison_catches_it_when_it_does():
    from labs.trained.mismatch import REFERENCE_TOLERANCE
    quiet = [m for m in (mismatch_model(base=b) for b in (20_000.0, 100_000.0)) if m.status == "quiet"]
    assert quiet
    for m in quiet:
        assert m.largest > REFERENCE_TOLERANCE
        assert "a comparison with reference outputs catches it (it allows 0.0001 on a logit)" in m.verdict
        assert "only a comparison" not in m.verdict and "would catch" not in m.verdict


def test_mismatch_quiet_verdict_says_a_change_within_the_tolerance_would_be_missed(monkeypatch):
    from labs.trained import mismatch
    monkeypatch.setattr(mismatch, "REFERENCE_TOLERANCE", 50.0)
    m = mismatch_model(base=20_000.0)
    assert m.status == "quiet" and m.largest < 50.0
    assert "even a comparison with reference outputs would miss it (it allows 50 on a logit)" in m.verdict


def test_mismatch_verdict_names_the_change():
    assert "LayerNorm" in mismatch_model(norm="layer").verdict
    assert "1e-03" in mismatch_model(eps=1e-3).verdict
    assert "100,000" in mismatch_model(base=1e5).verdict
    assert "no RoPE" in mismatch_model(positions=False, pairing="neighbours").verdict


def test_every_mismatch_setting_runs():
    for pairing, norm, positions, base, eps in itertools.product(
            ("halves", "neighbours", "nonsense"), ("rms", "layer", "batch"), (True, False),
            (BASE_MIN, BASE_MAX, 1e12, np.nan), (EPS_MIN, EPS_MAX, 0.0, np.inf)):
        m = mismatch_model(pairing, base, positions, norm, eps)
        assert m.verdict and m.status in ("trained", "loud", "noticeable", "quiet")
        assert BASE_MIN <= m.base <= BASE_MAX and EPS_MIN <= m.eps <= EPS_MAX


# ---------------------------------------------------------------- stream model

def test_stream_model_against_the_trace(ids):
    t = model.forward(ids, trace=True)
    m = stream_model(7)
    assert np.allclose(m.attention, np.sqrt((t.attention_adds[:, 7] ** 2).mean(-1)))
    assert np.allclose(m.ffn, np.sqrt((t.ffn_adds[:, 7] ** 2).mean(-1)))
    assert np.allclose(m.stream, np.sqrt((t.streams[:, 7] ** 2).mean(-1)))
    assert m.largest == pytest.approx(np.abs(t.streams[:, 7]).max())
    average = stream_model(-1)
    assert np.allclose(average.stream, np.sqrt((t.streams ** 2).mean(-1)).mean(-1))
    assert "65,504" in average.verdict and "on average" in average.verdict
    assert stream_model(10 ** 6).position == len(ids) - 1
    assert stream_model(-50).position == -1


# ---------------------------------------------------------------- views

def _redrawn(lab, before_figure, before_renders):
    assert lab.view.figure is before_figure
    assert lab.view.renders > before_renders


def test_ablation_view_every_control():
    lab = AblationLab()
    figure, verdicts = lab.view.figure, set()
    assert {"course-lab", "course-lab-ablation"} <= set(lab.root._dom_classes)
    assert lab.model.kind == "reverse"                    # starts on a reversed letter
    for value in (lab.watch.max, lab.watch.min):
        renders = lab.view.renders
        lab.watch.value = value
        _redrawn(lab, figure, renders)
        assert lab.model.watch == value
        verdicts.add(lab.verdict.value)
    for button in lab.blocks + [lab.positions]:
        renders = lab.view.renders
        button.value = False
        _redrawn(lab, figure, renders)
        assert "Without" in lab.verdict.value and button.icon == "times"
        button.value = True
        assert button.icon == "check"
    lab.blocks[0].value = False
    shown = list(lab.kinds.now.heights)
    assert shown[-1] == pytest.approx(lab.model.now["all texts"])
    assert "course-verdict" in lab.verdict._dom_classes
    assert len(verdicts) == 2


def test_mismatch_view_every_control():
    lab = MismatchLab()
    figure = lab.view.figure
    assert {"course-lab", "course-lab-mismatch"} <= set(lab.root._dom_classes)
    assert "As trained" in lab.verdict.value
    for slider in (lab.base, lab.eps):
        for value in (10 ** slider.min, 10 ** slider.max):
            renders = lab.view.renders
            slider.value = value
            _redrawn(lab, figure, renders)
            assert np.isfinite(lab.model.now["all texts"])
        lab._as_trained()
    for control, options in ((lab.pairing, ("neighbours", "halves")), (lab.norm, ("layer", "rms")),
                             (lab.positions, (False, True))):
        for option in options:
            renders = lab.view.renders
            control.value = option
            _redrawn(lab, figure, renders)
        assert lab.model.status == "trained"
    lab.pairing.value = "neighbours"
    assert "Loud" in lab.verdict.value
    lab.reset.click()
    assert lab.model.status == "trained" and lab.pairing.value == "halves"
    lab.base.value = 1e5
    assert "Quiet" in lab.verdict.value
    assert np.allclose(lab.gap_line.get_ydata(), np.maximum(lab.model.gap, 10.0 ** GAP_FLOOR))


def test_stream_view_every_control():
    lab = TrainedStreamLab()
    figure = lab.view.figure
    assert {"course-lab", "course-lab-trained-stream"} <= set(lab.root._dom_classes)
    for value in (lab.position.max, lab.position.min, 0):
        renders = lab.view.renders
        before = lab.view.image.value
        lab.position.value = value
        _redrawn(lab, figure, renders)
        assert list(lab.attention.heights) == pytest.approx(list(lab.model.attention))
        assert list(lab.ffn.heights) == pytest.approx(list(lab.model.ffn))
        assert lab.view.image.value != before or value == -1
    assert "position 0" in lab.title.get_text()


def test_first_slider_changes_the_image():
    """The browser test moves each lab's first slider and expects the image to change."""
    for lab, slider in ((AblationLab(), "watch"), (MismatchLab(), "base"), (TrainedStreamLab(), "position")):
        control = getattr(lab, slider)
        before = lab.view.image.value
        control.value = control.max
        assert lab.view.image.value != before


def test_mismatch_greys_out_the_rope_controls_while_rope_is_off_and_says_why():
    lab = MismatchLab()
    assert not lab.base.disabled and not lab.pairing.disabled
    lab.positions.value = False
    assert lab.base.disabled and lab.pairing.disabled
    assert "no effect with RoPE off" in lab.base.description and "no effect with RoPE off" in lab.pairing.description
    before = lab.model.now["all texts"]
    lab.base.value = BASE_MIN                   # even if set anyway, nothing changes without RoPE
    assert lab.model.now["all texts"] == before
    lab.positions.value = True
    assert not lab.base.disabled and not lab.pairing.disabled
    assert lab.base.description == "RoPE base" and lab.pairing.description == "RoPE pairs"


def test_perplexity_bars_above_the_chart_are_marked_with_their_value():
    from labs.trained.kind_bars import TOP_POWER

    lab = AblationLab()
    for button in lab.blocks[:2]:
        button.value = False
    lab.positions.value = False
    top = 10.0 ** TOP_POWER
    for (label, _kinds), height, mark in zip(GROUPS, lab.kinds.now.heights, lab.kinds.over):
        value = lab.model.now[label]
        if np.isfinite(value) and value > top:
            assert height == top and mark.get_text() == f"\u2191{amount(value)}"
        else:
            assert mark.get_text() == ""
    assert any(t.get_text() for t in lab.kinds.over)          # this setting does go off the chart


def test_moving_the_watched_prediction_redraws_only_the_top_words_panel():
    """The watch slider changes the right-hand panel alone; the perplexity bars on the left keep
    their heights, so they are not marked changed and the view does not redraw them. Leaving a
    block out changes the left-hand bars, and they are marked."""
    lab = AblationLab()
    left = {id(x) for x in (lab.kinds.full.artist, lab.kinds.now.artist, *lab.kinds.over)}
    right = {id(x) for x in (lab.top_full.artist, lab.top_now.artist, *lab.words, lab.right_title)}
    marked = []
    redraw = lab.view.redraw

    def watching(*args, **kwargs):
        marked.append({id(x) for x in lab.view._changing if x.stale})
        return redraw(*args, **kwargs)

    lab.view.redraw = watching
    for value in (lab.watch.value + 1, lab.watch.value + 2, lab.watch.value + 3):
        lab.watch.value = value
    assert len(marked) == 3 and lab.view.last == "blit"
    assert all(not (left & changed) and (right & changed) for changed in marked)
    lab.blocks[0].value = False
    assert left & marked[-1]


def test_the_top_words_axis_label_sits_below_every_word_and_inside_the_figure():
    """The top words are rotated texts under the bars; the axis label is placed under the
    longest word the vocabulary has (with its check mark), so no word runs across it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    lab = AblationLab()
    renderer = FigureCanvasAgg(lab.view.figure).get_renderer()
    longest = max(model.vocab(), key=len) + " \u2713"
    for text in lab.words:
        text.set_text(longest)
    label = lab.axis_label.get_window_extent(renderer)
    lowest_word = min(text.get_window_extent(renderer).y0 for text in lab.words)
    assert label.y1 < lowest_word
    assert label.y0 >= 0 and lab.axis_label.get_text() == "top words now"


# ---------------------------------------------------------------- heads lab

def _left_out_by_hand(text, block, head):
    """The copy and reverse losses with one head left out, the long way: every block from the
    embedding, over the whole text, with lib.block's own causal_weights switch."""
    from labs.trained.heads import predictions, without_head
    ids = model.heldout_texts()[text].ids
    x = model.embed(ids)
    for number, run_block in enumerate(model.blocks()):
        x = run_block(x, causal_weights=without_head(head)) if number == block else run_block(x)
    return model.token_losses(model.output_logits(x), ids)[predictions(text).rows]


def test_the_heads_lab_runs_the_model_and_keeps_lib_attentions_weights():
    from functools import partial

    from labs.trained.heads import predictions, sentences, text_attention
    from lib.attention import attention
    from lib.norm import rms_norm
    from lib.positional import rope
    for i in (0, 5):
        text = model.heldout_texts()[i]
        run, p = text_attention(i), predictions(i)
        trace = model.forward(text.ids, trace=True)
        assert np.array_equal(run.streams, trace.streams)
        assert np.array_equal(run.losses, model.token_losses(trace.logits, text.ids)[p.rows])
        s = sentences(i)[1]
        for b, w in enumerate(model.weights().blocks):
            _out, weights = attention(rms_norm(trace.streams[b], w.attention_norm_gain), w.Wq, w.Wk, w.Wv, w.Wo,
                                      heads=w.heads, causal=True, return_weights=True,
                                      positions=partial(rope, base=10000.0, pairing="halves"))
            np.testing.assert_allclose(run.source[b], weights[:, p.rows, p.sources], atol=1e-6)
            np.testing.assert_allclose(run.after[b], weights[:, p.rows, p.sources + 1], atol=1e-6)
            np.testing.assert_allclose(run.maps[1][b][..., 1:], weights[:, s.start:s.stop, s.start:s.stop], atol=1e-6)
            np.testing.assert_allclose(run.maps[1][b][..., 0], weights[:, s.start:s.stop, :s.start].sum(-1), atol=1e-5)
        for kept in run.maps:
            np.testing.assert_allclose(kept.sum(axis=-1), 1.0, atol=1e-5)      # each row's weights: all it reads


def test_the_heads_lab_finds_every_copy_and_reverse_prediction_and_its_letter():
    from labs.trained.heads import predictions, sentences
    names = model.info()["kinds"]
    total = {"copy": 0, "reverse": 0}
    for i, text in enumerate(model.heldout_texts()):
        p = predictions(i)
        labelled = [names[k] for k in text.kinds[1:]]
        for kind in total:
            assert (p.kinds == kind).sum() == labelled.count(kind)
            total[kind] += int((p.kinds == kind).sum())
        assert np.array_equal(text.ids[p.sources], text.ids[p.rows + 1])       # the letter it must write
        assert all(s.start < src < s.bar for src in p.sources for s in sentences(i) if s.start <= src < s.stop)
        for s in sentences(i):
            assert model.vocab()[text.ids[s.start]] == s.kind and model.vocab()[text.ids[s.bar]] == "|"
    assert total == {"copy": 109, "reverse": 100}


@pytest.mark.parametrize("text,block,head", [(0, 0, 3), (3, 1, 1), (6, 3, 2)])
def test_a_head_left_out_is_the_whole_model_run_without_it(text, block, head):
    """The lab's shortcuts (start at the head's block from the kept stream, cut the text after its
    last prediction, the last FFN on the predicting rows only) change nothing."""
    from labs.trained.heads import left_out_losses
    np.testing.assert_allclose(left_out_losses(text, block, head), _left_out_by_hand(text, block, head),
                               rtol=2e-4, atol=2e-4)


def test_a_head_left_out_has_every_weight_zero_and_the_others_as_trained():
    from labs.trained.heads import without_head
    from lib.attention import causal_weights
    scores = np.random.default_rng(3).normal(size=(4, 5, 5))
    kept = scores.copy()
    weights = without_head(2)(scores)
    assert np.array_equal(scores, kept)
    assert not weights[2].any()
    np.testing.assert_array_equal(np.delete(weights, 2, axis=0), np.delete(causal_weights(scores), 2, axis=0))


def test_heads_model_numbers_and_verdict():
    from labs.trained.heads import head_summary, left_out_losses, perplexities, text_attention
    m = heads_model(text=2, sentence=1, block=2, head=2)
    summary = head_summary()
    assert m.looks["copy"] == pytest.approx(summary.copy[1, 1])
    assert m.whole == perplexities(1, text_attention(1).losses) and m.without is None
    assert f"{m.looks['copy']:.2f} of its weight on the letter to write at the 109 copy" in m.verdict
    assert "with every head" in m.verdict
    out = heads_model(text=2, sentence=1, block=2, head=2, leave_out=True)
    assert out.without == perplexities(1, left_out_losses(1, 1, 1))
    assert (f"text 2's {out.counts['copy']} copy predictions go from perplexity {amount(out.whole['copy'])} to "
            f"{amount(out.without['copy'])}") in out.verdict
    assert out.without["copy"] > 10 * out.whole["copy"]
    rows = len(m.words)
    grid = m.grid
    assert np.isnan(grid[rows:]).all() and np.isnan(grid[:, rows + 1:]).all()
    assert np.isnan(grid[0, 2]) and not np.isnan(grid[1, 2])                      # the future is empty
    assert all(0 <= r < rows and 1 <= c <= rows for r, c in m.marks)
    assert [row[0] for row in m.table] == ["head 1", "head 2 (shown)", "head 3", "head 4"]


def test_heads_model_takes_any_setting():
    from labs.trained.heads import sentences
    for text, sentence, block, head in ((0, 0, 0, 0), (99, 99, 99, 99), (-3, -3, -3, -3), (8, 1, 4, 4)):
        m = heads_model(text, sentence, block, head, leave_out=True)
        assert 1 <= m.text <= 8 and 1 <= m.sentence <= len(sentences(m.text - 1))
        assert 1 <= m.block <= 4 and 1 <= m.head <= 4 and m.verdict


def test_heads_view_every_control():
    from labs.trained.heads import HeadsLab, sentence_options
    lab = HeadsLab()
    figure = lab.view.figure
    assert {"course-lab", "course-lab-heads"} <= set(lab.root._dom_classes)
    assert "with every head" in lab.verdict.value and "course-lab-numbers" in lab.numbers._dom_classes
    for control, values in ((lab.block, (4, 1)), (lab.head, (3, 1)), (lab.leave_out, (True, False)),
                            (lab.sentence, (len(lab.sentence.options), 1)), (lab.text, (8, 3))):
        for value in values:
            renders = lab.view.renders
            control.value = value
            _redrawn(lab, figure, renders)
            assert getattr(lab.model, control is lab.leave_out and "leave_out" or
                           {lab.block: "block", lab.head: "head", lab.sentence: "sentence", lab.text: "text"}.get(
                               control, "leave_out")) == value
    assert lab.sentence.options == tuple(sentence_options(3)) and lab.sentence.value == 1
    lab.block.value, lab.head.value, lab.leave_out.value = 2, 2, True
    assert "Without this head" in lab.verdict.value
    assert lab.without_bars.heights[0] == pytest.approx(min(lab.model.without["copy"], 1e4))
    shown = np.ma.filled(lab.image.get_array(), np.nan)
    np.testing.assert_array_equal(np.isnan(shown), np.isnan(lab.model.grid))
    assert [t.get_text() for t in lab.row_words[:len(lab.model.words)]] == lab.model.words
    assert len(lab.rings.get_xdata()) == len(lab.model.marks)
    assert "block 2" in lab.numbers.value and "head 2 (shown)" in lab.numbers.value


def test_the_heads_lab_opens_and_shows_every_text_sentence_and_head_without_running_the_model(monkeypatch):
    """Its maps and perplexities are looked up (computed when the course was built), so neither
    opening it nor any control runs a block; what it shows equals a live run."""
    from labs.trained import heads

    for cached in (heads.text_attention, heads._sentence_maps, heads._text_perplexities, heads.left_out_losses):
        cached.cache_clear()
    calls = []
    block = model.block
    monkeypatch.setattr(model, "block", lambda x, weights, **options: calls.append(1) or block(x, weights, **options))
    lab = heads.HeadsLab()
    for text in range(1, len(heads.texts()) + 1):
        lab.text.value = text
        for sentence in range(1, len(lab.sentence.options) + 1):
            lab.sentence.value = sentence
            lab.leave_out.value = not lab.leave_out.value
    lab.block.value, lab.head.value = 3, 4
    monkeypatch.undo()
    assert not calls
    live = heads.text_attention(lab.model.text - 1)
    s = heads.sentences(lab.model.text - 1)[lab.model.sentence - 1]
    expected = heads._map_grid(live.maps[lab.model.sentence - 1][2, 3], s)
    np.testing.assert_array_equal(lab.model.grid, expected)
    assert lab.model.whole == heads.perplexities(lab.model.text - 1, live.losses)


def test_moving_the_head_or_the_sentence_is_a_blit_once_each_length_was_drawn():
    from labs.trained.heads import HeadsLab
    lab = HeadsLab()
    for value in (2, 3, 4, 1):
        lab.head.value = value
        assert lab.view.last == "blit", lab.view.why
    drawn = {len(lab.model.words)}                        # each sentence length has its own scale
    for number in range(1, len(lab.sentence.options) + 1):
        lab.sentence.value = number
        rows = len(lab.model.words)
        assert lab.view.last == ("blit" if rows in drawn else "full"), lab.view.why
        drawn.add(rows)
    for number in range(1, len(lab.sentence.options) + 1):
        lab.sentence.value = number
        assert lab.view.last in ("blit", "none"), lab.view.why
