"""Labs of notebook 02, the feed-forward network.

- ``hidden_units_lab``: one token through the worked example, each hidden unit before and after
  the activation, and the same token run alone (position-wise).
- ``remove_activation_lab``: without the activation the two matrices collapse into one.
- ``parameters_lab``: where a block's parameters sit, plain or gated.
- ``router_lab``: top-2 routing over 8 experts, 4,096 tokens and load balancing.

Each lab has a pure model (``*_model``, a dict with a ``verdict``) and a view class that builds
its widgets and one figure once and redraws it in place.
"""

from __future__ import annotations

import html
from functools import lru_cache

import numpy as np

from exercises.core.own import Use
from lib.ffn import activation_function, collapse, ffn, hidden_units, worked_example
from lib.moe import balance_load, route
from lib.params import (ModelConfig, block_parameters, count_parameters, equal_count_gated_width,
                        mebibytes)

from .kit.layout import controls as _row, log_scale, lab_root as _root, verdict_html as _verdict_html, verdict_widget as _verdict_widget

# ---------------------------------------------------------------- shared helpers

ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "silu": "SiLU", "none": "no activation"}


def _num(value: float, digits: int = 2) -> str:
    """A short number: 2 not 2.00, -0.14 with two decimals, no negative zero."""
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    text = f"{round(value, digits):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _vec(values, digits: int = 2) -> str:
    return "[" + ", ".join(_num(v, digits) for v in np.ravel(values)) + "]"


def _count(n) -> str:
    return f"{int(n):,}"


def _ordinal_list(items) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _numbers_widget():
    import ipywidgets as widgets
    numbers = widgets.HTML()
    numbers.add_class("course-lab-numbers")
    return numbers


def _numbers_html(rows) -> str:
    """A small two-column table (label, value) that follows the theme's colours."""
    cells = "".join(
        f'<tr><td style="padding: 1px 10px 1px 0; vertical-align: top;">{html.escape(label)}</td>'
        f'<td style="padding: 1px 0; font-family: var(--jp-code-font-family, monospace);">'
        f"{html.escape(value)}</td></tr>" for label, value in rows)
    return ('<table style="color: var(--jp-ui-font-color1, inherit); border-collapse: collapse;'
            f' font-size: var(--jp-ui-font-size1, 13px);">{cells}</table>')


_STYLE = {"description_width": "initial"}


# ---------------------------------------------------------------- lab 1: hidden units

EXAMPLE = worked_example()
TOKENS = EXAMPLE.tokens
X_MIN, X_MAX = -3.0, 3.0


def _token_name(x) -> str | None:
    for name, row in zip(TOKENS, EXAMPLE.X):
        if np.allclose(row, x, atol=1e-9):
            return name
    return None


def _course_relu_ffn(x, W1, b1, W2, b2):
    return ffn(x, W1, b1, W2, b2, activation="relu")


def _sublayer_without_residual(ffn_sublayer):
    """The learner's ``ffn_sublayer`` (a ReLU FFN plus its input) minus the input: the FFN alone."""
    return lambda x, W1, b1, W2, b2: ffn_sublayer(x, W1, b1, W2, b2) - x


# The exercise whose function the hidden-units lab can run with ReLU (see labs/kit/own_function.py).
FFN_USE = Use("ffn-sublayer", _course_relu_ffn, "lib.ffn.ffn", adapt=_sublayer_without_residual)


def hidden_units_model(x1: float = 2.0, x2: float = 0.0, activation: str = "relu",
                       alone: bool = False, relu_ffn=None) -> dict:
    """One token [x1, x2] through the worked example's FFN.

    Returns the hidden units before (``pre``) and after (``post``) the activation, which are on
    (pre > 0), the output, and the same token's output inside the batch (cat, dog, car, plus the
    token if it is not one of them) compared with its output when run alone.
    ``relu_ffn(x, W1, b1, W2, b2)``, if given, computes the ReLU FFN's outputs (the learner's
    ``ffn_sublayer`` without its residual); it is used only when ``activation`` is "relu".
    """
    e = EXAMPLE
    x = np.array([float(x1), float(x2)])
    if not np.all(np.isfinite(x)):
        x = np.nan_to_num(x, nan=0.0, posinf=X_MAX, neginf=X_MIN)
    name = _token_name(x)
    act = activation_function(activation)
    pre = hidden_units(x, e.W1, e.b1)
    post = act(pre)
    on = pre > 0
    if name is None:
        batch, row = np.vstack([e.X, x]), len(TOKENS)
    else:
        batch, row = e.X, TOKENS.index(name)
    if relu_ffn is not None and activation == "relu":
        in_batch = relu_ffn(batch, e.W1, e.b1, e.W2, e.b2)[row]
        by_itself = out = relu_ffn(x[None, :], e.W1, e.b1, e.W2, e.b2)[0]
    else:
        in_batch = ffn(batch, e.W1, e.b1, e.W2, e.b2, activation=activation)[row]
        by_itself = ffn(x[None, :], e.W1, e.b1, e.W2, e.b2, activation=activation)[0]
        out = post @ e.W2 + e.b2
    difference = float(np.max(np.abs(in_batch - by_itself)))
    label = name if name else "your token"
    act_name = ACTIVATION_NAMES.get(activation, str(activation))
    units_on = [f"{i + 1}" for i in np.flatnonzero(on)]
    if units_on:
        which = f"unit{'s' if len(units_on) > 1 else ''} {_ordinal_list(units_on)}"
        verb = "are" if on.sum() > 1 else "is"
        on_text = f"{int(on.sum())} of {on.size} units {verb} on ({which})"
    else:
        on_text = f"none of the {on.size} units is on"
    verdict = (f"{label} {_vec(x)}: before {act_name} the hidden units are {_vec(pre)}, after it "
               f"{_vec(post)}; {on_text}; the output is {_vec(out)}.")
    leak = (~on) & (np.abs(post) > 0.005)
    if activation != "relu" and leak.any():
        j = int(np.flatnonzero(leak)[np.argmax(np.abs(post[leak]))])
        verdict += (f" Unlike ReLU, {act_name} lets a little of an off unit through "
                    f"(unit {j + 1} gives {_num(post[j])}).")
    if alone:
        size = len(batch)
        same = "exactly the same" if difference == 0 else f"the same to {difference:.1e}"
        verdict += (f" Run alone, {label}'s output is {same} as in the batch of {size}: "
                    "the FFN never looks at the other tokens.")
    return {"x": x, "name": name, "label": label, "activation": activation, "pre": pre, "post": post,
            "on": on, "out": out, "in_batch": in_batch, "alone_out": by_itself, "alone": bool(alone),
            "difference": difference, "batch_size": len(batch), "verdict": verdict}


