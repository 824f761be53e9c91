"""Labs of notebook 04: the decoder block and the stack.

- ``six_steps_lab``: 4 tokens of 4 numbers through one pre-norm block, one step at a time, with
  the typical size (root mean square) of every grid.
- ``flow_lab``: a sentence of 8 words through a stack of random blocks; every part of the block
  (position vectors, attention, causal mask, residual add, norms, FFN, final norm) can be
  removed, and the depth runs from 1 to 48 blocks. Below it, the shape of every tensor in a block.
- ``calculator_lab``: count a model's parameters by part, its memory, the effect of doubling the
  depth or the width, and real models' published sizes against the count.

Each lab has a model (a pure function from the controls to numbers and a verdict, never raising)
and a view (widgets and one figure, redrawn in place). The blocks are ``lib.block``'s.
"""

from __future__ import annotations

import html
from dataclasses import replace
from functools import lru_cache

import numpy as np

from lib.attention import attention, causal_mask, softmax
from exercises.core.own import NotUsedHere, Use
from lib.block import SIX_STEP_OPTIONS, block_steps, decoder, random_stack, six_step_setup
from lib.norm import root_mean_square
from lib.params import REAL_MODELS, ModelConfig, block_parameters, count_parameters, mebibytes, simple_version
from lib.positional import sinusoidal
from lib.weights import random_weights

from .kit.layout import controls as _controls, log_scale, lab_root as _root, verdict_html as _verdict_html, verdict_widget as _verdict_widget

# ================================================================ shared helpers


