"""deny_event: no event may match."""
from typing import ClassVar

from agent_invariants.events import Event
from agent_invariants.rules.base import RuleConfig
from agent_invariants.rules.matchers import EventMatcher, MatchingRule, event_name

__all__ = ("DenyEvent", "DenyEventConfig")


class DenyEventConfig(RuleConfig, frozen=True, kw_only=True, tag="deny_event"):
    """Options of a deny_event rule."""

    match: EventMatcher
    """The events that must never happen."""


class DenyEvent(MatchingRule):
    """Fails on every event that matches: things that must never happen.

    ## What it checks
    Each event matching `match` is a violation at that event (`checked` counts them), named by
    its type and tool: `Denied event matched: tool.result payments.refund.`

    ## Why it matters
    Reading a secret, escalating privileges, a failed payment: some events should simply not be
    in a good run, whatever tool produced them.

    ## Failing trace
    With `{"id": "no-failed-payments", "kind": "deny_event", "match": {"type": "tool.result", "tool": "payments.*", "ok": false}}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "payments.refund", "call_id": "c1"}
    {"seq": 2, "type": "tool.result", "tool": "payments.refund", "call_id": "c1", "ok": false}
    ```
    Violation at seq 2: `Denied event matched: tool.result payments.refund.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "payments.refund", "call_id": "c1"}
    {"seq": 2, "type": "tool.result", "tool": "payments.refund", "call_id": "c1", "ok": true}
    ```

    ## Options
    - `match` (event matcher, required).

    ## Known limits
    Matches single events; it cannot say "not after X" (see require_order and stop_is_final).
    """  # noqa: E501 (the manual shows a whole rule on one line, as a contract would hold it)

    kind: ClassVar[str] = "deny_event"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = DenyEventConfig
    tags: ClassVar[tuple[str, ...]] = ("security",)
    reason: ClassVar[str] = "matched"
    checked_nothing_is_normal = True   # checked counts the denied events

    def __init__(self, config: DenyEventConfig) -> None:
        super().__init__(config, config.match)
        self._evidence = {"match": config.match.to_dict()}

    def matched(self, event: Event, index: int) -> None:
        if self.note_violation():
            self.keep(f"Denied event matched: {event_name(event.type, event.tool)}.", self._evidence, event.seq, index)
