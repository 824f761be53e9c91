"""Labs of notebook 05: inside the course's small trained model (``lib.model``).

- ``ablation_lab``: leave out any combination of the four blocks, or the positions (RoPE), and
  watch the perplexity per kind of prediction and one prediction's top words.
- ``mismatch_lab``: run the same weights with a detail changed (RoPE pairing, RoPE base, no
  RoPE, LayerNorm instead of RMSNorm, epsilon) and see which mistakes are loud and which quiet.
- ``stream_lab``: the residual stream of one token, block by block: what attention and the FFN
  add, and the stream's size.

Each lab has a model (a pure function from the controls to numbers and a verdict, never raising)
and a view (widgets and one figure, redrawn in place). The forward passes are cached, so moving
a control back to a setting already seen costs nothing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lib import model as trained

from .kit.layout import controls as _controls, log_scale, lab_root as _root, verdict_html as _verdict_html, verdict_widget as _verdict_widget

# The kinds of prediction shown, as (label, names of the kinds in lib/trained/model.json).
GROUPS = (("verbs", ("verb",)), ("counting", ("count",)), ("copy", ("copy",)),
          ("reverse", ("reverse",)), ("sums", ("sum",)), ("differences", ("difference",)),
          ("whole text", None))
CONTEXT_WORDS = 9          # words of context shown before a watched prediction
TOP = 5                    # words shown for a watched prediction


# ============================================================ shared numbers

@lru_cache(maxsize=1)
def _text():
    """The held-out text: ids, and for each prediction (n - 1 of them) its kind's group."""
    h = trained.heldout()
    names = trained.info()["kinds"]
    target_kinds = [names[k] for k in h.kinds[1:]]
    masks = {}
    for label, kinds in GROUPS:
        masks[label] = (np.ones(len(target_kinds), dtype=bool) if kinds is None
                        else np.array([k in kinds for k in target_kinds]))
    watched = np.flatnonzero(~np.isin(target_kinds, ["free", "grammar", "end"]))  # decided ones
    return h.ids, masks, watched, target_kinds


@lru_cache(maxsize=64)
def _losses(skip=(), positions=True, pairing="halves", base=10000.0, norm="rms", eps=1e-5):
    """Per-prediction losses, probabilities and top-1 choices for one setting (cached, read-only)."""
    ids = _text()[0]
    if skip and positions and (pairing, base, norm, eps) == ("halves", 10000.0, "rms", 1e-5):
        # The blocks before the first one left out compute what they always do: start from the
        # whole model's stream there and run only the rest.
        x = _trace().streams[min(skip)]
        for number, run_block in enumerate(trained.blocks()):
            if number >= min(skip) and number not in skip:
                x = run_block(x)
        logits = trained.output_logits(x)
    else:
        logits = trained.forward(ids, skip=skip, positions=positions, pairing=pairing, base=base,
                                 norm=norm, eps=eps)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probs = trained.probabilities(logits)
        losses = trained.token_losses(logits, ids)
    for array in (logits, probs, losses):
        array.setflags(write=False)
    return logits, probs, losses


def _perplexities(losses) -> dict:
    masks = _text()[1]
    with np.errstate(over="ignore", invalid="ignore"):
        return {label: float(np.exp(losses[mask].mean())) if mask.any() else float("nan")
                for label, mask in masks.items()}


def _fmt_ppl(value: float) -> str:
    if not np.isfinite(value):
        return "not a number"
    return f"{value:,.0f}" if value >= 1000 else f"{value:.2f}" if value < 10 else f"{value:.1f}"


def _context(position: int) -> str:
    """The words before prediction ``position`` (which guesses token position + 1)."""
    ids = _text()[0]
    start = max(0, position + 1 - CONTEXT_WORDS)
    return ("\u2026 " if start > 0 else "") + trained.decode(ids[start:position + 1])


# ============================================================ ablation

