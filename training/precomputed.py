"""Write the results notebooks 03, 04 and 05 look up instead of computing them in the browser:
``lib/trained/precomputed.npz`` (notebook 05 and its labs, ``labs/trained/precomputed.py`` says
which, and why), ``labs/decoder/precomputed.npz`` (notebook 04's run at GPT-2 Small's size,
``labs/decoder/precomputed.py``) and ``lib/trained/placement_stacks.npz`` (notebook 03's 50 stacks,
``labs/norms/precomputed.py``).

    .venv/bin/python -m training.precomputed                  # all three
    .venv/bin/python -m training.precomputed decoder norms    # notebooks 04's and 03's only (seconds)

Run it after ``training.train`` or ``training.heldout_texts`` (05's results are keyed by the
contents of the weights and texts), and after changing ``lib.initialisation``, ``lib.block``,
the modules it runs or ``lib.weights`` (03's and 04's are keyed by their source): otherwise the old file's results are never
read (each call computes live, slowly in the browser) and ``tests/test_precomputed.py`` fails until
it is run.
"""

import sys

import labs.decoder.near_identity  # noqa: F401 - importing it registers notebook 04's function
import labs.norms.placement  # noqa: F401 - and notebook 03's
from labs.decoder import precomputed as decoder
from labs.norms import precomputed as norms
from labs.trained import precomputed as trained

STORES = {"trained": trained.STORE, "decoder": decoder.STORE, "norms": norms.STORE}


def main(names=None) -> None:
    for name in names or STORES:
        STORES[name].build()


if __name__ == "__main__":
    main(sys.argv[1:])
