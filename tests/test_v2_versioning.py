"""Contract version 2 seen through the CLI: what `"version"` decides, the event fields version 2 types,
and the keys v1 kinds gain under it (spec v2 §0, §1, end of §2, and §10 points 15 and 16).

Every case writes a real contract (c.json) and trace (t.jsonl) into the test's folder and runs
`check --format json`, as a user would.
"""
from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest

from support import contract as v1_contract
from support import events, jsonl

PREFIX = "agent-invariants: "
NEEDS_V2 = 'needs "version": 2'


# ----------------------------------------------------------------------------------------------
# helpers


def v2_contract(*rules: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal version-2 contract holding `rules`."""
    return {"version": 2, "name": "test-contract", "rules": list(rules), **extra}


def _shown(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit={result.returncode}\nstdout={result.stdout!r}\nstderr={result.stderr!r}"


def run_check(cli, write, document: dict[str, Any], trace: list[dict[str, Any]] | str):
    write("c.json", document)
    write("t.jsonl", trace if isinstance(trace, str) else jsonl(trace))
    return cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")


def checked(cli, write, document: dict[str, Any], trace: list[dict[str, Any]] | str, exit_code: int) -> dict[str, Any]:
    """Run a check that must produce a report with `exit_code`; return the JSON report."""
    result = run_check(cli, write, document, trace)
    assert result.returncode == exit_code, _shown(result)
    return json.loads(result.stdout)


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a run refused as bad input, without the program prefix."""
    assert result.returncode == 2, _shown(result)
    assert result.stdout == "", _shown(result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, _shown(result)
    assert lines[0].startswith(PREFIX), _shown(result)
    return lines[0][len(PREFIX):]


def names_contract_path(line: str, path: str) -> bool:
    """`c.json[:line]: <path>: …`, the way a contract problem is reported."""
    return re.match(r"c\.json(:\d+)?: " + re.escape(path) + r": ", line) is not None


def located(report: dict[str, Any]) -> list[tuple[str, Any]]:
    """(code, event_seq) of every violation, event_seq None when the violation has none."""
    return [(violation["code"], violation.get("event_seq")) for violation in report["violations"]]


def rule(rule_id: str = "r", **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, **fields}


# ----------------------------------------------------------------------------------------------
# "version": 2 with v1 kinds gives version 1's report (§0: v1 kinds inside a v2 contract keep
# identical verdicts, evidence and messages; reports keep schema check/v1 with contract.version 2)

TWELVE_V1_RULES = [
    rule("no-shell", kind="deny_tool", tool="shell.*"),
    rule("allowed", kind="allow_tools", tools=["kb.*", "payments.*"]),
    rule("approved", kind="require_approval", tool="payments.*", scope="refund*", within_events=5),
    rule("stop", kind="stop_is_final"),
    rule("evidence", kind="completion_requires_outcome"),
    rule("confidence", kind="confidence_requires_outcome", threshold=0.8, severity="warning"),
    rule("retries", kind="retry_limit", tool="kb.*", max_attempts=1, group_by="tool"),
    rule("budget", kind="event_budget", max_events=8, max_tool_calls=3, max_tool_failures=0),
    rule("order", kind="require_order", before={"type": "approval.granted"},
         after={"type": "tool.call", "tool": "payments.refund"}),
    rule("observed", kind="require_event", match={"type": "outcome.observed", "verdict": "satisfied"}),
    rule("no-failures", kind="deny_event", match={"type": "tool.result", "ok": False}, severity="warning"),
    rule("results", kind="tool_result_required", tool="kb.*"),
]

FAILING_TRACE = events(
    {"type": "tool.call", "tool": "kb.search", "call_id": "c1"},
    {"type": "tool.result", "tool": "kb.search", "call_id": "c1", "ok": False},
    {"type": "tool.call", "tool": "kb.search", "call_id": "c2"},
    {"type": "approval.granted", "approval_id": "p1", "approval_scope": "refunds"},
    {"type": "tool.call", "tool": "payments.refund", "call_id": "c3", "approval_id": "p1"},
    {"type": "control.stop"},
    {"type": "tool.call", "tool": "shell.exec", "call_id": "c4"},
    {"type": "agent.message", "claims_completion": True, "confidence": 0.9},
    {"type": "control.stop"},
    {"type": "run.completed"},
)

PASSING_TRACE = events(
    {"type": "approval.granted", "approval_id": "p1", "approval_scope": "refunds"},
    {"type": "tool.call", "tool": "payments.refund", "call_id": "c1", "approval_id": "p1"},
    {"type": "tool.result", "tool": "payments.refund", "call_id": "c1", "ok": True},
    {"type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied", "evidence_class": "externally_observed"},
    {"type": "run.completed"},
)

# The failing trace again, its events carrying version 2's fields, which v1 kinds without the new
# keys do not read. (`approver` is left out: it is one letter from v1's `approved`, which the
# trace notices may point out under one version and not the other.)
V2_FIELDS_BY_TYPE: dict[str, dict[str, Any]] = {
    "tool.call": {"args": {"query": "refund policy", "limit": 3}},
    "tool.result": {"result": {"hits": [1, 2]}, "duration_ms": 12.5},
    "control.stop": {"reason": "budget exceeded"},
    "run.completed": {"status": "completed", "output": {"answer": "done"}, "duration_ms": 900},
    "agent.message": {"output": None},
}
FAILING_TRACE_WITH_V2_FIELDS = [{**event, **V2_FIELDS_BY_TYPE.get(event["type"], {})} for event in FAILING_TRACE]

SAME_REPORT_CASES = {
    "failing": (FAILING_TRACE, 1),
    "passing": (PASSING_TRACE, 0),
    "failing-with-v2-event-fields": (FAILING_TRACE_WITH_V2_FIELDS, 1),
}


@pytest.mark.parametrize(("trace", "exit_code"), list(SAME_REPORT_CASES.values()), ids=list(SAME_REPORT_CASES))
def test_version_2_contract_of_v1_kinds_reports_exactly_as_version_1_apart_from_contract_version(
        cli, write, trace, exit_code):
    # one contract file rewritten in place, so nothing but the version number tells the runs apart
    as_v1 = checked(cli, write, v1_contract(*TWELVE_V1_RULES), trace, exit_code)
    as_v2 = checked(cli, write, v2_contract(*TWELVE_V1_RULES), trace, exit_code)
    assert as_v1["contract"]["version"] == 1
    assert as_v2["contract"]["version"] == 2
    as_v2["contract"]["version"] = 1
    assert as_v2 == as_v1


def test_version_2_report_keeps_the_check_v1_schema(cli, write):
    report = checked(cli, write, v2_contract(*TWELVE_V1_RULES), PASSING_TRACE, 0)
    assert report["schema"] == "agent-invariants/check/v1"
    assert report["contract"] == {"name": "test-contract", "version": 2}


# ----------------------------------------------------------------------------------------------
# what a version-1 contract may not use, and versions that do not exist (§0)

GATED_CASES = {
    "tool_args-kind": (
        [rule(kind="tool_args", tool="refund", match={"amount": 10})], "$.rules[0].kind"),
    "tool_args-kind-second-rule": (
        [rule("a", kind="deny_tool", tool="shell.*"), rule("b", kind="tool_args", tool="refund", match={"amount": 10})],
        "$.rules[1].kind"),
    "require_event-args": (
        [rule(kind="require_event", match={"type": "tool.call", "args": {"amount": 10}})], "$.rules[0].match.args"),
    "require_event-reason": (
        [rule(kind="require_event", match={"type": "control.stop", "reason": "budget*"})], "$.rules[0].match.reason"),
    "require_event-status": (
        [rule(kind="require_event", match={"type": "run.completed", "status": "done"})], "$.rules[0].match.status"),
    "deny_event-args": (
        [rule(kind="deny_event", match={"args": {"to": {"$regex": "@evil"}}})], "$.rules[0].match.args"),
    "deny_event-reason": (
        [rule(kind="deny_event", match={"type": "tool.denied", "reason": "guardrail*"})], "$.rules[0].match.reason"),
    "deny_event-status": (
        [rule(kind="deny_event", match={"status": "failed"})], "$.rules[0].match.status"),
    "require_order-before-args": (
        [rule(kind="require_order", before={"type": "tool.call", "args": {"id": "A1"}}, after={"type": "tool.call"})],
        "$.rules[0].before.args"),
    "require_order-after-status": (
        [rule(kind="require_order", before={"type": "approval.granted"},
              after={"type": "run.completed", "status": "done"})],
        "$.rules[0].after.status"),
    "require_order-before-reason": (
        [rule(kind="require_order", before={"type": "tool.denied", "reason": "x"}, after={"type": "run.failed"})],
        "$.rules[0].before.reason"),
    "stop_is_final-reasons": (
        [rule(kind="stop_is_final", reasons=["budget*"])], "$.rules[0].reasons"),
    "stop_is_final-reasons-second-rule": (
        [rule("a", kind="stop_is_final"), rule("b", kind="stop_is_final", reasons=["user*"])], "$.rules[1].reasons"),
}


@pytest.mark.parametrize(("rules", "path"), list(GATED_CASES.values()), ids=list(GATED_CASES))
def test_version_1_contract_using_a_version_2_feature_is_refused_naming_its_path(cli, write, rules, path):
    line = refused(run_check(cli, write, v1_contract(*rules), events({"type": "run.completed"})))
    assert names_contract_path(line, path), line
    assert NEEDS_V2 in line, line


@pytest.mark.parametrize("version", [3, "2", 0], ids=["3", "string-2", "0"])
def test_a_version_other_than_1_or_2_is_refused_at_dollar_version(cli, write, version):
    document = {**v1_contract(rule(kind="deny_tool", tool="shell.*")), "version": version}
    line = refused(run_check(cli, write, document, events({"type": "run.completed"})))
    assert names_contract_path(line, "$.version"), line


@pytest.mark.parametrize("version", [3, "2", True, None], ids=["3", "string-2", "true", "missing"])
def test_a_wrong_version_is_its_one_problem_not_one_per_version_2_kind(cli, write, version):
    """A contract's `version` that is missing or wrong is one line naming `$.version` (or `$`):
    its version-2 kinds are not refused on top of it as if the contract said version 1."""
    document = {**v1_contract(rule(kind="tool_order", tools=["a"])), "version": version}
    if version is None:
        del document["version"]
    result = run_check(cli, write, document, events({"type": "run.completed"}))
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert NEEDS_V2 not in line and ("$.version" in line or "missing required field `version`" in line), line


# ----------------------------------------------------------------------------------------------
# event fields under version 2 (§1 and point 16): checked on every event carrying them, whatever
# its type; a bad one is `t.jsonl:<line>: $.<field>: …` and exit 2; version 1 ignores them all

PASSING_RULE = rule(kind="deny_tool", tool="never.called")
FIRST_EVENT = {"seq": 1, "type": "run.start"}

BAD_FIELDS: list[tuple[str, str, Any, str]] = [
    # (field, event type, value, label)
    ("args", "tool.call", [], "array"),
    ("args", "tool.call", '{"amount": 1}', "string"),
    ("args", "tool.call", None, "null"),
    ("args", "approval.granted", [1], "array"),
    ("args", "agent.message", "x", "string"),
    ("duration_ms", "tool.result", -1, "negative"),
    ("duration_ms", "run.completed", -0.5, "negative-fraction"),
    ("duration_ms", "tool.result", "5", "string"),
    ("duration_ms", "run.completed", True, "true"),
    ("duration_ms", "tool.result", None, "null"),
    ("duration_ms", "agent.message", -3, "negative"),
    ("status", "run.completed", "", "empty"),
    ("status", "run.failed", "s" * 101, "101-chars"),
    ("status", "run.completed", 200, "number"),
    ("status", "run.failed", None, "null"),
    ("status", "tool.call", "", "empty"),
    ("approver", "approval.granted", "", "empty"),
    ("approver", "approval.granted", "a" * 501, "501-chars"),
    ("approver", "approval.granted", None, "null"),
    ("approver", "approval.granted", True, "boolean"),
    ("approver", "agent.message", "", "empty"),
    ("reason", "control.stop", "", "empty"),
    ("reason", "run.failed", "r" * 501, "501-chars"),
    ("reason", "tool.denied", None, "null"),
    ("reason", "approval.revoked", 7, "number"),
    ("reason", "tool.call", "r" * 501, "501-chars"),
]
BAD_IDS = [f"{field}-{kind}-{label}" for field, kind, _, label in BAD_FIELDS]


def _trace_with(field: str, event_type: str, value: Any) -> str:
    """Line 1 a plain event, line 2 an event of `event_type` carrying `field`."""
    return jsonl([FIRST_EVENT, {"seq": 2, "type": event_type, field: value}])


@pytest.mark.slow
@pytest.mark.parametrize(("field", "event_type", "value", "_label"), BAD_FIELDS, ids=BAD_IDS)
def test_version_2_refuses_a_badly_typed_event_field_naming_file_line_and_field(
        cli, write, field, event_type, value, _label):
    line = refused(run_check(cli, write, v2_contract(PASSING_RULE), _trace_with(field, event_type, value)))
    assert line.startswith(f"t.jsonl:2: $.{field}: "), line


@pytest.mark.slow
@pytest.mark.parametrize(("field", "event_type", "value", "_label"), BAD_FIELDS, ids=BAD_IDS)
def test_version_1_ignores_the_version_2_event_fields_whatever_their_values(
        cli, write, field, event_type, value, _label):
    report = checked(cli, write, v1_contract(PASSING_RULE), _trace_with(field, event_type, value), 0)
    assert report["passed"] is True
    assert report["violations"] == []


GOOD_FIELDS: list[tuple[str, str, Any, str]] = [
    ("args", "tool.call", {}, "empty-object"),
    ("args", "approval.granted", {"amount": 10, "items": [{"sku": None}]}, "nested"),
    ("args", "agent.message", {"a": 1}, "object"),
    ("duration_ms", "tool.result", 0, "zero"),
    ("duration_ms", "run.completed", 2.5, "fraction"),
    ("duration_ms", "agent.message", 1000000, "large"),
    ("status", "run.completed", "x", "1-char"),
    ("status", "run.failed", "s" * 100, "100-chars"),
    ("status", "tool.call", "awaiting_approval", "word"),
    ("approver", "approval.granted", "a" * 500, "500-chars"),
    ("approver", "agent.message", "alice", "word"),
    ("reason", "control.stop", "r" * 500, "500-chars"),
    ("reason", "run.failed", "x", "1-char"),
    ("reason", "agent.message", "user cancelled", "words"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("field", "event_type", "value", "_label"), GOOD_FIELDS,
                         ids=[f"{field}-{kind}-{label}" for field, kind, _, label in GOOD_FIELDS])
def test_version_2_accepts_a_well_typed_event_field_on_any_event(cli, write, field, event_type, value, _label):
    report = checked(cli, write, v2_contract(PASSING_RULE), _trace_with(field, event_type, value), 0)
    assert report["passed"] is True


ANY_JSON = {"null": None, "zero": 0, "negative": -1.5, "empty-string": "", "false": False,
            "empty-array": [], "array": [1, "a", None], "object": {"k": {"n": None}}}
RESULT_OUTPUT_CASES = [(field, event_type, value, f"{field}-{event_type}-{label}")
                       for field, event_type in [("result", "tool.result"), ("result", "agent.message"),
                                                 ("output", "run.completed"), ("output", "run.failed"),
                                                 ("output", "agent.message")]
                       for label, value in ANY_JSON.items()]


@pytest.mark.slow
@pytest.mark.parametrize(("field", "event_type", "value", "_label"), RESULT_OUTPUT_CASES,
                         ids=[case[3] for case in RESULT_OUTPUT_CASES])
def test_version_2_accepts_any_json_including_null_as_result_and_output(cli, write, field, event_type, value, _label):
    report = checked(cli, write, v2_contract(PASSING_RULE), _trace_with(field, event_type, value), 0)
    assert report["passed"] is True


def test_version_2_checks_an_event_field_on_a_later_event_too(cli, write):
    trace = jsonl([FIRST_EVENT, {"seq": 2, "type": "control.stop", "reason": "budget"},
                   {"seq": 3, "type": "agent.message"}, {"seq": 4, "type": "control.stop", "reason": ""}])
    line = refused(run_check(cli, write, v2_contract(PASSING_RULE), trace))
    assert line.startswith("t.jsonl:4: $.reason: "), line


# ----------------------------------------------------------------------------------------------
# v1 kinds under version 2: matcher `args` (end of §2)


def test_matcher_args_selects_only_events_whose_args_match_the_tree(cli, write):
    deny = rule(kind="deny_event", match={"type": "tool.call",
                                          "args": {"order": {"$regex": "^A"}, "amount": {"$gt": 100}}})
    trace = events(
        {"type": "tool.call", "tool": "refund", "args": {"order": "A1", "amount": 500, "note": "subset"}},
        {"type": "tool.call", "tool": "refund", "args": {"order": "A2", "amount": 50}},
        {"type": "tool.call", "tool": "refund", "args": {"order": "B1", "amount": 500}},
        {"type": "tool.call", "tool": "refund", "args": {"order": "A3", "amount": "500"}},
        {"type": "tool.call", "tool": "refund", "args": {"order": "A4"}},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 1)]


def test_matcher_args_never_matches_an_event_without_args(cli, write):
    # `$exists: false` accepts an absent key, but an event with no args at all never matches
    deny = rule(kind="deny_event", match={"args": {"x": {"$exists": False}}})
    trace = events(
        {"type": "tool.call", "tool": "refund"},
        {"type": "agent.message"},
        {"type": "tool.call", "tool": "refund", "args": {}},
        {"type": "tool.result", "ok": True},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 3)]


REFERENCES = {
    "from_result": {"$from_result": {"tool": "get", "path": "paid"}},
    "arg": {"$arg": "order"},
    "from_output": {"$from_output": "total"},
}


@pytest.mark.parametrize("reference", list(REFERENCES.values()), ids=list(REFERENCES))
def test_a_reference_inside_matcher_args_is_a_load_error(cli, write, reference):
    deny = rule(kind="deny_event", match={"type": "tool.call", "args": {"amount": reference}})
    line = refused(run_check(cli, write, v2_contract(deny), events({"type": "run.completed"})))
    assert line.startswith("c.json"), line
    assert "$.rules[0].match.args.amount" in line, line


def test_matcher_tool_on_a_tool_result_reads_only_the_results_own_tool(cli, write):
    deny = rule(kind="deny_event", match={"type": "tool.result", "tool": "get"})
    trace = events(
        {"type": "tool.call", "tool": "get", "call_id": "c1"},
        {"type": "tool.result", "call_id": "c1", "ok": True},
        {"type": "tool.call", "tool": "get", "call_id": "c2"},
        {"type": "tool.result", "tool": "get", "call_id": "c2", "ok": True},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 4)]


