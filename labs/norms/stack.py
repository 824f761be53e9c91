"""The stack-layers lab (notebook 03): a vector of 8 numbers through N random layers, in six ways
of wrapping a layer (no wrapping, the residual add, post-norm and pre-norm, with LayerNorm or
RMSNorm), stored as 64-bit or 16-bit floats: it explodes, vanishes, grows slowly or stays put.

Model: ``stack_model`` (``lib.stack.run_stack``, with the learner's LayerNorm or RMSNorm if asked).
View: ``StackLab``. Root widget: ``stack_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.core.own import Use
from lib.norm import layer_norm, rms_norm
from lib.stack import MODES, random_rotations, run_stack, start_vector
from engine.presentation.html import plain
from engine.presentation.numbers import amount, fixed, plural, power_of_ten, readout

from engine.kit.figure_view import decades, set_limits, whole_ticks
from engine.kit.layout import controls, lab_root, menu, slider, verdict_widget
from engine.kit.result import Result

D = 8                              # the stack lab's vector has 8 numbers
SQRT_D = float(np.sqrt(D))         # the length of 8 numbers with mean 0 and std 1
GAIN_MIN, GAIN_MAX = 0.3, 2.0
LAYERS_MAX = 64
DTYPES = {"float64": (np.float64, "64-bit floats (largest about 1.8e308)"),
          "float16": (np.float16, "16-bit floats (largest 65,504)")}


@lru_cache(maxsize=16)
def _layers(seed: int):
    """64 random rotations and a start vector of 8 numbers, for one seed (read-only)."""
    rotations = random_rotations(LAYERS_MAX, D, seed=seed)
    x = start_vector(D, seed=seed + 50_000)
    rotations.setflags(write=False)
    x.setflags(write=False)
    return rotations, x


def _classify(lengths: np.ndarray, steps: np.ndarray, overflow_at, zero_at, dtype: str) -> tuple[str, str, dict]:
    """(status, verdict sentence, the figures the sentence states) from the lengths per layer."""
    figures: dict = {}
    status, verdict = _sentence(lengths, steps, overflow_at, zero_at, dtype, figures)
    return status, verdict, figures


def _sentence(lengths, steps, overflow_at, zero_at, dtype: str, figures: dict) -> tuple[str, str]:
    """(status, verdict sentence); ``figures`` receives every number the sentence states."""
    n = len(lengths) - 1
    start = float(lengths[0])
    figures.update(layers=n, start=start, d=D, sqrt_d=SQRT_D,
                   largest=float(np.finfo(DTYPES[dtype][0]).max))
    if overflow_at is not None:
        figures["before_overflow"] = float(lengths[overflow_at - 1])
        largest = "65,504" if dtype == "float16" else "about 1.8e308"
        return "overflow", (f"Overflowed at layer {overflow_at}: a number grew past the largest "
                            f"{DTYPES[dtype][0].__name__} ({largest}) and became infinity. One layer "
                            f"earlier the vector's length was {amount(lengths[overflow_at - 1])}.")
    final = float(lengths[-1])
    factor = (final / start) ** (1.0 / n) if final > 0 else 0.0
    figures.update(final=final, factor=factor, growth=final / start)
    if zero_at is not None:
        before = float(lengths[zero_at - 1])
        rate = (before / start) ** (1.0 / (zero_at - 1)) if zero_at > 1 and before > 0 else 0.0
        figures["rate"] = rate
        return "vanished", (f"Vanished: at layer {zero_at} every number rounded to exactly 0 "
                            f"(each layer multiplied the length by about {fixed(rate)}).")
    if final < 1e-3 * start:
        return "vanished", (f"Vanished: the length fell from {amount(start)} to {amount(final)} over "
                            f"{plural(n, 'layer')}, about \u00d7{fixed(factor)} per layer.")
    if final > 1e3 * start:
        return "exploded", (f"Exploded: the length grew from {amount(start)} to {amount(final)} over "
                            f"{plural(n, 'layer')}, about \u00d7{fixed(factor)} per layer.")
    after = lengths[1:]
    if np.all(np.abs(after / SQRT_D - 1) < 0.01):
        return "steady-sqrt8", (f"Steady at \u221a{D} \u2248 {fixed(SQRT_D)}: the norm rescales the vector "
                                f"after every layer, whatever the scale (length after layer {n}: "
                                f"{fixed(final, 3)}).")
    if n < 4:
        return "short", (f"Too few layers to see a trend: the length went from {amount(start)} to "
                         f"{amount(final)}. Add layers.")
    spread = float(steps.max() / steps.min()) if steps.min() > 0 else np.inf
    if spread < 1.05 and final > 1.2 * start:
        size = float(steps.mean())
        line = start + n * size
        # law: the root mean square over many draws, which no one draw of 8 numbers follows
        # closely; the verdict does not judge it, and notebooks saved from earlier releases print it
        figures.update(size=size, line=line, law=float(np.sqrt(start ** 2 + n * size ** 2)))
        below = "far below" if final < 0.5 * line else "below"
        return "slow-growth", (f"Grows slowly: every layer adds a change of the same length "
                               f"({fixed(size)}), yet after {plural(n, 'layer')} the length is {fixed(final)}, "
                               f"{below} {fixed(start)} + {n} \u00d7 {fixed(size)} = {fixed(line)}, what changes "
                               "all in one direction would give.")
    ratios = lengths[1:] / lengths[:-1]
    if factor > 1.005:
        against = int((ratios < 1).sum())
        figures["against"] = against
        how = ("Grows layer after layer" if against == 0 else
               f"Grows overall, though {plural(against, 'layer')} of {n} left it shorter")
        return "grows", (f"{how}, about \u00d7{fixed(factor, 3)} per layer: "
                         f"{amount(final / start)} times its start after {plural(n, 'layer')}.")
    if factor < 0.995:
        against = int((ratios > 1).sum())
        figures["against"] = against
        how = ("Shrinks layer after layer" if against == 0 else
               f"Shrinks overall, though {plural(against, 'layer')} of {n} left it longer")
        return "shrinks", (f"{how}, about \u00d7{fixed(factor, 3)} per layer: "
                           f"{amount(final / start)} of its start after {plural(n, 'layer')}.")
    return "steady", (f"Steady: the length stays near {fixed(final)} (\u00d7{fixed(factor, 3)} per layer on "
                      "average); each layer gives back exactly as much as it gets.")


def course_layer_norm(x, eps=1e-5):
    """The course's LayerNorm without gain and shift, as the stack and the which-axis lab use it."""
    return layer_norm(x, eps=eps)


