"""Counting parameters: where a model's numbers sit and how much memory they take.

A block holds attention (4·d² for four d×d projections), a feed-forward network (2·d·d_ff plain,
3·d·d_ff gated) and its norms (d each, 2·d for LayerNorm's gain and shift). Around the blocks sit
the embedding table (vocab·d), an optional learned positions table (context·d), an output layer
(vocab·d, unless tied to the embedding) and one final norm. A mixture of experts stores E
feed-forward networks per block plus a d×E router, but each token uses only k of them.

Memory beyond the weights: generating text keeps every token's keys and values in each block
(the KV cache, ``kv_cache_per_token``), and training with AdamW keeps a gradient and two running
averages per weight (``training_memory``).

Every count takes a ``ModelConfig`` (``lib.config``, re-exported here). The published models the
parameter calculator of notebook 04 offers are its data: ``labs.decoder.models``.
"""

import numbers
from dataclasses import dataclass, fields, replace

from ._checks import check_choice, check_positive_int
from .config import ModelConfig

MIB = 2 ** 20   # bytes in one MiB


@dataclass(frozen=True)
class BlockCount:
    """One block's parameters by part. ffn is what is stored; ffn_active what one token uses."""
    attention: int
    ffn: int
    ffn_active: int
    router: int
    norms: int

    @property
    def total(self):
        return self.attention + self.ffn + self.router + self.norms

    @property
    def active(self):
        return self.total - self.ffn + self.ffn_active


@dataclass(frozen=True)
class ParameterCount:
    """A whole model's parameters by part (all blocks summed), with totals and shares."""
    embedding: int
    positions: int
    output: int
    attention: int
    ffn: int
    ffn_active: int
    router: int
    block_norms: int
    final_norm: int

    @property
    def norms(self):
        """Every norm in the model: two per block and the final one."""
        return self.block_norms + self.final_norm

    @property
    def blocks(self):
        """Everything inside the blocks: attention, FFN (stored), router, the blocks' norms."""
        return self.attention + self.ffn + self.router + self.block_norms

    @property
    def total(self):
        """Every stored parameter."""
        return self.embedding + self.positions + self.output + self.blocks + self.final_norm

    @property
    def active(self):
        """The parameters one token uses (differs from total only for a mixture of experts)."""
        return self.total - self.ffn + self.ffn_active

    def shares(self):
        """Each part's fraction of the total, as a dict (embedding includes positions and output)."""
        parts = {"embedding": self.embedding + self.positions + self.output, "attention": self.attention,
                 "ffn": self.ffn, "router": self.router, "norms": self.norms}
        return {name: count / self.total for name, count in parts.items()}


def _whole(value):
    """A whole number as a Python int, exact at any size (a NumPy integer, 32 bits in the browser,
    would wrap around past 2**31); anything else unchanged."""
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value


def ffn_parameters(d_model, d_ff, gated=False, biases=False):
    """One feed-forward network: 2·d·d_ff plain or 3·d·d_ff gated, plus biases if asked
    (d_ff per widening matrix and d_model for the narrowing one). d=6, d_ff=12 with biases: 162."""
    d_model, d_ff = _whole(d_model), _whole(d_ff)
    matrices = 3 if gated else 2
    bias = (d_ff * (matrices - 1) + d_model) if biases else 0
    return matrices * d_model * d_ff + bias


def attention_parameters(config):
    """One block's attention: Wq and Wo (d×d), Wk and Wv (d×kv_width), plus biases if asked."""
    c = config
    if c.attention_per_block is not None:
        return c.attention_per_block
    kv_width = c.d_model // c.heads * (c.kv_heads or c.heads)
    weights = 2 * c.d_model * c.d_model + 2 * c.d_model * kv_width
    return weights + ((2 * c.d_model + 2 * kv_width) if c.biases else 0)


def norm_parameters(config):
    """One norm: a gain of d numbers, and a shift of d more for LayerNorm."""
    return config.d_model * (2 if config.norm == "layer" else 1)


def block_parameters(config, moe=True):
    """One block's count by part (a BlockCount). With moe=False, or a dense config, the FFN is
    one network of width d_ff; otherwise experts (+ shared experts) of width expert_d_ff."""
    c = config
    if not (c.experts and moe):
        one = ffn_parameters(c.d_model, c.d_ff, c.gated, c.biases)
        return BlockCount(attention_parameters(c), one, one, 0, 2 * norm_parameters(c))
    one = ffn_parameters(c.d_model, c.expert_d_ff or c.d_ff, c.gated, c.biases)
    return BlockCount(attention=attention_parameters(c), ffn=(c.experts + c.shared_experts) * one,
                      ffn_active=(c.top_k + c.shared_experts) * one, router=c.d_model * c.experts,
                      norms=2 * norm_parameters(c))


