"""LangSmith runs recorded from a real langchain-core agent loop, for the `langsmith` importer tests.

Each scenario runs a small agent (a scripted chat model, tools built as `@tool` builds them and invoked
with the model's tool calls, all inside one `RunnableLambda` named "agent") under langchain-core's own
LangSmith tracer, with a client that keeps the runs instead of sending them. The file holds one root run
per line, as the Run JSON the tracer builds (`model_dump(mode="json")`), with its children nested under
`child_runs` sorted by `dotted_order`, the way the LangSmith client returns a run loaded with its child runs.

Run `python -m tests.frameworks.langchain_runs OUTDIR` to write every scenario to OUTDIR/<scenario>.runs.jsonl.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import get_executor_for_config
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.tracers.context import collect_runs
from langchain_core.tracers.langchain import LangChainTracer
from langchain_core.tracers.schemas import Run
from langchain_core.utils.function_calling import convert_to_openai_tool
from langsmith import tracing_context

SCENARIOS: tuple[str, ...] = (
    "refund_ok",
    "missing_lookup",
    "tool_raises",
    "forbidden_tool",
    "retries",
    "parallel",
    "convention",
    "tool_error_message",
    "run_fails",
    "two_runs",
    "args_only",
    "text_input",
    "refund_ok_collected",
    "tool_alone",
)
"""Every scenario `write` knows: the ones shared by all frameworks, then those specific to LangSmith runs."""

EXTENSION = ".runs.jsonl"

APPROVAL_METADATA: dict[str, Any] = {"ainv": {"approval_id": "ap-1", "approval_scope": "refund", "approver": "alice"}}
"""The built-in convention: a run named after the event type carries its fields in `extra.metadata.ainv`."""

REVIEW_METADATA: dict[str, Any] = {"decision": "approve", "scope": "refund", "user.id": "bob"}
"""What a user-defined mapping profile would pick up from a run named `human_review`."""


class _Sink:
    """Stands in for the LangSmith client: keeps finished root runs and sends nothing over the network."""

    def __init__(self) -> None:
        self.roots: list[Run] = []
        self.lines: list[dict[str, Any]] = []   # what `_LiveTracer` writes

    def create_run(self, **_: Any) -> None:
        """The tracer posts each run when it starts; the tree is read from the root at the end instead."""

    def update_run(self, **_: Any) -> None:
        """The tracer patches each run when it ends; nothing to keep here either."""

    def flush(self) -> None:
        """Nothing is queued, so there is nothing to flush."""


class _KeepingTracer(LangChainTracer):
    """LangSmith's own tracer (so run types, `extra` and `dotted_order` are what LangSmith receives), keeping roots.

    The tracer copies itself for nested callback managers; the copies share the client, so the sink
    collects every root whichever copy ends it.
    """

    def _persist_run(self, run: Run) -> None:
        self.client.roots.append(run)


class _LiveTracer(_KeepingTracer):
    """LangSmith's tracer writing each run as it reaches LangSmith: once when it is created (no
    `end_time` yet), once more when it is updated at its end, each on its own line, no `child_runs`
    (kept in the sink, which the tracer's copies for nested callbacks share)."""

    def _persist_run_single(self, run: Run) -> None:
        self.client.lines.append(_flat(run))

    def _update_run_single(self, run: Run) -> None:  # type: ignore[override]
        self.client.lines.append(_flat(run))


def _flat(run: Run) -> dict[str, Any]:
    record = run.model_dump(mode="json")
    record.pop("child_runs", None)
    return record


class ScriptedChatModel(GenericFakeChatModel):
    """A chat model replaying scripted replies, accepting `bind_tools` like a provider's model does.

    Bound tools go to the call's keyword arguments, so they show in the run's `extra.invocation_params.tools`
    as tool definitions (never calls), as they do for real providers.
    """

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)


def _refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an amount on an order."""
    return {"refunded": amount, "order": order_id}


def _shell(cmd: str) -> str:
    """Run a shell command (the forbidden tool: here it only pretends)."""
    return f"ran: {cmd}"


def _tools(*, report_errors: bool = False, meet: threading.Barrier | None = None) -> dict[str, BaseTool]:
    """Fresh tool objects for each run, so a setting such as `handle_tool_error` never leaks between scenarios.

    lookup_order knows orders A1 and A2 only. With `report_errors` it raises a ToolException, which the tool
    turns into an error ToolMessage; otherwise a ValueError, which leaves the tool. With `meet`, concurrent
    lookups wait for each other, so their runs overlap in time as real parallel calls do.
    """
    error = ToolException if report_errors else ValueError

    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look up an order by its id."""
        if meet is not None:
            meet.wait(timeout=5)
        if order_id not in ("A1", "A2"):
            raise error(f"order {order_id} not found")
        return {"order": order_id, "paid": 10.0, "currency": "EUR"}

    tools = [
        StructuredTool.from_function(lookup_order, handle_tool_error=report_errors),
        StructuredTool.from_function(_refund, name="refund"),
        StructuredTool.from_function(_shell, name="shell"),
    ]
    return {tool.name: tool for tool in tools}


