"""An old module path, kept for notebooks saved from earlier releases: see exercises/ui/compat.py."""

from exercises.ui.compat import ask  # noqa: F401
