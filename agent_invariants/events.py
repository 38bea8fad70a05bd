"""Trace events and the streaming trace reader.

A trace is JSON Lines (one event object per line; blank lines and lines starting with `#` are
skipped) or one JSON array of events. The reader decodes 64 KiB of lines at a time straight into
`Event`s, validates them exactly as contract v1 requires, and remembers the physical line of every
event without holding the events: memory stays flat however long the trace is.

    {"seq": 1, "type": "tool.call", "tool": "payments.refund", "call_id": "c1"}

Validation, beyond the types declared on `Event`: `seq` is an integer >= 0 (`3.0` counts) and
strictly increasing; `type` is trimmed and then 1..200 characters; `time`, when present, is an
ISO-8601 date-time with a zone; `data` is an object; `confidence` is within 0..1; string lengths
count UTF-16 code units; `null` is never a value. Unknown fields and event types are accepted and
ignored. `args`, `result`, `output`, `duration_ms` and `status` are kept raw for later contract
versions. Every problem raises `TraceError` naming the trace and the line.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from io import BytesIO
from itertools import islice
from operator import lt
from typing import Annotated, BinaryIO, Literal, NamedTuple

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants._js import (
    JS_WHITESPACE,
    MORE,
    first_significant,
    has_surrogate_escape,
    json_number,
    replace_lone_surrogates,
    utf16_len,
    utf16_len_of_utf8,
)
from agent_invariants.errors import TraceError
from agent_invariants.jsonarray import ArrayError, Stretch, scan_array, syntax_error
from agent_invariants.linemap import LineMap

__all__ = (
    "DEFAULT_MAX_LINE_BYTES",
    "EVIDENCE_CLASSES",
    "VERDICTS",
    "Event",
    "EventList",
    "EvidenceClass",
    "TraceFile",
    "TraceSource",
    "Verdict",
    "iter_events",
    "open_trace",
    "read_trace",
)

DEFAULT_MAX_LINE_BYTES = 1 << 20
_CHUNK_BYTES = 1 << 16

Verdict = Literal["satisfied", "violated", "unknown", "retracted"]
EvidenceClass = Literal["externally_observed", "configured_verifier", "manual_attestation", "self_attestation"]
VERDICTS: tuple[str, ...] = Verdict.__args__
EVIDENCE_CLASSES: tuple[str, ...] = EvidenceClass.__args__

Str200 = Annotated[str, Meta(min_length=1, max_length=200)]
Str500 = Annotated[str, Meta(min_length=1, max_length=500)]
Str2000 = Annotated[str, Meta(min_length=1, max_length=2000)]

_MAX_SAFE_INTEGER = 2**53


class JsonObject(msgspec.Struct, gc=False):
    """Any JSON object. Decoding checks that the value is an object and skips its content."""


class Event(msgspec.Struct, gc=False, omit_defaults=True):
    """One thing the agent did or saw. Absent optional fields are `UNSET` (never `None`)."""

    # A seq written as `3.0` or beyond 2**53 is read by `_LaxEvent` and normalised by `_accept`.
    seq: Annotated[int, Meta(ge=0, le=2**53)]
    """Position in the run: an integer >= 0 (`3.0` counts as 3), strictly increasing through the
    trace; gaps are fine."""
    type: str
    """What happened, e.g. `tool.call`, `tool.result`, `approval.granted`, `control.stop`; trimmed,
    then 1..200 characters."""
    time: str | UnsetType = UNSET
    """When it happened: an ISO-8601 date-time with a zone, e.g. `2026-03-02T09:14:00Z`; validated,
    not used by v1 rules."""
    run_id: Str500 | UnsetType = UNSET
    """Id of the run; not used by v1 rules."""
    actor: Str500 | UnsetType = UNSET
    """Who acted (agent, user, system); not used by v1 rules."""
    tool: Str500 | UnsetType = UNSET
    """Tool name of a `tool.call` or `tool.result`, e.g. `payments.refund`."""
    call_id: Str500 | UnsetType = UNSET
    """Id linking a `tool.call` to its `tool.result` (tool_result_required)."""
    call_signature: Str2000 | UnsetType = UNSET
    """What makes two calls "the same call" for retry_limit, e.g. `refund:order-42`."""
    risk: Str200 | UnsetType = UNSET
    """Risk label; not used by v1 rules."""
    approval_id: Str500 | UnsetType = UNSET
    """On `approval.granted`: the grant's id; on a `tool.call`: the grant it relies on."""
    approval_scope: Str500 | UnsetType = UNSET
    """On `approval.granted`: what the grant covers, matched against require_approval's `scope`."""
    approved: bool | UnsetType = UNSET
    """On `approval.granted`: `false` means the approval was refused and does not count."""
    ok: bool | UnsetType = UNSET
    """On `tool.result`: `false` means the call failed (counted by event_budget's `max_tool_failures`)."""
    outcome_id: Str500 | UnsetType = UNSET
    """On `outcome.observed`: which outcome was observed, e.g. `refund-visible`."""
    verdict: Verdict | UnsetType = UNSET
    """On `outcome.observed`: whether the outcome was achieved."""
    evidence_class: EvidenceClass | UnsetType = UNSET
    """On `outcome.observed`: how the outcome was observed (the completion rules accept
    `externally_observed` and `configured_verifier` by default)."""
    claims_completion: bool | UnsetType = UNSET
    """`true` when the agent claims, at this event, that the task is done."""
    confidence: Annotated[float, Meta(ge=0, le=1)] | UnsetType = UNSET
    """The agent's confidence in a completion claim, 0..1 (confidence_requires_outcome)."""
    data: JsonObject | UnsetType = UNSET
    """Free-form details: must be an object; not used by v1 rules, so its content is not kept."""
    args: Raw | UnsetType = UNSET
    """Tool arguments: any JSON value; kept for later contract versions, not used by v1 rules."""
    result: Raw | UnsetType = UNSET
    """Tool result: any JSON value; kept for later contract versions, not used by v1 rules."""
    output: Raw | UnsetType = UNSET
    """The run's final output: any JSON value; kept for later contract versions, not used by v1 rules."""
    duration_ms: Raw | UnsetType = UNSET
    """How long the step took, in milliseconds; kept for later contract versions, not used by v1 rules."""
    status: Raw | UnsetType = UNSET
    """Status of the step: any JSON value; kept for later contract versions, not used by v1 rules."""


