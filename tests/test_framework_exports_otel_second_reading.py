"""Second reading of spec v2 §7 and §10 points 26-36, against exports the real frameworks write.

Each scenario runs an installed framework offline (pydantic-ai with its OpenTelemetry instrumentation
driven by a `FunctionModel`; the OpenAI Agents SDK with a scripted `Model`, exported by its own tracing
and through the OpenInference instrumentation), writes the export, and checks what `convert` and
`check --input-format` make of it. Every scenario is generated once per module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from agents import Agent as SdkAgent
from agents import (
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    ModelSettings,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    Runner,
    Tool,
    Usage,
    function_tool,
    input_guardrail,
    output_guardrail,
)
from agents import (
    ModelResponse as SdkResponse,
)
from agents.models.interface import Model, ModelTracing
from agents.tracing import Span, Trace, TracingProcessor, set_trace_provider
from agents.tracing import setup as tracing_setup
from agents.tracing.provider import DefaultTraceProvider
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
)
from openinference.instrumentation import TraceConfig
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import UsageLimits

REPO = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------------------
# pydantic-ai: OTLP JSON lines


def _own_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run on a fresh event loop, closed afterwards (no loop left behind for other tests)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "fw-second-reading"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _instrumented(provider: TracerProvider) -> Instrumentation:
    settings = InstrumentationSettings(tracer_provider=provider, meter_provider=NoOpMeterProvider(), version=6,
                                       include_content=True)
    return Instrumentation(settings=settings)


_Step = Sequence[tuple[str, dict[str, Any] | None, str] | str]  # (tool, args, call id) or text


def _scripted(turns: Sequence[_Step]) -> FunctionModel:
    """Turn n of the script on the model's n-th request (counted from this agent's own messages)."""

    def parts(index: int) -> list[ModelResponsePart]:
        out: list[ModelResponsePart] = []
        for item in turns[index]:
            if isinstance(item, str):
                out.append(TextPart(item))
            else:
                out.append(ToolCallPart(item[0], item[1], tool_call_id=item[2]))
        return out

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=parts(sum(isinstance(m, ModelResponse) for m in messages)))

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        index = sum(isinstance(m, ModelResponse) for m in messages)
        for position, item in enumerate(turns[index]):
            if isinstance(item, str):
                yield item
            else:
                yield {position: DeltaToolCall(name=item[0], json_args=json.dumps(item[1]), tool_call_id=item[2])}

    return FunctionModel(respond, stream_function=stream, model_name="scripted")


def _otlp_line(spans: Sequence[ReadableSpan]) -> str:
    return json.dumps(MessageToDict(encode_spans(spans)), separators=(",", ":"))


@dataclass
class Receipt:
    """A refund receipt (the structured output)."""

    order: str
    refunded: float


@dataclass
class Order:
    """What `order_record` returns: a dataclass, not a dict."""

    order_id: str
    paid: float


def _pai_delegate(provider: TracerProvider) -> None:
    """`support` calls `ask_expert`, whose body runs the `expert` agent, which calls `lookup_order`."""
    expert: Agent[None, str] = Agent(
        _scripted([[("lookup_order", {"order_id": "A1"}, "inner_1")], ["A1 is paid."]]), name="expert",
        capabilities=[_instrumented(provider)])

    @expert.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        return {"order": order_id, "paid": 10.0}

    support: Agent[None, str] = Agent(
        _scripted([[("ask_expert", {"question": "Is A1 paid?"}, "outer_1")], ["Yes, A1 is paid."]]),
        name="support", capabilities=[_instrumented(provider)])

    @support.tool_plain
    async def ask_expert(question: str) -> str:
        """Ask the expert agent."""
        return (await expert.run(question)).output

    _own_loop(support.run("Is A1 paid?"))


def _pai_retry(provider: TracerProvider) -> None:
    """`lookup_order` raises ModelRetry on its first call, then succeeds."""
    attempts: list[str] = []
    agent: Agent[None, str] = Agent(
        _scripted([[("lookup_order", {"order_id": "a1"}, "call_1")], [("lookup_order", {"order_id": "A1"}, "call_2")],
                   ["A1 is paid."]]),
        name="support", capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        attempts.append(order_id)
        if order_id != "A1":
            raise ModelRetry("use upper case order ids")
        return {"order": order_id, "paid": 10.0}

    _own_loop(agent.run("Is A1 paid?"))


def _pai_structured(provider: TracerProvider) -> None:
    """A structured output: pydantic-ai asks for it through its output tool `final_result`."""
    agent: Agent[None, Receipt] = Agent(
        _scripted([[("refund", {"order_id": "A1", "amount": 10.0}, "call_1")],
                   [("final_result", {"order": "A1", "refunded": 10.0}, "call_2")]]),
        name="support", output_type=Receipt, capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> dict[str, Any]:
        """Refund an order."""
        return {"refunded": amount}

    _own_loop(agent.run("Refund A1"))


def _pai_stream(provider: TracerProvider) -> None:
    """`run_stream`: a streamed model turn asks for `now` (no arguments), then the answer streams."""
    agent: Agent[None, str] = Agent(_scripted([[("now", {}, "call_1")], ["It is noon."]]), name="support",
                                    capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def now() -> str:
        """The time."""
        return "12:00"

    async def go() -> None:
        async with agent.run_stream("What time is it?") as result:
            await result.get_output()

    _own_loop(go())


def _pai_values(provider: TracerProvider) -> None:
    """Tools returning a dataclass, a string that looks like a Python repr, and taking no arguments."""
    agent: Agent[None, str] = Agent(
        _scripted([[("order_record", {"order_id": "A1"}, "call_1"), ("order_repr", {"order_id": "A1"}, "call_2"),
                    ("ping", None, "call_3")], ["Done."]]),
        name="support", capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def order_record(order_id: str) -> Order:
        """The order as a dataclass."""
        return Order(order_id, 10.0)

    @agent.tool_plain
    def order_repr(order_id: str) -> str:
        """The order as the text of a Python repr."""
        return f"Order(order_id='{order_id}', paid=10.0)"

    @agent.tool_plain
    def ping() -> str:
        """No arguments."""
        return "pong"

    _own_loop(agent.run("Show A1"))


def _pai_two_runs(provider: TracerProvider) -> None:
    """Two `agent.run` calls of one agent: two traces in one export."""
    agent: Agent[None, str] = Agent(
        _scripted([[("ping", {}, "call_1")], ["pong"]]), name="support", capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def ping() -> str:
        """No arguments."""
        return "pong"

    _own_loop(agent.run("first"))
    _own_loop(agent.run("second"))


def _pai_usage_limit(provider: TracerProvider) -> None:
    """A request limit of 1 ends the run after the first tool call: UsageLimitExceeded."""
    agent: Agent[None, str] = Agent(
        _scripted([[("ping", {}, "call_1")], ["never"]]), name="support", capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def ping() -> str:
        """No arguments."""
        return "pong"

    with pytest.raises(UsageLimitExceeded):
        _own_loop(agent.run("go", usage_limits=UsageLimits(request_limit=1)))


def _pai_tool_error(provider: TracerProvider) -> None:
    """A tool raising an ordinary exception ends the run."""
    agent: Agent[None, str] = Agent(
        _scripted([[("boom", {"order_id": "A1"}, "call_1")], ["never"]]), name="support",
        capabilities=[_instrumented(provider)])

    @agent.tool_plain
    def boom(order_id: str) -> str:
        """Always fails."""
        raise RuntimeError("database is down")

    with pytest.raises(RuntimeError):
        _own_loop(agent.run("go"))


def _pai_approval(provider: TracerProvider) -> None:
    """A tool that requires approval: the run ends with DeferredToolRequests."""
    from pydantic_ai import DeferredToolRequests

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        _scripted([[("refund", {"order_id": "A1", "amount": 10.0}, "call_1")], ["never"]]), name="support",
        output_type=[str, DeferredToolRequests], capabilities=[_instrumented(provider)])

    @agent.tool_plain(requires_approval=True)
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        return "refunded"

    _own_loop(agent.run("Refund A1"))


PYDANTIC_SCENARIOS: dict[str, Callable[[TracerProvider], None]] = {
    "delegate": _pai_delegate,
    "retry": _pai_retry,
    "structured": _pai_structured,
    "stream": _pai_stream,
    "values": _pai_values,
    "two_runs": _pai_two_runs,
    "usage_limit": _pai_usage_limit,
    "tool_error": _pai_tool_error,
    "approval": _pai_approval,
}


def write_pydantic(name: str, path: Path) -> None:
    """One line per trace (ExportTraceServiceRequest), spans in the order they ended."""
    provider, exporter = _provider()
    PYDANTIC_SCENARIOS[name](provider)
    spans = exporter.get_finished_spans()
    provider.shutdown()
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        assert span.context is not None
        by_trace.setdefault(span.context.trace_id, []).append(span)
    path.write_text("".join(_otlp_line(group) + "\n" for group in by_trace.values()), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# OpenAI Agents SDK: its own export, and OpenInference spans


def _fc(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{call_id}", call_id=call_id, name=name,
                                    arguments=json.dumps(args), status="completed")


def _msg(text: str) -> ResponseOutputMessage:
    content: list[ResponseOutputText | ResponseOutputRefusal] = [
        ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])]
    return ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed", content=content)


_SdkItem = ResponseFunctionToolCall | ResponseOutputMessage


class ScriptedModel(Model):
    """Answers each agent's n-th request with its script's n-th reply (keyed by the agent's instructions)."""

    def __init__(self, scripts: dict[str, list[list[_SdkItem]]]) -> None:
        self.scripts = {key: list(turns) for key, turns in scripts.items()}

    async def get_response(self, system_instructions: str | None, input: Any, model_settings: ModelSettings,
                           tools: Any, output_schema: Any, handoffs: Any, tracing: ModelTracing, *,
                           previous_response_id: str | None, conversation_id: str | None,
                           prompt: Any) -> SdkResponse:
        turns = self.scripts[system_instructions or ""]
        return SdkResponse(output=list(turns.pop(0)), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def _lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order": order_id, "paid": 10.0}


def _refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    return {"refunded": amount}


def _flaky(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError("database is down")


def _sdk_handoff_chain() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({
        "A": [[_fc("transfer_to_b", {}, "h_1")]],
        "B": [[_fc("transfer_to_c", {}, "h_2")]],
        "C": [[_fc("refund", {"order_id": "A1", "amount": 10.0}, "c_1")], [_msg("Refunded.")]],
    })
    c = SdkAgent(name="c", instructions="C", model=model, tools=[function_tool(_refund, name_override="refund")])
    b = SdkAgent(name="b", instructions="B", model=model, handoffs=[c])
    a = SdkAgent(name="a", instructions="A", model=model, handoffs=[b])
    return a, "refund A1", model


@input_guardrail(name="no_shell", run_in_parallel=False)
def _no_shell(ctx: RunContextWrapper[Any], agent: SdkAgent[Any], text: Any) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info={}, tripwire_triggered="rm -rf" in str(text))


@output_guardrail(name="no_promises")
def _no_promises(ctx: RunContextWrapper[Any], agent: SdkAgent[Any], output: Any) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info={}, tripwire_triggered="promise" in str(output))


def _sdk_input_guardrail() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({"S": [[_msg("never")]]})
    return SdkAgent(name="s", instructions="S", model=model, input_guardrails=[_no_shell]), "rm -rf /", model


def _sdk_output_guardrail() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({"S": [[_fc("lookup_order", {"order_id": "A1"}, "c_1")], [_msg("I promise a refund.")]]})
    tools: list[Tool] = [function_tool(_lookup, name_override="lookup_order")]
    agent = SdkAgent(name="s", instructions="S", model=model, tools=tools, output_guardrails=[_no_promises])
    return agent, "refund A1", model


def _sdk_as_tool() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({
        "M": [[_fc("ask_expert", {"input": "Is A1 paid?"}, "m_1")], [_msg("Yes.")]],
        "E": [[_fc("lookup_order", {"order_id": "A1"}, "e_1")], [_msg("A1 is paid.")]],
    })
    expert = SdkAgent(name="expert", instructions="E", model=model,
                      tools=[function_tool(_lookup, name_override="lookup_order")])
    main = SdkAgent(name="main", instructions="M", model=model,
                    tools=[expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert.")])
    return main, "Is A1 paid?", model


def _sdk_max_turns() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({"S": [[_fc("lookup_order", {"order_id": "A1"}, "c_1")],
                                 [_fc("lookup_order", {"order_id": "A1"}, "c_2")], [_msg("never")]]})
    return SdkAgent(name="s", instructions="S", model=model,
                    tools=[function_tool(_lookup, name_override="lookup_order")]), "loop", model


def _sdk_failure_fn() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({"S": [[_fc("flaky", {"order_id": "A1"}, "c_1")], [_msg("It failed.")]]})
    tool = function_tool(_flaky, name_override="flaky",
                         failure_error_function=lambda ctx, error: f"flaky failed: {error}")
    return SdkAgent(name="s", instructions="S", model=model, tools=[tool]), "go", model


def _sdk_parallel() -> tuple[SdkAgent[Any], str, ScriptedModel]:
    model = ScriptedModel({"S": [[_fc("lookup_order", {"order_id": "A1"}, "c_1"),
                                  _fc("lookup_order", {"order_id": "A2"}, "c_2")], [_msg("Both paid.")]]})
    return SdkAgent(name="s", instructions="S", model=model,
                    tools=[function_tool(_lookup, name_override="lookup_order")]), "A1 and A2", model


SDK_SCENARIOS: dict[str, tuple[Callable[[], tuple[SdkAgent[Any], str, ScriptedModel]], int | None]] = {
    "handoff_chain": (_sdk_handoff_chain, None),
    "input_guardrail": (_sdk_input_guardrail, None),
    "output_guardrail": (_sdk_output_guardrail, None),
    "as_tool": (_sdk_as_tool, None),
    "max_turns": (_sdk_max_turns, 2),
    "failure_fn": (_sdk_failure_fn, None),
    "parallel": (_sdk_parallel, None),
}
_SDK_EXPECTED = (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered, MaxTurnsExceeded)


def _run_sdk(name: str) -> None:
    build, max_turns = SDK_SCENARIOS[name]
    agent, text, _ = build()
    config = RunConfig(workflow_name=name, trace_include_sensitive_data=True, tracing_disabled=False)

    async def go() -> None:
        await Runner.run(agent, text, run_config=config, max_turns=max_turns or 10)

    with contextlib.suppress(*_SDK_EXPECTED):
        _own_loop(go())


class _Records(TracingProcessor):
    """The SDK's own export dicts: the trace when it starts, each span when it ends."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def _keep(self, item: Trace | Span[Any]) -> None:
        exported = item.export()
        if exported is not None:
            self.records.append(exported)

    def on_trace_start(self, trace: Trace) -> None:
        self._keep(trace)

    def on_trace_end(self, trace: Trace) -> None:
        pass

    def on_span_start(self, span: Span[Any]) -> None:
        pass

    def on_span_end(self, span: Span[Any]) -> None:
        self._keep(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@dataclass
class _SdkProvider:
    processors: Sequence[TracingProcessor]

    def __enter__(self) -> None:
        self.previous = tracing_setup.GLOBAL_TRACE_PROVIDER
        provider = DefaultTraceProvider()
        provider.set_disabled(False)
        for processor in self.processors:
            provider.register_processor(processor)
        set_trace_provider(provider)

    def __exit__(self, *exc: object) -> None:
        tracing_setup.GLOBAL_TRACE_PROVIDER = self.previous


def write_sdk(name: str, path: Path) -> None:
    records = _Records()
    with _SdkProvider([records]):
        _run_sdk(name)
    path.write_text("".join(json.dumps(r) + "\n" for r in records.records), encoding="utf-8")


def write_openinference(name: str, path: Path) -> None:
    provider, exporter = _provider()
    instrumentor = OpenAIAgentsInstrumentor()
    config = TraceConfig(hide_inputs=False, hide_outputs=False, enable_genai_semconv=False)
    with _SdkProvider([]):
        instrumentor.instrument(tracer_provider=provider, config=config)
        try:
            _run_sdk(name)
        finally:
            instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    provider.shutdown()
    path.write_text(_otlp_line(spans) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# Reading the exports back (independently of the importer) and running the CLI once per file


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def _otlp_spans(path: Path, line: int = 1) -> list[dict[str, Any]]:
    """The spans of one OTLP JSON line: hex ids, integer times, attributes as a plain dict."""
    import base64

    data = json.loads(path.read_text(encoding="utf-8").splitlines()[line - 1])
    spans = []
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                attributes = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}
                parent = span.get("parentSpanId")
                spans.append({
                    "name": span["name"], "span_id": base64.b64decode(span["spanId"]).hex(),
                    "trace_id": base64.b64decode(span["traceId"]).hex(),
                    "parent": base64.b64decode(parent).hex() if parent else None,
                    "start": int(span["startTimeUnixNano"]), "end": int(span["endTimeUnixNano"]),
                    "attributes": attributes, "status": span.get("status", {}).get("code", "STATUS_CODE_UNSET"),
                    "events": [e["name"] for e in span.get("events", [])],
                })
    return spans


def _ns(iso: str) -> int:
    """An ISO UTC time as integer nanoseconds since the epoch (no float rounding)."""
    from datetime import datetime

    head, _, rest = iso.replace("+00:00", "Z").rstrip("Z").partition(".")
    seconds = int(datetime.strptime(head, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp())
    return seconds * 1_000_000_000 + int((rest or "0").ljust(9, "0")[:9])


def _sdk_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@dataclass
class Export:
    path: Path
    events: list[dict[str, Any]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def shape(self) -> list[tuple[str, str]]:
        return [(e["type"], e.get("tool", "")) for e in self.events]


def _convert(path: Path) -> Export:
    result = _cli(path.parent, "convert", path.name)
    events = [json.loads(line) for line in result.stdout.splitlines()] if result.returncode == 0 else []
    return Export(path, events)


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Export]:
    """Every scenario written once: `pai_*` (otel), `sdk_*` (openai-agents), `oi_*` (openinference)."""
    folder = tmp_path_factory.mktemp("exports")
    paths: list[Path] = []
    for key in PYDANTIC_SCENARIOS:
        paths.append(folder / f"pai_{key}.otlp.jsonl")
        write_pydantic(key, paths[-1])
    for key in SDK_SCENARIOS:
        paths.append(folder / f"sdk_{key}.agents.jsonl")
        write_sdk(key, paths[-1])
        paths.append(folder / f"oi_{key}.otlp.jsonl")
        write_openinference(key, paths[-1])
    return {path.name.split(".")[0]: _convert(path) for path in paths}




ONE_RUN_FILES = [name for name in (
    *(f"pai_{k}" for k in PYDANTIC_SCENARIOS if k != "two_runs"),
    *(f"sdk_{k}" for k in SDK_SCENARIOS), *(f"oi_{k}" for k in SDK_SCENARIOS))]


def _tool_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "execute_tool"]


# --- Common rules (§7), for every export ------------------------------------------------------------


@pytest.mark.parametrize("name", ONE_RUN_FILES)
def test_seq_and_time_order(exports: dict[str, Export], name: str) -> None:
    """§7: events get seq 1..n and are ordered by time; point 30/7: run.start first, terminal last."""
    events = exports[name].events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    times = [_ns(e["time"]) for e in events]
    assert times == sorted(times)
    assert events[0]["type"] == "run.start"
    assert events[-1]["type"] in ("run.completed", "run.failed")
    assert sum(e["type"] in ("run.start", "run.completed", "run.failed") for e in events) == 2


@pytest.mark.parametrize("name", ONE_RUN_FILES)
def test_source_provenance(exports: dict[str, Export], name: str) -> None:
    """§7: `data.source` holds {format, file, line, span_id}."""
    export = exports[name]
    fmt = {"pai": "otel", "sdk": "openai-agents", "oi": "openinference"}[name.split("_")[0]]
    lines = len(export.path.read_text(encoding="utf-8").splitlines())
    for event in export.events:
        source = event["data"]["source"]
        assert (source["format"], source["file"]) == (fmt, export.path.name)
        assert 1 <= source["line"] <= lines and source["span_id"]


@pytest.mark.parametrize("name", ONE_RUN_FILES)
def test_every_call_answered_once(exports: dict[str, Export], name: str) -> None:
    """§7: a span's start is the call, its end the result; call_ids are unique (a repeat gets `~n`)."""
    export = exports[name]
    calls = [e["call_id"] for e in export.of("tool.call")]
    results = [e["call_id"] for e in export.of("tool.result")]
    assert len(set(calls)) == len(calls)
    expected = [c for c in calls if name != "pai_approval"]  # the deferred call never ran (point 29)
    assert sorted(results) == sorted(expected)


@pytest.mark.parametrize("name", ONE_RUN_FILES)
def test_converted_trace_passes_native_check(exports: dict[str, Export], name: str, tmp_path: Path) -> None:
    """§7: `convert` writes native JSONL, which `check` (default --input-format native) accepts."""
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in exports[name].events), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps(_CONTRACT), encoding="utf-8")
    result = _cli(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["summary"]["events"] == len(exports[name].events)


# A small contract: no `flaky` tool, nothing after a stop, every call answered.
_CONTRACT = {"version": 2, "name": "fw", "rules": [
    {"id": "no-flaky", "kind": "deny_tool", "tool": "flaky"},
    {"id": "stop-final", "kind": "stop_is_final"},
    {"id": "answered", "kind": "tool_result_required"},
]}


def _auto_check(export: Export) -> tuple[int, dict[str, Any]]:
    folder = export.path.parent
    (folder / "c.json").write_text(json.dumps(_CONTRACT), encoding="utf-8")
    result = _cli(folder, "check", "-c", "c.json", "-t", export.path.name, "--input-format", "auto",
                  "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.mark.parametrize(("name", "failing"), [
    ("pai_delegate", []), ("pai_retry", []), ("pai_approval", ["answered"]), ("sdk_failure_fn", ["no-flaky"]),
    ("oi_failure_fn", ["no-flaky"]), ("sdk_output_guardrail", []), ("oi_input_guardrail", []),
    ("sdk_handoff_chain", []),
])
def test_auto_check_verdict(exports: dict[str, Export], name: str, failing: list[str]) -> None:
    """§7: `check --input-format auto` sniffs the format; the verdict is the converted trace's.
    A guardrail stop is followed only by run.failed (allowed after a stop); the deferred call has no result."""
    code, report = _auto_check(exports[name])
    assert [r["rule_id"] for r in report["results"] if not r["passed"]] == failing
    assert code == (1 if failing else 0)


# --- pydantic-ai (otel) -------------------------------------------------------------------------------


def test_pai_nested_agent_run_is_one_run(exports: dict[str, Export]) -> None:
    """Point 30: the run root is the outermost invoke_agent span; the inner agent's run is inside it."""
    export = exports["pai_delegate"]
    assert export.shape() == [("run.start", ""), ("tool.call", "ask_expert"), ("tool.call", "lookup_order"),
                              ("tool.result", "lookup_order"), ("tool.result", "ask_expert"),
                              ("run.completed", "")]
    spans = _otlp_spans(export.path)
    roots = [s for s in spans if s["parent"] is None]
    assert len(roots) == 1
    assert export.events[0]["data"]["source"]["span_id"] == roots[0]["span_id"]
    assert {e["run_id"] for e in export.events} == {roots[0]["trace_id"]}


def test_pai_native_call_ids_and_args(exports: dict[str, Export]) -> None:
    """§7 otel row: call_id is gen_ai.tool.call.id; args are the parsed gen_ai.tool.call.arguments."""
    calls = exports["pai_delegate"].of("tool.call")
    assert [(c["call_id"], c["args"]) for c in calls] == [("outer_1", {"question": "Is A1 paid?"}),
                                                          ("inner_1", {"order_id": "A1"})]


def test_pai_results_parsed_like_args(exports: dict[str, Export]) -> None:
    """Point 26: a JSON result text becomes the JSON value, other text stays the string."""
    results = {r["call_id"]: r["result"] for r in exports["pai_delegate"].of("tool.result")}
    assert results == {"inner_1": {"order": "A1", "paid": 10.0}, "outer_1": "A1 is paid."}


def test_pai_times_are_span_bounds_in_nanoseconds(exports: dict[str, Export]) -> None:
    """§7 and point 36: call at the span start, result at its end, run at the root's bounds, integer ns;
    duration_ms = end - start."""
    export = exports["pai_delegate"]
    spans = {s["span_id"]: s for s in _otlp_spans(export.path)}
    for event in export.events:
        span = spans[event["data"]["source"]["span_id"]]
        bound = span["start"] if event["type"] in ("tool.call", "run.start") else span["end"]
        assert _ns(event["time"]) == bound, event
        if event["type"] in ("tool.result", "run.completed"):
            assert event["duration_ms"] == pytest.approx((span["end"] - span["start"]) / 1e6, abs=1e-6)


def test_pai_model_retry_is_a_failed_call_then_a_new_one(exports: dict[str, Export]) -> None:
    """Point 30: a tool failure is status ERROR or an exception event; the retry is a new call (own id)."""
    export = exports["pai_retry"]
    spans = {s["span_id"]: s for s in _tool_spans(_otlp_spans(export.path))}
    results = export.of("tool.result")
    assert [(r["call_id"], r["ok"]) for r in results] == [("call_1", False), ("call_2", True)]
    for result in results:
        span = spans[result["data"]["source"]["span_id"]]
        failed = span["status"] in ("STATUS_CODE_ERROR", 2) or "exception" in span["events"]
        assert result["ok"] is not failed
    assert [c["args"] for c in export.of("tool.call")] == [{"order_id": "a1"}, {"order_id": "A1"}]


def test_pai_output_tool_is_not_a_call(exports: dict[str, Export]) -> None:
    """Point 29 (per call): pydantic-ai's output tool `final_result` runs no tool and is not a tool.call."""
    export = exports["pai_structured"]
    assert export.shape() == [("run.start", ""), ("tool.call", "refund"), ("tool.result", "refund"),
                              ("run.completed", "")]


def test_pai_run_stream_tool_without_arguments(exports: dict[str, Export]) -> None:
    """§7: run_stream's tool step is an execute_tool span like any other; no arguments give `args: {}`."""
    export = exports["pai_stream"]
    assert export.shape() == [("run.start", ""), ("tool.call", "now"), ("tool.result", "now"),
                              ("run.completed", "")]
    assert export.of("tool.call")[0]["args"] == {}
    assert export.of("tool.result")[0]["result"] == "12:00"


def test_pai_dataclass_result_is_json(exports: dict[str, Export]) -> None:
    """Point 26: pydantic-ai serialises a dataclass to JSON text, which becomes the object."""
    result = next(r for r in exports["pai_values"].of("tool.result") if r["tool"] == "order_record")
    assert result["result"] == {"order_id": "A1", "paid": 10.0}
    assert "raw_result" not in result["data"]


def test_pai_repr_looking_string_is_kept_as_text(exports: dict[str, Export]) -> None:
    """Point 26: a Python repr is kept as a string (never evaluated); spec silent on whether a string the
    tool itself returned counts as a repr: the product copies it to data.raw_result, a reasonable reading."""
    result = next(r for r in exports["pai_values"].of("tool.result") if r["tool"] == "order_repr")
    assert result["result"] == "Order(order_id='A1', paid=10.0)"
    assert result["data"].get("raw_result", result["result"]) == result["result"]


def test_pai_call_without_arguments_in_one_turn(exports: dict[str, Export]) -> None:
    """§7: three calls in one model turn, args parsed; a call with no arguments at all gets `{}`."""
    export = exports["pai_values"]
    assert [(c["tool"], c["call_id"], c["args"]) for c in export.of("tool.call")] == [
        ("order_record", "call_1", {"order_id": "A1"}), ("order_repr", "call_2", {"order_id": "A1"}),
        ("ping", "call_3", {})]
    assert [e["type"] for e in export.events][1:7] == ["tool.call"] * 3 + ["tool.result"] * 3


def test_pai_two_runs_convert_needs_run(exports: dict[str, Export]) -> None:
    """Point 34: without --run, several runs exit 2 and the message lists the run ids and both options."""
    path = exports["pai_two_runs"].path
    result = _cli(path.parent, "convert", path.name)
    assert (result.returncode, result.stdout) == (2, "")
    trace_ids = {_otlp_spans(path, line)[0]["trace_id"] for line in (1, 2)}
    assert len(trace_ids) == 2
    assert all(t in result.stderr for t in trace_ids)
    assert "--run" in result.stderr and "--out-dir" in result.stderr


def test_pai_two_runs_check_needs_run(exports: dict[str, Export]) -> None:
    """Point 34: `check --input-format` with several runs and no --run is exit 2 naming the run ids."""
    path = exports["pai_two_runs"].path
    (path.parent / "c.json").write_text(json.dumps(_CONTRACT), encoding="utf-8")
    result = _cli(path.parent, "check", "-c", "c.json", "-t", path.name, "--input-format", "otel")
    assert (result.returncode, result.stdout) == (2, "")
    assert all(_otlp_spans(path, line)[0]["trace_id"] in result.stderr for line in (1, 2))


def test_pai_two_runs_check_run_all(exports: dict[str, Export]) -> None:
    """Point 34: `--run all` checks every run as a batch, one section per run id."""
    path = exports["pai_two_runs"].path
    (path.parent / "c.json").write_text(json.dumps(_CONTRACT), encoding="utf-8")
    result = _cli(path.parent, "check", "-c", "c.json", "-t", path.name, "--input-format", "otel", "--run", "all",
                  "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["traces"] == 2
    assert [r["run"] for r in report["reports"]] == [_otlp_spans(path, line)[0]["trace_id"] for line in (1, 2)]


def test_pai_two_runs_convert_one_run(exports: dict[str, Export], tmp_path: Path) -> None:
    """Point 34 / §7: `--run ID` converts that run only; `--out-dir` writes DIR/<run id>.jsonl for each."""
    path = exports["pai_two_runs"].path
    second = _otlp_spans(path, 2)[0]["trace_id"]
    one = _cli(path.parent, "convert", path.name, "--run", second)
    assert one.returncode == 0, one.stderr
    events = [json.loads(line) for line in one.stdout.splitlines()]
    assert {e["run_id"] for e in events} == {second}
    assert {e["data"]["source"]["line"] for e in events} == {2}
    every = _cli(path.parent, "convert", path.name, "--out-dir", str(tmp_path / "runs"))
    assert every.returncode == 0, every.stderr
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        f"{_otlp_spans(path, line)[0]['trace_id']}.jsonl" for line in (1, 2))


def test_pai_usage_limit_fails_the_run(exports: dict[str, Export]) -> None:
    """§7 / point 31: the root ending with an error is run.failed (status failed), its error text the reason."""
    export = exports["pai_usage_limit"]
    assert export.shape() == [("run.start", ""), ("tool.call", "ping"), ("tool.result", "ping"), ("run.failed", "")]
    terminal = export.events[-1]
    assert terminal["status"] == "failed"
    assert "request_limit" in terminal["reason"]
    assert export.of("tool.result")[0]["ok"] is True


def test_pai_tool_exception_fails_call_and_run(exports: dict[str, Export]) -> None:
    """§7 otel row (status.code = 2 is a failure) and point 31 (the run's error text is the reason)."""
    export = exports["pai_tool_error"]
    assert export.shape() == [("run.start", ""), ("tool.call", "boom"), ("tool.result", "boom"), ("run.failed", "")]
    assert export.of("tool.result")[0]["ok"] is False
    assert "database is down" in export.events[-1]["reason"]


def test_pai_deferred_call_is_synthetic(exports: dict[str, Export]) -> None:
    """Point 29: a tool_call part without an execute_tool span is a synthetic tool.call at the end of the
    chat span that produced it; it never ran, so there is no result."""
    export = exports["pai_approval"]
    assert export.shape() == [("run.start", ""), ("tool.call", "refund"), ("run.completed", "")]
    call = export.of("tool.call")[0]
    assert (call["call_id"], call["args"]) == ("call_1", {"order_id": "A1", "amount": 10.0})
    assert call["data"]["source"]["synthetic"] is True
    chat = {s["span_id"]: s for s in _otlp_spans(export.path)}[call["data"]["source"]["span_id"]]
    assert chat["attributes"].get("gen_ai.operation.name") == "chat"
    assert _ns(call["time"]) == chat["end"]


# --- OpenAI Agents SDK export (openai-agents) ------------------------------------------------------


def _sdk_span(export: Export, event: dict[str, Any]) -> dict[str, Any]:
    records = _sdk_records(export.path)
    line = event["data"]["source"]["line"]
    record: dict[str, Any] = records[line - 1]
    assert record["id"] == event["data"]["source"]["span_id"]
    return record


def test_sdk_handoff_chain(exports: dict[str, Export]) -> None:
    """Point 33: each `handoff` span is agent.handoff {data: {to}}, never a tool call."""
    export = exports["sdk_handoff_chain"]
    assert export.shape() == [("run.start", ""), ("agent.handoff", ""), ("agent.handoff", ""), ("tool.call", "refund"),
                              ("tool.result", "refund"), ("run.completed", "")]
    assert [h["data"]["to"] for h in export.of("agent.handoff")] == ["b", "c"]


def test_sdk_run_id_is_trace_id(exports: dict[str, Export]) -> None:
    """§7 openai-agents row: the trace gives run_id and bounds."""
    export = exports["sdk_handoff_chain"]
    trace = next(r for r in _sdk_records(export.path) if r["object"] == "trace")
    assert {e["run_id"] for e in export.events} == {trace["id"]}


def test_sdk_call_id_is_span_id_and_times_microseconds(exports: dict[str, Export]) -> None:
    """Point 28 (the export has no call ids: span id) and point 36 (ISO times kept to the microsecond)."""
    export = exports["sdk_parallel"]
    for event in export.of("tool.call") + export.of("tool.result"):
        span = _sdk_span(export, event)
        assert event["call_id"] == span["id"]
        expected = span["started_at"] if event["type"] == "tool.call" else span["ended_at"]
        assert _ns(event["time"]) == _ns(expected)


def test_sdk_parallel_calls(exports: dict[str, Export]) -> None:
    """§7: two calls of one model turn, both started before either ended."""
    export = exports["sdk_parallel"]
    assert [e["type"] for e in export.events] == ["run.start", "tool.call", "tool.call", "tool.result",
                                                  "tool.result", "run.completed"]
    assert [c["args"] for c in export.of("tool.call")] == [{"order_id": "A1"}, {"order_id": "A2"}]


def test_sdk_repr_result_kept_and_copied(exports: dict[str, Export]) -> None:
    """Point 26: the SDK writes str() of a dict: a Python repr, kept as a string and copied to raw_result."""
    result = exports["sdk_parallel"].of("tool.result")[0]
    assert result["result"] == "{'order': 'A1', 'paid': 10.0}"
    assert result["data"]["raw_result"] == result["result"]


def test_sdk_failure_function_result(exports: dict[str, Export]) -> None:
    """§7 openai-agents row: `error` not null is ok false; the text the failure function returned is the result."""
    result = exports["sdk_failure_fn"].of("tool.result")[0]
    assert (result["ok"], result["result"]) == (False, "flaky failed: database is down")
    assert exports["sdk_failure_fn"].events[-1]["type"] == "run.completed"


@pytest.mark.parametrize(("name", "guardrail"), [("sdk_input_guardrail", "no_shell"),
                                                 ("sdk_output_guardrail", "no_promises")])
def test_sdk_guardrail_stop_at_span_end(exports: dict[str, Export], name: str, guardrail: str) -> None:
    """Point 32: a triggered guardrail is control.stop {reason: "guardrail:<name>"} at the span's end;
    point 31: the run is run.failed."""
    export = exports[name]
    stop = export.of("control.stop")
    assert [s["reason"] for s in stop] == [f"guardrail:{guardrail}"]
    span = _sdk_span(export, stop[0])
    assert span["span_data"]["type"] == "guardrail" and span["span_data"]["triggered"] is True
    assert _ns(stop[0]["time"]) == _ns(span["ended_at"])
    assert export.events[-1]["type"] == "run.failed" and export.events[-1]["status"] == "failed"
    assert [e["type"] for e in export.events][-2:] == ["control.stop", "run.failed"]


def test_sdk_output_guardrail_tool_before_stop(exports: dict[str, Export]) -> None:
    """Point 32: a tool that ran before the tripwire is not after the stop."""
    assert [e["type"] for e in exports["sdk_output_guardrail"].events] == [
        "run.start", "tool.call", "tool.result", "control.stop", "run.failed"]


def test_sdk_agent_as_tool_nested(exports: dict[str, Export]) -> None:
    """§7: the agent used as a tool is a function span; the inner agent's tool is inside it, one run."""
    assert exports["sdk_as_tool"].shape() == [
        ("run.start", ""), ("tool.call", "ask_expert"), ("tool.call", "lookup_order"), ("tool.result", "lookup_order"),
        ("tool.result", "ask_expert"), ("run.completed", "")]
    assert exports["sdk_as_tool"].of("tool.call")[0]["args"] == {"input": "Is A1 paid?"}


def test_sdk_max_turns_fails_the_run(exports: dict[str, Export]) -> None:
    """Point 31: an agent span ending with an error makes the run run.failed, its error text the reason."""
    export = exports["sdk_max_turns"]
    assert [e["type"] for e in export.events] == ["run.start", "tool.call", "tool.result", "tool.call",
                                                  "tool.result", "run.failed"]
    assert "max turns" in export.events[-1]["reason"].lower()


# --- OpenInference instrumentation of the Agents SDK (openinference) ------------------------------


def _oi_span(export: Export, event: dict[str, Any]) -> dict[str, Any]:
    return {s["span_id"]: s for s in _otlp_spans(export.path)}[event["data"]["source"]["span_id"]]


@pytest.mark.parametrize("scenario", list(SDK_SCENARIOS))
def test_openinference_matches_sdk_export(exports: dict[str, Export], scenario: str) -> None:
    """§7 / points 31-33: the same run traced two ways gives the same events (ids and times aside)."""

    def essence(export: Export) -> list[tuple[Any, ...]]:
        return [(e["type"], e.get("tool"), e.get("args"), e.get("ok"), e.get("data", {}).get("to"),
                 e.get("reason") if e["type"] == "control.stop" else None) for e in export.events]

    assert essence(exports[f"oi_{scenario}"]) == essence(exports[f"sdk_{scenario}"])


def test_openinference_handoff_is_not_a_call(exports: dict[str, Export]) -> None:
    """Point 33: an OpenInference span named `handoff to <agent>` is agent.handoff {data: {to}}."""
    export = exports["oi_handoff_chain"]
    handoffs = export.of("agent.handoff")
    assert [h["data"]["to"] for h in handoffs] == ["b", "c"]
    assert [_oi_span(export, h)["name"] for h in handoffs] == ["handoff to b", "handoff to c"]
    assert [c["tool"] for c in export.of("tool.call")] == ["refund"]


@pytest.mark.parametrize(("name", "guardrail"), [("oi_input_guardrail", "no_shell"),
                                                 ("oi_output_guardrail", "no_promises")])
def test_openinference_guardrail_stop(exports: dict[str, Export], name: str, guardrail: str) -> None:
    """Point 32: an OpenInference GUARDRAIL span maps the same way: control.stop at its end, run.failed."""
    export = exports[name]
    stop = export.of("control.stop")
    assert [s["reason"] for s in stop] == [f"guardrail:{guardrail}"]
    span = _oi_span(export, stop[0])
    assert span["attributes"]["openinference.span.kind"] == "GUARDRAIL"
    assert _ns(stop[0]["time"]) == span["end"]
    assert export.events[-1]["type"] == "run.failed"


def test_openinference_tool_ids_and_times(exports: dict[str, Export]) -> None:
    """§7 openinference row: TOOL spans, no tool.id nor LLM span here, so the span id is the call id;
    input.value parsed as args; times are the span's integer nanoseconds (point 36)."""
    export = exports["oi_parallel"]
    for event in export.of("tool.call") + export.of("tool.result"):
        span = _oi_span(export, event)
        assert span["attributes"]["openinference.span.kind"] == "TOOL"
        assert event["call_id"] == span["span_id"]
        assert _ns(event["time"]) == (span["start"] if event["type"] == "tool.call" else span["end"])


def test_openinference_results_parsed(exports: dict[str, Export]) -> None:
    """Point 26: output.value JSON text becomes the object; plain text stays the string."""
    results = {r["tool"]: r["result"] for r in exports["oi_as_tool"].of("tool.result")}
    assert results == {"lookup_order": {"order": "A1", "paid": 10.0}, "ask_expert": "A1 is paid."}


def test_openinference_failure_function_result(exports: dict[str, Export]) -> None:
    """§7 openinference row: status ERROR is ok false; the failure text is the result."""
    result = exports["oi_failure_fn"].of("tool.result")[0]
    assert (result["ok"], result["result"]) == (False, "flaky failed: database is down")


def test_openinference_max_turns_fails_the_run(exports: dict[str, Export]) -> None:
    """Point 31 (Agents SDK and OpenInference alike): the error ends the run as run.failed with its text."""
    terminal = exports["oi_max_turns"].events[-1]
    assert (terminal["type"], terminal["status"]) == ("run.failed", "failed")
    assert "max turns" in terminal["reason"].lower()


def test_pai_two_runs_summary_needs_run(exports: dict[str, Export]) -> None:
    """Point 34: `summary --input-format` with several runs and no --run is exit 2 naming the run ids."""
    path = exports["pai_two_runs"].path
    result = _cli(path.parent, "summary", "-t", path.name, "--input-format", "otel")
    assert (result.returncode, result.stdout) == (2, "")
    assert all(_otlp_spans(path, line)[0]["trace_id"] in result.stderr for line in (1, 2))


def test_pai_two_runs_summary_one_run(exports: dict[str, Export]) -> None:
    """Point 34: `summary --input-format otel --run ID` summarises that run only."""
    path = exports["pai_two_runs"].path
    first = _otlp_spans(path, 1)[0]["trace_id"]
    result = _cli(path.parent, "summary", "-t", path.name, "--input-format", "otel", "--run", first)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["events"], summary["tool_calls"], summary["tools"]) == (4, 1, ["ping"])


