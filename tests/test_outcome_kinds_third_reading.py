"""A third reading of spec v2 §3.4 `tool_calls`, §3.7 outcome checks (`output_match`,
`output_schema`, `run_status`), §3.8 conditional obligations (`required_when`, `forbidden_when`) and
§3.9 `failure_handled`, with the §10 points that touch them, hunting the corners: traces with no
terminal event or several, string / object / null / absent outputs, empty traces, conditions met
more than once or after the obligation, windows, retries and fallbacks, orphan results, counts at
their bounds, `--partial`, version-1 contracts.

Every case runs `check --format json` on the CLI and compares codes, statuses, seqs, evidence,
order, `checked`, `vacuous` and the exit code with the spec's words.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import refused_line, write_contract, write_trace

Rule = dict[str, Any]
Event = dict[str, Any]


# -- helpers ---------------------------------------------------------------------------------------


def run_check(cli: Any, tmp_path: Path, rules: list[Rule], events: list[Event],
              *extra: str) -> tuple[int, dict[str, Any]]:
    """`check --format json` of a version-2 contract holding `rules` on `events` (seq = position + 1
    unless given): the exit code and the parsed report."""
    write_contract(tmp_path, rules)
    write_trace(tmp_path, events)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *extra)
    assert result.returncode in (0, 1, 3, 7), result.stderr
    return result.returncode, json.loads(result.stdout)


def refused(cli: Any, tmp_path: Path, rules: list[Rule], version: int = 2) -> str:
    """The one-line refusal of a contract holding `rules` (exit 2, nothing on stdout)."""
    write_contract(tmp_path, rules, version)
    write_trace(tmp_path, [{"type": "run.completed"}])
    return refused_line(cli)


def triples(report: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    """(code, status, event_seq) of every top-level violation, in report order."""
    return [(v["code"], v["status"], v.get("event_seq")) for v in report["violations"]]


def only(report: dict[str, Any]) -> dict[str, Any]:
    """The report's single violation."""
    assert len(report["violations"]) == 1, report["violations"]
    violation: dict[str, Any] = report["violations"][0]
    return violation


def result_of(report: dict[str, Any], rule_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [r for r in report["results"] if r["rule_id"] == rule_id]
    assert len(found) == 1
    return found[0]


def call(tool: str | None, call_id: str | None, **fields: Any) -> Event:
    event: Event = {"type": "tool.call", **fields}
    if tool is not None:
        event["tool"] = tool
    if call_id is not None:
        event["call_id"] = call_id
    return event


def res(call_id: str | None, ok: bool | None = True, **fields: Any) -> Event:
    event: Event = {"type": "tool.result", **fields}
    if call_id is not None:
        event["call_id"] = call_id
    if ok is not None:
        event["ok"] = ok
    return event


def done(**fields: Any) -> Event:
    return {"type": "run.completed", **fields}


def failed(**fields: Any) -> Event:
    return {"type": "run.failed", **fields}


def msg(**fields: Any) -> Event:
    return {"type": "agent.message", **fields}


def observed(outcome_id: str, verdict: str | None) -> Event:
    event: Event = {"type": "outcome.observed", "outcome_id": outcome_id,
                    "evidence_class": "configured_verifier"}
    if verdict is not None:
        event["verdict"] = verdict
    return event


# -- version 1 contracts (§0) ----------------------------------------------------------------------

V2_ONLY_RULES: list[Rule] = [
    {"id": "r", "kind": "tool_calls", "tool": "a", "min": 1},
    {"id": "r", "kind": "output_match", "match": {"a": 1}},
    {"id": "r", "kind": "output_schema", "schema": {"type": "object"}},
    {"id": "r", "kind": "run_status", "equals": "completed"},
    {"id": "r", "kind": "required_when", "tool": "a", "when": {"path": "x", "equals": 1}},
    {"id": "r", "kind": "forbidden_when", "tool": "a", "when": {"path": "x", "equals": 1}},
    {"id": "r", "kind": "failure_handled", "within_events": 2},
]


@pytest.mark.parametrize("rule", V2_ONLY_RULES, ids=[r["kind"] for r in V2_ONLY_RULES])
def test_version_1_contract_naming_a_new_kind_is_refused(cli: Any, tmp_path: Path, rule: Rule) -> None:
    """§0: "Any new kind ... requires it [version 2] ... new kinds or keys exit 2"."""
    line = refused(cli, tmp_path, [rule], version=1)
    assert 'needs "version": 2' in line
    assert "$.rules[0]" in line


# -- §3.4 tool_calls -------------------------------------------------------------------------------

REFUNDS_MATCH: Rule = {"id": "refunds-match", "kind": "tool_calls", "tool": "refund",
                       "count": "successful", "matches_output_length": "refunds"}


def refund_trace(second_ok: bool) -> list[Event]:
    return [call("refund", "c1", args={"order": "A1"}), res("c1", True),
            call("refund", "c2", args={"order": "A2"}), res("c2", second_ok),
            done(output={"refunds": ["A1", "A2"]})]


def test_tool_calls_example_fail(cli: Any, tmp_path: Path) -> None:
    """§3.4 example: "FAIL → seq 5 output_mismatch (count 1, length 2)"; evidence
    {tool, count, count_mode, path, output_length}; point 4: checked = counted calls."""
    code, report = run_check(cli, tmp_path, [REFUNDS_MATCH], refund_trace(second_ok=False))
    assert code == 1
    assert triples(report) == [("tool_calls.output_mismatch", "fail", 5)]
    violation = only(report)
    assert violation["event_index"] == 4
    assert violation["evidence"] == {"tool": "refund", "count": 1, "count_mode": "successful",
                                      "path": "refunds", "output_length": 2}
    assert result_of(report, "refunds-match")["checked"] == 1
    assert report["error_count"] == 1 and report["passed"] is False


def test_tool_calls_example_pass(cli: Any, tmp_path: Path) -> None:
    """§3.4 example: "PASS: seq 4 ok:true"."""
    code, report = run_check(cli, tmp_path, [REFUNDS_MATCH], refund_trace(second_ok=True))
    assert code == 0 and report["violations"] == []
    result = result_of(report, "refunds-match")
    assert result["checked"] == 2 and result.get("vacuous", False) is False


def test_tool_calls_max_sits_at_the_first_call_over(cli: Any, tmp_path: Path) -> None:
    """§3.4: "max: at the (max+1)-th call" -- one violation, not one per further call."""
    events = [call("a", f"c{i}") for i in range(4)]
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 2}],
                             events)
    assert code == 1
    assert triples(report) == [("tool_calls.max", "fail", 3)]
    evidence = only(report)["evidence"]
    assert (evidence["tool"], evidence["count_mode"], evidence["max"]) == ("a", "calls", 2)
    assert "min" not in evidence


def test_tool_calls_exactly_max_passes(cli: Any, tmp_path: Path) -> None:
    """§3.4: max is violated only at the (max+1)-th call; point 4: checked = counted calls."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 2}],
                             [call("a", "c1"), call("a", "c2"), done()])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "r")["checked"] == 2


def test_tool_calls_exactly_min_passes(cli: Any, tmp_path: Path) -> None:
    """§3.4 min: a count equal to min passes."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "min": 2}],
                             [call("a", "c1"), call("a", "c2"), done()])
    assert code == 0 and report["violations"] == []


def test_tool_calls_min_has_no_seq(cli: Any, tmp_path: Path) -> None:
    """§3.4: "min: no seq"; point 2; evidence {tool, count, count_mode, min}."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "min": 2}],
                             [call("a", "c1"), done()])
    assert code == 1
    violation = only(report)
    assert (violation["code"], violation["status"]) == ("tool_calls.min", "fail")
    assert "event_seq" not in violation and "event_index" not in violation
    assert violation["evidence"]["count"] == 1 and violation["evidence"]["min"] == 2
    assert violation["evidence"]["count_mode"] == "calls"


def test_tool_calls_max_zero_alone_is_valid(cli: Any, tmp_path: Path) -> None:
    """Point 20: "no default min (`max: 0` alone is valid)"; a trace without calls passes, and the
    kind is trace-level so never vacuous (point 4)."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 0}],
                             [msg(), done()])
    assert code == 0
    result = result_of(report, "r")
    assert result["checked"] == 0 and result.get("vacuous", False) is False


def test_tool_calls_max_zero_flags_the_first_call(cli: Any, tmp_path: Path) -> None:
    """§3.4 / point 20: max 0, the first call is the (max+1)-th."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 0}],
                             [msg(), call("a", "c1"), call("a", "c2")])
    assert code == 1
    assert triples(report) == [("tool_calls.max", "fail", 2)]


def test_tool_calls_min_zero_passes_an_empty_trace(cli: Any, tmp_path: Path) -> None:
    """§3.4: min 0..1e6; min 0 on an empty trace is no violation (trace-level: never vacuous)."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "min": 0}], [])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "r").get("vacuous", False) is False