class HiddenUnitsLab:
    """Token picker, two number sliders, activation buttons, "run alone" box; bars redrawn in place."""

    def __init__(self, token: str = "cat", activation: str = "relu", alone: bool = False):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure
        from .kit.own_function import MineSwitch

        self.colours = OKABE_ITO
        start = EXAMPLE.X[TOKENS.index(token)] if token in TOKENS else np.array([0.5, -0.5])
        self._syncing = False
        self.x1 = widgets.FloatSlider(value=float(start[0]), min=X_MIN, max=X_MAX, step=0.1,
                                      description="first number", readout_format=".1f", style=_STYLE,
                                      continuous_update=True, layout=widgets.Layout(width="20em"))
        self.x2 = widgets.FloatSlider(value=float(start[1]), min=X_MIN, max=X_MAX, step=0.1,
                                      description="second number", readout_format=".1f", style=_STYLE,
                                      continuous_update=True, layout=widgets.Layout(width="20em"))
        self.x1.add_class("course-slider-first-number")
        self.x2.add_class("course-slider-second-number")
        options = [(f"{name} {_vec(row)}", name) for name, row in zip(TOKENS, EXAMPLE.X)]
        options.append(("your own numbers", "own"))
        self.token = widgets.Dropdown(options=options, value=token if token in TOKENS else "own",
                                      description="token", style=_STYLE,
                                      layout=widgets.Layout(width="14em"))
        self.activation = widgets.ToggleButtons(
            options=[("ReLU", "relu"), ("GELU", "gelu"), ("SiLU", "silu")], value=activation,
            description="activation", style={**_STYLE, "button_width": "5em"})
        self.alone = widgets.Checkbox(value=alone, description="run this token alone", indent=False,
                                      layout=widgets.Layout(width="auto"))
        self.numbers = _numbers_widget()
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[3.0, 1.3])
        ax, ax_out = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
        units = np.arange(4)
        self.before = ax.bar(units - 0.2, np.zeros(4), width=0.38, color=OKABE_ITO["sky"],
                             edgecolor="black", linewidth=0.6, label="before the activation")
        self.after = ax.bar(units + 0.2, np.zeros(4), width=0.38, color=OKABE_ITO["blue"],
                            edgecolor="black", linewidth=0.6, label="after (orange: unit on)")
        self.before_text = [ax.text(u - 0.2, 0, "", ha="center", fontsize=9) for u in units]
        self.after_text = [ax.text(u + 0.2, 0, "", ha="center", fontsize=9) for u in units]
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(units, [f"unit {u + 1}" for u in units])
        ax.set_xlabel("hidden unit (x @ W1 + b1, then the activation)")
        ax.set_ylabel("value")
        self.title = ax.set_title("cat [2, 0]: 2 of 4 units on (ReLU)", fontsize=10)
        ax.legend(loc="upper center", fontsize=8, frameon=False, ncol=2)
        self.out_bars = ax_out.bar([0, 1], np.zeros(2), width=0.6, color=OKABE_ITO["green"],
                                   edgecolor="black", linewidth=0.6, label="in the batch")
        self.out_text = [ax_out.text(i, 0, "", ha="center", fontsize=9) for i in range(2)]
        (self.alone_marks,) = ax_out.plot([0, 1], [0, 0], linestyle="none", marker="D", markersize=7,
                                          color=OKABE_ITO["vermillion"], markeredgecolor="black",
                                          label="run alone")
        ax_out.axhline(0, color="black", linewidth=0.8)
        ax_out.set_xticks([0, 1], ["out 1", "out 2"])
        ax_out.set_xlim(-0.6, 1.6)
        ax_out.set_xlabel("output (@ W2 + b2)")
        ax_out.set_title("output", fontsize=10)
        self.out_legend = ax_out.legend(loc="upper center", fontsize=8, frameon=False)
        fig.tight_layout()
        self.ax, self.ax_out = ax, ax_out
        self.view = FigureView(fig, description="Bar chart of four hidden units before and after "
                                                "the activation, and the two output numbers")

        controls = _row(self.token, self.activation)
        sliders = _row(self.x1, self.x2, self.alone)
        self.mine = MineSwitch([FFN_USE], self.update)
        self.root = _root("hidden-units", [controls, sliders, self.mine.widget, self.view.widget, self.numbers,
                                           self.verdict])
        self.token.observe(self._on_token, names="value")
        for slider in (self.x1, self.x2):
            slider.observe(self._on_number, names="value")
        self.activation.observe(self._on_other, names="value")
        self.alone.observe(self._on_other, names="value")
        self.update()

    def _on_token(self, change) -> None:
        if self._syncing:
            return
        if change["new"] in TOKENS:
            row = EXAMPLE.X[TOKENS.index(change["new"])]
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

    def update(self) -> dict:
        x1, x2, activation, alone = self.x1.value, self.x2.value, self.activation.value, self.alone.value
        m = self.mine.run(lambda relu_ffn: hidden_units_model(x1, x2, activation, alone, relu_ffn=relu_ffn),
                          FFN_USE.exercise if activation == "relu" else None)
        c = self.colours
        values = np.concatenate([m["pre"], m["post"]])
        low, high = min(-1.0, values.min()), max(1.0, values.max())
        pad = 0.18 * (high - low)
        for i in range(4):
            self.before[i].set_height(m["pre"][i])
            self.after[i].set_height(m["post"][i])
            self.after[i].set_facecolor(c["orange"] if m["on"][i] else c["blue"])
            for text, v in ((self.before_text[i], m["pre"][i]), (self.after_text[i], m["post"][i])):
                text.set_text(_num(v))
                text.set_y(v + (0.03 * (high - low) if v >= 0 else -0.03 * (high - low)))
                text.set_va("bottom" if v >= 0 else "top")
        self.ax.set_ylim(low - pad, high + 0.42 * (high - low))
        act = ACTIVATION_NAMES[m["activation"]]
        self.title.set_text(f"{m['label']} {_vec(m['x'], 1)}: {int(m['on'].sum())} of 4 units on ({act})")
        out_values = np.concatenate([m["in_batch"], m["alone_out"]])
        o_low, o_high = min(-1.0, out_values.min()), max(1.0, out_values.max())
        o_pad = 0.18 * (o_high - o_low)
        for i in range(2):
            v = m["in_batch"][i]
            self.out_bars[i].set_height(v)
            self.out_text[i].set_text(_num(v))
            self.out_text[i].set_y(v + (0.03 if v >= 0 else -0.03) * (o_high - o_low))
            self.out_text[i].set_va("bottom" if v >= 0 else "top")
        self.ax_out.set_ylim(o_low - o_pad, o_high + 0.55 * (o_high - o_low))
        self.alone_marks.set_data([0, 1], m["alone_out"])
        self.alone_marks.set_visible(m["alone"])
        self.out_legend.set_visible(m["alone"])
        self.view.redraw()
        rows = [("token", f"{m['label']} {_vec(m['x'])}"),
                (f"before {act}", _vec(m["pre"])),
                (f"after {act}", _vec(m["post"])),
                ("units on", f"{int(m['on'].sum())} of 4"),
                ("output in the batch", _vec(m["in_batch"]))]
        if m["alone"]:
            rows.append(("output run alone", _vec(m["alone_out"])))
            rows.append(("largest difference", f"{m['difference']:g}"))
        self.numbers.value = _numbers_html(rows)
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def hidden_units_lab(token: str = "cat", activation: str = "relu", alone: bool = False):
    """The hidden-units lab's root widget (class ``course-lab``)."""
    return HiddenUnitsLab(token, activation, alone).root


