"""Write ``lib/trained/precomputed.npz``: the results notebook 05 and its labs look up instead of
running the model in the browser (``labs/trained/precomputed.py`` says which, and why).

    .venv/bin/python -m training.precomputed

Run it after ``training.train`` or ``training.heldout_texts``: results are keyed by the contents
of the weights and texts, so after either one the old file's results are never read (each call
computes live, slowly in the browser) and ``tests/test_precomputed.py`` fails until it is run.
"""

from labs.trained import precomputed


def main() -> None:
    precomputed.build()


if __name__ == "__main__":
    main()
