"""The base of a lab model's result: a frozen dataclass whose fields may also be read by name.

A lab's model returns a frozen dataclass of its own (``labs/README.md``), read by field:
``result.final``. Earlier releases returned dicts, and notebooks saved then read the same
numbers as ``result["final"]``; a result built on ``Result`` answers that too, for its fields
only, so those notebooks keep running.
"""

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Result:
    """A lab model's result; each model's result is a ``@dataclass(frozen=True)`` subclass."""

    def __getitem__(self, name: str):
        """The field ``name``: ``result["final"]`` is ``result.final``."""
        if name not in {field.name for field in fields(self)}:
            raise KeyError(name)
        return getattr(self, name)
