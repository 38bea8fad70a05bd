"""A reference model of `convert --from mcp-log` (spec v2 §7, the `mcp-log` row of the importer
table, and the binding §10 points 26, 34, 35, 36), checked against the CLI on random logs.

The model below is written from the spec's words; where the spec leaves a detail open (the
`tool`/`approval_scope`/`approval_id` of a grant, where a point event goes at equal times, what is
counted as skipped) it follows the product's choice when that is a reasonable reading, and says so.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli
from support import examples

FORMAT = "mcp-log"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BASE_US = int((datetime(2026, 3, 2, 9, 14, tzinfo=UTC) - EPOCH) / timedelta(microseconds=1))
MISSING: Any = object()

Json = Any
Event = dict[str, Any]

# ------------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------------

TS_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


def parse_ts(text: str) -> int:
    """Point 36: ISO strings are kept to the microsecond (extra digits are cut). A time with a zone
    is converted to UTC; one without a zone is read as UTC (the format says "UTC string")."""
    match = TS_RE.match(text)
    assert match, text
    whole, fraction, zone = match.groups()
    moment = datetime.fromisoformat(whole).replace(tzinfo=UTC)
    micros = int(((fraction or "") + "000000")[:6])
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return int((moment - EPOCH) / timedelta(microseconds=1)) + micros


def iso(us: int) -> str:
    """§7: `time` in UTC ISO; the product writes six fraction digits and `Z`."""
    return (EPOCH + timedelta(microseconds=us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_text(text: str) -> Json:
    """Point 26: MCP text content becomes `result` parsed as JSON when valid, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def file_name(run_id: str) -> str:
    """README: characters other than letters, digits, `.`, `_`, `-` become `_`, a leading `.` too."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", run_id)
    return ("_" + name[1:] if name.startswith(".") else name) + ".jsonl"


def end_key(time: int, line: int, call: Call, index: int = 0) -> tuple[int, ...]:
    """§7 ordering at equal times: ends (a result, a cancellation, a listing) before starts, in source
    order; an end at its call's own time stays right after that call (an end never precedes its own
    start: the product's reading of the rule for calls that start and end at one time)."""
    return (time, 1, call.line, 1, line, index) if time == call.time else (time, 0, line, 0, 0, index)


@dataclass
class Call:
    call_id: str
    native: str | None
    tool: str
    arguments: Json
    time: int
    line: int
    open: bool = True


@dataclass
class Request:
    method: str
    call: Call | None = None


@dataclass
class Run:
    run_id: str
    first_time: int
    first_line: int
    last_time: int = 0
    last_line: int = 0
    events: list[tuple[tuple[int, ...], Event]] = field(default_factory=list)
    requests: dict[tuple[str, str], Request] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    id_counts: dict[str, int] = field(default_factory=dict)