def _table_html(rows, header=None) -> str:
    """A small table that follows the theme's colours; rows are tuples of strings."""
    style = "padding: 1px 12px 1px 0; vertical-align: top;"
    mono = " font-family: var(--jp-code-font-family, monospace);"
    head = ""
    if header:
        head = "<tr>" + "".join(f'<th style="{style} text-align: left;">{html.escape(h)}</th>'
                                for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f'<td style="{style}{mono if i == 1 else ""}">{html.escape(str(c))}</td>'
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return ('<table class="course-lab-numbers" style="color: var(--jp-ui-font-color1, inherit); '
            'border-collapse: collapse; font-size: var(--jp-ui-font-size1, 13px);">'
            f"{head}{body}</table>")


def _amount(value: float) -> str:
    """A change or size in plain words: 0, 0.0007, 0.14, 9.52, 7.3e+08."""
    value = float(value)
    if not np.isfinite(value):
        return "infinite"
    if value == 0:
        return "0"
    if abs(value) < 1e-3 or abs(value) >= 1e5:
        return f"{value:.2g}"
    if abs(value) < 0.1:
        return f"{value:.2g}"
    return f"{value:.2f}" if abs(value) < 1000 else f"{value:,.0f}"


def _signed(values) -> str:
    return "[" + ", ".join(f"{v + 0.0:+.2f}" for v in np.ravel(values)) + "]"


def size_of(n: float) -> str:
    """A parameter count in words: 85.0 M, 671.0 B, 38,597,376 below a million."""
    n = float(n)
    if abs(n) >= 1e9:
        return f"{n / 1e9:,.1f} B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:,.1f} M"
    return f"{int(round(n)):,}"


# ================================================================ six steps

STEP_EXPLAINED = {
    "input": "the tokens as they enter the block",
    "norm before attention": "a normalised copy for attention to read",
    "attention": "attention's output: each row a mix of the value rows",
    "add attention": "the stream: input + attention",
    "norm before FFN": "a normalised copy for the FFN to read",
    "feed-forward": "the FFN's output, each row on its own",
    "add FFN": "the block's output: stream + FFN",
}
N_STEPS = 6


def _setup(seed):
    return six_step_setup() if seed is None else six_step_setup(int(seed))


def six_steps_model(step: int = N_STEPS, seed: int | None = None) -> dict:
    """The grid after ``step`` (0 = the input, 6 = the block's output) of the six-step example.

    seed None is the syllabus's setup (``lib.block.six_step_setup()``, seed 001); another seed draws
    other tokens and weights the same way. Returns every grid, its size (RMS), the attention
    weights, the FFN's hidden units that are on, and a verdict about the chosen step.
    """
    step = int(np.clip(int(step), 0, N_STEPS))
    X, weights = _setup(seed)
    steps = block_steps(X, weights, **SIX_STEP_OPTIONS)
    names = [name for name, _ in steps]
    grids = np.array([grid for _, grid in steps])
    sizes = np.array([root_mean_square(grid) for grid in grids])
    _, mix = attention(grids[1], weights.Wq, weights.Wk, weights.Wv, weights.Wo,
                       causal=SIX_STEP_OPTIONS["causal"], return_weights=True)
    mix = mix[0]                                                    # one head: (4, 4)
    hidden_on = int(((grids[4] @ weights.W1) > 0).sum())
    hidden_total = grids.shape[1] * weights.d_ff
    s = [f"{v:.2f}" for v in sizes]
    name = names[step]
    if step == 0:
        text = (f"The input: 4 tokens of 4 numbers; its typical size (the root mean square of all 16 "
                f"numbers) is {s[0]}.")
    elif step == 1:
        rows = root_mean_square(grids[1], axis=-1)
        text = (f"Step 1, norm: each row is divided by its own root mean square, so every row now has "
                f"size {rows.min():.2f} and the grid went from {s[0]} to {s[1]}; the input itself is "
                "kept aside, unchanged, for the add.")
    elif step == 2:
        source = int(np.argmax(mix[0]))
        text = (f"Step 2, attention: every row becomes a weighted mix of the value rows; token 1 takes "
                f"{mix[0, source]:.0%} of its mix from token {source + 1}. Size {s[1]} \u2192 {s[2]}.")
    elif step == 3:
        text = (f"Step 3, add: attention's output (size {s[2]}) is added to the input (size {s[0]}), not "
                f"put in its place, so the stream grows to {s[3]}.")
    elif step == 4:
        text = (f"Step 4, norm: a copy of the stream (size {s[3]}) is rescaled to rows of size 1 for the "
                f"FFN, grid size {s[4]}; the stream itself keeps its size.")
    elif step == 5:
        text = (f"Step 5, FFN: each row on its own is widened to {weights.d_ff} hidden units "
                f"({hidden_on} of the {hidden_total} are positive before GELU), bent and narrowed "
                f"back to 4 numbers. Size {s[5]}.")
    else:
        text = (f"Step 6, add: the FFN's output is added to the stream. The block's output has size "
                f"{s[6]} (the input had {s[0]}); row 1 is {_signed(grids[6][0])}.")
    return {"step": step, "seed": seed, "names": names, "grids": grids, "sizes": sizes,
            "attention_weights": mix, "hidden_on": hidden_on, "name": name, "verdict": text}


class SixStepsLab:
    """The view: a step slider with back/forward buttons, new random weights, two grids and the
    sizes of all seven grids."""

    def __init__(self, step=0, seed=None):
        import ipywidgets as widgets
        from matplotlib.colors import TwoSlopeNorm

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = seed
        self.draws = 0
        self.colours = OKABE_ITO
        self.step = widgets.IntSlider(value=step, min=0, max=N_STEPS, step=1, description="step",
                                      continuous_update=True, style={"description_width": "initial"},
                                      layout=widgets.Layout(width="18em"))
        self.step.add_class("course-slider-step")
        self.back = widgets.Button(description="back", icon="arrow-left", layout=widgets.Layout(width="auto"))
        self.back.add_class("course-button-back")
        self.forward = widgets.Button(description="forward", icon="arrow-right",
                                      layout=widgets.Layout(width="auto"))
        self.forward.add_class("course-button-forward")
        self.new = widgets.Button(description="new random weights", icon="refresh",
                                  layout=widgets.Layout(width="auto"))
        self.new.add_class("course-button-new-weights")
        self.original = widgets.Button(description="seed 001's weights", layout=widgets.Layout(width="auto"))
        self.original.add_class("course-button-original")
        self.verdict = _verdict_widget()

        fig = new_figure(6.4, 3.3)
        grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 1.15], wspace=0.45)
        self.ax_before, self.ax_after, self.ax_sizes = (fig.add_subplot(grid[0, i]) for i in range(3))
        colour = TwoSlopeNorm(vmin=-3.0, vcenter=0.0, vmax=3.0)
        self.images, self.cells, self.titles, self.below = [], [], [], []
        for ax in (self.ax_before, self.ax_after):
            self.images.append(ax.imshow(np.zeros((4, 4)), cmap="PuOr_r", norm=colour, aspect="auto"))
            self.cells.append([[ax.text(j, i, "", ha="center", va="center", fontsize=9) for j in range(4)]
                               for i in range(4)])
            ax.set_xticks(range(4), [str(j + 1) for j in range(4)])
            ax.set_yticks(range(4), [f"token {i + 1}" for i in range(4)])
            ax.tick_params(labelsize=9, length=0)
            self.titles.append(ax.set_title("", fontsize=9))
            self.below.append(ax.set_xlabel("", fontsize=9))
        self.ax_after.set_yticks(range(4), [""] * 4)
        self.bars = self.ax_sizes.bar(range(N_STEPS + 1), np.ones(N_STEPS + 1), color=OKABE_ITO["sky"],
                                      edgecolor="black", linewidth=0.6)
        self.bar_labels = [self.ax_sizes.text(i, 0, "", ha="center", va="bottom", fontsize=8)
                           for i in range(N_STEPS + 1)]
        self.ax_sizes.set_xticks(range(N_STEPS + 1), ["in", "1", "2", "3", "4", "5", "6"])
        self.ax_sizes.set_xlabel("step", fontsize=9)
        self.ax_sizes.set_ylabel("size (RMS)", fontsize=9)
        self.ax_sizes.set_title("size of every grid", fontsize=9)
        self.ax_sizes.tick_params(labelsize=9)
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.13, right=0.98, top=0.8, bottom=0.2)
        self.view = FigureView(fig, description="Two grids of 4 tokens by 4 numbers, before and after "
                                                "one step of the block, and the size of every grid")
        self.root = _root("six-steps", [_controls(self.step, self.back, self.forward),
                                        _controls(self.new, self.original), self.view.widget, self.verdict])
        self.step.observe(lambda _c: self.update(), names="value")
        self.back.on_click(lambda _b: self._move(-1))
        self.forward.on_click(lambda _b: self._move(+1))
        self.new.on_click(self._new_weights)
        self.original.on_click(self._original_weights)
        self.update()

    def _move(self, by: int) -> None:
        self.step.value = int(np.clip(self.step.value + by, 0, N_STEPS))      # triggers update

    def _new_weights(self, _button=None) -> None:
        self.draws += 1
        self.seed = 100 + self.draws
        self.update()

    def _original_weights(self, _button=None) -> None:
        self.seed = None
        self.update()

    def update(self) -> dict:
        m = six_steps_model(self.step.value, self.seed)
        k = m["step"]
        shown = [(k - 1 if k > 0 else None), k]
        for ax, image, cells, title, below, index in zip((self.ax_before, self.ax_after), self.images,
                                                         self.cells, self.titles, self.below, shown):
            if index is None:
                image.set_data(np.zeros((4, 4)))
                image.set_alpha(0.15)
                for row in cells:
                    for cell in row:
                        cell.set_text("")
                title.set_text("(nothing before the input)")
                below.set_text("")
                continue
            grid = m["grids"][index]
            image.set_alpha(1.0)
            image.set_data(grid)
            for i, row in enumerate(cells):
                for j, cell in enumerate(row):
                    cell.set_text(f"{grid[i, j] + 0.0:.2f}")
                    cell.set_color("white" if abs(grid[i, j]) > 1.9 else "black")
            title.set_text("the input\n" if index == 0 else f"after step {index}:\n{m['names'][index]}")
            below.set_text(f"size {m['sizes'][index]:.2f}")
        top = float(np.max(m["sizes"]))
        for i, (bar, label, size) in enumerate(zip(self.bars, self.bar_labels, m["sizes"])):
            bar.set_height(size)
            bar.set_facecolor(self.colours["orange"] if i == k else self.colours["sky"])
            label.set_text(f"{size:.2f}")
            label.set_y(size + 0.02 * top)
        self.ax_sizes.set_ylim(0, top * 1.25)
        who = "seed 001's setup" if self.seed is None else f"random weights, draw {self.draws}"
        self.suptitle.set_text(f"Step {k} of {N_STEPS}: {STEP_EXPLAINED[m['name']]} ({who})")
        self.back.disabled, self.forward.disabled = k == 0, k == N_STEPS
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def six_steps_lab(**initial):
    """The six-steps lab's root widget (class ``course-lab-six-steps``)."""
    return SixStepsLab(**initial).root


# ================================================================ layer flow

PARTS = {"positions": "position vectors", "attention": "attention", "causal": "causal mask",
         "residual": "residual add", "norms": "norms", "ffn": "FFN", "final_norm": "final norm"}
