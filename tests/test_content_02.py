"""Notebook 02: the syllabus figures, computed by its cells, pinned; the lab and exercise cells in
place; each sentence that gives a reason checked by running the configuration it names."""

import json
import re

import numpy as np
import pytest

from conftest import CONTENT
from labs.decoder.models import REAL_MODELS
from labs.ffn.router import router_scores
from lib.ffn import collapse, ffn, gelu, relu, silu as lib_silu, worked_example
from lib.moe import RULES, mixture_of_experts, route
from lib.params import ModelConfig, block_parameters, ffn_parameters, ffn_width, gated_width

NAME = "02_feed_forward.ipynb"

PINNED = {
    "hidden-units": ["hidden layer shape: (3, 4)", "cat before ReLU: [2.0, -2.0, 1.0, 0.0]",
                     "cat's units on: 2 of 4"],
    "cat-alone": ["exactly the same: True"],
    "collapse": ["W_up @ W_down = [[1.5, -0.5], [1.5, 0.5]]", "b_up @ W_down + b_down = [-2.0, 0.0]",
                 "largest difference on the three tokens: 0.0\n",
                 "two FFNs in a row against x @ (W @ W) + (b @ W + b): 0.0\n"],
    "ffn-widths": ["d = 960, FFN 1 x attention: plain width 1,920, gated width 1,280",
                   "d = 960, FFN 2 x attention: plain width 3,840, gated width 2,560",
                   "SmolLM2-360M, d = 960: released gated width 2,560",
                   "its own attention (15 query heads sharing 5 key/value heads): 2,457,600; "
                   "its FFN: 7,372,800, x3.00 that"],
    "routing-rules": ["A: top 2, then a softmax over the 2              expert 0: 0.875, expert 2: 0.125  (sum 1.000)",
                      "B: softmax over all 8, keep the top 2            expert 0: 0.725, expert 2: 0.103  (sum 0.828)",
                      "C: sigmoid, keep the top 2, divide by their sum  expert 0: 0.597, expert 2: 0.403  (sum 1.000)",
                      "one expert kept, rule A: its weight runs from 1.000 to 1.000 over 4,096 tokens"],
    "shared-expert": ["weights of experts 0 to 7, then the shared one: [0.597, 0.0, 0.403, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]",
                      "a token runs 8 routed + 1 shared = 9",
                      "in each of its 58 mixture blocks (the first 3 of 61 are dense)"],
    "block-768": ["768 x 3,072: 2,359,296", "attention: 2,359,296", "FFN: 4,718,592", "norms: 1,536",
                  "one block: 7,079,424", "attention 33.3%, FFN 66.7%"],
    "toy-ffn": ["= 162"],
    "silu": ["silu(-3) = -0.14", "silu(0) = 0.00", "silu(3) = 2.86", "lowest: silu(-1.28) = -0.28"],
    "gated-width": ["d_ff = 3,072:  4,718,592", "d_ff = 2,048:  4,718,592", "multiple of 32: 352",
                    "gated FFN, d_ff = 3,072:  7,077,888  (x1.50 the plain count)",
                    "plain at 3,072 9,437,184, gated at 2,048 9,437,184"],
    "ffn-flops": ["plain FFN at 768: 9,437,184 FLOPs per token, 2 x its 4,718,592 weights"],
    "llama-width": ["d = 4,096: 8/3 x d = 10,922.67, rounded up to a multiple of 256: 11,008 (released: 11,008)"],
    "router-shares": ["expert 0: share 0.875", "expert 2: share 0.125"],
    "moe-counts": ["40,115,712 stored, 11,804,160 used per token", "506 M stored, 166 M used per token",
                   "dense 209 MiB", "965 MiB (2 bytes)", "483 MiB (1 byte)",
                   "stored x4.62, used per token x1.52, FFN weights a token runs x2.00",
                   "the router: 6,144 numbers per block",
                   "with a separate output layer (untied): stored x3.96"],
    "router-balance": ["fair share 1,024"],
    "bilinear": ["largest |f(2x) - 4 f(x)| 0.0e+00"],
}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


@pytest.mark.parametrize("figure", sorted(PINNED))
def test_figure_is_computed_and_pinned(figures, figure):
    assert figure in figures, f"no cell carries the figure {figure!r}"
    for text in PINNED[figure]:
        assert text in figures[figure], f"{text!r} missing from:\n{figures[figure]}"


def test_balancing_evens_out_the_router(figures):
    lines = [line for line in figures["router-balance"].splitlines() if line.startswith("strength")]
    spreads = []
    for line in lines:
        low, high = (int(n.replace(",", "")) for n in re.search(r"from ([\d,]+) to ([\d,]+);", line).groups())
        spreads.append(high - low)
    assert len(spreads) == 3 and spreads[0] > spreads[1] > spreads[2]
    fair = 1024
    assert spreads[0] > fair / 2                    # "left to itself, the router favours some experts"
    assert spreads[-1] < 0.05 * fair                # "close to its fair share" after balancing
    steps = {re.search(r", (\d+) steps:", line).group(1) for line in lines}  # "as many as it prints"
    assert len(steps) == 1 and "A few steps of balancing" not in _squeezed()


