"""`record --replay B`: answer calls and approval requests as a baseline run was answered.

A call's key is its tool and its args in RFC 8785 canonical form (no args is another key than
`{}`). The k-th call of this run with a key gets the result paired with the k-th call of the
baseline with that key (a result belongs to the nearest earlier unanswered call with its
`call_id`): its `ok`, `result` and `duration_ms`, and the harness-attested `outcome.observed`
events that directly follow it. A call the baseline never answered is left to the fixtures, and
so is one it answered with a fixture miss (`data.fixture_miss`): replayed, the miss would be an
ordinary failed call, and a run that never exercised its path would pass. Approval requests
replay the baseline's harness-attested grants, keyed the same way (a grant that was an approval
miss is not replayed either).

The baseline is read whole when `record` starts and must be a valid trace, its version-2 fields
of the right types too (else exit 2 before the agent starts). What is kept is one entry per call
and per harness grant; results stay as the JSON text they are (at most 1,040,384 bytes each, so
that the trace line they go into stays readable).
"""
from __future__ import annotations

import os
from collections import defaultdict, deque
from typing import Any, NamedTuple

from msgspec import UNSET, Raw

from agent_invariants.errors import TraceError
from agent_invariants.events import Event
from agent_invariants.match.canonical import canonical_text
from agent_invariants.pairing import Pairing
from agent_invariants.payloads import decoded, field_problem, text
from agent_invariants.reader import TraceFile
from agent_invariants.record.fixtures import MAX_MESSAGE_BYTES

__all__ = ("Replay", "Replayed", "call_key")


class Replayed(NamedTuple):
    """A baseline answer: the result event's seq and what it said, and the outcomes after it."""

    seq: int | float
    ok: bool
    result: Any   # the JSON text (msgspec.Raw), written and sent as it is
    duration_ms: Any
    outcomes: list[dict[str, Any]]   # {outcome_id, verdict, evidence_class?} of each


class Grant(NamedTuple):
    """A harness-attested baseline grant."""

    approved: bool
    approval_scope: str | None
    approver: str | None


def call_key(tool: str, args: Any) -> tuple[str, str | None]:
    """What a call is matched by: its tool and canonical args (None: no args)."""
    return tool, None if args is None else canonical_text(args)


class Replay:
    """The answers of a baseline trace, by call key, in order; used up as this run asks."""

    def __init__(self, path: str | os.PathLike[str], max_line_bytes: int) -> None:
        self.answers: dict[tuple[str, str | None], deque[list[Replayed | None]]] = defaultdict(deque)
        self.grants: dict[tuple[str, str | None], deque[Grant | None]] = defaultdict(deque)
        waiting: Pairing[list[Replayed | None]] = Pairing()
        last: Replayed | None = None   # the answer the next outcomes may follow
        source = TraceFile(path, max_line_bytes=max_line_bytes)
        self.events = 0   # (none: a wrong path, or a file cut short, most likely)
        for event in source:
            self.events += 1
            problem = field_problem(event)
            if problem is None and event.result is not UNSET and len(event.result) > MAX_MESSAGE_BYTES:
                problem = f"$.result: {len(event.result):,} bytes, more than the {MAX_MESSAGE_BYTES:,} a replayed " \
                          "result may hold"
            if problem is not None:
                raise TraceError(source.name, None, f"event seq {event.seq}: {problem}")
            last = self._read(event, waiting, last)

    def _read(self, event: Event, waiting: Pairing[list[Replayed | None]], last: Replayed | None) -> Replayed | None:
        if event.type == "tool.call" and event.tool is not UNSET:
            slot: list[Replayed | None] = [None]
            self.answers[call_key(event.tool, _args(event))].append(slot)
            waiting.call(event.call_id, slot)
            return None
        if event.type == "tool.result":
            answered = waiting.result(event.call_id)
            if answered is None or _missed(event):
                return None
            answer = Replayed(event.seq, event.ok is not False,
                              None if event.result is UNSET else Raw(bytes(event.result)),
                              None if event.duration_ms is UNSET else decoded(event.duration_ms), [])
            answered[0] = answer
            return answer
        if event.type == "outcome.observed" and last is not None and _attested(event) == "harness":
            outcome: dict[str, Any] = {"outcome_id": event.outcome_id, "verdict": event.verdict}
            if event.evidence_class is not UNSET:
                outcome["evidence_class"] = event.evidence_class
            last.outcomes.append(outcome)
            return last
        if event.type == "approval.granted" and event.tool is not UNSET and _attested(event) == "harness":
            self.grants[call_key(event.tool, _args(event))].append(None if _missed(event) else Grant(
                event.approved is not False, None if event.approval_scope is UNSET else event.approval_scope,
                text(event.approver)))
        return None

    def answer(self, tool: str, args: Any) -> Replayed | None:
        """The baseline's answer to the next call of `tool` with `args` (None: it has none)."""
        found = self.answers.get(call_key(tool, args))
        if not found:
            return None
        return found.popleft()[0]

    def grant(self, tool: str, args: Any) -> Grant | None:
        """The baseline's decision on the next approval request of `tool` with `args`."""
        found = self.grants.get(call_key(tool, args))
        return found.popleft() if found else None


def _args(event: Event) -> Any:
    return None if event.args is UNSET else decoded(event.args)


def _attested(event: Event) -> str | None:
    return None if event.data is UNSET else text(event.data.attested_by)


def _missed(event: Event) -> bool:
    """Whether `record` made this result or grant for a call or request nothing answered."""
    missed = UNSET if event.data is UNSET else event.data.fixture_miss
    return missed is not UNSET and bytes(missed) == b"true"
