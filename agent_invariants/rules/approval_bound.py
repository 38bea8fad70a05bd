"""approval_bound (contract version 2): each call needs its own approval, bound to what it does."""
from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import canonical_key, evidence_value
from agent_invariants.match.equality import json_equal
from agent_invariants.match.paths import NOT_FOUND, pointer
from agent_invariants.payloads import decoded, text
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.timing import epoch_us

__all__ = ("ApprovalBound", "ApprovalBoundConfig")

MAX_REJECTED = 10
"""The most grants a violation's `rejected` list names (the nearest ones)."""


class ApprovalBoundConfig(RuleConfig, frozen=True, kw_only=True, tag="approval_bound"):
    """Options of an approval_bound rule."""

    since_version: ClassVar[int] = 2

    tool: Glob
    """The calls that need an approval (a glob on the call's tool)."""
    scope: Glob | UnsetType = UNSET
    """A grant covers only when its `approval_scope` matches this glob. Without it, grants must name the tool."""
    one_use: bool = True
    """A grant covers one call (default); `false`: any number."""
    bind: Literal["none", "args", "args_subset", "call_id"] = "none"
    """What else the grant must pin: nothing (default), the call's exact `args`, a subset of them
    (`args_subset`), or its `call_id`."""
    max_age_events: Annotated[int, Meta(ge=1, le=100_000)] | UnsetType = UNSET
    """The grant must be at most this many events before the call."""
    max_age_ms: Annotated[float, Meta(ge=1)] | UnsetType = UNSET
    """The grant's `time` must be at most this many milliseconds before the call's (both need a time)."""
    revoked_by: Annotated[list[Glob], Meta(min_length=1, max_length=20)] | UnsetType = UNSET
    """Event types that revoke earlier grants (default `["approval.revoked"]`)."""
    require_approver: bool = False
    """A grant counts only when it names its `approver`."""
    attested_by: Annotated[list[Glob], Meta(min_length=1, max_length=20)] | UnsetType = UNSET
    """A grant counts only when its `data.attested_by` matches one of these globs (default: any grant)."""


class _Reads(NamedTuple):
    """What the rule's options make it read of grants and calls: each is read only if some
    condition of coverage looks at it (reading a time parses it; a grant is made per event)."""

    args: bool       # `bind: args` or `args_subset`
    time: bool       # `max_age_ms`
    approver: bool   # `require_approver`
    attested: bool   # `attested_by`


class _Grant:
    """An `approval.granted` that was not refused, and what became of it."""

    __slots__ = ("approval_id", "approver", "args", "attested_by", "bucket", "call_id", "consumed_by", "filed",
                 "index", "latest_time", "revoked", "scope", "seq", "time", "timed", "tool")

    def __init__(self, event: Event, index: int, reads: _Reads) -> None:
        self.index, self.seq = index, event.seq
        self.tool, self.scope, self.approval_id = event.tool, event.approval_scope, event.approval_id
        self.call_id = event.call_id
        self.args = decoded(event.args) if reads.args and event.args is not UNSET else NOT_FOUND
        # (None: no time, or no instant)
        self.time = epoch_us(event.time) if reads.time and event.time is not UNSET else None
        self.timed = event.time is not UNSET   # (whether it has a time, an instant or not: for the message)
        self.approver = reads.approver and text(event.approver) is not None
        self.attested_by = text(event.data.attested_by) if reads.attested and event.data is not UNSET else None
        self.bucket: Any = None   # the key under which the rule files it while it may cover a call
        self.filed: Any = None    # where `_buckets` files it: its bucket, or under `args_subset` its anchor
        self.consumed_by: int | float | None = None
        self.revoked = False
        # `max_age_ms`: the latest time of the grants filed up to this one (it included): no grant
        # before it in the trace is younger, whatever became of them since
        self.latest_time: int | None = None


class _Call:
    """What coverage reads of a call."""

    __slots__ = ("approval_id", "args", "call_id", "index", "seq", "time", "timed", "tool")

    def __init__(self, event: Event, index: int, reads: _Reads) -> None:
        self.index, self.seq, self.tool = index, event.seq, event.tool
        self.approval_id, self.call_id = event.approval_id, event.call_id
        self.time = epoch_us(event.time) if reads.time and event.time is not UNSET else None
        self.timed = event.time is not UNSET
        self.args = decoded(event.args) if reads.args and event.args is not UNSET else NOT_FOUND


