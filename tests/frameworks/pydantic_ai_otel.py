"""Real OpenTelemetry GenAI exports from pydantic-ai, written as OTLP JSON lines.

The importer for `--input-format otel` reads what an OpenTelemetry Collector's file exporter writes: one
`ExportTraceServiceRequest` JSON object per line. This module runs a pydantic-ai agent offline (a
`FunctionModel` plays the model's part from a script; the tools are the shared refund-desk tools) with
pydantic-ai's own OpenTelemetry instrumentation, collects the finished spans with an OpenTelemetry SDK
tracer provider, encodes them with the SDK's OTLP encoder and writes them as JSON, so the importer's tests
check it against the spans the framework really emits.

Each run is one line holding all of its spans in the order they ended (children before their parent, the
`invoke_agent` root last), except `two_runs` (one line per run) and `per_span_lines` (one line per span,
as a span processor that exports every span when it ends sends them).

The default flavour is protobuf's JSON mapping (`google.protobuf.json_format`): ids in base64, enums as
names (`SPAN_KIND_INTERNAL`, `STATUS_CODE_ERROR`), 64-bit integers (times, `intValue`) as decimal strings.
`write(..., flavour=...)` and `write_flavours` give the other flavours real producers write (see FLAVOURS).

Run `python -m tests.frameworks.pydantic_ai_otel OUTDIR` to write every scenario to
`OUTDIR/<scenario>.otlp.jsonl` and the refund_ok run in every flavour to `OUTDIR/flavours/`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.util.types import AttributeValue
from pydantic_ai import Agent, ModelRetry, RunContext, ToolFailed
from pydantic_ai.capabilities import AbstractCapability, Hooks, Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.tools import ToolDefinition

EXTENSION = ".otlp.jsonl"

SCENARIOS = (
    "refund_ok",
    "missing_lookup",
    "tool_raises",
    "forbidden_tool",
    "retries",
    "parallel",
    "convention",
    "human_review",
    "unknown_tool",
    "tool_retry",
    "tool_failed",
    "raw_args",
    "structured_output",
    "approval_in_hook",
    "workflow_root",
    "auto_call_ids",
    "reused_call_ids",
    "format_v5",
    "no_content",
    "two_runs",
    "per_span_lines",
)

_PROMPT = "Refund order A1"
_INSTRUCTIONS = "You handle refunds for the support desk."
_TRACER_NAME = "refund-desk"  # the instrumentation scope of the spans the user's own code emits

# The latest pydantic-ai instrumentation format: tool results in `role: "tool"` messages, as the GenAI
# conventions pair them (the default, 5, puts them in `role: "user"` messages; see `format_v5`).
_LATEST_VERSION: Literal[6] = 6


@dataclass(frozen=True)
class _Flavour:
    """How an OTLP JSON writer spells ids, enums and 64-bit integers."""

    hex_ids: bool  # lowercase hex, as the OTLP/JSON spec asks; else base64, protobuf's mapping of bytes
    enum_ints: bool  # `"kind": 1`, as the OTLP/JSON spec asks; else names like "SPAN_KIND_INTERNAL"
    int64_numbers: bool  # times and `intValue` as JSON numbers; else decimal strings, as both specs ask


_FLAVOURS = {
    "protobuf": _Flavour(hex_ids=False, enum_ints=False, int64_numbers=False),  # json_format, the default
    "collector": _Flavour(hex_ids=True, enum_ints=True, int64_numbers=False),  # Collector file exporter
    "numbers": _Flavour(hex_ids=True, enum_ints=True, int64_numbers=True),  # hand-written or older writers
    "mixed": _Flavour(hex_ids=True, enum_ints=False, int64_numbers=True),  # each dimension independent
}
FLAVOURS = tuple(_FLAVOURS)


@dataclass(frozen=True)
class _Call:
    """A tool call the scripted model makes; `call_id=None` lets pydantic-ai make an id up."""

    tool: str
    args: dict[str, Any] | str  # a string is sent as the model's raw argument text
    call_id: str | None


_Turn = tuple[_Call | str, ...]  # one model response: its tool calls and text, in order


@dataclass(frozen=True)
class _Plan:
    """One agent run: what the model says each turn and how the run is instrumented and driven."""

    turns: tuple[_Turn, ...]
    lookup_failure: Literal["raise", "retry", "failed"] = "raise"  # what lookup_order("A9") raises
    fails: bool = False  # the run ends with the tool's exception
    version: Literal[5, 6] = _LATEST_VERSION
    include_content: bool = True
    structured: bool = False  # a structured output type, which pydantic-ai returns through an output tool
    approval: Literal["", "between_steps", "review_only", "hook"] = ""
    workflow: bool = False  # the run inside a user span `invoke_workflow refund_flow`


@dataclass(frozen=True)
class _Scenario:
    """The runs written to one file, and whether each span is its own line."""

    runs: tuple[_Plan, ...]
    per_span: bool = False


def _call(tool: str, call_id: str | None, **args: Any) -> _Call:
    """A tool call with its arguments as an object, as most models' calls arrive once parsed."""
    return _Call(tool, args, call_id)


