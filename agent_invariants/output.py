"""Where the CLI's finished text goes: standard output, or the `--output` file, never half of it.

A report is rendered whole before anything is written (`write`), so an error never leaves half a
report. `--output` is written as a shell redirection would write it, with three exceptions that
keep files safe: a regular file is replaced atomically, an input file is refused as output
(`refuse_input_as_output`), and a missing folder is not created.

Standard output that cannot be written (a full disk, a closed pipe, started without one) raises
`CommandError`, which the CLI reports as one line and exit 2, never 1: CI reads 1 as "violations
found". `adopt_standard_streams` sets that up once, at start.
"""
from __future__ import annotations

import errno
import io
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from agent_invariants import _signals
from agent_invariants._paths import folder_named
from agent_invariants._safe import TEXT_LIMIT, inert

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

__all__ = ("CommandError", "NamedFolder", "adopt_standard_streams", "create_new", "fail", "input_at", "move_new",
           "refuse_closed_output", "refuse_input_as_output", "shown", "wants_colour", "write")


class CommandError(Exception):
    """A usage, input or output problem found by the CLI itself: one line on stderr, exit 2."""


def fail(message: str) -> NoReturn:
    raise CommandError(message)


def shown(name: str | os.PathLike[str]) -> str:
    """A file name as messages show it (escaped, cut when very long)."""
    return inert(os.fspath(name), TEXT_LIMIT)


def wants_colour(choice: str, *, to_terminal: bool) -> bool:
    """Whether to colour the text report: `choice` is `--color` (always, never or auto). Auto
    colours a terminal, unless NO_COLOR is set; FORCE_COLOR (set, and not `0`) colours any output,
    as in the tools that agree on these variables (no-color.org, force-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    return to_terminal and sys.stdout.isatty()


class NamedFolder(type(Path())):   # type: ignore[misc]
    """An `--output` path written as a folder's (`reports/`, `reports/.`): it takes no report (a
    path keeps no trailing slash or `.`, and `-o reports/` wrote a file named `reports`, as no
    shell would). Refused where a folder is, when the report is to be written: a bad input is said
    first. `written` is the path as given."""

    written = ""


def _refuse_folder_name(output: str | Path) -> None:
    """Refuse a path written as a folder's (a `NamedFolder`, or such text: `_paths.folder_named`)."""
    text = output.written if isinstance(output, NamedFolder) else str(output)
    folder = folder_named(text)
    if folder is not None:
        fail(f"{shown(text)}: {folder}")


def write(text: str, output: Path | None) -> None:
    """Write the finished text (a report, a listing) to stdout or to `output`. Lone surrogates
    (undecodable bytes of a file name) are written as `\\udcff` escapes rather than failing."""
    if output is not None:
        _refuse_folder_name(output)
    data = text.encode("utf-8", "backslashreplace")
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        _write_file(output, data)


def _write_file(output: Path, data: bytes) -> None:
    """Write `data` to `output` as a shell redirection would, but never half a report.

    Our own stdout or stderr (`-o /dev/stdout`), whatever it is, is written through its
    descriptor, at its offset, as the shell would. A regular file (or a symlink to one: the link
    stays, its target is replaced) is replaced atomically by a complete one from a temporary
    file in the same folder; it keeps its mode (and owner, where allowed), and a new file gets
    the mode the umask gives. Another device, FIFO or socket (`-o /dev/null`) is written in
    place; a folder is refused. A missing folder is not created: a typo there should not
    scatter reports."""
    try:
        info = os.stat(output)
    except FileNotFoundError:
        info = None   # a new file, or a dangling symlink: its target will be created
    except OSError as exc:
        fail(f"{shown(output)}: cannot write: {exc.strerror or exc}")
    _refuse_held_stream(output)
    standard = _standard_descriptor(info)
    if standard is not None:
        sys.stdout.flush()
        _write_all(standard, data, output)
    elif info is None or stat.S_ISREG(info.st_mode):
        _replace_file(output, data, info)
    elif stat.S_ISDIR(info.st_mode):
        fail(f"{shown(output)}: is a directory")
    else:
        _write_in_place(output, data)


