"""`record --protocol agentdoctor`: run an adapter written for Agent Doctor's harness unchanged.

That harness speaks JSON Lines too, with other names. Its messages are mapped to ours as they
come in, and our replies to its as they go out, so the trace is the one our own protocol gives:

| the adapter sends | is read as |
|---|---|
| `tool_call {callId, name (or tool), arguments?}` | `tool.call {call_id, tool, args?}` |
| `confirmation {name (or tool), arguments?}` | `approval.granted {tool, args?}` (adapter-attested) |
| `final {status?, output?}` | `run.completed {status?, output?}` |

| we reply | the adapter gets |
|---|---|
| `run.start {input, ...}` | `run_start {input, runId}` |
| `tool.result {call_id, ok, result}` | `tool_result {callId, result, isError}` |
| `tool.denied {call_id, reason}` | `tool_result {callId, isError: true, denied: true, result: {error: reason}}` |

Any other message type is read as it is (so our own types work too), and an unknown one ends the
run as `protocol:unknown_type:<type>`. Agent Doctor's adapter messages are known from its public
description (run_start, tool_call with callId and arguments, confirmation, final); a field this
mapping does not know is a protocol error naming it, as in our protocol.
"""
from __future__ import annotations

from typing import Any

__all__ = ("NamedTwice", "inbound", "outbound")

_RENAMED = {"callId": "call_id", "name": "tool", "arguments": "args"}


class NamedTwice(Exception):
    """A message naming one of our fields twice (`name` and `tool`): which one is meant? The
    protocol error names it as ours, `field:<type>.<key>`."""

    def __init__(self, kind: str, field: str) -> None:
        super().__init__(f"field:{kind}.{field}")   # (the reason's detail, after `protocol:`)
        self.kind = kind


def inbound(message: dict[str, Any]) -> dict[str, Any]:
    """An adapter message as ours (the same dict when it is not one of Agent Doctor's)."""
    kind = message.get("type")
    if kind == "tool_call":
        return {"type": "tool.call", **_renamed(message, "tool.call")}
    if kind == "confirmation":
        return {"type": "approval.granted", **_renamed(message, "approval.granted")}
    if kind == "final":
        return {**{key: value for key, value in message.items() if key != "type"}, "type": "run.completed"}
    return message


def outbound(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One of our replies as Agent Doctor's harness would send it."""
    if kind == "run.start":
        return {"type": "run_start", "input": fields["input"], "runId": fields["run_id"]}
    if kind == "tool.result":
        return {"type": "tool_result", "callId": fields["call_id"], "result": fields["result"],
                "isError": not fields["ok"]}
    if kind == "tool.denied":
        return {"type": "tool_result", "callId": fields["call_id"], "isError": True, "denied": True,
                "result": {"error": fields["reason"]}}
    return {"type": kind, **fields}   # approval.decision: no such exchange in that protocol


def _renamed(message: dict[str, Any], kind: str) -> dict[str, Any]:
    renamed: dict[str, Any] = {}
    for key, value in message.items():
        if key == "type":
            continue
        ours = _RENAMED.get(key, key)
        if ours in renamed:
            raise NamedTwice(kind, ours)
        renamed[ours] = value
    return renamed
