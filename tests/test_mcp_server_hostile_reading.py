"""A hostile reading of the MCP server (`agent-invariants serve`).

Sources: v1-semantics.md §9 (tools, prompts, isError results), §11 (100,000 events per MCP call),
§14 D8 (the server never reads files; `extends` by path is refused); v2-extensions.md §0 ("compare,
MCP and the renderers need no change"), §7 / §10.8 / §10.37 (input formats, lint in the check tool);
the README's "MCP server" section (error codes -32700/-32600, the request limits, tool errors naming
the place, "the server goes on serving", "Standard output carries only JSON-RPC").

Most cases share one server driven with raw bytes on its stdin: each sends one hostile message and
then checks that the next good request is answered correctly. A few start their own server (a
request before `initialize`, stdin closed mid-request), and one session goes through the official
`mcp` Python SDK client.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

CHECK = "agent_invariants_check_trace"
COMPARE = "agent_invariants_compare_traces"
SUMMARIZE = "agent_invariants_summarize_trace"
VALIDATE = "agent_invariants_validate_contract"
LINT = "agent_invariants_lint_contract"
TOOLS = (VALIDATE, CHECK, COMPARE, SUMMARIZE, LINT)

CONTRACT: dict[str, Any] = {"version": 1, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "shell.*"}]}
EVENTS: list[dict[str, Any]] = [{"seq": 1, "type": "tool.call", "tool": "shell.exec"}]
GOOD_SUMMARY: dict[str, Any] = {
    "events": 1, "tool_calls": 1, "tool_failures": 0, "tools": ["shell.exec"], "approvals_granted": 0,
    "outcomes_satisfied": 0, "outcomes_violated": 0, "completion_claims": 0, "final_outcome": None,
}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0", "id": "init", "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
TIMEOUT = 30.0


class Server:
    """`agent-invariants serve` in a subprocess; stdout and stderr are read by threads so that a
    large answer never blocks the server, and every stdout line is kept to check it is JSON-RPC."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_invariants", "serve"], cwd=cwd, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
        self.answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.not_json: list[bytes] = []
        self.stderr = bytearray()
        self._next_id = 1000
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.not_json.append(line)
                continue
            if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"):
                self.not_json.append(line)
                continue
            self.answers.put(message)
        self.answers.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(4096) if self.proc.stderr else b"", b""):
            self.stderr.extend(chunk)

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv(self) -> dict[str, Any]:
        answer = self.answers.get(timeout=TIMEOUT)
        assert answer is not None, f"the server closed stdout; stderr: {self.stderr.decode(errors='replace')}"
        return answer

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        ident = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = self.recv()
        assert answer.get("id") == ident, answer
        return answer

    def call(self, tool: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert "result" in self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> int:
        """Close stdin and wait for the server to end; returns its exit code."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        for thread in self._threads:
            thread.join(timeout=TIMEOUT)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def tool_error(answer: dict[str, Any]) -> str:
    """The text of an `isError: true` tool result (asserting that is what came back)."""
    result = answer.get("result")
    assert isinstance(result, dict) and result.get("isError") is True, answer
    return str(result["content"][0]["text"])


def rpc_error(answer: dict[str, Any], code: int) -> str:
    """The message of a JSON-RPC error with this code (asserting that is what came back)."""
    error = answer.get("error")
    assert isinstance(error, dict) and error.get("code") == code, answer
    return str(error["message"])


def assert_good_call(server: Server) -> None:
    """After a bad request, a good one is answered correctly (README: "the server goes on serving")."""
    answer = server.call(SUMMARIZE, {"events": EVENTS})
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"] == GOOD_SUMMARY, answer
    assert "Traceback" not in server.stderr_text() and server.not_json == []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("mcp_hostile")
    (folder / "pack.json").write_text(json.dumps(CONTRACT), encoding="utf-8")
    started = Server(folder)
    started.initialize()
    yield started
    code = started.close()
    assert code == 0 and "Traceback" not in started.stderr_text(), started.stderr_text()
    assert started.not_json == []


# -- Framing: README "Every line the client sends gets an answer: one that is not JSON gets -32700,
# -- one that is not a JSON-RPC request -32600 (with its id when it can be read), and the session goes on."


@pytest.mark.parametrize("line", [
    b"not json",
    b'{"jsonrpc":"2.0","id":1,"method":"ping"',  # cut short
    b'{"jsonrpc":"2.0","id":1,"method":"ping"} {"x":1}',  # trailing text
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',  # not JSON (no NaN in JSON)
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}',  # invalid UTF-8
    b"\xff\xfe\xfd",
], ids=["text", "truncated", "trailing", "nan", "bad-utf8-in-string", "bad-utf8-bytes"])
def test_line_that_is_not_json_gets_parse_error(server: Server, line: bytes) -> None:
    """README: a line that is not JSON gets -32700 (its id cannot be read: null)."""
    server.send_raw(line + b"\n")
    answer = server.recv()
    rpc_error(answer, -32700)
    assert answer["id"] is None
    assert_good_call(server)


@pytest.mark.parametrize(("message", "ident"), [
    ({"jsonrpc": "2.0", "id": 41}, 41),  # neither request nor response
    ({"id": 42, "method": "ping"}, 42),  # no jsonrpc member
    ({"jsonrpc": "1.0", "id": 43, "method": "ping"}, 43),
    ({"jsonrpc": "2.0", "id": 44, "method": 5}, 44),
    ({"jsonrpc": "2.0", "id": 45, "method": "tools/call", "params": []}, 45),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),  # an id JSON-RPC does not allow
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
], ids=["no-method", "no-jsonrpc", "jsonrpc-1.0", "method-number", "params-array", "id-float", "id-object"])
def test_message_that_is_not_a_request_gets_invalid_request_with_its_id(
        server: Server, message: dict[str, Any], ident: int | None) -> None:
    """README: one that is not a JSON-RPC request gets -32600, with its id when it can be read."""
    server.send(message)
    answer = server.recv()
    rpc_error(answer, -32600)
    assert answer["id"] == ident
    assert_good_call(server)


@pytest.mark.parametrize("line", [b"[1, 2]", b"[]", b"5", b'"ping"', b"null"])
def test_batch_or_scalar_gets_invalid_request(server: Server, line: bytes) -> None:
    """README: a line that is JSON but not a JSON-RPC request gets -32600 (no id to read: null)."""
    server.send_raw(line + b"\n")
    answer = server.recv()
    rpc_error(answer, -32600)
    assert answer["id"] is None
    assert_good_call(server)


def test_unknown_method_gets_method_not_found(server: Server) -> None:
    """JSON-RPC 2.0 (the server speaks it, README): an unknown method is -32601 with the id."""
    rpc_error(server.request("nope/x"), -32601)
    assert_good_call(server)


def test_unknown_notification_gets_no_answer(server: Server) -> None:
    """JSON-RPC 2.0: a notification is never answered; the next request's answer is the next line."""
    server.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})
    server.send({"jsonrpc": "2.0", "method": "ping"})  # ping as a notification: no answer either
    assert_good_call(server)