def ablation_model(keep=(True, True, True, True), positions: bool = True, watch: int = 0) -> dict:
    """The trained model with the blocks whose ``keep`` entry is False left out (the stream passes
    them unchanged) and, with positions=False, no RoPE. ``watch`` picks one of the held-out text's
    decided predictions (0 .. len(watchable) - 1). Returns perplexities per kind of prediction for
    the trained model and this setting, the watched prediction's top words, and the verdict."""
    layers = trained.info()["config"]["layers"]
    keep = tuple(bool(k) for k in keep)[:layers]
    keep = keep + (True,) * (layers - len(keep))
    skip = tuple(i for i, k in enumerate(keep) if not k)
    ids, masks, watched, target_kinds = _text()
    watch = int(np.clip(int(watch), 0, len(watched) - 1))
    position = int(watched[watch])
    _l, full_probs, full_losses = _losses()
    _l, probs, losses = _losses(skip, bool(positions))
    full, now = _perplexities(full_losses), _perplexities(losses)
    vocab = trained.vocab()
    right = int(ids[position + 1])
    top = [int(i) for i in np.argsort(-probs[position])[:TOP]]
    removed = [f"block {i + 1}" for i in skip] + ([] if positions else ["the positions"])
    whole_full, whole_now = full["whole text"], now["whole text"]
    if not removed:
        change = (f"The whole model: perplexity {_fmt_ppl(whole_full)} on the held-out text "
                  f"({len(ids)} tokens). Leave something out and compare.")
    else:
        ratios = {label: now[label] / full[label] for label, _k in GROUPS[:-1]
                  if np.isfinite(now[label]) and np.isfinite(full[label])}
        worst = max(ratios, key=ratios.get) if ratios else "whole text"
        change = (f"Without {' and '.join(removed)}, the perplexity rises from {_fmt_ppl(whole_full)} "
                  f"to {_fmt_ppl(whole_now)} (\u00d7{_fmt_ppl(whole_now / whole_full)}); hit hardest: "
                  f"{worst} ({_fmt_ppl(full[worst])} \u2192 {_fmt_ppl(now[worst])}).")
    guess = vocab[top[0]]
    watched_text = (f"Watched: after \u201c{_context(position)}\u201d the right word \u201c{vocab[right]}\u201d "
                    f"gets {full_probs[position, right]:.2f} from the whole model")
    if removed:
        watched_text += f" and {probs[position, right]:.2f} now"
    top_p = float(probs[position, top[0]])
    watched_text += (f"; the top word is \u201c{guess}\u201d ({top_p:.2f})"
                     + (", the word that came." if top[0] == right else ", not the word that came."))
    return {"keep": keep, "skip": skip, "positions": bool(positions), "watch": watch,
            "position": position, "kind": target_kinds[position], "full": full, "now": now,
            "right": right, "right_full": float(full_probs[position, right]),
            "right_now": float(probs[position, right]), "top": top,
            "top_now": [float(probs[position, i]) for i in top],
            "top_full": [float(full_probs[position, i]) for i in top],
            "context": _context(position), "verdict": f"{change} {watched_text}"}


def _first_watch(kind: str = "reverse") -> int:
    _ids, _m, watched, target_kinds = _text()
    for n, position in enumerate(watched):
        if target_kinds[position] == kind:
            return n
    return 0


class _KindBars:
    """Two bars per kind of prediction on a log scale: the trained model, and the setting now."""

    def __init__(self, ax, now_label):
        from .kit.figure_view import OKABE_ITO
        labels = [label for label, _k in GROUPS]
        x = np.arange(len(labels))
        self.full = ax.bar(x - 0.2, np.ones(len(labels)), width=0.4, color=OKABE_ITO["sky"],
                           label="trained model")
        self.now = ax.bar(x + 0.2, np.ones(len(labels)), width=0.4, color=OKABE_ITO["vermillion"],
                          label=now_label, hatch="//", edgecolor="white")
        log_scale(ax.yaxis)
        ax.set_xticks(x, labels, rotation=40, ha="right", fontsize=9)
        ax.set_ylabel("perplexity (log)")
        ax.set_title("perplexity by kind of prediction", fontsize=10)
        ax.axhline(1.0, color=OKABE_ITO["black"], linewidth=0.8)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, frameon=True, framealpha=0.85)
        self.ax = ax

    def update(self, full: dict, now: dict) -> None:
        values = []
        for (label, _k), a, b in zip(GROUPS, self.full, self.now):
            a.set_height(full[label])
            shown = now[label] if np.isfinite(now[label]) else 1.0
            b.set_height(shown)
            values += [full[label], shown]
        self.ax.set_ylim(0.8, max(max(values) * 8, 10.0))


