"""Importers, read from the spec alone: `convert --from FMT IN… [--profile P] [--run ID|--out-dir D]` and
`check --input-format FMT` (v2 §7, every format row, the mapping profile, provenance) with the resolutions
§10.26–36, which come from real exports and win where they differ from §7.

Every input is written by hand in its format (OTLP JSON lines, OpenInference attributes, the Agents SDK's
exported trace/span lines, LangSmith runs, MCP session logs), converted with the CLI, and the native events
are compared field by field: types, order at equal times, call ids with `~n`, args/result parsing,
`data.source`, run roots and durations. `check --input-format` cases compare verdicts and the provenance of
violations; bad input must exit 2 naming the file, the line and the JSON path."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from support import write_contract

Event = dict[str, Any]

TRACE = "0af7651916cd43dd8448eb211c80319c"
ROOT = "b7ad6b7169203331"
T0 = 1_700_000_000_000_000_000
"""2023-11-14T22:13:20Z in nanoseconds: OTLP times below are offsets (ns) from it."""


def at(offset_ns: int) -> str:
    """The native `time` of T0 + offset_ns (offset below one second), to the nanosecond."""
    assert 0 <= offset_ns < 1_000_000_000
    return f"2023-11-14T22:13:20.{offset_ns:09d}Z"


# -- OTLP (otel, openinference) -------------------------------------------------------------------------------

def value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v}


def span(span_id: str, name: str, start: int, end: int, *, parent: str | None = None,
         attrs: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
         events: list[dict[str, Any]] | None = None, trace: str = TRACE) -> dict[str, Any]:
    """One OTLP/JSON span; start and end are ns offsets from T0, written as strings (protobuf JSON)."""
    record: dict[str, Any] = {
        "traceId": trace, "spanId": span_id, "name": name, "kind": "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": str(T0 + start), "endTimeUnixNano": str(T0 + end),
        "attributes": [{"key": k, "value": value(v)} for k, v in (attrs or {}).items()],
    }
    if parent is not None:
        record["parentSpanId"] = parent
    if status is not None:
        record["status"] = status
    if events is not None:
        record["events"] = events
    return record


def otlp(*spans: dict[str, Any]) -> str:
    """One OTLP JSON line (as the Collector's file exporter writes) holding `spans`."""
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}]}]})


def exception_event(offset: int, message: str) -> dict[str, Any]:
    return {"name": "exception", "timeUnixNano": str(T0 + offset),
            "attributes": [{"key": "exception.message", "value": {"stringValue": message}}]}


def agent(start: int = 0, end: int = 1000, *, span_id: str = ROOT, parent: str | None = None,
          operation: str = "invoke_agent", status: dict[str, Any] | None = None,
          extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A GenAI agent span (the run root unless nested)."""
    return span(span_id, f"{operation} support", start, end, parent=parent, status=status,
                attrs={"gen_ai.operation.name": operation, **(extra or {})})


def tool(span_id: str, name: str, start: int, end: int, *, parent: str = ROOT, call_id: str | None = None,
         args: str | None = None, result: str | None = None, status: dict[str, Any] | None = None,
         events: list[dict[str, Any]] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A GenAI `execute_tool` span."""
    attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if call_id is not None:
        attrs["gen_ai.tool.call.id"] = call_id
    if args is not None:
        attrs["gen_ai.tool.call.arguments"] = args
    if result is not None:
        attrs["gen_ai.tool.call.result"] = result
    return span(span_id, f"execute_tool {name}", start, end, parent=parent, status=status, events=events,
                attrs={**attrs, **(extra or {})})


def sid(n: int) -> str:
    """A span id (8 bytes, hex)."""
    return f"{0xa000 + n:016x}"


OIK = "openinference.span.kind"


def oi_llm(span_id: str, start: int, calls: list[tuple[str, str]], parent: str = ROOT) -> dict[str, Any]:
    """An OpenInference LLM span whose first output message asks for `calls` [(tool name, call id)]."""
    attrs: dict[str, Any] = {OIK: "LLM"}
    for j, (name, call_id) in enumerate(calls):
        attrs[f"llm.output_messages.0.message.tool_calls.{j}.tool_call.id"] = call_id
        attrs[f"llm.output_messages.0.message.tool_calls.{j}.tool_call.function.name"] = name
    return span(span_id, "response", start, start + 5, parent=parent, attrs=attrs)


def oi_tool(span_id: str, name: str, start: int, *, parent: str = ROOT, **attrs: Any) -> dict[str, Any]:
    """An OpenInference TOOL span (5 ns long) named `name`, with extra attributes (dots written as `__`)."""
    return span(span_id, name, start, start + 5, parent=parent,
                attrs={OIK: "TOOL", **{k.replace("__", "."): v for k, v in attrs.items()}})


def oi_root(end: int = 10_000, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return span(ROOT, "support", 0, end, attrs={OIK: "AGENT"}, status=status)


# -- the other formats ----------------------------------------------------------------------------------------

AG_TRACE = "trace_0123456789abcdef0123456789abcdef"


def ag_span(n: int, parent: int | None, start: str, end: str, data: dict[str, Any],
            error: dict[str, Any] | None = None) -> str:
    """One exported Agents SDK span line; times are seconds after 2026-01-01T00:00 as written ISO."""
    return json.dumps({"object": "trace.span", "id": f"span_{n:024x}", "trace_id": AG_TRACE,
                       "parent_id": None if parent is None else f"span_{parent:024x}",
                       "started_at": f"2026-01-01T00:00:{start}+00:00", "ended_at": f"2026-01-01T00:00:{end}+00:00",
                       "span_data": data, "error": error})


def ag_trace_line() -> str:
    return json.dumps({"object": "trace", "id": AG_TRACE, "workflow_name": "wf", "group_id": None, "metadata": None})


def ag_lines(*spans: str, error: dict[str, Any] | None = None) -> list[str]:
    """A trace line, `spans`, then the root agent span (span 1, 00:00:00 to 00:00:09)."""
    root = ag_span(1, None, "00.000000", "09.000000",
                   {"type": "agent", "name": "support", "handoffs": [], "tools": [], "output_type": "str"}, error)
    return [ag_trace_line(), *spans, root]


def ag_id(n: int) -> str:
    return f"span_{n:024x}"


LS_ROOT = "10000000-0000-0000-0000-000000000000"


def ls_id(n: int) -> str:
    return f"{n:08d}-0000-0000-0000-000000000000"


def ls_run(n: int, name: str, run_type: str, start: str, end: str, **fields: Any) -> dict[str, Any]:
    """A LangSmith child run of the root (times: seconds after 2026-01-01T00:00, ISO with Z)."""
    run: dict[str, Any] = {
        "id": ls_id(n), "name": name, "run_type": run_type, "parent_run_id": LS_ROOT, "trace_id": LS_ROOT,
        "start_time": f"2026-01-01T00:00:{start}Z", "end_time": f"2026-01-01T00:00:{end}Z",
        "dotted_order": f"20260101T000000000000Z{LS_ROOT}.20260101T0000{start.replace('.', '')}Z{ls_id(n)}",
        "error": None, "inputs": {}, "outputs": {}, "extra": {}, "tags": []}
    run.update(fields)
    return run


def ls_root(*children: dict[str, Any], **fields: Any) -> dict[str, Any]:
    root: dict[str, Any] = {
        "id": LS_ROOT, "name": "agent", "run_type": "chain", "parent_run_id": None, "trace_id": LS_ROOT,
        "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:50Z",
        "dotted_order": f"20260101T000000000000Z{LS_ROOT}", "error": None, "inputs": {"input": "go"},
        "outputs": {"output": "Done."}, "extra": {}, "tags": [], "child_runs": list(children)}
    root.update(fields)
    return root


def tool_message(content: str, call_id: str, status: str = "success") -> dict[str, Any]:
    """`outputs` of a tool run whose output is a serialised ToolMessage."""
    return {"output": {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": "tool",
                       "name": "x", "id": None, "tool_call_id": call_id, "artifact": None, "status": status}}


def ai_outputs(text: str, calls: list[tuple[str, str]]) -> dict[str, Any]:
    """`outputs` of an llm run: one generation whose AIMessage says `text` and asks for `calls`."""
    message = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
               "kwargs": {"content": text, "type": "ai", "invalid_tool_calls": [],
                          "tool_calls": [{"name": n, "args": {}, "id": i, "type": "tool_call"} for n, i in calls]}}
    return {"generations": [[{"text": text, "type": "ChatGeneration", "message": message}]], "type": "LLMResult"}


def mcp(ts: str, session: str, direction: str, msg: dict[str, Any]) -> str:
    """One MCP log line; `ts` is the time after 2026-01-01T00:00 (`SS.ffffff`) unless it is a full ISO time."""
    stamp = ts if "T" in ts else f"2026-01-01T00:00:{ts}Z"
    return json.dumps({"ts": stamp, "session": session, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}})


def mcp_call(ts: str, rid: int, name: str, arguments: dict[str, Any], session: str = "s1") -> str:
    params = {"name": name, "arguments": arguments}
    return mcp(ts, session, "c2s", {"id": rid, "method": "tools/call", "params": params})


def mcp_reply(ts: str, rid: int, result: dict[str, Any], session: str = "s1", direction: str = "s2c") -> str:
    return mcp(ts, session, direction, {"id": rid, "result": result})


def mcp_init(ts: str = "00.000000", session: str = "s1") -> list[str]:
    return [mcp(ts, session, "c2s", {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
            mcp_reply(ts, 1, {"protocolVersion": "2025-11-25", "capabilities": {}}, session)]


# -- running the CLI ------------------------------------------------------------------------------------------

def put(tmp_path: Path, name: str, lines: list[str]) -> str:
    (tmp_path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return name


def parse(stdout: str) -> list[Event]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def convert(cli: Cli, tmp_path: Path, fmt: str, lines: list[str], *options: str) -> list[Event]:
    """`convert --from fmt in.jsonl`, which must succeed; the native events it wrote."""
    put(tmp_path, "in.jsonl", lines)
    result = cli("convert", "--from", fmt, "in.jsonl", *options)
    assert result.returncode == 0, result.stderr
    return parse(result.stdout)


def check(cli: Cli, tmp_path: Path, rules: list[dict[str, Any]], fmt: str, lines: list[str], *options: str,
          version: int = 2) -> tuple[int, dict[str, Any]]:
    """`check --input-format fmt --format json` of in.jsonl against `rules`: exit code and report."""
    write_contract(tmp_path, rules, version=version)
    put(tmp_path, "in.jsonl", lines)
    result = cli("check", "--contract", "c.json", "--trace", "in.jsonl", "--input-format", fmt, "--format", "json",
                 *options)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def kinds(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(e["type"], e.get("tool")) for e in events]


def only(events: list[Event], type_: str) -> Event:
    found = [e for e in events if e["type"] == type_]
    assert len(found) == 1, kinds(events)
    return found[0]


def calls(events: list[Event]) -> list[Event]:
    return [e for e in events if e["type"] == "tool.call"]


def results(events: list[Event]) -> list[Event]:
    return [e for e in events if e["type"] == "tool.result"]


def one_tool_run(cli: Cli, tmp_path: Path, **tool_fields: Any) -> tuple[Event, Event]:
    """The call and result of one execute_tool span [100, 200] under an agent root."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(), tool(sid(1), "t", 100, 200, **tool_fields))])
    return only(events, "tool.call"), only(events, "tool.result")


# == §7 common rules ===========================================================================================

def test_events_get_seq_one_to_n_and_utc_nanosecond_times(cli: Cli, tmp_path: Path) -> None:
    """§7: "Events get `seq` 1..n and `time` in UTC ISO, taken from the integer source clock with no float
    rounding"; §10.36: integer nanosecond clocks are converted without float rounding."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(1, 999_999_999), tool(sid(1), "t", 123, 456_789_123))])
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert [e["time"] for e in events] == [at(1), at(123), at(456_789_123), at(999_999_999)]


def test_nanosecond_times_as_json_numbers_keep_every_digit(cli: Cli, tmp_path: Path) -> None:
    """§10.30: times as nanosecond strings or numbers; §10.36: no float rounding (a float would lose the
    last digits of 1700000000123456789)."""
    root = agent()
    root["startTimeUnixNano"] = T0 + 123_456_789
    root["endTimeUnixNano"] = T0 + 987_654_321
    events = convert(cli, tmp_path, "otel", [otlp(root)])
    assert [e["time"] for e in events] == [at(123_456_789), at(987_654_321)]