class Model:
    """Turns MCP log records into native runs, as §7 and points 26, 35, 36 describe."""

    def __init__(self, file: str, hoist: bool = False) -> None:
        self.file = file
        self.hoist = hoist
        self.runs: dict[str, Run] = {}
        self.skipped = 0

    def source(self, line: int) -> dict[str, Any]:
        # §7: data.source holds {format, file, line, span_id}; an MCP log has no spans.
        return {"format": FORMAT, "file": self.file, "line": line}

    def call_data(self, call: Call, line: int, **extra: Any) -> dict[str, Any]:
        data: dict[str, Any] = {**extra, "source": self.source(line)}
        if call.native is not None:
            data["native_call_id"] = call.native  # §7: "the original goes to data.native_call_id"
        return data

    def feed(self, records: list[dict[str, Any]]) -> None:
        for line, record in enumerate(records, start=1):
            self.record(line, record)

    def record(self, line: int, record: dict[str, Any]) -> None:
        session, direction, msg = record["session"], record["dir"], record["msg"]
        time = parse_ts(record["ts"])
        run = self.runs.get(session)
        if run is None:
            # Point 35: each session is its own run; initialize (or, without it, the first message) starts it.
            run = self.runs[session] = Run(session, time, line)
        run.last_time, run.last_line = max(run.last_time, time), line
        method = msg.get("method")
        if isinstance(method, str) and "id" in msg:
            self.request(run, line, time, direction, msg, method)
        elif isinstance(method, str):
            self.notification(run, line, time, direction, msg, method)
        elif "id" in msg and ("result" in msg or "error" in msg):
            self.reply(run, line, time, direction, msg)
        else:
            self.skipped += 1

    def request(self, run: Run, line: int, time: int, direction: str, msg: dict[str, Any], method: str) -> None:
        key = (direction, json.dumps(msg["id"]))
        params = msg.get("params") or {}
        if method == "tools/call":
            if "requestState" in params or "inputResponses" in params:
                same = [c for c in run.calls if c.open and c.tool == params.get("name")
                        and c.arguments == params.get("arguments", MISSING)]
                if same:
                    self.continuation(run, line, time, same[-1], params.get("inputResponses") or {})
                    run.requests[key] = Request(method, same[-1])
                    return
            run.requests[key] = Request(method, self.call(run, line, time, msg["id"], params))
        elif method == "elicitation/create":
            pending = [c for c in run.calls if c.open]
            run.requests[key] = Request(method, pending[-1] if pending else None)
        elif method in ("tools/list", "initialize"):
            run.requests[key] = Request(method)
        else:
            self.skipped += 1  # README: records of kinds the mapping does not use are counted
            run.requests[key] = Request(method)

    def call(self, run: Run, line: int, time: int, native_id: Json, params: dict[str, Any]) -> Call:
        # §7 row: tool = params.name, call_id = <session>:<id>, args = params.arguments;
        # "A repeated id gets ~n, and the original goes to data.native_call_id".
        base = f"{run.run_id}:{native_id}"
        count = run.id_counts[base] = run.id_counts.get(base, 0) + 1
        call = Call(base if count == 1 else f"{base}~{count}", None if count == 1 else base,
                    params["name"], params.get("arguments", MISSING), time, line)
        run.calls.append(call)
        event: Event = {"type": "tool.call", "time": iso(time), "run_id": run.run_id, "tool": call.tool,
                        "call_id": call.call_id}
        extra: dict[str, Any] = {}
        arguments = call.arguments
        if isinstance(arguments, str):  # §7: string args are parsed as JSON
            arguments = parse_text(arguments)
        if isinstance(arguments, dict):
            event["args"] = arguments
        elif call.arguments is not MISSING and call.arguments is not None:
            extra["raw_args"] = call.arguments  # §7: a non-object goes to data.raw_args
        event["data"] = self.call_data(call, line, **extra)
        run.events.append(((time, 1, line, 0, 0, 0), event))
        return call

    def grant(self, run: Run, line: int, time: int, call: Call, approved: bool, approval_id: str,
              content: Json, index: int = 0) -> None:
        """§7 row: accepted elicitation → approval.granted {call_id: pending call, args: content};
        else approved: false. Spec silent on tool/approval_scope/approval_id: the product names the
        call's tool for both and `<session>:elicitation:<id>` (`<session>:input:<key>`), a reasonable
        reading that lets v1 require_approval and approval_bound bind the grant."""
        event: Event = {"type": "approval.granted", "time": iso(time), "run_id": run.run_id, "call_id": call.call_id,
                        "tool": call.tool, "approval_scope": call.tool, "approved": approved,
                        "approval_id": approval_id}
        if approved and isinstance(content, dict):
            event["args"] = content
        # Spec silent on where a grant (a point, neither start nor end) goes at equal times: the product
        # places it as it places a call's end, a reasonable reading (it happens inside the call).
        key = end_key(time, line, call, index)
        if self.hoist:
            # §7: hoist_elicitation moves the grant to just before its call and marks it data.hoisted.
            event["time"] = iso(call.time)
            event["data"] = self.call_data(call, line, hoisted=True)
            key = (call.time, 1, call.line, -1, line, index)
        else:
            event["data"] = self.call_data(call, line)
        run.events.append((key, event))

    def continuation(self, run: Run, line: int, time: int, call: Call, responses: dict[str, Any]) -> None:
        """Point 35: a tools/call carrying requestState/inputResponses continues the pending call of the
        same name and arguments; an accepted inputResponses entry is the approval.granted of that call."""
        for index, (name, response) in enumerate(responses.items()):
            approved = isinstance(response, dict) and response.get("action") == "accept"
            content = response.get("content") if isinstance(response, dict) else None
            self.grant(run, line, time, call, approved, f"{run.run_id}:input:{name}", content, index)

    def notification(self, run: Run, line: int, time: int, direction: str, msg: dict[str, Any], method: str) -> None:
        if method != "notifications/cancelled":
            self.skipped += 1  # README: records of kinds the mapping does not use are counted
            return
        params = msg.get("params") or {}
        request = run.requests.get((direction, json.dumps(params.get("requestId"))))
        if request is None or request.call is None or request.method != "tools/call":
            self.skipped += 1
            return
        del run.requests[(direction, json.dumps(params.get("requestId")))]
        call = request.call
        call.open = False
        extra = {"reason": params["reason"]} if isinstance(params.get("reason"), str) else {}
        event: Event = {"type": "tool.cancelled", "time": iso(time), "run_id": run.run_id, "tool": call.tool,
                        "call_id": call.call_id, "data": self.call_data(call, line, **extra)}
        run.events.append((end_key(time, line, call), event))

    def reply(self, run: Run, line: int, time: int, direction: str, msg: dict[str, Any]) -> None:
        # Point 35: pair on (session, requesting side, id); the requester is the other direction.
        requester = "s2c" if direction == "c2s" else "c2s"
        request = run.requests.pop((requester, json.dumps(msg["id"])), None)
        if request is None:
            self.skipped += 1
            return
        result = msg.get("result")
        if request.method == "tools/call" and request.call is not None:
            if isinstance(result, dict) and "inputRequests" in result:
                return  # an incomplete result: the call goes on in its continuation
            self.result(run, line, time, request.call, msg)
        elif request.method == "tools/list":
            tools = result.get("tools", []) if isinstance(result, dict) else []
            event: Event = {"type": "tool.listing", "time": iso(time), "run_id": run.run_id,
                            "data": {"tools": tools, "source": self.source(line)}}
            run.events.append(((time, 0, line, 0, 0, 0), event))
        elif request.method == "elicitation/create":
            if request.call is None:
                self.skipped += 1  # no pending call: nothing to grant
                return
            approved = isinstance(result, dict) and result.get("action") == "accept"
            content = result.get("content") if isinstance(result, dict) else None
            self.grant(run, line, time, request.call, approved, f"{run.run_id}:elicitation:{msg['id']}", content)

    def result(self, run: Run, line: int, time: int, call: Call, msg: dict[str, Any]) -> None:
        """§7 row: result = structuredContent, else content; ok = no error and not isError (point 35)."""
        call.open = False
        event: Event = {"type": "tool.result", "time": iso(time), "run_id": run.run_id, "tool": call.tool,
                        "call_id": call.call_id}
        extra: dict[str, Any] = {}
        if "error" in msg:
            event["ok"] = False
            extra["error"] = msg["error"]
        else:
            body = msg["result"]
            event["ok"] = body.get("isError") is not True
            if body.get("structuredContent") is not None:
                event["result"] = body["structuredContent"]
            elif "content" in body:
                content = body["content"]
                single_text = (isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text")
                event["result"] = parse_text(content[0]["text"]) if single_text else content
        event["duration_ms"] = (time - call.time) / 1000  # §7: duration_ms = end − start
        event["data"] = self.call_data(call, line, **extra)
        run.events.append((end_key(time, line, call), event))

    def output(self) -> dict[str, list[Event]]:
        """Runs in the order they begin; seq 1..n after ordering by time (§7)."""
        out: dict[str, list[Event]] = {}
        for run_id, run in self.runs.items():
            start: Event = {"type": "run.start", "time": iso(run.first_time), "run_id": run_id,
                            "data": {"source": self.source(run.first_line)}}
            end: Event = {"type": "run.completed", "time": iso(run.last_time), "run_id": run_id,
                          "duration_ms": (run.last_time - run.first_time) / 1000,
                          "data": {"source": self.source(run.last_line)}}
            ordered = [start] + [event for _, event in sorted(run.events, key=lambda pair: pair[0])] + [end]
            out[run_id] = [{"seq": seq, **event} for seq, event in enumerate(ordered, start=1)]
        return out


def expected(records: list[dict[str, Any]], file: str, hoist: bool = False) -> tuple[dict[str, list[Event]], int]:
    model = Model(file, hoist)
    model.feed(records)
    return model.output(), model.skipped


# ------------------------------------------------------------------------------------------------
# Running the product
# ------------------------------------------------------------------------------------------------

def rec(ts_us: int, session: str, direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"ts": iso(BASE_US + ts_us), "session": session, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}}