# ---------------------------------------------------------------- lab 2: remove the activation

WIDTH_MIN, WIDTH_MAX, WIDTH_STEP = 4, 64, 4
PATH = np.linspace(-2.0, 4.0, 241)          # t: cat at 0, dog at 1, car at 2 on x = (2 - t, t)


@lru_cache(maxsize=1)
def _wide_weights():
    """The worked example's four hidden units, then 60 more drawn once (seed 2)."""
    e = worked_example()
    rng = np.random.default_rng(2)
    extra = WIDTH_MAX - 4
    W1 = np.hstack([e.W1, rng.normal(0.0, 1.0, (2, extra))])
    b1 = np.concatenate([e.b1, rng.normal(0.0, 1.5, extra)])
    W2 = np.vstack([e.W2, rng.normal(0.0, 0.4, (extra, 2))])
    return W1, b1, W2, e.b2.copy()


def ffn_weights(width: int):
    """W1, b1, W2, b2 of the lab's FFN of the given hidden width (4 = the worked example)."""
    width = int(np.clip(int(width), 1, WIDTH_MAX))
    W1, b1, W2, b2 = _wide_weights()
    return W1[:, :width].copy(), b1[:width].copy(), W2[:width].copy(), b2.copy()


def _path_inputs(t):
    t = np.asarray(t, dtype=float)
    return np.stack([2.0 - t, t], axis=-1)