def _replace_file(output: Path, data: bytes, info: os.stat_result | None) -> None:
    target = os.path.realpath(output)
    with _signals.held():   # from the temporary file's creation to its rename or removal
        handle, temporary = _temporary_beside(output, target)
        try:
            with os.fdopen(handle, "wb") as stream:
                _keep_mode(stream.fileno(), info)
                stream.write(data)
            os.replace(temporary, target)
        except OSError as exc:
            os.unlink(temporary)
            fail(f"{shown(output)}: cannot write: {exc.strerror or exc}")


def _temporary_beside(output: Path, target: str) -> tuple[int, str]:
    """A new temporary file in the folder of `target` (the real path of `output`), which the
    report is written to and then renamed; `output` refused when the folder takes no new file."""
    import tempfile  # here: a report written to stdout needs none (start-up)

    folder, name = os.path.split(target)
    try:
        return tempfile.mkstemp(prefix=f".{name[:40]}.", suffix=".tmp", dir=folder)
    except FileNotFoundError:   # (a folder of /proc or /sys exists, yet takes no new file)
        fail(f"{shown(output)}: cannot write: " + (
            "its folder takes no new files" if os.path.isdir(folder) else "no such folder"))
    except OSError as exc:
        fail(f"{shown(output)}: cannot write: {exc.strerror or exc}")


def _keep_mode(handle: int, info: os.stat_result | None) -> None:
    """Give the temporary file the mode (and owner) of the file it replaces, or else the mode
    a new file would get (mkstemp makes it 0600). Best effort: only root may give a file away,
    and some file systems have no modes; the report matters more."""
    if not hasattr(os, "fchmod"):
        return
    if info is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        mode = stat.S_IMODE(info.st_mode)
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            _ignoring_errors(os.fchown, handle, info.st_uid, info.st_gid)
    _ignoring_errors(os.fchmod, handle, mode)


def _ignoring_errors(change: Callable[..., object], *arguments: object) -> None:
    with suppress(OSError):
        change(*arguments)


def _standard_descriptor(info: os.stat_result | None) -> int | None:
    """1 or 2 when `info` is the file our stdout or stderr is, else None."""
    for descriptor in (1, 2):
        try:
            if info is not None and os.path.samestat(info, os.fstat(descriptor)):
                return descriptor
        except OSError:
            continue
    return None


def _write_in_place(output: Path, data: bytes) -> None:
    """A device, FIFO or socket: open it for writing (no truncation, no creation) and write."""
    try:
        handle = os.open(output, os.O_WRONLY)
    except OSError as exc:
        fail(f"{shown(output)}: cannot write: {exc.strerror or exc}")
    try:
        _write_all(handle, data, output)
    finally:
        os.close(handle)


def _write_all(handle: int, data: bytes, output: Path) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(handle, view):]
    except OSError as exc:
        fail(f"{shown(output)}: cannot write: {exc.strerror or exc}")


def refuse_unwritable(output: str | Path, made: Iterable[str] = ()) -> None:
    """Refuse, before any work, an `--output` that `write_output` would refuse at the end: a
    folder; a file (or a name) in a folder that takes no new file (read-only, /proc, no write
    permission), tried with the temporary file the report will be written to; or a file in a
    folder that does not exist and that none of the files `made` before the report (`record`'s
    trace, whose folders it creates) will make (`record` would have run the agent, and written
    its trace, first). A device or FIFO is written in place at the end (`/dev/full` tells only
    then)."""
    if output == "-":
        return
    _refuse_folder_name(output)
    if os.path.isdir(output):
        fail(f"{shown(output)}: is a directory")
    folder = os.path.dirname(os.path.realpath(output))
    exists = os.path.exists(output)
    if os.path.isdir(folder) and (not exists or os.path.isfile(output)) \
            and _standard_descriptor(_stat_or_none(output)) is None:
        with _signals.held():   # the report's temporary file, tried: made and removed at once
            handle, temporary = _temporary_beside(Path(output), os.path.realpath(output))
            os.close(handle)
            os.unlink(temporary)
        return
    if exists:
        return
    if not any(os.path.commonpath([folder, os.path.realpath(path)]) == folder for path in made):
        fail(f"{shown(output)}: cannot write: no such folder")