def write_log(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def skipped_count(stderr: str) -> int:
    match = re.search(r"skipped (\d+) records?", stderr)
    return int(match.group(1)) if match else 0


def convert_all(cli: Cli, folder: Path, records: list[dict[str, Any]], hoist: bool = False,
                ) -> tuple[dict[str, list[Event]], int]:
    """`convert --from mcp-log FILE --run all --out-dir D`: every run's events by file name."""
    log, out = folder / "in.mcp.jsonl", folder / "out"
    write_log(log, records)
    extra: list[str] = []
    if hoist:
        profile = folder / "hoist.json"
        profile.write_text(json.dumps({"hoist_elicitation": True}), encoding="utf-8")
        extra = ["--profile", str(profile)]
    result = cli("convert", "--from", FORMAT, str(log), "--run", "all", "--out-dir", str(out), *extra)
    assert result.returncode == 0, result.stderr
    runs = {p.name: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()] for p in out.iterdir()}
    return runs, skipped_count(result.stderr)


def assert_like_model(cli: Cli, folder: Path, records: list[dict[str, Any]], hoist: bool = False) -> None:
    log = str(folder / "in.mcp.jsonl")
    runs, skipped = convert_all(cli, folder, records, hoist)
    want, want_skipped = expected(records, log, hoist)
    want_files = {file_name(run_id): events for run_id, events in want.items()}
    assert sorted(runs) == sorted(want_files)
    for name, events in want_files.items():
        got = runs[name]
        first = next((i for i, pair in enumerate(zip(got, events, strict=False)) if pair[0] != pair[1]), None)
        assert first is None and len(got) == len(events), (
            f"{name}: first difference at event {first}:\n product {got[first] if first is not None else got}"
            f"\n model   {events[first] if first is not None else events}")
    assert skipped == want_skipped


def one_run(cli: Cli, tmp_path: Path, records: list[dict[str, Any]], *extra: str) -> list[Event]:
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, records)
    result = cli("convert", "--from", FORMAT, str(log), *extra)
    assert result.returncode == 0, result.stderr
    return [json.loads(x) for x in result.stdout.splitlines()]


def init(ts: int = 0, session: str = "s") -> dict[str, Any]:
    return rec(ts, session, "c2s", {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})


def call(ts: int, ident: Json, name: str = "lookup", arguments: Json = MISSING, session: str = "s",
         **more: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, **more}
    if arguments is not MISSING:
        params["arguments"] = arguments
    return rec(ts, session, "c2s", {"id": ident, "method": "tools/call", "params": params})


def reply(ts: int, ident: Json, body: dict[str, Any], direction: str = "s2c", session: str = "s") -> dict[str, Any]:
    return rec(ts, session, direction, {"id": ident, **body})


def text(value: str) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": value}]}}


def types(events: list[Event]) -> list[str]:
    return [e["type"] for e in events]


# ------------------------------------------------------------------------------------------------
# Hand-written cases: the §7 mcp-log row and points 26, 34, 35, 36
# ------------------------------------------------------------------------------------------------

def test_initialize_starts_and_end_of_log_completes_the_run(cli: Cli, tmp_path: Path) -> None:
    """§7 row: `initialize` → run.start; end of log → run.completed (with duration_ms = end − start)."""
    records = [init(0), reply(1000, 1, {"result": {"protocolVersion": "2025-11-25"}}),
               rec(2500, "s", "c2s", {"method": "notifications/initialized"})]
    events = one_run(cli, tmp_path, records)
    log = str(tmp_path / "in.mcp.jsonl")
    assert events == [
        {"seq": 1, "type": "run.start", "time": iso(BASE_US), "run_id": "s",
         "data": {"source": {"format": FORMAT, "file": log, "line": 1}}},
        {"seq": 2, "type": "run.completed", "time": iso(BASE_US + 2500), "run_id": "s", "duration_ms": 2.5,
         "data": {"source": {"format": FORMAT, "file": log, "line": 3}}},
    ]


def test_tools_call_is_a_call_with_session_and_id(cli: Cli, tmp_path: Path) -> None:
    """§7 row: tools/call request → tool.call: params.name / `<session>:<id>` / params.arguments."""
    events = one_run(cli, tmp_path, [init(), call(10, 7, "refund", {"order": "A1", "amount": 10.0}),
                                     call(20, "req-x", "shell", {"cmd": "ls"})])
    calls = [e for e in events if e["type"] == "tool.call"]
    assert [(e["tool"], e["call_id"], e["args"]) for e in calls] == [
        ("refund", "s:7", {"order": "A1", "amount": 10.0}), ("shell", "s:req-x", {"cmd": "ls"})]


def test_structured_content_wins_over_content(cli: Cli, tmp_path: Path) -> None:
    """§7 row: result = `structuredContent`, else `content`."""
    body = {"result": {"content": [{"type": "text", "text": "{\"a\": 2}"}], "structuredContent": {"a": 1}}}
    events = one_run(cli, tmp_path, [init(), call(10, 2), reply(20, 2, body)])
    assert events[2]["type"] == "tool.result"
    assert (events[2]["ok"], events[2]["result"], events[2]["duration_ms"]) == (True, {"a": 1}, 0.01)


@pytest.mark.parametrize(("value", "result"), [
    ("{\"order\": \"A1\"}", {"order": "A1"}), ("[1, 2]", [1, 2]), ("42", 42), ("null", None),
    ("plain words", "plain words")])