def test_matcher_args_on_a_tool_result_reads_only_the_results_own_args(cli, write):
    deny = rule(kind="deny_event", match={"type": "tool.result", "args": {"id": "A"}})
    trace = events(
        {"type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A"}},
        {"type": "tool.result", "tool": "get", "call_id": "c1", "ok": True},
        {"type": "tool.result", "tool": "get", "call_id": "c9", "ok": True, "args": {"id": "A"}},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 3)]


def test_require_event_counts_only_events_whose_args_match(cli, write):
    require = rule(kind="require_event", min=0, max=1,
                   match={"type": "tool.call", "tool": "refund", "args": {"amount": {"$gt": 100}}})
    trace = events(
        {"type": "tool.call", "tool": "refund", "args": {"amount": 50}},
        {"type": "tool.call", "tool": "refund", "args": {"amount": 500}},
        {"type": "tool.call", "tool": "refund"},
        {"type": "tool.call", "tool": "refund", "args": {"amount": 200}},
    )
    report = checked(cli, write, v2_contract(require), trace, 1)
    assert located(report) == [("require_event.max", 2)]
    assert report["violations"][0]["evidence"]["found"] == 2


def test_require_order_before_matches_only_with_its_args(cli, write):
    order = rule(kind="require_order", before={"type": "tool.call", "tool": "verify", "args": {"order": "A1"}},
                 after={"type": "tool.call", "tool": "refund"})
    trace = events(
        {"type": "tool.call", "tool": "verify", "args": {"order": "A2"}},
        {"type": "tool.call", "tool": "verify"},
        {"type": "tool.call", "tool": "refund", "args": {"order": "A1"}},
    )
    report = checked(cli, write, v2_contract(order), trace, 1)
    assert located(report) == [("require_order.missing", 3)]