def course_rms_norm(x, eps=1e-5):
    """The course's RMSNorm without gain, as the stack uses it."""
    return rms_norm(x, eps=eps)


def _rms_without_gain(rms_norm_fn):
    """The learner's ``rms_norm(x, gain, eps)`` with a gain of ones, as the stack uses it."""
    return lambda x, eps=1e-5: rms_norm_fn(x, np.ones(np.shape(x)[-1]), eps)


# The exercises whose functions this lab (and, for LayerNorm, the which-axis lab) can run instead of
# the course's (see engine/kit/own_function.py).
LAYER_NORM_USE = Use("layer-norm-fix", course_layer_norm, "lib.norm.layer_norm")
RMS_NORM_USE = Use("rms-norm-16bit", course_rms_norm, "lib.norm.rms_norm", adapt=_rms_without_gain)


def norm_use(mode: str):
    """The exercise use of a stack mode: LayerNorm, RMSNorm, or None (no norm in the mode)."""
    if mode in ("post-layer", "pre-layer"):
        return LAYER_NORM_USE
    if mode in ("post-rms", "pre-rms"):
        return RMS_NORM_USE
    return None


@dataclass(frozen=True)
class StackResult(Result):
    """A vector's run through ``layers`` random layers.

    lengths: (layers + 1,) the vector's length before the first layer and after each (inf from an
    overflow on); steps: (layers,) each layer's ratio of lengths. figures: every number the
    verdict states, by name (which depend on the status).
    """
    mode: str                   # a key of lib.stack.MODES
    gain: float                 # each layer's scale
    layers: int
    dtype: str                  # "float64" or "float16"
    seed: int
    lengths: np.ndarray
    steps: np.ndarray
    overflow_at: int | None     # the layer a number became infinite at, counted from 1
    zero_at: int | None         # the layer every number became 0 at
    final: float                # lengths[-1]
    start: float                # lengths[0]
    status: str                 # the verdict's kind: "overflow", "vanished", "exploded", "steady", ...
    figures: dict
    verdict: str