WORDS = ("the", "cat", "sat", "on", "the", "mat", "and", "slept")
FIRST_SWAP, LAST_SWAP = ("the", "a"), ("slept", "ran")
FLOW_D, FLOW_FF, FLOW_HEADS, DEPTH_MAX = 16, 64, 2, 48
COPIES = (0, 4)                          # the two copies of "the"
EXACT = 1e-12                            # below this, a change is rounding and counts as 0
VANISHED = 1e-9                          # a stream smaller than this has vanished


@lru_cache(maxsize=1)
def _vocabulary():
    """One random vector of 16 numbers (RMS about 1) per word, fixed."""
    words = sorted(set(WORDS) | {FIRST_SWAP[1], LAST_SWAP[1]})
    table, = random_weights([(len(words), FLOW_D)], seed=404, scale=1.0)
    return {word: table[i] for i, word in enumerate(words)}


@lru_cache(maxsize=4)
def _stack(seed: int):
    return random_stack(DEPTH_MAX, FLOW_D, FLOW_FF, FLOW_HEADS, seed=1000 * int(seed))


def flow_inputs(positions: bool = True):
    """The sentence, and the same sentence with its first and with its last word swapped,
    each (8, 16), with the sinusoidal position vectors added if ``positions``."""
    vocab = _vocabulary()
    table = sinusoidal(len(WORDS), FLOW_D) if positions else np.zeros((len(WORDS), FLOW_D))
    base = [vocab[w] for w in WORDS]
    first = [vocab[FIRST_SWAP[1]]] + base[1:]
    last = base[:-1] + [vocab[LAST_SWAP[1]]]
    return tuple(np.array(words) + table for words in (base, first, last))


def similarity(stream) -> float:
    """How alike the positions are: the mean cosine similarity over every pair of rows."""
    stream = np.asarray(stream, dtype=float)
    with np.errstate(all="ignore"):
        unit = stream / np.linalg.norm(stream, axis=-1, keepdims=True)
        cos = unit @ unit.T
    n = len(stream)
    return float((cos.sum() - np.trace(cos)) / (n * (n - 1)))


def _largest(a, b) -> float:
    with np.errstate(all="ignore"):
        d = np.abs(np.asarray(a) - np.asarray(b))
    return float(np.max(d)) if np.all(np.isfinite(d)) else float("inf")


@lru_cache(maxsize=512)
def _flow(on: tuple, depth: int, seed: int, causal_weights=None) -> dict:
    parts = dict(zip(PARTS, on))
    blocks = _stack(seed)[:depth]
    options = dict(placement="pre" if parts["norms"] else "none", use_attention=parts["attention"],
                   use_ffn=parts["ffn"], use_residual=parts["residual"], causal=parts["causal"],
                   final_norm=parts["final_norm"], norm="rms", activation="gelu")
    if causal_weights is not None:
        options["causal_weights"] = causal_weights
    base, first, last = flow_inputs(parts["positions"])
    with np.errstate(all="ignore"):
        run = decoder(base, blocks, **options)
        run_first = decoder(first, blocks, **options)
        run_last = decoder(last, blocks, **options)
    streams = np.array(run.streams)
    finite = np.array([bool(np.all(np.isfinite(s))) for s in streams])
    overflow_at = None if finite.all() else int(np.argmin(finite))
    with np.errstate(all="ignore"):
        sizes = np.array([root_mean_square(s) if ok else np.nan for s, ok in zip(streams, finite)])
    tiny = np.flatnonzero(sizes < VANISHED)
    vanished_at = int(tiny[0]) if tiny.size else None
    alike = np.array([similarity(s) if ok else np.nan for s, ok in zip(streams, finite)])
    leaks = np.array([_largest(a[0], b[0]) for a, b in zip(run.streams, run_last.streams)])
    out = run.output
    result = {
        "sizes": sizes, "alike": alike, "leaks": leaks, "overflow_at": overflow_at, "vanished_at": vanished_at,
        "output": out, "output_size": float(root_mean_square(out)) if np.all(np.isfinite(out)) else float("inf"),
        "leak": _largest(out[0], run_last.output[0]),
        "context": _largest(out[-1], run_first.output[-1]),
        "copies": _largest(out[COPIES[0]], out[COPIES[1]]),
    }
    for value in result.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return result


def _ffn_share() -> float:
    one = block_parameters(ModelConfig(d_model=FLOW_D, layers=1, d_ff=FLOW_FF, vocab=1))
    return one.ffn / one.total


def _part_sentence(part: str, m: dict, ref: dict, parts: dict, depth: int) -> str:
    """What goes wrong without ``part``: m is this run, ref the run with every part on."""
    blocks = f"{depth} block{'s' if depth > 1 else ''}"
    if part == "positions":
        if m["copies"] <= EXACT:
            return (f"Without position vectors, the two copies of \u201cthe\u201d (words 1 and 5) come out "
                    f"identical (difference 0; every part on: {_amount(ref['copies'])}): nothing "
                    "tells them apart.")
        return (f"Without position vectors, the two copies of \u201cthe\u201d still differ by "
                f"{_amount(m['copies'])} (every part on: {_amount(ref['copies'])}), only because "
                "the causal mask lets word 5 read four more words than word 1.")
    if part == "attention":
        return (f"Without attention, no word reads any other: changing the first word "
                f"({FIRST_SWAP[0]} \u2192 {FIRST_SWAP[1]}) moves the last word's output by "
                f"{_amount(m['context'])} (every part on: {_amount(ref['context'])}).")
    if part == "causal":
        if not parts["attention"]:
            return (f"Without the causal mask nothing changes while attention is off: changing the last "
                    f"word moves word 1's output by {_amount(m['leak'])}, as no word reads another.")
        masked = "exactly 0" if ref["leak"] <= EXACT else _amount(ref["leak"])
        if m["vanished_at"] is not None or m["leak"] <= EXACT:
            why = (f"the stream vanished at block {m['vanished_at']}" if m["vanished_at"] is not None
                   else "little of the last word reaches it")
            return (f"Without the causal mask word 1 may read the future, but {why}, so changing the last "
                    f"word moves word 1's output by only {_amount(m['leak'])} (every part on: {masked}).")
        return (f"Without the causal mask, word 1 reads the future: changing the last word "
                f"({LAST_SWAP[0]} \u2192 {LAST_SWAP[1]}) moves word 1's output by {_amount(m['leak'])} "
                f"(every part on: {masked}).")
    if part == "residual":
        return (f"Without the residual add, each block replaces the stream: after {blocks} the words' "
                f"similarity is {m['alike'][-1]:.3f} (every part on: {ref['alike'][-1]:.3f}) and "
                f"changing the first word moves the last word's output by {_amount(m['context'])} "
                f"(every part on: {_amount(ref['context'])}).")
    if part == "norms":
        if m["overflow_at"] is not None:
            return (f"Without the norms, every block reads the raw stream and adds more than it read: "
                    f"the numbers overflowed at block {m['overflow_at']}.")
        return (f"Without the norms, every block reads the raw stream: its size reaches "
                f"{_amount(m['sizes'][-1])} after {blocks} (every part on: {_amount(ref['sizes'][-1])}).")
    if part == "ffn":
        return (f"Without the FFN, nothing works on a word by itself and the block keeps only "
                f"{1 - _ffn_share():.0%} of its parameters; the words' similarity after {blocks} is "
                f"{m['alike'][-1]:.3f} (every part on: {ref['alike'][-1]:.3f}).")
    return (f"Without the final norm, the output keeps the stream's size, {_amount(m['output_size'])} "
            f"after {blocks}; with it every word leaves at size {ref['output_size']:.2f}.")


