"""lib.positional: the sinusoidal table's formula and figures, adding it to the words, and RoPE's
properties (PyTorch has no RoPE, so it is tested by what a rotation must do)."""

import numpy as np
import pytest

from lib.positional import PAIRINGS, add_positions, rope, rope_angles, sinusoidal


def test_sinusoidal_matches_the_formula_column_by_column():
    table = sinusoidal(16, 8)
    assert table.shape == (16, 8)
    for p in range(16):
        for k in range(4):
            angle = p / 10000 ** (2 * k / 8)
            assert table[p, 2 * k] == pytest.approx(np.sin(angle), abs=1e-12)
            assert table[p, 2 * k + 1] == pytest.approx(np.cos(angle), abs=1e-12)


def test_sinusoidal_worked_figures():
    assert np.allclose(sinusoidal(5, 2), np.stack([np.sin(np.arange(5)), np.cos(np.arange(5))], 1))
    assert sinusoidal(1, 2)[0, 1] == 1.0                          # PE[0][1] = 1
    assert sinusoidal(10, 8).shape == (10, 8)
    assert np.allclose(sinusoidal(1, 4)[0], [0, 1, 0, 1])          # PE[0] = [0, 1, 0, 1]
    slowest = sinusoidal(2, 4)[1, 2]                               # last pair at position 1
    assert slowest == pytest.approx(np.sin(1 / 100))               # turns at 10000^(-(d-2)/d) = 1/100
    assert np.allclose(sinusoidal(16, 8)[:3], sinusoidal(3, 8))    # a text of L tokens takes PE[:L]


def test_sinusoidal_other_base():
    assert sinusoidal(3, 4, base=100.0)[2, 2] == pytest.approx(np.sin(2 / 10))


@pytest.mark.parametrize("length, d_model, expected", [
    (4, 5, "d_model should be even"), (0, 4, "length should be a whole number of at least 1"),
    (4, 2.0, "d_model should be a whole number"),
])
def test_sinusoidal_rejects_bad_sizes(length, d_model, expected):
    with pytest.raises(ValueError, match=expected):
        sinusoidal(length, d_model)


# ---------------------------------------------------------------- add_positions

def test_add_positions_scales_the_words_then_adds_the_first_rows():
    word = np.array([[-0.77, -0.62, 0.91, -0.28]])
    table = sinusoidal(16, 4)
    assert np.allclose(add_positions(word, table, scale=False), [[-0.77, 0.38, 0.91, 0.72]])
    assert np.allclose(add_positions(word, table), [[-1.54, -0.24, 1.82, 0.44]])
    words = np.random.default_rng(0).normal(0, 0.1, (2, 5, 64))
    assert np.allclose(add_positions(words, sinusoidal(16, 64)), 8 * words + sinusoidal(5, 64))
    assert np.allclose(add_positions(words.tolist(), sinusoidal(5, 64).tolist(), scale=False),
                       words + sinusoidal(5, 64))                    # a table of exactly the text's length


@pytest.mark.parametrize("words, table, message", [
    (np.zeros(4), sinusoidal(16, 4), "words should have shape"),
    (np.zeros((3, 4)), sinusoidal(16, 8), "table should have shape"),
    (np.zeros((20, 4)), sinusoidal(16, 4), "the table has 16 rows, too few for a text of 20 tokens"),
    (np.zeros((6, 8)), sinusoidal(4, 8), "the table has 4 rows, too few for a text of 6 tokens"),
    (np.zeros((3, 4)), np.zeros(4), r"table should have shape \(max_length, 4\) to match the words' 4 numbers"),
    ("words", sinusoidal(16, 4), "words should be an array of numbers"),
])
def test_add_positions_rejects_mismatched_shapes(words, table, message):
    with pytest.raises(ValueError, match=message):
        add_positions(words, table)


# ---------------------------------------------------------------- rope

def _query_and_key():
    rng = np.random.default_rng(2026)
    return rng.normal(0, 1, 32), rng.normal(0, 1, 32)


def test_rope_worked_scores():
    query, key = _query_and_key()
    turned_q, turned_k = rope(np.tile(query, (20, 1))), rope(np.tile(key, (20, 1)))
    score = lambda i, j: turned_q[j] @ turned_k[i] / np.sqrt(32)   # key at i, query at j
    assert round(score(2, 5), 3) == 0.217
    assert round(score(12, 15), 3) == 0.217
    assert round(score(2, 8), 3) == -0.765


