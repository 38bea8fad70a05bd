"""deny_event (spec §4.11): every event matching the matcher is a violation."""
from __future__ import annotations

import pytest

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "deny_event"
MATCH = {"type": "tool.result", "tool": "payments.*", "ok": False}
RULE = {"id": "no-failed-payments", "kind": KIND, "match": MATCH}
EVIDENCE = {"match": MATCH}
FAILED_PAYMENT = {"type": "tool.result", "tool": "payments.refund", "ok": False}


def test_passing_trace():
    report = check(RULE,
                   {"type": "tool.call", "tool": "payments.refund", "ok": False},     # wrong type
                   {"type": "tool.result", "tool": "payments.refund", "ok": True},
                   {"type": "tool.result", "tool": "payments.refund"},                # ok absent
                   {"type": "tool.result", "tool": "kb.search", "ok": False},         # wrong tool
                   {"type": "tool.result", "ok": False})                              # no tool
    assert_result(report, RULE, checked=0, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_every_match_is_a_violation_at_that_event():
    report = check(RULE,
                   {"type": "tool.call", "tool": "payments.refund", "call_id": "c1"},
                   FAILED_PAYMENT,
                   {"type": "tool.result", "tool": "payments.refund", "ok": True},
                   {**FAILED_PAYMENT, "tool": "payments.void"},
                   start=0)
    assert_result(report, RULE, checked=2, violations=[(1, 1, EVIDENCE), (3, 3, EVIDENCE)])
    assert report.passed is False
    assert "tool.result" in report.violations[0].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, FAILED_PAYMENT)
    assert_result(report, rule, checked=1, violations=[(1, 0, EVIDENCE)])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


@pytest.mark.parametrize(("match", "event", "matches"), [
    ({"ok": True}, {"type": "x"}, False),                            # absent never equals true
    ({"ok": False}, {"type": "x"}, False),                           # ... nor false
    ({"ok": False}, {"type": "x", "ok": False}, True),
    ({"claims_completion": False}, {"type": "x"}, False),
    ({"claims_completion": False}, {"type": "x", "claims_completion": False}, True),
    ({"claims_completion": True}, {"type": "x", "claims_completion": True}, True),
    ({"verdict": "violated"}, {"type": "outcome.observed", "verdict": "violated"}, True),
    ({"verdict": "violated"}, {"type": "outcome.observed", "verdict": "retracted"}, False),
    ({"verdict": "violated"}, {"type": "outcome.observed"}, False),
    ({"tool": "*"}, {"type": "tool.call"}, False),                   # a glob never matches a missing value
    ({"tool": "*"}, {"type": "tool.call", "tool": "a"}, True),
    ({"outcome_id": "*"}, {"type": "outcome.observed"}, False),
    ({"outcome_id": "o-?"}, {"type": "outcome.observed", "outcome_id": "o-1"}, True),
    ({"outcome_id": "o-?"}, {"type": "outcome.observed", "outcome_id": "o-12"}, False),
    ({"type": "secret.*"}, {"type": "secret.read"}, True),
    ({"type": "secret.*"}, {"type": "my.secret.read"}, False),       # anchored
    ({"type": "secret.*"}, {"type": "Secret.read"}, False),          # case-sensitive
    ({"type": "secret.read"}, {"type": "  secret.read  "}, True),   # event types are trimmed
    ({"type": " secret.read"}, {"type": " secret.read"}, False),     # matcher type is not trimmed
    ({"type": "tool.result", "ok": False}, {"type": "tool.call", "ok": False}, False),   # all keys must match
    ({"type": "tool.*", "tool": "pay.*", "ok": True, "outcome_id": "o", "verdict": "satisfied",
      "claims_completion": True},
     {"type": "tool.result", "tool": "pay.x", "ok": True, "outcome_id": "o", "verdict": "satisfied",
      "claims_completion": True}, True),
])
def test_matcher_semantics(match, event, matches):
    rule = {"id": "deny", "kind": KIND, "match": match}
    report = check(rule, event)
    assert_result(report, rule, checked=int(matches), violations=[(1, 0, {"match": match})] if matches else [])


def test_evidence_holds_the_normalised_matcher():
    rule = {"id": "deny", "kind": KIND,
            "match": {"claims_completion": True, "verdict": "unknown", "tool": "  a.*  ", "type": "t"}}
    report = check(rule, {"type": "t", "tool": "a.b", "verdict": "unknown", "claims_completion": True})
    normalised = {"type": "t", "tool": "a.*", "verdict": "unknown", "claims_completion": True}
    assert_result(report, rule, checked=1, violations=[(1, 0, {"match": normalised})])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       '{"seq": 1, "type": "tool.call", "tool": "payments.refund", "call_id": "c1"}',
                       "# the refund failed",
                       "",
                       "# twice",
                       '{"seq": 2, "type": "tool.result", "tool": "payments.refund", "call_id": "c1", "ok": false}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(2, 1, EVIDENCE)])
    assert report.violations[0].line == 5


def test_message_names_the_event_type_and_tool():
    report = check(RULE, FAILED_PAYMENT)
    assert [v.message for v in report.violations] == ["Denied event matched: tool.result payments.refund."]
    rule = {"id": "no-secrets", "kind": KIND, "match": {"type": "secret.*"}}
    report = check(rule, {"type": "secret.read"})
    assert [v.message for v in report.violations] == ["Denied event matched: secret.read."]
