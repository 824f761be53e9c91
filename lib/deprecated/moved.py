"""Names that left ``lib``, looked up where they live now.

``lib.params`` defined the published models (``REAL_MODELS``) until they moved to the parameter
calculator's data, ``labs.decoder.models``; a notebook saved from an earlier release still runs
``from lib.params import REAL_MODELS``. This is the one import of ``labs`` from ``lib``
(declared in ``.importlinter``), made only when such a name is asked for.
"""

FROM_PARAMS = ("REAL_MODELS",)


def from_params(name):
    """The value of ``name``, a name ``lib.params`` used to define; an AttributeError for any other."""
    if name not in FROM_PARAMS:
        raise AttributeError(f"module 'lib.params' has no attribute {name!r}")
    from labs.decoder import models
    return getattr(models, name)
