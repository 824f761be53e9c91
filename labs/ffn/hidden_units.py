"""The hidden-units lab (notebook 02): one token through the feed-forward network of the worked
example, each hidden unit before and after the activation, and the same token run alone
(position-wise: the output does not depend on the other tokens).

Model: ``hidden_units_model`` (``lib.ffn``). View: ``HiddenUnitsLab``. Root widget:
``hidden_units_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib.ffn import activation_function, ffn, hidden_units, worked_example
from engine.presentation.html import plain
from engine.presentation.numbers import number, plural, readout, scientific, significant, vector, word_list
from engine.presentation.tables import table

from engine.kit.figure_view import set_changed
from engine.kit.layout import choice, controls, lab_root, menu, numbers_widget, slider, switch, verdict_widget
from engine.kit.result import Result

ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "silu": "SiLU", "none": "no activation"}
CHOICES = ("relu", "gelu", "silu")          # the activations the lab's buttons offer

EXAMPLE = worked_example()
TOKENS = EXAMPLE.tokens
X_MIN, X_MAX = -3.0, 3.0
OWN_START = np.array([0.5, -0.5])   # where "your own numbers" starts: the numbers of no token
# A unit is on when its value before the activation is above ON_ABOVE. A slider hands the kernel
# its number with rounding in the last digits (2.000000000000001 for 2): a unit the notebook
# computes as exactly 0 from the exact numbers stays off, as it does there.
ON_ABOVE = 1e-9


def _token_name(x) -> str | None:
    for name, row in zip(TOKENS, EXAMPLE.X):
        if np.allclose(row, x, rtol=0.0, atol=ON_ABOVE):
            return name
    return None


@dataclass(frozen=True)
class HiddenUnitsResult(Result):
    """One token through the worked example's FFN.

    x: (2,) the token; pre, post, on: (units,) the hidden units before and after the activation
    and which are on (pre above ON_ABOVE); out, in_batch, alone_out: (2,) the output, the same
    token's output inside the batch and run alone.
    """
    x: np.ndarray
    name: str | None            # the token's name when x is one of the example's tokens
    label: str                  # its name, or "your token"
    activation: str
    pre: np.ndarray
    post: np.ndarray
    on: np.ndarray
    units_on: list              # the units on, numbered from 1
    on_count: int
    units: int
    out: np.ndarray
    in_batch: np.ndarray
    alone_out: np.ndarray
    alone: bool                 # whether the verdict compares the token run alone
    leaking: int | None         # the off unit that lets the most through (from 1), if any
    difference: float           # the largest difference between in_batch and alone_out
    batch_size: int
    verdict: str


def hidden_units_model(x1: float = 2.0, x2: float = 0.0, activation: str = "relu",
                       alone: bool = False) -> HiddenUnitsResult:
    """One token [x1, x2] through the worked example's FFN.

    Returns the hidden units before (``pre``) and after (``post``) the activation, which are on
    (``on``: pre above ``ON_ABOVE``; ``units_on`` their numbers, from 1), the output, and the same
    token's output inside the batch (cat, dog, car, plus the token if it is not one of them)
    compared with its output when run alone. A token's own numbers, a rounding away (as a slider
    hands them), are taken as written, as the notebook computes them.
    """
    e = EXAMPLE
    x = np.array([float(x1), float(x2)])
    if not np.all(np.isfinite(x)):
        x = np.nan_to_num(x, nan=0.0, posinf=X_MAX, neginf=X_MIN)
    name = _token_name(x)
    if name is not None:            # a token's own numbers, as the notebook writes them
        x = e.X[TOKENS.index(name)].astype(float)
    act = activation_function(activation)
    pre = hidden_units(x, e.W_up, e.b_up)
    post = act(pre)
    on = pre > ON_ABOVE
    if name is None:
        batch, row = np.vstack([e.X, x]), len(TOKENS)
    else:
        batch, row = e.X, TOKENS.index(name)
    in_batch = ffn(batch, e.W_up, e.b_up, e.W_down, e.b_down, activation=activation)[row]
    by_itself = ffn(x[None, :], e.W_up, e.b_up, e.W_down, e.b_down, activation=activation)[0]
    out = post @ e.W_down + e.b_down
    difference = float(np.max(np.abs(in_batch - by_itself)))
    label = name if name else "your token"
    act_name = ACTIVATION_NAMES.get(activation, str(activation))
    units_on = [int(i) + 1 for i in np.flatnonzero(on)]
    if units_on:
        which = f"unit{'s' if len(units_on) > 1 else ''} {word_list(units_on)}"
        verb = "are" if on.sum() > 1 else "is"
        on_text = f"{int(on.sum())} of {plural(on.size, 'unit')} {verb} on ({which})"
    else:
        on_text = f"none of the {plural(on.size, 'unit')} is on"
    verdict = (f"{label} {vector(x)}: before {act_name} the hidden units are {vector(pre)}, after it "
               f"{vector(post)}; {on_text}; the output is {vector(out)}.")
    leak = (~on) & (np.abs(post) > 0.005)
    leaking = None                  # the off unit that lets the most through (numbered from 1)
    if activation != "relu" and leak.any():
        leaking = int(np.flatnonzero(leak)[np.argmax(np.abs(post[leak]))]) + 1
        verdict += (f" Unlike ReLU, {act_name} lets a little of an off unit through "
                    f"(unit {leaking} gives {number(post[leaking - 1])}).")
    if alone:
        size = len(batch)
        same = ("exactly the same" if difference == 0
                else f"the same to {scientific(difference)} (rounding in the last digits)")
        verdict += (f" Run alone, {label}'s output is {same} as in the batch of {size}: "
                    "the FFN never looks at the other tokens.")
    return HiddenUnitsResult(x=x, name=name, label=label, activation=activation, pre=pre, post=post,
                             on=on, units_on=units_on, on_count=len(units_on), units=int(on.size), out=out,
                             in_batch=in_batch, alone_out=by_itself, alone=bool(alone), leaking=leaking,
                             difference=difference, batch_size=len(batch), verdict=verdict)


SLIDER_STEP = 0.1


@lru_cache(maxsize=1)
def reach() -> tuple[float, float]:
    """The largest size of a hidden unit (before or after any activation) and of an output over
    every setting of the two sliders: each panel's fixed range, so moving a slider never
    rescales a panel and a bar's height can be compared from one setting to the next."""
    e = EXAMPLE
    grid = np.linspace(X_MIN, X_MAX, round((X_MAX - X_MIN) / SLIDER_STEP) + 1)
    tokens = np.stack(np.meshgrid(grid, grid), axis=-1).reshape(-1, 2)
    pre = hidden_units(tokens, e.W_up, e.b_up)
    units = outputs = 0.0
    for activation in CHOICES:
        post = activation_function(activation)(pre)
        out = ffn(tokens, e.W_up, e.b_up, e.W_down, e.b_down, activation=activation)
        units = max(units, float(np.abs(pre).max()), float(np.abs(post).max()))
        outputs = max(outputs, float(np.abs(out).max()))
    return units, outputs


