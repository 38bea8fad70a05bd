"""event_budget: caps on the number of events, tool calls and failed tool results."""
from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig

__all__ = ("EventBudget", "EventBudgetConfig")

Budget = Annotated[int, Meta(ge=0, le=1_000_000)]


class EventBudgetConfig(RuleConfig, frozen=True, kw_only=True, tag="event_budget"):
    """Options of an event_budget rule; at least one bound is required."""

    max_events: Budget | UnsetType = UNSET
    """Most events the trace may have."""
    max_tool_calls: Budget | UnsetType = UNSET
    """Most `tool.call` events."""
    max_tool_failures: Budget | UnsetType = UNSET
    """Most `tool.result` events with `"ok": false`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_events is UNSET and self.max_tool_calls is UNSET and self.max_tool_failures is UNSET:
            raise ValueError("set at least one budget: max_events, max_tool_calls or max_tool_failures")


class EventBudget(Rule):
    """Fails when a run uses more events, tool calls or failed tool results than budgeted.

    ## What it checks
    Counts every event, every `tool.call` and every `tool.result` with `"ok": false` in the
    trace (`checked` is the number of events). Each configured bound that is exceeded (strictly:
    equal passes) is one violation for the whole trace, in the order events, tool calls, tool
    failures, naming the bound: `Trace has 12 tool calls; max_tool_calls is 8.`

    ## Why it matters
    Cost and blast radius. A candidate that needs three times the calls for the same job is a
    regression even when every call is allowed.

    ## Failing trace
    With `{"id": "budget", "kind": "event_budget", "max_tool_calls": 1}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search"}
    {"seq": 2, "type": "tool.call", "tool": "kb.search"}
    ```
    One violation, not tied to an event: `Trace has 2 tool calls; max_tool_calls is 1.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "kb.search"}
    {"seq": 2, "type": "tool.result", "ok": true}
    ```

    ## Options
    - `max_events`, `max_tool_calls`, `max_tool_failures` (integers 0..1000000; at least one).

    ## Known limits
    Budgets are capped at 1,000,000, so "more than a million events" cannot be expressed. The
    violations have no event or line; reports point at the rule instead.
    """

    kind: ClassVar[str] = "event_budget"
    config_type: ClassVar[type[RuleConfig]] = EventBudgetConfig
    tags: ClassVar[tuple[str, ...]] = ("cost",)
    config: EventBudgetConfig

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()   # the tool plays no part

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        return None   # the counts are the trace summary's, taken in the same pass

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = summary.events
        config = self.config
        for metric, label, actual, maximum in (
            ("events", "event", summary.events, config.max_events),
            ("tool_calls", "tool call", summary.tool_calls, config.max_tool_calls),
            ("tool_failures", "tool failure", summary.tool_failures, config.max_tool_failures),
        ):
            if maximum is not UNSET and actual > maximum and self.note_violation():
                self.keep(f"Trace has {actual} {label}{'' if actual == 1 else 's'}; max_{metric} is {maximum}.",
                          {"actual": actual, "maximum": maximum, "metric": metric}, reason=metric)
        return self.result()
