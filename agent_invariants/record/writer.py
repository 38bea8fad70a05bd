"""The trace `record` writes: one event per line, numbered and timed by the harness, flushed at once.

`seq` runs 1..n in write order. `time` is the wall clock read once when the agent starts plus a
monotonic clock, so it never goes back; under `--fake-clock` it is 1970-01-01T00:00:00.000Z plus
seq milliseconds, so a deterministic agent gives a byte-identical trace. Every event carries the
run's `run_id`. Each line is flushed to the file before the agent hears the reply it leads to, so
a harness that is killed leaves a valid prefix.

The file must not exist (`--force` replaces a regular file, and nothing else): a trace that
silently replaced another, or a device, would lose someone's work.
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import math
import os
import stat
import tempfile
import time
from typing import Any

import msgspec

from agent_invariants._js import shortest_digits
from agent_invariants._paths import folder_named, unnamed, utf8_name
from agent_invariants.errors import InputError
from agent_invariants.jsontext import deep_enough
from agent_invariants.output import shown
from agent_invariants.record.protocol import event_fields
from agent_invariants.record.redact import Redactor

__all__ = ("MAX_TRACE_LINE", "Clock", "LineTooLong", "TraceWriteError", "TraceWriter", "claim_file")

MAX_TRACE_LINE = 1024 * 1024
"""The longest trace line `record` writes: `check`'s default line limit."""


class LineTooLong(Exception):
    """The event would make a trace line longer than `check` reads; it is not written. (An
    agent's line within its cap, 1 MiB - 8 KiB, never does: see `_encoded`.)"""


class TraceWriteError(InputError):
    """The trace file could not be written (a full disk, a file size limit): the run ends and
    what was written stays."""


def _encoded(event: dict[str, Any]) -> bytes:
    """An event's trace line. msgspec writes a float by its shortest digits, but in full below
    1e16: `1e15`, as an agent may send it, is `1000000000000000.0`, and a line of such numbers
    within the agent's cap (1 MiB - 8 KiB, spec point 68) would grow past `check`'s limit. A line
    that would is written with each such number as short as it reads back (`1e15`, `15e-6`): no
    longer than the agent wrote it, as JSON has no shorter way to write a number."""
    line = msgspec.json.encode(event) + b"\n"
    if len(line) <= MAX_TRACE_LINE:
        return line
    with deep_enough():
        return msgspec.json.encode(_short_numbers(event)) + b"\n"


def _short_numbers(value: Any) -> Any:
    """`value` with each float written longer than its shortest form replaced by that form."""
    if value.__class__ is float:
        return _short_float(value)
    if value.__class__ is dict:
        return {key: _short_numbers(item) for key, item in value.items()}
    if value.__class__ is list:
        return [_short_numbers(item) for item in value]
    return value


def _short_float(value: float) -> Any:
    """The float, or its shortest JSON text (`1e15`, `-15e19`) where that is shorter than msgspec's."""
    written = msgspec.json.encode(value)
    if len(written) <= 3 or not math.isfinite(value) or value == 0:   # (no shorter form has fewer than 3)
        return value
    digits, point = shortest_digits(abs(value))   # the value is 0.<digits> x 10**point
    short = f"{'-' if value < 0 else ''}{digits}e{point - len(digits)}".encode()
    return msgspec.Raw(short) if len(short) < len(written) else value


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class Clock:
    """Times for the events: real (wall clock at start plus monotonic time) or fake."""

    def __init__(self, fake: bool) -> None:
        self.fake = fake
        self._wall = datetime.datetime.now(datetime.UTC)
        self._start = time.monotonic()

    def stamp(self, seq: int) -> str:
        """The `time` of the event numbered `seq`."""
        if self.fake:
            moment = _EPOCH + datetime.timedelta(milliseconds=seq)
        else:
            moment = self._wall + datetime.timedelta(seconds=time.monotonic() - self._start)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    def elapsed_ms(self) -> int | None:
        """Milliseconds since the start (None under the fake clock: durations would not repeat)."""
        return None if self.fake else round((time.monotonic() - self._start) * 1000)


def claim_file(path: str, force: bool) -> None:
    """Refuse `path` as an output unless it is new, or (with `force`) a regular file, and a path
    written as a folder's (`runs/`), which would be made (an empty one left behind) before the
    file could not be written."""
    folder = folder_named(path)
    if folder is not None:
        raise InputError(f"{shown(path)}: {folder}")
    if not utf8_name(path):
        raise InputError(f"{shown(path)}: file name is not valid UTF-8, which the report could not name: choose "
                         "another")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"{shown(path)}: cannot write: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{shown(path)}: is a directory")
    if not stat.S_ISREG(info.st_mode):   # (a link, even to a folder, a FIFO: --force would not do either)
        raise InputError(f"{shown(path)}: is not a regular file; --force replaces only regular files")
    if not force:
        raise InputError(f"{shown(path)}: already exists (use --force to replace it)")


