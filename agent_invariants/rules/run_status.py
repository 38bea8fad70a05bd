"""run_status (contract version 2): how the run must end."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from msgspec import UNSET, Meta, UnsetType

from agent_invariants.match.canonical import evidence_value
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem
from agent_invariants.rules.terminal import TERMINAL_TYPES, Terminal

__all__ = ("STATUS_LIMIT", "RunStatus", "RunStatusConfig")

STATUS_LIMIT = 100
"""The longest status a rule names (`equals`, `in`), as an event's `status` may be long."""
Status = Annotated[str, Meta(min_length=1, max_length=STATUS_LIMIT)]


class RunStatusConfig(RuleConfig, frozen=True, kw_only=True, tag="run_status"):
    """Options of a run_status rule."""

    since_version: ClassVar[int] = 2

    equals: Status | UnsetType = UNSET
    """The status the run must end with."""
    in_: Annotated[list[Status], Meta(min_length=1, max_length=20)] | UnsetType = msgspec.field(
        default=UNSET, name="in")
    """The statuses the run may end with (1..20); `in` in the contract."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.equals is UNSET) == (self.in_ is UNSET):
            raise FieldProblem("equals", "a run_status rule needs exactly one of equals, in")



class RunStatus(Rule):
    """Fails when the run ends with another status than the contract expects.

    ## What it checks
    The run status is the `status` of the terminal event (the last `run.completed` or
    `run.failed`); without one, `completed` or `failed` by the event's type; `none` when the trace
    has no terminal event. It must equal `equals`, or be one of `in`. Otherwise
    `run_status.mismatch` at the terminal event (no event without one), evidence
    `{status, expected}`. `checked` is 1.

    ## Why it matters
    "Completed" is a claim: an agent can end `completed` after a failure it swallowed, or
    `failed` where waiting was right. `awaiting_approval` is not a failure, and a contract can say
    it is the expected end of a run that needs a person.

    ## Failing trace
    With `{"id": "done", "kind": "run_status", "equals": "completed"}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1"}
    {"seq": 2, "type": "run.failed", "reason": "refund service down"}
    ```
    Violation at seq 2, `run_status.mismatch`: the run ended `failed`.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1"}
    {"seq": 2, "type": "run.completed", "status": "completed"}
    ```

    ## Options
    - `equals` (string, 1..100 characters): the one status allowed.
    - `in` (1..20 such strings): the statuses allowed.
    Exactly one of them is required.

    ## Known limits
    Statuses are compared exactly (no globs). Only the last terminal event counts.
    """

    kind: ClassVar[str] = "run_status"
    config_type: ClassVar[type[RuleConfig]] = RunStatusConfig
    tags: ClassVar[tuple[str, ...]] = ("output", "outcome")
    reason: ClassVar[str] = "mismatch"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"mismatch"})

    def __init__(self, config: RunStatusConfig) -> None:
        super().__init__(config)
        self._config = config
        self._terminal = Terminal()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        return self._terminal.seen if event_type in TERMINAL_TYPES else None

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = 1
        status = self._terminal.status()
        config = self._config
        allowed = [config.equals] if config.equals is not UNSET else list(config.in_ or ())
        if status not in allowed and self.note_violation():
            expected = config.equals if config.equals is not UNSET else config.in_
            wanted = repr(config.equals) if config.equals is not UNSET else f"one of {', '.join(map(repr, allowed))}"
            self.keep(f"The run ended with status {status!r}; the contract expects {wanted}.",
                      evidence_value({"status": status, "expected": expected}), self._terminal.seq,
                      self._terminal.position)
        return self.result()
