"""TraceSummary: counts over a trace (tools used, approvals, failures, outcomes, completion claims).

Accumulated in the engine's single pass, through the same routing as the rules: the summary only
sees the event types it counts. `summarize_trace` runs it alone.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from msgspec import UNSET, UnsetType

from agent_invariants._js import utf16_sort_key
from agent_invariants.events import Event, TraceSource, open_trace
from agent_invariants.report import TraceSummary

__all__ = ("SummaryCounter", "summarize_trace")


class SummaryCounter:
    """Counts for a TraceSummary, fed by the engine like a rule.

    `tools` is filled when routing: the engine asks `route` exactly once for each (type, tool)
    it meets, so every `tool.call` tool name passes through here.
    """

    def __init__(self) -> None:
        self.tool_calls = 0
        self.tool_failures = 0
        self.tools: set[str] = set()
        self.approvals_granted = 0
        self.outcomes_satisfied = 0
        self.outcomes_violated = 0
        self.completion_claims = 0
        self.final_outcome: str | None = None

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType):
        claim = claims is True or event_type == "run.completed"
        if event_type == "tool.call":
            if tool is not UNSET:
                self.tools.add(tool)
            return self._call_and_claim if claim else self._call
        if event_type == "tool.result":
            return self._result_and_claim if claim else self._result
        if event_type == "approval.granted":
            return self._grant_and_claim if claim else self._grant
        if event_type == "outcome.observed":
            return self._outcome_and_claim if claim else self._outcome
        return self._claim if claim else None

    def _call(self, event: Event, index: int) -> None:
        self.tool_calls += 1

    def _result(self, event: Event, index: int) -> None:
        if event.ok is False:
            self.tool_failures += 1

    def _grant(self, event: Event, index: int) -> None:
        if event.approved is not False:
            self.approvals_granted += 1

    def _outcome(self, event: Event, index: int) -> None:
        verdict = event.verdict
        if verdict == "satisfied":
            self.outcomes_satisfied += 1
        elif verdict == "violated":
            self.outcomes_violated += 1
        self.final_outcome = None if verdict is UNSET else verdict

    def _claim(self, event: Event, index: int) -> None:
        self.completion_claims += 1

    def _call_and_claim(self, event: Event, index: int) -> None:
        self.tool_calls += 1
        self.completion_claims += 1

    def _result_and_claim(self, event: Event, index: int) -> None:
        self._result(event, index)
        self.completion_claims += 1

    def _grant_and_claim(self, event: Event, index: int) -> None:
        self._grant(event, index)
        self.completion_claims += 1

    def _outcome_and_claim(self, event: Event, index: int) -> None:
        self._outcome(event, index)
        self.completion_claims += 1

    def finish(self, events: int) -> TraceSummary:
        return TraceSummary(
            events=events,
            tool_calls=self.tool_calls,
            tool_failures=self.tool_failures,
            tools=sorted(self.tools, key=utf16_sort_key),
            approvals_granted=self.approvals_granted,
            outcomes_satisfied=self.outcomes_satisfied,
            outcomes_violated=self.outcomes_violated,
            completion_claims=self.completion_claims,
            final_outcome=self.final_outcome,
        )


def summarize_trace(trace: TraceSource | str | bytes | Iterable[Event | Mapping]) -> TraceSummary:
    """Count tools, approvals, failures, outcomes and completion claims in a trace."""
    from agent_invariants.engine import run_observers
    counter = SummaryCounter()
    events = run_observers(open_trace(trace), [counter])
    return counter.finish(events)
