"""Train the course's small LLaMA-style decoder on the toy language of corpus.py, with PyTorch.

    .venv/bin/python -m training.train            # the full run (a few minutes on 2 CPU cores)
    .venv/bin/python -m training.train --steps 20 --out /tmp/smoke   # a quick check

The model uses PyTorch's own parts (torch.nn.RMSNorm, scaled_dot_product_attention, silu), so the
course's NumPy forward pass (lib/model.py) is checked against an independent implementation.
RoPE is written out here with the course's convention: number i of each head is paired with
number i + d/2 ("halves") and turned by position · base^(-i/(d/2)).

Writes into --out (default lib/trained/):
    weights.npz     every weight as float32, in the course's orientation (x @ W)
    reference.npz   the held-out text (token ids, what decides each token), PyTorch's logits on it,
                    and the bigram counts of the training text (the baseline)
    model.json      configuration, training settings, loss curve, PyTorch version, seed, timing
    training_record.npz   the model while it learned, at every checkpoint (training/record.py)
"""

import argparse
import json
import math
import platform
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from training import corpus
from training.record import Recorder

ROOT = Path(__file__).resolve().parent.parent

CONFIG = {"vocab": len(corpus.VOCAB), "d_model": 96, "layers": 4, "heads": 4, "d_ff": 256,
          "context": 256, "rope_base": 10000.0, "rope_pairing": "halves", "eps": 1e-5,
          "tied": True}
SETTINGS = {"seed": 2026, "steps": 1800, "batch": 16, "lr": 3e-3, "min_lr": 3e-4, "warmup": 100,
            "weight_decay": 0.05, "betas": [0.9, 0.95], "grad_clip": 1.0, "init_std": 0.02,
            "train_sequences": 6000, "heldout_seed": 7, "threads": 2, "log_every": 50}


