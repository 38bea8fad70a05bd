"""LangSmith runs as the `langsmith` SDK itself posts them, from functions traced with `@traceable`
(no LangChain), for the `langsmith` importer tests.

The agent is a chain run calling an `llm` run that returns an OpenAI chat completion (as
`wrap_openai` records one: `choices[].message.tool_calls[]` with `function.name`) and `tool` runs
that return dicts, which the SDK keeps as the run's `outputs` themselves (no `output` key). The
client is a stand-in that keeps each run as the SDK posts it when it starts and patches it when it
ends, serialized by the SDK's own JSON encoder: one record per line, as they reach LangSmith.

Run `python -m tests.frameworks.langsmith_traceable OUTDIR` to write every scenario to
OUTDIR/<scenario>.runs.jsonl.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from langsmith import traceable, tracing_context
from langsmith._internal._serde import dumps_json

SCENARIOS: tuple[str, ...] = ("refund_dicts", "refund_fails")


class _Keeping:
    """Stands in for the LangSmith client: keeps what the SDK would send, sends nothing."""

    otel_exporter = None
    tracing_queue = None

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def create_run(self, **run: Any) -> None:
        self.records.append(run)

    def update_run(self, run_id: Any, **run: Any) -> None:
        self.records.append({"id": str(run_id), **run})

    def flush(self) -> None:
        """Nothing is queued."""


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


_TURNS = [[_call("call_lookup_1", "lookup_order", {"order_id": "A1"})],
          [_call("call_refund_1", "refund", {"order_id": "A1", "amount": 25})], None]


def _agent(fails: bool) -> Any:
    @traceable(run_type="llm", name="ChatOpenAI")
    def chat(messages: list[dict[str, Any]], turn: int) -> dict[str, Any]:
        calls = _TURNS[turn]
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else "Refunded 25 for A1."}
        if calls:
            message["tool_calls"] = calls
        return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}

    @traceable(run_type="tool", name="lookup_order")
    def lookup_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "paid": 25.0}

    @traceable(run_type="tool", name="refund")
    def refund(order_id: str, amount: float) -> dict[str, Any]:
        if fails:
            raise RuntimeError("payment gateway down")
        return {"refund_id": "R-9", "amount": amount, "output": "sent"}   # (a key the SDK itself writes)

    tools = {"lookup_order": lookup_order, "refund": refund}

    @traceable(run_type="chain", name="support-agent")
    def agent(question: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        for turn in range(len(_TURNS)):
            message = chat(messages, turn)["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message["content"])
            for call in message["tool_calls"]:
                try:
                    out: Any = tools[call["function"]["name"]](**json.loads(call["function"]["arguments"]))
                except RuntimeError as exc:
                    out = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(out)})
        return "gave up"

    return agent


def write(scenario: str, path: Path) -> None:
    """Run one scenario and write each run record the SDK sent, one per line."""
    client = _Keeping()
    with tracing_context(enabled=True, client=client):
        _agent(fails=scenario == "refund_fails")("Please refund order A1")
    path.write_bytes(b"".join(dumps_json(record) + b"\n" for record in client.records))


if __name__ == "__main__":
    for name in SCENARIOS:
        write(name, Path(sys.argv[1]) / f"{name}.runs.jsonl")
