"""Where traces come from: files, standard input, bytes and in-memory events, read as a stream.

A trace is JSON Lines (one event object per line; blank lines and lines starting with `#` are
skipped) or one JSON array of events, told apart by its first character that is not whitespace.
The reader decodes 64 KiB at a time straight into `Event`s (`read_jsonl`, `read_array`),
validates them exactly as contract v1 requires (`events`), and remembers the physical line of
every event without holding the events: memory stays flat however long the trace is. Every
problem raises `TraceError` naming the trace and the line.

    for event in iter_events("run.jsonl"):
        print(event.seq, event.type)
"""
from __future__ import annotations

import functools
import operator
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from io import BytesIO
from typing import Any, BinaryIO

import msgspec

from agent_invariants._js import MORE, first_significant, replace_lone_surrogates
from agent_invariants._paths import input_name, missing, name_problem, named_file_problem
from agent_invariants._safe import TEXT_LIMIT, inert
from agent_invariants.errors import TraceError
from agent_invariants.events import Event, InvalidEvent, accept, decode_lax_event
from agent_invariants.jsontext import AS_TRACE, INVALID_TOO_DEEP, decode_problem, text_shape, too_deep_at, wide_unicode
from agent_invariants.linemap import LineMap
from agent_invariants.notices import FieldSample
from agent_invariants.read_array import array_batches
from agent_invariants.read_jsonl import content_length, jsonl_batches
from agent_invariants.read_state import ReadState

__all__ = (
    "DEFAULT_MAX_LINE_BYTES",
    "EventList",
    "TraceFile",
    "TraceSource",
    "check_file_name",
    "iter_events",
    "open_trace",
    "read_trace",
)

DEFAULT_MAX_LINE_BYTES = 1 << 20
_CHUNK_BYTES = 1 << 16


class TraceSource:
    """What the engine reads: an iterable of validated events that knows where each came from.

    `name` labels the source in error messages; `path` is the file it was read from (`-` for
    standard input) or None for input that has no file.
    """

    name: str
    path: str | None = None
    run_id: str | None = None
    """The run an imported trace holds (see `importers`); None for native traces."""

    def __iter__(self) -> Iterator[Event]:
        raise NotImplementedError

    def batches(self) -> Iterator[list[Event]]:
        """The events in lists (one per chunk read), which is how the engine consumes them."""
        batch: list[Event] = []
        for event in self:
            batch.append(event)
            if len(batch) >= 4096:
                yield batch
                batch = []
        if batch:
            yield batch

    def line_of(self, index: int) -> int | None:
        """Physical line (1-based) of the event at `index`, or None when the input has no lines."""
        return self.lines_of([index]).get(index)

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        """Physical line of each event index asked for (none when the input has no lines)."""
        return {}

    def line_lengths_of(self, indices: Iterable[int]) -> dict[int, int]:
        """Length, in UTF-16 code units, of the line of each event index asked for: known only for
        files read with `line_lengths=True` (SARIF regions end at the end of the line)."""
        return {}

    def spans_of(self, indices: Iterable[int]) -> dict[int, str]:
        """The span (or run) of another tool's trace each event index asked for came from: only
        for imported traces (see `importers`)."""
        return {}

    def field_sample(self) -> dict[str, tuple[int, int]]:
        """The field names of the first `notices.FIELD_SAMPLE` events, each with how many of them
        had it and the index of the first: only for sources that keep them (after reading)."""
        return {}


