"""A reference model of the OpenTelemetry GenAI importer (`convert --from otel`), written from spec v2
§7 ("Common rules", the `otel` row, the mapping profile convention) and the binding §10 points 26-36,
checked on random span trees and on small hand-written cases.

Readings the spec leaves open and that the model follows (each says so where it is used):
- a span whose end is not after its start (zero length) has its result right after its call: a
  result never precedes its call (spec silent; "deeper ends first" taken literally would put it first);
- a tool span's error text (status message, else the `exception` event's "<exception.type>:
  <exception.message>") goes to `data.error` (spec silent);
- a span starting after the run root ends is still converted, after the terminal (spec silent; the
  generator keeps every span inside its root);
- a span id seen twice is the call id of both tool spans, the second one suffixed `~2` (spec silent
  on duplicate span ids; the `~n` rule applied to the id the call gets).
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import examples

if TYPE_CHECKING:
    from tests.conftest import Cli

BASE_NS = 1_700_000_000_123_456_789
TRACE_IDS = ["0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736", "11111111111111111111111111111111"]

# ---------------------------------------------------------------------------------------------------
# The input model: spans as the generator and the hand-written cases describe them.


@dataclass
class Span:
    trace: str  # hex
    span_id: str  # hex, 16 digits
    parent: str | None  # hex
    name: str
    start: int  # ns offset from BASE_NS
    end: int | None
    attrs: dict[str, Any] = field(default_factory=dict)  # OTLP AnyValue objects
    status: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    b64_ids: bool = False  # write ids in base64
    numeric_times: bool = False  # write times as JSON numbers
    line: int = 1  # 1-based file line the span is written on


def s(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def encode_id(hex_id: str, b64: bool) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode() if b64 else hex_id


def span_json(span: Span) -> dict[str, Any]:
    def clock(offset: int) -> int | str:
        return BASE_NS + offset if span.numeric_times else str(BASE_NS + offset)

    out: dict[str, Any] = {"traceId": encode_id(span.trace, span.b64_ids),
                           "spanId": encode_id(span.span_id, span.b64_ids),
                           "name": span.name, "startTimeUnixNano": clock(span.start),
                           # point 30: enums as integers or names
                           "kind": "SPAN_KIND_INTERNAL" if span.b64_ids else 1}
    if span.parent is not None:
        out["parentSpanId"] = encode_id(span.parent, span.b64_ids)
    elif span.numeric_times:
        out["parentSpanId"] = ""  # protobuf JSON writes an empty parent for a root
    if span.end is not None:
        out["endTimeUnixNano"] = clock(span.end)
    out["attributes"] = [{"key": k, "value": v} for k, v in span.attrs.items()]
    if span.status is not None:
        out["status"] = span.status
    if span.events:
        out["events"] = span.events
    return out


def otlp_text(spans: list[Span]) -> str:
    """OTLP JSON lines: each line one `resourceSpans` document holding the spans written on it."""
    last = max(sp.line for sp in spans)
    lines = []
    for number in range(1, last + 1):
        on_line = [span_json(sp) for sp in spans if sp.line == number]
        lines.append(json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                                     "scopeSpans": [{"scope": {"name": "m"}, "spans": on_line}]}]}))
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------------
# The reference model.


def iso(offset: int) -> str:
    """§7 / point 36: UTC ISO from the integer nanosecond clock, never through a float."""
    seconds, nanos = divmod(BASE_NS + offset, 10**9)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{nanos:09d}Z"


def duration_ms(start: int, end: int) -> float:
    """§7: `duration_ms` = end − start (ns → ms, one correctly rounded division)."""
    return (end - start) / 10**6


def attr_text(span: Span, key: str) -> str | None:
    value = span.attrs.get(key)
    return value.get("stringValue") if isinstance(value, dict) else None


def parse_json(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def is_error(span: Span) -> str | None:
    """Point 30: a failure is status ERROR (2 or `STATUS_CODE_ERROR`) or an `exception` span event.
    Returns the error text ("" when there is none), or None when the span did not fail."""
    status = span.status or {}
    if status.get("code") in (2, "STATUS_CODE_ERROR"):
        return str(status.get("message", ""))
    for event in span.events:
        if event.get("name") == "exception":  # spec silent on the text: "<type>: <message>"
            found = {a["key"]: a["value"].get("stringValue", "") for a in event.get("attributes", [])}
            kind, message = found.get("exception.type", ""), found.get("exception.message", "")
            return f"{kind}: {message}" if kind and message else kind or message
    return None


def operation(span: Span) -> str | None:
    return attr_text(span, "gen_ai.operation.name")


def model_runs(spans: list[Span], file: str) -> dict[str, list[dict[str, Any]]]:
    """Every run of the file (trace id → events) as §7 and points 26-36 describe the conversion."""
    runs: dict[str, list[dict[str, Any]]] = {}
    order = {id(sp): i for i, sp in enumerate(sorted(spans, key=lambda sp: sp.line))}
    for trace in dict.fromkeys(sp.trace for sp in sorted(spans, key=lambda sp: sp.line)):
        runs[trace] = model_run([sp for sp in spans if sp.trace == trace], file, order)
    return runs


def model_run(spans: list[Span], file: str, order: dict[int, int]) -> list[dict[str, Any]]:
    by_id = {sp.span_id: sp for sp in spans}

    def depth(sp: Span) -> int:
        d, seen, cur = 0, set(), sp
        while cur.parent is not None and cur.parent in by_id and cur.parent not in seen:
            seen.add(cur.parent)
            cur = by_id[cur.parent]
            d += 1
        return d

    # Point 30: the run root is the outermost invoke_agent/invoke_workflow span, else the earliest root.
    agents = [sp for sp in spans if operation(sp) in ("invoke_agent", "invoke_workflow")]
    if agents:
        root = min(agents, key=lambda sp: (depth(sp), sp.start, order[id(sp)]))
    else:
        roots = [sp for sp in spans if sp.parent is None]
        root = min(roots, key=lambda sp: (sp.start, order[id(sp)]))
    run_id = root.trace

    def source(sp: Span) -> dict[str, Any]:
        return {"format": "otel", "file": file, "line": sp.line, "span_id": sp.span_id}

    # (sort key, event): starts (t, 1, depth, file order); ends (t, 0, -depth, file order); the end of
    # a span that does not end after it starts comes right after its start (spec silent, see top).
    keyed: list[tuple[tuple[int, ...], dict[str, Any]]] = []

    def start_key(sp: Span) -> tuple[int, ...]:
        return (sp.start, 1, depth(sp), order[id(sp)], 0)

    def end_key(sp: Span) -> tuple[int, ...]:
        assert sp.end is not None
        if sp.end <= sp.start:
            return (sp.start, 1, depth(sp), order[id(sp)], 1)
        return (sp.end, 0, -depth(sp), order[id(sp)], 0)

    # Root: run.start, then run.completed or run.failed (point 31: the root or an agent span inside fails).
    keyed.append((start_key(root), {"type": "run.start", "time": iso(root.start), "run_id": run_id,
                                    "data": {"source": source(root)}}))
    if root.end is not None:
        failure = is_error(root)
        if failure is None:
            for sp in spans:
                if sp is not root and operation(sp) == "invoke_agent" and is_error(sp) is not None:
                    failure = is_error(sp)
                    break
        terminal: dict[str, Any] = {"type": "run.completed", "time": iso(root.end), "run_id": run_id}
        if failure is not None:
            terminal = {**terminal, "type": "run.failed", "status": "failed"}
            if failure:
                terminal["reason"] = failure
        output = attr_text(root, "ainv.output")
        if output is not None and failure is None:
            terminal["output"] = parse_json(output)[1]  # point 30 / 36: `ainv.output` holds JSON
        if root.end >= root.start:
            terminal["duration_ms"] = duration_ms(root.start, root.end)
        terminal["data"] = {"source": source(root)}
        keyed.append((end_key(root), terminal))

    seen_ids: dict[str, int] = {}
    for sp in sorted(spans, key=start_key):
        if sp is root:
            continue
        if operation(sp) == "execute_tool":
            keyed.extend(tool_events(sp, run_id, source(sp), seen_ids, start_key(sp),
                                     end_key(sp) if sp.end is not None else None))
        elif operation(sp) == "chat":
            keyed.extend(part_events(sp, spans, run_id, source(sp), start_key, end_key))
        elif sp.name == "control.stop":  # §7 convention: at the span's start (point 36), fields from ainv.*
            event: dict[str, Any] = {"type": "control.stop", "time": iso(sp.start), "run_id": run_id}
            reason = attr_text(sp, "ainv.reason")
            if reason is not None:
                event["reason"] = reason
            event["data"] = {"source": source(sp)}
            keyed.append((start_key(sp), event))
    keyed.sort(key=lambda pair: pair[0])
    return [{"seq": i + 1, **event} for i, (_, event) in enumerate(keyed)]


def parts_of(span: Span, key: str, kind: str) -> list[dict[str, Any]]:
    text = attr_text(span, key)
    messages = json.loads(text) if text is not None else []
    return [part for message in messages for part in message.get("parts", []) if part.get("type") == kind]


def part_events(sp: Span, spans: list[Span], run_id: str, src: dict[str, Any], start_key: Any, end_key: Any,
                ) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    """Point 29: a `tool_call` part whose id has no execute_tool span is a synthetic tool.call at the end
    of the chat span that produced it; its `tool_call_response` part the result at the start of the next
    chat span (no ok: unknown). The generator asks each id once and answers it in the next chat span."""
    out: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    spanned = {attr_text(other, "gen_ai.tool.call.id") for other in spans if operation(other) == "execute_tool"}
    synthetic = {"source": {**src, "synthetic": True}}
    for part in parts_of(sp, "gen_ai.output.messages", "tool_call"):
        if part["id"] in spanned or sp.end is None:
            continue
        out.append((end_key(sp), {"type": "tool.call", "time": iso(sp.end), "run_id": run_id, "tool": part["name"],
                                  "call_id": part["id"], "args": part["arguments"], "data": synthetic}))
    asked = {part["id"]: part["name"] for other in spans if operation(other) == "chat"
             for part in parts_of(other, "gen_ai.output.messages", "tool_call")}
    for part in parts_of(sp, "gen_ai.input.messages", "tool_call_response"):
        if part["id"] in spanned or part["id"] not in asked:
            continue
        out.append((start_key(sp), {"type": "tool.result", "time": iso(sp.start), "run_id": run_id,
                                    "tool": asked[part["id"]], "call_id": part["id"], "result": part["response"],
                                    "data": synthetic}))
    return out


def tool_events(sp: Span, run_id: str, src: dict[str, Any], seen_ids: dict[str, int],
                call_key: tuple[int, ...], result_key: tuple[int, ...] | None,
                ) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    """§7 `otel` row: the start is the `tool.call`, the end the `tool.result`."""
    native = attr_text(sp, "gen_ai.tool.call.id") or sp.span_id  # the native id, else the span id
    seen_ids[native] = seen_ids.get(native, 0) + 1
    call_id = native if seen_ids[native] == 1 else f"{native}~{seen_ids[native]}"
    shared: dict[str, Any] = {"run_id": run_id, "tool": attr_text(sp, "gen_ai.tool.name"), "call_id": call_id}
    data: dict[str, Any] = {} if call_id == native else {"native_call_id": native}
    call: dict[str, Any] = {"type": "tool.call", "time": iso(sp.start), **shared}
    call_data = dict(data)
    args = attr_text(sp, "gen_ai.tool.call.arguments")
    if args is not None:
        ok, parsed = parse_json(args)
        if ok and isinstance(parsed, dict):
            call["args"] = parsed
        else:  # a non-object or a Python repr goes to data.raw_args, never evaluated
            call_data["raw_args"] = args
    call["data"] = {**call_data, "source": src}
    out = [(call_key, call)]
    if sp.end is None or result_key is None:
        return out  # a span that never ended gets no result
    failure = is_error(sp)
    result: dict[str, Any] = {"type": "tool.result", "time": iso(sp.end), **shared, "ok": failure is None}
    text = attr_text(sp, "gen_ai.tool.call.result")
    if text is not None:
        ok, parsed = parse_json(text)  # point 26: JSON when valid, else the string itself
        result["result"] = parsed if ok else text
        if text in REPRS:
            data = {**data, "raw_result": text}
    if sp.end >= sp.start:
        result["duration_ms"] = duration_ms(sp.start, sp.end)
    result_data = dict(data)
    if failure:
        result_data["error"] = failure
    result["data"] = {**result_data, "source": src}
    out.append((result_key, result))
    return out


# ---------------------------------------------------------------------------------------------------
# Running the product.


def convert_all(cli: Cli, folder: Path, spans: list[Span]) -> tuple[dict[str, list[dict[str, Any]]], str]:
    folder.mkdir(parents=True)
    (folder / "in.otlp.jsonl").write_text(otlp_text(spans), encoding="utf-8")
    rel = folder.relative_to(cli.cwd)
    result = cli("convert", "--from", "otel", f"{rel}/in.otlp.jsonl", "--run", "all", "--out-dir", f"{rel}/out")
    assert result.returncode == 0, result.stderr
    runs = {}
    for path in sorted((folder / "out").iterdir()):
        runs[path.stem] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return runs, result.stderr


def convert_one(cli: Cli, tmp_path: Path, spans: list[Span]) -> list[dict[str, Any]]:
    (tmp_path / "t.otlp.jsonl").write_text(otlp_text(spans), encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


# ---------------------------------------------------------------------------------------------------
# The property test.

ANY_VALUES = [s("x"), {"intValue": "7"}, {"intValue": 7}, {"doubleValue": 1.5}, {"boolValue": True},
              {"bytesValue": "AAE="}, {"arrayValue": {"values": [s("a"), {"intValue": "1"}]}},
              {"kvlistValue": {"values": [{"key": "k", "value": s("v")}]}}, {}]
ARGS = [None, '{"a": 1}', '{"n": {"deep": [1, null]}}', "[1, 2]", "not json", "{'a': 1}", '"text"']
RESULTS = [None, '{"r": 2}', "[1, 2]", '"s"', "7", "plain text", "null", "{'a': 1}", "Result(x=1)"]
REPRS = {"{'a': 1}", "Result(x=1)"}  # Python reprs (point 26); how a repr is told from text is unspecified
STATUSES: list[dict[str, Any] | None] = [
    None, {}, {"code": 0}, {"code": 1}, {"code": "STATUS_CODE_OK"}, {"code": 2, "message": "boom"},
    {"code": "STATUS_CODE_ERROR", "message": "bad"}]
EXCEPTION = {"name": "exception", "timeUnixNano": str(BASE_NS), "attributes": [
    {"key": "exception.type", "value": s("ValueError")}, {"key": "exception.message", "value": s("kaput")}]}


@st.composite
def span_files(draw: st.DrawFn) -> list[Span]:
    traces = TRACE_IDS[:draw(st.integers(1, 2))]
    count = draw(st.integers(1, 12))
    lines = draw(st.integers(1, 3))
    spans: list[Span] = []
    for index in range(count):
        trace = traces[index % len(traces)] if index < len(traces) else draw(st.sampled_from(traces))
        same = [sp for sp in spans if sp.trace == trace]
        span_id = f"{index + 1:016x}"
        b64 = draw(st.booleans())
        numeric = draw(st.booleans())
        line = draw(st.integers(1, lines))
        extra = {"x.any": draw(st.sampled_from(ANY_VALUES))}
        if not same:  # the trace's root: starts at 0 and ends last (times inside it may tie with it)
            agent = draw(st.booleans())
            attrs = {"gen_ai.operation.name": s("invoke_agent")} if agent else {}
            if draw(st.booleans()):
                attrs["ainv.output"] = s('{"answer": 42}')
            status = draw(st.sampled_from(STATUSES))
            if attrs.get("ainv.output") and is_error(Span(trace, span_id, None, "", 0, 0, status=status)) is not None:
                status = None
            spans.append(Span(trace, span_id, None, "invoke_agent a" if agent else "root", 0, 8,
                              {**attrs, **extra}, status, [], b64, numeric, line))
            continue
        parent = draw(st.sampled_from(same)).span_id
        # nothing starts when the root ends (test_root_end_precedes_a_start_at_the_same_time has that
        # case): there, the source order of a synthetic result (point 29) among other starts is open
        start = draw(st.integers(0, 7))
        end: int | None = draw(st.integers(start, 8))
        kind = draw(st.sampled_from(["tool", "tool", "tool", "plain", "stop", "agent", "ask"]))
        if kind == "ask" and start < 5 and not any(sp.name == "chat ask" for sp in same):
            # point 29: a model asks for a tool no execute_tool span runs; the next chat span (the only
            # other chat span of the trace) answers it and repeats the ask (de-duplicated by id)
            ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": f"m{index}", "name": "ghost",
                                                   "arguments": {"n": index}}]}
            reply = {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"m{index}",
                                                "response": draw(st.sampled_from(["no such tool", {"e": 1}]))}]}
            ask_end = draw(st.integers(start + 1, 5))
            asking = {"gen_ai.operation.name": s("chat"), "gen_ai.output.messages": s(json.dumps([ask])), **extra}
            spans.append(Span(trace, span_id, parent, "chat ask", start, ask_end, asking, None, [], b64, numeric, line))
            answer_start = draw(st.integers(ask_end + 1, 7))
            answering = {"gen_ai.operation.name": s("chat"), "gen_ai.input.messages": s(json.dumps([ask, reply]))}
            spans.append(Span(trace, f"{index + 1:08x}ffffffff", parent, "chat reply", answer_start,
                              draw(st.integers(answer_start, 8)), answering, None, [], b64, numeric,
                              draw(st.integers(1, lines))))
            continue
        if kind == "ask":
            kind = "tool"
        root = same[0]
        if kind == "agent" and operation(root) == "invoke_agent":
            # point 31: an agent span inside the run that fails fails the run (only when the root
            # did not fail itself: which reason wins is not said)
            status = draw(st.sampled_from([None, {"code": 2, "message": "sub failed"}]))
            if is_error(root) is not None or attr_text(root, "ainv.output") is not None:
                status = None
            spans.append(Span(trace, span_id, parent, "invoke_agent sub", start, end,
                              {"gen_ai.operation.name": s("invoke_agent"), **extra}, status, [], b64, numeric, line))
            continue
        if kind == "agent":
            kind = "plain"
        if kind == "tool":
            if draw(st.integers(0, 5)) == 0:
                end = None  # exported while it ran
            name = draw(st.sampled_from(["lookup", "refund"]))
            attrs = {"gen_ai.operation.name": s("execute_tool"), "gen_ai.tool.name": s(name)}
            cid = draw(st.sampled_from([None, "c1", "c1", "c2"]))
            if cid is not None:
                attrs["gen_ai.tool.call.id"] = s(cid)
            args = draw(st.sampled_from(ARGS))
            if args is not None:
                attrs["gen_ai.tool.call.arguments"] = s(args)
            res = draw(st.sampled_from(RESULTS))
            if res is not None:
                attrs["gen_ai.tool.call.result"] = s(res)
            status = draw(st.sampled_from(STATUSES))
            events = [EXCEPTION] if status is None and draw(st.integers(0, 4)) == 0 else []
            spans.append(Span(trace, span_id, parent, "execute_tool x", start, end, {**attrs, **extra},
                              status, events, b64, numeric, line))
        elif kind == "stop":
            attrs = {"ainv.reason": s("user")} if draw(st.booleans()) else {}
            spans.append(Span(trace, span_id, parent, "control.stop", start, end, {**attrs, **extra},
                              None, [], b64, numeric, line))
        else:  # a span the mapping does not use (a chat without tool parts, a step)
            # no other chat operation: "the next chat span" of point 29 stays the answering one
            attrs = {"gen_ai.operation.name": s("chat")} if draw(st.booleans()) and not any(
                sp.name == "chat ask" for sp in spans) else {}
            status = draw(st.sampled_from([None, {"code": 2, "message": "chat failed"}]))
            spans.append(Span(trace, span_id, parent, "chat m", start, end, {**attrs, **extra},
                              status, [], b64, numeric, line))
    rank = {number: i + 1 for i, number in enumerate(sorted({sp.line for sp in spans}))}
    for sp in spans:  # no empty line between them
        sp.line = rank[sp.line]
    return spans


@settings(max_examples=examples(75), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spans=span_files())
def test_random_span_trees_match_the_model(cli: Cli, tmp_path: Path, spans: list[Span]) -> None:
    """§7 common rules + `otel` row + points 26, 30, 31, 34, 36: every event of every run, whole JSON."""
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    actual, _ = convert_all(cli, folder, spans)
    rel = f"{folder.relative_to(cli.cwd)}/in.otlp.jsonl"
    expected = model_runs(spans, rel)
    assert sorted(actual) == sorted(expected)
    for run_id, events in expected.items():
        for got, want in zip(actual[run_id], events, strict=False):
            assert got == want, (run_id, otlp_text(spans))
        assert len(actual[run_id]) == len(events), (actual[run_id][len(events):], events[len(actual[run_id]):])


# ---------------------------------------------------------------------------------------------------
# Hand-written cases: one behaviour each.

T1 = TRACE_IDS[0]
ROOT = "00f067aa0ba902b7"


def agent_span(start: int = 0, end: int | None = 100, **kw: Any) -> Span:
    attrs = {"gen_ai.operation.name": s("invoke_agent"), **kw.pop("attrs", {})}
    return Span(T1, kw.pop("span_id", ROOT), kw.pop("parent", None), "invoke_agent bot", start, end, attrs, **kw)


def tool_span(span_id: str, start: int, end: int | None, *, name: str = "lookup", parent: str | None = ROOT,
              call_id: str | None = None, args: str | None = None, result: str | None = None,
              attrs: dict[str, Any] | None = None, **kw: Any) -> Span:
    full = {"gen_ai.operation.name": s("execute_tool"), "gen_ai.tool.name": s(name)}
    if call_id is not None:
        full["gen_ai.tool.call.id"] = s(call_id)
    if args is not None:
        full["gen_ai.tool.call.arguments"] = s(args)
    if result is not None:
        full["gen_ai.tool.call.result"] = s(result)
    return Span(T1, span_id, parent, f"execute_tool {name}", start, end, {**full, **(attrs or {})}, **kw)


def src(span_id: str, line: int = 1) -> dict[str, Any]:
    return {"source": {"format": "otel", "file": "t.otlp.jsonl", "line": line, "span_id": span_id}}


def by_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


def test_execute_tool_span_becomes_call_and_result(cli: Cli, tmp_path: Path) -> None:
    """§7 `otel` row: execute_tool → tool.call at the start, tool.result at the end, with
    gen_ai.tool.name / .call.id / .call.arguments / .call.result; §7 `duration_ms` = end − start."""
    spans = [agent_span(end=2_000_000_000), tool_span("00f067aa0ba902b8", 10, 1_500_000_009, call_id="call_1",
                                                      args='{"id": 7}', result='{"status": "ok"}')]
    events = convert_one(cli, tmp_path, spans)
    assert events == [
        {"seq": 1, "type": "run.start", "time": iso(0), "run_id": T1, "data": src(ROOT)},
        {"seq": 2, "type": "tool.call", "time": iso(10), "run_id": T1, "tool": "lookup", "call_id": "call_1",
         "args": {"id": 7}, "data": src("00f067aa0ba902b8")},
        {"seq": 3, "type": "tool.result", "time": iso(1_500_000_009), "run_id": T1, "tool": "lookup",
         "call_id": "call_1", "ok": True, "result": {"status": "ok"}, "duration_ms": 1499.999999,
         "data": src("00f067aa0ba902b8")},
        {"seq": 4, "type": "run.completed", "time": iso(2_000_000_000), "run_id": T1, "duration_ms": 2000,
         "data": src(ROOT)},
    ]


def test_time_is_exact_to_the_nanosecond_from_a_json_number(cli: Cli, tmp_path: Path) -> None:
    """§7 / point 36: time from the integer clock with no float rounding; point 30: times as numbers
    too (1700000000123456789 is not representable as a double)."""
    spans = [agent_span(numeric_times=True)]
    events = convert_one(cli, tmp_path, spans)
    assert [e["time"] for e in events] == ["2023-11-14T22:13:20.123456789Z", "2023-11-14T22:13:20.123456889Z"]


def test_hex_and_base64_ids_are_normalised(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row / point 30: ids as hex or base64, normalised (a base64 parent finds a hex span)."""
    spans = [agent_span(b64_ids=True), tool_span("00f067aa0ba902b8", 10, 20, b64_ids=False)]
    events = convert_one(cli, tmp_path, spans)
    assert {e["run_id"] for e in events} == {T1}
    assert [e["data"]["source"]["span_id"] for e in events] == [ROOT, "00f067aa0ba902b8", "00f067aa0ba902b8", ROOT]
    assert events[1]["call_id"] == "00f067aa0ba902b8"


