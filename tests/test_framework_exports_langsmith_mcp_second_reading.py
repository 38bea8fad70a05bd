"""Second reading of spec v2 §7 and §10 points 26-36 on exports made by the real frameworks.

Every trace here is made by running the installed frameworks offline: langchain-core with LangSmith's own
tracer (a scripted chat model, `@tool`-style tools), and the official MCP SDK (a client and a server in one
process over memory streams, every JSON-RPC message logged as `{"ts", "session", "dir", "msg"}`). The
scenarios are ones the shared generators in tests/frameworks/ do not make: a chain and a tool nested inside
a tool, `content_and_artifact`, dict / text / object returns, args handed over as text, the convention in
`extra.metadata.ainv`, one model-side id used twice, an interrupted run, two root runs; MCP progress,
sampling, cancellation, `tools/list`, resources and prompts, elicitation declined and cancelled, invalid
arguments, and two interleaved sessions.
"""
from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tracers.langchain import LangChainTracer
from langchain_core.tracers.schemas import Run
from langsmith._internal._serde import dumps_json
from mcp.client import Client
from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel

import cli_zygote

Event = dict[str, Any]

# --------------------------------------------------------------------------------------------------------------
# LangChain / LangSmith: the generator
# --------------------------------------------------------------------------------------------------------------


class _Sink:
    """Stands in for the LangSmith client: keeps nothing, sends nothing."""

    def __init__(self) -> None:
        self.roots: list[Run] = []

    def create_run(self, **_: Any) -> None:
        """Runs are read from the finished roots instead."""

    def update_run(self, **_: Any) -> None:
        """Runs are read from the finished roots instead."""

    def flush(self) -> None:
        """Nothing is queued."""


class _KeepingTracer(LangChainTracer):
    """LangSmith's own tracer, keeping each finished root run in the sink."""

    def _persist_run(self, run: Run) -> None:
        self.client.roots.append(run)  # type: ignore[attr-defined]


def _run_json(run: Run) -> dict[str, Any]:
    """A run as LangSmith Run JSON with its children nested under `child_runs` in `dotted_order`, serialised
    by the LangSmith client's own serialiser (which writes what JSON cannot hold as its text)."""
    record: dict[str, Any] = json.loads(dumps_json(run.model_dump(exclude={"child_runs"})))
    record["child_runs"] = [_run_json(child) for child in sorted(run.child_runs, key=lambda c: c.dotted_order)]
    return record


class Box:
    """A value a tool returns that is not JSON: its repr must never be evaluated."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Box({self.value!r})"


def _count_words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def _inner_chain(text: str, config: RunnableConfig) -> str:
    """A chain of one step, run inside the summarise tool."""
    shout: RunnableLambda[str, str] = RunnableLambda(lambda s: s.upper())
    return str(shout.with_config(run_name="shout").invoke(text, config))


def _summarise(text: str, config: RunnableConfig) -> str:
    """Summarise a text with an inner chain and an inner tool (child runs of this tool run)."""
    upper = RunnableLambda(_inner_chain).with_config(run_name="inner_chain").invoke(text, config)
    words = StructuredTool.from_function(_count_words, name="count_words").invoke({"text": text}, config)
    return f"{upper} ({words} words)"


def _as_dict(order_id: str) -> dict[str, Any]:
    """Return a dict."""
    return {"order": order_id, "paid": 10.0}


def _as_text(order_id: str) -> str:
    """Return text."""
    return f"order {order_id}"


def _as_object(order_id: str) -> Box:
    """Return a Python object."""
    return Box(order_id)


def _as_repr_text(order_id: str) -> str:
    """Return text that reads like a Python dict."""
    return str({"order": order_id, "ok": True})


def _search(query: str) -> tuple[str, dict[str, Any]]:
    """Search, returning content and an artifact."""
    return f"2 hits for {query}", {"hits": [1, 2]}


def _note(order_id: str) -> str:
    """Echo what the tool was handed."""
    return f"noted {order_id}"


def _lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order": order_id, "paid": 10.0}


def _shell(cmd: str) -> str:
    """Pretend to run a command."""
    return f"ran: {cmd}"


def _refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    return {"refunded": amount, "order": order_id}


def _delegate(task: str, config: RunnableConfig) -> str:
    """A sub-agent: its own model asks for a lookup, run with the args alone (child runs of this tool)."""
    model = GenericFakeChatModel(messages=iter([_ask(_tc("lookup_order", "inner1", order_id=task))]))
    reply = model.invoke([HumanMessage(task)], config)
    assert isinstance(reply, AIMessage)
    lookup = StructuredTool.from_function(_lookup, name="lookup_order")
    return json.dumps(lookup.invoke(reply.tool_calls[0]["args"], config))


def _strict_lookup(order_id: str) -> dict[str, Any]:
    """Look an order up; unknown orders raise."""
    raise ValueError(f"order {order_id} not found")


def _careful(order_id: str, config: RunnableConfig) -> str:
    """Try a strict lookup inside this tool and fall back when it raises."""
    try:
        StructuredTool.from_function(_strict_lookup, name="strict_lookup").invoke({"order_id": order_id}, config)
    except ValueError:
        return "fallback"
    return "found"


def _lc_tools() -> dict[str, BaseTool]:
    tools = [
        StructuredTool.from_function(_careful, name="careful"),
        StructuredTool.from_function(_strict_lookup, name="strict_lookup"),
        StructuredTool.from_function(_delegate, name="delegate"),
        StructuredTool.from_function(_summarise, name="summarise"),
        StructuredTool.from_function(_as_dict, name="as_dict"),
        StructuredTool.from_function(_as_text, name="as_text"),
        StructuredTool.from_function(_as_object, name="as_object"),
        StructuredTool.from_function(_as_repr_text, name="as_repr_text"),
        StructuredTool.from_function(_search, name="search", response_format="content_and_artifact"),
        StructuredTool.from_function(_note, name="note"),
        StructuredTool.from_function(_lookup, name="lookup_order"),
        StructuredTool.from_function(_shell, name="shell"),
        StructuredTool.from_function(_refund, name="refund"),
    ]
    return {tool.name: tool for tool in tools}


def _tc(name: str, call_id: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def _ask(*calls: ToolCall) -> AIMessage:
    return AIMessage(content="", tool_calls=list(calls))


NOTE_TEXTS = ('{"order_id": "A3"}', "plain words", "[1, 2]")
"""What the `inputs` scenario hands the single-input `note` tool as text."""

APPROVAL_AINV: dict[str, Any] = {
    "approval_id": "ap-9", "approval_scope": "refund", "approver": "carol", "args": '{"order_id": "A1"}',
}
OUTCOME_AINV: dict[str, Any] = {"outcome_id": "refund-done", "verdict": "satisfied",
                                "evidence_class": "externally_observed"}


@dataclass
class _Plan:
    """One agent run: the model's replies and how each tool call is handed to its tool."""

    replies: list[AIMessage]
    hand: str = "call"  # "call": the ToolCall (a ToolMessage comes back); "args": the args dict; "text": NOTE_TEXTS
    fail_after_tools: bool = False
    convention: bool = False
    first_only: bool = False  # run only the first tool call of each model turn