class AblationLab:
    """The view: a slider for the watched prediction, a toggle per block and for the positions."""

    def __init__(self, keep=(True, True, True, True), positions=True, watch=None):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        layers = trained.info()["config"]["layers"]
        watched = _text()[2]
        watch = _first_watch() if watch is None else watch
        self.watch = widgets.IntSlider(value=watch, min=0, max=len(watched) - 1, step=1,
                                       description="prediction to watch", continuous_update=True,
                                       style={"description_width": "initial"},
                                       layout=widgets.Layout(width="22em"))
        self.watch.add_class("course-slider-watch")
        self.blocks = [widgets.ToggleButton(value=bool(keep[i]) if i < len(keep) else True,
                                            description=f"block {i + 1}", icon="check",
                                            tooltip=f"use block {i + 1}",
                                            layout=widgets.Layout(width="7.5em"))
                       for i in range(layers)]
        self.positions = widgets.ToggleButton(value=bool(positions), description="positions (RoPE)",
                                              icon="check", layout=widgets.Layout(width="11em"))
        self.verdict = _verdict_widget()
        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.25, 1], wspace=0.35)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.kinds = _KindBars(left, "with parts left out")
        x = np.arange(TOP)
        self.top_full = right.bar(x - 0.2, np.zeros(TOP), width=0.4, color=OKABE_ITO["sky"])
        self.top_now = right.bar(x + 0.2, np.zeros(TOP), width=0.4, color=OKABE_ITO["vermillion"],
                                 hatch="//", edgecolor="white")
        right.set_ylim(0, 1.05)
        right.set_xticks(x, [""] * TOP, fontsize=9)
        right.set_ylabel("probability")
        right.set_xlabel("top words now", fontsize=9)
        self.right_title = right.set_title("", fontsize=9)
        right.grid(True, axis="y", alpha=0.3)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.88, bottom=0.27)
        self.right = right
        self.view = FigureView(fig, description="Bars: perplexity per kind of prediction, and one prediction's top words")
        self.root = _root("ablation", [_controls(self.watch), _controls(*self.blocks, self.positions),
                                       self.view.widget, self.verdict])
        for control in (self.watch, *self.blocks, self.positions):
            control.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> dict:
        m = ablation_model(tuple(b.value for b in self.blocks), self.positions.value, self.watch.value)
        for button, kept in zip(self.blocks, m["keep"]):
            button.icon = "check" if kept else "times"
            button.button_style = "" if kept else "warning"
        self.positions.icon = "check" if m["positions"] else "times"
        self.positions.button_style = "" if m["positions"] else "warning"
        self.kinds.update(m["full"], m["now"])
        vocab = trained.vocab()
        for bar, value in zip(self.top_full, m["top_full"]):
            bar.set_height(value)
        for bar, value in zip(self.top_now, m["top_now"]):
            bar.set_height(value)
        labels = [vocab[i] + (" \u2713" if i == m["right"] else "") for i in m["top"]]
        self.right.set_xticks(np.arange(TOP), labels, fontsize=9, rotation=30, ha="right")
        words = m["context"].split()
        short = " ".join(words[-6:])
        self.right_title.set_text(f"after \u201c{short}\u201d")
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def ablation_lab(**initial):
    """The ablation lab's root widget (class ``course-lab-ablation``)."""
    return AblationLab(**initial).root


# ============================================================ mismatched details

