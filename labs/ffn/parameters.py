"""The where-the-parameters-are lab (notebook 02): one block's parameters by part (attention,
feed-forward network, norms) for any width, with a plain or a gated FFN, and the gated width that
keeps the plain count.

Model: ``parameters_model`` (``lib.params``). View: ``ParametersLab``. Root widget:
``parameters_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.params import ModelConfig, block_parameters, equal_count_gated_width
from engine.presentation.html import plain
from engine.presentation.numbers import count, percentage, readout, size
from engine.presentation.tables import table

from engine.kit.figure_view import decades, set_changed
from engine.kit.layout import choice, controls, lab_root, menu, numbers_widget, slider, switch, verdict_widget
from engine.kit.result import Result

D_MIN, D_MAX, D_STEP = 64, 4096, 64
MULTIPLE_MIN, MULTIPLE_MAX, MULTIPLE_STEP = 1.0, 8.0, 0.5
ROUNDINGS = (1, 8, 32, 64, 128, 256)


@dataclass(frozen=True)
class ParametersResult(Result):
    """One block's parameters by part, with a plain or a gated FFN."""
    d_model: int
    d_ff: int                   # the plain FFN's width: multiple · d_model
    gated: bool
    round_to: int
    width: int                  # the FFN's width: d_ff, or gated_width when gated
    gated_width: int            # the gated width that keeps the plain count
    attention: int              # parameters of attention, the FFN, the norms and the whole block
    ffn: int
    norms: int
    total: int
    plain_ffn: int              # the plain FFN's parameters at d_ff
    shares: dict                # "attention", "ffn", "norms": each part's share of the block
    gated_change: float         # the gated FFN's parameters (at gated_width) / plain_ffn - 1
    verdict: str


def parameters_model(d_model: int = 768, multiple: float = 4.0, gated: bool = False,
                     round_to: int = 32) -> ParametersResult:
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
    gated_ffn = block_parameters(ModelConfig(d_model=d, layers=1, d_ff=gated_width, vocab=1, gated=True)).ffn
    gated_change = gated_ffn / plain_ffn - 1
    shares = {"attention": block.attention / total, "ffn": block.ffn / total, "norms": block.norms / total}
    if gated:
        same = "exactly the same as" if block.ffn == plain_ffn else f"{percentage(gated_change, 1, signed=True)} against"
        verdict = (f"Gated, three matrices of width {count(width)} (two thirds of {count(d_ff)}, rounded "
                   f"up to a multiple of {round_to}) hold {count(block.ffn)} numbers, {same} the plain "
                   f"FFN's {count(plain_ffn)}. The FFN is {percentage(shares['ffn'], 1)} of the block, "
                   f"attention {percentage(shares['attention'], 1)}, norms {count(block.norms)}.")
    else:
        verdict = (f"At d = {count(d)} with d_ff = {count(d_ff)} the FFN holds {count(block.ffn)} of "
                   f"the block's {count(total)} parameters ({percentage(shares['ffn'], 1)}); attention "
                   f"{count(block.attention)} ({percentage(shares['attention'], 1)}); the norms only "
                   f"{count(block.norms)}. ")
        verdict += (f"A gated FFN of width {count(gated_width)} would keep the count exactly." if gated_ffn == plain_ffn
                    else f"A gated FFN needs width {count(gated_width)} (two thirds of {count(d_ff)}, rounded up "
                         f"to a multiple of {round_to}) to hold at least the plain count: "
                         f"{percentage(gated_change, 1, signed=True)} against it.")
    return ParametersResult(d_model=d, d_ff=d_ff, gated=bool(gated), round_to=round_to, width=width,
                            gated_width=gated_width, attention=block.attention, ffn=block.ffn,
                            norms=block.norms, total=total, plain_ffn=plain_ffn, shares=shares,
                            gated_change=gated_change, verdict=verdict)