def _cells():
    return json.loads((CONTENT / NAME).read_text(encoding="utf-8"))["cells"]


def test_labs_exercises_and_questions_are_in_the_notebook():
    source = "\n".join("".join(c["source"]) for c in _cells())
    for lab in ("hidden_units_lab()", "remove_activation_lab()", "parameters_lab()", "router_lab()"):
        assert lab in source
    exercises = [c["metadata"]["course"]["exercise"] for c in _cells()
                 if c["metadata"].get("course", {}).get("exercise")]
    assert exercises == ["one-matrix", "ffn-width", "swiglu", "top2-routing", "moe-counts"]
    for question in ("ffn-predict-alone", "ffn-shape-hidden", "ffn-number-cat-on",
                     "ffn-predict-no-activation", "ffn-predict-routing-rules", "ffn-number-fair-share"):
        assert f'ask("{question}")' in source
    first_code = next(c for c in _cells() if c["cell_type"] == "code")
    assert "setup" in first_code["metadata"].get("tags", [])
    predict = next(i for i, c in enumerate(_cells()) if 'ask("ffn-predict-alone")' in "".join(c["source"]))
    lab = next(i for i, c in enumerate(_cells()) if "hidden_units_lab()" in "".join(c["source"]))
    assert predict < lab, "the predict question comes before the first lab"


def test_prose_does_not_type_the_figures():
    prose = "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")
    for number in ("7,079,424", "2,359,296", "4,718,592", "33.3", "66.7", "162", "0.875", "0.125",
                   "506", "166", "965", "483", "209", "40,115,712", "11,804,160", "1,024", "-0.14",
                   "2.86", "352", "1,536", "9,437,184", "7,077,888", "1.50", "4.62", "1.52", "2.00",
                   "6,144", "0.13", "10,922", "13,824", "22,016", "3,072 operations", "1,920", "1,280", "3,840", "2,560",
                   "0.725", "0.103", "0.828", "0.597", "0.403", "0.181", "0.990",
                   "2,457,600", "7,372,800", "3.00", "3.96", "-0.28", "\u22120.28", "1.28"):
        assert number not in prose, f"{number} is typed in the prose; print it from a cell"


def _prose():
    return "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown")


def _ratio(text, label):
    return float(re.search(label + r" x(\d+\.\d+)", text).group(1))


def test_a_third_matrix_makes_the_ffn_half_as_large_again(figures):
    text = figures["gated-width"]
    assert float(re.search(r"7,077,888  \(x(\d+\.\d+) the plain count", text).group(1)) == 1.5
    prose = _prose()
    assert "half as large again" in prose and "a third more" not in prose


def test_the_ffn_costs_two_flops_per_weight_and_the_activation_almost_nothing(figures):
    text = figures["ffn-flops"]
    flops, weights = (int(x.replace(",", "")) for x in re.findall(r"([\d,]{5,})", text.splitlines()[0]))
    assert flops == 2 * weights == 2 * ffn_parameters(768, 3072)
    share = float(re.search(r"(\d+\.\d+)% of that", text).group(1))
    assert share < 1                                                      # "only a few operations"
    gated = re.search(r"plain at 3,072 ([\d,]+), gated at 2,048 ([\d,]+)", figures["gated-width"]).groups()
    assert gated[0] == gated[1]                                           # same FLOPs as the plain one


def test_attention_and_one_ffn_matrix_are_equal_at_every_width():
    for d in (64, 768, 4096):
        assert 4 * d * d == d * (4 * d) == block_parameters(ModelConfig(d_model=d, layers=1, d_ff=4 * d,
                                                                       vocab=1)).attention
    assert "happens to equal" not in _prose()


def test_llama_widths_are_the_eight_thirds_rule_rounded_to_256(figures):
    lines = figures["llama-width"].strip().splitlines()
    assert len(lines) == 6
    for line in lines[:4]:
        rounded, released = re.search(r"256: ([\d,]+) \(released: ([\d,]+)\)", line).groups()
        assert rounded == released
    assert REAL_MODELS["LLaMA-7B"].config.d_ff == 11008 == gated_width(4096, 256)
    prose = _prose()
    assert "d = 4,096" in prose and "next multiple of 256 is 11,008" in prose
    assert 8 * 4096 % 3 != 0                                              # "not a whole number"