def test_call_id_falls_back_to_the_span_id(cli: Cli, tmp_path: Path) -> None:
    """§7: `call_id` is the native id, else the span id."""
    events = convert_one(cli, tmp_path, [agent_span(), tool_span("00f067aa0ba902b8", 10, 20)])
    assert [e["call_id"] for e in by_type(events, "tool.call")] == ["00f067aa0ba902b8"]


def test_repeated_call_id_gets_numbered_suffixes(cli: Cli, tmp_path: Path) -> None:
    """§7: a repeated id gets `~n`, and the original goes to `data.native_call_id`."""
    spans = [agent_span()] + [tool_span(f"00f067aa0ba902c{i}", 10 * i + 1, 10 * i + 5, call_id="c") for i in range(3)]
    events = convert_one(cli, tmp_path, spans)
    assert [(e["call_id"], e["data"].get("native_call_id")) for e in events if e["type"].startswith("tool.")] == [
        ("c", None), ("c", None), ("c~2", "c"), ("c~2", "c"), ("c~3", "c"), ("c~3", "c")]


@pytest.mark.parametrize(("text", "args", "raw"), [
    ('{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}, None),
    ("[1, 2]", None, "[1, 2]"),
    ('"just a string"', None, '"just a string"'),
    ("{'a': 1}", None, "{'a': 1}"),
    ("not json at all", None, "not json at all"),
])
def test_args_text_is_parsed_or_kept_raw(cli: Cli, tmp_path: Path, text: str, args: Any, raw: str | None) -> None:
    """§7: string args are parsed as JSON; a non-object or a Python repr goes to `data.raw_args`,
    never evaluated."""
    events = convert_one(cli, tmp_path, [agent_span(), tool_span("00f067aa0ba902b8", 10, 20, args=text)])
    call = by_type(events, "tool.call")[0]
    assert call.get("args") == args
    assert call["data"].get("raw_args") == raw


@pytest.mark.parametrize(("text", "result", "raw"), [
    ('{"r": 1}', {"r": 1}, None),
    ("[1, 2]", [1, 2], None),
    ("null", None, None),
    ("3.5", 3.5, None),
    ("plain words", "plain words", None),
    ("{'a': 1}", "{'a': 1}", "{'a': 1}"),
])
def test_result_text_is_parsed_like_args(cli: Cli, tmp_path: Path, text: str, result: Any, raw: str | None) -> None:
    """Point 26: a result given as text is parsed as JSON when valid, else the string itself; a Python
    repr stays a string and is also copied to `data.raw_result`."""
    events = convert_one(cli, tmp_path, [agent_span(), tool_span("00f067aa0ba902b8", 10, 20, result=text)])
    done = by_type(events, "tool.result")[0]
    assert "result" in done and done["result"] == result
    assert done["data"].get("raw_result") == raw


@pytest.mark.parametrize(("status", "events", "ok"), [
    (None, [], True),
    ({}, [], True),  # point 30: an empty status is UNSET
    ({"code": "STATUS_CODE_UNSET"}, [], True),
    ({"code": 1}, [], True),
    ({"code": "STATUS_CODE_OK"}, [], True),
    ({"code": 2}, [], False),
    ({"code": "STATUS_CODE_ERROR", "message": "x"}, [], False),
    (None, [{"name": "exception", "timeUnixNano": str(BASE_NS + 15)}], False),
])
def test_tool_failure_is_status_error_or_exception_event(cli: Cli, tmp_path: Path, status: dict[str, Any] | None,
                                                         events: list[dict[str, Any]], ok: bool) -> None:
    """§7 otel row `status.code≠2`; point 30: enums as integers or names, an empty status is UNSET, a
    tool failure is status ERROR (code 2) or an `exception` span event."""
    spans = [agent_span(), tool_span("00f067aa0ba902b8", 10, 20, status=status, events=events)]
    assert by_type(convert_one(cli, tmp_path, spans), "tool.result")[0]["ok"] is ok


def test_error_type_attribute_alone_fails_the_call(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row: ok is `status.code≠2, no error.type` (point 30 adds that error.type is optional,
    i.e. not needed for a failure)."""
    spans = [agent_span(), tool_span("00f067aa0ba902b8", 10, 20, attrs={"error.type": s("TimeoutError")})]
    assert by_type(convert_one(cli, tmp_path, spans), "tool.result")[0]["ok"] is False


def test_span_without_end_gives_a_call_and_no_result(cli: Cli, tmp_path: Path) -> None:
    """§7: a span's end becomes the result; without an end there is none (README: exported while it
    ran), and an unknown ok is never guessed."""
    events = convert_one(cli, tmp_path, [agent_span(), tool_span("00f067aa0ba902b8", 10, None)])
    assert [e["type"] for e in events] == ["run.start", "tool.call", "run.completed"]


def test_root_error_fails_the_run_with_its_text(cli: Cli, tmp_path: Path) -> None:
    """§7: the root becomes run.failed (`status: failed`) on error; point 31: its error text is `reason`."""
    spans = [agent_span(status={"code": 2, "message": "model refused"})]
    assert convert_one(cli, tmp_path, spans)[-1] == {
        "seq": 2, "type": "run.failed", "time": iso(100), "run_id": T1, "status": "failed",
        "reason": "model refused", "duration_ms": 0.0001, "data": src(ROOT)}


def test_failing_agent_span_inside_fails_the_run(cli: Cli, tmp_path: Path) -> None:
    """Point 31: a run is run.failed when any agent span inside it ends with an error; its text is `reason`."""
    inner = Span(T1, "00f067aa0ba902b8", ROOT, "invoke_agent helper", 10, 20,
                 {"gen_ai.operation.name": s("invoke_agent")}, {"code": "STATUS_CODE_ERROR", "message": "helper died"})
    last = convert_one(cli, tmp_path, [agent_span(), inner])[-1]
    assert (last["type"], last["status"], last["reason"]) == ("run.failed", "failed", "helper died")


def test_failing_tool_span_does_not_fail_the_run(cli: Cli, tmp_path: Path) -> None:
    """Point 31 names the root and agent spans only: a failed tool is `ok: false`, the run completes."""
    spans = [agent_span(), tool_span("00f067aa0ba902b8", 10, 20, status={"code": 2, "message": "x"})]
    assert convert_one(cli, tmp_path, spans)[-1]["type"] == "run.completed"


def test_outermost_invoke_agent_is_the_run_root(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row / point 30: the run root is the outermost invoke_agent/invoke_workflow span, even
    under a plain root span."""
    outer = Span(T1, "00000000000000aa", None, "request", 0, 200, {})
    agent = agent_span(10, 190, parent="00000000000000aa")
    inner = Span(T1, "00000000000000bb", ROOT, "invoke_agent helper", 20, 30,
                 {"gen_ai.operation.name": s("invoke_agent")})
    events = convert_one(cli, tmp_path, [outer, agent, inner])
    assert [(e["type"], e["time"], e["data"]["source"]["span_id"]) for e in events] == [
        ("run.start", iso(10), ROOT), ("run.completed", iso(190), ROOT)]


def test_invoke_workflow_is_a_run_root(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row: Root: `invoke_agent` or `invoke_workflow`."""
    outer = Span(T1, "00000000000000aa", None, "request", 0, 200, {})
    flow = Span(T1, ROOT, "00000000000000aa", "invoke_workflow w", 10, 190,
                {"gen_ai.operation.name": s("invoke_workflow")})
    events = convert_one(cli, tmp_path, [outer, flow])
    assert [e["data"]["source"]["span_id"] for e in events] == [ROOT, ROOT]


def test_without_agent_span_the_earliest_root_is_the_run(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row: else the earliest root (not the first one in the file)."""
    late = Span(T1, "00000000000000aa", None, "late", 50, 60, {})
    early = Span(T1, "00000000000000bb", None, "early", 5, 70, {})
    events = convert_one(cli, tmp_path, [late, early])
    assert [(e["type"], e["data"]["source"]["span_id"]) for e in events] == [
        ("run.start", "00000000000000bb"), ("run.completed", "00000000000000bb")]


def test_equal_times_order_ends_before_starts_by_depth(cli: Cli, tmp_path: Path) -> None:
    """§7: at equal times: deeper ends, shallower ends, shallower starts, deeper starts, then source order."""
    a = tool_span("000000000000000a", 10, 50, name="a")
    a_child = tool_span("00000000000000a1", 20, 50, name="a_child", parent="000000000000000a")
    b = tool_span("000000000000000b", 50, 60, name="b")
    b_child = tool_span("00000000000000b1", 50, 55, name="b_child", parent="000000000000000b")
    c = tool_span("000000000000000c", 50, 60, name="c")
    events = convert_one(cli, tmp_path, [agent_span(), b_child, c, b, a_child, a])
    at_50 = [(e["type"], e["tool"]) for e in events if e["time"] == iso(50)]
    assert at_50 == [("tool.result", "a_child"), ("tool.result", "a"), ("tool.call", "c"), ("tool.call", "b"),
                     ("tool.call", "b_child")]


def test_zero_length_span_has_its_result_right_after_its_call(cli: Cli, tmp_path: Path) -> None:
    """§7 ordering; spec silent on a span whose end equals its start: the product keeps the result
    right after its call (a result never precedes its call), a reasonable reading."""
    outer = tool_span("000000000000000a", 10, 40, name="outer")
    deeper = tool_span("00000000000000a1", 20, 30, name="deeper", parent="000000000000000a")
    instant = tool_span("000000000000000b", 20, 20, name="instant")
    events = convert_one(cli, tmp_path, [agent_span(), outer, deeper, instant])
    assert [(e["type"], e["tool"]) for e in events if e["time"] == iso(20)] == [
        ("tool.call", "instant"), ("tool.result", "instant"), ("tool.call", "deeper")]
    assert by_type(events, "tool.result")[0]["duration_ms"] == 0


def test_root_end_precedes_a_start_at_the_same_time(cli: Cli, tmp_path: Path) -> None:
    """§7: at equal times ... shallower ends, shallower starts: the run's end (depth 0) comes before a
    call that starts at that instant."""
    events = convert_one(cli, tmp_path, [agent_span(0, 50), tool_span("00f067aa0ba902b8", 50, 60)])
    assert [e["type"] for e in events] == ["run.start", "run.completed", "tool.call", "tool.result"]


def test_spans_split_over_lines_keep_their_line(cli: Cli, tmp_path: Path) -> None:
    """§7: `data.source` holds {format, file, line, span_id}: the line of the record holding the span."""
    spans = [agent_span(line=2), tool_span("00f067aa0ba902b8", 10, 20, line=1)]
    events = convert_one(cli, tmp_path, spans)
    assert [e["data"]["source"]["line"] for e in events] == [2, 1, 1, 2]


def test_tool_definitions_are_never_calls(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row: `gen_ai.tool.definitions` is never a call."""
    chat = Span(T1, "00000000000000cc", ROOT, "chat m", 10, 20, {
        "gen_ai.operation.name": s("chat"),
        "gen_ai.tool.definitions": s(json.dumps([{"type": "function", "name": "lookup", "parameters": {}}]))})
    assert [e["type"] for e in convert_one(cli, tmp_path, [agent_span(), chat])] == ["run.start", "run.completed"]


def chat(span_id: str, start: int, end: int, inputs: list[Any] | None = None, outputs: list[Any] | None = None) -> Span:
    attrs = {"gen_ai.operation.name": s("chat")}
    if inputs is not None:
        attrs["gen_ai.input.messages"] = s(json.dumps(inputs))
    if outputs is not None:
        attrs["gen_ai.output.messages"] = s(json.dumps(outputs))
    return Span(T1, span_id, ROOT, "chat m", start, end, attrs)


ASK_GHOST = {"role": "assistant", "parts": [{"type": "tool_call", "id": "m1", "name": "ghost", "arguments": {"q": 1}}]}
GHOST_REPLY = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "m1", "response": "no such tool"}]}


def test_tool_call_part_without_span_is_a_synthetic_call(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row / point 29: a `tool_call` part whose id has no execute_tool span becomes a tool.call
    with `data.source.synthetic: true` at the chat span's end; its `tool_call_response` the result at the
    start of the next chat span (no ok: an unknown ok is omitted)."""
    spans = [agent_span(), chat("00000000000000c1", 10, 20, outputs=[ASK_GHOST]),
             chat("00000000000000c2", 30, 40, inputs=[ASK_GHOST, GHOST_REPLY])]
    events = convert_one(cli, tmp_path, spans)
    synthetic = {"source": {**src("00000000000000c1")["source"], "synthetic": True}}
    reply = {"source": {**src("00000000000000c2")["source"], "synthetic": True}}
    assert events[1:3] == [
        {"seq": 2, "type": "tool.call", "time": iso(20), "run_id": T1, "tool": "ghost", "call_id": "m1",
         "args": {"q": 1}, "data": synthetic},
        {"seq": 3, "type": "tool.result", "time": iso(30), "run_id": T1, "tool": "ghost", "call_id": "m1",
         "result": "no such tool", "data": reply},
    ]
    assert len(events) == 4


def test_tool_call_part_with_its_span_is_not_repeated(cli: Cli, tmp_path: Path) -> None:
    """Point 29: the fallback is per call: a part whose id has an execute_tool span adds nothing."""
    ask = {"role": "assistant", "parts": [{"type": "tool_call", "id": "e1", "name": "lookup", "arguments": {}}]}
    spans = [agent_span(), chat("00000000000000c1", 10, 20, outputs=[ask]),
             tool_span("00f067aa0ba902b8", 22, 25, call_id="e1"), chat("00000000000000c2", 30, 40, inputs=[ask])]
    events = convert_one(cli, tmp_path, spans)
    assert [(e["type"], e.get("call_id")) for e in events[1:-1]] == [("tool.call", "e1"), ("tool.result", "e1")]
    assert all("synthetic" not in e["data"]["source"] for e in events)


def test_tool_call_parts_are_deduplicated_by_id(cli: Cli, tmp_path: Path) -> None:
    """Point 29: parts are de-duplicated by id across the places a framework repeats them."""
    spans = [agent_span(), chat("00000000000000c1", 10, 20, outputs=[ASK_GHOST]),
             chat("00000000000000c2", 30, 40, inputs=[ASK_GHOST, GHOST_REPLY], outputs=[ASK_GHOST]),
             chat("00000000000000c3", 50, 60, inputs=[ASK_GHOST, GHOST_REPLY])]
    events = convert_one(cli, tmp_path, spans)
    assert [(e["type"], e["call_id"]) for e in events if e["type"].startswith("tool.")] == [
        ("tool.call", "m1"), ("tool.result", "m1")]


def test_convention_span_becomes_its_event_at_its_start(cli: Cli, tmp_path: Path) -> None:
    """§7 mapping profile, built-in convention: a span named after one of our event types becomes that
    event, fields from `ainv.*`, `ainv.args` holding JSON; point 36: at the span's start."""
    grant = Span(T1, "00000000000000dd", ROOT, "approval.granted", 10, 20, {
        "ainv.approval_id": s("ap-1"), "ainv.tool": s("refund"), "ainv.approved": {"boolValue": True},
        "ainv.approver": s("ops"), "ainv.args": s('{"amount": 5}')})
    events = convert_one(cli, tmp_path, [agent_span(), grant])
    assert events[1] == {"seq": 2, "type": "approval.granted", "time": iso(10), "run_id": T1,
                         "approval_id": "ap-1", "tool": "refund", "approved": True, "approver": "ops",
                         "args": {"amount": 5}, "data": src("00000000000000dd")}


@pytest.mark.parametrize(("name", "attrs", "fields"), [
    ("control.stop", {"ainv.reason": s("budget")}, {"reason": "budget"}),
    ("outcome.observed", {"ainv.outcome_id": s("o-1"), "ainv.verdict": s("satisfied")},
     {"outcome_id": "o-1", "verdict": "satisfied"}),
    ("agent.message", {"ainv.claims_completion": {"boolValue": True}, "ainv.confidence": {"doubleValue": 0.75}},
     {"claims_completion": True, "confidence": 0.75}),
])
def test_convention_stops_outcomes_and_claims(cli: Cli, tmp_path: Path, name: str, attrs: dict[str, Any],
                                              fields: dict[str, Any]) -> None:
    """§7 built-in convention for stops, outcomes and completion claims (fields from `ainv.*`)."""
    span = Span(T1, "00000000000000dd", ROOT, name, 10, 20, attrs)
    event = convert_one(cli, tmp_path, [agent_span(), span])[1]
    assert {k: v for k, v in event.items() if k not in ("seq", "time", "run_id", "data")} == {"type": name, **fields}


def test_convention_span_event_becomes_its_event(cli: Cli, tmp_path: Path) -> None:
    """§7 convention: a span event named after an event type is that event, at its own time."""
    stop = {"name": "control.stop", "timeUnixNano": str(BASE_NS + 30),
            "attributes": [{"key": "ainv.reason", "value": s("user")}]}
    events = convert_one(cli, tmp_path, [agent_span(events=[stop])])
    assert [(e["type"], e["time"], e.get("reason")) for e in events] == [
        ("run.start", iso(0), None), ("control.stop", iso(30), "user"), ("run.completed", iso(100), None)]


def test_root_ainv_output_is_the_run_output(cli: Cli, tmp_path: Path) -> None:
    """Point 30: `output` comes from the `ainv.output` convention (JSON text)."""
    events = convert_one(cli, tmp_path, [agent_span(attrs={"ainv.output": s('{"refund": 5}')})])
    assert events[-1]["output"] == {"refund": 5}


def test_no_output_and_no_claim_from_text(cli: Cli, tmp_path: Path) -> None:
    """Point 30: OTel has no standard run output (absent, never a guess); §7: never from text:
    `claims_completion` comes only from the convention or a profile."""
    said = {"role": "assistant", "parts": [{"type": "text", "content": "All done, task complete."}]}
    events = convert_one(cli, tmp_path, [agent_span(), chat("00000000000000c1", 10, 20, outputs=[said])])
    assert "output" not in events[-1]
    assert all("claims_completion" not in e for e in events)


def test_profile_rule_maps_a_span(cli: Cli, tmp_path: Path) -> None:
    """§7 user profiles: `{when:{name, attributes}, emit:{type, field: {"$attr": k}}}`, the event keeps
    the record's time (the spec's own example)."""
    review = Span(T1, "00000000000000ee", ROOT, "human_review", 10, 20,
                  {"decision": s("approve"), "scope": s("refund"), "user.id": s("u-9")})
    (tmp_path / "p.json").write_text(json.dumps({"rules": [{
        "when": {"name": "human_review", "attributes": {"decision": "approve"}},
        "emit": {"type": "approval.granted", "approval_scope": {"$attr": "scope"},
                 "approver": {"$attr": "user.id"}}}]}))
    (tmp_path / "t.otlp.jsonl").write_text(otlp_text([agent_span(), review]), encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl", "--profile", "p.json")
    assert result.returncode == 0, result.stderr
    grant = json.loads(result.stdout.splitlines()[1])
    assert (grant["type"], grant["time"], grant["approval_scope"], grant["approver"]) == (
        "approval.granted", iso(10), "refund", "u-9")


def two_traces() -> list[Span]:
    other = Span(TRACE_IDS[1], "00000000000000ff", None, "invoke_agent b", 5, 50,
                 {"gen_ai.operation.name": s("invoke_agent")}, line=2)
    return [agent_span(), other]


def test_several_runs_without_run_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§7 / point 34: without --run, an input with several runs is exit 2, and the message lists the run
    ids and both options."""
    (tmp_path / "t.otlp.jsonl").write_text(otlp_text(two_traces()), encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert TRACE_IDS[0] in result.stderr and TRACE_IDS[1] in result.stderr
    assert "--run" in result.stderr and "--out-dir" in result.stderr


def test_run_option_picks_one_trace(cli: Cli, tmp_path: Path) -> None:
    """§7 / point 34: `--run ID` converts that run (run id = trace id)."""
    (tmp_path / "t.otlp.jsonl").write_text(otlp_text(two_traces()), encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl", "--run", TRACE_IDS[1])
    assert result.returncode == 0, result.stderr
    assert [json.loads(x)["run_id"] for x in result.stdout.splitlines()] == [TRACE_IDS[1]] * 2


def test_out_dir_writes_every_run(cli: Cli, tmp_path: Path) -> None:
    """§7 / point 34: `--out-dir` writes each run (README: DIR/<run id>.jsonl), each numbered from 1."""
    runs, stderr = convert_all(cli, tmp_path / "x", two_traces())
    assert sorted(runs) == sorted(TRACE_IDS[:2])
    assert all([e["seq"] for e in events] == [1, 2] for events in runs.values())
    assert "2 runs" in stderr


def test_records_the_mapping_does_not_use_are_counted(cli: Cli, tmp_path: Path) -> None:
    """README "Traces from other tools": records of kinds the mapping does not use are skipped and
    counted (`convert` says how many)."""
    text = otlp_text([agent_span()]) + json.dumps({"resourceMetrics": []}) + "\n"
    (tmp_path / "t.otlp.jsonl").write_text(text, encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 record" in result.stderr


# Hostile input: exit 2 with one stderr line naming file:line and the JSON path, or the documented handling.

def refused(cli: Cli, tmp_path: Path, text: str) -> str:
    (tmp_path / "t.otlp.jsonl").write_text(text, encoding="utf-8")
    result = cli("convert", "--from", "otel", "t.otlp.jsonl")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_truncated_line_is_refused_at_its_line(cli: Cli, tmp_path: Path) -> None:
    """Bad input names file:line (v1 §3.2 style; README: bad input at its source line, exit 2)."""
    text = otlp_text([agent_span()]) + '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0a'
    assert "t.otlp.jsonl:2:" in refused(cli, tmp_path, text + "\n")


def test_id_neither_hex_nor_base64_is_refused(cli: Cli, tmp_path: Path) -> None:
    """Point 30: ids are hex or base64; anything else is bad input at file:line and its JSON path."""
    doc = json.loads(otlp_text([agent_span()]))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "not-an-id!"
    line = refused(cli, tmp_path, json.dumps(doc) + "\n")
    assert "t.otlp.jsonl:1:" in line and "$.resourceSpans[0].scopeSpans[0].spans[0].spanId" in line


def test_time_that_is_not_digits_is_refused(cli: Cli, tmp_path: Path) -> None:
    """Point 30: times are nanosecond strings or numbers; other text is bad input with its JSON path."""
    doc = json.loads(otlp_text([agent_span()]))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["endTimeUnixNano"] = "12:00"
    line = refused(cli, tmp_path, json.dumps(doc) + "\n")
    assert "t.otlp.jsonl:1:" in line and "$.resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano" in line


def test_convention_value_of_the_wrong_type_is_refused(cli: Cli, tmp_path: Path) -> None:
    """README: what the mapping cannot make valid (`ainv.approved: "yes"`) is bad input at its source
    line, exit 2 (§0: bad type → exit 2, file:line)."""
    grant = Span(T1, "00000000000000dd", ROOT, "approval.granted", 10, 20, {"ainv.approved": s("yes")}, line=2)
    assert "t.otlp.jsonl:2:" in refused(cli, tmp_path, otlp_text([agent_span(), grant]))


def test_span_whose_parent_is_missing_is_still_converted(cli: Cli, tmp_path: Path) -> None:
    """Spec silent on a parent that is not in the file (a partial export): the product keeps the span
    (in time order), a reasonable reading."""
    orphan = tool_span("00f067aa0ba902b8", 10, 20, parent="0000000000000999")
    types = [e["type"] for e in convert_one(cli, tmp_path, [agent_span(), orphan])]
    assert types == ["run.start", "tool.call", "tool.result", "run.completed"]


def test_parent_cycle_terminates(cli: Cli, tmp_path: Path) -> None:
    """Spec silent on a parent cycle: the conversion must end (no hang, no traceback) and keep both calls."""
    a = tool_span("000000000000000a", 10, 20, name="a", parent="000000000000000b")
    b = tool_span("000000000000000b", 12, 18, name="b", parent="000000000000000a")
    events = convert_one(cli, tmp_path, [agent_span(), a, b])
    assert sorted(e["tool"] for e in by_type(events, "tool.call")) == ["a", "b"]


def test_duplicate_span_ids_get_suffixed_call_ids(cli: Cli, tmp_path: Path) -> None:
    """Spec silent on duplicate span ids; §7's `~n` rule applied to the span-id call id (product reading)."""
    spans = [agent_span(), tool_span("00f067aa0ba902b8", 10, 20), tool_span("00f067aa0ba902b8", 30, 40)]
    calls = by_type(convert_one(cli, tmp_path, spans), "tool.call")
    assert [(c["call_id"], c["data"].get("native_call_id")) for c in calls] == [
        ("00f067aa0ba902b8", None), ("00f067aa0ba902b8~2", "00f067aa0ba902b8")]
