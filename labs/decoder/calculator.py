"""The parameter-calculator lab (notebook 04): count a model's parameters by part, its memory,
the effect of doubling the depth or the width, and real models' published sizes against the
count, step by step from the course's simple count; and the memory beyond the weights: the KV
cache of generation (per token and for a whole context) and training with AdamW.

Model: ``calculator_model`` (``lib.params``, or the learner's ``model_parameters`` for models with
a plain FFN), over the models of ``models`` (the calculator's data). View: ``CalculatorLab``. Root
widget: ``calculator_lab()``.
"""

from __future__ import annotations

import numpy as np

from engine.core.own import NotUsedHere, Use
from dataclasses import dataclass, replace

from lib.params import (ModelConfig, ParameterCount, beyond_plain, count_parameters, doubled, gap_steps,
                        kv_cache_per_token, mebibytes, training_memory)
from engine.presentation.html import plain
from engine.presentation.numbers import byte_size, count, fixed, percentage, plural, readout, size, word_list
from engine.presentation.tables import table

from engine.kit.figure_view import set_changed
from engine.kit.layout import controls, lab_root, menu, number_entry, numbers_widget, slider, verdict_widget
from engine.kit.result import Result
from .models import COURSE_EXAMPLE, TRAINED_MODEL, presets

BYTES = {4: "4 (float32)", 2: "2 (bfloat16)", 1: "1 (int8)", 0.5: "0.5 (4-bit)"}


def _course_model_parameters(d, layers, d_ff, vocab, heads, kv_heads):
    return count_parameters(ModelConfig(d_model=d, layers=layers, d_ff=d_ff, vocab=vocab, heads=heads,
                                        kv_heads=kv_heads)).total


# The exercise whose function the calculator can count with (see engine/kit/own_function.py).
PARAMETERS_USE = Use("grouped-parameters", _course_model_parameters, "lib.params.count_parameters")


def memory_beyond_weights(config: ModelConfig, parameters: int, context: int, nbytes: float) -> dict:
    """The KV cache (numbers and bytes for one token and for ``context`` tokens, at ``nbytes`` per
    number) and training with AdamW in float32 and in bfloat16 with a float32 copy
    (``lib.params.training_memory``, by part)."""
    per_token = kv_cache_per_token(config)
    return {"cache_numbers": per_token, "cache_token": per_token * nbytes, "context": int(context),
            "cache_context": per_token * nbytes * int(context),
            "training": {"float32": training_memory(parameters, 4), "bfloat16": training_memory(parameters, 2)}}


@dataclass(frozen=True)
class CalculatorResult(Result):
    """A model's parameters by part, its memory, and the counts with the depth or width doubled.
    When the sizes do not make a model, ``ok`` is False, the verdict says why and every field
    after ``preset`` is None."""
    ok: bool
    verdict: str
    preset: str | None                  # the preset counted, None for the sliders' sizes
    config: ModelConfig | None = None
    note: str | None = None             # what the count had to change, in words ("" for nothing)
    count: ParameterCount | None = None     # the parameters by part
    total: int | None = None            # parameters stored
    active: int | None = None           # parameters a token uses (less than total with experts)
    parts: dict | None = None           # parameters by part: "embedding", "attention", "FFN", ...
    shares: dict | None = None          # each part's share of the total
    mib: float | None = None            # the weights' memory at bytes per number
    memory: str | None = None           # the same, in words
    bytes: float | None = None          # bytes per number
    weight_bytes: float | None = None
    kib: float | None = None
    gib: float | None = None
    tib: float | None = None
    depth2: int | None = None           # the total with twice the blocks, and twice the width
    width2: int | None = None
    depth2_ratio: float | None = None
    width2_ratio: float | None = None
    steps: list | None = None           # a preset's count step by step: (what, added, total so far)
    gap: dict | None = None             # a preset against its published size, by name
    published: float | None = None
    published_active: float | None = None
    asked_heads: int | None = None
    cache_numbers: int | None = None    # the KV cache's numbers for one token
    cache_token: float | None = None    # its bytes for one token and for ``context`` tokens
    context: int | None = None
    cache_context: float | None = None
    training: dict | None = None        # training's memory by part, "float32" and "bfloat16"


