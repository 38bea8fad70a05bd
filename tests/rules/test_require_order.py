"""require_order (spec §4.9): every event matching `after` needs an event matching `before` strictly earlier."""
from __future__ import annotations

import pytest

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "require_order"
BEFORE = {"type": "tool.call", "tool": "crm.lookup"}
AFTER = {"type": "tool.call", "tool": "billing.refund"}
RULE = {"id": "lookup-first", "kind": KIND, "before": BEFORE, "after": AFTER}
EVIDENCE = {"before": BEFORE, "after": AFTER}
LOOKUP = {"type": "tool.call", "tool": "crm.lookup"}
REFUND = {"type": "tool.call", "tool": "billing.refund"}


def test_passing_trace():
    report = check(RULE, {"type": "run.start"}, LOOKUP, REFUND, {"type": "tool.result", "tool": "billing.refund"},
                   REFUND)
    assert_result(report, RULE, checked=2, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_no_after_event_means_nothing_is_checked():
    report = check(RULE, {"type": "run.start"}, {"type": "tool.result", "tool": "billing.refund"})
    assert_result(report, RULE, checked=0, violations=[])


def test_after_event_without_earlier_before_is_a_violation():
    report = check(RULE, REFUND, LOOKUP, REFUND, start=30)
    assert_result(report, RULE, checked=2, violations=[(30, 0, EVIDENCE)])
    assert report.passed is False
    assert "tool.call" in report.violations[0].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, REFUND, REFUND)
    assert_result(report, rule, checked=2, violations=[(1, 0, EVIDENCE), (2, 1, EVIDENCE)])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 2)


def test_every_after_event_is_checked():
    rule = {"id": "guard-first", "kind": KIND, "before": {"type": "guard.checked"},
            "after": {"type": "tool.call", "tool": "deploy.*"}}
    report = check(rule,
                   {"type": "tool.call", "tool": "deploy.canary"},
                   {"type": "tool.call", "tool": "deploy.staging"},
                   {"type": "guard.checked"},
                   {"type": "tool.call", "tool": "deploy.prod"})
    evidence = {"before": {"type": "guard.checked"}, "after": {"type": "tool.call", "tool": "deploy.*"}}
    assert_result(report, rule, checked=3, violations=[(1, 0, evidence), (2, 1, evidence)])


def test_an_event_matching_both_is_not_its_own_predecessor():
    rule = {"id": "steps", "kind": KIND, "before": {"type": "step"}, "after": {"type": "step"}}
    report = check(rule, {"type": "step"}, {"type": "step"}, {"type": "step"})
    evidence = {"before": {"type": "step"}, "after": {"type": "step"}}
    assert_result(report, rule, checked=3, violations=[(1, 0, evidence)])


def test_evidence_holds_normalised_matchers():
    # §2.6: matcher keys come back in schema order (type, tool, ok, outcome_id, verdict, claims_completion),
    # globs trimmed
    rule = {"id": "verified", "kind": KIND,
            "before": {"verdict": "satisfied", "outcome_id": "  refund-*  ", "type": "outcome.observed"},
            "after": {"claims_completion": True, "ok": True, "tool": " billing.* "}}
    report = check(rule, {"type": "agent.message", "tool": "billing.refund", "ok": True, "claims_completion": True})
    evidence = {"before": {"type": "outcome.observed", "outcome_id": "refund-*", "verdict": "satisfied"},
                "after": {"tool": "billing.*", "ok": True, "claims_completion": True}}
    assert_result(report, rule, checked=1, violations=[(1, 0, evidence)])