def test_unsolicited_response_gets_no_answer(server: Server) -> None:
    """JSON-RPC 2.0: a response the server did not ask for is not a request; nothing is sent back.
    (Spec silent beyond that; ignoring it is the reasonable reading.)"""
    server.send({"jsonrpc": "2.0", "id": 555, "result": {}})
    server.send({"jsonrpc": "2.0", "id": 556, "error": {"code": 1, "message": "x"}})
    assert_good_call(server)


def test_blank_lines_are_skipped(server: Server) -> None:
    """Spec silent: an empty or blank line carries no message; skipping it is reasonable."""
    server.send_raw(b"\n   \n")
    assert_good_call(server)


def test_duplicate_ids_are_each_answered(server: Server) -> None:
    """README: every line the client sends gets an answer, so two requests sharing an id get two."""
    server.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                 "params": {"name": SUMMARIZE, "arguments": {"events": EVENTS}}})
    answers = [server.recv(), server.recv()]
    assert [a["id"] for a in answers] == [7, 7]
    assert {"result": {}, "id": 7, "jsonrpc": "2.0"} in answers
    assert any(a.get("result", {}).get("structuredContent") == GOOD_SUMMARY for a in answers)
    assert_good_call(server)


def test_concurrent_requests_each_get_their_own_answer(server: Server) -> None:
    """README: every line gets an answer; with several in flight each answer carries its own id
    and its own result (n events ⇒ `summary.events == n`)."""
    sizes = {2000 + n: n for n in range(1, 11)}
    for ident, n in sizes.items():
        events = [{"seq": i + 1, "type": "tool.call", "tool": "shell.x"} for i in range(n * 100)]
        server.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                     "params": {"name": CHECK, "arguments": {"contract": CONTRACT, "events": events}}})
    answers = [server.recv() for _ in sizes]
    assert sorted(a["id"] for a in answers) == sorted(sizes)
    for answer in answers:
        report = answer["result"]["structuredContent"]
        assert report["summary"]["events"] == sizes[answer["id"]] * 100
        assert report["error_count"] == sizes[answer["id"]] * 100
    assert_good_call(server)


# -- Request limits: README "A request may be at most 32 MiB, nest 504 levels (so events and contracts
# -- may nest 500, as in files) and hold at most 4 million values; past that it is refused before it is
# -- decoded."


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_request_over_32_mib_is_refused_with_its_id(server: Server) -> None:
    """README: a request over 32 MiB is refused (-32600, its id) before it is decoded."""
    ident = server.new_id()
    head = json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": VALIDATE, "arguments": {"contract": {"name": "@"}}}})
    server.send_raw(head.replace("@", "x" * (50 * 1024 * 1024)).encode() + b"\n")
    answer = server.recv()
    assert answer["id"] == ident
    assert "33,554,432" in rpc_error(answer, -32600)
    assert_good_call(server)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_huge_request_leaves_memory_bounded(server: Server) -> None:
    """Bad-input standard (memory stays bounded) + README "refused before it is decoded": a 120 MB
    line raises the server's peak memory by less than the line's size."""
    before = _peak_rss_kib(server.proc.pid)
    ident = server.new_id()
    server.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":"' % ident
                    + b"y" * (120 * 1024 * 1024) + b'"}}\n')
    rpc_error(server.recv(), -32600)
    assert _peak_rss_kib(server.proc.pid) - before < 100 * 1024
    assert_good_call(server)


def test_request_under_32_mib_is_decoded(server: Server) -> None:
    """README: up to 32 MiB a request is read; a 31 MiB contract name then fails the v1 rule
    `name` 1..200 (v1 §2.1) as a tool error naming `contract: $.name`."""
    text = tool_error(server.call(VALIDATE, {"contract": {**CONTRACT, "name": "x" * (31 * 1024 * 1024)}}))
    assert text.startswith("contract: $.name"), text
    assert_good_call(server)


