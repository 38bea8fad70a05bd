"""run_duration (contract version 2): how long the whole run may take."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.match.canonical import evidence_value
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.terminal import TERMINAL_TYPES, Terminal
from agent_invariants.timing import step_ms

__all__ = ("RunDuration", "RunDurationConfig")


class RunDurationConfig(RuleConfig, frozen=True, kw_only=True, tag="run_duration"):
    """Options of a run_duration rule."""

    since_version: ClassVar[int] = 2

    max_ms: Annotated[float, Meta(gt=0)]
    """The most milliseconds the run may take."""


class RunDuration(Rule):
    """Fails when the run takes longer than its budget, from its start to its terminal event.

    ## What it checks
    The run ends at its terminal event (the last `run.completed` or `run.failed`) and starts at
    its first `run.start`, or at its first event when there is none. Its duration is the
    terminal's `duration_ms` when it has one, else the terminal's `time` minus the start's (read to
    the microsecond).

    - `run_duration.exceeded`: the duration is over `max_ms`; at the terminal, evidence
      `{duration_ms, max_ms, start_seq, end_seq, source}` (`source`: `duration_ms` or `time`);
    - `run_duration.duration_unresolved` (status `unresolved`): a time is missing, names no
      instant (an offset of 24 hours or more) or comes before the start; at the terminal, or with
      no event when the trace has no terminal.

    `checked` is 1: the rule judges the run.

    ## Why it matters
    An agent that loops, waits on a hung tool or re-plans ten times still ends "completed". The
    user waited four minutes. A budget on the whole run catches what per-call budgets miss.

    ## Failing trace
    With `{"id": "quick", "kind": "run_duration", "max_ms": 60000}`:
    ```jsonl
    {"seq": 1, "type": "run.start", "time": "2026-01-01T10:00:00Z"}
    {"seq": 2, "type": "tool.call", "tool": "search", "call_id": "s1"}
    {"seq": 3, "type": "run.completed", "time": "2026-01-01T10:02:00Z"}
    ```
    Violation at seq 3, `run_duration.exceeded`: 120000 ms, over 60000.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "run.start", "time": "2026-01-01T10:00:00Z"}
    {"seq": 2, "type": "tool.call", "tool": "search", "call_id": "s1"}
    {"seq": 3, "type": "run.completed", "time": "2026-01-01T10:00:30Z"}
    ```

    ## Options
    - `max_ms` (number > 0, required).

    ## Known limits
    Only the start and the terminal are read: a trace whose run.start has no `time` is unresolved
    even if later events have one. Time spent before the first event is not seen.
    """

    kind: ClassVar[str] = "run_duration"
    routes_change: ClassVar[bool] = True   # its handlers narrow what it wants
    config_type: ClassVar[type[RuleConfig]] = RunDurationConfig
    tags: ClassVar[tuple[str, ...]] = ("budget", "latency")
    reason: ClassVar[str] = "exceeded"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"exceeded", "duration_unresolved"})

    def __init__(self, config: RunDurationConfig) -> None:
        super().__init__(config)
        self._config = config
        self._first: Event | None = None        # the first event
        self._start: Event | None = None        # the first run.start
        self._terminal = Terminal()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if self._first is None:
            return self._first_event   # once: it routes the rule again
        if event_type == "run.start" and self._start is None:
            return self._run_start
        if event_type in TERMINAL_TYPES:
            return self._terminal.seen
        return None

    def _first_event(self, event: Event, index: int) -> Literal[True]:
        self._first = event
        if event.type == "run.start":
            self._start = event
        elif event.type in TERMINAL_TYPES:
            self._terminal.seen(event, index)
        return True   # from now on, only run.start (until the first) and terminal events

    def _run_start(self, event: Event, index: int) -> Literal[True]:
        self._start = event
        return True

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = 1
        terminal, start = self._terminal.event, self._start or self._first
        max_ms = self._config.max_ms
        if terminal is None:
            if self.note_violation():
                self.keep("The run's duration is unknown: the trace has no run.completed or run.failed event.",
                          evidence_value({"max_ms": max_ms}), reason="duration_unresolved", status="unresolved")
            return self.result()
        assert start is not None   # (a trace with a terminal has a first event)
        evidence: dict[str, Any] = {"max_ms": max_ms, "start_seq": start.seq, "end_seq": terminal.seq}
        duration, why = step_ms(terminal.duration_ms, start.time, terminal.time)
        if duration is None:
            if self.note_violation():
                self.keep(f"The run's duration is unknown: {why}.", evidence_value(evidence), terminal.seq,
                          self._terminal.index, reason="duration_unresolved", status="unresolved")
            return self.result()
        evidence.update(duration_ms=duration, source=why)
        if duration > max_ms and self.note_violation():
            self.keep(f"The run took {js_number(duration)} ms (seq {js_number(start.seq)} to seq "
                      f"{js_number(terminal.seq)}), over the {js_number(max_ms)} ms budget.",
                      evidence_value(evidence), terminal.seq, self._terminal.index)
        return self.result()