@pytest.mark.parametrize(("before", "predecessor", "satisfied"), [
    ({"verdict": "satisfied"}, {"type": "outcome.observed", "verdict": "satisfied"}, True),
    ({"verdict": "satisfied"}, {"type": "outcome.observed", "verdict": "unknown"}, False),
    ({"verdict": "satisfied"}, {"type": "outcome.observed"}, False),
    ({"outcome_id": "refund-*"}, {"type": "outcome.observed", "outcome_id": "refund-1"}, True),
    ({"outcome_id": "*"}, {"type": "outcome.observed"}, False),
    ({"ok": True}, {"type": "tool.result", "ok": True}, True),
    ({"ok": False}, {"type": "tool.result"}, False),
    ({"claims_completion": False}, {"type": "x", "claims_completion": False}, True),
    ({"claims_completion": False}, {"type": "x"}, False),
    ({"tool": "*"}, {"type": "tool.call"}, False),
    ({"type": "tool.*", "tool": "crm.*"}, {"type": "tool.call", "tool": "crm.get"}, True),
    ({"type": "tool.*", "tool": "crm.*"}, {"type": "tool.call", "tool": "kb.get"}, False),
    ({"type": "tool.*", "tool": "crm.*"}, {"type": "note", "tool": "crm.get"}, False),
])
def test_before_matcher(before, predecessor, satisfied):
    rule = {"id": "order", "kind": KIND, "before": before, "after": {"type": "act"}}
    report = check(rule, predecessor, {"type": "act"})
    evidence = {"before": before, "after": {"type": "act"}}
    assert_result(report, rule, checked=1, violations=[] if satisfied else [(2, 1, evidence)])


def test_before_after_the_after_event_does_not_count():
    report = check(RULE, REFUND, LOOKUP)
    assert_result(report, RULE, checked=1, violations=[(1, 0, EVIDENCE)])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "# refund before lookup",
                       '{"seq": 1, "type": "run.start"}',
                       "",
                       '{"seq": 2, "type": "tool.call", "tool": "billing.refund"}',
                       '{"seq": 3, "type": "tool.call", "tool": "crm.lookup"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(2, 1, EVIDENCE)])
    assert report.violations[0].line == 4


# -- the message names the event and both matchers -----------------------------------------------

def test_message_names_the_event_and_both_matchers():
    rule = {"id": "lookup-first", "kind": KIND, "before": BEFORE, "after": {"type": "tool.call", "tool": "billing.*"}}
    report = check(rule, REFUND, LOOKUP, REFUND)
    assert [v.message for v in report.violations] == [
        "tool.call billing.refund has no earlier tool.call crm.lookup: each tool.call billing.* needs one before it."]


@pytest.mark.parametrize(("before", "after", "event", "message"), [
    ({"type": "step"}, {"type": "step"}, {"type": "step"},
     "step has no earlier step: each step needs one before it."),
    ({"type": "tool.result", "tool": "ci.run_tests", "ok": True}, {"type": "tool.call", "tool": "deploy.*"},
     {"type": "tool.call", "tool": "deploy.prod"},
     "tool.call deploy.prod has no earlier tool.result ci.run_tests (ok true): each tool.call deploy.* needs one "
     "before it."),
    # no type: "event", and every key but type in parentheses, in schema order, trimmed as in the evidence
    ({"verdict": "satisfied", "outcome_id": "  refund-*  ", "type": "outcome.observed"},
     {"claims_completion": True, "ok": False, "tool": " billing.* "},
     {"type": "agent.message", "tool": "billing.refund", "ok": False, "claims_completion": True},
     "agent.message billing.refund has no earlier outcome.observed (outcome_id refund-*, verdict satisfied): "
     "each event (tool billing.*, ok false, claims_completion true) needs one before it."),
    ({"tool": "crm.*"}, {"type": "act", "claims_completion": False}, {"type": "act", "claims_completion": False},
     "act has no earlier event (tool crm.*): each act (claims_completion false) needs one before it."),
])
def test_message_shows_matchers_compactly(before, after, event, message):
    rule = {"id": "order", "kind": KIND, "before": before, "after": after}
    report = check(rule, event)
    assert [v.message for v in report.violations] == [message]


def test_cli_text_report_names_the_missing_predecessor(cli, write):
    rule = {"id": "tests-before-deploy", "kind": KIND, "before": {"type": "tool.result", "tool": "ci.*", "ok": True},
            "after": {"type": "tool.call", "tool": "deploy.*"}}
    write("contract.json", contract(rule))
    write("trace.jsonl", '{"seq": 1, "type": "run.start"}\n'
                         '{"seq": 2, "type": "tool.result", "tool": "ci.lint", "ok": false}\n'
                         '{"seq": 3, "type": "tool.call", "tool": "deploy.production"}\n')
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl")
    assert result.returncode == 1, result.stderr
    assert ("trace.jsonl:3  seq 3  [require_order.missing] tool.call deploy.production has no earlier "
            "tool.result ci.* (ok true): each tool.call deploy.* needs one before it.") in result.stdout