def test_text_content_is_parsed_as_json_when_valid(cli: Cli, tmp_path: Path, value: str, result: Json) -> None:
    """Point 26: MCP text content becomes `result` parsed as JSON when it is valid JSON, else the string."""
    events = one_run(cli, tmp_path, [init(), call(10, 2), reply(20, 2, text(value))])
    assert events[2]["result"] == result and "result" in events[2]


def test_python_repr_text_stays_a_string_and_is_copied(cli: Cli, tmp_path: Path) -> None:
    """Point 26: a Python repr is kept as a string and also copied to data.raw_result; never evaluated."""
    events = one_run(cli, tmp_path, [init(), call(10, 2), reply(20, 2, text("{'a': 1}"))])
    assert events[2]["result"] == "{'a': 1}" and events[2]["data"]["raw_result"] == "{'a': 1}"


def test_is_error_result_is_not_ok(cli: Cli, tmp_path: Path) -> None:
    """Point 35: a tool's exception, an unknown tool and bad arguments arrive as isError: true: ok false."""
    body = {"result": {"content": [{"type": "text", "text": "Unknown tool: nope"}], "isError": True}}
    events = one_run(cli, tmp_path, [init(), call(10, 2, "nope"), reply(20, 2, body)])
    assert (events[2]["type"], events[2]["ok"], events[2]["result"]) == ("tool.result", False, "Unknown tool: nope")


def test_error_reply_is_not_ok(cli: Cli, tmp_path: Path) -> None:
    """§7 row: ok = no `error`. Spec silent on the error's place: the product keeps it in data.error."""
    error = {"code": -32602, "message": "Invalid params"}
    events = one_run(cli, tmp_path, [init(), call(10, 2), reply(20, 2, {"error": error})])
    assert events[2]["ok"] is False and "result" not in events[2] and events[2]["data"]["error"] == error


def test_cancelled_call_gets_tool_cancelled_and_no_result(cli: Cli, tmp_path: Path) -> None:
    """§7 row and point 35: notifications/cancelled → tool.cancelled; a cancelled call gets no result."""
    cancel = rec(20, "s", "c2s", {"method": "notifications/cancelled", "params": {"requestId": 2, "reason": "user"}})
    events = one_run(cli, tmp_path, [init(), call(10, 2), cancel, reply(30, 2, text("late"))])
    assert types(events) == ["run.start", "tool.call", "tool.cancelled", "run.completed"]
    assert (events[2]["call_id"], events[2]["tool"]) == ("s:2", "lookup")


def elicitation(ts: int, ident: int, session: str = "s") -> dict[str, Any]:
    params = {"mode": "form", "message": "Refund?", "requestedSchema": {"type": "object"}}
    return rec(ts, session, "s2c", {"id": ident, "method": "elicitation/create", "params": params})


def test_accepted_elicitation_grants_the_pending_call(cli: Cli, tmp_path: Path) -> None:
    """§7 row: accepted elicitation/create → approval.granted {call_id: pending call, args: content}.
    Point 35: the server's elicitation id 1 is not the client's initialize id 1."""
    records = [init(), reply(5, 1, {"result": {}}), call(10, 4, "refund", {"order": "A1"}), elicitation(20, 1),
               reply(30, 1, {"result": {"action": "accept", "content": {"approved": True}}}, "c2s"),
               reply(40, 4, text("ok"))]
    events = one_run(cli, tmp_path, records)
    assert types(events) == ["run.start", "tool.call", "approval.granted", "tool.result", "run.completed"]
    grant = events[2]
    assert (grant["call_id"], grant["approved"], grant["args"], grant["time"]) == (
        "s:4", True, {"approved": True}, iso(BASE_US + 30))


@pytest.mark.parametrize("answer", [{"result": {"action": "decline"}}, {"result": {"action": "cancel"}},
                                    {"error": {"code": -1, "message": "no"}}])
def test_elicitation_not_accepted_is_approved_false(cli: Cli, tmp_path: Path, answer: dict[str, Any]) -> None:
    """§7 row: accepted → approval.granted; "else `approved:false`"."""
    records = [init(), call(10, 4, "refund"), elicitation(20, 1), reply(30, 1, answer, "c2s")]
    grant = one_run(cli, tmp_path, records)[2]
    assert (grant["type"], grant["call_id"], grant["approved"]) == ("approval.granted", "s:4", False)
    assert "args" not in grant


def test_hoist_elicitation_moves_the_grant_before_its_call(cli: Cli, tmp_path: Path) -> None:
    """§7: `hoist_elicitation: true` moves the grant to just before its call and marks it data.hoisted."""
    (tmp_path / "p.json").write_text(json.dumps({"hoist_elicitation": True}), encoding="utf-8")
    records = [init(), call(10, 4, "refund"), elicitation(20, 1),
               reply(30, 1, {"result": {"action": "accept", "content": {}}}, "c2s")]
    events = one_run(cli, tmp_path, records, "--profile", str(tmp_path / "p.json"))
    assert types(events) == ["run.start", "approval.granted", "tool.call", "run.completed"]
    assert events[1]["data"]["hoisted"] is True and events[1]["call_id"] == "s:4"


def test_tools_list_is_a_listing(cli: Cli, tmp_path: Path) -> None:
    """§7 row: tools/list → tool.listing (spec silent on its fields: the product keeps the tools in data)."""
    tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
    records = [init(), rec(10, "s", "c2s", {"id": 2, "method": "tools/list"}),
               reply(20, 2, {"result": {"tools": tools}})]
    events = one_run(cli, tmp_path, records)
    assert types(events) == ["run.start", "tool.listing", "run.completed"]
    assert events[1]["data"]["tools"] == tools


def test_reply_in_the_same_direction_does_not_pair(cli: Cli, tmp_path: Path) -> None:
    """Point 35: a reply is in the opposite direction from its request, with the same id."""
    events = one_run(cli, tmp_path, [init(), call(10, 2), reply(20, 2, text("x"), direction="c2s")])
    assert types(events) == ["run.start", "tool.call", "run.completed"]