def _stat_or_none(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def refuse_input_as_output(output: Path | None, *inputs: str | Path | None) -> None:
    """Refuse an `--output` that is one of the input files, before reading anything: writing
    the report there would destroy the trace or contract (`-o` typed for `-t`, say). Refuse one
    that names a standard stream the tool was started without, too (`_refuse_held_stream`)."""
    if output is None:
        return
    _refuse_held_stream(output)
    clash = input_at(output, *inputs)
    if clash is not None:
        fail(f"{shown(output)}: is also an input ({shown(clash)}); refusing to overwrite it")


def input_at(output: str | Path, *inputs: str | Path | None) -> str | Path | None:
    """The input (of `inputs`; None and `-` are skipped) that the existing regular file `output`
    is, or None."""
    if not os.path.exists(output):
        return None   # nothing there yet: no input can be it (same_file tests the rest)
    return next((path for path in inputs if path is not None and path != "-" and same_file(output, path)), None)


def same_file(one: str | Path, other: str | Path) -> bool:
    """Whether `one`, a file about to be written, would be `other`: the same regular file when
    `one` exists (a terminal or /dev/stdout may well be the device /dev/stdin is), else the same
    place once links and `..` are resolved."""
    try:
        written = os.stat(one)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)
    try:
        return stat.S_ISREG(written.st_mode) and os.path.samestat(written, os.stat(other))
    except OSError:
        return False


def create_new(files: list[tuple[Path, str]], folder: Path) -> None:
    """Create each (path, text) of `files` in `folder` (made if missing), all of them or none (nor
    the folders made for them): a file already there, even a dangling symlink, is refused before
    anything is written."""
    if os.path.exists(folder) and not os.path.isdir(folder):   # (mkdir would say "File exists")
        fail(f"{shown(folder)}: not a folder")
    for target, _ in files:
        if os.path.lexists(target):   # a dangling symlink too: never write through it
            fail(f"{shown(target)}: already exists; refusing to overwrite it (remove it, or give another folder)")
    created: list[Path] = []
    made = [parent for parent in (folder, *folder.parents) if not os.path.lexists(parent)]
    writing = folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for target, text in files:
            writing = target
            with open(target, "x", encoding="utf-8", newline="\n") as handle:
                created.append(target)
                handle.write(text)
    except OSError as exc:
        for target in created:   # both files or neither: a second try would refuse a half set
            target.unlink(missing_ok=True)
        for parent in made:      # and no folder made for them (deepest first; one in use stays)
            with suppress(OSError):
                parent.rmdir()
        fail(f"{shown(exc.filename or writing)}: cannot write: {exc.strerror or exc}")


def move_new(source: str | Path, target: str | Path) -> None:
    """Move `source` to `target`, which must not exist (FileExistsError if it does): linked (which
    refuses a name that is taken, even one made meanwhile), then unlinked; renamed where the file
    system has no links (checked just before)."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:   # (no hard links here: FAT, some network file systems)
        if os.path.lexists(target):
            raise FileExistsError(target) from None
        os.replace(source, target)
        return
    os.unlink(source)


def adopt_standard_streams() -> None:
    """Standard streams that fail in one clear way (exit 2, one line) instead of three obscure ones.

    A descriptor the tool was started without (`<&-`, `>&-`, `2>&-`) is held open on the null
    device, so no file opened later takes its number (a report written to fd 2 by accident);
    standard input and output still say they are closed when used. Standard output becomes a
    `_StandardOutput`, for every command and for click's own help output alike."""
    for number, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        if stream is None:
            _hold(number)
    if sys.stdin is None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_ClosedInput()), encoding="utf-8")
    try:
        descriptor = None if sys.stdout is None else sys.stdout.fileno()
    except (OSError, ValueError):
        return   # not a real descriptor (the caller redirected sys.stdout): leave it alone
    raw = _StandardOutput(descriptor)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=raw.isatty())