def _course_causal_weights(scores):
    """The course's causal weights: mask the future, then a softmax over each row."""
    allowed = causal_mask(scores.shape[-1])
    return softmax(np.where(allowed, scores, -np.inf), axis=-1)


# The flow lab can run the learner's causal_weights (notebook 04's exercise) instead.
CAUSAL_USE = Use("causal-weights", _course_causal_weights, "lib.attention's causal mask and softmax")


def flow_model(depth: int = 12, seed: int = 0, causal_weights=None, **parts) -> dict:
    """The sentence through ``depth`` random blocks with the chosen parts (keywords of ``PARTS``,
    True = on, all on by default); ``causal_weights`` optionally replaces the course's causal
    mask and softmax (the learner's function from the exercise). Per block: the stream's size (RMS), how alike the words are
    (mean cosine similarity) and how far word 1 moves when the last word changes. At the top:
    how far the last word's output moves when the first word changes, and how far apart the two
    copies of "the" are. The verdict: one sentence for the run, then one per removed part,
    comparing with the run with every part on. Never raises."""
    depth = int(np.clip(int(depth), 1, DEPTH_MAX))
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise TypeError(f"unknown parts {sorted(unknown)}; the parts are {list(PARTS)}")
    on = {name: bool(parts.get(name, True)) for name in PARTS}
    key = tuple(on.values())
    m = _flow(key, depth, int(seed), causal_weights)
    full = _flow(tuple(True for _ in PARTS), depth, int(seed))
    removed = [name for name in PARTS if not on[name]]
    blocks = f"{depth} block{'s' if depth > 1 else ''}"
    if m["leak"] > EXACT:
        future = f"word 1 reads the future (it moves by {_amount(m['leak'])} when the last word changes)"
    elif m["leak"] > 0:
        future = (f"word 1 moves by only {_amount(m['leak'])}, rounding, when the last word changes")
    else:
        future = "no word reads the future (word 1 moves by exactly 0 when the last word changes)"
    if m["overflow_at"] is not None:
        summary = f"After {blocks}: the numbers overflowed at block {m['overflow_at']}, and {future}."
    elif m["vanished_at"] is not None:
        summary = (f"After {blocks}: the stream vanished, its size falling from {_amount(m['sizes'][0])} "
                   f"to {_amount(m['sizes'][-1])} (below 1e-9 from block {m['vanished_at']}); the words' "
                   f"similarity went from {m['alike'][0]:.2f} to {m['alike'][-1]:.3f}, and {future}.")
    else:
        summary = (f"After {blocks}{' with every part on' if not removed else ''}: the stream's size went "
                   f"from {_amount(m['sizes'][0])} to {_amount(m['sizes'][-1])}, the words' similarity "
                   f"from {m['alike'][0]:.2f} to {m['alike'][-1]:.3f}, and {future}.")
    sentences = {name: _part_sentence(name, m, full, on, depth) for name in removed}
    verdict = " ".join([summary] + list(sentences.values()))
    return {**m, "depth": depth, "seed": int(seed), "parts": on, "removed": removed, "full": full,
            "summary": summary, "sentences": sentences, "verdict": verdict}


def block_shapes(batch: int = 2, length: int = 8, d_model: int = 16, heads: int = 2, d_ff: int | None = None):
    """The shape of every tensor in one pre-norm block, in order, as (name, shape, what it is).

    d_ff None means 4 · d_model. Returns (rows, problem): problem is a sentence when the sizes do
    not fit (heads must divide d_model), and then rows is empty. Never raises.
    """
    B, L, d, h = (int(v) for v in (batch, length, d_model, heads))
    f = 4 * d if d_ff is None else int(d_ff)
    if min(B, L, d, h, f) < 1:
        return [], "Every size must be a whole number of at least 1."
    if d % h:
        return [], (f"{h} heads cannot split d_model = {d} into equal slices: pick a number of heads "
                    f"that divides {d}.")
    s = d // h
    rows = [
        ("x", (B, L, d), "the stream entering the block"),
        ("norm(x)", (B, L, d), "the copy attention reads"),
        ("Wq, Wk, Wv, Wo", (d, d), "each; learned, shared by every position"),
        ("Q, K, V = norm(x) @ W", (B, L, d), "queries, keys, values"),
        ("Q, K, V split into heads", (B, h, L, s), f"{h} slices of {s} numbers"),
        ("scores Q K\u1d40 / \u221a" + str(s), (B, h, L, L), "one score per pair of positions"),
        ("causal mask", (L, L), "True where j \u2264 i"),
        ("attention weights", (B, h, L, L), "softmax of each row"),
        ("weights @ V", (B, h, L, s), "each head's mix of values"),
        ("heads side by side", (B, L, d), "joined again"),
        ("attention output (@ Wo)", (B, L, d), ""),
        ("x + attention", (B, L, d), "the stream after the first add"),
        ("norm(stream)", (B, L, d), "the copy the FFN reads"),
        ("W1", (d, f), "widens"),
        ("hidden units", (B, L, f), "after the activation"),
        ("W2", (f, d), "narrows"),
        ("FFN output", (B, L, d), ""),
        ("block output", (B, L, d), "same shape as x"),
    ]
    return rows, None


