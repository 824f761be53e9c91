"""Where the norm sits, in training: small decoders trained on the toy language with pre-norm,
post-norm and no norm at all, with and without warm-up, at several depths and seeds.

    .venv/bin/python -m training.placement_runs            # every run; writes lib/trained/placement_runs.npz
    .venv/bin/python -m training.placement_runs --runs 2   # the first two runs alone, printed (a quick check)

Every run trains the same small decoder (``SETTINGS``: width 32, 2 heads, plain GELU FFN of 128,
RoPE, RMSNorm with a gain, a separate output layer) with Adam at 1e-3, no gradient clipping, for
400 steps of 16 sequences of 32 tokens of corpus.py's language, and differs only in what
``VARIANTS`` and ``WARMUP`` name (the stacks without norms are run without warm-up only):

    pre      x + f(RMSNorm(x)) in every half, a final RMSNorm before the output layer
    post     RMSNorm(x + f(x)) in every half (the stream leaves the last block normalised)
    damped   x + f(x), no norm in the blocks, Wo and W_down drawn 1/sqrt(2 x blocks) smaller
             (GPT-2's rule), a final RMSNorm
    rezero   x + a * f(x), no norm in the blocks, one number a per half starting at 0 (ReZero),
             a final RMSNorm

Every matrix is drawn at 1/sqrt(fan-in) (each keeps the size of what it reads), the embedding at
1. Warm-up: the learning rate rises linearly over the first 150 steps, or starts at its full
value; it then stays there. The training loss is recorded as its mean over each 10 steps;
a run whose loss becomes infinite or NaN stops there (the rest of its curve is NaN).
Seeds set the initial weights and the order of the batches; the training text is the same for all.

The file holds the curves, the settings and the list of runs; ``lib.placement_runs`` reads it and
``tests/test_placement_runs.py`` checks that it is current with this script (and retrains one run).
"""

import argparse
import itertools
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from training import corpus
from training.train import rope

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "lib" / "trained" / "placement_runs.npz"

SETTINGS = {"d_model": 32, "heads": 2, "d_ff": 128, "context": 32, "batch": 16, "steps": 400, "lr": 1e-3,
            "warmup": 150, "betas": [0.9, 0.98], "eps": 1e-6, "every": 10, "train_sequences": 3000,
            "text_seed": 11, "threads": 1}
VARIANTS = ("pre", "post", "damped", "rezero")
DEPTHS = (2, 6, 12)
SEEDS = (1, 2, 3)
WARMUP = (True, False)


def runs():
    """Every run, in order: (variant, warm-up, depth, seed): pre-norm and post-norm with and
    without warm-up, the two stacks without norms without warm-up."""
    return [(variant, warmup, depth, seed) for variant, warmup, depth, seed in itertools.product(VARIANTS, WARMUP, DEPTHS, SEEDS)
            if variant in ("pre", "post") or not warmup]