def test_tool_calls_successful_max_sits_at_the_call(cli: Any, tmp_path: Path) -> None:
    """Point 20: "with `successful`, at that call, not its result"; a failed call is not counted."""
    events = [call("a", "c1"), res("c1", True), call("a", "c2"), res("c2", False),
              call("a", "c3"), res("c3", True), done()]
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "max": 1, "count": "successful"}
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    assert triples(report) == [("tool_calls.max", "fail", 5)]
    assert only(report)["evidence"]["count_mode"] == "successful"


def test_tool_calls_successful_needs_a_result(cli: Any, tmp_path: Path) -> None:
    """§3.4: successful = "the result exists and is not ok:false": a call without result and an
    orphan result are not counted, a result without `ok` is."""
    events = [call("a", "c1"), call("a", "c2"), res("c2", None), res("zz", True, tool="a"), done()]
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "min": 2, "count": "successful"}
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    violation = only(report)
    assert violation["code"] == "tool_calls.min" and violation["evidence"]["count"] == 1
    assert result_of(report, "r")["checked"] == 1


def test_tool_calls_successful_pairs_repeated_ids_one_to_one(cli: Any, tmp_path: Path) -> None:
    """Point 3: a result belongs to the nearest earlier call with its call_id that has no result
    yet -- one result answers one call only."""
    events = [call("a", "c1"), call("a", "c1"), res("c1", True), done()]
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "min": 2, "count": "successful"}
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    assert only(report)["evidence"]["count"] == 1


def test_tool_calls_calls_count_includes_calls_without_result(cli: Any, tmp_path: Path) -> None:
    """§3.4: `count: calls` (default) counts tool.call events, failed or unanswered."""
    events = [call("a", "c1"), res("c1", False), call("a", "c2"), done()]
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "min": 2}],
                             events)
    assert code == 0 and result_of(report, "r")["checked"] == 2


def test_tool_calls_tool_is_a_glob(cli: Any, tmp_path: Path) -> None:
    """§3.4 `tool` (a glob, as every tool field): `ref*` counts refund and refresh."""
    events = [call("refund", "c1"), call("refresh", "c2"), call("other", "c3"), done()]
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "ref*", "max": 1}],
                             events)
    assert code == 1 and triples(report) == [("tool_calls.max", "fail", 2)]


def test_tool_calls_output_length_equal_passes(cli: Any, tmp_path: Path) -> None:
    """§3.4 matches_output_length: the count equals the array's length."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1"), done(output={"items": [1]})])
    assert code == 0 and report["violations"] == []


@pytest.mark.parametrize("output", [{"items": "ab"}, {"other": []}, None, "items"],
                         ids=["string", "absent-path", "null", "string-output"])
def test_tool_calls_output_unresolved_at_terminal(cli: Any, tmp_path: Path, output: Any) -> None:
    """§3.4: "output_unresolved: no output or path, or the value is not an array"; point 6: status
    unresolved; point 2: at the terminal."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1"), done(output=output)])
    assert code == 1
    assert triples(report) == [("tool_calls.output_unresolved", "unresolved", 2)]


def test_tool_calls_output_unresolved_without_output_key(cli: Any, tmp_path: Path) -> None:
    """§3.4: "no output" -> output_unresolved at the terminal."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1"), done()])
    assert code == 1 and triples(report) == [("tool_calls.output_unresolved", "unresolved", 2)]


def test_tool_calls_output_unresolved_without_terminal_has_no_seq(cli: Any, tmp_path: Path) -> None:
    """Point 2: "every 'at the terminal' violation when the trace has no terminal" has no seq."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1")])
    assert code == 1 and triples(report) == [("tool_calls.output_unresolved", "unresolved", None)]


def test_tool_calls_output_read_from_last_terminal_only(cli: Any, tmp_path: Path) -> None:
    """§0: "Terminal: the last run.completed or run.failed. Final output: its output"; point 54: an
    earlier terminal's output does not count."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    events = [call("a", "c1"), done(output={"items": [1]}), failed()]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1 and triples(report) == [("tool_calls.output_unresolved", "unresolved", 3)]


def test_tool_calls_output_of_run_failed_terminal(cli: Any, tmp_path: Path) -> None:
    """Point 16: "`run.failed` may carry `output`, which is the final output when it is the terminal"."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"}
    events = [call("a", "c1"), done(output={"items": []}), failed(output={"items": [1, 2]})]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    violation = only(report)
    assert (violation["code"], violation["event_seq"]) == ("tool_calls.output_mismatch", 3)
    assert violation["evidence"]["output_length"] == 2 and violation["evidence"]["count"] == 1


def test_tool_calls_json_pointer_path(cli: Any, tmp_path: Path) -> None:
    """§2 paths: a path starting with `/` is a JSON Pointer."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "matches_output_length": "/r/list"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1"), done(output={"r": {"list": [1]}})])
    assert code == 0 and report["violations"] == []


def test_tool_calls_max_before_trace_end_violation(cli: Any, tmp_path: Path) -> None:
    """Point 5: ascending event_index, then the violations without a seq (no terminal here)."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "max": 0, "matches_output_length": "x"}
    code, report = run_check(cli, tmp_path, [rule], [msg(), call("a", "c1")])
    assert code == 1
    assert triples(report) == [("tool_calls.max", "fail", 2),
                               ("tool_calls.output_unresolved", "unresolved", None)]


@pytest.mark.parametrize("fields", [
    {},
    {"min": 2, "max": 1},
    {"max": 1_000_001},
    {"min": 1, "count": "results"},
], ids=["none", "min-over-max", "over-1e6", "bad-count"])
def test_tool_calls_bad_fields_are_refused(cli: Any, tmp_path: Path, fields: dict[str, Any]) -> None:
    """§3.4: "min and/or max: 0..1e6, with min ≤ max"; count calls|successful; "at least one of min,
    max, matches_output_length is required" -> contract error, exit 2."""
    line = refused(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", **fields}])
    assert "$.rules[0]" in line


def test_tool_calls_bounds_at_limits_are_accepted(cli: Any, tmp_path: Path) -> None:
    """§3.4: 0..1e6 inclusive, min = max allowed."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "min": 0, "max": 1_000_000}
    code, report = run_check(cli, tmp_path, [rule, {"id": "s", "kind": "tool_calls", "tool": "a",
                                                    "min": 1, "max": 1}], [call("a", "c1")])
    assert code == 0 and report["violations"] == []


def test_tool_calls_partial_max_is_judged(cli: Any, tmp_path: Path) -> None:
    """§3.4 "max is safety": judged under --partial (status fail, exit 1)."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 0}],
                             [call("a", "c1")], "--partial")
    assert code == 1 and triples(report) == [("tool_calls.max", "fail", 1)]
    assert report["partial"] is True and report["error_count"] == 1


def test_tool_calls_partial_min_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.4 "the rest is liveness"; point 82: inconclusive, out of error_count, passed and the exit."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "min": 1}],
                             [msg()], "--partial")
    assert code == 0
    assert triples(report) == [("tool_calls.min", "inconclusive", None)]
    assert report["error_count"] == 0 and report["passed"] is True
    assert report["inconclusive_count"] == 1


def test_tool_calls_partial_output_mismatch_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.4: output parts are liveness -> inconclusive under --partial."""
    code, report = run_check(cli, tmp_path, [REFUNDS_MATCH], refund_trace(second_ok=False), "--partial")
    assert code == 0
    assert triples(report) == [("tool_calls.output_mismatch", "inconclusive", 5)]


def test_tool_calls_safety_exit_for_max_only(cli: Any, tmp_path: Path) -> None:
    """Point 84: --safety-exit N when an error violation comes from a safety part (max); min is
    liveness and keeps exit 1."""
    write_contract(tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 0}])
    write_trace(tmp_path, [call("a", "c1"), done()])
    assert cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json",
               "--safety-exit", "7").returncode == 7
    write_contract(tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "b", "min": 1}])
    assert cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json",
               "--safety-exit", "7").returncode == 1


# -- §3.7 run_status -------------------------------------------------------------------------------


@pytest.mark.parametrize(("terminal", "status"), [
    (done(), "completed"), (failed(), "failed"), (done(status="awaiting_approval"), "awaiting_approval"),
    (failed(status="completed"), "completed"),
], ids=["completed", "failed", "completed-with-status", "failed-with-completed-status"])
def test_run_status_is_derived_from_type_unless_given(cli: Any, tmp_path: Path, terminal: Event,
                                                      status: str) -> None:
    """§0: "Run status: its status; if absent, completed or failed by type"; `equals` passes on it."""
    rule = {"id": "r", "kind": "run_status", "equals": status}
    code, report = run_check(cli, tmp_path, [rule], [msg(), terminal])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "r")["checked"] == 1


def test_run_status_mismatch_at_terminal(cli: Any, tmp_path: Path) -> None:
    """§3.7 run_status: evidence {status, expected}; point 1: code run_status.mismatch; point 2: at
    the terminal."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "completed"}],
                             [msg(), failed(reason="boom")])
    assert code == 1
    violation = only(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == ("run_status.mismatch",
                                                                                 "fail", 2)
    assert violation["evidence"]["status"] == "failed"
    assert violation["evidence"]["expected"] in ("completed", ["completed"])


def test_run_status_awaiting_approval_is_not_completed(cli: Any, tmp_path: Path) -> None:
    """§0: the status field wins over the type: run.completed with status awaiting_approval is not
    `completed`."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "completed"}],
                             [done(status="awaiting_approval")])
    assert code == 1
    assert only(report)["evidence"]["status"] == "awaiting_approval"


def test_run_status_in_list(cli: Any, tmp_path: Path) -> None:
    """§3.7 run_status `in` (1..20 strings)."""
    rule = {"id": "r", "kind": "run_status", "in": ["completed", "awaiting_approval"]}
    code, report = run_check(cli, tmp_path, [rule], [done(status="awaiting_approval")])
    assert code == 0 and report["violations"] == []
    code, report = run_check(cli, tmp_path, [rule], [failed()])
    assert code == 1 and triples(report) == [("run_status.mismatch", "fail", 1)]
    assert only(report)["evidence"]["expected"] == ["completed", "awaiting_approval"]


@pytest.mark.parametrize("events", [[], [call("a", "c1")]], ids=["empty", "call"])
def test_run_status_none_without_terminal(cli: Any, tmp_path: Path, events: list[Event]) -> None:
    """§0: run status is `none` when there is no terminal event; point 2: no seq; checked 1."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "completed"}],
                             events)
    assert code == 1
    violation = only(report)
    assert violation["code"] == "run_status.mismatch" and "event_seq" not in violation
    assert violation["evidence"]["status"] == "none"
    assert result_of(report, "r")["checked"] == 1


