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

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import canonical_key
from agent_invariants.mutate.operators import pairs
from agent_invariants.mutate.trace import MISSING, Event, member

__all__ = ("Fingerprint", "Fingerprints")

_ABSENT = ("-",)
_TERMINAL = ("run.completed", "run.failed")
_OTHER_FIELDS = ("reason", "status", "claims_completion", "confidence", "duration_ms")


class Fingerprint(NamedTuple):
    """What a trace did, as far as any contract may care (see the module's docstring)."""

    ending: tuple[object, object]
    calls: Counter[tuple[object, ...]]
    outcomes: Counter[tuple[object, ...]]
    others: tuple[tuple[object, ...], ...]
    grounding: dict[tuple[object, ...], frozenset[tuple[object, object]]]

    def same_as(self, original: Fingerprint) -> bool:
        """Whether a mutant with this fingerprint behaves as `original` does."""
        if (self.ending, self.calls, self.outcomes, self.others) != \
                (original.ending, original.calls, original.outcomes, original.others):
            return False
        if self.grounding.keys() != original.grounding.keys():
            return False
        return all(self.grounding[call] >= seen for call, seen in original.grounding.items())


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
        terminal = next((fact for fact in reversed(facts) if fact.type in _TERMINAL), None)
        calls: Counter[tuple[object, ...]] = Counter()
        outcomes: Counter[tuple[object, ...]] = Counter()
        others: list[tuple[object, ...]] = []
        grounding: dict[tuple[object, ...], frozenset[tuple[object, object]]] = {}
        grants = _Grants()
        grounded: set[tuple[object, object]] = set()
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
                    grounding[(*name, seen[name])] = frozenset(grounded)
                if result is not None and result.ok != ("j", "false"):
                    grounded.add(name)
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
        return Fingerprint(_ending(terminal), calls, outcomes, tuple(others), grounding)

    def _facts_of(self, event: Event, remember: bool) -> _Facts:
        cached = self._facts.get(id(event))
        if cached is not None and cached[0] is event:
            return cached[1]
        facts = _read(event)
        if remember:
            self._facts[id(event)] = (event, facts)
        return facts


def _read(event: Event) -> _Facts:
    def key(name: str) -> object:
        value = member(event, name)
        return _ABSENT if value is MISSING else canonical_key(value)

    return _Facts(
        type=member(event, "type"), tool_name=member(event, "tool"), tool=key("tool"), args=key("args"),
        ok=key("ok"), result=key("result"),
        duration=key("duration_ms"), approval_id=key("approval_id"),
        grant=tuple(key(name) for name in ("approval_id", "approval_scope", "call_id", "args", "approver")),
        approved=member(event, "approved") is not False,
        claims=member(event, "claims_completion") is True or member(event, "type") == "run.completed",
        outcome=tuple(key(name) for name in ("outcome_id", "verdict", "evidence_class")),
        other=(key("type"), *(key(name) for name in _OTHER_FIELDS)), output=key("output"))


class _Grants:
    """The grants seen so far, filed by tool, by approval_id and by both, each list in trace
    order. A grant covers a call when their tool and approval_id agree wherever both have them,
    so a call's covering grants are at most four lists; those of the calls between the same two
    grants are sorted once."""

    def __init__(self) -> None:
        self._lists: dict[tuple[object, ...], list[tuple[object, ...]]] = {}
        self._sorted: dict[tuple[object, ...], tuple[tuple[object, ...], ...]] = {}

    def add(self, grant: _Facts) -> None:
        for key in (("both", grant.tool, grant.approval_id), ("tool", grant.tool), ("id", grant.approval_id),
                    ("all",)):
            self._lists.setdefault(key, []).append(grant.grant)

    def covering(self, call: _Facts) -> tuple[tuple[object, ...], ...]:
        """The grants so far that cover `call`, sorted."""
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
        lists = self._lists
        state = tuple((key, len(lists.get(key, ()))) for key in keys)
        found = self._sorted.get(state)
        if found is None:
            found = self._sorted[state] = tuple(sorted(grant for key in keys for grant in lists.get(key, ())))
        return found


def _ending(terminal: _Facts | None) -> tuple[object, object]:
    """(final output, run status): no output and `none` without a terminal event; the status by
    the terminal's type when it has none."""
    if terminal is None:
        return _ABSENT, ("s", "none")
    status = terminal.other[2]
    if status == _ABSENT:
        status = ("s", "completed" if terminal.type == "run.completed" else "failed")
    return terminal.output, status