@pytest.mark.parametrize("pairing", ["halves", "neighbours"])
def test_rope_keeps_lengths_and_scores_depend_only_on_distance(pairing):
    query, key = _query_and_key()
    turned_q = rope(np.tile(query, (30, 1)), pairing=pairing)
    turned_k = rope(np.tile(key, (30, 1)), pairing=pairing)
    assert np.allclose(np.linalg.norm(turned_q, axis=1), np.linalg.norm(query))
    for distance in (0, 1, 3, 7):
        scores = [turned_q[n + distance] @ turned_k[n] for n in range(30 - distance)]
        assert np.allclose(scores, scores[0], atol=1e-12)
    assert not np.isclose(turned_q[5] @ turned_k[2], turned_q[8] @ turned_k[2])


def test_rope_position_zero_is_unchanged_and_pairs_turn_as_specified():
    x = np.arange(1.0, 9.0)                                  # d = 8, 4 pairs
    assert np.allclose(rope(x[None, :])[0], x)
    theta = 10000.0 ** (-np.arange(4) / 4)
    turned = rope(np.tile(x, (3, 1)))[2]                    # position 2
    for i in range(4):                                       # halves: i with i + 4
        a, b, t = x[i], x[i + 4], 2 * theta[i]
        assert turned[i] == pytest.approx(a * np.cos(t) - b * np.sin(t))
        assert turned[i + 4] == pytest.approx(a * np.sin(t) + b * np.cos(t))
    turned = rope(np.tile(x, (3, 1)), pairing="neighbours")[2]
    for i in range(4):                                       # neighbours: 2i with 2i+1
        a, b, t = x[2 * i], x[2 * i + 1], 2 * theta[i]
        assert turned[2 * i] == pytest.approx(a * np.cos(t) - b * np.sin(t))
        assert turned[2 * i + 1] == pytest.approx(a * np.sin(t) + b * np.cos(t))


def test_neighbours_is_halves_on_interleaved_numbers():
    x = np.random.default_rng(0).normal(size=(2, 6, 8))
    order = np.r_[0:8:2, 1:8:2]                              # (0, 2, 4, 6, 1, 3, 5, 7)
    assert np.allclose(rope(x, pairing="neighbours")[..., order], rope(x[..., order]))


def test_rope_offset_and_leading_axes():
    x = np.random.default_rng(1).normal(size=(2, 3, 10, 16))     # (batch, heads, length, d)
    whole = rope(x)
    assert whole.shape == x.shape
    assert np.allclose(rope(x[..., 4:, :], offset=4), whole[..., 4:, :])
    assert np.allclose(rope(x[0, 0, 7], offset=7), whole[0, 0, 7])   # one vector at position 7
    assert np.allclose(rope(x, base=100000.0)[..., 0, :], x[..., 0, :])
    assert rope_angles([0, 1, 2], 4).shape == (3, 2)


@pytest.mark.parametrize("call, expected", [
    (lambda: rope(np.ones((3, 5))), "should be even"),
    (lambda: rope(np.ones((3, 4)), pairing="interleaved"), "pairing should be one of 'halves', 'neighbours'"),
    (lambda: rope(np.float64(1.0)), "shape"),
])
def test_rope_rejects_bad_input(call, expected):
    with pytest.raises(ValueError, match=expected):
        call()


def test_rope_angles_turn_pair_i_by_base_to_the_minus_i_over_half_d():
    assert np.allclose(rope_angles([0, 1, 3], 4), [[0, 0], [1, 0.01], [3, 0.03]])        # base 10,000
    assert np.allclose(rope_angles([2], 6, base=8.0), [[2, 2 / 2, 2 / 4]])
    assert PAIRINGS == ("halves", "neighbours")


def test_rope_in_float32_stays_float32_and_turns_by_the_same_angles():
    x = np.random.default_rng(4).normal(size=(3, 300, 8))
    for pairing in PAIRINGS:
        ours = rope(x.astype(np.float32), pairing=pairing, offset=5)
        assert ours.dtype == np.float32
        assert np.allclose(ours, rope(x, pairing=pairing, offset=5), atol=1e-5, rtol=1e-5)


def test_ropes_cosines_and_sines_are_made_once_per_length_and_cannot_be_changed():
    from lib.positional import _cos_sin
    assert _cos_sin(7, 4, 10000.0, 0, np.dtype(np.float32)) is _cos_sin(7, 4, 10000.0, 0, np.dtype(np.float32))
    for table in _cos_sin(7, 4, 10000.0, 0, np.dtype(np.float32)):
        with pytest.raises(ValueError, match="read-only"):
            table[0, 0] = 2.0


def test_rope_takes_lists_and_keeps_the_float_type():
    x = np.random.default_rng(3).normal(size=(4, 6))
    assert np.allclose(rope(x.tolist()), rope(x))
    assert np.allclose(rope(x.tolist()[2], offset=2), rope(x)[2])
    with pytest.raises(ValueError, match="x should be an array of numbers"):
        rope("abc")
