"""`openai-agents`: the OpenAI Agents SDK's own trace export, one `trace` or `trace.span` object
per line, as a tracing processor writes `trace.export()` and `span.export()` (§7, §10 points 26,
28, 31-33, 36).

- the trace (`object: trace`) and its spans: the run, whose id is the trace id; `run.start` at the
  first span's start, `run.completed` at the last span's end, or `run.failed` {status: failed,
  reason} when an agent span (or the SDK's `task` or `turn` span around it) fails or a guardrail
  fires; no end at all while an outermost span has not ended (exported while it ran). A span
  written as it started and again as it ended (same id) is one span;
- `span_data.type = function`: `tool.call` {tool: `name`, call_id: the span id, args: `input`} at
  its start, `tool.result` {result: `output`, ok: `error` is null} at its end;
- `guardrail` with `triggered: true`: `control.stop` {reason: `guardrail:<name>`} at its end (so a
  tool that ran before it is not after the stop); a `triggered` neither true nor false is an error;
- `handoff`: `agent.handoff` {data: {from, to}};
- `custom` named after one of our event types (or matched by a profile): that event, its fields
  from `data`.

The export has no call ids: the span id is the call id. Its `output` is `str()` of what the tool
returned, so a dict comes as a Python repr: it stays a string (also in `data.raw_result`) and is
never evaluated. A tool-input guardrail that rejects a call leaves a function span that looks like a
successful call whose result is the rejection message: nothing in the export tells them apart.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_invariants.errors import TraceError
from agent_invariants.importers.common import (
    END,
    FIRST,
    LAST,
    Timeline,
    cut_text,
    duration_ms,
    iso_nanos,
    merged_records,
    parse_args,
    parse_result,
)
from agent_invariants.importers.profile import Candidate, convention_event
from agent_invariants.importers.records import Record, string_field
from agent_invariants.importers.run import Context, ImportedRun, Runs, add_record, new_list
from agent_invariants.importers.sniff import refuse_other

__all__ = ("FORMAT", "RUN_IDS", "runs")

FORMAT = "openai-agents"


class _Span:
    __slots__ = ("data", "depth", "end", "ended", "error", "id", "line", "order", "parent", "start")

    def __init__(self, raw: dict[str, Any], line: int, order: int, start: int, end: int) -> None:
        self.id: str = raw["id"]
        self.parent = raw.get("parent_id") if isinstance(raw.get("parent_id"), str) else None
        self.data: dict[str, Any] = raw["span_data"]
        self.error = raw.get("error")
        self.line, self.order, self.start, self.end = line, order, start, end
        self.depth = 0
        self.ended = isinstance(raw.get("ended_at"), str)   # a span still open when it was exported has none


def runs(records: Iterator[Record], context: Context) -> Iterator[ImportedRun]:
    traces: Runs[list[_Span]] = Runs(context, new_list)
    order = 0
    for record in records:
        span = _read(record, context, order)
        if span is not None:
            trace_id, found = span
            add_record(traces.get(trace_id, record.line), found, context, record.line, trace_id, "spans")
            order += 1
        for trace_id, spans in traces.ended(record.line):
            yield context.finished(trace_id, _timeline(context, trace_id, spans))
    for trace_id, spans in traces.rest():
        if spans:
            yield context.finished(trace_id, _timeline(context, trace_id, spans))


def _read(record: Record, context: Context, order: int) -> tuple[str, _Span] | None:
    """A span of a wanted trace, with its trace id; None for anything else (a trace record, a
    span of another trace, a record of another kind: counted)."""
    value = record.value
    if not isinstance(value, dict) or value.get("object") not in ("trace", "trace.span"):
        refuse_other(value, FORMAT, context.file, record.line)
        context.skip()
        return None
    if value["object"] == "trace":
        trace_id = _text(value, "id", "$", context.file, record.line)
        if not context.wants(trace_id):
            context.seen(trace_id)
        else:   # the run begins here, for the order runs are listed in, though its spans come later
            context.began.setdefault(trace_id, record.line)
        return None
    trace_id = _text(value, "trace_id", "$", context.file, record.line)
    if not context.wants(trace_id):
        context.seen(trace_id)
        return None
    return trace_id, _span(value, record.line, order, context.file)


RUN_IDS = string_field("trace_id")
"""How a first pass finds the trace a line belongs to (see `records.last_lines`)."""


def _text(value: dict[str, Any], key: str, path: str, file: str, line: int) -> str:
    found = value.get(key)
    if not isinstance(found, str) or not found:
        raise TraceError(file, line, f"{path}.{key}: expected a non-empty string")
    return found


def _span(value: dict[str, Any], line: int, order: int, file: str) -> _Span:
    _text(value, "id", "$", file, line)
    data = value.get("span_data")
    if not isinstance(data, dict):
        raise TraceError(file, line, "$.span_data: expected an object")
    if data.get("type") == "guardrail" and not isinstance(data.get("triggered", False), bool):
        # (a tripped guardrail is a stop: "true" or 1 read as not tripped would pass what it stopped)
        raise TraceError(file, line, "$.span_data.triggered: expected true or false")
    start = iso_nanos(value["started_at"]) if isinstance(value.get("started_at"), str) else None
    if start is None:
        raise TraceError(file, line, "$.started_at: expected an ISO 8601 time")
    end = iso_nanos(value["ended_at"]) if isinstance(value.get("ended_at"), str) else start
    if end is None:
        raise TraceError(file, line, "$.ended_at: expected an ISO 8601 time")
    return _Span(value, line, order, start, end)


_MAX_DEPTH = 10_000


def _depths(spans: list[_Span]) -> None:
    """Each span's depth: how many ancestors its parents lead through (a cycle of parents ends
    the count, as does the 10,000th), each worked out once from its parent's (a deep chain of
    agents is read in linear time). Spans that share an id are counted one by one, as written."""
    by_id = {span.id: span for span in spans}
    if len(by_id) < len(spans):
        _depths_walked(spans, by_id)
        return
    known: dict[str, int] = {}
    for span in spans:
        path: list[_Span] = []
        on_path: dict[str, int] = {}
        current: _Span | None = span
        while current is not None and current.id not in known and current.id not in on_path:
            on_path[current.id] = len(path)
            path.append(current)
            current = by_id.get(current.parent) if current.parent else None
        if current is not None and current.id in on_path:   # a cycle: each of it sees the others
            cycle = path[on_path[current.id]:]
            for member in cycle:
                known[member.id] = min(len(cycle) - 1, _MAX_DEPTH)
            path = path[:on_path[current.id]]
            above = known[current.id]
        else:
            above = -1 if current is None else known[current.id]
        for member in reversed(path):
            above = known[member.id] = min(above + 1, _MAX_DEPTH)
        span.depth = known[span.id]


def _depths_walked(spans: list[_Span], by_id: dict[str, _Span]) -> None:
    for span in spans:
        depth, parent, seen = 0, by_id.get(span.parent) if span.parent else None, {span.id}
        while parent is not None and parent.id not in seen and depth < _MAX_DEPTH:
            seen.add(parent.id)
            depth += 1
            parent = by_id.get(parent.parent) if parent.parent else None
        span.depth = depth


def _merged(spans: list[_Span]) -> list[_Span]:
    """One span per id where a processor wrote a span twice: as it started (no `ended_at`) and as
    it ended, the ended record takes the open one's place (and its place among equal times); the
    same record written twice counts once. Spans that only share an id stay apart, as written."""
    return merged_records(spans, lambda span: span.id, _ended, _same)


def _ended(earlier: _Span, span: _Span) -> _Span | None:
    """`span`, in the place of `earlier` when that is its start (open, same start and type), else None."""
    if earlier.ended or earlier.start != span.start or earlier.data.get("type") != span.data.get("type"):
        return None
    span.order = earlier.order
    return span


def _same(earlier: _Span, span: _Span) -> bool:
    """Whether `span` is `earlier` written again (a processor that exports twice)."""
    return (earlier.start, earlier.end, earlier.ended, earlier.error, earlier.data) == \
        (span.start, span.end, span.ended, span.error, span.data)


def _timeline(context: Context, trace_id: str, spans: list[_Span]) -> Timeline:
    spans = _merged(spans)
    _depths(spans)
    out = Timeline(FORMAT, context.file, trace_id, digits=6)
    # at equal times the shallower span starts first and ends last (§7): the run's root, not a tool in it
    first = min(spans, key=lambda span: (span.start, span.depth, span.order))
    last = max(spans, key=lambda span: (span.end, -span.depth, -span.order))
    # the trace's bounds, as a root span's start and end: at equal times, §7's order of starts and ends
    out.add({"type": "run.start"}, first.start, line=first.line, span_id=first.id, bound=FIRST)
    failures: list[tuple[tuple[int, int, int], str]] = []   # (where in the events' order, reason)
    for span in spans:
        kind = span.data.get("type")
        name = str(span.data["name"]) if isinstance(span.data.get("name"), str) else str(kind)
        candidate = Candidate(name, kind if isinstance(kind, str) else None, _attributes(span.data))
        event = context.profile.event_for(candidate) if context.profile is not None else None
        if event is None and kind == "custom":
            data = span.data.get("data")
            event = convention_event(candidate, data if isinstance(data, dict) else {})
        if event is not None:
            out.add(event, span.start, depth=span.depth, line=span.line, span_id=span.id)
        elif kind == "function":
            _tool(out, span, str(span.data["name"]) if isinstance(span.data.get("name"), str) else "<unnamed>")
        elif kind == "guardrail" and span.data.get("triggered") is True:
            reason = cut_text(f"guardrail:{name}", 500)
            out.add({"type": "control.stop", "reason": reason}, span.end, phase=END, depth=span.depth, line=span.line,
                    span_id=span.id)
            failures.append((_end_order(span), reason))
        elif kind == "handoff":
            data = {key: span.data[field] for key, field in (("from", "from_agent"), ("to", "to_agent"))
                    if isinstance(span.data.get(field), str)}
            out.add({"type": "agent.handoff", "data": data}, span.start, depth=span.depth, line=span.line,
                    span_id=span.id)
        elif span.error and _runs_agent(span):
            failures.append((_end_order(span), _error_text(span.error)))
        elif kind not in ("agent", "generation", "response", "mcp_tools", "custom", "guardrail", "transcription",
                          "speech", "speech_group"):
            context.skip()
    # the first to fail, in the events' order, not the first written (a processor writes spans as they
    # end, a Collector in no set order)
    failure = min(failures, key=lambda found: found[0])[1] if failures else None
    end: dict[str, Any] = {"type": "run.completed"}
    if failure is not None:
        end = {"type": "run.failed", "status": "failed", "reason": failure}
    # a run whose outermost span never ended (exported while it ran, its process gone) has no end
    # to map, as a call whose span never ended gets no result: none is made up
    known = {span.id for span in spans}
    if failure is not None or all(span.ended for span in spans if span.parent is None or span.parent not in known):
        out.add(end, last.end, phase=END, line=last.line, span_id=last.id, bound=LAST)
    return out


def _end_order(span: _Span) -> tuple[int, int, int]:
    """Where a span's end comes among the events: by time, at equal times the deeper first (§7);
    a span exported before it ended ends, as its `control.stop` is placed, where it starts."""
    return span.end, -span.depth, span.order


def _runs_agent(span: _Span) -> bool:
    """An agent span, or the SDK's own `task` and `turn` spans around it: their errors fail the run
    (an input guardrail's trip or an unknown tool is an error of the turn, not of the agent span)."""
    data = span.data
    inner = data.get("data")
    return data.get("type") == "agent" or (
        data.get("type") == "custom" and isinstance(inner, dict) and inner.get("sdk_span_type") in ("task", "turn"))


def _attributes(data: dict[str, Any]) -> dict[str, Any]:
    """What a profile's `attributes` test sees of a span: its `span_data`, a custom span's `data`
    merged in."""
    inner = data.get("data")
    return {**data, **inner} if isinstance(inner, dict) else dict(data)


def _tool(out: Timeline, span: _Span, name: str) -> None:
    key = ("span", span.id, span.order)
    call: dict[str, Any] = {"type": "tool.call", "tool": name or "<unnamed>", "call_id": span.id}
    args, raw = parse_args(span.data.get("input"))
    if args is not None:
        call["args"] = args
    elif raw is not None:
        call["data"] = {"raw_args": raw}
    out.add(call, span.start, depth=span.depth, line=span.line, span_id=span.id, key=key)
    if not span.ended and not span.error:
        return   # still running when it was exported: no result, and none guessed
    result: dict[str, Any] = {"type": "tool.result", "tool": call["tool"], "call_id": span.id, "ok": not span.error}
    if "output" in span.data and span.data["output"] is not None:
        value, kept = parse_result(span.data["output"])
        result["result"] = value
        if kept is not None:
            result["data"] = {"raw_result": kept}
    if span.error:
        result.setdefault("data", {})["error"] = _error_text(span.error)
    took = duration_ms(span.start, span.end)
    if took is not None:
        result["duration_ms"] = took
    out.add(result, span.end, phase=END, depth=span.depth, line=span.line, span_id=span.id, key=key)


def _error_text(error: Any) -> str:
    """A span's error: its message, then the cause its `data` gives (a failed run's agent span
    says only "Error in agent run", its data `{"error": "Error running tool refund: ..."}`)."""
    if not isinstance(error, dict):
        return cut_text(str(error), 500)
    message = error.get("message")
    data = error.get("data")
    if not isinstance(message, str) or not message:
        return cut_text(str(data or "error"), 500)
    cause = data.get("error") if isinstance(data, dict) else None
    return cut_text(f"{message}: {cause}" if isinstance(cause, str) and cause else message, 500)
