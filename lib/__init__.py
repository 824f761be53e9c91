"""NumPy reference library for the course on the parts of a transformer block.

Every function works on plain NumPy arrays and says the shapes it takes and gives in its
docstring. The modules, one idea each:

- ``lib.positional``: the sinusoidal position table and rotary positions (RoPE).
- ``lib.norm``: LayerNorm, RMSNorm, the table of norms and the root-mean-square size of a grid.
- ``lib.ffn``: activations (ReLU, GELU, SiLU), the position-wise feed-forward network, SwiGLU.
- ``lib.moe``: a top-k mixture of experts: router, shares, chosen experts, load balancing.
- ``lib.attention``: a stable softmax, the causal mask and weights, multi-head self-attention.
- ``lib.block``: one decoder block, written once (norm, attention, add; norm, FFN, add), with
  every part switchable, and a stack of blocks.
- ``lib.params``: parameter counts by part, memory, and a table of real models.
- ``lib.weights``: seeded random weights for the toy examples.
- ``lib.initialisation``: how a model's weights start (GPT-2's rule) and what its blocks do at step 0.
- ``lib.stack``: a vector through a stack of random layers, and the residual stream's growth.
- ``lib.model``: the course's small trained decoder (weights in ``lib/trained/``), run with
  ``lib.block``.

``lib`` imports nothing but NumPy and the standard library, so importing it costs nothing;
import the module you need, for example ``from lib.norm import rms_norm``. (``lib.exercises`` is
not part of the library: it only keeps notebooks saved from earlier releases working.)
"""
