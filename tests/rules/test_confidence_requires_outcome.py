"""confidence_requires_outcome (spec §4.6): a claim with confidence >= threshold needs earlier
qualifying outcome evidence."""
from __future__ import annotations

from typing import Any

import pytest

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "confidence_requires_outcome"
RULE = {"id": "calibrated", "kind": KIND, "threshold": 0.9}
DEFAULT_CLASSES = ["externally_observed", "configured_verifier"]
GOOD = {"type": "outcome.observed", "verdict": "satisfied", "evidence_class": "configured_verifier"}


def claim(confidence: float) -> dict[str, Any]:
    return {"type": "agent.message", "claims_completion": True, "confidence": confidence}


def ev(confidence: float, threshold: float = 0.9, classes: list[str] = DEFAULT_CLASSES) -> dict[str, Any]:
    return {"confidence": confidence, "threshold": threshold, "evidence_classes": classes}


def test_passing_trace():
    report = check(RULE, GOOD, claim(0.95))
    assert_result(report, RULE, checked=1, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_confident_claim_without_evidence_is_a_violation():
    report = check(RULE, {"type": "run.start"}, claim(0.95), start=4)
    assert_result(report, RULE, checked=1, violations=[(5, 1, ev(0.95))])
    assert report.passed is False
    message = report.violations[0].message
    assert "0.95" in message and "0.9" in message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, claim(0.95))
    assert_result(report, rule, checked=1, violations=[(1, 0, ev(0.95))])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_only_claims_at_or_above_threshold_are_looked_at():
    report = check(RULE,
                   claim(0.89),                                                        # below
                   {"type": "agent.message", "claims_completion": True},               # no confidence
                   {"type": "agent.message", "confidence": 0.99},                      # no claim
                   {"type": "agent.message", "claims_completion": False, "confidence": 0.99},
                   {"type": "run.completed", "confidence": 0.99})                      # type is not a claim here
    assert_result(report, RULE, checked=0, violations=[])


def test_threshold_is_inclusive():
    report = check(RULE, claim(0.9), claim(0.8999))
    assert_result(report, RULE, checked=1, violations=[(1, 0, ev(0.9))])


def test_threshold_zero_checks_every_claim_with_a_confidence():
    rule = {"id": "calib", "kind": KIND, "threshold": 0}
    report = check(rule, claim(0), claim(1), claim(0.125))
    assert_result(report, rule, checked=3, violations=[
        (1, 0, ev(0, 0)), (2, 1, ev(1, 0)), (3, 2, ev(0.125, 0))])
    assert "0.125" in report.violations[2].message
    assert "1.0" not in report.violations[1].message      # numbers print the JavaScript way
    assert "0.0" not in report.violations[0].message


def test_threshold_one():
    rule = {**RULE, "threshold": 1}
    report = check(rule, claim(1), claim(0.99))
    assert_result(report, rule, checked=1, violations=[(1, 0, ev(1, 1))])


def test_each_claim_is_checked_against_earlier_outcomes_only():
    report = check(RULE, claim(0.95), GOOD, claim(0.97), claim(0.5))
    assert_result(report, RULE, checked=2, violations=[(1, 0, ev(0.95))])


def test_any_outcome_id_qualifies():
    report = check(RULE, {**GOOD, "outcome_id": "something-else"}, claim(0.99))
    assert_result(report, RULE, checked=1, violations=[])


@pytest.mark.parametrize("outcome", [
    {**GOOD, "verdict": "violated"},
    {**GOOD, "verdict": "unknown"},
    {k: v for k, v in GOOD.items() if k != "verdict"},
    {k: v for k, v in GOOD.items() if k != "evidence_class"},
    {**GOOD, "evidence_class": "self_attestation"},
    {**GOOD, "evidence_class": "manual_attestation"},
    {**GOOD, "type": "outcome.observed.v2"},
])
def test_non_qualifying_outcomes(outcome):
    report = check(RULE, outcome, claim(0.95))
    assert_result(report, RULE, checked=1, violations=[(2, 1, ev(0.95))])


def test_outcome_claiming_completion_does_not_vouch_for_itself():
    report = check(RULE, {**GOOD, "claims_completion": True, "confidence": 0.99}, claim(0.99))
    assert_result(report, RULE, checked=2, violations=[(1, 0, ev(0.99))])


def test_custom_evidence_classes():
    rule = {**RULE, "evidence_classes": ["self_attestation"]}
    report = check(rule, GOOD, claim(0.95), {**GOOD, "evidence_class": "self_attestation"}, claim(0.96))
    assert_result(report, rule, checked=2, violations=[(2, 1, ev(0.95, 0.9, ["self_attestation"]))])


def test_stale_satisfied_outcome_still_counts():
    report = check(RULE, GOOD, {**GOOD, "verdict": "violated"}, claim(0.95))
    assert_result(report, RULE, checked=1, violations=[])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "# confidence check",
                       "",
                       '{"seq": 1, "type": "agent.message", "claims_completion": true, "confidence": 0.5}',
                       '{"seq": 2, "type": "agent.message", "claims_completion": true, "confidence": 0.95}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(2, 1, ev(0.95))])
    assert report.violations[0].line == 4


def test_message_names_the_claim_the_threshold_and_the_outcome_it_needed():
    report = check(RULE, claim(1.0))
    assert [v.message for v in report.violations] == [
        "agent.message claimed completion with confidence 1 (threshold 0.9) and no earlier satisfied "
        "outcome.observed (evidence_class externally_observed or configured_verifier)."]
