"""`approval_bound` against a reference model written from the spec text only (spec v2 §0, §1, §2
paths/equality/subset matching, §3.5 and §10 points 1-7, 9, 13, 16 and 21; v1 §2.7 globs). A property
test generates one-rule contracts (every option §3.5 gives the kind: `tool`, `scope`, `one_use`,
`bind` none/args/args_subset/call_id, `max_age_events`, `max_age_ms`, `revoked_by`,
`require_approver`) and short traces (grants with and without tool, scope, approval_id, args,
call_id, approver, time and `approved`; calls with and without tool, approval_id, args, call_id and
time; revocations carrying some or none of approval_id/approval_scope/tool; `tool.denied` with and
without a call_id; results and messages), and compares the public API's verdict, violations (seq,
code, status, evidence including the `rejected` list), `checked` and `vacuous` with the model.

What the model takes from the spec:
- a subject is a `tool.call` whose own `tool` matches the rule's glob (a glob never matches a missing
  value, v1 §2.7); `checked` counts them and `vacuous: true` when it is 0 (point 4);
- each subject scans the grants strictly before it, nearest first (point 21); a grant is an
  `approval.granted` with `approved` not false (condition 1) and it covers the call iff conditions
  2-9 of §3.5 hold, checked in that order, the first failing one giving the grant's `why`:
  2 a grant's tool equals the call's (string equality, point 21) -> tool_mismatch;
  3 with a rule `scope` the grant's approval_scope matches it -> scope_mismatch;
  4 a call's approval_id equals the grant's;
  5 the binding: `args` structural equality (§2), `args_subset` the grant's args subset-match the
    call's (§2 match tree literal: objects as subsets, arrays same length by position, scalars equal),
    a grant or call without args never binds (point 21) -> args_mismatch with a pointer into the call
    (`/args/...`, point 7); `call_id` equal ids, both present (point 21) -> call_id_mismatch;
  6 position gap <= max_age_events, and with max_age_ms both times present (else time_missing) with
    call time - grant time <= max_age_ms -> expired;
  7 not revoked: an event between the grant and the call (point 21) whose type matches a `revoked_by`
    glob (default ["approval.revoked"]) and that equals the grant on each of approval_id,
    approval_scope and tool it carries (all grants when it carries none), or an `approval.granted`
    with `approved: false` and the grant's approval_id -> revoked;
  8 not consumed: under `one_use` (default true) the covering grant is consumed by the call, also a
    call later denied (point 21) -> consumed with by_seq;
  9 an approver if `require_approver` -> approver_missing;
- an uncovered subject gives one `approval_bound.missing` at the call (point 2), status fail (point
  6), evidence `{tool, call_id?, approval_id?, rejected}` with the 10 nearest rejected
  grants, nearest first (point 21); violations in trace order (point 5); evidence strings (ids,
  pointers) cut to 200 code points plus `…` and pointers escaped as RFC 6901 (point 7); a time gap is
  exact (sub-millisecond fractions count) and the position gap counts events, not seq numbers.

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants.api import check_trace
from agent_invariants.rules import approval_bound
from tests.models import ABSENT, glob, picked, same, same_violations
from tests.models import one_result as api

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # §3.5 lists no `why` for condition 4 (the call's approval_id differs from the grant's, or the
    # grant has none); the product lists such a grant with why "approval_id_mismatch" (a value the
    # spec's list of `why` values does not contain)
    "condition 4 failure is why 'approval_id_mismatch'",
    # condition 3 without a rule scope ("G must have a tool") names no `why`; the product uses
    # "tool_mismatch"
    "a tool-less grant under a scope-less rule is 'tool_mismatch'",
    # which call a `tool.denied` "marks" (§3.5; point 75: "answered by tool.denied"): the nearest
    # earlier call with its call_id that no result (paired as point 3 pairs them) and no earlier
    # denial answered; a call without call_id is never marked; `prevented: true` is a field of the
    # violation (point 84: "the report carries" it), left out otherwise
    "prevented: the nearest call with the denial's call_id still unanswered, a field of the violation",
    # the args_mismatch pointer: the first difference, depth first; under `args` over the sorted union
    # of keys (a key on one side only points at that key), under `args_subset` over the grant's keys in
    # their order (a key missing from the call points at that key); an array of another length, or a
    # value of another type, points at itself; missing args on either side point at "/args"
    "args_mismatch pointer: first difference (args: sorted keys; args_subset: grant's key order)",
    # within condition 6 the position gap is checked first: a grant too many events old is
    # `expired` even when a time is missing
    "expired (position) before time_missing",
    # a grant time-stamped after its call has a negative gap, which is <= max_age_ms, so it is young
    "negative time gap is young enough",
    # evidence: `tool` is the call's tool, `call_id`/`approval_id` the call's, present iff the call has
    # them; `rejected` is present (maybe empty) on every violation; no top-level pointer or
    # related_seqs (the spec defines neither for this kind)
    "evidence keys and no top-level pointer/related_seqs",
    # a grant's args are trace data, not a contract's match tree: a `$` key in them is compared as a
    # literal key (`{"$gt": 5}` does not match 10)
    "grant args are literal data ($ keys are not operators)",
    # "a later approved:false with the same approval_id": a grant without approval_id is never revoked
    # this way (two absent ids are not "the same")
    "approved:false revokes only grants that have its approval_id",
)

CODE = "approval_bound.missing"
REVOCATION_FIELDS = ("approval_id", "approval_scope", "tool")


# -- the reference model --------------------------------------------------------------------------


def cut(text: str) -> str:
    """Point 7: evidence strings are cut to 200 code points plus `…`."""
    return text if len(text) <= 200 else text[:200] + "…"


def escape(key: str) -> str:
    """RFC 6901 escaping of one pointer segment."""
    return key.replace("~", "~0").replace("/", "~1")


def equal_pointer(grant: Any, call: Any, at: str) -> str | None:
    """`bind: args`: None if equal (§2 equality), else where they first differ."""
    if isinstance(grant, dict) and isinstance(call, dict):
        for key in sorted(grant.keys() | call.keys()):
            if key not in grant or key not in call:
                return f"{at}/{escape(key)}"
            found = equal_pointer(grant[key], call[key], f"{at}/{escape(key)}")
            if found is not None:
                return found
        return None
    if isinstance(grant, list) and isinstance(call, list):
        if len(grant) != len(call):
            return at
        for index, (g, c) in enumerate(zip(grant, call, strict=True)):
            found = equal_pointer(g, c, f"{at}/{index}")
            if found is not None:
                return found
        return None
    return None if same(grant, call) else at


def subset_pointer(grant: Any, call: Any, at: str) -> str | None:
    """`bind: args_subset`: None if the grant's value subset-matches the call's (§2 literal node),
    else where it first fails."""
    if isinstance(grant, dict):
        if not isinstance(call, dict):
            return at
        for key, value in grant.items():
            if key not in call:
                return f"{at}/{escape(key)}"
            found = subset_pointer(value, call[key], f"{at}/{escape(key)}")
            if found is not None:
                return found
        return None
    if isinstance(grant, list):
        if not isinstance(call, list) or len(grant) != len(call):
            return at
        for index, (g, c) in enumerate(zip(grant, call, strict=True)):
            found = subset_pointer(g, c, f"{at}/{index}")
            if found is not None:
                return found
        return None
    return None if same(grant, call) else at


TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(Z|([+-])(\d\d):?(\d\d))")


def millis(stamp: str) -> Fraction:
    """v1 §3.3 timestamp -> exact milliseconds since the epoch."""
    m = TIME.fullmatch(stamp)
    assert m is not None, stamp
    year, month, day, hour, minute = (int(m[k]) for k in range(1, 6))
    moment = datetime(year, month, day, hour, minute, int(m[6] or 0), tzinfo=UTC)
    if m[8] != "Z":
        offset = timedelta(hours=int(m[10]), minutes=int(m[11]))
        moment -= offset if m[9] == "+" else -offset
    fraction = Fraction(int(m[7]), 10 ** len(m[7])) if m[7] else Fraction(0)
    return (int(moment.timestamp()) + fraction) * 1000


def binding(rule: dict[str, Any], grant: dict[str, Any], call: dict[str, Any]) -> dict[str, Any] | None:
    """Condition 5: None when the binding holds, else the rejection."""
    bind = rule.get("bind", "none")
    if bind in ("args", "args_subset"):
        if "args" not in grant or "args" not in call:
            return {"why": "args_mismatch", "pointer": "/args"}
        differ = equal_pointer if bind == "args" else subset_pointer
        pointer = differ(grant["args"], call["args"], "/args")
        return None if pointer is None else {"why": "args_mismatch", "pointer": cut(pointer)}
    if bind == "call_id" and ("call_id" not in grant or grant.get("call_id") != call.get("call_id")):
        return {"why": "call_id_mismatch"}
    return None


def too_old(rule: dict[str, Any], events: list[dict[str, Any]], g: int, c: int) -> str | None:
    """Condition 6: None when young enough, else `expired` or `time_missing`."""
    if "max_age_events" in rule and c - g > rule["max_age_events"]:
        return "expired"
    if "max_age_ms" in rule:
        if "time" not in events[g] or "time" not in events[c]:
            return "time_missing"
        if millis(events[c]["time"]) - millis(events[g]["time"]) > rule["max_age_ms"]:
            return "expired"
    return None


def revokes(rule: dict[str, Any], event: dict[str, Any], grant: dict[str, Any]) -> bool:
    """Condition 7, for one event after the grant and before the call (point 21)."""
    if any(glob(pattern, event["type"]) for pattern in rule.get("revoked_by", ["approval.revoked"])):
        carried = [field for field in REVOCATION_FIELDS if field in event]
        if all(field in grant and grant[field] == event[field] for field in carried):
            return True
    return (event["type"] == "approval.granted" and event.get("approved") is False
            and "approval_id" in grant and event.get("approval_id") == grant["approval_id"])


def rejection(rule: dict[str, Any], events: list[dict[str, Any]], g: int, c: int,
              used_by: dict[int, Any]) -> dict[str, Any] | None:
    """Conditions 2-9 in order: None when grant `g` covers call `c`, else why it does not."""
    grant, call = events[g], events[c]
    if "tool" in grant and grant["tool"] != call.get("tool"):
        return {"why": "tool_mismatch"}
    if "scope" in rule and not glob(rule["scope"], grant.get("approval_scope")):
        return {"why": "scope_mismatch"}
    if "scope" not in rule and "tool" not in grant:
        return {"why": "tool_mismatch"}
    if "approval_id" in call and grant.get("approval_id") != call["approval_id"]:
        return {"why": "approval_id_mismatch"}
    bound = binding(rule, grant, call)
    if bound is not None:
        return bound
    age = too_old(rule, events, g, c)
    if age is not None:
        return {"why": age}
    if any(revokes(rule, events[r], grant) for r in range(g + 1, c)):
        return {"why": "revoked"}
    if g in used_by:
        return {"why": "consumed", "by_seq": used_by[g]}
    if rule.get("require_approver", False) and "approver" not in grant:
        return {"why": "approver_missing"}
    return None


def is_grant(event: dict[str, Any]) -> bool:
    """Condition 1."""
    return event["type"] == "approval.granted" and event.get("approved") is not False


def prevented(events: list[dict[str, Any]], c: int) -> bool:
    """§3.5 "a call that a later tool.denied marks", point 75 "answered by" (see AMBIGUOUS)."""
    waiting: dict[Any, list[int]] = {}   # call_id -> positions of calls without a result, oldest first
    denied: set[int] = set()
    for position, event in enumerate(events):
        call_id = event.get("call_id", ABSENT)
        if call_id is ABSENT:
            continue
        if event["type"] == "tool.call":
            waiting.setdefault(call_id, []).append(position)
        elif event["type"] == "tool.result" and waiting.get(call_id):
            waiting[call_id].pop()
        elif event["type"] == "tool.denied":
            denied.update([next((p for p in reversed(waiting.get(call_id, [])) if p not in denied), -1)])
    return c in denied


def evidence(events: list[dict[str, Any]], c: int, rejected: list[dict[str, Any]]) -> dict[str, Any]:
    """§3.5's evidence of a `missing` violation."""
    call = events[c]
    found: dict[str, Any] = {"tool": cut(call["tool"])}
    found.update({key: cut(call[key]) for key in ("call_id", "approval_id") if key in call})
    found["rejected"] = rejected[:10]
    return found


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[tuple[Any, ...]]]:
    """(checked, [(seq, code, status, evidence)] in trace order) for one approval_bound rule."""
    used_by: dict[int, Any] = {}          # grant position -> seq of the call that consumed it
    checked, found = 0, []
    for c, call in enumerate(events):
        if call["type"] != "tool.call" or not glob(rule["tool"], call.get("tool")):
            continue
        checked += 1
        rejected: list[dict[str, Any]] = []
        for g in range(c - 1, -1, -1):    # nearest first, strictly before the call
            if not is_grant(events[g]):
                continue
            why = rejection(rule, events, g, c, used_by)
            if why is None:
                if rule.get("one_use", True):
                    used_by[g] = call["seq"]
                break
            rejected.append({"grant_seq": events[g]["seq"], **why})
        else:
            found.append((call["seq"], CODE, "fail", evidence(events, c, rejected)))
    return checked, found


