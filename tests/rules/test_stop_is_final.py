"""stop_is_final (spec §4.4): after a stop, only allowed_after event types may follow."""
from __future__ import annotations

from typing import Any

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "stop_is_final"
RULE = {"id": "stop-final", "kind": KIND}
DEFAULT = ["run.completed", "run.failed", "telemetry.*"]
STOP = {"type": "control.stop"}
CALL = {"type": "tool.call", "tool": "mail.send"}


def ev(stop_seq: int, allowed: list[str] = DEFAULT) -> dict[str, Any]:
    return {"stop_seq": stop_seq, "allowed_after": allowed}


def test_passing_trace():
    report = check(RULE,
                   {"type": "run.start"},
                   CALL,                                   # before the stop: fine
                   STOP,
                   {"type": "telemetry.flush"},
                   {"type": "telemetry.metrics.cpu"},
                   {"type": "run.failed"},
                   {"type": "run.completed"})
    assert_result(report, RULE, checked=1, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_no_stop_means_nothing_is_checked():
    report = check(RULE, {"type": "run.start"}, CALL, {"type": "control.stopped"}, CALL)
    assert_result(report, RULE, checked=0, violations=[])


def test_stop_as_last_event_passes():
    report = check(RULE, CALL, STOP)
    assert_result(report, RULE, checked=1, violations=[])


def test_disallowed_events_after_stop_are_violations_at_those_events():
    report = check(RULE,
                   {"type": "run.start"},
                   STOP,
                   CALL,
                   {"type": "tool.result", "tool": "mail.send", "ok": True},
                   {"type": "run.completed"},
                   {"type": "agent.message"},
                   start=10)
    assert_result(report, RULE, checked=1, violations=[(12, 2, ev(11)), (13, 3, ev(11)), (15, 5, ev(11))])
    assert report.passed is False
    message = report.violations[0].message
    assert "tool.call" in message and "control.stop" in message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, STOP, CALL)
    assert_result(report, rule, checked=1, violations=[(2, 1, ev(1))])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_several_stops_report_an_event_once_per_earlier_stop_stop_by_stop():
    report = check(RULE,
                   STOP,                       # 0
                   CALL,                       # 1
                   STOP,                       # 2: itself disallowed after the first stop
                   CALL,                       # 3
                   {"type": "run.completed"})  # 4
    assert_result(report, RULE, checked=2, violations=[
        (2, 1, ev(1)), (3, 2, ev(1)), (4, 3, ev(1)),   # first stop
        (4, 3, ev(3)),                                  # second stop
    ])
    assert report.violations[1].message.count("control.stop") == 2   # the stop itself, after a stop


def test_event_after_k_stops_is_reported_k_times():
    report = check(RULE, STOP, STOP, STOP, CALL)
    assert_result(report, RULE, checked=3, violations=[
        (2, 1, ev(1)), (3, 2, ev(1)), (4, 3, ev(1)),
        (3, 2, ev(2)), (4, 3, ev(2)),
        (4, 3, ev(3)),
    ])


def test_second_stop_is_fine_when_allowed_after_lists_it():
    rule = {**RULE, "allowed_after": ["control.stop"]}
    report = check(rule, STOP, STOP, CALL, {"type": "run.completed"})
    allowed = ["control.stop"]
    assert_result(report, rule, checked=2, violations=[
        (3, 2, ev(1, allowed)), (4, 3, ev(1, allowed)),
        (3, 2, ev(2, allowed)), (4, 3, ev(2, allowed)),
    ])


def test_explicit_empty_allowed_after_means_nothing_may_follow():
    rule = {**RULE, "allowed_after": []}
    report = check(rule, STOP, {"type": "run.completed"}, {"type": "telemetry.flush"})
    assert_result(report, rule, checked=1, violations=[(2, 1, ev(1, [])), (3, 2, ev(1, []))])


def test_custom_allowed_after_replaces_the_default_list():
    rule = {**RULE, "allowed_after": ["audit.*"]}
    report = check(rule, STOP, {"type": "audit.log"}, {"type": "telemetry.flush"}, {"type": "run.completed"},
                   {"type": "run.failed"})
    allowed = ["audit.*"]
    assert_result(report, rule, checked=1, violations=[
        (3, 2, ev(1, allowed)), (4, 3, ev(1, allowed)), (5, 4, ev(1, allowed))])


def test_allowed_after_globs_are_trimmed():
    # §2.2/§2.6: glob list items are trimmed; the evidence shows the effective (normalised) list
    rule = {**RULE, "allowed_after": [" audit.* "]}
    report = check(rule, STOP, {"type": "audit.log"}, CALL)
    assert_result(report, rule, checked=1, violations=[(3, 2, ev(1, ["audit.*"]))])


def test_custom_stop_type_glob():
    rule = {**RULE, "stop_type": "*.halt"}
    report = check(rule,
                   STOP,                            # not a stop for this rule
                   CALL,
                   {"type": "session.halt"},
                   CALL,
                   {"type": "run.completed"},
                   start=0)
    assert_result(report, rule, checked=1, violations=[(3, 3, ev(2))])
    assert "session.halt" in report.violations[0].message


def test_stop_type_glob_matching_several_types_names_each_stop():
    rule = {**RULE, "stop_type": "kill.*"}
    report = check(rule, {"type": "kill.user"}, CALL, {"type": "kill.admin"})
    assert_result(report, rule, checked=2, violations=[(2, 1, ev(1)), (3, 2, ev(1))])
    assert "kill.user" in report.violations[0].message
    assert "kill.admin" in report.violations[1].message and "kill.user" in report.violations[1].message


def test_default_stop_type_applies_when_only_allowed_after_is_set():
    rule = {**RULE, "allowed_after": ["run.*"]}
    report = check(rule, {"type": "kill.user"}, STOP, {"type": "run.completed"}, CALL)
    assert_result(report, rule, checked=1, violations=[(4, 3, ev(2, ["run.*"]))])


def test_stop_seq_is_the_stops_seq_not_its_index():
    report = check_trace(contract(RULE), [
        {"seq": 0, "type": "run.start"}, {"seq": 40, **STOP}, {"seq": 41, "type": "telemetry.x"},
        {"seq": 99, **CALL}])
    assert_result(report, RULE, checked=1, violations=[(99, 3, ev(40))])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       '{"seq": 1, "type": "control.stop"}',
                       "# the agent kept going",
                       "",
                       '{"seq": 2, "type": "telemetry.flush"}',
                       '{"seq": 3, "type": "tool.call", "tool": "mail.send"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(3, 2, ev(1))])
    assert report.violations[0].line == 5


def test_message_names_the_late_event_and_the_stop():
    report = check(RULE, STOP, CALL, {"type": "control.stop"}, {"type": "agent.message"}, start=7)
    assert [v.message for v in report.violations] == [
        "Event tool.call mail.send occurred after stop event control.stop at seq 7.",
        "Event control.stop occurred after stop event control.stop at seq 7.",
        "Event agent.message occurred after stop event control.stop at seq 7.",
        "Event agent.message occurred after stop event control.stop at seq 9.",
    ]
