"""require_approval (spec §4.3): a gated call needs an earlier granted approval with matching id AND scope."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract, events, jsonl

KIND = "require_approval"
RULE = {"id": "pay-approval", "kind": KIND, "tool": "payments.*"}
SCOPED = {**RULE, "scope": "payments.*"}
CALL = {"type": "tool.call", "tool": "payments.refund"}
GRANT = {"type": "approval.granted"}
FILLER = {"type": "agent.message"}


def test_passing_trace():
    report = check(RULE,
                   {"type": "approval.requested"},
                   {**GRANT, "approval_id": "a1", "approval_scope": "anything", "approved": True},
                   {"type": "tool.call", "tool": "kb.search"},      # not gated: not checked
                   CALL)
    assert_result(report, RULE, checked=1, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_call_without_prior_grant_is_a_violation():
    report = check(RULE,
                   {"type": "approval.requested"},
                   CALL,
                   GRANT,                                           # too late
                   {"type": "tool.call", "tool": "kb.search"},
                   start=20)
    assert_result(report, RULE, checked=1, violations=[(21, 1, {"tool": "payments.refund"})])
    assert report.passed is False
    assert "payments.refund" in report.violations[0].message


def test_evidence_carries_approval_id_scope_and_window_in_order():
    rule = {**SCOPED, "within_events": 5}
    report = check(rule, {**CALL, "approval_id": "a9"})
    assert_result(report, rule, checked=1, violations=[
        (1, 0, {"tool": "payments.refund", "approval_id": "a9", "required_scope": "payments.*", "within_events": 5}),
    ])


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, CALL, CALL)
    assert_result(report, rule, checked=2, violations=[
        (1, 0, {"tool": "payments.refund"}), (2, 1, {"tool": "payments.refund"})])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 2)


@pytest.mark.parametrize(("grant", "call_id", "approved"), [
    ({"approval_id": "a1", "approval_scope": "payments.refund"}, "a1", True),
    ({"approval_id": "a1", "approval_scope": "crm.write"}, "a1", False),       # id matches, scope does not
    ({"approval_id": "a2", "approval_scope": "payments.refund"}, "a1", False),  # scope matches, id does not
    ({"approval_scope": "payments.refund"}, "a1", False),                      # grant has no id
    ({"approval_id": "a1"}, "a1", False),                                      # grant has no scope
    ({"approval_id": "a2", "approval_scope": "payments.refund"}, None, True),  # call has no id: no id condition
    ({"approval_scope": "payments.x"}, None, True),
    ({}, None, False),                                                         # scope required, none given
])
def test_approval_id_and_scope_are_both_required(grant, call_id, approved):
    call = CALL if call_id is None else {**CALL, "approval_id": call_id}
    report = check(SCOPED, {**GRANT, **grant}, call)
    evidence = {"tool": "payments.refund"}
    if call_id is not None:
        evidence["approval_id"] = call_id
    evidence["required_scope"] = "payments.*"
    assert_result(report, SCOPED, checked=1, violations=[] if approved else [(2, 1, evidence)])


def test_without_rule_scope_the_grant_scope_is_ignored():
    report = check(RULE, {**GRANT, "approval_id": "a1"}, {**CALL, "approval_id": "a1"},
                   {**GRANT, "approval_id": "b", "approval_scope": "crm.*"}, {**CALL, "approval_id": "b"})
    assert_result(report, RULE, checked=2, violations=[])


def test_call_id_must_equal_grant_id():
    report = check(RULE, {**GRANT, "approval_id": "a1"}, {**CALL, "approval_id": "a10"})
    assert_result(report, RULE, checked=1, violations=[(2, 1, {"tool": "payments.refund", "approval_id": "a10"})])


def test_denied_grant_is_skipped_and_search_continues_to_older_grant():
    report = check(SCOPED,
                   {**GRANT, "approval_id": "g0", "approval_scope": "payments.refund", "approved": True},
                   {**GRANT, "approval_id": "g0", "approval_scope": "payments.refund", "approved": False},
                   {**CALL, "approval_id": "g0"},
                   {**GRANT, "approval_id": "g1", "approval_scope": "payments.refund", "approved": False},
                   CALL)
    assert_result(report, SCOPED, checked=2, violations=[])


def test_only_denied_grants_do_not_approve():
    report = check(RULE, {**GRANT, "approved": False}, {**GRANT, "approval_id": "a1", "approved": False},
                   {**CALL, "approval_id": "a1"}, CALL)
    assert_result(report, RULE, checked=2, violations=[
        (3, 2, {"tool": "payments.refund", "approval_id": "a1"}), (4, 3, {"tool": "payments.refund"})])


def test_grant_without_approved_field_counts():
    report = check(RULE, GRANT, CALL)
    assert_result(report, RULE, checked=1, violations=[])


@pytest.mark.parametrize("grant_type", [
    "approval.requested", "approval.granted.v2", "approval.grant", "Approval.granted", "tool.result"])
def test_only_type_approval_granted_is_a_grant(grant_type):
    report = check(RULE, {"type": grant_type, "approval_id": "a1", "approved": True}, CALL)
    assert_result(report, RULE, checked=1, violations=[(2, 1, {"tool": "payments.refund"})])


def test_revocations_and_denials_are_not_interpreted():
    report = check(RULE, {**GRANT, "approval_id": "a1"}, {"type": "approval.revoked", "approval_id": "a1"},
                   {"type": "approval.denied", "approval_id": "a1"}, {**CALL, "approval_id": "a1"})
    assert_result(report, RULE, checked=1, violations=[])


@pytest.mark.parametrize(("fillers", "approved"), [(0, True), (1, True), (2, False), (5, False)])
def test_window_counts_positions(fillers, approved):
    # within_events 2: the grant may sit at position i-2 or later
    rule = {**RULE, "within_events": 2}
    index = fillers + 1
    report = check(rule, GRANT, *[FILLER] * fillers, CALL)
    expected = [] if approved else [(index + 1, index, {"tool": "payments.refund", "within_events": 2})]
    assert_result(report, rule, checked=1, violations=expected)


def test_window_ignores_seq_gaps():
    rule = {"id": "fresh-approval", "kind": KIND, "tool": "deploy.*", "within_events": 1}
    report = check_trace(contract(rule), [
        {"seq": 5, "type": "approval.granted", "approval_id": "g", "approved": True},
        {"seq": 90000, "type": "tool.call", "tool": "deploy.prod", "call_id": "d1"}])
    assert_result(report, rule, checked=1, violations=[])


def test_window_is_positions_even_when_seq_is_close():
    rule = {**RULE, "within_events": 1}
    report = check_trace(contract(rule), [
        {"seq": 0, **GRANT}, {"seq": 1, **FILLER}, {"seq": 2, **CALL}])
    assert_result(report, rule, checked=1, violations=[(2, 2, {"tool": "payments.refund", "within_events": 1})])


@pytest.mark.parametrize("window", [3, 50, 100_000])
def test_window_is_clamped_to_trace_start(window):
    rule = {**RULE, "within_events": window}
    report = check(rule, GRANT, FILLER, CALL)
    assert_result(report, rule, checked=1, violations=[])
    report = check(rule, FILLER, CALL)
    assert_result(report, rule, checked=1, violations=[(2, 1, {"tool": "payments.refund", "within_events": window})])


def test_window_with_ids_needs_the_matching_id_inside_the_window():
    rule = {**RULE, "within_events": 2}
    report = check(rule,
                   {**GRANT, "approval_id": "a1"},          # 0: outside the window of the call at 3
                   {**GRANT, "approval_id": "a2"},          # 1
                   {**GRANT, "approval_id": "a2"},          # 2
                   {**CALL, "approval_id": "a1"},           # 3: fails
                   {**CALL, "approval_id": "a2"},           # 4: a2 at 2 is inside
                   {**GRANT, "approval_id": "a1"},          # 5
                   FILLER,                                  # 6
                   {**CALL, "approval_id": "a1"})           # 7: a1 at 5 is inside
    assert_result(report, rule, checked=3, violations=[
        (4, 3, {"tool": "payments.refund", "approval_id": "a1", "within_events": 2})])


def test_denied_grant_inside_window_does_not_hide_older_grant_inside_window():
    rule = {**RULE, "within_events": 3}
    report = check(rule, GRANT, FILLER, {**GRANT, "approved": False}, CALL)
    assert_result(report, rule, checked=1, violations=[])
    rule = {**RULE, "within_events": 2}
    report = check(rule, GRANT, FILLER, {**GRANT, "approved": False}, CALL)
    assert_result(report, rule, checked=1, violations=[(4, 3, {"tool": "payments.refund", "within_events": 2})])


def test_nearest_grant_failing_scope_does_not_hide_older_matching_grant():
    report = check(SCOPED, {**GRANT, "approval_scope": "payments.refund"},
                   {**GRANT, "approval_scope": "crm.write"}, CALL)
    assert_result(report, SCOPED, checked=1, violations=[])


def test_grants_are_never_consumed():
    report = check(RULE, {**GRANT, "approval_id": "a1"},
                   {**CALL, "approval_id": "a1"}, {**CALL, "approval_id": "a1"}, CALL,
                   {"type": "tool.call", "tool": "payments.void"})
    assert_result(report, RULE, checked=4, violations=[])


def test_grant_tool_is_not_compared_with_call_tool():
    report = check(RULE, {**GRANT, "tool": "kb.search", "approval_id": "a1"}, {**CALL, "approval_id": "a1"})
    assert_result(report, RULE, checked=1, violations=[])


def test_tool_less_calls_are_never_checked():
    rule = {"id": "everything", "kind": KIND, "tool": "*"}
    report = check(rule, {"type": "tool.call", "call_id": "c1"}, {"type": "tool.call", "tool": "x"})
    assert_result(report, rule, checked=1, violations=[(2, 1, {"tool": "x"})])


def test_only_calls_lacking_approval_are_reported_in_order():
    report = check(RULE,
                   CALL,                                            # fails
                   {**GRANT, "approval_id": "a1"},
                   CALL,                                            # passes: no id condition
                   {**CALL, "approval_id": "a7"},                   # fails: no a7 grant
                   {"type": "tool.call", "tool": "payments.void", "approval_id": "a1"})
    assert_result(report, RULE, checked=4, violations=[
        (1, 0, {"tool": "payments.refund"}),
        (4, 3, {"tool": "payments.refund", "approval_id": "a7"})])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "# approvals",
                       '{"seq": 1, "type": "approval.granted", "approval_id": "a1", "approval_scope": "crm.write"}',
                       "",
                       "",
                       '{"seq": 2, "type": "tool.call", "tool": "payments.refund", "approval_id": "a1"}')
    report = check_trace(contract(SCOPED), str(path))
    assert_result(report, SCOPED, checked=1, violations=[
        (2, 1, {"tool": "payments.refund", "approval_id": "a1", "required_scope": "payments.*"})])
    assert report.violations[0].line == 5


# -- the message says why no grant counted ---------------------------------------------------------

WHY = "Tool payments.refund was called without a matching prior approval: "


def whys(report) -> list[str]:
    messages = [v.message for v in report.violations]
    assert all(message.startswith(WHY) for message in messages), messages
    return [message.removeprefix(WHY) for message in messages]


def test_message_when_no_grant_came_before():
    report = check(RULE, CALL, {"type": "approval.requested"}, {**GRANT, "approved": False})
    assert whys(report) == ["no approval.granted came before it."]


def test_message_names_the_first_later_grant_that_would_have_counted():
    report = check(SCOPED,
                   {**CALL, "approval_id": "a1"},                                       # 1
                   CALL,                                                                # 2
                   {**CALL, "approval_id": "a9"},                                       # 3: never granted
                   {**GRANT, "approval_id": "a1", "approval_scope": "crm.write"},       # 4: scope
                   {**GRANT, "approval_id": "a1", "approval_scope": "payments.x", "approved": False},   # 5
                   {**GRANT, "approval_id": "a2", "approval_scope": "payments.x"},      # 6: covers call 2
                   {**GRANT, "approval_id": "a1", "approval_scope": "payments.y"},      # 7: covers call 1
                   {**GRANT, "approval_id": "a1", "approval_scope": "payments.z"})      # 8
    assert whys(report) == [
        "no approval.granted came before it (one that would have counted came later, at seq 7).",
        "no approval.granted came before it (one that would have counted came later, at seq 6).",
        "no approval.granted came before it.",
    ]


@pytest.mark.parametrize(("rule", "grant", "call", "why"), [
    (RULE, {"approved": False}, {}, "approved is false"),
    (SCOPED, {"approval_scope": "crm.write"}, {}, "approval_scope crm.write does not match payments.*"),
    (SCOPED, {}, {}, "no approval_scope to match payments.*"),
    (RULE, {"approval_id": "a2"}, {"approval_id": "a1"}, "approval_id a2 is not the call's a1"),
    (RULE, {}, {"approval_id": "a1"}, "no approval_id where the call has a1"),
    (SCOPED, {"approval_id": "a2", "approval_scope": "crm.write", "approved": False}, {"approval_id": "a1"},
     "approved is false; approval_id a2 is not the call's a1; approval_scope crm.write does not match payments.*"),
])
def test_message_gives_every_reason_the_grant_did_not_count(rule, grant, call, why):
    report = check(rule, {**GRANT, **grant}, {**CALL, **call}, start=4)
    assert whys(report) == [f"approval.granted at seq 4 did not count ({why})."]


def test_message_names_a_grant_outside_the_window():
    rule = {**SCOPED, "within_events": 2}
    report = check(rule,
                   {**GRANT, "approval_scope": "payments.refund"},                      # 1
                   FILLER, FILLER,
                   CALL,                                                                # 4: 3 events after it
                   {**GRANT, "approval_id": "a1", "approval_scope": "payments.refund"},  # 5
                   {**GRANT, "approval_scope": "crm.write"},                            # 6: nearer, but no use
                   FILLER, FILLER, FILLER,
                   {**CALL, "approval_id": "a1"})                                       # 10
    assert whys(report) == [
        "approval.granted at seq 1 did not count (3 events before the call, over within_events 2).",
        "approval.granted at seq 5 did not count (5 events before the call, over within_events 2).",
    ]


def test_message_names_a_grant_with_the_calls_id_that_left_the_window():
    rule = {**RULE, "within_events": 2}
    report = check(rule, {**GRANT, "approval_id": "a1"}, FILLER, FILLER,
                   {**GRANT, "approval_id": "a2"},          # pushes a1's grant out of the window
                   {**CALL, "approval_id": "a1"})
    assert whys(report) == ["approval.granted at seq 1 did not count (4 events before the call, over within_events 2)."]


def test_message_names_the_newest_usable_grant_when_the_newest_grant_is_for_another_id():
    report = check(SCOPED,
                   {**GRANT, "approval_id": "a2", "approval_scope": "payments.refund"},  # 1: usable, other id
                   {**GRANT, "approval_id": "a3", "approval_scope": "crm.write"},        # 2: other id, no use
                   {**CALL, "approval_id": "a1"},
                   {**GRANT, "approval_id": "a1", "approval_scope": "crm.write"},        # 4: the call's id
                   {**CALL, "approval_id": "a1"})
    assert whys(report) == [
        "approval.granted at seq 1 did not count (approval_id a2 is not the call's a1).",
        "approval.granted at seq 4 did not count (approval_scope crm.write does not match payments.*).",
    ]


def test_message_prints_seq_as_javascript_does():
    report = check_trace(contract(RULE), [{"seq": 3.0, **GRANT, "approved": False}, {"seq": 4, **CALL}])
    assert whys(report) == ["approval.granted at seq 3 did not count (approved is false)."]


def test_message_names_later_grants_for_the_kept_violations_only():
    report = check_trace(contract(RULE), events(CALL, CALL, CALL, GRANT), max_violations=2)
    assert report.results[0].violations_total == 3
    later = "no approval.granted came before it (one that would have counted came later, at seq 4)."
    assert whys(report) == [later, later]


def test_cli_text_report_says_why_the_grant_did_not_count(cli, write):
    write("contract.json", contract({**SCOPED, "within_events": 10}))
    write("trace.jsonl", jsonl(events({**GRANT, "approval_id": "ap-1", "approval_scope": "crm.write"},
                                      {**CALL, "approval_id": "ap-1"})))
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl")
    assert result.returncode == 1, result.stderr
    assert (f"trace.jsonl:2  seq 2  [require_approval.missing] {WHY}approval.granted at seq 1 did not count "
            "(approval_scope crm.write does not match payments.*).") in result.stdout


# Whatever the trace, the message is true: it names a grant before the call with exactly the
# reasons it did not count, or says none came before (and names the first later one that would
# have counted).

def glob(pattern: str, value: str | None) -> bool:
    """The scopes drawn below are `payments.*` or nothing."""
    assert pattern == "payments.*"
    return value is not None and value.startswith("payments.")


def _counts(rule: dict, grant: dict, call: dict) -> bool:
    scope = rule.get("scope")
    return (grant.get("approved") is not False
            and ("approval_id" not in call or grant.get("approval_id") == call["approval_id"])
            and (scope is None or glob(scope, grant.get("approval_scope"))))


def _reasons(rule: dict, grant: dict, call: dict, distance: int) -> list[str]:
    reasons = []
    if grant.get("approved") is False:
        reasons.append("approved is false")
    if "approval_id" in call and grant.get("approval_id") != call["approval_id"]:
        reasons.append(f"approval_id {grant['approval_id']} is not the call's {call['approval_id']}"
                       if "approval_id" in grant else f"no approval_id where the call has {call['approval_id']}")
    scope = rule.get("scope")
    if scope is not None and "approval_scope" not in grant:
        reasons.append(f"no approval_scope to match {scope}")
    elif scope is not None and not glob(scope, grant["approval_scope"]):
        reasons.append(f"approval_scope {grant['approval_scope']} does not match {scope}")
    window = rule.get("within_events")
    if window is not None and distance > window:
        reasons.append(f"{distance} events before the call, over within_events {window}")
    return reasons


approval_traces = st.lists(st.one_of(
    st.just(FILLER),
    st.builds(lambda fields: {"type": "tool.call", "tool": "payments.refund", **fields},
              st.fixed_dictionaries({}, optional={"approval_id": st.sampled_from(["a1", "a2"])})),
    st.builds(lambda fields: {"type": "approval.granted", **fields}, st.fixed_dictionaries({}, optional={
        "approval_id": st.sampled_from(["a1", "a2", "a3"]), "approved": st.booleans(),
        "approval_scope": st.sampled_from(["payments.refund", "crm.write"])})),
), max_size=24)


@settings(max_examples=400, deadline=None)
@given(trace=approval_traces, scope=st.sampled_from([None, "payments.*"]),
       window=st.sampled_from([None, 1, 2, 3, 5]))
def test_message_is_true_for_any_trace(trace, scope, window):
    rule = {**RULE, **({} if scope is None else {"scope": scope}),
            **({} if window is None else {"within_events": window})}
    evs = events(*trace)
    for violation in check_trace(contract(rule), evs).violations:
        i = violation.event_index
        call = evs[i]
        why = violation.message.removeprefix(WHY)
        assert why != violation.message
        grants = [j for j in range(i) if evs[j]["type"] == "approval.granted"]
        named = re.fullmatch(r"approval\.granted at seq (\d+) did not count \((.+)\)\.", why)
        if named is None:
            assert not grants, why
            later = next((evs[j] for j in range(i + 1, len(evs))
                          if evs[j]["type"] == "approval.granted" and _counts(rule, evs[j], call)), None)
            assert why == ("no approval.granted came before it." if later is None else
                           f"no approval.granted came before it (one that would have counted came later, at seq "
                           f"{later['seq']}).")
        else:
            j = int(named[1]) - 1
            assert j in grants, why
            reasons = _reasons(rule, evs[j], call, i - j)
            assert reasons and named[2] == "; ".join(reasons)