TRAINED = {"pairing": "halves", "base": 10000.0, "positions": True, "norm": "rms", "eps": 1e-5}
BASE_MIN, BASE_MAX = 100.0, 1e6
EPS_MIN, EPS_MAX = 1e-8, 1.0
LOUD, QUIET = 1.5, 1.10          # perplexity ratios: above LOUD is loud, below QUIET is quiet


def _round_log(value: float, lo: float, hi: float) -> float:
    """Clip to [lo, hi] and keep 6 significant digits (so the cache sees repeated values)."""
    value = float(value) if np.isfinite(value) else lo
    value = float(np.clip(value, lo, hi))
    return float(f"{value:.6g}")


def mismatch_model(pairing: str = "halves", base: float = 10000.0, positions: bool = True,
                   norm: str = "rms", eps: float = 1e-5) -> dict:
    """Run the trained weights with the details given (trained: halves, 10,000, RoPE on, RMSNorm,
    1e-5) and compare with the trained setting: perplexity per kind of prediction, how often the
    top word agrees, the largest change of a logit at each position, and the verdict (loud,
    noticeable or quiet; nothing ever raises an error, which is the point)."""
    pairing = pairing if pairing in ("halves", "neighbours") else "halves"
    norm = norm if norm in ("rms", "layer") else "rms"
    base, eps = _round_log(base, BASE_MIN, BASE_MAX), _round_log(eps, EPS_MIN, EPS_MAX)
    setting = {"pairing": pairing, "base": base, "positions": bool(positions), "norm": norm, "eps": eps}
    full_logits, _p, full_losses = _losses()
    logits, _p, losses = _losses((), bool(positions), pairing, base, norm, eps)
    full, now = _perplexities(full_losses), _perplexities(losses)
    with np.errstate(invalid="ignore"):
        gap = np.abs(logits - full_logits).max(axis=-1)
        agree = float(np.mean(logits.argmax(-1) == full_logits.argmax(-1)))
    ratio = now["whole text"] / full["whole text"]
    changed = []
    if not positions:
        changed.append("no RoPE")
    else:
        if pairing != "halves":
            changed.append("RoPE pairing neighbours (trained: halves)")
        if base != TRAINED["base"]:
            changed.append(f"RoPE base {base:,.0f} (trained: 10,000)")
    if norm != "rms":
        changed.append("LayerNorm (trained: RMSNorm)")
    if eps != TRAINED["eps"]:
        changed.append(f"\u03b5 = {eps:.0e} (trained: 1e-05)")
    largest = float(np.nanmax(gap)) if np.isfinite(gap).any() else float("nan")
    if not changed:
        status = "trained"
        verdict = (f"As trained: perplexity {_fmt_ppl(full['whole text'])}. Change one detail and "
                   "see whether anything tells you.")
    else:
        what = ", ".join(changed)
        numbers = (f"perplexity {_fmt_ppl(full['whole text'])} \u2192 {_fmt_ppl(now['whole text'])} "
                   f"(\u00d7{_fmt_ppl(ratio)}), the top word agrees at {agree:.0%} of positions, the largest "
                   f"logit moved by {largest:.2g}")
        if not np.isfinite(ratio) or ratio >= LOUD:
            status = "loud"
            verdict = f"Loud: {what}. {numbers[0].upper() + numbers[1:]}. Any evaluation would catch this."
        elif ratio >= QUIET:
            status = "noticeable"
            verdict = (f"Noticeable: {what}. {numbers[0].upper() + numbers[1:]}. Worse, but it still "
                       "looks like a working model, and no error was raised.")
        else:
            status = "quiet"
            verdict = (f"Quiet: {what}. {numbers[0].upper() + numbers[1:]}. No error, almost the same "
                       "answers: only a comparison with reference logits would catch it.")
    return {**setting, "full": full, "now": now, "ratio": float(ratio), "agree": agree, "gap": gap,
            "largest": largest, "status": status, "changed": changed, "verdict": verdict}