class FlowLab:
    """The view: a depth slider, seven remove-a-part toggles, three panels per block, and the
    shape table with its own size menus."""

    SIZES = {"batch": (1, 2, 4, 8, 32), "length": (4, 8, 16, 128, 1024),
             "d_model": (16, 64, 128, 768, 4096), "heads": (1, 2, 3, 4, 8, 12, 32)}

    def __init__(self, depth=12, seed=0, batch=2, length=8, d_model=16, heads=2, **parts):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = int(seed)
        self.depth = widgets.IntSlider(value=depth, min=1, max=DEPTH_MAX, step=1, description="blocks",
                                       continuous_update=True, style={"description_width": "initial"},
                                       layout=widgets.Layout(width="22em"))
        self.depth.add_class("course-slider-depth")
        self.toggles = {}
        for name, label in PARTS.items():
            toggle = widgets.ToggleButton(value=bool(parts.get(name, True)), description=label,
                                          tooltip=f"switch the {label} on or off",
                                          layout=widgets.Layout(width="auto"))
            toggle.add_class(f"course-toggle-{name.replace('_', '-')}")
            self.toggles[name] = toggle
        self.new = widgets.Button(description="new random blocks", icon="refresh",
                                  layout=widgets.Layout(width="auto"))
        self.new.add_class("course-button-new-blocks")
        self.verdict = _verdict_widget()
        style = {"description_width": "initial"}
        self.shape_controls = {}
        for name, value in (("batch", batch), ("length", length), ("d_model", d_model), ("heads", heads)):
            label = {"batch": "B (texts)", "length": "L (tokens)", "d_model": "d_model", "heads": "heads"}[name]
            control = widgets.Dropdown(options=[(f"{v:,}", v) for v in self.SIZES[name]], value=value,
                                       description=label, style=style, layout=widgets.Layout(width="11em"))
            control.add_class(f"course-shape-{name.replace('_', '-')}")
            self.shape_controls[name] = control
        self.shapes = widgets.HTML()
        self.shapes.add_class("course-lab-shapes")

        fig = new_figure(6.4, 3.3)
        axes = fig.subplots(1, 3)
        self.axes = axes
        for ax in axes:
            ax.xaxis.get_major_locator().set_params(integer=True)  # blocks are whole numbers
        self.lines, self.refs = [], []
        titles = ("size of the stream", "how alike the words are", "word 1 moved by\nthe last word")
        ylabels = ("RMS (log scale)", "mean cosine similarity", "largest change")
        for ax, title, ylabel in zip(axes, titles, ylabels):
            (ref,) = ax.plot([], [], color="0.55", linestyle="--", linewidth=1.3, label="every part on")
            (line,) = ax.plot([], [], color=OKABE_ITO["blue"], marker="o", markersize=2.5, linewidth=1.6,
                              label="this setting")
            self.lines.append(line)
            self.refs.append(ref)
            ax.set_title(title, fontsize=9)
            ax.set_ylabel(ylabel, fontsize=9)
            ax.set_xlabel("block", fontsize=9)
            ax.tick_params(labelsize=8)
            ax.grid(True, alpha=0.3)
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
        log_scale(axes[0].yaxis)
        axes[0].yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 3.0)))
        axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        axes[0].yaxis.set_minor_formatter(NullFormatter())
        axes[1].set_ylim(-0.05, 1.05)
        fig.legend(handles=[self.lines[0], self.refs[0]], loc="lower center", ncol=2, fontsize=9,
                   frameon=False)
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.78, bottom=0.26, wspace=0.55)
        self.view = FigureView(fig, description="Three line plots per block: the stream's size, how alike "
                                                "the words are, and how far word 1 moves when the last "
                                                "word changes")
        toggles = _controls(*self.toggles.values())
        from .kit.own_function import MineSwitch
        self.mine = MineSwitch([CAUSAL_USE], self.update)
        self.root = _root("layer-flow", [
            _controls(self.depth, self.new), toggles, self.mine.widget, self.view.widget, self.verdict,
            _controls(*self.shape_controls.values()), self.shapes])
        self.depth.observe(lambda _c: self.update(), names="value")
        for toggle in self.toggles.values():
            toggle.observe(lambda _c: self.update(), names="value")
        for control in self.shape_controls.values():
            control.observe(lambda _c: self.update_shapes(), names="value")
        self.new.on_click(self._new_blocks)
        self.update_shapes()
        self.update()

    def _new_blocks(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update_shapes(self):
        c = {name: control.value for name, control in self.shape_controls.items()}
        rows, problem = block_shapes(c["batch"], c["length"], c["d_model"], c["heads"])
        if problem:
            self.shapes.value = _verdict_html(problem)
        else:
            self.shapes.value = _table_html(
                [(name, "(" + ", ".join(f"{n:,}" for n in shape) + ")", what) for name, shape, what in rows],
                header=("tensor", "shape", ""))
        self.shape_rows = rows
        return rows

    def update(self) -> dict:
        parts = {name: toggle.value for name, toggle in self.toggles.items()}
        masked = parts["causal"] and parts["attention"]     # only then is a causal mask computed
        m = self.mine.run(lambda weights: flow_model(self.depth.value, self.seed, causal_weights=weights, **parts),
                          "causal-weights" if masked else None)
        n = m["depth"]
        k = np.arange(n + 1)
        series = (m["sizes"], m["alike"], m["leaks"])
        references = (m["full"]["sizes"], m["full"]["alike"], m["full"]["leaks"])
        for ax, line, ref, values, reference in zip(self.axes, self.lines, self.refs, series, references):
            shown = np.where(np.isfinite(values), values, np.nan)
            line.set_data(k, shown)
            ref.set_data(k, reference)
            ax.set_xlim(-0.3, n + 0.3)
        both = np.concatenate([m["sizes"], m["full"]["sizes"]])
        both = both[np.isfinite(both) & (both > 0)]
        lo, hi = (float(both.min()), float(both.max())) if both.size else (0.1, 10.0)
        self.axes[0].set_ylim(min(lo, 0.5) / 2, max(hi, 2.0) * 2)
        top = max(float(np.nanmax(np.where(np.isfinite(m["leaks"]), m["leaks"], 0.0))), 0.05)
        self.axes[2].set_ylim(-0.05 * top, top * 1.15)
        removed = [PARTS[name] for name in m["removed"]]
        self.suptitle.set_text("Every part on" if not removed else "Removed: " + ", ".join(removed))
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def flow_lab(**initial):
    """The layer-flow lab's root widget (class ``course-lab-layer-flow``)."""
    return FlowLab(**initial).root


def near_identity_model(n_blocks: int = 4, scale: float = 0.02, seed: int = 2) -> dict:
    """8 tokens of 16 numbers (drawn at scale 0.35 from ``seed``) through ``n_blocks`` pre-norm blocks
    whose matrices are all drawn at ``scale`` (0.02 is GPT-2's starting scale), no final norm.
    Returns the average length of a token before and after each block and the largest change of
    any number per block."""
    x, = random_weights([(8, FLOW_D)], seed=seed, scale=0.35)
    from lib.block import random_block_weights
    blocks = [random_block_weights(FLOW_D, FLOW_FF, FLOW_HEADS, seed=seed + 1 + i, scale=scale)
              for i in range(int(n_blocks))]
    streams = decoder(x, blocks, final_norm=False).streams
    lengths = np.array([np.linalg.norm(s, axis=-1).mean() for s in streams])
    changes = np.array([np.abs(b - a).max() for a, b in zip(streams, streams[1:])])
    return {"lengths": lengths, "changes": changes, "largest_number": float(np.abs(x).max())}


# ================================================================ parameter calculator

COURSE_EXAMPLE = "the course's example (768 \u00d7 12)"
TRAINED = "the course's trained model"
BYTES = {4: "4 (float32)", 2: "2 (bfloat16)", 1: "1 (int8)", 0.5: "0.5 (4-bit)"}


def trained_preset():
    """The course's trained model of notebook 05 as a ModelConfig (``lib.model.config()``, read
    from ``lib/trained/model.json``), or None while that model has not been built."""
    try:
        from lib import model
        found = model.config()
    except Exception:                                        # noqa: BLE001 - absent or unreadable: no preset
        return None
    return found if isinstance(found, ModelConfig) else None


def presets() -> dict:
    """Name -> (ModelConfig, published size or None, published active size or None, note)."""
    table = {COURSE_EXAMPLE: (ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12), None,
                              None, "the course's own example: RMSNorm, plain FFN, tied embedding")}
    for name, real in REAL_MODELS.items():
        table[name] = (real.config, real.published, real.published_active, real.note)
    trained = trained_preset()
    if trained is not None:
        table[TRAINED] = (trained, trained_stored(), None,
                                               "notebook 05's model; its published size is the count of "
                                               "numbers stored in its weights file")
    return table


