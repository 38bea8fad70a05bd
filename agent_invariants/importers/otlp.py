"""OTLP JSON spans, as the Collector's file exporter and protobuf's JSON format write them, read
into plain `Span`s grouped by trace (§10 point 30). Shared by `otel` and `openinference`.

    {"resourceSpans": [{"resource": {...}, "scopeSpans": [{"scope": {...}, "spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
         "parentSpanId": "...", "name": "execute_tool refund", "kind": 1,
         "startTimeUnixNano": "1544712660000000000", "endTimeUnixNano": "1544712661000000000",
         "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "refund"}}],
         "events": [{"timeUnixNano": "...", "name": "exception", "attributes": [...]}],
         "status": {"code": 2, "message": "..."}}]}]}]}

Real producers differ: ids as hex (the Collector) or base64 (protobuf's JSON of bytes), enums as
integers or names (`STATUS_CODE_ERROR`), times as strings or numbers, an empty status for UNSET.
All of these are read; times stay integers (nanoseconds), never floats. A span that is not an
object, or lacks an id or a time, stops the import at its line with the JSON path.
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from agent_invariants.errors import TraceError
from agent_invariants.importers.records import Record
from agent_invariants.importers.run import Context, Runs, add_record, new_list
from agent_invariants.importers.sniff import refuse_other
from agent_invariants.jsontext import decode_problem

__all__ = ("TRACE_ID", "Span", "SpanEvent", "read_traces", "trace_key")

_MAX_CLOCK = 253402300799 * 1_000_000_000   # 9999-12-31T23:59:59Z


class SpanEvent:
    """An event inside a span (`exception`, or a convention event such as `outcome.observed`)."""

    __slots__ = ("at", "attributes", "name")

    def __init__(self, name: str, at: int, attributes: dict[str, Any]) -> None:
        self.name, self.at, self.attributes = name, at, attributes


class Span:
    """One span, its ids in lowercase hex, its times in nanoseconds, its attributes by key."""

    __slots__ = ("attributes", "dropped", "end", "ended", "error", "events", "line", "log", "message", "name",
                 "order", "parent", "span_id", "start", "trace_id")

    def __init__(self, trace_id: str, span_id: str, parent: str | None, name: str, start: int, end: int,
                 attributes: dict[str, Any], events: list[SpanEvent], error: bool, message: str | None, line: int,
                 order: int) -> None:
        self.trace_id, self.span_id, self.parent, self.name = trace_id, span_id, parent, name
        self.start, self.end, self.attributes, self.events = start, end, attributes, events
        self.error, self.message, self.line, self.order = error, message, line, order
        self.ended = True   # False for a span exported before it ended (no end time, or 0)
        self.log = False    # True for a log record, read as a span of no duration
        self.dropped = False   # True when the exporter says it left some attributes out (a limit)


def read_traces(records: Iterator[Record], context: Context, source_format: str) -> Iterator[tuple[str, list[Span]]]:
    """The spans of each wanted trace, in file order, as soon as its last line has been read.
    Records of other signals (metrics) and spans of unwanted traces are skipped (counted, or their
    ids noted); so are the log records of a trace that has no span (a logs file given for the
    traces file: no run, rather than a run of nothing that passes)."""
    for trace_id, spans in _traces(records, context, source_format):
        if any(not span.log for span in spans):
            yield trace_id, spans
        else:
            context.skip(len(spans), logs=True)


def _traces(records: Iterator[Record], context: Context, source_format: str) -> Iterator[tuple[str, list[Span]]]:
    traces: Runs[list[Span]] = Runs(context, new_list)
    order = 0
    for record in records:
        export = _export(record, context.file)
        if export is None:   # (a record of metrics; a record of another format stops the import)
            try:
                value = record.value
            except TraceError:   # (JSON the typed read takes, not the plain one: 1e400 in a metric)
                value = None
            refuse_other(value, source_format, context.file, record.line)
            context.skip()
        else:
            kept_id: str | None = None   # the trace of the span before (a line's spans come a trace at a time)
            kept: list[Span] | None = None   # its spans, or None for a trace not wanted
            for span in _read(export, context, record.line, order):
                order += 1
                if span.trace_id != kept_id:
                    kept_id = span.trace_id
                    kept = traces.get(kept_id, record.line) if context.wants(kept_id) else None
                if kept is None:
                    context.seen(span.trace_id)
                    continue
                add_record(kept, span, context, record.line, kept_id, "spans")
        yield from traces.ended(record.line)
    yield from traces.rest()


def _read(export: _Export, context: Context, line: int, order: int) -> Iterator[Span]:
    """The spans of an export, then its log records as spans of no duration (`log` set): a log
    record is read only by the convention and profiles, at its time, inside its span."""
    spans = _span_lists(export)
    for index, raw in enumerate(_each(spans)):
        try:
            span = _span(raw, line, order)
        except _Problem as problem:
            raise TraceError(context.file, line, problem.at(_SPANS, _place(spans, index))) from None
        yield span
        order += 1
    logs = _log_lists(export)
    for index, log in enumerate(_each(logs)):
        if not log.traceId:
            context.skip(logs=True)   # a log record of no trace belongs to no run
            continue
        try:
            span = _log(log, line, order)
        except _Problem as problem:
            raise TraceError(context.file, line, problem.at(_LOGS, _place(logs, index))) from None
        yield span
        order += 1


TRACE_ID = re.compile(rb'"traceId"\s*:\s*"([^"\\]*)"')
"""Where a line names a trace id (for the first pass, see `records.last_lines`)."""


def trace_key(found: bytes) -> str | None:
    """A trace id found by `TRACE_ID`, as spans are keyed (lowercase hex), or None."""
    try:
        return _id(found.decode("ascii"), 16, "")
    except (_Problem, UnicodeDecodeError):
        return None


class _Problem(Exception):
    """A field of a span or log record that cannot be read. The record's place in its export is
    worked out only then (`at`): the usual span is read without building its JSON path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field, self.problem = field, problem

    def at(self, signal: str, indices: tuple[int, int, int]) -> str:
        """The message, naming the field by its JSON path (`signal` names each level's list)."""
        names = signal.split(".")
        path = "".join(f".{name}[{index}]" for name, index in zip(names, indices, strict=True))
        return f"${path}.{self.field}: {self.problem}"


