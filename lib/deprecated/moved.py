"""Names that left ``lib``, looked up where they live now.

A notebook saved from an earlier release may still run ``from lib.params import REAL_MODELS``
(the published models, now the parameter calculator's data in ``labs.decoder.models``) or ``from
lib.exercises import ____, check, hint, solution`` (now the engine's, ``engine.notebook``).
``lib`` imports nothing but NumPy and the standard library, not even for these: the course's
``pyproject.toml`` declares where each such name lives as an entry point of the group
:data:`GROUP`, named by the name's old dotted path::

    [project.entry-points."transformer_course.moved"]
    "lib.params.REAL_MODELS" = "labs.decoder.models:REAL_MODELS"
    "lib.exercises.check" = "exercises.compat:check"

and :func:`moved` looks the name up there (``importlib.metadata``), when it is asked for. This is
how ``lib.files`` finds its fetcher too: entry points are in the installed package's metadata, in
the browser's kernel as in a checkout's ``.venv``. Importing this module imports nothing.
"""

from importlib import metadata

GROUP = "transformer_course.moved"


def moved(module: str, name: str):
    """The value of ``name``, a name the module ``module`` of ``lib`` used to have, from where it
    lives now; an AttributeError, as for any missing attribute, when it is not one of them."""
    for entry in metadata.entry_points(group=GROUP, name=f"{module}.{name}"):
        return entry.load()
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
