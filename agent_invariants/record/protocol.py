"""The JSON Lines protocol between `record` and the agent, and the trace events its messages become.

Each message, in either direction, is one JSON object on one `\\n`-terminated UTF-8 line, with
`type` and its fields at the top level. The agent may send (`?`: optional):

| type | fields |
|---|---|
| `tool.call` | `call_id`, `tool`, `args?` (object), `call_signature?`, `approval_id?` |
| `approval.request` | `approval_id`, `tool`, `args?`, `call_id?` |
| `approval.granted` | `approval_id?`, `tool?`, `args?`, `call_id?`, `approval_scope?`, `approver?`, `approved?` |
| `approval.revoked` | `approval_id?`, `approval_scope?`, `tool?`, `reason?` |
| `agent.message` | `text?`, `claims_completion?`, `confidence?` |
| `outcome.observed` | `outcome_id`, `verdict`, `evidence_class?` |
| `control.stop` | `reason?` |
| `telemetry.<name>` | none |
| `run.completed` | `status?`, `output?`, `claims_completion?`, `confidence?` |
| `run.failed` | `status?`, `output?`, `reason?` |

Every message may also carry a `data` object, copied into the event's `data` (the harness's own
keys win). Fields are typed as in the event tables (strings of 1..500 characters, `call_signature`
up to 2,000, `status` up to 100, `confidence` 0..1). Anything else is a protocol error that ends
the run: `bad_json` (not a JSON object in valid UTF-8; a lone surrogate escape reads as U+FFFD, as
in trace files), `unknown_type:<t>`, `field:<type>.<key>`
(an unknown, missing or mistyped field; `seq`, `time`, `run_id` and `duration_ms` belong to the
harness; a message without a string `type` is `field:message.type`). JSON nested more than 500
levels deep is `bad_json` too: `check` would not read the trace line it makes.

The harness sends `run.start {protocol: 1, run_id, input}`, `tool.result {call_id, ok, result}`,
`tool.denied {call_id, reason}` and `approval.decision {approval_id, approved}`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from agent_invariants._js import replace_lone_surrogates, utf16_len
from agent_invariants.events import EVIDENCE_CLASSES, VERDICTS
from agent_invariants.jsontext import nests_too_deep
from agent_invariants.record import agentdoctor

__all__ = ("AGENT_TYPES", "Message", "ProtocolError", "event_fields", "parse_message", "reply")


class ProtocolError(Exception):
    """A message the protocol does not allow; `detail` follows `protocol:` in the run's reason."""

    def __init__(self, detail: str, message_type: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.message_type = message_type


class Message(NamedTuple):
    """A checked agent message: its type, its fields (without `type` and `data`) and its `data`."""

    type: str
    fields: dict[str, Any]
    data: dict[str, Any] | None


def _text(most: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and 1 <= utf16_len(value) <= most


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _args(value: Any) -> bool:
    return isinstance(value, dict)


def _anything(value: Any) -> bool:
    return True


def _confidence(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda value: value in choices and isinstance(value, str)


def _any_text(value: Any) -> bool:
    return isinstance(value, str)


_ID, _SIGNATURE, _STATUS = _text(500), _text(2000), _text(100)

AGENT_TYPES: dict[str, tuple[dict[str, Callable[[Any], bool]], tuple[str, ...]]] = {
    "tool.call": ({"call_id": _ID, "tool": _ID, "args": _args, "call_signature": _SIGNATURE, "approval_id": _ID},
                  ("call_id", "tool")),
    "approval.request": ({"approval_id": _ID, "tool": _ID, "args": _args, "call_id": _ID}, ("approval_id", "tool")),
    "approval.granted": ({"approval_id": _ID, "tool": _ID, "args": _args, "call_id": _ID, "approval_scope": _ID,
                          "approver": _ID, "approved": _boolean}, ()),
    "approval.revoked": ({"approval_id": _ID, "approval_scope": _ID, "tool": _ID, "reason": _ID}, ()),
    "agent.message": ({"text": _any_text, "claims_completion": _boolean, "confidence": _confidence}, ()),
    "outcome.observed": ({"outcome_id": _ID, "verdict": _one_of(VERDICTS), "evidence_class": _one_of(EVIDENCE_CLASSES)},
                         ("outcome_id", "verdict")),
    "control.stop": ({"reason": _ID}, ()),
    "run.completed": ({"status": _STATUS, "output": _anything, "claims_completion": _boolean,
                       "confidence": _confidence}, ()),
    "run.failed": ({"status": _STATUS, "output": _anything, "reason": _ID}, ()),
}
"""What the agent may send: each type's fields (and their checks), and the required ones."""

_TELEMETRY: tuple[dict[str, Callable[[Any], bool]], tuple[str, ...]] = ({}, ())

_DECODER = msgspec.json.Decoder()
_NO_DATA = object()


def parse_message(line: bytes, dialect: str = "native") -> Message:
    """The agent message on `line` (without its line end), read in `dialect` (`native`, or
    `agentdoctor`: see `agentdoctor`); ProtocolError when it is not one."""
    try:
        value = _DECODER.decode(replace_lone_surrogates(line))   # (read as U+FFFD, as in trace files)
    except (msgspec.DecodeError, RecursionError):   # (msgspec refuses nesting past about 1,000 levels)
        raise ProtocolError("bad_json") from None
    if not isinstance(value, dict) or nests_too_deep(value):   # (check reads at most 500 levels)
        raise ProtocolError("bad_json")
    if dialect == "agentdoctor":
        try:
            value = agentdoctor.inbound(value)
        except agentdoctor.NamedTwice as exc:
            raise ProtocolError(str(exc), exc.kind) from None
    kind = value.pop("type", None)
    if not isinstance(kind, str):
        raise ProtocolError("field:message.type")
    known = _TELEMETRY if kind.startswith("telemetry.") and 10 < len(kind) <= 200 else AGENT_TYPES.get(kind)
    if known is None:
        raise ProtocolError(f"unknown_type:{_cut(kind)}", kind)
    checks, required = known
    data = value.pop("data", _NO_DATA)
    if data is _NO_DATA:
        data = None
    elif not isinstance(data, dict):   # `"data": null` included
        raise ProtocolError(f"field:{kind}.data", kind)
    for key, field in value.items():
        check = checks.get(key)
        if check is None or not check(field):
            raise ProtocolError(f"field:{kind}.{_cut(key)}", kind)
    for key in required:
        if key not in value:
            raise ProtocolError(f"field:{kind}.{key}", kind)
    return Message(kind, value, data)


_ORDER = ("seq", "type", "time", "run_id", "actor", "tool", "call_id", "call_signature", "risk", "approval_id",
          "approval_scope", "approved", "ok", "outcome_id", "verdict", "evidence_class", "claims_completion",
          "confidence", "args", "result", "duration_ms", "status", "output", "approver", "reason")
"""Keys of a trace event in the order `record` writes them: contract v1's event table, then
version 2's fields; `data` comes last."""


def event_fields(fields: dict[str, Any], data: dict[str, Any] | None) -> dict[str, Any]:
    """`fields` (and `data`, unless None) in the order of a written trace event."""
    ordered = {key: fields[key] for key in _ORDER if key in fields}
    if data is not None:
        ordered["data"] = data
    return ordered


def reply(kind: str, dialect: str = "native", **fields: Any) -> bytes:
    """One harness message, as the line that goes to the agent (in its `dialect`)."""
    message = agentdoctor.outbound(kind, fields) if dialect == "agentdoctor" else {"type": kind, **fields}
    return msgspec.json.encode(message) + b"\n"


def _cut(text: str) -> str:
    """A name from the agent, as a reason shows it: at most 100 code points."""
    return text if len(text) <= 100 else text[:100] + "…"