class MismatchLab:
    """The view: the RoPE base and ε sliders, pairing and norm switches, a positions toggle."""

    def __init__(self, pairing="halves", base=10000.0, positions=True, norm="rms", eps=1e-5):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        style = {"description_width": "initial"}
        self.base = widgets.FloatLogSlider(value=base, base=10, min=2, max=6, step=0.25,
                                           description="RoPE base", readout_format=",.0f",
                                           continuous_update=True, style=style,
                                           layout=widgets.Layout(width="22em"))
        self.base.add_class("course-slider-base")
        self.eps = widgets.FloatLogSlider(value=eps, base=10, min=-8, max=0, step=1,
                                          description="norm \u03b5", readout_format=".0e",
                                          continuous_update=True, style=style,
                                          layout=widgets.Layout(width="22em"))
        self.pairing = widgets.ToggleButtons(options=[("halves", "halves"), ("neighbours", "neighbours")],
                                             value=pairing, description="RoPE pairs",
                                             tooltips=["number i with i + d/2 (as trained)",
                                                       "number 2i with 2i + 1"],
                                             style={"description_width": "initial", "button_width": "8em"})
        self.norm = widgets.ToggleButtons(options=[("RMSNorm", "rms"), ("LayerNorm", "layer")],
                                          value=norm, description="norm",
                                          style={"description_width": "initial", "button_width": "8em"})
        self.positions = widgets.Checkbox(value=bool(positions), description="RoPE on", indent=False,
                                          layout=widgets.Layout(width="7em"))
        self.reset = widgets.Button(description="as trained", icon="undo", layout=widgets.Layout(width="auto"))
        self.reset.add_class("course-button-as-trained")
        self.verdict = _verdict_widget()
        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.25, 1], wspace=0.35)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.kinds = _KindBars(left, "with the detail changed")
        n = len(_text()[0])
        (self.gap_line,) = right.plot(np.arange(n), np.zeros(n), color=OKABE_ITO["vermillion"],
                                      linewidth=1.2)
        right.set_yscale("symlog", linthresh=1e-3)
        right.set_xlim(0, n - 1)
        right.set_xlabel("position in the text")
        right.set_ylabel("largest logit change")
        right.set_title("how far the logits moved", fontsize=10)
        right.grid(True, alpha=0.3)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.27)
        self.right = right
        self.view = FigureView(fig, description="Bars: perplexity per kind of prediction; line: logit change per position")
        self.root = _root("mismatch", [_controls(self.base, self.eps),
                                       _controls(self.pairing, self.norm, self.positions, self.reset),
                                       self.view.widget, self.verdict])
        for control in (self.base, self.eps, self.pairing, self.norm, self.positions):
            control.observe(lambda _c: self.update(), names="value")
        self.reset.on_click(self._as_trained)
        self.update()

    def _as_trained(self, _button=None) -> None:
        with self.root.hold_trait_notifications():
            self.base.value, self.eps.value = TRAINED["base"], TRAINED["eps"]
            self.pairing.value, self.norm.value = TRAINED["pairing"], TRAINED["norm"]
            self.positions.value = TRAINED["positions"]
        self.update()

    def update(self) -> dict:
        m = mismatch_model(self.pairing.value, self.base.value, self.positions.value, self.norm.value,
                           self.eps.value)
        self.kinds.update(m["full"], m["now"])
        gap = np.where(np.isfinite(m["gap"]), m["gap"], np.nan)
        self.gap_line.set_ydata(gap)
        top = np.nanmax(gap) if np.isfinite(gap).any() else 1.0
        self.right.set_ylim(0, max(top * 2, 0.01))
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def mismatch_lab(**initial):
    """The mismatched-details lab's root widget (class ``course-lab-mismatch``)."""
    return MismatchLab(**initial).root


# ============================================================ the residual stream

@lru_cache(maxsize=1)
def _trace():
    t = trained.forward(_text()[0], trace=True)
    for array in t:
        array.setflags(write=False)
    return t