_SPANS = "resourceSpans.scopeSpans.spans"
_LOGS = "resourceLogs.scopeLogs.logRecords"


class _Value(msgspec.Struct):
    """An OTLP AnyValue: one of its fields is set."""

    stringValue: str | None = None
    boolValue: bool | str | None = None
    intValue: int | str | None = None
    doubleValue: float | str | None = None
    arrayValue: _Values | None = None
    kvlistValue: _Pairs | None = None
    bytesValue: str | None = None


class _Values(msgspec.Struct):
    values: list[_Value] = []


class _Pair(msgspec.Struct):
    key: str
    value: _Value | None = None


class _Pairs(msgspec.Struct):
    values: list[_Pair] = []


class _Event(msgspec.Struct):
    name: str
    timeUnixNano: int | str | None = None
    attributes: list[_Pair] = []


class _Status(msgspec.Struct):
    code: int | str | None = None
    message: str | None = None


class _RawSpan(msgspec.Struct):
    traceId: str
    spanId: str
    name: str
    startTimeUnixNano: int | str
    endTimeUnixNano: int | str | None = None
    parentSpanId: str | None = None
    attributes: list[_Pair] = []
    events: list[_Event] = []
    status: _Status | None = None
    droppedAttributesCount: Any = 0   # (read only as "some were left out": any other value is none)


class _Scope(msgspec.Struct):
    spans: list[_RawSpan] = []


class _Resource(msgspec.Struct):
    scopeSpans: list[_Scope] = []
    instrumentationLibrarySpans: list[_Scope] = []   # what OTLP called it before 0.15


class _LogRecord(msgspec.Struct):
    timeUnixNano: int | str | None = None
    observedTimeUnixNano: int | str | None = None
    traceId: str = ""
    spanId: str = ""
    eventName: str = ""
    body: _Value | None = None
    attributes: list[_Pair] = []


class _LogScope(msgspec.Struct):
    logRecords: list[_LogRecord] = []


class _LogResource(msgspec.Struct):
    scopeLogs: list[_LogScope] = []


class _Export(msgspec.Struct):
    resourceSpans: list[_Resource] | None = None
    resourceLogs: list[_LogResource] | None = None


_decode_export = msgspec.json.Decoder(_Export).decode


def _export(record: Record, file: str) -> _Export | None:
    """A record decoded as an OTLP export of spans (straight from its JSON text, in C), or None
    for a record of another signal. A span of the wrong shape names its JSON path."""
    try:
        raw = record.raw
        export = _decode_export(raw) if raw is not None else msgspec.convert(record.value, _Export)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise TraceError(file, record.line, decode_problem(exc, data=record.raw)) from None
    return export if export.resourceSpans is not None or export.resourceLogs is not None else None


