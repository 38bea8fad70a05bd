#!/usr/bin/env python3
"""OTLP JSON spans for the benchmark's import case (stdlib only, deterministic).

  gen_spans.py --spans 1000000 --per-trace 500 --out S.otlp.jsonl

An OpenTelemetry Collector file export of GenAI spans: traces of PER-TRACE spans each (one
`invoke_agent` root and its `execute_tool` children, with arguments and results as JSON text),
written as ExportTraceServiceRequest JSON lines of 512 spans, ids in hex, times as nanosecond
strings. A trace's spans are on neighbouring lines, as a Collector batching one agent at a time
writes them: an importer that lets each trace go once its last line is read keeps one or two in
memory.
"""
import argparse
import json

BASE = 1_700_000_000_000_000_000


def span(trace: str, span_id: str, parent: str | None, name: str, start: int, end: int, attributes) -> str:
    pairs = ",".join(f'{{"key":{json.dumps(key)},"value":{{"stringValue":{json.dumps(value)}}}}}'
                     for key, value in attributes)
    parent_field = f',"parentSpanId":"{parent}"' if parent else ""
    return (f'{{"traceId":"{trace}","spanId":"{span_id}"{parent_field},"name":{json.dumps(name)},"kind":1,'
            f'"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{pairs}],"status":{{}}}}')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", type=int, required=True)
    parser.add_argument("--per-trace", type=int, default=500)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    batch: list[str] = []
    written = 0
    trace_number = 0
    with open(args.out, "w", encoding="utf-8") as out:
        def flush() -> None:
            out.write('{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"agent"},'
                      '"spans":[' + ",".join(batch) + "]}]}]}\n")
            batch.clear()

        while written < args.spans:
            trace_number += 1
            trace = f"{trace_number:032x}"
            root = f"{written + 1:016x}"
            start = BASE + trace_number * 10**10
            batch.append(span(trace, root, None, "invoke_agent support", start, start + 9 * 10**9,
                              [("gen_ai.operation.name", "invoke_agent")]))
            written += 1
            for index in range(min(args.per_trace - 1, args.spans - written)):
                at = start + 1000 * (index + 1)
                batch.append(span(trace, f"{written + 1:016x}", root, "execute_tool lookup", at, at + 500, [
                    ("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "lookup"),
                    ("gen_ai.tool.call.id", f"call_{index}"),
                    ("gen_ai.tool.call.arguments", f'{{"order":"A{index}"}}'),
                    ("gen_ai.tool.call.result", '{"paid":10.0}')]))
                written += 1
                if len(batch) >= 512:
                    flush()
            if len(batch) >= 512:
                flush()
        if batch:
            flush()


if __name__ == "__main__":
    main()