# -- strategies -----------------------------------------------------------------------------------

A = ABSENT
LONG_KEY = "k" * 199           # its pointer, "/args/" + 199 characters, is cut (point 7)
LONG_CALL = "c" * 201          # cut in the evidence
LONG_APPROVAL = "g" * 200      # not cut
# related args, so that a trace's grants and calls are near misses of each other:
ARG_FAMILIES: list[list[dict[str, Any]]] = [
    [{"order": "A1", "amount": 10}, {"amount": 10.0, "order": "A1"}, {"order": "A1"}, {"order": "A2", "amount": 10}],
    [{"order": "A1"}, {}, {"order": None}],
    [{"order": "A1", "amount": True}, {"order": "A1", "amount": 1}, {"amount": 1.0, "order": "A1"}],
    [{"order": "A1", "items": [1, 2]}, {"order": "A1", "items": [1]}, {"order": "A1", "items": [2, 1]}],
    [{"items": [{"sku": "x", "n": 1}]}, {"items": [{"sku": "x"}]}, {"items": [{"n": 1, "sku": "y"}]}],
    [{"meta": {"b": 2, "a": 1}}, {"meta": {"a": 1}}, {"meta": [1]}, {"meta": {"a": 1}, "z": 0}],
    [{"a/b~c": 1}, {"a/b~c": 2}, {LONG_KEY: 1}, {LONG_KEY: 1, "order": "A1"}],
    [{"amount": {"$gt": 5}}, {"amount": 10}, {"amount": {"$gt": 5}, "order": "A1"}],
]
TIMES = ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.500Z", "2024-01-01T00:00:01Z",
         "2024-01-01T00:00:01.000Z", "2024-01-01T00:00:01.001Z", "2024-01-01T00:00:02Z",
         "2024-01-01T01:00:01+01:00", "2024-01-01T01:00:03+0100", "2023-12-31T23:59:59.9995-00:00",
         "2024-01-01T00:00Z"]