def _nested_event_request(ident: int, depth: int) -> bytes:
    """A check request whose single event nests `depth` levels (the event object is level 1)."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    event = '{"seq":1,"type":"x","data":{"a":' + inner + "}}" if depth > 2 else '{"seq":1,"type":"x","data":{}}'
    arguments = '{"contract":' + json.dumps(CONTRACT) + ',"events":[' + event + "]}"
    params = '{"name":"' + CHECK + '","arguments":' + arguments + "}"
    return ('{"jsonrpc":"2.0","id":' + str(ident) + ',"method":"tools/call","params":' + params + "}\n").encode()


def test_event_nested_500_levels_is_accepted(server: Server) -> None:
    """README: events may nest 500 levels, as in files."""
    ident = server.new_id()
    server.send_raw(_nested_event_request(ident, 500))
    answer = server.recv()
    assert answer["id"] == ident and answer["result"]["isError"] is False, answer
    assert answer["result"]["structuredContent"]["passed"] is True
    assert_good_call(server)


@pytest.mark.parametrize("depth", [501, 100_000])
def test_event_nested_deeper_is_refused_with_its_id(server: Server, depth: int) -> None:
    """README: a request nesting more than 504 levels is refused (-32600, with its id)."""
    ident = server.new_id()
    server.send_raw(_nested_event_request(ident, depth))
    answer = server.recv()
    assert answer["id"] == ident
    assert "504" in rpc_error(answer, -32600)
    assert_good_call(server)


def test_request_with_over_4_million_values_is_refused(server: Server) -> None:
    """README: a request may hold at most 4 million values; past that -32600 with its id."""
    ident = server.new_id()
    values = ",".join(["0"] * 4_000_001)
    arguments = '{"events":[{"seq":1,"type":"x","data":{"a":[' + values + "]}}]}"
    server.send_raw(('{"jsonrpc":"2.0","id":' + str(ident) + ',"method":"tools/call","params":{"name":"' + SUMMARIZE
                     + '","arguments":' + arguments + "}}\n").encode())
    answer = server.recv()
    assert answer["id"] == ident
    assert "4,000,000" in rpc_error(answer, -32600)
    assert_good_call(server)


# -- Call limits: v1 §9/§11 "Event[≤100,000]" per MCP call; README "a call may pair at most 10 million".


@pytest.mark.parametrize(("tool", "argument"), [(CHECK, "events"), (SUMMARIZE, "events"), (COMPARE, "baseline"),
                                                (COMPARE, "candidate")])
def test_over_100000_events_is_a_tool_error_naming_the_argument(server: Server, tool: str, argument: str) -> None:
    """v1 §11: 100,000 events per MCP call; README: a tool error naming the place."""
    many = [{"seq": i + 1, "type": "x"} for i in range(100_001)]
    arguments: dict[str, Any] = {"contract": CONTRACT, "events": EVENTS, "baseline": EVENTS, "candidate": EVENTS}
    arguments[argument] = many
    if tool != COMPARE:
        arguments = {key: arguments[key] for key in (("events",) if tool == SUMMARIZE else ("contract", "events"))}
    else:
        del arguments["events"]
    text = tool_error(server.call(tool, arguments))
    assert text.startswith(f"{argument}:") and "100,000" in text, text
    assert_good_call(server)


def test_exactly_100000_events_are_accepted(server: Server) -> None:
    """v1 §9: `events: Event[≤100,000]`; the limit itself is allowed."""
    answer = server.call(SUMMARIZE, {"events": [{"seq": i + 1, "type": "x"} for i in range(100_000)]})
    assert answer["result"]["structuredContent"]["events"] == 100_000
    assert_good_call(server)


@pytest.mark.parametrize("tool", [CHECK, COMPARE])
def test_rules_times_events_over_10_million_is_a_tool_error(server: Server, tool: str) -> None:
    """README: a call may pair at most 10 million (10,000 rules with 1,000 events); 1,001 is over."""
    rules = [{"id": f"r{i}", "kind": "deny_tool", "tool": f"t{i}"} for i in range(10_000)]
    events = [{"seq": i + 1, "type": "tool.call", "tool": "x"} for i in range(1001)]
    contract = {"version": 1, "name": "c", "rules": rules}
    arguments = ({"contract": contract, "events": events} if tool == CHECK
                 else {"contract": contract, "baseline": events, "candidate": events})
    text = tool_error(server.call(tool, arguments))
    assert "10,000,000" in text, text
    assert_good_call(server)


# -- Tool arguments: README table (arguments per tool); v1 §9 schema failures are `isError: true`
# -- results; README "Bad input comes back as a tool error naming the place".

REQUIRED = {VALIDATE: ["contract"], CHECK: ["contract", "events"], COMPARE: ["contract", "baseline", "candidate"],
            SUMMARIZE: ["events"], LINT: ["contract"]}
GOOD_ARGUMENTS: dict[str, dict[str, Any]] = {
    VALIDATE: {"contract": CONTRACT}, CHECK: {"contract": CONTRACT, "events": EVENTS},
    COMPARE: {"contract": CONTRACT, "baseline": EVENTS, "candidate": EVENTS}, SUMMARIZE: {"events": EVENTS},
    LINT: {"contract": CONTRACT},
}


@pytest.mark.parametrize(("tool", "missing"), [(t, a) for t, names in REQUIRED.items() for a in names])
def test_missing_required_argument_is_a_tool_error_naming_it(server: Server, tool: str, missing: str) -> None:
    """README table: the tool's arguments; leaving one out is bad input named in a tool error."""
    arguments = {key: value for key, value in GOOD_ARGUMENTS[tool].items() if key != missing}
    text = tool_error(server.call(tool, arguments))
    assert f"`{missing}`" in text and "missing" in text, text
    assert_good_call(server)


