"""The agent process: started in its own session, its pipes read and written without blocking.

`record` must end every run within its timeouts, whatever the agent does: write without end,
never read its stdin, hold stdout open from a grandchild, ignore SIGTERM. So nothing here
blocks: stdout and stderr are read as they come, replies wait in a buffer until stdin takes
them, and every wait is a `select` with a deadline.

- stdout is split into lines as it arrives. The caps count raw bytes from the start, newlines
  and blank lines included: a line is refused as soon as its 1,040,385th byte arrives without a
  newline (it is never buffered further), and the stream as soon as its 64 MiB + 1st byte
  arrives. Either becomes a `Limit` in the queue of lines, after the lines before it.
- Lines wait in that queue while the harness is busy (a fixture's delay). Once 8 MiB wait there,
  stdout is not read until the harness has handled some: the agent then waits on its pipe, as on
  any slow reader. (Read on regardless, a flood of `{}` lines took 150 bytes of memory for each 3
  it wrote: gigabytes before the 64 MiB cap.) While a reply waits for the agent to read it, and
  once the run is ending, stdout is read whatever the queue holds (holding it then would deadlock
  an agent that writes its calls before it reads their replies); what comes while the queue is
  full then waits as raw bytes (`_backlog`, at most the 64 MiB cap), split into lines as the queue
  empties. The caps still apply as the bytes arrive: no more than the line that crosses one is
  kept, and blank lines restart the idle timer when they are read, not when they are split.
- stderr is drained all the time, so it never blocks the agent; its last 1 MiB is kept.
- The group (the agent and whatever it started, unless it left the session) is ended with
  SIGTERM, then SIGKILL 2 s later if any member remains.
"""
from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from agent_invariants.record.fixtures import MAX_MESSAGE_BYTES

__all__ = ("GRACE_SECONDS", "MAX_STDERR_BYTES", "MAX_STDOUT_BYTES", "Agent", "Limit", "Line")

MAX_STDOUT_BYTES = 64 * 1024 * 1024
"""The most the agent may write to stdout in one run."""
MAX_STDERR_BYTES = 1024 * 1024
"""How much of the agent's stderr is kept (the last part)."""
GRACE_SECONDS = 2.0
"""How long the group has between SIGTERM and SIGKILL."""
_CHUNK = 65_536
_MAX_QUEUED_BYTES = 8 * 1024 * 1024
"""How much may wait in the queue of lines, each line counted with `_LINE_COST` more (what
holding it costs beyond its text)."""
_LINE_COST = 128
_BLANK_LINES = re.compile(rb"(?:[ \t\r\f\v]*\n)+")
"""A run of blank lines (nothing but whitespace before each newline): taken in one step."""
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")
"""A blank line, after the newline that ends the line before it."""
_WHITESPACE = b" \t\r\n\f\v"


class Line(NamedTuple):
    """A complete stdout line (without `\\n` or a trailing `\\r`) and its 1-based number."""

    text: bytes
    number: int


class Limit(NamedTuple):
    """An output cap was crossed (`line` or `total`) on line `number`."""

    kind: str
    number: int