def grants(args: list[Any], times: list[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Grants drawing args and times from the trace's small pools, so that many of them cover."""
    return picked(type=["approval.granted"], approved=[A, A, A, A, True, False],
                  approval_id=[A, "g1", "g1", "g1", "g2", "g3", LONG_APPROVAL],
                  approval_scope=[A, "s1", "s1", "s1", "s2", "t1"],
                  tool=[A, "refund", "refund", "refund", "refund", "pay"], args=[A, *args, *args, *args],
                  call_id=[A, "c1", "c1", "c1", "c2"], approver=[A, "bob", "bob", "bob"],
                  time=[A, *times, *times, *times])


def calls(args: list[Any], times: list[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Calls of two tools (or none), from the same pools."""
    return picked(type=["tool.call"], tool=["refund", "refund", "refund", "pay", A],
                  call_id=[A, "c1", "c1", "c1", "c2", "c3", LONG_CALL],
                  approval_id=[A, A, A, A, "g1", "g1", "g2", LONG_APPROVAL],
                  args=[A, *args, *args, *args], time=[A, *times, *times, *times])


revocations = picked(type=["approval.revoked", "approval.revoked", "approval.rescinded", "grant.revoked"],
                     approval_id=[A, A, A, "g1", "g2"], approval_scope=[A, A, A, "s1", "t1"],
                     tool=[A, A, A, "refund", "pay"], reason=[A, "user"])
denials = picked(type=["tool.denied"], call_id=[A, "c1", "c2", "c3"], tool=[A, "refund"])
others = picked(type=["tool.result", "agent.message", "approval.requested"], call_id=[A, "c1", "c2"],
                approval_id=[A, "g1"], ok=[A, True])


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """≤ 12 events, seq = position + 1 (or 2 × position + 1), args (mostly of one family) and times
    from a few values drawn per trace; mostly mixed, sometimes many grants before a call or two (to
    fill the 10-entry `rejected` list); calls often retried, grants often made for the next call."""
    family = draw(st.sampled_from(ARG_FAMILIES))
    args = draw(st.lists(st.sampled_from(family), min_size=1, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        args.append(draw(st.sampled_from(ARG_FAMILIES).flatmap(st.sampled_from)))
    times = draw(st.lists(st.sampled_from(TIMES), min_size=1, max_size=3))
    grant, call = grants(args, times), calls(args, times)
    size = draw(st.one_of(st.integers(0, 12), st.integers(6, 12)))
    if draw(st.integers(0, 7)) == 0:
        tail = [draw(call) for _ in range(draw(st.integers(1, 2)))]
        events = [draw(grant) for _ in range(12 - len(tail))] + tail
    else:
        kinds = [grant] * 5 + [call] * 5 + [revocations, revocations, denials, others]
        events = [draw(st.sampled_from(kinds).flatmap(lambda kind: kind)) for _ in range(size)]
    repeats = draw(st.integers(0, 3))     # how often a call retries the previous one, out of 4
    events = [repeat(events, i) if draw(st.integers(0, 3)) < repeats else event for i, event in enumerate(events)]
    events = [echo(events, i, draw(ECHOED)) for i in range(len(events))]
    step = draw(st.sampled_from([1, 1, 2]))
    return [{"seq": step * position + 1, **event} for position, event in enumerate(events)]


def repeat(events: list[dict[str, Any]], i: int) -> dict[str, Any]:
    """Call `i` made a retry of the previous call, which a one-use grant then covers only once."""
    earlier = [e for e in events[:i] if e["type"] == "tool.call"]
    return dict(earlier[-1]) if events[i]["type"] == "tool.call" and earlier else events[i]


ECHOED = st.sampled_from([(), ("tool", "args", "call_id", "approval_id"), ("tool", "args", "call_id", "approval_id"),
                          ("tool", "call_id", "approval_id"), ("tool", "args", "approval_id"), ("tool", "args")])


def echo(events: list[dict[str, Any]], i: int, keys: tuple[str, ...]) -> dict[str, Any]:
    """Grant `i` made for the next call after it (those of its tool, args, call_id and approval_id
    that the call has), so that grants often cover, or miss by one field, and later conditions get
    exercised."""
    later = [e for e in events[i + 1:] if e["type"] == "tool.call"]
    if events[i]["type"] != "approval.granted" or not later:
        return events[i]
    copied: dict[str, Any] = {key: later[0][key] for key in keys if key in later[0]}
    return {**events[i], **copied}


rules = picked(id=["r"], kind=["approval_bound"], tool=["refund", "refund", "refund", "*", "re*", "p?y", "pay"],
               scope=[A, A, A, A, A, "s*", "s1", "t?", "*"], one_use=[A, A, True, False],
               bind=[A, A, "none", "args", "args", "args_subset", "args_subset", "call_id", "call_id"],
               max_age_events=[A, A, A, A, 1, 2, 3, 5, 8], max_age_ms=[A, A, A, A, A, 1, 500, 1000, 2000],
               revoked_by=[A, A, ["approval.revoked"], ["approval.re*"], ["*.revoked", "approval.rescinded"],
                           ["approval.*"], ["tool.denied"], ["tool.*", "approval.revoked"]],
               require_approver=[A, A, False, True, True])


def agrees(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """The API's result for `rule` on `events` is the model's."""
    result = api(rule, events)
    checked, expected = reference(rule, events)
    same_violations(result, expected)   # point 5's order, and the evidence
    assert result["checked"] == checked
    assert result.get("vacuous", False) is (checked == 0)     # point 4
    for v in result["violations"]:
        assert events[v["event_index"]]["seq"] == v["event_seq"]
        assert "pointer" not in v and "related_seqs" not in v
        assert v.get("prevented") is (True if prevented(events, v["event_index"]) else None)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules, events=traces())
def test_the_public_api_agrees_with_a_reference_model(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    agrees(rule, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules, events=traces())
def test_calls_naming_a_shared_approval_id_agree_with_the_model(rule: dict[str, Any],
                                                                events: list[dict[str, Any]]) -> None:
    """A call naming an approval_id that many grants share (more than `_FEW`) looks in its own
    buckets when they hold fewer grants than the id: with every id taken as shared, short traces
    take both ways, and the model holds both to the same answers."""
    with mock.patch.object(approval_bound, "_FEW", -1):
        agrees(rule, events)


SECONDS = [f"2024-01-01T00:00:{second:02d}Z" for second in range(12)]
"""Times a second apart, for grants and calls whose times go back and forth."""


@st.composite
def ageing_traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to 40 grants and calls of one tool, each with a time drawn in any order (so that calls
    go back and forth in time and grants are stamped out of order), a few with an approval_id or
    args of one family, some revocations: under `max_age_ms`, a call stops looking once no grant
    left can be young enough for it, which must change no answer."""
    grant = picked(type=["approval.granted"], tool=["refund"], approval_id=[A, A, A, "g1", "g2"],
                   args=[A, {"order": "A1"}, {"order": "A2"}], time=[*SECONDS, *SECONDS, A])
    call = picked(type=["tool.call"], tool=["refund"], call_id=[A, "c1", "c2"], approval_id=[A, A, A, "g1"],
                  args=[A, {"order": "A1"}, {"order": "A2", "n": 1}], time=[*SECONDS, *SECONDS, A])
    kinds = [grant] * 6 + [call] * 6 + [revocations]
    events = draw(st.lists(st.sampled_from(kinds).flatmap(lambda kind: kind), max_size=40))
    return [{"seq": position + 1, **event} for position, event in enumerate(events)]


ageing_rules = picked(id=["r"], kind=["approval_bound"], tool=["refund"], one_use=[A, False],
                      bind=[A, "args", "args_subset"], max_age_ms=[1, 999, 1000, 2000, 5000])


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=ageing_rules, events=ageing_traces())
def test_calls_going_back_and_forth_in_time_agree_with_the_model(rule: dict[str, Any],
                                                                 events: list[dict[str, Any]]) -> None:
    agrees(rule, events)


# -- the model itself, on hand-made cases from the spec ---------------------------------------------

EXAMPLE_RULE = {"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}
EXAMPLE_TRACE = [
    {"seq": 1, "type": "approval.granted", "approval_id": "g1", "tool": "refund",
     "args": {"order": "A1", "amount": 10}},
    {"seq": 2, "type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1", "amount": 12}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2",
     "args": {"order": "A1", "amount": 10, "memo": "x"}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A1", "amount": 10}},
]


def missing(seq: int, call_id: str, *rejected: dict[str, Any]) -> tuple[Any, ...]:
    return (seq, CODE, "fail", {"tool": "refund", "call_id": call_id, "rejected": list(rejected)})


def test_the_model_reproduces_the_spec_example() -> None:
    """§3.5: FAIL at seq 2 (args_mismatch, /args/amount) and seq 4 (consumed by seq 3); seq 1 and 3
    alone pass; a revocation of g1 between them fails seq 3 (`revoked`)."""
    assert reference(EXAMPLE_RULE, EXAMPLE_TRACE) == (3, [
        missing(2, "c1", {"grant_seq": 1, "why": "args_mismatch", "pointer": "/args/amount"}),
        missing(4, "c3", {"grant_seq": 1, "why": "consumed", "by_seq": 3})])
    passing = [EXAMPLE_TRACE[0], EXAMPLE_TRACE[2]]
    assert reference(EXAMPLE_RULE, passing) == (1, [])
    revoked = [EXAMPLE_TRACE[0], {"seq": 2, "type": "approval.revoked", "approval_id": "g1"}, EXAMPLE_TRACE[2]]
    assert reference(EXAMPLE_RULE, revoked) == (1, [missing(3, "c2", {"grant_seq": 1, "why": "revoked"})])
    for trace in (EXAMPLE_TRACE, passing, revoked):
        agrees(EXAMPLE_RULE, trace)


def test_the_model_revokes_only_grants_before_the_revocation_and_calls_after_it() -> None:
    """Point 21: a revocation affects grants before it and calls after it; a later `approved: false`
    with the same approval_id revokes too."""
    rule = {"id": "r", "kind": "approval_bound", "tool": "refund", "one_use": False}
    trace = [{"seq": 1, "type": "approval.granted", "approval_id": "g1", "tool": "refund"},
             {"seq": 2, "type": "tool.call", "tool": "refund"},
             {"seq": 3, "type": "approval.granted", "approval_id": "g1", "approved": False},
             {"seq": 4, "type": "tool.call", "tool": "refund"},
             {"seq": 5, "type": "approval.granted", "approval_id": "g2", "tool": "refund"},
             {"seq": 6, "type": "tool.call", "tool": "refund"}]
    assert reference(rule, trace) == (3, [(4, CODE, "fail", {"tool": "refund",
                                                             "rejected": [{"grant_seq": 1, "why": "revoked"}]})])
    agrees(rule, trace)


def test_consumption_is_per_rule() -> None:
    """Point 21: two rules over one grant each consume their own copy of it."""
    rule = {"kind": "approval_bound", "tool": "refund"}
    contract = {"version": 2, "name": "model", "rules": [{**rule, "id": "a"}, {**rule, "id": "b"}]}
    trace = [{"seq": 1, "type": "approval.granted", "tool": "refund"},
             {"seq": 2, "type": "tool.call", "tool": "refund"}]
    assert reference({**rule, "id": "a"}, trace) == (1, [])
    report = msgspec.to_builtins(check_trace(contract, trace))
    assert [(r["rule_id"], r["passed"], r["checked"]) for r in report["results"]] == [("a", True, 1), ("b", True, 1)]