def _lc_plans(scenario: str) -> list[_Plan]:
    done = AIMessage(content="all done")
    plans = {
        "shapes": [_Plan([
            _ask(_tc("summarise", "c_sum", text="two words"), _tc("search", "c_search", query="refunds")),
            _ask(_tc("as_dict", "c_d", order_id="A1"), _tc("as_text", "c_t", order_id="A1"),
                 _tc("as_object", "c_o", order_id="A1")),
            _ask(_tc("as_dict", "dup", order_id="A1"), _tc("as_dict", "dup", order_id="A2")),
            done,
        ])],
        "args_only": [_Plan([
            _ask(_tc("lookup_order", "m1", order_id="A1"), _tc("lookup_order", "m2", order_id="A2")),
            _ask(_tc("as_dict", "b1", order_id="A1"), _tc("as_object", "b2", order_id="A1"),
                 _tc("as_repr_text", "b3", order_id="A1")),
            done,
        ], hand="args")],
        "text_input": [_Plan([
            _ask(*(_tc("note", f"n{i}", order_id=text) for i, text in enumerate(NOTE_TEXTS, 1))), done,
        ], hand="text")],
        "convention": [_Plan([_ask(_tc("refund", "r1", order_id="A1", amount=10.0)), AIMessage(content="Refunded.")],
                             convention=True)],
        "delegate": [_Plan([
            _ask(_tc("delegate", "d1", task="A1"), _tc("lookup_order", "o1", order_id="A2")), done,
        ], hand="args")],
        "nearest": [_Plan([
            _ask(_tc("lookup_order", "y1", order_id="A1"), _tc("lookup_order", "y2", order_id="A2")),
            _ask(_tc("lookup_order", "z1", order_id="A3")), done,
        ], hand="args", first_only=True)],
        "errors": [_Plan([
            _ask(_tc("strict_lookup", "e1", order_id="A9"), _tc("careful", "e2", order_id="A9")), done,
        ])],
        "interrupted": [_Plan([_ask(_tc("lookup_order", "l1", order_id="A1")), done], fail_after_tools=True)],
        "two_roots": [
            _Plan([_ask(_tc("lookup_order", "l1", order_id="A1")), AIMessage(content="first")]),
            _Plan([_ask(_tc("shell", "s1", cmd="rm -rf /tmp/x")), AIMessage(content="second")]),
        ],
    }
    return plans[scenario]


class Interrupted(RuntimeError):
    """Raised by the agent to stop a run midway."""


def _convention_before(config: RunnableConfig) -> None:
    grant: Runnable[Any, Any] = RunnableLambda(lambda _: {"approved": True}).with_config(
        run_name="approval.granted", metadata={"ainv": dict(APPROVAL_AINV)}, tags=["review"])
    grant.invoke({"order_id": "A1"}, config)


def _convention_after(config: RunnableConfig) -> None:
    seen: Runnable[Any, Any] = RunnableLambda(lambda _: {"seen": True}).with_config(
        run_name="outcome.observed", metadata={"ainv": dict(OUTCOME_AINV)}, tags=["verifier"])
    seen.invoke({"order_id": "A1"}, config)


def _hand_over(call: ToolCall, plan: _Plan, tool: BaseTool, config: RunnableConfig) -> BaseMessage:
    if plan.hand == "call":
        try:
            message = tool.invoke(call, config)
        except ValueError as exc:
            return ToolMessage(content=f"Error: {exc}", tool_call_id=call["id"], status="error")
        assert isinstance(message, ToolMessage)
        return message
    tool_input: Any = call["args"] if plan.hand == "args" else call["args"]["order_id"]
    output = tool.invoke(tool_input, config)
    return ToolMessage(content=str(output), tool_call_id=call["id"])


def _lc_agent(plan: _Plan) -> Runnable[str, str]:
    tools = _lc_tools()
    model = GenericFakeChatModel(messages=iter(list(plan.replies)))

    def agent(prompt: str, config: RunnableConfig) -> str:
        messages: list[BaseMessage] = [HumanMessage(prompt)]
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return reply.text
            for call in reply.tool_calls[:1] if plan.first_only else reply.tool_calls:
                if plan.convention:
                    _convention_before(config)
                messages.append(_hand_over(call, plan, tools[call["name"]], config))
                if plan.convention:
                    _convention_after(config)
            if plan.fail_after_tools:
                raise Interrupted("interrupted by the user")

    return RunnableLambda(agent).with_config(run_name="agent")


def write_langsmith(scenario: str, path: Path) -> list[dict[str, Any]]:
    """Run a scenario under LangSmith's tracer and write one root run per line; returns the root records."""
    sink = _Sink()
    tracer = _KeepingTracer(client=sink)  # type: ignore[arg-type]
    for plan in _lc_plans(scenario):
        with contextlib.suppress(Interrupted):  # the interrupted run is still recorded, with its error
            _lc_agent(plan).invoke("go", {"callbacks": [tracer], "metadata": {"scenario": scenario}})
    roots = [_run_json(root) for root in sink.roots]
    path.write_text("".join(json.dumps(root) + "\n" for root in roots), encoding="utf-8")
    return roots


LC_SCENARIOS = ("shapes", "args_only", "text_input", "convention", "delegate", "nearest", "errors", "interrupted",
                "two_roots")

# --------------------------------------------------------------------------------------------------------------
# MCP: the generator
# --------------------------------------------------------------------------------------------------------------


class _WireLog:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, session: str, direction: str, message: object) -> None:
        if isinstance(message, SessionMessage):
            msg = json.loads(message.message.model_dump_json(by_alias=True, exclude_unset=True))
            ts = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            self.records.append({"ts": ts, "session": session, "dir": direction, "msg": msg})


class _Recv:
    def __init__(self, inner: Any, log: _WireLog, session: str) -> None:
        self._inner, self._log, self._session = inner, log, session

    async def receive(self) -> Any:
        message = await self._inner.receive()
        self._log.add(self._session, "s2c", message)
        return message

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Recv:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Recv:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Send:
    def __init__(self, inner: Any, log: _WireLog, session: str) -> None:
        self._inner, self._log, self._session = inner, log, session

    async def send(self, message: Any) -> None:
        self._log.add(self._session, "c2s", message)
        await self._inner.send(message)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Send:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Transport:
    """The SDK's in-memory transport with the client's two streams logged."""

    def __init__(self, server: MCPServer, log: _WireLog, session: str) -> None:
        self._transport = InMemoryTransport(server)
        self._log, self._session = log, session

    async def __aenter__(self) -> tuple[_Recv, _Send]:
        read, send = await self._transport.__aenter__()
        return _Recv(read, self._log, self._session), _Send(send, self._log, self._session)

    async def __aexit__(self, *exc: Any) -> None:
        await self._transport.__aexit__(*exc)


class Approval(BaseModel):
    approved: bool


def _mcp_server(gate: anyio.Event | None = None) -> MCPServer:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = MCPServer("shop", version="1.0.0")
    root.handlers[:] = handlers
    root.setLevel(level)

    async def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        return {"order": order_id, "paid": 10.0}

    async def export_orders(count: int, ctx: Context) -> str:
        """Export orders, reporting progress."""
        for done in range(1, count + 1):
            await ctx.report_progress(done, count, f"order {done}")
        return f"exported {count}"

    async def summarise(text: str, rounds: int, ctx: Context) -> str:
        """Summarise with the client's model (sampling), `rounds` times."""
        parts = []
        for _ in range(rounds):
            message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
            with warnings.catch_warnings():  # the SDK marks sampling deprecated from protocol 2026-07-28 on
                warnings.simplefilter("ignore")
                reply = await ctx.session.create_message([message], max_tokens=20)
            assert isinstance(reply.content, types.TextContent)
            parts.append(reply.content.text)
        return " ".join(parts)

    async def slow(order_id: str) -> str:
        """Hang until cancelled."""
        await anyio.sleep(30)
        return "late"

    async def refund(order_id: str, amount: float, ctx: Context) -> dict[str, Any]:
        """Refund after the user approves."""
        answer = await ctx.elicit(f"Refund {order_id}?", Approval)
        if answer.action != "accept":
            raise ToolError(f"not approved ({answer.action})")
        return {"refunded": amount}

    async def hold(key: str) -> str:
        """Wait until another session releases the gate."""
        assert gate is not None
        await gate.wait()
        return f"held {key}"

    async def release(key: str) -> str:
        """Open the gate."""
        assert gate is not None
        gate.set()
        return f"released {key}"

    for function in (lookup_order, export_orders, summarise, slow, refund, hold, release):
        server.add_tool(function)

    async def json_text(order_id: str) -> str:
        """Return JSON as text, without structured content."""
        return json.dumps({"order": order_id, "paid": 10.0})

    async def plain_text(order_id: str) -> str:
        """Return plain text, without structured content."""
        return f"order {order_id}"

    server.add_tool(json_text, structured_output=False)
    server.add_tool(plain_text, structured_output=False)

    @server.resource("orders://A1")
    def order_a1() -> str:
        """Order A1."""
        return '{"order": "A1"}'

    @server.prompt()
    def greet(name: str) -> str:
        """A greeting."""
        return f"Hello {name}"

    return server


async def _sampled(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="short"),
                                     model="scripted")