class ApprovalBound(Rule):
    """Fails when a call has no approval of its own: for its tool and args, recent, unrevoked, unused.

    ## What it checks
    Each `tool.call` whose `tool` matches `tool` needs a *grant* that covers it. Grants are the
    `approval.granted` events before the call that are not `"approved": false`. A grant G covers
    a call C when, in this order:

    1. G's `tool`, if it has one, equals C's tool (exactly: no glob);
    2. with the rule's `scope`, G's `approval_scope` matches it; without one, G must have a `tool`;
    3. if C carries an `approval_id`, G has the same;
    4. the binding holds: `bind: args`, G's `args` equal C's; `args_subset`, every field G's args
       name is in C's args with the same value (objects as subsets at every level; arrays of the
       same length, item by item, an object item as a subset): the grant pins what it names;
       `call_id`, G and C carry the same `call_id`. Under the first two, a grant or call without
       args never binds;
    5. G is recent enough: at most `max_age_events` events before C, and with `max_age_ms` both
       carry a `time` at most that many milliseconds apart;
    6. G was not revoked: an event whose type matches `revoked_by` revokes the earlier grants that
       have the same `approval_id`, `approval_scope` and `tool` as it carries (one carrying none of
       them revokes every earlier grant), and an `approval.granted` with `"approved": false`
       revokes the earlier grants with its `approval_id`; a revocation affects the calls after it;
    7. G was not used by an earlier call (with `one_use`, the default);
    8. G names its `approver`, when the rule says `require_approver`;
    9. with `attested_by`, G's `data.attested_by` (a string) matches one of its globs: `record`
       writes `"harness"` on grants its fixtures decided and `"agent"` on grants the agent sent,
       so `["harness"]` refuses an agent that approves itself.

    The nearest covering grant is used, and under `one_use` it is spent, even when a later
    `tool.denied` shows the call was stopped: an attempt counts. A call no grant covers is an
    `approval_bound.missing` at the call, with evidence `{tool, call_id, approval_id, rejected}`:
    for the 10 nearest grants, nearest first, the first condition above each one fails, as
    `tool_mismatch`, `scope_mismatch`, `approval_id_mismatch`, `args_mismatch` (with the
    `pointer` of the first difference), `call_id_mismatch`, `expired`, `time_missing`, `revoked`,
    `consumed` (with `by_seq`, the call that used it), `approver_missing` or `attestation`. A call that a later
    `tool.denied` answered (the nearest call with its `call_id` still waiting for an answer) gets
    `prevented: true`, as every version-2 violation at such a call does. `checked` counts the
    matching calls; a trace without any passes as vacuous.

    ## Why it matters
    An approval is a person saying yes to *one* action. `require_approval` lets one grant cover
    every later call of the tool, with any arguments, forever: the agent asks to refund 10 €,
    then refunds 12 €, then refunds again. This rule binds each grant to one call (and, with
    `bind`, to its arguments), lets it age and be revoked, and says for every near grant why it
    did not count, which is what a reviewer needs to see.

    ## Failing trace
    With `{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}`:
    ```jsonl
    {"seq": 1, "type": "approval.granted", "approval_id": "g1", "tool": "refund", "args": {"order": "A1", "amount": 10}}
    {"seq": 2, "type": "tool.call", "tool": "refund", "args": {"order": "A1", "amount": 12}}
    {"seq": 3, "type": "tool.call", "tool": "refund", "args": {"order": "A1", "amount": 10, "memo": "x"}}
    {"seq": 4, "type": "tool.call", "tool": "refund", "args": {"order": "A1", "amount": 10}}
    ```
    Violations: seq 2, rejected `[{"grant_seq": 1, "why": "args_mismatch", "pointer": "/args/amount"}]`
    (the grant said 10); seq 4, rejected `[{"grant_seq": 1, "why": "consumed", "by_seq": 3}]` (seq 3
    used it). `require_approval` passes all three calls.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "approval.granted", "approval_id": "g1", "tool": "refund", "args": {"order": "A1", "amount": 10}}
    {"seq": 3, "type": "tool.call", "tool": "refund", "args": {"order": "A1", "amount": 10, "memo": "x"}}
    ```
    With an `{"type": "approval.revoked", "approval_id": "g1"}` between them, seq 3 fails instead
    (`revoked`).

    ## Options
    - `tool` (glob, required): the calls that need an approval.
    - `scope` (glob): the grants' `approval_scope` must match it.
    - `one_use` (default true): a grant covers one call.
    - `bind` (`none`, `args`, `args_subset` or `call_id`; default `none`).
    - `max_age_events` (1..100000), `max_age_ms` (1 or more): how old a grant may be.
    - `revoked_by` (1..20 globs on the event type; default `["approval.revoked"]`).
    - `require_approver` (default false).
    - `attested_by` (1..20 globs): who may vouch for a grant, by its `data.attested_by`; a grant
      without one matches no glob. Default: any grant.

    ## Known limits
    Grants are matched to calls by position in the trace, not by time (`max_age_ms` only ages
    them; a grant stamped after its call is not too old). `prevented` needs a `tool.denied` with
    the call's `call_id`. An event that both revokes (`revoked_by`) and is a call or a grant is
    judged as a call before it revokes, and revokes before it grants: a revocation affects grants
    before it and calls after it. The rule keeps the 10 latest grants for the evidence, and the grants that
    may still cover a call: not spent, not revoked, within `max_age_events`, and able to cover
    some call of the rule (a grant for another tool, outside `scope`, without the args or call_id
    `bind` needs or without a required approver never is; with `max_age_ms`, one without a
    time). A call looks only at the grants of its tool and binding (under `args_subset`, those
    that name one of its plain fields with its value, or no plain field: a plain field is a string,
    number, boolean or null, at the top or inside objects and the first 8 items of arrays, up to 8
    steps deep), or at those of its
    `approval_id`, when they are fewer; under `max_age_ms`, a call without a time looks at none.
    With `max_age_ms`, grants too old for a call are set aside while the calls' times only grow;
    once a call's time goes back they are looked at again, nearest first, but only until a grant
    that, like every grant before it, is too old (with grants stamped in trace order, the first
    too old). What is left is looked at by each call, so that a trace of many such grants and
    many calls costs grants × calls (4,000 of each: 2 to 45 s): grants that share a call's field
    but not the rest of its args, or (under `args_subset`) that name no plain field (only empty
    arrays and objects, or values deeper than 8 steps or past an array's 8th item); under
    `max_age_ms`, calls whose times go back and forth past grants stamped out of trace order (a
    grant stamped later than the grants after it keeps those in view).
    `record`'s harness writes its grants
    with the request's args but without a call_id (spec point 64): under `bind: call_id` they
    cover no call (the message says the grant is "without a call_id"); bind them by `args`.
    """

    kind: ClassVar[str] = "approval_bound"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = ApprovalBoundConfig
    tags: ClassVar[tuple[str, ...]] = ("approval", "safety")
    reason: ClassVar[str] = "missing"

    def __init__(self, config: ApprovalBoundConfig) -> None:
        super().__init__(config)
        self._config = config
        self._is_tool = compile_glob(config.tool)
        self._binds_args = config.bind in ("args", "args_subset")   # args are read (and decoded) only then
        self._reads = _Reads(self._binds_args, config.max_age_ms is not UNSET, config.require_approver,
                             config.attested_by is not UNSET)
        self._in_scope = None if config.scope is UNSET else compile_glob(config.scope)
        self._revokes = [compile_glob(glob) for glob in config.revoked_by or ["approval.revoked"]]
        self._attested = None if config.attested_by is UNSET else _any_glob(config.attested_by)
        # The grants that may still cover a call: every one by position (oldest first, for
        # max_age_events), and each in one bucket, by what a covered call must share with it
        # (its tool, and under `bind: args` / `call_id` its args / call_id), so that a call looks
        # only at the grants of its own buckets; by approval_id for calls and revocations, and by
        # scope and tool once a revocation names one (a revocation looks only at the grants of the
        # field it names that fewest grants share: looking at every grant, 4,000 revocations by
        # scope of 4,000 grants took 7 s; filed from the start, the two cost every trace 2-4%).
        self._live: dict[int, _Grant] = {}
        self._buckets: dict[Any, dict[int, _Grant]] = {}
        self._by_id: dict[Any, dict[int, _Grant]] = {}
        self._named: dict[str, dict[Any, dict[int, _Grant]]] = {"approval_id": self._by_id}
        # `args_subset` files each live grant not under its bucket but under an anchor: one field of
        # its args that a covered call must hold equal, (bucket, path, value) (`_fields`), the one
        # fewest grants were filed under so far; a grant without such a field (only arrays, or
        # empty objects) under (bucket,). A call then looks at the grants filed under its own
        # fields, not at every grant of its tool.
        self._subset = config.bind == "args_subset"
        # `max_age_ms`: the live grants by time, oldest first (a heap), so that while the calls'
        # times only grow, those too old for a call are set aside (`_stale`): no later call can
        # use them. A call whose time goes back files them again, and ends the setting aside.
        self._by_time: list[tuple[int, int, _Grant]] | None = None if config.max_age_ms is UNSET else []
        self._stale: dict[int, _Grant] = {}
        self._latest_call: int | None = None   # the time of the latest call so far
        self._latest_grant: int | None = None  # the latest time of the grants filed so far
        self._recent: deque[_Grant] = deque(maxlen=MAX_REJECTED)   # the latest grants, whatever became of them
        # with max_age_events, the grants added, oldest first (some dropped since): what ages out
        self._ageing: deque[_Grant] | None = None if config.max_age_events is UNSET else deque()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._config.tool,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        # a revocation affects the grants before it and the calls after it (point 21): a call that
        # revokes is judged first, a grant that revokes is added after
        handlers = []
        if event_type == "tool.call" and tool is not UNSET and self._is_tool(tool):
            handlers.append(self._call)
        if any(revokes(event_type) for revokes in self._revokes):
            handlers.append(self._revocation)
        if event_type == "approval.granted":
            handlers.append(self._grant)
        return tuple(handlers) or None

    def _grant(self, event: Event, index: int) -> None:
        if event.approved is False:
            if event.approval_id is not UNSET:
                self._revoke(lambda grant: grant.approval_id == event.approval_id,
                             self._by_id.get(event.approval_id, _EMPTY))
            return
        grant = _Grant(event, index, self._reads)
        self._recent.append(grant)
        self._expire(index)   # a trace of grants and no calls keeps only those within max_age_events
        if self._may_cover(grant):
            grant.bucket = self._bucket(grant.tool, grant)
            if grant.time is not None:
                if self._latest_grant is None or grant.time > self._latest_grant:
                    self._latest_grant = grant.time
                grant.latest_time = self._latest_grant
            if self._ageing is not None:
                self._ageing.append(grant)
            for field, named in self._named.items():
                value = getattr(grant, field)
                if value is not UNSET and value is not None:
                    named.setdefault(value, {})[index] = grant
            self._file(grant)

    def _file(self, grant: _Grant) -> None:
        """Make a grant one that calls look at (its bucket, its anchor, its place by time)."""
        self._live[grant.index] = grant
        grant.filed = self._anchor(grant) if self._subset else grant.bucket
        self._buckets.setdefault(grant.filed, {})[grant.index] = grant
        by_time = self._by_time
        if by_time is not None and grant.time is not None:   # (it has one: _may_cover)
            heapq.heappush(by_time, (grant.time, grant.index, grant))
            if len(by_time) > 2 * len(self._live) + 64:   # mostly spent or revoked grants: keep only the live
                by_time[:] = [(live.time, live.index, live) for live in self._live.values() if live.time is not None]
                heapq.heapify(by_time)

    def _may_cover(self, grant: _Grant) -> bool:
        """False for a grant that fails a condition of coverage for every call the rule checks
        (it is kept for the evidence only)."""
        config = self._config
        if grant.tool is not UNSET and not self._is_tool(grant.tool):
            return False
        if self._in_scope is not None:
            if grant.scope is UNSET or not self._in_scope(grant.scope):
                return False
        elif grant.tool is UNSET:
            return False
        if self._binds_args and not isinstance(grant.args, dict):
            return False
        if config.bind == "call_id" and grant.call_id is UNSET:
            return False
        if config.require_approver and not grant.approver:
            return False
        if config.max_age_ms is not UNSET and grant.time is None:
            return False
        return self._attested is None or self._attested(grant.attested_by)

    def _bucket(self, tool: str | UnsetType, holder: _Grant | _Call) -> Any:
        """The bucket of a grant with this tool (or, for a call, of the grants naming its tool): the
        tool, and what the binding makes equal."""
        bind = self._config.bind
        if bind == "args":
            return tool, canonical_key(holder.args)
        if bind == "call_id":
            return tool, holder.call_id
        return tool

    def _revocation(self, event: Event, index: int) -> None:
        carried = [(_GRANT_FIELD[name], getattr(event, name)) for name in ("approval_id", "approval_scope", "tool")
                   if getattr(event, name) is not UNSET]
        among = min((self._filed_by(field).get(value, _EMPTY) for field, value in carried), key=len, default=None)
        self._revoke(lambda grant: all(getattr(grant, field) == value for field, value in carried), among)

    def _filed_by(self, field: str) -> dict[Any, dict[int, _Grant]]:
        """The grants that may still cover a call by their `field`: filed from now on, and those
        there are filed at once (live or set aside: those `_drop` has not forgotten)."""
        named = self._named.get(field)
        if named is None:
            named = self._named[field] = {}
            for grant in sorted([*self._live.values(), *self._stale.values()], key=lambda grant: grant.index):
                value = getattr(grant, field)
                if value is not UNSET and value is not None:
                    named.setdefault(value, {})[grant.index] = grant
        return named

    def _revoke(self, revoked: Any, among: dict[int, _Grant] | None) -> None:
        """Revoke the earlier grants that `revoked` picks: those that may still cover a call (only
        `among` them, the grants that share a field the revocation names; None: every one), and
        the latest ones (spent or not), which evidence shows."""
        for grant in self._recent:
            if not grant.revoked and revoked(grant):
                grant.revoked = True
        live = [*self._live.values(), *self._stale.values()] if among is None else among.values()
        for grant in [grant for grant in live if grant.revoked or revoked(grant)]:
            grant.revoked = True
            self._drop(grant)

    def _unfile(self, grant: _Grant) -> None:
        """Take a live grant out of what calls look at (`_by_id` keeps it, for revocations)."""
        del self._live[grant.index]
        filed = self._buckets[grant.filed]
        del filed[grant.index]
        if not filed:
            del self._buckets[grant.filed]

    def _set_aside(self, call: _Call) -> None:
        """`max_age_ms`: set aside the grants too old for this call, while calls' times only grow.
        Once a call's time goes back, every grant is filed again, in trace order, and none is set
        aside any more."""
        by_time, now = self._by_time, call.time
        if by_time is None or now is None:   # (a call without a time is covered by no grant)
            return
        if self._latest_call is not None and now < self._latest_call:
            self._by_time = None
            grants = sorted([*self._live.values(), *self._stale.values()], key=_position)
            self._live.clear()
            self._buckets.clear()
            self._stale.clear()
            for grant in grants:   # in trace order, as calls look at them: nearest last
                self._file(grant)
            return
        self._latest_call = now
        limit = self._config.max_age_ms
        assert limit is not UNSET   # (by_time is kept only then)
        while by_time and _too_old(by_time[0][0], now, limit):
            _, index, grant = heapq.heappop(by_time)
            if self._live.get(index) is grant:
                self._unfile(grant)
                self._stale[index] = grant

    def _anchor(self, grant: _Grant) -> tuple[Any, ...]:
        """Where `args_subset` files a grant (see `_subset`)."""
        buckets, bucket = self._buckets, grant.bucket
        fields = [(bucket, *field) for field in _fields(grant.args)]
        return min(fields, key=lambda field: len(buckets.get(field, _EMPTY))) if fields else (bucket,)

    def _drop(self, grant: _Grant) -> None:
        """Forget a grant that can cover no more calls (used, revoked, too many events old)."""
        if self._stale.pop(grant.index, None) is None:
            self._unfile(grant)
        for field, named in self._named.items():
            value = getattr(grant, field)
            if value is not UNSET and value is not None:
                same = named[value]
                del same[grant.index]
                if not same:
                    del named[value]

    def _call(self, event: Event, index: int) -> None:
        self.checked += 1
        call = _Call(event, index, self._reads)
        self._expire(index)
        self._set_aside(call)
        max_age_ms = self._config.max_age_ms
        timeless = max_age_ms is not UNSET and call.time is None   # no grant can age it: none covers
        for grant in () if timeless else self._candidates(call):
            if self._covers(grant, call):
                if self._config.one_use:
                    grant.consumed_by = call.seq
                    self._drop(grant)
                return
            # the candidates come nearest first: once no grant up to this one is young enough,
            # none of those left is (calls whose times go back and forth looked at every grant)
            if max_age_ms is not UNSET and grant.latest_time is not None and call.time is not None \
                    and _too_old(grant.latest_time, call.time, max_age_ms):
                break
        if not self.note_violation():
            return
        rejected = [self._rejection(grant, call) for grant in reversed(self._recent)]
        evidence: dict[str, Any] = {"tool": call.tool}
        if call.call_id is not UNSET:
            evidence["call_id"] = call.call_id
        if call.approval_id is not UNSET:
            evidence["approval_id"] = call.approval_id
        evidence["rejected"] = rejected
        if rejected:
            nearest = rejected[0]
            said = _WHY[nearest["why"]]
            said = _said(nearest["why"], self._recent[-1], call, said)
            why = f": the nearest grant (seq {js_number(nearest['grant_seq'])}) is {said}"
            if "pointer" in nearest:
                why += f" ({nearest['pointer']})"
            elif "by_seq" in nearest:
                why += f" (by seq {js_number(nearest['by_seq'])})"
        else:
            why = ": no approval.granted came before it"
        self.keep(f"Call {call.tool} at seq {js_number(call.seq)} has no unused approval that covers it{why}.",
                  evidence_value(evidence), call.seq, index)

    def _expire(self, index: int) -> None:
        """Forget the grants too far back to cover the event at `index` or any later one."""
        ageing, limit, live = self._ageing, self._config.max_age_events, self._live
        if ageing is None or limit is UNSET:
            return
        while ageing:
            oldest = ageing[0]
            alive = live.get(oldest.index) is oldest or self._stale.get(oldest.index) is oldest   # not spent or revoked
            if alive and index - oldest.index <= limit:
                return
            ageing.popleft()
            if alive:
                self._drop(oldest)

    def _candidates(self, call: _Call) -> Iterator[_Grant]:
        """The grants that may cover the call, nearest first: those naming its tool and those
        naming none (a rule with `scope`), from the buckets the call's binding points at (or,
        for a call with an `approval_id`, the grants of that id, when they are fewer)."""
        if self._binds_args and not isinstance(call.args, dict):
            return iter(())   # a call without args is bound by no grant
        pools = None
        if call.approval_id is not UNSET:   # only grants of its approval_id can cover it: asked of their index
            same = self._by_id.get(call.approval_id, _EMPTY)
            if len(same) > _FEW:   # a shared id: the call's buckets may hold fewer (`_covers` tests the id)
                pools = self._pools(call)
            if pools is None or len(same) <= sum(map(len, pools)):
                return self._of_id(call, same)
        return _nearest_first(self._pools(call) if pools is None else pools)

    def _of_id(self, call: _Call, same: dict[int, _Grant]) -> Iterator[_Grant]:
        """The live grants of the call's approval_id in its buckets, nearest first."""
        named = self._bucket(call.tool, call)
        unnamed = self._bucket(UNSET, call) if self._in_scope is not None else named
        live = self._live
        return (grant for grant in reversed(same.values())
                if (grant.bucket == named or grant.bucket == unnamed)
                and live.get(grant.index) is grant)   # (not spent, revoked or set aside)

    def _pools(self, call: _Call) -> list[dict[int, _Grant]]:
        """The live grants filed where the call looks: the buckets of its tool (and, with `scope`,
        of no tool) and binding; under `args_subset`, their anchors on the call's own fields (or
        on none)."""
        buckets = self._buckets
        tools = (call.tool, UNSET) if self._in_scope is not None else (call.tool,)
        if self._subset:
            fields = _fields(call.args)
            return [buckets[anchor] for bucket in tools
                    for anchor in [(bucket,), *((bucket, *field) for field in fields)] if anchor in buckets]
        return [buckets[bucket] for bucket in dict.fromkeys(self._bucket(tool, call) for tool in tools)
                if bucket in buckets]

    def _covers(self, grant: _Grant, call: _Call) -> bool:
        """Whether a grant from the call's buckets covers it: `_why_not` is None, tested only on
        what a live grant in those buckets may still fail. The rest holds already: `_may_cover`
        let it in (scope, approver, attestation, what the binding needs), its bucket names the
        call's tool (or none, under `scope`) and, under `args` and `call_id`, what they bind,
        and a grant leaves the buckets when it is used, revoked or too many events old."""
        if call.approval_id is not UNSET and grant.approval_id != call.approval_id:
            return False
        if self._binds_args and _args_difference(grant.args, call.args,
                                                 subset=self._config.bind == "args_subset") is not None:
            return False
        max_age_ms = self._config.max_age_ms
        return max_age_ms is UNSET or (grant.time is not None and call.time is not None
                                       and not _too_old(grant.time, call.time, max_age_ms))

    def _why_not(self, grant: _Grant, call: _Call) -> tuple[str, dict[str, Any]] | None:
        """The first condition of coverage the grant fails for the call (and its details), or None."""
        config = self._config
        if grant.tool is not UNSET and grant.tool != call.tool:
            return "tool_mismatch", {}
        if self._in_scope is not None:
            if grant.scope is UNSET or not self._in_scope(grant.scope):
                return "scope_mismatch", {}
        elif grant.tool is UNSET:
            return "tool_mismatch", {}
        if call.approval_id is not UNSET and grant.approval_id != call.approval_id:
            return "approval_id_mismatch", {}
        bind = config.bind
        if bind == "args" or bind == "args_subset":
            where = _args_difference(grant.args, call.args, subset=bind == "args_subset")
            if where is not None:
                return "args_mismatch", {"pointer": where}
        elif bind == "call_id" and (grant.call_id is UNSET or grant.call_id != call.call_id):
            return "call_id_mismatch", {}
        if config.max_age_events is not UNSET and call.index - grant.index > config.max_age_events:
            return "expired", {}
        if config.max_age_ms is not UNSET:
            if grant.time is None or call.time is None:
                return "time_missing", {}   # (also a time whose offset names no instant)
            if _too_old(grant.time, call.time, config.max_age_ms):
                return "expired", {}
        if grant.revoked:
            return "revoked", {}
        if grant.consumed_by is not None:
            return "consumed", {"by_seq": grant.consumed_by}
        if config.require_approver and not grant.approver:
            return "approver_missing", {}
        if self._attested is not None and not self._attested(grant.attested_by):
            return "attestation", {}
        return None

    def _rejection(self, grant: _Grant, call: _Call) -> dict[str, Any]:
        found = self._why_not(grant, call)
        assert found is not None   # only called when no grant covers the call
        why, details = found
        return {"grant_seq": grant.seq, "why": why, **details}

    def finish(self, summary: TraceSummary) -> RuleResult:
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result