def test_the_larger_llama_widths_are_eight_thirds_times_1_3_rounded_up(figures):
    """LLaMA-2 70B and LLaMA-3 70B: 8/3 x d times ffn_dim_multiplier 1.3, rounded up to a multiple of
    4,096, computed with lib.params.ffn_width, give the released widths (LLaMA-3 8B's too)."""
    lines = figures["llama-width"].strip().splitlines()[4:]
    found = {re.match(r"(LLaMA-\S+ \S+),", line).group(1):
             re.search(r"multiple of ([\d,]+): ([\d,]+) \(released: ([\d,]+)\)", line).groups() for line in lines}
    assert set(found) == {"LLaMA-2 70B", "LLaMA-3 70B"}
    for _multiple, rounded, released in found.values():
        assert rounded == released
    assert found["LLaMA-2 70B"][1:] == ("28,672", "28,672") == found["LLaMA-3 70B"][1:]
    for d, multiple, width in ((8192, 4096, 28672), (4096, 1024, 14336)):
        widened = int(1.3 * int(8 * d / 3))                       # LLaMA's own rounding: down to a whole number
        assert -(-widened // multiple) * multiple == width
    prose = _squeezed()
    assert "The first LLaMA models keep the 8/3 rule" in prose and "`ffn_dim_multiplier` = 1.3" in prose


def test_what_a_mixture_costs_per_token(figures):
    text = figures["moe-counts"]
    stored, used, ffn = (_ratio(text, label) for label in ("stored", "used per token", "FFN weights a token runs"))
    assert stored > 3                                                     # "several times"
    assert 1.4 <= used <= 1.6                                             # "about half as many again"
    assert ffn == 2.0                                                     # "double"
    router_share = float(re.search(r"(\d+\.\d+)% of one expert", text).group(1))
    assert router_share < 1                                               # "tiny next to an expert"
    prose = _prose()
    assert "several times" in prose and "about half as many again" in prose and "double" in prose
    assert "not much more" not in prose


def test_the_mixture_exercise_comes_before_the_counts_and_nothing_above_answers_it():
    cells = _cells()
    sources = ["".join(c["source"]) for c in cells]
    exercise = next(i for i, c in enumerate(cells) if c["metadata"].get("course", {}).get("exercise") == "moe-counts")
    counts = next(i for i, c in enumerate(cells) if c["metadata"].get("course", {}).get("figure") == "moe-counts")
    assert exercise < counts
    above = "\n".join(sources[:exercise])
    for answer in ("d × 8", "d x 8", "must be in memory", "only uses two"):
        assert answer not in above, answer


def test_shape_and_count_questions_are_not_answered_above_them():
    sources = ["".join(c["source"]) for c in _cells()]
    shape = sources.index('ask("ffn-shape-hidden")')
    assert "to 4 **hidden units**" not in "\n".join(sources[:shape])
    assert "(3, 4)" not in "\n".join(s for s in sources[:shape] if not s.startswith("X = np.array"))


def test_the_deeper_boxes_hold_true():
    prose = _prose()
    assert "512 → 2048 → 512, four times wider" in prose and 2048 == 4 * 512   # the 2017 transformer
    assert float(gelu(np.array(-2.0))) < 0 and abs(float(gelu(np.array(-2.0)))) < 0.1  # small, negative
    e = worked_example()
    assert (e.X[0] @ e.W_up + e.b_up)[1] == -2                                 # cat's second unit
    from labs.ffn.hidden_units import hidden_units_model, reach
    lab = hidden_units_model(*e.X[0], activation="gelu")                      # the lab, with GELU
    assert -0.1 < lab.post[1] < 0 and lab.leaking == 2 and "unit 2 gives" in lab.verdict
    assert abs(lab.post[1]) < 0.004 * 2.65 * reach()[0]      # under 0.4 % of the panel's height: a pixel
    assert "the table and the verdict give cat's second unit a small negative" in prose
    for z in (-3.0, -5.0):
        assert abs(float(lib_silu(z))) < 0.2                               # near 0, large negative z
    for z in (3.0, 5.0):
        assert abs(float(lib_silu(z)) - z) < 0.2                           # near z, large positive z
    assert "large negative z" in prose and "large positive z" in prose


# ---------------------------------------------------------------- the FFN without its activation

def _cell_index(predicate):
    return next(i for i, c in enumerate(_cells()) if predicate(c))


def _exercise_cell(ex_id):
    return _cell_index(lambda c: c["metadata"].get("course", {}).get("exercise") == ex_id)


def _source_cell(text):
    return _cell_index(lambda c: text in "".join(c["source"]))


def test_the_one_matrix_exercise_comes_after_its_prediction_and_before_the_lab_and_the_collapse():
    asked, exercise = _source_cell('ask("ffn-predict-no-activation")'), _exercise_cell("one-matrix")
    lab, collapse_cell = _source_cell("remove_activation_lab()"), _cell_index(
        lambda c: c["metadata"].get("course", {}).get("figure") == "collapse")
    assert asked < exercise < lab < collapse_cell


def test_the_prose_says_what_the_collapse_cell_printed(figures):
    """The cell printed exactly 0 for the worked example: the prose says 0, not "only rounding"."""
    text = figures["collapse"]
    assert float(re.search(r"three tokens: (\S+)", text).group(1)) == 0.0
    e = worked_example()
    W, b = collapse(e.W_up, e.b_up, e.W_down, e.b_down)
    assert np.array_equal(ffn(e.X, e.W_up, e.b_up, e.W_down, e.b_down, activation=None), e.X @ W + b)
    prose = _prose()
    assert "The largest difference is 0:" in prose and "only rounding" not in prose


def test_a_stack_of_ffns_without_activation_is_still_one_matrix():
    """"a stack of such layers would still be one matrix": three random activation-free FFNs of
    width 16 in a row against the one matrix and bias folded from them."""
    rng = np.random.default_rng(7)
    layers = [(rng.normal(size=(4, 16)), rng.normal(size=16), rng.normal(size=(16, 4)), rng.normal(size=4))
              for _ in range(3)]
    x = rng.normal(size=(10, 4))
    out, W, b = x, np.eye(4), np.zeros(4)
    for layer in layers:
        out = ffn(out, *layer, activation=None)
        W_layer, b_layer = collapse(*layer)
        W, b = W @ W_layer, b @ W_layer + b_layer
    assert np.allclose(out, x @ W + b, rtol=1e-9, atol=1e-9)
    with_relu = x
    for layer in layers:
        with_relu = ffn(with_relu, *layer)
    assert not np.allclose(with_relu, x @ W + b, atol=1e-3)        # the activation is what bends it


# ---------------------------------------------------------------- the FFN's width from a budget

def test_the_width_exercise_comes_before_the_lab_that_would_give_its_widths():
    assert _exercise_cell("ffn-width") < _source_cell("parameters_lab()")
    assert _exercise_cell("ffn-width") < _source_cell("w = 2/3 · d_ff")
    assert _exercise_cell("swiglu") > _source_cell("parameters_lab()")


def test_the_widths_that_meet_each_budget_are_what_the_prose_says(figures):
    for d in (64, 768, 960, 4096):
        attention = 4 * d * d
        assert ffn_parameters(d, 2 * d) == attention == ffn_parameters(d, ffn_width(d, 1))    # 2·d: as large
        assert ffn_parameters(d, 4 * d) == 2 * attention                                       # 4·d: twice
        for times in (1, 2):
            assert ffn_width(d, times, gated=True) == -(-2 * ffn_width(d, times) // 3)        # two thirds
    smol = REAL_MODELS["SmolLM2-360M"].config
    assert ffn_width(smol.d_model, 2, True, 256) == smol.d_ff == 8 * smol.d_model // 3    # nothing to round
    assert 8 * smol.d_model % 3 == 0 and smol.d_ff % 256 == 0
    prose = _prose()
    for words in ("A plain FFN of width 2·d holds as much as a full-width attention, and the usual 4·d "
                  "twice as\nmuch", "two thirds of the plain width",
                  "exactly the budget of twice a full-width\n(4·d²) attention, with nothing to round"):
        assert words in prose, words


def test_smollm2_shares_keys_and_values_so_its_ffn_is_three_times_its_own_attention(figures):
    """"Its own attention is smaller than that ... grouped-query attention": 15 query heads, 5
    key/value heads of width 64, so Wk and Wv are 960 x 320, and the FFN is 3 x that attention."""
    smol = REAL_MODELS["SmolLM2-360M"].config
    d, kv = smol.d_model, smol.d_model // smol.heads * smol.kv_heads
    own = block_parameters(smol).attention
    assert smol.kv_heads < smol.heads and own == 2 * d * d + 2 * d * kv < 4 * d * d
    assert ffn_parameters(d, smol.d_ff, gated=True) == 3 * own
    ratio = float(re.search(r"its FFN: [\d,]+, x(\d+\.\d+) that", figures["ffn-widths"]).group(1))
    assert ratio == 3.0
    prose = _prose()
    assert "(grouped-query attention)" in prose and "multiple of its real attention printed last" in prose
    assert "for an FFN as large as a full-width\nattention (four d × d matrices, 4·d²)" in prose


# ---------------------------------------------------------------- routing rules and shared experts

def test_the_router_is_introduced_as_one_rule_among_several_and_the_rules_are_predicted_first():
    prose = _prose()
    intro = "".join(_cells()[_source_cell("## Mixture of experts")]["source"])
    assert "decided by a rule of its own" in intro and "compares three rules" in intro
    assert "a softmax over just those two scores decides" not in prose
    assert _source_cell('ask("ffn-predict-routing-rules")') < _exercise_cell("top2-routing") \
        < _cell_index(lambda c: c["metadata"].get("course", {}).get("figure") == "routing-rules")


def test_every_rule_keeps_the_same_experts_on_the_router_labs_tokens():
    """"All three rules keep experts 1 and 3 ... chosen by the scores alone": on the example and
    on all 4,096 tokens of the router lab, for one, two and three experts kept."""
    tokens = router_scores()
    for k in (1, 2, 3):
        chosen = [route(tokens, k, rule).experts for rule in RULES]
        assert all(np.array_equal(chosen[0], other) for other in chosen[1:])
    assert all(list(route(tokens[0], 2, rule).experts) == [0, 2] for rule in RULES)


def _rule_line(text, letter):
    line = next(line for line in text.splitlines() if line.startswith(letter + ":"))
    first, second, total = (float(v) for v in re.findall(r"(?:: |sum )(\d\.\d{3})", line))
    return first, second, total


def test_the_weights_differ_as_the_prose_says(figures):
    text = figures["routing-rules"]
    a, b, c = (_rule_line(text, letter) for letter in "ABC")
    assert a[2] == 1.0 and c[2] == 1.0 and b[2] < 1                 # B's two weights: less than 1
    assert 2.5 < c[1] / a[1] < 3.5                                   # "about three times as much"
    assert c[0] < a[0] and b[0] < a[0]                               # the best expert counts less
    low, high = (float(v) for v in re.search(r"rule B: its weight runs from (\S+) to (\S+)", text).groups())
    assert high - low > 0.5                                          # "differs from token to token"
    prose = _prose()
    for words in ("add up to less than 1", "about three times as much as under A",
                  "A gives it weight 1 for every token, whatever its scores"):
        assert words in prose, words


def test_with_one_expert_kept_the_router_reaches_the_output_only_under_a_full_softmax():
    """Under A with one expert kept, "the router's scores would reach the output only through the
    choice of the expert, which passes no gradient": nudge the router's weights by a little that
    keeps every choice; under A the output does not move, under B it does. A change that flips
    a choice does move A's output: the choice is the only way in."""
    rng = np.random.default_rng(3)
    d, n_experts = 16, 8
    experts = [lambda t, W=rng.normal(size=(d, d)): t @ W for _ in range(n_experts)]
    x, W_router = rng.normal(size=(64, d)), rng.normal(size=(d, n_experts))
    nudged = W_router + rng.normal(0.0, 1e-4, W_router.shape)
    for rule, moves in (("topk_softmax", False), ("softmax_topk", True)):
        before = mixture_of_experts(x, W_router, experts, top_k=1, rule=rule)
        after = mixture_of_experts(x, nudged, experts, top_k=1, rule=rule)
        assert np.array_equal(before.experts, after.experts)                  # the same choices
        assert (np.abs(after.output - before.output).max() > 1e-8) == moves, rule
    before = mixture_of_experts(x, W_router, experts, top_k=1, rule="topk_softmax")
    flipped = mixture_of_experts(x, W_router + rng.normal(0.0, 1.0, W_router.shape), experts, top_k=1,
                                 rule="topk_softmax")
    changed = np.asarray(before.experts) != np.asarray(flipped.experts)
    assert changed.any()
    assert np.abs(flipped.output - before.output).max(axis=-1)[changed.ravel()].min() > 1e-6
    prose = _prose()
    assert "would reach the output only through the choice of the\n  expert, which passes no gradient" in prose
    assert "would not reach the output at all" not in prose


def test_the_shared_expert_adds_weight_one_on_top_of_the_routed_weights(figures):
    weights = [float(v) for v in re.search(r"shared one: \[([^\]]+)\]", figures["shared-expert"]).group(1).split(",")]
    assert len(weights) == 9 and weights[8] == 1.0 and abs(sum(weights[:8]) - 1) < 1e-3
    v3 = REAL_MODELS["DeepSeek-V3"].config
    assert (v3.shared_experts, v3.top_k, v3.experts) == (1, 8, 256)
    shared = block_parameters(v3).ffn_active / ffn_parameters(v3.d_model, v3.expert_d_ff, gated=True)
    assert shared == v3.top_k + v3.shared_experts                     # the shared FFN runs for every token
    assert "the shared expert's 1 comes on top" in _prose()
    assert "`routed_scaling_factor` = 2.5, so there the routed experts together count" in _squeezed()


def test_deepseek_v3s_experts_are_fine_grained(figures):
    """"many small FFNs, each much narrower than the FFN of one of its dense blocks"."""
    line = figures["shared-expert"].strip().splitlines()[-1]
    expert, dense, ratio = re.search(r"width ([\d,]+); the FFN of one of its dense blocks, ([\d,]+): x(\d+) that",
                                     line).groups()
    v3 = REAL_MODELS["DeepSeek-V3"].config
    assert (int(expert.replace(",", "")), int(dense.replace(",", ""))) == (v3.expert_d_ff, v3.d_ff)
    assert int(ratio) >= 4 and v3.experts > 100


# ---------------------------------------------------------------- the deeper boxes and the intro

def test_capacity_is_described_as_a_training_device_and_deepseek_drops_no_tokens():
    prose = _prose()
    box = prose[prose.index("Deeper: how real systems balance the load"):]
    assert "Training systems also give each expert a fixed\n**capacity**" in box
    assert "With top 2 the token still gets its other expert's output, unless that one is full too" in box
    assert "passes the layer through the residual connection alone" in box
    assert "drops no tokens, in training or in inference" in box
    assert "With a capacity, the layer is no longer position-wise" in re.sub(r"\s+", " ", box)
    assert "Serving systems" not in prose
    cost = "".join(_cells()[_cell_index(lambda c: c["metadata"].get("course", {}).get("figure") == "moe-counts") + 1]["source"])
    assert "capacity" not in cost                                    # one meaning for the word


def _without_code_and_math(text):
    return re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", "", text, flags=re.DOTALL)


def test_no_parenthesis_is_opened_inside_another_in_the_prose():
    for cell in _cells():
        if cell["cell_type"] != "markdown":
            continue
        depth = 0
        for ch in _without_code_and_math("".join(cell["source"])):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            assert depth <= 1, "".join(cell["source"])[:200]
    assert "(the hidden-units lab (with ReLU))" not in _prose()


# ---------------------------------------------------------------- affine, not linear

def test_inside_one_region_the_ffn_is_an_affine_map_with_a_bias():
    """"Inside one region the FFN is a plain affine map (one matrix and one bias)": near cat, where
    no unit switches, the FFN equals x @ W + b for one W and a b that is not 0, so no matrix alone
    gives it; "all the width buys ... a 2 × 2 matrix plus a bias"."""
    e = worked_example()
    rng = np.random.default_rng(5)
    centre = np.array([1.3, 0.4])                      # between the tokens, no unit near its threshold
    on = (centre @ e.W_up + e.b_up) > 0
    x = centre + rng.normal(0.0, 1e-3, (20, centre.size))
    assert np.array_equal((x @ e.W_up + e.b_up) > 0, np.tile(on, (20, 1)))       # one region
    W, b = e.W_up @ (on[:, None] * e.W_down), (e.b_up * on) @ e.W_down + e.b_down
    assert np.allclose(ffn(x, e.W_up, e.b_up, e.W_down, e.b_down), x @ W + b)
    assert np.abs(b).max() > 0.1                                                   # a bias: affine
    prose = _prose()
    assert "Inside one region the FFN is a plain affine map (one matrix and one bias)" in prose
    assert "a 2 × 2 matrix plus a bias buys, an affine\nmap" in prose
    assert "plain linear map" not in prose and "what a 2 × 2 matrix buys" not in prose


def test_the_width_intuition_is_offered_as_one_intuition():
    prose = _prose()
    assert "That is one intuition for why real models make `d_ff`" in prose
    assert "That is why real models make" not in prose


def test_a_negative_silu_gate_flips_its_unit(figures):
    """"a negative one, since SiLU dips a little below 0, lets it through with its sign flipped"."""
    lowest = float(re.search(r"lowest: silu\(\S+\) = (\S+)", figures["silu"]).group(1))
    assert -0.3 < lowest < 0
    z = np.linspace(-6.0, 6.0, 12001)
    assert abs(float(lib_silu(z).min()) - lowest) < 0.005
    up = np.array([2.0, -1.5])
    assert np.all(np.sign(float(lib_silu(-1.28)) * up) == -np.sign(up))
    prose = re.sub(r"\s+", " ", _prose())
    assert ("lets it through with its sign flipped and scaled down, by a factor never larger than the size of "
            "SiLU's lowest value") in prose
    assert float(lib_silu(np.linspace(-40.0, 0.0, 40001)).min()) >= lowest - 0.005      # "never more than"


def test_the_mixture_counts_take_a_tied_output_layer(figures):
    from dataclasses import replace
    from lib.params import count_parameters
    mixture = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12, experts=8, top_k=2)
    dense = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12)
    for config in (mixture, dense):
        assert config.tied
        assert count_parameters(replace(config, tied=False)).total - count_parameters(config).total == 32000 * 768
    untied = _ratio(figures["moe-counts"], "stored")
    assert untied == 4.62
    assert float(re.search(r"\(untied\): stored x(\d+\.\d+)", figures["moe-counts"]).group(1)) < untied
    prose = _prose()
    assert "32,000-token embedding table that the\noutput layer reuses, tied)" in prose
    assert "32,000-word" not in prose
    assert "These counts take the\noutput layer tied to the embedding table" in prose