def collapse_model(width: int = 4, activation: str = "relu") -> dict:
    """The FFN of the given width with or without its activation, against one matrix W1 @ W2.

    Returns the outputs along the line through cat, dog and car (``path``), the collapsed
    matrix and bias, the largest difference between the FFN and ``x @ W + b`` on the three tokens
    and along the line, the bends (where a hidden unit crosses zero) and the parameter counts.
    """
    width = int(np.clip(int(width), 1, WIDTH_MAX))
    activation = "none" if activation in (None, "none") else activation
    W1, b1, W2, b2 = ffn_weights(width)
    W, b = collapse(W1, b1, W2, b2)
    inputs = _path_inputs(PATH)
    along = ffn(inputs, W1, b1, W2, b2, activation=activation)
    straight = inputs @ W + b
    tokens_out = ffn(EXAMPLE.X, W1, b1, W2, b2, activation=activation)
    tokens_one = EXAMPLE.X @ W + b
    difference = float(max(np.max(np.abs(tokens_out - tokens_one)), np.max(np.abs(along - straight))))
    # Hidden unit j along the line: (2 - t) W1[0, j] + t W1[1, j] + b1[j] = a_j + s_j t.
    a, s = 2.0 * W1[0] + b1, W1[1] - W1[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = np.where(np.abs(s) > 1e-12, -a / s, np.nan)
    inside = np.isfinite(crossing) & (crossing > PATH[0]) & (crossing < PATH[-1])
    bends = np.unique(np.round(crossing[inside], 9)) if activation != "none" else np.array([])
    parameters = 2 * 2 * width + width + 2
    collapsed_parameters = W.size + b.size
    matches = difference < 1e-12
    if activation == "none":
        verdict = (f"Without an activation the width-{width} FFN ({_count(parameters)} parameters) is "
                   f"exactly one 2 × 2 matrix W1 @ W2 plus a bias ({collapsed_parameters} parameters): "
                   f"the two differ by at most {difference:.1e}"
                   f"{' (below 1e-12)' if matches else ''}. Along the line the output is straight, "
                   "however wide the layer is.")
    else:
        act = ACTIVATION_NAMES.get(activation, str(activation))
        n = len(bends)
        verdict = (f"With {act} the width-{width} FFN ({_count(parameters)} parameters) bends at {n} "
                   f"point{'s' if n != 1 else ''} along the line, so it is not one matrix: it differs "
                   f"from x @ (W1 @ W2) + b by up to {_num(difference)}.")
    return {"width": width, "activation": activation, "t": PATH, "along": along, "straight": straight,
            "tokens_out": tokens_out, "tokens_one": tokens_one, "W": W, "b": b,
            "difference": difference, "matches": matches, "bends": bends, "parameters": parameters,
            "collapsed_parameters": collapsed_parameters, "verdict": verdict}


class RemoveActivationLab:
    """Width slider and activation switch; two output curves and their one-matrix versions."""

    def __init__(self, width: int = 4, activation: str = "relu"):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.width = widgets.IntSlider(value=width, min=WIDTH_MIN, max=WIDTH_MAX, step=WIDTH_STEP,
                                       description="hidden width d_ff", style=_STYLE,
                                       continuous_update=True, layout=widgets.Layout(width="22em"))
        self.width.add_class("course-slider-width")
        self.activation = widgets.ToggleButtons(
            options=[("with ReLU", "relu"), ("activation removed", "none")], value=activation,
            description="activation", style={**_STYLE, "button_width": "9em"})
        self.numbers = _numbers_widget()
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.4)
        ax = fig.add_subplot()
        colours = (OKABE_ITO["blue"], OKABE_ITO["orange"])
        self.curves, self.lines = [], []
        for k, colour in enumerate(colours):
            (curve,) = ax.plot(PATH, np.zeros_like(PATH), color=colour, linewidth=2.2,
                               label=f"FFN output {k + 1}")
            (line,) = ax.plot(PATH, np.zeros_like(PATH), color=colour, linestyle="--", linewidth=1.2)
            self.curves.append(curve)
            self.lines.append(line)
        ax.plot([], [], color="black", linestyle="--", linewidth=1.2, label="dashed: x @ (W1 @ W2) + b")
        self.bend_marks = ax.vlines([], 0, 1, colors=OKABE_ITO["vermillion"], linewidth=1.6,
                                    label="a unit switches")
        for t, name in enumerate(TOKENS):
            ax.axvline(t, color="grey", linewidth=0.6)
        self.token_labels = [ax.text(t, 0, name, ha="center", va="bottom", fontsize=9)
                             for t, name in enumerate(TOKENS)]
        ax.set_xlim(PATH[0], PATH[-1])
        ax.set_xlabel("input along the line x = (2 − t, t): cat at t = 0, dog at 1, car at 2")
        ax.set_ylabel("output number")
        self.title = ax.set_title("FFN of width 4, with ReLU: 22 parameters", fontsize=10)
        ax.legend(loc="upper left", fontsize=8, frameon=False, ncol=2)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Line plot of the FFN's two outputs along a line of "
                                                "inputs, with the single-matrix version dashed")
        self.root = _root("remove-activation", [_row(self.width, self.activation), self.view.widget,
                                                self.numbers, self.verdict])
        self.width.observe(self._on_change, names="value")
        self.activation.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> dict:
        m = collapse_model(self.width.value, self.activation.value)
        for k in range(2):
            self.curves[k].set_ydata(m["along"][:, k])
            self.lines[k].set_ydata(m["straight"][:, k])
        values = np.concatenate([m["along"].ravel(), m["straight"].ravel()])
        low, high = float(values.min()), float(values.max())
        pad = 0.12 * max(high - low, 1.0)
        low, high = low - pad, high + 2.2 * pad
        self.ax.set_ylim(low, high)
        self.bend_marks.set_segments([[(t, low), (t, low + 0.06 * (high - low))] for t in m["bends"]])
        for text in self.token_labels:
            text.set_y(low + 0.08 * (high - low))
        state = "with ReLU" if m["activation"] != "none" else "activation removed"
        self.title.set_text(f"FFN of width {m['width']}, {state}: {_count(m['parameters'])} parameters")
        self.view.redraw()
        W, b = m["W"], m["b"]
        self.numbers.value = _numbers_html([
            ("W1 @ W2 (one 2 × 2 matrix)", f"[{_vec(W[0])}, {_vec(W[1])}]"),
            ("b1 @ W2 + b2", _vec(b)),
            ("largest |FFN − one matrix|", f"{m['difference']:.1e}"),
            ("parameters: FFN / one matrix", f"{_count(m['parameters'])} / {m['collapsed_parameters']}"),
        ])
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def remove_activation_lab(width: int = 4, activation: str = "relu"):
    """The remove-the-activation lab's root widget (class ``course-lab``)."""
    return RemoveActivationLab(width, activation).root


