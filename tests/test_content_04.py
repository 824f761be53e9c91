"""Notebook 04: the syllabus figures, as the notebook itself computes and prints them, and every
sentence of its prose that states a quantity or a direction, checked against the numbers."""

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from engine.core.registry import all_exercises, get_exercise, get_question
from lib.initialisation import RULES, gain_per_matrix, start_of_training
from labs.decoder.models import REAL_MODELS
from lib.params import count_parameters, simple_version

from exercise_answers import try_variant

NOTEBOOK = "04_decoder_block.ipynb"
PATH = Path(__file__).resolve().parents[1] / "content" / NOTEBOOK
FIGURES = {"six-steps", "causal-mask", "flow-48", "near-identity-768", "near-identity",
           "hand-block", "hand-decoder", "count-768", "depth-width", "depth-latency", "compute-per-token",
           "weight-tying", "gpt2-gap", "real-models", "kv-cache", "training-memory", "block-2017"}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NOTEBOOK)


@pytest.fixture(scope="module")
def cells():
    return json.loads(PATH.read_text(encoding="utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def prose(cells):
    """The markdown of the notebook, with its line breaks turned into spaces."""
    return " ".join(" ".join(source(c) for c in cells if c["cell_type"] == "markdown").split())


def numbers(text):
    return [float(n.replace(",", "")) for n in re.findall(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def line_with(text, start):
    return next(line for line in text.splitlines() if line.strip().startswith(start))


def test_every_figure_cell_printed(figures):
    assert FIGURES <= set(figures)
    assert all(figures[name].strip() for name in FIGURES)


# ---------------------------------------------------------------- one block

def test_six_steps(figures):
    text = figures["six-steps"]
    sizes = [line.split("size ")[1] for line in text.splitlines() if " size " in line]
    assert sizes == ["0.74", "1.00", "0.95", "1.41", "1.00", "1.21", "2.05"]
    assert "output row 1: [+0.12, -0.58, -2.73, -1.31]" in text
    read, attention, ffn = (float(s) for s in (sizes[1], sizes[2], sizes[5]))
    assert 0.5 < attention / read < 2 and 0.5 < ffn / read < 2        # 'of the same order as what they read'


def test_each_add_grows_the_stream_about_9_times_in_10(figures, cells):
    """'Each add makes the stream larger about 9 times in 10 (the count in the last line)', 'the
    block's output is larger than its input in nearly every draw (the last share)'."""
    counts = numbers(line_with(figures["six-steps"], "500 new draws"))
    assert counts == [500, 454, 91, 450, 90, 495, 99]
    draws, attention, _, ffn, _, block, _ = counts
    assert round(10 * attention / draws) == round(10 * ffn / draws) == 9        # 9 times in 10
    assert 0.98 <= block / draws < 1                                            # nearly every draw, not every
    text = prose(cells)
    assert text.count("about 9 times in 10") == 3 and "almost always" not in text and "nearly always" not in text
    assert "give back about as much as they read" not in text
    assert "almost always leaves larger" in get_question("decoder-predict-size").explanation
    # 'Here each addition is about as large as the stream it joins': the sizes the cell printed
    sizes = [float(line.split("size ")[1]) for line in figures["six-steps"].splitlines() if " size " in line]
    stream, attention_add = sizes[0], sizes[2]
    assert 0.5 < attention_add / stream < 2 and text.count("in this setup") >= 3
    # '|x + a| is larger than |x| exactly when the cosine ... is above -|a| / (2|x|)'; 'Added to a
    # stream many times its size ... a random direction lengthens the stream only a little more often'
    rng = np.random.default_rng(0)
    x, a = rng.normal(size=(2, 20_000, 4))
    for big in (1.0, 10.0):
        xs = big * x
        cos = (xs * a).sum(-1) / np.linalg.norm(xs, axis=-1) / np.linalg.norm(a, axis=-1)
        longer = np.linalg.norm(xs + a, axis=-1) > np.linalg.norm(xs, axis=-1)
        assert np.array_equal(longer, cos > -np.linalg.norm(a, axis=-1) / (2 * np.linalg.norm(xs, axis=-1)))
        if big == 10.0:
            assert 0.5 < longer.mean() < 0.6
    assert "the bound nears 0, and an addition in a random direction lengthens the stream only a little" in text


def test_causal_mask(figures):
    text = figures["causal-mask"]
    assert "[[1 0 0 0 0]\n [1 1 0 0 0]\n [1 1 1 0 0]\n [1 1 1 1 0]\n [1 1 1 1 1]]" in text
    assert "[[1.   0.   0.   0.  ]" in text                   # token 1 reads only itself
    assert "each row sums to [1. 1. 1. 1.]" in text


def test_encoder_and_decoder_blocks(cells, figures):
    """The mask is the only change for decoder-only models; the 2017 decoder adds cross-attention."""
    text = prose(cells)
    assert "That mask is the only change between an encoder block and a decoder block" not in text
    assert "decoder-only" in text and "cross-attention" in text
    lines = figures["block-2017"].splitlines()
    encoder, decoder, modern = (numbers(line)[-1] for line in lines)
    d, d_ff = 512, 2048
    # 'biases | in the FFN's two matrices': attention's four d x d matrices have none
    assert encoder == 4 * d * d + (2 * d * d_ff + d_ff + d) + 2 * 2 * d   # attention, FFN, two LayerNorms
    assert (encoder, decoder, modern) == (3_150_336, 4_199_936, 3_212_288)
    assert decoder - encoder == 4 * d * d + 2 * d                       # cross-attention and its LayerNorm
    assert int(np.ceil(8 / 3 * d / 64) * 64) == 1408                   # '8/3 · 512 rounded up to 64'


# ---------------------------------------------------------------- the stack

def test_flow_48(figures):
    text = figures["flow-48"]
    assert "word 1 moved by the last word: 0\n" in text                 # exactly 0 with the mask
    assert "attention alone: words alike 0.21 -> 1.000" in text
    assert "every part on:   words alike 0.21 -> 0.818" in text
    assert ("residual add, no norms: words alike 0.996 after 24 blocks, 1.000 after 48; "
            "stream size 6.5e+06") in text
    assert ("residual add and FFN, no norms: words alike 0.967 after 24 blocks, 1.000 after 48; "
            "stream size 8.5e+09") in text
    assert ("residual add, no norms, small Wo and W_down: words alike 0.382 after 24 blocks, 0.596 after 48; "
            "stream size 1.7") in text
    assert ("residual add and FFN, no norms, small Wo and W_down: words alike 0.399 after 24 blocks, 0.541 after 48; "
            "stream size 1.6") in text
    assert "residual add and norms, no FFN: words alike 0.21 -> 0.887; stream size 7.18" in text
    assert "no causal mask:  word 1 moved by the last word: 0.34" in text


def test_flow_prose_is_what_the_numbers_show(figures):
    text = figures["flow-48"]
    before, after = numbers(line_with(text, "attention alone").split("stream size ")[1].split(";")[0])
    assert after < before                                               # 'the stream's size shrinks'
    full = numbers(line_with(text, "every part on"))[1]
    with_norms = numbers(line_with(text, "residual add and norms, no FFN"))[1]
    assert with_norms > full                                            # the FFN keeps them a little further apart
    masked = numbers(line_with(text, "no positions, mask on"))[-1]
    unmasked = numbers(line_with(text, "no positions, mask off"))[-1]
    assert masked > 0.1 and unmasked == 0                               # told apart only by the mask


def test_attention_alone_makes_one_vector_and_the_raw_residual_add_dwarfs_the_differences(figures, cells):
    """'at the top, the eight words are one vector, up to rounding (... rank 1)'; without the norms
    'They are not one vector: they still differ by tens of thousands or more, and the second
    singular value is a small fraction of the first, not rounding. What tells them apart is
    dwarfed, not lost.' Run through the flow lab's model, the configurations the lines name."""
    from labs.decoder import flow_model

    def apart(stream):
        s = np.linalg.svd(stream, compute_uv=False)
        return np.abs(stream - stream[0]).max(), s[1] / s[0]

    spread, second = apart(flow_model(48, residual=False, norms=False, ffn=False, final_norm=False).output)
    assert spread < 1e-12 and second < 1e-12                                 # one vector: rank 1
    for ffn in (False, True):
        spread, second = apart(flow_model(48, norms=False, ffn=ffn, final_norm=False).output)
        assert spread > 1e4 and 1e-4 < second < 0.05                         # apart, dwarfed
    text = figures["flow-48"]
    assert "second singular value / first 4.9e-16" in line_with(text, "attention alone")
    assert "largest difference 5.4e+04, second / first 0.0014" in line_with(text, "residual add, no norms:")
    prose_text = " ".join(prose(cells).split())
    for said in ("the eight words are one vector, up to rounding",
                 "They are not one vector: they still differ by tens of thousands or more",
                 "What tells them apart is dwarfed, not lost:",
                 "Dong et al. show that attention alone loses rank with depth and that skip connections prevent it"):
        assert said in prose_text, said


def _lab_streams(**parts):
    """The streams of the flow lab's sentence through its 48 blocks (seed 0), with the parts the
    lab's model would run (labs.decoder.layer_flow): checked against that model's sizes."""
    from labs.decoder.layer_flow import _stack, flow_inputs
    from labs.decoder import flow_model
    from lib.block import decoder

    on = {"norms": True, "ffn": True, "residual": True, "small_outputs": False, **parts}
    run = decoder(flow_inputs()[0], _stack(0, on["small_outputs"]), placement="pre" if on["norms"] else "none",
                  use_ffn=on["ffn"], use_residual=on["residual"], final_norm=False, norm="rms", activation="gelu")
    streams = np.array(run.streams)
    lab = flow_model(48, final_norm=False, **parts).sizes
    assert np.allclose([np.sqrt(np.mean(s ** 2)) for s in streams], lab, rtol=1e-12)
    return streams


def _shared_over_apart(stream):
    """The size of what every word shares (their mean) over the size of what tells them apart."""
    mean = stream.mean(axis=0)
    return np.sqrt(np.mean(mean ** 2)) / np.sqrt(np.mean((stream - mean) ** 2))


def test_the_residual_add_keeps_the_words_apart_while_each_block_adds_little(cells):
    """With the lab's weights and no norms, the residual add ends as alike as attention alone; with
    a norm before each part it keeps the words apart; and with no norm at all but Wo and W_down at
    1/sqrt(2 x 48) of the lab's size (GPT-2's rule), it keeps them further apart than every part on
    (0.28 to 0.6 against 0.82): the notebook teaches what holds in general. Run through the flow
    lab's own model, with the configurations named."""
    from labs.decoder import flow_model
    from labs.decoder.layer_flow import SMALL_OUTPUTS, _stack

    assert SMALL_OUTPUTS == pytest.approx(1 / np.sqrt(2 * 48))
    lab, small = _stack(0), _stack(0, small_outputs=True)
    for w, s in zip(lab, small):                                             # only Wo and W_down scaled
        assert np.allclose(s.Wo, SMALL_OUTPUTS * w.Wo) and np.allclose(s.W_down, SMALL_OUTPUTS * w.W_down)
        assert all(np.array_equal(getattr(s, k), getattr(w, k)) for k in ("Wq", "Wk", "Wv", "W_up"))
    alone = flow_model(48, residual=False, norms=False, ffn=False, final_norm=False)
    raw = flow_model(48, norms=False, ffn=False, final_norm=False)
    raw_ffn = flow_model(48, norms=False, final_norm=False)
    with_norms = flow_model(48, ffn=False)
    full = flow_model(48)
    assert alone.alike[-1] > 0.999
    for run in (raw, raw_ffn):
        assert run.alike[-1] > 0.999 and round(run.alike[-1], 3) == round(alone.alike[-1], 3)
        assert run.sizes[-1] > 1e6                                   # 'whose size reaches millions'
    assert with_norms.alike[-1] < 0.9 and full.alike[-1] < with_norms.alike[-1]
    assert with_norms.sizes[-1] < 10 and max(with_norms.alike) < 0.92     # apart at every depth
    for ffn in (False, True):                                           # no norm at all, small projections
        kept = flow_model(48, norms=False, ffn=ffn, final_norm=False, small_outputs=True)
        assert 0.25 < kept.alike[-1] < 0.6 < full.alike[-1]       # 'further apart than with every part on'
        assert kept.sizes[-1] < 2 and max(kept.alike) < 0.62
    norms_only = flow_model(48, residual=False)                          # the norms without the add: lost too
    assert norms_only.alike[-1] > 0.999
    text = " ".join(prose(cells).split())
    for gone in ("The residual add is the cure", "**The residual add alone is no cure.**",
                 "keeps them apart only with the norms", "**The residual add and the norms together keep the words apart.**"):
        assert gone not in text, gone
    for said in ("**With these weights, the residual add alone does not keep the words apart.**",
                 "**Two ways to keep the words apart.** Each stops what a block adds from growing with the stream.",
                 "Or output projections that start small, or at zero, as GPT-2's initialisation (the next section) "
                 "and Fixup (notebook 03) start them; ReZero, also in notebook 03, instead multiplies",
                 "the residual add keeps the words apart with **no norm at all**, further apart than with every part on",
                 "the residual add keeps them apart only while each block adds little next to the stream, which a "
                 "norm before each part or small output projections ensure"):
        assert said in text, said
    explanation = get_question("decoder-predict-collapse").explanation
    assert "The residual add together with the norms keeps them apart" not in explanation
    assert ("with the lab's weights and no norms, each block adds about as much as the stream holds" in explanation
            and "A norm before each part, or output projections that start small, keeps each addition small "
                "next to the stream, and the add then keeps the words apart" in explanation)


def test_without_the_norms_each_block_adds_about_as_much_as_the_stream_holds_and_small_outputs_add_little():
    """'with every matrix drawn at 1/sqrt(its number of rows) it adds about as much as the stream
    already holds' (the explanation: 'each block adds about as much as the stream holds'); with
    small Wo and W_down each block adds a small share of the stream."""
    for small, low, high in ((False, 0.3, 3.0), (True, 0.0, 0.2)):
        streams = _lab_streams(norms=False, small_outputs=small)
        added = [np.sqrt(np.mean((b - a) ** 2)) / np.sqrt(np.mean(a ** 2)) for a, b in zip(streams, streams[1:])]
        assert low < np.median(added) < high, (small, np.median(added))


def test_without_the_norms_what_the_words_share_outgrows_what_tells_them_apart():
    """'Every block then reads the raw stream, so what it adds grows with the stream ...; and the
    part every word shares grows far faster than the parts that tell them apart.' 'With the norms,
    every block reads a copy of size 1, so what it adds stays of the same order block after block.'"""
    raw = _lab_streams(norms=False, ffn=False)
    kept = _lab_streams(ffn=False)
    added_raw = [np.sqrt(np.mean((b - a) ** 2)) for a, b in zip(raw, raw[1:])]
    added_kept = [np.sqrt(np.mean((b - a) ** 2)) for a, b in zip(kept, kept[1:])]
    assert added_raw[-1] > 1e4 * added_raw[0]                           # grows with the stream
    assert max(added_kept) < 5 * min(added_kept)                        # stays of the same order
    assert _shared_over_apart(raw[-1]) > 100 * _shared_over_apart(raw[0])
    assert _shared_over_apart(kept[-1]) < 5
    assert _shared_over_apart(_lab_streams(norms=False)[-1]) > 50       # the FFN does not change that


def test_repeated_words_are_identical_only_without_positions_and_mask(cells):
    you_can = next(source(c) for c in cells if source(c).startswith("## You can now"))
    assert "no positions and no mask make repeated words identical" in " ".join(you_can.split())
    assert "no positions makes repeated words identical" not in you_can


# ---------------------------------------------------------------- near-identity

def test_near_identity_at_a_real_width(figures, cells):
    text = figures["near-identity-768"]
    gains = [numbers(line)[-1] for line in text.splitlines()[:3]]
    assert gains == [0.08, 0.55, 1.11]
    assert gain_per_matrix(0.02, 768) == pytest.approx(0.554, abs=1e-3)
    rows = {rule: numbers(line_with(text, label).split(label)[1]) for rule, label in RULES.items()}
    low_all, high_all, _s, end_all = rows["all"]
    low_gpt2, high_gpt2, _s, end_gpt2 = rows["gpt2"]
    assert low_all > 20 and end_all > 1.5                               # 'a large fraction', 'far'
    assert high_gpt2 < 10 and end_gpt2 < 1.1                             # 'less than a tenth'
    assert rows["zero"] == [0.0, 0.0, 1.0, 1.0]                         # exactly the identity
    assert high_gpt2 < low_all                                          # the order of the three rules
    text = prose(cells)
    assert "GPT-2 draws every matrix at a standard deviation of 0.02. Then" not in text
    assert "85 million random numbers" in text
    # the cell looks the run up (labs/decoder/precomputed.py), so the prose says so and asks no patience
    assert "give it a moment" not in text
    assert "the cell looks up the run's stored result" in " ".join(text.split())
    assert 12 * (4 * 768 ** 2 + 2 * 768 * 3072) == 84_934_656
    # 'on a stream of 8 tokens of size 1, in float32': the run the cell makes
    assert "on a stream of 8 tokens of size 1, in float32, started the three ways" in " ".join(text.split())
    (call,) = [line for c in cells if c["cell_type"] == "code" for line in source(c).splitlines()
               if "start_of_training(" in line]
    assert call == "runs = start_of_training(layers=12, d_model=768, d_ff=3072, heads=12, length=8, dtype=np.float32)"
    (imported,) = [line for c in cells if c["cell_type"] == "code" for line in source(c).splitlines()
                   if "import start_of_training" in line]
    assert imported.startswith("from labs.decoder import start_of_training")


def test_near_identity_is_measured_against_the_stream():
    """'GPT-2's own embedding also starts at 0.02 ... its first blocks at first write more than the
    stream holds.' A stream of tokens at 0.02 plus positions at 0.01 has RMS about 0.0224, in the
    setting of the cell (8 tokens, float32)."""
    run = start_of_training(rules=("gpt2",), stream_rms=np.sqrt(0.02 ** 2 + 0.01 ** 2), length=8, dtype=np.float32)["gpt2"]
    assert run.changes[0] > 1.0


def test_near_identity_at_the_toy_width(figures, cells):
    """'At 0.02 each block changes the stream by a few percent of its size, and the average length
    of a token hardly moves; at 0.2 the first block more than triples it.'"""
    text = figures["near-identity"]
    assert "weights at 0.02: average token length 1.3391 -> 1.3396 -> 1.3433 -> 1.3441 -> 1.3397" in text
    assert "each block changes the stream by 2.5%, 2.4%, 2.0%, 2.1% of its size" in text
    assert "weights at 0.2: average token length 1.3391 -> 4.7269" in text
    small, large = (numbers(line) for line in text.splitlines() if line.startswith("  each block"))
    assert all(1 <= share < 9 for share in small) and large[0] > 100   # a few percent; not at 0.2
    lengths = numbers(line_with(text, "weights at 0.2"))[1:]
    assert lengths[1] > 3 * lengths[0]
    assert "at 0.2 the first block more than triples it" in prose(cells)


def _c_rand(seed):
    """rand() of the C library the other setup runs on, written again here: a linear congruential
    generator, state x 214013 + 2531011 mod 2**32, bits 16 to 30 returned, RAND_MAX 32767."""
    state = seed
    while True:
        state = (state * 214013 + 2531011) % 2 ** 32
        yield (state >> 16) & 0x7FFF


def _other_setup():
    """The other near-identity setup, written independently of labs.decoder.near_identity (float32,
    as its C was): 4 tokens of 8 numbers, 4 pre-norm blocks of 2 heads, FFN width 32, RMSNorm
    without gain (eps 1e-5), tanh GELU, no mask; every weight (rand()/RAND_MAX * 2 - 1) * 0.1 after
    srand(42), block by block in the order WQ, WK, WV (2 heads x 4 x 8 each), WO (8 x 8), W1 (32 x 8),
    W2 (8 x 32)."""
    f32 = np.float32
    x = np.array([[1, 0.2, -0.3, 0.5, -0.1, 0.8, 0.3, -0.2], [0.3, 0.9, 0.1, -0.2, 0.6, 0.4, -0.1, 0.5],
                  [-0.1, 0.4, 0.8, 0.2, -0.5, 0.3, 0.7, 0.1], [0.6, -0.2, 0.5, 0.7, 0.3, -0.4, 0.2, 0.8]], f32)
    rand = _c_rand(42)
    shapes = [(2, 4, 8)] * 3 + [(8, 8), (32, 8), (8, 32)]

    def draw(shape):
        n = int(np.prod(shape))
        values = np.array([next(rand) for _ in range(n)], dtype=f32) / f32(32767)
        return ((values * f32(2) - f32(1)) * f32(0.1)).reshape(shape)

    def norm(h):
        mean_square = ((h.astype(np.float64) ** 2).sum(axis=-1, keepdims=True) / h.shape[-1]).astype(f32)
        return (h * (f32(1) / np.sqrt(mean_square + f32(1e-5)))).astype(f32)

    lengths, changes = [np.linalg.norm(x, axis=-1).mean()], []
    for _ in range(4):
        wq, wk, wv, wo, w1, w2 = (draw(shape) for shape in shapes)
        before = x
        n = norm(x)
        heads = []
        for h in range(2):
            q, k, v = n @ wq[h].T, n @ wk[h].T, n @ wv[h].T
            s = (q @ k.T) * (f32(1) / np.sqrt(f32(4)))
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            heads.append((e / e.sum(axis=-1, keepdims=True)) @ v)
        x = (x + np.concatenate(heads, axis=-1) @ wo.T).astype(f32)
        up = norm(x) @ w1.T
        hidden = f32(0.5) * up * (f32(1) + np.tanh(f32(0.7978846) * (up + f32(0.044715) * up * up * up)))
        x = (x + hidden.astype(f32) @ w2.T).astype(f32)
        lengths.append(np.linalg.norm(x, axis=-1).mean())
        changes.append(np.sqrt(((x - before) ** 2).mean()) / np.sqrt((before ** 2).mean()))
    return np.array(lengths), np.array(changes)


def test_the_other_setup_is_gone_from_the_notebook_and_kept_for_saved_notebooks(cells):
    """The second near-identity setup taught nothing the cells before it did not, and is gone; its
    function stays for notebooks saved with it, and still computes what it did (an independent
    rewriting of its C original)."""
    from labs.decoder import rand_demonstration

    lengths, changes = _other_setup()
    m = rand_demonstration()
    assert np.allclose(m.lengths, lengths, rtol=0, atol=1e-6) and np.allclose(m.relative, changes, atol=1e-6)
    text = prose(cells)
    assert "rand_demonstration" not in text and "Another small setup" not in text
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    assert not any("rand_demonstration" in c for c in code)


def test_hand_block(figures):
    text = figures["hand-block"]
    assert "input                  +0.00 +4.00" in text
    assert "add attention          -1.00 +5.00" in text
    assert "add FFN                -1.00 +7.00" in text
    distance = float(text.split("whole numbers: ")[1].split()[0])
    assert 0 < distance < 1e-4                                          # lib reproduces it to 1e-4


def test_hand_decoder_and_seven_norms(figures):
    text = figures["hand-decoder"]
    assert "stream after 1 block: -1.00 +7.00" in text
    assert "after the final norm: -1.00 +1.00" in text
    assert "norms: 2 per block x 3 blocks + 1 final = 7" in text


def test_final_norm_question_is_answered_by_the_cell_after_it():
    """Only a token of two equal numbers leaves LayerNorm as something other than +-[-1, 1]; the
    question asks which, so the examples above it (two different numbers each) do not answer it."""
    from lib.norm import layer_norm
    q = get_question("decoder-predict-final-norm")
    assert q.choices[q.answer] == "those whose two numbers are equal: they come out as [0, 0]"
    assert np.allclose(layer_norm(np.array([3.0, 3.0])), 0)
    assert np.allclose(layer_norm(np.array([-1.0, 7.0]), eps=0.0), [-1, 1])
    for pair in ([0.3, 5.0], [-2.0, -1.0], [9.0, 1.0]):             # any two different numbers
        assert np.allclose(np.abs(layer_norm(np.array(pair), eps=0.0)), 1)


def test_future_leak_replaces_the_decoder_blank_and_the_old_one_still_checks():
    old = get_exercise("decoder-stack")
    assert old.retired and old.id not in {ex.id for ex in all_exercises()}
    assert try_variant(old).passed
    assert get_question("decoder-predict-zero-ffn")                   # saved notebooks still ask it


def test_future_leak_on_the_decoder_with_and_without_the_mask():
    from engine.core.cell import run_cell
    from labs.decoder.layer_flow import FLOW_D, FLOW_FF, FLOW_HEADS, flow_inputs
    from lib.block import decoder, random_stack

    ex = get_exercise("future-leak-nudge")
    future_leak = run_cell(ex.solution_source, ex.context)["future_leak"]
    blocks = random_stack(12, FLOW_D, FLOW_FF, FLOW_HEADS, seed=0)
    sentence = flow_inputs()[0]
    masked = np.array(future_leak(lambda x: decoder(x, blocks).output, sentence))
    unmasked = np.array(future_leak(lambda x: decoder(x, blocks, causal=False).output, sentence))
    assert np.all(masked == 0)                                          # exactly 0, not small
    assert np.all(unmasked[:-1] > 0.1) and unmasked[-1] == 0
    assert future_leak(lambda x: decoder(x, blocks).output, sentence) == list(masked)   # the same every run


def test_the_nudge_finds_a_leaking_layer_norm_model_that_a_shift_of_1_misses(cells):
    """A LayerNorm decoder without the mask reads the future: the nudge shows it, while adding 1
    to every number of the later tokens (the retired exercise's test) sees only rounding, as the
    notebook's sentence above the cell says; and the check rejects that old answer, naming the cause."""
    from engine.core.cell import run_cell
    from engine.core.checker import evaluate
    from labs.decoder.layer_flow import FLOW_D, FLOW_FF, FLOW_HEADS, flow_inputs
    from lib.block import decoder, random_stack

    new, old = get_exercise("future-leak-nudge"), get_exercise("future-leak")
    assert old.retired and not new.retired and new.name == old.name
    nudged = run_cell(new.solution_source, new.context)["future_leak"]
    shifted = run_cell(old.solution_source, old.context)["future_leak"]
    blocks = random_stack(12, FLOW_D, FLOW_FF, FLOW_HEADS, seed=0)
    sentence = flow_inputs()[0]
    layer = lambda x: decoder(x, blocks, causal=False, norm="layer").output   # noqa: E731
    assert min(nudged(layer, sentence)[:-1]) > 0.1
    assert max(shifted(layer, sentence)) < 1e-12
    assert max(nudged(lambda x: decoder(x, blocks, norm="layer").output, sentence)) == 0   # with the mask
    assert "so a shift of the same size in every number never reaches the model" in prose(cells)
    old_answer = new.variant_source({0: "changed[i + 1:] += 1.0"})
    feedback = evaluate(new, run_cell(old_answer, new.context, new.id))
    assert not feedback.passed and "LayerNorm subtracts" in feedback.text()
    assert "layer norm" in new.contract.edges


# ---------------------------------------------------------------- counting

def test_count_768(figures):
    text = figures["count-768"]
    assert "total: 109,529,856 parameters" in text
    for line in ("embedding  22.4%", "attention  25.8%", "ffn        51.7%"):
        assert line in text
    assert "the norms hold 19,200 of them" in text
    assert "memory at 2 bytes per number: 208.9 MiB" in text


def test_depth_width(figures):
    text = figures["depth-width"]
    assert "24 blocks:           194.5 M  (x1.78)" in text
    assert "388.9 M  (x3.55)" in text


def test_depth_costs_time_width_does_not(figures, cells):
    """Steps in sequence: doubling depth doubles them, doubling width leaves them alone. Bytes read
    per token when one text is generated: 'twice the width costs about twice the time that twice
    the depth costs' (time following the bytes of the weights)."""
    rows = {line[:26].strip(): numbers(line[26:]) for line in figures["depth-latency"].splitlines()[1:]}
    assert rows["as above"] == [109.5, 219, 208.9, 72]
    assert rows["24 blocks"][3] == 2 * rows["as above"][3]             # doubling depth doubles the sequence
    assert rows["width 1,536"][3] == rows["as above"][3]               # doubling width leaves it alone
    deeper = rows["24 blocks"][2] / rows["as above"][2]
    wider = rows["width 1,536"][2] / rows["as above"][2]
    assert deeper == pytest.approx(1.78, abs=0.01) and wider == pytest.approx(3.55, abs=0.01)
    assert 1.9 < (wider - 1) / (deeper - 1) and 1.9 < wider / deeper < 2.1
    # 'time follows the arithmetic, and twice the width costs about twice the time that twice the
    # depth costs (the operations per token in the table)'
    assert 1.9 < rows["width 1,536"][1] / rows["24 blocks"][1] < 2.1
    text = " ".join(prose(cells).split())
    assert ("When one text is generated, each new token must read every weight from memory" in text
            and "the time per token then follows the bytes of the weights, so twice the width costs about twice "
                "the time that twice the depth costs" in text)
    assert "time follows the arithmetic, and twice the width costs about twice the time that twice the depth" in text
    assert "thousands of cores at once" not in text


def test_compute_per_token(figures):
    text = figures["compute-per-token"]
    ours, twice = numbers(line_with(text, "the model above"))[0], numbers(line_with(text, "the model above"))[-1]
    assert ours == twice == 219                                         # about 2 x parameters
    shares = [numbers(line)[-1] for line in text.splitlines() if "at position" in line]
    assert shares[0] < 5 and shares[-1] > 100                          # small when short, overtakes when long
    assert numbers(line_with(text, "scores and mixing over a whole text"))[-1] == pytest.approx(4.0, abs=0.05)
    assert numbers(line_with(text, "training"))[0] == 657


def test_weight_tying(figures):
    rows = {line[:16].strip(): line for line in figures["weight-tying"].splitlines()}
    assert "tying saves 24,576,000 (18.3%)" in rows["the model above"]
    assert "tying saves 38,597,376 (23.7%)" in rows["GPT-2 Small"]
    assert "ships untied" in rows["LLaMA-7B"] and not REAL_MODELS["LLaMA-7B"].config.tied
    assert REAL_MODELS["GPT-2 Small"].config.tied


def test_gpt2_gap(figures):
    text = figures["gpt2-gap"]
    assert "counted the simple way: 85.0 M (published 124 M)" in text
    assert "50,257 x 768:           38.6 M" in text
    assert "blocks + embedding:                      123.6 M" in text
    assert "the last three add 889,344, 0.71% of the full count" in text   # 'the last fraction of a percent'
    gpt2 = REAL_MODELS["GPT-2 Small"].config
    simple = count_parameters(simple_version(gpt2))
    rest = count_parameters(gpt2).total - simple.blocks - simple.embedding
    assert get_question("decoder-predict-gpt2-gap").explanation == (
        f"{gpt2.vocab:,} \u00d7 {gpt2.d_model} is about {simple.embedding / 1e6:.1f} M numbers, almost the whole "
        f"gap. The position table ({gpt2.context:,} \u00d7 {gpt2.d_model}), the biases and LayerNorm's shifts "
        f"add the remaining {rest:,}.")


def test_real_models(figures):
    rows = {line[:15].strip(): line[15:].split() for line in figures["real-models"].splitlines()[1:]}
    assert rows["GPT-2 Small"] == ["123.6", "M", "124.4", "M", "124.0", "M"]
    assert rows["DeepSeek-V3"] == ["29.6", "B", "671.0", "B", "671.0", "B"]   # the simple count does not close
    assert rows["per token"] == ["37.6", "B", "37.0", "B"]
    assert set(rows) >= {"GPT-2 Medium", "GPT-2 Large", "LLaMA-7B", "SmolLM2-360M"}


def test_real_models_close_as_the_prose_says():
    for name in ("GPT-2 Medium", "GPT-2 Large"):                      # 'within a few tenths of a percent'
        real = REAL_MODELS[name]
        assert abs(count_parameters(real.config).total / real.published - 1) < 0.003
    llama = REAL_MODELS["LLaMA-7B"]                                     # 'within one percent'
    assert abs(count_parameters(llama.config).total / llama.published - 1) < 0.01


def test_the_prose_on_smollm2_and_deepseek_matches_their_configurations(cells):
    """'15 query heads share 5 sets of keys and values, so Wk and Wv are a third as wide';
    '256 FFNs per block plus one shared, of which each token uses 9'; 'a few percent'."""
    text = " ".join(prose(cells).split())
    smol = REAL_MODELS["SmolLM2-360M"].config
    assert f"{smol.heads} query heads share {smol.kv_heads} sets" in text and smol.kv_heads * 3 == smol.heads
    deepseek = REAL_MODELS["DeepSeek-V3"]
    config = deepseek.config
    assert (f"{config.experts} FFNs per block plus one shared, of which each token uses "
            f"{config.top_k + config.shared_experts}") in text and config.shared_experts == 1
    simple = count_parameters(dataclasses.replace(config, experts=0, top_k=0, shared_experts=0,
                                                  expert_d_ff=None, dense_layers=0)).total
    assert 0.01 < simple / deepseek.published < 0.1                  # 'a few percent of the published size'


# ---------------------------------------------------------------- memory beyond the weights

def test_kv_cache(figures):
    rows = {line[:15].strip(): line[15:].split() for line in figures["kv-cache"].splitlines()[1:7]}
    assert rows["GPT-2 Small"] == ["18,432", "36.0", "KiB", "1,024", "36.0", "MiB", "237.4", "MiB", "6.6"]
    assert rows["LLaMA-7B"] == ["262,144", "512.0", "KiB", "2,048", "1.0", "GiB", "12.6", "GiB", "12.6"]
    assert rows["SmolLM2-360M"] == ["20,480", "40.0", "KiB", "8,192", "320.0", "MiB", "690.1", "MiB", "2.2"]
    assert rows["DeepSeek-V3"] == ["35,136", "68.6", "KiB", "131,072", "8.6", "GiB", "1.2", "TiB", "145.7"]
    assert set(rows) == set(REAL_MODELS)
    text = figures["kv-cache"]
    assert "SmolLM2-360M with a set of keys and values per head: cache x3.00, parameters x1.11" in text
    assert ("DeepSeek-V3 with a key and a value for each of its 128 heads (keys of 128 + 64, values of 128): "
            "40,960 numbers per block, cache x71.1") in text
    assert "DeepSeek-V3's weights at one byte a number (FP8, as it is published): 624.9 GiB" in text


def test_the_kv_cache_prose_is_what_the_cell_printed(figures, cells):
    """'about a dozen texts at full length hold as much cache as its weights take'; 'with a set per
    head its cache would be 3 times larger, while its count grows by only about a tenth';
    '576 numbers, many times fewer than a key and a value as wide as its stream'; '15 heads share
    5 sets'; the cache is 'a key and a value per block, of the key/value heads only'."""
    from lib.params import kv_cache_per_token

    text = " ".join(prose(cells).split())
    llama = REAL_MODELS["LLaMA-7B"].config
    contexts = count_parameters(llama).total * 2 / (kv_cache_per_token(llama) * 2 * llama.context)
    assert 11 <= contexts <= 13.5 and "about a dozen texts at full length" in text
    smol = REAL_MODELS["SmolLM2-360M"].config
    every_head = dataclasses.replace(smol, kv_heads=None)
    assert kv_cache_per_token(every_head) == 3 * kv_cache_per_token(smol)
    growth = count_parameters(every_head).total / count_parameters(smol).total - 1
    assert 0.08 < growth < 0.13 and "its cache would be 3 times larger, while its count grows by only about a tenth" in text
    assert f"{smol.heads} heads share {smol.kv_heads} sets" in text
    deepseek = REAL_MODELS["DeepSeek-V3"].config
    assert deepseek.cache_per_block == 576 and "576 numbers per block" in text and f"all {deepseek.heads} heads" in text
    own = kv_cache_per_token(dataclasses.replace(deepseek, cache_per_block=deepseek.heads * (128 + 64 + 128)))
    assert own // deepseek.layers == 128 * (192 + 128) == 40_960
    assert 65 < own / kv_cache_per_token(deepseek) < 75 and "would keep about seventy times as many" in text
    assert "many times fewer than a key and a value as wide" not in text
    assert "published with nearly all its weights in FP8, one byte a number, about half that" in text
    assert "The weights are not all a model keeps in memory." in text


def test_the_kv_cache_question_is_the_configuration_multiplied_out():
    from lib.params import kv_cache_per_token

    q = get_question("decoder-number-kv-cache")
    llama = REAL_MODELS["LLaMA-7B"].config
    assert q.answer == kv_cache_per_token(llama) * 2 == 2 * llama.layers * llama.d_model * 2 == 524_288
    assert (llama.layers, llama.d_model, llama.heads, llama.kv_heads) == (32, 4096, 32, None)   # the prompt's sizes
    assert f"2 × {llama.layers} × {llama.d_model:,} × 2 = {q.answer:,} bytes, half a MiB" in q.explanation
    assert q.answer == 2 ** 20 / 2
    assert "Give a number of bytes, not of KiB or MiB." in q.prompt                 # the unit expected


def test_training_memory(figures, cells):
    """'The same number of bytes per parameter either way (the last column): four times the
    weights in float32, eight times the weights in bfloat16'."""
    rows = {line[:28].strip(): line[28:].split() for line in figures["training-memory"].splitlines()[1:]}
    assert rows["LLaMA-7B, float32"] == ["25.1", "GiB", "25.1", "GiB", "0", "bytes", "50.2", "GiB", "100.4", "GiB",
                                         "16", "bytes"]
    assert rows["LLaMA-7B, bfloat16"] == ["12.6", "GiB", "12.6", "GiB", "25.1", "GiB", "50.2", "GiB", "100.4", "GiB",
                                          "16", "bytes"]
    assert rows["the model above, float32"][-4:] == ["1.6", "GiB", "16", "bytes"]
    assert len(rows) == 6 and all(row[-2:] == ["16", "bytes"] for row in rows.values())
    assert 16 / 4 == 4 and 16 / 2 == 8
    text = " ".join(prose(cells).split())
    assert "four times the weights in float32, eight times the weights in bfloat16" in text
    q = get_question("decoder-predict-training-memory")
    assert q.choices[q.answer] == "four times as much in all"


# ---------------------------------------------------------------- the exercises that replaced transcription

def test_the_reworked_exercises_replace_the_old_ones_which_still_check():
    for old, new in (("causal-weights", "cached-causal-weights"), ("model-parameters", "grouped-parameters")):
        retired = get_exercise(old)
        assert retired.retired and old not in {ex.id for ex in all_exercises()}
        assert try_variant(retired).passed                               # saved notebooks still pass
        assert get_exercise(new).name == retired.name                   # the same function name in the notebook
    from exercises.definitions.trained import PARTS
    assert "cached-causal-weights" in PARTS and "causal-weights" not in PARTS


def test_the_cached_exercise_needs_the_shift_the_prose_does_not_write():
    """The prose above the exercise says where the queries sit, not the diagonal's offset; the
    solution's square case is the mask the notebook printed."""
    from lib.attention import causal_mask
    from engine.core.cell import run_cell

    ex = get_exercise("cached-causal-weights")
    weigh = run_cell(ex.solution_source, ex.context)["causal_weights"]
    square = np.arange(16.0).reshape(4, 4)
    assert np.array_equal(weigh(square) > 0, causal_mask(4))
    assert np.array_equal(weigh(square[-2:]), weigh(square)[-2:])
    index = next(i for i, c in enumerate(json.loads(PATH.read_text(encoding="utf-8"))["cells"])
                 if c["metadata"].get("course", {}).get("exercise") == ex.id)
    above = " ".join(source(c) for c in json.loads(PATH.read_text(encoding="utf-8"))["cells"][:index])
    assert "Lk - Lq" not in above and "Lk − Lq" not in above


def test_the_grouped_exercise_reduces_to_the_plain_count():
    from engine.core.cell import run_cell

    ex = get_exercise("grouped-parameters")
    count = run_cell(ex.solution_source, ex.context)["model_parameters"]
    assert count(768, 12, 3072, 32000, 12, 12) == 109_529_856               # every head its own set
    assert count(768, 12, 3072, 32000, 12, 4) == 100_092_672
    smol = REAL_MODELS["SmolLM2-360M"].config
    plain_ffn = dataclasses.replace(smol, gated=False)
    assert count(smol.d_model, smol.layers, smol.d_ff, smol.vocab, smol.heads, smol.kv_heads) == \
        count_parameters(plain_ffn).total


def test_the_intro_names_the_labs_that_run_the_learners_functions_without_nested_brackets(cells):
    intro = " ".join(source(next(c for c in cells if source(c).startswith("## Already know this?"))).split())
    assert "(the layer-flow lab, and the parameter calculator for models with a plain FFN)" in intro
    assert not re.search(r"\([^()]*\(", intro)
    from labs.decoder.calculator import PARAMETERS_USE
    from labs.decoder.layer_flow import CAUSAL_USE
    assert (CAUSAL_USE.exercise, PARAMETERS_USE.exercise) == ("cached-causal-weights", "grouped-parameters")


# ---------------------------------------------------------------- structure, examples, spoilers

def test_examples_quoted_by_the_feedback_are_in_sight_above_their_checks(cells):
    from exercises.definitions.decoder import CACHED_EXAMPLE

    index = {c["metadata"].get("course", {}).get("exercise"): i for i, c in enumerate(cells)
             if "exercise" in c["metadata"].get("tags", [])}
    before = {ex: "\n".join(source(c) for c in cells[:i]) for ex, i in index.items()}
    namespace = {"np": np}
    exec(next(source(c) for c in cells if source(c).startswith("example_scores =")), namespace)
    assert np.array_equal(namespace["example_scores"], CACHED_EXAMPLE)    # the check's example, as shown
    assert "example_scores = np.array([[1.0, 2.0, 0.5, -1.0, 0.3]," in before["cached-causal-weights"]
    assert "def whole_text_mean(x):" in before["future-leak-nudge"] and "np.arange(12.0).reshape(4, 3)" in before["future-leak-nudge"]
    assert "d = 768" in before["grouped-parameters"] and "32,000" in before["grouped-parameters"]
    assert "`model_parameters(768, 12, 3072, 32000, 12, 4)`" in before["grouped-parameters"]
    for ex_id, i in index.items():
        assert "<details>" not in source(cells[i - 1]) + source(cells[i - 2]), f"a box right above {ex_id}"


def test_structure(cells):
    nb = json.loads(PATH.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    assert nb["metadata"]["kernelspec"] == {"name": "python", "display_name": "Python (Pyodide)",
                                            "language": "python"}
    code = [source(c) for c in cells if c["cell_type"] == "code"]
    for lab in ("six_steps_lab()", "flow_lab()", "calculator_lab()"):
        assert any(lab in s for s in code), lab
    questions = ("decoder-predict-size", "decoder-shape-scores", "decoder-predict-collapse",
                 "decoder-predict-final-norm", "decoder-number-norms", "decoder-number-width",
                 "decoder-predict-gpt2-gap", "decoder-number-kv-cache", "decoder-predict-training-memory")
    for question in questions:
        assert f'ask("{question}")' in code
    assert 'ask("decoder-predict-zero-ffn")' not in code                # the duplicate of 03's question
    exercises = [c["metadata"]["course"]["exercise"] for c in cells if "exercise" in c["metadata"].get("tags", [])]
    assert exercises == ["cached-causal-weights", "future-leak-nudge", "grouped-parameters"]
    first_code = next(c for c in cells if c["cell_type"] == "code")
    assert first_code["metadata"]["tags"] == ["setup"]
    assert code.index('ask("decoder-predict-size")') < next(i for i, s in enumerate(code) if "six_steps_lab()" in s)
    assert code.index('ask("decoder-predict-collapse")') < next(i for i, s in enumerate(code) if "flow_lab()" in s)
    assert code.index('ask("decoder-predict-final-norm")') < next(i for i, s in enumerate(code) if
                                                                  "lib.block.decoder(token" in s)
    for question, answered_by in (("decoder-number-kv-cache", "kv_cache_per_token(c)"),
                                  ("decoder-predict-training-memory", "training_memory(n, nbytes)"),
                                  ("decoder-number-kv-cache", "calculator_lab()"),
                                  ("decoder-predict-training-memory", "calculator_lab()")):
        assert code.index(f'ask("{question}")') < next(i for i, s in enumerate(code) if answered_by in s)
    figures = {c["metadata"].get("course", {}).get("figure") for c in cells if c["cell_type"] == "code"}
    assert FIGURES <= figures
    text = prose(cells)
    for typed in ("0.74", "2.05", "0.12, -0.58", "[-1, 7]", "109,529,856", "22.4", "25.8", "51.7", "19,200",
                  "208.9", "194", "389", "85.0", "38.6", "123.6", "671", "37 B", "0.818", "1.3391", "889,344",
                  "454", "0.051", "219", "0.996", "0.887", "6.5e", "8.5e", "1.3809", "2.5%", "6.1%", "524,288",
                  "512.0", "12.6", "100.4", "36.0", "x3.00", "24.9", "91%", "71.1", "40,960", "624.9", "0.596",
                  "0.541", "0.0014"):
        assert not re.search(r"(?<![\d.,])" + re.escape(typed) + r"(?![\d])", text), f"figure {typed} typed in prose"
    assert "syllabus" not in json.dumps(cells) and "seed 001" not in json.dumps(cells)
    assert "You can now" in text and "(05_trained_model.ipynb)" in text
    assert source(cells[-2]).startswith("## References") and "Vaswani" in source(cells[-2])


# ---------------------------------------------------------------- sentences made exact

def test_causal_row_4_puts_most_of_its_weight_on_token_1(cells):
    """'token 4 may read four tokens ... and here puts most of its weight on token 1 (row 4)'."""
    import lib.block
    from lib.attention import attention
    from lib.norm import rms_norm
    X, weights = lib.block.six_step_setup()
    _, masked = attention(rms_norm(X, eps=0.0), weights.Wq, weights.Wk, weights.Wv, weights.Wo,
                          causal=True, return_weights=True)
    row = masked[0][3]
    assert np.all(row > 0) and row.argmax() == 0 and row[0] > 0.5       # all four read, token 1 most
    text = prose(cells)
    assert "puts most of its weight on token 1 (row 4)" in text
    assert "shares its weight among all four" not in text


def test_the_raw_stream_reaches_millions_and_billions_with_the_ffn(cells):
    """'whose size the lines above print: millions without the FFN, billions with it'."""
    from labs.decoder import flow_model
    sizes = [flow_model(48, norms=False, ffn=ffn, final_norm=False).sizes[-1] for ffn in (False, True)]
    assert 1e6 <= sizes[0] < 1e9 <= sizes[1] < 1e12
    assert "millions without the FFN, billions with it" in prose(cells)


def test_depth_is_linear_and_width_nearly_quadratic(cells):
    """'twice the blocks less than doubles the count, twice the width nearly quadruples it'."""
    from lib.params import ModelConfig
    config = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000)
    total = count_parameters(config).total
    deeper = count_parameters(dataclasses.replace(config, layers=24)).total / total
    wider = count_parameters(dataclasses.replace(config, d_model=1536, d_ff=6144)).total / total
    assert 1.5 < deeper < 2 and 3.5 < wider < 4
    text = prose(cells)
    assert "depth is linear and width nearly quadratic:** twice the blocks less than doubles" in text
    assert "depth is cheap and width is quadratic" not in text


def test_latent_cache_is_a_512_latent_and_a_64_rope_key(cells):
    config = REAL_MODELS["DeepSeek-V3"].config
    assert config.cache_per_block == 512 + 64 == 576
    text = prose(cells)
    assert "a compressed latent of 512 and a RoPE key of 64 shared by all heads" in text
    assert "one compressed latent of 512 numbers for the keys and values of all 128 heads and one RoPE key of 64" in text


def test_plain_wording_fixes(cells):
    text = prose(cells)
    for old in ("a full share of weight", "the causal mask alone;", "`rand()`", "NumPy's.",
                "the token's own numbers)", "32,000 words", "| biases | in every matrix |",
                "only change from an encoder block;"):
        assert old not in text, old
    for new in ("the causal mask removed with every other part on;",
                "Q = K = V = the normed copy of the token", "a vocabulary of 32,000 tokens",
                "| biases | in the FFN's two matrices", "only change from an encoder block of this same design",
                "keeps its own queries and its width, d / heads numbers"):
        assert new in text, new


def test_training_memory_question_counts_in_all_and_mixed_precision_saves_the_activations():
    from exercises.definitions.questions.decoder import FLOAT32_TRAINING, MIXED_TRAINING
    question = get_question("decoder-predict-training-memory")
    assert FLOAT32_TRAINING == MIXED_TRAINING == 16 == 4 * 4                  # four float32 numbers per weight
    assert question.choices[question.answer] == "four times as much in all"
    assert "in all (weights included)" in question.prompt
    assert "saves nothing" not in question.explanation and "does not shrink this" in question.explanation
    assert "Computing in 16 bits saves elsewhere: the activations, and time." in question.explanation


def test_gpt2_gap_choices_each_carry_their_numbers():
    """Every choice gives its own figures; the simple count is about 85 M, as the last one says."""
    question = get_question("decoder-predict-gpt2-gap")
    assert all(re.search(r"\d", choice) for choice in question.choices)
    d, layers, d_ff = 768, 12, 3072
    simple = layers * (4 * d * d + 2 * d * d_ff + 2 * d)
    assert round(simple / 1e6) == 85 and "about 85 M" in question.choices[3]
    assert "4 · 768 + 3,072 + 768" in question.choices[1]


def test_flow_verdict_without_positions_and_mask_describes_the_plotted_run():
    """With positions and the mask both off (and another part), the copies are identical in the
    plotted run, and the positions sentence says so instead of crediting the mask."""
    from labs.decoder import flow_model
    for extra in ({}, {"ffn": False}):
        run = flow_model(12, positions=False, causal=False, **extra)
        sentence = run.sentences["positions"]
        assert run.copies == 0
        assert "come out identical" in sentence and "causal mask lets" not in sentence
    masked = flow_model(12, positions=False, ffn=False).sentences["positions"]
    assert "causal mask lets word 5 read" in masked                # the mask is on in that run


def test_the_cached_exercise_s_steps_are_hints_after_a_try_not_a_box_beside_it(cells):
    """The box 'If you are stuck' gave the whole solution right after the exercise, before a first
    try; its steps are the hint ladder's (which never gives a fill), and the solution opens after
    a try."""
    text = " ".join(prose(cells).split())
    assert "If you are stuck" not in text and "j ≤ i + Lk − Lq" not in text
    ex = get_exercise("cached-causal-weights")
    ladder = " ".join(ex.hints)
    assert "query i is token i + Lk - Lq" in ladder and "np.tril(grid, k)" in ladder
    assert "A score of 0 does not do it: e^0 = 1" in ladder
    assert not any(fill in ladder for fill in ex.solution)


def test_the_skip_ahead_set_asks_what_the_notebook_teaches_in_new_cases():
    """Five questions in other numbers than the notebook's: score shapes, the mask after a cache,
    a grouped block's count, what makes a block start near the identity, a KV cache's bytes; no
    choice more detailed than the others; the numbers are lib.params' own."""
    from exercises.definitions.questions.decoder import SKIP_AHEAD
    from lib.initialisation import gain_per_matrix
    from lib.params import ModelConfig, block_parameters
    ids = [q.id for q in SKIP_AHEAD]
    assert ids == ["decoder-out-scores-shape", "decoder-out-cached", "decoder-out-grouped-block",
                   "decoder-out-identity", "decoder-out-kv-bytes"]
    by_id = {q.id: q for q in SKIP_AHEAD}
    grouped = block_parameters(ModelConfig(d_model=512, layers=1, d_ff=2048, vocab=1, heads=8, kv_heads=2)).total
    assert by_id["decoder-out-grouped-block"].answer == grouped == 2 * 512 * 512 + 2 * 512 * 128 + 2 * 512 * 2048 + 2 * 512
    assert by_id["decoder-out-kv-bytes"].answer == 2 * 24 * 1024 * 2 == 98_304
    assert gain_per_matrix(0.02, 3072) > 1 > gain_per_matrix(0.02, 768)     # 'not small at a width of a few thousand'
    for q in SKIP_AHEAD:
        if q.kind == "predict":
            lengths = [len(c) for c in q.choices]
            assert max(lengths) < 1.7 * min(lengths), q.id


def test_gpt2_s_published_sizes_are_the_recount_and_the_paper_s_are_named(cells):
    """'For GPT-2 that is the size counted from its released weights (124, 355 and 774 M); its paper
    gave 117, 345 and 762 M'."""
    sizes = [REAL_MODELS[f"GPT-2 {name}"].published / 1e6 for name in ("Small", "Medium", "Large")]
    assert sizes == [124, 355, 774]
    assert "(124, 355 and 774 M); its paper gave 117, 345 and 762 M" in " ".join(prose(cells).split())


def test_new_tokens_after_a_cache_take_rope_from_the_cache_s_length(cells):
    """'a new token's query and key are turned for its place in the whole text, the cache's length
    onwards ...: turned from 0, every score between a new token and a cached one would read the
    wrong distance'. Placed after the cached-causal-weights check."""
    from lib.positional import rope
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 5, 8))                   # a text of 5 tokens: 3 cached, 2 new
    whole = rope(q) @ rope(k).T
    cached = rope(k[:3])
    right = rope(q[3:], offset=3) @ np.vstack([cached, rope(k[3:], offset=3)]).T
    wrong = rope(q[3:]) @ np.vstack([cached, rope(k[3:])]).T
    assert np.allclose(right, whole[3:])
    assert not np.any(np.isclose(wrong[:, :3], whole[3:, :3])) and np.allclose(wrong[:, 3:], whole[3:, 3:])
    sources = ["".join(c["source"]) for c in cells]
    said = next(i for i, t in enumerate(sources) if t.startswith("A cache asks the same of the positions."))
    assert said > sources.index('check("cached-causal-weights")')


def test_the_parallel_block_is_four_steps_in_a_row_and_computes_both_parts_from_one_norm(cells):
    """'GPT-J and PaLM run attention and the FFN side by side on the same normalised stream ... a
    block is four steps in a row instead of six': attention's products (queries, keys and values
    together; the scores; the mix; Wo) against the FFN's (W_up; W_down), the longer of the two."""
    attention_steps, ffn_steps = 4, 2
    assert attention_steps + ffn_steps == 6 and max(attention_steps, ffn_steps) == 4
    box = " ".join(next("".join(c["source"]) for c in cells if "Deeper: depth costs time" in "".join(c["source"])).split())
    assert "(queries, keys and values together; the scores; the mix of values; Wo; W_up; W_down), six steps" in box
    assert "a block is four steps in a row instead of six" in box

