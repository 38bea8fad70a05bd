"""forbidden_when (contract version 2): a tool must not be called when a condition on the run holds."""
from __future__ import annotations

from typing import Any, ClassVar

from msgspec import UNSET, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.conditions import Observed, reads_output
from agent_invariants.pairing import Calls
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.rules.output_match import condition_of
from agent_invariants.rules.terminal import TERMINAL_TYPES, Terminal

__all__ = ("ForbiddenWhen", "ForbiddenWhenConfig")


class ForbiddenWhenConfig(RuleConfig, frozen=True, kw_only=True, tag="forbidden_when"):
    """Options of a forbidden_when rule."""

    since_version: ClassVar[int] = 2

    tool: Glob
    """The calls forbidden: a glob on the call's tool."""
    when: Any
    """The condition under which they are forbidden (see `explain output_match` for conditions)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        condition_of(self.when)


class ForbiddenWhen(Rule):
    """Fails when a tool is called in a run where a condition holds.

    ## What it checks
    `when` is a condition judged once, at the end of the trace, over the whole run (see `explain
    output_match`: paths into the final output, the last `outcome.observed`, `any_of`/`all_of`).
    When it holds, each `tool.call` whose `tool` matches `tool` is a `forbidden_when.forbidden` at
    the call. When it is unresolved, one `forbidden_when.condition_unresolved` (status
    `unresolved`) at the terminal event (no event without one), unless no call matched: a rule
    whose tool was never called passes as vacuous, whatever its condition. `checked` counts the
    matching calls.

    ## Why it matters
    Some actions are wrong in some runs only: no e-mail to a customer once fraud was observed, no
    deploy when the report says tests failed. The condition is read from what the run observed,
    not from what the agent believed.

    ## Failing trace
    With `{"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email", "when": {"outcome":
    {"outcome_id": "fraud", "verdict": "violated"}}}`:
    ```jsonl
    {"seq": 1, "type": "outcome.observed", "outcome_id": "fraud", "verdict": "violated"}
    {"seq": 2, "type": "tool.call", "tool": "email", "call_id": "m1", "args": {"to": "x@y"}}
    {"seq": 3, "type": "run.completed", "output": {"refunds": ["A1"]}}
    ```
    Violation at seq 2, `forbidden_when.forbidden`.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "outcome.observed", "outcome_id": "fraud", "verdict": "satisfied"}
    {"seq": 2, "type": "tool.call", "tool": "email", "call_id": "m1", "args": {"to": "x@y"}}
    {"seq": 3, "type": "run.completed", "output": {"refunds": ["A1"]}}
    ```

    ## Options
    - `tool` (glob, required), `when` (condition, required).

    ## Known limits
    The condition is known only at the end, and is judged over the whole run: a call made before
    the fraud was observed is forbidden too. The rule keeps the position of each matching call it
    may report (at most as many as a rule keeps violations).
    """

    kind: ClassVar[str] = "forbidden_when"
    config_type: ClassVar[type[RuleConfig]] = ForbiddenWhenConfig
    tags: ClassVar[tuple[str, ...]] = ("tools", "safety")
    reason: ClassVar[str] = "forbidden"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"forbidden", "condition_unresolved"})
    checked_nothing_is_normal = True   # a tool never called is what the rule asks for

    def __init__(self, config: ForbiddenWhenConfig) -> None:
        super().__init__(config)
        self._config = config
        self._is_tool = compile_glob(config.tool)
        self._when = Observed(condition_of(config.when))
        self._terminal = Terminal()
        self.pairs_calls = self._when.reads_results   # the condition's references read results
        self._kept_calls: list[tuple[int | float, int, str]] = []   # (seq, index, tool) of the first calls

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._config.tool, *self._when.call_globs) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call":
            own = (self._call,) if tool is not UNSET and self._is_tool(tool) else ()
            return (*own, *self._when.call_handlers(tool)) or None
        if event_type in TERMINAL_TYPES:
            return self._terminal.seen
        return self._when.route(event_type)

    def read_results(self, calls: Calls) -> None:
        self._when.read_results(calls)

    def _call(self, event: Event, index: int) -> None:
        self.checked += 1
        if len(self._kept_calls) < self.cap:
            self._kept_calls.append((event.seq, index, event.tool))   # type: ignore[arg-type]   # (routed: has a tool)

    def finish(self, summary: TraceSummary) -> RuleResult:
        if self.checked == 0:
            result = self.result()
            result.vacuous = True
            return result
        config = self._config
        holds = self._when.holds(self._terminal.output(), self._terminal.index)
        reads = reads_output(self._when.condition)
        if holds is None:
            if self.note_violation():
                self.keep("The rule's `when` is unresolved: what it reads is not in the trace.",
                          evidence_value({"tool": config.tool, "when": config.when}), self._terminal.seq,
                          self._terminal.position, reason="condition_unresolved", status="unresolved",
                          reads_output=reads)
        elif holds:
            kept = self.note_violations(self.checked)
            for seq, index, tool in self._kept_calls[:kept]:
                self.keep(f"Call {tool} at seq {js_number(seq)} is forbidden: the rule's `when` holds.",
                          evidence_value({"tool": tool, "when": config.when}), seq, index,
                          reads_output=reads)
        return self.result()