# ----------------------------------------------------------------------------------------------
# v1 kinds under version 2: matcher `reason` and `status` globs, on the event's own field (point 15)


def test_matcher_reason_is_a_glob_on_the_events_own_reason(cli, write):
    deny = rule(kind="deny_event", match={"type": "control.stop", "reason": "budget*"})
    trace = events(
        {"type": "control.stop", "reason": "budget exceeded"},
        {"type": "control.stop", "reason": "user cancelled"},
        {"type": "control.stop"},
        {"type": "control.stop", "reason": "Budget exceeded"},
        {"type": "control.stop", "reason": "over budget"},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 1)]


def test_matcher_reason_reads_it_on_any_event_type(cli, write):
    deny = rule(kind="deny_event", match={"reason": "guardrail*"})
    trace = events(
        {"type": "tool.denied", "tool": "shell.exec", "reason": "guardrail: shell"},
        {"type": "approval.revoked", "reason": "user"},
        {"type": "agent.message", "reason": "guardrail"},
        {"type": "run.failed", "reason": "guardrail tripped"},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 1), ("deny_event.matched", 3), ("deny_event.matched", 4)]


def test_require_event_with_reason_finds_nothing_when_no_reason_matches(cli, write):
    require = rule(kind="require_event", match={"type": "control.stop", "reason": "user*"})
    trace = events({"type": "control.stop", "reason": "budget"}, {"type": "control.stop"}, {"type": "run.completed"})
    report = checked(cli, write, v2_contract(require), trace, 1)
    assert located(report) == [("require_event.min", None)]
    assert report["violations"][0]["evidence"]["found"] == 0