def _elicit_answers(*actions: Literal["accept", "decline", "cancel"]) -> Any:
    pending = iter(actions)

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        action = next(pending)
        return types.ElicitResult(action=action, content={"approved": True} if action == "accept" else None)

    return answer


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


async def _mcp_session(log: _WireLog) -> None:
    """One session: a listing, progress, resources and prompts, a cancelled call, invalid arguments,
    and two elicitations (declined, then cancelled)."""
    transport = _Transport(_mcp_server(), log, "s1")
    async with Client(transport, mode="legacy", elicitation_callback=_elicit_answers("decline", "cancel")) as client:
        await client.list_tools()
        await client.call_tool("export_orders", {"count": 2}, progress_callback=_no_progress)
        await client.read_resource("orders://A1")
        await client.get_prompt("greet", {"name": "Ann"})
        with pytest.raises(MCPError):
            await client.call_tool("slow", {"order_id": "A1"}, read_timeout_seconds=0.05)
        await client.call_tool("lookup_order", {"order_id": 5})
        await client.call_tool("refund", {"order_id": "A1", "amount": 10.0})
        await client.call_tool("refund", {"order_id": "A2", "amount": 10.0})


async def _mcp_sampling(log: _WireLog) -> None:
    """The server asks the client's model twice inside one call: its request ids 1 and 2 collide with the
    client's `initialize` (1) and the pending `tools/call` (2)."""
    transport = _Transport(_mcp_server(), log, "s1")
    async with Client(transport, mode="legacy", sampling_callback=_sampled) as client:
        await client.call_tool("summarise", {"text": "a long text", "rounds": 2})


async def _mcp_two(log: _WireLog) -> None:
    """Two clients on two servers sharing a gate: s1's call is in flight while s2's runs."""
    gate = anyio.Event()
    async with (Client(_Transport(_mcp_server(gate), log, "s1"), mode="legacy") as first,
                Client(_Transport(_mcp_server(gate), log, "s2"), mode="legacy") as second):
        await first.list_tools()
        await second.list_tools()
        async with anyio.create_task_group() as group:
            group.start_soon(first.call_tool, "hold", {"key": "k1"})
            await anyio.sleep(0.02)
            await second.call_tool("release", {"key": "k2"})


async def _mcp_content(log: _WireLog) -> None:
    """Tools whose reply carries only text `content` (no `structuredContent`)."""
    async with Client(_Transport(_mcp_server(), log, "s1"), mode="legacy") as client:
        await client.call_tool("json_text", {"order_id": "A1"})
        await client.call_tool("plain_text", {"order_id": "A1"})


async def _mcp_approved(log: _WireLog) -> None:
    """A lookup, then a refund whose elicitation the user accepts."""
    transport = _Transport(_mcp_server(), log, "s1")
    async with Client(transport, mode="legacy", elicitation_callback=_elicit_answers("accept")) as client:
        await client.call_tool("lookup_order", {"order_id": "A1"})
        await client.call_tool("refund", {"order_id": "A1", "amount": 10.0})


MCP_SCENARIOS = {"session": _mcp_session, "sampling": _mcp_sampling, "two": _mcp_two, "content": _mcp_content,
                 "approved": _mcp_approved}


def write_mcp(scenario: str, path: Path) -> list[dict[str, Any]]:
    """Run a scenario and write its wire log; returns the records."""
    log = _WireLog()
    anyio.run(MCP_SCENARIOS[scenario], log)
    path.write_text("".join(json.dumps(record) + "\n" for record in log.records), encoding="utf-8")
    return log.records


# --------------------------------------------------------------------------------------------------------------
# Running the CLI once per scenario
# --------------------------------------------------------------------------------------------------------------


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", *args], folder))


@dataclass
class Export:
    """A generated export: its file, the framework's own records, and `convert`'s events."""

    folder: Path
    name: str
    records: list[dict[str, Any]]
    events: list[Event]


def _convert(folder: Path, name: str, fmt: str, *extra: str) -> list[Event]:
    result = _cli(folder, "convert", "--from", fmt, name, *extra)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fw_exports")


@pytest.fixture(scope="module")
def langsmith(folder: Path) -> dict[str, Export]:
    exports = {}
    for scenario in LC_SCENARIOS:
        name = f"{scenario}.runs.jsonl"
        records = write_langsmith(scenario, folder / name)
        events = _convert(folder, name, "langsmith", "--run", records[0]["id"]) if scenario == "two_roots" \
            else _convert(folder, name, "langsmith")
        exports[scenario] = Export(folder, name, records, events)
    return exports


@pytest.fixture(scope="module")
def mcp(folder: Path) -> dict[str, Export]:
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    exports = {}
    for scenario in MCP_SCENARIOS:
        name = f"{scenario}.mcp.jsonl"
        records = write_mcp(scenario, folder / name)
        events = _convert(folder, name, "mcp-log", "--run", "s1") if scenario == "two" \
            else _convert(folder, name, "mcp-log")
        exports[scenario] = Export(folder, name, records, events)
    return exports


def _types(events: list[Event]) -> list[str]:
    return [event["type"] for event in events]


def _calls(events: list[Event], tool: str | None = None) -> list[Event]:
    return [e for e in events if e["type"] == "tool.call" and (tool is None or e.get("tool") == tool)]


def _result_of(events: list[Event], call: Event) -> Event:
    found = [e for e in events if e["type"] == "tool.result" and e.get("call_id") == call["call_id"]]
    assert len(found) == 1, found
    return found[0]


def _only(events: list[Event], tool: str) -> Event:
    found = _calls(events, tool)
    assert len(found) == 1, found
    return found[0]


