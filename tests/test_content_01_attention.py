"""Notebook 01, attention: the figures its cells compute, pinned; each sentence that states a
quantity or a direction checked on those printed numbers or by running what it names; the notebook
in the course's list of notebooks and in its sequence of "Next" links."""

import json
import re

import numpy as np
import pytest

from conftest import CONTENT
from engine.core import inventory
from labs.attention import raises_by_chance, raises_itself, raw_scores, scale_model
from labs.attention.circuits import COPIES, TEXTS, looks, text_maps
from labs.block_at_work.training_scrub import named_heads
from lib import model
from lib.attention import causal_weights, softmax

NAME = "01_attention.ipynb"

PINNED = {
    "dot": ["key A = [1. 0.]: q·k = 2", "angle 26.6 degrees", "key B = [0. 3.]: q·k = 3", "angle 63.4 degrees"],
    "scale": ["d = 1024: spread 31.60 (sqrt(d) = 32.0), top weight  98%",
              "d =    4: spread  2.11 (sqrt(d) =  2.0), top weight  46%;   divided by sqrt(d): spread 1.05, top weight  26%"],
    "mask": ["[0.333 0.333 0.333 0.   ]", "[0.25  0.25  0.25  0.25 ]"],
    "mask-leak": ["with the mask: the outputs of the first 4 tokens change by at most 0.0e+00"],
    "convex": ["every output inside its column's range: True"],
    "two-places": ["1 head, scores 4 and 4: weight on 9 0.49, on 4 0.49 (0.98 together)",
                   "2 heads, scores 4 and 6: weight on 9 0.95, on 4 0.99 (1.94 together)"],
    "heads-cost": ["36,864 numbers", "(8, 256, 256), 524,288 numbers, and 6,291,456 multiplications",
                   "[24 24 24 24 24 24 24 24 24 24 24 24 24 24 24 24]"],
    "two-circuits": ["rank of each head's W_V,h W_O,h: [24 24 24 24 24 24 24 24 24 24 24 24 24 24 24 24]"],
    "copying": ["block 1: head 1 raises 50 of 55", "block 2: head 1 raises 25 of 55, head 2 raises  2 of 55",
                "100 random heads: 28 of 55 on average, 90 % of them from 18 to 37",
                "below that range: block 2 head 2, block 2 head 3, block 3 head 3, block 4 head 1, block 4 head 4"],
}


@pytest.fixture(scope="module")
def figures(notebook_figures):
    return notebook_figures(NAME)


def _sources():
    cells = json.loads((CONTENT / NAME).read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells]


def _prose(start):
    """The markdown cell whose text starts with ``start``, its lines joined by single spaces."""
    found = [s for s in _sources() if s.startswith(start)]
    assert len(found) == 1, start
    return " ".join(found[0].split())


@pytest.mark.parametrize("figure", sorted(PINNED))
def test_figure_is_computed_and_pinned(figures, figure):
    assert figure in figures, f"no cell carries the figure {figure!r}"
    for text in PINNED[figure]:
        assert text in figures[figure], f"{text!r} missing from:\n{figures[figure]}"


def test_b_stands_at_a_wider_angle_and_wins_on_length(figures):
    assert "B stands at a wider angle than A, and wins on length" in _sources()[7]
    angles = [float(a) for a in re.findall(r"angle ([\d.]+) degrees", figures["dot"])]
    scores = [float(s) for s in re.findall(r"q·k = ([\d.]+)", figures["dot"])]
    assert angles[1] > angles[0] and scores[1] > scores[0]


def test_undivided_one_key_wins_and_divided_the_top_share_keeps_its_size(figures):
    lines = figures["scale"].splitlines()
    spreads = [float(x) for x in re.findall(r"spread\s+([\d.]+) \(", figures["scale"])]
    roots = [float(x) for x in re.findall(r"sqrt\(d\) =\s+([\d.]+)\)", figures["scale"])]
    assert len(lines) == len(spreads) == 5 and all(abs(s / r - 1) < 0.1 for s, r in zip(spreads, roots))
    raw_tops = [int(x) for x in re.findall(r"\), top weight\s+(\d+)%", figures["scale"])]
    divided_tops = [int(x) for x in re.findall(r"divided by sqrt\(d\): spread [\d.]+, top weight\s+(\d+)%",
                                                figures["scale"])]
    assert raw_tops == sorted(raw_tops) and raw_tops[-1] >= 95                      # "nearly all"
    assert max(divided_tops) - min(divided_tops) <= 3                                # "stays about the same"


