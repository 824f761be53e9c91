"""Kept for notebooks saved from earlier releases, which import ``progress_view`` from here;
it lives in ``exercises.ui.progress_view``."""

from exercises.ui.progress_view import progress_view

__all__ = ["progress_view"]
