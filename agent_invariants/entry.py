"""The console script's entry: `--version` answered at once, anything else by the command line.

Importing the command-line framework (typer, and the pydantic it validates options with) is most
of the time of a short run, and scripts and hooks ask for the version often: it needs none of it.
Everything else, `--version` among other arguments included, goes to `cli.main`.
"""
from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ("main",)

_VERSION_ONLY = (["--version"], ["-v"], ["version"])


def main() -> NoReturn:
    if sys.argv[1:] in _VERSION_ONLY:
        from agent_invariants import __version__

        try:
            os.write(1, f"{__version__}\n".encode())
        except OSError:
            pass   # the command line reports an unwritable stdout (exit 2)
        else:
            raise SystemExit(0)
    try:
        from agent_invariants.cli import main as run
    except KeyboardInterrupt:   # Ctrl-C while starting up: no traceback, the usual exit code
        raise SystemExit(130) from None
    run()