def _call(name: str, call_id: str, **args: Any) -> ToolCall:
    """A tool call as a provider's chat model returns it."""
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def _ask(*calls: ToolCall) -> AIMessage:
    """A model turn asking for tools, with token usage as providers report it."""
    return AIMessage(
        content="", tool_calls=list(calls), usage_metadata={"input_tokens": 40, "output_tokens": 12, "total_tokens": 52}
    )


def _say(text: str) -> AIMessage:
    """A final model turn answering with text."""
    return AIMessage(content=text, usage_metadata={"input_tokens": 60, "output_tokens": 6, "total_tokens": 66})


_InvokeWith = Literal["call", "args", "text"]


@dataclass
class _Script:
    """One agent run: the user's prompt, the model's replies, and how the agent handles tools.

    `invoke_with` says what the agent hands a tool: the model's tool call (the tool then returns a
    ToolMessage carrying the call id), the args object alone, or the single argument as text (as
    classic single-input agents do); in the last two the tool run knows no call id and returns the bare value.
    """

    prompt: str
    replies: list[AIMessage]
    report_errors: bool = False
    catch_errors: bool = True
    concurrent: int = 0
    invoke_with: _InvokeWith = "call"
    before_tool: dict[str, Callable[[ToolCall, RunnableConfig], None]] = field(default_factory=dict)


def _human_review(call: ToolCall, config: RunnableConfig) -> None:
    """The user's own review step and convention event, as child runs of the agent, just before the refund."""
    review = RunnableLambda(lambda args: dict(REVIEW_METADATA)).with_config(
        run_name="human_review", metadata=dict(REVIEW_METADATA)
    )
    review.invoke(call["args"], config)
    grant = RunnableLambda(lambda args: {"approved": True}).with_config(
        run_name="approval.granted", metadata=copy.deepcopy(APPROVAL_METADATA)
    )
    grant.invoke(call["args"], config)


def _scripts(scenario: str) -> list[_Script]:
    """The agent runs of one scenario (one per root run in the file)."""
    refund_a1 = _call("refund", "call_refund_1", order_id="A1", amount=10.0)
    refund_ok = _Script("Refund order A1", [_ask(_lookup("A1", 1)), _ask(refund_a1), _say("Refunded 10.0 EUR")])
    cleanup = [_ask(_call("shell", "call_shell_1", cmd="rm -rf /tmp/x")), _say("Done.")]
    failing = [_ask(_call("lookup_order", "call_lookup_9", order_id="A9")), _say("Order A9 was not found.")]
    scripts: dict[str, list[_Script]] = {
        "refund_ok": [refund_ok],
        "refund_ok_collected": [refund_ok],
        "missing_lookup": [_Script("Refund order A1", [_ask(refund_a1), _say("Refunded 10.0 EUR")])],
        "tool_raises": [_Script("Refund order A9", failing)],
        "tool_error_message": [_Script("Refund order A9", failing, report_errors=True)],
        "run_fails": [_Script("Refund order A9", failing, catch_errors=False)],
        "forbidden_tool": [_Script("Clean up /tmp/x", cleanup)],
        "args_only": [_Script(refund_ok.prompt, refund_ok.replies, invoke_with="args")],
        "text_input": [_Script("Clean up /tmp/x", cleanup, invoke_with="text")],
        "retries": [_Script("Refund order A1", [*_retries(), _say("Order A1 was paid 10.0 EUR.")])],
        "parallel": [
            _Script("Compare orders A1 and A2", [_parallel(), _say("Both orders were paid 10.0 EUR.")], concurrent=2)
        ],
        "convention": [
            _Script(refund_ok.prompt, refund_ok.replies, before_tool={"refund": _human_review}),
        ],
        "two_runs": [refund_ok, _Script("Look up order A2", [_ask(_lookup("A2", 1)), _say("Order A2: 10.0 EUR.")])],
        "tool_alone": [],
    }
    return scripts[scenario]


def _lookup(order_id: str, n: int) -> ToolCall:
    """The n-th lookup call of a run, with its own call id."""
    return _call("lookup_order", f"call_lookup_{n}", order_id=order_id)


def _retries() -> list[AIMessage]:
    """Three model turns in a row, each asking for the same lookup."""
    return [_ask(_lookup("A1", n)) for n in (1, 2, 3)]


def _parallel() -> AIMessage:
    """One model turn asking for two lookups at once."""
    return _ask(_lookup("A1", 1), _lookup("A2", 2))


def _run_tool(call: ToolCall, script: _Script, tools: dict[str, BaseTool], config: RunnableConfig) -> ToolMessage:
    """Run one tool call; a raised error becomes an error ToolMessage the way LangGraph's ToolNode words it.

    Without `catch_errors` the exception leaves the agent, so the root run ends with `error`.
    """
    hook = script.before_tool.get(call["name"])
    if hook is not None:
        hook(call, config)
    try:
        return _invoke_tool(call, script.invoke_with, tools[call["name"]], config)
    except Exception as exc:
        if not script.catch_errors:
            raise
        content = f"Error: {exc!r}\n Please fix your mistakes."
        return ToolMessage(content=content, name=call["name"], tool_call_id=call["id"], status="error")


