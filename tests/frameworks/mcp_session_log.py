"""Real MCP session logs, written by running the official MCP SDK's client and server in one process.

Each scenario connects an SDK `Client` to an `MCPServer` over in-memory streams and logs every JSON-RPC
message that crosses them, one JSON object per line:
`{"ts": "...Z", "session": "s1", "dir": "c2s"|"s2c", "msg": {...}}` (the `mcp-log` import format). The
messages are serialised as the SDK's stdio transport writes them, so a log is what a proxy on a stdio pipe
would have seen. The importer tests read these files instead of hand-written ones, so the importer follows
the SDK's real wire shapes (ids, `isError` results, elicitation, cancellation, the 2026 protocol).

Run `python -m tests.frameworks.mcp_session_log OUTDIR` to write every scenario to
`OUTDIR/<scenario>.mcp.jsonl`.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.client import Client, ClientRequestContext
from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel

EXTENSION = ".mcp.jsonl"

SCENARIOS: tuple[str, ...] = (
    "refund_ok",
    "missing_lookup",
    "tool_raises",
    "forbidden_tool",
    "retries",
    "parallel",
    "unknown_tool",
    "bad_arguments",
    "jsonrpc_error",
    "elicitation_accept",
    "elicitation_decline",
    "cancelled",
    "two_sessions",
    "tools_list",
    "modern_refund_ok",
    "modern_elicitation_accept",
    "modern_elicitation_decline",
    "modern_cancelled",
)

ORDERS = ("A1", "A2")
SLOW_SECONDS = 30.0  # never reached: the client gives up after CANCEL_AFTER_SECONDS and the call is interrupted
CANCEL_AFTER_SECONDS = 0.05


# --- the wire log -------------------------------------------------------------------------------------------------


@dataclass
class WireLog:
    """The records of one log file, in the order the messages crossed the wire (also time order)."""

    records: list[dict[str, Any]] = field(default_factory=list)

    def add(self, session: str, direction: str, message: SessionMessage | Exception) -> None:
        """Record a JSON-RPC message exactly as the stdio transport would write it; transport errors are not."""
        if not isinstance(message, SessionMessage):
            return
        # The stdio transports write `model_dump_json(by_alias=True, exclude_unset=True)`: the same bytes here.
        msg = json.loads(message.message.model_dump_json(by_alias=True, exclude_unset=True))
        self.records.append({"ts": _now(), "session": session, "dir": direction, "msg": msg})

    def lines(self) -> str:
        """The JSONL text of the log."""
        return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in self.records)


def _now() -> str:
    """ISO-8601 UTC with microseconds and a Z suffix, the `ts` format of the mcp-log import."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _LoggedReceive:
    """The client's read stream (server to client), recording each message as the client receives it."""

    def __init__(self, inner: Any, log: WireLog, session: str) -> None:
        self._inner, self._log, self._session = inner, log, session

    async def receive(self) -> SessionMessage | Exception:
        """Receive the next message from the server and record it as `s2c`."""
        message: SessionMessage | Exception = await self._inner.receive()
        self._log.add(self._session, "s2c", message)
        return message

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    def __aiter__(self) -> _LoggedReceive:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _LoggedReceive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        """Anything else (e.g. the sender's context) comes from the wrapped stream."""
        return getattr(self._inner, name)


class _LoggedSend:
    """The client's write stream (client to server), recording each message as the client sends it."""

    def __init__(self, inner: Any, log: WireLog, session: str) -> None:
        self._inner, self._log, self._session = inner, log, session

    async def send(self, message: SessionMessage) -> None:
        """Record the message as `c2s`, then send it to the server."""
        self._log.add(self._session, "c2s", message)
        await self._inner.send(message)

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> _LoggedSend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        """Anything else comes from the wrapped stream."""
        return getattr(self._inner, name)


class LoggedTransport:
    """The SDK's own in-process transport, with both client-side streams recorded.

    `InMemoryTransport` is what `Client(server, mode="legacy")` uses internally; passing it (wrapped) as a
    `Transport` instead keeps the JSON-RPC framing, so the session negotiates as a stdio client would.
    """

    def __init__(self, server: MCPServer, log: WireLog, session: str) -> None:
        self._transport = InMemoryTransport(server)
        self._log, self._session = log, session

    async def __aenter__(self) -> tuple[_LoggedReceive, _LoggedSend]:
        read, send = await self._transport.__aenter__()
        return _LoggedReceive(read, self._log, self._session), _LoggedSend(send, self._log, self._session)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._transport.__aexit__(exc_type, exc, tb)


# --- the server -----------------------------------------------------------------------------------------------------


class Approval(BaseModel):
    """What the refund tool asks the user to confirm."""

    approved: bool


@dataclass(frozen=True)
class ServerOptions:
    """How a scenario's server differs from the plain shop server."""

    approval: str | None = None  # None, "elicit" (ctx.elicit, mid-call request) or "resolve" (era-adaptive)
    lookup: str = "plain"  # "plain", "slow" (hangs until cancelled) or "protocol_error" (raises MCPError)