def trained_stored():
    """How many numbers the trained model's weights file (lib/trained/weights.npz) holds, or None."""
    try:
        from lib import model
        with np.load(model.FOLDER / "weights.npz") as stored:
            return int(sum(stored[name].size for name in stored.files))
    except Exception:                                        # noqa: BLE001 - absent or unreadable
        return None


_DETAILS = (
    ("learned position table (context \u00d7 d)", ("learned_positions",)),
    ("biases in attention and FFN", ("biases",)),
    ("LayerNorm shifts (a second vector per norm)", ("norm",)),
    ("separate output layer (untied)", ("tied",)),
    ("gated FFN (three matrices)", ("gated",)),
    ("grouped-query attention (narrower Wk, Wv)", ("kv_heads",)),
    ("latent attention (published count per block)", ("attention_per_block",)),
    ("mixture of experts (stored)", ("experts", "top_k", "shared_experts", "expert_d_ff", "dense_layers")),
)


def gap_steps(config: ModelConfig) -> list:
    """From the course's simple count to the full one, as (what, parameters added, running total):
    the blocks alone, the embedding table, the final norm, then each detail the real model has
    (positions, biases, LayerNorm shifts, untied output, gating, grouped-query or latent attention,
    experts), added one at a time with ``lib.params``."""
    current = simple_version(config)
    simple = count_parameters(current)
    steps, total = [], 0
    for what, added in (("blocks alone (4·d² + 2·d·d_ff + 2·d each)", simple.blocks),
                        ("embedding table (vocab \u00d7 d)", simple.embedding),
                        ("final norm", simple.final_norm)):
        total += added
        steps.append((what, added, total))
    for what, names in _DETAILS:
        wanted = {name: getattr(config, name) for name in names}
        if all(getattr(current, name) == value for name, value in wanted.items()):
            continue
        after = replace(current, **wanted)
        added = count_parameters(after).total - count_parameters(current).total
        total += added
        steps.append((what, added, total))
        current = after
    return steps


def doubled(config: ModelConfig, what: str) -> ModelConfig:
    """The same model with twice the blocks (what="depth") or twice the width (what="width": d_model,
    d_ff and any expert width doubled, a published attention count four times larger)."""
    if what == "depth":
        return replace(config, layers=2 * config.layers, dense_layers=2 * config.dense_layers)
    return replace(config, d_model=2 * config.d_model, d_ff=2 * config.d_ff,
                   expert_d_ff=None if config.expert_d_ff is None else 2 * config.expert_d_ff,
                   attention_per_block=None if config.attention_per_block is None
                   else 4 * config.attention_per_block)


def _course_model_parameters(d, layers, d_ff, vocab):
    return count_parameters(ModelConfig(d_model=d, layers=layers, d_ff=d_ff, vocab=vocab)).total


# The exercise whose function the calculator can count with (see labs/kit/own_function.py).
PARAMETERS_USE = Use("model-parameters", _course_model_parameters, "lib.params.count_parameters")


def beyond_plain(config: ModelConfig) -> list[str]:
    """What a configuration has beyond the plain model that ``model_parameters`` counts."""
    extras = [(config.gated, "a gated FFN"), (not config.tied, "a separate output layer"),
              (config.biases, "biases"), (config.experts > 0, "experts"),
              (config.norm != "rms", "LayerNorm shifts"),
              (config.learned_positions, "a learned position table"),
              (config.kv_heads not in (None, config.heads), "shared keys and values"),
              (config.attention_per_block is not None, "its own attention")]
    return [what for has, what in extras if has]