def test_data_source_holds_format_file_line_and_span_id(cli: Cli, tmp_path: Path) -> None:
    """§7: "`data.source` holds `{format, file, line, span_id}`" — the line is the record's own line."""
    events = convert(cli, tmp_path, "otel", [otlp(agent()), otlp(tool(sid(1), "t", 100, 200))])
    call, result = only(events, "tool.call"), only(events, "tool.result")
    expected = {"format": "otel", "file": "in.jsonl", "line": 2, "span_id": sid(1)}
    assert call["data"]["source"] == expected
    assert result["data"]["source"] == expected
    assert only(events, "run.start")["data"]["source"] == {**expected, "line": 1, "span_id": ROOT}


def test_tool_steps_need_the_explicit_marker(cli: Cli, tmp_path: Path) -> None:
    """§7: "Tool steps are recognised only by explicit markers, never by fuzzy key matching": a span named
    `execute_tool t` carrying gen_ai.tool.* keys but no `gen_ai.operation.name=execute_tool`, and a span with
    OpenInference-looking keys, are not calls in `otel`."""
    lookalike = span(sid(1), "execute_tool t", 100, 200, parent=ROOT,
                     attrs={"gen_ai.tool.name": "t", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": "{}"})
    other = span(sid(2), "tool", 300, 400, parent=ROOT, attrs={"tool.name": "u", "input.value": "{}"})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), lookalike, other)])
    assert kinds(events) == [("run.start", None), ("run.completed", None)]


def test_span_start_is_the_call_and_its_end_the_result_with_duration(cli: Cli, tmp_path: Path) -> None:
    """§7: "A span's start becomes the call and its end becomes the result"; "`duration_ms` = end − start"
    (1,335,602 ns = 1.335602 ms)."""
    call, result = one_tool_run(cli, tmp_path, call_id="c1")
    assert (call["time"], result["time"]) == (at(100), at(200))
    events = convert(cli, tmp_path, "otel", [otlp(agent(0, 900_000_000), tool(sid(1), "t", 1_000, 1_336_602))])
    assert only(events, "tool.result")["duration_ms"] == pytest.approx(1.335602, abs=1e-12)
    assert only(events, "run.completed")["duration_ms"] == pytest.approx(900.0, abs=1e-9)


def test_call_id_is_the_native_id_else_the_span_id(cli: Cli, tmp_path: Path) -> None:
    """§7: "`call_id` is the native id, else the span id"; the result carries the same id."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(), tool(sid(1), "t", 100, 200, call_id="call_7"),
                                                  tool(sid(2), "t", 300, 400))])
    assert [e["call_id"] for e in events if e["type"].startswith("tool.")] == ["call_7", "call_7", sid(2), sid(2)]


def test_repeated_call_id_gets_tilde_n_and_keeps_the_native_id(cli: Cli, tmp_path: Path) -> None:
    """§7: "A repeated id gets `~n`, and the original goes to `data.native_call_id`" (first use keeps it)."""
    spans = [tool(sid(i), "t", 100 * i, 100 * i + 50, call_id="c1") for i in (1, 2, 3)]
    events = convert(cli, tmp_path, "otel", [otlp(agent(), *spans)])
    assert [e["call_id"] for e in calls(events)] == ["c1", "c1~2", "c1~3"]
    assert [e["call_id"] for e in results(events)] == ["c1", "c1~2", "c1~3"]
    assert [e["data"].get("native_call_id") for e in calls(events)] == [None, "c1", "c1"]


def test_tilde_numbering_is_per_run(cli: Cli, tmp_path: Path) -> None:
    """§7 `~n` is about a repeated id within the run's trace: two runs each using `c1` keep `c1`
    (written one file per run with --out-dir)."""
    other = "1af7651916cd43dd8448eb211c80319c"
    lines = [otlp(agent(), tool(sid(1), "t", 100, 200, call_id="c1")),
             otlp(span(sid(5), "invoke_agent b", 0, 1000, attrs={"gen_ai.operation.name": "invoke_agent"}, trace=other),
                  span(sid(6), "execute_tool t", 100, 200, parent=sid(5), trace=other,
                       attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t",
                              "gen_ai.tool.call.id": "c1"}))]
    convert(cli, tmp_path, "otel", lines, "--out-dir", "runs")
    for run_id in (TRACE, other):
        written = parse((tmp_path / "runs" / f"{run_id}.jsonl").read_text(encoding="utf-8"))
        assert [e["call_id"] for e in calls(written)] == ["c1"]


def test_string_args_are_parsed_as_json(cli: Cli, tmp_path: Path) -> None:
    """§7: "String args are parsed as JSON"."""
    call, _ = one_tool_run(cli, tmp_path, args='{"order_id": "A1", "amount": 10.5, "tags": [null]}')
    assert call["args"] == {"order_id": "A1", "amount": 10.5, "tags": [None]}
    assert "raw_args" not in call["data"]


@pytest.mark.parametrize("text", ["[1, 2]", '"just a string"', "{'order_id': 'A1'}", "not json at all"],
                         ids=["array", "json-string", "python-repr", "text"])
def test_args_that_are_not_a_json_object_go_to_raw_args(cli: Cli, tmp_path: Path, text: str) -> None:
    """§7: "A non-object or a Python repr goes to `data.raw_args`; it is never evaluated" (§1: args is an
    object, so the call then has no `args`)."""
    call, _ = one_tool_run(cli, tmp_path, args=text)
    assert "args" not in call
    assert call["data"]["raw_args"] == text


def test_results_are_parsed_like_args(cli: Cli, tmp_path: Path) -> None:
    """§10.26: a text result "becomes `result` parsed as JSON when it is valid JSON", whatever its type."""
    _, result = one_tool_run(cli, tmp_path, result='[1, {"a": null}]')
    assert result["result"] == [1, {"a": None}]
    _, result = one_tool_run(cli, tmp_path, result="null")
    assert "result" in result and result["result"] is None


def test_text_result_stays_a_string(cli: Cli, tmp_path: Path) -> None:
    """§10.26: "else the string itself"."""
    _, result = one_tool_run(cli, tmp_path, result="Refunded 10 EUR")
    assert result["result"] == "Refunded 10 EUR"


def test_python_repr_result_is_a_string_and_raw_result(cli: Cli, tmp_path: Path) -> None:
    """§10.26: "A Python repr … is kept as a string and also copied to `data.raw_result`; it is never
    evaluated"."""
    _, result = one_tool_run(cli, tmp_path, result="{'order': 'A1', 'paid': 10.0}")
    assert result["result"] == "{'order': 'A1', 'paid': 10.0}"
    assert result["data"]["raw_result"] == "{'order': 'A1', 'paid': 10.0}"


def test_events_at_equal_times_follow_depth_rules(cli: Cli, tmp_path: Path) -> None:
    """§7: "At equal times: deeper ends, shallower ends, shallower starts, deeper starts, then source order".
    Root [0,100]; x [0,50] under the root and y [0,50] under x (listed first); z [50,100] under the root."""
    spans = [tool(sid(2), "y", 0, 50, parent=sid(1)), agent(0, 100), tool(sid(1), "x", 0, 50),
             tool(sid(3), "z", 50, 100)]
    events = convert(cli, tmp_path, "otel", [otlp(*spans)])
    assert kinds(events) == [("run.start", None), ("tool.call", "x"), ("tool.call", "y"), ("tool.result", "y"),
                             ("tool.result", "x"), ("tool.call", "z"), ("tool.result", "z"),
                             ("run.completed", None)]


def test_events_at_equal_times_and_depth_keep_source_order(cli: Cli, tmp_path: Path) -> None:
    """§7: "… then source order": two sibling spans with the same start and end, in file order (across lines)."""
    lines = [otlp(agent(0, 100), tool(sid(2), "b", 10, 20)), otlp(tool(sid(1), "a", 10, 20))]
    events = convert(cli, tmp_path, "otel", lines)
    assert kinds(events)[1:5] == [("tool.call", "b"), ("tool.call", "a"), ("tool.result", "b"), ("tool.result", "a")]


def test_root_becomes_run_start_and_run_completed(cli: Cli, tmp_path: Path) -> None:
    """§7: "The root becomes `run.start` and `run.completed`", at its start and end, with its duration."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(10, 5_010))])
    start, end = events
    assert (start["type"], start["time"], end["type"], end["time"]) == ("run.start", at(10), "run.completed",
                                                                        at(5_010))
    assert end["duration_ms"] == pytest.approx(0.005, abs=1e-12)
    assert "status" not in end


def test_root_error_becomes_run_failed_with_reason(cli: Cli, tmp_path: Path) -> None:
    """§7: "… or `run.failed` (`status: failed`) on error"; §10.31: "the failing span's error text goes to
    `reason`"."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(status={"code": 2, "message": "UsageLimitExceeded"}))])
    end = events[-1]
    assert (end["type"], end["status"], end["reason"]) == ("run.failed", "failed", "UsageLimitExceeded")


# == §7 otel row and §10.29–30 ================================================================================

def test_otel_tool_fields(cli: Cli, tmp_path: Path) -> None:
    """otel row: `gen_ai.tool.name` / `gen_ai.tool.call.id` / `gen_ai.tool.call.arguments`, result
    `gen_ai.tool.call.result`, ok when status.code≠2; the result keeps the call's tool."""
    call, result = one_tool_run(cli, tmp_path, call_id="call_1", args='{"order_id":"A1"}',
                                result='{"refunded":10.0}')
    assert {k: call[k] for k in ("type", "tool", "call_id", "args", "run_id")} == {
        "type": "tool.call", "tool": "t", "call_id": "call_1", "args": {"order_id": "A1"}, "run_id": TRACE}
    assert {k: result[k] for k in ("type", "tool", "call_id", "ok", "result")} == {
        "type": "tool.result", "tool": "t", "call_id": "call_1", "ok": True, "result": {"refunded": 10.0}}


@pytest.mark.parametrize(("status", "ok"), [
    ({"code": 2, "message": "boom"}, False),
    ({"code": "STATUS_CODE_ERROR"}, False),
    ({}, True),
    (None, True),
    ({"code": 0}, True),
    ({"code": 1}, True),
    ({"code": "STATUS_CODE_OK"}, True),
    ({"code": "STATUS_CODE_UNSET"}, True),
], ids=["code-2", "error-name", "empty-is-unset", "absent", "unset-int", "ok-int", "ok-name", "unset-name"])
def test_otel_status_decides_ok(cli: Cli, tmp_path: Path, status: dict[str, Any] | None, ok: bool) -> None:
    """otel row: ok = status.code≠2; §10.30: enums as integers or names, an empty status is UNSET."""
    _, result = one_tool_run(cli, tmp_path, status=status)
    assert result["ok"] is ok


def test_otel_exception_event_is_a_tool_failure(cli: Cli, tmp_path: Path) -> None:
    """§10.30: "A tool failure is status ERROR (code 2) or an `exception` span event; `error.type` is optional"."""
    _, result = one_tool_run(cli, tmp_path, events=[exception_event(150, "bad order")])
    assert result["ok"] is False


def test_otel_error_type_attribute_is_a_tool_failure(cli: Cli, tmp_path: Path) -> None:
    """otel row: ok needs "status.code≠2, no `error.type`". §10.30 makes error.type optional for a failure,
    it does not make it harmless, so an `error.type` alone still means ok false."""
    _, result = one_tool_run(cli, tmp_path, extra={"error.type": "ValueError"})
    assert result["ok"] is False


def test_otel_outermost_invoke_span_is_the_root(cli: Cli, tmp_path: Path) -> None:
    """§10.30: "The run root is the outermost `invoke_agent`/`invoke_workflow` span"."""
    spans = [agent(10, 900, operation="invoke_workflow", span_id=sid(9)),
             agent(20, 800, parent=sid(9)), tool(sid(1), "t", 30, 40)]
    events = convert(cli, tmp_path, "otel", [otlp(*spans)])
    start, end = events[0], events[-1]
    assert (start["type"], start["time"], start["data"]["source"]["span_id"]) == ("run.start", at(10), sid(9))
    assert (end["type"], end["time"]) == ("run.completed", at(900))


def test_otel_earliest_root_span_without_agent_spans(cli: Cli, tmp_path: Path) -> None:
    """§7 otel row / §10.30: no invoke_* span, so the earliest root span is the run."""
    spans = [span(sid(8), "later root", 50, 600), span(sid(9), "main", 5, 500),
             tool(sid(1), "t", 30, 40, parent=sid(9))]
    events = convert(cli, tmp_path, "otel", [otlp(*spans)])
    assert (events[0]["type"], events[0]["time"], events[0]["data"]["source"]["span_id"]) == ("run.start", at(5),
                                                                                            sid(9))
    assert ("tool.call", "t") in kinds(events)