def rope(x, base):
    """Turn each (i, i + d/2) pair of x, shape (batch, heads, length, d), by position · theta_i."""
    d = x.shape[-1]
    half = d // 2
    thetas = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(x.shape[-2], dtype=torch.float64)[:, None] * thetas[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


# The modules are named as lib.block.BlockWeights names their weights (Wq, ..., W_up, W_down), and
# each norm's weight is its gain: the weights file's key for a block's array is "<i>.<field>".
MATRICES = ("Wq", "Wk", "Wv", "Wo", "W_gate", "W_up", "W_down")
NORMS = ("attention_norm", "ffn_norm")


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, f = c["d_model"], c["d_ff"]
        self.heads, self.base = c["heads"], c["rope_base"]
        self.attention_norm = nn.RMSNorm(d, eps=c["eps"])
        self.Wq, self.Wk, self.Wv, self.Wo = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.ffn_norm = nn.RMSNorm(d, eps=c["eps"])
        self.W_gate, self.W_up = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
        self.W_down = nn.Linear(f, d, bias=False)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = (w(x).view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for w in (self.Wq, self.Wk, self.Wv))
        q, k = rope(q, self.base), rope(k, self.base)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.Wo(out.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        h = self.ffn_norm(x)
        return x + self.W_down(F.silu(self.W_gate(h)) * self.W_up(h))


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embedding = nn.Embedding(c["vocab"], c["d_model"])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.final_norm = nn.RMSNorm(c["d_model"], eps=c["eps"])

    def forward(self, ids):
        x = self.embedding(ids)
        for block in self.blocks:
            x = block(x)
        return self.final_norm(x) @ self.embedding.weight.T      # tied: the table reads out too


def initialise(model, std, layers):
    for name, p in model.named_parameters():
        if p.ndim == 2:
            scale = std / math.sqrt(2 * layers) if name.endswith(("Wo.weight", "W_down.weight")) else std
            nn.init.normal_(p, 0.0, scale)


def state_names(model):
    """The weights file's key of every parameter, with its PyTorch name: "embedding" for
    "embedding.weight", "final_norm_gain" for "final_norm.weight", "0.W_up" for
    "blocks.0.W_up.weight", "0.attention_norm_gain" for "blocks.0.attention_norm.weight"."""
    names = {"embedding": "embedding.weight", "final_norm_gain": "final_norm.weight"}
    for i in range(len(model.blocks)):
        names.update({f"{i}.{n}_gain": f"blocks.{i}.{n}.weight" for n in NORMS})
        names.update({f"{i}.{m}": f"blocks.{i}.{m}.weight" for m in MATRICES})
    return names


def numpy_weights(model):
    """The weights as float32 arrays by the weights file's keys (``state_names``), in the
    course's orientation: x @ W (PyTorch stores W.T)."""
    state = model.state_dict()
    out = {}
    for key, name in state_names(model).items():
        value = state[name].detach()
        out[key] = (value.T if key.split(".")[-1] in MATRICES else value).numpy().astype(np.float32)
    return out


def model_from_numpy_weights(config, arrays, dtype=torch.float64):
    """The inverse of numpy_weights: a Decoder holding the given arrays (e.g. the committed
    lib/trained/weights.npz), in the given PyTorch number type, ready to evaluate."""
    model = Decoder(config)
    state = {}
    for key, name in state_names(model).items():
        value = np.asarray(arrays[key])
        state[name] = np.ascontiguousarray(value.T if key.split(".")[-1] in MATRICES else value)
    model.load_state_dict({k: torch.tensor(v, dtype=dtype) for k, v in state.items()})
    return model.to(dtype).eval()


def heldout_set(first_ids, first_kinds):
    """(ids, kinds) of the eight held-out texts, (8, context) each: the first held-out text and
    the seven of training/heldout_texts.py, as lib.model.heldout_texts() holds them."""
    from training.heldout_texts import texts
    ids, kinds = texts()
    return np.concatenate([[first_ids], ids]), np.concatenate([[first_kinds], kinds])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=SETTINGS["steps"])
    parser.add_argument("--out", default=str(ROOT / "lib" / "trained"))
    args = parser.parse_args()
    settings = {**SETTINGS, "steps": args.steps}
    c = CONFIG
    start = time.time()
    torch.set_num_threads(settings["threads"])
    torch.manual_seed(settings["seed"])
    np.random.seed(settings["seed"])
    torch.use_deterministic_algorithms(True)

    rng = random.Random(settings["seed"])
    data = torch.tensor([corpus.text(rng, c["context"] + 1)[0]
                         for _ in range(settings["train_sequences"])])
    bigram = np.zeros((c["vocab"], c["vocab"]), dtype=np.int32)
    flat = data[:, :-1].numpy(), data[:, 1:].numpy()
    np.add.at(bigram, (flat[0].ravel(), flat[1].ravel()), 1)
    heldout_ids, heldout_kinds = corpus.text(random.Random(settings["heldout_seed"]), c["context"])
    heldout = torch.tensor([heldout_ids])
    print(f"corpus: {settings['train_sequences']} sequences of {c['context'] + 1} tokens, "
          f"vocabulary {c['vocab']}; generated in {time.time() - start:.1f} s", flush=True)

    model = Decoder(c)
    initialise(model, settings["init_std"], c["layers"])
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params:,} parameters", flush=True)
    recorder = Recorder(c, heldout_set(heldout_ids, heldout_kinds), numpy_weights, rope)
    recorder.checkpoint(0, model)
    decay = [p for p in model.parameters() if p.ndim == 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": settings["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=settings["lr"], betas=tuple(settings["betas"]))
    generator = torch.Generator().manual_seed(settings["seed"])
    curve, running = [], []
    for step in range(1, settings["steps"] + 1):
        if step <= settings["warmup"]:
            lr = settings["lr"] * step / settings["warmup"]
        else:
            progress = (step - settings["warmup"]) / max(1, settings["steps"] - settings["warmup"])
            lr = settings["min_lr"] + 0.5 * (settings["lr"] - settings["min_lr"]) * (1 + math.cos(math.pi * progress))
        for group in optimiser.param_groups:
            group["lr"] = lr
        batch = data[torch.randint(len(data), (settings["batch"],), generator=generator)]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, c["vocab"]), batch[:, 1:].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings["grad_clip"])
        optimiser.step()
        running.append(loss.item())
        if step % settings["log_every"] == 0 or step == settings["steps"]:
            with torch.no_grad():
                held = F.cross_entropy(model(heldout[:, :-1])[0], heldout[0, 1:]).item()
            curve.append({"step": step, "train_loss": round(float(np.mean(running)), 4),
                          "heldout_loss": round(held, 4)})
            recorder.checkpoint(step, model)
            print(f"step {step:5d}  train loss {np.mean(running):.4f}  held-out loss {held:.4f}  "
                  f"lr {lr:.2e}  {time.time() - start:6.1f} s", flush=True)
            running = []
    seconds = time.time() - start

    model.eval()
    with torch.no_grad():
        logits = model(heldout)[0].numpy().astype(np.float32)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "weights.npz", **numpy_weights(model))
    recorder.save(out / "training_record.npz", seconds)
    np.savez_compressed(out / "reference.npz", ids=np.array(heldout_ids, dtype=np.int16),
                        kinds=np.array(heldout_kinds, dtype=np.int8), logits=logits, bigram=bigram)
    targets = torch.tensor(heldout_ids[1:])
    final = F.cross_entropy(torch.from_numpy(logits[:-1]), targets).item()
    record = {"config": c, "settings": settings, "parameters": n_params,
              "vocab": corpus.VOCAB, "kinds": corpus.KINDS, "order_kinds": list(corpus.ORDER_KINDS),
              "heldout": {"seed": settings["heldout_seed"], "tokens": len(heldout_ids),
                          "loss": round(final, 4), "perplexity": round(math.exp(final), 4)},
              "loss_curve": curve, "framework": f"PyTorch {torch.__version__}",
              "python": platform.python_version(), "numpy": np.__version__,
              "threads": settings["threads"], "seconds": round(seconds, 1)}
    (out / "model.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"held-out loss {final:.4f}, perplexity {math.exp(final):.3f}; "
          f"trained in {seconds:.1f} s; wrote {out}", flush=True)


if __name__ == "__main__":
    main()
