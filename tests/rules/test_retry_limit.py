"""retry_limit (spec §4.7): no group of tool calls may run more than max_attempts times."""
from __future__ import annotations

from typing import Any

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract, events

KIND = "retry_limit"
RULE = {"id": "retries", "kind": KIND, "max_attempts": 2}


def call(tool: str | None = "kb.search", signature: str | None = None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call", **extra}
    if tool is not None:
        event["tool"] = tool
    if signature is not None:
        event["call_signature"] = signature
    return event


def ev(group: str, attempts: int, maximum: int = 2) -> dict[str, Any]:
    return {"group": group, "attempts": attempts, "max_attempts": maximum}


def test_passing_trace():
    report = check(RULE, call(signature="kb:refunds"), call(signature="kb:shipping"),
                   call(signature="kb:refunds"), call(signature="kb:shipping"),
                   {"type": "tool.result", "tool": "kb.search", "call_signature": "kb:refunds"})
    assert_result(report, RULE, checked=4, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_group_over_the_limit_is_one_violation_at_the_first_excess_call():
    rule = {"id": "loop-guard", "kind": KIND, "max_attempts": 2, "group_by": "call_signature"}
    report = check(rule,
                   call("http.fetch", "GET /a", call_id="a"),
                   {"type": "tool.result", "tool": "http.fetch", "call_id": "a", "ok": False},
                   call("http.fetch", "GET /a", call_id="b"),
                   {"type": "tool.result", "tool": "http.fetch", "call_id": "b", "ok": False},
                   call("http.fetch", "GET /a", call_id="c"),
                   call("http.fetch", "GET /a", call_id="d"))
    assert_result(report, rule, checked=4, violations=[(5, 4, ev("GET /a", 4))])
    assert report.passed is False
    message = report.violations[0].message
    assert "GET /a" in message and "4" in message and "2" in message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, call(), call(), call())
    assert_result(report, rule, checked=3, violations=[(3, 2, ev("kb.search", 3))])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_located_at_the_max_plus_first_call_and_counts_all_attempts():
    rule = {**RULE, "max_attempts": 3}
    report = check(rule, *[call(signature="s")] * 6, start=100)
    assert_result(report, rule, checked=6, violations=[(103, 3, ev("s", 6, 3))])


def test_groups_are_reported_in_order_of_first_appearance():
    rule = {**RULE, "max_attempts": 1}
    report = check(rule,
                   call(signature="b"),      # 0: b appears first
                   call(signature="a"),      # 1
                   call(signature="a"),      # 2: a exceeds first
                   call(signature="c"),      # 3
                   call(signature="b"))      # 4: b exceeds later
    assert_result(report, rule, checked=5, violations=[(5, 4, ev("b", 2, 1)), (3, 2, ev("a", 2, 1))])


def test_signature_falls_back_to_tool_name():
    report = check(RULE, call("kb.search"), call("kb.search", "q1"), call("kb.search"), call("kb.search"))
    assert_result(report, RULE, checked=4, violations=[(4, 3, ev("kb.search", 3))])


def test_signatures_and_tool_names_share_one_key_space():
    report = check(RULE, call("kb.search"), call("other.tool", "kb.search"), call("kb.search"))
    assert_result(report, RULE, checked=3, violations=[(3, 2, ev("kb.search", 3))])


def test_group_by_tool_ignores_signatures():
    rule = {**RULE, "group_by": "tool"}
    report = check(rule, call("kb.search", "a"), call("crm.get", "a"), call("kb.search", "b"),
                   call("crm.get", "a"), call("kb.search", "c"))
    assert_result(report, rule, checked=5, violations=[(5, 4, ev("kb.search", 3))])


def test_tool_less_calls_are_ignored():
    report = check(RULE, call(None, "x"), call(None, "x"), call(None, "x"), call(None), call(None),
                   call("t", "x"), call("t", "x"))
    assert_result(report, RULE, checked=2, violations=[])


def test_tool_glob_selects_the_counted_calls():
    rule = {**RULE, "tool": "pay.*"}
    report = check(rule, call("kb.search"), call("pay.refund"), call("kb.search"), call("pay.refund"),
                   call("kb.search"), call("pay.refund"), call("payx"))
    assert_result(report, rule, checked=3, violations=[(6, 5, ev("pay.refund", 3))])


def test_counts_all_attempts_not_consecutive_ones_and_ignores_results():
    report = check(RULE,
                   call(signature="A", call_id="1"), {"type": "tool.result", "call_id": "1", "ok": True},
                   call(signature="B", call_id="2"), {"type": "tool.result", "call_id": "2", "ok": True},
                   call(signature="A", call_id="3"), {"type": "tool.result", "call_id": "3", "ok": True},
                   call(signature="B", call_id="4"),
                   call(signature="A", call_id="5"))
    assert_result(report, RULE, checked=5, violations=[(8, 7, ev("A", 3))])


def test_at_the_limit_passes():
    rule = {**RULE, "max_attempts": 1}
    report = check(rule, call(signature="a"), call(signature="b"), call("c"))
    assert_result(report, rule, checked=3, violations=[])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       '{"seq": 1, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}',
                       "",
                       '{"seq": 2, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}',
                       "# third try",
                       '{"seq": 3, "type": "tool.call", "tool": "kb.search", "call_signature": "kb:refunds"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=3, violations=[(3, 2, ev("kb:refunds", 3))])
    assert report.violations[0].line == 5


def test_a_violation_cap_keeps_the_first_groups_by_first_appearance():
    """b appears first, so it comes first, though a went over the limit earlier."""
    rule = {"id": "retries", "kind": KIND, "max_attempts": 1}
    trace = events(call(signature="b"), call(signature="a"), call(signature="a"), call(signature="b"),
                   call(signature="c"), call(signature="c"))
    (result,) = check_trace(contract(rule), trace, max_violations=2).results
    assert [(v.event_seq, v.event_index, v.evidence) for v in result.violations] == [
        (4, 3, ev("b", 2, 1)), (3, 2, ev("a", 2, 1))]
    assert (result.passed, result.truncated, result.violations_total) == (False, True, 3)


def test_message_names_the_group_and_max_attempts():
    report = check(RULE, call(signature="kb:refunds"), call(signature="kb:refunds"), call(signature="kb:refunds"))
    assert [v.message for v in report.violations] == ["Retry group kb:refunds ran 3 times; max_attempts is 2."]