def calculator_model(d_model: int = 768, layers: int = 12, heads: int = 12, d_ff: int = 3072,
                     vocab: int = 32000, gated: bool = False, tied: bool = True, biases: bool = False,
                     experts: int = 0, top_k: int = 0, bytes_per_number: float = 2,
                     preset: str | None = None, total=None, kv_heads: int | None = None,
                     context: int = 2048) -> CalculatorResult:
    """Count a model's parameters by part (``lib.params``), its memory in MiB, and the counts with
    the depth or the width doubled. With ``preset`` (a key of ``presets()``) the preset's full
    configuration is used and compared with its published size, step by step. Invalid sizes give
    a verdict that says why, never an exception. ``kv_heads`` sets of keys and values (None: one
    per head) decide the KV cache, given for one token and for ``context`` tokens (a preset's
    own context when it has one), next to training's memory (``memory_beyond_weights``).

    ``total(d, layers, d_ff, vocab, heads, kv_heads)``, if given (the learner's
    ``model_parameters``), counts the total and the doubled models; it counts models with a plain
    FFN (grouped-query attention allowed) only, so any other configuration raises
    ``NotUsedHere`` (the view then counts with the course's function)."""
    known = presets()
    published = published_active = None
    note = ""
    asked_heads = heads
    try:
        if preset in known:
            config, published, published_active, note = known[preset]
        else:
            preset = None
            if int(context) < 1:
                raise ValueError(f"context should be a whole number of at least 1 token, got {int(context)}")
            heads = int(heads)
            kv_heads = None if kv_heads is None else int(kv_heads)
            if heads >= 1 and int(d_model) >= 1 and int(d_model) % heads:
                note = (f"{heads} heads do not split d_model = {int(d_model)} into equal slices; a real model "
                        "needs that, but the count does not depend on the number of heads.")
                heads, kv_heads = 1, None
            elif kv_heads is not None and heads >= 1 and (kv_heads < 1 or heads % kv_heads):
                note = (f"{plural(kv_heads, 'set')} of keys and values do not split {heads} heads into "
                        "equal groups; the count and the cache take one set per head.")
                kv_heads = None
            config = ModelConfig(d_model=int(d_model), layers=int(layers), d_ff=int(d_ff), vocab=int(vocab),
                                 heads=heads, kv_heads=kv_heads, context=int(context), gated=bool(gated),
                                 tied=bool(tied), biases=bool(biases), experts=int(experts),
                                 top_k=int(top_k) if int(experts) else 0)
    except (ValueError, TypeError) as problem:
        return CalculatorResult(ok=False, verdict=f"These sizes do not make a model: {problem}.", preset=None)
    parameters = count_parameters(config)
    counter = None if total is _course_model_parameters else total    # the course's: count every part
    total, active = parameters.total, parameters.active
    if counter is not None:
        extras = beyond_plain(replace(config, kv_heads=None))          # shared keys and values it counts
        if extras:
            raise NotUsedHere(f"this model has {' and '.join(extras)}, which your model_parameters "
                              "does not count")
        total = active = _count_with(counter, config)
    nbytes = float(bytes_per_number)
    parts = {"embedding": parameters.embedding + parameters.positions + parameters.output,
             "attention": parameters.attention, "FFN": parameters.ffn, "norms": parameters.norms,
             "router": parameters.router}
    shares = {name: value / total for name, value in parts.items()}
    if counter is None:
        depth2, width2 = (count_parameters(doubled(config, w)).total for w in ("depth", "width"))
    else:
        depth2, width2 = (_count_with(counter, doubled(config, w)) for w in ("depth", "width"))
    mib = mebibytes(total, nbytes)
    big = max(parts, key=parts.get)
    memory = byte_size(total * nbytes)            # written as every memory of the course is
    short = "" if size(total) == count(total) else f" ({size(total)})"
    text = (f"{count(total)} parameters{short}, {memory} at "
            f"{plural(nbytes, 'byte')} per number; the {big} holds {percentage(shares[big], 1)}.")
    if active != total:
        text += f" A token uses only {size(active)} of them ({percentage(active / total, 1)})."
    text += (f" Twice the blocks: {size(depth2)} (\u00d7{fixed(depth2 / total)}); twice the width: "
             f"{size(width2)} (\u00d7{fixed(width2 / total)}).")
    if note and not preset:
        text += " Note: " + note
    steps = gap_steps(config) if preset else []
    gap = None
    if published:
        simple = steps[0][2] + steps[1][1]
        gap = {"blocks": steps[0][1], "embedding": steps[1][1], "simple": simple, "computed": total,
               "published": published, "off": total / published - 1,
               "simple_off": simple / published - 1, "unused": parameters.ffn - parameters.ffn_active,
               "rest": total - simple}
        if abs(simple / published - 1) < 0.02:
            rest = word_list(f"the {what.split(' (')[0]}" for what, added, _total in steps[2:] if added)
            text += (f" Published: {size(published)}. The blocks alone ({size(steps[0][1])}) fall "
                     f"short; the embedding table ({size(steps[1][1])}) brings the count to "
                     f"{size(simple)}")
            text += (f", and the rest ({size(gap['rest'])}: {rest}; the steps are below) "
                     f"to the full {size(total)}." if gap["rest"] else ".")
        elif published_active:
            text += (f" Published: {size(published)} stored, {size(published_active)} active. The simple "
                     f"count ({size(simple)}) does not come close: the experts hold "
                     f"{size(parameters.ffn - parameters.ffn_active)} that any one token does not use, and the full "
                     f"count gives {size(total)} stored, {size(active)} active.")
        else:
            said = "In its weights file" if preset == TRAINED_MODEL else "Published"
            text += (f" {said}: {size(published)}. The simple count gives {size(simple)} "
                     f"({percentage(simple / published - 1, 1, signed=True)}); the model's details (below) "
                     f"bring it to {size(total)} ({percentage(total / published - 1, 1, signed=True)}).")
    beyond = memory_beyond_weights(config, total, config.context or context, nbytes)
    return CalculatorResult(ok=True, verdict=text, preset=preset, config=config, note=note, count=parameters,
                            total=total, active=active, parts=parts, shares=shares, mib=mib, memory=memory,
                            bytes=nbytes, weight_bytes=total * nbytes, kib=mib * 1024, gib=mib / 1024,
                            tib=mib / 1024 ** 2, depth2=depth2, width2=width2, depth2_ratio=depth2 / total,
                            width2_ratio=width2 / total, steps=steps, gap=gap, published=published,
                            published_active=published_active, asked_heads=asked_heads, **beyond)