def _invoke_tool(call: ToolCall, invoke_with: _InvokeWith, tool: BaseTool, config: RunnableConfig) -> ToolMessage:
    """Invoke a tool the way the script says; a bare return value is wrapped for the model's next turn."""
    if invoke_with == "call":
        message = tool.invoke(call, config)
        assert isinstance(message, ToolMessage)
        return message
    tool_input = call["args"] if invoke_with == "args" else str(next(iter(call["args"].values())))
    output = tool.invoke(tool_input, config)
    content = output if isinstance(output, str) else json.dumps(output)
    return ToolMessage(content=content, name=call["name"], tool_call_id=call["id"])


def _run_tools(
    calls: list[ToolCall], script: _Script, tools: dict[str, BaseTool], config: RunnableConfig
) -> list[ToolMessage]:
    """Several calls of one model turn run concurrently (as LangGraph's ToolNode runs them), one alone inline."""
    if len(calls) == 1:
        return [_run_tool(calls[0], script, tools, config)]
    with get_executor_for_config(config) as executor:
        return list(executor.map(lambda call: _run_tool(call, script, tools, config), calls))


def _agent(script: _Script) -> Runnable[str, str]:
    """The agent loop as one runnable, so the whole run is one root run with the model and tool runs inside."""
    meet = threading.Barrier(script.concurrent) if script.concurrent else None
    tools = _tools(report_errors=script.report_errors, meet=meet)
    model = ScriptedChatModel(messages=iter(list(script.replies))).bind_tools(list(tools.values()))

    def agent(prompt: str, config: RunnableConfig) -> str:
        messages: list[BaseMessage] = [HumanMessage(prompt)]
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return reply.text
            messages.extend(_run_tools(reply.tool_calls, script, tools, config))

    return RunnableLambda(agent).with_config(run_name="agent")


def _invoke(script: _Script, scenario: str, callbacks: list[Any]) -> None:
    """Run one script; a run that fails on purpose (`catch_errors` off) is still recorded, so its error is kept."""
    config: RunnableConfig = {"callbacks": callbacks, "metadata": {"scenario": scenario}}
    try:
        _agent(script).invoke(script.prompt, config)
    except ValueError:
        if script.catch_errors:
            raise


def _trace(scenario: str) -> list[Run]:
    """Run a scenario's scripts under LangSmith's tracer (or `collect_runs`, for the collector variant)."""
    scripts = _scripts(scenario)
    if scenario == "refund_ok_collected":
        # No LangSmith tracer is passed here, so one configured by the environment would join in: keep it out.
        with tracing_context(enabled=False), collect_runs() as collector:
            for script in scripts:
                _invoke(script, scenario, [])
        return list(collector.traced_runs)
    sink = _Sink()
    tracer = _KeepingTracer(client=sink)  # type: ignore[arg-type]
    if scenario == "tool_alone":   # a tool invoked on its own, no agent around it: the root run is the tool's
        _tools()["shell"].invoke({"cmd": "rm -rf /tmp/x"}, {"callbacks": [tracer]})
        return sink.roots
    for script in scripts:
        _invoke(script, scenario, [tracer])
    return sink.roots


def run_json(run: Run) -> dict[str, Any]:
    """A run as LangSmith's Run JSON, children nested under `child_runs` (the run model leaves them out).

    Children are sorted by `dotted_order` (start time, then id), as the LangSmith client sorts them when it
    loads a run's children; the tracer's own list is in the order concurrent calls happened to register.
    """
    record = run.model_dump(mode="json")
    children = sorted(run.child_runs, key=lambda child: child.dotted_order)
    record["child_runs"] = [run_json(child) for child in children]
    return record


def write(scenario: str, path: Path) -> None:
    """Write one scenario's export: one root run per line."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    lines = [json.dumps(run_json(root), ensure_ascii=False) + "\n" for root in _trace(scenario)]
    path.write_text("".join(lines), encoding="utf-8")


def write_live(scenario: str, path: Path) -> None:
    """Write one scenario's runs as they reach LangSmith: each run on its own line when it is
    created, and again when it ends (`_LiveTracer`)."""
    sink = _Sink()
    tracer = _LiveTracer(client=sink)  # type: ignore[arg-type]
    for script in _scripts(scenario):
        _invoke(script, scenario, [tracer])
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in sink.lines), encoding="utf-8")


def iter_paths(outdir: Path) -> Iterator[tuple[str, Path]]:
    """Each scenario with the file it is written to under `outdir`."""
    for scenario in SCENARIOS:
        yield scenario, outdir / f"{scenario}{EXTENSION}"


def main(argv: Sequence[str]) -> int:
    """Write every scenario to the folder given as the only argument."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tests.frameworks.langchain_runs OUTDIR\n")
        return 2
    outdir = Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    for scenario, path in iter_paths(outdir):
        write(scenario, path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
