"""The weights' earlier names, and a class decorator that lets a class answer to them.

Earlier releases named the FFN's matrices W1 and W2 (and their biases b1 and b2) and a block's
norm gains attention_norm, ffn_norm and final_norm; a learner's saved notebook may still read
``example.W1`` or build ``BlockWeights(..., W1=..., W2=...)``.
"""

import dataclasses
import functools

RENAMED = {
    "W1": "W_up",
    "b1": "b_up",
    "W2": "W_down",
    "b2": "b_down",
    "attention_norm": "attention_norm_gain",
    "ffn_norm": "ffn_norm_gain",
    "final_norm": "final_norm_gain",
}


def _field_names(cls):
    if dataclasses.is_dataclass(cls):
        return {field.name for field in dataclasses.fields(cls)}
    return set(cls._fields)                                  # a NamedTuple


def earlier_names(cls):
    """Let ``cls`` (a dataclass or a NamedTuple) answer to the earlier names of its fields in
    ``RENAMED``: as attributes (``w.W1`` reads ``w.W_up``) and, for a dataclass, as constructor
    keywords (``BlockWeights(..., W1=a)`` fills ``W_up``) and in assignments (``w.W1 = a``)."""
    current = {old: new for old, new in RENAMED.items() if new in _field_names(cls)}

    def __getattr__(self, name):
        if name in current:
            return getattr(self, current[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    cls.__getattr__ = __getattr__
    if dataclasses.is_dataclass(cls):
        cls.__init__ = _accepting(cls.__init__, current)
        assign = cls.__setattr__
        cls.__setattr__ = lambda self, name, value: assign(self, current.get(name, name), value)
    return cls


def _accepting(init, current):
    """``init`` taking the earlier keyword names too."""
    @functools.wraps(init)
    def __init__(self, *args, **keywords):
        for old in [name for name in keywords if name in current]:
            if current[old] in keywords:
                raise TypeError(f"give {current[old]} or its earlier name {old}, not both")
            keywords[current[old]] = keywords.pop(old)
        init(self, *args, **keywords)
    return __init__