class _LaxEvent(Event, gc=False, omit_defaults=True):
    """An Event whose seq may be any JSON number, for the lines the strict decoder refuses
    (`3.0`, `1e300`, negative or fractional values); `_accept` then normalises or explains."""

    seq: int | float


# Longest allowed value of each length-limited string field, in UTF-16 code units.
_STRING_LIMITS = (
    ("run_id", 500), ("actor", 500), ("tool", 500), ("call_id", 500), ("call_signature", 2000),
    ("risk", 200), ("approval_id", 500), ("approval_scope", 500), ("outcome_id", 500),
)

# zod 3's datetime({offset: true}): YYYY-MM-DDTHH:MM, then optional :SS[.fraction], then Z or
# +-HH[:]MM (offset digits not range-checked); real calendar dates with Gregorian leap years. The
# shape is one regex; whether the date exists is cached per date, since a trace has few of them.
_TIME_SHAPE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})\Z"
).match
_REAL_DATE = re.compile(
    r"(?:(?:[0-9][0-9][2468][048]|[0-9][0-9][13579][26]|[0-9][0-9]0[48]|[02468][048]00|[13579][26]00)-02-29"
    r"|[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8])))\Z"
).match
_DATES: dict[str, bool] = {}
_decode_stamps = msgspec.json.Decoder(list[Annotated[datetime.datetime, Meta(tz=True)]]).decode
_encode_stamps = msgspec.json.Encoder().encode


def _times_ok(times: list[str]) -> bool:
    """True if every stamp is valid; False means "check them one by one" (maybe all are fine).

    msgspec parses RFC 3339 in C. On everything it accepts, zod agrees (checked by fuzzing),
    except a lowercase `t` or `z` or a space for the `T`, none of which a valid stamp contains
    (nor does the JSON array holding them, but for an escape such as `\\t`, which is then
    looked at one by one too). Stamps msgspec refuses but zod accepts (no seconds, year 0000,
    offset +24:00) fall back to the exact regex, `_time_ok`.
    """
    encoded = _encode_stamps(times)
    if b"t" in encoded or b"z" in encoded or b" " in encoded:
        return all(_time_ok(stamp) for stamp in times)
    try:
        _decode_stamps(encoded)
    except msgspec.DecodeError:
        return all(_time_ok(stamp) for stamp in times)
    return True