@pytest.mark.parametrize("version", [2, 3, 6])
def test_pai_every_instrumentation_version_gives_the_same_calls_and_results(tmp_path: Path, version: int) -> None:
    """Found by the sixth hunt: pydantic-ai's instrumentation version 2 (deprecated, still
    offered) names a tool span's args and result `tool_arguments` and `tool_response`, not
    `gen_ai.tool.call.*`: its calls had no result. Each version now gives the calls and results
    version 6 does."""
    def run(chosen: int) -> list[tuple[Any, ...]]:
        import warnings

        provider, exporter = _provider()
        with warnings.catch_warnings():   # (versions 2 to 4 are deprecated, and say so)
            warnings.filterwarnings("ignore", message="Instrumentation format versions")
            settings = InstrumentationSettings(tracer_provider=provider, meter_provider=NoOpMeterProvider(),
                                               version=chosen, include_content=True)
        agent: Agent[None, str] = Agent(_scripted([[("lookup_order", {"order_id": "A1"}, "c1")], ["Paid."]]),
                                        name="support", capabilities=[Instrumentation(settings=settings)])

        @agent.tool_plain
        def lookup_order(order_id: str) -> dict[str, Any]:
            """Look an order up."""
            return {"order": order_id, "paid": 10.0}

        _own_loop(agent.run("Is A1 paid?"))
        spans = exporter.get_finished_spans()
        provider.shutdown()
        path = tmp_path / f"v{chosen}.otlp.jsonl"
        path.write_text(_otlp_line(spans) + "\n", encoding="utf-8")
        return [(e["type"], e.get("tool"), e.get("call_id"), e.get("args"), e.get("result"), e.get("ok"))
                for e in _convert(path).events if e["type"] in ("tool.call", "tool.result")]

    assert run(version) == run(6) == [("tool.call", "lookup_order", "c1", {"order_id": "A1"}, None, None),
                                      ("tool.result", "lookup_order", "c1", None, {"order": "A1", "paid": 10.0}, True)]
