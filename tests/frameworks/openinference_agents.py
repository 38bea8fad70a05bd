"""OpenInference spans of the scripted OpenAI Agents SDK runs, as OTLP JSON lines.

The importer for `--input-format openinference` reads OTLP JSON. This module runs the very same scenarios
as `openai_agents_export` (the SDK's own runner and model classes against a fake OpenAI client, offline),
but traced by `openinference-instrumentation-openai-agents`: its processor turns the SDK's spans into
OpenTelemetry spans, which an OpenTelemetry SDK provider hands to an in-memory exporter. The spans are then
encoded exactly as the OTLP exporters encode them (`encode_spans`) and written with protobuf's JSON
mapping: camelCase keys, trace and span ids as base64, times as decimal strings of nanoseconds, enums by
name. Each line is one `ExportTraceServiceRequest`; a scenario writes one line holding all its spans, in
the order they ended.

The scenarios are those of `openai_agents_export`, plus `refund_ok_genai`: `refund_ok` with the
instrumentation's opt-in OpenTelemetry GenAI attributes (`OPENINFERENCE_ENABLE_GENAI_SEMCONV`) written
alongside its own. Every other option is pinned, so the output does not depend on `OPENINFERENCE_*`
environment variables.

Run `python -m tests.frameworks.openinference_agents OUTDIR` to write every scenario to
`OUTDIR/<scenario>.otlp.jsonl`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import json_format
from openinference.instrumentation import TraceConfig
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from .openai_agents_export import SCENARIOS as AGENT_SCENARIOS
from .openai_agents_export import fresh_trace_provider, main, run_scenario

__all__ = ["EXTENSION", "SCENARIOS", "write"]

EXTENSION = ".otlp.jsonl"
SERVICE_NAME = "support-agent"
GENAI_VARIANTS = {"refund_ok_genai": "refund_ok"}
SCENARIOS: tuple[str, ...] = (*AGENT_SCENARIOS, *GENAI_VARIANTS)


def _config(genai: bool) -> TraceConfig:
    """Nothing hidden, GenAI attributes only when asked: explicit, so environment variables cannot change it."""
    return TraceConfig(hide_llm_invocation_parameters=False, hide_llm_tools=False, hide_inputs=False,
                       hide_outputs=False, hide_input_messages=False, hide_output_messages=False,
                       hide_input_images=False, hide_input_text=False, hide_output_text=False, hide_prompts=False,
                       hide_choices=False, enable_genai_semconv=genai)


def _spans(scenario: str) -> tuple[ReadableSpan, ...]:
    """Run `scenario` under a fresh SDK trace provider with OpenInference as its only processor.

    The instrumentor is a process-wide singleton that patches the SDK, so it is instrumented for this run
    only and always uninstrumented afterwards; the OpenTelemetry provider is local (never the global one),
    so no span from another run or test can reach this exporter.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIAgentsInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        raise RuntimeError("the OpenAI Agents instrumentor is already active elsewhere in this process")
    with fresh_trace_provider():
        instrumentor.instrument(tracer_provider=provider, config=_config(scenario in GENAI_VARIANTS))
        try:
            run_scenario(GENAI_VARIANTS.get(scenario, scenario), workflow_name=scenario)
        finally:
            instrumentor.uninstrument()
    spans = exporter.get_finished_spans()
    provider.shutdown()
    return spans


def encode(spans: Sequence[ReadableSpan]) -> str:
    """One `ExportTraceServiceRequest` in protobuf's JSON mapping, as a single line."""
    message = json_format.MessageToDict(encode_spans(spans))
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def write(scenario: str, path: Path) -> None:
    """Run `scenario` with OpenInference tracing and write its spans as one OTLP JSON line to `path`."""
    path.write_text(encode(_spans(scenario)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], writer=write, extension=EXTENSION, scenarios=SCENARIOS,
                  prog="tests.frameworks.openinference_agents"))