class TraceFile(TraceSource):
    """A trace in a file, on standard input (`-`), or in memory as bytes; read as a stream.

    Iterate it once to get the events; afterwards `lines_of(indices)` gives their physical lines
    (and `line_lengths_of(indices)` the lengths of those lines, when asked for with
    `line_lengths=True`). Both are learnt during the one read (`LineMap`), so a pipe works too.
    """

    def __init__(self, source: str | os.PathLike[str] | bytes | bytearray | memoryview, *, name: str | None = None,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 on_read: Callable[[int], None] | None = None, line_lengths: bool = False,
                 digest: Any = None, sample_fields: bool = True) -> None:
        self._path: str | None
        self._data: bytes | None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._path = None
            self._data = bytes(source)
            self.name = name or "<bytes>"
        else:
            self._path = os.fspath(source)
            if not self._path:
                raise TraceError('""', None, "an empty path names no trace file")
            self._data = None
            self.name = name or input_name(self._path)
            self.path = self._path
        self.max_line_bytes = line_limit(max_line_bytes)
        self.on_read = on_read   # told the size of every chunk read (progress display)
        self.digest = digest     # a hashlib object every byte read updates (`record` compares what it wrote)
        self._keep_lengths = line_lengths
        self._lines = LineMap(line_lengths)
        self._fields = FieldSample()
        self._sample_fields = sample_fields   # the field names of the first events, for `field_sample`
        self.opened: tuple[int, int, int, int, int] | None = None
        """The file as it was opened for the last read: device, inode, size and the times of its
        last change (None before a read, and for standard input or bytes). The HTML page's
        second read compares it with the first's, so that it draws the file the check read."""

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        return self._lines.lines(indices)

    def line_lengths_of(self, indices: Iterable[int]) -> dict[int, int]:
        return self._lines.lengths(indices)

    def field_sample(self) -> dict[str, tuple[int, int]]:
        return self._fields.keys

    def _fail(self, line: int | None, problem: str) -> TraceError:
        return TraceError(self.name, line, problem)

    def __iter__(self) -> Iterator[Event]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[Event]]:
        self._lines.close()
        self._lines = LineMap(self._keep_lengths)
        if self._data is not None:
            data = self._data   # in the same chunks as a file, so batches stay small
            yield from self._batches(data[at:at + _CHUNK_BYTES] for at in range(0, len(data), _CHUNK_BYTES))
            return
        stream = self._open()
        from_stdin = self._path == "-"
        if not from_stdin:
            found = os.fstat(stream.fileno())
            self.opened = found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns
        read: Callable[[int], bytes] = stream.read
        if self.on_read is not None:
            on_read = self.on_read
            read = _seeing(read, lambda chunk: on_read(len(chunk)))
        if self.digest is not None:
            read = _seeing(read, self.digest.update)
        try:
            yield from self._batches(iter(lambda: read(_CHUNK_BYTES), b""))
        except OSError as exc:
            raise self._fail(None, f"cannot read: {exc.strerror or exc}") from None
        finally:
            if not from_stdin:
                stream.close()

    def _batches(self, chunks: Iterator[bytes]) -> Iterator[list[Event]]:
        """The events read from `chunks`, the trace's bytes in the pieces read (the fuzzer hands
        in tiny ones: where the input is split must not change what is read)."""
        try:
            state = ReadState(self.name, self.max_line_bytes, self._lines)
            state.fields.full = not self._sample_fields
            self._fields = state.fields
            yield from _jsonl_or_array(state, chunks)
        except TraceError as exc:
            misplaced = self._misplaced(exc.line)
            if misplaced is None:
                raise
            raise self._fail(exc.line, misplaced) from None

    def _misplaced(self, line: int | None) -> str | None:
        """For a trace refused at its first line: what it is instead, when it is a contract or
        events wrapped in an object (`jsontext.AS_TRACE`). Told from the first 64 KiB of the
        bytes or of a regular file, read again, so where the reading stopped does not matter;
        standard input and pipes cannot be read again, and get no such hint."""
        if line is None:
            return None
        head = self._data
        if head is None and self._path not in (None, "-") and os.path.isfile(self._path):
            try:
                with open(self._path, "rb") as handle:
                    head = handle.read(1 << 16)
            except OSError:
                return None
        if head is None:
            return None
        start = len(head) - len(head.lstrip(b" \t\r\n"))
        if line != head.count(b"\n", 0, start) + 1:
            return None
        other = _other_tool(head[:1 << 16])
        if other is not None:
            return (f"this looks like a trace in another tool's format ({other}), not our own events: read it with "
                    f"--input-format {other} (or auto)")
        return AS_TRACE.get(text_shape(head[:1 << 16]) or "")

    def _open(self) -> BinaryIO:
        path = self._path
        assert path is not None   # a source without data was given a path
        if path == "-":
            if sys.stdin is None:   # (started without one: a daemon, pythonw, `<&-`)
                raise self._fail(None, "standard input is closed")
            return sys.stdin.buffer
        if os.path.isdir(path):
            raise self._fail(None, "is a directory, not a trace file")
        problem = name_problem(path)
        if problem is not None:
            raise self._fail(None, problem)
        check_file_name(os.fsdecode(path))
        try:
            return open(path, "rb")
        except FileNotFoundError:
            raise self._fail(None, missing(path)) from None
        except PermissionError:
            raise self._fail(None, "permission denied") from None
        except OSError as exc:
            raise self._fail(None, f"cannot open: {exc.strerror or exc}") from None