def count_parameters(config):
    """Count a whole model's parameters by part; returns a ParameterCount.

    d=768, 12 blocks, d_ff 3072, vocab 32000 (tied, RMSNorm): total 109,529,856.
    """
    c = config
    dense, mixed = block_parameters(c, moe=False), block_parameters(c, moe=True)
    n_dense = c.layers if not c.experts else min(c.dense_layers, c.layers)
    n_mixed = c.layers - n_dense
    per_part = {name: n_dense * getattr(dense, name) + n_mixed * getattr(mixed, name)
                for name in ("attention", "ffn", "ffn_active", "router", "norms")}
    return ParameterCount(embedding=c.vocab * c.d_model,
                          positions=c.context * c.d_model if c.learned_positions else 0,
                          output=0 if c.tied else c.vocab * c.d_model,
                          attention=per_part["attention"], ffn=per_part["ffn"],
                          ffn_active=per_part["ffn_active"], router=per_part["router"],
                          block_norms=per_part["norms"], final_norm=norm_parameters(c))


def simple_version(config):
    """The same sizes counted the course's simple way: four d×d attention matrices, a plain
    two-matrix FFN of width d_ff, one gain per norm, no biases, no positions table, no experts,
    tied embedding. Real models' published sizes differ from this by exactly those details."""
    defaults = {f.name: f.default for f in fields(ModelConfig) if f.name not in
                ("d_model", "layers", "d_ff", "vocab", "heads", "context")}
    return replace(config, **defaults)


def mebibytes(parameters, bytes_per_parameter=2):
    """Memory for the weights in MiB (2^20 bytes): 109,529,856 parameters at 2 bytes = 208.9 MiB."""
    return _whole(parameters) * _whole(bytes_per_parameter) / MIB


def kv_cache_per_token(config):
    """How many numbers one token leaves in the KV cache of the whole model while it generates:
    in every block its key and its value, kv_heads · d_model / heads numbers each (every head's
    when kv_heads is None), or the configuration's ``cache_per_block``. Times the bytes of a
    number and the tokens of the text, that is the cache's memory.

    GPT-2 Small: 12 blocks × 2 × 768 = 18,432; LLaMA-7B: 32 × 2 × 4,096 = 262,144;
    SmolLM2-360M (5 sets of keys and values for 15 heads of 64): 32 × 2 × 320 = 20,480.
    """
    c = config
    if c.cache_per_block is not None:
        return c.layers * c.cache_per_block
    kv_width = c.d_model // c.heads * (c.kv_heads or c.heads)
    return c.layers * 2 * kv_width


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes to train a model with AdamW, by part (activations aside, as they depend on the
    batch): the weights, one gradient per weight, a float32 master copy of the weights when they
    are kept in fewer bytes (mixed precision), and AdamW's two running averages per weight."""
    weights: float
    gradients: float
    master_copy: float
    moments: float

    @property
    def total(self):
        return self.weights + self.gradients + self.master_copy + self.moments


def training_memory(parameters, bytes_per_number=4):
    """What training with AdamW holds besides the activations, in bytes (a TrainingMemory): the
    weights and their gradients at ``bytes_per_number`` each; below 4 bytes, a float32 copy of
    the weights that the updates are added to; and AdamW's two running averages (of the gradient
    and of its square), 4 bytes each. 16 bytes per parameter in float32 (4 + 4 + 0 + 8) and in
    bfloat16 with a float32 copy (2 + 2 + 4 + 8): 1,752,477,696 for 109,529,856 parameters.
    """
    parameters, nbytes = _whole(parameters), _whole(bytes_per_number)
    return TrainingMemory(weights=parameters * nbytes, gradients=parameters * nbytes,
                          master_copy=parameters * 4 if nbytes < 4 else 0, moments=parameters * 8)