def _count_with(counter, config: ModelConfig):
    """The learner's count of ``config``: (d, layers, d_ff, vocab, heads, kv_heads)."""
    return counter(config.d_model, config.layers, config.d_ff, config.vocab, config.heads,
                   config.kv_heads or config.heads)


def memory_rows(m: CalculatorResult) -> tuple[list, list]:
    """The memory tables' rows: the weights and the KV cache for one token and for the context;
    then training with AdamW by part, in float32 and in bfloat16 with a float32 copy."""
    cache = [(f"weights, {plural(m.bytes, 'byte')} per number", byte_size(m.total * m.bytes)),
             (f"KV cache, one token ({count(m.cache_numbers)} numbers)", byte_size(m.cache_token)),
             (f"KV cache, {plural(m.context, 'token')}", byte_size(m.cache_context))]
    single, mixed = m.training["float32"], m.training["bfloat16"]
    training = [(label, *(byte_size(getattr(t, part)) if getattr(t, part) else "none" for t in (single, mixed)))
                for label, part in (("weights", "weights"), ("gradients", "gradients"),
                                    ("float32 copy of the weights", "master_copy"),
                                    ("AdamW's two running averages", "moments"))]
    training.append(("total, activations aside", byte_size(single.total), byte_size(mixed.total)))
    return cache, training


