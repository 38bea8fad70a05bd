"""event_budget (spec §4.8): trace-wide caps on events, tool calls and failed tool results."""
from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract, events

KIND = "event_budget"
RULE = {"id": "budget", "kind": KIND, "max_tool_calls": 1}
CALL = {"type": "tool.call", "tool": "kb.search"}
FAILED = {"type": "tool.result", "tool": "kb.search", "ok": False}
NO_EVENT = (UNSET, UNSET)


def ev(actual: int, maximum: int, metric: str) -> dict[str, Any]:
    return {"actual": actual, "maximum": maximum, "metric": metric}


def test_passing_trace_at_the_limits():
    rule = {"id": "budget", "kind": KIND, "max_events": 3, "max_tool_calls": 2, "max_tool_failures": 1}
    report = check(rule, CALL, FAILED, CALL)
    assert_result(report, rule, checked=3, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_exceeded_budget_is_one_violation_not_tied_to_an_event():
    report = check(RULE, CALL, {"type": "tool.result", "ok": True}, CALL)
    assert_result(report, RULE, checked=3, violations=[(*NO_EVENT, ev(2, 1, "tool_calls"))])
    violation = report.violations[0]
    assert violation.line is UNSET
    assert report.passed is False
    assert "2" in violation.message and "1" in violation.message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, CALL, CALL, CALL)
    assert_result(report, rule, checked=3, violations=[(*NO_EVENT, ev(3, 1, "tool_calls"))])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_violations_come_in_fixed_metric_order():
    rule = {"id": "budget", "kind": KIND, "max_tool_failures": 0, "max_tool_calls": 1, "max_events": 2}
    report = check(rule, CALL, FAILED, CALL, FAILED)
    assert_result(report, rule, checked=4, violations=[
        (*NO_EVENT, ev(4, 2, "events")),
        (*NO_EVENT, ev(2, 1, "tool_calls")),
        (*NO_EVENT, ev(2, 0, "tool_failures")),
    ])


@pytest.mark.parametrize(("bound", "metric", "actual"), [
    ("max_events", "events", 5), ("max_tool_calls", "tool_calls", 2), ("max_tool_failures", "tool_failures", 1)])
def test_each_bound_alone(bound, metric, actual):
    trace = [CALL, FAILED, CALL, {"type": "tool.result", "ok": True}, {"type": "run.completed"}]
    rule = {"id": "budget", "kind": KIND, bound: actual}
    assert_result(check(rule, *trace), rule, checked=5, violations=[])
    rule = {"id": "budget", "kind": KIND, bound: actual - 1}
    assert_result(check(rule, *trace), rule, checked=5, violations=[(*NO_EVENT, ev(actual, actual - 1, metric))])


def test_only_tool_results_with_ok_false_are_failures():
    rule = {"id": "budget", "kind": KIND, "max_tool_failures": 0}
    report = check(rule,
                   {"type": "tool.result", "tool": "a"},               # ok absent
                   {"type": "tool.result", "tool": "a", "ok": True},
                   {"type": "tool.call", "tool": "a", "ok": False},    # not a result
                   {"type": "agent.error", "ok": False})
    assert_result(report, rule, checked=4, violations=[])


def test_tool_less_calls_count_as_tool_calls():
    report = check(RULE, {"type": "tool.call"}, CALL)
    assert_result(report, RULE, checked=2, violations=[(*NO_EVENT, ev(2, 1, "tool_calls"))])


def test_zero_budgets():
    rule = {"id": "budget", "kind": KIND, "max_events": 0}
    assert_result(check_trace(contract(rule), []), rule, checked=0, violations=[])
    assert_result(check(rule, {"type": "run.start"}), rule, checked=1, violations=[(*NO_EVENT, ev(1, 0, "events"))])


def test_trace_file_counts_events_not_lines(tmp_path):
    rule = {"id": "budget", "kind": KIND, "max_events": 1}
    path = write_trace(tmp_path,
                       "# two events, five lines",
                       '{"seq": 1, "type": "tool.call", "tool": "kb.search"}',
                       "",
                       '{"seq": 2, "type": "tool.call", "tool": "kb.search"}',
                       "")
    report = check_trace(contract(rule), str(path))
    assert_result(report, rule, checked=2, violations=[(*NO_EVENT, ev(2, 1, "events"))])
    assert report.violations[0].line is UNSET


def test_a_violation_cap_keeps_the_first_metrics_in_their_fixed_order():
    rule = {"id": "budget", "kind": KIND, "max_tool_failures": 0, "max_tool_calls": 1, "max_events": 2}
    report = check_trace(contract(rule), events(CALL, FAILED, CALL, FAILED), max_violations=2)
    assert [v.evidence["metric"] for v in report.violations] == ["events", "tool_calls"]
    assert (report.error_count, report.violations_total, report.truncated) == (3, 3, True)


def test_messages_name_the_bound_that_was_exceeded():
    rule = {"id": "budget", "kind": KIND, "max_events": 2, "max_tool_calls": 1, "max_tool_failures": 0}
    report = check(rule, CALL, FAILED, CALL)
    assert [v.message for v in report.violations] == [
        "Trace has 3 events; max_events is 2.",
        "Trace has 2 tool calls; max_tool_calls is 1.",
        "Trace has 1 tool failure; max_tool_failures is 0.",
    ]