def _span_lists(export: _Export) -> list[list[list[_RawSpan]]]:
    """The export's spans, by resource and scope (the old name of scopeSpans read too)."""
    return [[scope.spans for scope in resource.scopeSpans or resource.instrumentationLibrarySpans]
            for resource in export.resourceSpans or ()]


def _log_lists(export: _Export) -> list[list[list[_LogRecord]]]:
    """The export's log records, by resource and scope."""
    return [[scope.logRecords for scope in resource.scopeLogs] for resource in export.resourceLogs or ()]


def _each(lists: list[list[list[Any]]]) -> Iterator[Any]:
    for scopes in lists:
        for items in scopes:
            yield from items


def _place(lists: list[list[list[Any]]], index: int) -> tuple[int, int, int]:
    """Where the `index`th item `_each` gives is: its index at each level of the export."""
    for r, scopes in enumerate(lists):
        for s, items in enumerate(scopes):
            if index < len(items):
                return r, s, index
            index -= len(items)
    raise IndexError(index)


def _log(log: _LogRecord, line: int, order: int) -> Span:
    """A log record as a span of no duration: its name is `eventName` (else the `event.name`
    attribute), its parent the span it was logged in."""
    trace_id = _id(log.traceId, 16, "traceId")
    parent = _id(log.spanId, 8, "spanId") if log.spanId else None
    stamp = log.timeUnixNano if log.timeUnixNano not in (None, 0, "0") else log.observedTimeUnixNano
    if stamp is None:
        raise _Problem("timeUnixNano", "expected a time in nanoseconds since 1970 (digits)")
    at = _clock(stamp, "timeUnixNano")
    found = attributes(log.attributes)
    name = log.eventName or found.get("event.name")
    span = Span(trace_id, f"log-{order}", parent, name if isinstance(name, str) else "", at, at, found, [], False,
                None, line, order)
    span.log = True
    return span


def _span(raw: _RawSpan, line: int, order: int) -> Span:
    trace_id = _id(raw.traceId, 16, "traceId")
    span_id = _id(raw.spanId, 8, "spanId")
    parent = _id(raw.parentSpanId, 8, "parentSpanId") if raw.parentSpanId else None
    start = _clock(raw.startTimeUnixNano, "startTimeUnixNano")
    end = 0 if raw.endTimeUnixNano is None else _clock(raw.endTimeUnixNano, "endTimeUnixNano")
    status = raw.status
    if status is not None and status.code not in _STATUS_CODES:   # (read as no error, a failure would pass)
        raise _Problem("status.code", "expected 0, 1 or 2, or STATUS_CODE_UNSET, STATUS_CODE_OK or STATUS_CODE_ERROR")
    error = status is not None and status.code in _ERROR_CODES
    message = status.message if status is not None and status.message else None
    events = []
    for index, event in enumerate(raw.events):
        at = start if event.timeUnixNano is None else _clock(event.timeUnixNano, f"events[{index}].timeUnixNano")
        events.append(SpanEvent(event.name, at, attributes(event.attributes)))
    span = Span(trace_id, span_id, parent, raw.name, start, end or start, attributes(raw.attributes), events, error,
                message, line, order)
    span.ended = end != 0
    span.dropped = _some(raw.droppedAttributesCount)
    return span


def _some(count: Any) -> bool:
    """Whether an exporter's count of what it left out says it left some out: a positive number,
    or a string of digits that is one."""
    if isinstance(count, str):
        return count.isdigit() and int(count) > 0
    return isinstance(count, int | float) and not isinstance(count, bool) and count > 0


_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")
_STATUS_CODES = (None, 0, 1, "0", "1", "STATUS_CODE_UNSET", "STATUS_CODE_OK", "UNSET", "OK", *_ERROR_CODES)
"""A span status's codes, as integers or names (with or without the prefix), or none; the error's
are `_ERROR_CODES`."""


def _id(value: str, size: int, field: str) -> str:
    """An id as lowercase hex, from hex (2 * size digits) or base64 (of `size` bytes). The same
    ids come again and again (a trace's, a parent's): the last few are remembered."""
    found = _IDS.get((value, size))
    if found is not None:
        return found
    found = _read_id(value, size, field)
    if len(_IDS) >= 4096:
        _IDS.clear()
    _IDS[(value, size)] = found
    return found


_IDS: dict[tuple[str, int], str] = {}


def _read_id(value: str, size: int, field: str) -> str:
    text = value.strip()
    if len(text) == 2 * size:
        try:
            bytes.fromhex(text)
            return text.lower()
        except ValueError:
            pass
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if len(decoded) == size:
        return decoded.hex()
    raise _Problem(field, f"expected an id of {size} bytes, in hex or base64")