@pytest.mark.parametrize("tool", TOOLS)
def test_no_arguments_at_all_is_a_tool_error(server: Server, tool: str) -> None:
    """MCP `arguments` is optional in tools/call; leaving it out is a missing required argument."""
    text = tool_error(server.request("tools/call", {"name": tool}))
    assert "missing" in text and any(f"`{name}`" in text for name in REQUIRED[tool]), text
    assert_good_call(server)


@pytest.mark.parametrize("tool", TOOLS)
def test_unknown_argument_is_a_tool_error_naming_it(server: Server, tool: str) -> None:
    """README table lists each tool's arguments (and the input schemas are closed): an extra one is
    bad input, named."""
    text = tool_error(server.call(tool, {**GOOD_ARGUMENTS[tool], "contract_path": "/etc/passwd"}))
    assert "contract_path" in text, text
    assert_good_call(server)


WRONG_TYPES: list[tuple[str, str, Any]] = [
    (VALIDATE, "contract", 5), (VALIDATE, "contract", "/tmp/c.json"), (VALIDATE, "contract", [CONTRACT]),
    (VALIDATE, "contract", None),
    (CHECK, "contract", "{\"version\": 1}"), (CHECK, "events", "t.jsonl"), (CHECK, "events", {"seq": 1}),
    (CHECK, "events", None), (CHECK, "strict", "yes"), (CHECK, "partial", 1), (CHECK, "no_lint", "no"),
    (CHECK, "input_format", 5), (CHECK, "input_format", "xml"), (CHECK, "run", 5),
    (COMPARE, "contract", 5), (COMPARE, "baseline", "b.jsonl"), (COMPARE, "candidate", 7), (COMPARE, "strict", 0),
    (COMPARE, "partial", "true"), (COMPARE, "no_lint", []), (COMPARE, "input_format", True), (COMPARE, "run", {}),
    (SUMMARIZE, "events", "/dev/stdin"), (SUMMARIZE, "input_format", []), (SUMMARIZE, "run", 1.5),
    (LINT, "contract", "c.json"), (LINT, "interface", "yes"),
]


WRONG_TYPE_IDS = [f"{t.removeprefix('agent_invariants_')}-{a}-{json.dumps(v)[:12]}" for t, a, v in WRONG_TYPES]


@pytest.mark.parametrize(("tool", "argument", "value"), WRONG_TYPES, ids=WRONG_TYPE_IDS)
def test_wrong_type_is_a_tool_error_naming_the_argument(server: Server, tool: str, argument: str, value: Any) -> None:
    """README: "Bad input comes back as a tool error naming the place" (v1 §9: `isError: true`)."""
    text = tool_error(server.call(tool, {**GOOD_ARGUMENTS[tool], argument: value}))
    assert text.startswith(f"{argument}:") or f"`{argument}`" in text, text
    assert_good_call(server)


@pytest.mark.parametrize(("arguments", "got"), [("x", "a string"), ([], "an array"), (5, "a number")])
def test_arguments_not_an_object_names_arguments(server: Server, arguments: Any, got: str) -> None:
    """README: "Bad input comes back as a tool error naming the place": params that are not the
    shape of tools/call are invalid params (-32602) naming the param."""
    message = rpc_error(server.call(SUMMARIZE, arguments), -32602)
    assert message == f"Invalid params: $.params.arguments: must be an object, got {got}"
    assert_good_call(server)


@pytest.mark.parametrize(("method", "params", "expected"), [
    ("tools/call", {"name": 5}, "$.params.name: must be a string, got a number"),
    ("tools/call", {"arguments": {}}, "$.params.name: required (string)"),
    ("prompts/get", {"name": "write-contract", "arguments": {"rules": 5}},
     "$.params.arguments.rules: must be a string, got a number"),   # (named since the fourth hunt)
    ("prompts/get", {"name": "write-contract", "arguments": []},
     "$.params.arguments: must be an object of strings, got an array"),
    ("initialize", None, "$.params.protocolVersion: required (string)"),
    ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": "me"},
     "$.params.clientInfo: must be an object, got a string"),
    ("prompts/get", {}, "$.params.name: required (string)"),
    ("tools/list", {"cursor": 1}, "$.params.cursor: must be a string, got a number"),
])
def test_params_of_the_wrong_shape_are_named(server: Server, method: str, params: Any, expected: str) -> None:
    """The same for the other requests served: the message names the param."""
    assert rpc_error(server.request(method, params), -32602) == f"Invalid params: {expected}"
    assert_good_call(server)


@pytest.mark.parametrize("params", [{"name": 5}, {"arguments": {}}, None],
                         ids=["name-number", "no-name", "no-params"])
def test_tools_call_without_a_tool_name_is_invalid_params(server: Server, params: Any) -> None:
    """MCP: tools/call needs `params.name`. Spec silent on the code; -32602 (invalid params) is the
    JSON-RPC code for it. The message is generic ("Invalid request parameters"): see the report."""
    rpc_error(server.request("tools/call", params), -32602)
    assert_good_call(server)


def test_unknown_tool_is_invalid_params_naming_it(server: Server) -> None:
    """MCP spec: an unknown tool is a protocol error -32602; the message names the tool and lists
    the README's five tools."""
    message = rpc_error(server.call("agent_invariants_delete_everything", {}), -32602)
    assert "agent_invariants_delete_everything" in message and all(tool in message for tool in TOOLS), message
    assert_good_call(server)