def calculator_model(d_model: int = 768, layers: int = 12, heads: int = 12, d_ff: int = 3072,
                     vocab: int = 32000, gated: bool = False, tied: bool = True, biases: bool = False,
                     experts: int = 0, top_k: int = 0, bytes_per_number: float = 2,
                     preset: str | None = None, total=None) -> dict:
    """Count a model's parameters by part (``lib.params``), its memory in MiB, and the counts with
    the depth or the width doubled. With ``preset`` (a key of ``presets()``) the preset's full
    configuration is used and compared with its published size, step by step. Invalid sizes give
    a verdict that says why, never an exception.

    ``total(d, layers, d_ff, vocab)``, if given (the learner's ``model_parameters``), counts the
    total and the doubled models; it counts plain models only, so any other configuration raises
    ``NotUsedHere`` (the view then counts with the course's function)."""
    table = presets()
    published = published_active = None
    note = ""
    try:
        if preset in table:
            config, published, published_active, note = table[preset]
        else:
            preset = None
            heads = int(heads)
            if heads >= 1 and int(d_model) >= 1 and int(d_model) % heads:
                note = (f"{heads} heads do not split d_model = {int(d_model)} into equal slices; a real model "
                        "needs that, but the count does not depend on the number of heads.")
                heads = 1
            config = ModelConfig(d_model=int(d_model), layers=int(layers), d_ff=int(d_ff), vocab=int(vocab),
                                 heads=heads, gated=bool(gated), tied=bool(tied), biases=bool(biases),
                                 experts=int(experts), top_k=int(top_k) if int(experts) else 0)
    except (ValueError, TypeError) as problem:
        return {"ok": False, "verdict": f"These sizes do not make a model: {problem}.", "preset": None}
    count = count_parameters(config)
    counter = None if total is _course_model_parameters else total    # the course's: count every part
    total, active = count.total, count.active
    if counter is not None:
        extras = beyond_plain(config)
        if extras:
            raise NotUsedHere(f"this model has {' and '.join(extras)}, which your model_parameters "
                              "does not count")
        total = active = counter(config.d_model, config.layers, config.d_ff, config.vocab)
    nbytes = float(bytes_per_number)
    parts = {"embedding": count.embedding + count.positions + count.output, "attention": count.attention,
             "FFN": count.ffn, "norms": count.norms, "router": count.router}
    shares = {name: value / total for name, value in parts.items()}
    if counter is None:
        depth2, width2 = (count_parameters(doubled(config, w)).total for w in ("depth", "width"))
    else:
        depth2, width2 = (counter(c.d_model, c.layers, c.d_ff, c.vocab)
                          for c in (doubled(config, w) for w in ("depth", "width")))
    mib = mebibytes(total, nbytes)
    big = max(parts, key=parts.get)
    memory = f"{mib:,.1f} MiB" if mib < 10_000 else f"{mib / 1024:,.1f} GiB"
    text = (f"{total:,} parameters ({size_of(total)}), {memory} at {nbytes:g} byte"
            f"{'s' if nbytes != 1 else ''} per number; the {big} holds {shares[big]:.1%}.")
    if active != total:
        text += f" A token uses only {size_of(active)} of them ({active / total:.1%})."
    text += (f" Twice the blocks: {size_of(depth2)} (\u00d7{depth2 / total:.2f}); twice the width: "
             f"{size_of(width2)} (\u00d7{width2 / total:.2f}).")
    if note and not preset:
        text += " Note: " + note
    steps = gap_steps(config) if preset else []
    gap = None
    if published:
        simple = steps[0][2] + steps[1][1]
        gap = {"blocks": steps[0][1], "embedding": steps[1][1], "simple": simple, "computed": total,
               "published": published, "off": total / published - 1}
        if abs(simple / published - 1) < 0.02:
            text += (f" Published: {size_of(published)}. The blocks alone ({size_of(steps[0][1])}) fall "
                     f"short; the embedding table ({size_of(steps[1][1])}) brings the count to "
                     f"{size_of(simple)}.")
        elif published_active:
            text += (f" Published: {size_of(published)} stored, {size_of(published_active)} active. The simple "
                     f"count ({size_of(simple)}) does not come close: the experts hold "
                     f"{size_of(count.ffn - count.ffn_active)} that a token never uses, and the full "
                     f"count gives {size_of(total)} stored, {size_of(active)} active.")
        else:
            said = "In its weights file" if preset == TRAINED else "Published"
            text += (f" {said}: {size_of(published)}. The simple count gives {size_of(simple)} "
                     f"({simple / published - 1:+.1%}); the model's details (below) bring it to "
                     f"{size_of(total)} ({total / published - 1:+.1%}).")
    return {"ok": True, "config": config, "preset": preset, "note": note, "count": count, "total": total,
            "active": active, "parts": parts, "shares": shares, "mib": mib, "bytes": nbytes,
            "depth2": depth2, "width2": width2, "steps": steps, "gap": gap, "published": published,
            "published_active": published_active, "verdict": text}


