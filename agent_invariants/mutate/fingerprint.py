"""The behaviour fingerprint: whether a mutant still does what the original trace did.

A mutant whose fingerprint equals the original's is *equivalent*: no contract should tell them
apart, so it is left out of the score (and flagged `over_block` when the contract rejects it).
The fingerprint (spec §6, §10 point 62) is

1. the final output (or its absence) and the run status;
2. the multiset over tool.calls of (tool, args, the paired result's ok, result and duration_ms,
   whether a control.stop comes before the call, the grants that cover it), a grant covering a
   call when it is an earlier approval.granted not marked `approved: false` whose tool and
   approval_id equal the call's wherever both have them, each grant as (approval_id,
   approval_scope, call_id, args, approver);
3. the multiset of outcomes as (outcome_id, verdict, evidence_class, before / after / without the
   first completion claim: an event with `claims_completion: true` or a `run.completed`, as the
   summary counts them), an outcome on the claiming event itself being after it;
4. grounding: for each call of a tool no `--reads` glob matches (a *write*), identified by (tool,
   args, occurrence), the set of (tool, args) of earlier calls whose paired result exists and is
   not `ok: false`; the mutant's sets may be larger (a write that saw more is no worse);
5. the ordered list of every other event, but `telemetry.*`, as (type, reason, status,
   claims_completion, confidence, duration_ms, the number of tool.calls before it).

Values are compared as JSON (`1` equals `1.0`, never `true` or `"1"`); an absent member differs
from null. An event is read once however many mutants share it (`Fingerprints` caches its facts).
"""
from __future__ import annotations

import hashlib
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import canonical_key
from agent_invariants.mutate.operators import pairs
from agent_invariants.mutate.trace import MISSING, Event, member
from agent_invariants.rules.terminal import TERMINAL_TYPES, run_status

__all__ = ("Fingerprint", "Fingerprints")

_ABSENT = ("-",)
_OTHER_FIELDS = ("reason", "status", "claims_completion", "confidence", "duration_ms")


class Fingerprint(NamedTuple):
    """What a trace did, as far as any contract may care (see the module's docstring)."""

    ending: tuple[object, object]
    calls: Counter[tuple[object, ...]]
    outcomes: Counter[tuple[object, ...]]
    others: tuple[tuple[object, ...], ...]
    writes: dict[tuple[object, ...], int]
    """Each write call, as (tool, args, occurrence), and its position in the trace."""
    grounded: dict[tuple[object, object], int]
    """Each (tool, args) of a call with a result not `ok: false`, and the position of the first."""

    def same_as(self, original: Fingerprint) -> bool:
        """Whether a mutant with this fingerprint behaves as `original` does."""
        if (self.ending, self.calls, self.outcomes, self.others) != \
                (original.ending, original.calls, original.outcomes, original.others):
            return False
        return self.writes.keys() == original.writes.keys() and self._grounds_as_much(original)

    def _grounds_as_much(self, original: Fingerprint) -> bool:
        """Whether each write call saw at least what it saw in `original`: every call grounded
        before it there is grounded before it here. The sets are never built (a set per write
        would be quadratic): the original's grounded calls sorted by when they were first
        grounded, with the running latest of when each is grounded here, answer for every write."""
        order = sorted(original.grounded.items(), key=lambda item: item[1])
        when = [position for _, position in order]
        latest: list[float] = []
        for name, _ in order:
            here = self.grounded.get(name, math.inf)
            latest.append(max(latest[-1], here) if latest else here)
        for call, position in original.writes.items():
            count = bisect_left(when, position)   # the calls grounded before this write there
            if count and latest[count - 1] >= self.writes[call]:
                return False
        return True


class _Facts(NamedTuple):
    """What the fingerprint reads of one event, as comparable keys."""

    type: Any
    tool_name: Any
    tool: object
    args: object
    ok: object
    result: object
    duration: object
    approval_id: Any
    grant: tuple[object, ...]
    approved: bool
    claims: bool
    outcome: tuple[object, ...]
    other: tuple[object, ...]
    output: object
    status: str | None
    """The `status` when it is a string (a terminal's run status)."""