# -- Content of the arguments.


def test_event_not_an_object_names_its_index(server: Server) -> None:
    """README: a tool error naming the place, in the form `events[3]: $...`."""
    assert tool_error(server.call(CHECK, {"contract": CONTRACT, "events": [EVENTS[0], 1]})).startswith("events[1]: $")
    assert_good_call(server)


def test_seq_not_increasing_is_the_readme_message(server: Server) -> None:
    """README (exact text): `events[3]: $.seq: must be strictly increasing, got 2 after 5`; and
    summarize takes such events, as the Node tool's does (spec v1 §12 point 16)."""
    events = [{"seq": i, "type": "x"} for i in (1, 3, 5, 2)]
    answer = server.call(CHECK, {"contract": CONTRACT, "events": events})
    assert tool_error(answer) == "events[3]: $.seq: must be strictly increasing, got 2 after 5"
    summary = server.call(SUMMARIZE, {"events": events})["result"]
    assert summary["isError"] is False and summary["structuredContent"]["events"] == 4
    assert_good_call(server)


def test_contract_typo_is_the_readme_message(server: Server) -> None:
    """README (exact text): `contract: $.rules[3].max_attempt: unknown field (did you mean 'max_attempts'?)`."""
    rules: list[dict[str, Any]] = [{"id": f"r{i}", "kind": "deny_tool", "tool": "x"} for i in range(3)]
    rules.append({"id": "r3", "kind": "retry_limit", "tool": "x", "max_attempt": 3})
    text = tool_error(server.call(VALIDATE, {"contract": {"version": 1, "name": "c", "rules": rules}}))
    assert text == "contract: $.rules[3].max_attempt: unknown field (did you mean 'max_attempts'?)"
    assert_good_call(server)


def test_compare_names_the_bad_trace(server: Server) -> None:
    """README: the tool error names the place: a bad candidate event is under `candidate`."""
    text = tool_error(server.call(COMPARE, {"contract": CONTRACT, "baseline": EVENTS, "candidate": [{"seq": "1"}]}))
    assert text.startswith("candidate[0]: $"), text
    assert_good_call(server)


PATHS = ["/etc/passwd", "/nonexistent/x.json", "/dev/zero", "/dev/stdin", "/tmp", "pack.json", "./pack.json",
         "../pack.json", "file:///etc/passwd"]


@pytest.mark.parametrize("version", [1, 2])
def test_extends_by_path_is_refused_the_same_whether_the_file_exists_or_not(server: Server, version: int) -> None:
    """D8: the MCP server never reads files (`extends` by path is refused there); README: "a path is
    refused, with the same message whether the file exists or not" (pack.json exists in the
    server's folder; /dev/zero and /dev/stdin are devices; /tmp is a folder)."""
    texts = set()
    for path in PATHS:
        contract = {**CONTRACT, "version": version, "extends": [path]}
        text = tool_error(server.call(VALIDATE, {"contract": contract}))
        assert text.startswith("contract: $.extends[0]:"), text
        texts.add(text)
    assert len(texts) == 1, texts
    assert_good_call(server)


@pytest.mark.parametrize("tool", [CHECK, LINT])
def test_extends_by_path_is_refused_by_every_tool(server: Server, tool: str) -> None:
    """D8: `extends` by path is refused there (not only by validate)."""
    arguments = {**GOOD_ARGUMENTS[tool], "contract": {**CONTRACT, "extends": ["/dev/zero"]}}
    assert tool_error(server.call(tool, arguments)).startswith("contract: $.extends[0]:")
    assert_good_call(server)


def test_extends_shipped_pack_is_read(server: Server) -> None:
    """README: `extends` may name only the shipped packs (`agent-invariants:payments`) there."""
    answer = server.call(VALIDATE, {"contract": {**CONTRACT, "extends": ["agent-invariants:payments"]}})
    rules = answer["result"]["structuredContent"]["contract"]["rules"]
    assert answer["result"]["isError"] is False and len(rules) > 1
    assert_good_call(server)


@pytest.mark.parametrize("name", ["agent-invariants:../../../etc/passwd", "agent-invariants:/etc/passwd",
                                  "agent-invariants:"])
def test_pack_name_with_a_path_is_an_unknown_pack(server: Server, name: str) -> None:
    """README: only shipped packs may be named; a pack name that smuggles a path is not one."""
    text = tool_error(server.call(VALIDATE, {"contract": {**CONTRACT, "extends": [name]}}))
    assert text.startswith("contract: $.extends[0]:") and "passwd" not in text.replace(name, ""), text
    assert_good_call(server)


def test_lone_surrogate_reads_as_replacement_character(server: Server) -> None:
    """README: "Lone UTF-16 surrogate escapes are read as U+FFFD, as in trace files"."""
    ident = server.new_id()
    server.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":'
                    b'{"events":[{"seq":1,"type":"tool.call","tool":"a\\ud83d"}]}}}\n' % (ident, SUMMARIZE.encode()))
    answer = server.recv()
    assert answer["result"]["structuredContent"]["tools"] == ["a\ufffd"]
    assert_good_call(server)


