"""The MCP server's connection: its SDK session on standard input and output, every request answered.

Lines are read here (see `mcp_wire`), not by the SDK's stdio transport: a line that is no
JSON-RPC message is answered with its error at once, the rest go to the SDK's server. Tool calls
run one at a time (in `mcp_server`). When the client closes standard input, the connection
answers the requests it has read, then ends; if the client stops reading, it ends at once.

A client that sends requests and does not read the replies is not read from either, once
`MAX_IN_FLIGHT` requests (or `MAX_IN_FLIGHT_BYTES` of them, or `MAX_CALLS_IN_FLIGHT` tool calls)
wait for their answers: the replies wait on the pipe, the requests on the client's side of it, and
the server's memory stays flat.

The SDK is imported only when serving, so this module imports without the `mcp` extra.
"""
from __future__ import annotations

import collections
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from agent_invariants.mcp_wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_REQUEST_BYTES,
    METHOD_NOT_FOUND,
    Lines,
    RequestError,
    read_message,
    usable_id,
)

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

__all__ = ("MAX_CALLS_IN_FLIGHT", "MAX_IN_FLIGHT", "MAX_IN_FLIGHT_BYTES", "serve_connection", "serve_stdio")

MAX_IN_FLIGHT = 16
"""Requests handed to the SDK and not answered yet, at most; the next line is read once one is."""
MAX_IN_FLIGHT_BYTES = MAX_REQUEST_BYTES
"""Their lines' bytes together, at most (a request alone is always taken, up to its own limit)."""
MAX_CALLS_IN_FLIGHT = 1
"""Of them, tool calls, at most (calls run one at a time: the next is read as the one before is
answered). A call's answer is a whole report, tens of MB for a small request of many rules and
events (100 rules by 100 failing calls: a 56 MB answer, 426 MiB at its peak), and sixteen answers
waiting on a client that does not read held 2.8 GB."""