ROOT_END_CASES = {
    "otel-agent-inside-an-http-span": ("otel", [span(sid(9), "POST /chat", 0, 100), agent(20, 80, parent=sid(9)),
                                                tool(sid(1), "t", 30, 40)]),
    "otel-earliest-root-beside-a-later-one": ("otel", [span(sid(8), "later root", 50, 100),
                                                       span(sid(9), "main", 20, 80),
                                                       tool(sid(1), "t", 30, 40, parent=sid(9))]),
    "openinference-agent-inside-a-chain": ("openinference", [
        span(sid(9), "outer", 0, 100, attrs={OIK: "CHAIN"}), span(ROOT, "support", 20, 80, parent=sid(9),
                                                                   attrs={OIK: "AGENT"}),
        oi_tool(sid(1), "t", 30, tool__name="t")]),
}


def test_otel_agents_side_by_side_are_one_run_that_ends_with_the_last(cli: Cli, tmp_path: Path) -> None:
    """§10.30/31: two outermost invoke_agent spans (their parent left out of the export) are one
    run; the second fails, so the run fails (its reason) at the second's end, after its calls, not
    at the first's end with the calls after the terminal."""
    error = {"code": "STATUS_CODE_ERROR", "message": "refund crashed"}
    spans = [agent(10, 50, span_id=sid(1), parent=sid(99)), tool(sid(2), "lookup", 20, 30, parent=sid(1)),
             agent(60, 100, span_id=sid(3), parent=sid(99), status=error),
             tool(sid(4), "refund", 70, 80, parent=sid(3), status=error)]
    events = convert(cli, tmp_path, "otel", [otlp(*spans)])
    assert kinds(events) == [("run.start", None), ("tool.call", "lookup"), ("tool.result", "lookup"),
                             ("tool.call", "refund"), ("tool.result", "refund"), ("run.failed", None)]
    assert (events[0]["time"], events[-1]["time"], events[-1]["reason"]) == (at(10), at(100), "refund crashed")


@pytest.mark.parametrize("case", list(ROOT_END_CASES))
def test_run_completed_is_the_run_root_end(cli: Cli, tmp_path: Path, case: str) -> None:
    """§7: "The root becomes `run.start` and `run.completed`" and "`duration_ms` = end − start"; §10.30: the
    root is the outermost invoke_agent span, else the earliest root span (openinference: the AGENT span). Here
    the run root is [20, 80] and another span of the trace lasts until 100."""
    fmt, spans = ROOT_END_CASES[case]
    events = convert(cli, tmp_path, fmt, [otlp(*spans)])
    assert events[0]["time"] == at(20)
    assert (events[-1]["type"], events[-1]["time"]) == ("run.completed", at(80))
    assert events[-1]["duration_ms"] == pytest.approx(0.00006, abs=1e-12)


def chat(span_id: str, start: int, end: int, *, inputs: list[Any] | None = None,
         outputs: list[Any] | None = None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat"}
    if inputs is not None:
        attrs["gen_ai.input.messages"] = json.dumps(inputs)
    if outputs is not None:
        attrs["gen_ai.output.messages"] = json.dumps(outputs)
    return span(span_id, "chat model", start, end, parent=ROOT, attrs=attrs)


ASKS = {"role": "assistant", "parts": [
    {"type": "tool_call", "id": "call_a", "name": "lookup", "arguments": {"x": 1}},
    {"type": "tool_call", "id": "call_b", "name": "ghost", "arguments": {"y": 2}}]}
ANSWERS = {"role": "tool", "parts": [
    {"type": "tool_call_response", "id": "call_a", "response": "found"},
    {"type": "tool_call_response", "id": "call_b", "response": '{"error": "unknown tool"}'}]}


def message_part_trace() -> list[str]:
    """chat1 [10,100] asks for lookup (call_a, run by an execute_tool span) and ghost (call_b, no span);
    chat2 [400,500] repeats the conversation in its input messages."""
    user = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    done = {"role": "assistant", "parts": [{"type": "text", "content": "done"}]}
    return [otlp(agent(), chat(sid(1), 10, 100, inputs=[user], outputs=[ASKS]),
                 tool(sid(2), "lookup", 200, 300, call_id="call_a", args='{"x":1}'),
                 chat(sid(3), 400, 500, inputs=[user, ASKS, ANSWERS], outputs=[done]))]


def test_otel_tool_call_part_without_span_becomes_a_synthetic_call(cli: Cli, tmp_path: Path) -> None:
    """§10.29: a `tool_call` part whose id has no execute_tool span becomes a `tool.call` with
    `data.source.synthetic: true` at the end of its chat span, and its `tool_call_response` the result at the
    start of the next chat span; parts are de-duplicated by id (call_b is written twice); the result's ok is
    unknown, so it is omitted (§7)."""
    events = convert(cli, tmp_path, "otel", message_part_trace())
    assert kinds(events) == [("run.start", None), ("tool.call", "ghost"), ("tool.call", "lookup"),
                             ("tool.result", "lookup"), ("tool.result", "ghost"), ("run.completed", None)]
    ghost_call, ghost_result = events[1], events[4]
    assert (ghost_call["time"], ghost_call["call_id"], ghost_call["args"]) == (at(100), "call_b", {"y": 2})
    assert ghost_call["data"]["source"]["synthetic"] is True
    assert (ghost_result["time"], ghost_result["call_id"], ghost_result["result"]) == (
        at(400), "call_b", {"error": "unknown tool"})
    assert "ok" not in ghost_result


def test_otel_tool_call_part_with_a_span_is_not_doubled(cli: Cli, tmp_path: Path) -> None:
    """§10.29 "per call": call_a has its execute_tool span, so its message parts add nothing."""
    events = convert(cli, tmp_path, "otel", message_part_trace())
    lookup_calls = [e for e in calls(events) if e["tool"] == "lookup"]
    assert len(lookup_calls) == 1
    assert "synthetic" not in lookup_calls[0]["data"]["source"]


def test_otel_a_part_a_span_ran_repeated_by_a_later_chat_is_no_second_call(cli: Cli, tmp_path: Path) -> None:
    """Found by the fifth hunt: a later chat span repeating the earlier turn's output parts (some
    frameworks write the history there) made call_a, which its execute_tool span ran, a second,
    synthetic call `call_a~2`; call_b, with no span, was de-duplicated. Both are one call each."""
    user = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    lines = [otlp(agent(), chat(sid(1), 10, 100, inputs=[user], outputs=[ASKS]),
                  tool(sid(2), "lookup", 200, 300, call_id="call_a", args='{"x":1}'),
                  chat(sid(3), 400, 500, inputs=[user, ASKS, ANSWERS], outputs=[ASKS]))]
    events = convert(cli, tmp_path, "otel", lines)
    assert [(e["tool"], e["call_id"]) for e in calls(events)] == [("ghost", "call_b"), ("lookup", "call_a")]


@pytest.mark.parametrize("code", ["bogus", 7, "STATUS_CODE_MAYBE"])
def test_otel_a_status_code_that_is_none_is_bad_input(cli: Cli, tmp_path: Path, code: Any) -> None:
    """Found by the fifth hunt: a span status code that OTLP has not (0, 1, 2 or their names) was
    read as no error, so a failed tool became `ok: true`: §7 has an unknown ok never guessed. Such
    a span is exit 2, naming the line and the JSON path."""
    put(tmp_path, "in.jsonl", [otlp(agent(), tool(sid(1), "t", 10, 20, status={"code": code}))])
    result = cli("convert", "--from", "otel", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("agent-invariants: in.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[1].status.code: "
                             "expected 0, 1 or 2, or STATUS_CODE_UNSET, STATUS_CODE_OK or STATUS_CODE_ERROR\n")


def test_otel_tool_definitions_are_never_calls(cli: Cli, tmp_path: Path) -> None:
    """otel row: "`gen_ai.tool.definitions` is never a call"."""
    definitions = json.dumps([{"type": "function", "name": "shell", "parameters": {"type": "object"}}])
    model = span(sid(1), "chat model", 10, 20, parent=ROOT,
                 attrs={"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": definitions})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), model)])
    assert calls(events) == []


def b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def test_otel_hex_and_base64_ids_are_normalised(cli: Cli, tmp_path: Path) -> None:
    """otel row: "Hex or base64 ids normalised"; §10.30: ids as hex or base64. A root written in hex and a
    tool span written in base64 (trace, span and parent ids) are one run, with hex ids."""
    root = agent(0, 100)
    child = tool(sid(1), "t", 10, 20)
    child.update(traceId=b64(TRACE), spanId=b64(sid(1)), parentSpanId=b64(ROOT))
    events = convert(cli, tmp_path, "otel", [otlp(root), otlp(child)])
    assert kinds(events) == [("run.start", None), ("tool.call", "t"), ("tool.result", "t"), ("run.completed", None)]
    assert {e["run_id"] for e in events} == {TRACE}
    assert only(events, "tool.call")["data"]["source"]["span_id"] == sid(1)


def test_otel_span_kind_as_integer_or_name(cli: Cli, tmp_path: Path) -> None:
    """§10.30: "enums as integers or names (`STATUS_CODE_ERROR`, `SPAN_KIND_INTERNAL`)"."""
    first, second = tool(sid(1), "a", 10, 20), tool(sid(2), "b", 30, 40)
    first["kind"], second["kind"] = 3, "SPAN_KIND_CLIENT"
    events = convert(cli, tmp_path, "otel", [otlp(agent(), first, second)])
    assert [e["tool"] for e in calls(events)] == ["a", "b"]


def test_otel_output_comes_from_ainv_output(cli: Cli, tmp_path: Path) -> None:
    """§10.30: "`output` comes from the `ainv.output` convention"; §10.36: JSON text."""
    events = convert(cli, tmp_path, "otel", [otlp(agent(extra={"ainv.output": '{"total": 40}'}))])
    assert events[-1]["output"] == {"total": 40}


def test_otel_without_output_convention_has_no_output_and_output_rules_say_missing(cli: Cli, tmp_path: Path) -> None:
    """§10.30: OTel has no standard run output, so `output` "is absent (output rules then report
    `output_missing`, never a guess)" — pydantic-ai's `final_result` attribute is not an output."""
    lines = [otlp(agent(extra={"final_result": "Refunded"}))]
    assert "output" not in convert(cli, tmp_path, "otel", lines)[-1]
    code, report = check(cli, tmp_path, [{"id": "out", "kind": "output_match", "match": {"$regex": "Refund"}}],
                         "otel", lines)
    assert code == 1
    assert [(v["code"], v["status"], v["event_seq"]) for v in report["violations"]] == [
        ("output_match.output_missing", "unresolved", 2)]


def test_otel_agent_span_error_inside_the_root_fails_the_run(cli: Cli, tmp_path: Path) -> None:
    """§10.31: "a run is `run.failed` when its root, or any agent span inside it, ends with an error …; the
    failing span's error text goes to `reason`"."""
    spans = [agent(0, 1000, operation="invoke_workflow"),
             agent(10, 500, span_id=sid(1), parent=ROOT, status={"code": 2, "message": "MaxTurns exceeded"})]
    end = convert(cli, tmp_path, "otel", [otlp(*spans)])[-1]
    assert (end["type"], end["status"], end["reason"], end["time"]) == ("run.failed", "failed", "MaxTurns exceeded",
                                                                        at(1000))


# == mapping profile and the built-in convention ===============================================================

def test_convention_span_named_after_an_event_type(cli: Cli, tmp_path: Path) -> None:
    """Profile: "A span … named after one of our event types becomes that event. Its fields come from the
    `ainv.*` attributes"; "`ainv.args` … hold JSON"; §10.36: it takes the span's start time."""
    grant = span(sid(1), "approval.granted", 10, 20, parent=ROOT,
                 attrs={"ainv.approval_scope": "refund", "ainv.approved": True, "ainv.approver": "bob",
                        "ainv.args": '{"order": "A1"}'})
    event = convert(cli, tmp_path, "otel", [otlp(agent(), grant)])[1]
    assert {k: event.get(k) for k in ("type", "time", "approval_scope", "approved", "approver", "args")} == {
        "type": "approval.granted", "time": at(10), "approval_scope": "refund", "approved": True,
        "approver": "bob", "args": {"order": "A1"}}