def scale_for(values, reach_: float) -> float:
    """``reach_``, or twice it if a value is beyond it (numbers typed between the sliders' steps
    can go a little past what the steps reach)."""
    top = float(np.max(np.abs(np.nan_to_num(values)))) if np.size(values) else 0.0
    return reach_ if top <= reach_ else 2.0 * max(reach_, top)


class HiddenUnitsLab:
    """Token picker, two number sliders, activation buttons, "run alone" box; bars redrawn in place."""

    def __init__(self, token: str = "cat", activation: str = "relu", alone: bool = False):
        from matplotlib.patches import Patch

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.colours = OKABE_ITO
        start = EXAMPLE.X[TOKENS.index(token)] if token in TOKENS else OWN_START
        self._syncing = False
        self.x1 = slider("float", value=float(start[0]), min=X_MIN, max=X_MAX, step=SLIDER_STEP,
                         description="first number", readout_format=readout(1))
        self.x2 = slider("float", value=float(start[1]), min=X_MIN, max=X_MAX, step=SLIDER_STEP,
                         description="second number", readout_format=readout(1))
        self.x1.add_class("course-slider-first-number")
        self.x2.add_class("course-slider-second-number")
        options = [(f"{name} {vector(row)}", name) for name, row in zip(TOKENS, EXAMPLE.X)]
        options.append(("your own numbers (the sliders)", "own"))
        self.token = menu(options, token if token in TOKENS else "own", "token")
        self.activation = choice([(ACTIVATION_NAMES[a], a) for a in CHOICES], activation,
                                 "activation")
        self.alone = switch("run this token alone", alone)
        self.numbers = numbers_widget()
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[3.0, 1.3])
        ax, ax_out = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        units = np.arange(4)
        self.before = ax.bar(units - 0.2, np.zeros(4), width=0.38, color=OKABE_ITO["sky"],
                             edgecolor="black", linewidth=0.6, label="before the activation")
        self.after = ax.bar(units + 0.2, np.zeros(4), width=0.38, color=OKABE_ITO["blue"],
                            edgecolor="black", linewidth=0.6)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(units, [f"unit {u + 1}" for u in units])
        ax.set_xlabel("hidden unit\n(x @ W_up + b_up, then the activation)")
        ax.set_ylabel("value")
        ax.set_title("four hidden units (their numbers in the table below)", fontsize=10)
        # The "after" bars take the colour of the unit's state: one legend entry for each colour.
        on, off = (Patch(facecolor=OKABE_ITO[c], edgecolor="black", linewidth=0.6) for c in ("orange", "blue"))
        ax.legend([self.before[0], on, off], ["before the activation", "after (unit on)", "after (unit off)"],
                  loc="upper center", fontsize=8, frameon=False, ncol=2)
        self.out_bars = ax_out.bar([0, 1], np.zeros(2), width=0.6, color=OKABE_ITO["green"],
                                   edgecolor="black", linewidth=0.6, label="in the batch")
        (self.alone_marks,) = ax_out.plot([0, 1], [0, 0], linestyle="none", marker="D", markersize=7,
                                          color=OKABE_ITO["vermillion"], markeredgecolor="black",
                                          label="run alone")
        ax_out.axhline(0, color="black", linewidth=0.8)
        ax_out.set_xticks([0, 1], ["out 1", "out 2"])
        ax_out.set_xlim(-0.6, 1.6)
        ax_out.set_xlabel("output\n(@ W_down + b_down)")
        ax_out.set_title("output", fontsize=10)
        self.out_legend = ax_out.legend(loc="upper center", fontsize=8, frameon=False)
        self.ax, self.ax_out = ax, ax_out
        self._scales(*reach())
        fig.tight_layout()
        self.view = FigureView(fig, description="Bar chart of four hidden units before and after "
                                                "the activation, and the two output numbers",
                               changing=[self.before, self.after, self.out_bars, self.alone_marks])

        choices = controls(self.token, self.activation)
        sliders = controls(self.x1, self.x2, self.alone)
        self.root = lab_root("hidden-units", [choices, sliders, self.view.widget, self.numbers, self.verdict])
        self.token.observe(self._on_token, names="value")
        for number_slider in (self.x1, self.x2):
            number_slider.observe(self._on_number, names="value")
        self.activation.observe(self._on_other, names="value")
        self.alone.observe(self._on_other, names="value")
        self.update()

    def _scales(self, units: float, outputs: float) -> None:
        """The two panels' ranges, ± units and ± outputs (fixed, see ``reach``; a full draw only
        when they change)."""
        if getattr(self, "_state", None) == (units, outputs):
            return
        self.ax.set_ylim(-1.2 * units, 1.45 * units)
        self.ax_out.set_ylim(-1.2 * outputs, 1.6 * outputs)
        self._state = (units, outputs)

    def _on_token(self, change) -> None:
        if self._syncing:
            return
        row = None
        if change["new"] in TOKENS:
            row = EXAMPLE.X[TOKENS.index(change["new"])]
        elif _token_name(np.array([self.x1.value, self.x2.value])) is not None:
            row = OWN_START             # "your own numbers" picked on a token: numbers of no token
        if row is not None:
            self._syncing = True
            try:
                self.x1.value, self.x2.value = float(row[0]), float(row[1])
            finally:
                self._syncing = False
        self.update()

    def _on_number(self, change) -> None:
        if self._syncing:
            return
        name = _token_name(np.array([self.x1.value, self.x2.value]))
        self._syncing = True
        try:
            self.token.value = name if name else "own"
        finally:
            self._syncing = False
        self.update()

    def _on_other(self, change) -> None:
        self.update()

    def update(self) -> HiddenUnitsResult:
        x1, x2, activation, alone = self.x1.value, self.x2.value, self.activation.value, self.alone.value
        m = hidden_units_model(x1, x2, activation, alone)
        c = self.colours
        units = scale_for(np.concatenate([m.pre, m.post]), reach()[0])
        outputs = scale_for(np.concatenate([m.in_batch, m.alone_out]), reach()[1])
        self._scales(units, outputs)
        for i in range(4):
            set_changed(self.before[i], height=m.pre[i])
            set_changed(self.after[i], height=m.post[i], facecolor=c["orange"] if m.on[i] else c["blue"])
        act = ACTIVATION_NAMES[m.activation]
        for i in range(2):
            v = m.in_batch[i]
            set_changed(self.out_bars[i], height=v)
        self.alone_marks.set_data([0, 1], m.alone_out)
        self.alone_marks.set_visible(m.alone)
        self.view.redraw(state=self._state)
        rows = [("token", f"{m.label} {vector(m.x)}"),
                (f"before {act}", vector(m.pre)),
                (f"after {act}", vector(m.post)),
                ("units on", f"{int(m.on.sum())} of 4"),
                ("output in the batch", vector(m.in_batch))]
        if m.alone:
            rows.append(("output run alone", vector(m.alone_out)))
            rows.append(("largest difference", significant(m.difference)))
        self.numbers.value = table(rows)
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def hidden_units_lab(token: str = "cat", activation: str = "relu", alone: bool = False):
    """The hidden-units lab's root widget (class ``course-lab``)."""
    return HiddenUnitsLab(token, activation, alone).root