_GRANT_FIELD = {"approval_id": "approval_id", "approval_scope": "scope", "tool": "tool"}
"""The grant's attribute of each event field a revocation may carry."""

_WHY = {
    "tool_mismatch": "for another tool", "scope_mismatch": "outside the scope", "approval_id_mismatch":
    "another approval_id", "args_mismatch": "for other args", "call_id_mismatch": "for another call_id",
    "expired": "too old", "time_missing": "without a time to age it by", "revoked": "revoked",
    "consumed": "already used", "approver_missing": "without an approver",
    "attestation": "attested by no one the rule accepts",
}
"""How a message says why a grant did not cover the call."""


def _said(why: str, grant: _Grant, call: _Call, said: str) -> str:
    """What the message says of the nearest grant, where `_WHY`'s words for its `why` would
    mislead: a grant with no call_id or tool (rather than another one), or a time that is there
    but names no instant (an offset of 24 hours or more), the grant's or the call's."""
    if why == "call_id_mismatch" and grant.call_id is UNSET:
        return "without a call_id"   # (a grant `record`'s harness wrote: it writes none)
    if why == "call_id_mismatch" and call.call_id is UNSET:
        return "for a call_id, and the call has none"
    if why == "tool_mismatch" and grant.tool is UNSET:
        return "without a tool (a rule without a scope needs grants that name the tool)"
    if why == "time_missing" and grant.time is not None:   # the call's time is missing
        return f"unusable: the call has {'a time that names no instant' if call.timed else 'no time'} to age it by"
    if why == "time_missing" and grant.timed:
        return "stamped with a time that names no instant (an offset of 24 hours or more)"
    return said


