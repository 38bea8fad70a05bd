"""The MCP server under hostile input: every request answered, no file read, bounded resources.

Lines no MCP client would send (broken JSON, batches, wrong types, lone surrogates, nesting past
the limit, a line of 100 MB) are written raw to `agent-invariants serve`'s standard input, which
is then closed at once: every request read must still be answered, with the JSON-RPC error code
and the request's id when it can be read, and a valid call after them must still work. The rest
goes through the SDK's own client. The server runs under a wrapper process that reports its peak
memory, and standard error must never hold a traceback.

Before this was fixed, the SDK's transport dropped every line it could not decode without an
answer (so a client waiting for it hung), dropped values nested 250 levels deep in tool arguments,
and cancelled calls still running when input ended; `extends` read any path a client named and
told whether it existed.
"""
from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from agent_invariants.jsontext import MAX_NESTING
from agent_invariants.mcp_server import TOOLS, build_server
from agent_invariants.mcp_transport import MAX_IN_FLIGHT, serve_connection
from agent_invariants.mcp_wire import MAX_REQUEST_BYTES, MAX_REQUEST_NESTING, MAX_REQUEST_VALUES

from support import EXAMPLES, REPO

CHECK, SUMMARIZE, VALIDATE = ("agent_invariants_check_trace", "agent_invariants_summarize_trace",
                              "agent_invariants_validate_contract")
MIB = 1024 * 1024
BASELINE_MIB = 150   # the interpreter, the SDK and pydantic take about 70
EVENTS = [{"seq": 1, "type": "tool.call", "tool": "kb.search"}, {"seq": 2, "type": "tool.result", "tool": "kb.search"}]

# Runs the server as its only child and writes the child's peak memory (KiB) to a file at the end:
# measured in the test process, the test's own size would count (Linux keeps it across `exec`).
_WRAPPER = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
            "sys.exit(code)")


def server_command(peak_file: Path) -> list[str]:
    return [sys.executable, "-c", _WRAPPER, str(peak_file), sys.executable, "-m", "agent_invariants", "serve"]


def peak_mib(peak_file: Path) -> float:
    return int(peak_file.read_text()) / 1024


# ----------------------------------------------------------------------------------------------
# raw lines


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
    return json.dumps(message).encode()


def call(request_id: Any, tool: str, arguments: dict[str, Any]) -> bytes:
    return request(request_id, "tools/call", {"name": tool, "arguments": arguments})


OPENING = [
    request("init", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "raw", "version": "0"}}),
    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
]


class Exchange(NamedTuple):
    replies: list[dict[str, Any]]   # in the order written, the answer to `initialize` left out
    stdout: bytes
    stderr: str
    peak_mib: float


def exchange(tmp_path: Path, lines: list[bytes] | Iterator[bytes]) -> Exchange:
    """Open a session, write `lines` (a list of lines, or an iterator of raw pieces with their
    newlines), close standard input at once, and read everything the server writes until it exits."""
    peak_file = tmp_path / "peak"
    with subprocess.Popen(server_command(peak_file), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        try:
            written = [*(line + b"\n" for line in OPENING), *([line + b"\n" for line in lines]
                                                                if isinstance(lines, list) else lines)]
            stdout, stderr = proc.communicate(b"".join(written), timeout=120)
        finally:
            proc.kill()
    assert proc.returncode == 0, stderr
    replies = [json.loads(line) for line in stdout.splitlines()]   # a line that is not JSON fails here
    assert replies[0]["id"] == "init" and "result" in replies[0], replies[0]
    return Exchange(replies[1:], stdout, stderr.decode(), peak_mib(peak_file))


def answer(replies: list[dict[str, Any]], request_id: Any) -> dict[str, Any]:
    """The one reply with this id."""
    found = [reply for reply in replies if reply["id"] == request_id]
    assert len(found) == 1, (request_id, replies)
    return found[0]


def error_of(replies: list[dict[str, Any]], request_id: Any) -> tuple[int, str]:
    reply = answer(replies, request_id)
    assert "result" not in reply, reply
    return reply["error"]["code"], reply["error"]["message"]


def structured(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in reply and reply["result"].get("isError") is not True, reply
    return reply["result"]["structuredContent"]


@pytest.mark.slow
def test_every_line_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    """Each line that is no valid message gets one error reply; the valid call after them works."""
    lines_and_errors = [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', None, -32700,
         "Parse error: the JSON ends before the value is complete"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}', None, -32700, "Parse error: trailing comma in object"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "p\xffng"}', None, -32700, "Parse error: Invalid UTF-8"),
        (b"[]", None, -32600, "Invalid Request: an empty array"),
        (b'[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]', None, -32600, "Invalid Request: batches are not"),
        (b'"tools/list"', None, -32600, "Invalid Request: expected a JSON-RPC message object, got a string"),
        (b'{"id": 3}', 3, -32600, 'Invalid Request: $.jsonrpc: must be "2.0"'),
        (b'{"jsonrpc": "1.0", "id": "four", "method": "ping"}', "four", -32600, "Invalid Request: $.jsonrpc"),
        (b'{"jsonrpc": "2.0", "id": 5.5, "method": "ping"}', None, -32600,
         "Invalid Request: $.id: must be a string or an integer"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, -32600, "Invalid Request: $.id"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, -32600, "Invalid Request: $.id"),
        (b'{"jsonrpc": "2.0", "id": 6, "method": 7}', 6, -32600, "Invalid Request: $.method: must be a string"),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1]}', 8, -32600,
         "Invalid Request: $.params: must be an object"),
        (b'{"jsonrpc": "2.0", "id": 9}', 9, -32600, "Invalid Request: $: neither a request"),
        (b'{"jsonrpc": "2.0", "id": 10, "result": 5}', 10, -32600, "Invalid Request: $.result: must be an object"),
        (b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": 12}}', 11, -32602,
         "Invalid params: $.params.name: must be a string, got a number"),
        (b'{"jsonrpc": "2.0", "id": 13, "method": "no/such/method"}', 13, -32601, "Method not found"),
        (call(14, "agent_invariants_check", {}), 14, -32602, "unknown tool 'agent_invariants_check'"),
    ]
    ping = b'{"jsonrpc": "2.0", "method": "notifications/ping"}'   # a notification: never answered
    lines = [line for line, *_ in lines_and_errors] + [b"", b"  \r", ping, call(15, SUMMARIZE, {"events": EVENTS})]
    done = exchange(tmp_path, lines)

    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.replies) == len(lines_and_errors) + 1
    unnamed = iter(reply for reply in done.replies if reply["id"] is None)   # answered in the order read
    for line, request_id, code, message in lines_and_errors:
        reply = answer(done.replies, request_id) if request_id is not None else next(unnamed)
        assert (reply["error"]["code"], reply["error"]["message"][:len(message)]) == (code, message), line
    assert structured(answer(done.replies, 15))["tools"] == ["kb.search"]