# ---------------------------------------------------------------- lab 3: where the parameters are

D_MIN, D_MAX, D_STEP = 64, 4096, 64
MULTIPLE_MIN, MULTIPLE_MAX, MULTIPLE_STEP = 1.0, 8.0, 0.5
ROUNDINGS = (1, 8, 32, 64, 128, 256)


def parameters_model(d_model: int = 768, multiple: float = 4.0, gated: bool = False,
                     round_to: int = 32) -> dict:
    """One block's parameters by part (lib.params), plain or gated.

    d_ff = multiple · d_model is the plain FFN's width. Gated, the width is the one that keeps the
    plain count: two thirds of d_ff rounded up to a multiple of ``round_to``.
    """
    d = int(np.clip(int(d_model), 1, 1 << 16))
    d_ff = max(1, int(round(float(multiple) * d)))
    round_to = max(1, int(round_to))
    gated_width = equal_count_gated_width(d_ff, round_to)
    width = gated_width if gated else d_ff
    block = block_parameters(ModelConfig(d_model=d, layers=1, d_ff=width, vocab=1, gated=bool(gated)))
    plain_ffn = block_parameters(ModelConfig(d_model=d, layers=1, d_ff=d_ff, vocab=1)).ffn
    total = block.total
    shares = {"attention": block.attention / total, "ffn": block.ffn / total, "norms": block.norms / total}
    if gated:
        change = block.ffn / plain_ffn - 1
        same = "exactly the same as" if block.ffn == plain_ffn else f"{change:+.1%} against"
        verdict = (f"Gated, three matrices of width {_count(width)} (two thirds of {_count(d_ff)}, rounded "
                   f"up to a multiple of {round_to}) hold {_count(block.ffn)} numbers, {same} the plain "
                   f"FFN's {_count(plain_ffn)}. The FFN is {shares['ffn']:.1%} of the block, attention "
                   f"{shares['attention']:.1%}, norms {_count(block.norms)}.")
    else:
        verdict = (f"At d = {_count(d)} with d_ff = {_count(d_ff)} the FFN holds {_count(block.ffn)} of "
                   f"the block's {_count(total)} parameters ({shares['ffn']:.1%}); attention "
                   f"{_count(block.attention)} ({shares['attention']:.1%}); the norms only "
                   f"{_count(block.norms)}. A gated FFN would keep the count with width "
                   f"{_count(gated_width)}.")
    return {"d_model": d, "d_ff": d_ff, "gated": bool(gated), "round_to": round_to, "width": width,
            "gated_width": gated_width, "attention": block.attention, "ffn": block.ffn,
            "norms": block.norms, "total": total, "plain_ffn": plain_ffn, "shares": shares,
            "verdict": verdict}