def test_run_status_equals_none_passes_without_terminal(cli: Any, tmp_path: Path) -> None:
    """§0: `none` is a run status like the others."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "none"}], [msg()])
    assert code == 0 and report["violations"] == []


def test_run_status_last_terminal_decides(cli: Any, tmp_path: Path) -> None:
    """§0: "Terminal: the last run.completed or run.failed"."""
    rule = {"id": "r", "kind": "run_status", "equals": "completed"}
    code, report = run_check(cli, tmp_path, [rule], [failed(), msg(), done()])
    assert code == 0
    code, report = run_check(cli, tmp_path, [rule], [done(), msg(), failed()])
    assert code == 1 and triples(report) == [("run_status.mismatch", "fail", 3)]


@pytest.mark.parametrize("fields", [{}, {"in": []}, {"in": [f"s{i}" for i in range(21)]}, {"equals": 3}],
                         ids=["neither", "in-empty", "in-21", "equals-number"])
def test_run_status_bad_fields_are_refused(cli: Any, tmp_path: Path, fields: dict[str, Any]) -> None:
    """§3.7: "`equals` (a string) or `in` (1..20 strings)"."""
    assert "$.rules[0]" in refused(cli, tmp_path, [{"id": "r", "kind": "run_status", **fields}])


def test_run_status_partial_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.7 outcome checks are liveness: inconclusive under --partial, exit 0."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "completed"}],
                             [msg()], "--partial")
    assert code == 0 and triples(report) == [("run_status.mismatch", "inconclusive", None)]


def test_run_status_warning_severity_exits_0(cli: Any, tmp_path: Path) -> None:
    """Point 6: a violation has its rule's severity; warnings never fail (v1 §5)."""
    rule = {"id": "r", "kind": "run_status", "equals": "completed", "severity": "warning"}
    code, report = run_check(cli, tmp_path, [rule], [failed()])
    assert code == 0
    assert (report["error_count"], report["warning_count"], report["passed"]) == (0, 1, True)


# -- §3.7 output_match -----------------------------------------------------------------------------

EXAMPLE_RULES: list[Rule] = [
    {"id": "done", "kind": "run_status", "equals": "completed"},
    {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
    {"id": "true-total", "kind": "output_match",
     "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}},
]


def ledger_trace(total: Any) -> list[Event]:
    return [call("ledger", "l1", args={}), res("l1", True, result={"total": 40}),
            done(status="completed", output={"total": total})]


def test_output_example_fail(cli: Any, tmp_path: Path) -> None:
    """§3.7 example: "FAIL → true-total at seq 3: mismatch at /output/total (expected any of [40],
    got 45)"; point 7: expected is {"any_of": [candidates]}."""
    code, report = run_check(cli, tmp_path, EXAMPLE_RULES, ledger_trace(45))
    assert code == 1
    assert triples(report) == [("output_match.mismatch", "fail", 3)]
    violation = only(report)
    assert violation["rule_id"] == "true-total" and violation["event_index"] == 2
    assert violation["evidence"]["mismatches"] == [
        {"pointer": "/output/total", "expected": {"any_of": [40]}, "actual": 45}]
    assert [r["checked"] for r in report["results"]] == [1, 1, 1]


def test_output_example_pass(cli: Any, tmp_path: Path) -> None:
    """§3.7 example: "PASS: "total":40"."""
    code, report = run_check(cli, tmp_path, EXAMPLE_RULES, ledger_trace(40))
    assert code == 0 and report["violations"] == []


def test_output_example_without_output_reports_every_output_rule(cli: Any, tmp_path: Path) -> None:
    """§3.7: output_missing for output_match and output_schema, at the terminal (point 2),
    status unresolved (point 6); contract order (point 5)."""
    events = ledger_trace(40)[:2] + [done()]
    code, report = run_check(cli, tmp_path, EXAMPLE_RULES, events)
    assert code == 1
    assert triples(report) == [("output_schema.output_missing", "unresolved", 3),
                               ("output_match.output_missing", "unresolved", 3)]


def test_output_match_without_terminal_is_output_missing_without_seq(cli: Any, tmp_path: Path) -> None:
    """Point 2: no terminal -> the terminal violations have no seq."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1}}
    code, report = run_check(cli, tmp_path, [rule], [msg()])
    assert code == 1 and triples(report) == [("output_match.output_missing", "unresolved", None)]


def test_output_match_on_empty_trace(cli: Any, tmp_path: Path) -> None:
    """An empty trace has no terminal: output_missing, no seq; trace-level, checked 1 (point 4)."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1}}
    code, report = run_check(cli, tmp_path, [rule], [])
    assert code == 1 and triples(report) == [("output_match.output_missing", "unresolved", None)]
    assert result_of(report, "m")["checked"] == 1


def test_output_match_null_output_is_a_mismatch(cli: Any, tmp_path: Path) -> None:
    """Point 9: "`output: null` is an output (a mismatch for an object pattern, not output_missing)"."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1}}
    code, report = run_check(cli, tmp_path, [rule], [done(output=None)])
    assert code == 1 and triples(report) == [("output_match.mismatch", "fail", 1)]


def test_output_match_string_output(cli: Any, tmp_path: Path) -> None:
    """§2 match tree: a scalar literal matches an equal scalar output; an object pattern does not
    match a string."""
    code, report = run_check(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": "ok"}],
                             [done(output="ok")])
    assert code == 0
    code, report = run_check(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": "ok"}}],
                             [done(output="ok")])
    assert code == 1 and triples(report) == [("output_match.mismatch", "fail", 1)]


def test_output_match_absent_key_is_mismatch(cli: Any, tmp_path: Path) -> None:
    """Point 9: a node whose key is absent is a `mismatch` (no `actual` in the entry, point 7)."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"b": 1})])
    assert code == 1
    assert only(report)["evidence"]["mismatches"] == [{"pointer": "/output/a", "expected": 1}]


def test_output_match_subset_and_exact_mode(cli: Any, tmp_path: Path) -> None:
    """§2: objects match as subsets; with mode exact key sets must be equal, except top-level
    `ignore`."""
    output = {"total": 40, "note": "x"}
    code, _ = run_check(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"total": 40}}],
                        [done(output=output)])
    assert code == 0
    exact = {"id": "m", "kind": "output_match", "match": {"total": 40}, "mode": "exact"}
    code, report = run_check(cli, tmp_path, [exact], [done(output=output)])
    assert code == 1 and triples(report) == [("output_match.mismatch", "fail", 1)]


def test_output_match_reference_unresolved(cli: Any, tmp_path: Path) -> None:
    """§2: an empty candidate set is `no_candidates` -> reference_unresolved (status unresolved),
    never an extra mismatch; a failed result adds nothing (ok_only default true)."""
    events = [call("ledger", "l1"), res("l1", False, result={"total": 40}), done(output={"total": 40})]
    code, report = run_check(cli, tmp_path, [EXAMPLE_RULES[2]], events)
    assert code == 1
    assert triples(report) == [("output_match.reference_unresolved", "unresolved", 3)]
    # point 7 names the keys {pointer, reference, reason}; spec silent on what `reference` holds:
    # the reference node as written is a reasonable reading.
    assert only(report)["evidence"]["unresolved"] == [
        {"pointer": "/output/total", "reason": "no_candidates",
         "reference": {"$from_result": {"tool": "ledger", "path": "total"}}}]