def _other_tool(head: bytes) -> str | None:
    """The format of another tool's trace (an OTLP export, LangSmith runs, an MCP log) that a file
    starting with `head` is, told from its first record (of JSON Lines, or of an array); None
    when it is none of them. For a message about a trace that failed to read only."""
    from agent_invariants.importers.sniff import format_of

    text = head.lstrip(b" \t\r\n")
    for candidate in (text, text.split(b"\n", 1)[0]):
        try:
            value = msgspec.json.decode(candidate)
        except (msgspec.DecodeError, RecursionError):
            continue
        return format_of(value[0] if type(value) is list and value else value)
    return None


def check_file_name(path: str) -> None:
    """Refuse a trace whose file name is not valid UTF-8 (Python reads its undecodable bytes as
    lone surrogates) before any is read: a JSON, SARIF or JUnit report could not name it."""
    problem = named_file_problem(path)
    if problem is not None:
        raise TraceError(path, None, problem)


def _jsonl_or_array(state: ReadState, chunks: Iterator[bytes]) -> Iterator[list[Event]]:
    """JSONL or one JSON array, told apart by the first character that is not whitespace.
    Whitespace before it is not kept: its lines are only counted (`_LeadingBlanks`), so a
    trace that starts with gigabytes of blank lines takes no memory."""
    head = b""
    blanks = _LeadingBlanks(state.max_line_bytes)
    for chunk in chunks:
        head += chunk
        start = first_significant(head, final=False)
        if start is not None and start != MORE:
            break
        # all whitespace, but (for MORE) for what may be a character cut in two at the end
        head = blanks.drop(head, len(head) if start is None else len(head) - 3)
    else:
        start = first_significant(head, final=True)
    if start is None:
        return
    size = len(head)
    head = blanks.drop(head, start)   # the whole lines before the first character
    start -= size - len(head)
    if head.startswith(b"\x1f\x8b"):
        raise state.fail(None, "looks gzip-compressed; decompress it first (e.g. gunzip -k)")
    wide = wide_unicode(head)
    if wide is not None:
        raise state.fail(blanks.lines + 1, wide)
    if head[start:start + 1] == b"[":
        yield from array_batches(state, head, start, chunks, blanks.lines)
        return
    problem = blanks.first_problem()
    if problem is not None:
        line, size, at_least = problem
        raise state.fail(line, state.too_long(size, at_least=at_least))
    yield from jsonl_batches(state, head, chunks, blanks.lines)