def _any_glob(globs: list[str]) -> Any:
    """Whether a grant's `data.attested_by` (None: absent, or not a string) matches one of `globs`."""
    matchers = [compile_glob(glob) for glob in globs]
    return lambda attested: attested is not None and any(matches(attested) for matches in matchers)


_EMPTY: dict[int, _Grant] = {}
"""No grants (never changed)."""


def _too_old(then: int, now: int, max_age_ms: float) -> bool:
    """Whether a grant of time `then` is too old for a call of time `now` (both in microseconds,
    as events' times are read) under `max_age_ms`."""
    return (now - then) / 1_000 > max_age_ms


def _fields(args: dict[str, Any]) -> list[tuple[tuple[str | int, ...], object]]:
    """(path, value as JSON-equal values meet) for each string, number, boolean or null of `args`
    reached through objects and the first `_ITEMS` items of arrays (a position is an int in the
    path), up to `_DEEPEST` steps deep: a covered call must hold each equal at the same path
    (`args_subset` takes objects as subsets, and arrays item by item). Later items are not
    entered: every item would make a field of every call (an embedding of 1,536 numbers), and
    the fields of a grant and of a call stop alike."""
    found: list[tuple[tuple[str | int, ...], object]] = []
    below: list[tuple[tuple[str | int, ...], Any]] = [((), args)]
    while below:
        at, value = below.pop()
        members = value.items() if isinstance(value, dict) else enumerate(value[:_ITEMS])
        for key, item in members:
            if isinstance(item, (dict, list)):
                if len(at) + 1 < _DEEPEST:
                    below.append(((*at, key), item))
            else:
                found.append(((*at, key), canonical_key(item)))
    return found


