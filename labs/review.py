"""Kept for notebooks saved from earlier releases, which import ``review`` from here;
it lives in ``exercises.ui.review``."""

from exercises.ui.review import review

__all__ = ["review"]