def test_deepseek_v3_has_experts_in_its_mixture_blocks_only():
    v3 = REAL_MODELS["DeepSeek-V3"].config
    assert (v3.layers, v3.dense_layers) == (61, 3)
    assert "of DeepSeek-V3, in each mixture block, runs the shared FFN" in _prose()


def test_the_labs_balancing_step_grows_with_the_imbalance_unlike_deepseek_v3s_fixed_step():
    from lib.moe import balance_load, tokens_per_expert
    tokens = router_scores()
    fair = len(tokens) * 2 / 8
    counts = tokens_per_expert(route(tokens, 2).experts, 8)
    for strength in (0.25, 0.5):
        bias = balance_load(tokens, 2, strength, steps=1).bias
        assert np.allclose(bias, strength * (fair - counts) / fair)              # proportional
        assert len(np.unique(np.round(np.abs(bias), 9))) > 2                     # not one fixed step
    box = _prose()[_prose().index("Deeper: how real systems balance the load"):]
    assert "it moves each bias by the same fixed step" in box
    assert "the lab's step grows with the imbalance" in box and "as in the lab" not in box


def test_the_labs_router_is_unfair_because_its_tokens_share_a_direction():
    """"the lab's tokens share a common direction and its router is random": the same draws
    without the common direction leave the experts far closer to their fair share."""
    from labs.ffn.router import N_EXPERTS, N_TOKENS, ROUTER_SEED, ROUTER_WIDTH
    from lib.moe import tokens_per_expert
    rng = np.random.default_rng(ROUTER_SEED)
    x = rng.normal(0.0, 1.0, (N_TOKENS, ROUTER_WIDTH))
    common = rng.normal(0.0, 0.6, ROUTER_WIDTH)
    W_router = rng.normal(0.0, 1.5 / np.sqrt(ROUTER_WIDTH), (ROUTER_WIDTH, N_EXPERTS))
    assert np.allclose((x + common)[1:] @ W_router, router_scores()[1:])         # the lab's tokens

    def spread(scores):
        counts = tokens_per_expert(route(scores, 2).experts, N_EXPERTS)
        return counts.max() - counts.min()
    assert spread((x + common) @ W_router) > 3 * spread(x @ W_router)
    assert "the lab's tokens share a common direction and\nits router is random" in _prose()


