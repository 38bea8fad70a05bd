"""The version-1 kinds `deny_event`, `require_event`, `require_order` and `stop_is_final` under a
version-2 contract, against a reference model written from the spec text only (spec v2 §1, §2 "v1
kinds under v2" and the match tree, §10 points 1, 2, 5, 9, 10, 15 and 16; v1 §2.4, §2.7, §4.4 and
§4.9-4.11). A property test generates one-rule contracts (every option the spec gives these kinds:
matchers with `type`, `tool`, `ok`, `outcome_id`, `verdict`, `claims_completion` and the v2 keys
`args`, `reason`, `status`; require_event `min`/`max`; stop_is_final `stop_type`, `allowed_after` and
`reasons`) and short traces (tool calls with and without args, results with and without their own
`tool`/`args`, control.stop with and without `reason`, run.completed / run.failed with and without
`status`, and other events that carry `reason` or `status` too), and compares the public API's
verdict, violations (seq, code, status, evidence), their order and `checked` with the model.

What the model takes from the spec:
- a matcher ANDs its keys; glob keys (`type`, `tool`, `outcome_id`, `reason`, `status`) never match
  a missing field; `ok`, `verdict`, `claims_completion` compare strictly (v1 §2.4, §2.7, v2 §2);
- matcher keys read the event's own field only: no derived run status, and in v1 kinds a
  `tool.result`'s `tool`/`args` are its own, never its call's (point 15); any event may carry the
  new fields (point 16);
- `args` is a match tree over the event's args, and an event with no args never matches (§2).
  Literal objects match as subsets, arrays by length and position, scalars by JSON-type-strict
  equality (true ≠ 1, 1 = 1.0); an operator object ANDs its `$` keys; a key absent from the actual
  object fails every node but `$exists: false` (point 9); `$regex` is an unanchored search that a
  non-string never matches (point 10); `$in` is equality with any listed value; `$gt`/`$gte`/`$lt`/
  `$lte` compare finite numbers only, never booleans or numeric strings (§2);
- deny_event: a violation at every matching event, `checked` = matches (v1 §4.11);
  require_event: `checked` = matches, one violation when the count is below `min` (default 1) or
  above `max` (default unbounded), at the first match or without a seq when there is none
  (v1 §4.10); require_order: for each event matching `after`, `checked` += 1 and a violation there
  when no event strictly before it matches `before` (v1 §4.9);
- stop_is_final: a stop is an event whose type matches `stop_type` (default `control.stop`) and,
  with `reasons`, whose own `reason` matches one of those globs; only such stops count (§2, point
  15). Every later event whose type matches none of `allowed_after` (default run.completed,
  run.failed, telemetry.*) is a violation at that event, once per earlier counting stop; a stop
  that does not count is an ordinary event (v1 §4.4);
- codes `deny_event.matched`, `require_event.min`/`.max`, `require_order.missing`,
  `stop_is_final.after_stop`, all `status: "fail"`, with v1's evidence unchanged (point 1);
  violations in ascending event order, then those without a seq (points 2, 5), but for
  stop_is_final's v1 order (see AMBIGUOUS).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.models import ABSENT, glob, located_at_their_events, picked, same, same_violations
from tests.models import one_result as api

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # point 5 orders a rule's violations by event, but it resolves what "nothing fixes" for the new
    # kinds; v1 fixes stop_is_final's order (stop by stop, v1 §4.4), §0 keeps v1 kinds' results
    # identical under version 2, and issue 16 asks for the same violations as version 1
    "stop_is_final: v1's stop-by-stop order",
    # `reasons` has no stated length; the loader rejects `[]` ("expected a non-empty array"), so the
    # model never generates it
    "stop_is_final reasons: [] is a load error",
    # point 1 keeps v1's evidence; the matchers in it carry the v2 keys as written (dicts compare
    # without key order), and stop_is_final's evidence does not mention `reasons`
    "evidence of v2 options",
    # the spec defines no `pointer` or `related_seqs` for v1 kinds; the model does not compare them
    "pointer and related_seqs of v1 kinds",
)

DEFAULT_ALLOWED_AFTER = ["run.completed", "run.failed", "telemetry.*"]
GLOB_KEYS = ("type", "tool", "outcome_id", "reason", "status")
EXACT_KEYS = ("ok", "verdict", "claims_completion")
Finding = tuple[Any, ...]


# -- the reference model: the match tree and the matcher ------------------------------------------


def is_operator(node: Any) -> bool:
    """§2: an operator object has only `$` keys (mixed keys are a load error, never generated)."""
    return isinstance(node, dict) and bool(node) and all(key.startswith("$") for key in node)


def is_number(value: Any) -> bool:
    """§2: comparisons take finite numbers only; booleans and numeric strings never compare."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def operator_holds(operator: str, operand: Any, actual: Any) -> bool:
    """One `$` key of an operator object; an absent actual fails all but `$exists: false` (point 9)."""
    if operator == "$exists":
        return (actual is not ABSENT) is operand
    if actual is ABSENT:
        return False
    if operator == "$regex":
        return isinstance(actual, str) and re.search(operand, actual) is not None
    if operator == "$in":
        return any(same(value, actual) for value in operand)
    if not is_number(actual):
        return False
    compare = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
    return bool(compare[operator](float(actual), float(operand)))


