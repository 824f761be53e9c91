"""Labs of notebook 03: normalisation and residual connections.

- ``stack_lab``: a vector of 8 numbers through N random layers, in six ways of wrapping a layer
  (no wrapping, the residual add, post-norm and pre-norm, with LayerNorm or RMSNorm).
- ``axis_lab``: normalise each token (right) or each column of a batch (wrong).
- ``placement_lab``: pre-norm vs post-norm through a deep stack of random blocks.
- ``stream_lab``: the residual stream of 12 pre-norm blocks, block by block.

Each lab has a model (a pure function from the controls to numbers and a verdict, never raising)
and a view (widgets and one figure, redrawn in place).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lib.block import norm_placement_experiment
from exercises.core.own import Use
from lib.norm import layer_norm, rms_norm
from lib.stack import MODES, random_rotations, residual_stream, run_stack, start_vector

from .kit.layout import controls as _controls, log_scale, lab_root as _root, verdict_html as _verdict_html, verdict_widget as _verdict_widget

D = 8                              # the stack lab's vector has 8 numbers
SQRT_D = float(np.sqrt(D))         # the length of 8 numbers with mean 0 and std 1
GAIN_MIN, GAIN_MAX = 0.3, 2.0
LAYERS_MAX = 64
DTYPES = {"float64": (np.float64, "64-bit floats (largest about 1.8e308)"),
          "float16": (np.float16, "16-bit floats (largest 65,504)")}


def _fmt(value: float) -> str:
    """A length in plain words: 2.83, 0.0041, 3.4e+19."""
    value = float(value)
    if value == 0 or (1e-3 <= abs(value) < 1e5):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.2g}"


def _slider(kind: str, **kw):
    import ipywidgets as widgets
    cls = widgets.FloatSlider if kind == "float" else widgets.IntSlider
    return cls(continuous_update=True, style={"description_width": "initial"},
               layout=widgets.Layout(width="22em"), **kw)


# ============================================================ stack layers

@lru_cache(maxsize=16)
def _layers(seed: int):
    """64 random rotations and a start vector of 8 numbers, for one seed (read-only)."""
    rotations = random_rotations(LAYERS_MAX, D, seed=seed)
    x = start_vector(D, seed=seed + 50_000)
    rotations.setflags(write=False)
    x.setflags(write=False)
    return rotations, x


def _classify(lengths: np.ndarray, steps: np.ndarray, overflow_at, zero_at, dtype: str) -> tuple[str, str]:
    """(status, verdict sentence) from the lengths per layer."""
    n = len(lengths) - 1
    start = float(lengths[0])
    if overflow_at is not None:
        largest = "65,504" if dtype == "float16" else "about 1.8e308"
        return "overflow", (f"Overflowed at layer {overflow_at}: a number grew past the largest "
                            f"{DTYPES[dtype][0].__name__} ({largest}) and became infinity. One layer "
                            f"earlier the vector's length was {_fmt(lengths[overflow_at - 1])}.")
    final = float(lengths[-1])
    factor = (final / start) ** (1.0 / n) if final > 0 else 0.0
    if zero_at is not None:
        before = float(lengths[zero_at - 1])
        rate = (before / start) ** (1.0 / (zero_at - 1)) if zero_at > 1 and before > 0 else 0.0
        return "vanished", (f"Vanished: at layer {zero_at} every number rounded to exactly 0 "
                            f"(each layer multiplied the length by about {rate:.2f}).")
    if final < 1e-3 * start:
        return "vanished", (f"Vanished: the length fell from {_fmt(start)} to {_fmt(final)} over {n} "
                            f"layers, about \u00d7{factor:.2f} per layer.")
    if final > 1e3 * start:
        return "exploded", (f"Exploded: the length grew from {_fmt(start)} to {_fmt(final)} over {n} "
                            f"layers, about \u00d7{factor:.2f} per layer.")
    after = lengths[1:]
    if np.all(np.abs(after / SQRT_D - 1) < 0.01):
        return "steady-sqrt8", (f"Steady at \u221a{D} \u2248 {SQRT_D:.2f}: the norm rescales the vector "
                                f"after every layer, whatever the gain (length after layer {n}: "
                                f"{final:.3f}).")
    if n < 4:
        return "short", (f"Too few layers to see a trend: the length went from {_fmt(start)} to "
                         f"{_fmt(final)}. Add layers.")
    spread = float(steps.max() / steps.min()) if steps.min() > 0 else np.inf
    if spread < 1.05 and final > 1.2 * start:
        size = float(steps.mean())
        law = float(np.sqrt(start ** 2 + n * size ** 2))
        return "sqrt-depth", (f"Grows like \u221adepth: every layer adds a change of the same size "
                              f"({size:.2f}) in a new direction, so after {n} layers the length is "
                              f"{final:.2f}, near \u221a({start:.2f}\u00b2 + {n} \u00d7 {size:.2f}\u00b2) "
                              f"= {law:.2f}, far below {start:.2f} + {n} \u00d7 {size:.2f} = "
                              f"{start + n * size:.2f}.")
    if factor > 1.005:
        return "grows", (f"Grows layer after layer, about \u00d7{factor:.3f} per layer: "
                         f"{_fmt(final / start)} times its start after {n} layers, and still growing.")
    if factor < 0.995:
        return "shrinks", (f"Shrinks layer after layer, about \u00d7{factor:.3f} per layer: "
                           f"{_fmt(final / start)} of its start after {n} layers.")
    return "steady", (f"Steady: the length stays near {final:.2f} (\u00d7{factor:.3f} per layer on "
                      "average); each layer gives back exactly as much as it gets.")


def _course_layer_norm(x, eps=1e-5):
    return layer_norm(x, eps=eps)


def _course_rms_norm(x, eps=1e-5):
    return rms_norm(x, eps=eps)


def _rms_without_gain(rms_norm_fn):
    """The learner's ``rms_norm(x, gain, eps)`` with a gain of ones, as the stack uses it."""
    return lambda x, eps=1e-5: rms_norm_fn(x, np.ones(np.shape(x)[-1]), eps)