def test_surrogate_glob_matches_surrogate_tool(server: Server) -> None:
    """README: lone surrogates read as U+FFFD "in a contract too, so a glob holding one matches a tool
    holding the same one" (the same in an MCP request)."""
    ident = server.new_id()
    server.send_raw(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":'
                    b'{"contract":{"version":1,"name":"c","rules":[{"id":"r","kind":"deny_tool","tool":"a\\udc00"}]},'
                    b'"events":[{"seq":1,"type":"tool.call","tool":"a\\ud83d"}]}}}\n' % (ident, CHECK.encode()))
    report = server.recv()["result"]["structuredContent"]
    assert report["error_count"] == 1
    assert_good_call(server)


def test_event_with_huge_string_is_checked(server: Server) -> None:
    """Spec silent on a per-event size in MCP (the 1 MiB line limit is for files, D2); a 3 MiB
    argument string within the 32 MiB request is checked, and evidence strings are cut (§0: 200 chars)."""
    events = [{"seq": 1, "type": "tool.call", "tool": "shell.x", "args": {"s": "y" * (3 * 1024 * 1024)}}]
    report = server.call(CHECK, {"contract": CONTRACT, "events": events})["result"]["structuredContent"]
    assert report["error_count"] == 1
    assert_good_call(server)


# -- input_format / run: v2 §7, README "Check, compare and summarize also take the records another tool
# -- wrote instead of events, with input_format ... and, for records of several runs, run".

MCP_LOG_TWO_SESSIONS = [
    {"ts": "2024-01-01T00:00:00Z", "session": s, "dir": "c2s",
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}} for s in ("s1", "s2")
]


@pytest.mark.parametrize(("input_format", "records"), [
    ("mcp-log", [1, 2]), ("mcp-log", [{"ts": "yesterday", "session": "s", "dir": "c2s", "msg": {}}]),
    ("otel", ["x" * 1000]), ("auto", [{"a": 1}]), ("langsmith", [{"x": "\ud83d"}]), ("openai-agents", [[]]),
    ("openinference", [None]),
])
def test_hostile_records_are_a_tool_error_naming_events(server: Server, input_format: str, records: list[Any]) -> None:
    """v2 §7 / README: records in another format are bad input named in a tool error, at the item
    of `events` that holds the bad record (as a bad native event is named)."""
    text = tool_error(server.call(CHECK, {"contract": CONTRACT, "events": records, "input_format": input_format}))
    named = "events: " if records == [[]] else "events[0]: "   # an empty list of spans: nothing at all to import
    assert text.startswith(named), text
    assert_good_call(server)


def test_several_runs_without_run_lists_them(server: Server) -> None:
    """v2 §7: "With several runs in the input, --run ... is required; otherwise exit 2 and list the run
    ids"; over MCP a tool error listing them."""
    text = tool_error(server.call(SUMMARIZE, {"events": MCP_LOG_TWO_SESSIONS, "input_format": "mcp-log"}))
    assert "s1" in text and "s2" in text and "run" in text, text
    assert_good_call(server)


def test_unknown_run_is_a_tool_error(server: Server) -> None:
    """v2 §7: `run` chooses one of the runs; one that is not there is bad input naming `run`."""
    arguments = {"events": MCP_LOG_TWO_SESSIONS, "input_format": "mcp-log", "run": "s9"}
    text = tool_error(server.call(SUMMARIZE, arguments))
    assert "s9" in text, text
    assert_good_call(server)


# -- Prompts: v1 §9 `protect-behavior-change`; README `write-contract` (argument `rules`, optional `name`).


def test_unknown_prompt_is_invalid_params_naming_it(server: Server) -> None:
    """MCP spec: an unknown prompt is -32602; the message names it and the README's two prompts."""
    message = rpc_error(server.request("prompts/get", {"name": "nope"}), -32602)
    assert "nope" in message and "write-contract" in message and "protect-behavior-change" in message
    assert_good_call(server)


@pytest.mark.parametrize("arguments", [{}, {"rules": ""}])
def test_prompt_missing_rules_names_it(server: Server, arguments: dict[str, Any]) -> None:
    """README: `write-contract` takes `rules` (required); without it the error names `rules`."""
    message = rpc_error(server.request("prompts/get", {"name": "write-contract", "arguments": arguments}), -32602)
    assert "`rules`" in message, message
    assert_good_call(server)


PROMPT_BAD_ARGUMENTS: list[Any] = [{"rules": 5}, "x", {"rules": "a", "name": ["x"]}]


@pytest.mark.parametrize("arguments", PROMPT_BAD_ARGUMENTS)
def test_prompt_argument_of_wrong_type_is_invalid_params(server: Server, arguments: Any) -> None:
    """MCP: prompt arguments are a map of strings; anything else is -32602 (spec silent on the text;
    the message is generic, see the report)."""
    rpc_error(server.request("prompts/get", {"name": "write-contract", "arguments": arguments}), -32602)
    assert_good_call(server)


def test_huge_prompt_argument_is_answered(server: Server) -> None:
    """Spec silent on a prompt argument's size; within the 32 MiB request a 20 MB `rules` gets the
    prompt (a single user message)."""
    answer = server.request("prompts/get", {"name": "write-contract", "arguments": {"rules": "x" * 20_000_000}})
    assert [m["role"] for m in answer["result"]["messages"]] == ["user"]
    assert_good_call(server)


# -- Sessions in their own server.


def _start(tmp_path: Path) -> Server:
    return Server(tmp_path)