class CalculatorLab:
    """The view: a preset menu, the sizes and switches, two bar charts (split by part; depth vs
    width), a breakdown table and, for a preset, the road from the simple count to the published one."""

    CUSTOM = "custom (the controls)"

    def __init__(self, preset=COURSE_EXAMPLE, bytes_per_number=2):
        import ipywidgets as widgets

        from engine.kit.figure_view import OKABE_ITO, FigureView, new_figure

        self.presets = presets()
        self.preset = menu([self.CUSTOM] + list(self.presets), preset, "model")
        self.preset.add_class("course-preset")
        self.d_model = slider("int", value=768, min=32, max=8192, step=32, description="d_model",
                              readout_format=readout(0, grouped=True))      # 8,192, as every count is written
        self.d_model.add_class("course-slider-d-model")
        self.layers = slider("int", value=12, min=1, max=128, step=1, description="layers (blocks)")
        self.layers.add_class("course-slider-layers")
        self.heads = number_entry(12, 1, 256, "heads")
        self.kv_heads = number_entry(12, 1, 256, "key/value heads")
        self.context = number_entry(2048, 1, 1_048_576, "context (tokens)")
        self.d_ff = number_entry(3072, 1, 65536, "d_ff")
        self.vocab = number_entry(32000, 1, 1_000_000, "vocabulary")
        self.gated = widgets.Checkbox(value=False, description="gated FFN", indent=False,
                                      layout=widgets.Layout(width="auto"))
        self.tied = widgets.Checkbox(value=True, description="tied embedding", indent=False,
                                     layout=widgets.Layout(width="auto"))
        self.biases = widgets.Checkbox(value=False, description="biases", indent=False,
                                       layout=widgets.Layout(width="auto"))
        self.experts = number_entry(0, 0, 512, "experts (0 = dense)")
        self.top_k = number_entry(0, 0, 512, "top-k")
        self.bytes = menu([(label, b) for b, label in BYTES.items()], bytes_per_number, "bytes per number")
        self.numbers = numbers_widget()
        self.gap = numbers_widget()
        self.beyond = numbers_widget()
        self.verdict = verdict_widget()
        self.sizes = {"d_model": self.d_model, "layers": self.layers, "heads": self.heads,
                      "kv_heads": self.kv_heads, "d_ff": self.d_ff, "vocab": self.vocab, "gated": self.gated,
                      "tied": self.tied, "biases": self.biases, "experts": self.experts, "top_k": self.top_k,
                      "context": self.context}

        fig = new_figure(6.4, 3.3)
        grid = fig.add_gridspec(1, 2, width_ratios=[1.35, 1], wspace=0.45)
        self.ax_parts, self.ax_double = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
        self.part_names = ["embedding", "attention", "FFN", "norms", "router"]
        colours = [OKABE_ITO[c] for c in ("purple", "sky", "orange", "green", "yellow")]
        self.part_bars = self.ax_parts.barh(range(5), np.ones(5), color=colours, edgecolor="black",
                                            linewidth=0.6)
        self.ax_parts.set_yticks(range(5), self.part_names)
        self.ax_parts.invert_yaxis()
        self.ax_parts.set_xlabel("share of the parameters", fontsize=9)
        self.ax_parts.set_xlim(0, 1.05)
        self.ax_parts.set_xticks([0, 0.5, 1.0], [percentage(share) for share in (0, 0.5, 1.0)])
        self.ax_parts.tick_params(labelsize=9)
        self.ax_parts.set_title("where the parameters are", fontsize=9)
        self.double_bars = self.ax_double.bar(range(3), np.ones(3), edgecolor="black", linewidth=0.6,
                                              color=[OKABE_ITO["blue"], OKABE_ITO["green"], OKABE_ITO["vermillion"]])
        self.ax_double.set_xticks(range(3), ["as set", "2\u00d7\nblocks", "2\u00d7\nwidth"])
        self.ax_double.set_yticks([1, 2, 3, 4], [f"\u00d7{count(k)}" for k in (1, 2, 3, 4)])
        self.ax_double.set_ylim(0, 5.2)               # twice the width is at most 4 times the count
        self.ax_double.set_ylabel("parameters, \u00d7 as set", fontsize=9)
        self.ax_double.set_title("depth vs width", fontsize=9)
        self.ax_double.tick_params(labelsize=9)
        fig.suptitle("The model's parameters (the counts in the table below)", fontsize=10)
        fig.subplots_adjust(left=0.15, right=0.97, top=0.8, bottom=0.2)
        self.view = FigureView(fig, description="Bar charts: the share of each part of the model, and the "
                                                "count with twice the blocks or twice the width",
                               changing=[self.part_bars, self.double_bars])
        from engine.kit.own_function import OwnFunctionSwitch
        self.own = OwnFunctionSwitch([PARAMETERS_USE], self.update)
        self.root = lab_root("parameter-calculator", [
            controls(self.d_model, self.layers), controls(self.preset, self.bytes, self.context),
            controls(self.heads, self.kv_heads, self.d_ff, self.vocab),
            controls(self.gated, self.tied, self.biases, self.experts, self.top_k),
            self.own.widget, self.view.widget, self.verdict, self.numbers, self.beyond, self.gap])
        self._setting = False
        for control in self.sizes.values():
            control.observe(self._on_size, names="value")
        self.preset.observe(self._on_preset, names="value")
        self.bytes.observe(lambda _c: self.update(), names="value")
        if preset != self.CUSTOM:
            self._apply_preset(preset)
        self.update()

    def _apply_preset(self, name) -> None:
        config = self.presets[name].config
        self._setting = True
        try:
            values = {"d_model": config.d_model, "layers": config.layers, "heads": config.heads,
                      "kv_heads": config.kv_heads or config.heads, "d_ff": config.d_ff, "vocab": config.vocab,
                      "gated": config.gated, "tied": config.tied, "biases": config.biases,
                      "experts": config.experts, "top_k": config.top_k,
                      "context": config.context or self.context.value}
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

    def update(self) -> CalculatorResult:
        preset = None if self.preset.value == self.CUSTOM else self.preset.value
        values = {key: control.value for key, control in self.sizes.items()}
        nbytes = self.bytes.value
        m = self.own.run(lambda total: calculator_model(**values, bytes_per_number=nbytes, preset=preset,
                                                         total=total))
        if not m.ok:
            for bar in self.part_bars:
                set_changed(bar, width=0)
            for bar in self.double_bars:
                set_changed(bar, height=0)
            self.numbers.value = plain("No model with these sizes.")
            self.beyond.value = ""
            self.gap.value = ""
        else:
            for i, name in enumerate(self.part_names):
                share = m.shares[name]
                set_changed(self.part_bars[i], width=share)
            totals = [m.total, m.depth2, m.width2]
            for bar, value in zip(self.double_bars, totals):
                set_changed(bar, height=value / totals[0])
            name = m.preset or "custom"
            c = m.count
            parts = [(part, size(m.parts[part]), percentage(m.shares[part], 1, floor=True))
                     for part in self.part_names]
            parts += [("twice the blocks", size(m.depth2), f"\u00d7{fixed(m.depth2 / totals[0])}"),
                      ("twice the width", size(m.width2), f"\u00d7{fixed(m.width2 / totals[0])}")]
            rows = [(name, f"{size(m.total)} parameters, {m.memory}"),
                    ("embedding table", count(c.embedding)), ("position table", count(c.positions)),
                    ("output layer (0 if tied)", count(c.output)), ("attention, all blocks", count(c.attention)),
                    ("FFN, all blocks", count(c.ffn)), ("router", count(c.router)),
                    ("norms (2 per block + final)", count(c.norms)), ("total", count(c.total))]
            if m.active != m.total:
                rows.append(("used per token", count(m.active)))
            self.numbers.value = (table(parts, header=("part", "parameters", "share of the total"),
                                        mono_columns=(1, 2)) + table(rows))
            cache, training = memory_rows(m)
            self.beyond.value = (table(cache, header=("memory", "bytes"))
                                 + table(training, header=("training with AdamW", "float32",
                                                           "bfloat16 + float32 copy"), mono_columns=(1, 2)))
            if m.steps:
                lines = [(what, f"+{size(added)}" if added >= 0 else f"\u2212{size(-added)}", size(total))
                         for what, added, total in m.steps]
                if m.published:
                    said = "in its weights file" if m.preset == TRAINED_MODEL else "published"
                    lines.append((said, "", size(m.published)))
                if m.published_active:
                    lines.append(("published, used per token", "", size(m.published_active)))
                self.gap.value = table(lines, header=(f"from the simple count to {name}", "adds", "total"))
            else:
                self.gap.value = ""
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        self.model = m
        return m


def calculator_lab(**initial):
    """The parameter-calculator lab's root widget (class ``course-lab-parameter-calculator``)."""
    return CalculatorLab(**initial).root
