"""More held-out texts for notebook 05, with PyTorch's logits on them, from the committed weights.

    .venv/bin/python -m training.heldout_texts          # writes lib/trained/heldout_texts.npz

One text of 256 tokens is not enough to judge the model by kind of prediction: it holds only a
handful of sums or verbs. This script draws more texts from the same toy language
(``corpus.text``, with seeds that neither training (2026) nor the first held-out text (7) used),
runs the committed weights (lib/trained/weights.npz) through PyTorch in float32, exactly as
train.py recorded the first text's logits, and saves them. Nothing is retrained: the weights are
read, never changed, so running the script again writes the same numbers.

Writes lib/trained/heldout_texts.npz (or --out):
    seeds   (texts,)               the random.Random seed of each text
    ids     (texts, 256) int16     the tokens
    kinds   (texts, 256) int8      what decides each token (an index into model.json's "kinds")
    logits  (texts, 256, vocab)    PyTorch's logits, float32
"""

import argparse
import random
from pathlib import Path

import numpy as np
import torch

from training import corpus
from training.train import CONFIG, SETTINGS, model_from_numpy_weights

ROOT = Path(__file__).resolve().parent.parent

SEEDS = (101, 102, 103, 104, 105, 106, 107)


def texts(seeds=SEEDS, length=CONFIG["context"]):
    """(ids, kinds) arrays of shape (len(seeds), length), one text per seed."""
    if {SETTINGS["seed"], SETTINGS["heldout_seed"]} & set(seeds):
        raise ValueError("a held-out text must not reuse the training seed or the first held-out seed")
    drawn = [corpus.text(random.Random(seed), length) for seed in seeds]
    return (np.array([ids for ids, _k in drawn], dtype=np.int16),
            np.array([kinds for _i, kinds in drawn], dtype=np.int8))


def reference_logits(ids, weights_file):
    """PyTorch's float32 logits of the committed weights on every text, one text at a time as
    train.py ran the first one: (texts, length, vocab)."""
    with np.load(weights_file) as data:
        arrays = {name: data[name] for name in data.files}
    torch.set_num_threads(SETTINGS["threads"])
    model = model_from_numpy_weights(CONFIG, arrays, dtype=torch.float32)
    with torch.no_grad():
        return np.stack([model(torch.tensor(text, dtype=torch.long)[None])[0].numpy() for text in ids]
                        ).astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "lib" / "trained" / "heldout_texts.npz"))
    args = parser.parse_args()
    ids, kinds = texts()
    logits = reference_logits(ids, ROOT / "lib" / "trained" / "weights.npz")
    np.savez_compressed(args.out, seeds=np.array(SEEDS, dtype=np.int16), ids=ids, kinds=kinds, logits=logits)
    print(f"wrote {len(SEEDS)} texts of {ids.shape[1]} tokens to {args.out} "
          f"({Path(args.out).stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
