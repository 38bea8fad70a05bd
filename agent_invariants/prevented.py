"""Calls that were stopped: `prevented: true` on each violation at a call a `tool.denied` answered.

    {"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "c1"}
    {"seq": 2, "type": "tool.denied", "tool": "shell.exec", "call_id": "c1", "reason": "no-shell: ..."}

A denied call stays in the trace and counts wherever a call counts, so a rule that forbids it
still reports it; the report then says the attempt was stopped (spec/v2-extensions.md §10, points
75 and 84). `record --enforce` writes such denials, and `check` of the recorded file must give the
same report, so both mark violations here, in their evidence: every kind's, as point 75 says (a
version-1 kind's evidence keeps its order, `prevented` last; a version-2 kind's is canonical).
`check` marks them under version 2 only: a version-1 contract's report stays as version 1 wrote it.

A denial answers the nearest earlier call with its `call_id` that has neither a result nor a
denial yet (as a result answers one, point 3). Only calls still waiting are kept, and the indexes
of the denied calls (memory grows with unanswered and denied calls, as tool_result_required's
state does with unanswered ones).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec import UNSET

from agent_invariants.events import Event
from agent_invariants.match.canonical import evidence_value
from agent_invariants.report import Violation
from agent_invariants.rules.base import Rule

__all__ = ("Denials", "mark_prevented")


class Denials:
    """An observer of the engine: the indexes of the calls that a `tool.denied` answered."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[int]] = {}   # call_id -> indexes of its calls still unanswered
        self.denied: set[int] = set()

    def route_tools(self, event_type: str, claims: object) -> tuple[str, ...]:
        return ()   # every tool alike

    def route(self, event_type: str, tool: object, claims: object) -> Any:
        return self._handlers.get(event_type)

    @property
    def _handlers(self) -> dict[str, Any]:
        return {"tool.call": self._call, "tool.result": self._result, "tool.denied": self._denied}

    def _call(self, event: Event, index: int) -> None:
        if event.call_id is not UNSET:
            self._waiting.setdefault(event.call_id, []).append(index)

    def _result(self, event: Event, index: int) -> None:
        self._answered(event)

    def _denied(self, event: Event, index: int) -> None:
        call = self._answered(event)
        if call is not None:
            self.denied.add(call)

    def _answered(self, event: Event) -> int | None:
        """The nearest earlier call with the event's call_id still waiting, which waits no more."""
        waiting = self._waiting.get(event.call_id) if event.call_id is not UNSET else None
        if not waiting:
            return None
        call = waiting.pop()
        if not waiting:
            del self._waiting[event.call_id]   # type: ignore[arg-type]
        return call


def mark_prevented(rules: Iterable[Rule], at: set[int], *, by_seq: bool = False) -> None:
    """Add `prevented: true` to the evidence of each kept violation at one of these calls (event
    indexes; seqs with `by_seq`)."""
    if not at:
        return
    for rule in rules:
        canonical = getattr(rule.config, "since_version", 1) >= 2
        for violation in rule.violations:
            where = violation.event_seq if by_seq else violation.event_index
            if where in at:
                _mark(violation, canonical)


def _mark(violation: Violation, canonical: bool) -> None:
    evidence = {} if violation.evidence is UNSET else violation.evidence
    if evidence.get("prevented") is not True:
        evidence = {**evidence, "prevented": True}
        violation.evidence = evidence_value(evidence) if canonical else evidence