@pytest.mark.slow
def test_lone_surrogates_anywhere_are_read_as_replacement_characters(tmp_path: Path) -> None:
    """A `\\ud800` escape in an id, a tool name or an event reads as U+FFFD, as in trace files, and
    every reply is valid UTF-8 (a lone surrogate cannot be written as UTF-8 at all)."""
    lone = "\ud800"
    events = [{"seq": 1, "type": "tool.call", "tool": f"pay{lone}"}, {"seq": 2, "type": f"note{lone}"}]
    contract = {"version": 1, "name": f"c{lone}", "rules": [{"id": "x", "kind": "deny_tool", "tool": f"pay{lone}"}]}
    lines = [json.dumps(raw).encode() for raw in (  # json.dumps writes each lone surrogate as `\ud800`
        {"jsonrpc": "2.0", "id": f"id-{lone}", "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": f"x{lone}", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": SUMMARIZE, "arguments": {"events": events}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": CHECK, "arguments": {"contract": contract, "events": events}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": SUMMARIZE, "arguments": {"events": [
            {"seq": 1, "type": f"a{lone}", f"key{lone}": [lone]}]}}},
    )]
    done = exchange(tmp_path, lines)

    done.stdout.decode("utf-8")   # strict: raises on anything that is not UTF-8
    assert "Traceback" not in done.stderr, done.stderr
    assert answer(done.replies, "id-\ufffd")["result"] == {}
    assert error_of(done.replies, 1) == (-32602, f"unknown tool 'x\ufffd'; the tools are {', '.join(TOOLS)}")
    assert structured(answer(done.replies, 2))["tools"] == ["pay\ufffd"]
    report = structured(answer(done.replies, 3))
    assert (report["contract"]["name"], report["passed"], report["violations"][0]["event_seq"]) == ("c\ufffd", False, 1)
    assert structured(answer(done.replies, 4))["events"] == 1


def nested_event(levels: int) -> dict[str, Any]:
    """An event whose JSON nests `levels` deep, the event object itself being level 1."""
    value: Any = {"down": "bottom"}
    for _ in range(levels - 1):
        value = {"down": value}
    return {"seq": 1, "type": "deep", **value}


