"""Edits of Python source by byte ranges, shared by the two mutation tools (``tools.mutate`` for
lib/, ``tools.mutate_exercises`` for the exercises' solutions): an AST node's span in the
source, its text, and the replacement of a node or of the operator written between two nodes.
A subclass decides what an edit is recorded as, in :meth:`SourceEdits.add`."""

from __future__ import annotations

import ast
import re


class SourceEdits(ast.NodeVisitor):
    """An AST visitor over ``data`` (the source as UTF-8 bytes) that proposes edits."""

    def __init__(self, data: bytes):
        self.data = data
        self.starts = [0]                            # the byte offset of each line's start
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node) -> tuple[int, int]:
        """The node's (start, end) byte offsets in the source."""
        return (self.starts[node.lineno - 1] + node.col_offset,
                self.starts[node.end_lineno - 1] + node.end_col_offset)

    def text(self, node) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode()

    def add(self, kind: str, start: int, end: int, new: str) -> None:
        """Record the edit: bytes ``start:end`` replaced by ``new``."""
        raise NotImplementedError

    def replace(self, kind: str, node, new: str) -> None:
        self.add(kind, *self.span(node), new)

    def token(self, kind: str, left, right, old: str, new: str) -> None:
        """Replace the operator ``old`` written between two operands."""
        start, end = self.span(left)[1], self.span(right)[0]
        pattern = r"\s+".join(rf"\b{w}\b" if w.isalpha() else re.escape(w) for w in old.split())
        found = re.search(pattern.encode(), self.data[start:end])
        if found:
            self.add(kind, start + found.start(), start + found.end(), new)
