"""require_event (spec §4.10): the number of matching events must lie within min..max."""
from __future__ import annotations

from typing import Any

from msgspec import UNSET

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "require_event"
RULE = {"id": "one-start", "kind": KIND, "match": {"type": "run.start"}, "min": 1, "max": 1}
START = {"type": "run.start"}
OTHER = {"type": "agent.message"}
NO_EVENT = (UNSET, UNSET)


def ev(found: int, minimum: int = 1, maximum: int | None = 1, match: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"match": match or {"type": "run.start"}, "found": found, "min": minimum, "max": maximum}


def test_passing_trace():
    report = check(RULE, START, OTHER, {"type": "run.completed"})
    assert_result(report, RULE, checked=1, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_too_many_is_one_violation_at_the_first_match():
    report = check(RULE, OTHER, START, OTHER, START, START, start=5)
    assert_result(report, RULE, checked=3, violations=[(6, 1, ev(3))])
    assert report.passed is False
    assert "3" in report.violations[0].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, START, START)
    assert_result(report, rule, checked=2, violations=[(1, 0, ev(2))])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_defaults_are_min_one_and_no_max():
    rule = {"id": "started", "kind": KIND, "match": {"type": "run.start"}}
    assert_result(check(rule, START, START, START), rule, checked=3, violations=[])
    report = check(rule, OTHER, OTHER)
    assert_result(report, rule, checked=0, violations=[(*NO_EVENT, ev(0, 1, None))])
    assert report.violations[0].evidence["max"] is None
    assert report.violations[0].line is UNSET


def test_too_few_with_some_matches_is_located_at_the_first_match():
    rule = {"id": "two-checks", "kind": KIND,
            "match": {"type": "outcome.observed", "verdict": "satisfied", "outcome_id": "check-*"}, "min": 2}
    report = check(rule,
                   {"type": "outcome.observed", "outcome_id": "other", "verdict": "satisfied"},
                   {"type": "outcome.observed", "outcome_id": "check-1", "verdict": "satisfied"},
                   {"type": "outcome.observed", "outcome_id": "check-2", "verdict": "violated"})
    match = {"type": "outcome.observed", "outcome_id": "check-*", "verdict": "satisfied"}   # schema order
    assert_result(report, rule, checked=1, violations=[(2, 1, ev(1, 2, None, match))])


def test_min_zero_max_zero_means_never():
    rule = {"id": "never", "kind": KIND, "match": {"type": "run.start"}, "min": 0, "max": 0}
    assert_result(check(rule, OTHER), rule, checked=0, violations=[])
    report = check(rule, OTHER, START, START)
    assert_result(report, rule, checked=2, violations=[(2, 1, ev(2, 0, 0))])


def test_min_zero_without_max_always_passes():
    rule = {"id": "optional", "kind": KIND, "match": {"type": "run.start"}, "min": 0}
    assert_result(check(rule, OTHER), rule, checked=0, violations=[])
    assert_result(check(rule, START, START, START, START, START), rule, checked=5, violations=[])


def test_range_bounds_are_inclusive():
    rule = {"id": "some", "kind": KIND, "match": {"type": "run.start"}, "min": 2, "max": 3}
    assert_result(check(rule, START, START), rule, checked=2, violations=[])
    assert_result(check(rule, START, START, START), rule, checked=3, violations=[])
    assert_result(check(rule, OTHER, START), rule, checked=1, violations=[(2, 1, ev(1, 2, 3))])
    assert_result(check(rule, *[START] * 4), rule, checked=4, violations=[(1, 0, ev(4, 2, 3))])


def test_matcher_fields_and_normalised_evidence():
    rule = {"id": "failed-pay", "kind": KIND, "match": {"ok": False, "tool": " pay.* ", "type": "tool.result"},
            "min": 0, "max": 0}
    report = check(rule,
                   {"type": "tool.result", "tool": "pay.refund"},               # ok absent
                   {"type": "tool.result", "tool": "pay.refund", "ok": True},
                   {"type": "tool.call", "tool": "pay.refund", "ok": False},
                   {"type": "tool.result", "tool": "pay.refund", "ok": False},
                   {"type": "tool.result", "ok": False})                         # no tool
    match = {"type": "tool.result", "tool": "pay.*", "ok": False}
    assert_result(report, rule, checked=1, violations=[(4, 3, ev(1, 0, 0, match))])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "",
                       "# started twice",
                       '{"seq": 1, "type": "agent.message"}',
                       '{"seq": 2, "type": "run.start"}',
                       "",
                       '{"seq": 3, "type": "run.start"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=2, violations=[(2, 1, ev(2))])
    assert report.violations[0].line == 4


def test_message_names_the_matcher():
    report = check(RULE, START, START)
    assert [v.message for v in report.violations] == ["Expected 1..1 events matching run.start; found 2."]
    rule = {"id": "a-passing-test", "kind": KIND, "match": {"type": "tool.result", "tool": "ci.*", "ok": True}}
    report = check(rule, OTHER)
    assert [v.message for v in report.violations] == [
        "Expected 1..∞ events matching tool.result ci.* (ok true); found 0."]