def test_undivided_the_slopes_shrink_and_divided_they_stay(figures):
    pairs = [tuple(map(float, p)) for p in re.findall(r"largest slope ([\d.]+) undivided, ([\d.]+) divided",
                                                      figures["slope"])]
    undivided, divided = zip(*pairs)
    assert len(pairs) == 3 and undivided[0] > undivided[1] > undivided[2] and undivided[2] < undivided[0] / 5
    assert max(divided) - min(divided) < 0.02 and all(s <= 0.25 for s in undivided + divided)
    # no slope exceeds 1/4, reached by two weights of 1/2
    w = softmax(np.zeros((1, 2)))
    assert np.abs(w[:, :, None] * (np.eye(2) - w[:, None, :])).max() == 0.25
    assert raw_scores(4).shape == (128, 16)


def test_at_d_4_the_undivided_slope_is_larger_and_its_top_weight_nearer_one_half(figures):
    said = _prose("Undivided, the slopes shrink")
    assert "At d = 4 the undivided slope is even a little larger than the divided one" in said
    undivided, divided = map(float, re.search(r"d =    4: largest slope ([\d.]+) undivided, ([\d.]+) divided",
                                              figures["slope"]).groups())
    raw_top, divided_top = map(int, re.search(r"d =    4: .*top weight\s+(\d+)%.*top weight\s+(\d+)%",
                                              figures["scale"]).groups())
    assert undivided > divided and abs(raw_top - 50) < abs(divided_top - 50)
    w = np.linspace(0, 1, 101)
    assert w[np.argmax(w * (1 - w))] == 0.5                                        # w (1 - w) is largest at 1/2


def test_with_the_mask_what_follows_changes_nothing_and_without_it_every_output_moves(figures):
    assert "it could read its target instead of predicting it" in _prose("## The causal mask")
    changes = {kind: float(c) for kind, c in re.findall(r"(with|without) the mask: .* at most ([\d.e+-]+)",
                                                       figures["mask-leak"])}
    assert changes["with"] == 0.0 and changes["without"] > 0.1


def test_one_head_makes_9_and_4_compete_and_two_heads_each_get_nearly_all(figures):
    rows = re.findall(r"(\d) heads?, scores 4 and (\d): weight on 9 ([\d.]+), on 4 ([\d.]+)", figures["two-places"])
    got = {(int(h), int(s)): (float(a), float(b)) for h, s, a, b in rows}
    assert got[1, 4][0] <= 0.5 and got[1, 6][0] < got[1, 4][0]                   # half at best; they compete
    assert got[2, 6][0] == got[2, 4][0] and min(got[2, 4] + got[2, 6]) > 0.9     # its own softmax; nearly full


def test_the_model_reads_the_two_numbers_with_two_heads_not_at_a_fixed_distance(figures):
    said = _prose("At the row of *is*, head 2 of block 1")
    assert "head 4 gives the second number more than the first" in said
    assert "head 2 gives the token 3 back far less, and head 4 gives the token 1 back less" in said
    rows = re.findall(r"head (\d): ([\d.]+) to the first number, ([\d.]+) to the second;\s+at the other [\d,]+ rows, "
                      r"([\d.]+) to the token 3 back, ([\d.]+) to the token 1 back", figures["difference-heads"])
    assert len(rows) == 4
    first, second, three_back, one_back = np.array([[float(x) for x in row[1:]] for row in rows]).T
    assert three_back[1] < first[1] / 4 and one_back[3] < second[3]               # "far less" / "less"
    assert int(re.match(r"(\d+) sentences", figures["difference-heads"]).group(1)) >= 10
    assert first.argmax() == 1 and first[1] > 0.5                                 # head 2: "most of its weight"
    assert second.argmax() == 3 and second[3] > first[3]                           # head 4: the second number
    assert max(first[[0, 2]].max(), second[[0, 2]].max()) < 0.1                    # "the other two ... little"