class ParametersLab:
    """d_model and d_ff sliders, plain/gated switch, rounding and log scale; three bars."""

    def __init__(self, d_model: int = 768, multiple: float = 4.0, gated: bool = False,
                 round_to: int = 32, log_scale: bool = False):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.d_model = widgets.IntSlider(value=d_model, min=D_MIN, max=D_MAX, step=D_STEP,
                                         description="width d_model", style=_STYLE,
                                         continuous_update=True, layout=widgets.Layout(width="22em"))
        self.d_model.add_class("course-slider-d-model")
        self.multiple = widgets.FloatSlider(value=multiple, min=MULTIPLE_MIN, max=MULTIPLE_MAX,
                                            step=MULTIPLE_STEP, description="d_ff = ? × d_model",
                                            readout_format=".1f", style=_STYLE, continuous_update=True,
                                            layout=widgets.Layout(width="22em"))
        self.multiple.add_class("course-slider-multiple")
        self.kind = widgets.ToggleButtons(options=[("plain (2 matrices)", False), ("gated (3 matrices)", True)],
                                          value=gated, description="FFN", style={**_STYLE, "button_width": "10em"})
        self.round_to = widgets.Dropdown(options=[(str(n), n) for n in ROUNDINGS], value=round_to,
                                         description="gated width: round up to a multiple of",
                                         style=_STYLE, layout=widgets.Layout(width="auto"))
        self.log_scale = widgets.Checkbox(value=log_scale, description="log scale", indent=False,
                                          layout=widgets.Layout(width="auto"))
        self.numbers = _numbers_widget()
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        self.names = ["attention", "FFN", "norms"]
        self.bars = ax.bar(range(3), [1, 1, 1], width=0.6, edgecolor="black", linewidth=0.6,
                           color=[OKABE_ITO["sky"], OKABE_ITO["orange"], OKABE_ITO["green"]])
        self.labels = [ax.text(i, 1, "", ha="center", va="bottom", fontsize=9) for i in range(3)]
        (self.plain_mark,) = ax.plot([0.62, 1.38], [1, 1], color="black", linestyle="--", linewidth=1.2,
                                     label="plain FFN at d_ff")
        ax.set_xticks(range(3), ["attention\n4·d²", "FFN\n2·d·d_ff", "norms\n2·d"])
        ax.set_xlim(-0.6, 2.6)
        ax.set_ylabel("parameters")
        ax.set_xlabel("part of one block")
        self.title = ax.set_title("One block at d = 768: 7,079,424 parameters", fontsize=10)
        self.legend = ax.legend(loc="upper right", fontsize=8, frameon=False)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Bar chart of one block's parameters: attention, "
                                                "feed-forward network and norms")
        self.root = _root("parameters", [_row(self.d_model, self.multiple), _row(self.kind, self.log_scale),
                                         _row(self.round_to), self.view.widget, self.numbers, self.verdict])
        for control in (self.d_model, self.multiple, self.kind, self.round_to, self.log_scale):
            control.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> dict:
        m = parameters_model(self.d_model.value, self.multiple.value, self.kind.value, self.round_to.value)
        d, width = m["d_model"], m["width"]
        values = [m["attention"], m["ffn"], m["norms"]]
        for i, (bar, v) in enumerate(zip(self.bars, values)):
            bar.set_height(v)
            share = v / m["total"]
            self.labels[i].set_text(f"{_count(v)}\n{share:.1%}" if share >= 0.001 else f"{_count(v)}\n<0.1%")
        formulas = ["attention\n4·d²", "gated FFN\n3·d·d_ff" if m["gated"] else "FFN\n2·d·d_ff", "norms\n2·d"]
        self.ax.set_xticks(range(3), formulas)
        self.plain_mark.set_ydata([m["plain_ffn"], m["plain_ffn"]])
        self.plain_mark.set_visible(m["gated"])
        self.legend.set_visible(m["gated"])
        self.legend.get_texts()[0].set_text(f"plain FFN at d_ff = {_count(m['d_ff'])}")
        top = max(values + [m["plain_ffn"]])
        if self.log_scale.value:
            log_scale(self.ax.yaxis)
            self.ax.set_ylim(10, top * 60)
            for label, v in zip(self.labels, values):
                label.set_y(v * 1.15)
        else:
            self.ax.set_yscale("linear")
            self.ax.set_ylim(0, top * 1.35)
            for label, v in zip(self.labels, values):
                label.set_y(v + top * 0.02)
        self.title.set_text(f"One block at d = {_count(d)}: {_count(m['total'])} parameters"
                            f" ({'gated' if m['gated'] else 'plain'}, d_ff = {_count(width)})")
        self.view.redraw()
        self.numbers.value = _numbers_html([
            ("attention 4·d²", _count(m["attention"])),
            (f"FFN {'3' if m['gated'] else '2'}·d·{_count(width)}", _count(m["ffn"])),
            ("norms 2·d", _count(m["norms"])),
            ("block", _count(m["total"])),
            ("FFN's share", f"{m['shares']['ffn']:.1%}"),
            (f"gated width keeping the count (multiple of {m['round_to']})", _count(m["gated_width"])),
        ])
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def parameters_lab(d_model: int = 768, multiple: float = 4.0, gated: bool = False, round_to: int = 32,
                   log_scale: bool = False):
    """The where-the-parameters-are lab's root widget (class ``course-lab``)."""
    return ParametersLab(d_model, multiple, gated, round_to, log_scale).root


# ---------------------------------------------------------------- lab 4: router

N_EXPERTS, TOP_K, N_TOKENS = 8, 2, 4096
FAIR_SHARE = N_TOKENS * TOP_K // N_EXPERTS
EXAMPLE_SCORES = np.array([2.45, -3.07, 0.50, -0.68, -0.54, -0.26, -2.42, -0.28])
ROUTER_SEED, ROUTER_WIDTH = 2027, 16
STRENGTH_MAX, STEPS_MAX, TOKEN_MAX = 1.0, 20, 15


@lru_cache(maxsize=1)
def router_scores() -> np.ndarray:
    """Scores of 4,096 random tokens for 8 experts, (4096, 8); token 0 is the example's.

    Tokens share a common direction (as real tokens do) and the router is random, so some
    experts score high for most tokens: left to itself the router is unfair.
    """
    rng = np.random.default_rng(ROUTER_SEED)
    x = rng.normal(0.0, 1.0, (N_TOKENS, ROUTER_WIDTH)) + rng.normal(0.0, 0.6, ROUTER_WIDTH)
    W_router = rng.normal(0.0, 1.5 / np.sqrt(ROUTER_WIDTH), (ROUTER_WIDTH, N_EXPERTS))
    scores = x @ W_router
    scores[0] = EXAMPLE_SCORES
    scores.setflags(write=False)
    return scores


