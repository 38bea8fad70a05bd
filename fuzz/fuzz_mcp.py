#!/usr/bin/env python3
"""Fuzz target: arbitrary bytes as what an MCP client writes to `agent-invariants serve`.

Every input is served in-process, as `serve()` serves standard input: `serve_connection` reads the
bytes as JSON-RPC lines (with a request limit of 2 KiB instead of 32 MiB, so that long lines are
refused unread as they would be past 32 MiB), hands the messages to the real server (tools,
prompts, the SDK's dispatch) and collects every reply it writes.

Allowed outcome: the connection ends on its own, having written only JSON-RPC 2.0 replies, each
one line of valid UTF-8. Anything else is a finding: an exception escaping `serve_connection`, a
reply that is no JSON-RPC (or not UTF-8), an internal error (`-32603`, a tool that raised
something other than `InputError`), an error logged by the SDK (it logs what a handler raised),
or a hang (libFuzzer's `-timeout`).

Two oracles:
  * answers: each line gets exactly one reply, except blank lines, valid notifications and valid
    responses, which get none (a request that a later `notifications/cancelled` names may get
    none). The lines are classified here independently, with the standard `json` module;
  * lines: reading in 7-byte chunks with a 64-byte limit gives the lines of `bytes.split`, each
    line over the limit as `Oversized` with its size and the start of the line.

Run:  python fuzz/fuzz_mcp.py fuzz/corpus/mcp -dict=fuzz/mcp.dict -max_total_time=1800 -rss_limit_mb=2048
"""
from __future__ import annotations

import collections
import io
import json
import logging
import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fuzzcommon  # noqa: E402  (not instrumented: it is the harness, not the target)

with atheris.instrument_imports():   # the package loads lazily: import what the tools run, to instrument it
    import anyio
    import mcp.server.lowlevel  # noqa: F401 - the SDK's dispatch too: coverage there teaches the fuzzer the protocol

    from agent_invariants import (  # noqa: F401
        api,
        compare,
        contract,
        engine,
        mcp_prompts,
        mcp_server,
        mcp_transport,
        mcp_wire,
        summary,
    )
    from agent_invariants.mcp_wire import Oversized
    from agent_invariants.render import text  # noqa: F401

SERVER = mcp_server.build_server()
SERVE_LIMIT = 2048   # served with a small request limit, so that inputs reach the oversized path
SMALL_LIMIT = 64
TINY_CHUNK = 7


class _ErrorLog(logging.Handler):
    """Collects what the SDK logs at ERROR or above (it logs every unexpected handler exception)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


ERRORS = _ErrorLog()
logging.getLogger().addHandler(ERRORS)


def _tiny_reads(data: bytes):
    stream = io.BytesIO(data)
    return lambda size: stream.read(min(size, TINY_CHUNK))


def _serve(data: bytes) -> list[bytes]:
    replies: list[bytes] = []

    async def main() -> None:
        with anyio.fail_after(60):
            await mcp_transport.serve_connection(SERVER, io.BytesIO(data).read, replies.append,
                                                 max_request_bytes=SERVE_LIMIT)

    anyio.run(main)
    return replies


# ------------------------------------------------------------------------------------------------
# the answers oracle


def _parsed(line: bytes):
    """The line as JSON (by the standard library), or `_INVALID`."""
    try:
        return json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return _INVALID


_INVALID = object()


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _is_id(value) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _is_notification(message) -> bool:
    return (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str)
            and "id" not in message and isinstance(message.get("params", {}), (dict, type(None))))


def _is_response(message) -> bool:
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "method" not in message
            and _is_id(message.get("id")) and ("result" in message) != ("error" in message)):
        return False
    if "result" in message:
        return isinstance(message["result"], dict)
    error = message["error"]
    code = error.get("code") if isinstance(error, dict) else None
    return isinstance(code, int) and not isinstance(code, bool) and isinstance(error.get("message"), str)


def _depth(value) -> int:
    """How deep JSON containers nest in `value` (an empty one counts as a level)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _expected(lines: list[bytes]) -> tuple[int, int]:
    """(fewest, most) replies the lines must get: one per line that is neither blank (JSON
    whitespace only) nor a valid notification or response within the limits of size and
    nesting, and a request that a later `notifications/cancelled` names may go unanswered."""
    most = cancelled = 0
    requests: collections.Counter[str] = collections.Counter()
    for line in lines:
        if len(line) > SERVE_LIMIT:
            most += 1
            continue
        if not line.strip(b" \t\r"):
            continue
        message = _parsed(line)
        if message is _INVALID or _depth(message) > mcp_wire.MAX_REQUEST_NESTING or not (
                _is_notification(message) or _is_response(message)):
            most += 1
            if isinstance(message, dict) and isinstance(message.get("method"), str) and _is_id(message.get("id")):
                requests[str(message["id"])] += 1
        elif message.get("method") == "notifications/cancelled" and isinstance(message.get("params"), dict):
            cancelled += requests[str(message["params"].get("requestId"))]
    return most - cancelled, most


def _answers_oracle(data: bytes, replies: list[bytes]) -> None:
    for reply in replies:
        message = json.loads(reply.decode("utf-8"))   # strict UTF-8, and JSON
        if message.get("jsonrpc") != "2.0" or ("result" in message) == ("error" in message) or "id" not in message:
            raise _fuzzcommon.OracleMismatch("reply", f"not a JSON-RPC reply: {reply[:200]!r}")
        if "error" in message and message["error"].get("code") == mcp_wire.INTERNAL_ERROR:
            raise _fuzzcommon.OracleMismatch("internal-error", message["error"]["message"][:200])
    fewest, most = _expected(data.split(b"\n"))
    if not fewest <= len(replies) <= most:
        raise _fuzzcommon.OracleMismatch("answers", f"{len(replies)} replies, expected {fewest}..{most}: "
                                                    f"{[reply[:120] for reply in replies]}")


# ------------------------------------------------------------------------------------------------
# the lines oracle


def _lines_oracle(data: bytes) -> None:
    lines = mcp_wire.Lines(_tiny_reads(data), limit=SMALL_LIMIT)
    read = []
    while (line := lines.next()) is not None:
        read.append(line)
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    if len(read) != len(pieces):
        raise _fuzzcommon.OracleMismatch("lines", f"{len(read)} lines read, {len(pieces)} in the data")
    for got, piece in zip(read, pieces, strict=True):
        if len(piece) <= SMALL_LIMIT and got != piece:
            raise _fuzzcommon.OracleMismatch("lines", f"read {got!r}, expected {piece!r}")
        if len(piece) > SMALL_LIMIT and not (isinstance(got, Oversized) and got.size == len(piece)
                                             and got.head and piece.startswith(got.head)):
            raise _fuzzcommon.OracleMismatch("lines", f"read {got!r} for a line of {len(piece)} bytes")


def TestOneInput(data: bytes) -> None:
    ERRORS.records.clear()
    try:
        _lines_oracle(data)
        replies = _serve(data)
        if ERRORS.records:
            record = ERRORS.records[0]
            raise _fuzzcommon.OracleMismatch("logged-error", f"{record.name}: {record.getMessage()[:200]}")
        _answers_oracle(data, replies)
    except Exception as exc:  # noqa: BLE001 - every exception is a finding here
        _fuzzcommon.finding(exc, data, "mcp")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
