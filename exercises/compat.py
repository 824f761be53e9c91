"""What notebooks saved from earlier releases import, from where those releases had it.

A learner's saved notebook keeps the imports of the release it was saved from (JupyterLite keeps
it in the browser), so the module paths those releases used must keep working after every
update; tests/test_saved_notebooks.py runs notebooks saved from every earlier release to prove
it. Notebooks now import from three places only: ``engine.notebook``, ``labs.<topic>`` and
``lib``. The code the old paths need is here, in one place, with the table of old paths
(:data:`OLD_PATHS`):

- each old path is a module that only imports its names from this one (an old module that became
  a package of the engine is kept as a package of the same name whose ``__init__`` does that:
  ``exercises/ui/notebook/__init__.py``), and tests/test_architecture.py checks that it holds
  nothing else;
- the old paths inside ``lib`` are the exception: ``lib`` imports nothing but NumPy and the
  standard library, not even this module, so ``pyproject.toml`` declares each of their names as
  an entry point of the group ``transformer_course.moved`` (``lib.exercises.check =
  exercises.compat:check``), and ``lib`` looks a name up there when a saved notebook asks for it
  (``lib/deprecated/moved.py``), as it finds its fetcher (``lib/files.py``).

==============================  ======================================  ============================
old module path                 names saved notebooks import            where they live now
==============================  ======================================  ============================
``lib.exercises``               ``____, check, hint, solution``         ``engine.notebook`` (here,
                                                                        check, hint and solution
                                                                        call ``begin()``)
``lib.params``                  ``REAL_MODELS``                         ``labs.decoder.models``
``labs.questions``              ``ask``                                 ``engine.notebook``
``labs.testout``                ``test_out``                            ``engine.notebook.skip_ahead``
``labs.progress_view``          ``progress_view``                       ``engine.notebook``
``labs.review``                 ``review``                              ``engine.notebook``
``labs.release_view``           ``course_release``                      ``engine.notebook``
``exercises.ui.notebook``       ``____, ask, begin, check, hint,        ``engine.notebook``
                                solution``
``exercises.ui.progress_view``  ``progress_view``                       ``engine.notebook``
``exercises.ui.release_view``   ``course_release``                      ``engine.notebook``
``exercises.ui.review``         ``review``                              ``engine.notebook``
``exercises.ui.skip_ahead``     ``skip_ahead``                          ``engine.notebook``
``exercises.core.blank``        ``mentions_blank``                      ``engine.notebook``
``presentation.numbers``        ``byte_size``                           ``engine.notebook``
==============================  ======================================  ============================

Some old paths are still the modules they were, and must stay where they are (:data:`KEPT`): the
deep lab modules the notebooks of release 1db0772 import (their names are now re-exported by
their topic's package too, which is what notebooks import today) and the exercise definitions of
notebook 05.
"""

from __future__ import annotations

from engine import notebook
from engine.notebook import (____, ask, begin, byte_size, course_release, mentions_blank, progress_view, review,
                             skip_ahead)

test_out = skip_ahead

# {old module path: the names it keeps}: each is a module importing exactly those names from here,
# but those of lib, which pyproject.toml declares as entry points of the group "transformer_course.moved".
OLD_PATHS = {
    "lib.exercises": ("____", "check", "hint", "solution"),
    "lib.params": ("REAL_MODELS",),
    "labs.questions": ("ask",),
    "labs.testout": ("test_out",),
    "labs.progress_view": ("progress_view",),
    "labs.review": ("review",),
    "labs.release_view": ("course_release",),
    "exercises.ui.notebook": ("____", "ask", "begin", "check", "hint", "solution"),
    "exercises.ui.progress_view": ("progress_view",),
    "exercises.ui.release_view": ("course_release",),
    "exercises.ui.review": ("review",),
    "exercises.ui.skip_ahead": ("skip_ahead",),
    "exercises.core.blank": ("mentions_blank",),
    "presentation.numbers": ("byte_size",),
}

# {module path saved notebooks import that is still that module: the names they import from it}
KEPT = {
    "exercises.definitions.trained": ("example_block", "your_parts"),
    "labs.decoder.layer_flow": ("FLOW_D", "FLOW_FF", "FLOW_HEADS", "flow_inputs"),
    "labs.decoder.models": ("REAL_MODELS",),
    "labs.decoder.near_identity": ("start_of_training",),
    "labs.ffn.router": ("router_scores",),
    "labs.norms.which_axis": ("BATCH", "axis_model", "normalise"),
    "labs.trained.held_out": ("pooled_run", "trace"),
    "labs.trained.mismatch": ("LOUD", "QUIET"),
}


def check(exercise_id: str, namespace: dict | None = None):
    """``engine.notebook.check``, after ``begin()`` (an old setup cell never calls it)."""
    notebook.begin()
    return notebook.check(exercise_id, namespace)


def hint(exercise_id: str, demo: bool = False) -> None:
    """``engine.notebook.hint``, after ``begin()``."""
    notebook.begin()
    notebook.hint(exercise_id, demo)


def solution(exercise_id: str) -> None:
    """``engine.notebook.solution``, after ``begin()``."""
    notebook.begin()
    notebook.solution(exercise_id)


__all__ = ["KEPT", "OLD_PATHS", "____", "ask", "begin", "byte_size", "check", "course_release", "hint",
           "mentions_blank", "progress_view", "review", "skip_ahead", "solution", "test_out"]
