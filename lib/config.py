"""A decoder's sizes and design choices, as one value: what ``lib.params`` counts and what
``lib.model.config()`` gives for the trained model."""

import numbers
from dataclasses import dataclass

from ._checks import check_choice, check_positive_int


@dataclass(frozen=True)
class ModelConfig:
    """The sizes and design choices that decide a decoder's parameter count.

    d_model, layers, d_ff, vocab: width, number of blocks, FFN hidden width, vocabulary size.
    heads / kv_heads: attention heads; kv_heads < heads means grouped-query attention (keys and
        values shared between heads, so Wk and Wv are narrower). None means kv_heads = heads.
    context: the longest text; with learned_positions=True a context×d_model table is counted.
    gated: SwiGLU FFN (three matrices). tied: the output layer reuses the embedding table.
    biases: bias vectors in attention and FFN. norm: "rms" (a gain) or "layer" (gain and shift).
    experts, top_k, shared_experts, expert_d_ff: a mixture of experts (experts=0 means dense);
        expert_d_ff=None means d_ff. dense_layers: how many first blocks keep a dense FFN.
    attention_per_block: a published count, for attention that is not four projections
        (DeepSeek-V3's latent attention); None means count the four projections.
    cache_per_block: how many numbers one token leaves in each block's KV cache, for attention
        that does not cache plain keys and values (DeepSeek-V3's latent attention caches 576);
        None means a key and a value of kv_heads · d_model / heads numbers each.
    """
    d_model: int
    layers: int
    d_ff: int
    vocab: int
    heads: int = 1
    kv_heads: int | None = None
    context: int | None = None
    learned_positions: bool = False
    gated: bool = False
    tied: bool = True
    biases: bool = False
    norm: str = "rms"
    experts: int = 0
    top_k: int = 0
    shared_experts: int = 0
    expert_d_ff: int | None = None
    dense_layers: int = 0
    attention_per_block: int | None = None
    cache_per_block: int | None = None

    def __post_init__(self):
        for name in ("d_model", "layers", "d_ff", "vocab", "heads"):
            check_positive_int(getattr(self, name), name)
        # Every whole size as a Python int: a NumPy int32 (the default integer of the browser's
        # 32-bit Python) would wrap around in the counts, which pass 2**31 for large models.
        for name in ("d_model", "layers", "d_ff", "vocab", "heads", "kv_heads", "context", "experts", "top_k",
                     "shared_experts", "expert_d_ff", "dense_layers", "attention_per_block",
                     "cache_per_block"):
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))
        check_choice(self.norm, "norm", ("rms", "layer"))
        if self.d_model % self.heads:
            raise ValueError(f"heads should divide d_model = {self.d_model}, got heads={self.heads}")
        if self.kv_heads is not None and (self.kv_heads < 1 or self.heads % self.kv_heads):
            raise ValueError(f"kv_heads should divide heads = {self.heads}, got kv_heads={self.kv_heads}")
        if self.learned_positions and self.context is None:
            raise ValueError("context should be the longest text (a whole number) when "
                             "learned_positions=True, got None")
        if self.experts and not 1 <= self.top_k <= self.experts:
            raise ValueError(f"top_k should be between 1 and experts = {self.experts}, got {self.top_k}")