def test_output_match_reference_reads_results_before_terminal_only(cli: Any, tmp_path: Path) -> None:
    """§2 step 1: "results strictly before the subject ... the terminal event in output rules"."""
    events = [call("ledger", "l1"), done(output={"total": 40}), res("l1", True, result={"total": 40})]
    code, report = run_check(cli, tmp_path, [EXAMPLE_RULES[2]], events)
    assert code == 1
    assert triples(report) == [("output_match.reference_unresolved", "unresolved", 2)]


def test_output_match_any_earlier_result_counts(cli: Any, tmp_path: Path) -> None:
    """§2: equality passes if any candidate matches (caching counts)."""
    events = [call("ledger", "l1"), res("l1", True, result={"total": 40}),
              call("ledger", "l2"), res("l2", True, result={"total": 45}), done(output={"total": 40})]
    code, _ = run_check(cli, tmp_path, [EXAMPLE_RULES[2]], events)
    assert code == 0


@pytest.mark.parametrize("match", [{"a": {"$arg": "x"}}, {"a": {"$from_output": "x"}}],
                         ids=["arg", "from_output"])
def test_output_match_arg_and_from_output_are_load_errors(cli: Any, tmp_path: Path, match: Any) -> None:
    """§3.7: "`$arg` and `$from_output` are load errors here"."""
    assert "$.rules[0]" in refused(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": match}])


def test_output_match_false_when_passes_with_checked_0(cli: Any, tmp_path: Path) -> None:
    """§3.7: "A false `when` is a pass with checked 0"; point 4."""
    rule = {"id": "m", "kind": "output_match", "match": {"total": 1},
            "when": {"path": "kind", "equals": "refund"}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"kind": "sale", "total": 2})])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "m")["checked"] == 0


def test_output_match_true_when_checks(cli: Any, tmp_path: Path) -> None:
    """§3.7: a true `when` -> the match is checked (checked 1)."""
    rule = {"id": "m", "kind": "output_match", "match": {"total": 1},
            "when": {"path": "kind", "equals": "refund"}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"kind": "refund", "total": 2})])
    assert code == 1 and triples(report) == [("output_match.mismatch", "fail", 1)]
    assert result_of(report, "m")["checked"] == 1


def test_output_match_unresolved_when_reports_only_that(cli: Any, tmp_path: Path) -> None:
    """Point 14: an unresolved `when` gives exactly one condition_unresolved at the terminal and
    nothing else (neither output_missing nor a mismatch)."""
    rule = {"id": "m", "kind": "output_match", "match": {"total": 1},
            "when": {"path": "kind", "equals": "refund"}}
    code, report = run_check(cli, tmp_path, [rule], [done()])
    assert code == 1
    assert triples(report) == [("output_match.condition_unresolved", "unresolved", 1)]
    assert result_of(report, "m")["checked"] == 1


def test_output_match_unresolved_when_without_terminal(cli: Any, tmp_path: Path) -> None:
    """Point 14: "(no seq without one)"."""
    rule = {"id": "m", "kind": "output_match", "match": {"total": 1},
            "when": {"outcome": {"outcome_id": "x", "verdict": "satisfied"}}}
    code, report = run_check(cli, tmp_path, [rule], [msg()])
    assert code == 1
    assert triples(report) == [("output_match.condition_unresolved", "unresolved", None)]


