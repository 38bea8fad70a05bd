"""required_when (contract version 2): a tool must be called when a condition on the run holds."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.conditions import Observed, reads_output
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.rules.output_match import condition_of
from agent_invariants.rules.terminal import TERMINAL_TYPES, Terminal

__all__ = ("RequiredWhen", "RequiredWhenConfig")


class RequiredWhenConfig(RuleConfig, frozen=True, kw_only=True, tag="required_when"):
    """Options of a required_when rule."""

    since_version: ClassVar[int] = 2

    tool: Glob
    """The calls required: a glob on the call's tool."""
    when: Any
    """The condition under which they are required (see `explain output_match` for conditions)."""
    min: Annotated[int, Meta(ge=0, le=1_000_000)] = 1
    """How many counted calls are required (default 1; 0 with `iff`: allowed only when the condition holds)."""
    count: Literal["calls", "successful"] = "calls"
    """`calls` (default): every matching call; `successful`: calls whose result came and is not `ok: false`."""
    iff: bool = False
    """Also forbid the calls when the condition is false."""

    def __post_init__(self) -> None:
        super().__post_init__()
        condition_of(self.when)


class RequiredWhen(Rule):
    """Fails when a condition on the run holds but the tool it requires was not called.

    With `iff`, it also fails when the tool was called although the condition is false.

    ## What it checks
    `when` is a condition judged once, at the end of the trace (see `explain output_match`: paths
    into the final output, the last `outcome.observed`, `any_of`/`all_of`). The `tool.call` events
    whose `tool` matches `tool` are counted (only those whose result came back and is not `ok:
    false`, with `count: successful`).

    - the condition holds and fewer than `min` calls were counted: `required_when.min` at the
      terminal event (the last `run.completed` or `run.failed`; no event without one), evidence
      `{tool, count, min, when}`;
    - with `iff: true`, the condition is false: each matching call is a `required_when.forbidden`
      at the call;
    - the condition is unresolved (what it reads is not in the trace): one
      `required_when.condition_unresolved` (status `unresolved`) at the terminal event, and
      nothing else.

    `checked` is 1.

    ## Why it matters
    Reports and actions must agree both ways: if the final report lists refunds, the refund tool
    was called; with `iff`, if it lists none, no refund was made. Agent Doctor's biconditional,
    made explicit.

    ## Failing trace
    With `{"id": "refund-iff-reported", "kind": "required_when", "tool": "refund", "when": {"path":
    "refunds", "non_empty": true}, "iff": true}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "email", "call_id": "m1", "args": {"to": "x@y"}}
    {"seq": 2, "type": "run.completed", "output": {"refunds": ["A1"]}}
    ```
    Violation at seq 2, `required_when.min`: refunds are reported, but refund was called 0 times.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "r1", "args": {"order": "A1"}}
    {"seq": 2, "type": "run.completed", "output": {"refunds": ["A1"]}}
    ```

    ## Options
    - `tool` (glob, required), `when` (condition, required).
    - `min` (integer 0..1,000,000, default 1), `count` (`calls` or `successful`, default `calls`).
    - `iff` (default false): a false condition forbids the calls. With `min: 0` it is all the rule
      says: the tool may be called only when the condition holds, and need not be.

    ## Known limits
    The condition is known only at the end, so the rule keeps the position of each matching call
    it may have to report (with `iff`, at most as many as a rule keeps violations).
    """

    kind: ClassVar[str] = "required_when"
    config_type: ClassVar[type[RuleConfig]] = RequiredWhenConfig
    tags: ClassVar[tuple[str, ...]] = ("output", "tools")
    reason: ClassVar[str] = "min"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"min", "forbidden", "condition_unresolved"})

    def __init__(self, config: RequiredWhenConfig) -> None:
        super().__init__(config)
        self._config = config
        self._is_tool = compile_glob(config.tool)
        self._when = Observed(condition_of(config.when))
        self._terminal = Terminal()
        self._successful = config.count == "successful"
        self.pairs_calls = self._successful or self._when.reads_results
        self._counted = 0
        self._calls = 0
        self._kept_calls: list[tuple[int | float, int, str]] = []   # (seq, index, tool) of the first calls, for `iff`

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
        if self._successful:
            calls.read_results(self._result, [self._config.tool], orphans=False, failed=False)   # (what counts)
        self._when.read_results(calls)

    def _call(self, event: Event, index: int) -> None:
        self._calls += 1
        if not self._successful:
            self._counted += 1
        if self._config.iff and len(self._kept_calls) < self.cap:
            self._kept_calls.append((event.seq, index, event.tool))   # type: ignore[arg-type]   # (routed: has a tool)

    def _result(self, event: Event, index: int, call: PairedCall | None) -> None:
        if event.ok is not False:
            self._counted += 1

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = 1
        config, when = self._config, self._when
        holds = when.holds(self._terminal.output(), self._terminal.index)
        reads = reads_output(when.condition)
        if holds is None:
            if self.note_violation():
                self.keep("The rule's `when` is unresolved: what it reads is not in the trace.",
                          evidence_value({"tool": config.tool, "when": config.when}), self._terminal.seq,
                          self._terminal.position, reason="condition_unresolved", status="unresolved",
                          reads_output=reads)
        elif holds and self._counted < config.min:
            if self.note_violation():
                counted = "successfully " if self._successful else ""
                self.keep(f"The rule's `when` holds, but {config.tool} was called {counted}{self._counted} "
                          f"time{'' if self._counted == 1 else 's'}; at least {config.min} required.",
                          evidence_value({"tool": config.tool, "count": self._counted, "min": config.min,
                                          "when": config.when}), self._terminal.seq, self._terminal.position,
                          reads_output=reads)
        elif not holds and config.iff:
            kept = self.note_violations(self._calls)
            for seq, index, tool in self._kept_calls[:kept]:
                self.keep(f"Call {tool} at seq {js_number(seq)}: the rule's `when` is false, and with `iff` "
                          "the call is forbidden then.", evidence_value({"tool": tool, "when": config.when}),
                          seq, index, reason="forbidden", reads_output=reads)
        return self.result()