_REFUND_OK: tuple[_Turn, ...] = (
    (_call("lookup_order", "call_1", order_id="A1"),),
    (_call("refund", "call_2", order_id="A1", amount=10.0),),
    ("Refunded 10.0 EUR",),
)
_MISSING_LOOKUP: tuple[_Turn, ...] = ((_call("refund", "call_1", order_id="A1", amount=10.0),), ("Refunded 10.0 EUR",))
_LOOKUP_A9: tuple[_Turn, ...] = ((_call("lookup_order", "call_1", order_id="A9"),), ("Order A9 was not found.",))


def _retries(*call_ids: str) -> tuple[_Turn, ...]:
    """The same lookup once per id, each in a model turn of its own, then an answer."""
    return (*((_call("lookup_order", call_id, order_id="A1"),) for call_id in call_ids), ("Order A1 is paid.",))


_SCENARIOS: dict[str, _Scenario] = {
    "refund_ok": _Scenario((_Plan(_REFUND_OK),)),
    "missing_lookup": _Scenario((_Plan(_MISSING_LOOKUP),)),
    "tool_raises": _Scenario((_Plan(_LOOKUP_A9, fails=True),)),
    "forbidden_tool": _Scenario((_Plan(((_call("shell", "call_1", cmd="rm -rf /tmp/x"),), ("Done.",))),)),
    "retries": _Scenario((_Plan(_retries("call_1", "call_2", "call_3")),)),
    "parallel": _Scenario(
        (
            _Plan(
                (
                    (_call("lookup_order", "call_1", order_id="A1"), _call("lookup_order", "call_2", order_id="A2")),
                    ("Both orders are paid.",),
                )
            ),
        )
    ),
    "convention": _Scenario((_Plan(_REFUND_OK, approval="between_steps"),)),
    "human_review": _Scenario((_Plan(_REFUND_OK, approval="review_only"),)),
    "unknown_tool": _Scenario(
        (_Plan(((_call("delete_order", "call_1", order_id="A1"),), ("I cannot delete orders.",))),)
    ),
    "tool_retry": _Scenario((_Plan(_LOOKUP_A9, lookup_failure="retry"),)),
    "tool_failed": _Scenario((_Plan(_LOOKUP_A9, lookup_failure="failed"),)),
    "raw_args": _Scenario(
        (
            _Plan(
                (
                    (_Call("lookup_order", '{"order_id": "A1"}', "call_1"),),
                    (_Call("refund", "not json", "call_2"),),
                    ("I could not refund order A1.",),
                )
            ),
        )
    ),
    "structured_output": _Scenario(
        (
            _Plan(
                (
                    (_call("lookup_order", "call_1", order_id="A1"),),
                    (_call("refund", "call_2", order_id="A1", amount=10.0),),
                    (_call("final_result", "call_3", order="A1", refunded=10.0, currency="EUR"),),
                ),
                structured=True,
            ),
        )
    ),
    "approval_in_hook": _Scenario((_Plan(_REFUND_OK, approval="hook"),)),
    "workflow_root": _Scenario((_Plan(_REFUND_OK, workflow=True),)),
    "auto_call_ids": _Scenario(
        (
            _Plan(
                (
                    (_call("lookup_order", None, order_id="A1"),),
                    (_call("refund", None, order_id="A1", amount=10.0),),
                    ("Refunded 10.0 EUR",),
                )
            ),
        )
    ),
    "reused_call_ids": _Scenario((_Plan(_retries("call_0", "call_0", "call_0")),)),
    "format_v5": _Scenario((_Plan(_REFUND_OK, version=5),)),
    "no_content": _Scenario((_Plan(_REFUND_OK, include_content=False),)),
    "two_runs": _Scenario((_Plan(_REFUND_OK), _Plan(_MISSING_LOOKUP))),
    "per_span_lines": _Scenario((_Plan(_REFUND_OK),), per_span=True),
}


# The output type of `structured_output`: pydantic-ai asks the model for it as a call of its output tool
# `final_result`, which runs no tool. Its docstring is the output tool's description in the export.
@dataclass
class RefundReceipt:
    """A refund receipt."""

    order: str
    refunded: float
    currency: str