class Agent:
    """The running agent: its process, what it wrote, and what waits to be sent to it."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str | None) -> None:
        """Start `argv` (a PATH lookup, no shell) in a new session; OSError when it cannot start."""
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
            start_new_session=True, close_fds=True, bufsize=0)
        self.group = self.process.pid
        assert self.process.stdin is not None and self.process.stdout is not None and self.process.stderr is not None
        self._stdin: int | None = self.process.stdin.fileno()
        self._stdout: int | None = self.process.stdout.fileno()
        self._stderr: int | None = self.process.stderr.fileno()
        for handle in (self._stdin, self._stdout, self._stderr):
            os.set_blocking(handle, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self._selector.register(self._stderr, selectors.EVENT_READ)
        self.lines: deque[Line | Limit] = deque()
        self._queued = 0   # the bytes the queue holds, as _MAX_QUEUED_BYTES counts them
        self.stdout_bytes = 0
        self.stderr_bytes = 0
        self.stderr_tail = bytearray()
        self._partial = bytearray()
        self._backlog = bytearray()   # what was read while the queue was full, split into lines up to
        self._backlog_at = 0          # here (it is emptied once all of it is)
        self._backlog_blank = False   # whether the backlog's last line so far is blank (whitespace only)
        self._backlog_line = 0   # how many bytes of the backlog's last line it holds (with _partial's)
        self._after_backlog: str | None = None   # what follows the backlog: "total" (the cap), "eof", or None
        self._line_number = 1
        self.blank_line_at = 0.0   # when a blank line was last read (monotonic): it restarts the idle timer too
        self._limited = False
        self._pending = bytearray()
        self._terminated_at: float | None = None   # when the group got SIGTERM
        self._ended = False

    @property
    def stdout_done(self) -> bool:
        return self._stdout is None

    @property
    def sending(self) -> bool:
        """Whether a reply is still waiting for the agent to read it."""
        return bool(self._pending)

    def next_line(self) -> Line | Limit:
        """The first line of the queue (there must be one), taken off it."""
        item = self.lines.popleft()
        if isinstance(item, Line):
            self._queued -= len(item.text) + _LINE_COST
        if self._backlog or self._after_backlog:
            self._refill()
        return item

    def _refill(self) -> None:
        """Split the backlog into the queue while it has room; once all of it is split, what
        followed it: the total cap, or the end of stdout (the last line, if it had no newline)."""
        while self._backlog and self._queued < _MAX_QUEUED_BYTES:
            # read from an offset, not cut from the front: a bytearray cut below half its size is
            # copied into a smaller one while it is still held (64 MiB behind a reply took 140 MB)
            start = self._backlog_at
            self._backlog_at += _CHUNK
            if self._backlog_at >= len(self._backlog):
                piece, self._backlog, self._backlog_at = bytes(self._backlog[start:]), bytearray(), 0
            else:
                piece = bytes(self._backlog[start:self._backlog_at])
            self._split(piece, noting_blanks=False)   # (a line over the cap ends it: `_limit` empties it)
        if self._backlog or self._after_backlog is None:
            return
        after, self._after_backlog = self._after_backlog, None
        if after == "total":
            self._limit("total")
        elif self._partial and not self._limited:
            self._line(bytes(self._partial), noting_blanks=False)   # a last line without `\n`
            self._partial.clear()

    def send(self, data: bytes) -> None:
        """Queue `data` for the agent's stdin and write what the pipe takes now."""
        if self._stdin is None:
            return   # the agent closed its stdin, or it was closed: nothing more reaches it
        self._pending += data
        self._write()

    def close_stdin(self) -> None:
        """Close the agent's stdin (what was not sent is dropped)."""
        if self._stdin is not None:
            if self._stdin in self._selector.get_map():
                self._selector.unregister(self._stdin)
            self._pending.clear()
            self.process.stdin.close()   # type: ignore[union-attr]
            self._stdin = None

    def wait(self, seconds: float, also: int | None = None) -> None:
        """Wait at most `seconds` for output (read it) or for room in stdin (fill it), or until
        `also` (a descriptor of the caller's) can be read."""
        if also is None and self._stdout is None and self._stderr is None and not self._pending:
            time.sleep(max(0.0, seconds))   # (nothing to select on)
            return
        self._hold_stdout()
        if also is not None:
            self._selector.register(also, selectors.EVENT_READ)
        try:
            ready = self._selector.select(max(0.0, seconds))
        finally:
            if also is not None:
                self._selector.unregister(also)
        for key, _ in ready:
            if key.fd == self._stdin:
                self._write()
            elif key.fd == self._stdout:
                self._read_stdout()
            elif key.fd == self._stderr:
                self._read_stderr()

    def _hold_stdout(self) -> None:
        """Read stdout while the queue of lines has room; and whatever it holds while a reply waits
        for the agent to read it (an agent may write many calls before it reads their replies:
        holding its stdout then would hold both sides), once the run is ending, or once what comes
        is discarded."""
        if self._stdout is None:
            return
        registered = self._stdout in self._selector.get_map()
        if self._queued < _MAX_QUEUED_BYTES or self._pending or self._ended or self._limited:
            if not registered:
                self._selector.register(self._stdout, selectors.EVENT_READ)
        elif registered:
            self._selector.unregister(self._stdout)

    def _write(self) -> None:
        assert self._stdin is not None
        try:
            written = os.write(self._stdin, self._pending)
        except BlockingIOError:
            written = 0
        except BrokenPipeError:
            self.close_stdin()   # not an error in itself: how the run ends says what happened
            return
        del self._pending[:written]
        registered = self._stdin in self._selector.get_map()
        if self._pending and not registered:
            self._selector.register(self._stdin, selectors.EVENT_WRITE)
        elif not self._pending and registered:
            self._selector.unregister(self._stdin)

    @staticmethod
    def _read(handle: int) -> bytes | None:
        """What the pipe holds now (b"" at its end), or None when nothing is there yet."""
        try:
            return os.read(handle, _CHUNK)
        except BlockingIOError:
            return None

    def _read_stdout(self) -> None:
        assert self._stdout is not None
        chunk = self._read(self._stdout)
        if chunk is None:
            return
        if not chunk:
            self._stdout_closed()
            return
        if self._limited:
            return   # the run is ending: what follows the cap is not read as lines
        room = MAX_STDOUT_BYTES - self.stdout_bytes
        self.stdout_bytes += len(chunk)
        if self._backlog or self._queued >= _MAX_QUEUED_BYTES:
            self._keep(chunk[:room], over=len(chunk) > room)
            return
        self._split(chunk[:room])
        if len(chunk) > room and not self._limited:
            self._limit("total")

    def _keep(self, chunk: bytes, *, over: bool) -> None:
        """Put what was read while the queue is full in the backlog, up to the byte that crosses
        the line cap (the split finds it there) or the total cap (`over`): what follows either
        is not read as lines. A blank line read now restarts the idle timer now."""
        if not self._backlog:
            self._backlog_blank = not self._partial.strip(_WHITESPACE)
            self._backlog_line = len(self._partial)
        first_end = chunk.find(b"\n")
        if self._backlog_line + (len(chunk) if first_end < 0 else first_end) > MAX_MESSAGE_BYTES:
            chunk = chunk[:MAX_MESSAGE_BYTES + 1 - self._backlog_line]
            self._limited, over = True, False
        elif over:
            self._limited, self._after_backlog = True, "total"
        if _BLANK_LINE.search((b"\n" if self._backlog_blank else b"x") + chunk):
            self.blank_line_at = time.monotonic()
        last_end = chunk.rfind(b"\n")
        if last_end < 0:
            self._backlog_blank = self._backlog_blank and not chunk.strip(_WHITESPACE)
            self._backlog_line += len(chunk)
        else:
            self._backlog_blank = not chunk[last_end + 1:].strip(_WHITESPACE)
            self._backlog_line = len(chunk) - last_end - 1
        self._backlog += chunk

    def _split(self, chunk: bytes, *, noting_blanks: bool = True) -> None:
        """Split stdout into the queue of lines. Blank lines restart the idle timer, unless they
        come from the backlog (they did when they were read)."""
        start = 0
        while True:
            if not self._partial:   # at the start of a line: blank lines restart the idle timer, nothing more
                blanks = _BLANK_LINES.match(chunk, start)
                if blanks is not None:
                    self._line_number += chunk.count(b"\n", start, blanks.end())
                    if noting_blanks:
                        self.blank_line_at = time.monotonic()
                    start = blanks.end()
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if len(self._partial) + len(piece) > MAX_MESSAGE_BYTES:
                self._limit("line")
                return
            self._partial += piece
            if end < 0:
                return
            self._line(bytes(self._partial), noting_blanks=noting_blanks)
            self._partial.clear()
            start = end + 1

    def _line(self, text: bytes, *, noting_blanks: bool = True) -> None:
        if text.endswith(b"\r"):
            text = text[:-1]
        if text.strip(_WHITESPACE):
            self.lines.append(Line(text, self._line_number))
            self._queued += len(text) + _LINE_COST
        elif noting_blanks:
            self.blank_line_at = time.monotonic()
        self._line_number += 1

    def _limit(self, kind: str) -> None:
        """A cap was crossed: the queue ends with a Limit, and nothing after it is read as lines."""
        self._limited = True
        self._partial.clear()
        self._backlog, self._backlog_at = bytearray(), 0
        self._after_backlog = None
        self.lines.append(Limit(kind, self._line_number))

    def _stdout_closed(self) -> None:
        assert self._stdout is not None
        if self._backlog:
            self._after_backlog = self._after_backlog or "eof"   # the last line comes after the backlog
            if self._backlog_line and self._backlog_blank:
                self.blank_line_at = time.monotonic()   # it is blank, and read now
        elif self._partial and not self._limited:
            self._line(bytes(self._partial))   # a last line without `\n`
            self._partial.clear()
        if self._stdout in self._selector.get_map():
            self._selector.unregister(self._stdout)
        self.process.stdout.close()   # type: ignore[union-attr]
        self._stdout = None

    def _read_stderr(self) -> None:
        assert self._stderr is not None
        chunk = self._read(self._stderr)
        if chunk is None:
            return
        if not chunk:
            self._selector.unregister(self._stderr)
            self.process.stderr.close()   # type: ignore[union-attr]
            self._stderr = None
            return
        self.stderr_bytes += len(chunk)
        self.stderr_tail += chunk
        if len(self.stderr_tail) > MAX_STDERR_BYTES:
            del self.stderr_tail[:len(self.stderr_tail) - MAX_STDERR_BYTES]

    def exited(self) -> int | None:
        """The agent's exit status once it has exited (negative: the signal that ended it)."""
        return self.process.poll()

    def group_alive(self) -> bool:
        """Whether any process of the agent's group is left (the agent itself reaped first)."""
        self.process.poll()
        try:
            os.killpg(self.group, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True   # (PermissionError too: a member is there, under another user)

    def signal_group(self, signum: int) -> None:
        if signum == signal.SIGTERM and self._terminated_at is None:
            self._terminated_at = time.monotonic()
        with contextlib.suppress(ProcessLookupError, PermissionError):   # the group is gone, or left us
            os.killpg(self.group, signum)

    def end_group(self, *, keep_reading: bool) -> None:
        """SIGTERM to the group, then SIGKILL after the grace if any member remains; meanwhile
        stderr is drained and stdout read (into `lines`, with `keep_reading`, else discarded).
        Returns once the agent is reaped and stdout is closed or the grace is over. Once only."""
        if self._ended:
            return
        self._ended = True
        self.close_stdin()
        if not keep_reading:
            self._limited = True   # messages that arrive now are discarded
        if self._terminated_at is None and self.group_alive():
            self.signal_group(signal.SIGTERM)
        deadline = (self._terminated_at or time.monotonic()) + GRACE_SECONDS   # 2 s after the first SIGTERM
        while time.monotonic() < deadline:
            if not self.group_alive() and self._stdout is None:
                break
            self.wait(min(0.02, deadline - time.monotonic()))
        if self.group_alive():
            self.signal_group(signal.SIGKILL)
        self.process.wait()
        self.drain()

    def drain(self) -> None:
        """Read what is left in the pipes without waiting, then close them."""
        for _ in range(64):
            if self._stdout is None and self._stderr is None:
                break
            before = (self.stdout_bytes, self.stderr_bytes)
            self.wait(0)
            if (self.stdout_bytes, self.stderr_bytes) == before:
                break
        for name in ("_stdout", "_stderr"):
            handle = getattr(self, name)
            if handle is not None:
                if handle in self._selector.get_map():
                    self._selector.unregister(handle)
                setattr(self, name, None)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        self.close_stdin()
        self._selector.close()