class Block(nn.Module):
    def __init__(self, variant, d, heads, d_ff, depth):
        super().__init__()
        self.variant, self.heads = variant, heads
        self.Wq, self.Wk, self.Wv, self.Wo = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.W_up, self.W_down = nn.Linear(d, d_ff, bias=False), nn.Linear(d_ff, d, bias=False)
        self.norms = nn.ModuleList(nn.RMSNorm(d, eps=1e-5) for _ in range(2)) if variant in ("pre", "post") else None
        self.alpha = nn.Parameter(torch.zeros(2)) if variant == "rezero" else None
        for linear in (self.Wq, self.Wk, self.Wv, self.Wo, self.W_up, self.W_down):
            nn.init.normal_(linear.weight, 0.0, linear.in_features ** -0.5)
        if variant == "damped":
            for linear in (self.Wo, self.W_down):
                linear.weight.data /= math.sqrt(2 * depth)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = (w(x).view(b, t, self.heads, d // self.heads).transpose(1, 2) for w in (self.Wq, self.Wk, self.Wv))
        out = F.scaled_dot_product_attention(rope(q, 10000.0), rope(k, 10000.0), v, is_causal=True)
        return self.Wo(out.transpose(1, 2).reshape(b, t, d))

    def ffn(self, x):
        return self.W_down(F.gelu(self.W_up(x)))

    def forward(self, x):
        for i, part in enumerate((self.attention, self.ffn)):
            if self.variant == "pre":
                x = x + part(self.norms[i](x))
            elif self.variant == "post":
                x = self.norms[i](x + part(x))
            elif self.variant == "rezero":
                x = x + self.alpha[i] * part(x)
            else:
                x = x + part(x)
        return x


class Decoder(nn.Module):
    def __init__(self, variant, depth, c=SETTINGS):
        super().__init__()
        d, vocab = c["d_model"], len(corpus.VOCAB)
        self.embedding = nn.Embedding(vocab, d)
        nn.init.normal_(self.embedding.weight, 0.0, 1.0)
        self.blocks = nn.ModuleList(Block(variant, d, c["heads"], c["d_ff"], depth) for _ in range(depth))
        self.final_norm = nn.RMSNorm(d, eps=1e-5) if variant != "post" else nn.Identity()
        self.output = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.output.weight, 0.0, d ** -0.5)

    def forward(self, ids):
        x = self.embedding(ids)
        for block in self.blocks:
            x = block(x)
        return self.output(self.final_norm(x))


def training_text(c=SETTINGS):
    """The training sequences, (train_sequences, context + 1) token ids, the same for every run."""
    rng = random.Random(c["text_seed"])
    return torch.tensor([corpus.text(rng, c["context"] + 1)[0] for _ in range(c["train_sequences"])])


def unigram_loss(data):
    """The loss of predicting every next token by its frequency in the training text alone."""
    counts = np.bincount(data[:, 1:].numpy().ravel(), minlength=len(corpus.VOCAB))
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def bigram_loss(data):
    """The loss of predicting every next token by how often it followed the token before it in the
    training text (the bigram table of the text itself)."""
    vocab = len(corpus.VOCAB)
    counts = np.zeros((vocab, vocab))
    np.add.at(counts, (data[:, :-1].numpy().ravel(), data[:, 1:].numpy().ravel()), 1)
    p = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    return float(-(counts[counts > 0] * np.log(p[counts > 0])).sum() / counts.sum())


def train(variant, warmup, depth, seed, data, c=SETTINGS):
    """One run; returns its curve: (steps / every,) the mean training loss over each ``every``
    steps (NaN from the first block of steps whose loss was not finite)."""
    torch.manual_seed(seed)
    model = Decoder(variant, depth, c)
    optimiser = torch.optim.Adam(model.parameters(), lr=c["lr"], betas=tuple(c["betas"]), eps=c["eps"])
    generator = torch.Generator().manual_seed(seed)
    curve, running = np.full(c["steps"] // c["every"], np.nan), []
    for step in range(1, c["steps"] + 1):
        lr = c["lr"] * min(1.0, step / c["warmup"]) if warmup else c["lr"]
        for group in optimiser.param_groups:
            group["lr"] = lr
        batch = data[torch.randint(len(data), (c["batch"],), generator=generator)]
        loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, len(corpus.VOCAB)), batch[:, 1:].reshape(-1))
        if not torch.isfinite(loss):
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        running.append(loss.item())
        if step % c["every"] == 0:
            curve[step // c["every"] - 1] = np.mean(running)
            running = []
    return curve


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, help="only the first RUNS runs, printed, nothing written")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    torch.set_num_threads(SETTINGS["threads"])
    torch.use_deterministic_algorithms(True)
    data, listed = training_text(), runs()[:args.runs]
    curves, seconds, start = [], [], time.time()
    for variant, warmup, depth, seed in listed:
        began = time.process_time()
        curves.append(train(variant, warmup, depth, seed, data))
        seconds.append(time.process_time() - began)
        print(f"{variant:7s} warm-up {'on ' if warmup else 'off'} depth {depth:2d} seed {seed}: loss "
              f"{curves[-1][0]:.3f} -> {curves[-1][-1]:.3f}  ({seconds[-1]:.1f} s)", flush=True)
    print(f"{len(listed)} runs in {time.time() - start:.0f} s, {sum(seconds):.0f} s of CPU time")
    if args.runs is None:
        np.savez_compressed(args.out, curves=np.array(curves, dtype=np.float32),
                            variants=np.array([r[0] for r in listed]), warmup=np.array([r[1] for r in listed]),
                            depths=np.array([r[2] for r in listed], dtype=np.int16),
                            seeds=np.array([r[3] for r in listed], dtype=np.int16),
                            seconds=np.array(seconds, dtype=np.float32), unigram_loss=np.array(unigram_loss(data)),
                            bigram_loss=np.array(bigram_loss(data)),
                            settings=np.array(json.dumps(SETTINGS, sort_keys=True)),
                            torch=np.array(torch.__version__))
        print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