def test_reply_in_another_session_does_not_pair(cli: Cli, tmp_path: Path) -> None:
    """Point 35: pair on (session, requesting side, id)."""
    records = [init(), call(10, 2), reply(20, 2, text("x"), session="other")]
    events = one_run(cli, tmp_path, records, "--run", "s")
    assert types(events) == ["run.start", "tool.call", "run.completed"]


def test_without_initialize_the_first_message_starts_the_run(cli: Cli, tmp_path: Path) -> None:
    """Point 35: under protocol versions without initialize, the first message of a session starts the run."""
    events = one_run(cli, tmp_path, [call(10, 2), reply(20, 2, text("1"))])
    assert types(events) == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert events[0]["time"] == iso(BASE_US + 10) and events[0]["data"]["source"]["line"] == 1


def test_continuation_is_one_logical_call_with_its_grant(cli: Cli, tmp_path: Path) -> None:
    """Point 35: a tools/call carrying requestState/inputResponses continues the pending call of the same
    name and arguments (one logical call); an accepted inputResponses entry is that call's approval.granted."""
    asks = {"confirm": {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}}
    records = [call(10, 2, "refund", {"order": "A1"}),
               reply(20, 2, {"result": {"inputRequests": asks, "requestState": "st"}}),
               call(30, 3, "refund", {"order": "A1"}, requestState="st",
                    inputResponses={"confirm": {"action": "accept", "content": {"approved": True}}}),
               reply(40, 3, text("done"))]
    events = one_run(cli, tmp_path, records)
    assert types(events) == ["run.start", "tool.call", "approval.granted", "tool.result", "run.completed"]
    assert {e["call_id"] for e in events[1:4]} == {"s:2"}
    assert events[2]["approved"] is True and events[3]["duration_ms"] == 0.03


def test_continuation_after_its_id_was_reused_stays_on_its_call(cli: Cli, tmp_path: Path) -> None:
    """Point 35: a tools/call carrying requestState/inputResponses continues *the pending call* of the same
    name and arguments; §7: a repeated id gets `~n`. Here s:2 waits for its continuation while id 2 is used
    again by a call (s:2~2) that is answered at once; the continuation can only be s:2's."""
    asks = {"k": {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}}
    records = [call(0, 2), reply(1, 2, {"result": {"inputRequests": asks, "requestState": "st"}}),
               call(2, 2), reply(3, 2, text("other")),
               call(5, 3, requestState="st", inputResponses={"k": {"action": "accept"}}), reply(6, 3, text("done"))]
    events = one_run(cli, tmp_path, records)
    assert [(e["type"], e.get("call_id")) for e in events[1:7]] == [
        ("tool.call", "s:2"), ("tool.call", "s:2~2"), ("tool.result", "s:2~2"), ("approval.granted", "s:2"),
        ("tool.result", "s:2"), ("run.completed", None)]


def test_times_with_zones_are_utc_to_the_microsecond(cli: Cli, tmp_path: Path) -> None:
    """Point 36: ISO strings are kept to the microsecond; §7: `time` in UTC ISO."""
    stamps = ["2026-03-02T10:14:00.123456789+01:00", "2026-03-02T09:14:01Z", "2026-03-02T04:14:02.5-05:00"]
    records = [{**rec(0, "s", "c2s", {"id": i, "method": "ping"}), "ts": ts} for i, ts in enumerate(stamps)]
    events = one_run(cli, tmp_path, records)
    assert [events[0]["time"], events[-1]["time"]] == ["2026-03-02T09:14:00.123456Z", "2026-03-02T09:14:02.500000Z"]
    assert events[-1]["duration_ms"] == 2376.544


def test_repeated_call_id_gets_a_suffix(cli: Cli, tmp_path: Path) -> None:
    """§7: a repeated id gets `~n`, and the original goes to data.native_call_id."""
    records = [init(), call(10, 2), reply(20, 2, text("1")), call(30, 2), reply(40, 2, text("2"))]
    events = one_run(cli, tmp_path, records)
    assert [e["call_id"] for e in events[1:5]] == ["s:2", "s:2", "s:2~2", "s:2~2"]
    assert events[3]["data"]["native_call_id"] == "s:2" and "native_call_id" not in events[1]["data"]


@pytest.mark.parametrize("answer", [
    {"ts": 2, "session": "s", "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 2, "result": {"structuredContent": {}}}},
    {"ts": 2, "session": "s", "dir": "c2s",
     "msg": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}}])
def test_repeated_id_answered_at_once_keeps_its_suffix(cli: Cli, tmp_path: Path, answer: dict[str, Any]) -> None:
    """§7: "A repeated id gets ~n, and the original goes to data.native_call_id"; point 35: a reply (and a
    cancellation) pairs on (session, requesting side, id) with the request it answers, here the second
    call. The end of that second call must carry `s:2~2` and follow it (an end never precedes its start)."""
    records = [call(0, 2), reply(1, 2, {"result": {"structuredContent": {}}}), call(2, 2),
               {**answer, "ts": iso(BASE_US + answer["ts"])}]
    events = one_run(cli, tmp_path, records)
    assert [(e["type"], e["call_id"]) for e in events[1:5]] == [
        ("tool.call", "s:2"), ("tool.result", "s:2"), ("tool.call", "s:2~2"), (events[4]["type"], "s:2~2")]


def test_equal_times_put_ends_before_starts(cli: Cli, tmp_path: Path) -> None:
    """§7: events are ordered by time; at equal times ends come before starts, then source order."""
    records = [init(), call(10, 2, "a"), call(20, 3, "b"), reply(20, 2, text("1"))]
    events = one_run(cli, tmp_path, records)
    assert [(e["type"], e.get("tool")) for e in events[1:4]] == [
        ("tool.call", "a"), ("tool.result", "a"), ("tool.call", "b")]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]


def test_unused_records_are_skipped_and_counted(cli: Cli, tmp_path: Path) -> None:
    """README: records of kinds the mapping does not use are skipped and counted (`convert` says how many):
    a ping request, a reply to no request and a progress notification."""
    records = [init(), rec(10, "s", "c2s", {"id": 2, "method": "ping"}), reply(20, 2, {"result": {}}),
               reply(30, 99, {"result": {}}),
               rec(40, "s", "s2c", {"method": "notifications/progress", "params": {"progress": 1}})]
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, records)
    result = cli("convert", "--from", FORMAT, str(log))
    assert result.returncode == 0 and skipped_count(result.stderr) == 3, result.stderr
    assert types([json.loads(x) for x in result.stdout.splitlines()]) == ["run.start", "run.completed"]


