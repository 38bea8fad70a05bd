"""`--partial` with `--max-violations`: the counts stay those of every violation (v1 D7: "error_count,
warning_count, passed and the exit code still count every one"), and the violations of liveness
parts stay out of them (spec v2 §10 point 82), also when some of either sort are not kept.

The rules that matter are those whose one rule finds violations of both sorts: tool_calls (`max`
is safety; `min` and the output's length are liveness) and failure_handled (a failure whose window
the trace cut short is liveness, one whose window passed is judged). Random cut-short traces are
checked keeping every violation and keeping one; the counts must agree."""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.api import check_trace

from support import examples

CONTRACT: dict[str, Any] = {"version": 2, "name": "mixed", "rules": [
    {"id": "calls", "kind": "tool_calls", "tool": "s", "max": 1, "matches_output_length": "items"},
    {"id": "enough", "kind": "tool_calls", "tool": "s", "min": 4, "count": "successful"},
    {"id": "handled", "kind": "failure_handled", "tool": "*", "within_events": 2},
    {"id": "handled-w", "kind": "failure_handled", "tool": "s", "within_events": 3, "severity": "warning"},
    {"id": "closed", "kind": "tool_result_required"},
]}

_STEP = st.sampled_from(["call", "fail", "ok", "note"])


def _trace(steps: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for number, step in enumerate(steps, start=1):
        if step == "call":
            events.append({"type": "tool.call", "tool": "s", "call_id": f"c{number}"})
        elif step in ("fail", "ok"):   # a call and its result at once
            events.append({"type": "tool.call", "tool": "s", "call_id": f"c{number}"})
            events.append({"type": "tool.result", "call_id": f"c{number}", "ok": step == "ok"})
        else:
            events.append({"type": "agent.message"})
    return [{"seq": seq, **event} for seq, event in enumerate(events, start=1)]


def _counts(report: Any) -> tuple[Any, ...]:
    rules = tuple((rule.rule_id, rule.passed, rule.inconclusive) for rule in report.results)
    return report.passed, report.error_count, report.warning_count, report.inconclusive_count, rules


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_STEP, max_size=12), st.integers(min_value=1, max_value=3))
def test_cutting_violations_does_not_change_the_partial_counts(steps: list[str], kept: int) -> None:
    events = _trace(steps)
    every = check_trace(CONTRACT, events, partial=True, max_violations=0)
    cut = check_trace(CONTRACT, events, partial=True, max_violations=kept)
    assert _counts(cut) == _counts(every)


def test_a_cut_liveness_violation_beside_a_kept_safety_one() -> None:
    """Two calls of `s` against max 1 (safety, at the second call) and an output that is not there
    (liveness, `output_unresolved` at the end): keeping one violation keeps the `max` one, and the
    other still counts as inconclusive, not as an error."""
    events = _trace(["call", "call"])
    report = check_trace({"version": 2, "name": "one", "rules": [CONTRACT["rules"][0]]}, events, partial=True,
                         max_violations=1)
    (rule,) = report.results
    assert [violation.code for violation in rule.violations] == ["tool_calls.max"]
    assert (report.error_count, report.inconclusive_count, rule.inconclusive, rule.violations_total) == (1, 1, 1, 2)


# -- which violations are kept: the first ones in trace order (spec v2 §10 point 5, v1 D7) ----------

FIRST: dict[str, Any] = {"version": 2, "name": "first", "rules": [
    {"id": "calls", "kind": "tool_calls", "tool": "s", "max": 1, "matches_output_length": "items"},
    {"id": "handled", "kind": "failure_handled", "tool": "*", "within_events": 2},
    {"id": "retried", "kind": "failure_handled", "tool": "*", "within_events": 4, "by": "retry",
     "retry_succeeds": True},
    {"id": "slow", "kind": "latency_budget", "tool": "s", "max_ms": 5},
]}

_FIRST_STEP = st.sampled_from(["call", "fail", "ok", "slow", "note", "done", "answer"])