def test_the_router_lab_text_names_its_steps_slider():
    import inspect
    from labs.ffn import router
    assert 'description="balancing steps"' in inspect.getsource(router.RouterLab)
    prose = _prose()
    assert "**balancing steps** how many steps run" in prose and "runs a few steps of" not in prose


def test_the_mixture_exercise_says_the_router_has_no_bias_and_counts_as_used():
    from exercises.definitions.mixture import MOE_COUNTS
    d, d_ff, experts, top_k = 768, 3072, 8, 2
    stored, used = MOE_COUNTS.reference(d, d_ff, experts, top_k)
    assert used == 4 * d * d + top_k * 2 * d * d_ff + d * experts + 2 * d         # router + gains used
    assert stored == 4 * d * d + experts * 2 * d * d_ff + d * experts + 2 * d      # router: no bias
    cell = "".join(_cells()[_exercise_cell("moe-counts")]["source"])
    assert "no bias" in cell and "Every token uses the router and both gains" in cell


def test_no_answer_is_imported_or_printed_above_its_exercise():
    cells = _cells()
    setup = "".join(cells[0 if cells[0]["cell_type"] == "code" else 1]["source"])
    assert "collapse" not in setup and "route" not in setup
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    first = {name: next(i for i in code if name in "".join(cells[i]["source"]))
             for name in ("collapse", "route(")}
    assert first["collapse"] > _exercise_cell("one-matrix")
    assert first["route("] > _source_cell('check("top2-routing")')
    shares = _cell_index(lambda c: c["metadata"].get("course", {}).get("figure") == "router-shares")
    assert shares > _source_cell('check("top2-routing")')


