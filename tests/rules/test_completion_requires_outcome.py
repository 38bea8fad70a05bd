"""completion_requires_outcome (spec §4.5): a completion needs an earlier satisfied outcome
from an allowed evidence class."""
from __future__ import annotations

import pytest

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "completion_requires_outcome"
RULE = {"id": "proof", "kind": KIND}
DEFAULT_CLASSES = ["externally_observed", "configured_verifier"]
EVIDENCE = {"evidence_classes": DEFAULT_CLASSES}
GOOD = {"type": "outcome.observed", "verdict": "satisfied", "evidence_class": "externally_observed"}
DONE = {"type": "run.completed"}


def test_passing_trace():
    report = check(RULE, {"type": "run.start"}, GOOD, {"type": "agent.message"}, DONE)
    assert_result(report, RULE, checked=1, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_configured_verifier_qualifies_by_default():
    report = check(RULE, {**GOOD, "evidence_class": "configured_verifier"}, DONE)
    assert_result(report, RULE, checked=1, violations=[])


def test_no_completion_means_nothing_is_checked():
    report = check(RULE, {"type": "agent.message", "claims_completion": False}, {"type": "run.failed"})
    assert_result(report, RULE, checked=0, violations=[])


def test_completion_without_qualifying_outcome_is_a_violation():
    report = check(RULE, {**GOOD, "evidence_class": "self_attestation"}, DONE, start=3)
    assert_result(report, RULE, checked=1, violations=[(4, 1, EVIDENCE)])
    assert report.passed is False


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, DONE)
    assert_result(report, rule, checked=1, violations=[(1, 0, EVIDENCE)])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_every_completion_is_checked_against_earlier_outcomes_only():
    report = check(RULE,
                   DONE,                                                    # 0: fails
                   GOOD,                                                    # 1
                   {"type": "agent.message", "claims_completion": True},    # 2: passes
                   DONE)                                                    # 3: passes
    assert_result(report, RULE, checked=3, violations=[(1, 0, EVIDENCE)])


def test_claims_completion_on_any_type_is_a_completion():
    report = check(RULE, {"type": "agent.message", "claims_completion": True},
                   {"type": "agent.message", "claims_completion": False})
    assert_result(report, RULE, checked=1, violations=[(1, 0, EVIDENCE)])


def test_run_completed_with_claims_false_is_still_a_completion():
    report = check(RULE, {**DONE, "claims_completion": False})
    assert_result(report, RULE, checked=1, violations=[(1, 0, EVIDENCE)])


def test_event_that_is_both_kinds_of_completion_counts_once():
    report = check(RULE, {**DONE, "claims_completion": True})
    assert_result(report, RULE, checked=1, violations=[(1, 0, EVIDENCE)])


def test_custom_completion_types_replace_run_completed():
    rule = {**RULE, "completion_types": ["task.done", "job.*"]}
    report = check(rule,
                   DONE,                                                    # no longer a completion
                   {"type": "task.done"},
                   {"type": "job.finished"},
                   {"type": "task.done.later"},                             # anchored
                   {"type": "agent.message", "claims_completion": True})
    assert_result(report, rule, checked=3, violations=[(2, 1, EVIDENCE), (3, 2, EVIDENCE), (5, 4, EVIDENCE)])


def test_completion_type_globs_are_trimmed():
    # §2.2/§2.6: every glob, list items included, is trimmed
    rule = {**RULE, "completion_types": ["  task.done  "]}
    report = check(rule, {"type": "task.done"})
    assert_result(report, rule, checked=1, violations=[(1, 0, EVIDENCE)])


def test_outcome_must_be_strictly_before_the_completion():
    report = check(RULE, {**GOOD, "claims_completion": True}, DONE)
    assert_result(report, RULE, checked=2, violations=[(1, 0, EVIDENCE)])


def test_outcome_after_completion_does_not_count():
    report = check(RULE, DONE, GOOD)
    assert_result(report, RULE, checked=1, violations=[(1, 0, EVIDENCE)])


@pytest.mark.parametrize("outcome", [
    {**GOOD, "verdict": "violated"},
    {**GOOD, "verdict": "unknown"},
    {**GOOD, "verdict": "retracted"},
    {k: v for k, v in GOOD.items() if k != "verdict"},
    {k: v for k, v in GOOD.items() if k != "evidence_class"},       # no class never qualifies
    {**GOOD, "evidence_class": "manual_attestation"},
    {**GOOD, "evidence_class": "self_attestation"},
    {**GOOD, "type": "outcome.observed.v2"},                        # type must be exact
    {**GOOD, "type": "outcome.recorded"},
])
def test_non_qualifying_outcomes(outcome):
    report = check(RULE, outcome, DONE)
    assert_result(report, RULE, checked=1, violations=[(2, 1, EVIDENCE)])


def test_custom_evidence_classes():
    rule = {**RULE, "evidence_classes": ["manual_attestation"]}
    report = check(rule, GOOD, DONE, {**GOOD, "evidence_class": "manual_attestation"}, DONE)
    assert_result(report, rule, checked=2, violations=[(2, 1, {"evidence_classes": ["manual_attestation"]})])


@pytest.mark.parametrize(("outcome_id", "counts"), [
    ("refund-7", True), ("refund-", True), ("ship-1", False), ("xrefund-7", False), (None, False)])
def test_outcome_id_filter(outcome_id, counts):
    rule = {**RULE, "outcome_id": "refund-*"}
    outcome = GOOD if outcome_id is None else {**GOOD, "outcome_id": outcome_id}
    report = check(rule, outcome, DONE)
    evidence = {"outcome_id": "refund-*", "evidence_classes": DEFAULT_CLASSES}
    assert_result(report, rule, checked=1, violations=[] if counts else [(2, 1, evidence)])


def test_any_earlier_qualifying_outcome_is_enough():
    rule = {**RULE, "outcome_id": "refund-*"}
    report = check(rule, {**GOOD, "outcome_id": "refund-1"}, {**GOOD, "outcome_id": "ship-1"},
                   {**GOOD, "outcome_id": "refund-2", "verdict": "unknown"}, DONE)
    assert_result(report, rule, checked=1, violations=[])


def test_stale_satisfied_outcome_still_counts_after_a_later_violated_one():
    report = check(RULE, {**GOOD, "outcome_id": "o1"}, {**GOOD, "outcome_id": "o1", "verdict": "violated"}, DONE)
    assert_result(report, RULE, checked=1, violations=[])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "",
                       '{"seq": 1, "type": "outcome.observed", "verdict": "satisfied",'
                       ' "evidence_class": "self_attestation"}',
                       "# the agent vouched for itself",
                       '{"seq": 2, "type": "run.completed"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(2, 1, EVIDENCE)])
    assert report.violations[0].line == 4


def test_message_names_the_completion_and_the_outcome_it_needed():
    report = check(RULE, {**GOOD, "evidence_class": "self_attestation"}, DONE)
    assert [v.message for v in report.violations] == [
        "run.completed claimed completion with no earlier satisfied outcome.observed "
        "(evidence_class externally_observed or configured_verifier)."]
    rule = {**RULE, "outcome_id": "refund-*", "evidence_classes": ["manual_attestation"]}
    report = check(rule, {"type": "agent.message", "tool": "chat.reply", "claims_completion": True})
    assert [v.message for v in report.violations] == [
        "agent.message chat.reply claimed completion with no earlier satisfied outcome.observed "
        "(outcome_id refund-*, evidence_class manual_attestation)."]
