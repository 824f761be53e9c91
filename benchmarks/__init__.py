"""The course's benchmarks: labs, a real browser, notebooks, the site and the trained model.

    python -m benchmarks            # everything (a few minutes); or ./course bench
    python -m benchmarks --quick    # a short run
    python -m benchmarks --only labs --labs temperature,stack

Prints a table, writes it as JSON under benchmarks/results/ (git-ignored) and regenerates
docs/performance.md with the machine described. Each figure is a median and 95th percentile
over repeated runs; each speed-up is a ratio of two figures measured in the same run.
"""