def _time_problem(value: str) -> str:
    return f"$.time: expected an ISO-8601 date-time with a zone such as 2025-01-31T08:00:00Z, got {value!r}"


def _time_ok(value: str) -> bool:
    """Whether `value` is a date-time zod 3's datetime({offset: true}) accepts."""
    if _TIME_SHAPE(value) is None:
        return False
    date = value[:10]
    ok = _DATES.get(date)
    if ok is None:
        if len(_DATES) >= 100_000:
            _DATES.clear()
        ok = _DATES[date] = _REAL_DATE(date) is not None
    return ok


class _Invalid(Exception):
    """An event failed validation; the source adds where it is."""


_decode_event = msgspec.json.Decoder(Event).decode
_decode_lax_event = msgspec.json.Decoder(_LaxEvent).decode

# Event types already seen to be valid and already trimmed (shared, bounded).
_CLEAN_TYPES: set[str] = set()


def _accept(event: Event, raw: bytes | Raw | None, prev: int | float) -> int | float:
    """Validate what msgspec cannot; normalise `seq` and `type` in place; return the seq."""
    seq = event.seq
    if seq.__class__ is not int or not prev < seq <= _MAX_SAFE_INTEGER:
        seq = _check_seq(seq, prev)
        event.seq = seq
    kind = event.type
    trimmed = kind.strip(JS_WHITESPACE)
    if trimmed is not kind or not kind or len(kind) > 100:
        if not trimmed:
            raise _Invalid("$.type: must not be empty or only whitespace")
        if utf16_len(trimmed) > 200:
            raise _Invalid(f"$.type: must be at most 200 characters, got {utf16_len(trimmed)}")
        event.type = trimmed
    if event.time is not UNSET and not _time_ok(event.time):
        raise _Invalid(_time_problem(event.time))
    if raw is None or not raw.isascii() or has_surrogate_escape(raw):
        _check_utf16_lengths(event)
    return seq


def _check_seq(seq: int | float, prev: int | float) -> int | float:
    if seq.__class__ is float and not seq.is_integer():
        raise _Invalid(f"$.seq: must be an integer, got {seq!r}")
    try:
        seq = json_number(seq)
    except OverflowError:   # beyond any double: JavaScript reads Infinity, which is no integer
        raise _Invalid("$.seq: must be an integer, got a number too large for a double") from None
    if seq < 0:
        raise _Invalid(f"$.seq: must be >= 0, got {seq}")
    if not seq > prev:
        raise _Invalid(f"$.seq: must be strictly increasing, got {seq} after {prev}")
    return seq


def _check_utf16_lengths(event: Event) -> None:
    """msgspec counts code points; contract v1 counts UTF-16 units, so astral text may be too long."""
    for name, limit in _STRING_LIMITS:
        value = getattr(event, name)
        if value is not UNSET and len(value) * 2 > limit and utf16_len(value) > limit:
            raise _Invalid(f"$.{name}: must be at most {limit} characters, got {utf16_len(value)}")


MAX_NESTING = 500
_TOO_DEEP = f"invalid JSON: nested more than {MAX_NESTING} levels deep"
# an unterminated string runs to the end (`"?`): retrying it at every later quote is quadratic
_NESTING_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def too_deep_at(data: bytes, limit: int = MAX_NESTING) -> int | None:
    """Offset where JSON `data` nests deeper than `limit`, or None. Decoders' own limits depend
    on how deep the caller's stack is; this one does not. Cheap when it cannot be exceeded."""
    if len(data) <= limit or data.count(b"{") + data.count(b"[") <= limit:
        return None
    depth = 0
    for token in _NESTING_TOKEN.finditer(data):
        char = token.group()[0]
        if char == 0x22:   # a string: brackets inside it do not count
            continue
        if char in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return token.start()
        else:
            depth -= 1
    return None


def _describe(error: Exception) -> str:
    """msgspec's "Expected `str`, got `int` - at `$.tool`" as "$.tool: expected `str`, got `int`"."""
    if isinstance(error, RecursionError):
        return _TOO_DEEP
    text = str(error)
    if not isinstance(error, msgspec.ValidationError):
        return _describe_syntax(text)
    message, sep, path = text.rpartition(" - at `")
    if not sep:
        message, path = text, "$`"
    return f"{path.rstrip('`')}: {message[:1].lower()}{message[1:]}"


