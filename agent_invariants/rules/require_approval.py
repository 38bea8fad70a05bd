"""require_approval: a matching tool call needs an earlier granted approval."""
from collections import deque
from typing import Annotated, Any, ClassVar

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.report import Violation
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob

__all__ = ("RequireApproval", "RequireApprovalConfig")

_Grant = tuple[int, str, int | float]
"""A usable grant with an approval_id, as (index, approval_id, seq)."""

_NONE: _Grant = (-1, "", 0)
"""What `_latest_by_id` gives for an id without a usable grant: index -1, before every call."""


class RequireApprovalConfig(RuleConfig, frozen=True, kw_only=True, tag="require_approval"):
    """Options of a require_approval rule."""

    tool: Glob
    """The calls that need an approval."""
    scope: Glob | UnsetType = UNSET
    """If set, a grant counts only when its `approval_scope` matches this glob."""
    within_events: Annotated[int, Meta(ge=1, le=100_000)] | UnsetType = UNSET
    """If set, the grant must be at most this many events before the call."""


class RequireApproval(Rule):
    """Fails when a matching tool is called without an earlier approval that covers it.

    ## What it checks
    Each `tool.call` whose `tool` matches `tool` is checked. It needs an earlier event of type
    exactly `approval.granted` that is not `"approved": false` (a grant without `approved` counts)
    and that satisfies both conditions:
    - if the call carries an `approval_id`, the grant has the same `approval_id`;
    - if the rule sets `scope`, the grant's `approval_scope` matches it (a grant without a scope
      does not).
    With `within_events: N` the grant must be among the N events just before the call (positions,
    not seq numbers or time). A denied grant in between does not matter: the search looks past it.
    No such grant: a violation at the call, `Tool payments.refund was called without a matching
    prior approval`, then why: an earlier grant by seq with every reason it did not count
    (`approved is false`, another `approval_id`, a scope outside `scope`, too far back), or that
    none came before the call, naming the first later one that would have counted.

    ## Why it matters
    Money, deletions and messages to customers should only happen after a person said yes. This
    keeps "the agent asked, then acted" true when the model or prompt changes.

    ## Failing trace
    With `{"id": "pay-approval", "kind": "require_approval", "tool": "payments.*", "scope": "payments.*"}`:
    ```jsonl
    {"seq": 1, "type": "approval.granted", "approval_id": "a1", "approval_scope": "crm.write"}
    {"seq": 2, "type": "tool.call", "tool": "payments.refund", "approval_id": "a1"}
    ```
    Violation at seq 2: `Tool payments.refund was called without a matching prior approval:
    approval.granted at seq 1 did not count (approval_scope crm.write does not match payments.*).`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "approval.granted", "approval_id": "a1", "approval_scope": "payments.refund"}
    {"seq": 2, "type": "tool.call", "tool": "payments.refund", "approval_id": "a1"}
    ```

    ## Options
    - `tool` (glob, required): the calls that need approval.
    - `scope` (glob): the approval scopes that count.
    - `within_events` (integer 1..100000): how far back a grant may be.

    ## Known limits
    A grant is never used up: one covers every later matching call. The grant's own tool is not
    compared with the call's. `approval.revoked` and `approval.denied` events have no meaning
    here. A call without a `tool` is never checked. A message names one earlier grant, not all:
    one that only the window ruled out, if any; else the newest grant, or, when that one has
    another `approval_id` than the call, the newest approved grant within `scope`. A grant with the
    call's `approval_id` that left the window is known only until another id's grant leaves it.
    """

    kind: ClassVar[str] = "require_approval"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = RequireApprovalConfig
    tags: ClassVar[tuple[str, ...]] = ("security", "approval")
    reason: ClassVar[str] = "missing"
    config: RequireApprovalConfig

    def __init__(self, config: RequireApprovalConfig) -> None:
        super().__init__(config)
        self._gated = compile_glob(config.tool)
        self._scope = None if config.scope is UNSET else compile_glob(config.scope)
        self._window = None if config.within_events is UNSET else config.within_events
        self._latest_grant = -1                # newest usable grant, any id
        self._latest_by_id: dict[str, _Grant] = {}  # with a window: newest usable grant per approval_id
        self._recent: deque[_Grant] = deque()       # with a window: grants by id still inside it
        self._granted_ids: set[str] = set()         # without one: the ids of usable grants (only
        # whether one came counts, and a set of ids is a third of the memory of a dict of grants)
        # For messages only, a few grants (never a list of them): the newest usable grant and the
        # newest other one (denied, or out of scope), the usable grant by id that last left the
        # window, and the kept violations that no grant preceded, by the call's approval_id,
        # until one comes.
        self._usable: Event | None = None
        self._refused: Event | None = None
        self._refused_index = -1
        self._expired: _Grant | None = None
        self._waiting: dict[str | None, list[Violation]] = {}
        evidence: dict[str, Any] = {}
        if config.scope is not UNSET:
            evidence["required_scope"] = config.scope
        if config.within_events is not UNSET:
            evidence["within_events"] = config.within_events
        self._evidence_tail = evidence

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self.config.tool,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "approval.granted":
            return self._grant
        if event_type == "tool.call" and tool is not UNSET and self._gated(tool):
            return self._call
        return None

    def _grant(self, event: Event, index: int) -> None:
        if event.approved is False or self._scope is not None and (
                event.approval_scope is UNSET or not self._scope(event.approval_scope)):
            self._refused = event
            self._refused_index = index
            return
        self._latest_grant = index
        self._usable = event
        approval_id = event.approval_id
        if self._waiting:
            self._came_later(event, approval_id)
        if approval_id is UNSET:
            return
        if self._window is None:
            self._granted_ids.add(approval_id)
        else:
            grant = self._latest_by_id[approval_id] = (index, approval_id, event.seq)
            recent = self._recent
            recent.append(grant)
            oldest_useful = index - self._window
            while recent[0][0] < oldest_useful:
                old = recent.popleft()
                if self._latest_by_id.get(old[1]) is old:
                    del self._latest_by_id[old[1]]
                    self._expired = old

    def _call(self, event: Event, index: int) -> None:
        self.checked += 1
        approval_id = event.approval_id
        if self._window is None:
            covered = self._latest_grant >= 0 if approval_id is UNSET else approval_id in self._granted_ids
        else:
            granted = self._latest_grant if approval_id is UNSET else self._latest_by_id.get(approval_id, _NONE)[0]
            covered = granted >= max(0, index - self._window)
        if covered or not self.note_violation():
            return
        evidence = {"tool": event.tool}
        if approval_id is not UNSET:
            evidence["approval_id"] = approval_id
        evidence.update(self._evidence_tail)
        why = self._why_not(approval_id, index)
        self.keep(f"Tool {event.tool} was called without a matching prior approval: {why}.", evidence, event.seq, index)
        if self._usable is None and self._refused is None:
            self._waiting.setdefault(None if approval_id is UNSET else approval_id, []).append(self.violations[-1])

    # -- messages ------------------------------------------------------------------------------

    def _why_not(self, approval_id: str | UnsetType, index: int) -> str:
        """Why no grant covers the call at `index`: the grant nearest to counting, and its reasons."""
        if self._window is not None:   # a grant that would count but for the window
            if approval_id is UNSET:
                if self._usable is not None:
                    return self._not_counted(self._usable.seq, [self._too_far(index - self._latest_grant)])
            else:
                known = self._latest_by_id.get(approval_id)
                if known is None and self._expired is not None and self._expired[1] == approval_id:
                    known = self._expired
                if known is not None:
                    return self._not_counted(known[2], [self._too_far(index - known[0])])
        # the newest grant, or the newest usable one when the newest has another approval_id
        grant, at, refused = self._usable, self._latest_grant, self._refused
        if refused is not None and (grant is None or self._refused_index > at and (
                approval_id is UNSET or refused.approval_id == approval_id)):
            grant, at = refused, self._refused_index
        if grant is None:
            return "no approval.granted came before it"
        return self._not_counted(grant.seq, self._reasons(grant, index - at, approval_id))

    def _reasons(self, grant: Event, distance: int, approval_id: str | UnsetType) -> list[str]:
        """Every reason the grant `distance` events before a call does not cover it."""
        reasons = []
        if grant.approved is False:
            reasons.append("approved is false")
        if approval_id is not UNSET and grant.approval_id != approval_id:
            reasons.append(f"approval_id {grant.approval_id} is not the call's {approval_id}"
                           if grant.approval_id is not UNSET else f"no approval_id where the call has {approval_id}")
        if self._scope is not None:
            scope = self.config.scope
            if grant.approval_scope is UNSET:
                reasons.append(f"no approval_scope to match {scope}")
            elif not self._scope(grant.approval_scope):
                reasons.append(f"approval_scope {grant.approval_scope} does not match {scope}")
        if self._window is not None and distance > self._window:
            reasons.append(self._too_far(distance))
        return reasons

    def _too_far(self, distance: int) -> str:
        return f"{distance} events before the call, over within_events {self._window}"

    @staticmethod
    def _not_counted(seq: int | float, reasons: list[str]) -> str:
        return f"approval.granted at seq {js_number(seq)} did not count ({'; '.join(reasons)})"

    def _came_later(self, grant: Event, approval_id: str | UnsetType) -> None:
        """Name `grant`, the first usable one after them, in the messages of the calls it would
        have covered had it come first: those without an approval_id, and those with its id."""
        waiting = self._waiting.pop(None, [])
        if approval_id is not UNSET:
            waiting += self._waiting.pop(approval_id, [])
        for violation in waiting:
            violation.message = (f"{violation.message[:-1]} (one that would have counted came later, "
                                 f"at seq {js_number(grant.seq)}).")