# The exercises whose functions these labs can run instead of the course's (see labs/kit/own_function.py).
LAYER_NORM_USE = Use("layer-norm", _course_layer_norm, "lib.norm.layer_norm")
RMS_NORM_USE = Use("rms-norm", _course_rms_norm, "lib.norm.rms_norm", adapt=_rms_without_gain)


def norm_use(mode: str):
    """The exercise use of a stack mode: LayerNorm, RMSNorm, or None (no norm in the mode)."""
    if mode in ("post-layer", "pre-layer"):
        return LAYER_NORM_USE
    if mode in ("post-rms", "pre-rms"):
        return RMS_NORM_USE
    return None


def stack_model(mode: str = "plain", gain: float = 0.5, layers: int = 30, dtype: str = "float64",
                seed: int = 0, norm=None) -> dict:
    """The vector's length after each of ``layers`` random layers, and the verdict.

    mode: a key of ``lib.stack.MODES``; gain: each layer's multiplier; dtype: "float64" or
    "float16" (how the vector is stored between layers). Never raises for an overflow.
    norm: ``norm(x, eps=...)`` for the norm modes (default: the course's LayerNorm or RMSNorm).
    """
    mode = mode if mode in MODES else "plain"
    dtype = dtype if dtype in DTYPES else "float64"
    layers = int(np.clip(int(layers), 1, LAYERS_MAX))
    rotations, x = _layers(int(seed))
    run = run_stack(x, rotations[:layers], gain, mode, dtype=DTYPES[dtype][0], norm=norm)
    status, verdict = _classify(run.lengths, run.steps, run.overflow_at, run.zero_at, dtype)
    return {"mode": mode, "gain": float(gain), "layers": layers, "dtype": dtype, "seed": int(seed),
            "lengths": run.lengths, "steps": run.steps, "overflow_at": run.overflow_at,
            "zero_at": run.zero_at, "final": float(run.lengths[-1]), "start": float(run.lengths[0]),
            "status": status, "verdict": verdict}