@pytest.mark.slow
def test_nesting_as_deep_as_a_trace_file_allows_works_and_deeper_is_refused(tmp_path: Path) -> None:
    """A trace file's events may nest 500 levels deep; so may a tool call's. One level more is an
    Invalid Request naming the limit, however deep it goes, and the session goes on. Brackets in
    strings do not count, and finding that out takes linear time."""
    assert MAX_REQUEST_NESTING == MAX_NESTING + 4   # {"params": {"arguments": {"events": [event]}}}
    lines = [call(1, SUMMARIZE, {"events": [nested_event(MAX_NESTING)]}),
             call(2, SUMMARIZE, {"events": [nested_event(MAX_NESTING + 1)]}),
             b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": '
             + b"[" * 100_000 + b"]" * 100_000 + b"}}",
             b'{"id": 4, "params": ' + b"[" * 100_000,
             call(5, VALIDATE, {"contract": with_extra(nested_event(MAX_NESTING - 3))}),
             call(6, VALIDATE, {"contract": with_extra(nested_event(MAX_NESTING - 2))}),
             call(7, SUMMARIZE, {"events": EVENTS}),
             # escaped quotes, then brackets, in a string never closed: the depth scan once took
             # hours on this (it retried the string at every quote)
             b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"x": "' + b'\\"' * 100_000 + b"[" * 600]
    done = exchange(tmp_path, lines)

    assert "Traceback" not in done.stderr, done.stderr
    assert structured(answer(done.replies, 1))["events"] == 1
    too_deep = (-32600, f"Invalid Request: nested more than {MAX_REQUEST_NESTING} levels deep")
    assert error_of(done.replies, 2) == too_deep
    assert error_of(done.replies, 3) == too_deep
    assert error_of(done.replies, 4) == too_deep   # the id is read from the start of the line
    # in a contract, as in a contract file: the contract is level 1, its rules 2, a rule 3
    assert tool_error(answer(done.replies, 5)) == (
        "contract: $.rules[0].extra: unknown field; expected one of: id, severity, description, stop_type, "
        "allowed_after")
    assert tool_error(answer(done.replies, 6)) == f"contract: nested more than {MAX_NESTING} levels deep"
    assert structured(answer(done.replies, 7))["events"] == 2
    assert error_of(done.replies, None) == (-32700, "Parse error: the JSON ends before the value is complete")


def with_extra(value: Any) -> dict[str, Any]:
    return {"version": 1, "name": "c", "rules": [{"id": "x", "kind": "stop_is_final", "extra": value}]}


def tool_error(reply: dict[str, Any]) -> str:
    assert reply["result"]["isError"] is True, reply
    (block,) = reply["result"]["content"]
    return block["text"]


@pytest.mark.slow
def test_a_line_over_the_size_limit_is_refused_without_being_held(tmp_path: Path) -> None:
    """100 MB on one line: answered Invalid Request with its id, in bounded memory (the server
    never holds more than the limit of it); the next line is read as usual."""
    size = 100 * MIB

    def lines() -> Iterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {"name": "x", "data": "'
        for _ in range(size // MIB):
            yield b"x" * MIB
        yield b'"}}\n'
        yield call(2, SUMMARIZE, {"events": EVENTS}) + b"\n"

    done = exchange(tmp_path, lines())
    assert "Traceback" not in done.stderr, done.stderr
    code, message = error_of(done.replies, "big")
    assert code == -32600
    assert message.startswith("Invalid Request: 104,857,6") and message.endswith(
        f"bytes, over the limit of {MAX_REQUEST_BYTES:,} per request"), message
    assert structured(answer(done.replies, 2))["events"] == 2
    assert done.peak_mib < BASELINE_MIB + MAX_REQUEST_BYTES / MIB * 2, done.peak_mib


@pytest.mark.slow
def test_millions_of_tiny_values_are_refused_before_decoding_and_fewer_fit_in_memory(tmp_path: Path) -> None:
    """`[],` is 3 bytes of JSON and over 60 bytes decoded: 30 MB of them took 840 MB and 45 s.
    Past `MAX_REQUEST_VALUES` commas, colons and brackets a request is refused undecoded; one of
    half as many is served in bounded memory."""
    def empty_lists(count: int) -> bytes:
        return b"[" + b"[]," * (count - 1) + b"[]]"

    under = MAX_REQUEST_VALUES // 4   # each `[],` is an opening bracket and a comma
    lines = [b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": '
             + empty_lists(MAX_REQUEST_VALUES) + b"}}",
             call(2, SUMMARIZE, {"events": [{"seq": 1, "type": "a", "data": {"x": "PLACE"}}]}).replace(
                 b'"PLACE"', empty_lists(under))]
    done = exchange(tmp_path, lines)

    assert "Traceback" not in done.stderr, done.stderr
    refusal = (f"Invalid Request: more than {MAX_REQUEST_VALUES:,} commas, colons and opening brackets "
               "(the limit per request)")
    assert error_of(done.replies, 1) == (-32600, refusal)
    assert structured(answer(done.replies, 2))["events"] == 1
    assert done.peak_mib < 400, done.peak_mib


def serve_in_process(data: bytes, max_request_bytes: int) -> list[dict[str, Any]]:
    """The replies `serve_connection` writes for `data`, served in this process with a small limit."""
    replies: list[bytes] = []
    anyio.run(functools.partial(serve_connection, build_server(), io.BytesIO(data).read, replies.append,
                                max_request_bytes=max_request_bytes))
    return [json.loads(reply) for reply in replies]


class CancellingServer:
    """Stands in for the SDK's server as it behaves at the end of input: it answers each request
    after a moment, and when its input closes it cancels whatever it has not answered yet."""

    def create_initialization_options(self) -> None:
        return None

    def get_request_handler(self, method: str) -> Any:
        return self.run   # (it answers every method)

    async def run(self, read_stream: Any, write_stream: Any, options: None) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        async def answer(request_id: Any) -> None:
            await anyio.sleep(0.2)
            reply = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})
            await write_stream.send(SessionMessage(reply))

        async with read_stream, anyio.create_task_group() as group:
            async for message in read_stream:
                if isinstance(message.message, types.JSONRPCRequest):
                    group.start_soon(answer, message.message.id)
            group.cancel_scope.cancel()


def test_a_request_reusing_the_id_of_a_refused_line_is_answered_before_the_connection_ends() -> None:
    """A refused line's error reply carries its id. When a request with the same id follows and the
    input ends, that error must not count as the request's answer, or the connection closes the
    server's input while the request runs and the server cancels it (found by fuzzing)."""
    data = b'{"jsonrrc": "2.0", "id": 2, "method": "ping"}\n{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n'
    replies: list[bytes] = []
    anyio.run(functools.partial(serve_connection, CancellingServer(), io.BytesIO(data).read, replies.append))
    answers = [json.loads(reply) for reply in replies]
    assert [(answer["id"], "error" in answer) for answer in answers] == [(2, True), (2, False)]


def test_a_request_that_also_carries_a_response_part_is_refused_not_dropped() -> None:
    """A message with a `method`, an `id` and an `error` is no valid request: the SDK read it as the
    response to a request it never sent and dropped it, so it went unanswered (found by fuzzing)."""
    data = b'{"jsonrpc": "2.0", "method": "ping", "id": 9, "error": {"code": -1, "message": "x"}}\n'
    assert [(reply["id"], reply["error"]["code"]) for reply in serve_in_process(data, MAX_REQUEST_BYTES)] == [
        (9, -32600)]


@pytest.mark.slow
def test_the_id_of_a_line_over_the_limit_comes_from_that_line_alone() -> None:
    """Found by fuzzing: the start of a line over the limit, kept to find its id, ran on into the
    next line, so a cut-off request could be answered with an id read from the line after it."""
    cut_off = b'{"jsonrpc": "2.0", "id": ' + b" " * 100
    replies = serve_in_process(cut_off + b'\n7, "method": "ping"}\n{"jsonrpc": "2.0", "id": 8, "method": "ping"}\n',
                               max_request_bytes=64)
    assert [(reply["id"], reply.get("error", {}).get("code")) for reply in replies] == [
        (None, -32600), (None, -32700), (8, None)]
    assert replies[0]["error"]["message"] == "Invalid Request: 125 bytes, over the limit of 64 per request"


@pytest.mark.slow
def test_a_client_that_stops_reading_ends_the_server_quietly(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-m", "agent_invariants", "serve"], cwd=REPO, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        try:
            for line in [*OPENING, call(1, SUMMARIZE, {"events": EVENTS}), request(2, "tools/list")]:
                proc.stdin.write(line + b"\n")
            proc.stdin.close()
        except BrokenPipeError:   # the server may already have gone
            pass
        assert proc.wait(timeout=60) == 0
        stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr, stderr


def test_replies_that_cannot_be_written_end_the_server_with_one_line() -> None:
    """Found by the fourth hunt: with standard output on a full device every reply was lost and
    the server ended with exit 0 and nothing on stderr, as if the client had left."""
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "agent_invariants", "serve"], cwd=REPO, stdout=full,
                              input=b"".join(line + b"\n" for line in [*OPENING, request(1, "ping")]),
                              stderr=subprocess.PIPE, timeout=60, check=False)
    assert (done.returncode, done.stderr.decode()) == (
        2, "agent-invariants: standard output: cannot write: No space left on device\n")