def stream_model(position: int = 0) -> dict:
    """The residual stream of the held-out text's token at ``position`` (or, for -1, the average
    over all tokens): the size (RMS) of what each block's attention and FFN added, the stream's
    size before the first block and after each block, its largest number, and the verdict."""
    t = _trace()
    ids = _text()[0]
    position = int(np.clip(int(position), -1, len(ids) - 1))
    rms = lambda a: np.sqrt((a ** 2).mean(axis=-1))  # noqa: E731  (one size per token)
    if position < 0:
        pick = lambda a: a.mean(axis=-1)             # noqa: E731  (average over the tokens)
        who = f"on average over the {len(ids)} tokens"
    else:
        pick = lambda a: a[..., position]            # noqa: E731
        who = f"for \u201c{trained.vocab()[ids[position]]}\u201d at position {position}"
    attention = pick(rms(t.attention_adds))
    ffn = pick(rms(t.ffn_adds))
    stream = pick(rms(t.streams))
    largest = float(np.abs(t.streams[:, position] if position >= 0 else t.streams).max())
    big = int(np.argmax(np.maximum(attention, ffn)))
    part = "attention" if attention[big] >= ffn[big] else "the FFN"
    verdict = (f"The stream {who} grows from {stream[0]:.2f} to {stream[-1]:.2f}; the largest "
               f"addition comes from {part} in block {big + 1} ({max(attention[big], ffn[big]):.2f}). "
               f"Its largest number is {largest:.1f}, far below float16's limit of 65,504.")
    return {"position": position, "attention": attention, "ffn": ffn, "stream": stream,
            "largest": largest, "verdict": verdict}


class StreamLab:
    """The view: a slider for the token (-1 = the average), bars per block, the stream's size."""

    def __init__(self, position=-1):
        import ipywidgets as widgets

        from .kit.figure_view import OKABE_ITO, FigureView, new_figure

        n = len(_text()[0])
        layers = trained.info()["config"]["layers"]
        self.position = widgets.IntSlider(value=position, min=-1, max=n - 1, step=1,
                                          description="token (-1 = average)", continuous_update=True,
                                          style={"description_width": "initial"},
                                          layout=widgets.Layout(width="22em"))
        self.position.add_class("course-slider-token")
        self.verdict = _verdict_widget()
        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        k = np.arange(1, layers + 1)
        self.attention = ax.bar(k - 0.2, np.zeros(layers), width=0.4, color=OKABE_ITO["blue"],
                                label="attention adds")
        self.ffn = ax.bar(k + 0.2, np.zeros(layers), width=0.4, color=OKABE_ITO["orange"],
                          hatch="//", edgecolor="white", label="FFN adds")
        (self.line,) = ax.plot(np.arange(layers + 1), np.zeros(layers + 1), color=OKABE_ITO["black"],
                               marker="o", markersize=4, linewidth=1.6, label="the stream")
        ax.set_xticks(np.arange(layers + 1), ["start"] + [f"block {i}" for i in k], fontsize=9)
        ax.set_ylabel("size (RMS)")
        self.title = ax.set_title("the residual stream, averaged over the held-out text", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, frameon=True, framealpha=0.85)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Bars per block: what attention and the FFN add; line: the stream's size")
        self.root = _root("trained-stream", [_controls(self.position), self.view.widget, self.verdict])
        self.position.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> dict:
        m = stream_model(self.position.value)
        for bar, value in zip(self.attention, m["attention"]):
            bar.set_height(value)
        for bar, value in zip(self.ffn, m["ffn"]):
            bar.set_height(value)
        self.line.set_ydata(m["stream"])
        top = max(m["stream"].max(), m["attention"].max(), m["ffn"].max())
        self.ax.set_ylim(0, top * 1.35)
        if m["position"] < 0:
            self.title.set_text("the residual stream, averaged over the held-out text")
        else:
            ids = _text()[0]
            self.title.set_text(f"the residual stream of \u201c{trained.vocab()[ids[m['position']]]}\u201d "
                                f"(position {m['position']})")
        self.view.redraw()
        self.verdict.value = _verdict_html(m["verdict"])
        self.model = m
        return m


def stream_lab(**initial):
    """The residual-stream lab's root widget (class ``course-lab-trained-stream``)."""
    return StreamLab(**initial).root