def test_the_reference_says_where_the_multiple_of_256_comes_from():
    prose = _prose()
    assert "two thirds of 4·d; the released code rounds the width up to a multiple of 256" in prose
    assert "8/3 · d, rounded" not in prose


# ---------------------------------------------------------------- answers not in sight, and what holds in general

def _squeezed():
    return re.sub(r"\s+", " ", _prose())


def test_nothing_above_the_activation_question_says_what_removing_it_does():
    sources = ["".join(c["source"]) for c in _cells()]
    asked = sources.index('ask("ffn-predict-no-activation")')
    above = re.sub(r"\s+", " ", "\n".join(sources[:asked]))
    for giveaway in ("why the bend is essential", "Why not skip ReLU", "plain affine map",
                     "keep the arithmetic simpler"):
        assert giveaway not in above, giveaway
    assert "Inside one region the FFN is a plain affine map" in _squeezed()       # the box, now below
    from engine.core.registry import get_question
    assert "in this FFN the bends come from the activation alone" in \
        re.sub(r"\s+", " ", get_question("ffn-predict-no-activation").explanation)


def test_a_gate_alone_is_more_than_affine_as_the_bilinear_cell_shows(figures):
    """A gated FFN with no activation is homogeneous of degree 2: f(2x) = 4 f(x) for any weights,
    which no affine map is (unless it is 0)."""
    text = figures["bilinear"]
    homogeneous = float(re.search(r"largest \|f\(2x\) - 4 f\(x\)\| (\S+);", text).group(1))
    affine_gap = float(re.search(r"off here by up to (\S+)$", text.strip()).group(1))
    assert homogeneous < 1e-9 and affine_gap > 1
    for seed in range(5):
        rng = np.random.default_rng(seed)
        W_g, W_u, W_d, x = rng.normal(size=(4, 7)), rng.normal(size=(4, 7)), rng.normal(size=(7, 4)), rng.normal(size=(3, 4))
        f = lambda t: ((t @ W_g) * (t @ W_u)) @ W_d                                     # noqa: E731
        assert np.allclose(f(2 * x), 4 * f(x)) and not np.allclose(f(2 * x), 2 * f(x) - f(np.zeros(4)))
    assert "holds for the plain FFN only" in _squeezed() and "bilinear" in _squeezed()
    assert "which no affine map does except the one that gives 0 everywhere" in _squeezed()
    assert "bends on its own" not in _squeezed()                  # a quadratic has no bends