def fits(node: Any, actual: Any) -> bool:
    """§2 match tree: objects as subsets, arrays by length and position, scalars by strict equality."""
    if is_operator(node):
        return all(operator_holds(op, operand, actual) for op, operand in node.items())
    if isinstance(node, dict):
        return isinstance(actual, dict) and all(fits(value, actual.get(key, ABSENT)) for key, value in node.items())
    if isinstance(node, list):
        return isinstance(actual, list) and len(actual) == len(node) and all(
            fits(item, element) for item, element in zip(node, actual, strict=True))
    return actual is not ABSENT and same(node, actual)


def key_matches(key: str, wanted: Any, event: dict[str, Any]) -> bool:
    """One matcher key against the event's own field (point 15: nothing derived, nothing paired)."""
    if key in GLOB_KEYS:
        return glob(wanted, event.get(key))
    if key in EXACT_KEYS:
        return key in event and same(event[key], wanted)
    assert key == "args", key
    return isinstance(event.get("args"), dict) and fits(wanted, event["args"])   # no args: never


def matches(matcher: dict[str, Any], event: dict[str, Any]) -> bool:
    """v1 §2.4 and v2 §2: all keys of the matcher hold."""
    return all(key_matches(key, wanted, event) for key, wanted in matcher.items())


# -- the reference model: the four kinds ----------------------------------------------------------


