"""Kept for notebooks saved from earlier releases, which import ``ask`` from here;
it lives in ``exercises.ui.questions``."""

from exercises.ui.questions import ask

__all__ = ["ask"]
