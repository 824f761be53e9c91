"""Kept for notebooks saved from earlier releases, which import ``course_release`` from here;
it lives in ``exercises.ui.release_view``."""

from exercises.ui.release_view import course_release

__all__ = ["course_release"]