def _clock(value: int | str, field: str) -> int:
    """Nanoseconds since the epoch from a string of digits or an integer; never through a float."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= 30):
            raise _Problem(field, "expected a time in nanoseconds since 1970 (digits)")
        clock = int(value)
    else:
        clock = value
    if not 0 <= clock <= _MAX_CLOCK:
        raise _Problem(field, f"{clock} is not a time between 1970 and 9999")
    return clock


def attributes(pairs: list[_Pair]) -> dict[str, Any]:
    """OTLP key-value attributes as a dict of plain values (the last of a repeated key wins)."""
    found: dict[str, Any] = {}
    for pair in pairs:
        value = pair.value
        if value is None:
            found[pair.key] = None
        elif value.stringValue is not None:   # most attributes are text
            found[pair.key] = value.stringValue
        else:
            found[pair.key] = any_value(value)
    return found


def any_value(value: _Value | None) -> Any:
    """An OTLP AnyValue as a plain value: strings, booleans, integers (from their decimal
    strings), doubles, lists and objects; bytes as their base64 text."""
    if value is None:
        return None
    if value.stringValue is not None:
        return value.stringValue
    if value.boolValue is not None:
        return value.boolValue is True or value.boolValue == "true"
    if value.intValue is not None:
        inner = value.intValue
        if isinstance(inner, str):
            try:
                return int(inner)
            except ValueError:
                return inner
        return inner
    if value.doubleValue is not None:
        return value.doubleValue if isinstance(value.doubleValue, float) else _double(value.doubleValue)
    if value.arrayValue is not None:
        return [any_value(item) for item in value.arrayValue.values]
    if value.kvlistValue is not None:
        return {pair.key: any_value(pair.value) for pair in value.kvlistValue.values}
    return value.bytesValue


def _double(text: Any) -> Any:
    try:
        number = float(text)
    except (TypeError, ValueError):
        return text
    return number if number == number and number not in (float("inf"), float("-inf")) else str(text)


class Tree:
    """The spans of one trace as a tree: parents, depths and children, safe against parents that
    are missing, duplicate span ids and cycles (such a span becomes a root)."""

    def __init__(self, spans: list[Span]) -> None:
        self.spans = spans
        self.by_id: dict[str, Span] = {}
        for span in spans:
            self.by_id.setdefault(span.span_id, span)   # a repeated id: the first span holds it
        self.depth: dict[int, int] = {}
        self.parent_of: dict[int, Span | None] = {}
        for span in spans:
            self._place(span)
        self.children: dict[int, list[Span]] = {}
        for span in spans:
            parent = self.parent_of[id(span)]
            if parent is not None:
                self.children.setdefault(id(parent), []).append(span)

    def _place(self, span: Span) -> None:
        if id(span) in self.depth:
            return   # placed with an earlier span's chain (perhaps as the root that closes a cycle)
        parent = self.by_id.get(span.parent) if span.parent else None
        if parent is not None and parent is not span and id(parent) in self.depth:   # the usual case
            self.parent_of[id(span)] = parent   # a placed parent's chain is settled: no cycle runs through it
            self.depth[id(span)] = self.depth[id(parent)] + 1
            return
        chain: list[Span] = []
        seen: set[int] = set()
        current: Span | None = span
        while current is not None and id(current) not in self.depth:
            if id(current) in seen:   # a cycle: the span where it closes becomes a root
                self.parent_of[id(current)] = None
                self.depth[id(current)] = 0
                chain.pop()
                break
            seen.add(id(current))
            chain.append(current)
            parent = self.by_id.get(current.parent) if current.parent else None
            self.parent_of[id(current)] = parent if parent is not current else None
            current = self.parent_of[id(current)]
        for member in reversed(chain):
            parent = self.parent_of[id(member)]
            self.depth[id(member)] = 0 if parent is None else self.depth.get(id(parent), -1) + 1

    def parent(self, span: Span) -> Span | None:
        return self.parent_of[id(span)]

    def depth_of(self, span: Span) -> int:
        return self.depth[id(span)]

    def roots(self) -> list[Span]:
        return [span for span in self.spans if self.parent_of[id(span)] is None]

    def ancestors(self, span: Span) -> Iterator[Span]:
        parent = self.parent(span)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def inside(self, span: Span, root: Span) -> bool:
        return span is root or any(ancestor is root for ancestor in self.ancestors(span))