def flood_unread(lines: Iterator[bytes], quiet: float) -> tuple[int, bool, str]:
    """Start a server, open a session, then write `lines` and read nothing, until `quiet` seconds
    pass without a line written: how many were written, whether the writer was left blocked, and
    the server's /proc status then."""
    sent = [0]
    with subprocess.Popen([sys.executable, "-m", "agent_invariants", "serve"], cwd=REPO, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(line + b"\n" for line in OPENING))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == "init"   # the server is reading

        def flood() -> None:
            assert proc.stdin is not None
            try:
                for line in lines:
                    proc.stdin.write(line + b"\n")
                    proc.stdin.flush()
                    sent[0] += 1
            except (BrokenPipeError, ValueError):   # the server is killed below
                pass

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        seen = -1
        while sent[0] != seen:
            seen = sent[0]
            writer.join(quiet)
        try:
            stalled = writer.is_alive()
            status = Path(f"/proc/{proc.pid}/status").read_text(encoding="utf-8")
        finally:
            proc.kill()
            writer.join(10)
            with contextlib.suppress(BrokenPipeError):   # (the lines still buffered)
                proc.stdin.close()
    return sent[0], stalled, status


@pytest.mark.slow
def test_a_client_that_reads_no_reply_is_not_read_from() -> None:
    """A client that writes requests and reads nothing: once MAX_IN_FLIGHT requests wait for
    replies the full pipe cannot take, the server reads no more lines, so the client's writes
    block and the server's memory stays flat. (Before, it read on, each request's handler holding
    its reply: 1.5 GiB in eight seconds.)"""
    sent, stalled, status = flood_unread((request(number, "tools/list") for number in range(100_000)), 1.0)
    resident_mib = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
    assert stalled
    # the pipe's 64 KiB (about 1,400 of these lines), the reader's buffer and the requests in flight
    assert MAX_IN_FLIGHT < sent < 5_000
    assert resident_mib < BASELINE_MIB


