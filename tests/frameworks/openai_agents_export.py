"""Real OpenAI Agents SDK trace exports, produced by running the SDK offline on scripted model replies.

The importer for `--input-format openai-agents` reads what the SDK's own tracing hands to an exporter:
`trace.export()` and `span.export()` dicts. This module runs the Agents SDK itself (its own runner,
tool execution, guardrails and handoffs, and its own `OpenAIResponsesModel` / `OpenAIChatCompletionsModel`
code) against a fake OpenAI client that replays canned model replies, so nothing reaches the network and
no API key is needed, while the spans are exactly the ones a real run emits.

The file is JSON lines, one export dict per line, in the order a processor receives them, which is also
what the SDK's default exporter sends: the trace record when the trace starts (`on_trace_start`; the trace
carries no times), then each span when it ends (`on_span_end`), children before their parents.

Run `python -m tests.frameworks.openai_agents_export OUTDIR` to write every scenario to
`OUTDIR/<scenario>.agents.jsonl`. The scenario runner here is shared with `openinference_agents`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    ModelBehaviorError,
    ModelResponse,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    UserError,
    custom_span,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
)
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.tracing import Span, Trace, TracingProcessor, set_trace_provider
from agents.tracing import setup as tracing_setup
from agents.tracing.provider import DefaultTraceProvider
from openai.types.chat import ChatCompletion
from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from opentelemetry import trace as otel_trace

EXTENSION = ".agents.jsonl"

SCENARIOS: tuple[str, ...] = (
    "refund_ok",
    "missing_lookup",
    "tool_raises",
    "tool_raises_fatal",
    "forbidden_tool",
    "unknown_tool",
    "retries",
    "parallel",
    "convention",
    "guardrail",
    "input_guardrail",
    "tool_guardrail",
    "tool_guardrail_raise",
    "handoff",
    "handoff_refused",
    "needs_approval",
    "approval_rejected",
    "refund_ok_chat",
    "refund_ok_no_turns",
    "two_runs",
)

MODEL_NAME = "gpt-4.1-mini"
USER_INPUT = "Please refund order A1."
FINAL_TEXT = "Refunded 10.0 EUR"
APPROVAL = {"ainv.approval_id": "ap-1", "ainv.approval_scope": "refund", "ainv.approver": "alice"}
HUMAN_REVIEW = {"decision": "approve", "scope": "refund", "user.id": "bob"}


# --- The shared scenario domain: the same three tools in every framework's generator. ---


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order: only A1 and A2 exist, so `tool_raises` gets a real exception for A9."""
    if order_id not in ("A1", "A2"):
        raise ValueError(f"order {order_id} not found")
    return {"order": order_id, "paid": 10.0, "currency": "EUR"}


def refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an amount on an order."""
    return {"refunded": amount, "order": order_id}


def shell(cmd: str) -> str:
    """Run a shell command (a stand-in for the tool contracts forbid: it runs nothing)."""
    return f"ran {cmd}"


@tool_input_guardrail(name="refund_limit")
def _refund_limit(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    """Reject refunds above 5.0 so `tool_guardrail` shows what a rejected call leaves in the trace."""
    amount = json.loads(data.context.tool_arguments or "{}").get("amount", 0)
    if amount > 5.0:
        return ToolGuardrailFunctionOutput.reject_content("Refunds above 5.0 need a manager.", {"amount": amount})
    return ToolGuardrailFunctionOutput.allow()


@tool_input_guardrail(name="refund_block")
def _refund_block(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    """Halt the whole run on any refund, so `tool_guardrail_raise` shows the raising behaviour."""
    return ToolGuardrailFunctionOutput.raise_exception({"tool": data.context.tool_name})


@input_guardrail(name="no_shell_requests", run_in_parallel=False)
def _no_shell_requests(ctx: RunContextWrapper[Any], agent: Agent[Any], text: Any) -> GuardrailFunctionOutput:
    """Trip on inputs that mention `rm -rf`; blocking, so the model is never called (deterministic trace)."""
    return GuardrailFunctionOutput(output_info={"matched": "rm -rf"}, tripwire_triggered="rm -rf" in str(text))


@output_guardrail(name="no_refund_promises")
def _no_refund_promises(ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> GuardrailFunctionOutput:
    """Trip on any final answer that promises a refund, after the tools already ran."""
    return GuardrailFunctionOutput(output_info={"matched": "Refunded"}, tripwire_triggered="Refunded" in str(output))


# --- Canned model replies, served to the SDK's real model classes by a fake OpenAI client. ---


def _call(name: str, args: dict[str, Any], n: int) -> ResponseFunctionToolCall:
    """A Responses API function call item with OpenAI-shaped ids (`fc_…` item id, `call_…` call id)."""
    return ResponseFunctionToolCall(
        type="function_call",
        id=f"fc_{n:024d}",
        call_id=f"call_{name}_{n}",
        name=name,
        arguments=json.dumps(args),
        status="completed",
    )


def _text(text: str, n: int) -> ResponseOutputMessage:
    """A Responses API assistant message item."""
    content = [ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])]
    return ResponseOutputMessage(type="message", id=f"msg_{n:024d}", role="assistant", status="completed",
                                 content=content)


Item = ResponseFunctionToolCall | ResponseOutputMessage


def _response(items: Sequence[Item], n: int, request: dict[str, Any]) -> Response:
    """A complete Responses API reply, as `client.responses.create` returns it.

    Like the real API, the reply echoes the request's instructions and tool definitions (OpenInference
    reads the system message and `llm.tools` from there).
    """
    usage = ResponseUsage(input_tokens=50, output_tokens=10, total_tokens=60,
                          input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                          output_tokens_details=OutputTokensDetails(reasoning_tokens=0))
    tools = request.get("tools")
    return Response(id=f"resp_{n:024d}", object="response", created_at=1_767_225_600 + n, model=MODEL_NAME,
                    instructions=request.get("instructions") or None, output=list(items), parallel_tool_calls=True,
                    tool_choice="auto", tools=tools if isinstance(tools, list) else [], status="completed",
                    usage=usage)


def _chat_completion(items: Sequence[Item], n: int, request: dict[str, Any]) -> ChatCompletion:
    """The same reply as a Chat Completions `ChatCompletion`, for the generation-span variant."""
    calls = [{"id": i.call_id, "type": "function", "function": {"name": i.name, "arguments": i.arguments}}
             for i in items if isinstance(i, ResponseFunctionToolCall)]
    text = "".join(c.text for i in items if isinstance(i, ResponseOutputMessage) for c in i.content
                   if isinstance(c, ResponseOutputText))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return ChatCompletion.model_validate({
        "id": f"chatcmpl-{n:024d}", "object": "chat.completion", "created": 1_767_225_600 + n, "model": MODEL_NAME,
        "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    })


class _Script:
    """The replies of one run, consumed in order by whichever agent calls the model next."""

    def __init__(self, turns: Sequence[Sequence[Item]]) -> None:
        self._turns = list(turns)
        self._n = 0

    def next(self) -> tuple[Sequence[Item], int]:
        """The next turn's items and its sequence number (used to build unique reply ids)."""
        self._n += 1
        return self._turns.pop(0), self._n


class _Endpoint:
    """Stands in for `client.responses` or `client.chat.completions`: `create` replays the script."""

    def __init__(self, script: _Script, build: Callable[[Sequence[Item], int, dict[str, Any]], Any]) -> None:
        self._script = script
        self._build = build

    async def create(self, **request: Any) -> Any:
        """Return the next canned reply, whatever was asked (the request only supplies echoed fields)."""
        return self._build(*self._script.next(), request)


@dataclass
class _Chat:
    """Stands in for `client.chat`."""

    completions: _Endpoint


@dataclass
class _FakeOpenAI:
    """The part of `AsyncOpenAI` the SDK's model classes use, answering from a script, never the network.

    `base_url` is the official one, as for a real user: the SDK records it in generation spans'
    `model_config`, and OpenInference derives `llm.provider` from it.
    """

    script: _Script
    base_url: str = "https://api.openai.com/v1/"
    responses: _Endpoint = field(init=False)
    chat: _Chat = field(init=False)

    def __post_init__(self) -> None:
        self.responses = _Endpoint(self.script, _response)
        self.chat = _Chat(_Endpoint(self.script, _chat_completion))


