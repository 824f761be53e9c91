"""The rotary-positions lab (notebook 01): one query and one key turned by RoPE for their
positions; their score depends only on how far apart they are, and the turn keeps their lengths.

Model: ``rope_model`` (``lib.positional.rope``, or the learner's ``rope_one``). View:
``RotaryLab``. Root widget: ``rotary_lab()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.core.own import Use
from lib.positional import PAIRINGS, rope
from lib.positional import rope as course_rope
from engine.presentation.html import plain
from engine.presentation.numbers import fixed, plural, scientific

from engine.kit.figure_view import set_limits
from engine.kit.layout import controls, lab_root, menu, pick_slider, slider, verdict_widget
from engine.kit.result import Result


def _rope_one_as_rope(rope_one):
    """The learner's ``rope_one(x, position, base)`` (pairs i and i + d/2) in the signature of
    ``lib.positional.rope`` for one vector; the neighbours pairing (2i with 2i + 1) lays the
    pairs out as halves, turns them, and puts them back."""
    def turn(x, base=10000.0, pairing="halves", offset=0):
        x = np.asarray(x, dtype=float)
        if pairing == "halves":
            return rope_one(x, offset, base)
        half = len(x) // 2
        turned = np.asarray(rope_one(np.concatenate([x[0::2], x[1::2]]), offset, base))
        if turned.shape != x.shape:
            return turned                     # the guard reports the wrong shape
        out = np.empty_like(x)
        out[0::2], out[1::2] = turned[:half], turned[half:]
        return out
    return turn


# The exercise whose function this lab can run instead of the course's (see engine/kit/own_function.py).
ROPE_USE = Use("rope-rotation", rope, "lib.positional.rope", adapt=_rope_one_as_rope)

HEAD_SIZE = 32
ROPE_SEED = 2026
_rng = np.random.default_rng(ROPE_SEED)
QUERY = _rng.normal(0, 1, HEAD_SIZE)     # drawn first
KEY = _rng.normal(0, 1, HEAD_SIZE)       # then the key
del _rng
POS_MAX = 31
BASES = (100.0, 1000.0, 10000.0, 100000.0, 1000000.0)
PLANE_LIMITS = (1.0, 1.5, 2.0, 3.0, 5.0)   # the plane's half-width: the first that holds the pair
SCORE_LIMIT = 2.2                          # |score| of the course's query and key, any setting (1.86)


def pair_indices(pair: int, d: int = HEAD_SIZE, pairing: str = "halves") -> tuple[int, int]:
    """The two numbers that turn together as pair ``pair``."""
    return (pair, pair + d // 2) if pairing == "halves" else (2 * pair, 2 * pair + 1)


def signed(n: int) -> str:
    """A whole number with a true minus sign: "3", "0", "−3"."""
    return f"\u2212{-n}" if n < 0 else f"{n}"


def distance_words(distance: int) -> str:
    """The distance m − n in words, with its sign: the score depends on it, not on its size
    alone ("the key 3 positions before the query (m − n = 3)", "... after ... (m − n = −3)")."""
    if distance == 0:
        where = "the key at the query's position"
    else:
        where = (f"the key {plural(abs(distance), 'position')} "
                 f"{'before' if distance > 0 else 'after'} the query")
    return f"{where} (m \u2212 n = {signed(distance)})"


def rope_score(query_pos, key_pos, base=10000.0, pairing="halves", query=QUERY, key=KEY,
               rope=rope) -> float:
    """The scaled score of the query turned for query_pos against the key turned for key_pos."""
    q = rope(query, base, pairing, offset=query_pos)
    k = rope(key, base, pairing, offset=key_pos)
    return float(q @ k / math.sqrt(len(query)))


@lru_cache(maxsize=16)
def _course_scores(base: float, pairing: str) -> np.ndarray:
    """(POS_MAX + 1, POS_MAX + 1): the scaled score of the query at position m against the key
    at n, for every m and n, turned by the course's rope (row i of a stack is at position i)."""
    rows = POS_MAX + 1
    q = course_rope(np.tile(QUERY, (rows, 1)), base, pairing)
    k = course_rope(np.tile(KEY, (rows, 1)), base, pairing)
    table = np.array([[float(q[i] @ k[j] / math.sqrt(HEAD_SIZE)) for j in range(rows)] for i in range(rows)])
    table.setflags(write=False)
    return table