@pytest.mark.slow
def test_a_client_that_reads_no_reply_waits_on_one_tool_call_at_a_time() -> None:
    """Found by the ninety-ninth hunt: a small check request of many rules and failing calls has
    an answer of tens of MB (a whole report), and sixteen of them waiting on a client that reads
    nothing held 2.8 GB. Calls run one at a time, so the next is read only once one is answered:
    the client's second request stays in the pipe."""
    keys = [f"k{number:02d}" for number in range(20)]
    contract = {"version": 2, "name": "big", "rules": [
        {"id": f"r{number}", "kind": "tool_args", "tool": "t", "match": {key: number for key in keys}}
        for number in range(40)]}
    events = [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": {key: "y" * 150
                                                                                            for key in keys}}
              for seq in range(1, 101)]
    big = call(0, "agent_invariants_check_trace", {"contract": contract, "events": events})
    assert len(big) > 200_000
    sent, stalled, _ = flood_unread((big.replace(b'"id": 0', f'"id": {number}'.encode(), 1) for number in range(16)),
                                    3.0)
    assert stalled
    assert sent <= 2   # the first call read, the second (larger than the pipe) waiting in it


# ----------------------------------------------------------------------------------------------
# through the SDK's client


@asynccontextmanager
async def session_of(command: list[str], stderr: list[str]) -> AsyncIterator[ClientSession]:
    """A session with a fresh server started by `command`; on exit, its standard error is added to
    `stderr`, and must hold no traceback."""
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO))
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read_stream, write_stream), \
                ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            yield session
        errlog.seek(0)
        stderr.append(errlog.read())
    assert "Traceback" not in stderr[-1], stderr[-1]


@asynccontextmanager
async def measured_session(tmp_path: Path) -> AsyncIterator[tuple[ClientSession, Path]]:
    """A session with a fresh server under the memory wrapper, and the file its peak goes to."""
    peak_file = tmp_path / "peak"
    async with session_of(server_command(peak_file), []) as session:
        yield session, peak_file


def run(scenario: Callable[[], Awaitable[None]], seconds: float) -> None:
    async def bounded() -> None:
        with anyio.fail_after(seconds):
            await scenario()

    anyio.run(bounded)


async def timed_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = await session.call_tool(tool, arguments)
    return result, time.monotonic() - started


# Serves MCP with an audit hook that reports, on standard error, every file opened whose name is
# one of those in argv[1]: Python reports every `open()` to audit hooks, whoever calls it.
_WATCHING_OPENS = ("import os, sys\n"
                   "watched = set(sys.argv[1].split(','))\n"
                   "def report(event, args):\n"
                   "    if event == 'open' and isinstance(args[0], str) and os.path.basename(args[0]) in watched:\n"
                   "        print('OPENED', args[0], file=sys.stderr)\n"
                   "sys.addaudithook(report)\n"
                   "from agent_invariants.cli import main\n"
                   "main(['serve'])\n")


@pytest.mark.slow
def test_extends_by_path_is_refused_alike_whether_the_file_exists_or_not() -> None:
    """Only shipped packs, by name: a path is refused before any file is touched, with one message
    for every path, so a client learns nothing about the server's files. No file named in a
    request is opened (`$schema` neither); a shipped pack is (the check that the watch works)."""
    existing = [str(EXAMPLES / "refund-desk" / "contract.json"), "examples/refund-desk/contract.json", "/etc/hostname",
                str(REPO / "rules" / "tool-hygiene.json"), str(REPO)]
    missing = [str(REPO / "no-such-pack.json"), "no-such-pack.json", "../../no/such/file.json", "agent-invariants"]
    watched = "contract.json,hostname,tool-hygiene.json,no-such-pack.json,file.json,payments.json"

    def contract(extends: str) -> dict[str, Any]:
        return {"$schema": "/etc/hostname", "version": 1, "name": "c", "extends": [extends],
                "rules": [{"id": "x", "kind": "stop_is_final"}]}

    stderr: list[str] = []

    async def scenario() -> None:
        async with session_of([sys.executable, "-c", _WATCHING_OPENS, watched], stderr) as session:
            messages = set()
            for path in existing + missing:
                for tool, arguments in ((VALIDATE, {}), (CHECK, {"events": EVENTS})):
                    result = await session.call_tool(tool, {"contract": contract(path), **arguments})
                    assert result.is_error, (path, result)
                    messages.add(result.content[0].text)
            refusal = ("contract: $.extends[0]: packs can only be named as agent-invariants:<pack> here; "
                       "files are not read")
            assert messages == {refusal}
            shipped = await session.call_tool(VALIDATE, {"contract": contract("agent-invariants:payments")})
            assert not shipped.is_error and len(shipped.structured_content["contract"]["rules"]) > 1

    run(scenario, seconds=60)
    opened = [line.split(" ", 1)[1] for line in stderr[0].splitlines() if line.startswith("OPENED ")]
    assert [os.path.basename(path) for path in opened] == ["payments.json"], opened


