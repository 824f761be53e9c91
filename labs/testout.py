"""Kept for notebooks saved from earlier releases, which call ``test_out(stem)`` from here;
it is ``exercises.ui.skip_ahead`` now."""

from exercises.ui.skip_ahead import skip_ahead as test_out

__all__ = ["test_out"]
