"""NumPy reference library for the course on the parts of a transformer block.

Every function works on plain NumPy arrays and says the shapes it takes and gives in its
docstring. The modules, one idea each:

- ``lib.positional``: the sinusoidal position table and rotary positions (RoPE).
- ``lib.norm``: LayerNorm, RMSNorm, the table of norms and the root-mean-square size of a grid.
- ``lib.ffn``: activations (ReLU, GELU, SiLU), the position-wise feed-forward network, SwiGLU.
- ``lib.moe``: a top-k mixture of experts: router, shares, chosen experts, load balancing.
- ``lib.attention``: a stable softmax, the causal mask and weights, multi-head self-attention,
  and the KV cache of the keys and values read so far.
- ``lib.block``: one decoder block, written once (norm, attention, add; norm, FFN, add), with
  every part switchable and every step traceable, and a stack of blocks.
- ``lib.config``: a model's sizes and design choices (``ModelConfig``).
- ``lib.params``: parameter counts by part, and memory.
- ``lib.weights``: seeded random weights for the toy examples.
- ``lib.initialisation``: how a model's weights start (GPT-2's rule), what its blocks do at step 0,
  and a stack with no norm whose output projections are damped.
- ``lib.stack``: a vector through a stack of random layers, and the residual stream's growth.
- ``lib.backward``: the backward pass of the random stacks of ``lib.block``: the gradient of a
  loss with respect to every block's weights, pre-norm and post-norm.
- ``lib.model``: the course's small trained decoder (weights in ``lib/trained/``), run with
  ``lib.block``.
- ``lib.generate``: text from the trained model, greedy and sampled (temperature, top-k,
  top-p), one token at a time with a KV cache, and the work and memory that costs.
- ``lib.circuits``: how the trained model's heads work together: attention maps, previous-token
  and induction scores, loss by kind of prediction, the composition of heads.
- ``lib.training_record``: the trained model while it learned, recorded at every checkpoint.
- ``lib.placement_runs``: loss curves of small models trained with pre-norm, post-norm or no
  norm, with and without warm-up, at several depths.
- ``lib.train``: a tiny model trained live with the backward pass and Adam.
- ``lib.files``: where the trained model's arrays are read from (``lib/trained/``, or in the
  browser the course site, fetched the first time they are needed).

One name per weight, everywhere (the library, the trained model's weights file, the labs, the
exercises and the notebooks):

- attention: ``Wq``, ``Wk``, ``Wv`` (d, d) project queries, keys and values, ``Wo`` (d, d) the output;
- feed-forward network: ``W_up`` (d, d_ff) widens, ``W_down`` (d_ff, d) narrows, ``W_gate``
  (d, d_ff) gates (SwiGLU), plain and gated alike; their biases ``b_up`` (d_ff,), ``b_down`` (d,);
- a norm: its ``gain`` (d,) multiplies and its ``bias`` (d,) shifts (LayerNorm only); in a block
  they are named after the half they serve, ``attention_norm_gain``, ``attention_norm_bias``,
  ``ffn_norm_gain``, ``ffn_norm_bias``, and the norm before the output has ``final_norm_gain``;
- the token table ``embedding`` (vocab, d); a mixture of experts' router ``W_router`` (d, E).

``lib`` imports nothing but NumPy and the standard library, so importing it costs nothing;
import the module you need, for example ``from lib.norm import rms_norm``. Two parts are not the
library: ``lib.deprecated`` keeps the names of earlier releases (``W1``, ``W2``, ...) answering
for notebooks saved from them, and ``lib.exercises`` keeps those notebooks' setup cell working
(both find the names that left ``lib`` through the course's packaging, never by importing it).
"""