@dataclass(frozen=True)
class RopeResult(Result):
    """One query and one key turned by rotary positions, and their score.

    together: (places,) the score with both moved together to every place their distance has
    in 0 ... last_position; distances, curve: (2 · last_position + 1,) every distance m − n and the
    score at it. lengths: "query" and "key", each (length before, length after) the turn.
    """
    query_pos: int          # m
    key_pos: int            # n
    distance: int           # m − n
    base: float
    pairing: str            # a key of PAIRINGS
    pair: int
    indices: tuple          # the pair's two entries of a vector
    theta: float            # the pair's radians per position
    q_before: tuple         # the query's pair before and after the turn
    q_after: tuple
    k_before: tuple         # the key's
    k_after: tuple
    score: float
    together: np.ndarray
    places: int
    last_position: int
    spread: float           # the largest difference of ``together`` from ``score``
    distances: np.ndarray
    curve: np.ndarray
    lengths: dict
    lengths_kept: bool
    verdict: str


def rope_model(query_pos=5, key_pos=2, base=10000.0, pairing="halves", pair=0, rope=rope) -> RopeResult:
    """Rotary positions for one query and one key: the turned pair, the score, and its constancy.

    ``rope(x, base, pairing, offset)`` turns one vector (``lib.positional.rope`` or the learner's)."""
    if pairing not in PAIRINGS:
        pairing = "halves"
    m, n = min(max(0, int(query_pos)), POS_MAX), min(max(0, int(key_pos)), POS_MAX)
    pair = min(max(0, int(pair)), HEAD_SIZE // 2 - 1)
    base = float(base)
    q_turned = rope(QUERY, base, pairing, offset=m)
    k_turned = rope(KEY, base, pairing, offset=n)
    score = float(q_turned @ k_turned / math.sqrt(HEAD_SIZE))
    # The same distance anywhere in 0..POS_MAX: both positions moved together.
    shifts = range(-min(m, n), POS_MAX - max(m, n) + 1)
    distances = np.arange(-POS_MAX, POS_MAX + 1)
    if rope is course_rope:                      # every score at once, kept for the setting
        table = _course_scores(base, pairing)
        together = np.array([table[m + s, n + s] for s in shifts])
        curve = np.array([table[max(t, 0), max(-t, 0)] for t in distances])
    else:
        together = np.array([rope_score(m + s, n + s, base, pairing, rope=rope) for s in shifts])
        curve = np.array([rope_score(max(t, 0), max(-t, 0), base, pairing, rope=rope) for t in distances])
    spread = float(np.max(np.abs(together - score)))
    i, j = pair_indices(pair, HEAD_SIZE, pairing)
    lengths = {"query": (float(np.linalg.norm(QUERY)), float(np.linalg.norm(q_turned))),
               "key": (float(np.linalg.norm(KEY)), float(np.linalg.norm(k_turned)))}
    kept = all(math.isclose(a, b, rel_tol=1e-12) for a, b in lengths.values())
    same = "the same to 12 decimals" if spread < 1e-12 else f"within {scientific(spread)}"
    if len(shifts) > 1:
        together_words = (f"Moved together to any of the {len(shifts)} places this distance has in the "
                          f"lab's range, 0 to {POS_MAX}, the score stays {fixed(score, 3)} ({same}). ")
    else:
        together_words = (f"This distance has no other place in the lab's range, 0 to {POS_MAX}, so there "
                          "is nothing to move together. ")
    verdict = (f"Query at m = {m}, key at n = {n}, {distance_words(m - n)}: score {fixed(score, 3)}. "
               + together_words +
               f"The turn keeps the lengths: query {fixed(lengths['query'][1])}, key {fixed(lengths['key'][1])}"
               f"{'' if kept else ' (changed!)'}.")
    theta = base ** (-pair / (HEAD_SIZE // 2))
    return RopeResult(query_pos=m, key_pos=n, distance=m - n, base=base, pairing=pairing, pair=pair,
                      indices=(i, j), theta=theta,
                      q_before=(QUERY[i], QUERY[j]), q_after=(q_turned[i], q_turned[j]),
                      k_before=(KEY[i], KEY[j]), k_after=(k_turned[i], k_turned[j]),
                      score=score, together=together, places=len(shifts), last_position=POS_MAX,
                      spread=spread, distances=distances,
                      curve=curve, lengths=lengths, lengths_kept=kept, verdict=verdict)


class RotaryLab:
    """The view: sliders for the two positions, the base and the pair; a pairing dropdown;
    the pair on a plane and the score against the distance."""

    def __init__(self, query_pos=5, key_pos=2, base=10000.0, pairing="halves", pair=0):
        import ipywidgets as widgets
        from matplotlib.patches import Circle

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.q_slider = slider("int", value=query_pos, min=0, max=POS_MAX,
                               description="query position")
        self.q_slider.add_class("course-slider-query")
        self.k_slider = slider("int", value=key_pos, min=0, max=POS_MAX,
                               description="key position")
        self.k_slider.add_class("course-slider-key")
        self.base_slider = pick_slider([(fixed(b, 0, grouped=True), b) for b in BASES], float(base), "base")
        self.base_slider.add_class("course-slider-base")
        self.pair_slider = slider("int", value=pair, min=0, max=HEAD_SIZE // 2 - 1,
                                  description="pair shown")
        self.pair_slider.add_class("course-slider-pair")
        self.pairing = menu([("halves: i with i + 16", "halves"), ("neighbours: 2i with 2i + 1", "neighbours")],
                            pairing, "pairing")
        self.pairing.add_class("course-pairing")
        self.up = widgets.Button(description="both +1", layout=widgets.Layout(width="auto"),
                                 tooltip="move the query and the key one position later")
        self.up.add_class("course-both-up")
        self.down = widgets.Button(description="both \u22121", layout=widgets.Layout(width="auto"),
                                   tooltip="move the query and the key one position earlier")
        self.down.add_class("course-both-down")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.8)
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 1.25])
        plane, curve = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        q_colour, k_colour = OKABE_ITO["vermillion"], OKABE_ITO["blue"]
        self.q_circle = Circle((0, 0), 1, fill=False, ls=":", edgecolor=q_colour, lw=1)
        self.k_circle = Circle((0, 0), 1, fill=False, ls=":", edgecolor=k_colour, lw=1)
        plane.add_patch(self.q_circle)
        plane.add_patch(self.k_circle)
        plane.axhline(0, color="0.75", lw=0.8)
        plane.axvline(0, color="0.75", lw=0.8)
        (self.q_start,) = plane.plot([], [], "o", mfc="none", mec=q_colour, ms=7,
                                     label="query, unturned")
        (self.k_start,) = plane.plot([], [], "s", mfc="none", mec=k_colour, ms=7,
                                     label="key, unturned")
        (self.q_line,) = plane.plot([], [], "-o", color=q_colour, lw=2, ms=7, markevery=[1],
                                    label="query, turned")
        (self.k_line,) = plane.plot([], [], "--s", color=k_colour, lw=2, ms=7, markevery=[1],
                                    label="key, turned")
        plane.set_aspect("equal", adjustable="box")
        plane.set_xlabel("first number of the pair")
        plane.set_ylabel("second number")
        plane.tick_params(labelsize=9)
        self.plane_title = plane.set_title("pair 0: numbers 0 and 16", fontsize=10)
        self.plane = plane

        (self.curve_line,) = curve.plot([], [], color=OKABE_ITO["blue"], lw=1.5,
                                        marker=".", ms=3, label="score at each distance")
        (self.marker,) = curve.plot([], [], "o", color=OKABE_ITO["orange"], mec="black", ms=9,
                                    label="the query and key now")
        curve.axhline(0, color="0.75", lw=0.8)
        curve.set_xlabel("distance (query \u2212 key position)")
        curve.set_ylabel("score q\u00b7k / \u221a32")
        curve.tick_params(labelsize=9)
        self.curve_title = curve.set_title("score 0.000, base 10,000", fontsize=10)
        self.curve = curve
        fig.legend(handles=[self.q_line, self.k_line, self.q_start, self.k_start, self.curve_line,
                            self.marker], loc="lower center", ncol=3, fontsize=8, frameon=False)
        self._scales(PLANE_LIMITS[-1], SCORE_LIMIT)
        fig.tight_layout(rect=(0, 0.13, 1, 1))
        self.view = FigureView(fig, description="A query and key pair on the plane, and the score",
                               changing=[self.q_circle, self.k_circle, self.q_start, self.k_start,
                                         self.q_line, self.k_line, self.plane_title, self.curve_line,
                                         self.marker, self.curve_title])

        self.own = OwnFunctionSwitch([ROPE_USE], self._on_change)
        both = widgets.HBox([self.up, self.down])           # the two moves wrap together, never apart
        row = controls(self.q_slider, self.k_slider, both, self.base_slider, self.pairing, self.pair_slider)
        self.root = lab_root("rotary", [row, self.own.widget, self.view.widget, self.verdict])
        for w in (self.q_slider, self.k_slider, self.base_slider, self.pairing, self.pair_slider):
            w.observe(self._on_change, names="value")
        self.up.on_click(lambda _b: self._move_both(1))
        self.down.on_click(lambda _b: self._move_both(-1))
        self._holding = False
        self.update()

    def _scales(self, plane: float, score: float) -> None:
        """Fixed ranges: the plane's half-width and the score's (a full draw only when they change)."""
        was = getattr(self, "_state", (None, None))
        if was[0] != plane:                   # each panel set only when its own range changes
            set_limits(self.plane, x=(-plane, plane), y=(-plane, plane))
            self.plane.set_xticks([-plane, 0, plane])
            self.plane.set_yticks([-plane, 0, plane])
        if was[1] != score:
            set_limits(self.curve, x=(-POS_MAX - 1, POS_MAX + 1), y=(-score, score))
            self.curve.set_xticks([-30, -20, -10, 0, 10, 20, 30])
        self._state = (plane, score)

    def _move_both(self, step: int) -> None:
        m, n = self.q_slider.value + step, self.k_slider.value + step
        if min(m, n) < 0 or max(m, n) > POS_MAX:
            return                                               # would leave the slider's range
        self._holding = True
        self.q_slider.value, self.k_slider.value = m, n
        self._holding = False
        self.update()

    def _on_change(self, _change=None) -> None:
        if not self._holding:
            self.update()

    def update(self) -> RopeResult:
        args = (self.q_slider.value, self.k_slider.value, self.base_slider.value, self.pairing.value,
                self.pair_slider.value)
        model = self.own.run(lambda turn: rope_model(*args, rope=turn))
        (qa, qb), (ka, kb) = model.q_after, model.k_after
        self.q_start.set_data([model.q_before[0]], [model.q_before[1]])
        self.k_start.set_data([model.k_before[0]], [model.k_before[1]])
        self.q_line.set_data([0, qa], [0, qb])
        self.k_line.set_data([0, ka], [0, kb])
        rq, rk = math.hypot(qa, qb), math.hypot(ka, kb)
        self.q_circle.set_radius(rq)
        self.k_circle.set_radius(rk)
        r = 1.15 * max(rq, rk, 1e-3)
        plane = next((limit for limit in PLANE_LIMITS if r <= limit), float(np.ceil(r)))
        top = max(float(np.max(np.abs(model.curve))) * 1.15, 0.1)
        score = SCORE_LIMIT if top <= SCORE_LIMIT else float(np.ceil(top))   # another rope may go beyond
        self._scales(plane, score)
        i, j = model.indices
        self.plane_title.set_text(f"pair {model.pair}: numbers {i} and {j}")
        distance = model.query_pos - model.key_pos
        self.curve_line.set_data(model.distances, model.curve)
        self.marker.set_data([distance], [model.score])
        self.curve_title.set_text(f"score {fixed(model.score, 3)}, "
                                  f"base {fixed(model.base, 0, grouped=True)}")
        m, n = model.query_pos, model.key_pos
        self.up.disabled, self.down.disabled = max(m, n) >= POS_MAX, min(m, n) <= 0
        self.up.tooltip = ("move the query and the key one position later" if not self.up.disabled else
                           f"one of them is already at the last position, {POS_MAX}")
        self.down.tooltip = ("move the query and the key one position earlier" if not self.down.disabled else
                             "one of them is already at position 0")
        self.view.redraw(state=self._state)
        self.verdict.value = plain(model.verdict)
        self.model = model
        return model


def rotary_lab(**initial):
    """The rotary-positions lab's root widget (class ``course-lab-rotary``)."""
    return RotaryLab(**initial).root