def test_output_match_partial_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.7 (liveness): --partial makes output_missing inconclusive."""
    code, report = run_check(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": 1}}],
                             [msg()], "--partial")
    assert code == 0
    assert triples(report) == [("output_match.output_missing", "inconclusive", None)]
    assert result_of(report, "m")["inconclusive"] == 1


# -- §3.7 output_schema and caused_by --------------------------------------------------------------


def test_output_schema_error_list(cli: Any, tmp_path: Path) -> None:
    """§3.7 output_schema: code `schema` at the terminal; point 7: errors [{pointer, message}]."""
    rule = {"id": "s", "kind": "output_schema",
            "schema": {"type": "object", "properties": {"total": {"type": "number"}}}}
    code, report = run_check(cli, tmp_path, [rule], [msg(), done(output={"total": "40"})])
    assert code == 1
    assert triples(report) == [("output_schema.schema", "fail", 2)]
    errors = only(report)["evidence"]["errors"]
    assert len(errors) == 1 and errors[0]["pointer"] == "/output/total"
    assert isinstance(errors[0]["message"], str) and errors[0]["message"]


def test_output_schema_caps_errors_at_20(cli: Any, tmp_path: Path) -> None:
    """§3.7: "`schema` (up to 20 errors)" -- one violation listing at most 20."""
    properties = {f"k{i:02}": {"type": "string"} for i in range(25)}
    rule = {"id": "s", "kind": "output_schema", "schema": {"type": "object", "properties": properties}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={f"k{i:02}": i for i in range(25)})])
    assert code == 1
    assert len(only(report)["evidence"]["errors"]) == 20


def test_output_schema_null_and_string_outputs(cli: Any, tmp_path: Path) -> None:
    """Point 9: null is an output, checked against the schema (not output_missing)."""
    rule = {"id": "s", "kind": "output_schema", "schema": {"type": "object"}}
    code, report = run_check(cli, tmp_path, [rule], [done(output=None)])
    assert code == 1 and triples(report) == [("output_schema.schema", "fail", 1)]
    rule = {"id": "s", "kind": "output_schema", "schema": {"type": "string"}}
    code, report = run_check(cli, tmp_path, [rule], [done(output="fine")])
    assert code == 0


def test_output_schema_missing_without_terminal(cli: Any, tmp_path: Path) -> None:
    """§3.7 output_missing; point 2: no seq without a terminal."""
    rule = {"id": "s", "kind": "output_schema", "schema": {"type": "object"}}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1")])
    assert code == 1 and triples(report) == [("output_schema.output_missing", "unresolved", None)]


def test_caused_by_names_the_failed_schema(cli: Any, tmp_path: Path) -> None:
    """§3.7: "When it fails, every other violation that reads the output gets caused_by: <id>.
    Nothing is suppressed." A violation that does not read the output gets none."""
    rules: list[Rule] = [
        {"id": "m", "kind": "output_match", "match": {"total": 1}},
        {"id": "s", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
        {"id": "n", "kind": "tool_calls", "tool": "a", "matches_output_length": "items"},
        {"id": "x", "kind": "tool_calls", "tool": "a", "max": 0},
    ]
    code, report = run_check(cli, tmp_path, rules, [call("a", "c1"), done(output={"items": []})])
    assert code == 1
    by_rule = {v["rule_id"]: v for v in report["violations"]}
    assert set(by_rule) == {"m", "s", "n", "x"}
    assert by_rule["m"]["caused_by"] == "s" and by_rule["n"]["caused_by"] == "s"
    assert "caused_by" not in by_rule["s"] and "caused_by" not in by_rule["x"]


def test_caused_by_absent_when_schema_passes(cli: Any, tmp_path: Path) -> None:
    """§3.7: caused_by only "when it [output_schema] fails"."""
    rules: list[Rule] = [{"id": "m", "kind": "output_match", "match": {"total": 1}},
                         {"id": "s", "kind": "output_schema", "schema": {"type": "object"}}]
    code, report = run_check(cli, tmp_path, rules, [done(output={"total": 2})])
    assert code == 1 and "caused_by" not in only(report)


def test_caused_by_on_condition_reading_the_output(cli: Any, tmp_path: Path) -> None:
    """§3.7: a required_when whose `when` reads the output is a violation that reads the output."""
    rules: list[Rule] = [
        {"id": "s", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
        {"id": "w", "kind": "required_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}},
    ]
    code, report = run_check(cli, tmp_path, rules, [done(output={"refunds": ["A1"]})])
    assert code == 1
    by_rule = {v["rule_id"]: v for v in report["violations"]}
    assert by_rule["w"]["code"] == "required_when.min" and by_rule["w"]["caused_by"] == "s"


# -- §3.8 required_when / forbidden_when -----------------------------------------------------------

COND_RULES: list[Rule] = [
    {"id": "refund-iff-reported", "kind": "required_when", "tool": "refund",
     "when": {"path": "refunds", "non_empty": True}, "iff": True},
    {"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email",
     "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}},
]


def test_conditions_example_fail(cli: Any, tmp_path: Path) -> None:
    """§3.8 example: "refund-iff-reported at seq 3 (count 0 < 1); no-mail-on-fraud at seq 2";
    point 24: required_when.min; evidence {tool, count, min, when}."""
    events = [observed("fraud", "violated"), call("email", "m1", args={"to": "x@y"}),
              done(output={"refunds": ["A1"]})]
    code, report = run_check(cli, tmp_path, COND_RULES, events)
    assert code == 1
    assert triples(report) == [("required_when.min", "fail", 3), ("forbidden_when.forbidden", "fail", 2)]
    evidence = report["violations"][0]["evidence"]
    assert evidence == {"tool": "refund", "count": 0, "min": 1,
                        "when": {"path": "refunds", "non_empty": True}}
    assert [r["checked"] for r in report["results"]] == [1, 1]


def test_conditions_example_pass(cli: Any, tmp_path: Path) -> None:
    """§3.8 example: "PASS: the verdict is satisfied, and a refund call replaces the email"."""
    events = [observed("fraud", "satisfied"), call("refund", "m1", args={"to": "x@y"}),
              done(output={"refunds": ["A1"]})]
    code, report = run_check(cli, tmp_path, COND_RULES, events)
    assert code == 0 and report["violations"] == []
    assert result_of(report, "no-mail-on-fraud")["checked"] == 0
    assert result_of(report, "no-mail-on-fraud")["vacuous"] is True


def test_required_when_iff_false_flags_each_call(cli: Any, tmp_path: Path) -> None:
    """§3.8 / point 24: with iff, a false condition makes each matching call a
    required_when.forbidden at that call, in event order (point 5)."""
    events = [call("refund", "r1"), msg(), call("refund", "r2"), call("other", "o1"),
              done(output={"refunds": []})]
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], events)
    assert code == 1
    assert triples(report) == [("required_when.forbidden", "fail", 1), ("required_when.forbidden", "fail", 3)]


def test_required_when_false_without_iff_passes(cli: Any, tmp_path: Path) -> None:
    """§3.8: without iff a false condition requires nothing and forbids nothing; checked 1 (point 4)."""
    rule = {k: v for k, v in COND_RULES[0].items() if k != "iff"}
    code, report = run_check(cli, tmp_path, [rule], [call("refund", "r1"), done(output={"refunds": []})])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "refund-iff-reported")["checked"] == 1


def test_required_when_condition_met_after_the_call(cli: Any, tmp_path: Path) -> None:
    """Point 14: "a condition is evaluated once, at trace end, over the whole trace" -- a call made
    before the outcome that makes the condition true still counts."""
    rule = {"id": "r", "kind": "required_when", "tool": "notify",
            "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}}
    code, report = run_check(cli, tmp_path, [rule], [call("notify", "n1"), observed("fraud", "violated"), done()])
    assert code == 0 and report["violations"] == []


def test_forbidden_when_call_before_the_condition_is_met(cli: Any, tmp_path: Path) -> None:
    """Point 14: forbidden_when is judged at the end: a call before the outcome is still flagged."""
    code, report = run_check(cli, tmp_path, [COND_RULES[1]],
                             [call("email", "m1"), observed("fraud", "violated"), done()])
    assert code == 1 and triples(report) == [("forbidden_when.forbidden", "fail", 1)]


@pytest.mark.parametrize(("verdicts", "holds"), [
    (["violated", "satisfied"], False), (["satisfied", "violated"], True), (["violated", None], False),
], ids=["violated-then-satisfied", "satisfied-then-violated", "last-without-verdict"])
def test_outcome_condition_last_observation_decides(cli: Any, tmp_path: Path, verdicts: list[str | None],
                                                     holds: bool) -> None:
    """Point 14: "the last one decides: true iff its verdict equals (absent verdict → false)"."""
    events: list[Event] = [observed("fraud", v) for v in verdicts] + [call("email", "m1"), done()]
    code, report = run_check(cli, tmp_path, [COND_RULES[1]], events)
    assert code == (1 if holds else 0)
    assert triples(report) == ([("forbidden_when.forbidden", "fail", len(verdicts) + 1)] if holds else [])


def test_outcome_condition_other_ids_do_not_count(cli: Any, tmp_path: Path) -> None:
    """Point 14: outcome selects observations by outcome_id; the last *of that id* decides."""
    events = [observed("fraud", "violated"), observed("other", "satisfied"), call("email", "m1"), done()]
    code, report = run_check(cli, tmp_path, [COND_RULES[1]], events)
    assert code == 1 and triples(report) == [("forbidden_when.forbidden", "fail", 3)]


def test_outcome_condition_id_is_a_glob(cli: Any, tmp_path: Path) -> None:
    """Point 14: "`outcome` selects outcome.observed events by outcome_id (a glob)"."""
    rule = {"id": "f", "kind": "forbidden_when", "tool": "email",
            "when": {"outcome": {"outcome_id": "fraud.*", "verdict": "violated"}}}
    code, report = run_check(cli, tmp_path, [rule], [observed("fraud.card", "violated"), call("email", "m1")])
    assert code == 1 and triples(report) == [("forbidden_when.forbidden", "fail", 2)]


def test_forbidden_when_unresolved_condition_reports_once(cli: Any, tmp_path: Path) -> None:
    """§3.8: "an unresolved condition gives one condition_unresolved"; point 14: at the terminal,
    nothing else from the rule."""
    events = [call("email", "m1"), call("email", "m2"), done()]
    code, report = run_check(cli, tmp_path, [COND_RULES[1]], events)
    assert code == 1
    assert triples(report) == [("forbidden_when.condition_unresolved", "unresolved", 3)]


def test_forbidden_when_vacuous_passes_even_if_unresolved(cli: Any, tmp_path: Path) -> None:
    """Point 4: "a vacuous forbidden_when passes even if its condition is unresolved"."""
    code, report = run_check(cli, tmp_path, [COND_RULES[1]], [call("sms", "m1"), done()])
    assert code == 0 and report["violations"] == []
    result = result_of(report, "no-mail-on-fraud")
    assert (result["checked"], result["vacuous"]) == (0, True)


def test_forbidden_when_checked_counts_matching_calls(cli: Any, tmp_path: Path) -> None:
    """Point 4: forbidden_when checked = matching calls; a false condition passes them."""
    events = [observed("fraud", "satisfied"), call("email", "m1"), call("email", "m2"), call("x", "x1")]
    code, report = run_check(cli, tmp_path, [COND_RULES[1]], events)
    assert code == 0
    result = result_of(report, "no-mail-on-fraud")
    assert result["checked"] == 2 and result.get("vacuous", False) is False


def test_required_when_unresolved_condition_whatever_the_count(cli: Any, tmp_path: Path) -> None:
    """Point 24: "an unresolved condition gives one required_when.condition_unresolved whatever the
    count" -- no seq without a terminal (point 14)."""
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], [call("refund", "r1"), call("refund", "r2")])
    assert code == 1
    assert triples(report) == [("required_when.condition_unresolved", "unresolved", None)]


@pytest.mark.parametrize("output", [{"refunds": "A1"}, {}, None],
                         ids=["string", "absent-path", "null"])
def test_non_empty_on_non_array_is_unresolved(cli: Any, tmp_path: Path, output: Any) -> None:
    """§2 conditions: "A missing output or path, or non_empty on a non-array, is unresolved"."""
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], [done(output=output)])
    assert code == 1
    assert triples(report) == [("required_when.condition_unresolved", "unresolved", 1)]


def test_required_when_min_and_successful_count(cli: Any, tmp_path: Path) -> None:
    """§3.8: fields min, count; count successful does not count a failed call."""
    rule = {"id": "r", "kind": "required_when", "tool": "refund", "min": 2, "count": "successful",
            "when": {"path": "go", "equals": True}}
    events = [call("refund", "r1"), res("r1", True), call("refund", "r2"), res("r2", False),
              done(output={"go": True})]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    violation = only(report)
    assert (violation["code"], violation["event_seq"]) == ("required_when.min", 5)
    assert (violation["evidence"]["count"], violation["evidence"]["min"]) == (1, 2)


def test_required_when_count_exactly_min_passes(cli: Any, tmp_path: Path) -> None:
    """§3.8: "If the condition holds and count < min" -- count = min passes."""
    rule = {"id": "r", "kind": "required_when", "tool": "refund", "min": 2,
            "when": {"path": "go", "equals": True}}
    code, report = run_check(cli, tmp_path, [rule], [call("refund", "r1"), call("refund", "r2"),
                                                     done(output={"go": True})])
    assert code == 0 and report["violations"] == []


def test_condition_equals_is_type_strict(cli: Any, tmp_path: Path) -> None:
    """§2: equality is JSON-type-strict (true≠1); 1 = 1.0."""
    rule = {"id": "r", "kind": "required_when", "tool": "refund", "when": {"path": "go", "equals": True}}
    code, _ = run_check(cli, tmp_path, [rule], [done(output={"go": 1})])
    assert code == 0
    rule = {"id": "r", "kind": "required_when", "tool": "refund", "when": {"path": "n", "equals": 1}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"n": 1.0})])
    assert code == 1 and triples(report) == [("required_when.min", "fail", 1)]


def test_condition_matches_node(cli: Any, tmp_path: Path) -> None:
    """§2 conditions: `{path, matches: node}`."""
    rule = {"id": "r", "kind": "forbidden_when", "tool": "email",
            "when": {"path": "total", "matches": {"$gt": 100}}}
    code, report = run_check(cli, tmp_path, [rule], [call("email", "e1"), done(output={"total": 101})])
    assert code == 1 and triples(report) == [("forbidden_when.forbidden", "fail", 1)]
    code, _ = run_check(cli, tmp_path, [rule], [call("email", "e1"), done(output={"total": 100})])
    assert code == 0