def _first_trace(steps: list[str]) -> list[dict[str, Any]]:
    """Calls answered at once or later (`answer` answers the oldest waiting one, failed), slow
    results, messages and terminals with an empty `items`: violations found out of trace order."""
    events: list[dict[str, Any]] = []
    waiting: list[str] = []
    for number, step in enumerate(steps, start=1):
        call_id = f"c{number}"
        if step == "note":
            events.append({"type": "agent.message"})
        elif step == "done":
            events.append({"type": "run.completed", "output": {"items": []}})
        elif step == "answer":
            if waiting:
                events.append({"type": "tool.result", "tool": "s", "call_id": waiting.pop(0), "ok": False,
                               "duration_ms": 1})
        else:
            events.append({"type": "tool.call", "tool": "s", "call_id": call_id})
            if step == "call":
                waiting.append(call_id)
            else:
                events.append({"type": "tool.result", "tool": "s", "call_id": call_id, "ok": step != "fail",
                               "duration_ms": 10 if step == "slow" else 1})
    return [{"seq": seq, **event} for seq, event in enumerate(events, start=1)]


def _found(rule: Any) -> list[tuple[Any, ...]]:
    return [(violation.code, violation.event_seq, violation.message) for violation in rule.violations]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_FIRST_STEP, max_size=14), st.integers(min_value=1, max_value=3), st.booleans())
def test_the_violations_kept_are_the_first_in_trace_order(steps: list[str], kept: int, partial: bool) -> None:
    events = _first_trace(steps)
    every = check_trace(FIRST, events, partial=partial, max_violations=0)
    cut = check_trace(FIRST, events, partial=partial, max_violations=kept)
    for whole, part in zip(every.results, cut.results, strict=True):
        assert _found(part) == _found(whole)[:kept], whole.rule_id
    assert _counts(cut) == _counts(every)


def test_an_output_violation_is_kept_before_a_later_call_over_max() -> None:
    events = [{"seq": 1, "type": "tool.call", "tool": "refund"},
              {"seq": 2, "type": "run.completed", "output": {"r": []}},
              {"seq": 3, "type": "tool.call", "tool": "refund"}]
    contract = {"version": 2, "name": "t", "rules": [
        {"id": "n", "kind": "tool_calls", "tool": "refund", "max": 1, "matches_output_length": "r"}]}
    (rule,) = check_trace(contract, events, max_violations=1).results
    assert [(violation.code, violation.event_seq) for violation in rule.violations] == [
        ("tool_calls.output_mismatch", 2)]
    assert (rule.truncated, rule.violations_total) == (True, 2)


def test_a_call_never_answered_is_kept_before_a_later_slow_one() -> None:
    events = [{"seq": 1, "type": "tool.call", "tool": "s", "call_id": "a"},
              {"seq": 2, "type": "tool.call", "tool": "s", "call_id": "b"},
              {"seq": 3, "type": "tool.result", "tool": "s", "call_id": "b", "ok": True, "duration_ms": 10}]
    contract = {"version": 2, "name": "t", "rules": [{"id": "slow", "kind": "latency_budget", "tool": "s",
                                                      "max_ms": 5}]}
    (rule,) = check_trace(contract, events, max_violations=1).results
    assert [(violation.code, violation.event_seq) for violation in rule.violations] == [
        ("latency_budget.duration_unresolved", 1)]


def test_a_failure_settled_late_is_kept_before_a_later_one_settled_sooner() -> None:
    """The first failure is retried, and only the retry's failed result (seq 8) settles it; the
    second one's window closes at seq 6."""
    events = [{"seq": 1, "type": "tool.call", "tool": "s", "call_id": "a"},
              {"seq": 2, "type": "tool.result", "tool": "s", "call_id": "a", "ok": False},
              {"seq": 3, "type": "tool.call", "tool": "s", "call_id": "r"},
              {"seq": 4, "type": "tool.call", "tool": "t", "call_id": "b"},
              {"seq": 5, "type": "tool.result", "tool": "t", "call_id": "b", "ok": False},
              {"seq": 6, "type": "agent.message"}, {"seq": 7, "type": "agent.message"},
              {"seq": 8, "type": "tool.result", "tool": "s", "call_id": "r", "ok": False}]
    contract = {"version": 2, "name": "t", "rules": [{"id": "h", "kind": "failure_handled", "tool": "*",
                                                      "within_events": 1, "by": "retry", "retry_succeeds": True}]}
    every = check_trace(contract, events, max_violations=0).results[0]
    assert [violation.event_seq for violation in every.violations] == [2, 5, 8]
    (rule,) = check_trace(contract, events, max_violations=1).results
    assert [violation.event_seq for violation in rule.violations] == [2]