def refuse_closed_output() -> None:
    """Refuse a report bound for a standard output the tool was started without (`>&-`), or with
    one open for reading only (`1<file`), before any work: `record` would run the agent, with its
    side effects, and only then find it."""
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    if not isinstance(raw, _StandardOutput):
        return   # (the caller redirected sys.stdout)
    if raw.never_open:
        fail("standard output is closed: the report has nowhere to go (name a file with --output)")
    if raw.read_only:
        fail("standard output is open for reading only: the report has nowhere to go (name a file with --output)")


def _hold(descriptor: int) -> None:
    try:
        os.fstat(descriptor)
        return   # something already holds the number
    except OSError:
        pass
    spare = os.open(os.devnull, os.O_RDWR)
    if spare != descriptor:
        os.dup2(spare, descriptor)
        os.close(spare)
    _HELD.add(descriptor)


_HELD: set[int] = set()
"""The standard descriptors the tool was started without, held on the null device (`_hold`)."""
_STREAMS = {0: "standard input", 1: "standard output", 2: "standard error"}
_DESCRIPTOR_LINK = re.compile(r"/proc/([0-9]+)(?:/task/[0-9]+)?/fd/([0-9]+)")


def _refuse_held_stream(output: str | Path) -> None:
    """Refuse an `--output` that names, through `/dev/stdout`, `/dev/fd/1` or `/proc/self/fd/1`
    (links followed one at a time), a standard stream the tool was started without (`>&-`).
    That descriptor is held on the null device, so the report would vanish there while the
    exit code said it was written; `-o -` says the stream is closed, and so does this."""
    if not _HELD:
        return
    path = os.path.abspath(output)
    for _ in range(40):   # (the links the system itself follows, at most)
        folder, name = os.path.split(path)
        folder = os.path.realpath(folder)   # (`/dev/fd` and `/proc/self` are links to our /proc/PID)
        place = os.path.join(folder, name)
        found = _DESCRIPTOR_LINK.fullmatch(place)
        if found is not None and int(found[1]) == os.getpid() and int(found[2]) in _HELD:
            fail(f"{shown(output)}: cannot write: it is {_STREAMS.get(int(found[2]), 'a descriptor')}, "
                 "which the command was started without")
        try:
            target = os.readlink(place)
        except OSError:
            return   # not a link (or nothing there): a file of its own
        path = os.path.join(folder, target)


class _StandardOutput(io.RawIOBase):
    """Standard output as the commands see it.

    A write that fails (the reader closed the pipe, the disk is full, there is no stdout) raises
    `CommandError`: one line, exit 2. Left an OSError, typer would make a broken pipe exit 1, which CI
    reads as "violations found", and anything else a traceback. A reader that went away
    (`... | head -c 10`) is reported like any other failure; with stderr gone too, the exit 2
    is all that remains. Once a write has failed the rest are dropped, so the flush at exit
    cannot fail again and change the exit code."""

    def __init__(self, descriptor: int | None) -> None:
        super().__init__()
        self._descriptor = descriptor
        self._failed = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._descriptor is not None and os.isatty(self._descriptor)

    @property
    def never_open(self) -> bool:
        """Whether the tool was started without a standard output."""
        return self._descriptor is None

    @property
    def read_only(self) -> bool:
        """Whether standard output was opened for reading only (no write to it can succeed)."""
        import fcntl  # (POSIX, as `record`, which asks)

        if self._descriptor is None:
            return False
        try:
            return fcntl.fcntl(self._descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
        except OSError:
            return False

    def fileno(self) -> int:
        if self._descriptor is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self._descriptor

    def write(self, data: ReadableBuffer) -> int:
        if self._failed:
            return memoryview(data).nbytes
        if self._descriptor is None:
            self._give_up("standard output is closed")
        try:
            return os.write(self._descriptor, data)
        except OSError as exc:
            self._give_up(f"standard output: cannot write: {exc.strerror or exc}")

    def _give_up(self, message: str) -> NoReturn:
        self._failed = True
        raise CommandError(message)


class _ClosedInput(io.RawIOBase):
    """Standard input when the tool was started without one: reading it is an error (an empty
    trace would pass)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        raise OSError(errno.EBADF, "standard input is closed")