def test_several_sessions_need_run_or_out_dir(cli: Cli, tmp_path: Path) -> None:
    """Point 34: without --run, an input with several runs is exit 2; the message lists the run ids (in the
    order they begin) and both options."""
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, [init(0, "zeta"), init(1, "alpha")])
    result = cli("convert", "--from", FORMAT, str(log))
    assert (result.returncode, result.stdout) == (2, "")
    line, = result.stderr.splitlines()
    assert "zeta, alpha" in line and "--run" in line and "--out-dir" in line


def test_run_picks_one_session(cli: Cli, tmp_path: Path) -> None:
    """Point 35: each session is its own run (run id = session); point 34: --run ID picks it."""
    records = [init(0, "a"), init(1, "b"), call(2, 2, session="b")]
    events = one_run(cli, tmp_path, records, "--run", "b")
    assert {e["run_id"] for e in events} == {"b"} and types(events) == ["run.start", "tool.call", "run.completed"]


def test_auto_reads_an_mcp_log(cli: Cli, tmp_path: Path) -> None:
    """§7: `auto` sniffs the first record."""
    records = [init(), call(10, 2), reply(20, 2, text("1"))]
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, records)
    auto = cli("convert", "--from", "auto", str(log))
    assert auto.returncode == 0 and auto.stdout == cli("convert", "--from", FORMAT, str(log)).stdout


def test_check_reads_mcp_log_input(cli: Cli, tmp_path: Path) -> None:
    """§7 `check --input-format FMT`: the converted calls reach the rules (deny_tool, a v1 kind)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    write_log(tmp_path / "in.mcp.jsonl", [init(), call(10, 2, "shell", {"cmd": "ls"})])
    result = cli("check", "-c", "c.json", "-t", "in.mcp.jsonl", "--input-format", FORMAT, "--format", "json")
    assert result.returncode == 1, result.stderr
    assert [v["rule_id"] for v in json.loads(result.stdout)["violations"]] == ["no-shell"]


def test_check_without_run_lists_the_sessions(cli: Cli, tmp_path: Path) -> None:
    """Point 34: check with --input-format takes --run; without it an input with several runs is exit 2 and
    the message lists the run ids and both options."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    write_log(tmp_path / "in.mcp.jsonl", [init(0, "b"), init(1, "a")])
    result = cli("check", "-c", "c.json", "-t", "in.mcp.jsonl", "--input-format", FORMAT)
    assert (result.returncode, result.stdout) == (2, "")
    line, = result.stderr.splitlines()
    assert "b, a" in line and "--run ID" in line and "--run all" in line