def _walk(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield record
    for child in record.get("child_runs") or []:
        yield from _walk(child)


def _run_named(export: Export, name: str, index: int = 0) -> dict[str, Any]:
    runs = [run for root in export.records for run in _walk(root) if run["name"] == name]
    return runs[index]


def _check(export: Export, rules: list[dict[str, Any]], *extra: str, fmt: str = "auto"
           ) -> tuple[int, dict[str, Any], str]:
    contract = export.folder / f"{export.name}.contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "spec", "rules": rules}), encoding="utf-8")
    result = _cli(export.folder, "check", "--contract", contract.name, "--trace", export.name,
                  "--input-format", fmt, "--format", "json", *extra)
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, report, result.stderr


def _codes(report: dict[str, Any]) -> list[str]:
    return [violation["code"] for violation in report["violations"]]


def _native_check(export: Export, events: list[Event], rules: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    native = export.folder / f"{export.name}.native.jsonl"
    native.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    contract = export.folder / f"{export.name}.native-contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "spec", "rules": rules}), encoding="utf-8")
    result = _cli(export.folder, "check", "--contract", contract.name, "--trace", native.name, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


# --------------------------------------------------------------------------------------------------------------
# LangSmith: common rules of §7
# --------------------------------------------------------------------------------------------------------------


def test_langsmith_run_bounds_and_seq(langsmith: dict[str, Export]) -> None:
    """§7: events get seq 1..n; the root becomes run.start and run.completed; root outputs → output."""
    events = langsmith["shapes"].events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "run.start" and events[-1]["type"] == "run.completed"
    root = langsmith["shapes"].records[0]
    assert events[-1]["output"] == root["outputs"]["output"] == "all done"
    assert {e["run_id"] for e in events} == {root["id"]}


def test_langsmith_source_provenance(langsmith: dict[str, Export]) -> None:
    """§7: `data.source` holds {format, file, line, span_id}; the span is the tool run's id."""
    export = langsmith["shapes"]
    call = _only(export.events, "search")
    run = _run_named(export, "search")
    assert call["data"]["source"] == {"format": "langsmith", "file": export.name, "line": 1, "span_id": run["id"]}
    assert _result_of(export.events, call)["data"]["source"]["span_id"] == run["id"]


def test_langsmith_times_kept_to_microsecond(langsmith: dict[str, Export]) -> None:
    """§7 / point 36: ISO times (LangSmith) are kept to the microsecond; start → call, end → result;
    duration_ms = end − start."""
    export = langsmith["shapes"]
    call = _only(export.events, "search")
    run = _run_named(export, "search")
    start = datetime.fromisoformat(run["start_time"])
    end = datetime.fromisoformat(run["end_time"])
    assert datetime.fromisoformat(call["time"].replace("Z", "+00:00")).replace(tzinfo=None) == start.replace(
        tzinfo=None)
    result = _result_of(export.events, call)
    assert datetime.fromisoformat(result["time"].replace("Z", "+00:00")).replace(tzinfo=None) == end.replace(
        tzinfo=None)
    assert result["duration_ms"] == pytest.approx((end - start).total_seconds() * 1000, abs=1e-6)


def test_langsmith_events_ordered_by_time(langsmith: dict[str, Export]) -> None:
    """§7: events are ordered by time."""
    for export in langsmith.values():
        times = [e["time"] for e in export.events]
        assert times == sorted(times), export.name


# --------------------------------------------------------------------------------------------------------------
# LangSmith: nested runs, artifacts, return shapes, repeated ids
# --------------------------------------------------------------------------------------------------------------


def test_chain_nested_inside_tool_is_not_a_call(langsmith: dict[str, Export]) -> None:
    """§7: tool steps are recognised only by explicit markers (`run_type=tool`): the chain runs inside
    a tool run make no events."""
    export = langsmith["shapes"]
    assert _run_named(export, "inner_chain")["run_type"] == "chain"
    assert {e.get("tool") for e in _calls(export.events)} == {
        "summarise", "count_words", "search", "as_dict", "as_text", "as_object"}
    assert not [e for e in export.events if e.get("tool") in ("inner_chain", "shout")]


def test_tool_nested_inside_tool_is_a_call_between_outer_call_and_result(langsmith: dict[str, Export]) -> None:
    """§7: `run_type=tool` at any depth is a call; ordered by time, the inner call and result fall
    between the outer call and its result."""
    export = langsmith["shapes"]
    outer = _only(export.events, "summarise")
    inner = _only(export.events, "count_words")
    assert outer["seq"] < inner["seq"] < _result_of(export.events, inner)["seq"] < _result_of(
        export.events, outer)["seq"]
    assert inner["args"] == {"text": "two words"}
    assert _result_of(export.events, inner)["result"] == 2


def test_nested_tool_without_any_id_gets_its_run_id(langsmith: dict[str, Export]) -> None:
    """Point 27/28: no ToolMessage, no `extra.tool_call_id`, no model call of that name → the run id."""
    export = langsmith["shapes"]
    inner = _only(export.events, "count_words")
    assert inner["call_id"] == _run_named(export, "count_words")["id"]


def test_outer_tool_result_is_the_tool_message_content(langsmith: dict[str, Export]) -> None:
    """Point 27: the result is `outputs.output.content` when `outputs.output` is a ToolMessage."""
    export = langsmith["shapes"]
    call = _only(export.events, "summarise")
    assert call["call_id"] == "c_sum"
    assert _result_of(export.events, call)["result"] == "TWO WORDS (2 words)"
    assert _result_of(export.events, call)["ok"] is True


def test_content_and_artifact_result_is_the_content(langsmith: dict[str, Export]) -> None:
    """Point 27: a `content_and_artifact` tool returns a ToolMessage; the result is its `content`, not the
    artifact."""
    export = langsmith["shapes"]
    output = _run_named(export, "search")["outputs"]["output"]
    assert output["type"] == "tool" and output["artifact"] == {"hits": [1, 2]}
    call = _only(export.events, "search")
    assert (call["call_id"], call["args"]) == ("c_search", {"query": "refunds"})
    assert _result_of(export.events, call)["result"] == "2 hits for refunds"


def test_dict_return_in_tool_message_is_parsed(langsmith: dict[str, Export]) -> None:
    """Point 26: a ToolMessage's content that is valid JSON becomes `result` parsed."""
    export = langsmith["shapes"]
    assert isinstance(_run_named(export, "as_dict")["outputs"]["output"]["content"], str)
    result = _result_of(export.events, _calls(export.events, "as_dict")[0])
    assert result["result"] == {"order": "A1", "paid": 10.0}


def test_text_return_stays_text(langsmith: dict[str, Export]) -> None:
    """Point 26: text that is not JSON stays the string itself."""
    export = langsmith["shapes"]
    assert _result_of(export.events, _only(export.events, "as_text"))["result"] == "order A1"


def test_object_return_repr_is_kept_as_string(langsmith: dict[str, Export]) -> None:
    """Point 26: a Python repr is kept as a string and also copied to `data.raw_result`; never evaluated."""
    export = langsmith["shapes"]
    result = _result_of(export.events, _only(export.events, "as_object"))
    assert result["result"] == "Box('A1')"
    assert result["data"]["raw_result"] == "Box('A1')"
    assert result["ok"] is True


def test_same_model_id_twice_gets_tilde_suffix(langsmith: dict[str, Export]) -> None:
    """§7 / point 28: a repeated id gets `~n`, and the original goes to `data.native_call_id`."""
    export = langsmith["shapes"]
    dup = [e for e in _calls(export.events, "as_dict") if e["call_id"].startswith("dup")]
    assert [e["call_id"] for e in dup] == ["dup", "dup~2"]
    assert [e["args"] for e in dup] == [{"order_id": "A1"}, {"order_id": "A2"}]
    assert "native_call_id" not in dup[0]["data"]
    assert dup[1]["data"]["native_call_id"] == "dup"


def test_repeated_id_results_pair_with_their_own_call(langsmith: dict[str, Export]) -> None:
    """§7 / point 3: each result carries its call's (suffixed) id, so pairing is one-to-one."""
    events = langsmith["shapes"].events
    second = [e for e in _calls(events, "as_dict") if e["call_id"] == "dup~2"][0]
    result = _result_of(events, second)
    assert result["result"] == {"order": "A2", "paid": 10.0}
    assert result["data"]["native_call_id"] == "dup"


def test_assistant_text_becomes_agent_message(langsmith: dict[str, Export]) -> None:
    """§7 langsmith row: assistant messages → `agent.message`; model inputs never make calls."""
    events = langsmith["shapes"].events
    messages = [e for e in events if e["type"] == "agent.message"]
    assert [m["data"]["text"] for m in messages] == ["all done"]
    assert len(_calls(events)) == 8


# --------------------------------------------------------------------------------------------------------------
# LangSmith: tools handed the args object or text (no ToolMessage)
# --------------------------------------------------------------------------------------------------------------


def test_args_only_call_ids_come_from_the_model_by_name_and_order(langsmith: dict[str, Export]) -> None:
    """Point 28: model-side ids come from the nearest earlier LLM run under the same parent, matched by
    tool name and order."""
    events = langsmith["args_only"].events
    assert [(e["call_id"], e["args"]) for e in _calls(events, "lookup_order")] == [
        ("m1", {"order_id": "A1"}), ("m2", {"order_id": "A2"})]
    assert [e["call_id"] for e in _calls(events) if e["tool"] != "lookup_order"] == ["b1", "b2", "b3"]


def test_bare_dict_output_is_the_result(langsmith: dict[str, Export]) -> None:
    """Point 27: without a ToolMessage the result is `outputs.output`."""
    export = langsmith["args_only"]
    assert _run_named(export, "as_dict")["outputs"]["output"] == {"order": "A1", "paid": 10.0}
    assert _result_of(export.events, _only(export.events, "as_dict"))["result"] == {"order": "A1", "paid": 10.0}


def test_bare_object_output_is_never_evaluated(langsmith: dict[str, Export]) -> None:
    """Point 26/27: whatever the tracer wrote for a Python object is taken as is: a string stays a string."""
    export = langsmith["args_only"]
    written = _run_named(export, "as_object")["outputs"]["output"]
    result = _result_of(export.events, _only(export.events, "as_object"))
    assert result["result"] == written
    assert result["ok"] is True


def test_python_dict_repr_text_stays_a_string(langsmith: dict[str, Export]) -> None:
    """Point 26: "{'order': 'A1', 'ok': True}" is not JSON: it stays text and is never evaluated."""
    export = langsmith["args_only"]
    result = _result_of(export.events, _only(export.events, "as_repr_text"))
    assert result["result"] == "{'order': 'A1', 'ok': True}"


def test_text_input_holding_json_object_is_parsed_into_args(langsmith: dict[str, Export]) -> None:
    """Point 27: `inputs.input` is the args only when it is a string that parses as a JSON object."""
    export = langsmith["text_input"]
    assert _run_named(export, "note", 0)["inputs"] == {"input": NOTE_TEXTS[0]}
    first = _calls(export.events, "note")[0]
    assert (first["call_id"], first["args"]) == ("n1", {"order_id": "A3"})


def test_text_input_not_json_keeps_inputs_object(langsmith: dict[str, Export]) -> None:
    """Point 27: "a tool run's inputs is the args object" — plain text in `inputs.input` is not parsed,
    so the args are `inputs` itself (reading: {"input": text})."""
    export = langsmith["text_input"]
    second = _calls(export.events, "note")[1]
    assert second["args"] == {"input": "plain words"}


def test_text_input_json_array_is_not_args(langsmith: dict[str, Export]) -> None:
    """Point 27 / §7: a JSON non-object in `inputs.input` is not taken as args (inputs stay the args)."""
    export = langsmith["text_input"]
    third = _calls(export.events, "note")[2]
    assert third["args"] == {"input": "[1, 2]"}


# --------------------------------------------------------------------------------------------------------------
# LangSmith: the convention in extra.metadata.ainv
# --------------------------------------------------------------------------------------------------------------


def test_convention_runs_become_events(langsmith: dict[str, Export]) -> None:
    """§7 mapping profile: a LangSmith run named after one of our event types becomes that event, its
    fields from `extra.metadata.ainv`; `ainv.args` holds JSON (point 36: JSON text or an object)."""
    export = langsmith["convention"]
    assert _run_named(export, "approval.granted")["extra"]["metadata"]["ainv"] == APPROVAL_AINV
    grant = [e for e in export.events if e["type"] == "approval.granted"]
    assert len(grant) == 1
    assert {k: grant[0].get(k) for k in ("approval_id", "approval_scope", "approver", "args")} == {
        "approval_id": "ap-9", "approval_scope": "refund", "approver": "carol", "args": {"order_id": "A1"}}
    outcome = [e for e in export.events if e["type"] == "outcome.observed"]
    assert [(e["outcome_id"], e["verdict"], e["evidence_class"]) for e in outcome] == [
        ("refund-done", "satisfied", "externally_observed")]


def test_convention_event_takes_run_start_time_and_source(langsmith: dict[str, Export]) -> None:
    """Point 36: a span-derived convention event takes the span's start time; §7 data.source names its run."""
    export = langsmith["convention"]
    run = _run_named(export, "approval.granted")
    grant = [e for e in export.events if e["type"] == "approval.granted"][0]
    assert datetime.fromisoformat(grant["time"].replace("Z", "+00:00")).replace(tzinfo=None) == \
        datetime.fromisoformat(run["start_time"]).replace(tzinfo=None)
    assert grant["data"]["source"]["span_id"] == run["id"]
    assert grant["data"]["source"]["line"] == 1


def test_convention_order_grant_call_result_outcome(langsmith: dict[str, Export]) -> None:
    """§7: events ordered by time: grant, then refund call/result, then outcome; the convention runs are
    not tool calls."""
    types_ = [t for t in _types(langsmith["convention"].events) if t != "agent.message"]
    assert types_ == ["run.start", "approval.granted", "tool.call", "tool.result", "outcome.observed",
                      "run.completed"]


def test_convention_verdict_passes(langsmith: dict[str, Export]) -> None:
    """§7 `check --input-format auto`: the grant satisfies require_approval and the outcome the completion
    rule."""
    code, report, stderr = _check(langsmith["convention"], [
        {"id": "approve", "kind": "require_approval", "tool": "refund", "scope": "refund"},
        {"id": "outcome", "kind": "completion_requires_outcome", "outcome_id": "refund-done"},
    ])
    assert code == 0, stderr
    assert report["passed"] is True and report["violations"] == []


# --------------------------------------------------------------------------------------------------------------
# LangSmith: an interrupted run, two roots
# --------------------------------------------------------------------------------------------------------------


def test_interrupted_root_is_run_failed(langsmith: dict[str, Export]) -> None:
    """§7: the root becomes run.failed (`status: failed`) on error; point 31: the error text → `reason`."""
    export = langsmith["interrupted"]
    assert export.records[0]["error"]
    last = export.events[-1]
    assert last["type"] == "run.failed" and last["status"] == "failed"
    assert "interrupted by the user" in last["reason"]
    assert _types(export.events).count("run.completed") == 0


def test_interrupted_run_keeps_completed_tool(langsmith: dict[str, Export]) -> None:
    """§7 / point 27: the tool that finished before the interruption is ok (no `error`)."""
    events = langsmith["interrupted"].events
    call = _only(events, "lookup_order")
    assert call["call_id"] == "l1"
    assert _result_of(events, call)["ok"] is True


def test_interrupted_run_status_verdict(langsmith: dict[str, Export]) -> None:
    """Point 1/2: run_status.mismatch at the terminal (run.failed) with evidence {status, expected}."""
    code, report, _ = _check(langsmith["interrupted"], [{"id": "done", "kind": "run_status", "equals": "completed"}])
    assert code == 1
    violation = report["violations"][0]
    assert violation["code"] == "run_status.mismatch"
    assert violation["evidence"] == {"status": "failed", "expected": "completed"}
    assert violation["event_seq"] == len(langsmith["interrupted"].events)


def test_two_roots_convert_one_run(langsmith: dict[str, Export]) -> None:
    """§7 / point 34: `--run ID` picks one root run."""
    export = langsmith["two_roots"]
    assert len(export.records) == 2
    assert {e["run_id"] for e in export.events} == {export.records[0]["id"]}
    assert [e["tool"] for e in _calls(export.events)] == ["lookup_order"]


def test_two_roots_source_line_is_the_root_line(langsmith: dict[str, Export]) -> None:
    """§7: data.source.line is the line of the record the event came from."""
    export = langsmith["two_roots"]
    second = _convert(export.folder, export.name, "langsmith", "--run", export.records[1]["id"])
    assert {e["data"]["source"]["line"] for e in second} == {2}
    assert [e["tool"] for e in _calls(second)] == ["shell"]


def test_two_roots_convert_without_run_exit_2(langsmith: dict[str, Export]) -> None:
    """§7 / point 34: without `--run`/`--out-dir`, exit 2 and the message lists the run ids and both options."""
    export = langsmith["two_roots"]
    result = _cli(export.folder, "convert", "--from", "langsmith", export.name)
    assert result.returncode == 2 and result.stdout == ""
    for record in export.records:
        assert record["id"] in result.stderr
    assert "--run" in result.stderr and "--out-dir" in result.stderr


def test_two_roots_out_dir_writes_one_file_per_run(langsmith: dict[str, Export]) -> None:
    """§7: `--out-dir` writes each run (README: DIR/<run id>.jsonl)."""
    export = langsmith["two_roots"]
    result = _cli(export.folder, "convert", "--from", "langsmith", export.name, "--out-dir", "lc_runs")
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in (export.folder / "lc_runs").iterdir())
    assert names == sorted(f"{r['id']}.jsonl" for r in export.records)


def test_two_roots_check_without_run_exit_2(langsmith: dict[str, Export]) -> None:
    """Point 34: `check --input-format` on several runs without `--run` is exit 2 listing the run ids."""
    code, report, stderr = _check(langsmith["two_roots"], [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}])
    assert (code, report) == (2, {})
    for record in langsmith["two_roots"].records:
        assert record["id"] in stderr


def test_two_roots_check_run_all_one_section_each(langsmith: dict[str, Export]) -> None:
    """Point 34: `--run all` checks every run as a batch, one section per run id; only the second fails."""
    export = langsmith["two_roots"]
    code, report, stderr = _check(export, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "--run", "all")
    assert code == 1, stderr
    text = json.dumps(report)
    first, second = (record["id"] for record in export.records)
    assert first in text and second in text
    sections = _sections(report)
    assert {run: section["passed"] for run, section in sections.items()} == {first: True, second: False}


def _sections(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The per-run sections of a batch report (`reports`), by their `run`."""
    assert report["schema"] == "agent-invariants/check-batch/v1"
    assert report["traces"] == len(report["reports"])
    return {section["run"]: section for section in report["reports"]}


def test_langsmith_convert_output_is_valid_native(langsmith: dict[str, Export]) -> None:
    """§7: `convert` output passes `agent-invariants check` as native JSONL, same verdict as the import."""
    export = langsmith["shapes"]
    rules = [{"id": "twice", "kind": "tool_calls", "tool": "as_dict", "max": 2}]
    native_code, native = _native_check(export, export.events, rules)
    code, report, _ = _check(export, rules)
    assert (native_code, _codes(native)) == (code, _codes(report)) == (1, ["tool_calls.max"])
    assert native["violations"][0]["event_seq"] == report["violations"][0]["event_seq"]


def test_langsmith_violation_points_at_source_line(langsmith: dict[str, Export]) -> None:
    """§7 data.source: a violation from an import points at the source record's line (README: `file:line`)."""
    code, report, _ = _check(langsmith["shapes"], [{"id": "no-search", "kind": "deny_tool", "tool": "search"}])
    assert code == 1
    violation = report["violations"][0]
    assert violation["code"] == "deny_tool.denied" and violation["line"] == 1
    assert violation["event_seq"] == _only(langsmith["shapes"].events, "search")["seq"]


# --------------------------------------------------------------------------------------------------------------
# MCP
# --------------------------------------------------------------------------------------------------------------


def _line_of(export: Export, predicate: Any) -> int:
    lines = [i for i, record in enumerate(export.records, 1) if predicate(record)]
    assert len(lines) == 1, lines
    return lines[0]


def _request_line(export: Export, method: str, name: str | None = None, session: str = "s1") -> int:
    return _line_of(export, lambda r: r["session"] == session and r["msg"].get("method") == method and (
        name is None or r["msg"].get("params", {}).get("name") == name))


def _msg_id(export: Export, line: int) -> Any:
    return export.records[line - 1]["msg"]["id"]


def test_mcp_initialize_starts_run_end_of_log_completes(mcp: dict[str, Export]) -> None:
    """§7 mcp-log: `initialize` → run.start; end of log → run.completed; run id = session (point 35)."""
    export = mcp["session"]
    events = export.events
    assert events[0]["type"] == "run.start" and events[-1]["type"] == "run.completed"
    assert events[0]["data"]["source"]["line"] == _request_line(export, "initialize")
    assert {e["run_id"] for e in events} == {"s1"}
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_mcp_tools_list_is_listing_not_call(mcp: dict[str, Export]) -> None:
    """§7: `tools/list` → `tool.listing`; a listed tool never called makes no tool.call."""
    events = mcp["session"].events
    assert _types(events).count("tool.listing") == 1
    called = {e["tool"] for e in _calls(events)}
    assert "summarise" not in called and "hold" not in called
    assert called == {"export_orders", "slow", "lookup_order", "refund"}


def test_mcp_progress_notifications_make_no_events(mcp: dict[str, Export]) -> None:
    """§7: only explicit markers make events: progress during a call changes neither call nor result."""
    export = mcp["session"]
    assert any(r["msg"].get("method") == "notifications/progress" for r in export.records)
    call = _only(export.events, "export_orders")
    result = _result_of(export.events, call)
    assert result["seq"] == call["seq"] + 1
    assert result["ok"] is True


def test_mcp_call_id_args_time_and_source(mcp: dict[str, Export]) -> None:
    """§7 mcp-log row: call_id `<session>:<id>`, args `params.arguments`; point 36: ts kept to the µs;
    data.source {format, file, line}."""
    export = mcp["session"]
    line = _request_line(export, "tools/call", "export_orders")
    call = _only(export.events, "export_orders")
    assert call["call_id"] == f"s1:{_msg_id(export, line)}"
    assert call["args"] == {"count": 2}
    assert call["time"] == export.records[line - 1]["ts"]
    assert {k: call["data"]["source"][k] for k in ("format", "file", "line")} == {
        "format": "mcp-log", "file": export.name, "line": line}


def test_mcp_result_prefers_structured_content(mcp: dict[str, Export]) -> None:
    """§7: the result is `structuredContent`, else `content`; the reply's line is the result's source."""
    export = mcp["session"]
    call = _only(export.events, "export_orders")
    result = _result_of(export.events, call)
    reply_line = _line_of(export, lambda r: r["dir"] == "s2c" and r["msg"].get("id") == int(
        call["call_id"].split(":")[1]) and "result" in r["msg"])
    assert result["result"] == export.records[reply_line - 1]["msg"]["result"]["structuredContent"]
    assert result["data"]["source"]["line"] == reply_line


def test_mcp_resources_and_prompts_are_not_calls(mcp: dict[str, Export]) -> None:
    """§7: tool steps only from `tools/call`: resources/read and prompts/get make no tool events."""
    export = mcp["session"]
    assert _request_line(export, "resources/read") and _request_line(export, "prompts/get")
    assert not [e for e in export.events if e.get("tool") in ("greet", "orders://A1")]
    assert len(_calls(export.events)) == 5


def test_mcp_cancelled_call_has_no_result(mcp: dict[str, Export]) -> None:
    """§7 / point 35: `notifications/cancelled` → `tool.cancelled`; a cancelled call gets no result."""
    export = mcp["session"]
    call = _only(export.events, "slow")
    cancelled = [e for e in export.events if e["type"] == "tool.cancelled"]
    assert len(cancelled) == 1 and cancelled[0]["call_id"] == call["call_id"]
    assert cancelled[0]["data"]["source"]["line"] == _request_line(export, "notifications/cancelled")
    assert not [e for e in export.events if e["type"] == "tool.result" and e["call_id"] == call["call_id"]]


def test_mcp_invalid_arguments_is_error_result(mcp: dict[str, Export]) -> None:
    """Point 35: bad arguments arrive as `isError: true` results: ok false (no structuredContent: content)."""
    export = mcp["session"]
    call = _only(export.events, "lookup_order")
    assert call["args"] == {"order_id": 5}
    result = _result_of(export.events, call)
    assert result["ok"] is False
    assert "validation error" in json.dumps(result["result"])


def test_mcp_elicitation_declined_and_cancelled_are_not_approvals(mcp: dict[str, Export]) -> None:
    """§7: accepted `elicitation/create` → approval.granted; else `approved: false`, tied to the pending call."""
    events = mcp["session"].events
    grants = [e for e in events if e["type"] == "approval.granted"]
    refunds = _calls(events, "refund")
    assert [(g["call_id"], g["approved"]) for g in grants] == [(c["call_id"], False) for c in refunds]


def test_mcp_elicitation_inside_call_not_hoisted(mcp: dict[str, Export]) -> None:
    """§7: elicitation happens inside the call; nothing is reordered without `hoist_elicitation`."""
    events = mcp["session"].events
    for call in _calls(events, "refund"):
        grant = [e for e in events if e["type"] == "approval.granted" and e["call_id"] == call["call_id"]][0]
        result = _result_of(events, call)
        assert call["seq"] < grant["seq"] < result["seq"]
        assert result["ok"] is False
        assert "hoisted" not in grant["data"]


def test_mcp_session_verdict(mcp: dict[str, Export]) -> None:
    """§7 check --input-format auto: denied call at its seq; no successful lookup (bad args are ok:false);
    declined elicitations are no approval."""
    export = mcp["session"]
    code, report, stderr = _check(export, [
        {"id": "no-slow", "kind": "deny_tool", "tool": "slow"},
        {"id": "lookups", "kind": "tool_calls", "tool": "lookup_order", "count": "successful", "min": 1},
        {"id": "approve", "kind": "require_approval", "tool": "refund"},
    ])
    assert code == 1, stderr
    assert _codes(report) == ["deny_tool.denied", "tool_calls.min", "require_approval.missing",
                              "require_approval.missing"]
    assert report["violations"][0]["event_seq"] == _only(export.events, "slow")["seq"]
    assert report["violations"][0]["line"] == _request_line(export, "tools/call", "slow")


def test_mcp_sampling_request_is_not_a_call(mcp: dict[str, Export]) -> None:
    """Point 35: a server request (sampling) is in its own id space; it is no tool call."""
    export = mcp["sampling"]
    sampling = [r for r in export.records if r["msg"].get("method") == "sampling/createMessage"]
    assert [r["msg"]["id"] for r in sampling] == [1, 2]
    assert [e["tool"] for e in _calls(export.events)] == ["summarise"]


def test_mcp_sampling_reply_does_not_answer_the_client_call(mcp: dict[str, Export]) -> None:
    """Point 35: pair on (session, requesting side, id): the client's reply to the server's request 2 is
    not the result of the client's pending `tools/call` 2."""
    export = mcp["sampling"]
    call = _only(export.events, "summarise")
    line = _request_line(export, "tools/call", "summarise")
    assert call["call_id"] == f"s1:{_msg_id(export, line)}" == "s1:2"
    results = [e for e in export.events if e["type"] == "tool.result"]
    assert len(results) == 1
    assert results[0]["result"] == {"result": "short short"}
    assert results[0]["ok"] is True
    reply_line = _line_of(export, lambda r: r["dir"] == "s2c" and r["msg"].get("id") == 2 and "result" in r["msg"])
    assert results[0]["data"]["source"]["line"] == reply_line


def test_mcp_two_sessions_convert_one(mcp: dict[str, Export]) -> None:
    """Point 35: each session is its own run (run id = session); the held call's result is its own reply."""
    export = mcp["two"]
    assert {e["run_id"] for e in export.events} == {"s1"}
    call = _only(export.events, "hold")
    assert call["call_id"].startswith("s1:")
    assert _result_of(export.events, call)["result"] == {"result": "held k1"}
    assert not _calls(export.events, "release")


def test_mcp_two_sessions_interleave_and_share_ids(mcp: dict[str, Export]) -> None:
    """Point 35: both sessions number their requests alike; the s2 run pairs its own reply."""
    export = mcp["two"]
    hold_id = _msg_id(export, _request_line(export, "tools/call", "hold", "s1"))
    release_id = _msg_id(export, _request_line(export, "tools/call", "release", "s2"))
    assert hold_id == release_id
    s2 = _convert(export.folder, export.name, "mcp-log", "--run", "s2")
    assert {e["run_id"] for e in s2} == {"s2"}
    call = _only(s2, "release")
    assert call["call_id"] == f"s2:{release_id}"
    assert _result_of(s2, call)["result"] == {"result": "released k2"}
    assert s2[0]["type"] == "run.start" and s2[-1]["type"] == "run.completed"


def test_mcp_two_sessions_check_without_run_exit_2(mcp: dict[str, Export]) -> None:
    """Point 34: an input with several runs without `--run` is exit 2; the message lists the run ids."""
    code, report, stderr = _check(mcp["two"], [{"id": "no-hold", "kind": "deny_tool", "tool": "hold"}])
    assert (code, report) == (2, {})
    assert "s1" in stderr and "s2" in stderr and "--run" in stderr


def test_mcp_two_sessions_check_run_all(mcp: dict[str, Export]) -> None:
    """Point 34: `--run all`: one section per session; only s1 called `hold`."""
    code, report, stderr = _check(mcp["two"], [{"id": "no-hold", "kind": "deny_tool", "tool": "hold"}],
                                  "--run", "all")
    assert code == 1, stderr
    sections = _sections(report)
    assert {run: section["passed"] for run, section in sections.items()} == {"s1": False, "s2": True}


def test_mcp_convert_output_is_valid_native(mcp: dict[str, Export]) -> None:
    """§7: `convert` output passes `check` as native JSONL with the same verdict and located violation."""
    export = mcp["session"]
    rules = [{"id": "no-slow", "kind": "deny_tool", "tool": "slow"}]
    native_code, native = _native_check(export, export.events, rules)
    code, report, _ = _check(export, rules, fmt="mcp-log")
    assert (native_code, _codes(native)) == (code, _codes(report)) == (1, ["deny_tool.denied"])
    assert native["violations"][0]["event_seq"] == report["violations"][0]["event_seq"]


def test_mcp_two_sessions_convert_out_dir(mcp: dict[str, Export]) -> None:
    """Point 34: `convert --out-dir` writes every session as its own run (README: DIR/<run id>.jsonl)."""
    export = mcp["two"]
    result = _cli(export.folder, "convert", "--from", "mcp-log", export.name, "--out-dir", "mcp_runs")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (export.folder / "mcp_runs").iterdir()) == ["s1.jsonl", "s2.jsonl"]


def test_mcp_two_sessions_summary_run_all(mcp: dict[str, Export]) -> None:
    """Point 34: `summary` with `--input-format` takes `--run`; `all` gives each run's counts by run id
    (README)."""
    export = mcp["two"]
    result = _cli(export.folder, "summary", "--trace", export.name, "--input-format", "auto", "--run", "all")
    assert result.returncode == 0, result.stderr
    counts = json.loads(result.stdout)
    assert {run: c["tools"] for run, c in counts.items()} == {"s1": ["hold"], "s2": ["release"]}
    one = _cli(export.folder, "summary", "--trace", export.name, "--input-format", "mcp-log", "--run", "s2")
    assert json.loads(one.stdout) == counts["s2"]


def test_mcp_durations_from_iso_times(mcp: dict[str, Export]) -> None:
    """§7: `duration_ms` = end − start (the reply's ts minus the request's; the run: last minus first)."""
    export = mcp["session"]
    call = _only(export.events, "export_orders")
    result = _result_of(export.events, call)

    def at(event: Event) -> datetime:
        return datetime.fromisoformat(event["time"].replace("Z", "+00:00"))

    assert result["duration_ms"] == pytest.approx((at(result) - at(call)).total_seconds() * 1000, abs=1e-9)
    run_start, run_end = export.events[0], export.events[-1]
    assert run_end["time"] == export.records[-1]["ts"]
    assert run_end["duration_ms"] == pytest.approx((at(run_end) - at(run_start)).total_seconds() * 1000, abs=1e-9)


def test_mcp_equal_time_deeper_end_first(mcp: dict[str, Export]) -> None:
    """§7: at equal times deeper ends come before shallower ends: the last reply's result precedes
    run.completed, which takes the same time."""
    events = mcp["session"].events
    assert events[-2]["type"] == "tool.result" and events[-2]["time"] == events[-1]["time"]


@pytest.mark.parametrize("fmt", ["langsmith", "mcp-log"])
def test_auto_sniffs_the_format(langsmith: dict[str, Export], mcp: dict[str, Export], fmt: str) -> None:
    """§7: `auto` sniffs the first record: the same events as the explicit format."""
    export = langsmith["shapes"] if fmt == "langsmith" else mcp["session"]
    assert _convert(export.folder, export.name, "auto") == export.events


@pytest.mark.parametrize("scenario", [*(f"lc:{s}" for s in LC_SCENARIOS), *(f"mcp:{s}" for s in MCP_SCENARIOS)])
def test_converted_trace_is_strict_native(langsmith: dict[str, Export], mcp: dict[str, Export],
                                          scenario: str) -> None:
    """§7 / README: every event made is valid as `check` reads native events (exit 0 under `--strict`)."""
    family, name = scenario.split(":")
    export = langsmith[name] if family == "lc" else mcp[name]
    native = export.folder / f"{export.name}.strict.jsonl"
    native.write_text("".join(json.dumps(event) + "\n" for event in export.events), encoding="utf-8")
    contract = export.folder / "strict-contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        {"id": "budget", "kind": "event_budget", "max_events": 1000}]}), encoding="utf-8")
    result = _cli(export.folder, "check", "--contract", contract.name, "--trace", native.name, "--strict")
    assert result.returncode == 0, result.stdout + result.stderr


def test_model_id_from_the_llm_under_the_same_parent(langsmith: dict[str, Export]) -> None:
    """Point 28: the nearest earlier LLM run under the same parent: a sub-agent's lookup (inside the
    delegate tool) takes its own model's id, the agent's lookup takes the agent model's id."""
    events = langsmith["delegate"].events
    lookups = _calls(events, "lookup_order")
    assert [(e["call_id"], e["args"]) for e in lookups] == [("inner1", {"order_id": "A1"}), ("o1", {"order_id": "A2"})]
    assert _only(events, "delegate")["call_id"] == "d1"


def test_model_id_from_the_nearest_earlier_llm(langsmith: dict[str, Export]) -> None:
    """Point 28: ids come from the nearest *earlier* LLM run: the second turn's lookup is z1, not the
    first turn's unused y2."""
    events = langsmith["nearest"].events
    assert [e["call_id"] for e in _calls(events, "lookup_order")] == ["y1", "z1"]


def test_sub_agent_model_reply_is_not_a_call(langsmith: dict[str, Export]) -> None:
    """§7 / README: calls are never read from a model's messages; only tool runs are calls."""
    events = langsmith["delegate"].events
    assert len(_calls(events)) == 3
    assert [e["type"] for e in events if e["type"].startswith("tool.")].count("tool.result") == 3


def test_mcp_text_content_json_is_parsed(mcp: dict[str, Export]) -> None:
    """Point 26: MCP text content that is valid JSON becomes `result` parsed (no structuredContent)."""
    export = mcp["content"]
    assert not any("structuredContent" in r["msg"].get("result", {}) for r in export.records if "result" in r["msg"]
                   and isinstance(r["msg"]["result"], dict) and "content" in r["msg"]["result"])
    assert _result_of(export.events, _only(export.events, "json_text"))["result"] == {"order": "A1", "paid": 10.0}


def test_mcp_text_content_not_json_stays_text(mcp: dict[str, Export]) -> None:
    """Point 26: text that is not JSON is the string itself."""
    export = mcp["content"]
    result = _result_of(export.events, _only(export.events, "plain_text"))
    assert (result["result"], result["ok"]) == ("order A1", True)


def test_tool_run_error_is_not_ok_with_model_id(langsmith: dict[str, Export]) -> None:
    """Point 27: a run with `error` is ok false; its id is the model's (point 28) as no ToolMessage came back."""
    export = langsmith["errors"]
    run = _run_named(export, "strict_lookup")
    assert run["error"] and "not found" in run["error"]
    call = _calls(export.events, "strict_lookup")[0]
    assert call["call_id"] == "e1"
    assert _result_of(export.events, call)["ok"] is False


def test_inner_tool_error_caught_by_outer_tool(langsmith: dict[str, Export]) -> None:
    """Point 27: the inner run's `error` makes only the inner result ok false; the outer tool that caught
    it ends ok with its ToolMessage content."""
    events = langsmith["errors"].events
    outer = _only(events, "careful")
    inner = _calls(events, "strict_lookup")[1]
    assert outer["seq"] < inner["seq"] < _result_of(events, inner)["seq"] < _result_of(events, outer)["seq"]
    assert _result_of(events, inner)["ok"] is False
    assert (_result_of(events, outer)["ok"], _result_of(events, outer)["result"]) == (True, "fallback")
    assert outer["call_id"] == "e2"


def test_errors_verdict_failures_counted(langsmith: dict[str, Export]) -> None:
    """§7 check --input-format langsmith: both failed results count as tool failures (v1 event_budget)."""
    code, report, _ = _check(langsmith["errors"], [{"id": "fails", "kind": "event_budget", "max_tool_failures": 1}],
                             fmt="langsmith")
    assert code == 1
    assert _codes(report) == ["event_budget.tool_failures"]
    assert report["summary"]["tool_failures"] == 2


def _without_place(events: list[Event]) -> list[Event]:
    """Events without `data.source.file` / `line` (which name where the record sat)."""
    stripped: list[Event] = json.loads(json.dumps(events))
    for event in stripped:
        for key in ("file", "line"):
            event["data"]["source"].pop(key, None)
    return stripped


def _reversed_children(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "child_runs": [_reversed_children(c) for c in reversed(record.get("child_runs") or [])]}


def test_child_order_in_file_does_not_matter(langsmith: dict[str, Export]) -> None:
    """§7 langsmith row: runs are ordered by `dotted_order`, not by their place in `child_runs`."""
    export = langsmith["shapes"]
    name = "shapes-reversed.runs.jsonl"
    (export.folder / name).write_text(json.dumps(_reversed_children(export.records[0])) + "\n", encoding="utf-8")
    assert _without_place(_convert(export.folder, name, "langsmith")) == _without_place(export.events)


def test_one_run_per_line_gives_the_same_events(langsmith: dict[str, Export]) -> None:
    """README (langsmith reads "one root run per line with `child_runs`, or one run per line"): the same
    run written flat, one run per line, gives the same events; each event's line is its own run's line."""
    export = langsmith["shapes"]
    flat = [{**run, "child_runs": []} for run in _walk(export.records[0])]
    name = "shapes-flat.runs.jsonl"
    (export.folder / name).write_text("".join(json.dumps(run) + "\n" for run in flat), encoding="utf-8")
    events = _convert(export.folder, name, "langsmith")
    assert _without_place(events) == _without_place(export.events)
    line_of = {run["id"]: line for line, run in enumerate(flat, 1)}
    assert all(e["data"]["source"]["line"] == line_of[e["data"]["source"]["span_id"]] for e in events)


def test_mcp_accepted_elicitation_is_grant_of_pending_call(mcp: dict[str, Export]) -> None:
    """§7: accepted `elicitation/create` → `approval.granted {call_id: pending call, args: content}`,
    inside the call (after its tool.call, before its result)."""
    events = mcp["approved"].events
    call = _only(events, "refund")
    grants = [e for e in events if e["type"] == "approval.granted"]
    assert len(grants) == 1
    assert (grants[0]["call_id"], grants[0]["args"]) == (call["call_id"], {"approved": True})
    assert grants[0].get("approved", True) is True
    assert call["seq"] < grants[0]["seq"] < _result_of(events, call)["seq"]
    assert _result_of(events, call)["result"] == {"refunded": 10.0}


def test_mcp_hoist_elicitation_moves_grant_before_call(mcp: dict[str, Export]) -> None:
    """§7: `hoist_elicitation: true` moves the grant to just before its call and marks it `data.hoisted`."""
    export = mcp["approved"]
    (export.folder / "hoist.json").write_text(json.dumps({"rules": [], "hoist_elicitation": True}), encoding="utf-8")
    events = _convert(export.folder, export.name, "mcp-log", "--profile", "hoist.json")
    call = _only(events, "refund")
    grant = [e for e in events if e["type"] == "approval.granted"][0]
    assert grant["seq"] == call["seq"] - 1
    assert grant["data"]["hoisted"] is True
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_mcp_approval_verdict_without_and_with_hoist(mcp: dict[str, Export]) -> None:
    """§7 check --input-format auto: the grant inside the call comes after it, so require_approval fails;
    hoisted (profile), it passes."""
    export = mcp["approved"]
    rules = [{"id": "approve", "kind": "require_approval", "tool": "refund"}]
    code, report, _ = _check(export, rules)
    assert (code, _codes(report)) == (1, ["require_approval.missing"])
    (export.folder / "hoist.json").write_text(json.dumps({"rules": [], "hoist_elicitation": True}), encoding="utf-8")
    code, report, stderr = _check(export, rules, "--profile", "hoist.json")
    assert (code, report.get("passed")) == (0, True), stderr


def test_two_roots_check_one_run_by_id(langsmith: dict[str, Export]) -> None:
    """Point 34: `check --input-format … --run ID` checks that run alone; the violation names line 2, where
    the second root run sits."""
    export = langsmith["two_roots"]
    second = export.records[1]["id"]
    code, report, stderr = _check(export, [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "--run", second)
    assert code == 1, stderr
    assert report["schema"] == "agent-invariants/check/v1"
    assert [(v["code"], v["line"]) for v in report["violations"]] == [("deny_tool.denied", 2)]


def test_mcp_two_sessions_compare_pairs_by_run_id(mcp: dict[str, Export]) -> None:
    """Point 34 / README: `compare --run all` pairs the candidate's runs with the baseline's by run id."""
    export = mcp["two"]
    contract = export.folder / "compare-contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        {"id": "no-hold", "kind": "deny_tool", "tool": "hold"}]}), encoding="utf-8")
    result = _cli(export.folder, "compare", "--baseline", export.name, "--candidate", export.name, "--contract",
                  contract.name, "--input-format", "mcp-log", "--run", "all", "--format", "json")
    report = json.loads(result.stdout)
    assert report["schema"] == "agent-invariants/compare-batch/v1" and report["pairs"] == 2
    pairs = {r["candidate"]["run"]: (r["baseline"]["run"], r["compatible"]) for r in report["reports"]}
    # v1 compare: a rule the candidate still violates is a regression (s1 calls the denied tool in both).
    assert pairs == {"s1": ("s1", False), "s2": ("s2", True)}
    assert result.returncode == 1