class ParametersLab:
    """d_model and d_ff sliders, plain/gated switch, rounding and log scale; three bars."""

    def __init__(self, d_model: int = 768, multiple: float = 4.0, gated: bool = False,
                 round_to: int = 32, log_scale: bool = False):
        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.d_model = slider("int", value=d_model, min=D_MIN, max=D_MAX, step=D_STEP,
                              description="width d_model", readout_format=readout(0, grouped=True))
        self.d_model.add_class("course-slider-d-model")
        self.multiple = slider("float", value=multiple, min=MULTIPLE_MIN, max=MULTIPLE_MAX,
                               step=MULTIPLE_STEP, description="d_ff = ? × d_model",
                               readout_format=readout(1))
        self.multiple.add_class("course-slider-multiple")
        self.kind = choice([("plain (2 matrices)", False), ("gated (3 matrices)", True)], gated, "FFN")
        self.round_to = menu([(count(n), n) for n in ROUNDINGS], round_to,
                             "gated width: round up to a multiple of")
        self.log_scale = switch("log scale", log_scale)
        self.numbers = numbers_widget()
        self.verdict = verdict_widget()

        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        self.bars = ax.bar(range(3), [1, 1, 1], width=0.6, edgecolor="black", linewidth=0.6,
                           color=[OKABE_ITO["sky"], OKABE_ITO["orange"], OKABE_ITO["green"]])
        (self.plain_mark,) = ax.plot([0.62, 1.38], [1, 1], color="black", linestyle="--", linewidth=1.2,
                                     label="gated: the plain FFN's share")
        ax.set_xticks(range(3), ["attention\n4·d²", "FFN\n2 or 3·d·d_ff", "norms\n2·d"])
        ax.set_xlim(-0.6, 2.6)
        ax.set_ylabel("share of the block's parameters")
        ax.set_xlabel("part of one block")
        ax.set_title("One block's parameters as shares, each part's count over its bar", fontsize=10)
        # The counts grow with the width as the shares stay: the width slider changes them.
        self.counts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=8) for i in range(3)]
        self.legend = ax.legend(loc="upper right", fontsize=8, frameon=False)
        self.ax = ax
        self._scale(log_scale)
        fig.tight_layout()
        self.view = FigureView(fig, description="Bar chart of one block's parameters: attention, "
                                                "feed-forward network and norms",
                               changing=[self.bars, self.plain_mark, self.counts])
        self.root = lab_root("parameters", [controls(self.d_model, self.multiple),
                                            controls(self.kind, self.log_scale), controls(self.round_to),
                                            self.view.widget, self.numbers, self.verdict])
        for control in (self.d_model, self.multiple, self.kind, self.round_to, self.log_scale):
            control.observe(self._on_change, names="value")
        self.update()

    def _scale(self, log: bool) -> None:
        """The bars show shares of the block, on a fixed scale: 0 to 100 %, or log from 0.001 %."""
        from matplotlib.ticker import FixedFormatter

        if getattr(self, "_state", None) == log:
            return
        if log:
            decades(self.ax.yaxis, -5, 0)
            self.ax.set_ylim(1e-5, 30.0)
            self.ax.yaxis.set_major_formatter(FixedFormatter([percentage(10.0 ** k, max(0, -k - 2))
                                                              for k in range(-5, 1)]))
        else:
            self.ax.set_yscale("linear")
            self.ax.set_ylim(0, 1.3)
            ticks = [0, 0.25, 0.5, 0.75, 1.0]
            self.ax.set_yticks(ticks, [percentage(share) for share in ticks])
        self._state = log

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> ParametersResult:
        m = parameters_model(self.d_model.value, self.multiple.value, self.kind.value, self.round_to.value)
        d, width = m.d_model, m.width
        values = [m.attention, m.ffn, m.norms]
        shares = [v / m.total for v in values]
        log = bool(self.log_scale.value)
        self._scale(log)
        for bar, label, v, share in zip(self.bars, self.counts, values, shares):
            set_changed(bar, height=share)
            set_changed(label, text=size(v), position=(label.get_position()[0], share))
        plain_share = m.plain_ffn / m.total
        self.plain_mark.set_ydata([plain_share, plain_share])
        self.plain_mark.set_visible(m.gated)
        self.view.redraw(state=log)
        self.numbers.value = table([
            (f"one block at d = {count(d)}, {'gated' if m.gated else 'plain'}, d_ff = {count(width)}",
             "parameters", "share"),
            ("attention 4·d²", count(m.attention), percentage(shares[0], 1, floor=True)),
            (f"FFN {'3' if m.gated else '2'}·d·{count(width)}", count(m.ffn),
             percentage(shares[1], 1, floor=True)),
            ("norms 2·d", count(m.norms), percentage(shares[2], 1, floor=True)),
            ("block", count(m.total), "100%"),
            (f"gated width keeping the count (multiple of {m.round_to})", count(m.gated_width)),
        ])
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def parameters_lab(d_model: int = 768, multiple: float = 4.0, gated: bool = False, round_to: int = 32,
                   log_scale: bool = False):
    """The where-the-parameters-are lab's root widget (class ``course-lab``)."""
    return ParametersLab(d_model, multiple, gated, round_to, log_scale).root