def deny_event(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """v1 §4.11: every matching event is a violation."""
    found = [e for e in events if matches(rule["match"], e)]
    return len(found), [(e["seq"], "deny_event.matched", "fail", {"match": rule["match"]}) for e in found]


def require_event(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """v1 §4.10: one violation when the number of matches leaves [min, max]."""
    found = [e for e in events if matches(rule["match"], e)]
    low, high = rule.get("min", 1), rule.get("max")
    code = "min" if len(found) < low else "max" if high is not None and len(found) > high else None
    if code is None:
        return len(found), []
    evidence = {"match": rule["match"], "found": len(found), "min": low, "max": high}
    seq = found[0]["seq"] if found else None
    return len(found), [(seq, f"require_event.{code}", "fail", evidence)]


def require_order(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """v1 §4.9: each `after` needs an event strictly before it matching `before`."""
    evidence = {"before": rule["before"], "after": rule["after"]}
    checked, found = 0, []
    for i, event in enumerate(events):
        if matches(rule["after"], event):
            checked += 1
            if not any(matches(rule["before"], earlier) for earlier in events[:i]):
                found.append((event["seq"], "require_order.missing", "fail", evidence))
    return checked, found


def counts_as_stop(rule: dict[str, Any], event: dict[str, Any]) -> bool:
    """v1 §4.4 and point 15: the type matches `stop_type`; with `reasons`, the own reason matches one."""
    if not glob(rule.get("stop_type", "control.stop"), event["type"]):
        return False
    return "reasons" not in rule or any(glob(pattern, event.get("reason")) for pattern in rule["reasons"])


def stop_is_final(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """v1 §4.4: each later disallowed event is flagged once per earlier counting stop, stop by stop
    (v1's order, which §0 and issue 16's "same violations" keep for v1 kinds under version 2)."""
    allowed = rule.get("allowed_after", DEFAULT_ALLOWED_AFTER)
    stops = [i for i, event in enumerate(events) if counts_as_stop(rule, event)]
    found = []
    for i in stops:
        found += [(later["seq"], "stop_is_final.after_stop", "fail",
                   {"stop_seq": events[i]["seq"], "allowed_after": allowed})
                  for later in events[i + 1:] if not any(glob(pattern, later["type"]) for pattern in allowed)]
    return len(stops), found


KINDS = {"deny_event": deny_event, "require_event": require_event, "require_order": require_order,
         "stop_is_final": stop_is_final}


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[Finding]]:
    """(checked, [(seq or None, code, status, evidence)] in report order) for one rule."""
    return KINDS[rule["kind"]](rule, events)


# -- strategies -----------------------------------------------------------------------------------

A = ABSENT
TOOLS = ["get", "get", "refund", "refund", "pay"]
ARGS = [A, A, {}, {"id": "A1"}, {"id": "A1"}, {"id": "A2", "amount": 10}, {"id": "A1", "amount": 10.0},
        {"id": "B7", "amount": "10"}, {"amount": True}, {"amount": None}, {"amount": 4.5},
        {"id": "A1", "items": [1, 2]}, {"items": [1]}, {"items": [{"sku": "x", "n": 1}]},
        {"nested": {"k": "v", "n": 1}}, {"nested": {}}, {"id": 1}]
REASONS = [A, A, "user", "user_cancel", "budget", "guardrail"]
STATUSES = [A, A, "completed", "failed", "awaiting_approval", "cancelled"]

calls = picked(type=["tool.call"], tool=[*TOOLS, A], call_id=["c1", "c2", A], args=ARGS,
               reason=[A, A, A, A, A, "user"])
results = picked(type=["tool.result"], call_id=["c1", "c2", A], ok=[True, False, A],
                 tool=[A, A, A, "get", "refund"], args=[A, A, A, {"id": "A1"}, {}], result=[A, {"id": "A1"}])
stops = picked(type=["control.stop", "control.stop", "control.pause"], reason=REASONS, status=[A, A, A, "failed"])
terminals = picked(type=["run.completed", "run.failed"], status=STATUSES, reason=[A, A, "budget", "user"])
others = picked(type=["agent.message", "telemetry.flush", "tool.denied", "approval.revoked", "outcome.observed"],
                reason=[A, A, "guardrail", "user"], status=[A, A, A, "completed"], tool=[A, A, "get"],
                outcome_id=[A, A, "check-1"], verdict=[A, "satisfied", "violated"],
                claims_completion=[A, A, True, False])
EVENT_KINDS = [calls] * 5 + [results] * 3 + [stops] * 3 + [terminals] * 2 + [others] * 2


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """0-12 events over a small alphabet, seq = position + 1."""
    size = draw(st.one_of(st.integers(0, 12), st.integers(8, 12), st.integers(8, 12)))
    events = [draw(st.sampled_from(EVENT_KINDS).flatmap(lambda kind: kind)) for _ in range(size)]
    return [{"seq": position + 1, **event} for position, event in enumerate(events)]


ARG_TREES = [{}, {"id": "A1"}, {"id": "A2"}, {"amount": 10}, {"amount": True}, {"amount": None}, {"amount": "10"},
             {"amount": {"$gt": 5}}, {"amount": {"$lte": 10}}, {"amount": {"$gte": 4.5, "$lt": 10}},
             {"id": {"$regex": "^A"}}, {"id": {"$regex": "7"}}, {"id": {"$in": ["A1", "B7"]}},
             {"amount": {"$in": [10, "10", None]}}, {"amount": {"$exists": True}}, {"amount": {"$exists": False}},
             {"items": [1, 2]}, {"items": [1]}, {"items": [{"sku": "x"}]}, {"items": [{"$gt": 0}, 2]},
             {"nested": {"k": "v"}}, {"nested": {}}, {"id": "A1", "amount": {"$gte": 10}}, {"id": 1.0}]
MATCHER_VALUES: dict[str, list[Any]] = {
    "type": ["tool.call", "tool.call", "tool.result", "tool.*", "control.stop", "control.*", "run.*", "run.failed",
             "*"],
    "tool": ["get", "refund", "re*", "?et", "*"],
    "ok": [True, False],
    "outcome_id": ["check-*", "*"],
    "verdict": ["satisfied", "violated"],
    "claims_completion": [True, False],
    "args": [{}, {"id": "A1"}, *ARG_TREES],
    "reason": ["user*", "budget", "*", "?uard*"],
    "status": ["completed", "*fail*", "await*", "*"],
}
MATCHER_KEYS = ["type", "type", "tool", "tool", "args", "args", "args", "reason", "reason", "status", "status", "ok",
                "outcome_id", "verdict", "claims_completion"]


@st.composite
def matchers(draw: st.DrawFn) -> dict[str, Any]:
    """One to three keys (a few, so that matchers often match), each with a value from its pool."""
    keys = draw(st.lists(st.sampled_from(MATCHER_KEYS), min_size=1, max_size=3, unique=True))
    return {key: draw(st.sampled_from(MATCHER_VALUES[key])) for key in keys}


STOP_GLOBS = ["user*", "budget", "*", "?uard*", "user", "cancel*"]
deny_rules = picked(id=["r"], kind=["deny_event"], severity=[A, A, "warning"]).flatmap(
    lambda rule: matchers().map(lambda match: {**rule, "match": match}))
require_rules = picked(id=["r"], kind=["require_event"], min=[A, 0, 0, 1, 2], max=[A, 0, 1, 1, 2, 3]).filter(
    lambda rule: rule.get("min", 1) <= rule.get("max", math.inf)).flatmap(
    lambda rule: matchers().map(lambda match: {**rule, "match": match}))
order_rules = st.builds(lambda before, after: {"id": "r", "kind": "require_order", "before": before, "after": after},
                        matchers(), matchers())
stop_rules = picked(
    id=["r"], kind=["stop_is_final"], stop_type=[A, A, "control.stop", "control.*", "run.failed"],
    allowed_after=[A, A, [], ["run.*"], ["telemetry.*", "control.stop"], ["*"], ["tool.result", "agent.message"]],
    reasons=[A, A, ["user*"], ["budget", "guardrail"], ["*"], ["?uard*", "user"], STOP_GLOBS],
)
rules = st.one_of(deny_rules, require_rules, order_rules, stop_rules)


def agrees(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """The API's result for `rule` alone equals the model's: checked, and the violations in order."""
    result = api(rule, events)
    checked, expected = reference(rule, events)
    same_violations(result, expected)   # seq, code, status, evidence, and point 5's order
    assert result["checked"] == checked
    located_at_their_events(result, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules, events=traces())
def test_the_public_api_agrees_with_a_reference_model(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    agrees(rule, events)


# -- the model itself, on the spec's own cases ----------------------------------------------------

GET_CALL = {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}}
GET_RESULT = {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True}


def test_a_result_is_not_its_call_in_v1_kinds() -> None:
    """§2 says `{type: tool.result, tool: get, ok: true}` means "a successful get" in new kinds; point
    15: in v1 kinds a `tool.result` without its own `tool` never matches `tool`."""
    rule = {"id": "r", "kind": "deny_event", "match": {"type": "tool.result", "tool": "get", "ok": True}}
    passing = [GET_CALL, GET_RESULT]
    failing = [GET_CALL, {**GET_RESULT, "tool": "get"}]
    assert reference(rule, passing) == (0, [])
    assert reference(rule, failing) == (1, [(2, "deny_event.matched", "fail", {"match": rule["match"]})])
    agrees(rule, passing)
    agrees(rule, failing)


def test_only_stops_with_a_listed_reason_count() -> None:
    """§1 (`reason`: user cancel vs budget stop vs guardrail), §2 and point 15: with `reasons`, only
    matching stops count, and a non-matching stop is not flagged by earlier non-counting stops."""
    rule = {"id": "r", "kind": "stop_is_final", "reasons": ["user*"]}
    call = {"seq": 2, "type": "tool.call", "tool": "refund", "call_id": "c2"}
    failing = [{"seq": 1, "type": "control.stop", "reason": "user_cancel"}, call]
    passing = [{"seq": 1, "type": "control.stop", "reason": "budget"}, call,
               {"seq": 3, "type": "control.stop", "reason": "guardrail"}, {"seq": 4, "type": "control.stop"}]
    evidence = {"stop_seq": 1, "allowed_after": DEFAULT_ALLOWED_AFTER}
    assert reference(rule, failing) == (1, [(2, "stop_is_final.after_stop", "fail", evidence)])
    assert reference(rule, passing) == (0, [])
    agrees(rule, failing)
    agrees(rule, passing)


def test_status_and_args_read_the_events_own_fields() -> None:
    """Point 15: no derived status (a run.completed without `status` has none); §2: an event with no
    args never matches, even the empty tree `{}`; §1: `awaiting_approval` is just a status."""
    rule = {"id": "r", "kind": "require_event", "match": {"type": "run.*", "status": "completed"}}
    assert reference(rule, [{"seq": 1, "type": "run.completed"}])[1][0][1] == "require_event.min"
    assert reference(rule, [{"seq": 1, "type": "run.completed", "status": "completed"}]) == (1, [])
    order = {"id": "r", "kind": "require_order", "before": {"type": "tool.call", "args": {}},
             "after": {"status": "await*"}}
    failing = [{"seq": 1, "type": "tool.call", "tool": "get"},
               {"seq": 2, "type": "run.completed", "status": "awaiting_approval"}]
    passing = [{**failing[0], "args": {}}, failing[1]]
    assert reference(order, failing) == (1, [(2, "require_order.missing", "fail",
                                              {"before": order["before"], "after": order["after"]})])
    assert reference(order, passing) == (1, [])
    for case in (failing, passing):
        agrees(order, case)
    agrees(rule, [{"seq": 1, "type": "run.completed"}])


def test_without_the_new_keys_behaviour_is_v1s() -> None:
    """v1 §4.4: an event after the k-th stop is reported k times, a second stop is itself
    disallowed, and run.completed is allowed by default."""
    rule = {"id": "r", "kind": "stop_is_final"}
    trace = [{"seq": 1, "type": "run.start"}, {"seq": 2, "type": "control.stop"},
             {"seq": 3, "type": "tool.call", "tool": "mail.dispatch", "call_id": "m1"},
             {"seq": 4, "type": "control.stop"}, {"seq": 5, "type": "agent.message"},
             {"seq": 6, "type": "run.completed"}]

    def flagged(seq: int, stop: int) -> Finding:
        return seq, "stop_is_final.after_stop", "fail", {"stop_seq": stop, "allowed_after": DEFAULT_ALLOWED_AFTER}

    assert reference(rule, trace) == (2, [flagged(3, 2), flagged(4, 2), flagged(5, 2), flagged(5, 4)])
    agrees(rule, trace)


def test_stop_is_final_keeps_v1s_stop_by_stop_order_under_version_2() -> None:
    """Two stops and two later calls: the violations come stop by stop, as in version 1 (see
    AMBIGUOUS: point 5's ascending order is for the new kinds)."""
    rule = {"id": "r", "kind": "stop_is_final"}
    trace = [{"seq": 1, "type": "control.stop"}, {"seq": 2, "type": "control.stop"},
             {"seq": 3, "type": "tool.call", "tool": "get"}, {"seq": 4, "type": "tool.call", "tool": "get"}]
    expected = [(2, 1), (3, 1), (4, 1), (3, 2), (4, 2)]
    assert [(seq, evidence["stop_seq"]) for seq, _, _, evidence in reference(rule, trace)[1]] == expected
    assert [(v["event_seq"], v["evidence"]["stop_seq"]) for v in api(rule, trace)["violations"]] == expected
