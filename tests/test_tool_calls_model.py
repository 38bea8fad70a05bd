"""`tool_calls` against a reference model written from the spec text only (spec v2 §0, §2 paths,
§3.4 and §10 points 2-6, 13, 16 and 20). A property test generates one-rule contracts (every option
§3.4 gives the kind: `tool`, `min`, `max`, `count`, `matches_output_length`) and short traces (calls
with and without a tool or call_id, reused call_ids, results with ok true/false/absent, orphan results,
run.completed / run.failed with and without `output`), and compares the public API's verdict,
violations (seq, code, status), their order and `checked` with the model.

What the model takes from the spec:
- a call is counted when its own `tool` matches the rule's glob (a glob never matches a missing
  value, v1 §2.7); with `count: successful` only when its paired result exists and `ok` is not false
  (point 20);
- pairing is one-to-one in trace order: a result belongs to the nearest earlier call with its call_id
  that has no result yet (point 3);
- `max`: one violation at the (max+1)-th counted call; `min`: no seq (points 2, 20);
- the terminal is the last run.completed or run.failed, its `output` the final output (run.failed
  may carry it, point 16); `output_mismatch` / `output_unresolved` at the terminal, without a seq
  when there is none (point 2); `output_unresolved` is `status: unresolved` (point 6);
- paths are dot paths or JSON Pointers (§2, point 13);
- `checked` = counted calls, never vacuous (point 4); violations in ascending event order, then
  those without a seq (point 5).

Where the spec is silent the model follows the implementation (listed in `AMBIGUOUS` below).
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tool_calls_spec import EXAMPLE_RULE, EXAMPLE_TRACE

from tests.models import ABSENT, glob, located_at_their_events, picked, read_path, same_violations
from tests.models import one_result as api

from support import examples

# Points where the spec is silent and the model follows the implementation:
AMBIGUOUS = (
    # `tool` may be left out; every call that has a tool is then counted, and evidence.tool is "*"
    "tool defaults to '*'",
    # evidence.tool is the rule's glob, evidence.count the final count (also for `max`, whose call is
    # the (max+1)-th), min/max/path appear iff the rule has them, output_length only with output_mismatch
    "evidence fields",
)

TERMINALS = ("run.completed", "run.failed")
CODE_ORDER = ("max", "min", "output_mismatch", "output_unresolved")


# -- the reference model --------------------------------------------------------------------------


def pair(events: list[dict[str, Any]]) -> dict[int, int]:
    """Point 3: call position -> position of its result."""
    waiting: dict[str, list[int]] = {}
    result_of: dict[int, int] = {}
    for i, event in enumerate(events):
        if event["type"] == "tool.call" and "call_id" in event:
            waiting.setdefault(event["call_id"], []).append(i)
        elif event["type"] == "tool.result" and waiting.get(event.get("call_id")):
            result_of[waiting[event["call_id"]].pop()] = i     # the nearest earlier unanswered call
    return result_of


def reference(rule: dict[str, Any], events: list[dict[str, Any]]) -> tuple[int, list[tuple[Any, ...]]]:
    """(checked, [(seq or None, code, status, evidence)] in report order) for one tool_calls rule."""
    tool = rule.get("tool", "*")
    successful = rule.get("count", "calls") == "successful"
    result_of = pair(events)
    counted = []
    for i, event in enumerate(events):
        if event["type"] != "tool.call" or not glob(tool, event.get("tool")):
            continue
        if successful and (i not in result_of or events[result_of[i]].get("ok") is False):
            continue
        counted.append(i)
    count = len(counted)
    located: list[tuple[Any, ...]] = []      # (position, code, status, output_length or None)
    unlocated: list[tuple[Any, ...]] = []
    if "max" in rule and count > rule["max"]:
        located.append((counted[rule["max"]], "max", "fail", None))
    if "min" in rule and count < rule["min"]:
        unlocated.append(("min", "fail", None))
    if "matches_output_length" in rule:
        terminal = max((i for i, e in enumerate(events) if e["type"] in TERMINALS), default=None)
        output = ABSENT if terminal is None else events[terminal].get("output", ABSENT)
        value = ABSENT if output is ABSENT else read_path(output, rule["matches_output_length"])
        if not isinstance(value, list):
            finding = ("output_unresolved", "unresolved", None)
        elif len(value) != count:
            finding = ("output_mismatch", "fail", len(value))
        else:
            finding = None
        if finding is not None:
            if terminal is None:
                unlocated.append(finding)
            else:
                located.append((terminal, *finding))
    located.sort(key=lambda v: (v[0], CODE_ORDER.index(v[1])))
    base = {"tool": tool, "count": count, "count_mode": rule.get("count", "calls"),
            **{key: rule[key] for key in ("min", "max") if key in rule}}
    if "matches_output_length" in rule:
        base["path"] = rule["matches_output_length"]

    def evidence(length: int | None) -> dict[str, Any]:
        return base if length is None else {**base, "output_length": length}

    ordered = [(events[i]["seq"], f"tool_calls.{code}", status, evidence(length))
               for i, code, status, length in located]
    ordered += [(None, f"tool_calls.{code}", status, evidence(length)) for code, status, length in unlocated]
    return count, ordered


# -- strategies -----------------------------------------------------------------------------------

A = ABSENT
REFUNDS = [{"refunds": ["A1"] * n} for n in range(4)]
OUTPUTS = [A, *REFUNDS, *REFUNDS, {"refunds": "A1"}, {"refunds": None}, {"refunds": {"0": ["x"], "n": 1}}, None,
           {}, [], {"r": {"items": [1, 2]}, "list": [["a"], ["a", "b", "c"]], "refunds": []}, [["a", "b"], []],
           {"a/b": [1], "": [1, 2], "m~n": [], "list": {"1": [1, 2, 3]}, "refunds": ["A1", "A2"]}]
PATHS = ["refunds"] * 4 + ["/refunds"] * 2 + [
    "r.items", "/r/items", "list.1", "/list/0", "/list/01", "refunds.0", "/refunds/0", "0", "/1", "/a~1b", "/",
    "/m~0n", "a/b", "refunds.n"]

calls = picked(type=["tool.call"], tool=["refund", "refund", "refund", "refund", "refund_all", "pay", A],
               call_id=["c1", "c1", "c2", "c2", "c3", A], args=[A, {"order": "A1"}])
results = picked(type=["tool.result"], call_id=["c1", "c1", "c2", "c2", "c3", A], ok=[True, True, False, False, A],
                 tool=[A, A, A, "refund", "pay"])
terminals = picked(type=list(TERMINALS), output=OUTPUTS, status=[A, A, "awaiting_approval"])
others = picked(type=["agent.message", "tool.denied", "run.start"], call_id=[A, "c1"])
KINDS = [calls] * 6 + [results] * 5 + [terminals, others]


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """≤ 14 events, seq = position + 1; mostly ending with a terminal."""
    size = draw(st.one_of(st.integers(0, 13), st.integers(6, 13)))
    events = [draw(st.sampled_from(KINDS).flatmap(lambda kind: kind)) for _ in range(size)]
    if draw(st.integers(0, 3)):
        events.append(draw(terminals))
    return [{"seq": position + 1, **event} for position, event in enumerate(events)]


BOUNDS = [A, A, A, 0, 1, 1, 2, 2, 3, 4, 1_000_000]


def valid(rule: dict[str, Any]) -> bool:
    """§3.4: at least one of min, max, matches_output_length, and min ≤ max."""
    if not {"min", "max", "matches_output_length"} & rule.keys():
        return False
    return "min" not in rule or "max" not in rule or rule["min"] <= rule["max"]


rules = picked(id=["r"], kind=["tool_calls"], tool=["refund", "refund", "refund", "ref*", "*", "re?und", "pay", A],
               min=BOUNDS, max=BOUNDS, count=[A, "calls", "successful", "successful"],
               matches_output_length=[A, A, *PATHS]).filter(valid)


def agrees(rule: dict[str, Any], events: list[dict[str, Any]]) -> None:
    result = api(rule, events)
    checked, expected = reference(rule, events)
    same_violations(result, expected)   # point 5's order, and the evidence
    assert result["checked"] == checked
    assert "vacuous" not in result     # point 4: tool_calls is never vacuous
    located_at_their_events(result, events)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules, events=traces())
def test_the_public_api_agrees_with_a_reference_model(rule, events):
    agrees(rule, events)


# -- the model itself, on hand-made cases from the spec ---------------------------------------------


def test_the_model_reproduces_the_spec_example():
    evidence = {"tool": "refund", "count": 1, "count_mode": "successful", "path": "refunds", "output_length": 2}
    assert reference(EXAMPLE_RULE, EXAMPLE_TRACE) == (1, [(5, "tool_calls.output_mismatch", "fail", evidence)])
    passing = [*EXAMPLE_TRACE[:3], {**EXAMPLE_TRACE[3], "ok": True}, EXAMPLE_TRACE[4]]
    assert reference(EXAMPLE_RULE, passing) == (2, [])
    agrees(EXAMPLE_RULE, EXAMPLE_TRACE)
    agrees(EXAMPLE_RULE, passing)


def test_the_model_pairs_a_reused_call_id_with_the_nearest_unanswered_call():
    rule = {"id": "r", "kind": "tool_calls", "tool": "refund", "count": "successful", "max": 0}
    trace = [{"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1"},
             {"seq": 2, "type": "tool.call", "tool": "pay", "call_id": "c1"},
             {"seq": 3, "type": "tool.result", "call_id": "c1", "ok": True},    # answers seq 2 (pay)
             {"seq": 4, "type": "tool.result", "call_id": "c1", "ok": False}]   # answers seq 1
    assert reference(rule, trace) == (0, [])
    agrees(rule, trace)