class TraceWriter:
    """Writes the events of one run to its trace file. With a `redactor`, the file gets the
    redacted events, and a private temporary file (`judged`) the raw ones, which the rules judge.
    Where the system lets a deleted file be opened again through its descriptor (Linux's
    `/proc/self/fd`), the raw copy has no name from the start: nothing can leave its secrets on
    disk, not even `record` killed with SIGKILL (a CI job's timeout, the out-of-memory killer),
    which no handler sees. Elsewhere it is removed once the run is checked or when `record` ends
    by a signal it can catch."""

    def __init__(self, path: str, run_id: str, clock: Clock, force: bool, redactor: Redactor | None = None) -> None:
        self.path = path
        self.run_id = run_id
        self.clock = clock
        self.seq = 0
        self.size = 0
        self.last_line = b""
        self.redactor = redactor
        self.judged = path
        """The trace the rules read: the file itself, or the raw copy when redacting."""
        self.written: dict[str, Any] = {path: hashlib.blake2b()}
        """A digest of every byte written to each file (the trace, and `judged` when that is
        another): what `record` reads back must be what it wrote, not what the agent (or anyone)
        wrote there meanwhile."""
        self._raw: int | None = None
        self._stale = False   # the file --force replaces holds the old trace still
        self._raw_name: str | None = None   # the raw copy's name while it has one
        self.shortened: list[tuple[int, str, int]] = []
        """Events whose redacted values could not be marked (seq, type, and how much less was
        written: `Redactor.event`'s `shorter`)."""
        claim_file(path, force)
        folder = os.path.dirname(path)
        try:
            if folder:
                os.makedirs(folder, exist_ok=True)
            # a file --force replaces is emptied at the first event, not before: an agent that cannot
            # start writes no trace, and leaves the one that was there
            self._stale = force and os.path.lexists(path)   # (claimed: a regular file)
            flags = os.O_WRONLY | os.O_CREAT | (0 if force else os.O_EXCL) | getattr(os, "O_NOFOLLOW", 0)
            self._handle = os.open(path, flags, 0o666)
            self.open = True
            if redactor is not None:
                self._raw, self._raw_name = tempfile.mkstemp(prefix="agent-invariants-raw-", suffix=".jsonl")
                self.judged = unnamed(self._raw, self._raw_name)
                if self.judged != self._raw_name:
                    os.unlink(self._raw_name)
                    self._raw_name = None
                self.written[self.judged] = hashlib.blake2b()
        except OSError as exc:
            raise InputError(f"{shown(path)}: cannot write: {exc.strerror or exc}") from None

    def write(self, event_type: str, fields: dict[str, Any], data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write one event (`fields` without seq, type, time, run_id); return it as written."""
        self.seq += 1
        event = {"seq": self.seq, "type": event_type, "time": self.clock.stamp(self.seq), "run_id": self.run_id,
                 **event_fields(fields, data)}
        line = _encoded(event)
        shown_line = line if self.redactor is None else _encoded(self.redactor.event(event))
        shorter = 0
        while len(shown_line) > MAX_TRACE_LINE >= len(line) and self.redactor is not None and shorter < 3:
            # `[redacted]` is longer than many values: redaction must not end a run the raw trace fits
            shorter += 1
            shown_line = _encoded(self.redactor.event(event, shorter=shorter))
        if len(line) > MAX_TRACE_LINE or len(shown_line) > MAX_TRACE_LINE:
            self.seq -= 1
            raise LineTooLong(event_type)
        self.last_line = line
        if shorter:
            self.shortened.append((self.seq, event_type, shorter))
        if self._stale:
            self._emptied()
        if self._raw is not None:
            self._append(self._raw, line, self.judged)
            self.written[self.judged].update(line)
        self._append(self._handle, shown_line, self.path)
        self.written[self.path].update(shown_line)
        self.size += len(shown_line)
        return event

    def _emptied(self) -> None:
        try:
            os.ftruncate(self._handle, 0)
        except OSError as exc:
            raise TraceWriteError(f"{shown(self.path)}: cannot write the trace: {exc.strerror or exc}") from None
        self._stale = False

    def _append(self, handle: int, line: bytes, path: str) -> None:
        size = os.lseek(handle, 0, os.SEEK_CUR)
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(handle, view):]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(handle, size)   # no half line: what is there stays a valid trace
            raise TraceWriteError(f"{shown(path)}: cannot write the trace: {exc.strerror or exc}") from None

    def close(self) -> None:
        """Close the trace (the raw copy stays open, and readable, until `remove_raw`)."""
        if self.open:
            self.open = False
            os.close(self._handle)

    def remove_raw(self) -> None:
        """Remove the raw copy (once the run is checked, or when it failed)."""
        if self._raw is not None:
            with contextlib.suppress(OSError):
                os.close(self._raw)
            self._raw = None
        if self._raw_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._raw_name)
            self._raw_name = None

    def discard(self) -> None:
        """Close and remove the file (the agent never started); a file --force was to replace
        stays as it was."""
        self.close()
        self.remove_raw()
        if not self._stale:
            os.unlink(self.path)