def stack_model(mode: str = "plain", gain: float = 0.5, layers: int = 30, dtype: str = "float64",
                seed: int = 0, norm=None) -> StackResult:
    """The vector's length after each of ``layers`` random layers, and the verdict.

    mode: a key of ``lib.stack.MODES``; gain: each layer's scale, the number its random matrix is
    multiplied by (the lab and the notebook say "scale": there "gain" names a norm's weights);
    dtype: "float64" or "float16" (how the vector is stored between layers). Never raises for an
    overflow.
    norm: ``norm(x, eps=...)`` for the norm modes (default: the course's LayerNorm or RMSNorm).
    """
    mode = mode if mode in MODES else "plain"
    dtype = dtype if dtype in DTYPES else "float64"
    layers = int(np.clip(int(layers), 1, LAYERS_MAX))
    rotations, x = _layers(int(seed))
    run = run_stack(x, rotations[:layers], gain, mode, dtype=DTYPES[dtype][0], norm=norm)
    status, verdict, figures = _classify(run.lengths, run.steps, run.overflow_at, run.zero_at, dtype)
    return StackResult(mode=mode, gain=float(gain), layers=layers, dtype=dtype, seed=int(seed),
                       lengths=run.lengths, steps=run.steps, overflow_at=run.overflow_at,
                       zero_at=run.zero_at, final=float(run.lengths[-1]), start=float(run.lengths[0]),
                       status=status, figures=figures, verdict=verdict)


# The plot's fixed scales: the modes without a norm explode or vanish over many powers of ten;
# with a norm the length stays between 0.1 and 100. A grid line at every power of ten.
FAR, NEAR_RANGE = (-8, 8), (-1, 2)
X_RANGES = (8, 16, 32, 64)          # the layer axis ends at the first of these that holds N


def y_range(mode: str) -> tuple[int, int]:
    """The powers of ten the plot's vertical axis runs between, for a mode."""
    return NEAR_RANGE if norm_use(mode) else FAR


def x_end(layers: int) -> int:
    return next(end for end in X_RANGES if layers <= end)


def off_chart(lengths, low: float, high: float):
    """Where the lengths leave a plot from ``low`` to ``high``: (direction, first layer, the
    last finite length) with direction "above" or "below", or None if they stay on it."""
    for k, value in enumerate(lengths):
        if np.isfinite(value) and value > 0 and not low <= value <= high:
            finite = lengths[np.isfinite(lengths) & (lengths > 0)]
            return ("above" if value > high else "below"), k, float(finite[-1])
    return None