def test_check_run_all_is_one_section_per_session(cli: Cli, tmp_path: Path) -> None:
    """Point 34: `--run all` checks every run as a batch (one section per run id); README: runs are listed
    in the order they begin in the file."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    write_log(tmp_path / "in.mcp.jsonl", [init(0, "b"), init(1, "a"), call(2, 2, "shell", session="a")])
    result = cli("check", "-c", "c.json", "-t", "in.mcp.jsonl", "--input-format", FORMAT, "--run", "all",
                 "--format", "json")
    assert result.returncode == 1, result.stderr
    reports = json.loads(result.stdout)["reports"]
    assert [(r["run"], r["passed"]) for r in reports] == [("b", True), ("a", False)]


def test_unknown_run_is_refused_with_the_run_ids(cli: Cli, tmp_path: Path) -> None:
    """Point 34: --run names a run; one that is not there is exit 2 naming the runs (spec silent on the
    wording)."""
    write_log(tmp_path / "in.mcp.jsonl", [init(0, "b"), init(1, "a")])
    result = cli("convert", "--from", FORMAT, "in.mcp.jsonl", "--run", "zz")
    assert (result.returncode, result.stdout) == (2, "")
    assert "b, a" in result.stderr


def test_out_dir_never_overwrites(cli: Cli, tmp_path: Path) -> None:
    """README (`--out-dir`): a file already there is never overwritten: exit 2 and nothing written."""
    write_log(tmp_path / "in.mcp.jsonl", [init(0, "b"), init(1, "a")])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.jsonl").write_text("keep\n", encoding="utf-8")
    result = cli("convert", "--from", FORMAT, "in.mcp.jsonl", "--out-dir", "out")
    assert result.returncode == 2
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.jsonl"]
    assert (tmp_path / "out" / "a.jsonl").read_text(encoding="utf-8") == "keep\n"


def test_elicitation_without_a_pending_call_is_skipped(cli: Cli, tmp_path: Path) -> None:
    """Spec silent on an elicitation outside any call (the grant has no call to name): the product skips
    it and counts it, a reasonable reading (nothing is guessed)."""
    records = [init(), elicitation(10, 1), reply(20, 1, {"result": {"action": "accept", "content": {}}}, "c2s")]
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, records)
    result = cli("convert", "--from", FORMAT, str(log))
    assert result.returncode == 0 and skipped_count(result.stderr) == 1, result.stderr
    assert types([json.loads(x) for x in result.stdout.splitlines()]) == ["run.start", "run.completed"]


def test_cancel_of_no_pending_call_is_skipped(cli: Cli, tmp_path: Path) -> None:
    """A notifications/cancelled naming no pending request has nothing to cancel: skipped and counted."""
    cancel = rec(10, "s", "c2s", {"method": "notifications/cancelled", "params": {"requestId": 42}})
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, [init(), cancel])
    result = cli("convert", "--from", FORMAT, str(log))
    assert result.returncode == 0 and skipped_count(result.stderr) == 1, result.stderr


def test_event_the_mapping_cannot_make_valid_is_refused(cli: Cli, tmp_path: Path) -> None:
    """README: every event made is checked as `check` reads native events; what the mapping cannot make
    valid (a tool name of 600 characters) is bad input at its source line, exit 2."""
    line = refused(cli, tmp_path, json.dumps(call(10, 2, "t" * 600)))
    assert "tool" in line


def test_example_session_matches_the_model(cli: Cli, tmp_path: Path) -> None:
    """The shipped example (written by the official MCP SDK) against the model, whole events."""
    source = Path(__file__).resolve().parent.parent / "examples" / "imports" / "mcp-session.mcp.jsonl"
    records = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines()]
    assert_like_model(cli, tmp_path, records)


# -- hostile input: exit 2, one stderr line naming file:line and the JSON path ---------------------

def refused(cli: Cli, tmp_path: Path, bad_line: str) -> str:
    log = tmp_path / "in.mcp.jsonl"
    log.write_text(json.dumps(init()) + "\n" + bad_line + "\n", encoding="utf-8")
    result = cli("convert", "--from", FORMAT, str(log))
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "Traceback" not in result.stderr
    line, = result.stderr.splitlines()
    assert f"{log}:2" in line, line
    return line


def test_truncated_line_is_refused(cli: Cli, tmp_path: Path) -> None:
    """A truncated JSON line is bad input at its line, exit 2."""
    refused(cli, tmp_path, json.dumps(init(5))[:40])


@pytest.mark.parametrize(("key", "value"), [
    ("dir", MISSING), ("dir", "up"), ("ts", "yesterday"), ("ts", 1772442840), ("ts", MISSING),
    ("session", 5), ("session", MISSING), ("msg", "hello")])
def test_bad_record_field_is_refused_with_its_path(cli: Cli, tmp_path: Path, key: str, value: Json) -> None:
    """Point 35: a line is {"ts": ISO-8601 UTC string, "session": string, "dir": "c2s"|"s2c", "msg":
    JSON-RPC message}; a field that is not so is bad input: exit 2, file:line and `$.<field>`."""
    record = rec(5, "s", "c2s", {"id": 2, "method": "ping"})
    if value is MISSING:
        del record[key]
    else:
        record[key] = value
    assert f" $.{key}: " in refused(cli, tmp_path, json.dumps(record))


@pytest.mark.parametrize("msg", [{}, {"id": 2, "method": 5}])
def test_msg_that_is_not_json_rpc_is_skipped_and_counted(cli: Cli, tmp_path: Path, msg: dict[str, Any]) -> None:
    """Spec silent on a `msg` object that is neither request, notification nor reply; the product skips
    and counts it as a record the mapping does not use (README), a reasonable reading."""
    log = tmp_path / "in.mcp.jsonl"
    write_log(log, [init(), {"ts": iso(BASE_US + 5), "session": "s", "dir": "c2s", "msg": msg}])
    result = cli("convert", "--from", FORMAT, str(log))
    assert result.returncode == 0 and skipped_count(result.stderr) == 1, result.stderr


# ------------------------------------------------------------------------------------------------
# The property test
# ------------------------------------------------------------------------------------------------

TEXTS = ["{\"a\": 1}", "[1, 2]", "42", "true", "null", "\"quoted\"", "plain words", ""]
ARGUMENTS: list[Json] = [MISSING, {}, {"order": "A1"}, {"order": "B2", "amount": 10.5}, {"n": 3}]
TOOLS = ["lookup", "refund", "shell"]
SESSIONS = ["s1", "alpha-2", "x/y", ".dot"]


def call_reply(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["structured", "text", "two", "image", "is_error", "error", "empty"]))
    if kind == "structured":
        value = draw(st.sampled_from([{"r": 1}, {"result": "ok"}, {"items": [1, {"b": None}]}]))
        return {"result": {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}}
    if kind == "text":
        return text(draw(st.sampled_from(TEXTS)))
    if kind == "two":
        return {"result": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}
    if kind == "image":
        return {"result": {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}}
    if kind == "is_error":
        return {"result": {"content": [{"type": "text", "text": "Error executing tool"}], "isError": True}}
    if kind == "error":
        return {"error": {"code": -32602, "message": "Unknown tool"}}
    return {"result": {"content": []}}


@st.composite
def session_messages(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """One session's (dir, msg) list: 1..15 messages driven by a small protocol state machine."""
    size = draw(st.integers(1, 15))
    out: list[tuple[str, dict[str, Any]]] = []
    next_client, next_server, orphan = 1, 1, 900
    requests: dict[int | str, str] = {}                # outstanding client requests: id → method
    calls: dict[int | str, tuple[str, Json]] = {}      # outstanding calls: id → (tool, arguments)
    continued: set[int | str] = set()
    waiting: list[tuple[str, Json, str, str]] = []     # calls told to continue: tool, arguments, key, state
    cancelled: list[int | str] = []
    done: list[int | str] = []                         # answered call ids, reusable (§7 `~n`)
    elicits: list[int] = []
    if draw(st.booleans()):
        out.append(("c2s", {"id": next_client, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}))
        requests[next_client] = "initialize"
        next_client += 1
    while len(out) < size:
        actions = ["call", "list", "notify", "orphan", "ping", "server_ping"]
        if requests:
            actions.append("reply")
        if calls:
            actions.append("cancel")
        if [i for i in calls if i not in continued]:
            actions.append("incomplete")
        # Continuing "the pending call of the same name and arguments" needs that call to be unique.
        open_calls = [(t, a) for t, a, _, _ in waiting] + list(calls.values())
        resumable = [w for w in waiting if open_calls.count((w[0], w[1])) == 1]
        if resumable:
            actions.append("continue")
        if cancelled:
            actions.append("late_reply")
        if elicits:
            actions.append("elicit_reply")
        # "The pending call" is ambiguous with two open calls (spec silent): elicit with at most one.
        if len(calls) + len(waiting) <= 1 and not waiting:
            actions.append("elicit")
        action = draw(st.sampled_from(actions))
        if action == "call":
            reuse = [i for i in done if i not in requests]
            again = draw(st.booleans())
            if reuse and again:
                ident = draw(st.sampled_from(reuse))
                done.remove(ident)
            else:  # JSON-RPC ids are numbers or strings
                ident = next_client if draw(st.booleans()) else f"r{next_client}"
                next_client += 1
            tool, arguments = draw(st.sampled_from(TOOLS)), draw(st.sampled_from(ARGUMENTS))
            params: dict[str, Any] = {"name": tool}
            if arguments is not MISSING:
                params["arguments"] = arguments
            out.append(("c2s", {"id": ident, "method": "tools/call", "params": params}))
            requests[ident], calls[ident] = "tools/call", (tool, arguments)
        elif action == "list":
            out.append(("c2s", {"id": next_client, "method": "tools/list"}))
            requests[next_client] = "tools/list"
            next_client += 1
        elif action == "ping":
            out.append(("c2s", {"id": next_client, "method": "ping"}))
            requests[next_client] = "ping"
            next_client += 1
        elif action == "server_ping":  # a server request: its id 1 is not the client's id 1
            out.append(("s2c", {"id": next_server, "method": "ping"}))
            next_server += 1
        elif action == "notify":
            method = draw(st.sampled_from(["notifications/message", "notifications/progress"]))
            out.append(("s2c", {"method": method, "params": {"level": "info", "data": "x"}}))
        elif action == "orphan":
            out.append(("s2c", {"id": orphan, "result": {}}))
            orphan += 1
        elif action == "reply":
            ident = draw(st.sampled_from(list(requests)))
            method = requests.pop(ident)
            if method == "tools/call":
                body = call_reply(draw)
                del calls[ident]
                continued.discard(ident)
                done.append(ident)
            elif method == "tools/list":
                body = {"result": {"tools": [{"name": t, "inputSchema": {"type": "object"}} for t in TOOLS[:2]]}}
            else:
                body = {"result": {}}
            out.append(("s2c", {"id": ident, **body}))
        elif action == "cancel":
            ident = draw(st.sampled_from(list(calls)))
            cancel: dict[str, Any] = {"requestId": ident}
            if draw(st.booleans()):
                cancel["reason"] = "user pressed stop"
            out.append(("c2s", {"method": "notifications/cancelled", "params": cancel}))
            del calls[ident], requests[ident]
            continued.discard(ident)
            cancelled.append(ident)
        elif action == "late_reply":
            ident = cancelled.pop(draw(st.integers(0, len(cancelled) - 1)))
            out.append(("s2c", {"id": ident, **text("too late")}))
        elif action == "incomplete":
            ident = draw(st.sampled_from([i for i in calls if i not in continued]))
            tool, arguments = calls.pop(ident)
            del requests[ident]
            key, state = f"confirm{ident}", f"state{ident}"
            asks = {key: {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {}}}}
            out.append(("s2c", {"id": ident, "result": {"inputRequests": asks, "requestState": state}}))
            # the id of a call waiting for its continuation is never reused here (a hand-written case,
            # test_continuation_after_its_id_was_reused_stays_on_its_call, has that)
            waiting.append((tool, arguments, key, state))
        elif action == "continue":
            entry = draw(st.sampled_from(resumable))
            waiting.remove(entry)
            tool, arguments, key, state = entry
            answer = draw(st.sampled_from([{"action": "accept", "content": {"approved": True}},
                                           {"action": "accept"}, {"action": "decline"}]))
            params = {"name": tool, "inputResponses": {key: answer}, "requestState": state}
            if arguments is not MISSING:
                params["arguments"] = arguments
            ident, next_client = next_client, next_client + 1
            out.append(("c2s", {"id": ident, "method": "tools/call", "params": params}))
            requests[ident], calls[ident] = "tools/call", (tool, arguments)
            continued.add(ident)
        elif action == "elicit":
            out.append(("s2c", {"id": next_server, "method": "elicitation/create",
                                "params": {"message": "Allow?", "requestedSchema": {"type": "object"}}}))
            elicits.append(next_server)
            next_server += 1
        else:  # elicit_reply
            ident = elicits.pop(draw(st.integers(0, len(elicits) - 1)))
            answers: list[dict[str, Any]] = [
                {"result": {"action": "accept", "content": {"ok": True}}}, {"result": {"action": "accept"}},
                {"result": {"action": "decline"}}, {"result": {"action": "cancel"}},
                {"error": {"code": -1, "message": "x"}}]
            out.append(("c2s", {"id": ident, **draw(st.sampled_from(answers))}))
    return out