@pytest.mark.slow
def test_a_call_over_the_size_limit_gets_an_error_not_silence(tmp_path: Path) -> None:
    """The SDK's client writes the id first, so even a request too long to decode is answered by id."""
    events = [{"seq": seq, "type": "tool.call", "tool": "t", "args": {"text": "x" * 400}} for seq in range(90_000)]
    assert len(json.dumps(events)) > MAX_REQUEST_BYTES

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            with pytest.raises(MCPError, match="over the limit of 33,554,432 per request") as refused:
                await session.call_tool(SUMMARIZE, {"events": events})
            assert refused.value.error.code == -32600
            result, _ = await timed_call(session, SUMMARIZE, {"events": events[:1000]})
            assert result.structured_content["events"] == 1000

    run(scenario, seconds=120)


@pytest.mark.slow
def test_hostile_calls_take_seconds_and_bounded_memory(tmp_path: Path) -> None:
    """Calls that once took gigabytes or minutes: quadratically many violations from a 57 KB
    request, globs full of `*`, and 100,000 events of long strings (25 MB, near the limit)."""
    stops = [{"seq": seq, "type": "control.stop"} for seq in range(2000)]
    stop_rule = {"version": 1, "name": "stops", "rules": [{"id": "stop", "kind": "stop_is_final"}]}
    stars = {"version": 1, "name": "stars", "rules": [{"id": f"g{n}", "kind": "deny_tool", "tool": "*a" * 120 + "*b"}
                                                      for n in range(50)]}
    long_tools = [{"seq": seq, "type": "tool.call", "tool": "a" * 500} for seq in range(2000)]
    many = [{"seq": seq, "type": "tool.call", "tool": f"tool.{seq % 1000}", "call_id": "c" * 200}
            for seq in range(100_000)]

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, peak_file):
            result, took = await timed_call(session, CHECK, {"contract": stop_rule, "events": stops})
            report = result.structured_content
            assert (report["error_count"], len(report["violations"]), took < 10) == (1_999_000, 1000, True), took
            result, took = await timed_call(session, CHECK, {"contract": stars, "events": long_tools})
            assert (result.structured_content["passed"], took < 10) == (True, True), took
            result, took = await timed_call(session, SUMMARIZE, {"events": many})
            assert (result.structured_content["tool_calls"], took < 10) == (100_000, True), took
        assert peak_mib(peak_file) < 400, peak_mib(peak_file)

    run(scenario, seconds=120)


@pytest.mark.slow
def test_more_rules_times_events_than_a_call_may_take_is_refused_before_checking(tmp_path: Path) -> None:
    """Time grows with rules times events (each rule is asked about each new kind of event): a
    contract of 10,000 rules against 2,000 calls of different tools took 15 to 30 seconds per call.
    Past `MAX_RULE_EVENTS` the call is refused at once; the command line has no such limit."""
    rules = [{"id": f"r{n}", "kind": "deny_tool", "tool": f"forbidden.{n}.*"} for n in range(10_000)]
    contract = {"version": 1, "name": "many-rules", "rules": rules}
    calls = [{"seq": seq, "type": "tool.call", "tool": f"tool.{seq}"} for seq in range(2_000)]

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            result, took = await timed_call(session, CHECK, {"contract": contract, "events": calls})
            assert result.is_error and took < 10, took
            assert result.content[0].text == (
                "events: 10,000 rules times 2,000 events is over the limit of 10,000,000 per call; "
                "check it from files with `agent-invariants check`")
            result, _ = await timed_call(session, "agent_invariants_compare_traces",
                                         {"contract": contract, "baseline": calls[:10], "candidate": calls})
            assert result.is_error and result.content[0].text.startswith(
                "baseline and candidate: 10,000 rules times 2,010 events is over the limit")
            # a comparison is one call: the events of its two traces count together (each was
            # counted alone, and a call could take twice the time of the largest check)
            result, _ = await timed_call(session, "agent_invariants_compare_traces",
                                         {"contract": contract, "baseline": calls[:600], "candidate": calls[:600]})
            assert result.is_error and result.content[0].text.startswith(
                "baseline and candidate: 10,000 rules times 1,200 events is over the limit")
            result, _ = await timed_call(session, CHECK, {"contract": contract, "events": calls[:100]})
            assert result.structured_content["passed"] is True

    run(scenario, seconds=120)