# A tool's docstring is its description in `tools/list`, so the tools' docstrings describe them for a model and
# the reasons are comments. The tools are coroutines: the SDK runs plain functions in worker threads, whose
# finishing order (and so the order of the replies to parallel calls) would change from run to run. Unknown
# orders raise, as a real backend would (the tool_raises scenario).
async def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order."""
    if order_id not in ORDERS:
        raise ValueError(f"order {order_id} not found")
    return {"order": order_id, "paid": 10.0, "currency": "EUR"}


# A backend that hangs, so the client gives up and cancels (the cancelled scenarios).
async def slow_lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order."""
    await anyio.sleep(SLOW_SECONDS)
    return await lookup_order(order_id)


# A backend that reports failures as `MCPError`: the reply is a JSON-RPC `error`, not an `isError` result.
async def lookup_order_protocol_error(order_id: str) -> dict[str, Any]:
    """Look up an order."""
    if order_id not in ORDERS:
        raise MCPError(code=types.INVALID_PARAMS, message=f"order {order_id} not found")
    return await lookup_order(order_id)


async def refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    return {"refunded": amount, "order": order_id}


# Approval with `ctx.elicit`: an `elicitation/create` request from the server in the middle of the call.
async def refund_with_elicit(order_id: str, amount: float, ctx: Context) -> dict[str, Any]:
    """Refund an order, once the user approves."""
    answer = await ctx.elicit(f"Refund {amount} EUR on order {order_id}?", Approval)
    if answer.action != "accept" or not answer.data.approved:
        raise ToolError(f"refund of {order_id} was not approved ({answer.action})")
    return await refund(order_id, amount)


def ask_approval(order_id: str, amount: float) -> Elicit[Approval]:
    """The approval question, as a resolver: the SDK sends it mid-call before 2026 and as `inputRequests` after."""
    return Elicit(f"Refund {amount} EUR on order {order_id}?", Approval)


# Approval through the SDK's `Resolve` dependency, which also works under 2026-07-28 (where `ctx.elicit` has no
# back-channel): the question goes out as `inputRequests` and the answer comes back in the retried call.
async def refund_with_resolve(
    order_id: str, amount: float, answer: Annotated[ElicitationResult[Approval], Resolve(ask_approval)]
) -> dict[str, Any]:
    """Refund an order, once the user approves."""
    if answer.action != "accept" or not answer.data.approved:
        raise ToolError(f"refund of {order_id} was not approved ({answer.action})")
    return await refund(order_id, amount)


# The forbidden tool; it only pretends to run the command.
async def shell(cmd: str) -> str:
    """Run a shell command."""
    return f"ran: {cmd}"


LOOKUPS: dict[str, Callable[..., Any]] = {
    "plain": lookup_order,
    "slow": slow_lookup_order,
    "protocol_error": lookup_order_protocol_error,
}

REFUNDS: dict[str | None, Callable[..., Any]] = {
    None: refund,
    "elicit": refund_with_elicit,
    "resolve": refund_with_resolve,
}


def build_server(options: ServerOptions) -> MCPServer:
    """A fresh shop server per session, so no state is shared between sessions or `write` calls."""
    with _root_logging_restored():
        server = MCPServer("shop", version="1.0.0")
    server.add_tool(LOOKUPS[options.lookup], name="lookup_order")
    server.add_tool(REFUNDS[options.approval], name="refund")
    server.add_tool(shell)
    return server


@contextmanager
def _root_logging_restored() -> Iterator[None]:
    """Undo the `logging.basicConfig` that `MCPServer()` runs, so building a server leaves global logging alone."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


# --- the client -----------------------------------------------------------------------------------------------------


def answer_elicitation(action: str) -> Callable[[ClientRequestContext, Any], Awaitable[types.ElicitResult]]:
    """An elicitation callback that always gives the same answer (the user, scripted)."""

    async def callback(context: ClientRequestContext, params: Any) -> types.ElicitResult:
        if action == "accept":
            return types.ElicitResult(action="accept", content={"approved": True})
        return types.ElicitResult(action=action)

    return callback


@dataclass(frozen=True)
class Setup:
    """One session's server options and client behaviour."""

    server: ServerOptions = ServerOptions()
    mode: str = "legacy"  # "legacy": initialize handshake; "auto": server/discover, the 2026-07-28 protocol
    elicitation: str = "accept"


@asynccontextmanager
async def open_client(setup: Setup, log: WireLog, session: str) -> AsyncIterator[Client]:
    """A connected client whose whole session, handshake included, lands in `log` under `session`."""
    transport = LoggedTransport(build_server(setup.server), log, session)
    client = Client(transport, mode=setup.mode, elicitation_callback=answer_elicitation(setup.elicitation))
    async with client:
        yield client


# --- the scenarios --------------------------------------------------------------------------------------------------

Steps = Callable[[Client], Awaitable[None]]


async def refund_flow(client: Client) -> None:
    """Look the order up, then refund it."""
    await client.call_tool("lookup_order", {"order_id": "A1"})
    await client.call_tool("refund", {"order_id": "A1", "amount": 10.0})


async def missing_lookup(client: Client) -> None:
    """Refund without looking the order up first."""
    await client.call_tool("refund", {"order_id": "A1", "amount": 10.0})