_DEEPEST = 8
"""How many steps (keys and positions) deep `_fields` finds a field."""

_ITEMS = 8
"""The items of an array (from the first) in which `_fields` finds fields."""


_FEW = 8
"""Grants of one approval_id a call looks at without asking whether its buckets hold fewer."""


def _nearest_first(pools: list[dict[int, _Grant]]) -> Iterator[_Grant]:
    """The grants of several pools (each in trace order), nearest first."""
    if len(pools) == 1:
        return reversed(pools[0].values())
    return heapq.merge(*(reversed(grants.values()) for grants in pools), key=_nearest)


def _position(grant: _Grant) -> int:
    return grant.index


def _nearest(grant: _Grant) -> int:
    return -grant.index


def _args_difference(granted: Any, called: Any, *, subset: bool) -> str | None:
    """The pointer (into the event, `/args/...`) of the first place where the call's args differ
    from the grant's (equal, or with `subset`, every field the grant names equal), or None when
    they agree. Either side without args (or args that are no object) is `/args`."""
    if not isinstance(granted, dict) or not isinstance(called, dict):
        return "/args"
    if not subset:
        if json_equal(granted, called):
            return None
        return pointer(("args", *_first_difference(granted, called)))
    found = _subset_difference(granted, called, ())
    return None if found is None else pointer(("args", *found))