# --- Scenarios. ---


@dataclass
class Plan:
    """One scenario: the agent to start, the model's turns, the user input and the exception it ends with."""

    turns: list[list[Item]]
    agent: Callable[[Any], Agent[Any]]
    user_input: str = USER_INPUT
    expect: tuple[type[BaseException], ...] = ()
    hooks: RunHooks[Any] | None = None
    resume: Literal["approve", "reject"] | None = None
    runs: int = 1
    task_and_turn_spans: bool = True


def _support(model: Any, guardrails: bool = False, tool_guardrail: ToolInputGuardrail[Any] | None = None,
             fatal: bool = False) -> Agent[Any]:
    """The support agent with the three domain tools, and the guardrails or failure mode a scenario needs.

    `fatal` drops the SDK's default tool error handler, so a tool exception ends the run instead of
    becoming a message to the model.
    """
    lookup_tool = function_tool(lookup_order, failure_error_function=None) if fatal else function_tool(lookup_order)
    refund_tool = function_tool(refund, tool_input_guardrails=[tool_guardrail] if tool_guardrail else None)
    return Agent(name="support", instructions="Help with orders.", model=model,
                 tools=[lookup_tool, refund_tool, function_tool(shell)],
                 input_guardrails=[_no_shell_requests] if guardrails else [],
                 output_guardrails=[_no_refund_promises] if guardrails else [])


def _refunder(model: Any, needs_approval: bool = False) -> Agent[Any]:
    """An agent whose only tool is `refund` (optionally behind the SDK's own human approval)."""
    return Agent(name="refunds", instructions="Issue refunds.", model=model,
                 tools=[function_tool(refund, needs_approval=needs_approval)])


def _triage(model: Any) -> Agent[Any]:
    """A triage agent that can only hand off to the `refunds` agent, which calls `refund`."""
    return Agent(name="triage", instructions="Route the request.", model=model, handoffs=[_refunder(model)])


def _refuse_handoff(context: RunContextWrapper[Any]) -> None:
    raise RuntimeError("handoff refused")


def _refusing_triage(model: Any) -> Agent[Any]:
    """`_triage` whose handoff's `on_handoff` raises: the run fails inside the handoff, and the SDK
    exports its span with no target agent (`to_agent: null`)."""
    return Agent(name="triage", instructions="Route the request.", model=model,
                 handoffs=[handoff(_refunder(model), on_handoff=_refuse_handoff)])


class _ApprovalHooks(RunHooks[Any]):
    """User code that records a human approval once the model asks for a refund, before the tool runs.

    The approval becomes an SDK custom span (`span_data.data` carries the fields) and, for OpenTelemetry
    instrumentations that drop custom span data, the same fields are set on the current OTel span.
    """

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        """Emit `approval.granted` and `human_review` when this reply asks for `refund`."""
        if any(getattr(item, "name", None) == "refund" for item in response.output):
            _record("approval.granted", APPROVAL)
            _record("human_review", HUMAN_REVIEW)


def _record(name: str, attributes: dict[str, Any]) -> None:
    """One user-defined span: an SDK custom span, tagged with the same attributes on the OTel side."""
    with custom_span(name, data=dict(attributes)):
        otel_trace.get_current_span().set_attributes(attributes)


def _lookup(order_id: str, n: int) -> ResponseFunctionToolCall:
    """The model asks for `lookup_order(order_id)`."""
    return _call("lookup_order", {"order_id": order_id}, n)


def _pay(n: int) -> ResponseFunctionToolCall:
    """The model asks for `refund("A1", 10.0)`."""
    return _call("refund", {"order_id": "A1", "amount": 10.0}, n)