@pytest.mark.slow
def test_request_before_initialize_is_answered_and_the_session_continues(tmp_path: Path) -> None:
    """README: every line gets an answer and the session goes on. MCP: requests other than ping
    before `initialize` are not served; an error with the id, then initialize and calls work.
    (Spec silent on the code; the message says what to send first.)"""
    started = _start(tmp_path)
    try:
        assert started.request("ping")["result"] == {}  # MCP: ping is allowed before initialize
        answer = started.call(SUMMARIZE, {"events": EVENTS})
        assert answer["error"] == {"code": -32602, "message": "Invalid params: tools/call before initialize: a "
                                   "session starts with initialize"}, answer
        # a method no session knows is not found, before initialize as after it (it read -32602)
        assert started.request("nope")["error"] == {"code": -32601, "message": "Method not found", "data": "nope"}
        started.initialize()
        assert started.request("nope")["error"] == {"code": -32601, "message": "Method not found", "data": "nope"}
        assert_good_call(started)
    finally:
        code = started.close()
    assert code == 0 and "Traceback" not in started.stderr_text(), started.stderr_text()


@pytest.mark.slow
def test_stdin_closed_mid_request_ends_cleanly(tmp_path: Path) -> None:
    """Bad-input standard: stdin closed in the middle of a (50 MB) request: the server answers what
    it got (README: every line gets an answer: the cut line is over 32 MiB, -32600 with its id),
    exits 0 without a traceback, and stdout holds only JSON-RPC."""
    started = _start(tmp_path)
    started.initialize()
    started.send_raw(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"' + SUMMARIZE.encode()
                     + b'","arguments":{"events":[{"seq":1,"type":"' + b"y" * (50 * 1024 * 1024))
    code = started.close()
    assert code == 0 and "Traceback" not in started.stderr_text(), started.stderr_text()
    assert started.not_json == []
    answer = started.answers.get(timeout=TIMEOUT)
    assert answer is not None and answer["id"] == 9 and answer["error"]["code"] == -32600


@pytest.mark.slow
def test_request_just_before_stdin_closes_is_still_answered(tmp_path: Path) -> None:
    """README: "Every line the client sends gets an answer" — also the last one before end of input."""
    started = _start(tmp_path)
    started.initialize()
    events = [{"seq": i + 1, "type": "tool.call", "tool": "shell.x"} for i in range(20_000)]
    started.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                  "params": {"name": CHECK, "arguments": {"contract": CONTRACT, "events": events}}})
    code = started.close()
    answer = started.answers.get(timeout=TIMEOUT)
    assert answer is not None and answer["id"] == 77
    assert answer["result"]["structuredContent"]["error_count"] == 20_000
    assert code == 0 and "Traceback" not in started.stderr_text() and started.not_json == []


# -- The official Python SDK as client: one session, its outcomes checked one by one.


@dataclass
class SdkSession:
    outcomes: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, MCPError] = field(default_factory=dict)


