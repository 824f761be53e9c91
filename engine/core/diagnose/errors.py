"""What an error NumPy raises says about the learner's code, in words a learner can act on: an
index one past the end (an array one row short), positions taken from values, a matrix product
whose inner sizes do not match. Each reading rests on the error's own message (and the line that
raised it), never on a guess about code it cannot see."""

from __future__ import annotations

import re

OUT_OF_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")
MATMUL = re.compile(r"matmul: Input operand 1 has a mismatch in its core dimension 0.*"
                    r"\(size (\d+) is different from (\d+)\)")


def error_cause(exc: BaseException, line: str = "") -> str | None:
    """The cause of ``exc`` raised at ``line`` (the learner's line of code), or None."""
    text = str(exc)
    if isinstance(exc, IndexError):
        found = OUT_OF_BOUNDS.search(text)
        if found:
            return _out_of_bounds(*(int(g) for g in found.groups()))
        if "arrays used as indices must be of integer" in text:
            return _values_as_positions(line)
    if isinstance(exc, ValueError):
        found = MATMUL.search(text)
        if found:
            return _inner_sizes(int(found.group(2)), int(found.group(1)))
    return None


def _out_of_bounds(index: int, axis: int, size: int) -> str:
    numbered = f"numbered 0 to {size - 1}" if size > 1 else "numbered 0 only" if size else "none at all"
    where = f"Along axis {axis} the array has {size} entr{'y' if size == 1 else 'ies'} ({numbered})"
    if index == size:
        return (f"{where}, and your code asks for entry {index}: one past the end. An array one entry "
                f"(one row) too short, or an index one too large: a count, a length or a `range` "
                f"that is off by one? To read entry {index}, the array needs {index + 1}.")
    if index > size:
        return (f"{where}, and your code asks for entry {index}: the array was made smaller than that "
                f"index needs ({index + 1} at least). Check the size it was made with: is it taken from "
                "the same number as the index?")
    return (f"{where}, and your code counts {-index} back from its end: further back than it reaches. "
            "The array is shorter than your code expects.")


def _values_as_positions(line: str) -> str:
    sort = " `np.sort` gives the sorted values; `np.argsort` gives the positions that sort them." \
        if "sort" in line else ""
    return ("An array used to pick entries must hold positions, whole numbers; yours holds other "
            f"numbers (values where positions were wanted?).{sort}")


def _inner_sizes(left: int, right: int) -> str:
    return (f"`a @ b` pairs each row of `a` with each column of `b`, so `a`'s last axis must be as "
            f"long as `b`'s first; here they are {left} and {right}. One of the two is the wrong "
            "array, or needs turning over (`.T`), or they are in the wrong order.")
