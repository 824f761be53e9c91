"""An old module path, kept for notebooks saved from earlier releases: see exercises/ui/compat.py."""

import sys

from exercises.ui.compat import ____, check, hint, moved, solution  # noqa: F401

if __name__ == "__main__":
    sys.exit(moved("lib.exercises", sys.argv[1:]))
