"""tool_result_required (spec §4.12): every checked tool call needs a later tool.result with its call_id."""
from __future__ import annotations

from typing import Any

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract, events

KIND = "tool_result_required"
RULE = {"id": "closed-calls", "kind": KIND}


def call(call_id: str | None, tool: str | None = "mail.send") -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call"}
    if tool is not None:
        event["tool"] = tool
    if call_id is not None:
        event["call_id"] = call_id
    return event


def result(call_id: str | None, tool: str | None = "mail.send", **extra: Any) -> dict[str, Any]:
    return {**call(call_id, tool), "type": "tool.result", **extra}


def test_passing_trace():
    report = check(RULE, call("c1"), call("c2", "kb.search"), result("c2", "kb.search"), result("c1", ok=False))
    assert_result(report, RULE, checked=2, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_call_without_result_is_a_violation_at_the_call():
    report = check(RULE, {"type": "run.start"}, call("c1"), {"type": "run.completed"}, start=9)
    assert_result(report, RULE, checked=1, violations=[(10, 1, {"tool": "mail.send", "call_id": "c1"})])
    assert report.passed is False
    assert "c1" in report.violations[0].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, call("c1"))
    assert_result(report, rule, checked=1, violations=[(1, 0, {"tool": "mail.send", "call_id": "c1"})])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_call_without_call_id_is_a_violation():
    report = check(RULE, call(None, "a"), result(None, "a", ok=True))
    assert_result(report, RULE, checked=1, violations=[(1, 0, {"tool": "a"})])
    assert report.violations[0].message == "Tool call a has no call_id, so no tool.result can answer it."


def test_result_before_the_call_does_not_count():
    report = check(RULE, result("c1"), call("c1"))
    assert_result(report, RULE, checked=1, violations=[(2, 1, {"tool": "mail.send", "call_id": "c1"})])


def test_last_result_with_a_call_id_wins():
    # the later call has no result after it: the last c1 result is at position 1
    report = check(RULE, call("c1"), result("c1"), call("c1"))
    assert_result(report, RULE, checked=2, violations=[(3, 2, {"tool": "mail.send", "call_id": "c1"})])
    # one result after both calls closes both
    report = check(RULE, call("c1"), call("c1"), result("c1"))
    assert_result(report, RULE, checked=2, violations=[])
    report = check(RULE, result("c1"), call("c1"), result("c1"), call("c1"), call("c2"), result("c2"))
    assert_result(report, RULE, checked=3, violations=[(4, 3, {"tool": "mail.send", "call_id": "c1"})])


def test_result_tool_is_not_compared():
    report = check(RULE, call("c1", "a"), result("c1", "b", ok=True), call("c2", "a"), result("c2", None))
    assert_result(report, RULE, checked=2, violations=[])


def test_violations_come_in_call_order():
    report = check(RULE,
                   call("c2"),                 # 0: never answered
                   call(None, "x"),            # 1: no call_id
                   call("c1", "y"),            # 2: never answered
                   call("c3"),                 # 3: answered
                   call("c2", "z"),            # 4: never answered
                   result("c3"),
                   result("c9"))               # orphan result: not reported
    assert_result(report, RULE, checked=5, violations=[
        (1, 0, {"tool": "mail.send", "call_id": "c2"}),
        (2, 1, {"tool": "x"}),
        (3, 2, {"tool": "y", "call_id": "c1"}),
        (5, 4, {"tool": "z", "call_id": "c2"}),
    ])


def test_orphan_results_are_never_reported():
    report = check(RULE, result("c9"), result(None))
    assert_result(report, RULE, checked=0, violations=[])


def test_only_tool_result_events_count_as_results():
    report = check(RULE, call("c1"), {"type": "tool.output", "call_id": "c1"}, {"type": "tool.call", "call_id": "c1"})
    assert_result(report, RULE, checked=1, violations=[(1, 0, {"tool": "mail.send", "call_id": "c1"})])


def test_tool_glob_selects_the_checked_calls():
    rule = {**RULE, "tool": "mail.*"}
    report = check(rule, call("k1", "kb.search"), call("m1", "mail.send"), call(None, "kb.search"),
                   call("m2", "mail.draft"), result("m2"))
    assert_result(report, rule, checked=2, violations=[(2, 1, {"tool": "mail.send", "call_id": "m1"})])


def test_tool_less_calls_are_never_checked_by_default():
    report = check(RULE, call(None, None), call("c1", None))
    assert_result(report, RULE, checked=0, violations=[])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       '{"seq": 1, "type": "tool.call", "tool": "mail.send", "call_id": "c1"}',
                       '{"seq": 2, "type": "tool.result", "tool": "mail.send", "call_id": "c1", "ok": true}',
                       "",
                       "# this one is never answered",
                       '{"seq": 3, "type": "tool.call", "tool": "mail.send", "call_id": "c2"}',
                       '{"seq": 4, "type": "tool.call", "tool": "mail.send"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=3, violations=[
        (3, 2, {"tool": "mail.send", "call_id": "c2"}), (4, 3, {"tool": "mail.send"})])
    assert [v.line for v in report.violations] == [5, 6]


def test_a_violation_cap_keeps_the_first_calls_in_trace_order_with_or_without_call_id():
    trace = events(call(None, "a"), call("c1"), call(None, "b"), call("c2"), call(None, "c"))
    (result,) = check_trace(contract(RULE), trace, max_violations=3).results
    assert [(v.event_seq, v.event_index, v.evidence) for v in result.violations] == [
        (1, 0, {"tool": "a"}), (2, 1, {"tool": "mail.send", "call_id": "c1"}), (3, 2, {"tool": "b"})]
    assert (result.checked, result.truncated, result.violations_total) == (5, True, 5)


def test_message_names_the_tool_and_the_call_id():
    report = check(RULE, call("c1"), result("c2"), call(None, "kb.search"))
    assert [v.message for v in report.violations] == [
        "Tool call mail.send (call_id c1) has no later tool.result with that call_id.",
        "Tool call kb.search has no call_id, so no tool.result can answer it.",
    ]