def test_the_counts_leave_biases_out_as_recent_blocks_do():
    assert not ModelConfig(d_model=768, layers=1, d_ff=3072, vocab=1).biases
    for name in ("LLaMA-7B", "SmolLM2-360M", "DeepSeek-V3"):
        assert not REAL_MODELS[name].config.biases
    assert "Many recent blocks have no biases at all, though not every one" in _squeezed()
    assert "RMSNorms" not in _prose()[:_prose().index("## Where the parameters are") + 600]


def test_the_parameters_lab_keeps_at_least_the_plain_count_as_the_text_says():
    """"two thirds of the plain width, rounded up to the multiple you choose, so that the gated FFN
    holds at least the plain one's count"."""
    from labs.ffn.parameters import D_MAX, D_MIN, D_STEP, MULTIPLE_MAX, MULTIPLE_MIN, ROUNDINGS, parameters_model
    for d in range(D_MIN, D_MAX + 1, D_STEP * 8):
        for multiple in np.arange(MULTIPLE_MIN, MULTIPLE_MAX + 0.01, 0.5):
            for round_to in ROUNDINGS:
                plain, gated = parameters_model(d, multiple, False, round_to), parameters_model(d, multiple, True, round_to)
                assert plain.ffn <= gated.ffn < plain.ffn + 3 * d * round_to + 3 * d
                assert gated.width % round_to == 0 and gated.width >= 2 * plain.width / 3
    assert "as your `ffn_width` does" not in _prose()
    assert "the lab takes two thirds of the plain width, rounded up to the multiple you choose" in _squeezed()