def test_a_contains_stops_at_the_steps_a_call_may_take(tmp_path: Path) -> None:
    """A `$contains` tries its tree on each item of an array, work that neither rules nor events
    count: 1,000 rules of 10 nodes (each weighing as one) against a call whose array holds 10,000
    items held the server's one worker for two minutes, far inside rules times events. Each item
    tried is a step of the tree's size; past `MAX_RULE_EVENTS` steps (about ten seconds) the call
    is refused; a check of small calls, or of calls of other tools (no item is tried), runs."""
    match = {"x": {"$contains": {"$any_of": [{"a": {"$gte": 1e9}}, {"b": {"$exists": True}}]}}}
    contract = {"version": 2, "name": "contains", "rules": [
        {"id": f"r{n}", "kind": "tool_args", "tool": "t", "match": match} for n in range(1_000)]}
    large = [{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c1", "args": {"x": [{"a": 1}] * 10_000}}]
    other = [{**large[0], "tool": "u"}]
    small = [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": {"x": [{"b": 1}]}}
             for seq in range(1, 11)]

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            result, took = await timed_call(session, CHECK, {"contract": contract, "events": large})
            assert result.is_error and took < 30, took
            assert result.content[0].text.startswith("contract: checking it took more than 10,000,000 steps, the "
                                                     "limit per call (")
            for events in (small, other):
                result, _ = await timed_call(session, CHECK, {"contract": contract, "events": events})
                assert result.structured_content["passed"] is True

    run(scenario, seconds=180)


def test_a_rule_with_a_large_match_tree_weighs_more_for_a_large_event(tmp_path: Path) -> None:
    """A large tree may be tried on each value of an event (a `$contains` on each item of an
    array, a `find` on each item of a result): one rule of about 450 nodes (weighing as about 900
    plain rules, far inside the limit for a few events) against a call whose array holds 20,000
    items held the server's one worker for 18 s. Such a rule weighs as many times more as the event
    holds JSON values past its first 16: refused at once; against small calls it runs as before."""
    counter = iter(range(10_000))

    def tree(depth: int) -> Any:
        return f"q{next(counter)}" if depth == 0 else {"$any_of": [tree(depth - 1) for _ in range(20)]}
    contract = {"version": 2, "name": "contains", "rules": [
        {"id": "r", "kind": "tool_args", "tool": "t", "match": {"x": {"$contains": tree(2)}}}]}
    large = [{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c1", "args": {"x": ["a"] * 20_000}}]
    small = [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": {"x": ["q0"]}}
             for seq in range(1, 11)]

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            result, took = await timed_call(session, CHECK, {"contract": contract, "events": large})
            assert result.is_error and took < 10, took
            assert result.content[0].text.startswith("events: 1 rule times 1 event (weighing as ")
            result, _ = await timed_call(session, CHECK, {"contract": contract, "events": small})
            assert result.structured_content["passed"] is True

    run(scenario, seconds=120)


def test_a_rule_with_a_large_match_tree_weighs_as_many_rules(tmp_path: Path) -> None:
    """A legal match tree of 8,421 nodes (three levels of 20 `$any_of` branches) is tried node by
    node for each call: 10 such rules against 100 calls took 17 to 37 s, and 400 against 1,000
    grew past 2 GB in ten minutes, far inside rules times events. Such a rule weighs as many plain
    rules as its size says, so the call is refused at once; a small tree passes as before."""
    counter = iter(range(10_000))

    def tree(depth: int) -> Any:
        return f"q{next(counter)}" if depth == 0 else {"$any_of": [tree(depth - 1) for _ in range(20)]}
    large = {"x": tree(3)}
    calls = [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": {"x": "a"}}
             for seq in range(1, 101)]

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            contract = {"version": 2, "name": "large", "rules": [
                {"id": f"r{n}", "kind": "tool_args", "tool": "t", "match": large} for n in range(10)]}
            result, took = await timed_call(session, CHECK, {"contract": contract, "events": calls})
            assert result.is_error and took < 10, took
            assert result.content[0].text.startswith("events: 10 rules times 100 events (weighing as ")
            assert result.content[0].text.endswith(" for the size of their definitions and of the events) is over the "
                                                   "limit of 10,000,000 per call; check it from files with "
                                                   "`agent-invariants check`")
            small = {"version": 2, "name": "small", "rules": [
                {"id": f"r{n}", "kind": "tool_args", "tool": "t", "match": {"x": {"$any_of": ["a", "b"]}}}
                for n in range(10)]}
            result, _ = await timed_call(session, CHECK, {"contract": small, "events": calls})
            assert result.structured_content["passed"] is True

    run(scenario, seconds=120)


def test_a_deep_contract_validated_comes_back_to_the_sdk_client(tmp_path: Path) -> None:
    """validate_contract echoes the normalised contract: a `$literal` nested 194 deep came back in
    a line nested 202 levels, which the SDK's client drops (the call never returned), and one of
    160 made the client's own check of the output schema recurse too deep. The structured content
    nests at most 100 levels; the JSON text holds the whole."""
    def nested(depth: int) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = {"a": value}
        return value

    async def scenario() -> None:
        async with measured_session(tmp_path) as (session, _):
            for depth in (160, 194):   # (the client sends nothing deeper)
                contract = {"version": 2, "name": "deep", "rules": [
                    {"id": "m", "kind": "tool_args", "tool": "t", "match": {"x": {"$literal": nested(depth)}}}]}
                with anyio.fail_after(30):
                    result = await session.call_tool(VALIDATE, {"contract": contract})
                assert (result.is_error, result.structured_content["valid"]) == (False, True), depth
                text = json.loads(result.content[0].text)
                assert text["contract"]["rules"][0]["match"]["x"]["$literal"] == nested(depth)

    run(scenario, seconds=120)


def _lookups_then_calls(count: int) -> list[dict[str, Any]]:
    """`count` lookups with their results (`{"v": i}`), then `count` calls of `t` to check."""
    events: list[dict[str, Any]] = []
    for number in range(count):
        events.append({"type": "tool.call", "tool": "get", "call_id": f"g{number}", "args": {"id": number}})
        events.append({"type": "tool.result", "tool": "get", "call_id": f"g{number}", "ok": True,
                       "result": {"v": number}})
    events += [{"type": "tool.call", "tool": "t", "call_id": f"t{number}", "args": {"x": number, "y": number}}
               for number in range(count)]
    return [{"seq": seq, **event} for seq, event in enumerate(events, 1)]


def _equal_to(reference: dict[str, Any]) -> dict[str, Any]:
    return {"version": 2, "name": "c",
            "rules": [{"id": "r", "kind": "tool_args", "tool": "t", "match": {"x": {"$from_result": reference}}}]}


SCANNING = _equal_to({"tool": "get", "path": "v", "where_result": {"v": {"$arg": "x"}}})
"""Each call of `t` tries every earlier result of `get`: no index serves a `where_result`."""


def test_references_that_try_each_earlier_result_are_stopped_at_the_limit_of_a_call(monkeypatch) -> None:
    """Found by the fourth hunt: a `where_result` that reads the call's args tries each earlier
    result for each call, so a call of 33,000 events (one rule, far inside rules times events) ran
    for hours. The tries are counted; past `MAX_RULE_EVENTS` of them (about ten seconds) the call is
    refused, here with the limit made small. An equality join of `where` is an index: no tries."""
    from agent_invariants.errors import InputError
    from agent_invariants.mcp_server import run_tool

    events = _lookups_then_calls(100)   # 100 calls, each trying 100 results: 10,000 tries
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_RULE_EVENTS", 9_999)
    with pytest.raises(InputError) as refused:
        run_tool(CHECK, {"contract": SCANNING, "events": events})
    assert str(refused.value) == (
        "contract: checking it took more than 9,999 steps, the limit per call (a `$from_result` reference whose "
        "`where_result`, or `where` that is no equality join on an `$arg`, tries each earlier result of its tool for "
        "each call checked; a `$contains`, which tries its tree on each item of an array; a rule that searches a long "
        "text, applies a schema, or lists the keys of a large object or the values of large args for each event it "
        "reads); check it from files with `agent-invariants check`")
    joined = _equal_to({"tool": "get", "path": "v", "where": {"id": {"$arg": "y"}}})
    assert run_tool(CHECK, {"contract": joined, "events": events})[0]["passed"] is True
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_RULE_EVENTS", 10_000)
    assert run_tool(CHECK, {"contract": SCANNING, "events": events})[0]["passed"] is True


def test_tries_are_counted_only_where_they_are_limited() -> None:
    """`budget.limited` counts each kept result a reference tries; outside it nothing is counted,
    and a check of the command line or the library has no limit."""
    from agent_invariants import check_trace
    from agent_invariants.match.budget import TooManySteps, limited

    events = _lookups_then_calls(100)
    with limited(10_000):
        assert check_trace(SCANNING, events).passed
    with limited(9_999), pytest.raises(TooManySteps):
        check_trace(SCANNING, events)
    assert check_trace(SCANNING, _lookups_then_calls(300)).passed   # 90,000 tries


@pytest.mark.slow
def test_a_session_does_not_grow_with_the_calls_it_refuses_or_the_contracts_it_loads(tmp_path: Path) -> None:
    """Found by the MCP hunt of the 22nd review: each refused call kept its arguments (the error,
    raised across the worker thread, sat in a reference cycle with the call's frames, which the
    collector of a server seldom looks at), and each `tool_args` rule loaded kept its compiled
    patterns (kept by id for the checks to come, never let go). Ten refused calls of 20 MB each
    took the server to 690 MB, forty loads of a rule of one `\\pL{100}` added 120 MB (238 MB for all of
    them now)."""
    blob = [{"seq": 1, "type": "tool.call", "tool": "t", "args": {"blob": ["x" * 100] * 200_000}},
            {"seq": -1, "type": "x"}]   # a seq below 0: refused, after the whole request is read
    contract = {"version": 2, "name": "x", "rules": [{"id": "r", "kind": "tool_args", "tool": "x",
                                                      "match": {"a": {"$regex": "\\pL{100}"}}}]}
    loads = [call(n, VALIDATE, {"contract": contract}) for n in range(40)]
    refused = [call(100 + n, SUMMARIZE, {"events": blob}) for n in range(10)]
    done = exchange(tmp_path, [*loads, *refused])
    assert [reply["result"]["isError"] for reply in done.replies] == [False] * 40 + [True] * 10
    assert done.peak_mib < 300, done.peak_mib