@lru_cache(maxsize=256)
def _balanced(strength: float, steps: int):
    return balance_load(router_scores(), TOP_K, strength, steps)


def memory_figures() -> dict:
    """Weights of the course's 12-block model at d = 768: dense vs 8 experts (top 2), in MiB."""
    dense = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12)
    mixture = ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12, experts=N_EXPERTS,
                          top_k=TOP_K)
    d_count, m_count = count_parameters(dense), count_parameters(mixture)
    return {"dense": d_count.total, "stored": m_count.total, "used": m_count.active,
            "dense_mib": mebibytes(d_count.total, 2), "mixture_mib_2": mebibytes(m_count.total, 2),
            "mixture_mib_1": mebibytes(m_count.total, 1)}


def router_model(strength: float = 0.0, steps: int = 10, token: int = 0) -> dict:
    """Route the 4,096 tokens top-2 over 8 experts after ``steps`` steps of bias balancing.

    Returns tokens per expert (``counts``) against the fair share, the balancing bias, and one
    token's scores, its two experts (numbered from 0 as in lib.moe; the course says expert 1 for
    number 0) and their shares, with the verdict.
    """
    strength = float(np.clip(np.nan_to_num(float(strength)), 0.0, STRENGTH_MAX))
    steps = int(np.clip(int(steps), 0, STEPS_MAX))
    token = int(np.clip(int(token), 0, N_TOKENS - 1))
    balancing = _balanced(round(strength, 6), steps)
    counts = balancing.counts[-1]
    first = balancing.counts[0]
    scores = router_scores()[token]
    chosen, shares = balancing.routing.experts[token], balancing.routing.shares[token]
    unbiased = route(scores, TOP_K)
    busiest, quietest = int(counts.max()), int(counts.min())
    if strength == 0 or steps == 0:
        verdict = (f"Left to itself, the router sends {_count(busiest)} tokens to its busiest expert "
                   f"({busiest / FAIR_SHARE:.2f} × the fair share of {_count(FAIR_SHARE)}) and "
                   f"{_count(quietest)} to its quietest ({quietest / FAIR_SHARE:.2f} ×).")
    else:
        verdict = (f"After {steps} balancing step{'s' if steps != 1 else ''} at strength {strength:.2f} "
                   f"the experts get {_count(quietest)} to {_count(busiest)} tokens "
                   f"({quietest / FAIR_SHARE:.2f} × to {busiest / FAIR_SHARE:.2f} × the fair share of "
                   f"{_count(FAIR_SHARE)}); left to itself it was {_count(int(first.min()))} to "
                   f"{_count(int(first.max()))}.")
    who = "The example token" if token == 0 else f"Token {token}"
    pair = "experts " + " and ".join(f"{int(e) + 1}" for e in chosen)
    verdict += (f" {who} goes to {pair} with shares {_num(shares[0], 3)} and {_num(shares[1], 3)}.")
    moved = set(int(e) for e in chosen) != set(int(e) for e in unbiased.experts)
    if moved:
        before = "experts " + " and ".join(f"{int(e) + 1}" for e in unbiased.experts)
        verdict += f" Balancing moved it: its own scores chose {before}."
    return {"strength": strength, "steps": steps, "token": token, "counts": counts, "first_counts": first,
            "bias": balancing.bias, "fair": FAIR_SHARE, "scores": scores, "chosen": chosen,
            "shares": shares, "moved": moved, "busiest": busiest, "quietest": quietest,
            "memory": memory_figures(), "verdict": verdict}


