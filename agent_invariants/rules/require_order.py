"""require_order: every matching "after" event needs a matching "before" event earlier."""
from typing import ClassVar

from msgspec import UnsetType

from agent_invariants.events import Event
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.matchers import CompiledMatcher, EventMatcher, event_name

__all__ = ("RequireOrder", "RequireOrderConfig")


class RequireOrderConfig(RuleConfig, frozen=True, kw_only=True, tag="require_order"):
    """Options of a require_order rule."""

    before: EventMatcher
    """The event that must come first."""
    after: EventMatcher
    """The events that need it."""


class RequireOrder(Rule):
    """Fails when an event happens before the event that must precede it.

    ## What it checks
    Every event matching `after` is checked (`checked` counts them): some event strictly before
    it must match `before`. An event that matches both is not its own predecessor. Otherwise: a
    violation at the after-event naming the event and both matchers, `tool.call billing.refund has
    no earlier tool.call crm.lookup: each tool.call billing.* needs one before it.`

    ## Why it matters
    Look before you leap: check the policy before paying, read the customer record before
    changing it, run the tests before deploying. Order survives rewording; this keeps it.

    ## Failing trace
    With `{"id": "lookup-first", "kind": "require_order", "before": {"type": "tool.call", "tool": "crm.lookup"},
    "after": {"type": "tool.call", "tool": "billing.refund"}}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "billing.refund"}
    {"seq": 2, "type": "tool.call", "tool": "crm.lookup"}
    ```
    Violation at seq 1: `tool.call billing.refund has no earlier tool.call crm.lookup: each
    tool.call billing.refund needs one before it.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "crm.lookup"}
    {"seq": 2, "type": "tool.call", "tool": "billing.refund"}
    ```

    ## Options
    - `before`, `after` (event matchers, required): objects with any of `type`, `tool`,
      `outcome_id` (globs), `ok`, `claims_completion` (booleans), `verdict`; all given must match.

    ## Known limits
    One earlier "before" covers every later "after"; the two are not paired by id or argument.
    """

    kind: ClassVar[str] = "require_order"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = RequireOrderConfig
    tags: ClassVar[tuple[str, ...]] = ("ordering",)
    reason: ClassVar[str] = "missing"

    def __init__(self, config: RequireOrderConfig) -> None:
        super().__init__(config)
        self._before = CompiledMatcher(config.before)
        self._after = CompiledMatcher(config.after)
        self._evidence = {"before": config.before.to_dict(), "after": config.after.to_dict()}
        self._missing = f" has no earlier {config.before.brief()}: each {config.after.brief()} needs one before it."
        self._predecessor_seen = False

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return self._after.route_tools(event_type) + self._before.route_tools(event_type)

    def route_types(self) -> tuple[str, ...] | None:
        after, before = self._after.route_types(), self._before.route_types()
        return None if after is None or before is None else after + before

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        after = self._after.may_match(event_type, tool, claims)
        before = self._before.may_match(event_type, tool, claims)
        if after:
            # both: judge the after-event first, since an event is not its own predecessor
            return (self._after_event, self._before_event) if before else self._after_event
        return self._before_event if before else None

    def _before_event(self, event: Event, index: int) -> None:
        if not self._before.needs_event or self._before.matches(event):
            self._predecessor_seen = True

    def _after_event(self, event: Event, index: int) -> None:
        if self._after.needs_event and not self._after.matches(event):
            return
        self.checked += 1
        if not self._predecessor_seen and self.note_violation():
            self.keep(event_name(event.type, event.tool) + self._missing, self._evidence, event.seq, index)