def test_require_order_with_reason_in_both_matchers(cli, write):
    order = rule(kind="require_order", before={"type": "tool.denied", "reason": "guardrail*"},
                 after={"type": "run.failed", "reason": "guardrail*"})
    trace = events(
        {"type": "tool.denied", "tool": "shell.exec", "reason": "user"},
        {"type": "run.failed", "reason": "budget"},
        {"type": "run.failed", "reason": "guardrail: pii"},
    )
    report = checked(cli, write, v2_contract(order), trace, 1)
    assert located(report) == [("require_order.missing", 3)]


def test_matcher_status_is_a_glob_on_the_events_own_status(cli, write):
    deny = rule(kind="deny_event", match={"type": "run.*", "status": "await*"})
    trace = events(
        {"type": "run.completed", "status": "awaiting_approval"},
        {"type": "run.completed", "status": "completed"},
        {"type": "run.failed", "status": "awaiting"},
        {"type": "run.completed"},
    )
    report = checked(cli, write, v2_contract(deny), trace, 1)
    assert located(report) == [("deny_event.matched", 1), ("deny_event.matched", 3)]


@pytest.mark.parametrize(("status", "event_type"), [("failed", "run.failed"), ("completed", "run.completed")])
def test_matcher_status_never_sees_a_derived_run_status(cli, write, status, event_type):
    deny = rule(kind="deny_event", match={"status": status})
    report = checked(cli, write, v2_contract(deny), events({"type": event_type}), 0)
    assert report["violations"] == []


