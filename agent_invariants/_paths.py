"""File names: as the user would name them (from the current folder, when they are inside it),
and the one name no file can have.

Messages and reports name a pack, a trace or an annotated file this way, so that they are short,
clickable, and hold no path of the machine when they need not.
"""
from __future__ import annotations

import os

__all__ = ("DANGLING", "STDIN", "folder_named", "input_name", "inside", "listed_file", "missing", "name_problem",
           "named_file_problem", "unnamed", "utf8_name")

DANGLING = "is a symbolic link that leads nowhere (its target is missing, or a loop)"

STDIN = "<stdin>"
"""How messages and reports name standard input, given as `-` (a trace or a contract)."""


def input_name(path: str) -> str:
    """How messages and reports name an input given as `path`: `<stdin>` for `-`."""
    return STDIN if path == "-" else path


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str] | None = None) -> str | None:
    """`path` relative to `folder` (default: the current one) when it is inside it, else None, and
    the caller names it another way. A file named `..notes.jsonl` is inside; `../notes.jsonl` is
    not."""
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(folder or os.curdir))
    except ValueError:   # (another drive, on Windows)
        return None
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative


def name_problem(path: str | bytes | int) -> str | None:
    """What a message says of a file named with a NUL character, or None: no file's name holds
    one, and Python refuses such a name with ValueError rather than the OSError of a missing
    file. (Names come from arguments, from the library's callers, and from files: an `extends`
    pack, a `$file` fixture.)"""
    if isinstance(path, int) or "\0" not in os.fsdecode(path):
        return None
    return "no such file (the name holds a NUL character)"


def named_file_problem(path: str) -> str | None:
    """`name_problem`'s, for a file that a report or an event names (a trace, an imported file),
    or what a message says of a name that is not UTF-8 (see `utf8_name`), or None."""
    problem = name_problem(path)
    if problem is None and not utf8_name(path):
        return "file name is not valid UTF-8; rename the file to read it"
    return problem


def utf8_name(name: str) -> bool:
    """Whether a file name is UTF-8: Python reads a name's undecodable bytes as lone surrogates,
    which no JSON, SARIF or JUnit report can hold (a report names its trace files; a contract's
    name, which reports do not quote, may be anything, as the Node tool read it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def folder_named(path: str) -> str | None:
    """What a message says of an output path written as a folder's (ending with a slash, or in `.`
    or `..`), or None: no file can be written there, and writing would first make the folder."""
    if path.endswith(("/", os.sep)) and path.strip("/" + os.sep):
        return "names a folder (it ends with a slash): name the file to write"
    if os.path.basename(path) in (os.curdir, os.pardir):
        return "names a folder: name the file to write"
    return None


def missing(path: str | os.PathLike[str] | None) -> str:
    """What a message says of a file that could not be found: "no such file", unless the name is
    a symbolic link whose target is missing (the link is there; the file it names is not)."""
    return DANGLING if path is not None and os.path.islink(path) else "no such file"


def listed_file(path: str) -> bool:
    """Whether an entry found in a folder (or by a pattern) is a file to read: a regular file or a
    link to one, or a link that leads nowhere (dangling, or a loop), so that reading it says what
    is wrong rather than leaving a trace out unsaid. A folder, a FIFO or a device is not."""
    return os.path.isfile(path) or (os.path.islink(path) and not os.path.exists(path))


def unnamed(handle: int, name: str) -> str:
    """A path that opens the file `handle` has open, anew, once its `name` is gone: Linux's
    `/proc/self/fd/N` (each open reads from the start, unlike a copy of the descriptor); elsewhere
    the name itself, which must then stay. A private copy with no name is one that no crash, not
    even SIGKILL, leaves behind."""
    path = f"/proc/self/fd/{handle}"
    try:
        return path if os.path.samestat(os.stat(path), os.stat(name)) else name
    except OSError:
        return name