def _subset_difference(granted: Any, called: Any, at: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where `called` fails to hold `granted` as a literal subset (objects: the keys named;
    arrays: same length, by position; anything else: equal), or None."""
    if isinstance(granted, dict):
        if not isinstance(called, dict):
            return at
        for key, value in granted.items():
            if key not in called:
                return (*at, key)
            found = _subset_difference(value, called[key], (*at, key))
            if found is not None:
                return found
        return None
    if isinstance(granted, list):
        if not isinstance(called, list) or len(granted) != len(called):
            return at
        for position, (value, other) in enumerate(zip(granted, called, strict=True)):
            found = _subset_difference(value, other, (*at, str(position)))
            if found is not None:
                return found
        return None
    return None if json_equal(granted, called) else at


def _first_difference(granted: Any, called: Any) -> tuple[str, ...]:
    """Where two unequal values first differ: a key of one missing in the other (keys in sorted
    order), an element of two arrays of one length, or the values themselves."""
    at: tuple[str, ...] = ()
    while True:
        if isinstance(granted, dict) and isinstance(called, dict):
            steps = [(key, granted.get(key), called.get(key), key in granted and key in called)
                     for key in sorted(granted.keys() | called.keys())]
        elif isinstance(granted, list) and isinstance(called, list) and len(granted) == len(called):
            steps = [(str(position), a, b, True) for position, (a, b) in enumerate(zip(granted, called, strict=True))]
        else:
            return at
        for step, a, b, both in steps:
            if not both or not json_equal(a, b):
                at = (*at, step)
                if not both:
                    return at
                granted, called = a, b
                break
        else:
            return at