class _Batches(SpanExporter):
    """Keeps what each export call receives; with a SimpleSpanProcessor that is one span, when it ends."""

    def __init__(self) -> None:
        self.batches: list[list[ReadableSpan]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append(list(spans))
        return SpanExportResult.SUCCESS


def _part(item: _Call | str) -> ModelResponsePart:
    """A fresh message part for each run, since pydantic-ai's parts are mutable."""
    if isinstance(item, str):
        return TextPart(item)
    if item.call_id is None:
        return ToolCallPart(item.tool, item.args)
    return ToolCallPart(item.tool, item.args, tool_call_id=item.call_id)


def _model(turns: tuple[_Turn, ...]) -> FunctionModel:
    """A model that answers turn n of the script on its n-th request, whatever it was sent."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        index = sum(isinstance(message, ModelResponse) for message in messages)
        parts = [_part(item) for item in turns[index]]
        calls = any(isinstance(part, ToolCallPart) for part in parts)
        # A response id and finish reason, as a provider's model gives (`gen_ai.response.*` on chat spans).
        return ModelResponse(
            parts=parts, provider_response_id=f"resp_{index + 1}", finish_reason="tool_call" if calls else "stop"
        )

    return FunctionModel(respond, model_name="scripted-model")


def _tools(failure: Literal["raise", "retry", "failed"]) -> list[Any]:
    """The shared refund-desk tools; lookup_order fails for order A9 the way the scenario asks."""
    errors: dict[str, type[Exception]] = {"raise": ValueError, "retry": ModelRetry, "failed": ToolFailed}

    def lookup_order(order_id: str) -> dict[str, Any]:
        """Look an order up."""
        if order_id == "A9":
            raise errors[failure]("order A9 not found")
        return {"order": order_id, "paid": 10.0, "currency": "EUR"}

    def refund(order_id: str, amount: float) -> dict[str, Any]:
        """Refund an order."""
        return {"refunded": amount, "order": order_id}

    def shell(cmd: str) -> str:
        """Run a shell command."""  # never really run: the forbidden tool only has to be callable
        return "done"

    return [lookup_order, refund, shell]


def _emit_approval(tracer: trace.Tracer, convention: bool = True) -> None:
    """The user's code records a person's approval: our convention span, then a span of its own naming
    (only the latter with `convention=False`, as code that knows nothing of the convention does)."""
    if convention:
        approval = {"ainv.approval_id": "ap-1", "ainv.approval_scope": "refund", "ainv.approver": "alice"}
        with tracer.start_as_current_span("approval.granted", attributes=approval):
            pass
    review = {"decision": "approve", "scope": "refund", "user.id": "bob"}
    with tracer.start_as_current_span("human_review", attributes=review):
        pass


def _approval_hook(tracer: trace.Tracer) -> Hooks[Any]:
    """Asks for approval just before refund runs; pydantic-ai runs the hook inside the tool's span."""
    hooks: Hooks[Any] = Hooks()

    @hooks.on.before_tool_execute(tools=["refund"])
    async def approve(ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any) -> Any:
        _emit_approval(tracer)
        return args

    return hooks


def _agent(plan: _Plan, provider: TracerProvider) -> Agent[None, Any]:
    """A new agent instrumented through `provider` only, so no run sees another's tracer or settings."""
    settings = InstrumentationSettings(
        tracer_provider=provider,
        meter_provider=NoOpMeterProvider(),  # no metrics, and no global meter provider touched
        version=plan.version,
        include_content=plan.include_content,
    )
    capabilities: list[AbstractCapability[Any]] = [Instrumentation(settings=settings)]
    if plan.approval == "hook":
        capabilities.append(_approval_hook(provider.get_tracer(_TRACER_NAME)))
    return Agent(
        _model(plan.turns),
        name="support",
        instructions=_INSTRUCTIONS,
        tools=_tools(plan.lookup_failure),
        capabilities=capabilities,
        output_type=RefundReceipt if plan.structured else str,
    )


async def _run_step_by_step(agent: Agent[None, Any], tracer: trace.Tracer, convention: bool = True) -> None:
    """Drives the run node by node, as code does that has a refund approved once the order is looked up.

    The approval is emitted before the second model request (after lookup_order's span ended, before the
    model asks for refund), so its spans are children of `invoke_agent` between the two tool spans. At the
    end node the root span is still current, so the run's output goes on it as `ainv.output`.
    """
    requests = 0
    async with agent.iter(_PROMPT) as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                requests += 1
                if requests == 2:
                    _emit_approval(tracer, convention)
            elif Agent.is_end_node(node):
                trace.get_current_span().set_attribute("ainv.output", json.dumps(node.data.output))


async def _drive(plan: _Plan, agent: Agent[None, Any], tracer: trace.Tracer) -> None:
    """Runs the agent the way the plan's user code would: step by step, inside a workflow span, or plainly."""
    if plan.approval in ("between_steps", "review_only"):
        await _run_step_by_step(agent, tracer, convention=plan.approval == "between_steps")
    elif plan.workflow:
        # Typed attributes of the user's own (double, bool), beside the GenAI one.
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_workflow",
            "refund.amount": 10.0,
            "refund.automatic": False,
        }
        with tracer.start_as_current_span("invoke_workflow refund_flow", attributes=attributes) as span:
            span.set_attribute("ainv.output", json.dumps((await agent.run(_PROMPT)).output))
    else:
        await agent.run(_PROMPT)