def _plans() -> dict[str, Plan]:
    """Every scenario's turns and agent (every id in the replies is unique within the run)."""
    refund_turns: list[list[Item]] = [[_lookup("A1", 1)], [_pay(2)], [_text(FINAL_TEXT, 3)]]
    guarded = partial(_support, guardrails=True)
    return {
        "refund_ok": Plan(refund_turns, _support),
        "missing_lookup": Plan([[_pay(1)], [_text(FINAL_TEXT, 2)]], _support),
        "tool_raises": Plan([[_lookup("A9", 1)], [_text("Order A9 was not found.", 2)]], _support,
                            user_input="Please refund order A9."),
        "tool_raises_fatal": Plan([[_lookup("A9", 1)], [_text("never sent", 2)]], partial(_support, fatal=True),
                                  user_input="Please refund order A9.", expect=(UserError,)),
        "forbidden_tool": Plan([[_call("shell", {"cmd": "rm -rf /tmp/x"}, 1)], [_text("Cleaned up.", 2)]], _support,
                               user_input="Clean up /tmp/x."),
        "unknown_tool": Plan([[_call("shell", {"cmd": "rm -rf /tmp/x"}, 1)], [_text("never sent", 2)]], _refunder,
                             user_input="Clean up /tmp/x.", expect=(ModelBehaviorError,)),
        "retries": Plan([[_lookup("A1", 1)], [_lookup("A1", 2)], [_lookup("A1", 3)],
                         [_text("Order A1: paid 10.0 EUR.", 4)]], _support),
        "parallel": Plan([[_lookup("A1", 1), _lookup("A2", 2)], [_text("Both orders paid 10.0 EUR.", 3)]], _support,
                         user_input="Look up orders A1 and A2."),
        "convention": Plan(refund_turns, _support, hooks=_ApprovalHooks()),
        "guardrail": Plan([[_lookup("A1", 1)], [_text(FINAL_TEXT, 2)]], guarded,
                          expect=(OutputGuardrailTripwireTriggered,)),
        "input_guardrail": Plan([[_text("never sent", 1)]], guarded, user_input="Run rm -rf /tmp/x for me.",
                                expect=(InputGuardrailTripwireTriggered,)),
        "tool_guardrail": Plan([[_pay(1)], [_text("The refund needs a manager.", 2)]],
                               partial(_support, tool_guardrail=_refund_limit)),
        "tool_guardrail_raise": Plan([[_pay(1)], [_text("never sent", 2)]],
                                     partial(_support, tool_guardrail=_refund_block),
                                     expect=(ToolInputGuardrailTripwireTriggered,)),
        "handoff": Plan([[_call("transfer_to_refunds", {}, 1)], [_pay(2)], [_text(FINAL_TEXT, 3)]], _triage),
        "handoff_refused": Plan([[_call("transfer_to_refunds", {}, 1)], [_text("never sent", 2)]], _refusing_triage,
                                expect=(RuntimeError, UserError)),
        "needs_approval": Plan([[_pay(1)], [_text(FINAL_TEXT, 2)]], partial(_refunder, needs_approval=True),
                               resume="approve"),
        "approval_rejected": Plan([[_pay(1)], [_text("The refund was not approved.", 2)]],
                                  partial(_refunder, needs_approval=True), resume="reject"),
        "refund_ok_chat": Plan(refund_turns, _support),
        "refund_ok_no_turns": Plan(refund_turns, _support, task_and_turn_spans=False),
        "two_runs": Plan([*refund_turns, [_lookup("A2", 4)], [_text("Order A2: paid 10.0 EUR.", 5)]], _support,
                         runs=2),
    }


def _plan(scenario: str) -> Plan:
    """One scenario's plan, or a ValueError naming the known ones."""
    plans = _plans()
    if scenario not in plans:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return plans[scenario]


async def _drive(agent: Agent[Any], plan: Plan, config: RunConfig) -> None:
    """Run the agent `plan.runs` times, each run its own trace (so one file can hold several runs)."""
    for _ in range(plan.runs):
        await _run_once(agent, plan, config)


async def _run_once(agent: Agent[Any], plan: Plan, config: RunConfig) -> None:
    """Run the agent; when the run stops for a tool approval, decide it and resume from the saved state."""
    result = await Runner.run(agent, plan.user_input, run_config=config, hooks=plan.hooks)
    if plan.resume is None or not result.interruptions:
        return
    state = result.to_state()
    for item in result.interruptions:
        if plan.resume == "approve":
            state.approve(item)
        else:
            state.reject(item)
    await Runner.run(agent, state, run_config=config, hooks=plan.hooks)