def test_convention_span_event_and_log_record(cli: Cli, tmp_path: Path) -> None:
    """Profile: "A span, span event, log record … named after one of our event types becomes that event"
    (the log record by its `eventName`)."""
    observed = {"name": "outcome.observed", "timeUnixNano": str(T0 + 150), "attributes": [
        {"key": "ainv.outcome_id", "value": {"stringValue": "refund-visible"}},
        {"key": "ainv.verdict", "value": {"stringValue": "satisfied"}},
        {"key": "ainv.evidence_class", "value": {"stringValue": "externally_observed"}}]}
    log = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": [{
        "timeUnixNano": str(T0 + 600), "eventName": "control.stop", "traceId": TRACE, "spanId": ROOT,
        "attributes": [{"key": "ainv.reason", "value": {"stringValue": "user"}}]}]}]}]}
    events = convert(cli, tmp_path, "otel", [otlp(agent(), tool(sid(1), "t", 100, 200, events=[observed])),
                                             json.dumps(log)])
    outcome, stop = only(events, "outcome.observed"), only(events, "control.stop")
    assert (outcome["outcome_id"], outcome["verdict"], outcome["evidence_class"]) == (
        "refund-visible", "satisfied", "externally_observed")
    assert (stop["reason"], stop["time"], stop["data"]["source"]["line"]) == ("user", at(600), 2)
    assert kinds(events).index(("outcome.observed", None)) < kinds(events).index(("tool.result", "t"))


def test_convention_fields_are_checked_like_native_events(cli: Cli, tmp_path: Path) -> None:
    """v1 §3.1 (`approved` is a boolean) applies to every event made; bad input is exit 2 with file:line
    (§0 "bad type → exit 2, file:line")."""
    grant = span(sid(1), "approval.granted", 10, 20, parent=ROOT, attrs={"ainv.approved": "yes"})
    put(tmp_path, "in.jsonl", [otlp(agent()), "", otlp(grant)])
    result = cli("convert", "--from", "otel", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "in.jsonl:3" in result.stderr and "approved" in result.stderr
    assert "Traceback" not in result.stderr


def test_convention_keys_that_name_no_field_are_kept_and_a_misspelt_one_is_noticed(cli: Cli, tmp_path: Path) -> None:
    """A convention key that names no event field (`ainv.aproved`, meant as `approved: false`) is
    kept on the event, as a native trace holds it, so that the check notices the misspelling as it
    does a native trace's (bad input under --strict) rather than pass the grant unsaid; the fields
    the importer sets (seq, time, run_id, type) are never taken from the record."""
    grant = span(sid(1), "approval.granted", 10, 20, parent=ROOT,
                 attrs={"ainv.tool": "refund", "ainv.aproved": False, "ainv.seq": 99, "ainv.type": "run.start"})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), grant, tool(sid(2), "refund", 30, 40))])
    event = only(events, "approval.granted")
    assert (event["aproved"], event["seq"], "approved" in event) == (False, 2, False)
    rules = [{"id": "bound", "kind": "approval_bound", "tool": "refund"}]
    code, report = check(cli, tmp_path, rules, "otel", [otlp(agent(), grant, tool(sid(2), "refund", 30, 40))])
    assert (code, report["passed"]) == (0, True)
    result = cli("check", "--contract", "c.json", "--trace", "in.jsonl", "--input-format", "otel", "--strict")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and 'in.jsonl (run ' in result.stderr
    assert 'field "aproved" looks like "approved"' in result.stderr


def review_span(n: int, start: int, decision: str, user: str, **extra: Any) -> dict[str, Any]:
    return span(sid(n), "human_review", start, start + 5, parent=ROOT,
                attrs={"decision": decision, "scope": "refund", "user.id": user, **extra})


def write_profile(tmp_path: Path, profile: dict[str, Any]) -> None:
    (tmp_path / "p.json").write_text(json.dumps(profile), encoding="utf-8")


SPEC_PROFILE_RULE = {"when": {"name": "human_review", "attributes": {"decision": "approve"}},
                     "emit": {"type": "approval.granted", "approval_scope": {"$attr": "scope"},
                              "approver": {"$attr": "user.id"}}}


def test_profile_example_rule_emits_a_grant(cli: Cli, tmp_path: Path) -> None:
    """Profile: the spec's own example rule; "the event keeps the record's time" (the span's start)."""
    write_profile(tmp_path, {"rules": [SPEC_PROFILE_RULE]})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), review_span(1, 10, "approve", "bob"),
                                                  review_span(2, 30, "reject", "eve"))], "--profile", "p.json")
    grant = only(events, "approval.granted")
    assert {k: grant.get(k) for k in ("time", "approval_scope", "approver")} == {
        "time": at(10), "approval_scope": "refund", "approver": "bob"}


def test_profile_grant_changes_the_verdict(cli: Cli, tmp_path: Path) -> None:
    """Profile: the spec's example maps a `human_review` span to `approval.granted`, which a require_approval
    rule with scope `refund` then finds (without `--profile` the refund has no approval)."""
    write_profile(tmp_path, {"rules": [SPEC_PROFILE_RULE]})
    lines = [otlp(agent(), review_span(1, 10, "approve", "bob"), tool(sid(2), "refund", 100, 200))]
    rules = [{"id": "reviewed", "kind": "require_approval", "tool": "refund", "scope": "refund"}]
    with_profile, report = check(cli, tmp_path, rules, "otel", lines, "--profile", "p.json", version=1)
    without, _ = check(cli, tmp_path, rules, "otel", lines, version=1)
    assert (with_profile, report["results"][0]["checked"], without) == (0, 1, 1)


def test_profile_first_match_wins_and_literals(cli: Cli, tmp_path: Path) -> None:
    """Profile: "The first match wins"; a field may be a literal."""
    rules = [SPEC_PROFILE_RULE,
             {"when": {"name": "human_*"}, "emit": {"type": "approval.granted", "approved": False,
                                                     "approver": {"$attr": "user.id"}}},
             {"when": {"name": "human_review"}, "emit": {"type": "never.emitted"}}]
    write_profile(tmp_path, {"rules": rules})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), review_span(1, 10, "approve", "bob"),
                                                  review_span(2, 30, "reject", "eve"))], "--profile", "p.json")
    grants = [e for e in events if e["type"] == "approval.granted"]
    assert [(g.get("approver"), g.get("approved")) for g in grants] == [("bob", None), ("eve", False)]
    assert all(e["type"] != "never.emitted" for e in events)


def test_profile_json_attr_is_parsed(cli: Cli, tmp_path: Path) -> None:
    """Profile: `{"$json_attr": k}` reads attribute k as JSON."""
    write_profile(tmp_path, {"rules": [{"when": {"name": "human_review"},
                                        "emit": {"type": "approval.granted", "args": {"$json_attr": "payload"}}}]})
    events = convert(cli, tmp_path, "otel", [otlp(agent(), review_span(1, 10, "approve", "bob",
                                                                       payload='{"k": [1, 2]}'))],
                     "--profile", "p.json")
    assert only(events, "approval.granted")["args"] == {"k": [1, 2]}