class RouterLab:
    """Balancing strength, steps and token sliders; a token's scores and tokens per expert."""

    def __init__(self, strength: float = 0.0, steps: int = 10, token: int = 0):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.colours = OKABE_ITO
        self.strength = widgets.FloatSlider(value=strength, min=0.0, max=STRENGTH_MAX, step=0.05,
                                            description="balancing strength", readout_format=".2f",
                                            style=_STYLE, continuous_update=True,
                                            layout=widgets.Layout(width="22em"))
        self.strength.add_class("course-slider-strength")
        self.steps = widgets.IntSlider(value=steps, min=0, max=STEPS_MAX, description="balancing steps",
                                       style=_STYLE, continuous_update=True, layout=widgets.Layout(width="22em"))
        self.token = widgets.IntSlider(value=token, min=0, max=TOKEN_MAX,
                                       description="token shown (0: the example)", style=_STYLE,
                                       continuous_update=True, layout=widgets.Layout(width="22em"))
        self.memory = _numbers_widget()
        self.numbers = _numbers_widget()
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 5.0)
        ax_token, ax_load = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
        experts = np.arange(N_EXPERTS)
        names = [f"{e + 1}" for e in experts]
        self.score_bars = ax_token.bar(experts, np.zeros(N_EXPERTS), width=0.6, color=OKABE_ITO["sky"],
                                       edgecolor="black", linewidth=0.6)
        (self.biased_marks,) = ax_token.plot(experts, np.zeros(N_EXPERTS), linestyle="none", marker="_",
                                             markersize=14, markeredgewidth=2.2, color="black",
                                             label="score + bias (used to choose)")
        self.share_text = [ax_token.text(e, 0, "", ha="center", fontsize=9) for e in experts]
        ax_token.axhline(0, color="black", linewidth=0.8)
        ax_token.set_xticks(experts, names)
        ax_token.set_ylabel("router score")
        ax_token.set_xlabel("expert (orange: the two kept, with their shares)")
        self.token_title = ax_token.set_title("Router scores of the example token", fontsize=10)
        self.token_legend = ax_token.legend(loc="lower left", fontsize=8, frameon=False)
        self.load_bars = ax_load.bar(experts, np.zeros(N_EXPERTS), width=0.6, color=OKABE_ITO["blue"],
                                     edgecolor="black", linewidth=0.6)
        self.load_text = [ax_load.text(e, 0, "", ha="center", va="bottom", fontsize=8) for e in experts]
        ax_load.axhline(FAIR_SHARE, color=OKABE_ITO["vermillion"], linestyle="--", linewidth=1.4,
                        label=f"fair share {N_TOKENS:,} × {TOP_K} / {N_EXPERTS} = {FAIR_SHARE:,}")
        ax_load.set_xticks(experts, names)
        ax_load.set_ylabel("tokens")
        ax_load.set_xlabel("expert")
        self.load_title = ax_load.set_title("4,096 random tokens routed", fontsize=10)
        ax_load.legend(loc="upper right", fontsize=8, frameon=False)
        fig.tight_layout()
        self.ax_token, self.ax_load = ax_token, ax_load
        self.view = FigureView(fig, description="Bar charts: one token's router scores for 8 experts, "
                                                "and how many of 4,096 tokens each expert receives")
        self.root = _root("router", [_row(self.strength, self.steps), _row(self.token), self.view.widget,
                                     self.numbers, self.memory, self.verdict])
        for control in (self.strength, self.steps, self.token):
            control.observe(self._on_change, names="value")
        self._show_memory()
        self.update()

    def _show_memory(self) -> None:
        mem = memory_figures()
        self.memory.value = _numbers_html([
            ("12 blocks at d = 768", "parameters / weights in memory"),
            ("dense (one FFN per block)", f"{mem['dense'] / 1e6:.0f} M / {mem['dense_mib']:.0f} MiB at 2 bytes"),
            (f"{N_EXPERTS} experts, top {TOP_K}: stored", f"{mem['stored'] / 1e6:.0f} M / "
             f"{mem['mixture_mib_2']:.0f} MiB at 2 bytes, {mem['mixture_mib_1']:.0f} MiB at 1 byte"),
            ("used for one token", f"{mem['used'] / 1e6:.0f} M"),
        ])

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> dict:
        m = router_model(self.strength.value, self.steps.value, self.token.value)
        c = self.colours
        scores, bias = m["scores"], m["bias"]
        kept = {int(e): share for e, share in zip(m["chosen"], m["shares"])}
        biased = scores + bias
        values = np.concatenate([scores, biased])
        low, high = min(-1.0, values.min()), max(1.0, values.max())
        pad = 0.2 * (high - low)
        for e in range(N_EXPERTS):
            self.score_bars[e].set_height(scores[e])
            self.score_bars[e].set_facecolor(c["orange"] if e in kept else c["sky"])
            text = self.share_text[e]
            if e in kept:
                text.set_text(_num(kept[e], 3))
                top = max(scores[e], biased[e], 0.0)
                text.set_y(top + 0.04 * (high - low))
                text.set_va("bottom")
            else:
                text.set_text("")
        self.biased_marks.set_ydata(biased)
        balancing = bool(np.any(bias != 0))
        self.biased_marks.set_visible(balancing)
        self.token_legend.set_visible(balancing)
        self.ax_token.set_ylim(low - pad, high + pad)
        who = "the example token" if m["token"] == 0 else f"token {m['token']}"
        self.token_title.set_text(f"Router scores of {who}: top 2 kept, softmax over those two")
        counts = m["counts"]
        for e in range(N_EXPERTS):
            self.load_bars[e].set_height(counts[e])
            self.load_text[e].set_text(_count(counts[e]))
            self.load_text[e].set_y(counts[e] + 25)
        self.ax_load.set_ylim(0, max(2.0 * FAIR_SHARE, counts.max() * 1.25))
        state = ("left to itself" if m["strength"] == 0 or m["steps"] == 0
                 else f"after {m['steps']} steps at strength {m['strength']:.2f}")
        self.load_title.set_text(f"{N_TOKENS:,} random tokens routed, {state}")
        self.view.redraw()
        self.numbers.value = _numbers_html([
            ("tokens per expert (1 to 8)", ", ".join(_count(n) for n in counts)),
            ("busiest / quietest vs fair", f"{m['busiest'] / FAIR_SHARE:.2f} × / {m['quietest'] / FAIR_SHARE:.2f} ×"),
            ("balancing bias", _vec(bias)),
        ])
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def router_lab(strength: float = 0.0, steps: int = 10, token: int = 0):
    """The router lab's root widget (class ``course-lab``)."""
    return RouterLab(strength, steps, token).root