class StackLab:
    """The view: gain and layers sliders, a mode and a number-type menu, a new-layers button."""

    def __init__(self, mode="plain", gain=0.5, layers=30, dtype="float64", seed=0):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure
        from .kit.own_function import MineSwitch

        self.seed = int(seed)
        self.gain = _slider("float", value=gain, min=GAIN_MIN, max=GAIN_MAX, step=0.05,
                            description="gain of each layer", readout_format=".2f")
        self.gain.add_class("course-slider-gain")
        self.layers = _slider("int", value=layers, min=1, max=LAYERS_MAX, step=1,
                              description="layers N")
        self.mode = widgets.Dropdown(options=[(label, key) for key, label in MODES.items()],
                                     value=mode, description="each layer does",
                                     style={"description_width": "initial"},
                                     layout=widgets.Layout(width="22em"))
        self.dtype = widgets.Dropdown(options=[(label, key) for key, (_t, label) in DTYPES.items()],
                                      value=dtype, description="numbers stored as",
                                      style={"description_width": "initial"},
                                      layout=widgets.Layout(width="24em"))
        self.button = widgets.Button(description="new random layers", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-layers")
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        log_scale(ax.yaxis)
        self.sqrt8 = ax.axhline(SQRT_D, color=OKABE_ITO["black"], linestyle="--", linewidth=1,
                                label=f"\u221a{D} \u2248 {SQRT_D:.2f}")
        (self.law,) = ax.plot([], [], color=OKABE_ITO["green"], linestyle=":", linewidth=2,
                              label="\u221a-law")
        (self.line,) = ax.plot([], [], color=OKABE_ITO["blue"], marker="o", markersize=3,
                               linewidth=1.6, label="length of x")
        self.stop = ax.axvline(0, color=OKABE_ITO["vermillion"], linewidth=1.5, visible=False)
        self.stop_text = ax.text(0, 0.5, "", color=OKABE_ITO["vermillion"], fontsize=9,
                                 transform=ax.get_xaxis_transform(), ha="left", va="center")
        ax.set_xlabel("layer (0 = the input)")
        ax.set_ylabel("length of the vector (log)")
        self.title = ax.set_title("x ← x + f(LayerNorm(x)), gain 0.50, 30 layers", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Log-scale plot of the vector's length after each layer")
        self.mine = MineSwitch([LAYER_NORM_USE, RMS_NORM_USE], self.update)
        self.root = _root("stack", [_controls(self.gain, self.layers), _controls(self.mode, self.dtype,
                                    self.button), self.mine.widget, self.view.widget, self.verdict])
        for control in (self.gain, self.layers, self.mode, self.dtype):
            control.observe(lambda _change: self.update(), names="value")
        self.button.on_click(self._new_layers)
        self.update()

    def _new_layers(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update(self) -> dict:
        mode, gain, layers, dtype = self.mode.value, self.gain.value, self.layers.value, self.dtype.value
        use = norm_use(mode)
        m = self.mine.run(lambda norm: stack_model(mode, gain, layers, dtype, self.seed, norm=norm),
                          use.exercise if use else None)
        n = m["layers"]
        k = np.arange(n + 1)
        shown = m["lengths"].copy()
        shown[~(shown > 0)] = np.nan                       # zeros and NaN cannot sit on a log scale
        self.line.set_data(k, shown)
        if m["status"] == "sqrt-depth":
            size = float(np.nanmean(m["steps"]))
            self.law.set_data(k, np.sqrt(m["start"] ** 2 + k * size ** 2))
        else:
            self.law.set_data([], [])
        stop = m["overflow_at"] or m["zero_at"]
        self.stop.set_visible(stop is not None)
        if stop is not None:
            self.stop.set_xdata([stop, stop])
            self.stop_text.set_position((stop + 0.6, 0.5))
            self.stop_text.set_text("overflow \u2192 inf" if m["overflow_at"] else "all zeros")
        else:
            self.stop_text.set_text("")
        finite = shown[np.isfinite(shown)]
        lo = min(float(finite.min()) if finite.size else 1.0, 1.0)
        hi = max(float(finite.max()) if finite.size else 10.0, 10.0)
        self.ax.set_ylim(lo / 3, hi * 10)
        self.ax.set_xlim(-0.5, max(n, 2) + 0.5)
        self.title.set_text(f"{MODES[m['mode']]}, gain {m['gain']:.2f}, {n} layer{'s' if n > 1 else ''}")
        handles = [self.line, self.sqrt8] + ([self.law] if m["status"] == "sqrt-depth" else [])
        rising = bool(finite.size) and float(finite[-1]) > m["start"]
        self.ax.legend(handles=handles, loc="upper left" if rising else "upper right", fontsize=9,
                       frameon=True, framealpha=0.85)
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def stack_lab(**initial):
    """The stack-layers lab's root widget (class ``course-lab-stack``)."""
    return StackLab(**initial).root


# ============================================================ which axis

TOKENS = ("the", "cat", "sat", "down")
BATCH = np.array([[0.5, -1.0, 2.0, 0.3],
                  [2.0, 1.5, -0.5, 0.8],
                  [-2.0, 0.4, 1.1, -0.6],
                  [3.5, 4.0, 2.5, 3.0]])
CHANGED = (1, 0)                   # the slider sets cat's first number
AXIS_MODES = {"token": "each token (right)", "column": "each column (wrong)"}


def normalise(x, how: str = "token", eps: float = 1e-5, norm=_course_layer_norm):
    """LayerNorm over each token's numbers (how="token", the last axis) or, wrongly, over each
    column of the batch (how="column", the first axis). ``norm(x, eps=...)`` is the LayerNorm
    (the course's, or the learner's)."""
    x = np.asarray(x, dtype=float)
    return norm(x, eps=eps) if how == "token" else norm(x.T, eps=eps).T


def axis_model(value: float = 2.0, how: str = "token", norm=_course_layer_norm) -> dict:
    """Normalise BATCH with cat's first number set to ``value``, and compare with the batch as
    it starts. Returns the inputs, outputs, each token's mean and std after normalising, how far
    the other tokens' results moved, and the verdict."""
    how = how if how in AXIS_MODES else "token"
    x = BATCH.copy()
    x[CHANGED] = float(value) if np.isfinite(value) else BATCH[CHANGED]
    out = normalise(x, how, norm=norm)
    base = normalise(BATCH, how, norm=norm)
    others = [i for i in range(len(TOKENS)) if i != CHANGED[0]]
    moved_others = float(np.abs(out[others] - base[others]).max())
    moved_own = float(np.abs(out[CHANGED[0]] - base[CHANGED[0]]).max())
    means, stds = out.mean(axis=-1), out.std(axis=-1)
    name = TOKENS[CHANGED[0]]
    if how == "token":
        summary = (f"Every token now has mean {abs(means).max():.2f} and std {stds.min():.2f}: "
                   "each was rescaled using its own numbers only.")
    else:
        summary = (f"The tokens' means now run from {means.min():.2f} to {means.max():.2f} and their "
                   f"stds from {stds.min():.2f} to {stds.max():.2f}: only the columns were rescaled.")
    if moved_own < 1e-12:
        change = (f"This is the batch as it starts; change {name}'s first number and watch the "
                  "other rows.")
    elif moved_others < 1e-9:
        change = (f"Changing {name}'s first number changed {name}'s own result (by up to "
                  f"{moved_own:.2f}) and nothing else: the other tokens' results moved by 0.00.")
    else:
        change = (f"Changing {name}'s first number moved the OTHER tokens' results by up to "
                  f"{moved_others:.2f}: a token's result now depends on what else is in the batch.")
    return {"value": float(x[CHANGED]), "how": how, "x": x, "out": out, "means": means, "stds": stds,
            "moved_others": moved_others, "moved_own": moved_own,
            "verdict": f"{change} {summary}"}


class AxisLab:
    """The view: a slider for one of cat's numbers, a right/wrong toggle, input and output grids."""

    def __init__(self, value=2.0, how="token"):
        import ipywidgets as widgets
        from matplotlib.colors import TwoSlopeNorm
        from matplotlib.patches import Rectangle

        from .kit.figure_view import FigureView, new_figure
        from .kit.own_function import MineSwitch

        self.value = _slider("float", value=value, min=-4.0, max=4.0, step=0.5,
                             description=f"{TOKENS[CHANGED[0]]}'s first number", readout_format=".1f")
        self.how = widgets.ToggleButtons(options=[(label, key) for key, label in AXIS_MODES.items()],
                                         value=how, description="normalise",
                                         style={"description_width": "initial", "button_width": "11em"})
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.2)
        grid = fig.add_gridspec(1, 2, width_ratios=[1, 1.55], wspace=0.08)
        self.axes = (fig.add_subplot(grid[0]), fig.add_subplot(grid[1]))
        m = axis_model(value, how)
        colour = TwoSlopeNorm(vmin=-3.0, vcenter=0.0, vmax=3.0)
        self.images, self.cells = [], []
        for ax, data, title in zip(self.axes, (m["x"], m["out"]), ("the batch", "after normalising")):
            self.images.append(ax.imshow(data, cmap="PuOr_r", norm=colour, aspect="auto"))
            cells = [[ax.text(j, i, "", ha="center", va="center", fontsize=9)
                      for j in range(data.shape[1])] for i in range(data.shape[0])]
            self.cells.append(cells)
            ax.set_xticks(range(data.shape[1]), [f"{j + 1}" for j in range(data.shape[1])])
            ax.set_xlabel("number of the token")
            ax.set_title(title, fontsize=10)
        self.axes[0].set_yticks(range(len(TOKENS)), TOKENS)
        self.axes[1].set_yticks([])
        self.axes[1].set_xlim(-0.5, 5.6)
        self.axes[1].text(4.2, -0.75, "mean", ha="center", va="bottom", fontsize=9)
        self.axes[1].text(5.1, -0.75, "std", ha="center", va="bottom", fontsize=9)
        self.stats = [(self.axes[1].text(4.2, i, "", ha="center", va="center", fontsize=9),
                       self.axes[1].text(5.1, i, "", ha="center", va="center", fontsize=9))
                      for i in range(len(TOKENS))]
        self.marker = self.axes[0].add_patch(Rectangle((CHANGED[1] - 0.5, CHANGED[0] - 0.5), 1, 1,
                                                       fill=False, linewidth=2.5, edgecolor="black"))
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.8, bottom=0.16)
        self.view = FigureView(fig, description="Two grids: a batch of four tokens, and the batch after normalising")
        self.mine = MineSwitch([LAYER_NORM_USE], self.update)
        self.root = _root("axis", [_controls(self.value, self.how), self.mine.widget, self.view.widget,
                                   self.verdict])
        self.value.observe(lambda _c: self.update(), names="value")
        self.how.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> dict:
        value, how = self.value.value, self.how.value
        m = self.mine.run(lambda norm: axis_model(value, how, norm=norm))
        for image, cells, data in zip(self.images, self.cells, (m["x"], m["out"])):
            image.set_data(data)
            for i, row in enumerate(cells):
                for j, cell in enumerate(row):
                    cell.set_text(f"{data[i, j]:.1f}" if image is self.images[0] else f"{data[i, j]:.2f}")
                    cell.set_color("white" if abs(data[i, j]) > 1.9 else "black")
        for (mean, std), mu, sd in zip(self.stats, m["means"], m["stds"]):
            mean.set_text(f"{mu + 0.0:.2f}")
            std.set_text(f"{sd:.2f}")
        self.suptitle.set_text("LayerNorm over " + ("each token's numbers (rows)" if m["how"] == "token"
                                                      else "each column, across the tokens"))
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def axis_lab(**initial):
    """The which-axis lab's root widget (class ``course-lab-axis``)."""
    return AxisLab(**initial).root


# ============================================================ pre-norm vs post-norm

PLACEMENT_DEPTH = 64


@lru_cache(maxsize=8)
def _placement(seed: int):
    return norm_placement_experiment(depth=PLACEMENT_DEPTH, seed=seed)


def placement_model(depth: int = 48, seed: int = 1) -> dict:
    """The first ``depth`` blocks of a stack of 64 random blocks (``lib.block``'s experiment):
    the stream's size after each block and how much a tiny change made at the bottom has grown
    or shrunk, for pre-norm and post-norm (RMSNorm). Returns numbers and the verdict."""
    depth = int(np.clip(int(depth), 1, PLACEMENT_DEPTH))
    traces = _placement(int(seed))
    out = {"depth": depth, "seed": int(seed)}
    for name in ("pre", "post"):
        t = traces[name]
        out[name] = {"sizes": t.sizes[:depth + 1], "growth": t.gaps[:depth + 1] / t.gaps[0],
                     "size": float(t.sizes[depth]), "factor": float(t.gaps[depth] / t.gaps[0])}
    pre, post = out["pre"], out["post"]

    def how(f):
        return "amplified" if f > 1 else "shrunk"
    ratio = pre["factor"] / post["factor"]
    out["verdict"] = (f"After {depth} block{'s' if depth > 1 else ''}: the pre-norm stream has size "
                      f"{pre['size']:.2f} (\u221a{depth} = {np.sqrt(depth):.2f}), the post-norm stream "
                      f"{post['size']:.2f}. A tiny change at the bottom arrives {how(pre['factor'])} "
                      f"\u00d7{pre['factor']:.3g} with pre-norm and {how(post['factor'])} "
                      f"\u00d7{post['factor']:.3g} with post-norm, {ratio:,.0f} times apart.")
    return out


class PlacementLab:
    """The view: a depth slider, a new-blocks button; sizes and the nudge's growth per block."""

    def __init__(self, depth=48, seed=1):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = int(seed)
        self.depth = _slider("int", value=depth, min=1, max=PLACEMENT_DEPTH, step=1,
                             description="depth (blocks)")
        self.button = widgets.Button(description="new random blocks", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-blocks")
        self.verdict = _verdict_widget()
        fig = new_figure(6.4, 3.2)
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        colours = {"pre": OKABE_ITO["blue"], "post": OKABE_ITO["orange"]}
        styles = {"pre": "-", "post": "--"}
        (self.sqrt_line,) = left.plot([], [], color=OKABE_ITO["black"], linestyle=":", linewidth=1.2,
                                      label="\u221ablocks")
        self.lines = {}
        for name in ("pre", "post"):
            label = f"{name}-norm"
            self.lines[name] = (left.plot([], [], color=colours[name], linestyle=styles[name],
                                          linewidth=1.8, label=label)[0],
                                right.plot([], [], color=colours[name], linestyle=styles[name],
                                           linewidth=1.8, label=label)[0])
        right.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        log_scale(right.yaxis)
        left.set_title("size of the stream (RMS)", fontsize=10)
        right.set_title("a tiny change, \u00d7 its start", fontsize=10)
        for ax in (left, right):
            ax.set_xlabel("block")
            ax.grid(True, alpha=0.3)
        left.set_ylabel("RMS")
        right.set_ylabel("growth (log)")
        left.legend(loc="upper left", fontsize=8, frameon=False)
        right.legend(loc="lower left", fontsize=8, frameon=False)
        fig.tight_layout()
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Two plots: the stream's size and a small change's growth per block")
        self.root = _root("placement", [_controls(self.depth, self.button), self.view.widget, self.verdict])
        self.depth.observe(lambda _c: self.update(), names="value")
        self.button.on_click(self._new_blocks)
        self.update()

    def _new_blocks(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update(self) -> dict:
        m = placement_model(self.depth.value, self.seed)
        k = np.arange(m["depth"] + 1)
        for name, (size_line, growth_line) in self.lines.items():
            size_line.set_data(k, m[name]["sizes"])
            growth_line.set_data(k, m[name]["growth"])
        self.sqrt_line.set_data(k, np.sqrt(k))
        top = max(m["pre"]["sizes"].max(), np.sqrt(m["depth"]), 1.5)
        self.left.set_xlim(0, max(m["depth"], 1))
        self.left.set_ylim(0, top * 1.1)
        growth = np.concatenate([m["pre"]["growth"], m["post"]["growth"]])
        growth = growth[np.isfinite(growth) & (growth > 0)]
        self.right.set_xlim(0, max(m["depth"], 1))
        self.right.set_ylim(min(growth.min(), 0.5) / 2, max(growth.max(), 2.0) * 2)
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def placement_lab(**initial):
    """The pre-norm vs post-norm lab's root widget (class ``course-lab-placement``)."""
    return PlacementLab(**initial).root


# ============================================================ the residual stream

STREAM_MAX = 24


def stream_model(blocks: int = 12, alignment: float = 0.0, seed: int = 0) -> dict:
    """``blocks`` pre-norm blocks each adding a vector of size 1.0 to a stream that starts at 0.9
    (``lib.stack.residual_stream``, 64 numbers). ``alignment`` 0 to 1 turns the additions from
    independent directions towards the stream's own direction. Returns numbers and the verdict."""
    blocks = int(np.clip(int(blocks), 1, STREAM_MAX))
    alignment = float(np.clip(alignment, 0.0, 1.0)) if np.isfinite(alignment) else 0.0
    r = residual_stream(blocks, alignment=alignment, seed=int(seed))
    final, aligned, law = float(r.sizes[-1]), float(r.aligned[-1]), float(r.right_angles[-1])
    shares = r.shares
    mid = min(4, blocks)
    verdict = (f"{blocks} addition{'s' if blocks > 1 else ''} of size about {r.additions.mean():.2f} took "
               f"the stream from {r.sizes[0]:.2f} to {final:.2f}. All in one direction they would give "
               f"{aligned:.2f}; at right angles to the stream, {law:.2f}. Block 1's addition is "
               f"{shares[0]:.0%} of the stream it produced")
    if blocks >= 4:
        verdict += f", block {mid}'s {shares[mid - 1]:.0%}"
    if blocks > 4:
        verdict += f", block {blocks}'s {shares[-1]:.0%}"
    verdict += "."
    return {"blocks": blocks, "alignment": alignment, "seed": int(seed), "sizes": r.sizes,
            "additions": r.additions, "aligned": r.aligned, "right_angles": r.right_angles,
            "shares": shares, "final": final, "verdict": verdict}


class StreamLab:
    """The view: blocks and alignment sliders, a new-blocks button; sizes and shares per block."""

    def __init__(self, blocks=12, alignment=0.0, seed=0):
        import ipywidgets as widgets
        from matplotlib.ticker import PercentFormatter

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = int(seed)
        self.blocks = _slider("int", value=blocks, min=1, max=STREAM_MAX, step=1, description="blocks")
        self.alignment = _slider("float", value=alignment, min=0.0, max=1.0, step=0.05,
                                 description="additions agree (0 = independent)", readout_format=".2f")
        self.button = widgets.Button(description="new random blocks", icon="refresh",
                                     layout=widgets.Layout(width="auto"))
        self.button.add_class("course-button-new-blocks")
        self.verdict = _verdict_widget()
        fig = new_figure(6.4, 3.2)
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        k = np.arange(1, STREAM_MAX + 1)
        self.bars = left.bar(k, np.zeros(STREAM_MAX), color=OKABE_ITO["sky"], width=0.7,
                             label="each addition")
        (self.aligned,) = left.plot([], [], color=OKABE_ITO["vermillion"], linestyle=":", linewidth=1.8,
                                    label="all aligned")
        (self.law,) = left.plot([], [], color=OKABE_ITO["black"], linestyle="--", linewidth=1.2,
                                label="right angles")
        (self.line,) = left.plot([], [], color=OKABE_ITO["blue"], marker="o", markersize=3,
                                 linewidth=1.8, label="the stream")
        self.share_bars = right.bar(k, np.zeros(STREAM_MAX), color=OKABE_ITO["orange"], width=0.7)
        left.set_title("sizes (RMS)", fontsize=10)
        right.set_title("addition \u00f7 the stream it made", fontsize=10)
        left.set_xlabel("block")
        right.set_xlabel("block")
        left.set_ylabel("RMS")
        right.set_ylabel("share")
        right.set_ylim(0, 1.05)
        right.yaxis.set_major_formatter(PercentFormatter(1.0))
        left.legend(loc="upper left", fontsize=8, frameon=False)
        for ax in (left, right):
            ax.grid(True, axis="y", alpha=0.3)
        fig.tight_layout()
        self.left, self.right = left, right
        self.view = FigureView(fig, description="Two plots: the stream's size and each block's share")
        self.root = _root("stream", [_controls(self.blocks, self.alignment, self.button), self.view.widget,
                                     self.verdict])
        self.blocks.observe(lambda _c: self.update(), names="value")
        self.alignment.observe(lambda _c: self.update(), names="value")
        self.button.on_click(self._new_blocks)
        self.update()

    def _new_blocks(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update(self) -> dict:
        m = stream_model(self.blocks.value, self.alignment.value, self.seed)
        n = m["blocks"]
        k = np.arange(n + 1)
        for i, (bar, share_bar) in enumerate(zip(self.bars, self.share_bars)):
            bar.set_height(m["additions"][i] if i < n else 0.0)
            share_bar.set_height(m["shares"][i] if i < n else 0.0)
        self.line.set_data(k, m["sizes"])
        self.law.set_data(k, m["right_angles"])
        self.aligned.set_data(k, m["aligned"])
        self.left.set_xlim(-0.5, n + 0.6)
        self.right.set_xlim(0.4, n + 0.6)
        self.left.set_ylim(0, max(m["aligned"].max(), 2.0) * 1.08)
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def stream_lab(**initial):
    """The residual-stream lab's root widget (class ``course-lab-stream``)."""
    return StreamLab(**initial).root