def test_profile_when_kind_and_attribute_match_tree(cli: Cli, tmp_path: Path) -> None:
    """Profile: `when: {kind?, attributes?: node}` — the kind is the format's own (otel:
    gen_ai.operation.name) and attributes is a match tree (§2 operators)."""
    write_profile(tmp_path, {"rules": [{"when": {"kind": "chat", "attributes": {"gen_ai.request.model": {
        "$regex": "^gpt"}}}, "emit": {"type": "agent.message", "claims_completion": True}}]})
    chats = [span(sid(i), "chat", start, start + 5, parent=ROOT,
                  attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": model})
             for i, (start, model) in enumerate([(10, "gpt-4.1"), (20, "claude")], start=1)]
    events = convert(cli, tmp_path, "otel", [otlp(agent(), *chats)], "--profile", "p.json")
    message = only(events, "agent.message")
    assert (message["time"], message["claims_completion"]) == (at(10), True)


def test_claims_never_come_from_text(cli: Cli, tmp_path: Path) -> None:
    """Profile: "`claims_completion` and `outcome.observed` come only from the convention or a profile" —
    an assistant message saying it is done is an `agent.message` without a claim."""
    model = ls_run(2, "model", "llm", "01.000000", "02.000000",
                   outputs=ai_outputs("The refund is complete, task done.", []))
    events = convert(cli, tmp_path, "langsmith", [json.dumps(ls_root(model))])
    message = only(events, "agent.message")
    assert "claims_completion" not in message
    assert all(e["type"] != "outcome.observed" for e in events)


@pytest.mark.parametrize("args", [{"order": "A1"}, '{"order": "A1"}'], ids=["object", "json-text"])
def test_convention_agents_custom_span(cli: Cli, tmp_path: Path, args: Any) -> None:
    """Profile: an OpenAI `custom` span named after an event type is that event, fields from `data`;
    §10.36: at the span's start, and `args` "may be JSON text or an object"."""
    custom = ag_span(2, 1, "01.500000", "02.000000", {"type": "custom", "name": "approval.granted", "data": {
        "approval_scope": "refund", "approved": True, "args": args}})
    grant = only(convert(cli, tmp_path, "openai-agents", ag_lines(custom)), "approval.granted")
    assert {k: grant.get(k) for k in ("time", "approval_scope", "approved", "args")} == {
        "time": "2026-01-01T00:00:01.500000Z", "approval_scope": "refund", "approved": True, "args": {"order": "A1"}}


def test_convention_langsmith_run_with_metadata(cli: Cli, tmp_path: Path) -> None:
    """Profile: a LangSmith run named after an event type, fields from `extra.metadata.ainv`; §10.36: at its
    start."""
    named = ls_run(2, "outcome.observed", "chain", "03.000000", "04.000000", extra={"metadata": {"ainv": {
        "outcome_id": "refund-visible", "verdict": "satisfied", "evidence_class": "configured_verifier"}}})
    outcome = only(convert(cli, tmp_path, "langsmith", [json.dumps(ls_root(named))]), "outcome.observed")
    assert {k: outcome.get(k) for k in ("time", "outcome_id", "verdict", "evidence_class")} == {
        "time": "2026-01-01T00:00:03.000000Z", "outcome_id": "refund-visible", "verdict": "satisfied",
        "evidence_class": "configured_verifier"}


# == §7 openinference row and §10.28, 31–33 ====================================================================

def test_openinference_tool_fields(cli: Cli, tmp_path: Path) -> None:
    """openinference row: `tool.name` / `tool.id` / `input.value`, result `output.value`, ok when
    status≠ERROR; the AGENT span is the root."""
    events = convert(cli, tmp_path, "openinference", [otlp(oi_root(), oi_tool(
        sid(1), "lookup", 100, tool__name="lookup", tool__id="tid", input__value='{"order_id": "A1"}',
        output__value='{"paid": 10.0}', output__mime_type="application/json"))])
    call, result = only(events, "tool.call"), only(events, "tool.result")
    assert (call["tool"], call["call_id"], call["args"]) == ("lookup", "tid", {"order_id": "A1"})
    assert (result["call_id"], result["ok"], result["result"]) == ("tid", True, {"paid": 10.0})
    assert (events[0]["type"], events[0]["data"]["source"]) == ("run.start", {
        "format": "openinference", "file": "in.jsonl", "line": 1, "span_id": ROOT})


def test_openinference_tool_name_falls_back_to_the_span_name(cli: Cli, tmp_path: Path) -> None:
    """openinference row: "`tool.name` (else span name)"; no id anywhere, so the span id."""
    events = convert(cli, tmp_path, "openinference", [otlp(oi_root(), oi_tool(sid(1), "refund", 100))])
    assert (only(events, "tool.call")["tool"], only(events, "tool.call")["call_id"]) == ("refund", sid(1))


@pytest.mark.parametrize(("status", "events"), [
    ({"code": 2, "message": "kaput"}, None),
    ({"code": "STATUS_CODE_ERROR"}, None),
    ({"code": "STATUS_CODE_OK"}, [exception_event(104, "oops")]),
], ids=["status-2", "status-name", "exception-event"])
def test_openinference_failures(cli: Cli, tmp_path: Path, status: dict[str, Any],
                                events: list[dict[str, Any]] | None) -> None:
    """openinference row: ok is "status≠ERROR, no `exception` event"."""
    failing = oi_tool(sid(1), "t", 100, tool__name="t")
    failing["status"] = status
    if events:
        failing["events"] = events
    assert only(convert(cli, tmp_path, "openinference", [otlp(oi_root(), failing)]), "tool.result")["ok"] is False


def test_openinference_call_ids_from_the_nearest_earlier_llm_span(cli: Cli, tmp_path: Path) -> None:
    """§10.28: model-side ids come "from the nearest *earlier* LLM span … under the same parent (or an
    ancestor), matched by tool name and order". LLM1 (child of the root, an ancestor of the turn) asks for t
    (a1) and u (a2); then u and t run; LLM2 in the turn asks for t (b1); then t runs twice (the second has
    no model-side id: span id)."""
    turn = span(sid(20), "turn", 20, 9000, parent=ROOT, attrs={OIK: "CHAIN"})
    spans = [oi_root(), oi_llm(sid(10), 10, [("t", "a1"), ("u", "a2")]), turn,
             oi_tool(sid(1), "u", 30, parent=sid(20), tool__name="u"),
             oi_tool(sid(2), "t", 40, parent=sid(20), tool__name="t"),
             oi_llm(sid(11), 50, [("t", "b1")], parent=sid(20)),
             oi_tool(sid(3), "t", 60, parent=sid(20), tool__name="t"),
             oi_tool(sid(4), "t", 70, parent=sid(20), tool__name="t")]
    events = convert(cli, tmp_path, "openinference", [otlp(*spans)])
    assert [(e["tool"], e["call_id"]) for e in calls(events)] == [("u", "a2"), ("t", "a1"), ("t", "b1"),
                                                                 ("t", sid(4))]


def test_openinference_indexed_message_keys_are_rebuilt_numerically(cli: Cli, tmp_path: Path) -> None:
    """openinference row: "Indexed `llm.*_messages.<i>` keys rebuilt numerically": with 12 tool calls the
    order is 0, 1, 2, … 11, not 0, 1, 10, 11, 2, …"""
    spans = [oi_root(), oi_llm(sid(10), 10, [("t", f"id{j}") for j in range(12)])]
    spans += [oi_tool(sid(j + 1), "t", 100 + 10 * j, tool__name="t") for j in range(12)]
    events = convert(cli, tmp_path, "openinference", [otlp(*spans)])
    assert [e["call_id"] for e in calls(events)] == [f"id{j}" for j in range(12)]


def test_openinference_model_side_ids_follow_order_after_an_own_id(cli: Cli, tmp_path: Path) -> None:
    """openinference row: "`tool.id`, else the parent LLM `tool_call.id` by name+order"; §10.28. The LLM asks
    for t twice (id1, id2); the first t span carries tool.id id1, so the second t is the second call: id2."""
    spans = [oi_root(), oi_llm(sid(10), 10, [("t", "id1"), ("t", "id2")]),
             oi_tool(sid(1), "t", 30, tool__name="t", tool__id="id1"), oi_tool(sid(2), "t", 50, tool__name="t")]
    events = convert(cli, tmp_path, "openinference", [otlp(*spans)])
    assert [e["call_id"] for e in calls(events)] == ["id1", "id2"]


def test_openinference_agent_error_fails_the_run(cli: Cli, tmp_path: Path) -> None:
    """§10.31: an agent span inside the root that ends with an error fails the run; its error text is the
    reason."""
    inner = span(sid(1), "support", 100, 200, parent=ROOT, attrs={OIK: "AGENT"},
                 status={"code": "STATUS_CODE_ERROR", "message": "MaxTurnsExceeded"})
    end = convert(cli, tmp_path, "openinference", [otlp(oi_root(), inner)])[-1]
    assert (end["type"], end["status"], end["reason"]) == ("run.failed", "failed", "MaxTurnsExceeded")


def test_openinference_tripped_guardrail_is_a_stop_at_its_end(cli: Cli, tmp_path: Path) -> None:
    """§10.32: "An OpenInference `GUARDRAIL` span maps the same way": `control.stop {reason:
    "guardrail:<name>"}` at the span's end; §10.31: the run fails. (Spec silent on how OpenInference marks the
    trip; here the GUARDRAIL span ends with an error.)"""
    guard = span(sid(2), "no_refund_promises", 300, 310, parent=ROOT, attrs={OIK: "GUARDRAIL"},
                 status={"code": 2, "message": "tripwire triggered"})
    events = convert(cli, tmp_path, "openinference", [otlp(oi_root(), oi_tool(sid(1), "t", 100, tool__name="t"),
                                                           guard)])
    stop = only(events, "control.stop")
    assert (stop["reason"], stop["time"]) == ("guardrail:no_refund_promises", at(310))
    assert events[-1]["type"] == "run.failed"


def test_openinference_handoff_span_is_an_agent_handoff(cli: Cli, tmp_path: Path) -> None:
    """§10.33: "a span named `handoff to <agent>` (OpenInference TOOL span without `tool.name` …) becomes
    `agent.handoff {data: {to}}`, never a tool call"."""
    events = convert(cli, tmp_path, "openinference", [otlp(oi_root(), oi_tool(sid(1), "handoff to billing", 100))])
    handoff = only(events, "agent.handoff")
    assert (handoff["data"]["to"], handoff["time"]) == ("billing", at(100))
    assert calls(events) == []


def test_openinference_text_output_with_json_mime_is_parsed(cli: Cli, tmp_path: Path) -> None:
    """§10.26: `output.value` is parsed as JSON when valid; plain text stays a string."""
    spans = [oi_root(), oi_tool(sid(1), "a", 100, tool__name="a", output__value='["x", 1]',
                                output__mime_type="application/json"),
             oi_tool(sid(2), "b", 200, tool__name="b", output__value="plain words", output__mime_type="text/plain")]
    assert [r["result"] for r in results(convert(cli, tmp_path, "openinference", [otlp(*spans)]))] == [
        ["x", 1], "plain words"]


# == §7 openai-agents row and §10.28, 31–33 ===================================================================

def function_span(n: int, start: str, end: str, name: str = "lookup", input_: str = '{"order_id": "A1"}',
                  output: str = '{"paid": 10.0}', error: dict[str, Any] | None = None) -> str:
    return ag_span(n, 1, start, end, {"type": "function", "name": name, "input": input_, "output": output,
                                      "mcp_data": None}, error)


def test_agents_function_span_is_a_call(cli: Cli, tmp_path: Path) -> None:
    """openai-agents row: `span_data.type=function`: `name` / span id / `input`; result `output`, ok when
    `error` null; §10.28: "the span id is the call id"; §10.36: ISO times kept to the microsecond."""
    events = convert(cli, tmp_path, "openai-agents", ag_lines(function_span(2, "01.000001", "01.500003")))
    call, result = only(events, "tool.call"), only(events, "tool.result")
    assert {k: call[k] for k in ("tool", "call_id", "args", "time")} == {
        "tool": "lookup", "call_id": ag_id(2), "args": {"order_id": "A1"}, "time": "2026-01-01T00:00:01.000001Z"}
    assert {k: result[k] for k in ("call_id", "ok", "result", "time")} == {
        "call_id": ag_id(2), "ok": True, "result": {"paid": 10.0}, "time": "2026-01-01T00:00:01.500003Z"}
    assert result["duration_ms"] == pytest.approx(500.002, abs=1e-9)
    assert result["data"]["source"] == {"format": "openai-agents", "file": "in.jsonl", "line": 2,
                                        "span_id": ag_id(2)}


def test_agents_trace_gives_the_run_id_and_root_the_bounds(cli: Cli, tmp_path: Path) -> None:
    """openai-agents row: "The trace gives run_id and bounds"."""
    events = convert(cli, tmp_path, "openai-agents", ag_lines(function_span(2, "01.000000", "02.000000")))
    assert {e["run_id"] for e in events} == {AG_TRACE}
    assert [(e["type"], e["time"]) for e in (events[0], events[-1])] == [
        ("run.start", "2026-01-01T00:00:00.000000Z"), ("run.completed", "2026-01-01T00:00:09.000000Z")]


def test_agents_span_that_never_ended_has_no_result(cli: Cli, tmp_path: Path) -> None:
    """§7: "A span's start becomes the call and its end becomes the result": a function span exported while
    it ran (`ended_at: null`) is a call without a result (the README says so too)."""
    running = ag_span(2, 1, "01.000000", "01.000000", {"type": "function", "name": "slow", "input": "{}",
                                                       "output": None})
    record = json.loads(running)
    record["ended_at"] = None
    events = convert(cli, tmp_path, "openai-agents", ag_lines(json.dumps(record)))
    assert [e["tool"] for e in calls(events)] == ["slow"]
    assert results(events) == []


def test_agents_python_repr_output_stays_a_string(cli: Cli, tmp_path: Path) -> None:
    """§10.26: "A Python repr (the Agents SDK writes `str()` of the return value) is kept as a string and also
    copied to `data.raw_result`"."""
    line = function_span(2, "01.000000", "02.000000", output="{'order': 'A1', 'paid': 10.0}")
    result = only(convert(cli, tmp_path, "openai-agents", ag_lines(line)), "tool.result")
    assert result["result"] == "{'order': 'A1', 'paid': 10.0}"
    assert result["data"]["raw_result"] == "{'order': 'A1', 'paid': 10.0}"


def test_agents_error_makes_the_result_fail(cli: Cli, tmp_path: Path) -> None:
    """openai-agents row: ok is "`error` null"."""
    line = function_span(2, "01.000000", "02.000000", error={"message": "Error running tool", "data": None})
    assert only(convert(cli, tmp_path, "openai-agents", ag_lines(line)), "tool.result")["ok"] is False


def guardrail(n: int, start: str, end: str, triggered: bool, name: str = "no_refund_promises") -> str:
    return ag_span(n, 1, start, end, {"type": "guardrail", "name": name, "triggered": triggered})


def test_agents_triggered_guardrail_is_a_stop_at_its_end_and_fails_the_run(cli: Cli, tmp_path: Path) -> None:
    """openai-agents row: "`guardrail` with `triggered` → `control.stop {reason:"guardrail:<name>"}`";
    §10.32: at the guardrail span's end; §10.31: the tripwire makes the run `run.failed`. An untriggered
    guardrail adds nothing."""
    lines = ag_lines(guardrail(2, "00.500000", "00.600000", False, "quiet"),
                     guardrail(3, "03.000000", "04.250000", True))
    events = convert(cli, tmp_path, "openai-agents", lines)
    stop = only(events, "control.stop")
    assert (stop["reason"], stop["time"]) == ("guardrail:no_refund_promises", "2026-01-01T00:00:04.250000Z")
    assert (events[-1]["type"], events[-1]["status"]) == ("run.failed", "failed")


def test_a_failed_run_stays_failed_beside_a_convention_run_completed(cli: Cli, tmp_path: Path) -> None:
    """Found by the fifth hunt: §10.31 makes a run whose root fails, or whose guardrail fired,
    `run.failed`; a `run.completed` convention span beside it (which carries the output) turned the
    end into `run.completed` with `status: failed`, and a rule on run.failed judged the opposite.
    The convention gives its output; the end stays the failure, with its reason."""
    completed = span(sid(1), "run.completed", 100, 200, parent=ROOT, attrs={"ainv.output": '{"k": 2}'})
    spans = [agent(0, 1000, status={"code": 2, "message": "crash"}), completed]
    end = convert(cli, tmp_path, "otel", [otlp(*spans)])[-1]
    assert {k: end.get(k) for k in ("type", "status", "reason", "output")} == {
        "type": "run.failed", "status": "failed", "reason": "crash", "output": {"k": 2}}
    custom = ag_span(4, 1, "05.000000", "05.100000", {"type": "custom", "name": "run.completed",
                                                        "data": {"output": "done"}})
    events = convert(cli, tmp_path, "openai-agents", ag_lines(guardrail(3, "03.000000", "04.250000", True), custom))
    assert {k: events[-1].get(k) for k in ("type", "status", "output")} == {
        "type": "run.failed", "status": "failed", "output": "done"}


@pytest.mark.parametrize("triggered", ["true", 1, None])
def test_agents_a_guardrail_whose_triggered_is_no_boolean_is_bad_input(cli: Cli, tmp_path: Path,
                                                                       triggered: Any) -> None:
    """A wrongly typed field is exit 2 with the file, line and JSON path: read as untriggered, a
    tripped guardrail would pass what it stopped."""
    lines = ag_lines(ag_span(2, 1, "03.000000", "04.000000",
                             {"type": "guardrail", "name": "g", "triggered": triggered}))
    put(tmp_path, "in.jsonl", lines)
    result = cli("convert", "--from", "openai-agents", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "agent-invariants: in.jsonl:2: $.span_data.triggered: expected true or false\n"


def test_agents_tool_run_during_a_guardrail_is_not_after_the_stop(cli: Cli, tmp_path: Path) -> None:
    """§10.32: the stop sits at the guardrail's end "so a tool that ran before it is not 'after the stop'":
    a guardrail [1, 4] runs beside a tool [2, 3]; stop_is_final passes (run.failed may follow a stop)."""
    lines = ag_lines(guardrail(2, "01.000000", "04.000000", True), function_span(3, "02.000000", "03.000000"))
    code, report = check(cli, tmp_path, [{"id": "final", "kind": "stop_is_final"}], "openai-agents", lines, version=1)
    assert (code, report["violations"]) == (0, [])
    assert report["results"][0]["checked"] == 1


def test_agents_handoff_span_is_an_agent_handoff(cli: Cli, tmp_path: Path) -> None:
    """openai-agents row: "`handoff` → `agent.handoff`"; §10.33: `{data: {to}}`, never a tool call."""
    line = ag_span(2, 1, "02.000000", "02.100000", {"type": "handoff", "from_agent": "support",
                                                    "to_agent": "billing"})
    events = convert(cli, tmp_path, "openai-agents", ag_lines(line))
    assert only(events, "agent.handoff")["data"]["to"] == "billing"
    assert calls(events) == []


def test_agents_agent_error_fails_the_run_with_its_text(cli: Cli, tmp_path: Path) -> None:
    """§10.31: the root agent span ends with an error → `run.failed`, its error text in `reason`."""
    lines = ag_lines(error={"message": "Max turns (3) exceeded", "data": {"max_turns": 3}})
    end = convert(cli, tmp_path, "openai-agents", lines)[-1]
    assert (end["type"], end["status"], end["reason"]) == ("run.failed", "failed", "Max turns (3) exceeded")


# == §7 langsmith row and §10.27–28 ===========================================================================

def ls_tool(n: int, name: str, start: str, **fields: Any) -> dict[str, Any]:
    end = f"{start[:3]}500000"
    return ls_run(n, name, "tool", start, end, **fields)


def ls_convert(cli: Cli, tmp_path: Path, *children: dict[str, Any], **root: Any) -> list[Event]:
    return convert(cli, tmp_path, "langsmith", [json.dumps(ls_root(*children, **root))])


def test_langsmith_tool_run_is_a_call(cli: Cli, tmp_path: Path) -> None:
    """langsmith row: `run_type=tool`: `name`, args `inputs`, ToolMessage `tool_call_id`; §10.27: the result is
    `outputs.output.content` of a ToolMessage, parsed as JSON (§10.26); §10.36: microseconds."""
    events = ls_convert(cli, tmp_path, ls_tool(2, "lookup", "02.000001", inputs={"order_id": "A1"},
                                               outputs=tool_message('{"paid": 10.0}', "call_1")))
    call, result = only(events, "tool.call"), only(events, "tool.result")
    assert {k: call[k] for k in ("tool", "call_id", "args", "time", "run_id")} == {
        "tool": "lookup", "call_id": "call_1", "args": {"order_id": "A1"}, "time": "2026-01-01T00:00:02.000001Z",
        "run_id": LS_ROOT}
    assert {k: result[k] for k in ("call_id", "ok", "result")} == {"call_id": "call_1", "ok": True,
                                                                   "result": {"paid": 10.0}}
    assert call["data"]["source"] == {"format": "langsmith", "file": "in.jsonl", "line": 1, "span_id": ls_id(2)}


@pytest.mark.parametrize(("inputs", "args"), [
    ({"input": '{"k": 1}'}, {"k": 1}),
    ({"input": "[1, 2]"}, {"input": "[1, 2]"}),
    ({"input": "hello"}, {"input": "hello"}),
    ({"input": '{"k": 1}', "other": 2}, {"input": '{"k": 1}', "other": 2}),
], ids=["json-object-text", "json-array-text", "text", "more-keys"])
def test_langsmith_args_are_inputs_or_parsed_inputs_input(cli: Cli, tmp_path: Path, inputs: dict[str, Any],
                                                          args: dict[str, Any]) -> None:
    """§10.27: "a tool run's `inputs` is the args object (`inputs.input` only when it is a string that parses
    as a JSON object)" — read here as: `inputs` is {"input": <that string>} alone."""
    assert only(ls_convert(cli, tmp_path, ls_tool(2, "t", "02.000000", inputs=inputs)), "tool.call")["args"] == args


def test_langsmith_plain_output_is_the_result(cli: Cli, tmp_path: Path) -> None:
    """§10.27: the result is "`outputs.output`" when it is not a ToolMessage; text JSON is parsed (§10.26)."""
    events = ls_convert(cli, tmp_path, ls_tool(2, "a", "02.000000", outputs={"output": [1, 2]}),
                        ls_tool(3, "b", "03.000000", outputs={"output": '{"x": 1}'}))
    assert [r["result"] for r in results(events)] == [[1, 2], {"x": 1}]


def test_langsmith_failures(cli: Cli, tmp_path: Path) -> None:
    """§10.27: "a ToolMessage with `status: "error"` or a run with `error` is `ok: false`"."""
    events = ls_convert(cli, tmp_path,
                        ls_tool(2, "a", "02.000000", outputs=tool_message("oops", "c1", status="error")),
                        ls_tool(3, "b", "03.000000", error="ValueError('x')", outputs=None),
                        ls_tool(4, "c", "04.000000", outputs=tool_message("fine", "c3")))
    assert [r["ok"] for r in results(events)] == [False, False, True]


def test_langsmith_call_id_sources_in_order(cli: Cli, tmp_path: Path) -> None:
    """§10.27: "Call-id sources in order: the ToolMessage's `tool_call_id`, `extra.tool_call_id`, the run id";
    §10.28 puts the model's id (earlier llm run, by name and order) before the run id."""
    model = ls_run(2, "model", "llm", "01.000000", "01.100000", outputs=ai_outputs("", [("c", "m1")]))
    events = ls_convert(cli, tmp_path, model,
                        ls_tool(3, "a", "02.000000", outputs=tool_message("r", "tm1"), extra={"tool_call_id": "ex0"}),
                        ls_tool(4, "b", "03.000000", extra={"tool_call_id": "ex1"}),
                        ls_tool(5, "c", "04.000000"),
                        ls_tool(6, "d", "05.000000"))
    assert [e["call_id"] for e in calls(events)] == ["tm1", "ex1", "m1", ls_id(6)]


def test_langsmith_model_side_ids_by_name_and_order(cli: Cli, tmp_path: Path) -> None:
    """§10.28: the earlier llm run (a sibling) gives ids "matched by tool name and order"."""
    model = ls_run(2, "model", "llm", "01.000000", "01.100000",
                   outputs=ai_outputs("", [("a", "m1"), ("b", "m2"), ("a", "m3")]))
    events = ls_convert(cli, tmp_path, model, ls_tool(3, "b", "02.000000"), ls_tool(4, "a", "03.000000"),
                        ls_tool(5, "a", "04.000000"))
    assert [(e["tool"], e["call_id"]) for e in calls(events)] == [("b", "m2"), ("a", "m1"), ("a", "m3")]


def test_langsmith_model_side_ids_follow_order_after_a_tool_message(cli: Cli, tmp_path: Path) -> None:
    """§10.28: matched "by tool name and order": the model asks for a twice (m1, m2); the first a run answers
    with a ToolMessage for m1, the second fails (no ToolMessage), so it is the model's second a: m2."""
    model = ls_run(2, "model", "llm", "01.000000", "01.100000", outputs=ai_outputs("", [("a", "m1"), ("a", "m2")]))
    events = ls_convert(cli, tmp_path, model, ls_tool(3, "a", "02.000000", outputs=tool_message("r1", "m1")),
                        ls_tool(4, "a", "03.000000", error="ValueError('boom')", outputs=None))
    assert [e["call_id"] for e in calls(events)] == ["m1", "m2"]


def test_langsmith_runs_are_ordered_by_dotted_order(cli: Cli, tmp_path: Path) -> None:
    """langsmith row: "Ordered by `dotted_order`": two tool runs with equal times, listed in the file in the
    opposite order of their dotted_order."""
    first = ls_tool(2, "first", "02.000000")
    second = ls_tool(3, "second", "02.000000")
    events = ls_convert(cli, tmp_path, second, first)
    assert kinds(events)[1:5] == [("tool.call", "first"), ("tool.call", "second"), ("tool.result", "first"),
                                  ("tool.result", "second")]


def test_langsmith_root_bounds_the_run_and_gives_the_output(cli: Cli, tmp_path: Path) -> None:
    """langsmith row: "Root `outputs` → `output`" (an outputs object without an `output` key is the output
    whole); the root is run.start/run.completed with end − start."""
    events = ls_convert(cli, tmp_path, outputs={"answer": 42, "sources": []})
    start, end = events
    assert (start["type"], start["time"], end["type"], end["time"]) == (
        "run.start", "2026-01-01T00:00:00.000000Z", "run.completed", "2026-01-01T00:00:50.000000Z")
    assert end["output"] == {"answer": 42, "sources": []}
    assert end["duration_ms"] == pytest.approx(50_000, abs=1e-9)


def test_langsmith_root_error_fails_the_run(cli: Cli, tmp_path: Path) -> None:
    """§7: the root becomes `run.failed` (`status: failed`) on error; §10.31: its error text is the reason."""
    end = ls_convert(cli, tmp_path, error="RuntimeError: boom", outputs=None)[-1]
    assert (end["type"], end["status"], end["reason"]) == ("run.failed", "failed", "RuntimeError: boom")


def test_langsmith_assistant_message_becomes_agent_message(cli: Cli, tmp_path: Path) -> None:
    """langsmith row: "Assistant messages → `agent.message`" (an llm run's reply)."""
    model = ls_run(2, "model", "llm", "07.000000", "07.500000", outputs=ai_outputs("All done", []))
    assert [e["type"] for e in ls_convert(cli, tmp_path, model)] == ["run.start", "agent.message", "run.completed"]


def test_langsmith_one_run_per_line_equals_child_runs(cli: Cli, tmp_path: Path) -> None:
    """langsmith row: Runs with "`child_runs` flattened" — the same runs written one per line (linked by
    parent_run_id) give the same events, the root's line being its own."""
    child = ls_tool(2, "t", "02.000000", inputs={"q": 1}, outputs=tool_message("ok", "c1"))
    nested = ls_convert(cli, tmp_path, child)
    flat_root = ls_root()
    del flat_root["child_runs"]
    flat = convert(cli, tmp_path, "langsmith", [json.dumps(child), json.dumps(flat_root)])
    assert [(e["type"], e.get("call_id"), e["time"]) for e in flat] == [
        (e["type"], e.get("call_id"), e["time"]) for e in nested]
    assert (flat[0]["data"]["source"]["line"], only(flat, "tool.call")["data"]["source"]["line"]) == (2, 1)


# == §7 mcp-log row and §10.35 ================================================================================

def test_mcp_tools_call_and_reply(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: `tools/call` request: `params.name` / `<session>:<id>` / `params.arguments`; the reply in
    the other direction with the same (session, id) is the result: `structuredContent`, ok (no `error`, not
    `isError`); §10.35: run id = session; §10.36: microseconds."""
    lines = [*mcp_init(), mcp_call("01.000001", 2, "lookup", {"order_id": "A1"}),
             mcp_reply("01.250000", 2, {"content": [{"type": "text", "text": "{\"paid\": 10}"}], "isError": False,
                                        "structuredContent": {"paid": 10.0}})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    call, result = only(events, "tool.call"), only(events, "tool.result")
    assert {k: call[k] for k in ("tool", "call_id", "args", "time", "run_id")} == {
        "tool": "lookup", "call_id": "s1:2", "args": {"order_id": "A1"}, "time": "2026-01-01T00:00:01.000001Z",
        "run_id": "s1"}
    assert {k: result[k] for k in ("tool", "call_id", "ok", "result", "time")} == {
        "tool": "lookup", "call_id": "s1:2", "ok": True, "result": {"paid": 10.0},
        "time": "2026-01-01T00:00:01.250000Z"}
    assert result["duration_ms"] == pytest.approx(249.999, abs=1e-9)
    assert (call["data"]["source"]["format"], call["data"]["source"]["line"], result["data"]["source"]["line"]) == (
        "mcp-log", 3, 4)


def test_mcp_a_reused_request_id_pairs_each_reply_with_the_nearest_waiting_call(cli: Cli, tmp_path: Path) -> None:
    """A client that reuses an id before its reply: each reply answers the latest call still
    waiting under the id, as §10.3 pairs a result with the nearest earlier call; no reply is
    dropped (the second one, a failure, was skipped and call `a` left without a result)."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "a", {}), mcp_call("02.000000", 2, "b", {}),
             mcp_reply("03.000000", 2, {"content": []}), mcp_reply("04.000000", 2, {"content": [], "isError": True})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    calls = {event["call_id"]: event["tool"] for event in events if event["type"] == "tool.call"}
    results = [(calls[event["call_id"]], event["ok"]) for event in events if event["type"] == "tool.result"]
    assert results == [("b", True), ("a", False)]


def test_mcp_text_content_is_parsed_when_no_structured_content(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: "`structuredContent`, else `content`"; §10.26: MCP text content is parsed as JSON when
    valid, else kept as the string."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "a", {}),
             mcp_reply("01.100000", 2, {"content": [{"type": "text", "text": "{\"done\": true}"}]}),
             mcp_call("02.000000", 3, "b", {}),
             mcp_reply("02.100000", 3, {"content": [{"type": "text", "text": "all good"}]})]
    assert [r["result"] for r in results(convert(cli, tmp_path, "mcp-log", lines))] == [{"done": True}, "all good"]


@pytest.mark.parametrize("reply", [
    {"result": {"content": [{"type": "text", "text": "Unknown tool: b"}], "isError": True}},
    {"error": {"code": -32602, "message": "Invalid arguments"}},
], ids=["isError", "error-reply"])
def test_mcp_failed_calls(cli: Cli, tmp_path: Path, reply: dict[str, Any]) -> None:
    """mcp-log row: ok needs "no `error`, not `isError`"; §10.35: an exception, an unknown tool and bad
    arguments all arrive as `isError: true`: `ok: false`."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "b", {}), mcp("01.100000", "s1", "s2c", {"id": 2, **reply})]
    assert only(convert(cli, tmp_path, "mcp-log", lines), "tool.result")["ok"] is False


def test_mcp_initialize_starts_and_end_of_log_completes(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: "`initialize` → `run.start`; end of log → `run.completed`"."""
    lines = [*mcp_init("00.500000"), mcp_call("01.000000", 2, "a", {}), mcp_reply("03.000000", 2, {"content": []})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    assert [(e["type"], e["time"]) for e in (events[0], events[-1])] == [
        ("run.start", "2026-01-01T00:00:00.500000Z"), ("run.completed", "2026-01-01T00:00:03.000000Z")]


def test_mcp_cancelled_call_has_no_result(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: "`notifications/cancelled` → `tool.cancelled`"; §10.35: "A cancelled call (no reply) gets
    `tool.cancelled` and no result"."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "slow", {}),
             mcp("02.000000", "s1", "c2s", {"method": "notifications/cancelled", "params": {"requestId": 2}})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    cancelled = only(events, "tool.cancelled")
    assert (cancelled["call_id"], cancelled["time"]) == ("s1:2", "2026-01-01T00:00:02.000000Z")
    assert results(events) == []


def elicitation_lines(action: dict[str, Any]) -> list[str]:
    return [*mcp_init(), mcp_call("01.000000", 2, "refund", {"order_id": "A1"}),
            mcp("01.100000", "s1", "s2c", {"id": 1, "method": "elicitation/create",
                                           "params": {"message": "Refund?", "requestedSchema": {}}}),
            mcp_reply("01.200000", 1, action, direction="c2s"),
            mcp_reply("01.300000", 2, {"content": [], "structuredContent": {"refunded": 10.0}})]


def test_mcp_accepted_elicitation_is_a_grant_of_the_pending_call(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: "Accepted `elicitation/create` → `approval.granted {call_id: pending call, args: content}`";
    it happens inside the call (profile: "MCP elicitation happens *inside* the call")."""
    events = convert(cli, tmp_path, "mcp-log", elicitation_lines({"action": "accept", "content": {"ok": True}}))
    assert [e["type"] for e in events] == ["run.start", "tool.call", "approval.granted", "tool.result",
                                           "run.completed"]
    grant = events[2]
    assert (grant["call_id"], grant["args"], grant.get("approved", True)) == ("s1:2", {"ok": True}, True)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_mcp_refused_elicitation_is_not_approved(cli: Cli, tmp_path: Path, action: str) -> None:
    """mcp-log row: an elicitation that is not accepted gives `approved:false`."""
    grant = only(convert(cli, tmp_path, "mcp-log", elicitation_lines({"action": action})), "approval.granted")
    assert (grant["call_id"], grant["approved"]) == ("s1:2", False)


def test_mcp_tools_list_is_a_tool_listing(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: "`tools/list` → `tool.listing`"."""
    lines = [*mcp_init(), mcp("01.000000", "s1", "c2s", {"id": 2, "method": "tools/list"}),
             mcp_reply("01.100000", 2, {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    assert [e["type"] for e in events] == ["run.start", "tool.listing", "run.completed"]
    assert calls(events) == []


def test_mcp_replies_pair_on_the_requesting_side(cli: Cli, tmp_path: Path) -> None:
    """§10.35: pair on (session, requesting side, id) — the server's `elicitation/create` id 1 is not the
    client's `tools/call` id 1. No `initialize`: the first message starts the run."""
    lines = [mcp_call("00.500000", 1, "refund", {"order_id": "A1"}),
             mcp("01.000000", "s1", "s2c", {"id": 1, "method": "elicitation/create", "params": {"message": "ok?"}}),
             mcp_reply("02.000000", 1, {"action": "accept", "content": {"approved": True}}, direction="c2s"),
             mcp_reply("03.000000", 1, {"content": [{"type": "text", "text": "done"}]})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    assert [(e["type"], e["time"][17:26]) for e in events] == [
        ("run.start", "00.500000"), ("tool.call", "00.500000"), ("approval.granted", "02.000000"),
        ("tool.result", "03.000000"), ("run.completed", "03.000000")]
    assert (events[2]["call_id"], events[3]["call_id"], events[3]["result"]) == ("s1:1", "s1:1", "done")


def test_mcp_reply_in_the_same_direction_is_not_the_result(cli: Cli, tmp_path: Path) -> None:
    """mcp-log row: the result is "the reply in the other direction"; §10.35: "in the opposite direction
    from its request": a c2s message with the call's id is not its reply."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "x", {}),
             mcp_reply("01.100000", 2, {"structuredContent": {"side": "client"}}, direction="c2s"),
             mcp_reply("01.200000", 2, {"structuredContent": {"side": "server"}})]
    result = only(convert(cli, tmp_path, "mcp-log", lines), "tool.result")
    assert (result["result"], result["time"]) == ({"side": "server"}, "2026-01-01T00:00:01.200000Z")


def test_mcp_each_session_is_its_own_run(cli: Cli, tmp_path: Path) -> None:
    """§10.35: "Each session is its own run (run id = session)": the same request ids in two sessions pair
    within their session."""
    lines = [*mcp_init(session="a"), *mcp_init(session="b"),
             mcp_call("01.000000", 2, "x", {}, session="a"), mcp_call("01.100000", 2, "y", {}, session="b"),
             mcp_reply("01.200000", 2, {"structuredContent": {"from": "b"}}, session="b"),
             mcp_reply("01.300000", 2, {"structuredContent": {"from": "a"}}, session="a")]
    events = convert(cli, tmp_path, "mcp-log", lines, "--run", "b")
    assert {e["run_id"] for e in events} == {"b"}
    assert [(e["type"], e.get("call_id"), e.get("result")) for e in events if e["type"].startswith("tool.")] == [
        ("tool.call", "b:2", None), ("tool.result", "b:2", {"from": "b"})]


def test_mcp_input_responses_continue_the_pending_call(cli: Cli, tmp_path: Path) -> None:
    """§10.35: "a `tools/call` carrying `requestState`/`inputResponses` continues the pending call of the same
    name and arguments (one logical call), and an accepted `inputResponses` entry for an elicitation becomes
    the `approval.granted` of that call". (Spec silent on the exact request shape; this one follows the
    draft's `inputRequests`/`inputResponses` maps.)"""
    lines = [mcp_call("00.000000", 1, "refund", {"order_id": "A1"}),
             mcp_reply("01.000000", 1, {"inputRequests": {"confirm": {"method": "elicitation/create",
                                                                      "params": {"message": "ok?"}}},
                                        "requestState": "st-1"}),
             mcp("02.000000", "s1", "c2s", {"id": 2, "method": "tools/call", "params": {
                 "name": "refund", "arguments": {"order_id": "A1"}, "requestState": "st-1",
                 "inputResponses": {"confirm": {"action": "accept", "content": {"approved": True}}}}}),
             mcp_reply("03.000000", 2, {"content": [{"type": "text", "text": "refunded"}]})]
    events = convert(cli, tmp_path, "mcp-log", lines)
    assert [e["type"] for e in events] == ["run.start", "tool.call", "approval.granted", "tool.result",
                                           "run.completed"]
    call, grant, result = events[1:4]
    assert call["call_id"] == grant["call_id"] == result["call_id"]
    assert (grant.get("approved", True), result["result"]) == (True, "refunded")


def test_mcp_hoisted_elicitation_moves_before_its_call(cli: Cli, tmp_path: Path) -> None:
    """Profile: "`hoist_elicitation: true` moves the grant to just before its call and marks it
    `data.hoisted`"; a require_approval rule then passes."""
    write_profile(tmp_path, {"hoist_elicitation": True, "rules": []})
    lines = elicitation_lines({"action": "accept", "content": {"ok": True}})
    events = convert(cli, tmp_path, "mcp-log", lines, "--profile", "p.json")
    assert [e["type"] for e in events] == ["run.start", "approval.granted", "tool.call", "tool.result",
                                           "run.completed"]
    assert events[1]["data"]["hoisted"] is True
    code, report = check(cli, tmp_path, [{"id": "ask", "kind": "require_approval", "tool": "refund"}], "mcp-log",
                         lines, "--profile", "p.json", version=1)
    assert (code, report["results"][0]["checked"], report["violations"]) == (0, 1, [])


def test_mcp_times_are_utc_to_the_microsecond(cli: Cli, tmp_path: Path) -> None:
    """§7: `time` in UTC ISO; §10.36: "ISO strings (… MCP logs) are kept to the microsecond" — an offset is
    turned into UTC."""
    lines = [mcp("2026-01-01T02:00:00.250000+02:00", "s1", "c2s", {"id": 1, "method": "initialize"})]
    assert convert(cli, tmp_path, "mcp-log", lines)[0]["time"] == "2026-01-01T00:00:00.250000Z"


# == auto ======================================================================================================

def auto_inputs() -> dict[str, list[str]]:
    return {
        "otel": [otlp(agent(), tool(sid(1), "t", 10, 20))],
        "openinference": [otlp(oi_root(), oi_tool(sid(1), "t", 100, tool__name="t"))],
        "openai-agents": ag_lines(function_span(2, "01.000000", "02.000000")),
        "langsmith": [json.dumps(ls_root(ls_tool(2, "t", "02.000000")))],
        "mcp-log": [*mcp_init(), mcp_call("01.000000", 2, "t", {}), mcp_reply("01.100000", 2, {"content": []})],
    }


@pytest.mark.parametrize("fmt", ["otel", "openinference", "openai-agents", "langsmith", "mcp-log"])
def test_auto_tells_the_format_from_the_first_record(cli: Cli, tmp_path: Path, fmt: str) -> None:
    """§7: "`auto` sniffs the first record": the same events as naming the format."""
    lines = auto_inputs()[fmt]
    sniffed = convert(cli, tmp_path, "auto", lines)
    assert {e["data"]["source"]["format"] for e in sniffed} == {fmt}
    assert sniffed == convert(cli, tmp_path, fmt, lines)
    assert [e["type"] for e in calls(sniffed)] == ["tool.call"]


def test_auto_refuses_a_record_of_no_known_format(cli: Cli, tmp_path: Path) -> None:
    """§7 auto: a first record that is none of the formats cannot be sniffed: bad input, exit 2, file:line."""
    put(tmp_path, "in.jsonl", [json.dumps({"hello": "world"})])
    result = cli("convert", "--from", "auto", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "in.jsonl:1" in result.stderr and "Traceback" not in result.stderr


def test_check_reads_native_by_default(cli: Cli, tmp_path: Path) -> None:
    """§7: "The default format is `native` (v1 unchanged)": an OTLP line is not a native event, exit 2."""
    write_contract(tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], version=1)
    put(tmp_path, "in.jsonl", [otlp(agent())])
    result = cli("check", "--contract", "c.json", "--trace", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "in.jsonl:1" in result.stderr


# == several runs (§7, §10.34) ================================================================================

OTHER = "1af7651916cd43dd8448eb211c80319c"


def two_traces() -> list[str]:
    """Two traces in one file (a Collector file exporter): TRACE calls `lookup`, OTHER calls `shell`."""
    second = [span(sid(5), "invoke_agent b", 0, 1000, attrs={"gen_ai.operation.name": "invoke_agent"}, trace=OTHER),
              span(sid(6), "execute_tool shell", 100, 200, parent=sid(5), trace=OTHER,
                   attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "shell"})]
    return [otlp(agent(), tool(sid(1), "lookup", 10, 20)), otlp(*second)]


def test_convert_several_runs_needs_run_or_out_dir(cli: Cli, tmp_path: Path) -> None:
    """§7: "With several runs in the input, `--run` or `--out-dir` is required; otherwise exit 2 and list the
    run ids"; §10.34: "the message lists the run ids and both options"."""
    put(tmp_path, "in.jsonl", two_traces())
    result = cli("convert", "--from", "otel", "in.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert all(text in result.stderr for text in (TRACE, OTHER, "--run", "--out-dir"))


def test_convert_run_picks_one_run(cli: Cli, tmp_path: Path) -> None:
    """§7: `--run ID` writes that run only, numbered from 1."""
    events = convert(cli, tmp_path, "otel", two_traces(), "--run", OTHER)
    assert {e["run_id"] for e in events} == {OTHER}
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert [e["tool"] for e in calls(events)] == ["shell"]


def test_convert_run_naming_no_run_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§7 `--run ID` (spec silent on an id the input does not hold): exit 2 naming the runs it does hold."""
    put(tmp_path, "in.jsonl", two_traces())
    result = cli("convert", "--from", "otel", "in.jsonl", "--run", "nope")
    assert (result.returncode, result.stdout) == (2, "")
    assert TRACE in result.stderr and OTHER in result.stderr


def test_convert_out_dir_writes_one_file_per_run(cli: Cli, tmp_path: Path) -> None:
    """§7: `--out-dir D` writes every run (README: `D/<run id>.jsonl`), each numbered from 1."""
    put(tmp_path, "in.jsonl", two_traces())
    result = cli("convert", "--from", "otel", "in.jsonl", "--out-dir", "runs")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted([f"{OTHER}.jsonl", f"{TRACE}.jsonl"])
    for run_id, name in ((TRACE, "lookup"), (OTHER, "shell")):
        written = parse((tmp_path / "runs" / f"{run_id}.jsonl").read_text(encoding="utf-8"))
        assert [e["seq"] for e in written] == [1, 2, 3, 4]
        assert [e["tool"] for e in calls(written)] == [name]


def test_convert_refuses_a_trace_split_over_two_input_files(cli: Cli, tmp_path: Path) -> None:
    """§7 `convert --from FMT IN…` with a run (a trace, §10.34) whose spans two files share: each file is
    read on its own, so the product refuses, saying so, instead of writing two partial runs with one id."""
    put(tmp_path, "x.jsonl", [otlp(tool(sid(1), "t", 10, 20))])
    put(tmp_path, "y.jsonl", [otlp(agent())])
    for extra in (["--run", TRACE], ["--out-dir", "out"]):
        result = cli("convert", "--from", "otel", "x.jsonl", "y.jsonl", *extra)
        assert (result.returncode, result.stdout) == (2, "")
        assert "is in both x.jsonl and y.jsonl" in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_convert_refuses_an_input_given_twice(cli: Cli, tmp_path: Path) -> None:
    """The same file twice (or by two names) would be read twice: each of its runs split in two
    halves with one id. It is refused before anything is read or written."""
    put(tmp_path, "x.jsonl", [otlp(agent(), tool(sid(1), "t", 10, 20))])
    for names, said in ((["x.jsonl", "x.jsonl"], "x.jsonl is given twice: "),
                        (["x.jsonl", "./x.jsonl"], "./x.jsonl is given twice (as x.jsonl): ")):
        for extra in (["--run", TRACE], ["--out-dir", "out"]):
            result = cli("convert", "--from", "otel", *names, *extra)
            assert (result.returncode, result.stdout) == (2, "")
            assert result.stderr == f"agent-invariants: convert: {said}give each input once\n"
    assert not (tmp_path / "out").exists()


def test_convert_lists_the_runs_of_several_inputs_file_by_file(cli: Cli, tmp_path: Path) -> None:
    """The runs are listed in the order they begin in the file: with several files, those of the
    first file first, though a later file's run begins on an earlier line."""
    put(tmp_path, "x.jsonl", two_traces())
    third = "c" * 32
    put(tmp_path, "y.jsonl", [otlp(span(sid(7), "invoke_agent c", 0, 1000, trace=third,
                                        attrs={"gen_ai.operation.name": "invoke_agent"}))])
    result = cli("convert", "--from", "otel", "x.jsonl", "y.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert f"holds 3 runs ({TRACE}, {OTHER}, {third});" in result.stderr


def test_check_several_runs_without_run_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§10.34: "Without `--run`, an input with several runs is exit 2, and the message lists the run ids and
    both options" (for check: `--run ID` and `--run all`)."""
    write_contract(tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], version=1)
    put(tmp_path, "in.jsonl", two_traces())
    result = cli("check", "--contract", "c.json", "--trace", "in.jsonl", "--input-format", "otel")
    assert (result.returncode, result.stdout) == (2, "")
    assert all(text in result.stderr for text in (TRACE, OTHER, "--run", "all"))


def test_check_run_all_gives_one_section_per_run(cli: Cli, tmp_path: Path) -> None:
    """§10.34: "`--run all` checks every run as a batch (one section per run id, as a folder of traces
    would be)"."""
    code, report = check(cli, tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "otel",
                         two_traces(), "--run", "all", version=1)
    assert code == 1
    sections = {r["run"]: r for r in report["reports"]}
    assert set(sections) == {TRACE, OTHER}
    assert (sections[TRACE]["passed"], sections[OTHER]["passed"]) == (True, False)
    assert [v["code"] for v in sections[OTHER]["violations"]] == ["deny_tool.denied"]


def test_check_run_picks_one_run(cli: Cli, tmp_path: Path) -> None:
    """§10.34: `check … --input-format` takes `--run ID`."""
    code, report = check(cli, tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "otel",
                         two_traces(), "--run", TRACE, version=1)
    assert (code, report["passed"], report["run"]) == (0, True, TRACE)


def test_summary_and_compare_take_run(cli: Cli, tmp_path: Path) -> None:
    """§10.34: "`check`, `compare` and `summary` with `--input-format` take `--run ID` too"."""
    put(tmp_path, "in.jsonl", two_traces())
    summary = cli("summary", "--trace", "in.jsonl", "--input-format", "otel", "--run", OTHER)
    assert summary.returncode == 0, summary.stderr
    assert (json.loads(summary.stdout)["tools"], json.loads(summary.stdout)["events"]) == (["shell"], 4)
    write_contract(tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], version=1)
    compared = cli("compare", "--contract", "c.json", "--baseline", "in.jsonl", "--candidate", "in.jsonl",
                   "--input-format", "otel", "--run", TRACE, "--format", "json")
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["compatible"] is True


# == check --input-format: verdicts and provenance ===========================================================

def test_check_violation_points_at_the_source_record(cli: Cli, tmp_path: Path) -> None:
    """§7 `check --input-format FMT` with `data.source` = {format, file, line, span_id}: a violation at an
    imported call names the record's line and span (the report names the trace and the run)."""
    code, report = check(cli, tmp_path, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "otel",
                         [otlp(agent()), otlp(tool(sid(1), "lookup", 10, 20), tool(sid(2), "shell", 30, 40))],
                         version=1)
    assert code == 1
    (violation,) = report["violations"]
    assert {k: violation[k] for k in ("code", "event_seq", "line", "span_id")} == {
        "code": "deny_tool.denied", "event_seq": 4, "line": 2, "span_id": sid(2)}
    assert (report["trace"], report["run"]) == ("in.jsonl", TRACE)


def test_check_imported_trace_passes(cli: Cli, tmp_path: Path) -> None:
    """§7: `check --input-format` (here `auto`) gives the verdict of the converted events: lookup before refund
    passes the order rule and every call is answered."""
    order = {"id": "lookup-first", "kind": "require_order", "before": {"type": "tool.call", "tool": "lookup"},
             "after": {"type": "tool.call", "tool": "refund"}}
    rules: list[dict[str, Any]] = [order, {"id": "answered", "kind": "tool_result_required", "tool": "*"}]
    lines = [otlp(agent(), tool(sid(1), "lookup", 10, 20, call_id="c1"), tool(sid(2), "refund", 30, 40, call_id="c2"))]
    code, report = check(cli, tmp_path, rules, "auto", lines, version=1)
    assert (code, report["passed"], [r["checked"] for r in report["results"]]) == (0, True, [1, 2])


def test_check_cancelled_mcp_call_is_unanswered(cli: Cli, tmp_path: Path) -> None:
    """§10.35: a cancelled call "gets `tool.cancelled` and no result", so tool_result_required fails at it."""
    lines = [*mcp_init(), mcp_call("01.000000", 2, "slow", {}),
             mcp("02.000000", "s1", "c2s", {"method": "notifications/cancelled", "params": {"requestId": 2}})]
    code, report = check(cli, tmp_path, [{"id": "answered", "kind": "tool_result_required"}], "mcp-log", lines,
                         version=1)
    assert code == 1
    assert [(v["code"], v["line"]) for v in report["violations"]] == [("tool_result_required.missing", 3)]


# == bad input ================================================================================================

def refused(cli: Cli, tmp_path: Path, fmt: str, lines: list[str]) -> str:
    """convert of in.jsonl must refuse it: exit 2, nothing on stdout, one error line, no traceback."""
    put(tmp_path, "in.jsonl", lines)
    result = cli("convert", "--from", fmt, "in.jsonl")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()[-1]


def test_invalid_json_record_is_exit_2_with_file_and_line(cli: Cli, tmp_path: Path) -> None:
    """Bad input (D4, §0): one line naming the file and line, exit 2."""
    assert "in.jsonl:2" in refused(cli, tmp_path, "otel", [otlp(agent()), "{not json"])


@pytest.mark.parametrize(("field", "bad", "path"), [
    ("startTimeUnixNano", "soon", "$.resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano"),
    ("spanId", "zz", "$.resourceSpans[0].scopeSpans[0].spans[1].spanId"),
], ids=["time", "span-id"])
def test_malformed_record_names_file_line_and_json_path(cli: Cli, tmp_path: Path, field: str, bad: str,
                                                        path: str) -> None:
    """Bad input: a malformed record is exit 2 with file:line and the JSON path inside the record (§10.30: a
    time is a nanosecond string or number; ids are hex or base64)."""
    broken = tool(sid(1), "t", 10, 20)
    broken[field] = bad
    line = refused(cli, tmp_path, "otel", [otlp(agent()), otlp(agent(span_id=sid(9)), broken)])
    assert "in.jsonl:2" in line and path in line


def test_malformed_langsmith_record_names_its_path(cli: Cli, tmp_path: Path) -> None:
    """Bad input: a run whose `child_runs` is not a list is exit 2 with file:line and the JSON path."""
    root = ls_root()
    root["child_runs"] = {"oops": 1}
    line = refused(cli, tmp_path, "langsmith", [json.dumps(root)])
    assert "in.jsonl:1" in line and "child_runs" in line


def test_unknown_record_kinds_are_skipped_and_counted(cli: Cli, tmp_path: Path) -> None:
    """Bad input: records of a kind the mapping does not use (OTLP metrics) are skipped with a count, not an
    error (README: "`convert` says how many")."""
    put(tmp_path, "in.jsonl", [otlp(agent()), json.dumps({"resourceMetrics": []})])
    result = cli("convert", "--from", "otel", "in.jsonl")
    assert result.returncode == 0, result.stderr
    assert [e["type"] for e in parse(result.stdout)] == ["run.start", "run.completed"]
    assert "skipped 1 record" in result.stderr