class StackLab:
    """The view: scale and layers sliders, a mode and a number-type menu, a new-layers button."""

    def __init__(self, mode="plain", gain=0.5, layers=30, dtype="float64", seed=0):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure
        from engine.kit.own_function import OwnFunctionSwitch

        self.seed = int(seed)
        self.gain = slider("float", value=gain, min=GAIN_MIN, max=GAIN_MAX, step=0.05,
                            description="scale of each layer", readout_format=readout(2))
        self.gain.add_class("course-slider-scale")
        self.layers = slider("int", value=layers, min=1, max=LAYERS_MAX, step=1,
                              description="layers N")
        self.mode = menu([(label, key) for key, label in MODES.items()], mode, "each layer does")
        self.dtype = menu([(label, key) for key, (_t, label) in DTYPES.items()], dtype, "numbers stored as")
        self.button = widgets.Button(description="new random layers", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-layers")
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        self.sqrt8 = ax.axhline(SQRT_D, color=OKABE_ITO["black"], linestyle="--", linewidth=1,
                                label=f"\u221a{D} \u2248 {fixed(SQRT_D)}")
        (self.line,) = ax.plot([], [], color=OKABE_ITO["blue"], marker="o", markersize=3,
                               linewidth=1.6, label="length of x")
        self.stop = ax.axvline(0, color=OKABE_ITO["vermillion"], linewidth=1.5, visible=False)
        self.stop_text = ax.text(0, 0.5, "", color=OKABE_ITO["vermillion"], fontsize=9,
                                 transform=ax.get_xaxis_transform(), ha="left", va="center")
        (self.edge,) = ax.plot([], [], linestyle="none", marker="^", markersize=8,
                               color=OKABE_ITO["vermillion"], transform=ax.get_xaxis_transform(),
                               clip_on=False)
        # What left the chart, said inside the axes across from where the curve left it (a line
        # each, so that it fits a phone's narrow axes; placed in update).
        self.edge_text = ax.text(0.02, 0.04, "", color=OKABE_ITO["vermillion"], fontsize=8,
                                 transform=ax.transAxes, va="bottom", linespacing=1.15)
        ax.set_xlabel("layer (0 = the input)")
        ax.set_ylabel("length of the vector (log)")
        self.title = ax.set_title("x \u2190 f(x), scale 0.50, 30 layers", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(handles=[self.line, self.sqrt8], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize=8, frameon=False)
        self.ax = ax
        self._scales(mode, layers)
        fig.tight_layout()
        self.view = FigureView(fig, description="Log-scale plot of the vector's length after each layer",
                               changing=[self.line, self.stop, self.stop_text, self.edge,
                                         self.edge_text, self.title])
        self.own = OwnFunctionSwitch([LAYER_NORM_USE, RMS_NORM_USE], self.update)
        self.root = lab_root("stack", [controls(self.gain, self.layers), controls(self.mode, self.dtype, self.button),
                                       self.own.widget, self.view.widget, self.verdict])
        for control in (self.gain, self.layers, self.mode, self.dtype):
            control.observe(lambda _change: self.update(), names="value")
        self.button.on_click(self._new_layers)
        self.update()

    def _scales(self, mode: str, layers: int) -> None:
        """The fixed scales for the mode and the number of layers (a full draw only when they change)."""

        low, high = y_range(mode)
        if getattr(self, "_y", None) != (low, high):
            decades(self.ax.yaxis, low, high, label_every=2 if high - low > 8 else 1)
            self._y = (low, high)
        end = x_end(layers)
        if getattr(self, "_x", None) != end:
            set_limits(self.ax, x=(-0.5, end + 0.5))
            whole_ticks(self.ax.xaxis, 0, end)
            self._x = end

    def _new_layers(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update(self) -> StackResult:
        mode, gain, layers, dtype = self.mode.value, self.gain.value, self.layers.value, self.dtype.value
        use = norm_use(mode)
        m = self.own.run(lambda norm: stack_model(mode, gain, layers, dtype, self.seed, norm=norm),
                          use.exercise if use else None)
        n = m.layers
        self._scales(m.mode, n)
        k = np.arange(n + 1)
        shown = m.lengths.copy()
        shown[~(shown > 0)] = np.nan                       # zeros and NaN cannot sit on a log scale
        self.line.set_data(k, shown)
        stop = m.overflow_at or m.zero_at
        self.stop.set_visible(stop is not None)
        if stop is not None:
            self.stop.set_xdata([stop, stop])
            self.stop_text.set_position((stop + 0.6, 0.5))
            self.stop_text.set_text("overflow \u2192 inf" if m.overflow_at else "all zeros")
        else:
            self.stop_text.set_text("")
        low, high = (10.0 ** e for e in y_range(m.mode))
        leaves = off_chart(shown, low, high)
        if leaves is None:
            self.edge.set_data([], [])
            self.edge_text.set_text("")
        else:
            where, at, last = leaves
            edge = 0.97 if where == "above" else 0.03
            self.edge.set_data([at], [edge])
            self.edge.set_marker("^" if where == "above" else "v")
            limit = power_of_ten(y_range(m.mode)[1 if where == "above" else 0])
            arrow = "\u2191" if where == "above" else "\u2193"
            self.edge_text.set_text(f"{arrow} off the chart\n({where} {limit}) from layer {at};\n"
                                    f"last length {amount(last)}")
            # The curve starts mid-height and heads for the edge it leaves by: the note goes in
            # the other half, across from where it left (left on the right: said on the left).
            away = at >= 0.55 * x_end(n)
            above = where == "above"
            self.edge_text.set_position((0.02 if away else 0.98, 0.04 if above else 0.96))
            self.edge_text.set_horizontalalignment("left" if away else "right")
            self.edge_text.set_verticalalignment("bottom" if above else "top")
        self.title.set_text(f"{MODES[m.mode]}, scale {fixed(m.gain)}, {plural(n, 'layer')}")
        self.view.redraw(state=(self._y, self._x))
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def stack_lab(**initial):
    """The stack-layers lab's root widget (class ``course-lab-stack``)."""
    return StackLab(**initial).root
