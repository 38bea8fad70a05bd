"""LangSmith runs as the `langsmith` SDK itself posts them, from functions traced with `@traceable`
(no LangChain), or through its client by hand (`write_by_hand`), for the `langsmith` importer tests.

The agent is a chain run calling an `llm` run that returns an OpenAI chat completion (as
`wrap_openai` records one: `choices[].message.tool_calls[]` with `function.name`) and `tool` runs
that return dicts, which the SDK keeps as the run's `outputs` themselves (no `output` key). The
client is a stand-in that keeps each run as the SDK posts it when it starts and patches it when it
ends, serialized by the SDK's own JSON encoder: one record per line, as they reach LangSmith.

Run `python -m tests.frameworks.langsmith_traceable OUTDIR` to write every scenario to
OUTDIR/<scenario>.runs.jsonl.
"""
from __future__ import annotations

import datetime
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from langsmith import Client, traceable, tracing_context
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


class _KeepingClient(Client):
    """The SDK's own client, its two requests kept instead of sent: what `create_run` and
    `update_run` build is what LangSmith receives."""

    def __init__(self) -> None:
        super().__init__(api_key="unused", api_url="http://127.0.0.1:9", auto_batch_tracing=False)
        self.records: list[dict[str, Any]] = []

    def _create_run(self, run_create: dict[str, Any], **_: Any) -> None:
        self.records.append(run_create)

    def _update_run(self, run_update: dict[str, Any], **_: Any) -> None:
        self.records.append(run_update)


def write_by_hand(path: Path, traced: bool = False) -> None:
    """An agent traced by hand through the client (`create_run` when a step starts, `update_run`
    with only its end and outputs when it ends): the update's name, parent and trace are null and
    it has no start time. A chain runs `shell` then `lookup_order`; `lookup_order` fails. With
    `traced`, each run is created with its `trace_id` (the root's id), which no update repeats."""
    client = _KeepingClient()
    start = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    at = [start + datetime.timedelta(seconds=second) for second in range(6)]
    root, shell, lookup = (uuid.UUID(int=number) for number in (1, 2, 3))
    trace: dict[str, Any] = {"trace_id": root} if traced else {}
    client.create_run(name="support-agent", run_type="chain", inputs={"question": "A1?"}, id=root, start_time=at[0],
                      **trace)
    client.create_run(name="shell", run_type="tool", inputs={"cmd": "ls"}, id=shell, parent_run_id=root,
                      start_time=at[1], **trace)
    client.update_run(shell, end_time=at[2], outputs={"output": "a.txt"})
    client.create_run(name="lookup_order", run_type="tool", inputs={"order_id": "A1"}, id=lookup,
                      parent_run_id=root, start_time=at[3], **trace)
    client.update_run(lookup, end_time=at[4], error="KeyError: 'A1'")
    client.update_run(root, end_time=at[5], outputs={"output": "No such order."})
    path.write_bytes(b"".join(dumps_json(record) + b"\n" for record in client.records))


if __name__ == "__main__":
    for name in SCENARIOS:
        write(name, Path(sys.argv[1]) / f"{name}.runs.jsonl")
