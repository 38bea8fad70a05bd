"""The console script's entry: `--version` answered at once, anything else by the command line,
and the process ended without tearing the interpreter down.

Scripts and hooks ask for the version often, and it needs neither the command-line framework nor
the checker: it is printed before either is imported. Everything else, `--version` among other
arguments included, goes to `cli.main`.

When the command is done, its output is flushed and the process ends with `os._exit`: freeing
every module and object one by one, as a normal interpreter exit does, takes a third of a short
`check` (70 ms of 230 on a small machine) and changes nothing on disk. Nothing is left to do by
then: temporary files are anonymous, batch workers have been joined, reports are written and
closed. `cli.main` itself exits normally, for callers that run it in their own process.

The cyclic garbage collector runs after every 50,000 new objects rather than Python's 700:
with the default, importing the command line and the checker ran it fifty times, 5 ms of a
90 ms `check`. Garbage cycles are still collected, in bounded batches; the checker pauses the
collector anyway while it reads traces and builds reports (`_collector`).
"""
from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False   # as in __init__: typing is not imported to print the version
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ("main",)

_VERSION_ONLY = (["--version"], ["-v"], ["version"])
_YOUNG_OBJECTS = 50_000
"""New objects after which the collector runs (Python's default: 700)."""


def main() -> NoReturn:
    if sys.argv[1:] in _VERSION_ONLY:
        from agent_invariants import __version__

        try:
            os.write(1, f"{__version__}\n".encode())
        except OSError:
            pass   # the command line reports an unwritable stdout (exit 2)
        else:
            raise SystemExit(0)
    gc.set_threshold(_YOUNG_OBJECTS, *gc.get_threshold()[1:])
    try:
        from agent_invariants.cli import main as run

        run()
    except KeyboardInterrupt:   # Ctrl-C while starting up: no traceback, the usual exit code
        _end(130)
    except SystemExit as exit:
        _end(_code(exit.code))
    _end(0)


def _code(code: object) -> int:
    """The exit status Python gives a `SystemExit(code)`: None is 0, text is printed and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _end(code: int) -> NoReturn:
    """Flush what is buffered and end the process at once. An output that cannot take the rest
    is exit 2, as everywhere in the command line (cli.main has flushed stdout already, so this
    is a last check)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 2
    os._exit(code)