def run_scenario(scenario: str, workflow_name: str | None = None) -> None:
    """Run one scenario to its end under the trace provider currently installed.

    The trace's workflow name is the scenario's, unless a variant names it (`workflow_name`).

    The exception a scenario is meant to end with (a guardrail tripwire, a fatal tool error) is caught;
    anything else propagates, so a broken scenario fails loudly instead of writing a partial export.
    It starts its own event loop, so call it from synchronous code.
    """
    plan = _plan(scenario)
    client: Any = _FakeOpenAI(_Script(plan.turns))
    model_class = OpenAIChatCompletionsModel if scenario.endswith("_chat") else OpenAIResponsesModel
    agent = plan.agent(model_class(model=MODEL_NAME, openai_client=client))
    config = RunConfig(workflow_name=workflow_name or scenario, trace_include_sensitive_data=True,
                       tracing_disabled=False, tracing={"include_task_and_turn_spans": plan.task_and_turn_spans})
    with contextlib.suppress(*plan.expect):
        asyncio.run(_drive(agent, plan, config))


@contextlib.contextmanager
def fresh_trace_provider(processors: Sequence[TracingProcessor] = ()) -> Iterator[DefaultTraceProvider]:
    """Install a new SDK trace provider (tracing forced on, only `processors`) and put the old one back.

    A new provider per run means no processor, exporter or disabled flag leaks between runs, and the
    default OpenAI exporter (which would try the network) is never registered.
    """
    previous = tracing_setup.GLOBAL_TRACE_PROVIDER
    provider = DefaultTraceProvider()
    provider.set_disabled(False)
    for processor in processors:
        provider.register_processor(processor)
    set_trace_provider(provider)
    try:
        yield provider
    finally:
        tracing_setup.GLOBAL_TRACE_PROVIDER = previous


class JsonLinesProcessor(TracingProcessor):
    """Collects export dicts the way the SDK's default processor sends them: traces at start, spans at end."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def _keep(self, item: Trace | Span[Any]) -> None:
        if (exported := item.export()) is not None:
            self.records.append(exported)

    def on_trace_start(self, trace: Trace) -> None:
        """The trace record (id, workflow name, group, metadata) comes first, as the default exporter sends it."""
        self._keep(trace)

    def on_trace_end(self, trace: Trace) -> None:
        """Nothing: the trace export has no end time, so there is nothing new to write."""

    def on_span_start(self, span: Span[Any]) -> None:
        """Nothing: a span is written once, complete, when it ends."""

    def on_span_end(self, span: Span[Any]) -> None:
        """Each span is written when it ends, with its times, data and error."""
        self._keep(span)

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self) -> None:
        """Nothing buffered."""


class LiveJsonLinesProcessor(JsonLinesProcessor):
    """A processor that also writes each span as it starts (no `ended_at` yet, its `input` often still
    empty), as a live log does: a span that ends is then written a second time, complete."""

    def on_span_start(self, span: Span[Any]) -> None:
        """The span as it starts."""
        self._keep(span)


def write(scenario: str, path: Path, processor: JsonLinesProcessor | None = None) -> None:
    """Run `scenario` with a fresh provider and write its export as JSON lines to `path` (as the
    default processor sends it, unless another `processor` is given)."""
    processor = processor or JsonLinesProcessor()
    with fresh_trace_provider([processor]):
        run_scenario(scenario)
    lines = (json.dumps(record, ensure_ascii=False, allow_nan=False) for record in processor.records)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_live(scenario: str, path: Path) -> None:
    """`write`, with each span also written as it starts (`LiveJsonLinesProcessor`)."""
    write(scenario, path, LiveJsonLinesProcessor())


def main(argv: Sequence[str], writer: Callable[[str, Path], None] = write, extension: str = EXTENSION,
         scenarios: Sequence[str] = SCENARIOS, prog: str = "tests.frameworks.openai_agents_export") -> int:
    """Write every scenario to `OUTDIR/<scenario><extension>` (shared by both generators' command lines)."""
    if len(argv) != 1:
        sys.stderr.write(f"usage: python -m {prog} OUTDIR\n")
        return 2
    outdir = Path(argv[0])
    outdir.mkdir(parents=True, exist_ok=True)
    for scenario in scenarios:
        writer(scenario, outdir / f"{scenario}{extension}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
