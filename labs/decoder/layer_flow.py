"""The layer-flow lab (notebook 04): a sentence of 8 words through a stack of random blocks. Every
part of the block (position vectors, attention, causal mask, residual add, norms, FFN, final
norm) can be removed, and the depth runs from 1 to 48 blocks; each removed part gets one sentence
saying what went wrong. A switch starts the output projections (Wo and W_down) small, as GPT-2's
initialisation does. Below it, the shape of every tensor in a block.

Model: ``flow_model`` (``lib.block.decoder``, with the learner's ``causal_weights`` if asked) and
``block_shapes``. View: ``FlowLab``. Root widget: ``flow_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from engine.core.own import Use
from lib.attention import causal_weights
from lib.block import decoder, random_stack
from lib.norm import root_mean_square
from lib.params import ModelConfig, block_parameters
from lib.positional import sinusoidal
from lib.weights import random_weights
from engine.presentation.html import plain
from engine.presentation.numbers import amount, count, fixed, percentage, plural, word_list
from engine.presentation.numbers import shape as write_shape
from engine.presentation.tables import table

from engine.kit.figure_view import decades, set_limits, whole_ticks
from engine.kit.layout import controls, lab_root, menu, slider, switch, verdict_widget
from engine.kit.result import Result

PARTS = {"positions": "position vectors", "attention": "attention", "causal": "causal mask",
         "residual": "residual add", "norms": "norms", "ffn": "FFN", "final_norm": "final norm"}
WORDS = ("the", "cat", "sat", "on", "the", "mat", "and", "slept")
FIRST_SWAP, LAST_SWAP = ("the", "a"), ("slept", "ran")
FLOW_D, FLOW_FF, FLOW_HEADS, DEPTH_MAX = 16, 64, 2, 48
COPIES = (0, 4)                          # the two copies of "the"
EXACT = 1e-12                            # below this, a change is rounding and counts as 0
VANISHED = 1e-9                          # a stream smaller than this has vanished
SIZE_RANGES = ((-1, 2), (-12, 12))       # the sizes' plot: powers of ten, near or far
LEAK_SCALES = (0.05, 0.5, 5.0, 50.0, 500.0, 5000.0)   # the leaks' plot: the first that holds them
SMALL_OUTPUTS = float(1 / np.sqrt(2 * DEPTH_MAX))   # GPT-2's rule for the output projections of 48 blocks


@lru_cache(maxsize=1)
def _vocabulary():
    """One random vector of 16 numbers (RMS about 1) per word, fixed."""
    words = sorted(set(WORDS) | {FIRST_SWAP[1], LAST_SWAP[1]})
    table, = random_weights([(len(words), FLOW_D)], seed=404, scale=1.0)
    return {word: table[i] for i, word in enumerate(words)}


@lru_cache(maxsize=4)
def _stack(seed: int, small_outputs: bool = False):
    """The lab's 48 random blocks; with ``small_outputs``, the same blocks with Wo and W_down
    multiplied by SMALL_OUTPUTS = 1/√(2 × 48), as GPT-2 starts the projections whose output is
    added to the stream (every other weight as it was)."""
    stack = random_stack(DEPTH_MAX, FLOW_D, FLOW_FF, FLOW_HEADS, seed=1000 * int(seed))
    if not small_outputs:
        return stack
    return [replace(w, Wo=w.Wo * SMALL_OUTPUTS, W_down=w.W_down * SMALL_OUTPUTS) for w in stack]


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


@lru_cache(maxsize=64)
def _runs(on: tuple, seed: int, weigh, small: bool = False) -> list:
    """The three sentences (as one batch, (3, 8, 16)) and their streams block by block, as deep
    as asked for so far: :func:`_streams` extends the list (a setting not asked for in a while
    leaves the cache and is run again when it comes back)."""
    return [np.stack(flow_inputs(dict(zip(PARTS, on))["positions"]))]


def _streams(on: tuple, depth: int, seed: int, weigh=causal_weights, small: bool = False) -> np.ndarray:
    """The streams of the sentence, and of it with its first and with its last word swapped,
    through the first ``depth`` blocks: (depth + 1, 3, 8, 16). The first k blocks of a stack are
    the same whatever its depth, so each setting runs every block once: a deeper stack only runs
    the blocks not run yet, and a shallower one reads the first streams of a deeper run."""
    runs = _runs(on, seed, weigh, small)
    if len(runs) <= depth:
        parts = dict(zip(PARTS, on))
        with np.errstate(all="ignore"):
            more = decoder(runs[-1], _stack(seed, small)[len(runs) - 1:depth], final_norm=False,
                           **_options(parts, weigh))
        runs.extend(more.streams[1:])
    return np.array(runs[:depth + 1])


def _options(parts: dict, weigh) -> dict:
    """The options of every block (``lib.block.block``) for the parts switched on."""
    return dict(placement="pre" if parts["norms"] else "none", use_attention=parts["attention"],
                use_ffn=parts["ffn"], use_residual=parts["residual"], causal=parts["causal"],
                norm="rms", activation="gelu", causal_weights=weigh)


@dataclass(frozen=True)
class FlowRun(Result):
    """The sentence through a stack of blocks, per block and at the top.

    sizes, alike, leaks: (depth + 1,) before the first block and after each: the stream's size
    (RMS, NaN once it overflowed), how alike the words are (mean cosine similarity) and how far
    word 1 moves when the last word changes. output: (words, d_model) the top's output.
    """
    sizes: np.ndarray
    alike: np.ndarray
    leaks: np.ndarray
    overflow_at: int | None     # the first stream with a number that is not finite
    vanished_at: int | None     # the first stream whose size is below VANISHED
    output: np.ndarray
    output_size: float
    leak: float                 # how far word 1's output moves when the last word changes
    context: float              # how far the last word's output moves when the first word changes
    copies: float               # how far apart the outputs of the two copies of "the" are


@dataclass(frozen=True)
class FlowResult(FlowRun):
    """The run with the parts chosen, and what the lab says about it against ``full``, the run
    with every part on (the dashed line)."""
    depth: int
    seed: int
    parts: dict                 # each part of PARTS: on or off
    removed: list               # the parts off
    full: FlowRun
    small_outputs: bool         # Wo and W_down started at small_factor of the lab's size
    small_factor: float
    rule_terms: tuple           # (2, DEPTH_MAX): small_factor is 1/√(2 × DEPTH_MAX)
    removed_count: int
    copies_words: tuple         # the words of the two copies of "the", from 1
    ffn_share: float            # the FFN's share of a block's parameters
    summary: str                # the verdict's first sentence
    sentences: dict             # a sentence for each removed part
    verdict: str


@lru_cache(maxsize=512)
def _flow(on: tuple, depth: int, seed: int, weigh=causal_weights, small: bool = False) -> FlowRun:
    parts = dict(zip(PARTS, on))
    every = _streams(on, depth, seed, weigh, small)
    with np.errstate(all="ignore"):            # the final norm alone: a decoder with no block
        top = decoder(every[-1], [], final_norm=parts["final_norm"], norm="rms").output
    streams, out, first_out, last_out = every[:, 0], top[0], top[1], top[2]
    finite = np.array([bool(np.all(np.isfinite(s))) for s in streams])
    overflow_at = None if finite.all() else int(np.argmin(finite))
    with np.errstate(all="ignore"):
        sizes = np.array([root_mean_square(s) if ok else np.nan for s, ok in zip(streams, finite)])
    tiny = np.flatnonzero(sizes < VANISHED)
    vanished_at = int(tiny[0]) if tiny.size else None
    alike = np.array([similarity(s) if ok else np.nan for s, ok in zip(streams, finite)])
    leaks = np.array([_largest(a[0], b[0]) for a, b in zip(streams, every[:, 2])])
    for array in (sizes, alike, leaks, out):
        array.setflags(write=False)
    return FlowRun(sizes=sizes, alike=alike, leaks=leaks, overflow_at=overflow_at, vanished_at=vanished_at,
                   output=out,
                   output_size=float(root_mean_square(out)) if np.all(np.isfinite(out)) else float("inf"),
                   leak=_largest(out[0], last_out[0]), context=_largest(out[-1], first_out[-1]),
                   copies=_largest(out[COPIES[0]], out[COPIES[1]]))


def _ffn_share() -> float:
    one = block_parameters(ModelConfig(d_model=FLOW_D, layers=1, d_ff=FLOW_FF, vocab=1))
    return one.ffn / one.total


WITHOUT = {"positions": "position vectors", "attention": "attention", "causal": "the causal mask",
           "residual": "the residual add", "norms": "the norms", "ffn": "the FFN",
           "final_norm": "the final norm"}


def _part_sentence(part: str, m: dict, ref: dict, parts: dict, depth: int) -> str:
    """What goes wrong without ``part``: m is the run plotted (without it, and without any other
    part removed with it), ref the run with every part on (plotted as the dashed line). With
    other parts removed too, the sentence opens on the combination its numbers are of."""
    blocks = plural(depth, 'block')
    others = sum(not on for on in parts.values()) - 1
    without = (f"With {WITHOUT[part]} and {plural(others, 'other part')} removed" if others
               else f"Without {WITHOUT[part]}")
    if part == "positions":
        if m["copies"] <= EXACT:
            return (f"{without}, the two copies of \u201cthe\u201d (words 1 and 5) come out "
                    f"identical (difference 0; every part on: {amount(ref['copies'])}): nothing "
                    "tells them apart.")
        return (f"{without}, the two copies of \u201cthe\u201d still differ by "
                f"{amount(m['copies'])} (every part on: {amount(ref['copies'])}), only because "
                "the causal mask lets word 5 read four more words than word 1.")
    if part == "attention":
        return (f"{without}, no word reads any other: changing the first word "
                f"({FIRST_SWAP[0]} \u2192 {FIRST_SWAP[1]}) moves the last word's output by "
                f"{amount(m['context'])} (every part on: {amount(ref['context'])}).")
    if part == "causal":
        if not parts["attention"]:
            return (f"{without}, nothing changes while attention is off: changing the last "
                    f"word moves word 1's output by {amount(m['leak'])}, as no word reads another.")
        masked = "exactly 0" if ref["leak"] <= EXACT else amount(ref["leak"])
        if m["vanished_at"] is not None or m["leak"] <= EXACT:
            why = (f"the stream vanished at block {m['vanished_at']}" if m["vanished_at"] is not None
                   else "little of the last word reaches it")
            return (f"{without}, word 1 may read the future, but {why}, so changing the last "
                    f"word moves word 1's output by only {amount(m['leak'])} (every part on: {masked}).")
        return (f"{without}, word 1 reads the future: changing the last word "
                f"({LAST_SWAP[0]} \u2192 {LAST_SWAP[1]}) moves word 1's output by {amount(m['leak'])} "
                f"(every part on: {masked}).")
    if part == "residual":
        return (f"{without}, each block replaces the stream: after {blocks} the words' "
                f"similarity is {fixed(m['alike'][-1], 3)} (every part on: {fixed(ref['alike'][-1], 3)}) and "
                f"changing the first word moves the last word's output by {amount(m['context'])} "
                f"(every part on: {amount(ref['context'])}).")
    if part == "norms":
        at = m["overflow_at"]
        if at is not None:
            grew = at > 1 and bool(np.all(np.diff(m["sizes"][:at]) > 0))
            how = "the stream grew until the numbers overflowed" if grew else "the numbers overflowed"
            return f"{without}, every block reads the raw stream and {how} at block {at}."
        return (f"{without}, every block reads the raw stream: its size reaches "
                f"{amount(m['sizes'][-1])} after {blocks} (every part on: {amount(ref['sizes'][-1])}).")
    if part == "ffn":
        return (f"{without}, the block loses its one wide, learned non-linear map of each word by "
                f"itself (the norms only rescale a word, and attention's value and output maps are "
                f"linear) and keeps only {percentage(1 - _ffn_share())} of its parameters; the words' "
                f"similarity after {blocks} is {fixed(m['alike'][-1], 3)} (every part on: "
                f"{fixed(ref['alike'][-1], 3)}).")
    return (f"{without}, the output keeps the stream's size, {amount(m['output_size'])} "
            f"after {blocks}; with it every word leaves at size {fixed(ref['output_size'])}.")


# The flow lab can run the learner's causal_weights (notebook 04's exercise) instead.
CAUSAL_USE = Use("cached-causal-weights", causal_weights, "lib.attention.causal_weights")


def flow_model(depth: int = 12, seed: int = 0, causal_weights=causal_weights, small_outputs: bool = False,
               **parts) -> FlowResult:
    """The sentence through ``depth`` random blocks with the chosen parts (keywords of ``PARTS``,
    True = on, all on by default); ``causal_weights`` optionally replaces the course's causal
    mask and softmax (the learner's function from the exercise); ``small_outputs`` starts Wo and
    W_down at 1/√(2 × 48) of the lab's size (GPT-2's rule; the run with every part on, the dashed
    line, keeps the lab's weights). Per block: the stream's size
    (RMS), how alike the words are (mean cosine similarity) and how far word 1 moves when the
    last word changes. At the top:
    how far the last word's output moves when the first word changes, and how far apart the two
    copies of "the" are. The verdict: one sentence for the run, then one per removed part,
    comparing with the run with every part on. Raises TypeError for a part it does not know (and
    whatever a learner's ``causal_weights`` raises); any depth and seed are taken."""
    depth = int(np.clip(int(depth), 1, DEPTH_MAX))
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise TypeError(f"unknown parts {sorted(unknown)}; the parts are {list(PARTS)}")
    on = {name: bool(parts.get(name, True)) for name in PARTS}
    key = tuple(on.values())
    small = bool(small_outputs)
    m = _flow(key, depth, int(seed), causal_weights, small)
    full = _flow(tuple(True for _ in PARTS), depth, int(seed))
    removed = [name for name in PARTS if not on[name]]
    blocks = plural(depth, 'block')
    if m.leak > EXACT:
        future = f"word 1 reads the future (it moves by {amount(m.leak)} when the last word changes)"
    elif m.leak > 0:
        future = (f"word 1 moves by only {amount(m.leak)}, rounding, when the last word changes")
    else:
        future = "no word reads the future (word 1 moves by exactly 0 when the last word changes)"
    scaled = (f"Wo and W_down at {fixed(SMALL_OUTPUTS)} of the lab's size (1/\u221a(2 \u00d7 {DEPTH_MAX}), "
              f"the factor GPT-2 starts them smaller by in {DEPTH_MAX} blocks)")
    if len(removed) > 1:
        after = (f"With the {word_list(PARTS[name] for name in removed)} removed together"
                 f"{' and ' + scaled if small else ''}, after {blocks}")
    else:
        after = f"With {scaled}, after {blocks}" if small else f"After {blocks}"
    if m.overflow_at is not None:
        summary = f"{after}: the numbers overflowed at block {m.overflow_at}, and {future}."
    elif m.vanished_at is not None:
        summary = (f"{after}: the stream vanished, its size falling from {amount(m.sizes[0])} "
                   f"to {amount(m.sizes[-1])} (below 1e-9 from block {m.vanished_at}); the words' "
                   f"similarity went from {fixed(m.alike[0])} to {fixed(m.alike[-1], 3)}, and {future}.")
    else:
        summary = (f"{after}{' with every part on' if not removed else ''}: the stream's size went "
                   f"from {amount(m.sizes[0])} to {amount(m.sizes[-1])}, the words' similarity "
                   f"from {fixed(m.alike[0])} to {fixed(m.alike[-1], 3)}, and {future}.")
    if len(removed) > 1:                 # each part's sentence gives the numbers of this run, all removed
        summary += (f" The sentences below give the numbers of this run, with the {len(removed)} parts "
                    "removed together; remove one at a time to see what each does on its own.")
    # Every sentence is about the two runs plotted: this setting's and the one with every part on.
    sentences = {name: _part_sentence(name, m, full, on, depth) for name in removed}
    verdict = " ".join([summary] + list(sentences.values()))
    return FlowResult(**vars(m), depth=depth, seed=int(seed), parts=on, removed=removed, full=full,
                      small_outputs=small, small_factor=SMALL_OUTPUTS, rule_terms=(2, DEPTH_MAX),
                      removed_count=len(removed), copies_words=tuple(c + 1 for c in COPIES),
                      ffn_share=_ffn_share(), summary=summary, sentences=sentences, verdict=verdict)


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
        ("W_up", (d, f), "widens"),
        ("hidden units", (B, L, f), "after the activation"),
        ("W_down", (f, d), "narrows"),
        ("FFN output", (B, L, d), ""),
        ("block output", (B, L, d), "same shape as x"),
    ]
    return rows, None


class FlowLab:
    """The view: a depth slider, seven remove-a-part toggles, three panels (a point per block),
    and the shape table with its own size menus."""

    SIZES = {"batch": (1, 2, 4, 8, 32), "length": (4, 8, 16, 128, 1024),
             "d_model": (16, 64, 128, 768, 4096), "heads": (1, 2, 3, 4, 8, 12, 32)}

    def __init__(self, depth=12, seed=0, batch=2, length=8, d_model=16, heads=2, small_outputs=False, **parts):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.seed = int(seed)
        self.depth = slider("int", value=depth, min=1, max=DEPTH_MAX, step=1, description="blocks")
        self.depth.add_class("course-slider-depth")
        self.toggles = {}
        for name, label in PARTS.items():
            toggle = switch(label, parts.get(name, True), f"switch the {label} on or off")
            toggle.add_class(f"course-toggle-{name.replace('_', '-')}")
            self.toggles[name] = toggle
        self.small = switch("small Wo and W_down", bool(small_outputs),
                            "scale Wo and W_down by 1/\u221a(2 \u00d7 48), as GPT-2 starts them smaller")
        self.small.add_class("course-toggle-small-outputs")
        self.new = widgets.Button(description="new random blocks", icon="refresh",
                                  layout=widgets.Layout(width="auto"))
        self.new.add_class("course-button-new-blocks")
        self.verdict = verdict_widget()
        self.shape_controls = {}
        for name, value in (("batch", batch), ("length", length), ("d_model", d_model), ("heads", heads)):
            label = {"batch": "B (texts)", "length": "L (tokens)", "d_model": "d_model", "heads": "heads"}[name]
            control = menu([(count(v), v) for v in self.SIZES[name]], value, label)
            control.add_class(f"course-shape-{name.replace('_', '-')}")
            self.shape_controls[name] = control
        self.shapes = widgets.HTML()
        self.shapes.add_class("course-lab-shapes")

        fig = new_figure(6.4, 3.3)
        axes = fig.subplots(1, 3)
        self.axes = axes
        for ax in axes:                                # every depth on one fixed axis of whole blocks
            set_limits(ax, x=(-1, DEPTH_MAX + 1))
            whole_ticks(ax.xaxis, 0, DEPTH_MAX, most=5)
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
        axes[1].set_ylim(-0.05, 1.05)
        fig.legend(handles=[self.lines[0], self.refs[0]], loc="lower center", ncol=2, fontsize=9,
                   frameon=False)
        self.suptitle = fig.suptitle("", fontsize=10)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.78, bottom=0.26, wspace=0.55)
        self._scales(SIZE_RANGES[0], LEAK_SCALES[0])
        far = SIZE_RANGES[1]             # the ticks of the far range made now, not when it is first shown
        axes[0].yaxis.get_major_ticks(far[1] - far[0] + 1)
        self.view = FigureView(fig, description="Three line plots, one point per block: the stream's size, "
                                                "how alike the words are, and how far word 1 moves when the "
                                                "last word changes",
                               changing=[self.lines, self.refs, self.suptitle])
        toggles = controls(*self.toggles.values(), self.small)
        from engine.kit.own_function import OwnFunctionSwitch
        self.own = OwnFunctionSwitch([CAUSAL_USE], self.update)
        self.root = lab_root("layer-flow", [
            controls(self.depth, self.new), toggles, self.own.widget, self.view.widget, self.verdict,
            controls(*self.shape_controls.values()), self.shapes])
        self.depth.observe(lambda _c: self.update(), names="value")
        for toggle in (*self.toggles.values(), self.small):
            toggle.observe(lambda _c: self.update(), names="value")
        for control in self.shape_controls.values():
            control.observe(lambda _c: self.update_shapes(), names="value")
        self.new.on_click(self._new_blocks)
        self.update_shapes()
        self.update()

    def _scales(self, sizes: tuple, leak: float) -> None:
        """The sizes' powers of ten and the leaks' top (a full draw only when they change)."""
        if getattr(self, "_state", None) == (sizes, leak):
            return
        if getattr(self, "_state", (None,))[0] != sizes:
            decades(self.axes[0].yaxis, *sizes, label_every=1 if sizes[1] - sizes[0] <= 6 else 4)
        set_limits(self.axes[2], y=(-0.05 * leak, 1.15 * leak))
        self._state = (sizes, leak)

    def _new_blocks(self, _button=None) -> None:
        self.seed += 1
        self.update()

    def update_shapes(self):
        c = {name: control.value for name, control in self.shape_controls.items()}
        rows, problem = block_shapes(c["batch"], c["length"], c["d_model"], c["heads"])
        if problem:
            self.shapes.value = plain(problem)
        else:
            self.shapes.value = table(
                [(name, write_shape(dims), what) for name, dims, what in rows],
                header=("tensor", "shape", "what it is"))
        return rows

    def update(self) -> FlowResult:
        parts = {name: toggle.value for name, toggle in self.toggles.items()}
        masked = parts["causal"] and parts["attention"]     # only then is a causal mask computed
        m = self.own.run(lambda weights: flow_model(self.depth.value, self.seed, causal_weights=weights,
                                                    small_outputs=self.small.value, **parts),
                          "cached-causal-weights" if masked else None)
        n = m.depth
        k = np.arange(n + 1)
        series = (m.sizes, m.alike, m.leaks)
        references = (m.full.sizes, m.full.alike, m.full.leaks)
        for line, ref, values, reference in zip(self.lines, self.refs, series, references):
            line.set_data(k, np.where(np.isfinite(values), values, np.nan))
            ref.set_data(k, reference)
        both = np.concatenate([m.sizes, m.full.sizes])
        both = both[np.isfinite(both) & (both > 0)]
        near = both.size and 10.0 ** SIZE_RANGES[0][0] <= both.min() and both.max() <= 10.0 ** SIZE_RANGES[0][1]
        leaks = np.concatenate([m.leaks, m.full.leaks])
        top = float(np.max(leaks[np.isfinite(leaks)], initial=0.0)) * 1.05
        leak = next((s for s in LEAK_SCALES if top <= s), LEAK_SCALES[-1])
        self._scales(SIZE_RANGES[0] if near else SIZE_RANGES[1], leak)
        removed = [PARTS[name] for name in m.removed]
        title = "Every part on" if not removed else "Removed: " + ", ".join(removed)
        self.suptitle.set_text(title + ("; small Wo and W_down" if m.small_outputs else ""))
        self.view.redraw(state=self._state)
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def flow_lab(**initial):
    """The layer-flow lab's root widget (class ``course-lab-layer-flow``)."""
    return FlowLab(**initial).root