async def tool_raises(client: Client) -> None:
    """Look up an order the backend does not know: the tool raises ValueError."""
    await client.call_tool("lookup_order", {"order_id": "A9"})


async def forbidden_tool(client: Client) -> None:
    """Call the forbidden shell tool."""
    await client.call_tool("shell", {"cmd": "rm -rf /tmp/x"})


async def retries(client: Client) -> None:
    """The same lookup three times in a row, one request after the other's reply."""
    for _ in range(3):
        await client.call_tool("lookup_order", {"order_id": "A1"})


async def parallel(client: Client) -> None:
    """Two lookups in flight at once: both requests go out before either reply.

    The tools are listed first: otherwise the client's own validation listing (sent after the first reply) races
    the second reply, and the log's order would change from run to run.
    """
    await client.list_tools()
    async with anyio.create_task_group() as group:
        for order_id in ORDERS:
            group.start_soon(partial(client.call_tool, "lookup_order", {"order_id": order_id}))


async def unknown_tool(client: Client) -> None:
    """Call a tool the server does not have."""
    await client.call_tool("delete_order", {"order_id": "A1"})


async def bad_arguments(client: Client) -> None:
    """Call refund with an amount that is not a number."""
    await client.call_tool("refund", {"order_id": "A1", "amount": "ten"})


async def jsonrpc_error(client: Client) -> None:
    """Look up an unknown order on a server whose tool raises `MCPError`: the client raises it in turn."""
    try:
        await client.call_tool("lookup_order", {"order_id": "A9"})
    except MCPError:
        return
    raise AssertionError("the lookup was expected to fail with a JSON-RPC error")


async def cancelled(client: Client) -> None:
    """A lookup the client gives up on after a short timeout: it sends `notifications/cancelled`."""
    try:
        await client.call_tool("lookup_order", {"order_id": "A1"}, read_timeout_seconds=CANCEL_AFTER_SECONDS)
    except MCPError:
        return
    raise AssertionError("the slow lookup was expected to time out")


async def tools_list(client: Client) -> None:
    """List the tools first, as careful clients do, then look up and refund."""
    await client.list_tools()
    await refund_flow(client)


ONE_SESSION: dict[str, tuple[Setup, Steps]] = {
    "refund_ok": (Setup(), refund_flow),
    "missing_lookup": (Setup(), missing_lookup),
    "tool_raises": (Setup(), tool_raises),
    "forbidden_tool": (Setup(), forbidden_tool),
    "retries": (Setup(), retries),
    "parallel": (Setup(), parallel),
    "unknown_tool": (Setup(), unknown_tool),
    "bad_arguments": (Setup(), bad_arguments),
    "elicitation_accept": (Setup(ServerOptions(approval="elicit")), refund_flow),
    "elicitation_decline": (Setup(ServerOptions(approval="elicit"), elicitation="decline"), refund_flow),
    "jsonrpc_error": (Setup(ServerOptions(lookup="protocol_error")), jsonrpc_error),
    "cancelled": (Setup(ServerOptions(lookup="slow")), cancelled),
    "tools_list": (Setup(), tools_list),
    "modern_refund_ok": (Setup(mode="auto"), refund_flow),
    "modern_elicitation_accept": (Setup(ServerOptions(approval="resolve"), mode="auto"), refund_flow),
    "modern_elicitation_decline": (
        Setup(ServerOptions(approval="resolve"), mode="auto", elicitation="decline"),
        refund_flow,
    ),
    "modern_cancelled": (Setup(ServerOptions(lookup="slow"), mode="auto"), cancelled),
}


async def two_sessions(log: WireLog) -> None:
    """Two clients on two servers (sessions s1 and s2), their steps interleaved; both number ids from 1."""
    async with open_client(Setup(), log, "s1") as first, open_client(Setup(), log, "s2") as second:
        await first.call_tool("lookup_order", {"order_id": "A1"})
        await second.call_tool("lookup_order", {"order_id": "A2"})
        await first.call_tool("refund", {"order_id": "A1", "amount": 10.0})
        await second.call_tool("shell", {"cmd": "rm -rf /tmp/x"})


async def record(scenario: str) -> WireLog:
    """Run one scenario on fresh servers and clients and return its wire log."""
    log = WireLog()
    if scenario == "two_sessions":
        await two_sessions(log)
        return log
    setup, steps = ONE_SESSION[scenario]
    async with open_client(setup, log, "s1") as client:
        await steps(client)
    return log


def write(scenario: str, path: Path) -> None:
    """Write one scenario's session log to `path` (each call runs its own event loop, servers and clients)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    log = anyio.run(record, scenario)
    path.write_text(log.lines(), encoding="utf-8")


def main(argv: list[str]) -> int:
    """Write every scenario to OUTDIR/<scenario>.mcp.jsonl."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tests.frameworks.mcp_session_log OUTDIR\n")
        return 2
    # tool_raises makes the SDK log the tool's traceback at ERROR; the scenario expects it, so keep stderr quiet.
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    outdir = Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        write(scenario, outdir / f"{scenario}{EXTENSION}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
