"""NumPy reference library for the course on the parts of a transformer block.

Every function works on plain NumPy arrays and says the shapes it takes and gives in its
docstring. The modules, one idea each:

- ``lib.positional``: the sinusoidal position table and rotary positions (RoPE).
- ``lib.norm``: LayerNorm, RMSNorm and the root-mean-square size of a grid.
- ``lib.ffn``: activations (ReLU, GELU, SiLU), the position-wise feed-forward network, SwiGLU.
- ``lib.moe``: a top-k mixture of experts: router, shares, chosen experts.
- ``lib.attention``: a stable softmax, the causal mask, multi-head self-attention.
- ``lib.block``: one decoder block with every part switchable, and a stack of blocks.
- ``lib.params``: parameter counts by part, memory, and a table of real models.
- ``lib.weights``: seeded random weights for the toy examples.

Nothing here imports matplotlib, ipywidgets or the exercise machinery, so importing ``lib``
costs nothing; import the module you need, for example ``from lib.norm import rms_norm``.
"""