async def _sdk_scenario(cwd: Path, into: SdkSession) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent_invariants", "serve"], cwd=cwd)
    with open(cwd / "stderr.txt", "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            into.outcomes["init"] = await session.initialize()
            into.outcomes["tools"] = await session.list_tools()
            into.outcomes["wrong_type"] = await session.call_tool(CHECK, {"contract": 5, "events": []})
            into.outcomes["none_arguments"] = await session.call_tool(SUMMARIZE, None)
            for key, call in (("unknown_tool", session.call_tool("nope", {})),
                              ("unknown_prompt", session.get_prompt("nope")),
                              ("prompt_missing", session.get_prompt("write-contract", {}))):
                try:
                    into.outcomes[key] = await call
                except MCPError as error:
                    into.errors[key] = error
            into.outcomes["prompt_extra"] = await session.get_prompt("protect-behavior-change", {"x": "y"})
            into.outcomes["good"] = await session.call_tool(SUMMARIZE, {"events": EVENTS})


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> SdkSession:
    folder = tmp_path_factory.mktemp("mcp_sdk")
    session = SdkSession()
    anyio.run(_sdk_scenario, folder, session)
    session.outcomes["stderr"] = (folder / "stderr.txt").read_text(encoding="utf-8")
    return session


@pytest.mark.slow
def test_sdk_server_info(sdk: SdkSession) -> None:
    """v1 §9: server info name `agent-invariants`, capabilities tools + prompts."""
    init = sdk.outcomes["init"]
    assert init.server_info.name == "agent-invariants"
    assert init.capabilities.tools is not None and init.capabilities.prompts is not None


@pytest.mark.slow
def test_sdk_input_schemas_are_closed_and_require_the_readme_arguments(sdk: SdkSession) -> None:
    """README table: each tool's arguments (lint's `interface` optional); unknown ones are refused,
    so the schemas say additionalProperties false."""
    schemas = {tool.name: tool.input_schema for tool in sdk.outcomes["tools"].tools}
    assert sorted(schemas) == sorted(TOOLS)
    for name, required in REQUIRED.items():
        assert sorted(schemas[name]["required"]) == sorted(required), name
        assert schemas[name].get("additionalProperties") is False, name
        assert set(required) <= set(schemas[name]["properties"]), name
    assert "interface" in schemas[LINT]["properties"]


@pytest.mark.slow
def test_sdk_wrong_type_is_an_is_error_result(sdk: SdkSession) -> None:
    """v1 §9: schema failures come back as `isError: true` results; README: naming the place."""
    result = sdk.outcomes["wrong_type"]
    assert result.is_error is True and result.content[0].text.startswith("contract:")


@pytest.mark.slow
def test_sdk_call_without_arguments_is_an_is_error_result(sdk: SdkSession) -> None:
    """README: missing arguments are bad input named in a tool error."""
    result = sdk.outcomes["none_arguments"]
    assert result.is_error is True and "`events`" in result.content[0].text


@pytest.mark.slow
def test_sdk_unknown_tool_raises_invalid_params(sdk: SdkSession) -> None:
    """MCP spec: an unknown tool is a JSON-RPC error -32602 (the SDK raises MCPError)."""
    assert sdk.errors["unknown_tool"].code == -32602 and "nope" in sdk.errors["unknown_tool"].message


@pytest.mark.slow
def test_sdk_unknown_prompt_raises_invalid_params(sdk: SdkSession) -> None:
    """MCP spec: an unknown prompt is -32602."""
    assert sdk.errors["unknown_prompt"].code == -32602 and "nope" in sdk.errors["unknown_prompt"].message


@pytest.mark.slow
def test_sdk_prompt_missing_required_argument_names_it(sdk: SdkSession) -> None:
    """README: `write-contract` needs `rules`."""
    assert sdk.errors["prompt_missing"].code == -32602 and "`rules`" in sdk.errors["prompt_missing"].message


@pytest.mark.slow
def test_sdk_prompt_extra_argument_is_ignored(sdk: SdkSession) -> None:
    """v1 §9: `protect-behavior-change` has no arguments. Spec silent on extra ones; ignoring them
    (MCP prompt arguments are free-form strings) is a reasonable reading: a single user message."""
    assert [m.role for m in sdk.outcomes["prompt_extra"].messages] == ["user"]


@pytest.mark.slow
def test_sdk_good_call_after_bad_ones(sdk: SdkSession) -> None:
    """README: the server goes on serving; stderr has no traceback."""
    result = sdk.outcomes["good"]
    assert result.is_error is False and result.structured_content == GOOD_SUMMARY
    assert "Traceback" not in sdk.outcomes["stderr"]


def test_a_reply_echoing_a_value_nested_300_deep_is_a_result_not_an_error_code_0(server: Server) -> None:
    """README: requests may nest 504 levels (events and contracts 500, as in files); a report that
    echoes such a value (the normalised contract) is still a result. The SDK writes a reply's
    structured content only to about 250 levels: deeper parts are a note there, and the JSON text
    beside it holds them whole. A violation's evidence keeps 32 levels of a trace value."""
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    contract = {"version": 2, "name": "deep", "rules": [{"id": "x", "kind": "tool_args", "tool": "t",
                                                          "match": {"x": 1}}]}
    answer = server.call(CHECK, {"contract": contract, "events": [
        {"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c", "args": {"x": deep}}]})
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"]["passed"] is False, answer
    # the evidence keeps 32 levels (3 of them above the value), as on the command line
    kept: Any = "… nested deeper"
    for _ in range(29):
        kept = [kept]
    assert json.loads(result["content"][0]["text"])["violations"][0]["evidence"]["mismatches"][0]["actual"] == kept
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    validated = server.call(VALIDATE, {"contract": {**contract, "rules": [
        {"id": "s", "kind": "output_schema", "schema": {"const": deep}}]}})["result"]
    assert validated["isError"] is False and validated["structuredContent"]["valid"] is True
    assert "nested too deep for the structured content" in json.dumps(validated["structuredContent"])
    assert json.loads(validated["content"][0]["text"])["contract"]["rules"][0]["schema"]["const"] == deep
    assert_good_call(server)


@pytest.mark.parametrize("tool", [CHECK, SUMMARIZE])
def test_run_without_input_format_is_refused_as_the_command_line_refuses_it(server: Server, tool: str) -> None:
    """README: "`run` needs `input_format`, as `--run` needs `--input-format`": native events are one
    run, so a `run` given with them is a mistake named, not ignored."""
    arguments: dict[str, Any] = {"events": EVENTS, "run": "s1"}
    if tool == CHECK:
        arguments["contract"] = CONTRACT
    text = tool_error(server.call(tool, arguments))
    assert text == "run: chooses a run among the records of another tool, so it needs input_format (native events " \
                   "are one run)"
    assert_good_call(server)


def test_an_empty_run_is_an_argument_error_naming_run(server: Server) -> None:
    arguments = {"events": MCP_LOG_TWO_SESSIONS, "input_format": "mcp-log", "run": ""}
    assert tool_error(server.call(SUMMARIZE, arguments)) == "run: expected a run id, got an empty string"
    assert_good_call(server)


def test_a_tool_call_without_arguments_is_a_call_with_none(server: Server) -> None:
    """README: "A tool call without `arguments` (MCP makes them optional) is a call with none: a tool
    error names the first one missing"."""
    answer = server.request("tools/call", {"name": SUMMARIZE})
    assert tool_error(answer) == "missing required argument `events`"
    answer = server.request("tools/call", {"name": CHECK, "arguments": None})
    assert tool_error(answer) == "missing required argument `contract`"
    assert_good_call(server)


def test_tool_descriptions_name_both_contract_versions_and_no_seq_where_no_events_are_taken(server: Server) -> None:
    tools = {tool["name"]: tool["description"] for tool in server.request("tools/list")["result"]["tools"]}
    assert "v1 contract" not in tools[VALIDATE] and "version 1 or 2" in tools[VALIDATE]
    assert "v1 contract" not in tools[CHECK] and "version 1 or 2" in tools[CHECK]
    assert "of version 1 or 2" in tools[COMPARE]
    assert "seq" not in tools[LINT] and "seq" not in tools[VALIDATE]
    assert "a `seq` that does not strictly increase is such an error too" in tools[SUMMARIZE]