@pytest.mark.parametrize(("when", "verdict"), [
    ({"any_of": [{"path": "missing", "equals": 1}, {"path": "go", "equals": True}]}, "true"),
    ({"any_of": [{"path": "missing", "equals": 1}, {"path": "go", "equals": False}]}, "unresolved"),
    ({"all_of": [{"path": "missing", "equals": 1}, {"path": "go", "equals": False}]}, "false"),
    ({"all_of": [{"path": "missing", "equals": 1}, {"path": "go", "equals": True}]}, "unresolved"),
], ids=["any-unres-true", "any-unres-false", "all-unres-false", "all-unres-true"])
def test_condition_kleene_logic(cli: Any, tmp_path: Path, when: Any, verdict: str) -> None:
    """Point 14: "any_of/all_of use Kleene logic (a true resp. false operand decides even next to an
    unresolved one)"; §2: "unresolved is never false"."""
    rule = {"id": "f", "kind": "forbidden_when", "tool": "email", "when": when}
    code, report = run_check(cli, tmp_path, [rule], [call("email", "e1"), done(output={"go": True})])
    expected = {"true": [("forbidden_when.forbidden", "fail", 1)], "false": [],
                "unresolved": [("forbidden_when.condition_unresolved", "unresolved", 2)]}[verdict]
    assert triples(report) == expected
    assert code == (0 if verdict == "false" else 1)


@pytest.mark.parametrize("when", [
    {"path": "a", "matches": {"$from_output": "b"}},
    {"path": "a", "matches": {"$arg": "b"}},
    {"any_of": [{"path": "a", "equals": 1}]},
], ids=["from_output", "arg", "any_of-one"])
def test_bad_conditions_are_refused(cli: Any, tmp_path: Path, when: Any) -> None:
    """§2 conditions grammar (any_of 2..20); point 12: `$arg`/`$from_output` are load errors in
    conditions."""
    assert "$.rules[0]" in refused(cli, tmp_path, [{"id": "f", "kind": "forbidden_when", "tool": "a",
                                                    "when": when}])


def test_required_when_partial_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.8 (liveness): --partial makes required_when.min inconclusive, exit 0."""
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], [done(output={"refunds": ["A1"]})], "--partial")
    assert code == 0 and triples(report) == [("required_when.min", "inconclusive", 1)]


def test_forbidden_when_partial_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.8 heading "(liveness)": forbidden_when's violations are inconclusive under --partial."""
    code, report = run_check(cli, tmp_path, [COND_RULES[1]],
                             [observed("fraud", "violated"), call("email", "m1")], "--partial")
    assert code == 0 and triples(report) == [("forbidden_when.forbidden", "inconclusive", 2)]


# -- §3.9 failure_handled --------------------------------------------------------------------------

HANDLE_SEARCH: Rule = {"id": "handle-search", "kind": "failure_handled", "tool": "search", "within_events": 2}


def search_failure() -> list[Event]:
    return [call("search", "s1", args={"q": "x"}), res("s1", False)]


def test_failure_handled_example_fail(cli: Any, tmp_path: Path) -> None:
    """§3.9 example: "FAIL → seq 2 unhandled"; evidence {tool, call_id, within_events, by}; point 4:
    checked = failed results."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH],
                             [*search_failure(), done(claims_completion=True)])
    assert code == 1
    assert triples(report) == [("failure_handled.unhandled", "fail", 2)]
    violation = only(report)
    assert violation["event_index"] == 1
    assert violation["evidence"] == {"tool": "search", "call_id": "s1", "within_events": 2, "by": "any"}
    assert result_of(report, "handle-search")["checked"] == 1


def test_failure_handled_example_pass(cli: Any, tmp_path: Path) -> None:
    """§3.9 example: "PASS: an agent.message before the completion"."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH],
                             [*search_failure(), msg(text="sorry"), done(claims_completion=True)])
    assert code == 0 and report["violations"] == []


def test_failure_handled_retry_handles(cli: Any, tmp_path: Path) -> None:
    """§3.9: a retry is a later call of the same tool in the window."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], [*search_failure(), call("search", "s2"),
                                                              res("s2", True), done()])
    assert code == 0 and report["violations"] == []


def test_failure_handled_retry_outside_window(cli: Any, tmp_path: Path) -> None:
    """§3.9: "the next within_events events are scanned" -- a retry one event too late fails."""
    events = [*search_failure(), {"type": "telemetry.tick"}, {"type": "telemetry.tick"},
              call("search", "s2"), res("s2", True), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_retry_at_window_edge(cli: Any, tmp_path: Path) -> None:
    """§3.9: the within_events-th event after the failure is still in the window."""
    events = [*search_failure(), {"type": "telemetry.tick"}, call("search", "s2"), res("s2", True), done()]
    code, _ = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 0


def test_failure_handled_fallback_tool_is_not_a_retry(cli: Any, tmp_path: Path) -> None:
    """Point 25: a retry is a call "whose tool equals the failed call's" -- a fallback to another
    tool matching the rule's glob does not handle."""
    rule = {"id": "h", "kind": "failure_handled", "tool": "search.*", "within_events": 3, "by": "retry"}
    events = [call("search.web", "s1"), res("s1", False), call("search.news", "s2"), res("s2", True), done()]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_escalation_needs_its_type(cli: Any, tmp_path: Path) -> None:
    """§3.9 message_types (default ["agent.message"]); point 25: they are globs."""
    events = [*search_failure(), {"type": "human.escalation"}, done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1
    rule = {**HANDLE_SEARCH, "message_types": ["human.*"]}
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 0 and report["violations"] == []


def test_failure_handled_by_message_ignores_retry(cli: Any, tmp_path: Path) -> None:
    """§3.9 `by: message`: only a message handles."""
    rule = {**HANDLE_SEARCH, "by": "message"}
    code, report = run_check(cli, tmp_path, [rule], [*search_failure(), call("search", "s2"),
                                                     res("s2", True), done()])
    assert code == 1
    assert only(report)["evidence"]["by"] == "message"


def test_failure_handled_by_retry_ignores_message(cli: Any, tmp_path: Path) -> None:
    """§3.9 `by: retry`: only a retry handles."""
    rule = {**HANDLE_SEARCH, "by": "retry"}
    code, report = run_check(cli, tmp_path, [rule], [*search_failure(), msg(), done()])
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_retry_succeeds(cli: Any, tmp_path: Path) -> None:
    """§3.9 / point 25: with retry_succeeds the retry's paired result must exist (anywhere later)
    and not be ok:false."""
    rule = {**HANDLE_SEARCH, "within_events": 1, "retry_succeeds": True}
    late_ok = [*search_failure(), call("search", "s2"), msg(), msg(), res("s2", True), done()]
    code, report = run_check(cli, tmp_path, [rule], late_ok)
    assert code == 0 and report["violations"] == []
    no_result = [*search_failure(), call("search", "s2"), msg(), done()]
    code, report = run_check(cli, tmp_path, [rule], no_result)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_failing_retry_leaves_both_unhandled(cli: Any, tmp_path: Path) -> None:
    """§3.9: with retry_succeeds a failed retry does not handle; it is itself a failure to handle;
    point 5: ascending event_index."""
    rule = {**HANDLE_SEARCH, "retry_succeeds": True}
    events = [*search_failure(), call("search", "s2"), res("s2", False), done()]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    assert triples(report) == [("failure_handled.unhandled", "fail", 2), ("failure_handled.unhandled", "fail", 4)]
    assert result_of(report, "handle-search")["checked"] == 2


def test_failure_handled_message_refs_call(cli: Any, tmp_path: Path) -> None:
    """§3.9 message_refs_call: the message must carry the failed call's call_id."""
    rule = {**HANDLE_SEARCH, "message_refs_call": True}
    code, report = run_check(cli, tmp_path, [rule], [*search_failure(), msg(call_id="zz"), done()])
    assert code == 1
    code, report = run_check(cli, tmp_path, [rule], [*search_failure(), msg(call_id="s1"), done()])
    assert code == 0


def test_failure_handled_terminal_takes_a_slot(cli: Any, tmp_path: Path) -> None:
    """Point 25: "the terminal takes a slot but never handles"."""
    events = [*search_failure(), done(), msg()]
    rule = {**HANDLE_SEARCH, "within_events": 1}
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]
    code, report = run_check(cli, tmp_path, [{**rule, "within_events": 2}], events)
    assert code == 0


