"""OpenInference spans of a LangGraph agent, as OTLP JSON lines, for the `openinference` importer tests.

A LangGraph ReAct agent (`langgraph.prebuilt.create_react_agent`) with a scripted chat model and two
tools, traced by `openinference-instrumentation-langchain` into an in-memory exporter, the spans encoded
as the OTLP exporters encode them (`encode_spans`) in protobuf's JSON mapping, one line per scenario.
LangGraph's shape differs from the Agents SDK's: the graph is a `CHAIN` span, each model turn an
`AGENT` span beside the others, the tools run in `tools` chains beside them, and a tool's output is
the whole LangChain ToolMessage (`{"type": "tool", "data": {"content": ..., "tool_call_id": ...}}`).

Scenarios: `refund_ok` (a lookup, then a refund), `refund_fails` (the refund raises: the graph
fails), `refund_direct` (the refund is a `return_direct` tool: the graph ends with it, no third
model turn), `lookup_fails` (the lookup raises after the first model turn: one agent span),
`no_args` (the model calls a tool of no parameters, `now`, with `{}`: the instrumentation writes
neither the tool's `input.value` nor the call's arguments), and one without LangGraph,
`chain_tool_raises`: a runnable asks the model, which calls the one-argument tool `find_order`
for A1 and A9, then runs each call; A9 raises. The model and the tools are siblings under the
runnable's span, and the instrumentation writes a one-argument tool's `input.value` as the bare
argument (`"A9"`).

Run `python -m tests.frameworks.langgraph_openinference OUTDIR` to write every scenario to
`OUTDIR/<scenario>.otlp.jsonl`.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecationWarning
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["EXTENSION", "SCENARIOS", "write"]

EXTENSION = ".otlp.jsonl"
SCENARIOS: tuple[str, ...] = ("refund_ok", "refund_fails", "refund_direct", "lookup_fails", "no_args",
                               "chain_tool_raises")

_TURNS = [AIMessage(content="", tool_calls=[{"name": "lookup_order", "args": {"order_id": "A1"},
                                             "id": "call_lookup_1", "type": "tool_call"}]),
          AIMessage(content="", tool_calls=[{"name": "refund", "args": {"order_id": "A1", "amount": 25},
                                             "id": "call_refund_1", "type": "tool_call"}]),
          AIMessage(content="Refunded 25 for order A1.")]
_NO_ARGS = [AIMessage(content="", tool_calls=[{"name": "now", "args": {}, "id": "call_now_1", "type": "tool_call"}]),
            AIMessage(content="It is midnight.")]
_TWO_FINDS = [AIMessage(content="", tool_calls=[
    {"name": "find_order", "args": {"order_id": order}, "id": f"call_find_{order}", "type": "tool_call"}
    for order in ("A1", "A9")])]


class _Scripted(BaseChatModel):
    """A chat model that answers each turn from `_TURNS`."""

    turn: int = 0
    turns: list[AIMessage] = _TURNS

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **_: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **_: Any) -> ChatResult:
        message = self.turns[self.turn]
        self.turn += 1
        return ChatResult(generations=[ChatGeneration(message=message)])


def _graph(scenario: str) -> Any:
    @tool
    def lookup_order(order_id: str, region: str = "eu") -> dict[str, Any]:
        """Look an order up."""
        if scenario == "lookup_fails":
            raise RuntimeError("orders database down")
        return {"order_id": order_id, "paid": 25.0}

    @tool(return_direct=scenario == "refund_direct")
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        if scenario == "refund_fails":
            raise RuntimeError("payment gateway down")
        return json.dumps({"refund_id": "R-9", "amount": amount})

    @tool
    def now() -> str:
        """The time."""
        return "2026-01-01T00:00:00Z"

    with warnings.catch_warnings():   # (moved to `langchain.agents` in LangGraph 1.0; the graph is the same)
        warnings.simplefilter("ignore", LangGraphDeprecationWarning)
        if scenario == "no_args":
            return create_react_agent(_Scripted(turns=_NO_ARGS), [now])
        return create_react_agent(_Scripted(), [lookup_order, refund])


def _chain() -> Any:
    """A runnable that asks the model once and runs the tool calls it gets, keeping a failure as
    the call's answer (no LangGraph: the tools are called by user code, as plain runnables)."""
    @tool
    def find_order(order_id: str) -> dict[str, Any]:
        """Find an order."""
        if order_id == "A9":
            raise RuntimeError("no order A9")
        return {"order_id": order_id, "paid": 25.0}

    def desk(question: str) -> list[Any]:
        reply = _Scripted(turns=_TWO_FINDS).invoke(question)
        answers: list[Any] = []
        for call in reply.tool_calls:
            try:
                answers.append(find_order.invoke(call))
            except RuntimeError as error:
                answers.append(str(error))
        return answers

    return RunnableLambda(desk, name="desk")


def write(scenario: str, path: Path) -> None:
    """Run `scenario` traced by OpenInference and write its spans as one OTLP JSON line to `path`."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "refund-desk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        if scenario == "chain_tool_raises":
            _chain().invoke("Find orders A1 and A9")
        else:
            _graph(scenario).invoke({"messages": [("user", "Please refund order A1")]})
    except RuntimeError:
        pass   # the failing scenario: the graph raises what the tool raised
    finally:
        instrumentor.uninstrument()
    message = json_format.MessageToDict(encode_spans(exporter.get_finished_spans()))
    provider.shutdown()
    path.write_text(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    for name in SCENARIOS:
        write(name, Path(sys.argv[1]) / f"{name}{EXTENSION}")