def test_require_event_with_status_does_not_count_a_terminal_without_its_own_status(cli, write):
    require = rule(kind="require_event", match={"type": "run.completed", "status": "completed"})
    report = checked(cli, write, v2_contract(require), events({"type": "run.completed"}), 1)
    assert located(report) == [("require_event.min", None)]


def test_require_order_after_matches_only_with_its_status(cli, write):
    order = rule(kind="require_order", before={"type": "approval.granted"},
                 after={"type": "run.completed", "status": "done*"})
    trace = events({"type": "run.completed", "status": "aborted"}, {"type": "run.completed"},
                   {"type": "run.completed", "status": "done"})
    report = checked(cli, write, v2_contract(order), trace, 1)
    assert located(report) == [("require_order.missing", 3)]


# ----------------------------------------------------------------------------------------------
# stop_is_final with `reasons` (end of §2 and point 15): only matching stops count


def test_stop_is_final_with_reasons_ignores_a_stop_whose_reason_does_not_match(cli, write):
    stop = rule(kind="stop_is_final", reasons=["budget*"])
    trace = events({"type": "control.stop", "reason": "user cancelled"},
                   {"type": "tool.call", "tool": "shell.exec"}, {"type": "agent.message"})
    report = checked(cli, write, v2_contract(stop), trace, 0)
    assert report["violations"] == []


