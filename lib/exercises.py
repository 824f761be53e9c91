"""An old module path, kept for notebooks saved from earlier releases (``from lib.exercises import
____, check, hint, solution``): its names now live in the engine, and ``lib.deprecated.moved``
finds them where the course declares them (``exercises/compat.py``). ``python -m lib.exercises``,
the command line of those releases, says where its commands went."""

import sys

from .deprecated.moved import moved

NAMES = ("____", "check", "hint", "solution")


def __getattr__(name):
    if name in NAMES:
        return moved(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_moved(argv: list[str]) -> int:
    """What ``python -m lib.exercises`` says now: where the command went, with exit code 2."""
    command = " ".join(argv) or "COMMAND"
    print(f"python -m lib.exercises is no longer a command: use python -m engine {command} (or, for solve and "
          f"report, ./course {command}); python -m engine --help lists its commands.", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(command_moved(sys.argv[1:]))
