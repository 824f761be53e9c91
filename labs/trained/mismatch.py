"""The mismatched-details lab (notebook 05): run the trained weights with one detail changed (the
RoPE pairing or base, no RoPE, LayerNorm instead of RMSNorm, epsilon) and see which mistakes are
loud and which are quiet: none of them raises an error.

Model: ``mismatch_model`` (``lib.model.forward`` with its switches). View: ``MismatchLab``. Root
widget: ``mismatch_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass


import numpy as np

from engine.presentation.html import plain
from engine.presentation.numbers import amount, fixed, percentage, power_of_ten, readout, scientific, significant

from engine.kit.layout import choice, controls, lab_root, log_slider, switch, verdict_widget
from engine.kit.result import Result
from .held_out import first_text_changes, held_out, setting_perplexities, texts
from .kind_bars import KindBars
from .settings import BASE_MAX, BASE_MIN, BASE_POWERS, EPS_MAX, EPS_MIN, EPS_POWERS, round_log

AS_TRAINED = {"pairing": "halves", "base": 10000.0, "positions": True, "norm": "rms", "eps": 1e-5}
GAP_TOP = 2                      # the logit-change panel's top, 10**2 (the largest change seen: about 27)
GAP_FLOOR = -5                   # ...and its floor, 10**-5: a smaller change (0 as trained) is drawn on it
LOUD, QUIET = 1.5, 1.10          # perplexity ratios: above LOUD is loud, below QUIET is quiet
REFERENCE_TOLERANCE = 1e-4       # how far a logit may be from recorded reference logits (the tests' check)


@dataclass(frozen=True)
class MismatchResult(Result):
    """The trained weights run with other details, against the trained setting.

    full, now: perplexity by kind of prediction ("all texts" for every prediction) as trained
    and with these details; gap: (positions,) the largest change of a logit at each position of
    the first held-out text.
    """
    pairing: str                # "halves" or "neighbours"
    base: float                 # RoPE's base
    positions: bool             # RoPE on
    norm: str                   # "rms" or "layer"
    eps: float
    full: dict
    now: dict
    ratio: float                # now's perplexity over all texts / full's
    agree: float                # the share of the first text's positions where the top word agrees
    gap: np.ndarray
    largest: float              # the largest of gap
    status: str                 # "trained", "loud", "noticeable" or "quiet"
    changed: list               # each detail changed, in words
    trained: dict               # AS_TRAINED: the trained setting
    texts: int
    reference_tolerance: float
    verdict: str


def mismatch_model(pairing: str = "halves", base: float = 10000.0, positions: bool = True,
                   norm: str = "rms", eps: float = 1e-5) -> MismatchResult:
    """Run the trained weights with the details given (trained: halves, 10,000, RoPE on, RMSNorm,
    1e-5) and compare with the trained setting: perplexity per kind of prediction, how often the
    top word agrees, the largest change of a logit at each position, and the verdict (loud,
    noticeable or quiet; nothing ever raises an error, which is the point)."""
    pairing = pairing if pairing in ("halves", "neighbours") else "halves"
    norm = norm if norm in ("rms", "layer") else "rms"
    base, eps = round_log(base, BASE_MIN, BASE_MAX), round_log(eps, EPS_MIN, EPS_MAX)
    setting = {"pairing": pairing, "base": base, "positions": bool(positions), "norm": norm, "eps": eps}
    full = setting_perplexities()
    now = setting_perplexities(**setting)
    changes = first_text_changes(**setting)
    gap, agree = changes["gap"], changes["agree"]
    ratio = now["all texts"] / full["all texts"]
    changed = []
    if not positions:
        changed.append("no RoPE")
    else:
        if pairing != "halves":
            changed.append("RoPE pairing neighbours (trained: halves)")
        if base != AS_TRAINED["base"]:
            changed.append(f"RoPE base {fixed(base, 0, grouped=True)} "
                           f"(trained: {fixed(AS_TRAINED['base'], 0, grouped=True)})")
    if norm != "rms":
        changed.append("LayerNorm (trained: RMSNorm)")
    if eps != AS_TRAINED["eps"]:
        changed.append(f"\u03b5 = {scientific(eps, 0)} (trained: {scientific(AS_TRAINED['eps'], 0)})")
    largest = float(np.nanmax(gap)) if np.isfinite(gap).any() else float("nan")
    if not changed:
        status = "trained"
        verdict = (f"As trained: perplexity {amount(full['all texts'])} over the {len(texts())} held-out "
                   "texts. Change one detail and "
                   "see whether anything tells you.")
    else:
        what = ", ".join(changed)
        numbers = (f"perplexity {amount(full['all texts'])} \u2192 {amount(now['all texts'])} "
                   f"(\u00d7{amount(ratio)}) over the {len(texts())} held-out texts; on the first, the top "
                   f"word agrees at {percentage(agree)} of positions and the largest logit moved by "
                   f"{significant(largest, 2)}")
        if not np.isfinite(ratio) or ratio >= LOUD:
            status = "loud"
            verdict = f"Loud: {what}. {numbers[0].upper() + numbers[1:]}. Any evaluation would catch this."
        elif ratio >= QUIET:
            status = "noticeable"
            verdict = (f"Noticeable: {what}. {numbers[0].upper() + numbers[1:]}. Worse, but it still "
                       "looks like a working model, and no error was raised.")
        else:
            status = "quiet"
            caught = ("a comparison with reference outputs catches it" if largest > REFERENCE_TOLERANCE
                      else "even a comparison with reference outputs would miss it")
            verdict = (f"Quiet: {what}. {numbers[0].upper() + numbers[1:]}. No error, almost the same "
                       f"answers: {caught} (it allows {significant(REFERENCE_TOLERANCE)} on a logit).")
    return MismatchResult(**setting, full=full, now=now, ratio=float(ratio), agree=agree, gap=gap,
                          largest=largest, status=status, changed=changed, trained=AS_TRAINED,
                          texts=len(texts()), reference_tolerance=REFERENCE_TOLERANCE, verdict=verdict)


class MismatchLab:
    """The view: the RoPE base and ε sliders, pairing and norm switches, a positions toggle."""

    def __init__(self, pairing="halves", base=10000.0, positions=True, norm="rms", eps=1e-5):
        import ipywidgets as widgets

        from matplotlib.ticker import FixedFormatter

        from engine.kit.figure_view import OKABE_ITO, FigureView, decades, new_figure

        self.base = log_slider(value=base, base=10, min=BASE_POWERS[0], max=BASE_POWERS[1], step=BASE_POWERS[2],
                               description="RoPE base",
                               readout_format=readout(0, grouped=True))
        self.base.add_class("course-slider-base")
        self.eps = log_slider(value=eps, base=10, min=EPS_POWERS[0], max=EPS_POWERS[1], step=EPS_POWERS[2],
                              description="norm \u03b5",
                              readout_format=readout(0, power=True))
        self.pairing = choice([("halves (i with i + d/2, as trained)", "halves"),
                               ("neighbours (2i with 2i + 1)", "neighbours")], pairing, "RoPE pairs")
        self.norm = choice([("RMSNorm", "rms"), ("LayerNorm", "layer")], norm, "norm")
        self.positions = switch("RoPE on", bool(positions))
        self.reset = widgets.Button(description="as trained", icon="undo", layout=widgets.Layout(width="auto"))
        self.reset.add_class("course-button-as-trained")
        self.verdict = verdict_widget()
        fig = new_figure(6.4, 3.4)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.25, 1], wspace=0.35)
        left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.kinds = KindBars(left, "with the detail changed")
        n = len(held_out()[0])
        (self.gap_line,) = right.plot(np.arange(n), np.full(n, 10.0 ** GAP_FLOOR), color=OKABE_ITO["vermillion"],
                                      linewidth=1.2)
        # A log scale, one for every setting; a change below its floor (none at all, as trained)
        # is drawn on the floor, labelled "at most" that.
        decades(right.yaxis, GAP_FLOOR, GAP_TOP, label_every=2)
        right.yaxis.set_major_formatter(FixedFormatter(
            [("\u2264" if k == GAP_FLOOR else "") + power_of_ten(k) if (k - GAP_FLOOR) % 2 == 0 else ""
             for k in range(GAP_FLOOR, GAP_TOP + 1)]))
        right.set_xlim(0, n - 1)
        right.set_xlabel("position in the text")
        right.set_ylabel("largest logit change (log)")
        right.set_title("how far logits moved", fontsize=10)
        right.grid(True, alpha=0.3)
        fig.subplots_adjust(left=0.1, right=0.98, top=0.84, bottom=0.27)
        self.right = right
        self.view = FigureView(fig, description="Bars: perplexity per kind of prediction; line: logit change per position",
                               changing=[self.kinds.changing(), self.gap_line])
        self.root = lab_root("mismatch", [controls(self.base, self.eps),
                                          controls(self.pairing, self.norm, self.positions, self.reset),
                                          self.view.widget, self.verdict])
        for control in (self.base, self.eps, self.pairing, self.norm, self.positions):
            control.observe(lambda _c: self.update(), names="value")
        self.reset.on_click(self._as_trained)
        self.update()

    def _explain_disabled(self, m) -> None:
        """Without RoPE the base and the pairing change nothing: grey them out and say why."""
        off = not m.positions
        self.base.disabled = self.pairing.disabled = off
        why = " (no effect with RoPE off)" if off else ""
        self.base.description = "RoPE base" + why
        self.pairing.description = "RoPE pairs" + why

    def _as_trained(self, _button=None) -> None:
        with self.root.hold_trait_notifications():
            self.base.value, self.eps.value = AS_TRAINED["base"], AS_TRAINED["eps"]
            self.pairing.value, self.norm.value = AS_TRAINED["pairing"], AS_TRAINED["norm"]
            self.positions.value = AS_TRAINED["positions"]
        self.update()

    def update(self) -> MismatchResult:
        m = mismatch_model(self.pairing.value, self.base.value, self.positions.value, self.norm.value,
                           self.eps.value)
        self.kinds.update(m.full, m.now)
        gap = np.where(np.isfinite(m.gap), np.maximum(m.gap, 10.0 ** GAP_FLOOR), np.nan)
        self.gap_line.set_ydata(gap)
        self._explain_disabled(m)
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def mismatch_lab(**initial):
    """The mismatched-details lab's root widget (class ``course-lab-mismatch``)."""
    return MismatchLab(**initial).root