def _run_on_own_loop(coroutine: Coroutine[Any, Any, None]) -> None:
    """Runs `coroutine` on an event loop of its own, closed afterwards.

    Neither `agent.run_sync` nor `asyncio.run` would do: the first leaves a loop of its own as the thread's
    current loop, the second replaces (and so drops, unclosed) whatever loop was current, which other code
    in the same process may own; a dropped loop is a ResourceWarning, an error under the tests' settings.
    """
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(coroutine)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


def _run(plan: _Plan, provider: TracerProvider) -> None:
    """One run; the tool's exception that ends a failing run is expected, its spans are what we want."""
    try:
        _run_on_own_loop(_drive(plan, _agent(plan, provider), provider.get_tracer(_TRACER_NAME)))
    except ValueError:
        if not plan.fails:
            raise


def _record(scenario: str) -> list[list[ReadableSpan]]:
    """Runs a scenario with a tracer provider of its own; returns the spans of each line to write."""
    spec = _SCENARIOS[scenario]
    exporter = _Batches()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "refund-desk"}), sampler=ALWAYS_ON, shutdown_on_exit=False
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    lines: list[list[ReadableSpan]] = []
    try:
        for plan in spec.runs:
            _run(plan, provider)
            lines.extend(exporter.batches if spec.per_span else [[s for batch in exporter.batches for s in batch]])
            exporter.batches = []
    finally:
        provider.shutdown()
    return lines


def _respell(value: Any, flavour: _Flavour, key: str = "") -> Any:
    """Rewrites ids and 64-bit integers of protobuf's JSON mapping the way `flavour` spells them."""
    if isinstance(value, dict):
        return {k: _respell(v, flavour, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_respell(v, flavour) for v in value]
    if flavour.hex_ids and key in ("traceId", "spanId", "parentSpanId"):
        return base64.b64decode(value).hex()
    if flavour.int64_numbers and (key.endswith("UnixNano") or key == "intValue"):
        return int(value)
    return value


def _encode(spans: list[ReadableSpan], flavour: str) -> str:
    """One ExportTraceServiceRequest as a line of compact JSON."""
    spelling = _FLAVOURS[flavour]
    message = MessageToDict(encode_spans(spans), use_integers_for_enums=spelling.enum_ints)
    return json.dumps(_respell(message, spelling), separators=(",", ":"))


def _write_lines(lines: list[list[ReadableSpan]], path: Path, flavour: str) -> None:
    path.write_text("".join(_encode(spans, flavour) + "\n" for spans in lines), encoding="utf-8")


def write(scenario: str, path: Path, flavour: str = "protobuf") -> None:
    """Runs `scenario` and writes its export to `path` (protobuf's JSON flavour unless told otherwise)."""
    if flavour not in _FLAVOURS:
        raise ValueError(f"unknown flavour {flavour!r}; known: {', '.join(FLAVOURS)}")
    _write_lines(_record(scenario), path, flavour)


def write_flavours(path: Path) -> dict[str, Path]:
    """Runs refund_ok once and writes the same spans in every flavour, one file each, into directory `path`.

    The files hold identical spans, so an importer must turn each into the same events.
    """
    path.mkdir(parents=True, exist_ok=True)
    lines = _record("refund_ok")
    written = {flavour: path / f"refund_ok.{flavour}{EXTENSION}" for flavour in FLAVOURS}
    for flavour, target in written.items():
        _write_lines(lines, target, flavour)
    return written


def main(argv: Sequence[str]) -> int:
    """Writes every scenario to OUTDIR/<scenario>.otlp.jsonl and the flavours to OUTDIR/flavours/."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tests.frameworks.pydantic_ai_otel OUTDIR\n")
        return 2
    outdir = Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        write(scenario, outdir / f"{scenario}{EXTENSION}")
    write_flavours(outdir / "flavours")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
