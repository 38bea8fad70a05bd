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
from collections.abc import Iterator
from typing import Any

from agent_invariants.errors import TraceError
from agent_invariants.importers.records import Record
from agent_invariants.importers.run import Context

__all__ = ("Span", "SpanEvent", "read_traces", "sniff_otlp")

_MAX_CLOCK = 253402300799 * 1_000_000_000   # 9999-12-31T23:59:59Z


class SpanEvent:
    """An event inside a span (`exception`, or a convention event such as `outcome.observed`)."""

    __slots__ = ("at", "attributes", "name")

    def __init__(self, name: str, at: int, attributes: dict[str, Any]) -> None:
        self.name, self.at, self.attributes = name, at, attributes


class Span:
    """One span, its ids in lowercase hex, its times in nanoseconds, its attributes by key."""

    __slots__ = ("attributes", "end", "error", "events", "line", "message", "name", "order", "parent", "path",
                 "span_id", "start", "trace_id")

    def __init__(self, trace_id: str, span_id: str, parent: str | None, name: str, start: int, end: int,
                 attributes: dict[str, Any], events: list[SpanEvent], error: bool, message: str | None, line: int,
                 order: int, path: str) -> None:
        self.trace_id, self.span_id, self.parent, self.name = trace_id, span_id, parent, name
        self.start, self.end, self.attributes, self.events = start, end, attributes, events
        self.error, self.message, self.line, self.order, self.path = error, message, line, order, path


def sniff_otlp(value: Any) -> bool:
    """Whether a record is an OTLP JSON export of spans."""
    return isinstance(value, dict) and isinstance(value.get("resourceSpans"), list)


def read_traces(records: Iterator[Record], context: Context) -> dict[str, list[Span]]:
    """The spans of every wanted trace, by trace id, in file order. Records of other signals
    (logs, metrics) and spans of unwanted traces are skipped (counted, or their ids noted)."""
    traces: dict[str, list[Span]] = {}
    order = 0
    for record in records:
        value = record.value
        if not isinstance(value, dict) or "resourceSpans" not in value:
            context.skip()
            continue
        for path, raw in _spans(value, context.file, record.line):
            span = _span(raw, path, context.file, record.line, order)
            order += 1
            if not context.wants(span.trace_id):
                context.seen(span.trace_id)
                continue
            traces.setdefault(span.trace_id, []).append(span)
    return traces


def _spans(value: dict[str, Any], file: str, line: int) -> Iterator[tuple[str, Any]]:
    resources = value["resourceSpans"]
    if not isinstance(resources, list):
        raise TraceError(file, line, "$.resourceSpans: expected a list")
    for r, resource in enumerate(resources):
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans", [])) \
            if isinstance(resource, dict) else None
        if not isinstance(scopes, list):
            raise TraceError(file, line, f"$.resourceSpans[{r}].scopeSpans: expected a list")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans", []) if isinstance(scope, dict) else None
            if not isinstance(spans, list):
                raise TraceError(file, line, f"$.resourceSpans[{r}].scopeSpans[{s}].spans: expected a list")
            for n, span in enumerate(spans):
                yield f"$.resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", span


def _span(raw: Any, path: str, file: str, line: int, order: int) -> Span:
    if not isinstance(raw, dict):
        raise TraceError(file, line, f"{path}: expected a span (an object)")
    trace_id = _id(raw.get("traceId"), 16, f"{path}.traceId", file, line)
    span_id = _id(raw.get("spanId"), 8, f"{path}.spanId", file, line)
    parent_raw = raw.get("parentSpanId")
    parent = _id(parent_raw, 8, f"{path}.parentSpanId", file, line) if parent_raw else None
    name = raw.get("name")
    if not isinstance(name, str):
        raise TraceError(file, line, f"{path}.name: expected a string")
    start = _clock(raw.get("startTimeUnixNano"), f"{path}.startTimeUnixNano", file, line)
    end = _clock(raw.get("endTimeUnixNano", raw.get("startTimeUnixNano")), f"{path}.endTimeUnixNano", file, line)
    status = raw.get("status") or {}
    code = status.get("code") if isinstance(status, dict) else None
    error = code in (2, "2", "STATUS_CODE_ERROR", "ERROR")
    message = status.get("message") if isinstance(status, dict) and isinstance(status.get("message"), str) else None
    events = []
    for index, event in enumerate(raw.get("events") or []):
        if not isinstance(event, dict) or not isinstance(event.get("name"), str):
            raise TraceError(file, line, f"{path}.events[{index}]: expected an event with a name")
        at = _clock(event.get("timeUnixNano", raw.get("startTimeUnixNano")), f"{path}.events[{index}].timeUnixNano",
                    file, line)
        events.append(SpanEvent(event["name"], at, attributes(event.get("attributes"), f"{path}.events[{index}]",
                                                               file, line)))
    return Span(trace_id, span_id, parent, name, start, end, attributes(raw.get("attributes"), path, file, line),
                events, error, message or None, line, order, path)


def _id(value: Any, size: int, path: str, file: str, line: int) -> str:
    """An id as lowercase hex, from hex (2 * size digits) or base64 (of `size` bytes)."""
    if isinstance(value, str):
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
    raise TraceError(file, line, f"{path}: expected an id of {size} bytes, in hex or base64")


def _clock(value: Any, path: str, file: str, line: int) -> int:
    """Nanoseconds since the epoch from a string or an integer; never through a float."""
    if isinstance(value, str) and value.isdigit():
        clock = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        clock = value
    elif isinstance(value, float) and value.is_integer():
        clock = int(value)
    else:
        raise TraceError(file, line, f"{path}: expected a time in nanoseconds since 1970 (digits)")
    if not 0 <= clock <= _MAX_CLOCK:
        raise TraceError(file, line, f"{path}: {clock} is not a time between 1970 and 9999")
    return clock


def attributes(raw: Any, path: str, file: str, line: int) -> dict[str, Any]:
    """OTLP key-value attributes as a dict of plain values (the last of a repeated key wins)."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise TraceError(file, line, f"{path}.attributes: expected a list of {{key, value}}")
    found: dict[str, Any] = {}
    for item in raw:
        key = item.get("key") if item.__class__ is dict else None
        if key.__class__ is not str:
            index = raw.index(item)
            raise TraceError(file, line, f"{path}.attributes[{index}]: expected {{key, value}}")
        found[key] = any_value(item.get("value"))
    return found


def any_value(value: Any) -> Any:
    """An OTLP AnyValue as a plain value: strings, booleans, integers (from their decimal
    strings), doubles, lists and objects; bytes as their base64 text."""
    if not isinstance(value, dict) or not value:
        return None
    inner = value.get("stringValue")   # most attributes are text
    if inner.__class__ is str and len(value) == 1:
        return inner
    kind, inner = next(iter(value.items()))
    if kind == "stringValue":
        return inner if isinstance(inner, str) else str(inner)
    if kind == "boolValue":
        return inner is True or inner == "true"
    if kind == "intValue":
        try:
            return int(inner)
        except (TypeError, ValueError):
            return inner
    if kind == "doubleValue":
        return inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _double(inner)
    if kind == "arrayValue":
        items = inner.get("values") if isinstance(inner, dict) else None
        return [any_value(item) for item in items] if isinstance(items, list) else []
    if kind == "kvlistValue":
        items = inner.get("values") if isinstance(inner, dict) else None
        return {item["key"]: any_value(item.get("value")) for item in items
                if isinstance(item, dict) and isinstance(item.get("key"), str)} if isinstance(items, list) else {}
    if kind == "bytesValue":
        return inner
    return None


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
