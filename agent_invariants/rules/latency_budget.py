"""latency_budget (contract version 2): how long a tool may take, per call or at a percentile."""
from __future__ import annotations

import math
from array import array
from fractions import Fraction
from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.report import RuleResult, TraceSummary, Violation
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.timing import step_ms

__all__ = ("LatencyBudget", "LatencyBudgetConfig")


class LatencyBudgetConfig(RuleConfig, frozen=True, kw_only=True, tag="latency_budget"):
    """Options of a latency_budget rule."""

    since_version: ClassVar[int] = 2

    tool: Glob = "*"
    """The calls measured: a glob on the call's tool (default `*`)."""
    max_ms: Annotated[float, Meta(gt=0)]
    """The most milliseconds a call may take (or the percentile may be)."""
    percentile: Annotated[float, Meta(gt=0, le=100)] | UnsetType = UNSET
    """Judge this percentile of the durations (0 < p <= 100) instead of each call."""
    on_missing: Literal["fail", "skip"] = "fail"
    """A call whose duration cannot be found: a violation (`fail`, the default) or not (`skip`)."""


class LatencyBudget(Rule):
    """Fails when a tool takes longer than its budget: each call, or a percentile of them.

    ## What it checks
    Every `tool.call` whose `tool` matches `tool` is measured by its result (the first later
    `tool.result` with its `call_id` that answers no other call): the result's `duration_ms`, or
    else the result's `time` minus the call's. A call without a result, a time missing (or with an
    offset of 24 hours or more) or a negative difference has no duration.

    Without `percentile`, each call is judged: `latency_budget.exceeded` at the result when the
    duration is over `max_ms` (evidence `{tool, call_id, duration_ms, max_ms, source}`, `source`
    saying `duration_ms` or `time`), and `latency_budget.duration_unresolved` (status `unresolved`)
    at a call with no duration, unless `on_missing` is `skip`.

    With `percentile: p`, the durations are judged together, once, with no event: the nearest
    rank, `sorted[max(1, ceil(p * n / 100)) - 1]` of the n measured calls (p as written, up to
    the 15 significant digits a number keeps: 64.4 of 250 calls is rank 161, although
    64.4 * 250 / 100 in floating point is a hair over), must not be over
    `max_ms` (`exceeded`, evidence `{percentile, value, max_ms, samples, unmeasured}`). Calls
    without a duration add one `duration_unresolved` under `on_missing: fail`; when there are calls
    but none was measured, that one `duration_unresolved` comes whatever `on_missing` says.

    `checked` counts the matching calls; a trace without any passes as vacuous.

    ## Why it matters
    A new model or prompt can make an agent call a slow tool in a way that times out for users,
    or a tool's own change can make each call slower. Latency is behaviour too, and a budget per
    tool keeps it from drifting unnoticed.

    ## Failing trace
    With `{"id": "fast", "kind": "latency_budget", "tool": "search", "max_ms": 2000}`:
    ```jsonl
    {"seq": 1, "type": "run.start", "time": "2026-01-01T10:00:00Z"}
    {"seq": 2, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}}
    {"seq": 3, "type": "tool.result", "call_id": "s1", "ok": true, "duration_ms": 3500, "result": {"hits": ["a", "b"]}}
    {"seq": 4, "type": "run.completed", "time": "2026-01-01T10:02:00Z"}
    ```
    Violation at seq 3, `latency_budget.exceeded`: 3500 ms, over 2000.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "s1", "time": "2026-01-01T10:00:00Z"}
    {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": true, "time": "2026-01-01T10:00:00.120Z"}
    ```

    ## Options
    - `tool` (glob, default `*`): the calls measured.
    - `max_ms` (number > 0, required).
    - `percentile` (number, 0 < p <= 100): judge that percentile instead of each call.
    - `on_missing` (`fail` or `skip`, default `fail`).

    ## Known limits
    Times are read to the microsecond. Only a result answers a call: a result without a call
    (an orphan) measures nothing. With `percentile`, each measured duration is kept until the end
    of the trace, 8 bytes per call (8 MB per million calls), and sorting them at the end takes
    about 40 bytes per call more for a moment.
    """

    kind: ClassVar[str] = "latency_budget"
    config_type: ClassVar[type[RuleConfig]] = LatencyBudgetConfig
    tags: ClassVar[tuple[str, ...]] = ("budget", "latency")
    reason: ClassVar[str] = "exceeded"
    displaces: ClassVar[bool] = True   # calls never answered are found at the end
    pairs_calls = True

    def __init__(self, config: LatencyBudgetConfig) -> None:
        super().__init__(config)
        self._config = config
        self._is_tool = compile_glob(config.tool)
        self._skip = config.on_missing == "skip"
        self._samples = array("d")          # with a percentile: every measured duration
        self._unmeasured = 0
        self._calls: Calls | None = None

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._config.tool,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call" and tool is not UNSET and self._is_tool(tool):
            return self._call
        return None   # results come through read_results

    def read_results(self, calls: Calls) -> None:
        self._calls = calls
        calls.read_results(self._result, [self._config.tool], orphans=False)

    def _call(self, event: Event, index: int) -> None:
        self.checked += 1
        if event.call_id is UNSET:   # no result can answer it
            self._unresolved(event.seq, index, event.tool, UNSET, "it has no call_id, so no result answers it")

    def _result(self, event: Event, index: int, call: PairedCall | None) -> None:
        assert call is not None   # (no orphans asked for)
        duration, source = step_ms(event.duration_ms, call.time, event.time)
        if duration is None:
            self._unresolved(call.seq, call.position, call.tool, call.call_id,
                             f"its result has no duration_ms, and the times give none ({source})")
            return
        if self._config.percentile is not UNSET:
            self._samples.append(duration)
            return
        if duration > self._config.max_ms and self.note_violation(at=index):
            self.keep(f"Call {call.tool} at seq {js_number(call.seq)} took {js_number(duration)} ms, over the "
                      f"{js_number(self._config.max_ms)} ms budget.",
                      evidence_value({"tool": call.tool, "call_id": call.call_id, "duration_ms": duration,
                                      "max_ms": self._config.max_ms, "source": source}), event.seq, index)

    def _unresolved(self, seq: int | float, index: int, tool: str | UnsetType, call_id: str | UnsetType,
                    why: str) -> None:
        if self._config.percentile is not UNSET:
            self._unmeasured += 1
            return
        if self._skip or not self.note_violation(at=index):
            return
        evidence: dict[str, Any] = {"tool": tool}
        if call_id is not UNSET:
            evidence["call_id"] = call_id
        self.keep(f"Call {tool} at seq {js_number(seq)} has no duration: {why}.", evidence_value(evidence), seq,
                  index, reason="duration_unresolved", status="unresolved")

    def is_liveness(self, violation: Violation) -> bool:
        """The percentile check is liveness (more calls may come); per call, the rule is safety
        (spec v2 §3.6): a call whose result has not come is unresolved even on a trace cut short."""
        return self._config.percentile is not UNSET

    def finish(self, summary: TraceSummary) -> RuleResult:
        assert self._calls is not None
        for call in sorted(self._calls.pending(), key=_position):   # calls never answered
            if isinstance(call, PairedCall) and call.tool is not UNSET and self._is_tool(call.tool):
                self._unresolved(call.seq, call.position, call.tool, call.call_id, "no result answers it")
        if self._config.percentile is not UNSET:
            self._judge_percentile()
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result

    def _judge_percentile(self) -> None:
        config, samples, unmeasured = self._config, self._samples, self._unmeasured
        percentile = config.percentile
        assert percentile is not UNSET
        shown = f"p{js_number(percentile)}"
        if samples:
            ordered = sorted(samples)
            value = ordered[max(1, math.ceil(Fraction(repr(percentile)) * len(ordered) / 100)) - 1]
            if value > config.max_ms and self.note_violation():
                self.keep(f"The {shown} latency of {config.tool} is {js_number(value)} ms over {len(ordered)} calls, "
                          f"over the {js_number(config.max_ms)} ms budget.",
                          evidence_value({"percentile": percentile, "value": value, "max_ms": config.max_ms,
                                          "samples": len(ordered), "unmeasured": unmeasured}))
        # unmeasured calls count under on_missing: fail; with nothing measured, always
        if unmeasured and (not samples or not self._skip) and self.note_violation():
            calls = len(samples) + unmeasured
            self.keep(f"{unmeasured} of the {calls} call{'' if calls == 1 else 's'} of {config.tool} "
                      f"{'has' if unmeasured == 1 else 'have'} no duration"
                      f"{', so the ' + shown + ' latency is unknown' if not samples else ''}.",
                      evidence_value({"samples": len(samples), "unmeasured": unmeasured}),
                      reason="duration_unresolved", status="unresolved")


def _position(call: Any) -> int:
    return call.position if isinstance(call, PairedCall) else -1
