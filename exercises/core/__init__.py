"""The exercise system without any widget: data types, registry, checker, progress, report."""