def ffn_width(d_model, times=2, gated=False, multiple=1):
    """The narrowest FFN hidden width, a multiple of ``multiple``, at which the FFN holds at least
    ``times`` times as many parameters as attention's four d×d matrices.

    Each hidden unit adds d numbers to each of the FFN's matrices (2 plain, 3 gated), so the width
    is times·4·d² / (matrices·d), rounded up to the multiple: 2·times·d plain, 4/3·times·d gated.
    d = 768, times 2, plain -> 3,072; d = 960, times 2, gated, multiple 256 -> 2,560 (exactly 8/3·d);
    d = 4,096 -> 11,008 (8/3·d is 10,922.67).
    """
    d, times = check_positive_int(d_model, "d_model"), check_positive_int(times, "times")
    multiple = check_positive_int(multiple, "multiple")
    per_unit = (3 if gated else 2) * d
    return -(-times * 4 * d * d // (per_unit * multiple)) * multiple


def gated_width(d_model, multiple=32):
    """The SwiGLU hidden width that keeps a plain 4·d FFN's count: 8/3·d rounded up to a
    multiple (768 -> 2048, 960 -> 2560, 128 -> 352 with multiple 32)."""
    return ffn_width(d_model, times=2, gated=True, multiple=multiple)


def equal_count_gated_width(d_ff, multiple=1):
    """The gated (three-matrix) width that holds as many weights as a plain FFN of width d_ff:
    two thirds of d_ff, rounded up to a multiple (3,072 -> 2,048; 512 -> 352 with multiple 32).
    For d_ff = 4·d this is ``gated_width(d, multiple)``."""
    d_ff, multiple = check_positive_int(d_ff, "d_ff"), check_positive_int(multiple, "multiple")
    return -(-2 * d_ff // (3 * multiple)) * multiple


# What a real model has beyond the course's simple count, in the order gap_steps adds it:
# (what it is, the ModelConfig fields that carry it).
DETAILS = (
    ("learned position table (context \u00d7 d)", ("learned_positions",)),
    ("biases in attention and FFN", ("biases",)),
    ("LayerNorm shifts (a second vector per norm)", ("norm",)),
    ("separate output layer (untied)", ("tied",)),
    ("gated FFN (three matrices)", ("gated",)),
    ("grouped-query attention (narrower Wk, Wv)", ("kv_heads",)),
    ("latent attention (published count per block)", ("attention_per_block",)),
    ("mixture of experts (stored)", ("experts", "top_k", "shared_experts", "expert_d_ff", "dense_layers")),
)


def gap_steps(config):
    """From the course's simple count to the full one, as (what, parameters added, running total):
    the blocks alone, the embedding table, the final norm, then each detail of ``DETAILS`` the
    model has, added one at a time. The last running total is ``count_parameters(config).total``.

    GPT-2 Small: blocks 84,953,088, embedding 38,597,376, final norm 768 (123,551,232), then its
    learned position table (+786,432), biases, LayerNorm shifts: 124,439,808 in all.
    """
    current = simple_version(config)
    simple = count_parameters(current)
    steps, total = [], 0
    for what, added in (("blocks alone (4·d² + 2·d·d_ff + 2·d each)", simple.blocks),
                        ("embedding table (vocab \u00d7 d)", simple.embedding),
                        ("final norm", simple.final_norm)):
        total += added
        steps.append((what, added, total))
    for what, names in DETAILS:
        wanted = {name: getattr(config, name) for name in names}
        if all(getattr(current, name) == value for name, value in wanted.items()):
            continue
        after = replace(current, **wanted)
        added = count_parameters(after).total - count_parameters(current).total
        total += added
        steps.append((what, added, total))
        current = after
    return steps


def doubled(config, what):
    """The same model with twice the blocks (what="depth") or twice the width (what="width":
    d_model, d_ff, any expert width and any published cache width doubled, a published attention
    count four times larger).
    d = 768, 12 blocks (109,529,856): twice the blocks 194,482,944, twice the width 388,929,024."""
    check_choice(what, "what", ("depth", "width"))
    if what == "depth":
        return replace(config, layers=2 * config.layers, dense_layers=2 * config.dense_layers)
    return replace(config, d_model=2 * config.d_model, d_ff=2 * config.d_ff,
                   expert_d_ff=None if config.expert_d_ff is None else 2 * config.expert_d_ff,
                   attention_per_block=None if config.attention_per_block is None
                   else 4 * config.attention_per_block,
                   cache_per_block=None if config.cache_per_block is None else 2 * config.cache_per_block)


def beyond_plain(config):
    """What a configuration has beyond the plain model (four d×d attention matrices, a plain FFN,
    RMSNorm, tied embedding, no biases, no experts), in words: [] for the course's example,
    ["a gated FFN", "a separate output layer"] for LLaMA-7B."""
    extras = [(config.gated, "a gated FFN"), (not config.tied, "a separate output layer"),
              (config.biases, "biases"), (config.experts > 0, "experts"),
              (config.norm != "rms", "LayerNorm shifts"),
              (config.learned_positions, "a learned position table"),
              (config.kv_heads not in (None, config.heads), "shared keys and values"),
              (config.attention_per_block is not None, "its own attention")]
    return [what for has, what in extras if has]


def __getattr__(name):
    """Names that moved out of this module (the published models), for notebooks saved from
    earlier releases: see ``lib.deprecated``."""
    from .deprecated.moved import moved
    return moved(__name__, name)