def _describe_syntax(text: str) -> str:
    found = re.search(r"\(byte (\d+)\)", text)
    if found:
        text = text.replace(found.group(0), f"(column {int(found.group(1)) + 1})")
    if text == "Input data was truncated":
        text = "the JSON ends before the value is complete"
    return f"invalid JSON: {text.removeprefix('JSON is malformed: ')}"


class TraceSource:
    """What the engine reads: an iterable of validated events that knows where each came from.

    `name` labels the source in error messages; `path` is the file it was read from (`-` for
    standard input) or None for input that has no file.
    """

    name: str
    path: str | None = None

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


class TraceFile(TraceSource):
    """A trace in a file, on standard input (`-`), or in memory as bytes; read as a stream.

    Iterate it once to get the events; afterwards `lines_of(indices)` gives their physical lines
    (and `line_lengths_of(indices)` the lengths of those lines, when asked for with
    `line_lengths=True`). Both are learnt during the one read (`LineMap`), so a pipe works too.
    """

    def __init__(self, source: str | os.PathLike[str] | bytes, *, name: str | None = None,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 on_read: Callable[[int], None] | None = None, line_lengths: bool = False) -> None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._path = None
            self._data = bytes(source)
            self.name = name or "<bytes>"
        else:
            self._path = os.fspath(source)
            self._data = None
            self.name = name or ("<stdin>" if self._path == "-" else self._path)
            self.path = self._path
        self.max_line_bytes = max_line_bytes
        self.on_read = on_read   # told the size of every chunk read (progress display)
        self._keep_lengths = line_lengths
        self._lines = LineMap(line_lengths)

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        return self._lines.lines(indices)

    def line_lengths_of(self, indices: Iterable[int]) -> dict[int, int]:
        return self._lines.lengths(indices)

    def _mark(self, index: int, line: int) -> None:
        """From event `index` on, events sit on line `line` and onwards (until the next mark)."""
        self._lines.jump(index, line)

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
        read = stream.read
        if self.on_read is not None:
            def read(size: int, _read=stream.read, _tell=self.on_read) -> bytes:
                chunk = _read(size)
                _tell(len(chunk))
                return chunk
        try:
            yield from self._batches(iter(lambda: read(_CHUNK_BYTES), b""))
        except OSError as exc:
            raise self._fail(None, f"cannot read: {exc.strerror or exc}") from None
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()

    def _open(self) -> BinaryIO:
        if self._path == "-":
            return sys.stdin.buffer
        if os.path.isdir(self._path):
            raise self._fail(None, "is a directory, not a trace file")
        try:
            return open(self._path, "rb")
        except FileNotFoundError:
            raise self._fail(None, "no such file") from None
        except PermissionError:
            raise self._fail(None, "permission denied") from None
        except OSError as exc:
            raise self._fail(None, f"cannot open: {exc.strerror or exc}") from None

    def _batches(self, chunks: Iterator[bytes]) -> Iterator[list[Event]]:
        """JSONL or one JSON array, told apart by the first character that is not whitespace.
        Whitespace before it is not kept: its lines are only counted (`_LeadingBlanks`), so a
        trace that starts with gigabytes of blank lines takes no memory."""
        head = b""
        blanks = _LeadingBlanks(self.max_line_bytes)
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
            raise self._fail(None, "looks gzip-compressed; decompress it first (e.g. gunzip -k)")
        if head[start:start + 1] == b"[":
            yield from self._array_batches(head, start, chunks, blanks.lines)
            return
        problem = blanks.first_problem()
        if problem is not None:
            line, size, at_least = problem
            raise self._fail(line, self._too_long_message(size, at_least=at_least))
        yield from self._line_batches(head, chunks, blanks.lines)

    def _line_batches(self, head: bytes, chunks: Iterator[bytes], lines_before: int) -> Iterator[list[Event]]:
        """JSONL, one list of events per chunk read (`lines_before` blank lines were dropped).

        msgspec checks types, bounds, enums and lengths while decoding. What it cannot check is
        done here, cheaply in the common case: seq increasing, the type already seen clean (a
        set lookup), and the time stamps, all of a chunk's at once. A plain chunk (one that
        cannot hold characters beyond the BMP, so UTF-16 lengths are what msgspec checked) of
        ordinary events is decoded and checked in bulk (`_plain_batch`); any other goes line by
        line, and whatever is unusual goes through `_accept`, which validates fully and
        explains. Blank and comment lines are recognised before decoding, so they cost no
        exception."""
        decode = _decode_event
        clean_types = _CLEAN_TYPES
        keep_lengths = self._keep_lengths
        prev: int | float = -1
        lineno = lines_before
        skipped = lines_before   # lines that held no event so far: index = lineno - 1 - skipped
        done = 0                 # events in earlier batches
        self._mark(0, lines_before + 1)
        for lines, plain in self._split_lines(head, chunks, lines_before):
            if plain:
                batch = _plain_batch(lines, prev, clean_types)
                if batch is not None:
                    lineno += len(lines)
                    prev = batch[-1].seq
                    self._check_times(batch, done)
                    if keep_lengths:
                        self._lines.add_lengths([_line_units(line) for line in lines])
                    done += len(batch)
                    yield batch
                    continue
            batch = []
            append = batch.append
            lengths: list[int] = []
            for raw in lines:
                lineno += 1
                if raw[:1] in _BLANK_OR_COMMENT_LEADS:
                    stripped = raw.strip()
                    if not stripped or stripped[:1] == b"#":
                        skipped += 1
                        self._mark(lineno - skipped, lineno + 1)
                        continue
                try:
                    event = decode(raw)
                except (msgspec.DecodeError, RecursionError):
                    # without its `\n`, so that a line cut inside a string reads as cut short
                    event = self._retry_line(raw[:-1] if raw[-1:] == b"\n" else raw, lineno, batch, done)
                    if event is None:
                        skipped += 1
                        self._mark(lineno - skipped, lineno + 1)
                        continue
                    prev = self._accept_line(event, raw, prev, lineno, batch, done)
                else:
                    if prev < event.seq and event.type in clean_types and plain:
                        prev = event.seq
                    else:
                        prev = self._accept_line(event, raw, prev, lineno, batch, done)
                append(event)
                if keep_lengths:
                    lengths.append(_line_units(raw))
            self._check_times(batch, done)
            if keep_lengths:
                self._lines.add_lengths(lengths)
            done += len(batch)
            yield batch

    def _array_batches(self, head: bytes, start: int, chunks: Iterator[bytes],
                       lines_before: int) -> Iterator[list[Event]]:
        """A trace that is one JSON array, streamed (see `jsonarray`): one list per chunk read."""
        first_line = lines_before + 1 + head.count(b"\n", 0, start)
        prev: int | float = -1
        index = 0
        items = scan_array(head, start, chunks, line=first_line, lines=self._lines,
                           max_item_bytes=self.max_line_bytes, max_depth=MAX_NESTING + 1)
        try:
            for found in items:
                batch: list[Event] = []
                for piece in found:
                    if type(piece) is Stretch:
                        events = self._plain_stretch(piece, prev, index)
                        if events is not None:
                            batch += events
                            prev = events[-1].seq
                            index += len(events)
                            continue
                        pieces = zip(piece.lines, map(bytes, piece.items))
                    else:
                        pieces = (piece,)
                    for line, item in pieces:
                        event = self._array_event(item, index, line, prev)
                        prev = event.seq
                        batch.append(event)
                        index += 1
                yield batch
        except ArrayError as exc:
            raise self._fail(exc.line, exc.message) from None

    def _plain_stretch(self, stretch: Stretch, prev: int | float, first: int) -> list[Event] | None:
        """The events of a stretch of array items when all are ordinary (see `_plain_batch`), with
        their time stamps checked; None sends the items one by one through `_array_event`."""
        region = stretch.region
        ascii_only = region.isascii()
        if not ascii_only:
            try:
                region.decode("utf-8")   # msgspec does not look inside what it skips
            except UnicodeDecodeError:
                return None
        if not _bmp_only(region, ascii_only):
            return None
        if any(too_deep_at(bytes(item)) is not None for item in stretch.items if len(item) > MAX_NESTING):
            return None
        events = _plain_batch(stretch.items, prev, _CLEAN_TYPES)
        if events is not None:
            self._check_times(events, first)
        return events

    def _array_event(self, item: bytes, index: int, line: int, prev: int | float) -> Event:
        """One item of a JSON array, validated like a JSONL line (and named by its position)."""
        item = replace_lone_surrogates(item)
        deep = too_deep_at(item)
        if deep is not None:
            raise self._fail(line + item.count(b"\n", 0, deep), _TOO_DEEP)
        if not item.isascii():
            try:
                item.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._fail(line + item.count(b"\n", 0, exc.start),
                                 f"item {index}: invalid UTF-8 (byte {exc.start + 1} of the item)") from None
        try:
            try:
                event = _decode_lax_event(item)
            except (msgspec.DecodeError, RecursionError):
                event = _decode_last_key_wins(item)
                if event is None:
                    raise
            raw_type = event.type
            _accept(event, item, prev)
            if raw_type == event.type and len(_CLEAN_TYPES) < 10_000:
                _CLEAN_TYPES.add(raw_type)
        except msgspec.ValidationError as exc:
            raise self._fail(line, f"item {index}: {_describe(exc)}") from None
        except (msgspec.DecodeError, RecursionError) as exc:
            broken = syntax_error(item)
            if broken is None:
                raise self._fail(line, f"item {index}: {_describe(exc)}") from None
            offset, reason = broken
            raise self._fail(line + item.count(b"\n", 0, offset),
                             f"item {index}: invalid JSON: {reason} (byte {offset + 1} of the item)") from None
        except _Invalid as exc:
            raise self._fail(line, f"item {index}: {exc}") from None
        return event

    def _accept_line(self, event: Event, raw: bytes, prev: int | float, lineno: int,
                     batch: list[Event], done: int) -> int | float:
        """Full validation of one event (see `_accept`); remembers clean types for the fast path."""
        raw_type = event.type
        try:
            prev = _accept(event, raw, prev)
        except _Invalid as exc:
            raise self._fail_after_times(batch, done, lineno, str(exc)) from None
        if raw_type == event.type and len(_CLEAN_TYPES) < 10_000:
            _CLEAN_TYPES.add(raw_type)
        return prev

    def _check_times(self, batch: list[Event], done: int) -> None:
        """Validate every time stamp of a batch at once; find the culprit only on failure."""
        times = [event.time for event in batch]
        try:
            ok = _times_ok(times)
        except TypeError:   # some events have no time, and UNSET is no JSON value: leave them out
            times = [time for time in times if time is not UNSET]
            ok = not times or _times_ok(times)
        if not ok:
            for index, event in enumerate(batch, done):
                if event.time is not UNSET and not _time_ok(event.time):
                    raise self._fail(self.line_of(index), _time_problem(event.time))

    def _fail_after_times(self, batch: list[Event], done: int, lineno: int, problem: str) -> TraceError:
        """The error for `lineno`, unless an earlier event of this batch has a bad time stamp:
        time stamps are checked per batch, and the first problem in the file must win."""
        self._check_times(batch, done)
        return self._fail(lineno, problem)

    def _split_lines(self, head: bytes, chunks: Iterator[bytes],
                     lines_before: int = 0) -> Iterator[tuple[list[bytes], bool]]:
        """Lines of the input (each with its `\\n`, but for an unfinished last line), a chunk at a
        time, each list with a flag: True when the chunk is plain (see `_bmp_only`).

        A line too long, nested too deeply, or holding invalid UTF-8 anywhere (msgspec does not
        look inside the content it skips: unknown fields, `data`, raw payloads) ends the reading
        at that line, after the lines before it were handed out, so whatever problem comes first
        in the file is the one reported. (BytesIO splits with memchr; `bytes.split` looks at one
        byte at a time, which costs more than decoding some events.)
        """
        limit = self.max_line_bytes
        tail = b""
        for chunk in _chain_first(head, chunks):
            data = tail + chunk if tail else chunk
            lines = BytesIO(data).readlines()
            tail = lines.pop() if lines[-1][-1:] != b"\n" else b""
            ascii_only = data.isascii()
            problem = self._first_line_problem(lines, ascii_only)
            if problem is not None:
                at, message = problem
                yield lines[:at], False
                raise self._fail(lines_before + at + 1, message)
            lines_before += len(lines)
            yield lines, _bmp_only(data, ascii_only)
            if len(tail) > limit + 1:   # the unfinished last line is too long even if a `\r\n` ends it
                raise self._fail(lines_before + 1, self._too_long_message(len(tail), at_least=True))
        if tail:
            ascii_only = tail.isascii()
            problem = self._first_line_problem([tail], ascii_only)
            if problem is not None:
                raise self._fail(lines_before + 1, problem[1])
            yield [tail], _bmp_only(tail, ascii_only)

    def _first_line_problem(self, lines: list[bytes], ascii_only: bool) -> tuple[int, str] | None:
        """The first of `lines` (index, message) that is too long, nested too deeply or not UTF-8.
        Each test is skipped when the whole chunk cannot fail it."""
        limit = self.max_line_bytes
        longest = max(map(len, lines)) if lines else 0
        found: list[tuple[int, str]] = []
        if longest > limit:
            at = next((i for i, line in enumerate(lines) if _content_length(line) > limit), None)
            if at is not None:
                found.append((at, self._too_long_message(_content_length(lines[at]))))
        if longest > MAX_NESTING:
            deep = next((i for i, line in enumerate(lines) if too_deep_at(line) is not None), None)
            if deep is not None:
                found.append((deep, _TOO_DEEP))
        if not ascii_only:
            bad = _first_invalid_utf8(lines)
            if bad is not None:
                found.append((bad[0], f"invalid UTF-8 (byte {bad[1]} of the line)"))
        return min(found) if found else None

    def _too_long_message(self, size: int, at_least: bool = False) -> str:
        more = "at least " if at_least else ""
        return f"line is {more}{size:,} bytes, over the {self.max_line_bytes:,}-byte limit (raise it with --max-line-bytes)"

    def _retry_line(self, raw: bytes, lineno: int, batch: list[Event], done: int) -> Event | None:
        """A line the strict decoder refused: read it laxly (seq `3.0`, out-of-range values to
        explain later), skip it if blank or a comment, decode it JS-trimmed, or explain.

        Problems are kept as text, never as exceptions: an exception held in a local refers to
        this frame through its traceback, a cycle that only the paused cyclic collector could
        free, so every refused line would stay in memory."""
        found = _lax(raw)
        if not isinstance(found, _Problem):
            return found
        problem = found
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._fail_after_times(batch, done, lineno, f"invalid UTF-8 (byte {exc.start + 1} of the line)") from None
        trimmed = text.strip(JS_WHITESPACE)
        if not trimmed or trimmed.startswith("#"):
            return None
        if trimmed != text.strip(" \t\r\n"):
            found = _lax(trimmed.encode("utf-8"))
            if not isinstance(found, _Problem):
                return found
            problem = found
        encoded = trimmed.encode("utf-8")
        line = replace_lone_surrogates(encoded)
        if line != encoded:
            found = _lax(line)
            if not isinstance(found, _Problem):
                return found
            problem = found   # now the problem is another one: name that
        event = _decode_last_key_wins(line)
        if event is not None:
            return event
        message = problem.text
        if trimmed == "{" or problem.truncated and trimmed.startswith("{"):
            message += " (each event must be one JSON object on one line)"
        raise self._fail_after_times(batch, done, lineno, message)

