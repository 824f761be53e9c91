"""The models the parameter calculator of notebook 04 offers, as data: the course's example, the
published models (their configurations and published sizes) and, once it is built, the course's
trained model. The counting itself is ``lib.params``.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple

from lib import files, model
from lib.config import ModelConfig


@dataclass(frozen=True)
class RealModel:
    """A published model: its configuration, its published size (and active size for a mixture
    of experts), and where the numbers come from."""
    config: ModelConfig
    published: float
    published_active: float | None = None
    note: str = ""


# Configurations from the models' papers and released configuration files.
REAL_MODELS = {
    "GPT-2 Small": RealModel(
        ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=50257, heads=12, context=1024,
                    learned_positions=True, biases=True, norm="layer"),
        published=124e6, note="GPT-2 (2019), Hugging Face gpt2: LayerNorm, GELU, learned positions, tied"),
    "GPT-2 Medium": RealModel(
        ModelConfig(d_model=1024, layers=24, d_ff=4096, vocab=50257, heads=16, context=1024,
                    learned_positions=True, biases=True, norm="layer"),
        published=355e6, note="Hugging Face gpt2-medium"),
    "GPT-2 Large": RealModel(
        ModelConfig(d_model=1280, layers=36, d_ff=5120, vocab=50257, heads=20, context=1024,
                    learned_positions=True, biases=True, norm="layer"),
        published=774e6, note="Hugging Face gpt2-large"),
    "LLaMA-7B": RealModel(
        ModelConfig(d_model=4096, layers=32, d_ff=11008, vocab=32000, heads=32, context=2048,
                    gated=True, tied=False),
        published=6.7e9, note="Touvron et al. 2023: RMSNorm, SwiGLU, RoPE, separate output layer"),
    "SmolLM2-360M": RealModel(
        ModelConfig(d_model=960, layers=32, d_ff=2560, vocab=49152, heads=15, kv_heads=5,
                    context=8192, gated=True),
        published=360e6, note="HuggingFaceTB/SmolLM2-360M config: grouped-query attention "
                              "(15 heads, 5 key/value heads), RoPE base 100,000, tied"),
    "DeepSeek-V3": RealModel(
        ModelConfig(d_model=7168, layers=61, d_ff=18432, vocab=129280, heads=128, context=131072,
                    gated=True, tied=False, experts=256, top_k=8, shared_experts=1,
                    expert_d_ff=2048, dense_layers=3,
                    # latent attention: 7168·1536 + 1536·128·192 + 7168·576 + 512·128·256
                    # + 128·128·7168, plus its two small norms (1536 + 512)
                    attention_per_block=187_107_328,
                    # the KV cache holds, per block, the latent of keys and values (512) and the
                    # key's shared rotary part (64)
                    cache_per_block=576),
        published=671e9, published_active=37e9,
        note="DeepSeek-V3 technical report (2024): 3 dense blocks then 58 with 256 routed experts "
             "(top 8) and 1 shared; latent attention caches 576 numbers per block; the "
             "multi-token-prediction module is not counted"),
}


COURSE_EXAMPLE = "the course's example (768 \u00d7 12)"
TRAINED_MODEL = "the course's trained model"


class Preset(NamedTuple):
    """A model to count: its configuration, the size published for it (None for the course's
    example), the published active size of a mixture of experts (else None), and a note."""
    config: ModelConfig
    published: float | None
    published_active: float | None
    note: str


def trained_preset():
    """The course's trained model (``lib.model``, notebook 05) as a ModelConfig, or None while
    that model has not been built (its files in ``lib/trained/`` absent or unreadable)."""
    try:
        found = model.config()
    except Exception:                                        # noqa: BLE001 - absent or unreadable: no preset
        return None
    return found if isinstance(found, ModelConfig) else None


def trained_stored():
    """How many numbers the trained model's weights file holds, counted from its arrays' shapes
    (``lib.files.shapes``: nothing is loaded, and in the browser nothing fetched, so notebook 04's
    calculator does not fetch notebook 05's weights), or None while that model has not been built.
    448,512 for the course's."""
    try:
        found = files.shapes("weights.npz")
    except Exception:                                        # noqa: BLE001 - absent or unreadable
        return None
    return int(sum(math.prod(shape) for shape in found.values()))


def presets():
    """The models a parameter calculator offers, name -> Preset: the course's example, the real
    models of ``REAL_MODELS`` and, once it is built, the course's trained model (whose published
    size is the count of numbers stored in its weights file)."""
    table = {COURSE_EXAMPLE: Preset(ModelConfig(d_model=768, layers=12, d_ff=3072, vocab=32000, heads=12),
                                    None, None, "the course's own example: RMSNorm, plain FFN, tied embedding")}
    for name, real in REAL_MODELS.items():
        table[name] = Preset(real.config, real.published, real.published_active, real.note)
    trained = trained_preset()
    if trained is not None:
        table[TRAINED_MODEL] = Preset(trained, trained_stored(), None,
                                      "notebook 05's model; its published size is the count of "
                                      "numbers stored in its weights file")
    return table
