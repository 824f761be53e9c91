"""The course's benchmarks: labs, a real browser, the browser's NumPy, notebooks, the site and
the trained model.

    python -m benchmarks            # everything (a quarter of an hour or more); or ./course bench
    python -m benchmarks --quick    # a short run
    python -m benchmarks --only labs --labs temperature,stack
    python -m benchmarks --only noblas --notebooks 05_trained_model   # (the wasm section with it)

Prints a table, writes it as JSON under benchmarks/results/ (git-ignored) and regenerates
docs/performance.md with the machine described, and, after a full run of the browser's NumPy,
benchmarks/budget.json (the budgets of matrix work, tests/test_matrix_budget.py). Each figure is
a median and 95th percentile over repeated runs; each speed-up is a ratio of two figures
measured in the same run. The first run builds NumPy without BLAS (benchmarks/noblas.py).
"""
