"""The generation lab (notebook 06): the trained model continues a prompt, greedily or by
drawing each token, with a temperature, top-k and top-p; every chosen token with its probability.

Model: ``generation_model`` (``lib.generate.generate`` with a KV cache). View: ``GenerationLab``.
Root widget: ``generation_lab()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lib import generate, model
from engine.kit.layout import controls, lab_root, menu, numbers_widget, pick_slider, slider, verdict_widget
from engine.kit.result import Result
from engine.presentation.html import plain
from engine.presentation.numbers import fixed, ordinal, plural, readout, scientific
from engine.presentation.tables import table

PROMPTS = ("copy b d a |", "reverse c a h e |", "count 3 4", "5 plus 2 is", "the big cat",
           "the small dogs")
STEPS = 10                       # tokens at most; a continuation ends after its "."
WORD_ROW = 11                    # points: the second row of tokens under the bars
TOP_K = (("all", 0), ("1", 1), ("2", 2), ("3", 3), ("5", 5), ("10", 10), ("20", 20))


@dataclass(frozen=True)
class GenerationResult(Result):
    """A prompt's continuation by the trained model.

    ids, probabilities, chosen_from, kept: (tokens,) the tokens chosen, the model's probability
    of each (before any change), its probability in the distribution it was drawn from, and how
    many tokens that distribution kept.
    """
    prompt: str
    temperature: float          # 0: greedy
    top_k: int                  # 0: every token kept
    top_p: float                # 1: every token kept
    seed: int
    ids: np.ndarray
    words: list                 # the tokens chosen, as words
    probabilities: np.ndarray
    chosen_from: np.ndarray
    kept: np.ndarray
    joint: float                # the whole continuation's probability: their product
    lowest: int                 # the entry of the least probable choice
    lowest_number: int          # the same, counted from 1
    verdict: str


def likelihood(p: float, digits: int = 2) -> str:
    """A probability to ``digits`` decimals, or in powers of ten when it would read as 0."""
    return fixed(p, digits) if p >= 0.5 * 10.0 ** -digits else scientific(p)


@lru_cache(maxsize=256)
def generation_model(prompt: str = PROMPTS[0], temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                     seed: int = 0) -> GenerationResult:
    """The continuation of ``prompt`` (one of PROMPTS) by at most STEPS tokens, stopping after
    ".": temperature 0 is greedy; top_k 0 keeps every token, top_p 1 keeps them all. Returns the
    tokens chosen, the model's probability of each (before any change), its probability in the
    distribution it was drawn from, how many tokens that distribution kept, the probability of
    the whole continuation (their product) and the verdict."""
    prompt = prompt if prompt in PROMPTS else PROMPTS[0]
    temperature = float(np.clip(temperature, 0.0, 5.0)) if np.isfinite(temperature) else 1.0
    top_p = float(np.clip(top_p, 0.1, 1.0)) if np.isfinite(top_p) else 1.0
    top_k = int(np.clip(int(top_k), 0, len(model.vocab())))
    out = generate.generate(model.encode(prompt), STEPS, temperature=temperature, top_k=top_k or None,
                            top_p=None if top_p >= 1.0 else top_p, seed=int(seed), stop=".")
    vocab = model.vocab()
    words = [vocab[i] for i in out.ids]
    kept = (out.distributions > 0).sum(axis=1)
    joint = float(np.prod(out.probabilities))
    lowest = int(np.argmin(out.probabilities))
    how = ("greedy: the most probable token every time" if temperature == 0
           else f"drawn at temperature {fixed(temperature, 1)}")
    if fixed(out.probabilities[lowest]) == fixed(1.0):      # every choice all but certain
        least = f"Every choice has probability {fixed(1.0)} to two decimals"
    else:
        least = (f"The least probable choice is \u201c{words[lowest]}\u201d, the {ordinal(lowest + 1)} token "
                 f"generated, with probability {likelihood(out.probabilities[lowest])} under the model")
    verdict = (f"\u201c{prompt}\u201d continues \u201c{' '.join(words)}\u201d ({how}). {least}; the whole "
               f"continuation has probability {likelihood(joint, 3)} under the model.")
    return GenerationResult(prompt=prompt, temperature=temperature, top_k=top_k, top_p=top_p, seed=int(seed),
                            ids=out.ids, words=words, probabilities=out.probabilities, chosen_from=out.chosen_from,
                            kept=kept, joint=joint, lowest=lowest, lowest_number=lowest + 1, verdict=verdict)


class GenerationLab:
    """The view: a prompt menu, temperature, top-k, top-p and seed; bars per chosen token."""

    def __init__(self, prompt=PROMPTS[0], temperature=0.0, top_k=0, top_p=1.0, seed=0):
        from engine.kit.figure_view import OKABE_ITO, Bars, FigureView, new_figure

        self.prompt = menu(list(PROMPTS), prompt, "prompt")
        self.temperature = slider("float", value=temperature, min=0.0, max=2.0, step=0.1,
                                  description="temperature (0 = greedy)", readout_format=readout(1))
        self.top_k = pick_slider(TOP_K, top_k, "top-k")
        self.top_p = slider("float", value=top_p, min=0.1, max=1.0, step=0.1, description="top-p (1 = off)",
                            readout_format=readout(1))
        self.seed = slider("int", value=seed, min=0, max=9, step=1, description="seed")
        self.verdict, self.numbers = verdict_widget(), numbers_widget()
        fig = new_figure(6.4, 3.0)
        ax = fig.add_subplot()
        x = np.arange(STEPS)
        self.model_p = Bars(ax, x - 0.2, width=0.4, facecolor=OKABE_ITO["blue"], label="the model's probability")
        self.drawn_p = Bars(ax, x + 0.2, width=0.4, facecolor=OKABE_ITO["orange"], hatch="//", edgecolor="white",
                            label="in the distribution drawn from")
        ax.set_xlim(-0.6, STEPS - 0.4)
        ax.set_ylim(0, 1.18)
        ax.set_xticks(x, [""] * STEPS)
        # The tokens under their bars on two staggered rows, every other one a line lower: a
        # phone's narrow axes leave each token the room of two bars.
        from matplotlib.transforms import offset_copy

        lower = offset_copy(ax.get_xaxis_transform(), fig=fig, y=-WORD_ROW, units="points")
        self.words = [ax.text(i, -0.03, "", ha="center", va="top", fontsize=9,
                              transform=lower if i % 2 else ax.get_xaxis_transform()) for i in x]
        ax.set_ylabel("probability")
        ax.set_xlabel("the chosen tokens, in order", labelpad=14 + WORD_ROW)
        ax.set_title("each chosen token's probability", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(handles=[self.model_p.artist, self.drawn_p.artist], loc="upper right", fontsize=8, ncol=2,
                  frameon=False)
        fig.tight_layout()
        self.ax = ax
        self.view = FigureView(fig, description="Bars: each chosen token's probability",
                               changing=[self.model_p.artist, self.drawn_p.artist, self.words])
        self.root = lab_root("generation", [controls(self.prompt, self.temperature, self.top_k, self.top_p, self.seed),
                                            self.view.widget, self.verdict, self.numbers])
        for control in (self.prompt, self.temperature, self.top_k, self.top_p, self.seed):
            control.observe(lambda _c: self.update(), names="value")
        self.update()

    def update(self) -> GenerationResult:
        m = generation_model(self.prompt.value, self.temperature.value, self.top_k.value, self.top_p.value,
                             self.seed.value)
        self.model_p.set(m.probabilities)
        self.drawn_p.set(m.chosen_from)
        for i, text in enumerate(self.words):
            text.set_text(m.words[i] if i < len(m.words) else "")
        self.view.redraw()
        self.verdict.value = plain(m.verdict)
        rows = [[str(i + 1), word, fixed(p), fixed(q), plural(int(k), "token")]
                for i, (word, p, q, k) in enumerate(zip(m.words, m.probabilities, m.chosen_from, m.kept))]
        self.numbers.value = table(rows, header=["token", "chosen", "model's probability", "drawn with",
                                                 "kept to draw from"], mono_columns=(2, 3))
        self.model = m
        return m


def generation_lab(**initial):
    """The generation lab's root widget (class ``course-lab-generation``)."""
    return GenerationLab(**initial).root