def format_ts(us: int, style: str, extra_nanos: int) -> str:
    moment = EPOCH + timedelta(microseconds=us)
    if style == "Z":
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if style == "nanos":
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + f"{extra_nanos:03d}Z"
    if style == "naive":
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if style == "whole" and moment.microsecond == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    offset = {"+02:00": timedelta(hours=2), "-05:30": -timedelta(hours=5, minutes=30)}.get(style, timedelta(0))
    return (moment + offset).strftime("%Y-%m-%dT%H:%M:%S.%f") + (style if style in ("+02:00", "-05:30") else "+00:00")


@st.composite
def mcp_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1..3 sessions interleaved in one file; times never go back, and are often equal."""
    names = draw(st.lists(st.sampled_from(SESSIONS), min_size=1, max_size=3, unique=True))
    queues = {name: draw(session_messages()) for name in names}
    records: list[dict[str, Any]] = []
    now = BASE_US + draw(st.integers(0, 10**6))
    while any(queues.values()):
        name = draw(st.sampled_from([n for n in names if queues[n]]))
        direction, msg = queues[name].pop(0)
        now += draw(st.sampled_from([0, 0, 1, 250, 1000, 1_234_567]))
        style = draw(st.sampled_from(["Z", "nanos", "naive", "whole", "+02:00", "-05:30", "+00:00"]))
        ts = format_ts(now, style, draw(st.integers(0, 999)))
        records.append({"ts": ts, "session": name, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}})
    return records


@settings(max_examples=examples(50), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=mcp_logs(), hoist=st.booleans())
def test_random_logs_match_the_model(cli: Cli, tmp_path_factory: pytest.TempPathFactory,
                                     records: list[dict[str, Any]], hoist: bool) -> None:
    """Every output event of `convert --from mcp-log FILE --run all --out-dir D`, whole, equals the
    model's (§7 mcp-log row, points 26, 34, 35, 36), and so does the count of skipped records."""
    assert_like_model(cli, tmp_path_factory.mktemp("mcp"), records, hoist)