class Fingerprints:
    """Fingerprints of a trace and its mutants, with each event's facts read once."""

    def __init__(self, reads: Sequence[str] = ()) -> None:
        self._reads = [compile_glob(pattern) for pattern in reads]
        self._facts: dict[int, tuple[Event, _Facts]] = {}

    def of(self, events: list[Event], *, remember: bool = False) -> Fingerprint:
        """The fingerprint of `events`; with `remember`, their facts are kept for later calls
        (give the original trace so: its mutants share most of its events)."""
        facts = [self._facts_of(event, remember) for event in events]
        result_of = pairs(events)
        paired = set(result_of.values())
        claim = next((index for index, fact in enumerate(facts) if fact.claims), None)
        terminal = next((fact for fact in reversed(facts) if fact.type in TERMINAL_TYPES), None)
        calls: Counter[tuple[object, ...]] = Counter()
        outcomes: Counter[tuple[object, ...]] = Counter()
        others: list[tuple[object, ...]] = []
        writes: dict[tuple[object, ...], int] = {}
        grants = _Grants()
        grounded: dict[tuple[object, object], int] = {}
        seen: Counter[tuple[object, object]] = Counter()
        stopped = False
        made = 0
        for index, fact in enumerate(facts):
            kind = fact.type
            if kind == "tool.call":
                result = facts[result_of[index]] if index in result_of else None
                answer = (_ABSENT,) if result is None else ("paired", result.ok, result.result, result.duration)
                calls[(fact.tool, fact.args, answer, stopped, grants.covering(fact))] += 1
                name = (fact.tool, fact.args)
                seen[name] += 1
                if not (fact.tool_name.__class__ is str and any(read(fact.tool_name) for read in self._reads)):
                    writes[(*name, seen[name])] = index
                if result is not None and result.ok != ("j", "false"):
                    grounded.setdefault(name, index)
                made += 1
            elif index in paired:
                continue
            elif kind == "approval.granted":
                if fact.approved:
                    grants.add(fact)
            elif kind == "outcome.observed":
                where = "without" if claim is None else "before" if index < claim else "after"
                outcomes[(*fact.outcome, where)] += 1
            else:
                if kind == "control.stop":
                    stopped = True
                if not (kind.__class__ is str and kind.startswith("telemetry.")):
                    others.append((*fact.other, made))
        return Fingerprint(_ending(terminal), calls, outcomes, tuple(others), writes, grounded)

    def _facts_of(self, event: Event, remember: bool) -> _Facts:
        cached = self._facts.get(id(event))
        if cached is not None and cached[0] is event:
            return cached[1]
        facts = _read(event)
        if remember:
            self._facts[id(event)] = (event, facts)
        return facts


def _read(event: Event) -> _Facts:
    kind, status = member(event, "type"), member(event, "status")

    def key(name: str) -> object:
        value = member(event, name)
        return _ABSENT if value is MISSING else canonical_key(value)

    args, approval_id = key("args"), key("approval_id")   # each read once: args may be large
    return _Facts(
        type=kind, tool_name=member(event, "tool"), tool=key("tool"), args=args,
        ok=key("ok"), result=key("result"),
        duration=key("duration_ms"), approval_id=approval_id,
        grant=(approval_id, key("approval_scope"), key("call_id"), args, key("approver")),
        approved=member(event, "approved") is not False,
        claims=member(event, "claims_completion") is True or kind == "run.completed",
        outcome=tuple(key(name) for name in ("outcome_id", "verdict", "evidence_class")),
        other=(key("type"), *(key(name) for name in _OTHER_FIELDS)), output=key("output"),
        status=status if status.__class__ is str else None)


class _Grants:
    """The grants seen so far, filed by tool, by approval_id and by both. A grant covers a call
    when their tool and approval_id agree wherever both have them, so a call's covering grants
    are the union of at most four disjoint files. Each file keeps a running sum of its grants'
    128-bit hashes and its count: the sum over a call's files stands for the multiset of grants
    that cover it, in constant time (a sorted tuple of them per call was quadratic)."""

    def __init__(self) -> None:
        self._files: dict[tuple[object, ...], tuple[int, int]] = {}

    def add(self, grant: _Facts) -> None:
        mark = int.from_bytes(hashlib.blake2b(repr(grant.grant).encode(), digest_size=16).digest(), "big")
        for key in (("both", grant.tool, grant.approval_id), ("tool", grant.tool), ("id", grant.approval_id),
                    ("all",)):
            total, count = self._files.get(key, (0, 0))
            self._files[key] = ((total + mark) & _MASK, count + 1)

    def covering(self, call: _Facts) -> tuple[int, int]:
        """The grants so far that cover `call`, as (sum of their hashes, how many)."""
        tool, ident = call.tool, call.approval_id
        keys: list[tuple[object, ...]]
        if tool != _ABSENT and ident != _ABSENT:
            keys = [("both", tool, ident), ("both", tool, _ABSENT), ("both", _ABSENT, ident),
                    ("both", _ABSENT, _ABSENT)]
        elif tool != _ABSENT:
            keys = [("tool", tool), ("tool", _ABSENT)]
        elif ident != _ABSENT:
            keys = [("id", ident), ("id", _ABSENT)]
        else:
            keys = [("all",)]
        total = count = 0
        for key in keys:
            found = self._files.get(key)
            if found is not None:
                total, count = (total + found[0]) & _MASK, count + found[1]
        return total, count


_MASK = (1 << 128) - 1


def _ending(terminal: _Facts | None) -> tuple[object, object]:
    """(final output, run status), as the run_status kind reads the status."""
    if terminal is None:
        return _ABSENT, ("s", run_status(None, None))
    return terminal.output, ("s", run_status(terminal.type, terminal.status))
