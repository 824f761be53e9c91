"""Notebook 05: the figures, as the notebook itself computes and prints them, every sentence of its
prose that states a quantity or a direction checked against the numbers, the held-out texts, and
the capstone."""

import ast
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from engine.core.registry import all_exercises, get_exercise, get_question
from lib import model

from exercise_answers import try_variant

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "05_trained_model.ipynb"
PATH = ROOT / "content" / NOTEBOOK
FIGURES = {"held-out-texts", "training-record", "logits-match", "perplexity", "residual-stream", "rms-by-hand",
           "largest-value", "float16", "gates-shut", "ablations", "heads", "mismatches", "rope-base-pairs", "parameters",
           "loss-curve", "ablation-by-text"}          # "three-ways" runs the learner's function: tests/test_content_05.py runs the solution


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


@pytest.fixture(scope="module")
def cells():
    return json.loads(PATH.read_text(encoding="utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def prose(cells):
    return " ".join(" ".join(source(c) for c in cells if c["cell_type"] == "markdown").split())


def numbers(text):
    return [float(n.replace(",", "")) for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def line_with(text, start):
    return next(line for line in text.splitlines() if line.strip().startswith(start))


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures)
    assert all(figures[name].strip() for name in FIGURES)


# ---------------------------------------------------------------- the held-out texts

def test_eight_held_out_texts_and_their_counts(figures, cells):
    texts = model.heldout_texts()
    assert len(texts) == 8 and texts[0].ids is model.heldout().ids     # 'this text and seven more'
    assert "this text and seven more" in prose(cells)
    line = figures["held-out-texts"]
    assert line.startswith("8 texts, 2,040 predictions: free words 943, verbs 85, counting 259, copy 109, "
                           "reverse 100, sums and differences 60")
    # 'The tables group the predictions by kind and leave two kinds out (the second line): the fixed
    # words the, is and the bar (grammar), and the full stops (end)'
    first, second = line.splitlines()[:2]
    assert second == "left out of the groups, 484: grammar 205, end 279"
    assert sum(numbers(first.split(":")[1])) + numbers(second)[0] == numbers(first)[1]
    names = model.info()["kinds"]
    words = {kind: {model.vocab()[i] for t in texts for i in t.ids[1:][t.kinds[1:] == names.index(kind)]}
             for kind in ("grammar", "end")}
    assert words == {"grammar": {"the", "is", "|"}, "end": {"."}}
    assert "the fixed words *the*, *is* and the bar (grammar), and the full stops (end)" in source(cells[6])


def test_held_out_texts_are_the_corpus_with_their_seeds_and_never_the_training_seed():
    from training import corpus
    from training import heldout_texts as script
    with np.load(model.FOLDER / "heldout_texts.npz") as data:
        seeds, ids, kinds = data["seeds"], data["ids"], data["kinds"]
    assert 2026 not in seeds and 7 not in seeds and len(set(seeds.tolist())) == len(seeds)
    for seed, text_ids, text_kinds in zip(seeds, ids, kinds):
        again = corpus.text(random.Random(int(seed)), 256)
        assert list(text_ids) == again[0] and list(text_kinds) == again[1]
    with pytest.raises(ValueError):
        script.texts(seeds=(7,))
    assert (model.FOLDER / "heldout_texts.npz").stat().st_size < 400 * 1024


def test_numpy_matches_the_recorded_pytorch_logits_on_every_text():
    for text in model.heldout_texts():
        assert np.abs(model.forward(text.ids) - text.logits).max() < 1e-4


def test_the_script_reproduces_the_first_texts_recorded_logits():
    """The script that made the extra texts' logits gives, on the first text, the logits train.py
    recorded: the same weights, the same PyTorch computation. Equal to float32 rounding, not bit
    for bit: PyTorch chooses its matrix kernels by the processor (AVX-512 or AVX2, for one), and
    kernels that add in another order round the last digit differently (7e-6 on logits up to 22
    on one such machine)."""
    from training import heldout_texts as script
    logits = script.reference_logits(model.heldout().ids[None], model.FOLDER / "weights.npz")
    assert logits[0].dtype == model.heldout().logits.dtype == np.float32
    np.testing.assert_allclose(logits[0], model.heldout().logits, rtol=0, atol=3e-5)


# ---------------------------------------------------------------- the figures

def test_training_record(figures):
    text = figures["training-record"]
    assert "4 blocks, d_model 96, 4 heads of 24, SwiGLU width 256, vocabulary 55, context 256" in text
    assert "448,512 parameters, trained with PyTorch 2.13.0+cpu on 2 CPU threads in 648 s (seed 2026)" in text
    assert ("step 50: training loss 3.098 (the mean of the 50 steps before), held-out loss 2.182 (the model at "
            "step 50)") in text
    assert ("step 1800: training loss 1.084 (the mean of the 50 steps before), held-out loss 1.094 (the model at "
            "step 1800)") in text


def test_what_each_loss_is(figures, cells):
    """'A training loss is the average over the steps since the line before, each step's loss measured
    on its own batch ... before that step's update. A held-out loss is measured once, at its step, on
    the first held-out text, by the model as it stands then': the script's own loop, and the last
    held-out loss is the finished model's loss on the first held-out text."""
    from training import train
    import inspect
    loop = inspect.getsource(train)
    assert 'running.append(loss.item())' in loop and '"train_loss": round(float(np.mean(running)), 4)' in loop
    assert loop.index("running.append(loss.item())") < loop.index("curve.append(") < loop.rindex("running = []")
    assert loop.index("loss.backward()") < loop.index("optimiser.step()") < loop.index("held = F.cross_entropy")
    record = model.info()
    curve, every = record["loss_curve"], record["settings"]["log_every"]
    assert [point["step"] for point in curve[:-1]] == list(range(every, record["settings"]["steps"], every))
    finished = float(np.mean(model.token_losses(model.forward(model.heldout().ids), model.heldout().ids)))
    assert curve[-1]["heldout_loss"] == pytest.approx(finished, abs=1e-3)
    first, last = curve[0], curve[-1]
    assert first["heldout_loss"] < first["train_loss"]                 # 'sits above the held-out loss'
    assert abs(last["heldout_loss"] - last["train_loss"]) < 0.02       # 'by the end of training the two agree'
    assert "the training loss lags behind the model" in prose(cells)


def test_logits_match(figures, cells):
    text = figures["logits-match"]
    assert "logits: (256, 55)" in text
    difference = float(re.search(r"PyTorch's logits: ([\d.e+-]+)", text).group(1))
    assert difference < 1e-4
    assert "largest logit: 22.1" in text
    assert float(line_with(text, "3 of the 8 texts, 768 positions").split("largest difference ")[1]) < 1e-4
    assert "It stays below 1e-4 on each of the texts checked (the last line)." in prose(cells)
    assert "The cell runs the model on the first three held-out texts" in prose(cells)
    assert "Both compute in 32-bit floats, as the model was trained" in prose(cells)
    assert model.forward(model.heldout().ids).dtype == model.heldout().logits.dtype == np.float32
    assert "cannot tell whether the convention is the one some other model was trained with" in prose(cells)


def test_the_bigram_is_lost_on_copying_reversing_and_sums_but_not_on_counting(figures, cells):
    """'On copying, reversing and the sums, the bigram model is lost ... On counting it does better
    but stays far above 1 ... The trained model is close to 1 on all four.'"""
    text = figures["perplexity"]
    bigram = {name: numbers(line_with(text, name).split("predictions")[1]) for name in
              ("counting", "copy", "reverse", "sums and differences")}
    lost = [bigram[name][0] for name in ("copy", "reverse", "sums and differences")]
    assert min(lost) > 2 * bigram["counting"][0] > 2 * 2                 # better, but far above 1
    assert all(model_ < 1.2 for _bigram, model_ in bigram.values())
    assert "On copying, reversing and the sums, the bigram model is lost" in prose(cells)
    assert "On counting it does better but stays far above 1" in prose(cells)


def test_perplexity(figures):
    text = figures["perplexity"]
    assert "uniform 55, bigram 6.87, trained model 2.98" in text
    assert "all 8 texts: bigram 6.70, trained model 3.00" in text
    rows = {line.strip()[:21].strip(): numbers(line.strip()[21:]) for line in text.splitlines()[2:]}
    assert rows["copy"] == [109, 10.20, 1.01] and rows["reverse"] == [100, 10.15, 1.00]
    for kind in ("counting", "copy", "reverse", "sums and differences"):
        assert rows[kind][2] < 1.2 < 3 < rows[kind][1]              # learned what the bigram cannot
        assert rows[kind][0] >= 50                                  # no conclusion on a handful


def test_verbs_sit_at_their_floor_of_three(figures):
    """'the best possible perplexity there is 3, and pooled over all the texts' verbs the model sits at it'."""
    verbs = numbers(line_with(figures["perplexity"], "verbs"))
    assert verbs[0] == 85 and abs(verbs[2] - 3) < 0.05


def test_a_single_texts_verbs_land_on_either_side_of_three(figures, cells):
    """'a single text's few verbs land a hair on either side of it by chance: the last line'."""
    line = figures["perplexity"].splitlines()[-1]
    assert line.strip().startswith("verbs, text by text:")
    pairs = re.findall(r"([\d.]+) \((\d+)\)", line)
    values, counts = [float(p) for p, _ in pairs], [int(n) for _, n in pairs]
    assert len(values) == 8 and sum(counts) == 85 and max(counts) <= 20   # a few verbs per text
    assert min(values) < 3 < max(values) and max(abs(v - 3) for v in values) < 0.1   # a hair, either side
    said = " ".join(prose(cells).split())
    assert "land a hair on either side of it (the last line" in said and "by chance" not in said
    assert "so the model's verb probabilities are close to 1/3, not equal to it" in said


def test_free_words_stay_well_above_one(figures):
    """'On the free words ... both models stay well above 1'."""
    free = numbers(line_with(figures["perplexity"], "free words"))
    assert free[1] > 5 and free[2] > 5


def test_residual_stream(figures):
    text = figures["residual-stream"]
    assert "start (the embedding): stream 0.11" in text
    assert "block 1: attention adds 0.15, FFN adds 1.83, stream 1.89" in text
    assert "block 4: attention adds 0.73, FFN adds 8.63, stream 13.51" in text


def test_what_each_block_adds_against_the_stream_it_received(figures, cells):
    """'the first block's addition is many times the stream ... more in blocks 2 and 4, less in
    block 3', and the stream lies between the right-angle size and the all-along size."""
    lines = figures["residual-stream"].splitlines()
    blocks = [line for line in lines if line.startswith("block")]
    ratios = [numbers(line)[-1] for line in blocks]
    assert ratios[0] > 10 and ratios[1] > 1 > ratios[2] and ratios[3] > 1
    assert all(0.7 <= ratio <= 1.6 for ratio in ratios[1:])             # 'between 0.7 and 1.6 times'
    assert "each block adds between 0.7 and 1.6 times what the stream already holds" in prose(cells)
    streams = [numbers(line.split("stream ")[1])[0] for line in blocks]
    bounds = [numbers(line) for line in lines if line.strip().startswith("at right angles")]
    for stream, (right, along) in zip(streams, bounds):
        assert right < stream < along
    adds = [numbers(line.split("stream ")[0]) for line in blocks]         # block, attention, FFN
    assert all(ffn > attention for _block, attention, ffn in adds)         # 'the FFNs write more'
    question = get_question("trained-predict-stream")
    embedding = numbers(line_with(figures["residual-stream"], "start"))[-1]
    assert streams[-1] > 10 * embedding and "many times larger" in question.choices[question.answer]


def test_the_ratios_hold_on_every_text():
    for text in model.heldout_texts():
        t = model.forward(text.ids, trace=True)
        rms = lambda a: np.sqrt((a ** 2).mean(axis=-1)).mean()     # noqa: E731
        ratios = [rms(t.streams[i + 1] - t.streams[i]) / rms(t.streams[i]) for i in range(4)]
        assert ratios[0] > 10 and ratios[1] > 1 > ratios[2] and ratios[3] > 1


def test_rms_by_hand(figures):
    text = figures["rms-by-hand"]
    assert float(line_with(text, "largest difference").split(":")[-1]) < 1e-12
    low, high = numbers(line_with(text, "the size of the copy"))[-2:]
    assert 0.8 < low < high < 1.2                                   # 'a copy of about the same size'


def test_largest_value(figures):
    text = figures["largest-value"]
    assert "largest |number| in the stream: 0.5, 13.4, 37.4, 63.8, 113.8" in text
    assert "float16's largest number: 65,504" in text and "room to spare: x576" in text


def test_float16_squares_scores_and_ranges(figures, cells):
    """The stream fits float16, its squares' sums do not; attention's scores stay far below the
    limit; bfloat16's range is float32's, with 7 bits of precision against float16's 10."""
    text = figures["float16"]
    limit = float(np.finfo(np.float16).max)
    square = numbers(line_with(text, "largest square"))[-1]
    total = numbers(line_with(text, "largest sum"))[-1]
    infinite, tokens = numbers(line_with(text, "the same sums"))[-2:]
    score = numbers(line_with(text, "largest score"))[-1]
    assert 0.15 < square / limit < 0.25                                # 'about a fifth of the limit'
    assert total > limit and 0 < infinite < tokens                     # 'passes it ... become infinite'
    assert score < limit / 100                                         # 'far below the limit'
    assert "float16:  largest 65,504; smallest with full precision 6.1e-05, smallest of all 6e-08; 10 bits" in text
    assert "bfloat16: largest 3.4e+38; smallest with full precision 1.2e-38; 7 bits of precision" in text
    assert text.count("bits of precision stored (and a leading 1 that is not)") == 2     # 11 and 8 with it
    bf16 = np.array([0x7F7F0000, 0x00800000], dtype=np.uint32).view(np.float32)
    as_float32 = bf16.view(np.uint32) & 0xFFFF                         # bfloat16 is float32 cut to 16 bits
    assert not as_float32.any() and bf16[1] == np.finfo(np.float32).tiny
    assert "the third line" in prose(cells) and "a number in the thousands squares to millions" in prose(cells)
    f16 = np.finfo(np.float16)                                         # 'loses precision below ... about 6e-5,
    assert f"{float(f16.tiny):.0e}" == "6e-05" and f"{float(f16.smallest_subnormal):.0e}" == "6e-08"
    assert np.float16(2.9e-8) == 0 < np.float16(3.1e-8) < f16.tiny     # rounds to 0 what is less than half of it'
    lines = text.splitlines()
    assert lines[-2].startswith("float16:") and lines[-1].startswith("bfloat16:")   # 'the second-last line'
    said = prose(cells)
    assert "with full precision, about 6e-5, and rounds to 0 what is less than half its smallest positive " \
           "number, 6e-8, so anything below about 3e-8 (the second-last line)" in said
    assert "rounds what is smaller still to 0" not in said
    assert "the 16-bit format large models are trained in" not in said  # they compute in it, keeping float32 weights
    assert "keeping a 32-bit copy of their weights" in said


def test_gates_shut(figures):
    text = figures["gates-shut"]
    assert "block 1:  26.4 of 256 units shut per token on average (from 9 to 44)" in text
    assert "block 3:  41.6 of 256 units shut per token on average (from 18 to 75)" in text
    low, high, always = numbers(line_with(text, "two tokens share"))
    assert high < 50 and always == 0                               # 'only a small part', 'no unit ... every token'
    assert "the lowest SiLU goes: -0.2785 at z = -1.28" in text
    pairs = numbers(line_with(text, "the same, block by block, against chance").split(":", 1)[1])
    observed, chance = pairs[0::2], pairs[1::2]
    assert len(observed) == 4 and all(c < o < 2 * c for o, c in zip(observed, chance))   # 'more ... less than twice'
    assert text.splitlines()[-2].startswith("the same, block by block, against chance")  # 'the second-last line'


def _ablation_rows(text):
    lines = text.splitlines()
    counts = numbers(lines[0])
    header = lines[1].split()[1:]
    rows = {line[:19].strip(): numbers(line[19:]) for line in lines[2:8]}
    return counts, header, rows


def test_ablations(figures):
    counts, header, rows = _ablation_rows(figures["ablations"])
    assert counts == [943, 85, 259, 109, 100, 60, 2040]
    assert header == ["free", "verbs", "count", "copy", "reverse", "sums+diff", "all", "p(right)", "top", "p"]
    assert rows["whole model"][6] == pytest.approx(3.004)
    assert rows["without block 1"][6] == pytest.approx(3409)
    assert rows["without positions"][6] == pytest.approx(85.42)


def test_ablation_prose_is_what_the_numbers_show(figures, cells):
    _counts, _header, rows = _ablation_rows(figures["ablations"])
    whole = rows["whole model"]
    assert rows["without block 1"][6] > 55                          # worse than guessing uniformly
    text = figures["ablations"]
    assert "text by text: [1, 1, 1, 1, 1, 1, 1, 1]" in text           # 'most, by far, in every text'
    # confidently wrong: the right word's probability collapses, the top word's does not
    assert rows["without block 1"][7] < 0.2 * whole[7] and rows["without block 1"][8] >= 0.95 * whole[8]
    kinds = ["free", "verbs", "count", "copy", "reverse", "sums+diff"]
    hurt = {name: kinds[int(np.argmax(np.array(rows[name][:6]) / np.array(whole[:6])))]
            for name in ("without block 2", "without block 4")}
    assert hurt["without block 2"] in ("copy", "reverse") and hurt["without block 4"] == "verbs"
    sums = numbers(line_with(text, "sums alone"))
    assert sums[0] >= 20 and sums[1] < 1.5 < 100 < sums[2]          # the sums collapse too
    order = numbers(line_with(text, "order-dependent"))
    assert order[0] >= 300 and order[1] < 1.2 < 100 < order[2]
    # 'The verbs suffer as well, more than three times worse ... although the last line does not
    # count them among the predictions that need the order.'
    assert rows["without positions"][1] > 3 * whole[1]
    assert "verb" not in model.info()["order_kinds"]
    assert "still knows which words came before" not in prose(cells)


def test_the_block_question_explains_with_what_the_table_shows(figures):
    """trained-predict-block's explanation: 'The later blocks are not mere refinements: each carries
    kinds of prediction of its own, and without it those fall apart (without block 2, copying and
    reversing; without block 4, the verbs). But each of those kinds is a small share of all the
    predictions, so the overall perplexity rises less.'"""
    counts, _header, rows = _ablation_rows(figures["ablations"])
    whole = rows["whole model"]
    kinds = ["free", "verbs", "count", "copy", "reverse", "sums+diff"]
    ratio = {name: dict(zip(kinds, np.array(rows[name][:6]) / np.array(whole[:6]))) for name in rows}
    assert ratio["without block 2"]["copy"] > 50 and ratio["without block 2"]["reverse"] > 50
    assert ratio["without block 4"]["verbs"] > 5
    for block in (2, 3, 4):
        assert rows[f"without block {block}"][6] < rows["without block 1"][6] / 100
    assert counts[3] + counts[4] < 0.15 * counts[6] and counts[1] < 0.05 * counts[6]   # 'a small share'
    explanation = get_question("trained-predict-block").explanation
    assert "not mere refinements" in explanation and "without block 2, copying and reversing" in explanation
    assert "refinements that the rest" not in explanation


def test_the_labs_bars_are_described_as_what_they_show(cells):
    """The ablation and mismatch labs' bars pool every held-out text (their tick labels count
    the predictions); the watched prediction and the logit changes are the first text's."""
    from labs.trained.ablation import ablation_model
    from labs.trained.held_out import counts
    from labs.trained.mismatch import mismatch_model
    assert counts()["all texts"] == sum(len(t.ids) - 1 for t in model.heldout_texts()) == 2040
    assert ablation_model(watch=0).context in model.decode(model.heldout().ids)
    assert len(mismatch_model(base=20_000.0).gap) == len(model.heldout().ids)
    text = prose(cells)
    assert "by kind of prediction over all the held-out texts" in text
    assert "one prediction of the first held-out text, the one printed at the top" in text
    assert "The lab's bars pool all the held-out texts." in text
    assert "the largest change of any logit at each position of the first held-out text" in text
    assert "by kind of prediction on the first held-out text" not in text


def _heads_rows(text):
    rows = {}
    for line in text.splitlines():
        if re.match(r"block \d, head \d +\d", line):                   # the table's rows, not the lines by distance
            name, values = line[:16], numbers(line[16:])
            b, h = (int(n) for n in re.findall(r"\d+", name))
            rows[(b, h)] = dict(zip(("copy", "reverse", "after", "previous"), values))
    return rows


def test_heads(figures):
    text = figures["heads"]
    assert text.startswith("averaged over the 8 texts' 109 copy and 100 reverse predictions and 213 letters")
    rows = _heads_rows(text)
    assert len(rows) == 16
    assert rows[(2, 2)] == {"copy": 0.61, "reverse": 0.02, "after": 0.38, "previous": 0.03}
    assert "without block 2's head 2: copy 1.01 -> 41.0, reverse 1.00 -> 122.9" in text
    assert "without block 1's head 3: copy 1.01 -> 179.2, reverse 1.00 -> 35.3" in text
    assert "without block 1's head 4: copy 1.01 -> 116.6, reverse 1.00 -> 33.9" in text
    without = numbers(line_with(text, "without block 2's head 4").split(":")[1])      # 'change far less'
    assert text.splitlines()[-1].startswith("without block 2's head 4") and without[1] < 1.5


def test_the_copying_head_is_what_the_prose_says(figures, cells):
    """'At the copy predictions it puts more than half of its weight on the letter to write, more
    than twice as much as any other head ... without it the copy and the reverse predictions'
    perplexity rises more than tenfold ... At the reverse predictions it looks ... at the token just
    after it, which holds the same word as the row itself.' Block 1's head 4: 'about half of its
    weight on the previous token ... leaving it out breaks copying and reversing too'. Block 2's
    head 4: 'looks at the previous token even more ... leave it out ... the copy predictions change
    far less'."""
    from labs.trained.heads import head_summary, left_out_losses, perplexities, pooled_perplexities, predictions
    rows = _heads_rows(figures["heads"])
    copy = {key: row["copy"] for key, row in rows.items()}
    best = max(copy, key=copy.get)
    assert best == (2, 2) and copy[best] > 0.5
    assert all(copy[key] < copy[best] / 2 for key in copy if key != best)
    assert rows[(2, 2)]["after"] > 10 * rows[(2, 2)]["reverse"]
    assert 0.4 < rows[(1, 4)]["previous"] < 0.6 < rows[(2, 4)]["previous"]
    # 'block 1's heads 3 and 4 each put several times as much weight on the previous token as heads 1
    # and 2 do ... Head 3 also puts more weight on the letter to write at the reverse predictions than
    # any other head'
    said = prose(cells)
    assert "block 1's heads 3 and 4 each put several times as much weight on the previous token" in said
    for h in (3, 4):
        assert all(rows[(1, h)]["previous"] > 3 * rows[(1, other)]["previous"] for other in (1, 2))
    reverse = {key: row["reverse"] for key, row in rows.items()}
    assert max(reverse, key=reverse.get) == (1, 3)
    assert "Head 3 also puts more weight on the letter to write at the reverse predictions than any" in said
    text = figures["heads"]
    for head in ("block 2's head 2", "block 1's head 3", "block 1's head 4"):   # leaving out either one
        values = numbers(line_with(text, f"without {head}").split(":")[1])
        assert values[1] > 10 * values[0] and values[3] > 10 * values[2]     # 'more than tenfold'
    for i, t in enumerate(model.heldout_texts()):                            # 'the same word as the row itself'
        p = predictions(i)
        reverse = p.kinds == "reverse"
        assert np.array_equal(t.ids[p.sources[reverse] + 1], t.ids[p.rows[reverse]])
        letter = (p.kinds == "copy") & (t.ids[p.rows] != model.vocab().index("|"))   # 'in a copy it lands on
        assert np.array_equal(t.ids[p.sources[letter] - 1], t.ids[p.rows[letter]])  # the token just after that copy'
        assert np.array_equal(t.ids[p.sources], t.ids[p.rows + 1])           # the letter to write is the answer
        copy_head = perplexities(i, left_out_losses(i, 1, 1))["copy"]
        after_head = perplexities(i, left_out_losses(i, 1, 3))["copy"]
        assert after_head < copy_head / 3                                    # 'change far less', text by text
    assert pooled_perplexities(2, 4)["copy"] < 1.5
    summary = head_summary()
    assert summary.counts == {"copy": 109, "reverse": 100, "previous": 213}
    question = get_question("trained-predict-copy-which")
    assert question.choices[question.answer] == "one head of block 2, with most of its weight on the letter"
    assert "Block 2's head 2 is the copying head." in prose(cells)
    assert ("In a copy, past its first letter, the token it lands on stands just after an earlier copy of "
            "the row's letter") in prose(cells)
    assert "In a reverse, the token it lands on is an earlier copy of the row's letter itself" in prose(cells)
    assert "one move" not in prose(cells)


def test_mismatches(figures):
    rows = {line[:23].strip(): line[23:].split() for line in figures["mismatches"].splitlines()[1:]}
    assert rows["RoPE pairs neighbours"][-1] == "loud" and rows["no RoPE"][-1] == "loud"
    assert rows["eps 0.1 for 1e-5"][-1] == "loud"
    for quiet in ("RoPE base 100,000", "LayerNorm for RMSNorm", "eps 1e-3 for 1e-5"):
        row = rows[quiet]
        ratio, same, largest = float(row[1]), float(row[3].rstrip("%")), float(row[4])
        assert row[-1] == "quiet" and ratio < 1.06                  # 'a few percent at most'
        assert same < 100 and largest > 1                           # 'logits moved by whole units'
    low, high = (float(v) for v in rows["RoPE base 100,000"][2].split("-"))
    assert low < 1.05 and high > 1.10                               # 'barely above 1 ... past the line'
    text = figures["mismatches"]
    line = line_with(text, "the mean square")
    small = float(re.search(r"eps 1e-3 is (\d+)% of it", line).group(1))
    large = float(re.search(r"eps 0.1 is ([\d.]+) times it", line).group(1))
    assert small < 100 and large > 1                                # eps 1e-3 below it, eps 0.1 above it
    offset = numbers(line_with(text, "each token's row as the 9 norms read it").replace(",", ""))
    assert offset[:2] == [9, 2304]                                  # 9 norms, 256 tokens each
    assert offset[-2] < 0.2                                         # 'a mean close to 0 compared with its spread'


def test_rope_base_pairs(figures, cells):
    """'leaves the first pair turning one radian per position and slows every other pair, the
    slowest the most ... the last pairs' angles stay near 0 ... it is the fast pairs after the first
    that end furthest apart, by tens of radians for pair i = 1, and the gap shrinks from pair to pair
    ... pair i = 1 is off by less than a tenth of a radian between neighbours, by less than one ten
    positions apart and by several radians only fifty apart'."""
    lines = figures["rope-base-pairs"].splitlines()
    slower = np.array(numbers(lines[0].split(":")[1]))
    assert slower[0] == 1 and np.all(np.diff(slower) > 0)              # the slowest pairs slow the most
    assert np.allclose(slower, 10 ** (np.arange(12) / 12), atol=0.005)  # '10^(i/12) times slower'
    assert "pair i turns 10^(i/12) times slower" in prose(cells)
    small, large = (np.array(numbers(line.split("(radians):")[1])) for line in lines[1:3])
    assert small[0] == large[0] == 255                              # the first pair turns the same
    assert small[-1] < 0.1 and large[-1] < 0.1                      # the last pairs stay near 0
    assert max(small[-2:].max(), large[-2:].max()) < 0.15
    assert lines[3].startswith("how far apart the two bases leave each pair at position 255")
    gaps = np.array(numbers(lines[3].split("(radians):")[1]))
    assert np.allclose(gaps, np.abs(small - large), rtol=0.05, atol=0.01)
    assert gaps[0] == 0 and 10 < gaps[1] < 100 and np.all(np.diff(gaps[1:]) < 0)   # furthest apart, then shrinks
    assert "the fast pairs after the first that end furthest apart, by tens of radians for pair i = 1" in prose(cells)
    near = {int(numbers(line)[1]): numbers(line.split("differ by")[1])[0] for line in lines[4:]}
    assert set(near) == {1, 10, 50}
    assert near[1] < 0.1 and near[10] < 1 and near[50] > 2           # 'less than a tenth ... less than one ... several'
    assert "Only the pairs in between" not in prose(cells)


def test_parameters(figures, cells):
    text = figures["parameters"]
    assert "embedding (also the output layer):    5,280" in text
    assert "total: 448,512 (the weights file holds 448,512)" in text
    assert "shares: embedding 1.2%, attention 32.9%, ffn 65.8%, norms 0.2%" in text
    assert "1.71 MiB" in text
    lines = [line for line in text.splitlines() if "the token table's share" in line]
    shares = [numbers(line.split(":")[1])[0] for line in lines]
    assert len(shares) == 2 and all(share >= 20 for share in shares)  # 'the same table alone is a fifth or more'
    assert "notebook 04's example (plain FFN)" in lines[0] and "learned position table" not in lines[0]
    assert lines[1].startswith("the token table's share in GPT-2 Small")
    assert numbers(line_with(text, "the token table's share in GPT-2").split("(")[1])[0] > shares[1]
    assert "GPT-2 Small, whose learned position table adds a little more" in prose(cells)


def test_the_capstone_text_counts_the_steps_and_names_the_scaling(cells):
    said = prose(cells)
    steps = re.search(r"the same (\w+) steps: ([^.]*)\.", said)
    names = [part.strip() for part in re.split(r"[,;]", steps.group(2))]
    assert steps.group(1) == "six" and len(names) == 6 and names.count("add") == 2
    assert "Each head's scores are divided by √size" in said                  # the hidden tests scale by √size
    assert not try_variant(get_exercise("capstone-block"), {2: "qj @ kj.T"}).passed   # unscaled scores fail it
    assert "found only by the check this notebook made first" not in said
    assert "found by a check like the one this notebook made first" in said


def test_loss_curve(figures):
    lines = figures["loss-curve"].splitlines()
    assert lines[0].startswith("step    50   training loss 3.098")
    assert lines[-1] == "step  1800   training loss 1.084   held-out loss 1.094"
    assert len(lines) == len(model.info()["loss_curve"][::4]) + 1


def test_question_answers_match_the_model():
    from labs.trained import ablation_model, mismatch_model
    ppl = [ablation_model(tuple(j != i for j in range(4))).now["whole text"] for i in range(4)]
    assert get_question("trained-predict-block").answer == int(np.argmax(ppl))
    mistakes = [{"pairing": "neighbours"}, {"base": 100_000.0}, {"positions": False}]
    ratios = [mismatch_model(**m).ratio for m in mistakes]
    assert get_question("trained-predict-mismatch").answer == int(np.argmin(ratios))
    assert get_question("trained-number-uniform").answer == len(model.vocab())
    from labs.trained.heads import head_summary
    looks = head_summary().copy
    assert get_question("trained-predict-copy-head").answer == 1 and np.unravel_index(looks.argmax(), looks.shape) == (1, 1)
    assert get_question("trained-predict-copy-which").answer == 1


# ---------------------------------------------------------------- exercises and the capstone

def test_leave_out_blocks_is_retired_but_still_checks_for_saved_notebooks():
    old = get_exercise("leave-out-blocks")
    assert old.retired and old.id not in {ex.id for ex in all_exercises()}
    assert try_variant(old).passed


def test_perplexity_from_probabilities_is_retired_but_still_checks_for_saved_notebooks():
    old = get_exercise("perplexity")
    assert old.retired and old.id not in {ex.id for ex in all_exercises()}
    assert try_variant(old).passed


def test_the_perplexity_exercise_is_model_perplexity_and_needs_the_log_without_a_probability(cells):
    """The solution gives model.perplexity on every held-out text; 'a probability can be so small
    that it rounds to 0, and the log of 0 is minus infinity': the log taken of the softmax gives an
    infinite perplexity where the solution's stays finite."""
    from engine.core.cell import run_cell
    ex = get_exercise("perplexity-logits")
    solved = run_cell(ex.solution_source, ex.context)["perplexity"]
    for text in model.heldout_texts():
        logits = model.forward(text.ids)
        assert solved(logits, text.ids) == pytest.approx(model.perplexity(logits, text.ids), rel=1e-5)
    through_probabilities = run_cell(ex.variant_source(
        {2: "np.log(np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True))"}), ex.context)["perplexity"]
    far = next(case for case in ex.fixed_cases() if "far below" in case.covers)
    with np.errstate(divide="ignore"):
        assert np.isinf(through_probabilities(*far.args)) and np.isfinite(solved(*far.args))
    assert "a probability can be so small that it rounds to 0, and the log of 0 is minus infinity" in prose(cells)


def test_skipping_in_ablated_gives_the_ablation_tables_numbers_and_leave_one_out_is_retired():
    from engine.core.cell import run_cell
    old = get_exercise("leave-one-out")
    assert old.retired and old.id not in {ex.id for ex in all_exercises()} and try_variant(old).passed
    ex = get_exercise("ablate-three-ways")
    ablated = run_cell(ex.solution_source, ex.context)["ablated"]
    text = model.heldout()
    found = [model.perplexity(model.output_logits(ablated(model.embed(text.ids), model.blocks(), k, "skip")), text.ids)
             for k in range(4)]
    expected = [model.perplexity(model.forward(text.ids, skip={i}), text.ids) for i in range(4)]
    assert np.allclose(found, expected, rtol=1e-9)


def _three_ways(ids):
    from engine.core.cell import run_cell
    ex = get_exercise("ablate-three-ways")
    ablated = run_cell(ex.solution_source, ex.context)["ablated"]
    stream = model.embed(ids)
    return {how: [model.perplexity(model.output_logits(ablated(stream, model.blocks(), k, how)), ids) for k in range(4)]
            for how in ("skip", "zero", "mean")}


def test_the_three_ways_are_what_the_prose_and_the_zeroed_question_say(cells):
    """On the first 128 tokens of the first text (the cell's run, with the course's solution): zeroing
    gives 55 exactly for every block; skipping and the mean both find block 1 the one that matters
    most, by far; the mean hurts blocks 3 and 4 more than skipping them, there and in the first 128
    tokens of every held-out text; on the first text it ranks block 4 above blocks 2 and 3 where
    skipping ranks it last. trained-predict-zeroed's explanation: a stream of zeros stays zeros
    through every later part, and the output is the uniform guess."""
    texts = model.heldout_texts()
    first = _three_ways(texts[0].ids[:128])
    assert first["zero"] == pytest.approx([55.0] * 4, abs=1e-9) and len(model.vocab()) == 55
    for how in ("skip", "mean"):
        assert np.argmax(first[how]) == 0 and first[how][0] > 20 * max(first[how][1:])      # 'by far'
    assert first["skip"][3] == min(first["skip"]) and first["mean"][3] > max(first["mean"][1:3])
    for t in texts:
        ways = _three_ways(t.ids[:128])
        assert ways["mean"][2] > ways["skip"][2] and ways["mean"][3] > ways["skip"][3]
        assert ways["zero"] == pytest.approx([55.0] * 4, abs=1e-9)
    x = np.zeros((5, 96), dtype=np.float32)
    for block in model.blocks():                                        # zeros stay zeros, part by part
        assert not np.any(block(x))
    assert not np.any(model.output_logits(x))
    q = get_question("trained-predict-zeroed")
    assert q.choices[q.answer].startswith("every block alike")
    lengths = [len(c) for c in q.choices]
    assert max(lengths) < 1.4 * min(lengths)
    said = prose(cells)
    for claim in ("Zeroing gives 55 for every block, the uniform guess over the vocabulary, exactly",
                  "the mean hurts blocks 3 and 4 more than skipping them (here, and in the first 128 tokens of each "
                  "of the 8 held-out texts)", "on this text it ranks block 4 above blocks 2 and 3 where skipping ranks it last",
                  "both find block 1 the one that matters most, by far"):
        assert claim in said, claim
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    asked = code.index('ask("trained-predict-zeroed")')
    ran = next(i for i, s in enumerate(code) if 'for how in ("skip", "zero", "mean")' in s)
    exercise = next(i for i, s in enumerate(code) if s.startswith("def ablated("))
    assert exercise < asked < ran and "part = texts[0].ids[:128]" in code[ran]
    assert len(texts) == 8


def test_the_mean_over_other_texts_still_hurts_blocks_3_and_4_more_than_skipping(cells, figures):
    """'Taken over the first 128 tokens of the other 7 held-out texts instead, the mean still hurts
    blocks 3 and 4 more than skipping them, in each of the 8 texts' first 128 tokens': each text's
    first 128 tokens, block k's addition replaced by its mean over the first 128 tokens of each other
    text (no token of the text itself, so nothing from later in it), against skipping block k. The
    cell after the claim prints every text's three rows; each printed number is this test's own run
    (skipping by model.forward's switch, the means added block by block); its last lines count 16
    of 16."""
    printed = {line.rsplit(None, 2)[0]: numbers(" ".join(line.rsplit(None, 2)[1:]))
               for line in figures["ablation-by-text"].splitlines() if line.startswith("text ")}
    assert len(printed) == 3 * 8
    texts, blocks = model.heldout_texts(), model.blocks()
    sums, counts = np.zeros((len(texts), 4, 96)), np.array([128] * len(texts))
    for j, t in enumerate(texts):                       # each block's summed addition, text by text
        stream = model.embed(t.ids[:128])
        for k, block in enumerate(blocks):
            new = block(stream)
            sums[j, k] = (new - stream).sum(axis=0)
            stream = new
    for j, t in enumerate(texts):
        part = t.ids[:128]
        others = (sums.sum(axis=0) - sums[j]) / (counts.sum() - counts[j])     # (4, 96)
        for k in (2, 3):
            stream = model.embed(part)
            for i, block in enumerate(blocks):
                stream = stream + others[k] if i == k else block(stream)
            mean = model.perplexity(model.output_logits(stream), part)
            skip = model.perplexity(model.forward(part, skip={k}), part)
            assert mean > skip, (j, k, mean, skip)
            assert printed[f"text {j + 1}, mean over the other 7 texts"][k - 2] == pytest.approx(mean, abs=6e-4)
            assert printed[f"text {j + 1}, skipped"][k - 2] == pytest.approx(skip, abs=6e-4)
        own = _three_ways(part)
        assert printed[f"text {j + 1}, mean over its own tokens"] == pytest.approx(own["mean"][2:], abs=6e-4)
        assert all(m > s for m, s in zip(printed[f"text {j + 1}, mean over its own tokens"],
                                         printed[f"text {j + 1}, skipped"]))
    for way in ("its own tokens", "the other 7 texts"):
        assert f"The mean over {way} hurts more than skipping in 16 of 16 (8 texts, blocks 3 and 4)." \
            in figures["ablation-by-text"]
    said = prose(cells)
    assert f"first 128 tokens of the other {len(texts) - 1} held-out texts" in said
    assert f"each of the {len(texts)} texts' first 128" in said
    for name in ("*zero-ablation*", "*mean-ablation*", "Papers take the mean over other texts"):
        assert name in said, name


def test_the_circuit_is_said_to_be_one_models(cells):
    """Every circuit claim rests on one trained model: the prose says so next to the heads and the
    ablation table, and the model's record has one seed."""
    said = prose(cells)
    assert isinstance(model.info()["settings"]["seed"], int)
    assert "All of this is one model, trained once, from one seed" in said
    assert "In this model (one model, trained from one seed" in said


def test_your_parts_takes_the_learners_passing_functions_and_falls_back_otherwise(tmp_path):
    from engine.core.notebooks import read, solve_notebook, write
    from engine.core.parts import course_parts
    from exercises.definitions.trained import PARTS, your_parts

    content = ROOT / "content"
    solved, _ids = solve_notebook(read(content / "03_norms_and_residuals.ipynb"))
    write(solved, tmp_path / "03_norms_and_residuals.ipynb")                  # rms_norm solved
    write(read(content / "04_decoder_block.ipynb"), tmp_path / "04_decoder_block.ipynb")   # blanks
    broken = read(content / "02_feed_forward.ipynb")
    for cell in broken["cells"]:
        if cell.get("metadata", {}).get("course", {}).get("exercise") == "swiglu":
            cell["source"] = "def silu(z):\n    return z\n\ndef swiglu(x, W_gate, W_up, W_down):\n" \
                             "    return (silu(x @ W_gate) * (x @ W_up)) @ W_down\n"
    write(broken, tmp_path / "02_feed_forward.ipynb")                          # wrong silu
    parts = your_parts(tmp_path)
    course = course_parts(PARTS)
    report = dict(line.split(None, 1) for line in parts.report.splitlines())
    assert parts.rms_norm is not course[0] and report["rms_norm"].startswith("yours, from 03_norms")
    assert parts.rope_one is course[1] and "01_positional_encoding.ipynb is not in your workspace" in report["rope_one"]
    assert parts.causal_weights is course[2] and "still has its blanks" in report["causal_weights"]
    assert parts.swiglu is course[3] and "does not pass its check" in report["swiglu"]
    x = np.random.default_rng(0).normal(size=(3, 4))
    assert np.allclose(parts.rms_norm(x, np.ones(4)), course[0](x, np.ones(4)))


def test_your_parts_takes_causal_weights_from_a_notebook_04_saved_before_the_cached_exercise(tmp_path):
    """A notebook 04 saved by an earlier release holds the retired causal-weights exercise; its
    function (square grids, as the capstone uses) is the learner's, checked by its own check."""
    from exercises.definitions.trained import PARTS, your_parts
    saved = ROOT / "tests" / "saved_notebooks" / "release-6fd94497c0" / "04_decoder_block.ipynb"
    (tmp_path / saved.name).write_bytes(saved.read_bytes())
    parts = your_parts(tmp_path)
    report = dict(line.split(None, 1) for line in parts.report.splitlines())
    assert report["causal_weights"].startswith("yours, from 04_decoder_block"), report["causal_weights"]
    scores = np.random.default_rng(1).normal(size=(2, 5, 5))
    assert np.allclose(parts.causal_weights(scores), get_exercise("cached-causal-weights").reference(scores))


def test_the_capstone_runs_the_whole_model_to_pytorchs_logits():
    """The capstone's solution, four times, then the final norm and the output layer, gives the
    recorded logits on every held-out text."""
    from engine.core.cell import run_cell
    ex = get_exercise("capstone-block")
    trained_block = run_cell(ex.solution_source, ex.context)["trained_block"]
    for text in model.heldout_texts()[:2]:
        stream = model.embed(text.ids)
        for w in model.weights().blocks:
            stream = trained_block(stream, w)
        assert np.abs(model.output_logits(stream) - text.logits).max() < 1e-4


def test_examples_quoted_by_the_feedback_are_in_sight_above_their_checks(cells):
    index = {c["metadata"].get("course", {}).get("exercise"): i for i, c in enumerate(cells)
             if "exercise" in c["metadata"].get("tags", [])}
    before = {ex: "\n".join(source(c) for c in cells[:i]) for ex, i in index.items()}
    assert "example_logits = np.array([[0.5, 2.5, 0.0, 1.0, -1.0]," in before["perplexity-logits"]
    assert "example_ids = np.array([3, 1, 0, 2])" in before["perplexity-logits"]
    assert "example_x = model.embed(ids[:12])" in before["ablate-three-ways"]
    assert "example_blocks = model.blocks()" in before["ablate-three-ways"]
    assert "small_x, small_w = example_block()" in before["capstone-block"]
    assert "parts = your_parts()" in before["capstone-block"]
    for ex_id, i in index.items():
        assert "<details>" not in source(cells[i - 1]) + source(cells[i - 2]), f"a box right above {ex_id}"


def test_structure(cells):
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    for lab in ("ablation_lab()", "heads_lab()", "mismatch_lab()", "stream_lab()"):
        assert any(lab in s for s in code), lab
    for question in ("trained-number-uniform", "trained-predict-stream", "trained-predict-block",
                     "trained-predict-copy-which", "trained-predict-mismatch", "trained-predict-zeroed"):
        assert f'ask("{question}")' in code
    exercises = [c["metadata"]["course"]["exercise"] for c in cells if "exercise" in c["metadata"].get("tags", [])]
    assert exercises == ["perplexity-logits", "ablate-three-ways", "capstone-block"]
    first_code = next(c for c in cells if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    assert "torch" not in "".join(code)
    # the learner predicts before each lab that answers the question
    for question, lab in (("trained-predict-stream", "stream_lab()"), ("trained-predict-block", "ablation_lab()"),
                          ("trained-predict-copy-which", "heads_lab()"), ("trained-predict-mismatch", "mismatch_lab()")):
        assert code.index(f'ask("{question}")') < next(i for i, s in enumerate(code) if lab in s)
    figures = {c["metadata"].get("course", {}).get("figure") for c in cells if c["cell_type"] == "code"}
    assert FIGURES <= figures
    text = prose(cells)
    for typed in ("2.98", "6.87", "4,687", "4687", "127.7", "825", "48.4", "3.16", "448,512", "113.8",
                  "576", "1.5e-05", "648", "3.00", "17.5", "0.74", "3409", "85.42", "1.056", "-0.28",
                  "12,947", "128,303", "2.182", "3.098", "0.61", "0.49", "0.71", "0.38", "8.25", "168"):
        assert typed not in text, f"figure {typed} typed in prose"
    for claim in ("The base is the one to fear", "every block adds more than the stream held",
                  "Retraining with the same versions gives the same weights"):
        assert claim not in text
    assert "training/README.md" in text
    assert source(cells[-2]).startswith("## References") and "Massive Activations" in source(cells[-2])


def test_the_heads_left_out_in_turn_are_as_many_as_the_text_says(cells):
    said = next(i for i, c in enumerate(cells) if "with each of four heads left out in turn" in source(c))
    code = source(cells[said + 1])
    left_out = re.search(r"for block, head in (\(\(.*?\)\)):", code).group(1)
    assert len(ast.literal_eval(left_out)) == 4


def test_the_check_and_the_three_ways_run_the_texts_their_text_names(cells):
    """'The cell runs the model on the first three held-out texts ... put `texts` in place of
    `texts[:3]`' and 'then on the first 128 tokens of the first held-out text'."""
    check = next(source(c) for c in cells if "checked = " in source(c))
    assert "checked = texts[:3]" in check and "for t in checked" in check
    said = next(i for i, c in enumerate(cells) if "128 tokens of the first held-out text" in source(c))
    assert "part = texts[0].ids[:128]" in source(cells[said + 1])


def test_block_1_head_3_s_weight_on_the_letter_depends_on_its_distance_not_as_one_offset(figures, cells):
    """'at the reverse predictions its weight on it is high one back and five back, low three back,
    and near 0 seven and nine back; at the copy predictions it grows from two back to five back ...
    At a reverse prediction one back, the bar's row, the letter to write is the token just before':
    the lines by distance, pooled over every text (head_summary, looked up, equal to a live run in
    tests/test_precomputed.py). No single distance gets the weight in both kinds, so the prose does
    not call it a fixed distance."""
    from labs.trained.heads import head_summary, predictions
    by = head_summary().by_distance
    weight = {kind: dict(zip(by[kind][0].tolist(), by[kind][2][0, 2].tolist())) for kind in ("copy", "reverse")}
    assert weight["reverse"][1] > 0.8 and weight["reverse"][5] > 0.5
    assert weight["reverse"][3] < 0.2 < 0.5 < weight["reverse"][5]                      # 'low three back'
    assert weight["reverse"][7] < 0.05 and weight["reverse"][9] < 0.05
    copy = [weight["copy"][d] for d in sorted(weight["copy"])]
    assert sorted(weight["copy"]) == [2, 3, 4, 5] and copy == sorted(copy) and copy[-1] > 0.4 > 0.15 > copy[0]
    for i, t in enumerate(model.heldout_texts()):                      # one back: the bar's row
        p = predictions(i)
        one = (p.kinds == "reverse") & (p.rows - p.sources == 1)
        assert np.all(t.ids[p.rows[one]] == model.vocab().index("|"))
    text = figures["heads"]
    line = line_with(text, "block 1, head 3, on the letter to write at the reverse predictions")
    assert "1 back 0.89 (29)" in line and "9 back 0.00" in line
    said = prose(cells)
    for claim in ("at the reverse predictions its weight on it is high one back and five back, low three back, and "
                  "near 0 seven and nine back; at the copy predictions it grows from two back to five back. At a "
                  "reverse prediction one back, the bar's row, the letter to write is the token just before",
                  "Whether head 3 also reads the letters these lines do not test"):
        assert claim in said, claim
    assert "it looks a fixed distance back" not in said and "whatever the letters" not in said


def test_the_induction_head_is_named_with_its_sources_and_why_it_needs_two_blocks(cells):
    said = prose(cells)
    for claim in ("the one they called an **induction head** (block 2's head 2)", "a **previous-token head**", "**K-composition**",
                  "The induction circuit is the best-studied mechanism by which language models copy from their "
                  "context, and it needs two blocks: the heads of one block all read the stream as it was before "
                  "the block",
                  "**V-composition**", "consistent with what the cells show",
                  "leaving out one head at a time cannot tell the two apart",
                  "A turn counts only up to whole turns of 2π",
                  "That is why no head of block 1 can find the letter to copy by the letter before it"):
        assert claim in said, claim
    refs = " ".join(source(cells[-2]).split())
    for paper in ("A Mathematical Framework for Transformer Circuits", "In-context Learning and Induction Heads",
                  "Mixed Precision Training"):
        assert paper in refs
    assert "Block 1 could not aim so well" in get_question("trained-predict-copy-which").explanation


def test_the_copy_question_s_choices_are_equally_detailed_and_not_narrowed_above(cells):
    """The ablation table above leaves block 2; the choices then differ by how many heads, each
    written with the same detail (no choice alone carries a number)."""
    q = get_question("trained-predict-copy-which")
    assert sum("block 2" in c for c in q.choices) == 3
    assert all(re.search(r"\b(most|half|quarter)\b", c) for c in q.choices)
    assert max(len(c) for c in q.choices) < 1.2 * min(len(c) for c in q.choices)
    sources = [source(c) for c in cells]
    asked = sources.index('ask("trained-predict-copy-which")')
    above = " ".join(" ".join(sources[:asked]).split())
    for giveaway in ("head 2", "one head", "single head", "more than half"):
        assert giveaway not in above, giveaway


def test_removing_rope_changes_nearly_every_score(cells):
    """'taking it out turns every query and key but those of the first position, so nearly every
    score changes'; 'The sums collapse far further than the predictions the order decides.'"""
    from lib.positional import rope
    q = np.random.default_rng(3).normal(size=(1, 6, 24))
    turned = rope(q)
    assert np.allclose(turned[:, 0], q[:, 0]) and not np.any(np.isclose(turned[:, 1:], q[:, 1:]).all(axis=-1))
    said = prose(cells)
    assert "the model was never trained without RoPE" in said
    assert "The sums collapse far further than the predictions the order decides." in said


def test_the_texts_start_ends_at_a_whole_word_and_the_lab_counts_predictions(cells):
    """K11: the printed start ends at a word; K9: the ablation lab's first verdict counts the
    2,040 predictions its bars count, not the 2,048 tokens."""
    from labs.trained.ablation import ablation_model
    text = model.decode(model.heldout().ids)
    shown = text[:400].rsplit(" ", 1)[0]
    assert text.startswith(shown + " ") and shown.split()[-1] in set(text.split())
    code = next(source(c) for c in cells if "text = model.decode(model.heldout().ids)" in source(c))
    assert 'text[:400].rsplit(" ", 1)[0]' in code
    verdict = ablation_model().verdict
    assert "2,040 predictions" in verdict and "2,048" not in verdict


def test_the_skip_ahead_set_tests_transfer():
    from exercises.definitions.questions.trained import SKIP_AHEAD
    ids = [q.id for q in SKIP_AHEAD]
    assert ids == ["trained-out-perplexity", "trained-out-floor", "trained-out-check", "trained-out-induction",
                   "trained-out-bfloat16"]
    by_id = {q.id: q for q in SKIP_AHEAD}
    assert by_id["trained-out-floor"].answer == pytest.approx(np.exp(np.log(4)))
    assert by_id["trained-out-induction"].answer == 2
    bf16_largest = float(np.array([0x7F7F0000], dtype=np.uint32).view(np.float32)[0])
    assert f"{bf16_largest:.1e}" == "3.4e+38" and float(np.finfo(np.float16).max) == 65504
    for q in SKIP_AHEAD:
        if q.kind == "predict":
            lengths = [len(c) for c in q.choices]
            assert max(lengths) < 1.5 * min(lengths), q.id


def test_a_large_eps_shrinks_the_first_norm_s_copy_more_for_smaller_tokens(cells):
    """'a large ε shrinks the normalised copy the first norm hands on, and the more the smaller a
    token's numbers': RMSNorm with ε = 0.1 on the embedding of the first text, no gain."""
    from lib.norm import rms_norm
    x = model.embed(model.heldout().ids).astype(np.float64)
    size = np.sqrt((x ** 2).mean(axis=-1))
    copy = np.sqrt((rms_norm(x, eps=0.1) ** 2).mean(axis=-1))
    assert copy.max() < 0.6 and np.all(np.diff(copy[np.argsort(size)]) >= 0)
    assert np.allclose(np.sqrt((rms_norm(x, eps=1e-5) ** 2).mean(axis=-1)), 1, atol=1e-2)
    assert "a large ε shrinks the normalised copy the first norm hands on, and the more the smaller" in prose(cells)