class CalculatorLab:
    """The view: a preset menu, the sizes and switches, two bar charts (split by part; depth vs
    width), a breakdown table and, for a preset, the road from the simple count to the published one."""

    CUSTOM = "custom (the controls)"

    def __init__(self, preset=COURSE_EXAMPLE, bytes_per_number=2):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        style = {"description_width": "initial"}
        wide = widgets.Layout(width="22em")
        small = widgets.Layout(width="12em")
        self.table = presets()
        self.preset = widgets.Dropdown(options=[self.CUSTOM] + list(self.table), value=preset,
                                       description="model", style=style, layout=widgets.Layout(width="24em"))
        self.preset.add_class("course-preset")
        self.d_model = widgets.IntSlider(value=768, min=32, max=8192, step=32, description="d_model",
                                         style=style, layout=wide, continuous_update=True)
        self.d_model.add_class("course-slider-d-model")
        self.layers = widgets.IntSlider(value=12, min=1, max=128, step=1, description="layers (blocks)",
                                        style=style, layout=wide, continuous_update=True)
        self.layers.add_class("course-slider-layers")
        self.heads = widgets.BoundedIntText(value=12, min=1, max=256, description="heads", style=style,
                                            layout=small)
        self.d_ff = widgets.BoundedIntText(value=3072, min=1, max=65536, description="d_ff", style=style,
                                           layout=small)
        self.vocab = widgets.BoundedIntText(value=32000, min=1, max=1_000_000, description="vocabulary",
                                            style=style, layout=widgets.Layout(width="15em"))
        self.gated = widgets.Checkbox(value=False, description="gated FFN", indent=False,
                                      layout=widgets.Layout(width="auto"))
        self.tied = widgets.Checkbox(value=True, description="tied embedding", indent=False,
                                     layout=widgets.Layout(width="auto"))
        self.biases = widgets.Checkbox(value=False, description="biases", indent=False,
                                       layout=widgets.Layout(width="auto"))
        self.experts = widgets.BoundedIntText(value=0, min=0, max=512, description="experts (0 = dense)",
                                              style=style, layout=widgets.Layout(width="14em"))
        self.top_k = widgets.BoundedIntText(value=0, min=0, max=512, description="top-k", style=style,
                                            layout=small)
        self.bytes = widgets.Dropdown(options=[(label, b) for b, label in BYTES.items()], value=bytes_per_number,
                                      description="bytes per number", style=style,
                                      layout=widgets.Layout(width="16em"))
        self.numbers = widgets.HTML()
        self.gap = widgets.HTML()
        self.verdict = _verdict_widget()
        self.sizes = {"d_model": self.d_model, "layers": self.layers, "heads": self.heads, "d_ff": self.d_ff,
                      "vocab": self.vocab, "gated": self.gated, "tied": self.tied, "biases": self.biases,
                      "experts": self.experts, "top_k": self.top_k}

        fig = new_figure(6.4, 3.3)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.35, 1], wspace=0.45)
        self.ax_parts, self.ax_double = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.part_names = ["embedding", "attention", "FFN", "norms", "router"]
        colours = [OKABE_ITO[c] for c in ("purple", "sky", "orange", "green", "yellow")]
        self.part_bars = self.ax_parts.barh(range(5), np.ones(5), color=colours, edgecolor="black",
                                            linewidth=0.6)
        self.part_labels = [self.ax_parts.text(0, i, "", va="center", fontsize=8) for i in range(5)]
        self.ax_parts.set_yticks(range(5), self.part_names)
        self.ax_parts.invert_yaxis()
        self.ax_parts.set_xlabel("share of the parameters", fontsize=9)
        self.ax_parts.set_xlim(0, 1.45)
        self.ax_parts.set_xticks([0, 0.5, 1.0], ["0", "50%", "100%"])
        self.ax_parts.tick_params(labelsize=9)
        self.title_parts = self.ax_parts.set_title("", fontsize=9)
        self.double_bars = self.ax_double.bar(range(3), np.ones(3), edgecolor="black", linewidth=0.6,
                                              color=[OKABE_ITO["blue"], OKABE_ITO["green"], OKABE_ITO["vermillion"]])
        self.double_labels = [self.ax_double.text(i, 0, "", ha="center", va="bottom", fontsize=8)
                              for i in range(3)]
        self.ax_double.set_xticks(range(3), ["as set", "2\u00d7\nblocks", "2\u00d7\nwidth"])
        self.ax_double.set_yticks([])
        self.ax_double.set_ylabel("parameters", fontsize=9)
        self.ax_double.set_title("depth vs width", fontsize=9)
        self.ax_double.tick_params(labelsize=9)
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.15, right=0.97, top=0.8, bottom=0.2)
        self.view = FigureView(fig, description="Bar charts: the share of each part of the model, and the "
                                                "count with twice the blocks or twice the width")
        from .kit.own_function import MineSwitch
        self.mine = MineSwitch([PARAMETERS_USE], self.update)
        self.root = _root("parameter-calculator", [
            _controls(self.d_model, self.layers), _controls(self.preset, self.bytes),
            _controls(self.heads, self.d_ff, self.vocab),
            _controls(self.gated, self.tied, self.biases, self.experts, self.top_k),
            self.mine.widget, self.view.widget, self.verdict, self.numbers, self.gap])
        self._setting = False
        for control in self.sizes.values():
            control.observe(self._on_size, names="value")
        self.preset.observe(self._on_preset, names="value")
        self.bytes.observe(lambda _c: self.update(), names="value")
        if preset != self.CUSTOM:
            self._apply_preset(preset)
        self.update()

    def _apply_preset(self, name) -> None:
        config = self.table[name][0]
        self._setting = True
        try:
            values = {"d_model": config.d_model, "layers": config.layers, "heads": config.heads,
                      "d_ff": config.d_ff, "vocab": config.vocab, "gated": config.gated, "tied": config.tied,
                      "biases": config.biases, "experts": config.experts, "top_k": config.top_k}
            for key, value in values.items():
                control = self.sizes[key]
                if hasattr(control, "max") and value > control.max:
                    control.max = value
                control.value = value
        finally:
            self._setting = False

    def _on_preset(self, change) -> None:
        if change["new"] != self.CUSTOM:
            self._apply_preset(change["new"])
        self.update()

    def _on_size(self, _change) -> None:
        if self._setting:
            return
        if self.preset.value != self.CUSTOM:
            self._setting = True
            try:
                self.preset.value = self.CUSTOM       # the controls no longer describe the preset
            finally:
                self._setting = False
        self.update()

    def update(self) -> dict:
        preset = None if self.preset.value == self.CUSTOM else self.preset.value
        values = {key: control.value for key, control in self.sizes.items()}
        nbytes = self.bytes.value
        m = self.mine.run(lambda total: calculator_model(**values, bytes_per_number=nbytes, preset=preset,
                                                         total=total))
        if not m["ok"]:
            for bar, label in zip(self.part_bars, self.part_labels):
                bar.set_width(0)
                label.set_text("")
            for bar, label in zip(self.double_bars, self.double_labels):
                bar.set_height(0)
                label.set_text("")
            self.suptitle.set_text("no model with these sizes")
            self.title_parts.set_text("")
            self.numbers.value = ""
            self.gap.value = ""
        else:
            for i, name in enumerate(self.part_names):
                share = m["shares"][name]
                self.part_bars[i].set_width(share)
                self.part_labels[i].set_position((share + 0.02, i))
                percent = f"{share:.1%}" if share >= 0.001 or share == 0 else "<0.1%"
                self.part_labels[i].set_text(f"{percent}  {size_of(m['parts'][name])}")
            totals = [m["total"], m["depth2"], m["width2"]]
            for i, (bar, label, value) in enumerate(zip(self.double_bars, self.double_labels, totals)):
                bar.set_height(value)
                label.set_text(size_of(value) + ("" if i == 0 else f"\n\u00d7{value / totals[0]:.2f}"))
                label.set_y(value * 1.02)
            self.ax_double.set_ylim(0, max(totals) * 1.35)
            name = m["preset"] or "custom"
            memory = f"{m['mib']:,.1f} MiB" if m["mib"] < 10_000 else f"{m['mib'] / 1024:,.1f} GiB"
            self.suptitle.set_text(f"{name}: {size_of(m['total'])} parameters, {memory}")
            self.title_parts.set_text("where the parameters are")
            c = m["count"]
            rows = [("embedding table", f"{c.embedding:,}"), ("position table", f"{c.positions:,}"),
                    ("output layer (0 if tied)", f"{c.output:,}"), ("attention, all blocks", f"{c.attention:,}"),
                    ("FFN, all blocks", f"{c.ffn:,}"), ("router", f"{c.router:,}"),
                    ("norms (2 per block + final)", f"{c.norms:,}"), ("total", f"{c.total:,}")]
            if m["active"] != m["total"]:
                rows.append(("used per token", f"{m['active']:,}"))
            self.numbers.value = _table_html(rows)
            if m["steps"]:
                lines = [(what, f"+{size_of(added)}" if added >= 0 else f"\u2212{size_of(-added)}", size_of(total))
                         for what, added, total in m["steps"]]
                if m["published"]:
                    lines.append(("published", "", size_of(m["published"])))
                if m["published_active"]:
                    lines.append(("published, used per token", "", size_of(m["published_active"])))
                self.gap.value = _table_html(lines, header=(f"from the simple count to {name}", "adds", "total"))
            else:
                self.gap.value = ""
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def calculator_lab(**initial):
    """The parameter-calculator lab's root widget (class ``course-lab-parameter-calculator``)."""
    return CalculatorLab(**initial).root
