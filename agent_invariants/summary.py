"""TraceSummary: counts over a trace (tools used, approvals, failures, outcomes, completion claims).

Accumulated in the engine's single pass, through the same routing as the rules: the summary only
sees the event types it counts. `api.summarize_trace` runs it alone.
"""
from __future__ import annotations

from collections.abc import KeysView

from msgspec import UNSET, UnsetType

from agent_invariants._js import utf16_sorted
from agent_invariants.events import Event
from agent_invariants.report import TraceSummary
from agent_invariants.rules.base import Observer, Route

__all__ = ("SummaryCounter",)


_COUNTERS = {"tool.result": "_result", "approval.granted": "_grant", "outcome.observed": "_outcome"}
"""The counter's handler of each other type it counts."""


class SummaryCounter:
    """Counts for a TraceSummary, fed by the engine like a rule.

    It also remembers where each tool was first called and where the last outcome was observed
    (not part of the summary; `compare` uses them to point at the event behind a regression).
    """

    def __init__(self) -> None:
        self.tool_calls = 0
        self.tool_failures = 0
        # tool -> where it was first called: (seq, index) packed in one int (see `_unpacked`), as a
        # trace may name a million tools: a tuple and its two ints took three times the memory
        self._first_calls: dict[str, int | tuple[int | float, int]] = {}
        self.approvals_granted = 0
        self.outcomes_satisfied = 0
        self.outcomes_violated = 0
        self.completion_claims = 0
        self.final_outcome: str | None = None
        self.last_outcome: tuple[int | float, int] | None = None

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()   # only whether a call names a tool

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        count: Observer | None
        if event_type == "tool.call":
            count = self._call if tool is UNSET else self._named_call
        else:
            name = _COUNTERS.get(event_type)   # (by name: bound methods kept on the counter would be a cycle)
            count = None if name is None else getattr(self, name)
        if claims is True or event_type == "run.completed":
            return self._claim if count is None else (count, self._claim)
        return count

    def _call(self, event: Event, index: int) -> None:
        self.tool_calls += 1

    def _named_call(self, event: Event, index: int) -> None:
        # A set lookup per call, rather than routing again after each tool's first call: that
        # would empty the engine's route cache once per tool (a trace with a new tool on every
        # call would learn every route anew at every call).
        self.tool_calls += 1
        first_calls = self._first_calls
        if event.tool not in first_calls:
            seq = event.seq
            # routed: the call has a tool; a seq that does not fit (a float, or an int past 2**54) is kept apart
            packs = seq.__class__ is int and not seq >> _SEQ_BITS
            first_calls[event.tool] = index << _SEQ_BITS | seq if packs else (seq, index)  # type: ignore[index]

    def first_call(self, tool: str) -> tuple[int | float, int] | None:
        """(seq, index) of the first call of `tool`, or None when it was not called."""
        found = self._first_calls.get(tool)
        return None if found is None else _unpacked(found)

    @property
    def called_tools(self) -> KeysView[str]:
        """Every tool called, in order of first call."""
        return self._first_calls.keys()

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
        self.last_outcome = (event.seq, index)

    def _claim(self, event: Event, index: int) -> None:
        self.completion_claims += 1

    def finish(self, events: int) -> TraceSummary:
        return TraceSummary(
            events=events,
            tool_calls=self.tool_calls,
            tool_failures=self.tool_failures,
            tools=utf16_sorted(self._first_calls),
            approvals_granted=self.approvals_granted,
            outcomes_satisfied=self.outcomes_satisfied,
            outcomes_violated=self.outcomes_violated,
            completion_claims=self.completion_claims,
            final_outcome=self.final_outcome,
        )


_SEQ_BITS = 54   # the bits of a packed seq (one under 2**54: every seq of a trace that is not huge)


def _unpacked(found: int | tuple[int | float, int]) -> tuple[int | float, int]:
    """(seq, index) of a first call as `_named_call` keeps it."""
    if found.__class__ is tuple:
        return found
    return found & ((1 << _SEQ_BITS) - 1), found >> _SEQ_BITS  # type: ignore[operator]
