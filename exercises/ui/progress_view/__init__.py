"""An old module path, kept for notebooks saved from earlier releases: see exercises/compat.py."""

from exercises.compat import progress_view  # noqa: F401