def test_stop_is_final_with_reasons_flags_events_after_a_matching_stop(cli, write):
    stop = rule(kind="stop_is_final", reasons=["budget*"])
    trace = events({"type": "control.stop", "reason": "budget exceeded"}, {"type": "tool.call", "tool": "shell.exec"},
                   {"type": "run.completed"})
    report = checked(cli, write, v2_contract(stop), trace, 1)
    assert located(report) == [("stop_is_final.after_stop", 2)]
    assert report["violations"][0]["evidence"]["stop_seq"] == 1


def test_stop_is_final_with_reasons_never_counts_a_stop_without_a_reason(cli, write):
    stop = rule(kind="stop_is_final", reasons=["*"])
    trace = events({"type": "control.stop"}, {"type": "tool.call", "tool": "shell.exec"})
    report = checked(cli, write, v2_contract(stop), trace, 0)
    assert report["violations"] == []


def test_stop_is_final_with_reasons_a_non_matching_stop_does_not_flag_a_later_stop(cli, write):
    # v1 would report seq 2 (a repeated stop) and seq 3 twice; the user's cancel does not count
    stop = rule(kind="stop_is_final", reasons=["budget*"])
    trace = events({"type": "control.stop", "reason": "user cancelled"},
                   {"type": "control.stop", "reason": "budget exceeded"},
                   {"type": "tool.call", "tool": "shell.exec"})
    report = checked(cli, write, v2_contract(stop), trace, 1)
    assert located(report) == [("stop_is_final.after_stop", 3)]
    assert report["violations"][0]["evidence"]["stop_seq"] == 2


def test_stop_is_final_with_reasons_checks_only_matching_stops(cli, write):
    stop = rule(kind="stop_is_final", reasons=["budget*", "guard*"], allowed_after=["control.stop"])
    trace = events({"type": "control.stop", "reason": "budget"}, {"type": "control.stop", "reason": "user"},
                   {"type": "control.stop", "reason": "guardrail"}, {"type": "control.stop"})
    report = checked(cli, write, v2_contract(stop), trace, 0)
    assert report["results"][0]["checked"] == 2


def test_stop_is_final_without_reasons_under_version_2_counts_every_stop_as_version_1_does(cli, write):
    stop = rule(kind="stop_is_final")
    trace = events({"type": "control.stop", "reason": "user cancelled"},
                   {"type": "control.stop", "reason": "budget exceeded"},
                   {"type": "tool.call", "tool": "shell.exec"})
    report = checked(cli, write, v2_contract(stop), trace, 1)
    assert located(report) == [("stop_is_final.after_stop", 2), ("stop_is_final.after_stop", 3),
                               ("stop_is_final.after_stop", 3)]
    assert [violation["evidence"]["stop_seq"] for violation in report["violations"]] == [1, 1, 2]
    assert report["results"][0]["checked"] == 2