def test_the_matrix_product_slip_runs_only_when_d_ff_equals_the_number_of_tokens():
    from engine.core.registry import get_exercise
    ex = get_exercise("swiglu")
    mistake = next(m for m in ex.mistakes if m.name == "matrix product")
    assert "only when d_ff equals the number of tokens" in mistake.hint
    run = ex.mistaken(ex.mistakes.index(mistake))
    rng = np.random.default_rng(0)
    d, d_ff = 3, 5
    W_g, W_u, W_d = rng.normal(size=(d, d_ff)), rng.normal(size=(d, d_ff)), rng.normal(size=(d_ff, d))
    assert run(rng.normal(size=(d_ff, d)), W_g, W_u, W_d).shape == (d_ff, d)          # n = d_ff != d: runs
    with pytest.raises(ValueError):
        run(rng.normal(size=(4, d)), W_g, W_u, W_d)                                   # n != d_ff: fails


def test_experts_are_numbered_from_0_in_the_text_the_code_and_the_checks():
    prose = _squeezed()
    assert "Experts are numbered from 0" in prose and "expert 1 is number 0" not in prose
    assert "All three rules keep experts 0 and 2" in prose
    from engine.core.registry import get_exercise
    ex = get_exercise("top2-routing")
    example = next(c for c in ex.fixed_cases() if c.visible)
    assert list(np.flatnonzero(ex.reference(*example.args))) == [0, 2]


def test_balancing_is_said_to_cost_and_the_cell_prints_the_price(figures):
    lines = [line for line in figures["router-balance"].splitlines() if line.startswith("strength")]
    shares = [float(re.search(r"own top 2: (\S+)%", line).group(1)) for line in lines]
    assert shares[0] == 0 and all(s > 30 for s in shares[1:])
    prose = _squeezed()
    assert "It is not free" in prose and "The lab's router is frozen" in prose
    assert "while each token's shares still come from its own scores." not in prose


def test_the_mixture_s_payoff_is_stated_with_its_source():
    prose = _squeezed()
    assert "the Switch Transformer reached the quality of its dense counterpart up to 7 times faster (Fedus et al." in prose
    assert "it does not say what the 8-expert, top-2 mixture counted here would gain" in prose
    assert "the course's whole model" not in prose


# ---------------------------------------------------------------- the skip-ahead set

def test_the_skip_ahead_set_covers_the_notebook_mixtures_included_and_its_answers_are_computed():
    from exercises.definitions.questions.ffn import SKIP_AHEAD
    items = {q.id: q for q in SKIP_AHEAD}
    assert set(items) == {"ffn-out-rows-used", "ffn-out-token-flops", "ffn-out-gated-width", "ffn-out-mixture-cost"}
    rng = np.random.default_rng(0)                            # rows of W_down that take part: the units on
    d, d_ff = 16, 3072
    W_up, W_down = rng.normal(size=(d, d_ff)), rng.normal(size=(d_ff, d))
    x = rng.normal(size=d)
    on = (x @ W_up) > 0
    assert np.allclose(relu(x @ W_up) @ W_down, relu(x @ W_up)[on] @ W_down[on])
    assert items["ffn-out-token-flops"].answer == 2 * ffn_parameters(512, 2048)
    assert ffn_parameters(1536, int(items["ffn-out-gated-width"].answer), gated=True) == ffn_parameters(1536, 4 * 1536)
    mixture = ModelConfig(d_model=768, layers=1, d_ff=3072, vocab=1, experts=16, top_k=2)
    dense = block_parameters(ModelConfig(d_model=768, layers=1, d_ff=3072, vocab=1))
    counts = block_parameters(mixture)
    assert counts.ffn / dense.ffn == 16 and counts.ffn_active / dense.ffn == 2
    question = items["ffn-out-mixture-cost"]
    assert question.choices[question.answer] == "\u00d716 in memory and \u00d72 per token"
    lengths = [len(c) for c in question.choices]
    assert max(lengths) < 1.35 * min(lengths)