def test_failure_handled_terminal_never_handles_even_if_typed(cli: Any, tmp_path: Path) -> None:
    """§3.9: "The terminal event never handles", even when message_types matches its type."""
    rule = {**HANDLE_SEARCH, "message_types": ["run.*"]}
    code, report = run_check(cli, tmp_path, [rule], [*search_failure(), done()])
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_trace_ends_inside_window(cli: Any, tmp_path: Path) -> None:
    """§3.9: "A trace that ends inside the window fails" (no terminal, nothing after the failure)."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], search_failure())
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_partial_end_inside_window_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.9 "safety, except at the trace's end": under --partial a window the trace ends in is
    inconclusive."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], search_failure(), "--partial")
    assert code == 0 and triples(report) == [("failure_handled.unhandled", "inconclusive", 2)]


def test_failure_handled_partial_passed_window_is_judged(cli: Any, tmp_path: Path) -> None:
    """§3.9: a window that passed unhandled is safety: fail under --partial too."""
    events = [*search_failure(), {"type": "telemetry.tick"}, {"type": "telemetry.tick"}]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events, "--partial")
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 2)]


def test_failure_handled_safety_exit(cli: Any, tmp_path: Path) -> None:
    """Point 84 with §3.9 "(safety ...)": a passed window unhandled exits with --safety-exit."""
    write_contract(tmp_path, [HANDLE_SEARCH])
    write_trace(tmp_path, [*search_failure(), {"type": "telemetry.tick"}, {"type": "telemetry.tick"}, done()])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--safety-exit", "7")
    assert result.returncode == 7


def test_failure_handled_vacuous_without_failures(cli: Any, tmp_path: Path) -> None:
    """Point 4: failure_handled is per-event: no failed result -> checked 0, vacuous true, pass."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], [call("search", "s1"), res("s1", True), done()])
    assert code == 0
    result = result_of(report, "handle-search")
    assert (result["checked"], result["vacuous"], result["passed"]) == (0, True, True)


def test_failure_handled_vacuous_on_empty_trace(cli: Any, tmp_path: Path) -> None:
    """Point 4: an empty trace has no failed results."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], [])
    assert code == 0 and result_of(report, "handle-search")["vacuous"] is True


@pytest.mark.parametrize("result_fields", [{"status": "error"}, {}], ids=["status-error", "no-ok"])
def test_failure_handled_only_ok_false_is_a_failure(cli: Any, tmp_path: Path,
                                                    result_fields: dict[str, Any]) -> None:
    """§3.9: "For each `ok === false` result" -- a status or error field without ok:false is not."""
    events = [call("search", "s1"), res("s1", None, **result_fields), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 0 and result_of(report, "handle-search")["checked"] == 0


def test_failure_handled_default_tool_is_any(cli: Any, tmp_path: Path) -> None:
    """§3.9: `tool` defaults to `*`."""
    rule = {"id": "h", "kind": "failure_handled", "within_events": 1}
    code, report = run_check(cli, tmp_path, [rule], [call("db", "d1"), res("d1", False), done()])
    assert code == 1
    assert only(report)["evidence"] == {"tool": "db", "call_id": "d1", "within_events": 1, "by": "any"}


def test_failure_handled_uses_the_calls_tool(cli: Any, tmp_path: Path) -> None:
    """Point 3: "A paired result's own tool field is ignored by new kinds" -- the call's tool rules."""
    events = [call("search", "s1"), res("s1", False, tool="other"), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1 and only(report)["evidence"]["tool"] == "search"
    other = {**HANDLE_SEARCH, "tool": "other"}
    code, report = run_check(cli, tmp_path, [other], events)
    assert code == 0 and result_of(report, "handle-search")["checked"] == 0


def test_failure_handled_orphan_result_uses_own_tool_and_id(cli: Any, tmp_path: Path) -> None:
    """Point 25: "a failed orphan result uses its own tool and call_id (point 3)"."""
    events = [res("q9", False, tool="search"), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1
    violation = only(report)
    assert violation["event_seq"] == 1
    assert violation["evidence"] == {"tool": "search", "call_id": "q9", "within_events": 2, "by": "any"}


def test_failure_handled_orphan_retry_by_own_tool(cli: Any, tmp_path: Path) -> None:
    """Point 25: a retry of an orphan failure is a call of its own tool."""
    events = [res(None, False, tool="search"), call("search", "s2"), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 0 and result_of(report, "handle-search")["checked"] == 1


def test_failure_handled_result_without_call_id_is_orphan(cli: Any, tmp_path: Path) -> None:
    """Point 3: a result with no call_id has no call: its own tool; evidence has no call_id
    (v1 §4: an undefined key is omitted)."""
    events = [call("search", "s1"), res(None, False, tool="search"), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1
    assert only(report)["evidence"] == {"tool": "search", "within_events": 2, "by": "any"}


def test_failure_handled_message_refs_call_without_call_id(cli: Any, tmp_path: Path) -> None:
    """§3.9 message_refs_call: a failure with no call_id cannot be referenced -- a message without a
    call_id does not handle it (spec silent on absent ids; absent never equals absent)."""
    rule = {**HANDLE_SEARCH, "message_refs_call": True}
    code, report = run_check(cli, tmp_path, [rule], [res(None, False, tool="search"), msg(), done()])
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 1)]


def test_failure_handled_two_failures_in_order(cli: Any, tmp_path: Path) -> None:
    """Point 5: violations by ascending event_index; each failure has its own window."""
    rule = {"id": "h", "kind": "failure_handled", "within_events": 1, "by": "message"}
    events = [call("a", "a1"), res("a1", False), call("b", "b1"), res("b1", False), msg(), done()]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 1
    assert triples(report) == [("failure_handled.unhandled", "fail", 2)]
    assert result_of(report, "h")["checked"] == 2


@pytest.mark.parametrize("fields", [
    {}, {"within_events": 0}, {"within_events": 1001}, {"within_events": 2, "by": "both"},
], ids=["no-window", "zero", "over-1000", "bad-by"])
def test_failure_handled_bad_fields_are_refused(cli: Any, tmp_path: Path, fields: dict[str, Any]) -> None:
    """§3.9: within_events 1..1000, required; by retry|message|any; booleans."""
    assert "$.rules[0]" in refused(cli, tmp_path, [{"id": "h", "kind": "failure_handled", **fields}])


def test_failure_handled_window_limits_accepted(cli: Any, tmp_path: Path) -> None:
    """§3.9: within_events 1 and 1000 are valid."""
    rules: list[Rule] = [{"id": "a", "kind": "failure_handled", "within_events": 1},
                         {"id": "b", "kind": "failure_handled", "within_events": 1000}]
    code, report = run_check(cli, tmp_path, rules, [call("x", "x1"), res("x1", False), msg(), done()])
    assert code == 0 and report["violations"] == []


# -- cross-cutting ---------------------------------------------------------------------------------


def test_top_level_violations_follow_contract_order(cli: Any, tmp_path: Path) -> None:
    """Point 5: "the top-level violations stays the concatenation of results in contract order",
    even when a later rule's violation sits at an earlier event."""
    rules: list[Rule] = [{"id": "s", "kind": "run_status", "equals": "failed"},
                         {"id": "c", "kind": "tool_calls", "tool": "a", "max": 0},
                         {"id": "h", "kind": "failure_handled", "within_events": 1}]
    events = [call("a", "a1"), res("a1", False), done()]
    code, report = run_check(cli, tmp_path, rules, events)
    assert code == 1
    assert triples(report) == [("run_status.mismatch", "fail", 3), ("tool_calls.max", "fail", 1),
                               ("failure_handled.unhandled", "fail", 2)]
    assert report["error_count"] == 3


def test_unresolved_counts_as_an_error(cli: Any, tmp_path: Path) -> None:
    """Point 6: every violation counts in error_count and fails the rule, whatever its status."""
    code, report = run_check(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": 1}}], [])
    assert code == 1
    assert (report["error_count"], report["passed"]) == (1, False)
    assert result_of(report, "m")["passed"] is False


# -- more corners ----------------------------------------------------------------------------------


def test_output_match_false_when_skips_even_without_terminal(cli: Any, tmp_path: Path) -> None:
    """§3.7: "A false `when` is a pass with checked 0" -- an outcome-based `when` that is false
    skips the rule, so a missing terminal gives no output_missing."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1},
            "when": {"outcome": {"outcome_id": "x", "verdict": "satisfied"}}}
    code, report = run_check(cli, tmp_path, [rule], [observed("x", "violated")])
    assert code == 0 and report["violations"] == []
    assert result_of(report, "m")["checked"] == 0


def test_output_match_true_when_without_terminal_is_output_missing(cli: Any, tmp_path: Path) -> None:
    """§3.7 output_missing once the `when` holds; point 2: no seq without a terminal."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": 1},
            "when": {"outcome": {"outcome_id": "x", "verdict": "satisfied"}}}
    code, report = run_check(cli, tmp_path, [rule], [observed("x", "satisfied")])
    assert code == 1
    assert triples(report) == [("output_match.output_missing", "unresolved", None)]


def test_output_match_mismatches_then_reference_at_one_event(cli: Any, tmp_path: Path) -> None:
    """Point 5: ties at one event follow the spec's code order (mismatch, then
    reference_unresolved); point 7: one `mismatches` list holding every mismatch."""
    rule = {"id": "m", "kind": "output_match",
            "match": {"z": {"$from_result": {"tool": "l"}}, "a": 1, "b": 2}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"a": 3, "b": 4, "z": 1})])
    assert code == 1
    assert triples(report) == [("output_match.mismatch", "fail", 1),
                               ("output_match.reference_unresolved", "unresolved", 1)]
    mismatches = report["violations"][0]["evidence"]["mismatches"]
    assert sorted((m["pointer"], m["expected"], m["actual"]) for m in mismatches) == [
        ("/output/a", 1, 3), ("/output/b", 2, 4)]