def serve_stdio(server: Server) -> None:
    """Serve `server` on standard input and output until the client closes its end (and every
    request read has its answer)."""
    import anyio

    with _claimed_stdio() as (wire_in, wire_out):
        anyio.run(serve_connection, server, _reader(wire_in), _writer(wire_out))


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Standard input and output for JSON-RPC alone: while serving, the wire is on private
    descriptors, fd 0 reads nothing and fd 1 writes to standard error, so nothing else in the
    process (a stray print, a library's warning) can take a request or corrupt a reply."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def _reader(fd: int) -> Callable[[int], bytes]:
    """Read up to `size` bytes from `fd`; a descriptor that fails to read ends the input."""

    def read(size: int) -> bytes:
        try:
            return os.read(fd, size)
        except OSError:
            return b""
    return read


def _writer(fd: int) -> Callable[[bytes], None]:
    """Write all of `data` to `fd` (a pipe may take it in parts)."""

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return write


async def serve_connection(server: Server, read: Callable[[int], bytes], write: Callable[[bytes], None], *,
                           max_request_bytes: int = MAX_REQUEST_BYTES) -> None:
    """Serve one connection: JSON-RPC lines from `read(size)` (bytes; empty at the end), replies
    to `write(line)`. Both block, so they run in worker threads. Lines the SDK cannot take are
    answered here (see `read_message`; a line over `max_request_bytes` is never held whole); the
    rest go to `server`. At the end of input the
    connection stays open until every request read has been answered: the SDK would cancel the
    calls still running. A client that stops reading (a broken pipe) ends the connection; a reply
    that cannot be written for another reason (a full disk) ends it too, and its OSError is
    raised at the end."""
    import anyio
    from mcp.shared.message import SessionMessage

    to_server, server_in = anyio.create_memory_object_stream[Any](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    unanswered = _Unanswered()
    failed: list[OSError] = []
    async with anyio.create_task_group() as group:
        group.start_soon(_read_requests, Lines(read, max_request_bytes), to_server, server_out.clone(), unanswered,
                         server.get_request_handler)
        group.start_soon(_write_replies, from_server, write, unanswered, group.cancel_scope, failed)
        async with server_out:
            await server.run(server_in, server_out, server.create_initialization_options())
    if failed:
        raise failed[0]


class _Unanswered:
    """The requests handed to the SDK and not answered yet: by id (ids may repeat), the size of
    each one's line, oldest first.

    Replies this module makes itself (to lines the SDK never saw) go out on the same stream; they
    are told apart by identity, since their id may be that of a request the SDK is still working
    on, and settling it would end the connection before that request is answered."""

    def __init__(self) -> None:
        self._ids: dict[str, collections.deque[tuple[int, bool]]] = {}
        self._count = 0
        self._bytes = 0
        self._calls = 0
        self._changed: Any = None
        self._own: set[int] = set()

    def own(self, reply: Any) -> Any:
        """`reply`, noted as one of ours: writing it settles nothing."""
        self._own.add(id(reply))
        return reply

    def is_own(self, reply: Any) -> bool:
        if id(reply) in self._own:
            self._own.discard(id(reply))
            return True
        return False

    def add(self, request_id: int | str, size: int, call: bool) -> None:
        self._ids.setdefault(str(request_id), collections.deque()).append((size, call))
        self._count += 1
        self._bytes += size
        self._calls += call

    def settle(self, request_id: object) -> None:
        """Answered, or cancelled by the client (then the SDK sends no answer)."""
        key = str(request_id)
        waiting = self._ids.get(key)
        if waiting:
            size, call = waiting.popleft()
            self._count -= 1
            self._bytes -= size
            self._calls -= call
            if not waiting:
                del self._ids[key]
        if self._changed is not None:
            self._changed.set()

    async def room_for(self, size: int, call: bool) -> None:
        """Wait until a request of `size` bytes (a tool call or not) may join the unanswered ones
        (see MAX_IN_FLIGHT and MAX_CALLS_IN_FLIGHT)."""
        while self._count and (self._count >= MAX_IN_FLIGHT or self._bytes + size > MAX_IN_FLIGHT_BYTES
                               or (call and self._calls >= MAX_CALLS_IN_FLIGHT)):
            await self._change()

    async def all_settled(self) -> None:
        while self._count:
            await self._change()

    async def _change(self) -> None:
        import anyio

        self._changed = anyio.Event()
        await self._changed.wait()


async def _read_requests(lines: Lines, to_server: Any, replies: Any, unanswered: _Unanswered,
                         handler: Callable[[str], Any]) -> None:
    """Hand each line to the SDK as a message, or answer it with its error; at the end of input,
    wait for the answers, then close the SDK's input (which ends the connection). `handler` tells
    the methods the server answers (None for one it does not know)."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    started = False
    async with to_server, replies:
        while (read := await anyio.to_thread.run_sync(_next_message, lines, abandon_on_cancel=True)) is not _END:
            item, size = read
            if isinstance(item, types.JSONRPCRequest):
                started = started or item.method == "initialize"
                if not started and item.method not in _BEFORE_INITIALIZE and handler(item.method) is None:
                    item = RequestError(METHOD_NOT_FOUND, "Method not found", item.id, item.method)   # (as the SDK)
                elif not started and item.method not in _BEFORE_INITIALIZE:
                    item = RequestError(INVALID_PARAMS, f"Invalid params: {item.method} before initialize: a "
                                                        "session starts with initialize", item.id)
            if isinstance(item, RequestError):
                reply = SessionMessage(types.jsonrpc_message_adapter.validate_python(item.reply()))
                await replies.send(unanswered.own(reply))
                continue
            if isinstance(item, types.JSONRPCRequest):
                call = item.method == "tools/call"
                await unanswered.room_for(size, call)
                unanswered.add(item.id, size, call)
            elif isinstance(item, types.JSONRPCNotification) and item.method == "notifications/cancelled":
                unanswered.settle((item.params or {}).get("requestId"))
            await to_server.send(SessionMessage(item))
        await unanswered.all_settled()


_END = object()
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})
"""The requests MCP allows before `initialize`; the SDK answers any other one with a message that
names nothing ("Invalid request parameters"), so it is answered here."""


def _next_message(lines: Lines) -> Any:
    """The next message as the SDK's model or a `RequestError` answering the line, with the size of
    the line; or `_END`."""
    import mcp_types as types
    import pydantic

    while True:
        line = lines.next()
        if line is None:
            return _END
        size = len(line) if isinstance(line, bytes) else 0   # (an oversized line is not kept)
        try:
            message = read_message(line)
            if message is None:
                continue
            try:
                return types.jsonrpc_message_adapter.validate_python(message, by_name=False), size
            except pydantic.ValidationError:   # what `_check_envelope` lets through, the SDK takes
                raise RequestError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message",
                                   usable_id(message.get("id"))) from None
        except RequestError as error:
            return error, size


async def _write_replies(from_server: Any, write: Callable[[bytes], None], unanswered: _Unanswered,
                         scope: Any, failed: list[OSError]) -> None:
    """Write each reply as one line; a reply that cannot be written as JSON becomes an internal
    error for its request. A closed pipe ends the connection quietly; any other failure to write
    ends it, noted in `failed`."""
    import anyio
    import mcp_types as types

    async with from_server:
        async for session_message in from_server:
            message = session_message.message
            data = _encoded(message)
            try:
                await anyio.to_thread.run_sync(write, data + b"\n")
            except (BrokenPipeError, ConnectionResetError):   # the client has gone
                scope.cancel()
                return
            except OSError as exc:   # the output itself fails (a full disk, an I/O error)
                failed.append(exc)
                scope.cancel()
                return
            if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) \
                    and not unanswered.is_own(session_message):
                unanswered.settle(message.id)


def _encoded(message: Any) -> bytes:
    try:
        encoded: bytes = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        return encoded
    except ValueError:   # pydantic's serialization error: too deep, or not UTF-8
        request_id = getattr(message, "id", None)
        problem = RequestError(INTERNAL_ERROR, "Internal error: the reply could not be written as JSON",
                               request_id)
        return msgspec.json.encode(problem.reply())