class _LeadingBlanks:
    """Whitespace before the first character of a trace, dropped a line at a time as it is read.

    Only the count of its lines is kept (the first event's line number needs it) and, for JSONL,
    the first of its lines that is over the line limit (a JSONL trace reports that line). A line
    of whitespace longer than the limit is dropped as it grows; `partial` counts what of it went."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines = 0
        self.partial = 0   # bytes of the unfinished line dropped so far
        self.too_long: tuple[int, int, bool] | None = None   # (line, size, size is a lower bound)

    def drop(self, head: bytes, end: int) -> bytes:
        """`head` without the complete lines of `head[:end]` (whitespace only), and without most
        of an unfinished line of whitespace that is already over the limit."""
        cut = head.rfind(b"\n", 0, max(end, 0)) + 1
        if cut:
            if self.too_long is None and self.partial + cut > self.limit:
                for number, line in enumerate(BytesIO(head[:cut]).readlines()):
                    size = content_length(line) + (self.partial if number == 0 else 0)
                    if size > self.limit:
                        self.too_long = (self.lines + number + 1, size, False)
                        break
            self.lines += head.count(b"\n", 0, cut)
            self.partial = 0
            head = head[cut:]
        if end == len(head) and len(head) > self.limit + 1:
            keep = len(head) - 3   # what may be a character cut in two, from its first byte
            while keep < len(head) and 0x80 <= head[keep] < 0xC0:
                keep += 1
            self.partial += keep
            head = head[keep:]
        return head

    def first_problem(self) -> tuple[int, int, bool] | None:
        """For JSONL: the first over-long line, counting the one the first event is on."""
        if self.too_long is None and self.partial:
            return (self.lines + 1, self.partial, True)
        return self.too_long


class EventList(TraceSource):
    """Events given in memory (dicts, `Event`s or JSON bytes per event), validated like a file's
    (but for the order of `seq`, when not `ordered`: the MCP summarize tool's, as the Node tool's,
    takes events in any order, spec v1 §3.2)."""

    def __init__(self, items: Iterable[Event | Mapping[str, Any] | bytes], *, name: str = "events",
                 ordered: bool = True) -> None:
        self._items = items
        self.name = name
        self._ordered = ordered
        self._fields = FieldSample()

    def field_sample(self) -> dict[str, tuple[int, int]]:
        return self._fields.keys

    def __iter__(self) -> Iterator[Event]:
        import orjson  # (here: a check of a file needs none, and importing it takes start-up time)

        # datetimes and dataclasses go to `_not_json` too, which writes them as msgspec does
        options = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
        dumps = functools.partial(orjson.dumps, default=_not_json, option=options)
        prev: int | float = -1
        for index, item in enumerate(self._items):
            where, line = self._where(index)
            try:
                raw = _item_json(item, dumps)
            except RecursionError:
                raise TraceError(where, line, INVALID_TOO_DEEP) from None
            except ValueError as exc:
                raise TraceError(where, line, _not_written(exc)) from None
            except (msgspec.EncodeError, TypeError, OverflowError) as exc:
                raise TraceError(where, line, f"not a JSON event object: {exc}") from None
            if too_deep_at(raw) is not None:
                raise TraceError(where, line, INVALID_TOO_DEEP)
            if not self._fields.full:
                self._fields.add((raw,))
            event, seq = accepted(raw, prev, where, line)
            if self._ordered:
                prev = seq
            yield event

    def _where(self, index: int) -> tuple[str, int | None]:
        """How an error names the item at `index`: `events[3]`, no line."""
        return f"{self.name}[{index}]", None


def accepted(raw: bytes, prev: int | float, where: str, line: int | None) -> tuple[Event, int | float]:
    """The event `raw` holds, checked as a trace's events are (types, `seq` after `prev`, the
    rest `events.accept` checks), with its seq; a problem is a TraceError naming `where` and
    `line`. One event given apart from a file: an item of an in-memory list, an imported one."""
    try:
        event = decode_lax_event(raw)
        return event, accept(event, raw, prev)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise TraceError(where, line, decode_problem(exc, Event)) from None
    except InvalidEvent as exc:
        raise TraceError(where, line, str(exc)) from None


def _seeing(read: Callable[[int], bytes], see: Callable[[bytes], object]) -> Callable[[int], bytes]:
    """`read`, showing `see` every chunk it reads (a progress display counts them, a digest reads them)."""
    def seeing_read(size: int) -> bytes:
        chunk = read(size)
        see(chunk)
        return chunk
    return seeing_read


def _item_json(item: object, dumps: Callable[..., bytes]) -> bytes:
    """One in-memory event as JSON, with lone surrogates read as U+FFFD like a file's (see
    `replace_lone_surrogates`). What JSON has no form for (bytes, NaN, a Decimal, a set) is refused
    (TypeError or ValueError): msgspec would write bytes as base64 text, so a call of
    b"shell.exec" would be a call of "c2hlbGwuZXhlYw==".

    orjson (`dumps`, with keys that are numbers written as text, as msgspec and the json module
    write them) writes the usual event, and refuses bytes, a Decimal or a set (`_not_json`). What
    it cannot write (an integer past 64 bits, a lone surrogate from a JSON.parse-like decoder, a
    value of no JSON form), and an event where it wrote `null` (which is also how it writes NaN and
    the infinities), go to the json module, ten times slower, which writes the first two (escaped)
    and refuses the rest."""
    if item.__class__ is not dict:   # (a dict, the usual item, is asked nothing more)
        if isinstance(item, (bytes, bytearray, memoryview)):
            return replace_lone_surrogates(bytes(item))
        if isinstance(item, Event):
            return msgspec.json.encode(item)
        if isinstance(item, str) and item.endswith("\n"):   # (other text: "expected an object, got a string")
            raise TypeError("is a line of text, not an event object (a file opened in text mode? pass its path, "
                            "or open it in binary mode)")
    try:
        raw = dumps(item)
        if b"null" not in raw:
            return raw
    except TypeError:
        pass
    import json  # (here: the json module is not needed at start-up)

    try:   # written as msgspec and orjson write JSON: compact, in UTF-8 (a result's size counts its bytes)
        return json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                          default=_not_json).encode()
    except UnicodeEncodeError:   # a lone surrogate: escaped, then read as a file's is
        return replace_lone_surrogates(json.dumps(item, ensure_ascii=True, allow_nan=False, separators=(",", ":"),
                                                  default=_not_json).encode())


_NO_JSON_FORM = (bytes, bytearray, memoryview, set, frozenset, complex, Decimal)


def _not_json(value: object) -> Any:
    """What an event's value that orjson or the json module does not write is written as: as msgspec
    writes it (a datetime or date as ISO text, a UUID as text, an enum as its value, a dataclass
    or struct as an object), unless JSON has no form for it (bytes, a set, a Decimal: TypeError)."""
    if isinstance(value, _NO_JSON_FORM):
        raise TypeError(f"holds a {type(value).__name__}, which is not a JSON value")
    try:
        return msgspec.to_builtins(value)
    except TypeError:
        raise TypeError(f"holds a {type(value).__name__}, which is not a JSON value") from None


def _not_written(exc: ValueError) -> str:
    """What the json module's ValueError says of an event: NaN, a loop, a number of too many digits."""
    text = str(exc)
    if text.startswith("Out of range float values"):
        return "not a JSON event object: holds NaN or an infinity, which JSON has no form for"
    if text.startswith("Circular reference"):
        return INVALID_TOO_DEEP
    return f"not a JSON event object: {inert(text, TEXT_LIMIT)}"