def test_output_match_exact_mode_holds_at_every_level(cli: Any, tmp_path: Path) -> None:
    """§2: with mode exact "key sets must be equal at every level, except top-level ignore" (the
    ignored top-level `c` is no mismatch, the nested extra `x` is)."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": {"b": 1}}, "mode": "exact", "ignore": ["c"]}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"a": {"b": 1, "x": 2}, "c": 3})])
    assert code == 1 and triples(report) == [("output_match.mismatch", "fail", 1)]
    assert [m["pointer"] for m in only(report)["evidence"]["mismatches"]] == ["/output/a/x"]


def test_evidence_strings_are_cut_at_200_code_points(cli: Any, tmp_path: Path) -> None:
    """§0 / point 7: "strings are cut to 200 Unicode code points plus `…`"."""
    rule = {"id": "m", "kind": "output_match", "match": {"a": "x"}}
    code, report = run_check(cli, tmp_path, [rule], [done(output={"a": "é" * 300})])
    assert code == 1
    assert only(report)["evidence"]["mismatches"][0]["actual"] == "é" * 200 + "…"


def test_evidence_is_canonical_json(cli: Any, tmp_path: Path) -> None:
    """Point 7: evidence is "serialised with RFC 8785 key order and number form" (45.0 -> 45)."""
    write_contract(tmp_path, [EXAMPLE_RULES[2], REFUNDS_MATCH])
    write_trace(tmp_path, [call("ledger", "l1"), res("l1", True, result={"total": 40.0}),
                           call("refund", "c1"), res("c1", True), done(output={"total": 45.0, "refunds": []})])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout, object_pairs_hook=lambda pairs: pairs)
    violations = dict(report)["violations"]
    evidences = [dict(v)["evidence"] for v in violations]
    mismatch = dict(dict(evidences[0])["mismatches"][0])
    assert [k for k, _ in dict(evidences[0])["mismatches"][0]] == ["actual", "expected", "pointer"]
    assert type(mismatch["actual"]) is int and mismatch["actual"] == 45
    assert [k for k, _ in evidences[1]] == ["count", "count_mode", "output_length", "path", "tool"]


def test_run_status_equals_is_not_a_glob(cli: Any, tmp_path: Path) -> None:
    """§3.7 run_status: "`equals` (a string)" -- compared by equality (spec gives no glob here)."""
    code, report = run_check(cli, tmp_path, [{"id": "r", "kind": "run_status", "equals": "comp*"}], [done()])
    assert code == 1 and triples(report) == [("run_status.mismatch", "fail", 1)]


def test_empty_status_field_is_bad_input_under_v2(cli: Any, tmp_path: Path) -> None:
    """§1 / point 16: `status` is a string 1..100, checked under v2 with a `file:line: $.field` error."""
    write_contract(tmp_path, [{"id": "r", "kind": "run_status", "equals": "completed"}])
    write_trace(tmp_path, [done(status="")])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "t.jsonl:1: $.status" in result.stderr


def test_unknown_field_on_a_new_kind_is_refused(cli: Any, tmp_path: Path) -> None:
    """§0: "new kinds or keys exit 2" -- iff belongs to required_when, not output_match."""
    line = refused(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": 1}, "iff": True}])
    assert "$.rules[0]" in line and "iff" in line


def test_required_when_iff_unresolved_reports_only_the_condition(cli: Any, tmp_path: Path) -> None:
    """Point 24: an unresolved condition gives one condition_unresolved "whatever the count";
    point 14: nothing else from the rule (no iff violations at the calls)."""
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], [call("refund", "r1"), done(output={"x": 1})])
    assert code == 1
    violation = only(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "required_when.condition_unresolved", "unresolved", 2)


def test_required_when_with_run_failed_terminal(cli: Any, tmp_path: Path) -> None:
    """Point 16: a run.failed terminal's output is the final output the condition reads; point 4:
    checked 1 even with no call."""
    rule = {"id": "r", "kind": "required_when", "tool": "refund", "when": {"path": "go", "equals": True}}
    code, report = run_check(cli, tmp_path, [rule], [failed(output={"go": True})])
    assert code == 1 and triples(report) == [("required_when.min", "fail", 1)]
    assert result_of(report, "r")["checked"] == 1


def test_forbidden_when_flags_every_call_of_the_glob(cli: Any, tmp_path: Path) -> None:
    """§3.8: "each call is a violation at that call"; checked = matching calls (point 4)."""
    rule = {"id": "f", "kind": "forbidden_when", "tool": "e*", "when": {"path": "go", "equals": True}}
    code, report = run_check(cli, tmp_path, [rule], [call("email", "a"), call("x", "b"), call("echo", "c"),
                                                     done(output={"go": True})])
    assert code == 1
    assert triples(report) == [("forbidden_when.forbidden", "fail", 1), ("forbidden_when.forbidden", "fail", 3)]
    assert result_of(report, "f")["checked"] == 2


def test_forbidden_when_ignores_results(cli: Any, tmp_path: Path) -> None:
    """§3.8: forbidden_when judges calls; a tool.result carrying the tool is not a call."""
    rule = {"id": "f", "kind": "forbidden_when", "tool": "email", "when": {"path": "go", "equals": True}}
    code, report = run_check(cli, tmp_path, [rule], [res("a", True, tool="email"), done(output={"go": True})])
    assert code == 0 and result_of(report, "f")["vacuous"] is True


def test_failure_handled_earlier_parallel_call_is_not_a_retry(cli: Any, tmp_path: Path) -> None:
    """§3.9: a retry is a *later* call -- one made before the failed result does not handle it."""
    events = [call("search", "a"), call("search", "b"), res("a", False), res("b", True),
              {"type": "telemetry.tick"}, done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 3)]


def test_failure_handled_message_before_failure_does_not_count(cli: Any, tmp_path: Path) -> None:
    """§3.9: only the next within_events events after the failure are scanned."""
    events = [call("search", "a"), msg(), res("a", False), done()]
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], events)
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 3)]


def test_failure_handled_failure_after_terminal(cli: Any, tmp_path: Path) -> None:
    """§3.9: "A trace that ends inside the window fails" -- a failure after the terminal too."""
    code, report = run_check(cli, tmp_path, [HANDLE_SEARCH], [call("search", "a"), done(), res("a", False)])
    assert code == 1 and triples(report) == [("failure_handled.unhandled", "fail", 3)]


def test_failure_handled_retry_succeeds_with_result_without_ok(cli: Any, tmp_path: Path) -> None:
    """Point 25: with retry_succeeds the retry's result must exist and "not be ok:false" -- a result
    without `ok` qualifies."""
    rule = {**HANDLE_SEARCH, "retry_succeeds": True}
    events = [*search_failure(), call("search", "s2"), res("s2", None), done()]
    code, report = run_check(cli, tmp_path, [rule], events)
    assert code == 0 and report["violations"] == []


@pytest.mark.parametrize(("path", "output"), [("/x/0", {"x": [None]}), ("x.0", {"x": {"0": None}})],
                         ids=["pointer-into-array", "numeric-key-on-object"])
def test_condition_paths_find_null(cli: Any, tmp_path: Path, path: str, output: Any) -> None:
    """§2: "null is found"; a `/` path is a JSON Pointer; point 13: a numeric dot segment on an
    object looks up that key."""
    rule = {"id": "f", "kind": "forbidden_when", "tool": "a", "when": {"path": path, "equals": None}}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1"), done(output=output)])
    assert code == 1 and triples(report) == [("forbidden_when.forbidden", "fail", 1)]


def test_required_when_iff_partial_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§3.8 (liveness): the iff violations are inconclusive under --partial too."""
    code, report = run_check(cli, tmp_path, [COND_RULES[0]], [call("refund", "r1"), done(output={"refunds": []})],
                             "--partial")
    assert code == 0 and triples(report) == [("required_when.forbidden", "inconclusive", 1)]


def test_safety_exit_ignores_warning_severity(cli: Any, tmp_path: Path) -> None:
    """Point 84: the safety exit applies "when any error-severity violation comes from a safety
    part"; a warning never changes the exit."""
    rule = {"id": "r", "kind": "tool_calls", "tool": "a", "max": 0, "severity": "warning"}
    code, report = run_check(cli, tmp_path, [rule], [call("a", "c1")], "--safety-exit", "7")
    assert code == 0 and triples(report) == [("tool_calls.max", "fail", 1)]
