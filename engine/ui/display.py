"""Showing things in the notebook: rich output with a plain-text fallback, and whether a kernel
that shows widgets is running."""

from __future__ import annotations


class Html:
    """Rich output: HTML in a notebook, its ``text`` in plain Python and in text-only front ends."""

    def __init__(self, html_text: str, text: str):
        self.html, self.plain = html_text, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.plain


def show(obj) -> None:
    """Display ``obj`` in the notebook, or print its text outside IPython."""
    try:
        from IPython.display import display
    except ImportError:  # plain Python
        print(repr(obj))
        return
    display(obj)


def shell():
    """The running IPython shell (a notebook kernel, or the IPython console), or None."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def in_kernel() -> bool:
    """True in a notebook kernel: ipykernel and the Pyodide kernel both show widgets; a terminal
    IPython does not."""
    running = shell()
    return running is not None and type(running).__name__ != "TerminalInteractiveShell"