class _Problem(NamedTuple):
    """Why a line did not decode: the message, and whether the JSON was cut short."""

    text: str
    truncated: bool


def _lax(raw: bytes) -> Event | _Problem:
    """The event on a line read laxly (any JSON number as seq), or why it does not decode."""
    try:
        return _decode_lax_event(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        return _Problem(_describe(exc), str(exc) == "Input data was truncated")


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
                    size = _content_length(line) + (self.partial if number == 0 else 0)
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


def _bmp_only(data: bytes, ascii_only: bool) -> bool:
    """Whether `data` (valid UTF-8) cannot hold a character beyond the BMP, which counts two
    UTF-16 units while msgspec's lengths count one: no four-byte sequence (lead byte F0..F4) and
    no escape of a surrogate (`\\u00e9`, as Python's json.dumps writes, is fine). Each lead byte
    is looked for with memchr."""
    if not ascii_only and any(lead in data for lead in _ASTRAL_LEADS):
        return False
    return not has_surrogate_escape(data)


_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def _line_units(line: bytes) -> int:
    """Length of a line in UTF-16 code units, without its end (what a SARIF region spans)."""
    size = _content_length(line)
    return size if line.isascii() else utf16_len_of_utf8(line[:size])


_BLANK_OR_COMMENT_LEADS = frozenset((b" ", b"\t", b"\r", b"\n", b"\x0b", b"\x0c", b"#"))


def _content_length(line: bytes) -> int:
    """Length of a line without its `\\n` and the `\\r` of a CRLF end (not part of the line)."""
    size = len(line)
    if line.endswith(b"\n"):
        size -= 1
    if line.endswith(b"\r", 0, size):
        size -= 1
    return size


def _plain_batch(lines: list[bytes], prev: int | float, clean_types: set[str]) -> list[Event] | None:
    """The events of a plain chunk's lines when every line is an ordinary event: decoded by
    msgspec in one C loop, seq strictly increasing from `prev`, every type already seen clean.
    None sends the chunk through the line-by-line path, which explains or skips what is unusual
    (a blank line, a comment, a bad event), so this one only has to recognise the usual case."""
    if not lines:
        return None
    try:
        batch = list(map(_decode_event, lines))
    except (msgspec.DecodeError, RecursionError):
        return None
    # Comprehensions, not map(attrgetter): the interpreter reads struct fields far faster.
    seqs = [event.seq for event in batch]
    if prev < seqs[0] and all(map(lt, seqs, islice(seqs, 1, None))) and {event.type for event in batch} <= clean_types:
        return batch
    return None


def _decode_last_key_wins(raw: bytes | Raw) -> Event | None:
    """The event a line holds when a repeated key makes the typed decode fail: JSON.parse, as
    the reference reads traces, keeps the last value of a repeated key and never sees the
    others, while msgspec checks every copy. So `{"tool": 5, "tool": "kb.search"}` is an event
    with tool `kb.search`. None when the line is no JSON object, or still fails without the
    earlier copies (the caller then reports the first decode's problem)."""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    try:
        return _decode_lax_event(msgspec.json.encode(value))
    except (msgspec.DecodeError, RecursionError, OverflowError, TypeError):
        return None


def _first_invalid_utf8(lines: list[bytes]) -> tuple[int, int] | None:
    """(index of the first line with invalid UTF-8, 1-based byte in that line), or None."""
    try:
        b"".join(lines).decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    for at, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return at, exc.start + 1
    return None


def _chain_first(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


class EventList(TraceSource):
    """Events given in memory (dicts, `Event`s or JSON bytes per event), validated like a file's."""

    def __init__(self, items: Iterable[Event | Mapping | bytes], *, name: str = "events") -> None:
        self._items = items
        self.name = name

    def __iter__(self) -> Iterator[Event]:
        prev: int | float = -1
        for index, item in enumerate(self._items):
            where = f"{self.name}[{index}]"
            try:
                raw = _item_json(item)
                if too_deep_at(raw) is not None:
                    raise _Invalid(_TOO_DEEP)
                event = _decode_lax_event(raw)
                prev = _accept(event, raw, prev)
            except (msgspec.DecodeError, RecursionError) as exc:
                raise TraceError(where, None, _describe(exc)) from None
            except (msgspec.EncodeError, TypeError, OverflowError, ValueError) as exc:
                raise TraceError(where, None, f"not a JSON event object: {exc}") from None
            except _Invalid as exc:
                raise TraceError(where, None, str(exc)) from None
            yield event


def _item_json(item: Event | Mapping | bytes) -> bytes:
    """One in-memory event as JSON, with lone surrogates read as U+FFFD like a file's (see
    `replace_lone_surrogates`). A dict from JSON.parse-like decoders (Python's json, an MCP
    client) may hold a lone surrogate, which only the json module can write (escaped)."""
    if isinstance(item, bytes):
        raw = item
    else:
        try:
            return msgspec.json.encode(item)
        except UnicodeEncodeError:
            raw = json.dumps(item, ensure_ascii=True, allow_nan=False).encode()
    return replace_lone_surrogates(raw)


def open_trace(trace: TraceSource | str | os.PathLike[str] | bytes | Iterable[Event | Mapping],
               *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, line_lengths: bool = False) -> TraceSource:
    """Wrap whatever the caller has (a path, `-`, bytes, a list of events) as a `TraceSource`;
    a file read with `line_lengths` also learns the length of each event's line."""
    if isinstance(trace, TraceSource):
        return trace
    if isinstance(trace, (str, os.PathLike, bytes, bytearray, memoryview)):
        return TraceFile(trace, max_line_bytes=max_line_bytes, line_lengths=line_lengths)
    return EventList(trace)


def iter_events(trace: str | os.PathLike[str] | bytes, *,
                max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Event]:
    """Stream the validated events of a trace file (`-` for standard input) or of trace bytes."""
    return iter(TraceFile(trace, max_line_bytes=max_line_bytes))


def read_trace(trace: str | os.PathLike[str] | bytes, *,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[Event]:
    """Read a whole trace into a list of validated events (prefer `iter_events` for big traces)."""
    return list(iter_events(trace, max_line_bytes=max_line_bytes))