def line_limit(max_line_bytes: object) -> int:
    """`max_line_bytes` as the int it must be, at least 1 (an int, or what stands for one, but not
    a bool, 1.5 or None); ValueError otherwise, whatever the trace (a list of events has no lines,
    but a wrong value is a mistake all the same)."""
    try:
        limit = 0 if isinstance(max_line_bytes, bool) else operator.index(max_line_bytes)  # type: ignore[arg-type]
    except TypeError:
        limit = 0
    if limit < 1:
        raise ValueError(f"max_line_bytes must be an integer of at least 1, got {max_line_bytes!r}")
    return limit


def open_trace(trace: TraceSource | str | os.PathLike[str] | bytes | Iterable[Event | Mapping[str, Any]],
               *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, line_lengths: bool = False) -> TraceSource:
    """Wrap whatever the caller has (a path, `-`, bytes, a list of events) as a `TraceSource`;
    a file read with `line_lengths` also learns the length of each event's line."""
    line_limit(max_line_bytes)
    if isinstance(trace, TraceSource):
        return trace
    if isinstance(trace, (str, os.PathLike, bytes, bytearray, memoryview)):
        return TraceFile(trace, max_line_bytes=max_line_bytes, line_lengths=line_lengths)
    if isinstance(trace, Mapping) or not isinstance(trace, Iterable):   # (one event's keys are no events)
        raise TypeError(f"a trace is a path, bytes, an iterable of events or a TraceSource, not "
                        f"{'one event' if isinstance(trace, Mapping) else type(trace).__name__}")
    return EventList(trace)


def iter_events(trace: str | os.PathLike[str] | bytes, *,
                max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Event]:
    """Stream the validated events of a trace file (`-` for standard input) or of trace bytes."""
    return iter(TraceFile(trace, max_line_bytes=max_line_bytes))


def read_trace(trace: str | os.PathLike[str] | bytes, *,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[Event]:
    """Read a whole trace into a list of validated events (prefer `iter_events` for big traces)."""
    return list(iter_events(trace, max_line_bytes=max_line_bytes))
