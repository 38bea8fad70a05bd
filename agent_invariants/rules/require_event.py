"""require_event: a matching event must occur between min and max times."""
from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.events import Event
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import RuleConfig
from agent_invariants.rules.matchers import EventMatcher, MatchingRule

__all__ = ("RequireEvent", "RequireEventConfig")

Count = Annotated[int, Meta(ge=0, le=1_000_000)]


class RequireEventConfig(RuleConfig, frozen=True, kw_only=True, tag="require_event"):
    """Options of a require_event rule."""

    match: EventMatcher
    """The events to count."""
    min: Count | UnsetType = UNSET
    """Fewest matching events (default 1)."""
    max: Count | UnsetType = UNSET
    """Most matching events (default: no limit)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max is not UNSET and (1 if self.min is UNSET else self.min) > self.max:
            raise ValueError("min cannot exceed max (min defaults to 1, so write {\"min\": 0, \"max\": 0} for 'never')")


class RequireEvent(MatchingRule):
    """Fails when a required event is missing, or occurs too often.

    ## What it checks
    Counts the events that match `match` (`checked` is that count). Fewer than `min` (default 1)
    or more than `max` is one violation, at the first matching event if there is one:
    `Expected 1..1 events matching run.start; found 2.`

    ## Why it matters
    Some steps must happen exactly once: one run start, one policy check, at most one escalation.

    ## Failing trace
    With `{"id": "one-start", "kind": "require_event", "match": {"type": "run.start"}, "min": 1, "max": 1}`:
    ```jsonl
    {"seq": 1, "type": "run.start"}
    {"seq": 2, "type": "run.start"}
    ```
    Violation at seq 1 (the first match): `Expected 1..1 events matching run.start; found 2.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "run.start"}
    {"seq": 2, "type": "run.completed"}
    ```

    ## Options
    - `match` (event matcher, required).
    - `min` (integer 0..1000000, default 1), `max` (integer 0..1000000, default none). `min`
      may not exceed `max`; `{"min": 0, "max": 0}` means "never".

    ## Known limits
    Counts over the whole trace; where the events are does not matter.
    """

    kind: ClassVar[str] = "require_event"
    config_type: ClassVar[type[RuleConfig]] = RequireEventConfig
    tags: ClassVar[tuple[str, ...]] = ("lifecycle",)
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"min"})
    config: RequireEventConfig

    def __init__(self, config: RequireEventConfig) -> None:
        super().__init__(config, config.match)
        self._min = 1 if config.min is UNSET else config.min
        self._max = None if config.max is UNSET else config.max
        self.checked_nothing_is_normal = self._min == 0   # "at most N", "never": none is fine
        self._first: tuple[int | float, int] | None = None
        self._brief = config.match.brief()

    def matched(self, event: Event, index: int) -> None:
        if self._first is None:
            self._first = (event.seq, index)

    def finish(self, summary: TraceSummary) -> RuleResult:
        found = self.checked
        if (found < self._min or (self._max is not None and found > self._max)) and self.note_violation():
            upper = "∞" if self._max is None else self._max
            seq, index = self._first if self._first is not None else (UNSET, UNSET)
            self.keep(f"Expected {self._min}..{upper} events matching {self._brief}; found {found}.",
                      {"match": self.config.match.to_dict(), "found": found, "min": self._min, "max": self._max},
                      seq, index, reason="min" if found < self._min else "max")
        return self.result()