def test_the_scores_cost_the_same_multiplications_with_any_number_of_heads(figures):
    counts = re.findall(r"([\d,]+) multiplications", figures["heads-cost"])
    assert len(counts) == 3 and len(set(counts)) == 1


def test_the_map_times_the_moved_vectors_is_what_the_layer_added(figures):
    # the maps carry the positions and the moved vectors do not: "the positions change the weights only"
    difference = float(re.search(r"largest difference ([\d.e+-]+)", figures["two-circuits"]).group(1))
    assert difference < 1e-5                                                       # "to float32 rounding"


def test_some_heads_copy_and_others_lower_what_they_read(figures):
    counts = raises_itself()
    shown = [[int(c) for c in re.findall(r"raises\s+(\d+) of 55", line)] for line in figures["copying"].splitlines()
             if line.startswith("block")]
    assert (np.array(shown) == counts).all() and len(model.vocab()) == 55
    assert (counts >= 50).sum() >= 2 and (counts <= 5).sum() >= 2                 # "nearly the whole" / "lower"


def test_copying_and_lowering_stand_outside_chance_and_the_rest_within(figures):
    said = _prose("Some heads copy")
    assert "where a random head raises about half" in said and "Head 2 of block 2 is one of them" in said
    chance = raises_by_chance()
    low, high = np.percentile(chance, [5, 95])
    assert f"{len(chance)} random heads: {chance.mean():.0f} of 55 on average" in figures["copying"]
    assert abs(chance.mean() - 55 / 2) < 3                                         # "about half"
    counts = raises_itself()
    copies, lowers = counts > high, counts < low                                   # the rule the prose states
    assert copies.sum() >= 2 and lowers.sum() >= 2 and lowers[1, 1]               # block 2, head 2 lowers
    assert (counts[counts >= COPIES] > high).all()                                 # the lab's "copies" agree
    assert named_heads()["induction"] == (1, 1)                                    # the induction head of notebook 06
    rest = counts[~copies & ~lowers]
    assert rest.min() >= low and rest.max() <= high                                # "within their range"
    named = {side: re.findall(r"block (\d) head (\d)", line) for side, line in
             re.findall(r"^(above|below) that range: (.*)$", figures["copying"], re.M)}
    assert named == {side: [(str(b + 1), str(h + 1)) for b, h in zip(*np.nonzero(kept))]
                     for side, kept in (("above", copies), ("below", lowers))}
    assert "(above the random heads' 90 % range)" in said and "(below that range)" in said


def test_some_heads_give_the_first_token_of_a_short_text_a_large_share():
    said = _prose("Some heads copy")
    assert "some heads give the text's first token a large share" in said
    shares = np.array([[looks(text_maps(t)[b]).first for b in range(4)] for t in TEXTS])
    assert shares.max() > 0.5 and (shares > 0.3).sum() >= 5
    assert sum(t.split()[0] in ("copy", "reverse", "count") for t in TEXTS) >= len(TEXTS) / 2   # "often names the task"


def test_the_mask_alone_gives_row_i_an_even_share_of_one_over_i_plus_one():
    assert "gives the first token 1/(i + 1) of row i" in _prose("## Where positions come in")
    n = 6
    assert np.allclose(causal_weights(np.zeros((n, n)))[:, 0], 1 / (np.arange(n) + 1))


def test_the_scale_lab_verdict_and_the_figure_agree(figures):
    m = scale_model(1024, False)
    assert f"spread {m.spread:5.2f}" in figures["scale"] and f"{m.top:4.0%}" in figures["scale"]


def test_the_notebook_is_in_the_list_of_notebooks_and_the_chain_of_next_links():
    start = json.loads((CONTENT / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    listing = next("".join(c["source"]) for c in start if "".join(c["source"]).startswith("## The notebooks"))
    listed = re.findall(r"^\d+\. \[([^\]]+)\]\(([^)]+)\)", listing, re.M)
    others = [nb for nb in inventory.notebooks() if nb.stem != "00_start_here"]
    assert listed == [(nb.heading, nb.path) for nb in others]
    order = [nb.path for nb in inventory.notebooks()]
    for here, following in zip(order, order[1:]):
        cells = json.loads((CONTENT / here).read_text(encoding="utf-8"))["cells"]
        assert f"]({following})." in "".join(cells[-1]["source"]).splitlines()[-1], f"{here} ends without Next: {following}"
